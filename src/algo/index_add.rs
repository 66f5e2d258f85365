//! Deterministic `index_add`: `for i in 0..n { out[idx[i]] += vals[i] }`, **bit for bit** the
//! sequential loop, whatever the GPU, the grid or the backend (indices outside `0..out.len()`
//! are skipped). Float atomics add in the order blocks happen to run, so their sums change from
//! run to run; this gives the loop's bits instead.
//!
//! **Method.** Float addition is not associative, so the loop's result for an output element
//! is the fold of its values *in input order*, from the element's old value: nothing but that
//! exact sequence of roundings gives the same bits (an exact or a tree sum is closer to the
//! real sum, but not equal to the loop). So the values are grouped by index, keeping their
//! order, and each group is folded in order, all groups at once:
//! 1. each index becomes a sort key (`out.len()` for one outside the range, so that it sorts
//!    after every group and is dropped);
//! 2. a stable radix sort of (key, value) pairs ([`super::sort`]) over just the bytes the
//!    keys need (2 passes for 1024 outputs, 3 for 2^22);
//! 3. each group's start and end are found where the sorted key changes;
//! 4. one lane per output element folds its group, in order, from the old value: the loads of
//!    16 values are issued before their 16 additions, so a long group waits for memory once
//!    every 16 values, and its additions chain at the adder's latency.
//!
//! The cost is a sort, whatever the indices; a group of `g` values takes `g` dependent
//! additions, so many outputs fold in parallel and a single hot output folds at one lane's
//! pace (the price of the promise).

use super::sort::{SortOrder, SortStorage, SortValue};
use crate::prelude::*;
use crate::AsTensor;

/// Sort keys from indices: `idx` where `0 <= idx < m`, else `m`.
#[tile_kernel(threads = 256)]
fn index_keys(idx: GlobalTensor<i32>, keys: GlobalTensor<u32>, m: i32) {
    let n = idx.len() as i32;
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let i = load_global(idx, offsets = [start], shape = [4096]);
        let inside = (i >= 0) & (i < m);
        store_global(keys, select(inside, i, m) as u32, offsets = [start]);
    }
}

/// Zeroes the groups' bounds.
#[tile_kernel(threads = 256)]
fn clear_bounds(starts: GlobalTensor<i32>, ends: GlobalTensor<i32>) {
    let m = starts.len() as i32;
    for first in (block_idx() * 4096..m).step_by(grid_dim() * 4096) {
        store_global(starts, zeros([4096]), offsets = [first]);
        store_global(ends, zeros([4096]), offsets = [first]);
    }
}

/// Each group's `[start, end)` in the sorted keys: written where the key changes.
#[tile_kernel(threads = 256)]
fn group_bounds(keys: GlobalTensor<u32>, starts: GlobalTensor<i32>, ends: GlobalTensor<i32>) {
    let n = keys.len() as i32;
    let m = starts.len() as u32;
    for first in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let p = arange(4096) + first;
        let inside = p < n;
        let k = load_global(
            keys,
            offsets = [first],
            shape = [4096],
            mask = inside,
            other = m,
        );
        // Neighbours; past either end reads `m`, which differs from every group's key.
        let before = load_global(
            keys,
            offsets = [first - 1],
            shape = [4096],
            mask = inside & (p > 0),
            other = m,
        );
        let after = load_global(
            keys,
            offsets = [first + 1],
            shape = [4096],
            mask = p + 1 < n,
            other = m,
        );
        let real = inside & (k < m);
        store_global_scatter(
            starts,
            dim = 0,
            indices = k,
            values = p,
            mask = real & (before != k),
        );
        store_global_scatter(
            ends,
            dim = 0,
            indices = k,
            values = p + 1,
            mask = real & (after != k),
        );
    }
}

/// The in-order fold of each group into its output element, 16 values a step (see the module
/// docs). `$x`: one name per unrolled value.
macro_rules! fold_kernel {
    ($name:ident, $t:ident, [$(($u:literal, $x:ident))*]) => {
        #[tile_kernel(threads = 256)]
        fn $name(vals: GlobalTensor<$t>, starts: GlobalTensor<i32>, ends: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let m = out.len() as i32;
            for first in (block_idx() * 256..m).step_by(grid_dim() * 256) {
                let inside = arange(256) + first < m;
                let s = load_global(starts, offsets = [first], shape = [256], mask = inside);
                let len = load_global(ends, offsets = [first], shape = [256], mask = inside) - s;
                let mut acc = load_global(out, offsets = [first], shape = [256], mask = inside);
                let longest = len.max();
                for j in (0..longest).step_by(16) {
                    $(let $x = load_global(vals, offsets = [s + (j + $u)], shape = [256], mask = j + $u < len);)*
                    $(acc = select(j + $u < len, acc + $x, acc);)*
                }
                store_global(out, acc, offsets = [first]);
            }
        }
    };
}

macro_rules! fold_kernels {
    ($($name:ident: $t:ident),*) => {$(
        fold_kernel!($name, $t, [(0, x0) (1, x1) (2, x2) (3, x3) (4, x4) (5, x5) (6, x6) (7, x7)
            (8, x8) (9, x9) (10, x10) (11, x11) (12, x12) (13, x13) (14, x14) (15, x15)]);
    )*};
}

fold_kernels!(fold_f32: f32, fold_f64: f64, fold_f16: f16, fold_bf16: bf16);

/// Element types of the deterministic [`index_add`]: `f32`, `f64`, `f16`, `bf16` (the 16-bit
/// ones add in `f32` and round, as the kernel language and the `half` crate both do).
pub trait IndexAddElement: SortValue {
    #[doc(hidden)]
    fn launch_fold(
        stream: &Stream<'_>,
        grid: u32,
        vals: &impl AsTensor<Self>,
        starts: &GlobalTensor<i32>,
        ends: &GlobalTensor<i32>,
        out: &impl AsTensor<Self>,
    ) -> Result<(), crate::Error>;
}

macro_rules! index_add_element {
    ($($t:ty => $kernel:ident),*) => {$(
        impl IndexAddElement for $t {
            fn launch_fold(
                stream: &Stream<'_>,
                grid: u32,
                vals: &impl AsTensor<Self>,
                starts: &GlobalTensor<i32>,
                ends: &GlobalTensor<i32>,
                out: &impl AsTensor<Self>,
            ) -> Result<(), crate::Error> {
                $kernel::launch_on(stream, grid, vals, starts, ends, out)
            }
        }
    )*};
}

index_add_element!(f32 => fold_f32, f64 => fold_f64, crate::f16 => fold_f16, crate::bf16 => fold_bf16);

/// The temporary storage of deterministic index-adds of up to `capacity` values into up to
/// `outputs` elements: the sort's storage, the keys and values sorted, and each group's bounds.
/// Reusable run after run.
pub struct IndexAddStorage<T: IndexAddElement> {
    sort: SortStorage<u32, T>,
    keys: GlobalTensor<u32>,
    sorted_keys: GlobalTensor<u32>,
    sorted_vals: GlobalTensor<T>,
    starts: GlobalTensor<i32>,
    ends: GlobalTensor<i32>,
}

/// Blocks for a grid-strided pass over `n` elements in tiles of `tile`.
fn grid_for(n: usize, tile: usize) -> u32 {
    n.div_ceil(tile).clamp(1, 65_536) as u32
}

impl<T: IndexAddElement> IndexAddStorage<T> {
    /// Storage for index-adds of up to `capacity` values into up to `outputs` elements on `dev`.
    pub fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        let (cap, outs) = (capacity.max(1), outputs.max(1));
        Ok(IndexAddStorage {
            sort: SortStorage::new(dev, cap)?,
            keys: dev.zeros(cap)?,
            sorted_keys: dev.zeros(cap)?,
            sorted_vals: dev.zeros(cap)?,
            starts: dev.zeros(outs)?,
            ends: dev.zeros(outs)?,
        })
    }

    /// `out[idx[i]] += vals[i]` for `i` in `0..n`, in that order, bit for bit (indices outside
    /// `0..out.len()` skipped), on `stream`. `idx` and `vals` have one length `n`, at most the
    /// capacity; `out` at most the storage's outputs. `out` must not overlap `vals`.
    pub fn index_add(
        &mut self,
        stream: &Stream<'_>,
        out: &impl AsTensor<T>,
        idx: &impl AsTensor<i32>,
        vals: &impl AsTensor<T>,
    ) -> Result<(), crate::Error> {
        let (n, m) = (idx.tensor_len(), out.tensor_len());
        super::scan::check_lengths(
            "index_add (values)",
            n,
            vals.tensor_len(),
            (self.keys.len(), 1),
        )?;
        if m > self.starts.len() {
            return Err(crate::Error::LengthMismatch {
                op: "tilus::algo::index_add (outputs for the storage)",
                expected: self.starts.len(),
                got: m,
            });
        }
        if n == 0 || m == 0 {
            return Ok(());
        }
        // Keys 0..=m: the bytes they need are the sort's passes.
        let bits = u32::BITS - (m as u32).leading_zeros();
        let bytes = bits.div_ceil(8) as i32;
        let (keys, sorted_keys) = (self.keys.view(0..n)?, self.sorted_keys.view(0..n)?);
        let sorted_vals = self.sorted_vals.view(0..n)?;
        let (starts, ends) = (&self.starts, &self.ends);
        index_keys::launch_on(stream, grid_for(n, 4096), idx, &keys, m as i32)?;
        self.sort.sort_pairs_by_low_bytes(
            stream,
            (&keys, &sorted_keys),
            (vals, &sorted_vals),
            SortOrder::Ascending,
            bytes,
        )?;
        let (starts_m, ends_m) = (starts.view(0..m)?, ends.view(0..m)?);
        clear_bounds::launch_on(stream, grid_for(m, 4096), &starts_m, &ends_m)?;
        group_bounds::launch_on(stream, grid_for(n, 4096), &sorted_keys, &starts_m, &ends_m)?;
        T::launch_fold(stream, grid_for(m, 256), &sorted_vals, starts, ends, out)
    }
}

/// `out[idx[i]] += vals[i]` for `i` in `0..n`, in that order, bit for bit, on `dev`'s default
/// stream, with temporary storage (see [`IndexAddStorage`] to reuse it). Indices outside
/// `0..out.len()` are skipped.
pub fn index_add<T: IndexAddElement>(
    dev: &Device,
    out: &impl AsTensor<T>,
    idx: &impl AsTensor<i32>,
    vals: &impl AsTensor<T>,
) -> Result<(), crate::Error> {
    let mut st = IndexAddStorage::new(dev, idx.tensor_len(), out.tensor_len())?;
    st.index_add(&dev.default_stream(), out, idx, vals)
}
