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
//! pace (the price of the promise). Rows ([`index_add_rows`]) sort the rows' positions instead
//! of values (a row whose index is outside keeps position -1 and a key spread over the groups,
//! so every key is below `m` and `m = 2^16` outputs need two passes, not three), and fold each
//! output row on one warp, 128 columns a step, reading its group's rows in order.
//!
//! **NaN.** A NaN result is the canonical NaN the GPU's arithmetic produces (`0x7fffffff` for
//! `f32`), on the emulator too; the CPU loop keeps an operand's NaN payload instead. Every other
//! result, infinities and signed zeros included, is the loop's bits.
//!
//! **Speed** (H100, 2^28 f32 scalars, BENCHMARKS.md): 33.7 ms into 1024 outputs and 16.6 ms
//! into 2^22, against torch's deterministic `index_add_` at 92.0 and 65.5 ms, and our float
//! atomics at 23.0 and 3.3 ms; rows `[2^20, 128]` into `[2^16, 128]` in 0.36 ms (f32) and
//! 0.34 ms (bf16), against torch deterministic at 0.85 and 0.70 ms and our atomics at 0.45 and
//! 0.33 ms.

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

/// Sort keys and source positions for rows: `idx` and the position where `0 <= idx < m`; an
/// index outside takes position -1 (the fold skips it) and the key `position % m`, so that such
/// rows spread over every group rather than lengthening one. Every key is below `m`, so the sort
/// needs the bytes of `m - 1` only: two passes for `m = 2^16`, where the key `m` for outside
/// would have needed a third (an H100, 2^20 keys: 114 -> 82 us for the grouping).
#[tile_kernel(threads = 256)]
fn row_keys_and_positions(
    idx: GlobalTensor<i32>,
    keys: GlobalTensor<u32>,
    pos: GlobalTensor<i32>,
    m: i32,
) {
    let n = idx.len() as i32;
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let i = load_global(idx, offsets = [start], shape = [4096]);
        let at = arange(4096) + start;
        let inside = (i >= 0) & (i < m);
        store_global(keys, select(inside, i, at % m) as u32, offsets = [start]);
        store_global(pos, select(inside, at, -1), offsets = [start]);
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
/// docs). `$x`: one name per unrolled value. The same fold as `segmented_reduce`'s, which
/// steps by 8: one shared kernel stepping by 8 took 45.8 ms instead of 36.9 into 1024 outputs
/// (H200), so each keeps its measured step.
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

/// The in-order fold of each group of rows into its output row: one warp a row (a block of 32
/// threads), 128 columns a step of the column loop; step `j` reads the group's `j`-th position
/// (a scalar: one load, no broadcast, no barrier) and loads and adds that source row unless
/// the position is -1 (an index outside the output, see [`row_keys_and_positions`]). Each
/// block's loop runs as long as its own group, not the longest of several. On an H100
/// (`[2^20, 128]` f32 rows into `[2^16, 128]`, the fold alone, BENCHMARKS.md): 409 us with 8
/// rows a block of 256 threads (a shared broadcast of the 8 positions each step, and the loop
/// as long as the longest of the 8 groups), 383 us with its mask taken from the broadcast
/// positions, 286-289 us on a warp a row with the positions broadcast, 275 us with scalar
/// positions (the row then loaded at `max(p, 0)` before the branch; inside it, so that a row
/// outside costs no load, the whole `index_add_rows` took 364 us against 354). Tried on a
/// warp a row and slower: the next position read while the row loads (304 us), two steps at a
/// time (308 us), 32 positions staged in shared memory at a time (288 us).
macro_rules! fold_rows_kernels {
    ($($name:ident: $t:ident),*) => {$(
        #[tile_kernel(threads = 32)]
        fn $name(
            src: GlobalTensor<$t>,
            pos: GlobalTensor<i32>,
            starts: GlobalTensor<i32>,
            ends: GlobalTensor<i32>,
            out: GlobalTensor<$t>,
            d: i32,
        ) {
            let m = starts.len() as i32;
            let n = pos.len() as i32;
            let src_rows = src.view(0, [n, d]);
            let out_rows = out.view(0, [m, d]);
            for r in (block_idx()..m).step_by(grid_dim()) {
                let s = load_global(starts, offsets = [r], shape = [1]).item();
                let len = load_global(ends, offsets = [r], shape = [1]).item() - s;
                for c0 in (0..d).step_by(128) {
                    let mut acc = load_global(out_rows, offsets = [r, c0], shape = [1, 128]);
                    for j in 0..len {
                        let p = load_global(pos, offsets = [s + j], shape = [1]).item();
                        // A row whose index is outside (-1) loads nothing: the branch is the
                        // whole warp's.
                        if p >= 0 {
                            acc = acc + load_global(src_rows, offsets = [p, c0], shape = [1, 128]);
                        }
                    }
                    store_global(out_rows, acc, offsets = [r, c0]);
                }
            }
        }
    )*};
}

fold_rows_kernels!(rows_f32: f32, rows_f64: f64, rows_f16: f16, rows_bf16: bf16);

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
    #[doc(hidden)]
    fn launch_fold_rows(
        stream: &Stream<'_>,
        grid: u32,
        src: &impl AsTensor<Self>,
        pos: &TensorView<'_, i32>,
        bounds: (&TensorView<'_, i32>, &TensorView<'_, i32>),
        out: &impl AsTensor<Self>,
        row_len: i32,
    ) -> Result<(), crate::Error>;
}

macro_rules! index_add_element {
    ($($t:ty => $kernel:ident, $rows:ident);*) => {$(
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
            fn launch_fold_rows(
                stream: &Stream<'_>,
                grid: u32,
                src: &impl AsTensor<Self>,
                pos: &TensorView<'_, i32>,
                (starts, ends): (&TensorView<'_, i32>, &TensorView<'_, i32>),
                out: &impl AsTensor<Self>,
                row_len: i32,
            ) -> Result<(), crate::Error> {
                $rows::launch_on(stream, grid, src, pos, starts, ends, out, row_len)
            }
        }
    )*};
}

index_add_element!(f32 => fold_f32, rows_f32; f64 => fold_f64, rows_f64; crate::f16 => fold_f16, rows_f16; crate::bf16 => fold_bf16, rows_bf16);

/// Blocks for a grid-strided pass over `n` elements in tiles of `tile`.
fn grid_for(n: usize, tile: usize) -> u32 {
    n.div_ceil(tile).clamp(1, 65_536) as u32
}

/// Steps 1-3 of the method: values `V` grouped by index, in input order, and each group's
/// bounds.
struct Groups<V: SortValue> {
    sort: SortStorage<u32, V>,
    keys: GlobalTensor<u32>,
    sorted_keys: GlobalTensor<u32>,
    sorted_vals: GlobalTensor<V>,
    starts: GlobalTensor<i32>,
    ends: GlobalTensor<i32>,
}

impl<V: SortValue> Groups<V> {
    fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        let (cap, outs) = (capacity.max(1), outputs.max(1));
        Ok(Groups {
            sort: SortStorage::new(dev, cap)?,
            keys: dev.zeros(cap)?,
            sorted_keys: dev.zeros(cap)?,
            sorted_vals: dev.zeros(cap)?,
            starts: dev.zeros(outs)?,
            ends: dev.zeros(outs)?,
        })
    }

    /// Checks `n` values into `m` outputs against the capacities.
    fn check(&self, n: usize, m: usize) -> Result<(), crate::Error> {
        super::scan::within_capacity(n, self.keys.len())?;
        if m > self.starts.len() {
            return Err(crate::Error::LengthMismatch {
                op: "tilus::algo::index_add (outputs for the storage)",
                expected: self.starts.len(),
                got: m,
            });
        }
        Ok(())
    }

    /// Groups `vals` (as many as `idx`) by index into `m` outputs, on `stream`: afterwards
    /// `sorted_vals[starts[r]..ends[r]]` are output `r`'s values in input order.
    fn group(
        &mut self,
        stream: &Stream<'_>,
        idx: &impl AsTensor<i32>,
        vals: &impl AsTensor<V>,
        m: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        index_keys::launch_on(
            stream,
            grid_for(n, 4096),
            idx,
            &self.keys.view(0..n)?,
            m as i32,
        )?;
        // Keys 0..=m, `m` for an index outside.
        self.sort_and_bound(stream, n, vals, m, m)
    }

    /// Sorts the first `n` keys with `vals` by the bytes that keys up to `largest_key` need, then
    /// finds each of the `m` groups' bounds.
    fn sort_and_bound(
        &mut self,
        stream: &Stream<'_>,
        n: usize,
        vals: &impl AsTensor<V>,
        m: usize,
        largest_key: usize,
    ) -> Result<(), crate::Error> {
        let bits = u32::BITS - (largest_key as u32).leading_zeros();
        // At least one pass: with none the sort would leave its outputs unwritten (keys all
        // 0, for a single output).
        let bytes = (bits.div_ceil(8) as i32).max(1);
        let (keys, sorted_keys) = (self.keys.view(0..n)?, self.sorted_keys.view(0..n)?);
        let sorted_vals = self.sorted_vals.view(0..n)?;
        self.sort.sort_pairs_by_low_bytes(
            stream,
            (&keys, &sorted_keys),
            (vals, &sorted_vals),
            SortOrder::Ascending,
            bytes,
        )?;
        let (starts, ends) = (self.starts.view(0..m)?, self.ends.view(0..m)?);
        clear_bounds::launch_on(stream, grid_for(m, 4096), &starts, &ends)?;
        group_bounds::launch_on(stream, grid_for(n, 4096), &sorted_keys, &starts, &ends)
    }
}

impl Groups<i32> {
    /// Groups the source positions `0..n` of `idx`'s rows by index into `m` outputs, on
    /// `stream`, through `positions` (at least `n` long, overwritten): afterwards
    /// `sorted_vals[starts[r]..ends[r]]` are the positions of output `r`'s rows in input order,
    /// and -1 for rows whose index is outside (see [`row_keys_and_positions`]).
    fn group_positions(
        &mut self,
        stream: &Stream<'_>,
        idx: &impl AsTensor<i32>,
        positions: &GlobalTensor<i32>,
        m: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        let positions = positions.view(0..n)?;
        let keys = self.keys.view(0..n)?;
        row_keys_and_positions::launch_on(
            stream,
            grid_for(n, 4096),
            idx,
            &keys,
            &positions,
            m as i32,
        )?;
        self.sort_and_bound(stream, n, &positions, m, m - 1)
    }
}

/// The temporary storage of deterministic index-adds of up to `capacity` values into up to
/// `outputs` elements: the sort's storage, the keys and values sorted, and each group's bounds.
/// Reusable run after run.
pub struct IndexAddStorage<T: IndexAddElement> {
    groups: Groups<T>,
}

impl<T: IndexAddElement> IndexAddStorage<T> {
    /// Storage for index-adds of up to `capacity` values into up to `outputs` elements on `dev`.
    pub fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        Ok(IndexAddStorage {
            groups: Groups::new(dev, capacity, outputs)?,
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
        super::scan::same_length("index_add (values)", n, vals.tensor_len())?;
        self.groups.check(n, m)?;
        if n == 0 || m == 0 {
            return Ok(());
        }
        let g = &mut self.groups;
        g.group(stream, idx, vals, m)?;
        T::launch_fold(
            stream,
            grid_for(m, 256),
            &g.sorted_vals,
            &g.starts,
            &g.ends,
            out,
        )
    }
}

/// The temporary storage of deterministic row index-adds ([`index_add_rows`]) of up to
/// `capacity` source rows into up to `outputs` rows: the rows' positions grouped by index.
/// Reusable run after run.
pub struct IndexAddRowsStorage<T: IndexAddElement> {
    groups: Groups<i32>,
    positions: GlobalTensor<i32>,
    _t: std::marker::PhantomData<T>,
}

impl<T: IndexAddElement> IndexAddRowsStorage<T> {
    /// Storage for row index-adds of up to `capacity` rows into up to `outputs` rows on `dev`.
    pub fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        Ok(IndexAddRowsStorage {
            groups: Groups::new(dev, capacity, outputs)?,
            positions: dev.zeros(capacity.max(1))?,
            _t: std::marker::PhantomData,
        })
    }

    /// `out[idx[i], :] += src[i, :]` for `i` in `0..n`, in that order, bit for bit (indices
    /// outside the rows of `out` skipped), on `stream`: `src` holds `n` rows and `out` its rows,
    /// each of `row_len` elements, row after row. `out` must not overlap `src`.
    pub fn index_add_rows(
        &mut self,
        stream: &Stream<'_>,
        out: &impl AsTensor<T>,
        idx: &impl AsTensor<i32>,
        src: &impl AsTensor<T>,
        row_len: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        let row_len_error = |len: usize| crate::Error::LengthMismatch {
            op: "tilus::algo::index_add_rows (elements for whole rows)",
            expected: len.div_ceil(row_len.max(1)) * row_len,
            got: len,
        };
        if row_len == 0 || out.tensor_len() % row_len != 0 {
            return Err(row_len_error(out.tensor_len()));
        }
        super::scan::same_length(
            "index_add_rows (source rows)",
            n * row_len,
            src.tensor_len(),
        )?;
        let m = out.tensor_len() / row_len;
        self.groups.check(n, m)?;
        if n == 0 || m == 0 {
            return Ok(());
        }
        let g = &mut self.groups;
        g.group_positions(stream, idx, &self.positions, m)?;
        let (starts, ends) = (g.starts.view(0..m)?, g.ends.view(0..m)?);
        let pos = g.sorted_vals.view(0..n)?;
        T::launch_fold_rows(
            stream,
            grid_for(m, 1),
            src,
            &pos,
            (&starts, &ends),
            out,
            row_len as i32,
        )
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

/// `out[idx[i], :] += src[i, :]` for `i` in `0..n`, in that order, bit for bit, for rows of
/// `row_len` elements, on `dev`'s default stream, with temporary storage (see
/// [`IndexAddRowsStorage`] to reuse it). Indices outside the rows of `out` are skipped.
pub fn index_add_rows<T: IndexAddElement>(
    dev: &Device,
    out: &impl AsTensor<T>,
    idx: &impl AsTensor<i32>,
    src: &impl AsTensor<T>,
    row_len: usize,
) -> Result<(), crate::Error> {
    let rows = out.tensor_len() / row_len.max(1);
    let mut st = IndexAddRowsStorage::new(dev, idx.tensor_len(), rows)?;
    st.index_add_rows(&dev.default_stream(), out, idx, src, row_len)
}
