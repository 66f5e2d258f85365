//! `histogram_even`: counts of samples in `bins` equal-width bins over `[lower, upper)`, as
//! CUB's `DeviceHistogram::HistogramEven`, with the kernel chosen by the number of bins among
//! those the examples measured (`examples/histogram.rs`, `examples/histogram_cluster.rs`):
//!
//! | bins | kernel | where the counts live while counting |
//! | --- | --- | --- |
//! | up to 2,048 | block-private | 8 KiB of shared memory per block |
//! | up to 16,384 | block-private | 64 KiB of shared memory per block |
//! | up to 65,536, clusters (sm_90) | cluster of 2, exchange | each block of a pair owns half the bins; the pair swaps its input tiles through distributed shared memory, so every count is a local shared atomic |
//! | more, or no clusters | global | one global atomic per sample |
//!
//! Every kernel then adds its non-zero counts to the result with global atomics, so the result
//! is exact and the same on every backend and run (integer adds commute).
//!
//! **Which bin.** A sample `x` counts when `lower <= x < upper` (NaN never counts).
//! * Integer samples: bin `(x - lower) * bins / (upper - lower)`, exactly, in integer
//!   arithmetic (an `f64` estimate corrected by one exact step, so no 64-bit division runs per
//!   sample; when the width is 1 the bin is `x - lower`). For 64-bit samples the range
//!   `upper - lower` is at most 2^32.
//! * Float samples: bin `floor((x - lower) * scale)`, computed in the sample's type with
//!   `scale = bins / (upper - lower)` (computed in `f64`, rounded to the sample's type), and at
//!   most `bins - 1`. Near a bin edge that can differ by one from the exact quotient
//!   `(x - lower) * bins / (upper - lower)`; the emulator computes the same bits as the GPU.

use crate::prelude::*;

/// Samples per tile: 16 per thread of a 512-thread block.
const TILE: usize = 8192;

/// Expands `histogram_kernels!($args.., [code])` with the code that puts the bin of each sample
/// of the tile `x` into `bin` (an `i32` tile, -1 where the sample does not count). `int` form:
/// `d = x - lower` in the unsigned type of the sample's width (`$wide`: `u32` up to 32 bits);
/// the bin is `d` when the width is 1 (`unit != 0`), otherwise the exact
/// quotient `d * bins / range` from an `f64` estimate, corrected once each way with exact
/// 64-bit products (the estimate is off by less than one: `d * bins < 2^63` and `f64` keeps 53
/// bits). `float` form: as the module documents.
macro_rules! with_bin_of {
    (int $t:ident $wide:ident, $($args:tt)*) => {
        histogram_kernels!($($args)*, [
            let valid = (x >= lower) & (x < upper);
            // The offset in the unsigned type of the sample's width (wrapping: exact where
            // the sample counts), and the bin in 32 bits when the width is 1.
            let d = x as $wide - lower as $wide;
            let mut q = d as i32;
            if unit == 0 {
                let d = d as u64;
                let p = d * (bins as u64);
                let e = ((d as f64) * scale) as u64;
                let e = if e * range > p { e - 1 } else { e };
                q = (if (e + 1) * range <= p { e + 1 } else { e }) as i32;
            }
            let bin = if valid { q } else { -1 };
        ]);
    };
    (float $t:ident $wide:ident, $($args:tt)*) => {
        histogram_kernels!($($args)*, [
            let valid = (x >= lower) & (x < upper);
            let q = ((x - lower) * (scale as $t)).floor() as i32;
            let bin = if valid { q.min(bins - 1) } else { -1 };
        ]);
    };
}

/// The four histogram kernels of one sample type. Every kernel takes the same arguments:
/// `lower`/`upper` bound the counted samples, `scale` is `bins / (upper - lower)` in `f64`,
/// `range` is `upper - lower` for integers and `unit` whether it equals `bins`.
macro_rules! histogram_kernels {
    ($t:ident, [$small:ident, $large:ident, $pair:ident, $global:ident], [$($bin:tt)*]) => {
        block_private!($small, $t, 2048, [$($bin)*]);
        block_private!($large, $t, 16384, [$($bin)*]);

        /// 16,385 to 65,536 bins: clusters of 2. Block `me` owns bins `me * part ..` in its own
        /// shared memory; per step each block loads a tile, publishes its bins in its slot of
        /// the pair's distributed staging tensor, and after a cluster barrier counts the bins it
        /// owns among its own tile's and its peer's (`examples/histogram_cluster.rs`, whose
        /// exchange form this is). Two slots alternate, so one barrier a step suffices.
        #[tile_kernel(threads = 512, cluster = 2)]
        fn $pair(
            samples: GlobalTensor<$t>,
            counts: GlobalTensor<u32>,
            lower: $t,
            upper: $t,
            scale: f64,
            range: u64,
            unit: i32,
        ) {
            let bins = counts.len() as i32;
            let owned = shared_tensor(u32, [32768]);
            let stage = cluster_shared_tensor(i32, [32768]);
            let me = cluster_rank();
            let part = (bins + 1) / 2;
            let first = me * part;
            for j in (0..part).step_by(4096) {
                store_shared_scatter(owned, dim = 0, indices = j + arange(4096), values = 0u32);
            }
            cluster_sync();
            let n = samples.len() as i64;
            let step = (grid_dim() / 2) as i64 * 16384;
            for start in ((cluster_idx() as i64) * 16384..n).step_by(step) {
                let parity = ((start / step) % 2) as i32;
                let x = load_global(samples, offsets = [start + (me * 8192) as i64], shape = [8192], other = upper);
                $($bin)*
                store_shared_scatter(stage, dim = 0, indices = (2 * me + parity) * 8192 + arange(8192), values = bin);
                cluster_sync();
                let theirs = atomic_load(stage, (2 * (1 - me) + parity) * 8192 + arange(8192), sem = relaxed);
                let local = bin - first;
                let remote = theirs - first;
                atomic::shared_scatter_add(owned, dim = 0, indices = local, values = 1u32, mask = local < part);
                atomic::shared_scatter_add(owned, dim = 0, indices = remote, values = 1u32, mask = remote < part);
            }
            sync();
            for j in (0..part).step_by(4096) {
                let mine = j + arange(4096);
                let c = atomic_load(owned, mine, sem = relaxed, scope = cta);
                atomic::global_scatter_add(counts, dim = 0, indices = first + mine, values = c, mask = (c != 0u32) & (mine < part));
            }
        }

        /// Any number of bins: one global atomic per counted sample.
        #[tile_kernel(threads = 512)]
        fn $global(
            samples: GlobalTensor<$t>,
            counts: GlobalTensor<u32>,
            lower: $t,
            upper: $t,
            scale: f64,
            range: u64,
            unit: i32,
        ) {
            let bins = counts.len() as i32;
            let n = samples.len() as i64;
            for start in ((block_idx() as i64) * 8192..n).step_by((grid_dim() as i64) * 8192) {
                let x = load_global(samples, offsets = [start], shape = [8192], other = upper);
                $($bin)*
                atomic::global_scatter_add(counts, dim = 0, indices = bin, values = 1u32);
            }
        }
    };
}

/// A block-private histogram of up to `$cap` bins: the block counts its tiles in shared memory,
/// then adds its non-zero counts to the result.
macro_rules! block_private {
    ($name:ident, $t:ident, $cap:literal, [$($bin:tt)*]) => {
        #[tile_kernel(threads = 512)]
        fn $name(
            samples: GlobalTensor<$t>,
            counts: GlobalTensor<u32>,
            lower: $t,
            upper: $t,
            scale: f64,
            range: u64,
            unit: i32,
        ) {
            let bins = counts.len() as i32;
            let block = shared_tensor(u32, [$cap]);
            for j in (0..bins).step_by(2048) {
                store_shared_scatter(block, dim = 0, indices = j + arange(2048), values = 0u32);
            }
            sync();
            let n = samples.len() as i64;
            for start in ((block_idx() as i64) * 8192..n).step_by((grid_dim() as i64) * 8192) {
                // Past the end, lanes read `upper`: outside the range, not counted.
                let x = load_global(samples, offsets = [start], shape = [8192], other = upper);
                $($bin)*
                atomic::shared_scatter_add(block, dim = 0, indices = bin, values = 1u32);
            }
            sync();
            for j in (0..bins).step_by(2048) {
                let mine = j + arange(2048);
                let c = atomic_load(block, mine, sem = relaxed, scope = cta);
                atomic::global_scatter_add(counts, dim = 0, indices = mine, values = c, mask = c != 0u32);
            }
        }
    };
}

/// Zeroes the counts before a histogram.
#[tile_kernel(threads = 256)]
fn clear(counts: GlobalTensor<u32>) {
    let n = counts.len() as i64;
    for start in ((block_idx() as i64) * 4096..n).step_by((grid_dim() as i64) * 4096) {
        store_global(counts, zeros([4096]), offsets = [start]);
    }
}

/// Which kernel counts a histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Kernel {
    /// Up to 2,048 bins in shared memory.
    Small,
    /// Up to 16,384 bins in shared memory.
    Large,
    /// Up to 65,536 bins over a cluster of 2.
    Pair,
    /// Global atomics.
    Global,
}

impl Kernel {
    /// The kernel for `bins` bins on a device that can (or cannot) run clusters, and the blocks
    /// per multiprocessor it is launched with (what its shared memory lets run at once).
    fn choose(bins: usize, clusters: bool) -> (Kernel, u32) {
        match bins {
            0..=2048 => (Kernel::Small, 4),
            2049..=16384 => (Kernel::Large, 3),
            16385..=65536 if clusters => (Kernel::Pair, 1),
            _ => (Kernel::Global, 4),
        }
    }
}

/// How samples map to bins, as the kernels take it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Binning {
    scale: f64,
    range: u64,
    unit: i32,
}

/// Sample types of [`histogram_even`]: `u8 i8 u16 i16 u32 i32 u64 i64 f32 f64`.
pub trait HistogramSample: crate::Element + Copy + PartialOrd + std::fmt::Debug {
    #[doc(hidden)]
    fn binning(lower: Self, upper: Self, bins: usize) -> Result<Binning, String>;
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_histogram(
        kernel: Kernel,
        stream: &Stream<'_>,
        grid: u32,
        samples: &impl crate::AsTensor<Self>,
        counts: &impl crate::AsTensor<u32>,
        lower: Self,
        upper: Self,
        b: Binning,
    ) -> Result<(), crate::Error>;
}

/// The exact binning of integer samples: `range = upper - lower`, at most 2^32 so that
/// `d * bins` (with `d < range`, `bins < 2^31`) fits 64 bits.
fn int_binning(range: u128, bins: usize) -> Result<Binning, String> {
    if range == 0 {
        return Err("the range lower..upper is empty".into());
    }
    if range > 1 << 32 {
        return Err(format!(
            "a range of {range} values is wider than 2^32, the widest this histogram bins exactly"
        ));
    }
    Ok(Binning {
        scale: bins as f64 / range as f64,
        range: range as u64,
        unit: (range == bins as u128) as i32,
    })
}

/// Float samples: `scale = bins / (upper - lower)`, with both bounds finite and `lower < upper`.
fn float_binning(lower: f64, upper: f64, bins: usize) -> Result<Binning, String> {
    if !(lower.is_finite() && upper.is_finite() && lower < upper) {
        return Err(format!(
            "the range {lower}..{upper} must be finite and not empty"
        ));
    }
    Ok(Binning {
        scale: bins as f64 / (upper - lower),
        range: 0,
        unit: 0,
    })
}

macro_rules! histogram_sample {
    ($t:ident $wide:ident, $class:ident, $kernels:tt) => {
        with_bin_of!($class $t $wide, $t, $kernels);
        histogram_sample!(@impl $t, $class, $kernels);
    };
    (@impl $t:ident, $class:ident, [$small:ident, $large:ident, $pair:ident, $global:ident]) => {
        impl HistogramSample for $t {
            fn binning(lower: Self, upper: Self, bins: usize) -> Result<Binning, String> {
                histogram_sample!(@binning $class, lower, upper, bins)
            }
            fn launch_histogram(
                kernel: Kernel,
                stream: &Stream<'_>,
                grid: u32,
                samples: &impl crate::AsTensor<Self>,
                counts: &impl crate::AsTensor<u32>,
                lower: Self,
                upper: Self,
                b: Binning,
            ) -> Result<(), crate::Error> {
                let launch = match kernel {
                    Kernel::Small => $small::launch_on,
                    Kernel::Large => $large::launch_on,
                    Kernel::Pair => $pair::launch_on,
                    Kernel::Global => $global::launch_on,
                };
                launch(stream, grid, samples, counts, lower, upper, b.scale, b.range, b.unit)
            }
        }
    };
    (@binning int, $lower:ident, $upper:ident, $bins:ident) => {
        if $lower < $upper {
            int_binning(($upper as i128 - $lower as i128) as u128, $bins)
        } else {
            int_binning(0, $bins)
        }
    };
    (@binning float, $lower:ident, $upper:ident, $bins:ident) => {
        float_binning($lower as f64, $upper as f64, $bins)
    };
}

histogram_sample!(u8 u32, int, [hist_small_u8, hist_large_u8, hist_pair_u8, hist_global_u8]);
histogram_sample!(i8 u32, int, [hist_small_i8, hist_large_i8, hist_pair_i8, hist_global_i8]);
histogram_sample!(u16 u32, int, [hist_small_u16, hist_large_u16, hist_pair_u16, hist_global_u16]);
histogram_sample!(i16 u32, int, [hist_small_i16, hist_large_i16, hist_pair_i16, hist_global_i16]);
histogram_sample!(u32 u32, int, [hist_small_u32, hist_large_u32, hist_pair_u32, hist_global_u32]);
histogram_sample!(i32 u32, int, [hist_small_i32, hist_large_i32, hist_pair_i32, hist_global_i32]);
histogram_sample!(u64 u64, int, [hist_small_u64, hist_large_u64, hist_pair_u64, hist_global_u64]);
histogram_sample!(i64 u64, int, [hist_small_i64, hist_large_i64, hist_pair_i64, hist_global_i64]);
histogram_sample!(f32 f32, float, [hist_small_f32, hist_large_f32, hist_pair_f32, hist_global_f32]);
histogram_sample!(f64 f64, float, [hist_small_f64, hist_large_f64, hist_pair_f64, hist_global_f64]);

/// Count types of [`histogram_even`]: `u32` and `i32` (the same adds, wrapping past 2^32 - 1
/// samples in one bin).
pub trait HistogramCount: crate::Element + Copy {}
impl HistogramCount for u32 {}
impl HistogramCount for i32 {}

/// The most bins: the kernels index bins with `i32`.
const MAX_BINS: usize = i32::MAX as usize;

/// `counts[b]` = the number of samples in bin `b` of `counts.len()` equal-width bins over
/// `[lower, upper)`, on `stream`, as CUB's `HistogramEven` with `num_levels = counts.len() + 1`
/// (the module's docs say which sample goes to which bin, and which kernel runs). The counts are
/// overwritten. Samples outside the range, and NaN, are not counted.
///
/// Errors, before anything runs: no bins, more than `i32::MAX`, an empty range (`lower >=
/// upper`), float bounds that are not finite, an integer range wider than 2^32.
pub fn histogram_even_on<S: HistogramSample, C: HistogramCount>(
    stream: &Stream<'_>,
    samples: &impl crate::AsTensor<S>,
    counts: &impl crate::AsTensor<C>,
    lower: S,
    upper: S,
) -> Result<(), crate::Error> {
    const OP: &str = "tilus::algo::histogram_even";
    let bins = counts.tensor_len();
    let invalid = |reason: String| crate::Error::InvalidArgument { op: OP, reason };
    if bins == 0 || bins > MAX_BINS {
        return Err(invalid(format!(
            "{bins} bins: a histogram has 1 to {MAX_BINS} bins"
        )));
    }
    let binning = S::binning(lower, upper, bins).map_err(invalid)?;
    let counts = counts.bitcast::<u32>()?;
    let dev = stream.device();
    let blocks = dev.multiprocessors();
    clear::launch_on(
        stream,
        bins.div_ceil(4096).min(blocks as usize * 4) as u32,
        &counts,
    )?;
    let tiles = samples.tensor_len().div_ceil(TILE);
    if tiles == 0 {
        return Ok(());
    }
    let (kernel, per_sm) = Kernel::choose(bins, dev.supports_clusters());
    let mut grid = (blocks * per_sm).min(tiles as u32).max(1);
    if kernel == Kernel::Pair {
        // Clusters of 2, and every pair busy: a pair takes two tiles a step.
        grid = (blocks * 2).min(tiles.div_ceil(2) as u32 * 2).max(2);
    }
    S::launch_histogram(
        kernel, stream, grid, samples, &counts, lower, upper, binning,
    )
}

/// [`histogram_even_on`] on `dev`'s default stream.
pub fn histogram_even<S: HistogramSample, C: HistogramCount>(
    dev: &Device,
    samples: &impl crate::AsTensor<S>,
    counts: &impl crate::AsTensor<C>,
    lower: S,
    upper: S,
) -> Result<(), crate::Error> {
    histogram_even_on(&dev.default_stream(), samples, counts, lower, upper)
}
