//! `out[idx[i]] += vals[i]` for f32, two ways: float atomics (fast, but the sum depends on the
//! order in which blocks run), and `tilus::algo::index_add` (the sequential loop's bits on
//! every run, grid and backend). Checked against the CPU loop, then timed, for few outputs
//! (1024: long groups) and many (2^22: short groups).
//!
//! cargo run --release --example deterministic_index_add [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::IndexAddStorage;
use tilus::prelude::*;

/// The non-deterministic baseline: one relaxed float atomic per value.
#[tile_kernel(threads = 256)]
fn atomic_index_add(out: GlobalTensor<f32>, idx: GlobalTensor<i32>, vals: GlobalTensor<f32>) {
    let n = idx.len() as i32;
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let i = load_global(idx, offsets = [start], shape = [4096], other = -1);
        let v = load_global(vals, offsets = [start], shape = [4096]);
        atomic_add(out, i, v, order = MemoryOrder::Relaxed);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(if dev.is_gpu() { 28 } else { 16 });
    let n = 1usize << log2;
    let mut rng = rand::thread_rng();
    let vals: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let v = dev.upload(&vals)?;
    let stream = dev.default_stream();
    let reps = if dev.is_gpu() { 10 } else { 2 };
    println!("{}: 2^{log2} f32 values", dev.name());
    for m in [1024usize, 1 << 22] {
        let index: Vec<i32> = (0..n).map(|_| rng.gen_range(0..m as i32)).collect();
        let idx = dev.upload(&index)?;
        let mut want = vec![0f32; m];
        for (&i, &x) in index.iter().zip(&vals) {
            want[i as usize] += x;
        }
        let out = dev.zeros::<f32>(m)?;
        let mut st = IndexAddStorage::<f32>::new(&dev, n, m)?;
        st.index_add(&stream, &out, &idx, &v)?;
        let got = out.download()?;
        if got
            .iter()
            .zip(&want)
            .any(|(a, b)| a.to_bits() != b.to_bits())
        {
            eprintln!("MISMATCH: M = {m}: the deterministic sums differ from the CPU loop");
            std::process::exit(1);
        }
        let zero = dev.zeros::<f32>(m)?;
        let det = median(dev.time_ms(reps, || {
            dev.copy(&zero, &out)?;
            st.index_add(&stream, &out, &idx, &v)
        })?);
        let fill = median(dev.time_ms(reps, || dev.copy(&zero, &out))?);
        let atomics = median(dev.time_ms(reps, || {
            dev.copy(&zero, &out)?;
            atomic_index_add::launch(&dev, 4096, &out, &idx, &v)
        })?);
        let (det, atomics) = (det - fill, atomics - fill);
        let differs = {
            let a = out.download()?;
            a.iter()
                .zip(&want)
                .filter(|(x, y)| x.to_bits() != y.to_bits())
                .count()
        };
        println!(
            "M = {m:>7}: deterministic {:>9.1} us, atomics {:>9.1} us (ratio {:.3}); \
             the atomics' sums differ from the loop's bits in {differs} of {m} outputs",
            det * 1e3,
            atomics * 1e3,
            atomics / det
        );
    }
    Ok(())
}
