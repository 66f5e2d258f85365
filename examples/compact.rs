//! Stream compaction in one pass, `tilus::algo::SelectStorage::select_if`: the positive values
//! of 2^28 i32 kept in order (the task of cub_algos.cu's DeviceSelect::If), checked against the
//! CPU, then timed against a device copy. Each tile counts what it keeps, the counts are
//! scanned across tiles by decoupled look-back, and the kept values are scattered to their
//! places (`src/algo/select.rs`).
//!
//! cargo run --release --example compact [--features cuda] [-- LOG2_N]

use tilus::algo::{Keep, SelectStorage};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let default_log2 = if dev.is_gpu() { 28 } else { 18 };
    let log2: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(default_log2);
    let n = 1usize << log2;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let x: Vec<i32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 60) as i32 - 8
        })
        .collect();
    let input = dev.upload(&x)?;
    let out = dev.zeros::<i32>(n)?;
    let mut st = SelectStorage::new(&dev, n)?;
    let stream = dev.default_stream();
    st.select_if(&stream, &input, Keep::Greater(0), &out)?;
    let want: Vec<i32> = x.iter().copied().filter(|&v| v > 0).collect();
    let k = st.num_selected().download()?[0] as usize;
    if k != want.len() || out.download()?[..k] != want[..] {
        eprintln!("MISMATCH: kept {k}, want {}", want.len());
        std::process::exit(1);
    }
    println!("{}: select_if(x > 0) of 2^{log2} i32 keeps {k}, in order, as the CPU does", dev.name());
    let reps = if dev.is_gpu() { 30 } else { 2 };
    let copy = median(dev.time_ms(reps, || dev.copy(&input, &out))?);
    let sel = median(dev.time_ms(reps, || st.select_if(&stream, &input, Keep::Greater(0), &out))?);
    println!("copy i32                       {:>10.1} us", copy * 1e3);
    println!("tilus select_if(x > 0) i32     {:>10.1} us  {:.1} G elements/s  ratio to copy {:.3}", sel * 1e3, n as f64 / (sel * 1e-3) / 1e9, copy / sel);
    Ok(())
}
