//! The element loops of loads and stores, typed by element width: over the cells of a global
//! tensor or the bytes of a shared window, for a resolved [`Plan`] (runs of consecutive
//! addresses are copied as spans).
//!
//! Addresses come from [`super::access::resolve`], which checked them against the tensor: an
//! index out of range here is an emulator bug (a panic, reported as an internal error).

use super::access::{Plan, INACTIVE};
use super::buf::Word;
use super::global::{Cell, CellWord, GlobalMem};
use super::value::Src;
use std::sync::atomic::Ordering;

/// Word `i` (of `W::WIDTH` bytes) of a shared window.
#[inline(always)]
pub(crate) fn read_word<W: Word>(window: &[u8], i: usize) -> W {
    W::read_le(&window[i * W::WIDTH..(i + 1) * W::WIDTH])
}

#[inline(always)]
pub(crate) fn write_word<W: Word>(window: &mut [u8], i: usize, v: W) {
    v.write_le(&mut window[i * W::WIDTH..(i + 1) * W::WIDTH]);
}

/// The `n` elements of a load into `out`: `append(addr, len, out)` appends the words at `len`
/// consecutive addresses, `one(addr)` reads one; inactive elements are `other`'s.
#[inline(always)]
fn gather<W: Word>(
    plan: Plan<'_>,
    n: usize,
    other: Src<'_, W>,
    out: &mut Vec<W>,
    append: impl Fn(usize, usize, &mut Vec<W>),
    one: impl Fn(usize) -> W,
) {
    out.clear();
    match plan {
        Plan::Runs(runs) => {
            let mut at = 0;
            for r in runs {
                out.extend((at..r.e).map(|e| other.at(e)));
                append(r.addr as usize, r.len, out);
                at = r.e + r.len;
            }
            out.extend((at..n).map(|e| other.at(e)));
        }
        Plan::Addrs(addrs) => out.extend(addrs.iter().enumerate().map(|(e, &p)| {
            if p == INACTIVE {
                other.at(e)
            } else {
                one(p as usize)
            }
        })),
    }
}

/// The memory orders, indexed by the constant parameter of the loops below: a loop over a
/// runtime order would test it for every element.
pub(crate) const ORDERS: [Ordering; 5] = [
    Ordering::Relaxed,
    Ordering::Acquire,
    Ordering::Release,
    Ordering::AcqRel,
    Ordering::SeqCst,
];

/// The index of `o` in [`ORDERS`].
pub(crate) fn order_index(o: Ordering) -> usize {
    ORDERS.iter().position(|&x| x == o).unwrap_or(4)
}

/// Calls `$f::<W, I>($args)` with `I` the index of the order `$o` in [`ORDERS`].
macro_rules! by_order {
    ($o:expr, $f:ident::<$W:ty>($($args:expr),*)) => {
        match order_index($o) {
            0 => $f::<$W, 0>($($args),*),
            1 => $f::<$W, 1>($($args),*),
            2 => $f::<$W, 2>($($args),*),
            3 => $f::<$W, 3>($($args),*),
            _ => $f::<$W, 4>($($args),*),
        }
    };
}

/// Load the `n` elements of `plan` from global `cells` with order `o`.
pub(crate) fn gather_global<W: CellWord>(
    cells: &[W::C],
    plan: Plan<'_>,
    n: usize,
    other: Src<'_, W>,
    o: Ordering,
    out: &mut Vec<W>,
) {
    by_order!(o, gather_global_as::<W>(cells, plan, n, other, out))
}

fn gather_global_as<W: CellWord, const O: usize>(
    cells: &[W::C],
    plan: Plan<'_>,
    n: usize,
    other: Src<'_, W>,
    out: &mut Vec<W>,
) {
    gather(
        plan,
        n,
        other,
        out,
        |a, len, out| out.extend(cells[a..a + len].iter().map(|c| c.get(ORDERS[O]))),
        |a| cells[a].get(ORDERS[O]),
    );
}

/// Load the `n` elements of `plan` from a shared window whose address 0 is word `base`.
pub(crate) fn gather_shared<W: Word>(
    window: &[u8],
    base: usize,
    plan: Plan<'_>,
    n: usize,
    other: Src<'_, W>,
    out: &mut Vec<W>,
) {
    let bytes = |a: usize, len: usize| &window[(base + a) * W::WIDTH..(base + a + len) * W::WIDTH];
    gather(
        plan,
        n,
        other,
        out,
        |a, len, out| out.extend(bytes(a, len).chunks_exact(W::WIDTH).map(W::read_le)),
        |a| read_word(window, base + a),
    );
}

/// Call `put(addr, e)` for every active element of `plan`, in element order.
#[inline(always)]
fn each_active(plan: Plan<'_>, mut put: impl FnMut(usize, usize)) {
    match plan {
        Plan::Runs(runs) => {
            for r in runs {
                for i in 0..r.len {
                    put(r.addr as usize + i, r.e + i);
                }
            }
        }
        Plan::Addrs(addrs) => {
            for (e, &p) in addrs.iter().enumerate() {
                if p != INACTIVE {
                    put(p as usize, e);
                }
            }
        }
    }
}

/// Store `v` at the active elements of `plan` in global `cells` with order `o`, in element
/// order (the last of several elements with one address wins). `locks`: take each 64-bit
/// element's chunk lock (the kernel has 128-bit atomics, [`GlobalMem::chunk_lock`]).
pub(crate) fn scatter_global<W: CellWord>(
    cells: &[W::C],
    plan: Plan<'_>,
    v: Src<'_, W>,
    o: Ordering,
    locks: Option<GlobalMem<'_>>,
) {
    by_order!(o, scatter_global_as::<W>(cells, plan, v, locks))
}

fn scatter_global_as<W: CellWord, const O: usize>(
    cells: &[W::C],
    plan: Plan<'_>,
    v: Src<'_, W>,
    locks: Option<GlobalMem<'_>>,
) {
    if let (Plan::Runs(runs), None) = (plan, locks) {
        for r in runs {
            let span = &cells[r.addr as usize..r.addr as usize + r.len];
            match v {
                Src::Each(v) => span
                    .iter()
                    .zip(&v[r.e..r.e + r.len])
                    .for_each(|(c, &x)| c.set(x, ORDERS[O])),
                Src::One(x) => span.iter().for_each(|c| c.set(x, ORDERS[O])),
            }
        }
        return;
    }
    each_active(plan, |a, e| {
        let _held = locks.and_then(|m| m.chunk_lock(a));
        cells[a].set(v.at(e), ORDERS[O]);
    });
}

/// Store `v` at the active elements of `plan` in a shared window whose address 0 is word
/// `base`, in element order.
pub(crate) fn scatter_shared<W: Word>(
    window: &mut [u8],
    base: usize,
    plan: Plan<'_>,
    v: Src<'_, W>,
) {
    if let Plan::Runs(runs) = plan {
        for r in runs {
            let (from, to) = (
                (base + r.addr as usize) * W::WIDTH,
                (base + r.addr as usize + r.len) * W::WIDTH,
            );
            let bytes = window[from..to].chunks_exact_mut(W::WIDTH);
            match v {
                Src::Each(v) => bytes
                    .zip(&v[r.e..r.e + r.len])
                    .for_each(|(b, x)| x.write_le(b)),
                Src::One(x) => bytes.for_each(|b| x.write_le(b)),
            }
        }
        return;
    }
    each_active(plan, |a, e| write_word(window, base + a, v.at(e)));
}

/// A read-modify-write of every element of `plan` (`n` elements) in element order:
/// `update(addr, e)` performs element `e` at `addr` and returns the old value; inactive
/// elements give `dead(e)`. The old values go to `out` when `want`.
#[inline(always)]
pub(crate) fn rmw_each<W: Word>(
    plan: Plan<'_>,
    n: usize,
    want: bool,
    dead: impl Fn(usize) -> W,
    out: &mut Vec<W>,
    mut update: impl FnMut(usize, usize) -> W,
) {
    out.clear();
    if !want {
        each_active(plan, |a, e| {
            update(a, e);
        });
        return;
    }
    match plan {
        Plan::Runs(runs) => {
            let mut at = 0;
            for r in runs {
                out.extend((at..r.e).map(&dead));
                out.extend((0..r.len).map(|i| update(r.addr as usize + i, r.e + i)));
                at = r.e + r.len;
            }
            out.extend((at..n).map(&dead));
        }
        Plan::Addrs(addrs) => out.extend(addrs.iter().enumerate().map(|(e, &p)| {
            if p == INACTIVE {
                dead(e)
            } else {
                update(p as usize, e)
            }
        })),
    }
}
