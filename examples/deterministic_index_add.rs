//! `out[idx[i]] += vals[i]` for f32, two ways: float atomics (fast, but the sum depends on the
//! order in which blocks run), and `tilus::algo::index_add` (the sequential loop's bits on
//! every run, grid and backend). Checked against the CPU loop, then timed, for few outputs
//! (1024: long groups) and many (2^22: short groups); then rows `[2^20, 128]` into
//! `[2^16, 128]` (`index_add_rows`) of f32 and bf16, the same two ways.
//!
//! cargo run --release --example deterministic_index_add [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::{IndexAddElement, IndexAddRowsStorage, IndexAddStorage};
use tilus::bf16;
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

/// The non-deterministic baseline for rows: 16 rows by 128 columns a tile, one relaxed atomic
/// per element (as `examples/index_add.rs`).
macro_rules! atomic_rows {
    ($($name:ident: $t:ident),*) => {$(
        #[tile_kernel(threads = 256)]
        fn $name(out: GlobalTensor<$t>, idx: GlobalTensor<i32>, src: GlobalTensor<$t>, d: i32) {
            let n = idx.len() as i32;
            let m = out.len() as i32 / d;
            let src_rows = src.view(0, [n, d]);
            let out_rows = out.view(0, [m, d]);
            for r0 in (block_idx() * 16..n).step_by(grid_dim() * 16) {
                let rows = load_global(idx, offsets = [r0], shape = [16], other = -1).reshape([16, 1]);
                for c0 in (0..d).step_by(128) {
                    let vals = load_global(src_rows, offsets = [r0, c0], shape = [16, 128]);
                    let cols = arange(128).reshape([1, 128]) + c0;
                    atomic_add(out_rows, (rows, cols), vals, order = MemoryOrder::Relaxed);
                }
            }
        }
    )*};
}
atomic_rows!(atomic_rows_f32: f32, atomic_rows_bf16: bf16);

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
    rows::<f32>(
        &dev,
        log2,
        |x| x,
        |o, i, s| atomic_rows_f32::launch(&dev, 4096, o, i, s, 128),
    )?;
    rows::<bf16>(&dev, log2, bf16::from_f32, |o, i, s| {
        atomic_rows_bf16::launch(&dev, 4096, o, i, s, 128)
    })?;
    Ok(())
}

/// Rows `[2^(log2 - 8), 128]` into `[2^(log2 - 12), 128]` (`[2^20, 128]` into `[2^16, 128]` on
/// a GPU), deterministic against `atomics`; checked against the CPU loop.
fn rows<T: IndexAddElement + std::ops::Add<Output = T>>(
    dev: &tilus::Device,
    log2: u32,
    from: fn(f32) -> T,
    atomics: impl Fn(
        &tilus::GlobalTensor<T>,
        &tilus::GlobalTensor<i32>,
        &tilus::GlobalTensor<T>,
    ) -> Result<(), tilus::Error>,
) -> Result<(), tilus::Error> {
    let (n, m, d) = (1usize << (log2 - 8), 1usize << (log2 - 12), 128);
    let mut rng = rand::thread_rng();
    let src: Vec<T> = (0..n * d)
        .map(|_| from(rng.gen_range(-1.0f32..1.0)))
        .collect();
    let index: Vec<i32> = (0..n).map(|_| rng.gen_range(0..m as i32)).collect();
    let mut want = vec![T::default(); m * d];
    for (i, &r) in index.iter().enumerate() {
        for c in 0..d {
            want[r as usize * d + c] = want[r as usize * d + c] + src[i * d + c];
        }
    }
    let (s, idx) = (dev.upload(&src)?, dev.upload(&index)?);
    let (out, zero) = (dev.zeros::<T>(m * d)?, dev.zeros::<T>(m * d)?);
    let mut st = IndexAddRowsStorage::<T>::new(dev, n, m)?;
    let stream = dev.default_stream();
    st.index_add_rows(&stream, &out, &idx, &s, d)?;
    if out.download()? != want {
        eprintln!("MISMATCH: rows of {}", std::any::type_name::<T>());
        std::process::exit(1);
    }
    let reps = if dev.is_gpu() { 20 } else { 2 };
    let fill = median(dev.time_ms(reps, || dev.copy(&zero, &out))?);
    let det = median(dev.time_ms(reps, || {
        dev.copy(&zero, &out)?;
        st.index_add_rows(&stream, &out, &idx, &s, d)
    })?) - fill;
    let fast = median(dev.time_ms(reps, || {
        dev.copy(&zero, &out)?;
        atomics(&out, &idx, &s)
    })?) - fill;
    println!(
        "rows [{n}, {d}] into [{m}, {d}] {:<4}: deterministic {:>9.1} us, atomics {:>9.1} us (ratio {:.3})",
        std::any::type_name::<T>().rsplit("::").next().unwrap_or(""),
        det * 1e3,
        fast * 1e3,
        fast / det
    );
    Ok(())
}
