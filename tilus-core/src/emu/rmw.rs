//! Read-modify-writes (not the 128-bit pairs): one loop per element width, with the
//! operations the host has an instruction for (integer add, exchange, compare-and-swap) and
//! the integer add of shared memory (a histogram's) as their own cases, everything else
//! through [`crate::elem::rmw_new`] element by element. (One loop per type and operation
//! would compile to several hundred loops, for operations that cost a compare-and-swap loop
//! anyway.)
//!
//! Global memory is shared with other host threads: the host's atomic instructions where it
//! has them, a compare-and-swap loop otherwise. Shared memory belongs to the block's own
//! thread: plain reads and writes.

use super::access::{Plan, INACTIVE};
use super::buf::{with_word, Buf, Pool, Word};
use super::global::{Cell, CellWord, GlobalMem};
use super::transfer::{read_word, rmw_each, write_word};
use super::value::{Elems, Src};
use crate::elem::rmw_new;
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
    with_word!(a.d.size_bytes(), W => {
        let cells = W::cells(mem)
            .ok_or_else(|| "an atomic on a tensor of another element width".to_string())?;
        let mut out = pool.take::<W>();
        global_words(cells, plan, a, orders, locks.then_some(mem), &mut out)?;
        Ok(W::wrap(out))
    })
}

fn global_words<W: CellWord>(
    cells: &[W::C],
    plan: Plan<'_>,
    a: &Rmw<'_>,
    (o, fail): (Ordering, Ordering),
    locks: Option<GlobalMem<'_>>,
    out: &mut Vec<W>,
) -> Result<(), String> {
    let (v, c) = (src::<W>(a.values)?, src::<W>(a.compare)?);
    let (op, d, int) = (a.op, a.d, a.d.is_int());
    // (The closures own copies of what they use: a loop reading them through references
    // would load them for every element.)
    let update = move |cell: &W::C, e: usize| match op {
        // Wrapping add of the operand (negated for sub, as PTX has no atom.sub).
        RmwOp::Add if int => cell.add(v.at(e), o),
        RmwOp::Sub if int => cell.add(W::of(v.at(e).bits().wrapping_neg()), o),
        RmwOp::Exch => cell.swap(v.at(e), o),
        RmwOp::Cas => cell.cas(c.at(e), v.at(e), o, fail),
        _ => cell.update(o, fail, |old| {
            W::of(rmw_new(
                op,
                d,
                old.bits(),
                v.at(e).bits(),
                c.at(e).bits(),
                true,
            ))
        }),
    };
    let dead = dead(a.inactive, c);
    match locks {
        None => rmw_each(plan, a.n, a.want, dead, out, move |i, e| {
            update(&cells[i], e)
        }),
        Some(m) => rmw_each(plan, a.n, a.want, dead, out, move |i, e| {
            let _held = m.chunk_lock(i);
            update(&cells[i], e)
        }),
    }
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
    with_word!(a.d.size_bytes(), W => {
        let mut out = pool.take::<W>();
        let (v, c) = (src::<W>(a.values)?, src::<W>(a.compare)?);
        let (op, d) = (a.op, a.d);
        if op == RmwOp::Add && d.is_int() {
            // Wrapping add at the element's width.
            let add = |old: W, v: W, _: W| W::of(old.bits().wrapping_add(v.bits()));
            shared_words(window, base, plan, a, (v, c), add, &mut out);
        } else {
            let new = move |old: W, v: W, c: W| {
                W::of(rmw_new(op, d, old.bits(), v.bits(), c.bits(), false))
            };
            shared_words(window, base, plan, a, (v, c), new, &mut out);
        }
        Ok(W::wrap(out))
    })
}

/// [`shared`] with `new(old, value, compare)` computing each element's new value.
#[inline(always)]
fn shared_words<W: Word>(
    window: &mut [u8],
    base: usize,
    plan: Plan<'_>,
    a: &Rmw<'_>,
    (v, c): (Src<'_, W>, Src<'_, W>),
    new: impl Fn(W, W, W) -> W + Copy,
    out: &mut Vec<W>,
) {
    if let (Plan::Addrs(addrs), Src::One(v), Src::One(c), false) = (plan, v, c, a.want) {
        // The common scatter of one value (a histogram's `+= 1`), in its own loop.
        for &p in addrs {
            if p != INACTIVE {
                let at = base + p as usize;
                let old = read_word(window, at);
                write_word(window, at, new(old, v, c));
            }
        }
        return;
    }
    rmw_each(plan, a.n, a.want, dead(a.inactive, c), out, move |i, e| {
        let at = base + i;
        let old = read_word(window, at);
        write_word(window, at, new(old, v.at(e), c.at(e)));
        old
    });
}
