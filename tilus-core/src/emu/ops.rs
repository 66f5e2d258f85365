//! Tile reductions, in the order the PTX performs them.
//!
//! Integer and `bool` reductions are associative and commutative, so any order gives the PTX's
//! value (from sm_80 on a warp folds them in one `redux.sync`). Float ones are not: they follow
//! the back end's order exactly (`ptx/collective/mod.rs`):
//! each thread folds the elements it owns in slot order starting from the identity, each warp
//! combines its lanes by a butterfly (`shfl.bfly` 16, 8, 4, 2, 1), then the warps' partials are
//! folded in warp order. `f16`/`bf16` are reduced in `f32` and rounded once at the end.

use super::buf::{get, Stored, Words};
use crate::elem::{self, Bits, Elem, Num};
use crate::ir::{BinOp, DType, ReduceOp};
use crate::layout::Layout;
use crate::{with_int_type, with_num_type};

fn op_of(op: ReduceOp) -> BinOp {
    match op {
        ReduceOp::Sum => BinOp::Add,
        ReduceOp::Min => BinOp::Min,
        ReduceOp::Max => BinOp::Max,
        ReduceOp::Or => BinOp::Or,
        ReduceOp::And => BinOp::And,
    }
}

pub(crate) fn identity(op: ReduceOp, d: DType) -> u64 {
    elem::reduce_identity(op, d)
}

/// Reduce `xs` (a tile of type `d` laid out as `layout`) to one value; `None` when the words
/// are not of `d`'s width or the reduction is not defined on `d` (malformed IR).
pub(crate) fn reduce(op: ReduceOp, d: DType, xs: Words<'_>, layout: Layout) -> Option<u64> {
    let bop = op_of(op);
    let init = identity(op, d);
    if d == DType::Bool {
        let xs = <u8 as super::buf::Word>::slice(xs)?;
        let r = xs
            .iter()
            .fold(init != 0, |a, &x| elem::bool_binary(bop, a, x != 0));
        return Some(r as u64);
    }
    if !d.is_float() {
        return with_int_type!(d, T => fold::<T>(bop, init, xs), _ => None);
    }
    let c = d.info().compute;
    let widened: Vec<u64> = (0..xs.len()).map(|i| elem::cast(d, c, xs.at(i))).collect();
    let r = with_num_type!(c, T => ordered::<T>(bop, &widened, layout, identity(op, c)), bool => 0);
    Some(elem::cast(c, d, r))
}

/// Fold the integer words `xs` with `op` from `init`, left to right.
fn fold<T: Stored + Num + Bits>(op: BinOp, init: u64, xs: Words<'_>) -> Option<u64> {
    let xs = <T::W as super::buf::Word>::slice(xs)?;
    let go = |f: fn(T, T) -> T| {
        xs.iter()
            .fold(T::from_bits(init), |a, &x| f(a, get::<T>(x)))
    };
    let r = match op {
        BinOp::Add => go(Num::add),
        BinOp::Min => go(Num::min),
        BinOp::Max => go(Num::max),
        BinOp::And => go(Bits::and),
        BinOp::Or => go(Bits::or),
        _ => return None,
    };
    Some(r.to_bits())
}

/// The PTX's order: per-thread folds over owned slots, warp butterflies, then warp partials.
fn ordered<T: Num>(op: BinOp, xs: &[u64], layout: Layout, id: u64) -> u64 {
    let f = |a: T, b: T| -> T {
        match op {
            BinOp::Add => a.add(b),
            BinOp::Min => a.min(b),
            _ => a.max(b),
        }
    };
    let threads = layout.threads;
    let mut acc: Vec<T> = vec![T::from_bits(id); threads];
    for (t, a) in acc.iter_mut().enumerate() {
        for s in 0..layout.slots() {
            let o = s / layout.v;
            let exists = layout.chunk_full(o) || t < layout.chunk_owners(o);
            if !exists {
                continue;
            }
            let idx = t * layout.v + layout.slot_const(s);
            if let Some(&x) = xs.get(idx) {
                *a = f(*a, T::from_bits(x));
            }
        }
    }
    for w in acc.chunks_mut(32) {
        for off in [16, 8, 4, 2, 1] {
            let old: Vec<T> = w.to_vec();
            for (l, a) in w.iter_mut().enumerate() {
                *a = f(old[l], old[l ^ off]);
            }
        }
    }
    let mut r = acc[0];
    for w in 1..threads / 32 {
        r = f(r, acc[w * 32]);
    }
    Elem::to_bits(r)
}
