//! Effect hoisting: the same kernel with every effect nested in an expression (an atomic used as
//! an argument, an operand, a loop bound, an `if` condition) moved into a `let` of its own just
//! before the statement, in evaluation order (arguments left to right, inner calls first).
//!
//! In generated kernels this never changes the results: nested effects are on memory no other
//! effect of the statement touches, so only their order relative to each other matters, and
//! that is kept. A difference means the compiler evaluated an argument more (or less) than
//! once, or out of order. `while` conditions are left alone (they are evaluated every
//! iteration).

use super::ast::*;
use super::syntax::{is_effect_call, let_, var, S};

/// `def` with nested effects hoisted into `let hzN_ = ..;` bindings.
pub fn hoist_effects(def: &KernelDef) -> KernelDef {
    let mut n = 0;
    let mut out = def.clone();
    out.body = block(&def.body, &mut n);
    out
}

fn block(stmts: &[Stmt], n: &mut usize) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        let mut pre = Vec::new();
        let s = match s {
            Stmt::Let {
                name,
                mutable,
                init,
                ..
            } => Stmt::Let {
                name: name.clone(),
                name_span: S,
                mutable: *mutable,
                init: expr(init, true, &mut pre, n),
                span: S,
            },
            Stmt::Assign {
                name, op, value, ..
            } => Stmt::Assign {
                name: name.clone(),
                name_span: S,
                op: *op,
                value: expr(value, true, &mut pre, n),
                span: S,
            },
            Stmt::Expr(e) => Stmt::Expr(expr(e, true, &mut pre, n)),
            Stmt::For {
                var, range, body, ..
            } => {
                let start = expr(&range.start, false, &mut pre, n);
                let end = expr(&range.end, false, &mut pre, n);
                let step = range.step.as_ref().map(|s| expr(s, false, &mut pre, n));
                Stmt::For {
                    var: var.clone(),
                    var_span: S,
                    range: RangeExpr {
                        start,
                        end,
                        step,
                        span: S,
                    },
                    body: block(body, n),
                    span: S,
                }
            }
            Stmt::While { cond, body, .. } => Stmt::While {
                cond: cond.clone(),
                body: block(body, n),
                span: S,
            },
            Stmt::Loop { body, .. } => Stmt::Loop {
                body: block(body, n),
                span: S,
            },
            Stmt::If {
                cond, then, els, ..
            } => Stmt::If {
                cond: expr(cond, false, &mut pre, n),
                then: block(then, n),
                els: els.as_ref().map(|e| block(e, n)),
                span: S,
            },
            Stmt::Break { .. } => Stmt::Break { span: S },
            Stmt::Unsafe { body, .. } => Stmt::Unsafe {
                body: block(body, n),
                span: S,
            },
        };
        out.extend(pre);
        out.push(s);
    }
    out
}

/// `e` with its nested effects hoisted into `pre` (children first, in source order); `e` itself
/// too unless it is the statement's own top-level expression.
fn expr(e: &Expr, top: bool, pre: &mut Vec<Stmt>, n: &mut usize) -> Expr {
    let mut sub = |x: &Expr, pre: &mut Vec<Stmt>| Box::new(expr(x, false, pre, n));
    let kind = match &e.kind {
        ExprKind::Array(items) => ExprKind::Array(items.iter().map(|i| *sub(i, pre)).collect()),
        ExprKind::Tuple(items) => ExprKind::Tuple(items.iter().map(|i| *sub(i, pre)).collect()),
        ExprKind::Binary { op, lhs, rhs } => {
            let lhs = sub(lhs, pre);
            let rhs = sub(rhs, pre);
            ExprKind::Binary { op: *op, lhs, rhs }
        }
        ExprKind::Unary { op, x } => ExprKind::Unary {
            op: *op,
            x: sub(x, pre),
        },
        ExprKind::Cast { x, ty, ty_span } => ExprKind::Cast {
            x: sub(x, pre),
            ty: ty.clone(),
            ty_span: *ty_span,
        },
        ExprKind::Call {
            path,
            path_span,
            generics,
            args,
        } => ExprKind::Call {
            path: path.clone(),
            path_span: *path_span,
            generics: generics.clone(),
            args: args
                .iter()
                .map(|a| Arg {
                    name: a.name.clone(),
                    value: *sub(&a.value, pre),
                    span: a.span,
                })
                .collect(),
        },
        ExprKind::Method {
            receiver,
            method,
            method_span,
            args,
        } => {
            let receiver = sub(receiver, pre);
            ExprKind::Method {
                receiver,
                method: method.clone(),
                method_span: *method_span,
                args: args
                    .iter()
                    .map(|a| Arg {
                        name: a.name.clone(),
                        value: *sub(&a.value, pre),
                        span: a.span,
                    })
                    .collect(),
            }
        }
        ExprKind::IfElse { cond, then, els } => {
            // Only the condition may hold an effect (the arms are pure in a valid kernel).
            let cond = sub(cond, pre);
            ExprKind::IfElse {
                cond,
                then: then.clone(),
                els: els.clone(),
            }
        }
        // The unsafe expression stays where it is (its unchecked call must stay inside it);
        // effects nested in its call's arguments are hoisted as usual.
        ExprKind::Unsafe(x) => ExprKind::Unsafe(Box::new(expr(x, true, pre, n))),
        k => k.clone(),
    };
    let e = Expr { kind, span: e.span };
    if !top && is_effect_call(&e) {
        *n += 1;
        let name = format!("hz{n}_");
        pre.push(let_(&name, false, e));
        var(&name)
    } else {
        e
    }
}
