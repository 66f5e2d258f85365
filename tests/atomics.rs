//! The tilus atomic instruction group on every backend (`common::backends()`: the strict
//! emulator, plus the GPU when built with `--features cuda`), on random data with heavy
//! duplicates and contention, against CPU references:
//!
//! * element-wise `atomic::{shared,global}_{add,sub,min,max,exch,cas}`: final memory exact; the
//!   pre-RMW outputs must be explainable by *some* serial order of the RMWs on each element
//!   (`check_serial`), inactive (masked / out-of-bounds) lanes give 0;
//! * scatter `atomic::{shared,global}_scatter_{add,sub,min,max}` (1-D, and 2-D on `dim = 0` and
//!   `dim = 1`): out-of-range indices skipped, masks honoured, outputs serialisable;
//! * counters under full contention, `[1]` tiles from a 256-thread block (one RMW, not 256),
//!   tickets from `.item()` of an output, views as destinations;
//! * non-atomic `store_{shared,global}_scatter`: correct for permutations, and the strict
//!   emulator reports duplicate indices as an error.
//!
//! Every kernel's PTX is also assembled with ptxas (`common::assemble_all`).

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod common;

use common::{backends, Rng};
use std::collections::HashMap;
use tilus::prelude::*;

/// Defines `gew_{op}` kernels that differ only in the atomic op (kernels have no generics).
macro_rules! global_kernel_elementwise {
    ($name:ident, $op:ident) => {
        #[doc = concat!("Element-wise global `", stringify!($op), "`: every block hits the same 256-wide window of `dst` (shorter than the tile, so the tail is out of bounds), storing the pre-RMW values.")]
        #[tile_kernel(threads = 128)]
        fn $name(
            cmp: GlobalTensor<i32>,
            vals: GlobalTensor<i32>,
            dst: GlobalTensor<i32>,
            olds: GlobalTensor<i32>,
        ) {
            let o = block_idx() * 256;
            let c = load_global(cmp, offsets = [o], shape = [256]);
            let v = load_global(vals, offsets = [o], shape = [256]);
            let old = atomic::$op(dst, v, offsets = [0]);
            store_global(olds, old, offsets = [o]);
        }
    };
}

global_kernel_elementwise!(gew_add, global_add);
global_kernel_elementwise!(gew_sub, global_sub);
global_kernel_elementwise!(gew_min, global_min);
global_kernel_elementwise!(gew_max, global_max);

/// Element-wise global `exch`: every block hits the same 256-wide window of `dst` (shorter than
/// the tile, so the tail is out of bounds), storing the pre-RMW values.
#[tile_kernel(threads = 128)]
fn gew_exch(
    cmp: GlobalTensor<i32>,
    vals: GlobalTensor<i32>,
    dst: GlobalTensor<i32>,
    olds: GlobalTensor<i32>,
) {
    let o = block_idx() * 256;
    let c = load_global(cmp, offsets = [o], shape = [256]);
    let v = load_global(vals, offsets = [o], shape = [256]);
    let old = atomic::global_exch(dst, v, offsets = [0]);
    store_global(olds, old, offsets = [o]);
}

/// Element-wise global `cas`: every block hits the same 256-wide window of `dst` (shorter than
/// the tile, so the tail is out of bounds), storing the pre-RMW values.
#[tile_kernel(threads = 128)]
fn gew_cas(
    cmp: GlobalTensor<i32>,
    vals: GlobalTensor<i32>,
    dst: GlobalTensor<i32>,
    olds: GlobalTensor<i32>,
) {
    let o = block_idx() * 256;
    let c = load_global(cmp, offsets = [o], shape = [256]);
    let v = load_global(vals, offsets = [o], shape = [256]);
    let old = atomic::global_cas(dst, compare = c, values = v, offsets = [0]);
    store_global(olds, old, offsets = [o]);
}

/// Defines `sew_{op}` kernels that differ only in the atomic op (kernels have no generics).
macro_rules! shared_kernel_elementwise {
    ($name:ident, $op:ident) => {
        #[doc = concat!("Element-wise shared `", stringify!($op), "`: `ROUNDS` masked rounds per block on a shared copy of the block's slice of `dst`, pre-RMW values to `olds`, the final shared tile back to `dst`.")]
        #[tile_kernel(threads = 128)]
        fn $name(
            cmp: GlobalTensor<i32>,
            vals: GlobalTensor<i32>,
            dst: GlobalTensor<i32>,
            olds: GlobalTensor<i32>,
        ) {
            let s = shared_tensor(i32, [256]);
            let b = block_idx();
            store_shared(s, load_global(dst, offsets = [b * 256], shape = [256]));
            sync();
            for r in 0..4 {
                let o = (b * 4 + r) * 256;
                let c = load_global(cmp, offsets = [o], shape = [256]);
                let v = load_global(vals, offsets = [o], shape = [256]);
                let m = (arange(256) + r) % 5 != 0;
                let old = atomic::$op(s, v, mask = m);
                store_global(olds, old, offsets = [o]);
                sync();
            }
            store_global(dst, load_shared(s), offsets = [b * 256]);
        }
    };
}

shared_kernel_elementwise!(sew_add, shared_add);
shared_kernel_elementwise!(sew_sub, shared_sub);
shared_kernel_elementwise!(sew_min, shared_min);
shared_kernel_elementwise!(sew_max, shared_max);

/// Element-wise shared `exch`: `ROUNDS` masked rounds per block on a shared copy of the block's
/// slice of `dst`, pre-RMW values to `olds`, the final shared tile back to `dst`.
#[tile_kernel(threads = 128)]
fn sew_exch(
    cmp: GlobalTensor<i32>,
    vals: GlobalTensor<i32>,
    dst: GlobalTensor<i32>,
    olds: GlobalTensor<i32>,
) {
    let s = shared_tensor(i32, [256]);
    let b = block_idx();
    store_shared(s, load_global(dst, offsets = [b * 256], shape = [256]));
    sync();
    for r in 0..4 {
        let o = (b * 4 + r) * 256;
        let c = load_global(cmp, offsets = [o], shape = [256]);
        let v = load_global(vals, offsets = [o], shape = [256]);
        let m = (arange(256) + r) % 5 != 0;
        let old = atomic::shared_exch(s, v, mask = m);
        store_global(olds, old, offsets = [o]);
        sync();
    }
    store_global(dst, load_shared(s), offsets = [b * 256]);
}

/// Element-wise shared `cas`: `ROUNDS` masked rounds per block on a shared copy of the block's
/// slice of `dst`, pre-RMW values to `olds`, the final shared tile back to `dst`.
#[tile_kernel(threads = 128)]
fn sew_cas(
    cmp: GlobalTensor<i32>,
    vals: GlobalTensor<i32>,
    dst: GlobalTensor<i32>,
    olds: GlobalTensor<i32>,
) {
    let s = shared_tensor(i32, [256]);
    let b = block_idx();
    store_shared(s, load_global(dst, offsets = [b * 256], shape = [256]));
    sync();
    for r in 0..4 {
        let o = (b * 4 + r) * 256;
        let c = load_global(cmp, offsets = [o], shape = [256]);
        let v = load_global(vals, offsets = [o], shape = [256]);
        let m = (arange(256) + r) % 5 != 0;
        let old = atomic::shared_cas(s, compare = c, values = v, mask = m);
        store_global(olds, old, offsets = [o]);
        sync();
    }
    store_global(dst, load_shared(s), offsets = [b * 256]);
}

/// Defines `ssc_{op}` kernels that differ only in the atomic op (kernels have no generics).
macro_rules! shared_kernel_scatter {
    ($name:ident, $op:ident) => {
        #[doc = concat!("Shared 1-D scatter `", stringify!($op), "` into 61 bins, 3 rounds per block; indices include out-of-range ones and the tail past `n` (read as -1); lanes whose value is a multiple of 3 are masked off.")]
        #[tile_kernel(threads = 128)]
        fn $name(
            idx: GlobalTensor<i32>,
            vals: GlobalTensor<i32>,
            out: GlobalTensor<i32>,
            olds: GlobalTensor<i32>,
        ) {
            let s = shared_tensor(i32, [61]);
            let b = block_idx();
            store_shared(s, load_global(out, offsets = [b * 61], shape = [61]));
            sync();
            for r in 0..3 {
                let o = (b * 3 + r) * 256;
                let i = load_global(idx, offsets = [o], shape = [256], other = -1);
                let v = load_global(vals, offsets = [o], shape = [256], other = 1);
                let old = atomic::$op(s, dim = 0, indices = i, values = v, mask = v % 3 != 0);
                store_global(olds, old, offsets = [o]);
            }
            sync();
            store_global(out, load_shared(s), offsets = [b * 61]);
        }
    };
}

shared_kernel_scatter!(ssc_add, shared_scatter_add);
shared_kernel_scatter!(ssc_sub, shared_scatter_sub);
shared_kernel_scatter!(ssc_min, shared_scatter_min);
shared_kernel_scatter!(ssc_max, shared_scatter_max);

/// Defines `gsc_{op}` kernels that differ only in the atomic op (kernels have no generics).
macro_rules! global_kernel_scatter {
    ($name:ident, $op:ident) => {
        #[doc = concat!("Global 1-D scatter `", stringify!($op), "` into one 37-bin array shared by all blocks (full contention).")]
        #[tile_kernel(threads = 128)]
        fn $name(
            idx: GlobalTensor<i32>,
            vals: GlobalTensor<i32>,
            out: GlobalTensor<i32>,
            olds: GlobalTensor<i32>,
        ) {
            let o = block_idx() * 256;
            let i = load_global(idx, offsets = [o], shape = [256], other = -1);
            let v = load_global(vals, offsets = [o], shape = [256], other = 1);
            let old = atomic::$op(out, dim = 0, indices = i, values = v, mask = v % 3 != 0);
            store_global(olds, old, offsets = [o]);
        }
    };
}

global_kernel_scatter!(gsc_add, global_scatter_add);
global_kernel_scatter!(gsc_sub, global_scatter_sub);
global_kernel_scatter!(gsc_min, global_scatter_min);
global_kernel_scatter!(gsc_max, global_scatter_max);

/// Global 2-D scatter add along `dim = 0` into a `[9, 16]` view of `out` (longer than the view).
#[tile_kernel(threads = 128)]
fn g2d_add_dim0(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let o = block_idx() * 512;
    let i = load_global(
        idx.view(o, [32, 16]),
        offsets = [0, 0],
        shape = [32, 16],
        other = -1,
    );
    let v = load_global(vals.view(o, [32, 16]), offsets = [0, 0], shape = [32, 16]);
    atomic::global_scatter_add(
        out.view(0, [9, 16]),
        dim = 0,
        indices = i,
        values = v,
        mask = v != 5,
    );
}

/// Global 2-D scatter add along `dim = 1` into a `[16, 11]` view of `out`.
#[tile_kernel(threads = 128)]
fn g2d_add_dim1(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let o = block_idx() * 512;
    let i = load_global(
        idx.view(o, [16, 32]),
        offsets = [0, 0],
        shape = [16, 32],
        other = -1,
    );
    let v = load_global(vals.view(o, [16, 32]), offsets = [0, 0], shape = [16, 32]);
    atomic::global_scatter_add(
        out.view(0, [16, 11]),
        dim = 1,
        indices = i,
        values = v,
        mask = v != 5,
    );
}

/// Shared 2-D scatter max along `dim = 0` (`[7, 16]` bins per block).
#[tile_kernel(threads = 128)]
fn s2d_max_dim0(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [7, 16]);
    store_shared(s, full([7, 16], -1000));
    sync();
    let o = block_idx() * 512;
    let i = load_global(
        idx.view(o, [32, 16]),
        offsets = [0, 0],
        shape = [32, 16],
        other = -1,
    );
    let v = load_global(vals.view(o, [32, 16]), offsets = [0, 0], shape = [32, 16]);
    atomic::shared_scatter_max(s, dim = 0, indices = i, values = v);
    sync();
    store_global(
        out.view(block_idx() * 112, [7, 16]),
        load_shared(s),
        offsets = [0, 0],
    );
}

/// Shared 2-D scatter min along `dim = 1` (`[16, 5]` bins per block).
#[tile_kernel(threads = 128)]
fn s2d_min_dim1(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [16, 5]);
    store_shared(s, full([16, 5], 1000));
    sync();
    let o = block_idx() * 512;
    let i = load_global(
        idx.view(o, [16, 32]),
        offsets = [0, 0],
        shape = [16, 32],
        other = -1,
    );
    let v = load_global(vals.view(o, [16, 32]), offsets = [0, 0], shape = [16, 32]);
    atomic::shared_scatter_min(s, dim = 1, indices = i, values = v);
    sync();
    store_global(
        out.view(block_idx() * 80, [16, 5]),
        load_shared(s),
        offsets = [0, 0],
    );
}

/// `[1]` tiles from a 256-thread block: each call is one RMW, not one per thread.
#[tile_kernel(threads = 256)]
fn one_cell(counter: GlobalTensor<i32>, reps: i32) {
    let s = shared_tensor(i32, [1]);
    store_shared(s, zeros([1]));
    sync();
    for _r in 0..reps {
        atomic::global_add(counter, ones([1]));
        atomic::shared_add(s, ones([1]));
        atomic::global_sub(counter.view(2, [1]), full([1], 3));
    }
    sync();
    atomic::global_add(counter.view(1, [1]), load_shared(s));
}

/// Full contention: every lane of every block hits one of four cells.
#[tile_kernel(threads = 256)]
fn hot_counter(counter: GlobalTensor<i32>, reps: i32) {
    for _r in 0..reps {
        atomic::global_scatter_add(counter, dim = 0, indices = zeros([512]), values = 1);
        atomic::global_scatter_sub(counter, dim = 0, indices = ones([512]), values = 2);
        atomic::global_scatter_max(
            counter,
            dim = 0,
            indices = full([512], 2),
            values = arange(512) + block_idx() * 512,
        );
        atomic::global_scatter_min(
            counter,
            dim = 0,
            indices = full([512], 3),
            values = 0 - arange(512) - block_idx(),
        );
    }
}

/// Ticket numbers from the output of a `[1]` add.
#[tile_kernel(threads = 256)]
fn take_tickets_i32(counter: GlobalTensor<i32>, out: GlobalTensor<i32>, reps: i32) {
    for r in 0..reps {
        let t = atomic::global_add(counter, ones([1])).item();
        store_global(out, full([1], t), offsets = [block_idx() * reps + r]);
    }
}

/// Views as destinations of element-wise atomics (2-D windows, offsets, tails past the view).
#[tile_kernel(threads = 128)]
fn view_dst(vals: GlobalTensor<i32>, dst: GlobalTensor<i32>, olds: GlobalTensor<i32>) {
    let v = load_global(vals, offsets = [block_idx() * 32], shape = [32]).reshape([4, 8]);
    atomic::global_max(dst.view(3, [5, 7]), v, offsets = [1, 2]);
    let old = atomic::global_add(dst.view(40, [6, 6]), ones([4, 8]), offsets = [2, 1]);
    store_global(olds.view(block_idx() * 32, [4, 8]), old, offsets = [0, 0]);
}

/// Non-atomic global scatter store into each block's 256-element window.
#[tile_kernel(threads = 128)]
fn scatter_store_global(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let o = block_idx() * 256;
    let i = load_global(idx, offsets = [o], shape = [256], other = -1);
    let v = load_global(vals, offsets = [o], shape = [256]);
    store_global_scatter(
        out.view(o, [256]),
        dim = 0,
        indices = i,
        values = v,
        mask = v >= 0,
    );
}

/// Non-atomic shared scatter store, then the shared tile to `out`.
#[tile_kernel(threads = 128)]
fn scatter_store_shared(idx: GlobalTensor<i32>, vals: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [256]);
    store_shared(s, full([256], -7));
    sync();
    let o = block_idx() * 256;
    let i = load_global(idx, offsets = [o], shape = [256], other = -1);
    let v = load_global(vals, offsets = [o], shape = [256]);
    store_shared_scatter(s, dim = 0, indices = i, values = v, mask = v >= 0);
    sync();
    store_global(out, load_shared(s), offsets = [o]);
}

// ---------------------------------------------------------------------------------------------
// Host side.

type T = GlobalTensor<i32>;
type Launch4 = fn(&Device, u32, &T, &T, &T, &T) -> Result<(), tilus::Error>;
type Launch3 = fn(&Device, u32, &T, &T, &T) -> Result<(), tilus::Error>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Min,
    Max,
    Exch,
    Cas,
}

impl Op {
    /// The new value of a cell holding `cur` after the RMW (`c` = compare, `v` = value).
    fn apply(self, cur: i32, c: i32, v: i32) -> i32 {
        match self {
            Op::Add => cur.wrapping_add(v),
            Op::Sub => cur.wrapping_sub(v),
            Op::Min => cur.min(v),
            Op::Max => cur.max(v),
            Op::Exch => v,
            Op::Cas => {
                if cur == c {
                    v
                } else {
                    cur
                }
            }
        }
    }
}

/// Whether the RMWs `ops` = (compare, value, pre-RMW output) on one cell, starting from `init`
/// and ending at `fin`, can be put in a serial order that explains every output. Exact for the
/// data the tests generate: add/sub with positive values (outputs strictly monotone), min/max
/// (greedy), exch with distinct values (a chain), cas with `value = compare + 1` (monotone).
fn check_serial(op: Op, init: i32, ops: &[(i32, i32, i32)], fin: i32) -> Result<(), String> {
    let err = |m: &str| {
        Err(format!(
            "{op:?}: {m}; init {init}, final {fin}, ops (cmp, val, old) {ops:?}"
        ))
    };
    let mut cur = init;
    match op {
        Op::Add | Op::Sub => {
            let mut v = ops.to_vec();
            assert!(v.iter().all(|o| o.1 > 0), "the test needs positive values");
            v.sort_by_key(|o| if op == Op::Add { o.2 } else { -o.2 });
            for &(c, val, old) in &v {
                if old != cur {
                    return err(&format!(
                        "no serial order: expected an output {cur}, found {old}"
                    ));
                }
                cur = op.apply(cur, c, val);
            }
        }
        Op::Min | Op::Max | Op::Exch | Op::Cas => {
            let mut rem = ops.to_vec();
            loop {
                // RMWs that leave the cell as it is can run at any time it holds `cur`.
                rem.retain(|&(c, v, old)| !(old == cur && op.apply(cur, c, v) == cur));
                let movers: Vec<usize> = (0..rem.len()).filter(|&i| rem[i].2 == cur).collect();
                match movers.len() {
                    0 => break,
                    1 => {
                        let (c, v, _) = rem.remove(movers[0]);
                        cur = op.apply(cur, c, v);
                    }
                    _ => {
                        return err(&format!(
                            "{} RMWs changed the cell from {cur}",
                            movers.len()
                        ))
                    }
                }
            }
            if !rem.is_empty() {
                return err(&format!(
                    "outputs not explained by any serial order: {rem:?}"
                ));
            }
        }
    }
    if cur != fin {
        return err(&format!("the serial order ends at {cur}"));
    }
    Ok(())
}

/// Group lanes by cell and run [`check_serial`] on each.
fn check_cells(
    op: Op,
    init: &[i32],
    fin: &[i32],
    lanes: impl IntoIterator<Item = (usize, (i32, i32, i32))>,
) {
    let mut by_cell: HashMap<usize, Vec<(i32, i32, i32)>> = HashMap::new();
    for (cell, l) in lanes {
        by_cell.entry(cell).or_default().push(l);
    }
    for (cell, ops) in by_cell {
        if let Err(e) = check_serial(op, init[cell], &ops, fin[cell]) {
            panic!("cell {cell}: {e}");
        }
    }
}

/// Random operands for `op` with many repeats: (initial cell values, compares, values).
fn operands(rng: &mut Rng, op: Op, cells: usize, lanes: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    match op {
        Op::Add | Op::Sub => (
            rng.vec(cells, -100, 100),
            vec![0; lanes],
            rng.vec(lanes, 1, 20),
        ),
        Op::Min | Op::Max => (
            rng.vec(cells, -60, 60),
            vec![0; lanes],
            rng.vec(lanes, -50, 50),
        ),
        Op::Exch => {
            // Distinct values (a random order of lane numbers), distinct from the initial ones.
            let mut perm: Vec<i32> = (0..lanes as i32).collect();
            for i in (1..perm.len()).rev() {
                perm.swap(i, rng.range(0, i as i32 + 1) as usize);
            }
            (
                rng.vec(cells, -100, 0),
                vec![0; lanes],
                perm.iter().map(|p| 1000 + p).collect(),
            )
        }
        Op::Cas => {
            let c = rng.vec(lanes, 0, 4);
            let v = c.iter().map(|c| c + 1).collect();
            (rng.vec(cells, 0, 3), c, v)
        }
    }
}

fn gew_kernels() -> [(Op, Launch4, &'static str, &'static str, u32); 6] {
    [
        (
            Op::Add,
            gew_add::launch,
            gew_add::NAME,
            gew_add::PTX,
            gew_add::TARGET,
        ),
        (
            Op::Sub,
            gew_sub::launch,
            gew_sub::NAME,
            gew_sub::PTX,
            gew_sub::TARGET,
        ),
        (
            Op::Min,
            gew_min::launch,
            gew_min::NAME,
            gew_min::PTX,
            gew_min::TARGET,
        ),
        (
            Op::Max,
            gew_max::launch,
            gew_max::NAME,
            gew_max::PTX,
            gew_max::TARGET,
        ),
        (
            Op::Exch,
            gew_exch::launch,
            gew_exch::NAME,
            gew_exch::PTX,
            gew_exch::TARGET,
        ),
        (
            Op::Cas,
            gew_cas::launch,
            gew_cas::NAME,
            gew_cas::PTX,
            gew_cas::TARGET,
        ),
    ]
}

fn sew_kernels() -> [(Op, Launch4, &'static str, &'static str, u32); 6] {
    [
        (
            Op::Add,
            sew_add::launch,
            sew_add::NAME,
            sew_add::PTX,
            sew_add::TARGET,
        ),
        (
            Op::Sub,
            sew_sub::launch,
            sew_sub::NAME,
            sew_sub::PTX,
            sew_sub::TARGET,
        ),
        (
            Op::Min,
            sew_min::launch,
            sew_min::NAME,
            sew_min::PTX,
            sew_min::TARGET,
        ),
        (
            Op::Max,
            sew_max::launch,
            sew_max::NAME,
            sew_max::PTX,
            sew_max::TARGET,
        ),
        (
            Op::Exch,
            sew_exch::launch,
            sew_exch::NAME,
            sew_exch::PTX,
            sew_exch::TARGET,
        ),
        (
            Op::Cas,
            sew_cas::launch,
            sew_cas::NAME,
            sew_cas::PTX,
            sew_cas::TARGET,
        ),
    ]
}

fn ssc_kernels() -> [(Op, Launch4, &'static str, &'static str, u32); 4] {
    [
        (
            Op::Add,
            ssc_add::launch,
            ssc_add::NAME,
            ssc_add::PTX,
            ssc_add::TARGET,
        ),
        (
            Op::Sub,
            ssc_sub::launch,
            ssc_sub::NAME,
            ssc_sub::PTX,
            ssc_sub::TARGET,
        ),
        (
            Op::Min,
            ssc_min::launch,
            ssc_min::NAME,
            ssc_min::PTX,
            ssc_min::TARGET,
        ),
        (
            Op::Max,
            ssc_max::launch,
            ssc_max::NAME,
            ssc_max::PTX,
            ssc_max::TARGET,
        ),
    ]
}

fn gsc_kernels() -> [(Op, Launch4, &'static str, &'static str, u32); 4] {
    [
        (
            Op::Add,
            gsc_add::launch,
            gsc_add::NAME,
            gsc_add::PTX,
            gsc_add::TARGET,
        ),
        (
            Op::Sub,
            gsc_sub::launch,
            gsc_sub::NAME,
            gsc_sub::PTX,
            gsc_sub::TARGET,
        ),
        (
            Op::Min,
            gsc_min::launch,
            gsc_min::NAME,
            gsc_min::PTX,
            gsc_min::TARGET,
        ),
        (
            Op::Max,
            gsc_max::launch,
            gsc_max::NAME,
            gsc_max::PTX,
            gsc_max::TARGET,
        ),
    ]
}

#[test]
fn every_kernel_assembles() {
    for (_, _, name, ptx, target) in gew_kernels()
        .into_iter()
        .chain(sew_kernels())
        .chain(ssc_kernels())
        .chain(gsc_kernels())
    {
        common::assemble_all(name, ptx, target);
    }
    for (name, ptx, target) in [
        (g2d_add_dim0::NAME, g2d_add_dim0::PTX, g2d_add_dim0::TARGET),
        (g2d_add_dim1::NAME, g2d_add_dim1::PTX, g2d_add_dim1::TARGET),
        (s2d_max_dim0::NAME, s2d_max_dim0::PTX, s2d_max_dim0::TARGET),
        (s2d_min_dim1::NAME, s2d_min_dim1::PTX, s2d_min_dim1::TARGET),
        (one_cell::NAME, one_cell::PTX, one_cell::TARGET),
        (hot_counter::NAME, hot_counter::PTX, hot_counter::TARGET),
        (
            take_tickets_i32::NAME,
            take_tickets_i32::PTX,
            take_tickets_i32::TARGET,
        ),
        (view_dst::NAME, view_dst::PTX, view_dst::TARGET),
        (
            scatter_store_global::NAME,
            scatter_store_global::PTX,
            scatter_store_global::TARGET,
        ),
        (
            scatter_store_shared::NAME,
            scatter_store_shared::PTX,
            scatter_store_shared::TARGET,
        ),
    ] {
        common::assemble_all(name, ptx, target);
    }
    // Unused outputs of add/sub/min/max lower to `red`; exch/cas and used outputs to `atom`.
    assert!(
        hot_counter::PTX.contains("red.relaxed.gpu.global.add")
            && !hot_counter::PTX.contains("atom.")
    );
    assert!(
        hot_counter::PTX.contains("red.relaxed.gpu.global.min")
            && hot_counter::PTX.contains("red.relaxed.gpu.global.max")
    );
    assert!(gew_exch::PTX.contains("atom.relaxed.gpu.global.exch.b32"));
    assert!(gew_cas::PTX.contains("atom.relaxed.gpu.global.cas.b32"));
    assert!(sew_min::PTX.contains("atom.relaxed.cta.shared.min.s32"));
    assert!(!gew_add::PTX.contains("red."));
}

/// Element-wise global atomics: 13 blocks on one 200-element window with a 256-wide tile.
#[test]
fn elementwise_global_all_ops() {
    const G: usize = 13;
    const CELLS: usize = 200;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        for (op, launch, name, _, _) in gew_kernels() {
            let lanes = G * 256;
            let (init, cmp, vals) = operands(&mut rng, op, CELLS, lanes);
            let (c, v, d, o) = (
                dev.upload(&cmp).unwrap(),
                dev.upload(&vals).unwrap(),
                dev.upload(&init).unwrap(),
                dev.zeros::<i32>(lanes).unwrap(),
            );
            launch(&dev, G as u32, &c, &v, &d, &o).unwrap();
            let fin = d.download().unwrap();
            let olds = o.download().unwrap();
            // Inactive (out-of-bounds) lanes give 0.
            for b in 0..G {
                for j in CELLS..256 {
                    assert_eq!(
                        olds[b * 256 + j],
                        0,
                        "{name} on {}: inactive lane output",
                        dev.name()
                    );
                }
            }
            // Order-independent results are exact.
            if matches!(op, Op::Add | Op::Sub | Op::Min | Op::Max) {
                let mut want = init.clone();
                for b in 0..G {
                    for j in 0..CELLS {
                        want[j] = op.apply(want[j], 0, vals[b * 256 + j]);
                    }
                }
                assert_eq!(fin, want, "{name} on {}", dev.name());
            }
            check_cells(
                op,
                &init,
                &fin,
                (0..G)
                    .flat_map(|b| (0..CELLS).map(move |j| (j, b * 256 + j)))
                    .map(|(j, l)| (j, (cmp[l], vals[l], olds[l]))),
            );
        }
    }
}

/// Element-wise shared atomics: masked rounds; results and outputs exact (program order).
#[test]
fn elementwise_shared_all_ops() {
    const B: usize = 5;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        for (op, launch, name, _, _) in sew_kernels() {
            let lanes = B * 4 * 256;
            let (init, cmp, vals) = operands(&mut rng, op, B * 256, lanes);
            let (c, v, d, o) = (
                dev.upload(&cmp).unwrap(),
                dev.upload(&vals).unwrap(),
                dev.upload(&init).unwrap(),
                dev.full(lanes, 77).unwrap(),
            );
            launch(&dev, B as u32, &c, &v, &d, &o).unwrap();
            let mut want = init.clone();
            let mut want_olds = vec![0; lanes];
            for b in 0..B {
                for r in 0..4 {
                    for j in 0..256 {
                        let l = (b * 4 + r) * 256 + j;
                        if (j + r) % 5 != 0 {
                            let cell = &mut want[b * 256 + j];
                            want_olds[l] = *cell;
                            *cell = op.apply(*cell, cmp[l], vals[l]);
                        }
                    }
                }
            }
            assert_eq!(
                o.download().unwrap(),
                want_olds,
                "{name} outputs on {}",
                dev.name()
            );
            assert_eq!(d.download().unwrap(), want, "{name} on {}", dev.name());
        }
    }
}

/// Random bins with heavy repeats, out-of-range ones, a masked third, a tail past `n`.
fn scatter_data(rng: &mut Rng, n: usize, bins: i32) -> (Vec<i32>, Vec<i32>) {
    let idx = (0..n)
        .map(|_| {
            if rng.range(0, 10) == 0 {
                rng.range(-3, 0).max(-3) + if rng.range(0, 2) == 0 { 0 } else { bins + 3 }
            } else {
                rng.range(0, bins)
            }
        })
        .collect();
    (idx, rng.vec(n, 1, 50))
}

fn active(i: i32, v: i32, bins: i32) -> bool {
    v % 3 != 0 && (0..bins).contains(&i)
}

/// Shared 1-D scatter: per-block bins exact, outputs serialisable per (block, bin).
#[test]
fn scatter_shared_1d_all_ops() {
    const B: usize = 6;
    const BINS: usize = 61;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        for (op, launch, name, _, _) in ssc_kernels() {
            let n = B * 3 * 256 - 100;
            let (idx, vals) = scatter_data(&mut rng, n, BINS as i32);
            let init = rng.vec(B * BINS, -50, 50);
            let (i, v, out, olds) = (
                dev.upload(&idx).unwrap(),
                dev.upload(&vals).unwrap(),
                dev.upload(&init).unwrap(),
                dev.full(n, 77).unwrap(),
            );
            launch(&dev, B as u32, &i, &v, &out, &olds).unwrap();
            let fin = out.download().unwrap();
            let olds = olds.download().unwrap();
            let mut want = init.clone();
            for l in 0..n {
                let b = l / (3 * 256);
                if active(idx[l], vals[l], BINS as i32) {
                    let cell = &mut want[b * BINS + idx[l] as usize];
                    *cell = op.apply(*cell, 0, vals[l]);
                } else {
                    assert_eq!(
                        olds[l],
                        0,
                        "{name} on {}: inactive lane {l} output",
                        dev.name()
                    );
                }
            }
            assert_eq!(fin, want, "{name} on {}", dev.name());
            check_cells(
                op,
                &init,
                &fin,
                (0..n)
                    .filter(|&l| active(idx[l], vals[l], BINS as i32))
                    .map(|l| (l / 768 * BINS + idx[l] as usize, (0, vals[l], olds[l]))),
            );
        }
    }
}

/// Global 1-D scatter: all blocks on one 37-bin array.
#[test]
fn scatter_global_1d_all_ops() {
    const G: usize = 16;
    const BINS: usize = 37;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        for (op, launch, name, _, _) in gsc_kernels() {
            let n = G * 256 - 77;
            let (idx, vals) = scatter_data(&mut rng, n, BINS as i32);
            let init = rng.vec(BINS, -50, 50);
            let (i, v, out, olds) = (
                dev.upload(&idx).unwrap(),
                dev.upload(&vals).unwrap(),
                dev.upload(&init).unwrap(),
                dev.full(n, 77).unwrap(),
            );
            launch(&dev, G as u32, &i, &v, &out, &olds).unwrap();
            let fin = out.download().unwrap();
            let olds = olds.download().unwrap();
            let mut want = init.clone();
            for l in 0..n {
                if active(idx[l], vals[l], BINS as i32) {
                    want[idx[l] as usize] = op.apply(want[idx[l] as usize], 0, vals[l]);
                } else {
                    assert_eq!(
                        olds[l],
                        0,
                        "{name} on {}: inactive lane {l} output",
                        dev.name()
                    );
                }
            }
            assert_eq!(fin, want, "{name} on {}", dev.name());
            check_cells(
                op,
                &init,
                &fin,
                (0..n)
                    .filter(|&l| active(idx[l], vals[l], BINS as i32))
                    .map(|l| (idx[l] as usize, (0, vals[l], olds[l]))),
            );
        }
    }
}

/// 2-D scatter on `dim = 0` and `dim = 1`, global (through views) and shared.
#[test]
fn scatter_2d_dim0_dim1() {
    const G: usize = 7;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        let n = G * 512 - 123;
        // (launch, tile [rows, cols], dim, bins along dim, out view [rows, cols], out len, per block, op, init)
        let cases: [(
            Launch3,
            &str,
            [usize; 2],
            usize,
            [usize; 2],
            usize,
            bool,
            Op,
            i32,
        ); 4] = [
            (
                g2d_add_dim0::launch,
                "g2d_add_dim0",
                [32, 16],
                0,
                [9, 16],
                150,
                false,
                Op::Add,
                0,
            ),
            (
                g2d_add_dim1::launch,
                "g2d_add_dim1",
                [16, 32],
                1,
                [16, 11],
                180,
                false,
                Op::Add,
                0,
            ),
            (
                s2d_max_dim0::launch,
                "s2d_max_dim0",
                [32, 16],
                0,
                [7, 16],
                112,
                true,
                Op::Max,
                -1000,
            ),
            (
                s2d_min_dim1::launch,
                "s2d_min_dim1",
                [16, 32],
                1,
                [16, 5],
                80,
                true,
                Op::Min,
                1000,
            ),
        ];
        for (launch, name, tile, dim, view, out_len, per_block, op, init) in cases {
            let bins = view[dim] as i32;
            let idx: Vec<i32> = (0..n).map(|_| rng.range(-2, bins + 2)).collect();
            let vals = rng.vec(n, -20, 20);
            let total = if per_block { G * out_len } else { out_len };
            // Global cases start from random counts (cells past the view must keep them).
            let start = if per_block {
                vec![0; total]
            } else {
                rng.vec(total, -5, 5)
            };
            let (i, v, out) = (
                dev.upload(&idx).unwrap(),
                dev.upload(&vals).unwrap(),
                dev.upload(&start).unwrap(),
            );
            launch(&dev, G as u32, &i, &v, &out).unwrap();
            let mut want = if per_block {
                vec![init; total]
            } else {
                start.clone()
            };
            for b in 0..G {
                for r in 0..tile[0] {
                    for c in 0..tile[1] {
                        let l = b * 512 + r * tile[1] + c;
                        if l >= n {
                            continue;
                        }
                        let (ix, val) = (idx[l], vals[l]);
                        if !(0..bins).contains(&ix) || (!per_block && val == 5) {
                            continue;
                        }
                        let (row, col) = if dim == 0 {
                            (ix as usize, c)
                        } else {
                            (r, ix as usize)
                        };
                        let cell = if per_block { b * out_len } else { 0 } + row * view[1] + col;
                        want[cell] = op.apply(want[cell], 0, val);
                    }
                }
            }
            assert_eq!(out.download().unwrap(), want, "{name} on {}", dev.name());
        }
    }
}

/// Counters: `[1]` tiles from 256-thread blocks are one RMW each; scatter onto one cell from
/// every lane of every block is exact.
#[test]
fn counters_under_contention() {
    for dev in backends() {
        let (g, reps) = (19u32, 5);
        let c = dev.zeros::<i32>(3).unwrap();
        one_cell::launch(&dev, g, &c, reps).unwrap();
        let got = c.download().unwrap();
        let n = g as i32 * reps;
        assert_eq!(
            got,
            vec![n, n, -3 * n],
            "[1]-tile RMWs on {}: expected one RMW per call per block",
            dev.name()
        );

        let c = dev.zeros::<i32>(4).unwrap();
        hot_counter::launch(&dev, g, &c, reps).unwrap();
        let got = c.download().unwrap();
        let n = g as i32 * 512 * reps;
        assert_eq!(
            got,
            vec![n, -2 * n, g as i32 * 512 - 1, -(511 + g as i32 - 1)],
            "hot counters on {}",
            dev.name()
        );
    }
}

/// Tickets: every (block, round) gets a distinct number, all of 0..G*reps.
#[test]
fn tickets_are_a_permutation() {
    for dev in backends() {
        let (g, reps) = (23u32, 4);
        let counter = dev.zeros::<i32>(1).unwrap();
        let out = dev.full((g as i32 * reps) as usize, -1).unwrap();
        take_tickets_i32::launch(&dev, g, &counter, &out, reps).unwrap();
        let mut t = out.download().unwrap();
        t.sort();
        assert_eq!(
            t,
            (0..g as i32 * reps).collect::<Vec<_>>(),
            "tickets on {}",
            dev.name()
        );
        assert_eq!(counter.download().unwrap(), vec![g as i32 * reps]);
        // Within one block, tickets increase with the round.
        let out = out.download().unwrap();
        for b in 0..g as usize {
            let row = &out[b * reps as usize..(b + 1) * reps as usize];
            assert!(row.windows(2).all(|w| w[0] < w[1]), "block {b}: {row:?}");
        }
    }
}

/// Views (with offsets and tails past the view's dims) as destinations.
#[test]
fn views_as_destinations() {
    const G: usize = 9;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        let vals = rng.vec(G * 32, -100, 100);
        let init = rng.vec(80, -100, 0);
        let (v, d, o) = (
            dev.upload(&vals).unwrap(),
            dev.upload(&init).unwrap(),
            dev.full(G * 32, 77).unwrap(),
        );
        view_dst::launch(&dev, G as u32, &v, &d, &o).unwrap();
        let fin = d.download().unwrap();
        let olds = o.download().unwrap();
        let mut want = init.clone();
        let mut lanes = Vec::new();
        for b in 0..G {
            for r in 0..4 {
                for c in 0..8 {
                    let l = b * 32 + r * 8 + c;
                    if c + 2 < 7 {
                        let cell = 3 + (r + 1) * 7 + c + 2;
                        want[cell] = want[cell].max(vals[l]);
                    }
                    if c + 1 < 6 {
                        let cell = 40 + (r + 2) * 6 + c + 1;
                        want[cell] += 1;
                        lanes.push((cell, (0, 1, olds[l])));
                    } else {
                        assert_eq!(olds[l], 0, "inactive lane past the view on {}", dev.name());
                    }
                }
            }
        }
        assert_eq!(fin, want, "on {}", dev.name());
        check_cells(Op::Add, &init, &fin, lanes);
    }
}

/// Non-atomic scatter stores: permutations (with masked and out-of-range lanes) are exact on
/// every backend; duplicates are an error on the strict emulator.
#[test]
fn scatter_stores() {
    const G: usize = 4;
    for dev in backends() {
        let mut rng = Rng::from_env_or_clock();
        let n = G * 256 - 30;
        let mut idx = Vec::new();
        for _ in 0..G {
            let mut p: Vec<i32> = (0..256).collect();
            for i in (1..256).rev() {
                p.swap(i, rng.range(0, i as i32 + 1) as usize);
            }
            idx.extend(p);
        }
        idx.truncate(n);
        for x in idx.iter_mut() {
            if rng.range(0, 8) == 0 {
                *x += 300; // out of range: skipped
            }
        }
        let vals: Vec<i32> = (0..n).map(|_| rng.range(-10, 1000)).collect();
        let (i, v) = (dev.upload(&idx).unwrap(), dev.upload(&vals).unwrap());
        for (shared, launch) in [
            (false, scatter_store_global::launch as Launch3),
            (true, scatter_store_shared::launch),
        ] {
            let out = dev.full(G * 256, -7).unwrap();
            launch(&dev, G as u32, &i, &v, &out).unwrap();
            let mut want = vec![-7; G * 256];
            for l in 0..n {
                let b = l / 256;
                if vals[l] >= 0 && (0..256).contains(&idx[l]) {
                    want[b * 256 + idx[l] as usize] = vals[l];
                }
            }
            assert_eq!(
                out.download().unwrap(),
                want,
                "scatter store (shared: {shared}) on {}",
                dev.name()
            );
        }
        if !dev.is_gpu() {
            // Two active lanes of block 0 on one index: the strict emulator reports it.
            let mut dup = idx.clone();
            let mut dup_vals = vals.clone();
            dup[0] = 5;
            dup[1] = 5;
            dup_vals[0] = 1;
            dup_vals[1] = 2;
            let (i, v) = (dev.upload(&dup).unwrap(), dev.upload(&dup_vals).unwrap());
            for launch in [
                scatter_store_global::launch as Launch3,
                scatter_store_shared::launch,
            ] {
                let out = dev.full(G * 256, -7).unwrap();
                let r = launch(&dev, G as u32, &i, &v, &out);
                assert!(r.is_err(), "duplicate indices in a non-atomic scatter must be an error on the strict emulator");
                eprintln!("expected error: {}", r.unwrap_err());
            }
        }
    }
}
