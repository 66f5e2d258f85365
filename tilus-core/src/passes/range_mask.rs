//! Range masks in 32 bits.
//!
//! The usual bounds mask of a tile loop, `arange(T) + start < n` with `start` and `n` 64-bit
//! (`x.len()` is an `i64`), costs every element a 64-bit add and a 64-bit compare: about three
//! times the work of the atomic it guards in a histogram. Rewritten here as
//!
//! ```text
//! if start <= MAX - (T - 1) {            // no element of arange(T) + start wraps
//!     mask = arange_i32(T) < bound       // bound = clamp(n - start, 0, T), once per tile
//! } else {
//!     mask = arange(T) + start < n       // the original, for starts within T of the end
//! }
//! ```
//!
//! which computes the same bits: without wrapping, `e + start < n` is `e < n - start` over the
//! integers; when `n <= start` no element is inside (bound 0), and otherwise `n - start` is
//! between 1 and `2^W - 1`, exact as a `W`-bit unsigned difference, and clamped to `T` it fits
//! an `i32` (tiles have at most 2^18 elements). The branch is block-uniform (scalars only).
//!
//! The rewrite applies where `arange(T) + start` and the compare are consecutive statements of
//! one block (so nothing changes `start` or `n` between them), the sum is read by nothing else,
//! the `arange(T)` is a variable assigned once in the kernel (also outside the loop), and
//! `start` and `n` are scalars of a 32- or 64-bit integer type.

use crate::dtype::DType;
use crate::ir::{for_each_var, BinOp, Block, Inst, Kernel, Operand, Stmt, Ty, Var, VarId, VarUse};
use std::collections::HashMap;

pub fn run(kernel: &mut Kernel) {
    let counts = Counts::of(&kernel.body);
    let mut body = std::mem::take(&mut kernel.body);
    rewrite_block(&mut body, kernel, &counts);
    kernel.body = body;
}

/// How often each variable is assigned and read, anywhere in the kernel.
#[derive(Default)]
struct Counts {
    defs: HashMap<VarId, usize>,
    uses: HashMap<VarId, usize>,
    /// Variables assigned by an `arange` (its length and type), wherever in the kernel.
    aranges: HashMap<VarId, (usize, DType)>,
}

impl Counts {
    fn of(body: &Block) -> Counts {
        let mut c = Counts::default();
        for_each_var(body, &mut |u| match u {
            VarUse::Read(v) => *c.uses.entry(v).or_default() += 1,
            VarUse::Def(v, inst) => {
                *c.defs.entry(v).or_default() += 1;
                if let Inst::Arange { n, dtype } = inst {
                    c.aranges.insert(v, (*n, *dtype));
                }
            }
            // A loop variable changes every iteration: never "assigned once".
            VarUse::LoopVar(v) => *c.defs.entry(v).or_default() += 2,
        });
        c
    }
    fn once(&self, v: VarId) -> bool {
        self.defs.get(&v) == Some(&1)
    }
    fn uses(&self, v: VarId) -> usize {
        self.uses.get(&v).copied().unwrap_or(0)
    }
}

/// A match: `a = arange(T)` (statement `i - 2`, or elsewhere), `x = a + start` (`i - 1`),
/// `mask = x < n` (`i`).
struct Found {
    arange_len: usize,
    /// Whether `a`'s statement is `i - 2` and read only by `x` (then it moves too).
    move_arange: bool,
    dtype: DType,
    start: Operand,
    n: Operand,
}

fn rewrite_block(b: &mut Block, k: &mut Kernel, c: &Counts) {
    let mut i = 0;
    while i < b.len() {
        match &mut b[i] {
            Stmt::For { body, .. } => rewrite_block(body, k, c),
            Stmt::While {
                cond_block, body, ..
            } => {
                rewrite_block(cond_block, k, c);
                rewrite_block(body, k, c);
            }
            Stmt::If { then, els, .. } => {
                rewrite_block(then, k, c);
                rewrite_block(els, k, c);
            }
            _ => {}
        }
        if let Some(f) = find(b, i, k, c) {
            i = apply(b, i, f, k);
        }
        i += 1;
    }
}

fn inst(s: &Stmt) -> Option<(Option<VarId>, &Inst)> {
    match s {
        Stmt::Inst { dst, inst, .. } => Some((*dst, inst)),
        _ => None,
    }
}

/// A scalar operand of type `d` (a variable or an immediate). Loop variables qualify: the
/// statements rewritten are consecutive, so nothing assigns it between them.
fn scalar_of(o: Operand, d: DType, k: &Kernel) -> bool {
    match o {
        Operand::Imm(_, t) => t == d,
        Operand::Var(v) => k.vars.get(v as usize).map(|x| &x.ty) == Some(&Ty::Scalar(d)),
    }
}

fn find(b: &Block, i: usize, k: &Kernel, c: &Counts) -> Option<Found> {
    if i == 0 {
        return None;
    }
    let (
        Some(mask),
        Inst::Binary {
            op: BinOp::Lt,
            lhs,
            rhs: n,
        },
    ) = inst(&b[i])?
    else {
        return None;
    };
    let Operand::Var(x) = *lhs else { return None };
    let (
        Some(xd),
        Inst::Binary {
            op: BinOp::Add,
            lhs: p,
            rhs: q,
        },
    ) = inst(&b[i - 1])?
    else {
        return None;
    };
    if xd != x || !c.once(x) || c.uses(x) != 1 || !c.once(mask) {
        return None;
    }
    let Ty::Tile { dtype, shape } = &k.vars.get(x as usize)?.ty else {
        return None;
    };
    let dtype = *dtype;
    if !matches!(dtype, DType::I32 | DType::U32 | DType::I64 | DType::U64) || shape.len() != 1 {
        return None;
    }
    // `arange + start` or `start + arange`.
    let is_arange = |o: Operand| -> Option<(VarId, usize)> {
        // Assigned once, by an `arange` anywhere (often hoisted out of the loop): that is the
        // value every read sees.
        let Operand::Var(a) = o else { return None };
        match c.aranges.get(&a) {
            Some(&(n, t)) if c.once(a) && t == dtype => Some((a, n)),
            _ => None,
        }
    };
    let ((a, len), start) = match (is_arange(*p), is_arange(*q)) {
        (Some(found), _) => (found, *q),
        (None, Some(found)) => (found, *p),
        _ => return None,
    };
    if len != shape[0] || len > i32::MAX as usize {
        return None;
    }
    if !scalar_of(start, dtype, k) || !scalar_of(*n, dtype, k) || start == Operand::Var(x) {
        return None;
    }
    let move_arange = i >= 2
        && c.uses(a) == 1
        && matches!(inst(&b[i - 2]), Some((Some(d), Inst::Arange { .. })) if d == a);
    Some(Found {
        arange_len: len,
        move_arange,
        dtype,
        start,
        n: *n,
    })
}

/// Replace statements `i - 1 ..= i` (and `i - 2` when the arange moves) by the guarded form;
/// returns the index of the new `if`.
fn apply(b: &mut Block, i: usize, f: Found, k: &mut Kernel) -> usize {
    let first = if f.move_arange { i - 2 } else { i - 1 };
    let original: Vec<Stmt> = b.drain(first..=i).collect();
    let (mask, span) = match original.last() {
        Some(Stmt::Inst {
            dst: Some(m), span, ..
        }) => (*m, *span),
        _ => unreachable!("`find` matched an instruction with a result"),
    };
    let d = f.dtype;
    let t = f.arange_len as u64;
    let unsigned = if d.bits() == 64 {
        DType::U64
    } else {
        DType::U32
    };
    let max = match d {
        DType::I32 => i32::MAX as u64,
        DType::U32 => u32::MAX as u64,
        DType::I64 => i64::MAX as u64,
        _ => u64::MAX,
    };
    let mut stmts = Vec::new();
    let mut def = |k: &mut Kernel, ty: Ty, inst: Inst| -> VarId {
        let v = temp(k, ty);
        stmts.push(Stmt::Inst {
            dst: Some(v),
            inst,
            span,
        });
        v
    };
    let bin = |op, lhs, rhs| Inst::Binary { op, lhs, rhs };
    let scalar = Ty::Scalar;
    let no_wrap = def(
        k,
        scalar(DType::Bool),
        bin(BinOp::Le, f.start, Operand::Imm(max - (t - 1), d)),
    );
    let empty = def(k, scalar(DType::Bool), bin(BinOp::Le, f.n, f.start));
    let diff = def(k, scalar(d), bin(BinOp::Sub, f.n, f.start));
    let diff = def(
        k,
        scalar(unsigned),
        Inst::Cast {
            x: Operand::Var(diff),
            dtype: unsigned,
        },
    );
    let capped = def(
        k,
        scalar(unsigned),
        bin(BinOp::Min, Operand::Var(diff), Operand::Imm(t, unsigned)),
    );
    let capped = def(
        k,
        scalar(DType::I32),
        Inst::Cast {
            x: Operand::Var(capped),
            dtype: DType::I32,
        },
    );
    let bound = def(
        k,
        scalar(DType::I32),
        Inst::Select {
            cond: Operand::Var(empty),
            a: Operand::i32(0),
            b: Operand::Var(capped),
        },
    );
    let mut fast = Vec::new();
    let lanes = temp(
        k,
        Ty::Tile {
            dtype: DType::I32,
            shape: vec![f.arange_len],
        },
    );
    fast.push(Stmt::Inst {
        dst: Some(lanes),
        inst: Inst::Arange {
            n: f.arange_len,
            dtype: DType::I32,
        },
        span,
    });
    fast.push(Stmt::Inst {
        dst: Some(mask),
        inst: bin(BinOp::Lt, Operand::Var(lanes), Operand::Var(bound)),
        span,
    });
    stmts.push(Stmt::If {
        cond: Operand::Var(no_wrap),
        then: fast,
        els: original,
        span,
    });
    let at = first + stmts.len() - 1;
    b.splice(first..first, stmts);
    at
}

/// A new compiler temporary (named `_mask{N}`, apart from the front end's `_t{N}`).
fn temp(k: &mut Kernel, ty: Ty) -> VarId {
    k.vars.push(Var {
        name: format!("_mask{}", k.vars.len()),
        ty,
        temp: true,
    });
    (k.vars.len() - 1) as VarId
}
