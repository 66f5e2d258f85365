//! Many-bin histograms in distributed shared memory: 65,536 bins of `i32` (256 KiB) do not fit
//! in one block's shared memory, but they fit in a thread-block cluster's. Each cluster holds
//! one copy of the histogram spread over its blocks (`cluster_shared_tensor`: block `r` owns
//! bins `r * BINS / C ..`); every block counts its tiles into whichever block owns each bin
//! (`.shared::cluster` atomics), and at the end each block adds its own part to the global
//! histogram. Compared with counting straight into global memory (`global_atomics`) and, where
//! the bins fit one block, with a block-private shared histogram. The exchange variants
//! (`x2_*`) trade every remote atomic for a coalesced remote load: the two blocks of a cluster
//! swap their input tiles through distributed shared memory and each counts only its own bins;
//! the `xp2_*` variants also issue the next tile's global load before counting the current one.
//!
//! cargo run --release --example histogram_cluster                    # the CPU emulator
//! cargo run --release --example histogram_cluster --features cuda    # an H100/H200 (sm_90)
//!
//! Inputs: uniform bins and a skewed (Zipf-like) distribution, plus some out-of-range values;
//! every result is checked against a CPU count. On a GPU it also times every variant over 2^28
//! values (pass `-- LOG2_N` to change it) for 16,384, 65,536 and 262,144 bins and prints values
//! per second and the ratio to global atomics measured in the same run.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tilus::prelude::*;

/// One kernel per (bins, cluster size `C`): `PART = BINS / C` bins per block. `per_sm`: the
/// blocks that shared memory lets share an SM, at most 3 (more would cost spills), so that
/// registers do not become the tighter limit.
macro_rules! cluster_histogram {
    ($name:ident, bins = $bins:literal, cluster = $c:literal, part = $part:literal, flush = $f:literal, per_sm = $m:literal) => {
        #[tile_kernel(threads = 512, cluster = $c, min_blocks_per_sm = $m)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = cluster_shared_tensor(i32, [$bins]);
            let first = cluster_rank() * $part;
            // Zero this block's part, then wait until every block of the cluster has (and is
            // running: its shared memory exists).
            for j in (0..$part).step_by($f) {
                let mine = first + j + arange($f);
                store_shared_scatter(counts, dim = 0, indices = mine, values = 0);
            }
            cluster_sync();
            let n = values.len();
            for start in (block_idx() * 8192..n).step_by(grid_dim() * 8192) {
                // Past the end, lanes read -1: out of range, skipped by the scatter.
                let bins = load_global(values, offsets = [start], shape = [8192], other = -1);
                atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
            }
            // Every block's counts are in; then each block flushes its own part.
            cluster_sync();
            for j in (0..$part).step_by($f) {
                let mine = first + j + arange($f);
                let c = atomic_load(counts, mine, sem = relaxed);
                atomic::global_scatter_add(
                    hist,
                    dim = 0,
                    indices = mine,
                    values = c,
                    mask = c != 0,
                );
            }
        }
    };
}

cluster_histogram!(
    c2_64k,
    bins = 65536,
    cluster = 2,
    part = 32768,
    flush = 4096,
    per_sm = 1
);
cluster_histogram!(
    c4_64k,
    bins = 65536,
    cluster = 4,
    part = 16384,
    flush = 4096,
    per_sm = 3
);
cluster_histogram!(
    c8_64k,
    bins = 65536,
    cluster = 8,
    part = 8192,
    flush = 4096,
    per_sm = 3
);
cluster_histogram!(
    c16_64k,
    bins = 65536,
    cluster = 16,
    part = 4096,
    flush = 4096,
    per_sm = 3
);
cluster_histogram!(
    c2_16k,
    bins = 16384,
    cluster = 2,
    part = 8192,
    flush = 4096,
    per_sm = 3
);
cluster_histogram!(
    c4_16k,
    bins = 16384,
    cluster = 4,
    part = 4096,
    flush = 4096,
    per_sm = 3
);
cluster_histogram!(
    c8_256k,
    bins = 262144,
    cluster = 8,
    part = 32768,
    flush = 4096,
    per_sm = 1
);
cluster_histogram!(
    c16_256k,
    bins = 262144,
    cluster = 16,
    part = 16384,
    flush = 4096,
    per_sm = 3
);

/// The exchange form for a cluster of 2: no remote atomics at all. Each block owns half the
/// bins in a block-local shared tensor; per step, each block of the cluster loads a tile,
/// publishes it in its part of a distributed staging tensor, and after a cluster barrier counts
/// the bins it owns from its own tile and from its peer's (read with coalesced
/// `ld.shared::cluster` loads). A scatter skips indices out of range, so `bins - first` counts
/// exactly the owned bins. Two staging slots alternate, so one barrier per step suffices: a
/// block rewrites a slot only after the next barrier, which its peer reaches only after reading.
macro_rules! exchange_histogram {
    ($name:ident, bins = $bins:literal, part = $part:literal, threads = $t:literal) => {
        #[tile_kernel(threads = $t, cluster = 2)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = shared_tensor(i32, [$part]);
            let stage = cluster_shared_tensor(i32, [32768]);
            let me = cluster_rank();
            let peer = 1 - me;
            let first = me * $part;
            for j in (0..$part).step_by(4096) {
                store_shared_scatter(counts, dim = 0, indices = j + arange(4096), values = 0);
            }
            cluster_sync();
            let n = values.len();
            let step = (grid_dim() / 2) * 16384;
            for start in (cluster_idx() * 16384..n).step_by(step) {
                // Slot `parity` of block `r`: rows (2 r + parity) * 8192 ..
                let parity = (start / step) % 2;
                let bins = load_global(
                    values,
                    offsets = [start + me * 8192],
                    shape = [8192],
                    other = -1,
                );
                store_shared_scatter(
                    stage,
                    dim = 0,
                    indices = (2 * me + parity) * 8192 + arange(8192),
                    values = bins,
                );
                cluster_sync();
                let theirs = atomic_load(
                    stage,
                    (2 * peer + parity) * 8192 + arange(8192),
                    sem = relaxed,
                );
                atomic::shared_scatter_add(counts, dim = 0, indices = bins - first, values = 1);
                atomic::shared_scatter_add(counts, dim = 0, indices = theirs - first, values = 1);
            }
            sync();
            for j in (0..$part).step_by(4096) {
                let mine = j + arange(4096);
                let c = atomic_load(counts, mine, sem = relaxed, scope = cta);
                atomic::global_scatter_add(
                    hist,
                    dim = 0,
                    indices = first + mine,
                    values = c,
                    mask = c != 0,
                );
            }
        }
    };
}

/// The exchange form with the next tile's global load issued before this step's counting, so
/// that its latency hides behind the atomics (one block per SM leaves no other block to hide
/// it): the tile waits in registers across the loop's back edge.
macro_rules! exchange_prefetch_histogram {
    ($name:ident, bins = $bins:literal, part = $part:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = 512, cluster = 2)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = shared_tensor(i32, [$part]);
            let stage = cluster_shared_tensor(i32, [4 * $tile]);
            let me = cluster_rank();
            let peer = 1 - me;
            let first = me * $part;
            for j in (0..$part).step_by(4096) {
                store_shared_scatter(counts, dim = 0, indices = j + arange(4096), values = 0);
            }
            cluster_sync();
            let n = values.len();
            let step = (grid_dim() / 2) * (2 * $tile);
            let begin = cluster_idx() * (2 * $tile);
            let mut bins = load_global(
                values,
                offsets = [begin + me * $tile],
                shape = [$tile],
                other = -1,
            );
            for start in (begin..n).step_by(step) {
                let parity = (start / step) % 2;
                store_shared_scatter(
                    stage,
                    dim = 0,
                    indices = (2 * me + parity) * $tile + arange($tile),
                    values = bins,
                );
                cluster_sync();
                let next = load_global(
                    values,
                    offsets = [start + step + me * $tile],
                    shape = [$tile],
                    other = -1,
                );
                let theirs = atomic_load(
                    stage,
                    (2 * peer + parity) * $tile + arange($tile),
                    sem = relaxed,
                );
                atomic::shared_scatter_add(counts, dim = 0, indices = bins - first, values = 1);
                atomic::shared_scatter_add(counts, dim = 0, indices = theirs - first, values = 1);
                bins = next;
            }
            sync();
            for j in (0..$part).step_by(4096) {
                let mine = j + arange(4096);
                let c = atomic_load(counts, mine, sem = relaxed, scope = cta);
                atomic::global_scatter_add(
                    hist,
                    dim = 0,
                    indices = first + mine,
                    values = c,
                    mask = c != 0,
                );
            }
        }
    };
}

exchange_histogram!(x2_64k, bins = 65536, part = 32768, threads = 512);
exchange_prefetch_histogram!(xp2_64k, bins = 65536, part = 32768, tile = 8192);
exchange_prefetch_histogram!(xp2_64k_12k, bins = 65536, part = 32768, tile = 12288);
exchange_prefetch_histogram!(xp2_16k, bins = 16384, part = 8192, tile = 8192);
exchange_histogram!(x2_64k_t1024, bins = 65536, part = 32768, threads = 1024);
exchange_histogram!(x2_16k, bins = 16384, part = 8192, threads = 512);

/// 16,384 bins fit one block (64 KiB): the block-private histogram, for comparison.
#[tile_kernel(threads = 512)]
fn block_16k(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    let counts = shared_tensor(i32, [16384]);
    for j in (0..16384).step_by(4096) {
        store_shared_scatter(counts, dim = 0, indices = j + arange(4096), values = 0);
    }
    sync();
    let n = values.len();
    for start in (block_idx() * 8192..n).step_by(grid_dim() * 8192) {
        let bins = load_global(values, offsets = [start], shape = [8192], other = -1);
        atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
    }
    sync();
    for j in (0..16384).step_by(4096) {
        let mine = j + arange(4096);
        let c = atomic_load(counts, mine, sem = relaxed, scope = cta);
        atomic::global_scatter_add(hist, dim = 0, indices = mine, values = c, mask = c != 0);
    }
}

/// The baseline: every value is one atomic add in global memory.
#[tile_kernel(threads = 512)]
fn global_atomics(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    let n = values.len();
    for start in (block_idx() * 8192..n).step_by(grid_dim() * 8192) {
        let bins = load_global(values, offsets = [start], shape = [8192], other = -1);
        atomic::global_scatter_add(hist, dim = 0, indices = bins, values = 1);
    }
}

type Launch = fn(
    &tilus::Device,
    u32,
    &tilus::GlobalTensor<i32>,
    &tilus::GlobalTensor<i32>,
) -> Result<(), tilus::Error>;

/// (bins, label, blocks per cluster, launcher).
fn variants() -> Vec<(usize, &'static str, u32, Launch)> {
    vec![
        (16384, "global atomics", 1, |d, g, v, h| {
            global_atomics::launch(d, g, v, h)
        }),
        (16384, "block-private shared", 1, |d, g, v, h| {
            block_16k::launch(d, g, v, h)
        }),
        (16384, "cluster of 2", 2, |d, g, v, h| {
            c2_16k::launch(d, g, v, h)
        }),
        (16384, "cluster of 2, exchange", 2, |d, g, v, h| {
            x2_16k::launch(d, g, v, h)
        }),
        (
            16384,
            "cluster of 2, exchange, prefetch",
            2,
            |d, g, v, h| xp2_16k::launch(d, g, v, h),
        ),
        (16384, "cluster of 4", 4, |d, g, v, h| {
            c4_16k::launch(d, g, v, h)
        }),
        (65536, "global atomics", 1, |d, g, v, h| {
            global_atomics::launch(d, g, v, h)
        }),
        (65536, "cluster of 2", 2, |d, g, v, h| {
            c2_64k::launch(d, g, v, h)
        }),
        (65536, "cluster of 2, exchange", 2, |d, g, v, h| {
            x2_64k::launch(d, g, v, h)
        }),
        (
            65536,
            "cluster of 2, exchange, prefetch",
            2,
            |d, g, v, h| xp2_64k::launch(d, g, v, h),
        ),
        (
            65536,
            "cluster of 2, exchange, prefetch, tile 12288",
            2,
            |d, g, v, h| xp2_64k_12k::launch(d, g, v, h),
        ),
        (
            65536,
            "cluster of 2, exchange, 1024 threads",
            2,
            |d, g, v, h| x2_64k_t1024::launch(d, g, v, h),
        ),
        (65536, "cluster of 4", 4, |d, g, v, h| {
            c4_64k::launch(d, g, v, h)
        }),
        (65536, "cluster of 8", 8, |d, g, v, h| {
            c8_64k::launch(d, g, v, h)
        }),
        (65536, "cluster of 16", 16, |d, g, v, h| {
            c16_64k::launch(d, g, v, h)
        }),
        (262144, "global atomics", 1, |d, g, v, h| {
            global_atomics::launch(d, g, v, h)
        }),
        (262144, "cluster of 8", 8, |d, g, v, h| {
            c8_256k::launch(d, g, v, h)
        }),
        (262144, "cluster of 16", 16, |d, g, v, h| {
            c16_256k::launch(d, g, v, h)
        }),
    ]
}

/// xorshift64: the example needs no dependencies.
/// `n` values in `0..bins`, uniform or skewed (bin `k` about as likely as `1 / (k + 1)`: a
/// Zipf-like law, by inverting its continuous approximation), one in 1000 out of range.
fn values(n: usize, bins: usize, skewed: bool, seed: u64) -> Vec<i32> {
    let mut r = StdRng::seed_from_u64(seed);
    let ln_bins = (bins as f64 + 1.0).ln();
    (0..n)
        .map(|i| {
            let x: u64 = r.gen();
            if i % 1000 == 999 {
                return -1 - (x % 5) as i32;
            }
            if skewed {
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                (((u * ln_bins).exp() - 1.0) as usize).min(bins - 1) as i32
            } else {
                (x % bins as u64) as i32
            }
        })
        .collect()
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let gpu = dev.is_gpu();
    let log2_n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(if gpu { 28 } else { 17 });
    let n = (1usize << log2_n) + 4321; // not a multiple of the tile
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    for bins in [16384usize, 65536, 262144] {
        for skewed in [false, true] {
            let label_in = if skewed { "skewed" } else { "uniform" };
            let data = values(n, bins, skewed, seed ^ bins as u64);
            let mut expected = vec![0i32; bins];
            for &v in &data {
                if (0..bins as i32).contains(&v) {
                    expected[v as usize] += 1;
                }
            }
            let input = dev.upload(&data)?;
            let mut baseline = None;
            for (b, label, c, launch) in variants() {
                if b != bins {
                    continue;
                }
                // Two waves of blocks on a 132-SM GPU, a whole number of clusters.
                let blocks =
                    (264u32.div_ceil(c) * c).min((n.div_ceil(8192) as u32).div_ceil(c) * c);
                let hist = dev.zeros::<i32>(bins)?;
                if let Err(e) = launch(&dev, blocks, &input, &hist) {
                    // A cluster shape this GPU cannot schedule (16 needs non-portable sizes).
                    println!("{bins} bins, {label_in}, {label}: not run: {e}");
                    continue;
                }
                let got = hist.download()?;
                if got != expected {
                    let bad = got
                        .iter()
                        .zip(&expected)
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    eprintln!(
                        "{bins} bins, {label_in}, {label}: MISMATCH at bin {bad}: got {}, expected {}",
                        got[bad], expected[bad]
                    );
                    std::process::exit(1);
                }
                if !gpu {
                    println!("{bins} bins, {label_in}, {label}: {n} values, {blocks} blocks: matches the CPU count");
                    continue;
                }
                // (The counts keep accumulating over the repetitions; they were checked above.)
                let times = dev.time_ms(15, || launch(&dev, blocks, &input, &hist))?;
                let mut sorted = times[3..].to_vec();
                sorted.sort_by(|a, b| a.total_cmp(b));
                let ms = sorted[sorted.len() / 2];
                let rate = n as f64 / ms / 1e6;
                let base = *baseline.get_or_insert(rate);
                println!(
                    "{bins} bins, {label_in}, {label}: {blocks} blocks, median {ms:.3} ms, {rate:.2} Gvalues/s ({:.0} GB/s read), {:.2}x global atomics (checked)",
                    rate * 4.0,
                    rate / base
                );
            }
        }
    }
    Ok(())
}
