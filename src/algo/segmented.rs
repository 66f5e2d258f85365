//! Segmented sums of integers (CSR row sums): `out[r] = x[offsets[r]] + .. + x[offsets[r + 1] - 1]`.
//!
//! Computed as the difference of an inclusive scan at the segment's two ends: with `P` the
//! inclusive prefix sum of `x` (and `P[-1] = 0`), row `r` sums to `P[end - 1] - P[start - 1]`.
//! Wrapping integer addition is a group, so the difference is exact for every input, however
//! long the rows and however the prefixes overflow. That is also why only integers are offered:
//! a float prefix difference loses the small rows next to large prefixes. One device-wide scan
//! ([`super::ScanStorage`], decoupled look-back) and one pass over the rows, whatever their
//! lengths: rows of 1 element cost what rows of 10,000 do, where per-row reductions (CUB's
//! `DeviceSegmentedReduce`) spend a warp or a block on every row.

use super::scan::{ScanElement, ScanOp, ScanStorage};
use crate::prelude::*;

/// Row sums from the inclusive prefix `p`: 2048 rows a tile, grid-strided. A row's two ends are
/// gathered from `p`; an end at index -1 (a row starting at 0, or an empty first row) is out of
/// bounds and reads the `other` 0, which is `P[-1]`.
macro_rules! row_sums {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 256)]
        fn $name(p: GlobalTensor<$t>, offsets: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let rows = out.len() as i32;
            for first in (block_idx() * 2048..rows).step_by(grid_dim() * 2048) {
                let inside = arange(2048) + first < rows;
                let start = load_global(
                    offsets,
                    offsets = [first],
                    shape = [2048],
                    mask = inside,
                    other = 0,
                );
                let end = load_global(
                    offsets,
                    offsets = [first + 1],
                    shape = [2048],
                    mask = inside,
                    other = 0,
                );
                let hi = load_global(
                    p,
                    offsets = [end - 1],
                    shape = [2048],
                    mask = inside,
                    other = 0,
                );
                let lo = load_global(
                    p,
                    offsets = [start - 1],
                    shape = [2048],
                    mask = inside,
                    other = 0,
                );
                store_global(out, hi - lo, offsets = [first]);
            }
        }
    };
}

row_sums!(row_sums_i32, i32);
row_sums!(row_sums_u32, u32);
row_sums!(row_sums_i64, i64);
row_sums!(row_sums_u64, u64);

/// Element types of [`segmented_sum`]: `i32`, `u32`, `i64`, `u64` (sums wrap, as `wrapping_add`
/// does).
pub trait SegmentedElement: ScanElement {
    #[doc(hidden)]
    fn launch_row_sums(
        stream: &Stream<'_>,
        grid: u32,
        p: &impl crate::AsTensor<Self>,
        offsets: &impl crate::AsTensor<i32>,
        out: &impl crate::AsTensor<Self>,
    ) -> Result<(), crate::Error>;
}

macro_rules! segmented_element {
    ($t:ty, $kernel:ident) => {
        impl SegmentedElement for $t {
            fn launch_row_sums(
                stream: &Stream<'_>,
                grid: u32,
                p: &impl crate::AsTensor<Self>,
                offsets: &impl crate::AsTensor<i32>,
                out: &impl crate::AsTensor<Self>,
            ) -> Result<(), crate::Error> {
                $kernel::launch_on(stream, grid, p, offsets, out)
            }
        }
    };
}

segmented_element!(i32, row_sums_i32);
segmented_element!(u32, row_sums_u32);
segmented_element!(i64, row_sums_i64);
segmented_element!(u64, row_sums_u64);

/// The temporary storage of segmented sums over up to `capacity` values: the scan's storage and
/// the prefix sums. Reusable run after run.
pub struct SegmentedStorage<T: SegmentedElement> {
    scan: ScanStorage<T>,
    prefix: GlobalTensor<T>,
}

impl<T: SegmentedElement> SegmentedStorage<T> {
    /// Storage for segmented sums of up to `capacity` values on `dev`.
    pub fn new(dev: &Device, capacity: usize) -> Result<Self, crate::Error> {
        Ok(SegmentedStorage {
            scan: ScanStorage::new(dev, capacity)?,
            prefix: dev.zeros(capacity.max(1))?,
        })
    }

    /// `out[r] = x[offsets[r]] + .. + x[offsets[r + 1] - 1]` (wrapping; 0 for an empty row), on
    /// `stream`. `offsets` has one element more than `out`; `x` holds at most the capacity.
    /// Offsets must not decrease and must lie in `0..=x.len()`: others give unspecified sums
    /// (never a fault; every read is bounds-checked).
    pub fn sum(
        &mut self,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<T>,
        offsets: &impl crate::AsTensor<i32>,
        out: &impl crate::AsTensor<T>,
    ) -> Result<(), crate::Error> {
        let (n, rows) = (x.tensor_len(), out.tensor_len());
        if offsets.tensor_len() != rows + 1 {
            return Err(crate::Error::LengthMismatch {
                op: "tilus::algo::segmented_sum (offsets: one more than the rows)",
                expected: rows + 1,
                got: offsets.tensor_len(),
            });
        }
        if n > self.prefix.len() {
            return Err(crate::Error::LengthMismatch {
                op: "tilus::algo::segmented_sum (values for the storage's capacity)",
                expected: self.prefix.len(),
                got: n,
            });
        }
        if rows == 0 {
            return Ok(());
        }
        // With no values every row is empty: both gathers of a row are at index -1, out of
        // bounds of the empty view, and read 0.
        let p = self.prefix.view(0..n)?;
        if n > 0 {
            self.scan.scan(stream, ScanOp::Sum, x, &p, false)?;
        }
        let grid = rows.div_ceil(2048).min(4096) as u32;
        T::launch_row_sums(stream, grid, &p, offsets, out)
    }
}

/// `out[r] = x[offsets[r]] + .. + x[offsets[r + 1] - 1]` on `dev`'s default stream, with
/// temporary storage (see [`SegmentedStorage::sum`]).
pub fn segmented_sum<T: SegmentedElement>(
    dev: &Device,
    x: &impl crate::AsTensor<T>,
    offsets: &impl crate::AsTensor<i32>,
    out: &impl crate::AsTensor<T>,
) -> Result<(), crate::Error> {
    let mut st = SegmentedStorage::new(dev, x.tensor_len())?;
    st.sum(&dev.default_stream(), x, offsets, out)
}

/// A segmented reduction in order: one lane per row folds the row's values from the operator's
/// identity, left to right, 8 values a step (their loads issued before the 8 combinations).
macro_rules! row_fold {
    ($name:ident, $t:ident, $id:expr, sum, [$(($u:literal, $x:ident))*]) => {
        row_fold!(@kernel $name, $t, $id, [$((j + $u < len, acc + $x, $u, $x))*]);
    };
    ($name:ident, $t:ident, $id:expr, $f:ident, [$(($u:literal, $x:ident))*]) => {
        row_fold!(@kernel $name, $t, $id, [$((j + $u < len, $f(acc, $x), $u, $x))*]);
    };
    (@kernel $name:ident, $t:ident, $id:expr, [$(($here:expr, $step:expr, $u:literal, $x:ident))*]) => {
        #[tile_kernel(threads = 256)]
        fn $name(x: GlobalTensor<$t>, offsets: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let rows = out.len() as i32;
            for first in (block_idx() * 256..rows).step_by(grid_dim() * 256) {
                let inside = arange(256) + first < rows;
                let s = load_global(offsets, offsets = [first], shape = [256], mask = inside);
                let len = load_global(offsets, offsets = [first + 1], shape = [256], mask = inside) - s;
                let mut acc = full([256], $id);
                let longest = len.max();
                for j in (0..longest).step_by(8) {
                    $(let $x = load_global(x, offsets = [s + (j + $u)], shape = [256], mask = j + $u < len);)*
                    $(acc = select($here, $step, acc);)*
                }
                store_global(out, acc, offsets = [first]);
            }
        }
    };
}

/// Integer sums (wrapping addition is associative, so the loop's value in any order): a block
/// takes `$rows` rows at a time and reads their values, contiguous from the first row's start to
/// the last row's end, in coalesced chunks of `$chunk` (2048 and 512 rows for 32-bit values,
/// 1024 and 256 for 64-bit ones: 8 KB a chunk). Each chunk's inclusive scan goes to shared
/// memory, continued from the chunks before (`carry`), and a row whose start or end falls in
/// the chunk reads its prefix there; the row's sum is the difference of its two prefixes. Every
/// value is read once and only scanned, whatever the rows' lengths, where a lane a row
/// (`row_fold!`) gathers values 32 rows apart and runs as long as the block's longest row.
/// Each chunk's loads are issued before the previous chunk is scanned.
///
/// Blocks of 128 threads, 6 an SM (80 registers, no spill): the same 48 KB of chunks in flight
/// an SM as 3 blocks of 256 threads with chunks of 4096 and 1024 rows, in twice the blocks, each
/// waiting at barriers of half the warps. 2^28 `i32` in rows of 1..64 (2026-11-28, session 49,
/// copies of the kernel in one call each): an H100 408.3-409.2 us against 427.2-427.8 for
/// 256 threads (0.84 of the read limit against 0.80), an H200 341.2-344.4 against 395.8-399.8
/// (0.72 against 0.61); 128 threads with 256 rows at 8 blocks (64 registers, 32 bytes spilled)
/// 410.2-412.3 / 337.6-338.4, at 5 blocks with 512 rows 416.5-417.1 / 350.8-354.9; 256 threads
/// with chunks of 2048 at 4 blocks (64 registers), 1024 / 512 rows, 512.1-513.1 / 450.2-451.2
/// (H100), 509.6-512.1 / 412.4-414.9 (H200). Earlier, 256 threads (session 48): the chunks
/// loaded one at a time 454.6-457.5 us (H200); at 4 blocks an SM 494.8-498.8; with the chunk
/// two or four ahead prefetched into the L2 as well, 427.0-429.4; the chunk two ahead in
/// registers or 2048 rows a block at a time, slower still on the H100.
/// 64-bit sums (an H100, 2^27 `i64` in rows of 1..64, copies of the kernel in one call, each
/// checked against the CPU): the lane-a-row fold they took before 532.9-533.2 us, chunks of
/// 1024 and 256 rows at 6 blocks (80 registers, no spill) 398.3-398.6 (0.86 of the read
/// limit), chunks of 2048 and 512 rows at 4 blocks (128 registers, 16 bytes spilled)
/// 399.1-399.6, 1024 and 256 at 8 blocks (64, 48 spilled) 404.6-404.9; chunks of 2048 at 6
/// blocks spill 368 bytes.
macro_rules! chunk_sums {
    ($name:ident, $t:ident, $zero:expr, $chunk:literal, $rows:literal) => {
        #[tile_kernel(threads = 128, min_blocks_per_sm = 6)]
        fn $name(x: GlobalTensor<$t>, offsets: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let n = x.len() as i32;
            let rows = out.len() as i32;
            let prefix = shared_tensor::<$t>([$chunk]);
            for first in (block_idx() * $rows..rows).step_by(grid_dim() * $rows) {
                let inside = arange($rows) + first < rows;
                let s = load_global(
                    offsets,
                    offsets = [first],
                    shape = [$rows],
                    mask = inside,
                    other = n,
                );
                let e = load_global(
                    offsets,
                    offsets = [first + 1],
                    shape = [$rows],
                    mask = inside,
                    other = 0,
                );
                // The span, clamped to the values (offsets out of order give unspecified sums,
                // never a longer walk), its start rounded down to 4 values (16-byte loads).
                let lo = max(s.min(), 0) & -4;
                let hi = min(e.max(), n);
                let mut at_start = full([$rows], $zero);
                let mut at_end = full([$rows], $zero);
                // The sum of the span's values before the chunk.
                let mut carry = full([$rows], $zero);
                // Each chunk's loads are issued before the chunk before is scanned.
                let mut v = load_global(
                    x,
                    offsets = [lo],
                    shape = [$chunk],
                    mask = arange($chunk) + lo < hi,
                    other = $zero,
                );
                for c in (lo..hi).step_by($chunk) {
                    let next = load_global(
                        x,
                        offsets = [c + $chunk],
                        shape = [$chunk],
                        mask = arange($chunk) + c + $chunk < hi,
                        other = $zero,
                    );
                    store_shared(prefix, v.cumsum(0));
                    v = next;
                    sync();
                    // A row's prefix at its start is the inclusive prefix of the value before.
                    let i = s - 1 - c;
                    let j = e - 1 - c;
                    let here_i = inside & (i >= 0) & (i < $chunk);
                    let here_j = inside & (j >= 0) & (j < $chunk);
                    let pi = load_shared(
                        prefix,
                        offsets = [i],
                        shape = [$rows],
                        mask = here_i,
                        other = $zero,
                    );
                    let pj = load_shared(
                        prefix,
                        offsets = [j],
                        shape = [$rows],
                        mask = here_j,
                        other = $zero,
                    );
                    at_start = select(here_i, carry + pi, at_start);
                    at_end = select(here_j, carry + pj, at_end);
                    carry = carry
                        + load_shared(
                            prefix,
                            offsets = [arange($rows) * 0 + ($chunk - 1)],
                            shape = [$rows],
                        );
                    sync();
                }
                store_global(out, at_end - at_start, offsets = [first]);
            }
        }
    };
}

/// The three folds (sum, min, max) of one element type, and its [`SegmentedReduceElement`];
/// `chunked` for integers, whose sums take `chunk_sums!` (chunks of `$chunk` values, `$rows`
/// rows a block).
macro_rules! row_folds {
    ($t:ident: $sum:ident $zero:expr, $min:ident $top:expr, $max:ident $bottom:expr) => {
        row_fold!(
            $sum,
            $t,
            $zero,
            sum,
            [(0, x0)(1, x1)(2, x2)(3, x3)(4, x4)(5, x5)(6, x6)(7, x7)]
        );
        row_folds!(@rest $t: $sum 256, $min $top, $max $bottom);
    };
    (chunked [$chunk:literal, $rows:literal] $t:ident: $sum:ident $zero:expr, $min:ident $top:expr, $max:ident $bottom:expr) => {
        chunk_sums!($sum, $t, $zero, $chunk, $rows);
        row_folds!(@rest $t: $sum $rows, $min $top, $max $bottom);
    };
    (@rest $t:ident: $sum:ident $sum_rows:literal, $min:ident $top:expr, $max:ident $bottom:expr) => {
        row_fold!(
            $min,
            $t,
            $top,
            min,
            [(0, x0)(1, x1)(2, x2)(3, x3)(4, x4)(5, x5)(6, x6)(7, x7)]
        );
        row_fold!(
            $max,
            $t,
            $bottom,
            max,
            [(0, x0)(1, x1)(2, x2)(3, x3)(4, x4)(5, x5)(6, x6)(7, x7)]
        );
        impl SegmentedReduceElement for $t {
            fn launch_fold(
                op: ScanOp,
                stream: &Stream<'_>,
                rows: usize,
                x: &impl crate::AsTensor<Self>,
                offsets: &impl crate::AsTensor<i32>,
                out: &impl crate::AsTensor<Self>,
            ) -> Result<(), crate::Error> {
                // Rows a block takes at a time: 256 for a fold (a lane a row), or the sum's.
                let grid = |per: usize| rows.div_ceil(per).min(65_536) as u32;
                match op {
                    ScanOp::Sum => $sum::launch_on(stream, grid($sum_rows), x, offsets, out),
                    ScanOp::Min => $min::launch_on(stream, grid(256), x, offsets, out),
                    ScanOp::Max => $max::launch_on(stream, grid(256), x, offsets, out),
                }
            }
        }
    };
}

/// Element types of [`segmented_reduce`]: `f32`, `f64`, `i32`, `u32`, `i64`, `u64`.
pub trait SegmentedReduceElement: crate::Element + Copy + Default {
    #[doc(hidden)]
    fn launch_fold(
        op: ScanOp,
        stream: &Stream<'_>,
        rows: usize,
        x: &impl crate::AsTensor<Self>,
        offsets: &impl crate::AsTensor<i32>,
        out: &impl crate::AsTensor<Self>,
    ) -> Result<(), crate::Error>;
}

row_folds!(f32: fold_sum_f32 0.0f32, fold_min_f32 f32::from_bits(2139095040u32), fold_max_f32 f32::from_bits(4286578688u32));
row_folds!(f64: fold_sum_f64 0.0f64, fold_min_f64 f64::from_bits(9218868437227405312u64), fold_max_f64 f64::from_bits(18442240474082181120u64));
// Chunks of 2048 32-bit values, 512 rows a block; 64-bit values in chunks of 1024 and 256 rows,
// the same 8 KB a block in flight (see `chunk_sums!`).
row_folds!(chunked [2048, 512] i32: chunk_sum_i32 0i32, fold_min_i32 2147483647i32, fold_max_i32 -2147483648i32);
row_folds!(chunked [2048, 512] u32: chunk_sum_u32 0u32, fold_min_u32 4294967295u32, fold_max_u32 0u32);
row_folds!(chunked [1024, 256] i64: chunk_sum_i64 0i64, fold_min_i64 9223372036854775807i64, fold_max_i64 -9223372036854775808i64);
row_folds!(chunked [1024, 256] u64: chunk_sum_u64 0u64, fold_min_u64 18446744073709551615u64, fold_max_u64 0u64);

/// `out[r]` = the values `x[offsets[r]..offsets[r + 1]]` combined with `op` **in order, left to
/// right**, from the operator's identity (0, the type's largest or smallest value, `inf`/`-inf`
/// for floats), on `stream`. Float sums are therefore the sequential loop's bits, on every
/// backend and run (a NaN result is the canonical NaN); float `min`/`max` skip NaN, as
/// `f32::min` does. Rows of any length: one lane folds each row, so many short rows run in
/// parallel and a long row takes one addition a value. `offsets` has one element more than
/// `out`; offsets must not decrease and must lie in `0..=x.len()` (others give unspecified
/// results, never a fault). No temporary storage. A row chains one operation a value, so its
/// time grows with its length; [`segmented_sum`]'s (integers) does not. Integer sums
/// (wrapping, so the loop's value in any order) are the exception: a block scans its rows'
/// values in coalesced chunks and takes each row's sum as a difference of prefixes, so a long
/// row costs its block one scan a chunk rather than one lane an addition a value.
pub fn segmented_reduce_on<T: SegmentedReduceElement>(
    stream: &Stream<'_>,
    x: &impl crate::AsTensor<T>,
    offsets: &impl crate::AsTensor<i32>,
    out: &impl crate::AsTensor<T>,
    op: ScanOp,
) -> Result<(), crate::Error> {
    let rows = out.tensor_len();
    if offsets.tensor_len() != rows + 1 {
        return Err(crate::Error::LengthMismatch {
            op: "tilus::algo::segmented_reduce (offsets: one more than the rows)",
            expected: rows + 1,
            got: offsets.tensor_len(),
        });
    }
    if rows == 0 {
        return Ok(());
    }
    T::launch_fold(op, stream, rows, x, offsets, out)
}

/// [`segmented_reduce_on`] on `dev`'s default stream.
pub fn segmented_reduce<T: SegmentedReduceElement>(
    dev: &Device,
    x: &impl crate::AsTensor<T>,
    offsets: &impl crate::AsTensor<i32>,
    out: &impl crate::AsTensor<T>,
    op: ScanOp,
) -> Result<(), crate::Error> {
    segmented_reduce_on(&dev.default_stream(), x, offsets, out, op)
}
