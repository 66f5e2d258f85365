//! Alpha-renaming: the same kernel with every local variable renamed to a plain name. A kernel
//! and its renaming must compute the same results; a difference means a name changed the
//! meaning of the program (a user name taken for a compiler temporary, a PTX keyword or one of
//! the compiler's own symbols captured by a user name, ...).

use super::ast::*;
use std::collections::HashMap;

/// `def` with every `let` and `for` binder `name` renamed to `rn{i}_` (one fresh name per
/// distinct source name, so shadowing is preserved), and every use of it.
pub fn rename_locals(def: &KernelDef) -> KernelDef {
    let mut map = HashMap::new();
    collect(&def.body, &mut map);
    let mut out = def.clone();
    rename_block(&mut out.body, &map);
    out
}

fn collect(stmts: &[Stmt], map: &mut HashMap<String, String>) {
    let add = |name: &str, map: &mut HashMap<String, String>| {
        let n = map.len();
        map.entry(name.to_string())
            .or_insert_with(|| format!("rn{n}_"));
    };
    for s in stmts {
        match s {
            Stmt::Let { name, .. } => add(name, map),
            Stmt::For { var, body, .. } => {
                add(var, map);
                collect(body, map);
            }
            Stmt::While { body, .. } | Stmt::Loop { body, .. } | Stmt::Unsafe { body, .. } => {
                collect(body, map)
            }
            Stmt::If { then, els, .. } => {
                collect(then, map);
                if let Some(e) = els {
                    collect(e, map);
                }
            }
            Stmt::Assign { .. } | Stmt::Expr(_) | Stmt::Break { .. } => {}
        }
    }
}

fn rename_block(stmts: &mut [Stmt], map: &HashMap<String, String>) {
    let re = |n: &mut String| {
        if let Some(m) = map.get(n.as_str()) {
            *n = m.clone();
        }
    };
    for s in stmts {
        match s {
            Stmt::Let { name, init, .. } => {
                re(name);
                rename_expr(init, map);
            }
            Stmt::Assign { name, value, .. } => {
                re(name);
                rename_expr(value, map);
            }
            Stmt::Expr(e) => rename_expr(e, map),
            Stmt::For {
                var, range, body, ..
            } => {
                re(var);
                rename_expr(&mut range.start, map);
                rename_expr(&mut range.end, map);
                if let Some(st) = &mut range.step {
                    rename_expr(st, map);
                }
                rename_block(body, map);
            }
            Stmt::While { cond, body, .. } => {
                rename_expr(cond, map);
                rename_block(body, map);
            }
            Stmt::Loop { body, .. } | Stmt::Unsafe { body, .. } => rename_block(body, map),
            Stmt::If {
                cond, then, els, ..
            } => {
                rename_expr(cond, map);
                rename_block(then, map);
                if let Some(e) = els {
                    rename_block(e, map);
                }
            }
            Stmt::Break { .. } => {}
        }
    }
}

/// Renames single-segment paths. The generator never names a variable like a qualifier
/// (`relaxed`, `gpu`) or a type (`i32`), so no path read as syntax is touched.
fn rename_expr(e: &mut Expr, map: &HashMap<String, String>) {
    match &mut e.kind {
        ExprKind::Path(p) => {
            if let [n] = p.as_mut_slice() {
                if let Some(m) = map.get(n.as_str()) {
                    *n = m.clone();
                }
            }
        }
        ExprKind::Array(items) | ExprKind::Tuple(items) => {
            items.iter_mut().for_each(|i| rename_expr(i, map))
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            rename_expr(lhs, map);
            rename_expr(rhs, map);
        }
        ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } | ExprKind::Unsafe(x) => {
            rename_expr(x, map)
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| rename_expr(&mut a.value, map)),
        ExprKind::Method { receiver, args, .. } => {
            rename_expr(receiver, map);
            args.iter_mut().for_each(|a| rename_expr(&mut a.value, map));
        }
        ExprKind::IfElse { cond, then, els } => {
            rename_expr(cond, map);
            rename_expr(then, map);
            rename_expr(els, map);
        }
        ExprKind::Int { .. } | ExprKind::Float { .. } | ExprKind::Bool(_) | ExprKind::Str(_) => {}
    }
}
