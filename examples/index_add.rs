//! `index_add_` of f32 rows, as in the backward pass of an embedding or a GNN aggregation:
//! `out[index[r], :] += src[r, :]` for every row `r` of `src` (`[N, D]` values, `[N]` row indices
//! into `out`, `[M, D]`), i.e. `torch.Tensor.index_add_(0, index, src)`. Many rows share an index
//! (frequent tokens, high-degree nodes), so the adds must be atomic.
//!
//! Checks the result against a CPU sum in f64 with a tolerance derived from f32 rounding.
//!
//! cargo run --release --example index_add                    # the CPU emulator
//! cargo run --release --example index_add --features cuda    # an NVIDIA GPU, if present

use rand::Rng;
use tilus::prelude::*;

/// `out[index[r], c] += src[r, c]` for `r < N`, `c < d`: `src` is `[N, d]` and `out` `[M, d]`
/// (row-major), `N = index.len()` and `M = out.len() / d`.
///
/// Each step takes 16 rows and 64 columns: `rows` is a `[16, 1]` tile of row indices and `cols`
/// a `[1, 64]` tile of column numbers, which the indexed `atomic_add` broadcasts to the
/// `[16, 64]` shape of the values. A thread then holds contiguous elements of one row, which the
/// compiler can turn into vector atomics where the target has them.
#[tile_kernel(threads = 128)]
fn index_add_rows(
    src: GlobalTensor<f32>,
    index: GlobalTensor<i32>,
    out: GlobalTensor<f32>,
    d: i32,
) {
    let n = index.len() as i32;
    let m = out.len() as i32 / d;
    let src_rows = src.view(0, [n, d]);
    let out_rows = out.view(0, [m, d]);
    for r0 in (block_idx() * 16..n).step_by(grid_dim() * 16) {
        // Past the last row the index reads -1: a row outside `out`, which the atomic skips.
        let rows = load_global(index, offsets = [r0], shape = [16], other = -1).reshape([16, 1]);
        // `d` need not be a multiple of 64: columns past it are outside the view and skipped.
        for c0 in (0..d).step_by(64) {
            let vals = load_global(src_rows, offsets = [r0, c0], shape = [16, 64]);
            let cols = arange(64).reshape([1, 64]) + c0;
            // Relaxed: the sums are the whole result, nothing else is published through them.
            atomic_add(out_rows, (rows, cols), vals, order = MemoryOrder::Relaxed);
        }
    }
}

/// A small xorshift generator: the example needs no dependencies.
fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let mut rng = rand::thread_rng();
    // Neither N nor D is a multiple of the 16 x 64 tile.
    let (n, d, m) = (3001usize, 150usize, 97usize);
    // Heavy duplicates: half of the rows go to one of 4 hot rows, the rest anywhere in 0..M.
    let index: Vec<i32> = (0..n)
        .map(|_| {
            if rng.gen_range(0..2) == 0 {
                rng.gen_range(0..4) as i32
            } else {
                rng.gen_range(0..m as u64) as i32
            }
        })
        .collect();
    let src: Vec<f32> = (0..n * d).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let init: Vec<f32> = (0..m * d).map(|_| rng.gen_range(-1.0f32..1.0)).collect();

    // The CPU reference: exact sums (f64 holds each sum of these few thousand f32 values to far
    // below f32 resolution), plus the sum of magnitudes and the number of adds per element.
    let mut want: Vec<f64> = init.iter().map(|&x| x as f64).collect();
    let mut mag: Vec<f64> = init.iter().map(|&x| x.abs() as f64).collect();
    let mut adds = vec![0usize; m];
    for (r, &i) in index.iter().enumerate() {
        let i = i as usize;
        adds[i] += 1;
        for c in 0..d {
            want[i * d + c] += src[r * d + c] as f64;
            mag[i * d + c] += src[r * d + c].abs() as f64;
        }
    }

    let t_src = dev.upload(&src)?;
    let t_index = dev.upload(&index)?;
    let t_out = dev.upload(&init)?;
    let blocks = 64.min(n.div_ceil(16)) as u32;
    index_add_rows::launch(&dev, blocks, &t_src, &t_index, &t_out, d as i32)?;
    let got = t_out.download()?;

    // Tolerance: the GPU adds the k contributions of an element to its f32 value one at a time,
    // in any order; each add rounds once, with an error of at most u = 2^-24 times the running
    // sum, and every running sum is at most the sum of magnitudes. So |got - exact| <=
    // gamma_k * sum|x| with gamma_k = k u / (1 - k u) (Higham, recursive summation, any order).
    let u = f32::EPSILON as f64 / 2.0;
    let mut worst = 0.0f64;
    for (i, &k) in adds.iter().enumerate() {
        let ku = k as f64 * u;
        for c in 0..d {
            let e = i * d + c;
            let err = (got[e] as f64 - want[e]).abs();
            let tol = ku / (1.0 - ku) * mag[e];
            if err > tol || got[e].is_nan() {
                eprintln!(
                    "MISMATCH at out[{i}, {c}] ({k} adds): got {}, expected {} (tolerance {tol:e})",
                    got[e], want[e]
                );
                std::process::exit(1);
            }
            if tol > 0.0 {
                worst = worst.max(err / tol);
            }
        }
    }
    let hottest = adds.iter().max().copied().unwrap_or(0);
    println!(
        "index_add of [{n}, {d}] f32 rows into [{m}, {d}] ({blocks} blocks, up to {hottest} rows per \
         output row): matches the f64 CPU sum within gamma_k * sum|x| (worst {:.0}% of it)",
        worst * 100.0
    );
    Ok(())
}
