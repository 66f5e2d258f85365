//! Lowering statements: `let`, assignment, `if`, the loops and `break`.

use super::types::{Defer, Flex};
use super::{ty_name, Binding, LResult, Lowerer, Reported};
use crate::ast::{self, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::elem;
use crate::ir::{self, Block, DType, Operand, Span, Stmt, Ty, VarId};
use std::collections::HashMap;

impl Lowerer {
    /// Lower one statement into the innermost open block.
    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> LResult<()> {
        match s {
            ast::Stmt::Let {
                name,
                mutable,
                init,
                name_span,
                ..
            } => self.let_stmt(name, *mutable, init, *name_span),
            ast::Stmt::Assign {
                name,
                name_span,
                op,
                value,
                span,
            } => self.assign_stmt(name, *name_span, *op, value, *span),
            ast::Stmt::Expr(e) => {
                self.expr_stmt(e)?;
                Ok(())
            }
            ast::Stmt::If {
                cond,
                then,
                els,
                span,
            } => self.if_stmt(cond, then, els.as_deref(), *span),
            ast::Stmt::For {
                var,
                var_span,
                range,
                body,
                span,
            } => self.for_stmt(var, *var_span, range, body, *span),
            ast::Stmt::While { cond, body, span } => self.while_stmt(cond, body, *span),
            ast::Stmt::Loop { body, span } => {
                let body = self.loop_body(body);
                self.push(Stmt::While {
                    cond_block: Vec::new(),
                    cond: Operand::bool(true),
                    body,
                    span: *span,
                });
                Ok(())
            }
            ast::Stmt::Unsafe { body, .. } => {
                // A scope whose unchecked operations the kernel's author vouches for.
                self.scopes.push(HashMap::new());
                self.unsafe_depth += 1;
                for s in body {
                    let _ = self.stmt(s);
                }
                self.unsafe_depth -= 1;
                self.scopes.pop();
                Ok(())
            }
            ast::Stmt::Break { span } => {
                if self.loop_depth == 0 {
                    return self.err(*span, "`break` outside of a loop");
                }
                self.push(Stmt::Break { span: *span });
                Ok(())
            }
        }
    }

    /// `let [mut] name = init;`. A failed initialiser poisons `name` so that its uses do not
    /// report again.
    fn let_stmt(&mut self, name: &str, mutable: bool, init: &Expr, name_span: Span) -> LResult<()> {
        // A context-typed immutable binding is lowered at each use (`types.rs`), its
        // conditions evaluated here, once.
        if !mutable && self.flex_kind_for(init, Defer::AtUses).is_some() {
            let e = match self.freeze_conditions(&self.inline_flex(init)) {
                Ok(e) => e,
                Err(r) => {
                    self.bind(name, Binding::Poisoned);
                    return Err(r);
                }
            };
            self.bind(name, Binding::Flex(e));
            return Ok(());
        }
        if mutable {
            if let Some((kind, lit)) = self.open_literal(init) {
                return self.let_open(name, kind, lit, name_span);
            }
        }
        // Temporaries created by this initialiser (and only those) may be renamed to
        // the binding instead of copied.
        let fresh_from = self.vars.len() as VarId;
        let value = match self.expr(init) {
            Ok(v) => v,
            Err(r) => {
                self.bind(name, Binding::Poisoned);
                return Err(r);
            }
        };
        let ty = self.ty(value);
        let is_memory = matches!(ty, Ty::Global { .. } | Ty::Shared { .. });
        if is_memory && mutable {
            return self.err(name_span, format!("`{name}` refers to memory and cannot be `mut`: reassigning a tensor handle is not supported"));
        }
        let var = self.let_var(name, mutable, value, ty, fresh_from, name_span);
        self.bind(
            name,
            Binding::Var {
                var,
                mutable,
                decl: name_span,
            },
        );
        Ok(())
    }

    /// `let mut name = <open literal>;`: a variable whose type its first typed use decides.
    fn let_open(&mut self, name: &str, kind: Flex, lit: &Expr, name_span: Span) -> LResult<()> {
        match self.open_init(name, kind, lit, name_span) {
            Ok(var) => {
                let decl = name_span;
                self.bind(
                    name,
                    Binding::Var {
                        var,
                        mutable: true,
                        decl,
                    },
                );
                Ok(())
            }
            Err(r) => {
                self.bind(name, Binding::Poisoned);
                Err(r)
            }
        }
    }

    /// The variable a `let` binds to `value` (of type `ty`): the initialiser's own fresh result
    /// renamed, or a copy; `fresh_from` is the first variable the initialiser created.
    pub(super) fn let_var(
        &mut self,
        name: &str,
        mutable: bool,
        value: Operand,
        ty: Ty,
        fresh_from: VarId,
        name_span: Span,
    ) -> VarId {
        let is_memory = matches!(ty, Ty::Global { .. } | Ty::Shared { .. });
        let fresh_temp = |cx: &Self, v: VarId| v >= fresh_from && cx.vars[v as usize].temp;
        // Tensor handles are aliased; values are bound by renaming the initialiser's own
        // result or by a copy, so that a `mut` variable owns the registers it is
        // overwritten in and an immutable one never aliases a variable that changes.
        match value {
            Operand::Var(v) if is_memory => {
                // Name a fresh handle after its binding (diagnostics and the emulator's
                // race reports say `buf`, not `_t3`).
                if fresh_temp(self, v) {
                    self.vars[v as usize].name = name.to_string();
                    self.vars[v as usize].temp = false;
                }
                v
            }
            Operand::Var(v) if !mutable && fresh_temp(self, v) => {
                self.vars[v as usize].name = name.to_string();
                self.vars[v as usize].temp = false;
                v
            }
            _ => {
                let var = self.new_var(name, ty);
                self.push(Stmt::Inst {
                    dst: Some(var),
                    inst: ir::Inst::Mov(value),
                    span: name_span,
                });
                var
            }
        }
    }

    /// `name = value;` or `name op= value;`.
    fn assign_stmt(
        &mut self,
        name: &str,
        name_span: Span,
        op: Option<ast::BinOp>,
        value: &Expr,
        span: Span,
    ) -> LResult<()> {
        let (var, decl) = self.assign_target(name, name_span)?;
        // An open variable assigned another open literal stays open.
        if op.is_none() && self.is_open(var) && self.reassign_open(var, value, span)? {
            return Ok(());
        }
        // The value's type comes from the variable unless the variable is still open,
        // in which case a typed value decides it.
        let rhs = if self.is_open(var) && self.flex_kind(value).is_none() {
            let v = self.expr(value)?;
            self.settle(var, Some(self.ty(v).dtype()));
            v
        } else {
            self.settle(var, None);
            let want = self.vars[var as usize].ty.dtype();
            self.expr_as(value, Some(want))?
        };
        let rhs = match op {
            None => rhs,
            Some(op) => {
                let cur = Operand::Var(var);
                self.binary(op, cur, rhs, span)?
            }
        };
        let want = self.vars[var as usize].ty.clone();
        let got = self.ty(rhs);
        let rhs = self.coerce_assign(rhs, &want, &got, value.span, (name, decl))?;
        self.push(Stmt::Inst {
            dst: Some(var),
            inst: ir::Inst::Mov(rhs),
            span,
        });
        Ok(())
    }

    /// The mutable variable an assignment writes and where it is declared, or the error for
    /// an unknown or immutable name.
    fn assign_target(&mut self, name: &str, name_span: Span) -> LResult<(VarId, Span)> {
        let (var, mutable, decl) = match self.lookup(name) {
            Some(Binding::Var { var, mutable, decl }) => (var, mutable, decl),
            Some(Binding::Flex(_)) => (u32::MAX, false, Span::NONE),
            Some(Binding::Poisoned) => return Err(Reported),
            None => {
                return Err(self.error(
                    Diagnostic::new(
                        name_span,
                        format!("cannot find value `{name}` in this kernel"),
                    )
                    .maybe_help(self.similar_variable(name)),
                ))
            }
        };
        if !mutable {
            // Parameters are the first variables.
            let help = if (var as usize) < self.params.len() {
                format!("copy it into a mutable variable: `let mut {name} = {name};`")
            } else {
                format!("declare it with `let mut {name}`")
            };
            return Err(self.error(
                Diagnostic::new(
                    name_span,
                    format!("cannot assign twice to immutable variable `{name}`"),
                )
                .label(decl, format!("`{name}` is declared here, without `mut`"))
                .help(help),
            ));
        }
        Ok((var, decl))
    }

    /// Assign an open literal to the open variable `var`, keeping it open. `Ok(false)` when
    /// `value` is not such a literal (the assignment is lowered as usual).
    fn reassign_open(&mut self, var: VarId, value: &Expr, span: Span) -> LResult<bool> {
        let Some((kind, lit)) = self.open_literal(value) else {
            return Ok(false);
        };
        let d = self.vars[var as usize].ty.dtype();
        if !kind.accepts(d) {
            return Ok(false);
        }
        let var_ty = self.vars[var as usize].ty.clone();
        let inst = match (&var_ty, &lit.kind) {
            // `acc = zeros([..])` into an open tile of that shape.
            (Ty::Tile { shape, .. }, ExprKind::Call { args, .. })
                if self.shape_arg(&args[0].value).ok().as_ref() == Some(shape) =>
            {
                let value = match &lit.kind {
                    ExprKind::Call { path, args, .. } if path[0] == "full" => {
                        self.expr_as(&args[1].value, Some(d))?
                    }
                    ExprKind::Call { path, .. } => {
                        Operand::Imm(elem::cast(DType::I32, d, (path[0] == "ones") as u64), d)
                    }
                    _ => unreachable!("matched a call"),
                };
                Some(ir::Inst::Full {
                    shape: shape.clone(),
                    value,
                })
            }
            (Ty::Scalar(_), ExprKind::Call { .. }) | (Ty::Tile { .. }, _) => None,
            (Ty::Scalar(_), _) => Some(ir::Inst::Mov(self.expr_as(lit, Some(d))?)),
            _ => None,
        };
        let Some(inst) = inst else {
            return Ok(false);
        };
        self.push(Stmt::Inst {
            dst: Some(var),
            inst,
            span,
        });
        Ok(true)
    }

    /// Check that an assigned value fits the variable's type (a scalar may fill a tile variable).
    /// `var` is the variable's name and where it is declared.
    fn coerce_assign(
        &mut self,
        rhs: Operand,
        want: &Ty,
        got: &Ty,
        span: Span,
        (name, decl): (&str, Span),
    ) -> LResult<Operand> {
        if want == got {
            return Ok(rhs);
        }
        if let (Ty::Tile { dtype, shape }, Ty::Scalar(d)) = (want, got) {
            if d == dtype {
                return Ok(self.emit(
                    ir::Inst::Full {
                        shape: shape.clone(),
                        value: rhs,
                    },
                    want.clone(),
                    span,
                ));
            }
        }
        Err(self.error(
            Diagnostic::new(
                span,
                format!(
                    "mismatched types: `{name}` is {} but the assigned value is {}",
                    ty_name(want),
                    ty_name(got)
                ),
            )
            .label(
                decl,
                format!("`{name}` is declared here as {}", ty_name(want)),
            ),
        ))
    }

    /// `if cond { .. } else { .. }` on a block-uniform condition.
    fn if_stmt(
        &mut self,
        cond: &Expr,
        then: &[ast::Stmt],
        els: Option<&[ast::Stmt]>,
        span: Span,
    ) -> LResult<()> {
        let c = self
            .expr(cond)
            .and_then(|c| self.uniform_bool(c, cond.span, "an `if` condition"));
        // The arms are checked even when the condition is wrong (their errors are errors
        // too, and the literal-type inference must see every `let` in both passes).
        let then = self.block(then);
        let els = els.map(|b| self.block(b)).unwrap_or_default();
        let c = c?;
        self.push(Stmt::If {
            cond: c,
            then,
            els,
            span,
        });
        Ok(())
    }

    /// `for var in range { .. }`.
    fn for_stmt(
        &mut self,
        var: &str,
        var_span: Span,
        range: &ast::RangeExpr,
        body: &[ast::Stmt],
        span: Span,
    ) -> LResult<()> {
        // The bounds and step share one integer type (context-typed ones take the
        // others' type, `i32` when all are).
        let mut parts: Vec<&Expr> = vec![&range.start, &range.end];
        if let Some(st) = &range.step {
            parts.push(st);
        }
        let vals = match self.unify_ints(&parts, "a loop bound") {
            Ok(v) => v,
            Err(r) => {
                // The body is checked all the same, its loop variable poisoned.
                self.scopes.push(HashMap::new());
                self.bind(var, Binding::Poisoned);
                let _ = self.loop_body(body);
                self.scopes.pop();
                return Err(r);
            }
        };
        let (start, end) = (vals[0], vals[1]);
        let d = self.ty(start).dtype();
        let step = match &range.step {
            Some(s) => {
                let st = vals[2];
                if let Some(v) = st.imm_int() {
                    if v <= 0 {
                        return self
                            .err(s.span, format!("`step_by({v})`: the step must be positive"));
                    }
                }
                st
            }
            None => Operand::int(1, d),
        };
        let lv = self.new_var(var, Ty::Scalar(d));
        self.scopes.push(HashMap::new());
        self.bind(
            var,
            Binding::Var {
                var: lv,
                mutable: false,
                decl: var_span,
            },
        );
        let body = self.loop_body(body);
        self.scopes.pop();
        self.push(Stmt::For(ir::ForLoop {
            var: lv,
            start,
            end,
            step,
            body,
            span,
        }));
        Ok(())
    }

    /// `while cond { .. }`.
    fn while_stmt(&mut self, cond: &Expr, body: &[ast::Stmt], span: Span) -> LResult<()> {
        // The condition is re-evaluated before every iteration: lower it into its own block.
        self.blocks.push(Vec::new());
        let c = self
            .expr(cond)
            .and_then(|c| self.uniform_bool(c, cond.span, "a `while` condition"));
        let cond_block = self.blocks.pop().expect("pushed above");
        let body = self.loop_body(body);
        let c = c?;
        self.push(Stmt::While {
            cond_block,
            cond: c,
            body,
            span,
        });
        Ok(())
    }

    /// A loop body, lowered one loop deeper (so `break` is accepted in it).
    fn loop_body(&mut self, body: &[ast::Stmt]) -> Block {
        self.loop_depth += 1;
        let body = self.block(body);
        self.loop_depth -= 1;
        body
    }
}
