//! The kernel of one [`Combo`], built as a `tilus::core::ast::KernelDef` (what the
//! `#[tile_kernel]` macro hands to the compiler):
//!
//! ```text
//! fn k(x: GlobalTensor<T>, vals: GlobalTensor<T>, [cmp: GlobalTensor<T>,] [idx: GlobalTensor<i32>,]
//!      [out: GlobalTensor<T>]) {
//!     let v = load_global(vals, offsets = [block_idx() * N], shape = [N]) (.reshape(tile));
//!     [let w = load_global(cmp, ..);]                       // cas (not scatter): compare / expected
//!     [let i = load_global(idx, ..) (.reshape(tile));]      // scatter and indexed forms
//!     [let dst = shared_tensor(T, dst); store_shared(dst, load_global(x, ..)); sync();]  // shared
//!     let old = <the op>(dst-or-x, .., [mask = .. | check_bounds = false], sem = .., scope = ..);
//!     [sync(); store_global(x, load_shared(dst).reshape([..]), offsets = [0]);]         // shared
//!     [store_global(out, old.reshape([N]), offsets = [block_idx() * N]);]             // used
//! }
//! ```
//!
//! The call, its `sem` and its `scope` arguments carry their own spans ([`CALL`], [`SEM`],
//! [`SCOPE`]), so a test can check which token a diagnostic points at. Element-wise ops on
//! global memory all use `offsets = [0]`: every block updates the same window (contention across
//! blocks, for the emulator runs).

use super::model::{cutile_name, Combo, Form, Space};
use tilus::core::ast::*;
use tilus::core::ir::Span;

const S: Span = Span(1);
/// The span of the atomic call expression.
pub const CALL: Span = Span(10);
/// The span of the `sem = ..` value.
pub const SEM: Span = Span(11);
/// The span of the `scope = ..` value.
pub const SCOPE: Span = Span(12);
/// The span of the `target = ..` kernel option.
pub const TARGET: Span = Span(13);

pub const THREADS: u32 = 128;

/// Shapes of one combination: the operation's tile and the destination.
pub struct Shapes {
    pub tile: Vec<usize>,
    pub dst: Vec<usize>,
}

/// Tile sizes are not multiples of the thread count, destinations are smaller than the tiles
/// (duplicate indices); the scatter axis of a 2-D destination has 5 entries.
pub fn shapes(form: Form) -> Shapes {
    match form {
        Form::Elementwise => Shapes {
            tile: vec![96],
            dst: vec![96],
        },
        Form::Scatter1 | Form::Indexed => Shapes {
            tile: vec![96],
            dst: vec![40],
        },
        Form::Scatter2(0) => Shapes {
            tile: vec![12, 8],
            dst: vec![5, 8],
        },
        Form::Scatter2(_) => Shapes {
            tile: vec![8, 12],
            dst: vec![8, 5],
        },
    }
}

pub fn numel(s: &[usize]) -> usize {
    s.iter().product()
}

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}
fn int(v: i128) -> Expr {
    e(ExprKind::Int {
        value: v,
        suffix: None,
    })
}
fn path(p: &str) -> Expr {
    e(ExprKind::Path(p.split("::").map(str::to_string).collect()))
}
fn shape(dims: &[usize]) -> Expr {
    e(ExprKind::Array(
        dims.iter().map(|&d| int(d as i128)).collect(),
    ))
}
fn list(items: Vec<Expr>) -> Expr {
    e(ExprKind::Array(items))
}
fn pos(v: Expr) -> Arg {
    Arg {
        name: None,
        value: v,
        span: S,
    }
}
fn kw(name: &str, v: Expr) -> Arg {
    let span = v.span;
    Arg {
        name: Some((name.to_string(), span)),
        value: v,
        span,
    }
}
fn call(p: &str, args: Vec<Arg>) -> Expr {
    e(ExprKind::Call {
        path: p.split("::").map(str::to_string).collect(),
        path_span: S,
        generics: vec![],
        args,
    })
}
fn method(recv: Expr, m: &str, args: Vec<Arg>) -> Expr {
    e(ExprKind::Method {
        receiver: Box::new(recv),
        method: m.to_string(),
        method_span: S,
        args,
    })
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    e(ExprKind::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    })
}
fn let_(name: &str, init: Expr) -> Stmt {
    Stmt::Let {
        name: name.to_string(),
        name_span: S,
        mutable: false,
        init,
        span: S,
    }
}
/// `x.reshape(to)`, unless `x` (of shape `from`) has that shape already.
fn reshaped(x: Expr, from: &[usize], to: &[usize]) -> Expr {
    if from == to {
        x
    } else {
        method(x, "reshape", vec![pos(shape(to))])
    }
}
/// `block_idx() * n`
fn block_base(n: usize) -> Expr {
    bin(BinOp::Mul, call("block_idx", vec![]), int(n as i128))
}
/// `load_global(src, offsets = [block_idx() * n], shape = [n])`, reshaped to `to`.
fn load_block(src: &str, to: &[usize]) -> Expr {
    let n = numel(to);
    reshaped(
        call(
            "load_global",
            vec![
                pos(path(src)),
                kw("offsets", list(vec![block_base(n)])),
                kw("shape", shape(&[n])),
            ],
        ),
        &[n],
        to,
    )
}

/// The parameters of `c`'s kernel, in order (the emulator runs pass arguments in this order).
pub fn param_names(c: &Combo) -> Vec<&'static str> {
    let mut p = vec!["x", "vals"];
    if c.op == "cas" && !c.form.is_scatter() {
        p.push("cmp");
    }
    if c.form != Form::Elementwise {
        p.push("idx");
    }
    if c.used {
        p.push("out");
    }
    p
}

/// The kernel for one combination.
pub fn kernel(c: &Combo) -> KernelDef {
    let Shapes { tile, dst } = shapes(c.form);
    let n = numel(&tile);
    let ty = c.dtype.name();
    let mut body = vec![let_("v", load_block("vals", &tile))];
    if c.op == "cas" && !c.form.is_scatter() {
        body.push(let_("w", load_block("cmp", &tile)));
    }
    if c.form != Form::Elementwise {
        body.push(let_("i", load_block("idx", &tile)));
    }
    // The destination expression.
    let target = if c.space == Space::Shared {
        body.push(let_(
            "dst",
            call("shared_tensor", vec![pos(path(ty)), pos(shape(&dst))]),
        ));
        let init = call(
            "load_global",
            vec![
                pos(path("x")),
                kw("offsets", list(vec![int(0)])),
                kw("shape", shape(&[numel(&dst)])),
            ],
        );
        body.push(Stmt::Expr(call(
            "store_shared",
            vec![pos(path("dst")), pos(reshaped(init, &[numel(&dst)], &dst))],
        )));
        body.push(Stmt::Expr(call("sync", vec![])));
        path("dst")
    } else if dst.len() == 2 {
        method(path("x"), "view", vec![pos(int(0)), pos(shape(&dst))])
    } else {
        path("x")
    };
    // The op.
    let mut args = Vec::new();
    let name = match c.form {
        Form::Elementwise | Form::Scatter1 | Form::Scatter2(_) => {
            args.push(pos(target));
            if let Form::Scatter1 | Form::Scatter2(_) = c.form {
                let dim = if let Form::Scatter2(d) = c.form { d } else { 0 };
                args.push(kw("dim", int(dim as i128)));
                args.push(kw("indices", path("i")));
            }
            // Scatter `cas` has no `compare` (the form does not exist): the kernel must fail on
            // the op, not on an unknown keyword.
            if c.op == "cas" && c.form == Form::Elementwise {
                args.push(kw("compare", path("w")));
            }
            args.push(kw("values", path("v")));
            if c.form == Form::Elementwise && c.space == Space::Global {
                args.push(kw("offsets", list(vec![int(0)])));
            }
            if c.masked {
                // Independent of the element type: every fifth element is off.
                let a = reshaped(call("arange", vec![pos(int(n as i128))]), &[n], &tile);
                args.push(kw(
                    "mask",
                    bin(BinOp::Ne, bin(BinOp::Rem, a, int(5)), int(3)),
                ));
            }
            let scatter = if c.form.is_scatter() { "scatter_" } else { "" };
            format!("atomic::{}_{scatter}{}", c.space.name(), c.op)
        }
        Form::Indexed => {
            args.push(pos(target));
            args.push(pos(path("i")));
            match c.op {
                "cas" => {
                    args.push(pos(path("w")));
                    args.push(pos(path("v")));
                }
                "load" => {}
                _ => args.push(pos(path("v"))),
            }
            if c.masked {
                // The indexed forms have no mask: the other switch is the bounds check.
                args.push(kw("check_bounds", e(ExprKind::Bool(false))));
            }
            format!("atomic_{}", cutile_name(c.op))
        }
    };
    if let Some(s) = c.sem {
        args.push(kw(
            "sem",
            Expr {
                kind: ExprKind::Path(vec![s.to_string()]),
                span: SEM,
            },
        ));
    }
    if let Some(s) = c.scope {
        args.push(kw(
            "scope",
            Expr {
                kind: ExprKind::Str(s.to_string()),
                span: SCOPE,
            },
        ));
    }
    let unchecked = args
        .iter()
        .any(|a| a.name.as_ref().is_some_and(|(n, _)| n == "check_bounds"));
    let mut op_expr = Expr {
        kind: ExprKind::Call {
            path: name.split("::").map(str::to_string).collect(),
            path_span: S,
            generics: vec![],
            args,
        },
        span: CALL,
    };
    if unchecked {
        // The indices are in bounds by construction: an unchecked access is the kernel's
        // promise, in an `unsafe` block.
        op_expr = Expr {
            kind: ExprKind::Unsafe(Box::new(op_expr)),
            span: CALL,
        };
    }
    if c.op == "store" {
        body.push(Stmt::Expr(op_expr));
    } else {
        body.push(let_("old", op_expr));
    }
    if c.space == Space::Shared {
        body.push(Stmt::Expr(call("sync", vec![])));
        let back = reshaped(
            call("load_shared", vec![pos(path("dst"))]),
            &dst,
            &[numel(&dst)],
        );
        body.push(Stmt::Expr(call(
            "store_global",
            vec![pos(path("x")), pos(back), kw("offsets", list(vec![int(0)]))],
        )));
    }
    if c.used {
        body.push(Stmt::Expr(call(
            "store_global",
            vec![
                pos(path("out")),
                pos(reshaped(path("old"), &tile, &[n])),
                kw("offsets", list(vec![block_base(n)])),
            ],
        )));
    }
    let params = param_names(c)
        .into_iter()
        .map(|p| ParamDef {
            name: p.to_string(),
            span: S,
            ty: ParamTy::GlobalTensor {
                elem: if p == "idx" { "i32" } else { ty }.to_string(),
            },
            ty_span: S,
        })
        .collect();
    KernelDef {
        name: c.name(),
        name_span: S,
        params,
        body,
        options: KernelOptions {
            threads: THREADS,
            threads_span: S,
            target: c.target,
            target_span: TARGET,
            ..KernelOptions::default()
        },
    }
}
