//! Device-wide scans: one pass over the input, each tile's prefix found by decoupled
//! look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back",
//! 2016), written as a tilus kernel.
//!
//! Each block draws a ticket (an atomic counter) that is its tile, publishes its tile's fold,
//! looks back over its predecessors' published folds until it meets an inclusive prefix,
//! publishes its own, and writes its tile's scan offset by that prefix. 64-bit folds are
//! published with a release store of a flag and read after acquire loads (device scope);
//! 32-bit folds travel in one 64-bit word with their state, relaxed. No co-residency of
//! blocks is assumed, and the storage is reused without clearing (flags carry the run's
//! epoch). The protocol is written once, in `src/algo/lookback.rs`.
//!
//! Float sums depend on which predecessors had published their prefix when a block looked
//! back (as with CUB), so they are not reproducible bit for bit; integer scans are exact.

/// A scan kernel, given its look-back tokens: tiles of `$tile` on `$threads` threads, each
/// scanned and offset by the fold of the tiles before it by the `$store` tokens (a float sum's
/// kernel of one direction ignores its `exclusive` argument). The shapes
/// were measured on an H100 (2^28 `i32`): with the packed look-back on one warp, 8192 on 128
/// threads took 903-910 us, 4096 on 128 about 920 and 2048 on 128 about 1045 (a block waits
/// for its predecessors to publish for about as long whatever its tile, so larger tiles wait
/// less per element); with flags (64-bit folds, measured with `i32` on an H200) 8192 on 256
/// threads was the best. The packed look-back sleeps 3000 ns before its first read (`delay`;
/// one H100 call, 2^28 `i32`: none 906-912 us, 300 ns 884-890, 800 868-874, 1500 841-849, 2000
/// 837, 2500 799-800, 3500 799, 5000 844-845).
macro_rules! scan_kernel {
    ($name:ident, [$($store:tt)*], $t:ident, $fold:ident, $id:expr, $threads:literal, $tile:literal, [$($publish:tt)*] [$($lookback:tt)*]) => {
        #[tile_kernel(threads = $threads)]
        fn $name(
            x: GlobalTensor<$t>,
            out: GlobalTensor<$t>,
            agg: GlobalTensor<$t>,
            inc: GlobalTensor<$t>,
            flags: GlobalTensor<i32>,
            status: GlobalTensor<u64>,
            ticket: GlobalTensor<i32>,
            epoch: i32,
            exclusive: i32,
        ) {
            let tiles = flags.len() as i32;
            let tile = atomic::global_add(ticket, ones([1])).item() - (epoch - 1) * tiles;
            let start = tile * $tile;
            let t = load_global(x, offsets = [start], shape = [$tile], other = $id);
            let total = t.$fold();
            $($publish)*
            $($lookback)*
            $($store)*
        }
    };
}

/// The scan kernels of one (element type, operator), one (two for float sums: a direction
/// each): the operator as its whole-tile fold, its tile scan, its identity and how two values
/// combine (see [`with_lookback!`]). 32-bit types give the word conversions of the packed
/// look-back ([`with_packed_lookback!`]) and take its shape ([`TILE_32`] on 128 threads,
/// windows of 32 on one warp).
macro_rules! lookback_scan {
    ($name:ident $(/ $exclusive:ident)?, $t:ident, $fold:ident, $cum:ident, $id:expr, [$($f:tt)*] [$sep:tt] $(, $to:tt $from:tt)?) => {
        lookback_scan!(@stores [$name $(/ $exclusive)?], [
            let s = t.$cum(0);
            store_global(out, $($f)* (s $sep prefix), offsets = [start]);
        ] [
            let s = t.$cum(0, exclusive = true);
            store_global(out, $($f)* (s $sep prefix), offsets = [start]);
        ], $t, $fold, $id, [$($f)*] [$sep] $(, $to $from)?);
    };
    // Float sums (`name / exclusive_name`): one kernel a direction. An exclusive float scan
    // stages its tile in shared memory (74 KB for 8192 `f32`), which in one kernel with the
    // inclusive scan held that one to three blocks an SM too (an H100, 2^28 `f32` inclusive:
    // 844 us in the shared kernel, 800 alone).
    (@stores [$name:ident / $exclusive:ident], [$($inclusive:tt)*] [$($exclusive_store:tt)*], $($rest:tt)*) => {
        lookback_scan!(@kernel $name, [$($inclusive)*], $($rest)*);
        lookback_scan!(@kernel $exclusive, [$($exclusive_store)*], $($rest)*);
    };
    // The others: one kernel, the `exclusive` argument picking the tile scan at run time.
    (@stores [$name:ident], [$($inclusive:tt)*] [$($exclusive_store:tt)*], $($rest:tt)*) => {
        lookback_scan!(@kernel $name, [
            if exclusive != 0 {
                $($exclusive_store)*
            } else {
                $($inclusive)*
            }
        ], $($rest)*);
    };
    (@kernel $name:ident, $store:tt, $t:ident, $fold:ident, $id:expr, [$($f:tt)*] [$sep:tt]) => {
        with_lookback!(
            scan_kernel,
            [$name, $store, $t, $fold, $id, 256, 8192,],
            $id,
            $fold,
            [$($f)*] [$sep]
        );
    };
    (@kernel $name:ident, $store:tt, $t:ident, $fold:ident, $id:expr, [$($f:tt)*] [$sep:tt], $to:tt $from:tt) => {
        // The delay measured for the `i32` sum (see `scan_kernel!`) and the `f32` inclusive
        // sum (2000 ns 840 us, 3000 ns 800, 4500 ns 852); the other operators take it untimed.
        with_packed_lookback!(
            scan_kernel,
            [$name, $store, $t, $fold, $id, 128, 8192,],
            $id,
            $fold,
            [$($f)*] [$sep],
            $to $from,
            delay = 3000
        );
    };
}

use super::lookback::{with_lookback, with_packed_lookback, Lookback};
use crate::prelude::*;

lookback_scan!(sum_i32, i32, sum, cumsum, 0, [] [+], [(value as u32) as u64] [(word as u32) as i32]);
lookback_scan!(sum_u32, u32, sum, cumsum, 0, [] [+], [value as u64] [word as u32]);
lookback_scan!(sum_i64, i64, sum, cumsum, 0, [] [+]);
lookback_scan!(sum_u64, u64, sum, cumsum, 0, [] [+]);
lookback_scan!(sum_f32 / sum_f32_exclusive, f32, sum, cumsum, 0.0, [] [+], [value.to_bits() as u64] [f32::from_bits(word as u32)]);
lookback_scan!(sum_f64 / sum_f64_exclusive, f64, sum, cumsum, 0.0, [] [+]);
lookback_scan!(min_i32, i32, min, cummin, 2147483647, [min] [,], [(value as u32) as u64] [(word as u32) as i32]);
lookback_scan!(min_u32, u32, min, cummin, 4294967295u32, [min] [,], [value as u64] [word as u32]);
lookback_scan!(min_i64, i64, min, cummin, 9223372036854775807i64, [min] [,]);
lookback_scan!(min_u64, u64, min, cummin, 18446744073709551615u64, [min] [,]);
lookback_scan!(max_i32, i32, max, cummax, -2147483648, [max] [,], [(value as u32) as u64] [(word as u32) as i32]);
lookback_scan!(max_u32, u32, max, cummax, 0, [max] [,], [value as u64] [word as u32]);
lookback_scan!(max_i64, i64, max, cummax, -9223372036854775808i64, [max] [,]);
lookback_scan!(max_u64, u64, max, cummax, 0, [max] [,]);

/// Elements per tile of the scan kernels of 64-bit types.
pub const TILE: usize = 8192;
/// Elements per tile of the scan kernels of 32-bit types.
pub const TILE_32: usize = 8192;

/// The operator of a device-wide scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanOp {
    /// `+` (wrapping for integers).
    Sum,
    /// The smaller value (integer types).
    Min,
    /// The larger value (integer types).
    Max,
}

/// Element types a device-wide scan takes: `i32`, `u32`, `i64`, `u64` with every
/// [`ScanOp`], `f32` and `f64` with [`ScanOp::Sum`].
pub trait ScanElement: crate::Element + Copy + Default {
    /// Elements per tile of this type's scan kernels ([`TILE`] or [`TILE_32`]).
    const TILE: usize;
    /// Whether this type's scans take `op` (checked before a run starts, so that a refused
    /// scan leaves the storage as it was).
    #[doc(hidden)]
    fn supports(op: ScanOp) -> bool;
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_scan(
        op: ScanOp,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<Self>,
        out: &impl crate::AsTensor<Self>,
        st: &Lookback<Self>,
        exclusive: bool,
    ) -> Result<(), crate::Error>;
}

/// Launches the scan kernel `$k` over `$x` into `$out` with the storage `$st`'s run.
macro_rules! launch_scan_kernel {
    ($k:ident, $stream:ident, $x:ident, $out:ident, $st:ident, $exclusive:ident) => {
        $k::launch_on(
            $stream,
            $st.tiles as u32,
            $x,
            $out,
            &$st.agg,
            &$st.inc,
            &$st.flags,
            &$st.status,
            &$st.ticket,
            $st.epoch,
            $exclusive as i32,
        )
    };
}

macro_rules! scan_element {
    // Float sums: a kernel a direction.
    ($t:ty, $tile:expr, $sum:ident / $sum_exclusive:ident) => {
        scan_element!(@impl $t, $tile, |op| op == ScanOp::Sum, |op, stream, x, out, st, exclusive| match op {
            ScanOp::Sum if exclusive => launch_scan_kernel!($sum_exclusive, stream, x, out, st, exclusive),
            _ => launch_scan_kernel!($sum, stream, x, out, st, exclusive),
        });
    };
    // Integers: every operator, the direction chosen at run time.
    ($t:ty, $tile:expr, $sum:ident, $min:ident, $max:ident) => {
        scan_element!(@impl $t, $tile, |_op| true, |op, stream, x, out, st, exclusive| match op {
            ScanOp::Sum => launch_scan_kernel!($sum, stream, x, out, st, exclusive),
            ScanOp::Min => launch_scan_kernel!($min, stream, x, out, st, exclusive),
            ScanOp::Max => launch_scan_kernel!($max, stream, x, out, st, exclusive),
        });
    };
    (@impl $t:ty, $tile:expr, |$sop:ident| $supports:expr, |$op:ident, $stream:ident, $x:ident, $out:ident, $st:ident, $exclusive:ident| $launch:expr) => {
        impl ScanElement for $t {
            const TILE: usize = $tile;
            fn supports($sop: ScanOp) -> bool {
                $supports
            }
            fn launch_scan(
                $op: ScanOp,
                $stream: &Stream<'_>,
                $x: &impl crate::AsTensor<Self>,
                $out: &impl crate::AsTensor<Self>,
                $st: &Lookback<Self>,
                $exclusive: bool,
            ) -> Result<(), crate::Error> {
                $launch
            }
        }
    };
}

scan_element!(i32, TILE_32, sum_i32, min_i32, max_i32);
scan_element!(u32, TILE_32, sum_u32, min_u32, max_u32);
scan_element!(i64, TILE, sum_i64, min_i64, max_i64);
scan_element!(u64, TILE, sum_u64, min_u64, max_u64);
scan_element!(f32, TILE_32, sum_f32 / sum_f32_exclusive);
scan_element!(f64, TILE, sum_f64 / sum_f64_exclusive);

/// The temporary storage of device-wide scans of up to `capacity` elements: each tile's
/// aggregate and inclusive prefix, its flag and the ticket counter. Reusable without clearing:
/// keep one and call [`ScanStorage::scan`] run after run.
pub struct ScanStorage<T: ScanElement> {
    lb: Lookback<T>,
}

impl<T: ScanElement> ScanStorage<T> {
    /// Storage for scans of up to `capacity` elements on `dev`.
    pub fn new(dev: &Device, capacity: usize) -> Result<Self, crate::Error> {
        Ok(ScanStorage {
            lb: Lookback::new(dev, capacity.div_ceil(T::TILE))?,
        })
    }

    /// `out[i] = x[0] op .. op x[i]` (inclusive) or the same up to `x[i - 1]`, the identity at
    /// 0 (`exclusive`), on `stream`. `x` and `out` have the same length, at most the capacity;
    /// they may be the same tensor.
    pub fn scan(
        &mut self,
        stream: &Stream<'_>,
        op: ScanOp,
        x: &impl crate::AsTensor<T>,
        out: &impl crate::AsTensor<T>,
        exclusive: bool,
    ) -> Result<(), crate::Error> {
        let n = x.tensor_len();
        check_lengths("scan", n, out.tensor_len(), (self.lb.tiles, T::TILE))?;
        if !T::supports(op) {
            return Err(crate::Error::InvalidSpec {
                kernel: "tilus::algo::scan".into(),
                message: format!(
                    "a device-wide {op:?} scan of `{}` is not provided (float scans are sums)",
                    std::any::type_name::<T>()
                ),
            });
        }
        if n == 0 {
            return Ok(());
        }
        self.lb.next_run(stream)?;
        T::launch_scan(op, stream, x, out, &self.lb, exclusive)
    }
}

/// `x` and `out` of one length `n`, at most `tiles` tiles of `tile` elements.
pub(crate) fn check_lengths(
    op: &'static str,
    n: usize,
    out: usize,
    (tiles, tile): (usize, usize),
) -> Result<(), crate::Error> {
    same_length(op, n, out)?;
    within_capacity(n, tiles * tile)
}

/// `got` elements where `expected` are needed.
pub(crate) fn same_length(
    op: &'static str,
    expected: usize,
    got: usize,
) -> Result<(), crate::Error> {
    if got != expected {
        return Err(crate::Error::LengthMismatch { op, expected, got });
    }
    Ok(())
}

/// `n` elements in a storage made for at most `capacity`.
pub(crate) fn within_capacity(n: usize, capacity: usize) -> Result<(), crate::Error> {
    if n > capacity {
        return Err(crate::Error::LengthMismatch {
            op: "tilus::algo (elements for the storage's capacity)",
            expected: capacity,
            got: n,
        });
    }
    Ok(())
}

/// `out[i] = x[0] + .. + x[i]` on `dev`'s default stream, with temporary storage.
pub fn inclusive_scan<T: ScanElement>(
    dev: &Device,
    x: &impl crate::AsTensor<T>,
    out: &impl crate::AsTensor<T>,
) -> Result<(), crate::Error> {
    let mut st = ScanStorage::new(dev, x.tensor_len())?;
    st.scan(&dev.default_stream(), ScanOp::Sum, x, out, false)
}

/// `out[i] = x[0] + .. + x[i - 1]`, `out[0] = 0`, on `dev`'s default stream, with temporary
/// storage.
pub fn exclusive_scan<T: ScanElement>(
    dev: &Device,
    x: &impl crate::AsTensor<T>,
    out: &impl crate::AsTensor<T>,
) -> Result<(), crate::Error> {
    let mut st = ScanStorage::new(dev, x.tensor_len())?;
    st.scan(&dev.default_stream(), ScanOp::Sum, x, out, true)
}
