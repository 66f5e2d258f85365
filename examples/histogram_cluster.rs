//! A 65,536-bin histogram in distributed shared memory: the bins (256 KiB of `i32`) do not fit
//! in one block's shared memory, but they fit in a thread-block cluster's. Each cluster holds
//! one copy of the histogram spread over its blocks (`cluster_shared_tensor`: block `r` owns
//! bins `r * 65536 / C ..`); every block counts its tiles into whichever block owns each bin
//! (`.shared::cluster` atomics), and at the end each block adds its own part to the global
//! histogram. Compared with counting straight into global memory (`global_atomics`).
//!
//! cargo run --release --example histogram_cluster                    # the CPU emulator
//! cargo run --release --example histogram_cluster --features cuda    # an H100/H200 (sm_90)
//!
//! Every result is checked against a CPU count. On a GPU it also times every variant over
//! 2^28 values (pass `-- LOG2_N` to change it) and prints values per second and the ratio to
//! global atomics measured in the same run.

use tilus::prelude::*;

/// One kernel per cluster size `C`: `PART = 65536 / C` bins per block.
macro_rules! cluster_histogram {
    ($name:ident, cluster = $c:literal, part = $part:literal) => {
        #[tile_kernel(threads = 512, cluster = $c)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = cluster_shared_tensor(i32, [65536]);
            let first = cluster_rank() * $part;
            // Zero this block's part, then wait until every block of the cluster has (and is
            // running: its shared memory exists).
            for j in (0..$part).step_by(4096) {
                let mine = first + j + arange(4096);
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
            for j in (0..$part).step_by(4096) {
                let mine = first + j + arange(4096);
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

cluster_histogram!(cluster2, cluster = 2, part = 32768);
cluster_histogram!(cluster4, cluster = 4, part = 16384);
cluster_histogram!(cluster8, cluster = 8, part = 8192);
cluster_histogram!(cluster16, cluster = 16, part = 4096);

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

fn variants() -> Vec<(&'static str, u32, Launch)> {
    vec![
        ("global atomics", 1, |d, g, v, h| {
            global_atomics::launch(d, g, v, h)
        }),
        ("cluster of 2", 2, |d, g, v, h| cluster2::launch(d, g, v, h)),
        ("cluster of 4", 4, |d, g, v, h| cluster4::launch(d, g, v, h)),
        ("cluster of 8", 8, |d, g, v, h| cluster8::launch(d, g, v, h)),
        ("cluster of 16", 16, |d, g, v, h| {
            cluster16::launch(d, g, v, h)
        }),
    ]
}

/// Uniform values in `0..65536` plus a few out-of-range ones (xorshift: no dependencies).
fn random_values(n: usize, mut seed: u64) -> Vec<i32> {
    (0..n)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if i % 1000 == 999 {
                -1 - (seed % 5) as i32
            } else {
                (seed % 65536) as i32
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
        .unwrap_or(if gpu { 28 } else { 18 });
    let n = (1usize << log2_n) + 4321; // not a multiple of the tile
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let data = random_values(n, seed);
    let mut expected = vec![0i32; 65536];
    for &v in &data {
        if (0..65536).contains(&v) {
            expected[v as usize] += 1;
        }
    }
    let values = dev.upload(&data)?;
    let mut baseline = None;
    for (label, c, launch) in variants() {
        if c == 16 && gpu && !dev.supports_clusters() {
            continue;
        }
        // Two waves of blocks on a 132-SM GPU, a whole number of clusters.
        let blocks = (264u32.div_ceil(c) * c).min((n.div_ceil(8192) as u32).div_ceil(c) * c);
        let hist = dev.zeros::<i32>(65536)?;
        if let Err(e) = launch(&dev, blocks, &values, &hist) {
            // A cluster shape the GPU cannot schedule (16 blocks needs non-portable sizes).
            println!("{label}: not run: {e}");
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
                "{label}: MISMATCH at bin {bad}: got {}, expected {}",
                got[bad], expected[bad]
            );
            std::process::exit(1);
        }
        if !gpu {
            println!("{label}: {n} values into 65536 bins, {blocks} blocks: matches the CPU count");
            continue;
        }
        // (The counts keep accumulating over the repetitions; they were checked above.)
        let times = dev.time_ms(20, || launch(&dev, blocks, &values, &hist))?;
        let mut sorted = times.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let ms = sorted[sorted.len() / 2];
        let rate = n as f64 / ms / 1e6;
        let base = *baseline.get_or_insert(rate);
        println!(
            "{label}: {blocks} blocks, median {ms:.3} ms, {rate:.2} Gvalues/s, {:.2}x global atomics (checked)",
            rate / base
        );
    }
    Ok(())
}
