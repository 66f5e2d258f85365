//! Building `tilus::core::ast` trees tersely (every span is `S`).

use super::ast::*;
use super::ir::Span;

pub const S: Span = Span(0);

pub fn ex(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}
/// An integer literal; negative values are written as `-(literal)` (folded by the front end, so
/// `i32::MIN` is expressible).
pub fn int(v: i64) -> Expr {
    if v < 0 {
        un(UnOp::Neg, Expr::int(-(v as i128), S))
    } else {
        Expr::int(v as i128, S)
    }
}
/// A non-negative literal with the `i32` suffix (`7i32`).
pub fn int_suffixed(v: u32) -> Expr {
    ex(ExprKind::Int {
        value: v as i128,
        suffix: Some("i32".into()),
    })
}
pub fn boolean(b: bool) -> Expr {
    ex(ExprKind::Bool(b))
}
pub fn var(name: &str) -> Expr {
    path(name)
}
/// A path such as `MemoryOrder::Relaxed` or `i32::MIN`.
pub fn path(p: &str) -> Expr {
    ex(ExprKind::Path(p.split("::").map(str::to_string).collect()))
}
pub fn string(s: &str) -> Expr {
    ex(ExprKind::Str(s.into()))
}
pub fn arr(items: Vec<Expr>) -> Expr {
    ex(ExprKind::Array(items))
}
pub fn tuple(items: Vec<Expr>) -> Expr {
    ex(ExprKind::Tuple(items))
}
pub fn shape_e(dims: &[usize]) -> Expr {
    arr(dims.iter().map(|&d| int(d as i64)).collect())
}
pub fn pos(value: Expr) -> Arg {
    Arg {
        name: None,
        value,
        span: S,
    }
}
pub fn kw(name: &str, value: Expr) -> Arg {
    Arg {
        name: Some((name.to_string(), S)),
        value,
        span: S,
    }
}
pub fn call(name: &str, args: Vec<Arg>) -> Expr {
    ex(ExprKind::Call {
        path: name.split("::").map(str::to_string).collect(),
        path_span: S,
        generics: vec![],
        args,
    })
}
pub fn method(recv: Expr, m: &str, args: Vec<Arg>) -> Expr {
    ex(ExprKind::Method {
        receiver: Box::new(recv),
        method: m.to_string(),
        method_span: S,
        args,
    })
}
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    })
}
pub fn add(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Add, a, b)
}
pub fn mul(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Mul, a, b)
}
pub fn un(op: UnOp, x: Expr) -> Expr {
    ex(ExprKind::Unary { op, x: Box::new(x) })
}
pub fn cast(x: Expr, ty: &str) -> Expr {
    ex(ExprKind::Cast {
        x: Box::new(x),
        ty: ty.to_string(),
        ty_span: S,
    })
}
pub fn if_else(c: Expr, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::IfElse {
        cond: Box::new(c),
        then: Box::new(a),
        els: Box::new(b),
    })
}
pub fn let_(name: &str, mutable: bool, init: Expr) -> Stmt {
    Stmt::Let {
        name: name.to_string(),
        name_span: S,
        mutable,
        init,
        span: S,
    }
}
pub fn assign(name: &str, op: Option<BinOp>, value: Expr) -> Stmt {
    Stmt::Assign {
        name: name.to_string(),
        name_span: S,
        op,
        value,
        span: S,
    }
}
pub fn expr_stmt(e: Expr) -> Stmt {
    Stmt::Expr(e)
}
pub fn sync() -> Stmt {
    Stmt::Expr(call("sync", vec![]))
}
pub fn if_(cond: Expr, then: Vec<Stmt>, els: Option<Vec<Stmt>>) -> Stmt {
    Stmt::If {
        cond,
        then,
        els,
        span: S,
    }
}
pub fn brk() -> Stmt {
    Stmt::Break { span: S }
}
/// `arange(n)` reshaped so that its `n` elements run along `axis` of a rank-`rank` tile
/// (`[1, n, 1]` for axis 1 of rank 3); plain `arange(n)` for rank 1.
pub fn arange_along(n: usize, axis: usize, rank: usize) -> Expr {
    let a = call("arange", vec![pos(int(n as i64))]);
    if rank == 1 {
        return a;
    }
    let mut s = vec![1; rank];
    s[axis] = n;
    method(a, "reshape", vec![pos(shape_e(&s))])
}
/// Every sub-expression of `e`, parents first.
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Array(items) | ExprKind::Tuple(items) => {
            items.iter().for_each(|i| visit_expr(i, f))
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } | ExprKind::Unsafe(x) => {
            visit_expr(x, f)
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| visit_expr(&a.value, f)),
        ExprKind::Method { receiver, args, .. } => {
            visit_expr(receiver, f);
            args.iter().for_each(|a| visit_expr(&a.value, f));
        }
        ExprKind::IfElse { cond, then, els } => {
            visit_expr(cond, f);
            visit_expr(then, f);
            visit_expr(els, f);
        }
        _ => {}
    }
}
/// Every expression of `s` (and of the statements nested in it), children before parents.
pub fn visit_stmt_exprs_mut(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    match s {
        Stmt::Let { init: e, .. } | Stmt::Assign { value: e, .. } | Stmt::Expr(e) => {
            visit_expr_mut(e, f)
        }
        Stmt::For { range, body, .. } => {
            visit_expr_mut(&mut range.start, f);
            visit_expr_mut(&mut range.end, f);
            if let Some(st) = &mut range.step {
                visit_expr_mut(st, f);
            }
            body.iter_mut().for_each(|s| visit_stmt_exprs_mut(s, f));
        }
        Stmt::While { cond, body, .. } => {
            visit_expr_mut(cond, f);
            body.iter_mut().for_each(|s| visit_stmt_exprs_mut(s, f));
        }
        Stmt::Loop { body, .. } | Stmt::Unsafe { body, .. } => {
            body.iter_mut().for_each(|s| visit_stmt_exprs_mut(s, f))
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            visit_expr_mut(cond, f);
            then.iter_mut().for_each(|s| visit_stmt_exprs_mut(s, f));
            if let Some(e) = els {
                e.iter_mut().for_each(|s| visit_stmt_exprs_mut(s, f));
            }
        }
        Stmt::Break { .. } => {}
    }
}

fn visit_expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Array(items) | ExprKind::Tuple(items) => {
            items.iter_mut().for_each(|i| visit_expr_mut(i, f))
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_expr_mut(lhs, f);
            visit_expr_mut(rhs, f);
        }
        ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } | ExprKind::Unsafe(x) => {
            visit_expr_mut(x, f)
        }
        ExprKind::Call { args, .. } => args
            .iter_mut()
            .for_each(|a| visit_expr_mut(&mut a.value, f)),
        ExprKind::Method { receiver, args, .. } => {
            visit_expr_mut(receiver, f);
            args.iter_mut()
                .for_each(|a| visit_expr_mut(&mut a.value, f));
        }
        ExprKind::IfElse { cond, then, els } => {
            visit_expr_mut(cond, f);
            visit_expr_mut(then, f);
            visit_expr_mut(els, f);
        }
        _ => {}
    }
    f(e);
}

/// The builtins with effects that produce a value (a pure expression never calls one).
pub const EFFECTS: &[&str] = &[
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_xchg",
    "atomic_cas",
    "atomic_load",
    "atomic::shared_add",
    "atomic::shared_sub",
    "atomic::shared_min",
    "atomic::shared_max",
    "atomic::shared_exch",
    "atomic::shared_cas",
    "atomic::shared_scatter_add",
    "atomic::shared_scatter_sub",
    "atomic::shared_scatter_min",
    "atomic::shared_scatter_max",
    "atomic::global_add",
    "atomic::global_sub",
    "atomic::global_min",
    "atomic::global_max",
    "atomic::global_exch",
    "atomic::global_cas",
    "atomic::global_scatter_add",
    "atomic::global_scatter_sub",
    "atomic::global_scatter_min",
    "atomic::global_scatter_max",
];

/// Whether `e` is a call of one of [`EFFECTS`] (with or without a `tilus::` prefix).
pub fn is_effect_call(e: &Expr) -> bool {
    let ExprKind::Call { path, .. } = &e.kind else {
        return false;
    };
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    let p = match p.as_slice() {
        ["tilus", "prelude", rest @ ..] | ["tilus", rest @ ..] => rest,
        s => s,
    };
    EFFECTS.contains(&p.join("::").as_str())
}

/// Whether `e` contains a call with an effect.
pub fn has_effect(e: &Expr) -> bool {
    let mut found = false;
    visit_expr(e, &mut |x| found |= is_effect_call(x));
    found
}
