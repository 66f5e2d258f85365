//! bf16 gradient accumulation: K gradient shards (from K micro-batches, or K data-parallel
//! workers on one GPU) are added into one bf16 gradient buffer of P parameters, with atomics,
//! by blocks that run concurrently, so several blocks add to the same parameter at once.
//!
//! Checks the buffer against the exact sum computed in f64 on the host, with a tolerance from
//! bf16 rounding and the number of additions (see `main`).
//!
//! cargo run --release --example grad_accum_bf16                    # the CPU emulator
//! cargo run --release --example grad_accum_bf16 --features cuda    # an NVIDIA GPU, if present

use rand::Rng;
use tilus::bf16;
use tilus::prelude::*;

/// `grad[j] += shards[s, j]` for every shard `s < K` and parameter `j < P`, where `P =
/// grad.len()` and `shards` is `[K, P]` row-major.
///
/// The work items are (shard, 1024-parameter chunk) pairs, dealt to the blocks round-robin, so
/// the K items of one chunk run on different blocks at the same time: the adds must be atomic.
/// PTX has a bf16 atomic add from sm_90 on (`red.global.add.noftz.bf16`): the compiler raises the
/// kernel's target to sm_90 for it.
#[tile_kernel(threads = 128)]
fn accumulate(shards: GlobalTensor<bf16>, grad: GlobalTensor<bf16>) {
    let p = grad.len();
    let k = shards.len() / p;
    let rows = shards.view(0, [k, p]);
    let chunks = (p + 1023) / 1024;
    for w in (block_idx()..k * chunks).step_by(grid_dim()) {
        let s = w / chunks;
        let c0 = (w % chunks) * 1024;
        // The last chunk runs past P: those columns are outside the view and read 0; the add
        // skips them as outside `grad`.
        let g = load_global(rows, offsets = [s, c0], shape = [1, 1024]);
        // Relaxed: the sums are the result; the kernel's end publishes them to the host.
        atomic::global_add(grad, g.reshape([1024]), offsets = [c0]);
    }
}

/// A small xorshift generator: the example needs no dependencies.
/// Roughly normal with the given scale: the sum of four uniforms in [-1, 1), a gradient-like
/// spread of magnitudes and signs.
fn grad(rng: &mut impl Rng, scale: f32) -> bf16 {
    let u: f32 = (0..4).map(|_| rng.gen_range(-1.0f32..1.0)).sum();
    bf16::from_f32(u * scale)
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let mut rng = rand::thread_rng();
    // K shards of P parameters; P is odd, not a multiple of the 1024-element chunk.
    let (k, p) = if dev.is_gpu() {
        (16usize, 1_000_003usize)
    } else {
        (16, 100_003)
    };
    // Each shard has its own scale (micro-batches differ), and the buffer already holds a
    // gradient from an earlier step.
    let shards: Vec<bf16> = (0..k)
        .flat_map(|s| {
            let scale = 1e-3 * (1 + s % 5) as f32;
            (0..p).map(|_| grad(&mut rng, scale)).collect::<Vec<_>>()
        })
        .collect();
    let init: Vec<bf16> = (0..p).map(|_| grad(&mut rng, 1e-3)).collect();

    let t_shards = dev.upload(&shards)?;
    let t_grad = dev.upload(&init)?;
    let blocks = if dev.is_gpu() { 528 } else { 37 };
    accumulate::launch(&dev, blocks, &t_shards, &t_grad)?;
    let got = t_grad.download()?;

    // Tolerance. The inputs are bf16 values, exact in f64, and the f64 sum below is exact to
    // about 2^-53 relative, far below what bf16 can resolve. Each atomic add rounds the
    // running bf16 sum to nearest, an error of at most u = 2^-8 (half a bf16 ulp, 8 significant
    // bits) times the running sum's magnitude, which never exceeds the sum of magnitudes S. The
    // K adds of a parameter come in any order; recursive summation in any order is within
    // gamma_K * S of the exact sum, gamma_K = K u / (1 - K u) (Higham, Accuracy and Stability,
    // 4.2). With K = 16: gamma = 1/15, i.e. 6.7% of S: bf16 accumulation is coarse, which is why
    // training keeps f32 master gradients; this example shows the atomic form, not a
    // recommendation. (u would be 2^-7 under directed rounding; PTX's bf16 atomic add rounds to
    // nearest even, and so does the emulator.)
    let u = 2f64.powi(-8);
    let gamma = k as f64 * u / (1.0 - k as f64 * u);
    let mut worst = 0.0f64;
    let mut mean_rel = 0.0f64;
    for j in 0..p {
        let mut exact = init[j].to_f64();
        let mut mag = init[j].to_f64().abs();
        for s in 0..k {
            let x = shards[s * p + j].to_f64();
            exact += x;
            mag += x.abs();
        }
        let g = got[j].to_f64();
        let err = (g - exact).abs();
        let tol = gamma * mag;
        if err > tol || g.is_nan() {
            eprintln!("MISMATCH at grad[{j}]: got {g}, exact {exact} (tolerance {tol:e})");
            std::process::exit(1);
        }
        if mag > 0.0 {
            worst = worst.max(err / tol);
            mean_rel += err / mag;
        }
    }
    println!(
        "bf16 accumulation of {k} shards x {p} parameters ({blocks} blocks): every parameter \
         within gamma_{k} * sum|x| = {:.1}% of the f64 sum (worst {:.0}% of the bound, mean \
         error {:.3}% of sum|x|)",
        gamma * 100.0,
        worst * 100.0,
        mean_rel / p as f64 * 100.0
    );
    Ok(())
}
