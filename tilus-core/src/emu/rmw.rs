//! Read-modify-writes (not the 128-bit pairs), typed by element type: one loop per element
//! type, and per operation where the new value is computed here, so that the operation
//! compiles to its instruction (`crate::elem::rmw_new` is inlined with a constant operation
//! and type).
//!
//! Global memory is shared with other host threads: the host's atomic instructions where it
//! has them (integer add, exchange, compare-and-swap), a compare-and-swap loop otherwise.
//! Shared memory belongs to the block's own thread: plain reads and writes.

use super::access::{Plan, INACTIVE};
use super::buf::{with_elem_type, Buf, Pool, Stored, Word};
use super::global::{Cell, CellWord, GlobalMem};
use super::transfer::{read_word, rmw_each, write_word};
use super::value::{Elems, Src};
use crate::elem::{rmw_new, Elem};
use crate::ir::{DType, InactiveResult, RmwOp};
use std::sync::atomic::Ordering;

/// One read-modify-write instruction's operands.
pub(crate) struct Rmw<'v> {
    pub op: RmwOp,
    /// The element type.
    pub d: DType,
    pub values: Elems<'v>,
    /// The compare operand of `cas` (0 otherwise).
    pub compare: Elems<'v>,
    pub inactive: InactiveResult,
    /// Elements of the access.
    pub n: usize,
    /// Whether the old values are wanted (else the result is empty).
    pub want: bool,
}

fn src<W: Word>(e: Elems<'_>) -> Result<Src<'_, W>, String> {
    e.src::<W>()
        .ok_or_else(|| "an atomic operand whose elements have another width".to_string())
}

/// What an inactive element gives.
fn dead<W: Word>(inactive: InactiveResult, c: Src<'_, W>) -> impl Fn(usize) -> W + '_ {
    move |e| match inactive {
        InactiveResult::Zero => W::default(),
        InactiveResult::Compare => c.at(e),
    }
}

/// The operations, indexed by the constant parameter of the loops below (one loop per
/// element type and operation: `crate::elem::rmw_new` inlined with constants).
const OPS: [RmwOp; 11] = [
    RmwOp::Add,
    RmwOp::Sub,
    RmwOp::Min,
    RmwOp::Max,
    RmwOp::Exch,
    RmwOp::Cas,
    RmwOp::And,
    RmwOp::Or,
    RmwOp::Xor,
    RmwOp::Inc,
    RmwOp::Dec,
];

/// Calls `$f::<T, I>($args)` with `I` the index of `$op` in [`OPS`].
macro_rules! by_op {
    ($op:expr, $f:ident::<$T:ty>($($args:expr),*)) => {
        match $op {
            RmwOp::Add => $f::<$T, 0>($($args),*),
            RmwOp::Sub => $f::<$T, 1>($($args),*),
            RmwOp::Min => $f::<$T, 2>($($args),*),
            RmwOp::Max => $f::<$T, 3>($($args),*),
            RmwOp::Exch => $f::<$T, 4>($($args),*),
            RmwOp::Cas => $f::<$T, 5>($($args),*),
            RmwOp::And => $f::<$T, 6>($($args),*),
            RmwOp::Or => $f::<$T, 7>($($args),*),
            RmwOp::Xor => $f::<$T, 8>($($args),*),
            RmwOp::Inc => $f::<$T, 9>($($args),*),
            RmwOp::Dec => $f::<$T, 10>($($args),*),
        }
    };
}

/// The new value of a cell holding `old` of type `T` after operation `OPS[OP]`.
#[inline(always)]
fn new_value<T: Stored, const OP: usize>(old: T::W, v: T::W, c: T::W, global: bool) -> T::W {
    let bits = rmw_new(
        OPS[OP],
        <T as Elem>::DTYPE,
        old.bits(),
        v.bits(),
        c.bits(),
        global,
    );
    T::W::of(bits)
}

/// The read-modify-writes of `plan` on global memory `mem` with orders `o` (and `fail` for a
/// failed compare-and-swap); `locks`: take each 64-bit element's chunk lock
/// ([`GlobalMem::chunk_lock`]). Returns the old values.
pub(crate) fn global(
    mem: GlobalMem<'_>,
    plan: Plan<'_>,
    a: &Rmw<'_>,
    orders: (Ordering, Ordering),
    locks: bool,
    pool: &mut Pool,
) -> Result<Buf, String> {
    with_elem_type!(a.d, T => {
        let cells = <<T as Stored>::W as CellWord>::cells(mem)
            .ok_or_else(|| "an atomic on a tensor of another element width".to_string())?;
        let mut out = pool.take::<<T as Stored>::W>();
        let locks = locks.then_some(mem);
        by_op!(a.op, global_op::<T>(cells, plan, a, orders, locks, &mut out))?;
        Ok(<T as Stored>::W::wrap(out))
    })
}

/// [`global`] for one element type and operation.
fn global_op<T: Stored, const OP: usize>(
    cells: &[<T::W as CellWord>::C],
    plan: Plan<'_>,
    a: &Rmw<'_>,
    (o, fail): (Ordering, Ordering),
    locks: Option<GlobalMem<'_>>,
    out: &mut Vec<T::W>,
) -> Result<(), String> {
    let (v, c) = (src::<T::W>(a.values)?, src::<T::W>(a.compare)?);
    let int = <T as Elem>::DTYPE.is_int();
    rmw_each(plan, a.n, a.want, dead(a.inactive, c), out, |i, e| {
        let _held = locks.and_then(|m| m.chunk_lock(i));
        let (cell, v, c) = (&cells[i], v.at(e), c.at(e));
        match OPS[OP] {
            // Integer forms the host has: wrapping add of the operand (negated for sub, as
            // PTX has no atom.sub), exchange, compare-and-swap.
            RmwOp::Add if int => cell.add(v, o),
            RmwOp::Sub if int => cell.add(T::W::of(v.bits().wrapping_neg()), o),
            RmwOp::Exch => cell.swap(v, o),
            RmwOp::Cas => cell.cas(c, v, o, fail),
            _ => cell.update(o, fail, |old| new_value::<T, OP>(old, v, c, true)),
        }
    });
    Ok(())
}

/// The read-modify-writes of `plan` on a shared window whose address 0 is word `base`.
/// Returns the old values.
pub(crate) fn shared(
    window: &mut [u8],
    base: usize,
    plan: Plan<'_>,
    a: &Rmw<'_>,
    pool: &mut Pool,
) -> Result<Buf, String> {
    with_elem_type!(a.d, T => {
        let mut out = pool.take::<<T as Stored>::W>();
        by_op!(a.op, shared_op::<T>(window, base, plan, a, &mut out))?;
        Ok(<T as Stored>::W::wrap(out))
    })
}

/// [`shared`] for one element type and operation.
fn shared_op<T: Stored, const OP: usize>(
    window: &mut [u8],
    base: usize,
    plan: Plan<'_>,
    a: &Rmw<'_>,
    out: &mut Vec<T::W>,
) -> Result<(), String> {
    let (v, c) = (src::<T::W>(a.values)?, src::<T::W>(a.compare)?);
    if let (Plan::Addrs(addrs), Src::One(v), Src::One(c), false) = (plan, v, c, a.want) {
        // The common scatter of one value (a histogram's `+= 1`), in its own loop.
        for &p in addrs {
            if p != INACTIVE {
                let at = base + p as usize;
                let old = read_word(window, at);
                write_word(window, at, new_value::<T, OP>(old, v, c, false));
            }
        }
        return Ok(());
    }
    rmw_each(plan, a.n, a.want, dead(a.inactive, c), out, |i, e| {
        let at = base + i;
        let old = read_word(window, at);
        write_word(window, at, new_value::<T, OP>(old, v.at(e), c.at(e), false));
        old
    });
    Ok(())
}
