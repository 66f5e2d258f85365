//! A 256-bin histogram of i32 values: per-block counts in shared memory (scatter atomics), then
//! one global atomic add per bin per block. Checks the result against a plain CPU count.
//!
//! cargo run --release --example histogram                    # the CPU emulator
//! cargo run --release --example histogram --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// Counts `values` into `hist` (256 bins; values outside 0..256 are ignored).
#[tile_kernel(threads = 256)]
pub fn histogram(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    let counts = shared_tensor(i32, [256]);
    store_shared(counts, zeros([256]));
    sync();
    let n = values.len();
    // Grid-stride loop over tiles of 4096 values (16 per thread, loaded as 16-byte vectors).
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        // Past the end, lanes read -1: an out-of-range bin, which the scatter skips.
        let bins = load_global(values, offsets = [start], shape = [4096], other = -1);
        atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
    }
    sync();
    let c = load_shared(counts);
    atomic::global_add(hist, c, mask = c != 0);
}

fn cpu_histogram(values: &[i32]) -> Vec<i32> {
    let mut h = vec![0i32; 256];
    for &v in values {
        if (0..256).contains(&v) {
            h[v as usize] += 1;
        }
    }
    h
}

/// A small xorshift generator: the example needs no dependencies.
fn random_values(n: usize, mut seed: u64) -> Vec<i32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 256) as i32
        })
        .collect()
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let n = (1 << 22) + 12345; // not a multiple of the tile
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    for (label, data) in [("uniform", random_values(n, seed)), ("one bin", vec![7; n])] {
        let values = dev.upload(&data)?;
        let hist = dev.zeros::<i32>(256)?;
        let blocks = 264.min(n.div_ceil(4096)) as u32;
        let t = std::time::Instant::now();
        histogram::launch(&dev, blocks, &values, &hist)?;
        let counts = hist.download()?;
        let elapsed = t.elapsed();
        let expected = cpu_histogram(&data);
        if counts != expected {
            let bad = counts
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            eprintln!(
                "{label}: MISMATCH at bin {bad}: got {}, expected {}",
                counts[bad], expected[bad]
            );
            std::process::exit(1);
        }
        println!(
            "{label}: {n} values, {blocks} blocks, histogram matches the CPU count ({elapsed:.2?})"
        );
    }
    Ok(())
}
