//! Range masks in 32 bits.
//!
//! The usual bounds mask of a tile loop, `arange(T) + start < n` with `start` and `n` 64-bit
//! (`x.len()` is an `i64`), costs every element a 64-bit add and a 64-bit compare: about three
//! times the work of the atomic it guards in a histogram. Rewritten here as
//!
//! ```text
//! bound = clamp(n - start, 0, T)         // once per tile
//! if start <= MAX - (T - 1) {            // no element of arange(T) + start wraps
//!     mask = arange_i32(T) < bound
//! } else {                               // some wrap, as Rust's `+` does (`wrapping_fallback`)
//!     mask = arange_i32(T) < min(bound, r1) | (r1 <= arange_i32(T) < hi)
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
//!
//! Accesses masked by such a mask are then unswitched on a whole tile (`unswitch`): every tile
//! of a loop but the last runs them with no per-element predicate.

use crate::dtype::DType;
use crate::facts::Defs;
use crate::ir::{for_each_var, BinOp, Block, Inst, Kernel, Operand, Stmt, Ty, Var, VarId, VarUse};

pub fn run(kernel: &mut Kernel) {
    let counts = Defs::of(kernel);
    let mut body = std::mem::take(&mut kernel.body);
    rewrite_block(&mut body, kernel, &counts, &mut Vec::new());
    kernel.body = body;
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

/// `done`: the masks already rewritten. The original statements of one stay in its guard's
/// fallback branch, which may be moved into a later statement (`sink_mask`): they must not be
/// matched again there.
fn rewrite_block(b: &mut Block, k: &mut Kernel, c: &Defs, done: &mut Vec<VarId>) {
    let mut i = 0;
    while i < b.len() {
        match &mut b[i] {
            Stmt::For(l) => rewrite_block(&mut l.body, k, c, done),
            Stmt::While {
                cond_block, body, ..
            } => {
                rewrite_block(cond_block, k, c, done);
                rewrite_block(body, k, c, done);
            }
            Stmt::If { then, els, .. } => {
                rewrite_block(then, k, c, done);
                rewrite_block(els, k, c, done);
            }
            _ => {}
        }
        let fresh = !matches!(&b[i], Stmt::Inst { dst: Some(m), .. } if done.contains(m));
        if let Some(f) = find(b, i, k, c).filter(|_| fresh) {
            let (at, mask, bound) = apply(b, i, &f, k);
            done.push(mask);
            unswitch(b, at + 1, (mask, bound, f.arange_len), k, c);
            i = at;
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

fn find(b: &Block, i: usize, k: &Kernel, c: &Defs) -> Option<Found> {
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
    if xd != x || !c.assigned_once(x) || c.reads(x) != 1 || !c.assigned_once(mask) {
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
        match c.def_of(a) {
            Some(&Inst::Arange { n, dtype: t }) if t == dtype => Some((a, n)),
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
        && c.reads(a) == 1
        && matches!(inst(&b[i - 2]), Some((Some(d), Inst::Arange { .. })) if d == a);
    Some(Found {
        arange_len: len,
        move_arange,
        dtype,
        start,
        n: *n,
    })
}

/// Statements under construction: each `def` appends `dst = inst` with a new temporary.
struct Builder<'k> {
    k: &'k mut Kernel,
    stmts: Vec<Stmt>,
    span: crate::ir::Span,
}

impl Builder<'_> {
    fn def(&mut self, ty: Ty, inst: Inst) -> VarId {
        let v = temp(self.k, ty);
        self.def_to(v, inst);
        v
    }
    fn def_to(&mut self, v: VarId, inst: Inst) {
        self.stmts.push(Stmt::Inst {
            dst: Some(v),
            inst,
            span: self.span,
        });
    }
    fn bin(&mut self, ty: Ty, op: BinOp, lhs: Operand, rhs: Operand) -> Operand {
        Operand::Var(self.def(ty, Inst::Binary { op, lhs, rhs }))
    }
    fn cast(&mut self, x: Operand, dtype: DType) -> Operand {
        Operand::Var(self.def(Ty::Scalar(dtype), Inst::Cast { x, dtype }))
    }
    /// `min(x as unsigned, t) as i32`: a scalar read as the unsigned type of its width, capped at
    /// the tile length (which fits an `i32`).
    fn capped(&mut self, x: Operand, unsigned: DType, t: u64) -> Operand {
        let x = self.cast(x, unsigned);
        let m = self.bin(
            Ty::Scalar(unsigned),
            BinOp::Min,
            x,
            Operand::Imm(t, unsigned),
        );
        self.cast(m, DType::I32)
    }
    fn lanes(&mut self, t: usize) -> Operand {
        let ty = Ty::Tile {
            dtype: DType::I32,
            shape: vec![t],
        };
        Operand::Var(self.def(
            ty,
            Inst::Arange {
                n: t,
                dtype: DType::I32,
            },
        ))
    }
    fn take(&mut self) -> Vec<Stmt> {
        std::mem::take(&mut self.stmts)
    }
}

/// Replace statements `i - 1 ..= i` (and `i - 2` when the arange moves) by the guarded form;
/// returns the index of the new `if`, the mask and the scalar `bound`.
fn apply(b: &mut Block, i: usize, f: &Found, k: &mut Kernel) -> (usize, VarId, VarId) {
    let first = if f.move_arange { i - 2 } else { i - 1 };
    let original: Vec<Stmt> = b.drain(first..=i).collect();
    let (mask, span) = match original.last() {
        Some(Stmt::Inst {
            dst: Some(m), span, ..
        }) => (*m, *span),
        _ => unreachable!("`find` matched an instruction with a result"),
    };
    let (d, t) = (f.dtype, f.arange_len as u64);
    let (max, unsigned) = (d.int_max(), d.unsigned());
    let (bool_, i32_) = (Ty::Scalar(DType::Bool), Ty::Scalar(DType::I32));
    let mut e = Builder {
        k,
        stmts: Vec::new(),
        span,
    };
    let no_wrap = e.bin(
        bool_.clone(),
        BinOp::Le,
        f.start,
        Operand::Imm(max - (t - 1), d),
    );
    let empty = e.bin(bool_, BinOp::Le, f.n, f.start);
    let diff = e.bin(Ty::Scalar(d), BinOp::Sub, f.n, f.start);
    let capped = e.capped(diff, unsigned, t);
    let bound = e.def(
        i32_,
        Inst::Select {
            cond: empty,
            a: Operand::i32(0),
            b: capped,
        },
    );
    let head = e.take();
    let lanes = e.lanes(f.arange_len);
    let tile_bool = Ty::Tile {
        dtype: DType::Bool,
        shape: vec![f.arange_len],
    };
    let lt = Inst::Binary {
        op: BinOp::Lt,
        lhs: lanes,
        rhs: Operand::Var(bound),
    };
    e.def_to(mask, lt);
    let fast = e.take();
    wrapping_fallback(&mut e, f, mask, bound, tile_bool);
    let slow = e.take();
    // The sum and its compare (and a moved `arange`) are read by nothing else (`find`).
    drop(original);
    let mut stmts = head;
    stmts.push(Stmt::If {
        cond: no_wrap,
        then: fast,
        els: slow,
        span,
    });
    let at = first + stmts.len() - 1;
    b.splice(first..first, stmts);
    (at, mask, bound)
}

/// The mask for a start within `T - 1` of the type's largest value, where some elements of
/// `arange(T) + start` wrap, still in 32 bits. A 64-bit tile sum here made ptxas allocate 110
/// registers for the masked per-lane histogram with tiles of 16384 (80 with this form), though
/// the branch never runs in practice.
///
/// With `r1 = MAX - start + 1` (below `T` here), elements `e < r1` do not wrap and are inside
/// when `e < n - start`, that is `e < bound`. The others wrap to `MIN + (e - r1)` (`MIN` is 0
/// for unsigned types), inside when `e - r1 < n - MIN`: `e < hi` with
/// `hi = min(min(n - MIN, T) + r1, T)`, where `n - MIN` is the bits of `n` with the sign bit
/// flipped (signed) or `n` (unsigned), read as unsigned. So
/// `mask = e < min(bound, r1) | (r1 <= e & e < hi)`.
fn wrapping_fallback(e: &mut Builder, f: &Found, mask: VarId, bound: VarId, tile_bool: Ty) {
    let (d, t) = (f.dtype, f.arange_len as u64);
    let (max, unsigned) = (d.int_max(), d.unsigned());
    let i32_ = Ty::Scalar(DType::I32);
    let r = e.bin(Ty::Scalar(d), BinOp::Sub, Operand::Imm(max, d), f.start);
    let r = e.cast(r, DType::I32);
    let r1 = e.bin(i32_.clone(), BinOp::Add, r, Operand::i32(1));
    let biased = if d.is_signed() {
        let sign = crate::elem::int_const(d, -(1i128 << (d.bits() - 1))).unwrap_or(0);
        e.bin(Ty::Scalar(d), BinOp::Xor, f.n, Operand::Imm(sign, d))
    } else {
        f.n
    };
    let biased = e.capped(biased, unsigned, t);
    let hi = e.bin(i32_.clone(), BinOp::Add, biased, r1);
    let hi = e.bin(i32_.clone(), BinOp::Min, hi, Operand::i32(t as i32));
    let lo = e.bin(i32_, BinOp::Min, Operand::Var(bound), r1);
    let lanes = e.lanes(f.arange_len);
    let below = e.bin(tile_bool.clone(), BinOp::Lt, lanes, lo);
    let from = e.bin(tile_bool.clone(), BinOp::Ge, lanes, r1);
    let until = e.bin(tile_bool.clone(), BinOp::Lt, lanes, hi);
    let wrapped = e.bin(tile_bool, BinOp::And, from, until);
    e.def_to(
        mask,
        Inst::Binary {
            op: BinOp::Or,
            lhs: below,
            rhs: wrapped,
        },
    );
}

/// Unswitching on a whole tile. The statements of `b` from `from` on whose result (if any) is
/// never read and that use `mask` as their access mask become
///
/// ```text
/// if bound == T { access with no mask } else { access with the mask }
/// ```
///
/// `bound == T` says that every element is inside (it is `clamp(n - start, 0, T)`, see the
/// module docs, and equals `T` exactly when `n - start >= T`, in either branch of the guard).
/// It is block-uniform, so the branch is too. Every tile of a loop but the last then runs its
/// access with no per-element predicate (a tile's mask is one predicate per element a thread
/// holds). Measured on an H100 (BENCHMARKS.md, fifth run): the masked single-copy byte
/// histogram with tiles of 16384 went from 2120 to 2267 GB/s, the speed of the same kernel
/// written with its tail split off by hand.
fn unswitch(b: &mut Block, from: usize, range: (VarId, VarId, usize), k: &mut Kernel, c: &Defs) {
    let (mask, bound, t) = range;
    // A result nobody reads is dropped (as DCE would), so both copies are plain statements.
    let masked = |s: &Stmt| match s {
        Stmt::Inst { dst, inst, .. } => {
            dst.is_none_or(|d| c.reads(d) == 0)
                && inst
                    .access()
                    .is_some_and(|a| a.mask == Some(Operand::Var(mask)))
        }
        _ => false,
    };
    let mut full = None;
    let mut unswitched = Vec::new();
    let mut i = from;
    while i < b.len() {
        if !masked(&b[i]) {
            i += 1;
            continue;
        }
        let Stmt::Inst { inst, span, .. } = &b[i] else {
            unreachable!("`masked` matched an instruction")
        };
        let (with_mask, span) = (inst.clone(), *span);
        let full = match full {
            Some(v) => v,
            None => {
                // Computed where the first such access is, after the mask (and `bound`).
                let v = temp(k, Ty::Scalar(DType::Bool));
                b.insert(
                    i,
                    Stmt::Inst {
                        dst: Some(v),
                        inst: Inst::Binary {
                            op: BinOp::Eq,
                            lhs: Operand::Var(bound),
                            rhs: Operand::i32(t as i32),
                        },
                        span,
                    },
                );
                i += 1;
                *full.insert(v)
            }
        };
        let mut without = with_mask.clone();
        if let Some(a) = without.access_mut() {
            a.mask = None;
        }
        let plain = |inst| Stmt::Inst {
            dst: None,
            inst,
            span,
        };
        unswitched.push(i);
        b[i] = Stmt::If {
            cond: Operand::Var(full),
            then: vec![plain(without)],
            els: vec![plain(with_mask)],
            span,
        };
        i += 1;
    }
    if let ([at], 1) = (unswitched.as_slice(), c.reads(mask)) {
        sink_mask(b, from - 1, *at);
    }
}

/// Moves the mask's `if` (statement `def`) into the masked branch of the one access that reads
/// it (statement `at`), so that a whole tile does not compute the mask at all, when nothing in
/// between assigns a variable the mask reads. (Computed before the branch, the mask's
/// predicates would stay live across the statements in between on every tile.)
fn sink_mask(b: &mut Block, def: usize, at: usize) {
    let mut reads = Vec::new();
    for_each_var(&b[def..=def], &mut |u| {
        if let VarUse::Read(v) = u {
            reads.push(v);
        }
    });
    let mut clobbered = false;
    for_each_var(&b[def + 1..at], &mut |u| {
        if let VarUse::Def(v, _) | VarUse::LoopVar(v) = u {
            clobbered |= reads.contains(&v);
        }
    });
    if clobbered {
        return;
    }
    let mask_if = b.remove(def);
    if let Stmt::If { els, .. } = &mut b[at - 1] {
        els.insert(0, mask_if);
    }
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
