//! One 64-bin histogram per row of an 8-row matrix, with a 2-D scatter along `dim = 1`: the bin
//! comes from the value, the row from the lane's own row. Per-block counts live in shared memory;
//! each block then adds its non-zero counts to the global `[8, 64]` result.
//!
//! cargo run --release --example histogram2d                    # the CPU emulator
//! cargo run --release --example histogram2d --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// `values` is an `[8, cols]` row-major matrix; `hist` an `[8, 64]` one. Values outside 0..64
/// are ignored.
#[tile_kernel(threads = 256)]
fn histogram_rows(values: GlobalTensor<i32>, hist: GlobalTensor<i32>, cols: i32) {
    let counts = shared_tensor(i32, [8, 64]);
    store_shared(counts, zeros([8, 64]));
    sync();
    let m = values.view(0, [8, cols]);
    for start in (block_idx() * 256..cols).step_by(grid_dim() * 256) {
        // Columns past `cols` read -1: an out-of-range bin, skipped by the scatter.
        let bins = load_global(m, offsets = [0, start], shape = [8, 256], other = -1);
        atomic::shared_scatter_add(counts, dim = 1, indices = bins, values = 1);
    }
    sync();
    let c = load_shared(counts);
    atomic::global_add(hist.view(0, [8, 64]), c, offsets = [0, 0], mask = c != 0);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let cols = 100_003usize; // not a multiple of the tile
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let mut data = vec![0i32; 8 * cols];
    for (i, x) in data.iter_mut().enumerate() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let row = i / cols;
        // Row r: values in -2..(8 + 8r) (so rows differ, and a few fall outside the bins).
        *x = (seed % (10 + 8 * row as u64)) as i32 - 2;
    }
    let mut want = vec![0i32; 8 * 64];
    for (i, &v) in data.iter().enumerate() {
        if (0..64).contains(&v) {
            want[(i / cols) * 64 + v as usize] += 1;
        }
    }
    let values = dev.upload(&data)?;
    let hist = dev.zeros::<i32>(8 * 64)?;
    let blocks = 132.min(cols.div_ceil(256)) as u32;
    let t = std::time::Instant::now();
    histogram_rows::launch(&dev, blocks, &values, &hist, cols as i32)?;
    let got = hist.download()?;
    let elapsed = t.elapsed();
    if got != want {
        let bad = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
        eprintln!(
            "MISMATCH at row {} bin {}: got {}, expected {}",
            bad / 64,
            bad % 64,
            got[bad],
            want[bad]
        );
        std::process::exit(1);
    }
    for r in 0..8 {
        let total: i32 = got[r * 64..(r + 1) * 64].iter().sum();
        println!("row {r}: {total} of {cols} values binned");
    }
    println!("8 x 64 histogram matches the CPU count ({blocks} blocks, {elapsed:.2?})");
    Ok(())
}
