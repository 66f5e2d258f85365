//! Seeded random differential testing: many random, well-typed kernels are built as
//! `tilus::core::ast::KernelDef` values, compiled, assembled with ptxas, and run with the same
//! random inputs on every backend; all backends must leave identical output tensors.
//!
//! The "backends" are everything in `common::backends()` (the strict emulator, plus the GPU with
//! `--features cuda`) and two more emulator configurations: one worker thread (blocks run one
//! after another instead of concurrently) and the *unoptimised* IR (straight from
//! `tilus::core::lower::lower`, before the passes). Without a GPU this checks emulator
//! determinism, the race checker's agreement with the generator, and the passes.
//!
//! Each kernel mixes: rank-1 and rank-2 loads of odd-shaped tiles at random scalar offsets (some
//! out of bounds, with `other` and `mask`) and through runtime `view`s; element-wise arithmetic
//! (`+ - * / % & | ^ << >>`, min/max, comparisons, `select`, value-`if`, casts, unary `-` and
//! `!`) on tiles and scalars (parameters, `block_idx()`, `grid_dim()`, `len()`, literals with
//! i32::MIN/MAX edges); numpy broadcasting (`[r,1]` with `[1,c]`, `broadcast_to`) and `reshape`;
//! reductions feeding scalar arithmetic, `if` and loop breaks; `for` loops (with `step_by`) over
//! `let mut` tile and scalar accumulators; shared-memory round trips; shared scatter atomics and
//! element-wise shared atomics (whose pre-RMW values are used: they are uncontended); global
//! scatter and element-wise atomics (results unused: contended across blocks) into
//! accumulator buffers; masked stores into a poisoned output through flat offsets and views.
//!
//! Determinism by construction: divisors are `(e | 1) & 127` or `-((e & 63) | 2)` (never 0 or
//! -1); every global store writes a slot of `out` owned by one (block, statement); the global
//! atomics of one buffer commute (`acc`: add/sub only, `accm`: only min or only max per kernel);
//! every shared write is preceded and followed by `sync()`.
//!
//! Replay: the run prints `TILUS_SEED`; a failure also names the kernel's own seed, which
//! `TILUS_DIFF_KERNEL_SEED=<seed>` runs alone. `TILUS_DIFF_KERNELS=<n>` changes the count.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod common;

use common::{assemble_all, backends, Rng};
use std::sync::{mpsc, Mutex};
use tilus::core::ast::*;
use tilus::core::emu::EmuOptions;
use tilus::core::ir::Span;
use tilus::{DType, Device, KernelArg, KernelSpec, ParamSpec};

const S: Span = Span(0);
const POISON: i32 = -0x5a5a5a5b;
/// Output slots per block (one per store statement; surplus stores are not generated).
const NS: usize = 10;
const DEFAULT_KERNELS: usize = 120;

// ---------------------------------------------------------------------------------------------
// A small seedable generator per kernel (the master `common::Rng` hands out the seeds).

struct KRng(u64);

impl KRng {
    fn new(seed: u64) -> KRng {
        KRng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    /// An interesting i32: small, edge, or anything.
    fn value(&mut self) -> i32 {
        match self.below(10) {
            0..=5 => self.int(-1000, 1000) as i32,
            6 | 7 => self.next() as i32,
            _ => self.pick(&[
                i32::MIN,
                i32::MIN + 1,
                i32::MAX,
                i32::MAX - 1,
                -1,
                0,
                1,
                31,
                32,
                33,
            ]),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// AST construction helpers.

fn ex(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}
/// An integer literal; negative values are written as `-(literal)` (folded by the front end, so
/// `i32::MIN` is expressible).
fn int(v: i64) -> Expr {
    if v < 0 {
        un(
            UnOp::Neg,
            ex(ExprKind::Int {
                value: -(v as i128),
                suffix: None,
            }),
        )
    } else {
        ex(ExprKind::Int {
            value: v as i128,
            suffix: None,
        })
    }
}
fn boolean(b: bool) -> Expr {
    ex(ExprKind::Bool(b))
}
fn var(name: &str) -> Expr {
    ex(ExprKind::Path(vec![name.to_string()]))
}
fn arr(items: Vec<Expr>) -> Expr {
    ex(ExprKind::Array(items))
}
fn shape_e(dims: &[usize]) -> Expr {
    arr(dims.iter().map(|&d| int(d as i64)).collect())
}
fn pos(value: Expr) -> Arg {
    Arg {
        name: None,
        value,
        span: S,
    }
}
fn kw(name: &str, value: Expr) -> Arg {
    Arg {
        name: Some((name.to_string(), S)),
        value,
        span: S,
    }
}
fn call(name: &str, args: Vec<Arg>) -> Expr {
    ex(ExprKind::Call {
        path: name.split("::").map(str::to_string).collect(),
        path_span: S,
        generics: vec![],
        args,
    })
}
fn method(recv: Expr, m: &str, args: Vec<Arg>) -> Expr {
    ex(ExprKind::Method {
        receiver: Box::new(recv),
        method: m.to_string(),
        method_span: S,
        args,
    })
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    })
}
fn un(op: UnOp, x: Expr) -> Expr {
    ex(ExprKind::Unary { op, x: Box::new(x) })
}
fn cast(x: Expr, ty: &str) -> Expr {
    ex(ExprKind::Cast {
        x: Box::new(x),
        ty: ty.to_string(),
        ty_span: S,
    })
}
fn if_else(c: Expr, a: Expr, b: Expr) -> Expr {
    ex(ExprKind::IfElse {
        cond: Box::new(c),
        then: Box::new(a),
        els: Box::new(b),
    })
}
fn let_(name: &str, mutable: bool, init: Expr) -> Stmt {
    Stmt::Let {
        name: name.to_string(),
        name_span: S,
        mutable,
        init,
        span: S,
    }
}
fn assign(name: &str, op: Option<BinOp>, value: Expr) -> Stmt {
    Stmt::Assign {
        name: name.to_string(),
        name_span: S,
        op,
        value,
        span: S,
    }
}
fn sync() -> Stmt {
    Stmt::Expr(call("sync", vec![]))
}

// ---------------------------------------------------------------------------------------------
// A readable dump of the AST, in the surface syntax.

fn binop_str(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&&",
        BinOp::Or => "||",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
    }
}

fn fmt_args(args: &[Arg]) -> String {
    args.iter()
        .map(|a| match &a.name {
            Some((n, _)) => format!("{n} = {}", fmt_expr(&a.value)),
            None => fmt_expr(&a.value),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value: v, suffix } => format!("{v}{}", suffix.as_deref().unwrap_or("")),
        ExprKind::Float { text, suffix } => format!("{text}{}", suffix.as_deref().unwrap_or("")),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Path(p) => p.join("::"),
        ExprKind::Array(items) => format!(
            "[{}]",
            items.iter().map(fmt_expr).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Tuple(items) => format!(
            "({})",
            items.iter().map(fmt_expr).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", fmt_expr(lhs), binop_str(*op), fmt_expr(rhs))
        }
        ExprKind::Unary { op, x } => {
            let o = if *op == UnOp::Neg { "-" } else { "!" };
            match &x.kind {
                ExprKind::Int {
                    value: _,
                    suffix: None,
                }
                | ExprKind::Path(_)
                | ExprKind::Binary { .. } => {
                    format!("{o}{}", fmt_expr(x))
                }
                _ => format!("{o}({})", fmt_expr(x)),
            }
        }
        ExprKind::Call { path, args, .. } => format!("{}({})", path.join("::"), fmt_args(args)),
        ExprKind::Method {
            receiver,
            method,
            args,
            ..
        } => format!("{}.{method}({})", fmt_expr(receiver), fmt_args(args)),
        ExprKind::IfElse { cond, then, els } => format!(
            "(if {} {{ {} }} else {{ {} }})",
            fmt_expr(cond),
            fmt_expr(then),
            fmt_expr(els)
        ),
        ExprKind::Cast { x, ty, .. } => format!("({} as {ty})", fmt_expr(x)),
    }
}

fn fmt_block(stmts: &[Stmt], indent: usize, out: &mut String) {
    let pad = "    ".repeat(indent);
    for s in stmts {
        match s {
            Stmt::Let {
                name,
                mutable,
                init,
                ..
            } => {
                let m = if *mutable { "mut " } else { "" };
                out.push_str(&format!("{pad}let {m}{name} = {};\n", fmt_expr(init)));
            }
            Stmt::Assign {
                name, op, value, ..
            } => {
                let o = op.map_or(String::new(), |o| binop_str(o).to_string());
                out.push_str(&format!("{pad}{name} {o}= {};\n", fmt_expr(value)));
            }
            Stmt::Expr(e) => out.push_str(&format!("{pad}{};\n", fmt_expr(e))),
            Stmt::For {
                var, range, body, ..
            } => {
                let r = format!("{}..{}", fmt_expr(&range.start), fmt_expr(&range.end));
                let r = match &range.step {
                    Some(st) => format!("({r}).step_by({})", fmt_expr(st)),
                    None => r,
                };
                out.push_str(&format!("{pad}for {var} in {r} {{\n"));
                fmt_block(body, indent + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::While { cond, body, .. } => {
                out.push_str(&format!("{pad}while {} {{\n", fmt_expr(cond)));
                fmt_block(body, indent + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::Loop { body, .. } => {
                out.push_str(&format!("{pad}loop {{\n"));
                fmt_block(body, indent + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                out.push_str(&format!("{pad}if {} {{\n", fmt_expr(cond)));
                fmt_block(then, indent + 1, out);
                if let Some(els) = els {
                    out.push_str(&format!("{pad}}} else {{\n"));
                    fmt_block(els, indent + 1, out);
                }
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::Break { .. } => out.push_str(&format!("{pad}break;\n")),
        }
    }
}

fn fmt_kernel(k: &KernelDef) -> String {
    let params = k
        .params
        .iter()
        .map(|p| match &p.ty {
            ParamTy::GlobalTensor { elem } => format!("{}: GlobalTensor<{elem}>", p.name),
            ParamTy::Scalar(t) => format!("{}: {t}", p.name),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = format!(
        "#[tile_kernel(threads = {})]\nfn {}({params}) {{\n",
        k.options.threads, k.name
    );
    fmt_block(&k.body, 1, &mut out);
    out.push_str("}\n");
    out
}

// ---------------------------------------------------------------------------------------------
// The kernel generator.

type Shape = Vec<usize>;

const ARITH: [BinOp; 10] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::Shl,
    BinOp::Shr,
];
const CMP: [BinOp; 6] = [
    BinOp::Eq,
    BinOp::Ne,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
];

struct Gen {
    rng: KRng,
    /// i32 tiles in scope, with their shapes.
    tiles: Vec<(String, Shape)>,
    /// i32 scalars in scope.
    scalars: Vec<String>,
    /// Rank-2 views of the inputs in scope.
    views: Vec<String>,
    /// `let mut` tiles / scalars assignable in the current scope.
    mut_tiles: Vec<(String, Shape)>,
    mut_scalars: Vec<String>,
    counter: usize,
    /// The main 2-D shape `[r, c]`, its flat form `[r * c]` and an unrelated 1-D length `n`.
    r: usize,
    c: usize,
    n: usize,
    /// Output slots used so far and the slot size (elements).
    stores: usize,
    slot: usize,
    /// The one RMW op the `accm` buffer sees ("min" or "max").
    accm_op: &'static str,
    loop_depth: usize,
    /// The scope of the global atomics.
    gscope: &'static str,
    /// Depth of loads being generated inside other loads.
    nest: usize,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let mut rng = KRng::new(seed);
        // Shapes that are mostly not multiples of anything (but sometimes are).
        let r = if rng.chance(15) {
            rng.pick(&[1, 8, 16])
        } else {
            rng.int(1, 13) as usize
        };
        let c = if rng.chance(15) {
            rng.pick(&[1, 32])
        } else {
            rng.int(1, 25) as usize
        };
        let n = if rng.chance(15) {
            rng.pick(&[1, 64, 256])
        } else {
            rng.int(1, 300) as usize
        };
        let slot = (r * c).max(n) + 8;
        let accm_op = if rng.chance(50) { "min" } else { "max" };
        let gscope = if rng.chance(70) { "gpu" } else { "sys" };
        Gen {
            rng,
            tiles: vec![],
            scalars: vec!["b".into(), "k".into(), "m".into()],
            views: vec![],
            mut_tiles: vec![],
            mut_scalars: vec![],
            counter: 0,
            r,
            c,
            n,
            stores: 0,
            slot,
            accm_op,
            loop_depth: 0,
            gscope,
            nest: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn main_shapes(&self) -> [Shape; 3] {
        [vec![self.r, self.c], vec![self.r * self.c], vec![self.n]]
    }

    fn any_shape(&mut self) -> Shape {
        let s = self.main_shapes();
        s[self.rng.below(3)].clone()
    }

    // ---- scalars ----

    fn literal(&mut self) -> Expr {
        let v = match self.rng.below(4) {
            0 => self.rng.value() as i64,
            _ => self.rng.int(-20, 40),
        };
        int(v)
    }

    fn scalar_leaf(&mut self) -> Expr {
        match self.rng.below(10) {
            0..=4 => {
                let i = self.rng.below(self.scalars.len());
                var(&self.scalars[i].clone())
            }
            5 | 6 => self.literal(),
            7 => call("grid_dim", vec![]),
            8 => method(var(self.rng.pick(&["x", "y"])), "len", vec![]),
            _ if self.nest > 0 => var("k"),
            _ => {
                let op = self.rng.pick(&["sum", "min", "max"]);
                let sh = self.any_shape();
                let t = self.tile(&sh, 0);
                method(t, op, vec![])
            }
        }
    }

    fn scalar(&mut self, d: usize) -> Expr {
        if d == 0 || self.rng.chance(35) {
            return self.scalar_leaf();
        }
        match self.rng.below(10) {
            0..=3 => {
                let op = self.rng.pick(&ARITH);
                let a = self.scalar(d - 1);
                let b = self.scalar(d - 1);
                self.arith(op, a, b)
            }
            4 => {
                let m = self.rng.pick(&["min", "max"]);
                let a = self.scalar(d - 1);
                let b = self.scalar(d - 1);
                if self.rng.chance(50) {
                    method(a, m, vec![pos(b)])
                } else {
                    call(m, vec![pos(a), pos(b)])
                }
            }
            5 => {
                let op = self.rng.pick(&["sum", "min", "max"]);
                let sh = self.any_shape();
                let t = self.tile(&sh, 1.min(d - 1));
                method(t, op, vec![])
            }
            6 => {
                let c = self.bool_scalar(d - 1);
                let a = self.scalar(d - 1);
                let b = self.scalar(d - 1);
                if self.rng.chance(50) {
                    if_else(c, a, b)
                } else {
                    call("select", vec![pos(c), pos(a), pos(b)])
                }
            }
            7 => {
                let op = self.rng.pick(&[UnOp::Neg, UnOp::Not]);
                let a = self.scalar(d - 1);
                un(op, a)
            }
            _ => cast(self.bool_scalar(d - 1), "i32"),
        }
    }

    fn bool_scalar(&mut self, d: usize) -> Expr {
        match self.rng.below(if d == 0 { 2 } else { 7 }) {
            0 | 1 => {
                let op = self.rng.pick(&CMP);
                let a = self.scalar(d.min(1));
                let b = self.scalar(d.min(1));
                bin(op, a, b)
            }
            2 => {
                let sh = self.any_shape();
                let t = self.bool_tile(&sh, 1);
                method(t, self.rng.pick(&["any", "all"]), vec![])
            }
            3 => {
                let op = self
                    .rng
                    .pick(&[BinOp::And, BinOp::Or, BinOp::BitAnd, BinOp::BitXor]);
                let a = self.bool_scalar(d - 1);
                let b = self.bool_scalar(d - 1);
                bin(op, a, b)
            }
            4 => un(UnOp::Not, self.bool_scalar(d - 1)),
            5 => cast(self.scalar(d - 1), "bool"),
            _ => boolean(self.rng.chance(50)),
        }
    }

    /// `a op b` with the divisor / shift amount made safe and interesting.
    fn arith(&mut self, op: BinOp, a: Expr, b: Expr) -> Expr {
        let b = match op {
            // Never 0, never -1 (i32::MIN / -1 is unspecified on the GPU).
            BinOp::Div | BinOp::Rem => {
                if self.rng.chance(70) {
                    bin(
                        BinOp::BitAnd,
                        bin(BinOp::BitOr, b, int(1)),
                        int(self.rng.pick(&[127, 7, 1023])),
                    )
                } else {
                    un(
                        UnOp::Neg,
                        bin(BinOp::BitOr, bin(BinOp::BitAnd, b, int(63)), int(2)),
                    )
                }
            }
            // Shifts are defined for every amount (clamped, PTX style); mostly keep them small.
            BinOp::Shl | BinOp::Shr if self.rng.chance(75) => bin(BinOp::BitAnd, b, int(31)),
            _ => b,
        };
        bin(op, a, b)
    }

    // ---- offsets ----

    /// A scalar element offset into `x`/`y`: mostly in or near bounds, sometimes far off.
    fn offset(&mut self) -> Expr {
        match self.rng.below(10) {
            0..=4 => {
                let per = self.rng.int(0, 300);
                let base = self.rng.int(-30, 900);
                bin(BinOp::Add, bin(BinOp::Mul, var("b"), int(per)), int(base))
            }
            5 | 6 => {
                let s = self.scalar(1);
                bin(
                    BinOp::Sub,
                    bin(BinOp::BitAnd, s, int(1023)),
                    int(self.rng.int(0, 50)),
                )
            }
            7 => int(self.rng.int(-600, 2000)),
            8 => self.scalar(1),
            _ => int(self.rng.pick(&[
                i32::MAX as i64,
                i32::MAX as i64 - 7,
                i32::MIN as i64,
                i32::MIN as i64 + 9,
                -1,
            ])),
        }
    }

    /// A small coordinate for a rank-2 access.
    fn coord(&mut self, extent: usize) -> Expr {
        match self.rng.below(6) {
            0..=2 => int(self.rng.int(-2, extent as i64 + 2)),
            3 => bin(BinOp::Rem, var("b"), int(self.rng.int(1, 4))),
            4 => bin(
                BinOp::Sub,
                bin(BinOp::BitAnd, var("k"), int(7)),
                int(self.rng.int(0, 3)),
            ),
            _ => int(0),
        }
    }

    fn view_expr(&mut self) -> Expr {
        let src = var(self.rng.pick(&["x", "y"]));
        let off = match self.rng.below(4) {
            0 => int(0),
            1 | 2 => self.offset(),
            _ => bin(BinOp::Mul, var("b"), int(self.rng.int(0, 200))),
        };
        let rows = match self.rng.below(4) {
            0 => bin(
                BinOp::Add,
                bin(BinOp::BitAnd, var("m"), int(15)),
                int(self.rng.int(0, 4)),
            ),
            _ => int(self.rng.int(0, self.r as i64 + 6)),
        };
        let cols = match self.rng.below(4) {
            0 => bin(
                BinOp::Add,
                bin(BinOp::BitAnd, var("k"), int(31)),
                int(self.rng.int(1, 9)),
            ),
            _ => int(self.rng.int(1, self.c as i64 + 12)),
        };
        method(src, "view", vec![pos(off), pos(arr(vec![rows, cols]))])
    }

    // ---- tiles ----

    fn load(&mut self, shape: &[usize]) -> Expr {
        self.nest += 1;
        let e = self.load_inner(shape);
        self.nest -= 1;
        e
    }

    fn load_inner(&mut self, shape: &[usize]) -> Expr {
        // Loads nested in the `other`/`mask`/offsets of loads stay simple.
        let simple = self.nest > 1;
        let (src, offsets) = if shape.len() == 1 {
            (var(self.rng.pick(&["x", "y"])), vec![self.offset()])
        } else {
            let src = if !self.views.is_empty() && self.rng.chance(70) {
                let i = self.rng.below(self.views.len());
                var(&self.views[i].clone())
            } else {
                self.view_expr()
            };
            let (a, b) = (self.coord(shape[0]), self.coord(shape[1]));
            (src, vec![a, b])
        };
        let mut args = vec![
            pos(src),
            kw("offsets", arr(offsets)),
            kw("shape", shape_e(shape)),
        ];
        if self.rng.chance(60) {
            let o = if simple || self.rng.chance(50) {
                self.literal()
            } else {
                self.scalar(1)
            };
            args.push(kw("other", o));
        }
        if !simple && self.rng.chance(20) {
            let m = self.bool_tile(shape, 0);
            args.push(kw("mask", m));
        }
        call("load_global", args)
    }

    /// A tile of `shape` built from positions (no memory).
    fn arange_tile(&mut self, shape: &[usize]) -> Expr {
        let n: usize = shape.iter().product();
        if shape.len() == 2 && self.rng.chance(50) {
            let (r, c) = (shape[0], shape[1]);
            let rows = method(
                call("arange", vec![pos(int(r as i64))]),
                "reshape",
                vec![pos(shape_e(&[r, 1]))],
            );
            let cols = method(
                call("arange", vec![pos(int(c as i64))]),
                "reshape",
                vec![pos(shape_e(&[1, c]))],
            );
            let scaled = bin(BinOp::Mul, rows, int(self.rng.int(1, 1000)));
            return bin(BinOp::Add, scaled, cols);
        }
        let a = call("arange", vec![pos(int(n as i64))]);
        let a = if self.rng.chance(40) {
            let s = self.scalar(0);
            bin(
                self.rng.pick(&[BinOp::Add, BinOp::Mul, BinOp::BitXor]),
                a,
                s,
            )
        } else {
            a
        };
        if shape.len() == 1 {
            a
        } else {
            method(a, "reshape", vec![pos(shape_e(shape))])
        }
    }

    fn tile_leaf(&mut self, shape: &[usize]) -> Expr {
        let same: Vec<String> = self
            .tiles
            .iter()
            .filter(|(_, s)| s == shape)
            .map(|(n, _)| n.clone())
            .collect();
        let n: usize = shape.iter().product();
        let reshapable: Vec<String> = self
            .tiles
            .iter()
            .filter(|(_, s)| s != shape && s.iter().product::<usize>() == n)
            .map(|(n, _)| n.clone())
            .collect();
        loop {
            match self.rng.below(12) {
                0..=3 if !same.is_empty() => return var(&same[self.rng.below(same.len())]),
                4 if !reshapable.is_empty() => {
                    let t = var(&reshapable[self.rng.below(reshapable.len())]);
                    return method(t, "reshape", vec![pos(shape_e(shape))]);
                }
                5..=7 => return self.load(shape),
                8 => return self.arange_tile(shape),
                9 => {
                    return match self.rng.below(3) {
                        0 => call("zeros", vec![pos(shape_e(shape))]),
                        1 => call("ones", vec![pos(shape_e(shape))]),
                        _ => {
                            let s = self.scalar(1);
                            call("full", vec![pos(shape_e(shape)), pos(s)])
                        }
                    }
                }
                10 if shape.len() == 2 => {
                    // broadcast_to from a column or a row.
                    let src = if self.rng.chance(50) {
                        vec![shape[0], 1]
                    } else {
                        vec![1, shape[1]]
                    };
                    let t = self.small_tile(&src);
                    return method(t, "broadcast_to", vec![pos(shape_e(shape))]);
                }
                11 if shape.len() == 2 => {
                    // numpy broadcasting: [r, 1] op [1, c].
                    let a = self.small_tile(&[shape[0], 1]);
                    let b = self.small_tile(&[1, shape[1]]);
                    let op = self.rng.pick(&ARITH);
                    return self.arith(op, a, b);
                }
                _ => {}
            }
        }
    }

    /// A column or row tile (for broadcasting): a load, positions, or a reshaped reduction-free
    /// expression.
    fn small_tile(&mut self, shape: &[usize]) -> Expr {
        let n: usize = shape.iter().product();
        match self.rng.below(4) {
            0 | 1 => self.load(shape),
            2 => {
                let a = call("arange", vec![pos(int(n as i64))]);
                let s = self.scalar(0);
                method(bin(BinOp::Sub, a, s), "reshape", vec![pos(shape_e(shape))])
            }
            _ => {
                let s = self.scalar(1);
                call("full", vec![pos(shape_e(shape)), pos(s)])
            }
        }
    }

    fn tile(&mut self, shape: &[usize], d: usize) -> Expr {
        if d == 0 || self.rng.chance(25) {
            return self.tile_leaf(shape);
        }
        match self.rng.below(12) {
            0..=4 => {
                let op = self.rng.pick(&ARITH);
                let a = self.tile(shape, d - 1);
                if self.rng.chance(30) {
                    let s = self.scalar(1);
                    if self.rng.chance(50) {
                        self.arith(op, a, s)
                    } else {
                        self.arith(op, s, a)
                    }
                } else {
                    let b = self.tile(shape, d - 1);
                    self.arith(op, a, b)
                }
            }
            5 => {
                let op = self.rng.pick(&[UnOp::Neg, UnOp::Not]);
                un(op, self.tile(shape, d - 1))
            }
            6 | 7 => {
                let c = self.bool_tile(shape, d - 1);
                let a = if self.rng.chance(30) {
                    self.scalar(1)
                } else {
                    self.tile(shape, d - 1)
                };
                let b = if self.rng.chance(30) {
                    self.scalar(1)
                } else {
                    self.tile(shape, d - 1)
                };
                if self.rng.chance(50) {
                    call("select", vec![pos(c), pos(a), pos(b)])
                } else {
                    if_else(c, a, b)
                }
            }
            8 => {
                let m = self.rng.pick(&["min", "max"]);
                let a = self.tile(shape, d - 1);
                let b = if self.rng.chance(30) {
                    self.scalar(1)
                } else {
                    self.tile(shape, d - 1)
                };
                call(m, vec![pos(a), pos(b)])
            }
            9 => cast(self.bool_tile(shape, d - 1), "i32"),
            10 => {
                // The same elements through another shape.
                let shapes = self.main_shapes();
                let n: usize = shape.iter().product();
                let others: Vec<Shape> = shapes
                    .into_iter()
                    .filter(|s| s.as_slice() != shape && s.iter().product::<usize>() == n)
                    .collect();
                if others.is_empty() {
                    self.tile(shape, d - 1)
                } else {
                    let o = others[self.rng.below(others.len())].clone();
                    let t = self.tile(&o, d - 1);
                    method(t, "reshape", vec![pos(shape_e(shape))])
                }
            }
            _ => {
                // A tile and a (uniform) scalar condition.
                let c = self.bool_scalar(1);
                let a = self.tile(shape, d - 1);
                let b = self.tile(shape, d - 1);
                call("select", vec![pos(c), pos(a), pos(b)])
            }
        }
    }

    fn bool_tile(&mut self, shape: &[usize], d: usize) -> Expr {
        match self.rng.below(if d == 0 { 2 } else { 6 }) {
            0 | 1 => {
                let op = self.rng.pick(&CMP);
                let a = self.tile(shape, d.min(1));
                let b = if self.rng.chance(50) {
                    self.scalar(1)
                } else {
                    self.tile(shape, 0)
                };
                if self.rng.chance(50) {
                    bin(op, a, b)
                } else {
                    bin(op, b, a)
                }
            }
            2 => {
                let op = self.rng.pick(&[
                    BinOp::And,
                    BinOp::Or,
                    BinOp::BitAnd,
                    BinOp::BitOr,
                    BinOp::BitXor,
                    BinOp::Eq,
                    BinOp::Ne,
                ]);
                let a = self.bool_tile(shape, d - 1);
                let b = if self.rng.chance(25) {
                    self.bool_scalar(0)
                } else {
                    self.bool_tile(shape, d - 1)
                };
                bin(op, a, b)
            }
            3 => un(UnOp::Not, self.bool_tile(shape, d - 1)),
            4 => cast(self.tile(shape, d - 1), "bool"),
            _ => {
                let c = self.bool_scalar(0);
                let a = self.bool_tile(shape, d - 1);
                let b = self.bool_tile(shape, d - 1);
                call("select", vec![pos(c), pos(a), pos(b)])
            }
        }
    }

    // ---- statements ----

    fn sem_scope(&mut self, args: &mut Vec<Arg>, global: bool) {
        if self.rng.chance(30) {
            let sem = self.rng.pick(&["relaxed", "acquire", "release", "acq_rel"]);
            args.push(kw("sem", ex(ExprKind::Str(sem.into()))));
        }
        // Global atomics are contended across blocks: never narrower than the GPU, and one
        // scope per kernel (mixing scopes on one tensor is a compile error). The default is gpu.
        let scope = if global {
            Some(self.gscope).filter(|s| *s == "sys" || self.rng.chance(30))
        } else {
            self.rng
                .chance(30)
                .then(|| self.rng.pick(&["cta", "gpu", "sys"]))
        };
        if let Some(scope) = scope {
            args.push(kw("scope", ex(ExprKind::Str(scope.into()))));
        }
    }

    /// `store_global` of a tile into this statement's own slot of `out`.
    fn store(&mut self, out: &mut Vec<Stmt>) {
        if self.stores >= NS {
            return;
        }
        let k = self.stores;
        self.stores += 1;
        let slot_base = bin(
            BinOp::Mul,
            bin(
                BinOp::Add,
                bin(BinOp::Mul, var("b"), int(NS as i64)),
                int(k as i64),
            ),
            int(self.slot as i64),
        );
        let shape = self.any_shape();
        let numel: usize = shape.iter().product();
        let value = self.tile(&shape, 2);
        let (dst, offsets) = if shape.len() == 1 {
            let d = self.rng.int(0, (self.slot - numel) as i64);
            (var("out"), vec![bin(BinOp::Add, slot_base, int(d))])
        } else {
            // Through a view of the slot: elements outside the view's dims are inactive, so
            // nothing lands outside the slot (rows * cols <= slot).
            let rows = self.rng.int(0, self.r as i64 + 2);
            let max_cols = (self.slot as i64 / rows.max(1)).min(self.c as i64 + 4);
            let cols = self.rng.int(0, max_cols);
            let v = method(
                var("out"),
                "view",
                vec![pos(slot_base), pos(arr(vec![int(rows), int(cols)]))],
            );
            let (a, b) = (self.rng.int(-1, 2), self.rng.int(-1, 2));
            (v, vec![int(a), int(b)])
        };
        let mut args = vec![pos(dst), pos(value), kw("offsets", arr(offsets))];
        if self.rng.chance(60) {
            let m = if self.rng.chance(80) {
                self.bool_tile(&shape, 2)
            } else {
                self.bool_scalar(1)
            };
            args.push(kw("mask", m));
        }
        out.push(Stmt::Expr(call("store_global", args)));
    }

    fn shared_round_trip(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let sh = self.fresh("sh");
        out.push(let_(
            &sh,
            false,
            call("shared_tensor", vec![pos(var("i32")), pos(shape_e(&shape))]),
        ));
        let v = self.tile(&shape, 2);
        out.push(sync());
        out.push(Stmt::Expr(call(
            "store_shared",
            vec![pos(var(&sh)), pos(v)],
        )));
        out.push(sync());
        let t = self.fresh("t");
        let mut load = call("load_shared", vec![pos(var(&sh))]);
        let mut tshape = shape.clone();
        if self.rng.chance(30) {
            let shapes = self.main_shapes();
            let n: usize = shape.iter().product();
            if let Some(o) = shapes
                .into_iter()
                .find(|s| *s != shape && s.iter().product::<usize>() == n)
            {
                load = method(load, "reshape", vec![pos(shape_e(&o))]);
                tshape = o;
            }
        }
        out.push(let_(&t, false, load));
        self.tiles.push((t, tshape));
    }

    /// Scatter RMW into a fresh shared histogram, read back after a barrier.
    fn shared_scatter(&mut self, out: &mut Vec<Stmt>) {
        let h = self.rng.int(1, 48) as usize;
        // (histogram shape, indices/values shape, dim)
        let (hshape, ishape, dim) = match self.rng.below(3) {
            0 => {
                let s = if self.rng.chance(50) {
                    vec![self.n]
                } else {
                    vec![self.r * self.c]
                };
                (vec![h], s, 0)
            }
            1 => (vec![h, self.c], vec![self.r, self.c], 0),
            _ => (vec![self.r, h], vec![self.r, self.c], 1),
        };
        let name = self.fresh("h");
        out.push(let_(
            &name,
            false,
            call(
                "shared_tensor",
                vec![pos(var("i32")), pos(shape_e(&hshape))],
            ),
        ));
        let init = if self.rng.chance(50) {
            let s = self.literal();
            call("full", vec![pos(shape_e(&hshape)), pos(s)])
        } else {
            self.arange_tile(&hshape)
        };
        out.push(sync());
        out.push(Stmt::Expr(call(
            "store_shared",
            vec![pos(var(&name)), pos(init)],
        )));
        out.push(sync());
        let idx = self.indices(&ishape, h);
        let op = self.rng.pick(&["add", "sub", "min", "max"]);
        let values = self.tile(&ishape, 1);
        let mut args = vec![
            pos(var(&name)),
            kw("dim", int(dim)),
            kw("indices", idx),
            kw("values", values),
        ];
        if self.rng.chance(40) {
            let m = self.bool_tile(&ishape, 1);
            args.push(kw("mask", m));
        }
        self.sem_scope(&mut args, false);
        out.push(Stmt::Expr(call(
            &format!("atomic::shared_scatter_{op}"),
            args,
        )));
        out.push(sync());
        let t = self.fresh("t");
        let mut load = call("load_shared", vec![pos(var(&name))]);
        // Make the histogram usable as a pool tile when it has a pool shape.
        let hn: usize = hshape.iter().product();
        let target = self
            .main_shapes()
            .into_iter()
            .find(|s| s.iter().product::<usize>() == hn);
        match target {
            Some(s) => {
                if s != hshape {
                    load = method(load, "reshape", vec![pos(shape_e(&s))]);
                }
                out.push(let_(&t, false, load));
                self.tiles.push((t, s));
            }
            None => {
                // Fold it into a scalar instead.
                let red = self.rng.pick(&["sum", "min", "max"]);
                out.push(let_(&t, false, method(load, red, vec![])));
                self.scalars.push(t);
            }
        }
    }

    /// Scatter indices into an axis of extent `h`: mostly in range, some negative or past it.
    fn indices(&mut self, shape: &[usize], h: usize) -> Expr {
        let t = self.tile(shape, 1);
        match self.rng.below(3) {
            0 => bin(BinOp::Rem, t, int(h as i64 + self.rng.int(0, 3))),
            1 => bin(
                BinOp::Sub,
                bin(
                    BinOp::Rem,
                    bin(BinOp::BitAnd, t, int(1023)),
                    int(h as i64 + 2),
                ),
                int(1),
            ),
            _ => bin(BinOp::BitAnd, t, int(self.rng.pick(&[0, 1, 3, 7, 63]))),
        }
    }

    /// Element-wise RMW on a fresh shared tensor; its (uncontended) pre-RMW values are used.
    fn shared_elementwise(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let name = self.fresh("e");
        out.push(let_(
            &name,
            false,
            call("shared_tensor", vec![pos(var("i32")), pos(shape_e(&shape))]),
        ));
        let init = self.tile(&shape, 1);
        out.push(sync());
        out.push(Stmt::Expr(call(
            "store_shared",
            vec![pos(var(&name)), pos(init)],
        )));
        out.push(sync());
        let op = self.rng.pick(&["add", "sub", "min", "max", "exch", "cas"]);
        let mut args = vec![pos(var(&name))];
        if op == "cas" {
            let c = self.tile(&shape, 1);
            args.push(kw("compare", c));
        }
        let v = self.tile(&shape, 1);
        args.push(kw("values", v));
        if self.rng.chance(40) {
            let m = self.bool_tile(&shape, 1);
            args.push(kw("mask", m));
        }
        self.sem_scope(&mut args, false);
        let old = self.fresh("old");
        out.push(let_(
            &old,
            false,
            call(&format!("atomic::shared_{op}"), args),
        ));
        out.push(sync());
        let t = self.fresh("t");
        out.push(let_(&t, false, call("load_shared", vec![pos(var(&name))])));
        self.tiles.push((old, shape.clone()));
        self.tiles.push((t, shape));
    }

    /// Which accumulator buffer and op: `acc` takes add/sub, `accm` the kernel's min or max.
    fn acc_op(&mut self) -> (&'static str, &'static str) {
        if self.rng.chance(50) {
            ("acc", self.rng.pick(&["add", "sub"]))
        } else {
            ("accm", self.accm_op)
        }
    }

    fn global_scatter(&mut self, out: &mut Vec<Stmt>) {
        let (buf, op) = self.acc_op();
        let (dst, ishape, dim) = if self.rng.chance(60) {
            let s = if self.rng.chance(50) {
                vec![self.n]
            } else {
                vec![self.r * self.c]
            };
            (var(buf), s, 0)
        } else {
            let rows = self.rng.int(1, self.r as i64 + 8);
            let cols = self.rng.int(1, self.c as i64 + 8);
            let off = int(self.rng.int(-3, 20));
            let v = method(
                var(buf),
                "view",
                vec![pos(off), pos(arr(vec![int(rows), int(cols)]))],
            );
            (v, vec![self.r, self.c], self.rng.int(0, 1))
        };
        let t = self.tile(&ishape, 1);
        let idx = if dim == 0 && ishape.len() == 1 {
            // Relative to the runtime length: some indices negative, some past the end.
            bin(
                BinOp::Rem,
                t,
                bin(
                    BinOp::Add,
                    method(var(buf), "len", vec![]),
                    int(self.rng.int(1, 6)),
                ),
            )
        } else {
            self.indices(&ishape, 8)
        };
        let values = self.tile(&ishape, 1);
        let mut args = vec![
            pos(dst),
            kw("dim", int(dim)),
            kw("indices", idx),
            kw("values", values),
        ];
        if self.rng.chance(40) {
            let m = self.bool_tile(&ishape, 1);
            args.push(kw("mask", m));
        }
        self.sem_scope(&mut args, true);
        out.push(Stmt::Expr(call(
            &format!("atomic::global_scatter_{op}"),
            args,
        )));
    }

    fn global_elementwise(&mut self, out: &mut Vec<Stmt>) {
        let (buf, op) = self.acc_op();
        let shape = self.any_shape();
        let (dst, offsets) = if shape.len() == 1 {
            let o = match self.rng.below(3) {
                0 => int(self.rng.int(-10, 100)),
                1 => bin(BinOp::Mul, var("b"), int(self.rng.int(0, 40))),
                _ => bin(
                    BinOp::Sub,
                    bin(BinOp::BitAnd, self.scalar(1), int(127)),
                    int(5),
                ),
            };
            (var(buf), vec![o])
        } else {
            let rows = self.rng.int(1, self.r as i64 + 4);
            let cols = self.rng.int(1, self.c as i64 + 4);
            let v = method(
                var(buf),
                "view",
                vec![
                    pos(int(self.rng.int(0, 30))),
                    pos(arr(vec![int(rows), int(cols)])),
                ],
            );
            let (a, b) = (self.coord(2), self.coord(2));
            (v, vec![a, b])
        };
        let values = self.tile(&shape, 2);
        let mut args = vec![pos(dst), kw("values", values), kw("offsets", arr(offsets))];
        if self.rng.chance(40) {
            let m = self.bool_tile(&shape, 1);
            args.push(kw("mask", m));
        }
        self.sem_scope(&mut args, true);
        out.push(Stmt::Expr(call(&format!("atomic::global_{op}"), args)));
    }

    /// `let mut` accumulators, then a `for` loop updating them.
    fn for_loop(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let a = self.fresh("acc");
        let init = self.tile(&shape, 1);
        out.push(let_(&a, true, init));
        let s = self.fresh("sacc");
        let sinit = self.literal();
        out.push(let_(&s, true, sinit));
        let i = self.fresh("i");
        let start = int(self.rng.int(-2, 3));
        let len = match self.rng.below(3) {
            0 => bin(BinOp::BitAnd, var(self.rng.pick(&["k", "m"])), int(3)),
            _ => int(self.rng.int(0, 4)),
        };
        let end = bin(BinOp::Add, start.clone(), len);
        let step = match self.rng.below(4) {
            0 => Some(int(self.rng.int(1, 2))),
            1 => Some(bin(
                BinOp::Add,
                bin(BinOp::BitAnd, var("m"), int(1)),
                int(1),
            )),
            _ => None,
        };
        let saved = self.save();
        self.mut_tiles.push((a.clone(), shape.clone()));
        self.mut_scalars.push(s.clone());
        self.tiles.push((a.clone(), shape.clone()));
        self.scalars.push(s.clone());
        self.scalars.push(i.clone());
        self.loop_depth += 1;
        // An early exit somewhere in the body, on names in scope at the loop's start.
        let break_cond = self.rng.chance(30).then(|| self.bool_scalar(1));
        let mut body = Vec::new();
        let n = self.rng.int(1, 4);
        for _ in 0..n {
            self.stmt(&mut body);
        }
        // The accumulators are always updated.
        let v = self.tile(&shape, 2);
        let op = self.rng.pick(&[
            None,
            Some(BinOp::Add),
            Some(BinOp::BitXor),
            Some(BinOp::Sub),
        ]);
        body.push(assign(&a, op, v));
        let sv = self.scalar(2);
        body.push(assign(&s, Some(BinOp::Add), sv));
        if let Some(c) = break_cond {
            let at = self.rng.below(body.len() + 1);
            body.insert(
                at,
                Stmt::If {
                    cond: c,
                    then: vec![Stmt::Break { span: S }],
                    els: None,
                    span: S,
                },
            );
        }
        self.loop_depth -= 1;
        self.restore(saved);
        out.push(Stmt::For {
            var: i,
            var_span: S,
            range: RangeExpr {
                start,
                end,
                step,
                span: S,
            },
            body,
            span: S,
        });
        self.tiles.push((a, shape));
        self.scalars.push(s);
    }

    /// `let mut z = ..; if cond { z = ..; .. } else { z = ..; .. }`
    fn if_stmt(&mut self, out: &mut Vec<Stmt>) {
        let shape = self.any_shape();
        let z = self.fresh("z");
        let init = self.tile(&shape, 1);
        out.push(let_(&z, true, init));
        let cond = self.bool_scalar(2);
        let saved = self.save();
        self.mut_tiles.push((z.clone(), shape.clone()));
        self.tiles.push((z.clone(), shape.clone()));
        let mut arms = Vec::new();
        for _ in 0..2 {
            let inner = self.save();
            let mut body = Vec::new();
            for _ in 0..self.rng.int(0, 2) {
                self.stmt(&mut body);
            }
            let v = self.tile(&shape, 2);
            body.push(assign(&z, None, v));
            self.restore(inner);
            arms.push(body);
        }
        self.restore(saved);
        let els = arms.pop().filter(|_| self.rng.chance(80));
        let then = arms.pop().unwrap();
        out.push(Stmt::If {
            cond,
            then,
            els,
            span: S,
        });
        self.tiles.push((z, shape));
    }

    fn save(&self) -> [usize; 5] {
        [
            self.tiles.len(),
            self.scalars.len(),
            self.views.len(),
            self.mut_tiles.len(),
            self.mut_scalars.len(),
        ]
    }
    fn restore(&mut self, s: [usize; 5]) {
        self.tiles.truncate(s[0]);
        self.scalars.truncate(s[1]);
        self.views.truncate(s[2]);
        self.mut_tiles.truncate(s[3]);
        self.mut_scalars.truncate(s[4]);
    }

    fn stmt(&mut self, out: &mut Vec<Stmt>) {
        loop {
            match self.rng.below(20) {
                0..=3 => {
                    let shape = self.any_shape();
                    let t = self.fresh("t");
                    let e = self.tile(&shape, 2);
                    out.push(let_(&t, false, e));
                    self.tiles.push((t, shape));
                }
                4 => {
                    let s = self.fresh("s");
                    let e = self.scalar(3);
                    out.push(let_(&s, false, e));
                    self.scalars.push(s);
                }
                5 => {
                    let v = self.fresh("v");
                    let e = self.view_expr();
                    out.push(let_(&v, false, e));
                    self.views.push(v);
                }
                6..=8 => self.store(out),
                9 if self.loop_depth < 1 => self.for_loop(out),
                10 => self.if_stmt(out),
                11 => self.shared_round_trip(out),
                12 => self.shared_scatter(out),
                13 => self.shared_elementwise(out),
                14 => self.global_scatter(out),
                15 => self.global_elementwise(out),
                16 if !self.mut_tiles.is_empty() => {
                    let (name, shape) =
                        self.mut_tiles[self.rng.below(self.mut_tiles.len())].clone();
                    let v = self.tile(&shape, 2);
                    let op = self.rng.pick(&[
                        None,
                        Some(BinOp::Add),
                        Some(BinOp::BitOr),
                        Some(BinOp::Mul),
                    ]);
                    out.push(assign(&name, op, v));
                }
                17 if !self.mut_scalars.is_empty() => {
                    let name = self.mut_scalars[self.rng.below(self.mut_scalars.len())].clone();
                    let v = self.scalar(2);
                    out.push(assign(&name, Some(BinOp::BitXor), v));
                }
                18 | 19 => {
                    // A reduction feeding scalar arithmetic and an `if` on it.
                    let shape = self.any_shape();
                    let s = self.fresh("s");
                    let red = self.rng.pick(&["sum", "min", "max"]);
                    let t = self.tile(&shape, 2);
                    let rhs = self.scalar(1);
                    let op = self.rng.pick(&ARITH);
                    let e = self.arith(op, method(t, red, vec![]), rhs);
                    out.push(let_(&s, false, e));
                    self.scalars.push(s.clone());
                    let cond = bin(self.rng.pick(&CMP), var(&s), self.scalar(1));
                    let saved = self.save();
                    let mut then = Vec::new();
                    self.stmt(&mut then);
                    self.restore(saved);
                    out.push(Stmt::If {
                        cond,
                        then,
                        els: None,
                        span: S,
                    });
                }
                _ => continue,
            }
            return;
        }
    }
}

/// One random kernel (parameters `x, y, out, acc, accm: GlobalTensor<i32>, k, m: i32`).
fn gen_kernel(seed: u64, name: &str) -> (KernelDef, Gen) {
    let mut g = Gen::new(seed);
    let threads = g.rng.pick(&[32u32, 64, 128, 256]);
    let mut body = vec![let_("b", false, call("block_idx", vec![]))];
    let n = g.rng.int(2, 5);
    for _ in 0..n {
        g.stmt(&mut body);
    }
    // Always store something.
    g.store(&mut body);
    let tensor = |n: &str| ParamDef {
        name: n.to_string(),
        span: S,
        ty: ParamTy::GlobalTensor { elem: "i32".into() },
        ty_span: S,
    };
    let scalar = |n: &str| ParamDef {
        name: n.to_string(),
        span: S,
        ty: ParamTy::Scalar("i32".into()),
        ty_span: S,
    };
    let def = KernelDef {
        name: name.to_string(),
        name_span: S,
        params: vec![
            tensor("x"),
            tensor("y"),
            tensor("out"),
            tensor("acc"),
            tensor("accm"),
            scalar("k"),
            scalar("m"),
        ],
        body,
        options: KernelOptions {
            threads,
            threads_span: S,
            target: None,
            target_span: S,
            ..KernelOptions::default()
        },
    };
    (def, g)
}

// ---------------------------------------------------------------------------------------------
// Running.

struct Inputs {
    grid: u32,
    x: Vec<i32>,
    y: Vec<i32>,
    out_len: usize,
    acc: Vec<i32>,
    accm: Vec<i32>,
    k: i32,
    m: i32,
}

fn gen_inputs(rng: &mut KRng, g: &Gen) -> Inputs {
    let grid = rng.int(1, 5) as u32;
    let data = |rng: &mut KRng, lo: i64, hi: i64| -> Vec<i32> {
        let n = rng.int(lo, hi) as usize;
        (0..n).map(|_| rng.value()).collect()
    };
    let x = data(rng, 1, 1500);
    let y = data(rng, 1, 1500);
    let acc = data(rng, 1, 200);
    let accm = data(rng, 1, 200);
    let full = grid as usize * NS * g.slot;
    let out_len = full - rng.below(g.slot);
    Inputs {
        grid,
        x,
        y,
        out_len,
        acc,
        accm,
        k: rng.value(),
        m: rng.value(),
    }
}

const OUTPUTS: [&str; 3] = ["out", "acc", "accm"];

/// Run one spec on one device; the final contents of `out`, `acc`, `accm`.
fn run_on(dev: &Device, spec: &'static KernelSpec, inp: &Inputs) -> Result<Vec<Vec<i32>>, String> {
    let x = dev.upload(&inp.x).map_err(|e| e.to_string())?;
    let y = dev.upload(&inp.y).map_err(|e| e.to_string())?;
    let out = dev
        .full::<i32>(inp.out_len, POISON)
        .map_err(|e| e.to_string())?;
    let acc = dev.upload(&inp.acc).map_err(|e| e.to_string())?;
    let accm = dev.upload(&inp.accm).map_err(|e| e.to_string())?;
    dev.launch(
        spec,
        inp.grid,
        &[
            KernelArg::from(&x),
            KernelArg::from(&y),
            KernelArg::from(&out),
            KernelArg::from(&acc),
            KernelArg::from(&accm),
            KernelArg::from(inp.k),
            KernelArg::from(inp.m),
        ],
    )
    .map_err(|e| e.to_string())?;
    let mut v = Vec::new();
    for t in [&out, &acc, &accm] {
        v.push(t.download().map_err(|e| e.to_string())?);
    }
    Ok(v)
}

fn leak_spec(
    name: &str,
    ptx: &str,
    ir_json: String,
    threads: u32,
    shared_bytes: usize,
) -> &'static KernelSpec {
    let params: &'static [ParamSpec] = Box::leak(
        vec![
            ParamSpec::tensor("x", DType::I32),
            ParamSpec::tensor("y", DType::I32),
            ParamSpec::tensor("out", DType::I32),
            ParamSpec::tensor("acc", DType::I32),
            ParamSpec::tensor("accm", DType::I32),
            ParamSpec::scalar("k", DType::I32),
            ParamSpec::scalar("m", DType::I32),
        ]
        .into_boxed_slice(),
    );
    // SAFETY: the PTX, the IR and the parameter list all come from one compilation of one
    // `KernelDef` whose parameters are exactly these (checked again by the launcher); generated
    // accesses are bounds-checked by the compiler.
    let spec = unsafe {
        KernelSpec::new(
            name.to_string().leak(),
            ptx.to_string().leak(),
            ir_json.leak(),
            threads,
            shared_bytes,
            params,
        )
    };
    Box::leak(Box::new(spec))
}

fn describe(seed: u64, index: usize, def: &KernelDef, inp: &Inputs) -> String {
    format!(
        "kernel #{index}, replay with TILUS_DIFF_KERNEL_SEED={seed}\n\
         grid = {}, threads = {}, len(x) = {}, len(y) = {}, len(out) = {}, len(acc) = {}, \
         len(accm) = {}, k = {}, m = {}\n--- kernel ---\n{}",
        inp.grid,
        def.options.threads,
        inp.x.len(),
        inp.y.len(),
        inp.out_len,
        inp.acc.len(),
        inp.accm.len(),
        inp.k,
        inp.m,
        fmt_kernel(def)
    )
}

/// Generate, compile and run kernel `index` from `seed` on every backend; returns what to
/// assemble (name, PTX, target) and how many elements of `out` the kernel stored.
fn check_kernel(
    seed: u64,
    index: usize,
    devices: &[(String, Device, bool)],
) -> ((String, String, u32), usize) {
    // The seed is in the name, so a ptxas failure (reported by name) can be replayed.
    let name = format!("diff_{index}_seed_{seed}");
    let (def, g) = gen_kernel(seed, &name);
    let mut rng = KRng::new(seed ^ 0x5eed_1234_abcd_ef01);
    let inp = gen_inputs(&mut rng, &g);
    let compiled = match tilus::core::compile(&def) {
        Ok(c) => c,
        Err(diags) => panic!(
            "generated kernel does not compile (a generator bug): {diags:#?}\n{}",
            describe(seed, index, &def, &inp)
        ),
    };
    let unopt = tilus::core::lower::lower(&def).expect("lowering succeeded inside compile");
    let spec = leak_spec(
        &name,
        &compiled.ptx,
        compiled.ir.to_json(),
        def.options.threads,
        compiled.shared_bytes,
    );
    let spec_unopt = leak_spec(
        &name,
        &compiled.ptx,
        unopt.to_json(),
        def.options.threads,
        compiled.shared_bytes,
    );
    let mut results: Vec<(String, Vec<Vec<i32>>)> = Vec::new();
    for (label, dev, optimised) in devices {
        let s = if *optimised { spec } else { spec_unopt };
        match run_on(dev, s, &inp) {
            Ok(r) => results.push((label.clone(), r)),
            Err(e) => panic!(
                "{label} failed to run the kernel: {e}\n{}",
                describe(seed, index, &def, &inp)
            ),
        }
    }
    let (ref_label, reference) = &results[0];
    for (label, got) in &results[1..] {
        for (b, buf) in OUTPUTS.iter().enumerate() {
            if let Some(i) = (0..reference[b].len()).find(|&i| reference[b][i] != got[b][i]) {
                let diffs = (0..reference[b].len())
                    .filter(|&i| reference[b][i] != got[b][i])
                    .count();
                let (slot_blk, slot) = if *buf == "out" {
                    (i / (NS * g.slot), (i / g.slot) % NS)
                } else {
                    (0, 0)
                };
                // The optimised IR too, on request (it is long).
                let ir = if std::env::var("TILUS_DIFF_IR").is_ok_and(|v| v == "1") {
                    format!("--- IR ---\n{:#?}", compiled.ir.body)
                } else {
                    "(TILUS_DIFF_IR=1 also prints the IR)".to_string()
                };
                panic!(
                    "backends disagree on `{buf}[{i}]`: {ref_label} = {}, {label} = {} \
                     ({diffs} differing elements; for `out`: block {slot_blk}, store slot {slot})\n{}{ir}",
                    reference[b][i],
                    got[b][i],
                    describe(seed, index, &def, &inp),
                );
            }
        }
    }
    let stored = reference[0].iter().filter(|&&v| v != POISON).count();
    ((name, compiled.ptx, compiled.ir.target.0), stored)
}

/// Kernels per ptxas run.
const BATCH: usize = 6;

/// One module from several single-kernel modules of one target: the first whole, the others
/// from their `.entry` on (they share the header and the `.extern .shared` window declaration).
fn merge(modules: &[(String, String, u32)]) -> String {
    let mut out = String::new();
    for (i, (_, m, _)) in modules.iter().enumerate() {
        if i == 0 {
            out.push_str(m);
        } else {
            let at = m.find(".visible .entry").expect("an entry");
            out.push('\n');
            out.push_str(&m[at..]);
        }
    }
    out
}

/// Assemble a batch of kernels of one target for every architecture from it up among sm_70,
/// sm_80 and sm_90, as one module; on failure, kernel by kernel to name the culprit.
fn assemble_batch(batch: &[(String, String, u32)]) {
    let target = batch[0].2;
    let merged = merge(batch);
    for sm in [70, 80, 90] {
        if sm < target {
            continue;
        }
        if let Err(e) = tilus::core::ptx::assemble::assemble(&merged, sm) {
            for (name, ptx, target) in batch {
                assemble_all(name, ptx, *target);
            }
            panic!(
                "ptxas rejected a merged batch whose kernels each assemble (a merge bug?):\n{e}"
            );
        }
    }
}

fn devices() -> Vec<(String, Device, bool)> {
    let mut v: Vec<(String, Device, bool)> = backends()
        .into_iter()
        .map(|d| (d.name(), d, true))
        .collect();
    v.push((
        "emulator (1 worker)".into(),
        Device::emulator_with(EmuOptions {
            strict_scatter: true,
            check_races: true,
            workers: 1,
            max_loop_iterations: Some(1 << 24),
        }),
        true,
    ));
    v.push((
        "emulator (unoptimised IR)".into(),
        common::emulator(),
        false,
    ));
    v
}

#[test]
fn random_kernels_agree_on_every_backend() {
    let devs = devices();
    if let Some(seed) = std::env::var("TILUS_DIFF_KERNEL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        let ((name, ptx, target), _) = check_kernel(seed, 0, &devs);
        assemble_all(&name, &ptx, target);
        return;
    }
    let count = std::env::var("TILUS_DIFF_KERNELS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_KERNELS);
    let mut rng = Rng::new();
    // ptxas dominates the run time: it runs on worker threads while the next kernels are
    // generated and emulated, on batches of kernels merged into one module (one ptxas start per
    // batch and architecture). A failing batch is assembled kernel by kernel with
    // `assemble_all`, whose failure names the kernel; the name holds the kernel's seed.
    let (tx, rx) = mpsc::channel::<Vec<(String, String, u32)>>();
    let rx = Mutex::new(rx);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
    let mut stored_kernels = 0;
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let job = rx.lock().unwrap().recv();
                match job {
                    Ok(batch) => assemble_batch(&batch),
                    Err(_) => break,
                }
            });
        }
        let mut pending: Vec<(String, String, u32)> = Vec::new();
        for index in 0..count {
            let seed = rng.next_u64();
            let (job, stored) = check_kernel(seed, index, &devs);
            stored_kernels += (stored > 0) as usize;
            if pending.first().is_some_and(|p| p.2 != job.2) {
                tx.send(std::mem::take(&mut pending)).unwrap();
            }
            pending.push(job);
            if pending.len() == BATCH {
                tx.send(std::mem::take(&mut pending)).unwrap();
            }
        }
        if !pending.is_empty() {
            tx.send(pending).unwrap();
        }
        drop(tx);
    });
    eprintln!("{count} kernels agree; {stored_kernels} of them stored into `out`");
    // The generator is not degenerate: most kernels store something.
    assert!(
        stored_kernels * 2 >= count,
        "too few kernels store anything"
    );
}

/// The dump is readable source: a fixed kernel prints as expected.
#[test]
fn dump_reads_like_source() {
    let body = vec![
        let_("b", false, call("block_idx", vec![])),
        let_("t", true, bin(BinOp::Add, var("b"), int(i32::MIN as i64))),
    ];
    let def = KernelDef {
        name: "k".into(),
        name_span: S,
        params: vec![],
        body,
        options: KernelOptions::default(),
    };
    assert_eq!(
        fmt_kernel(&def),
        "#[tile_kernel(threads = 128)]\nfn k() {\n    let b = block_idx();\n    let mut t = (b + -2147483648);\n}\n"
    );
}
