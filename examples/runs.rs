//! Run-length encoding with `tilus::algo`: 2^28 `i32` values in runs of 1..16 equal values,
//! encoded as (value, length) pairs, checked against the CPU, then timed against a device
//! copy of the values.
//!
//! cargo run --release --example runs [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::RunStorage;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(if dev.is_gpu() { 28 } else { 18 });
    let n = 1usize << log2;
    let mut rng = rand::thread_rng();
    let mut x = Vec::with_capacity(n);
    while x.len() < n {
        let v: i32 = rng.gen_range(0..1000);
        x.extend(std::iter::repeat_n(v, rng.gen_range(1..=16)));
    }
    x.truncate(n);
    let mut want: Vec<(i32, i32)> = Vec::new();
    for &v in &x {
        match want.last_mut() {
            Some((w, len)) if *w == v => *len += 1,
            _ => want.push((v, 1)),
        }
    }
    let xd = dev.upload(&x)?;
    let (vals, lens) = (dev.zeros::<i32>(n)?, dev.zeros::<i32>(n)?);
    let mut st = RunStorage::new(&dev, n)?;
    let stream = dev.default_stream();
    st.run_length_encode(&stream, &xd, &vals, &lens)?;
    let runs = st.num_runs().download()?[0] as usize;
    let (v, l) = (vals.download()?, lens.download()?);
    if runs != want.len() || (0..runs).any(|r| (v[r], l[r]) != want[r]) {
        eprintln!("MISMATCH: {runs} runs, want {}", want.len());
        std::process::exit(1);
    }
    println!(
        "{}: 2^{log2} i32 in {runs} runs, encoded and checked",
        dev.name()
    );
    let reps = if dev.is_gpu() { 20 } else { 2 };
    let copy_to = dev.zeros::<i32>(n)?;
    let copy = median(dev.time_ms(reps, || dev.copy(&xd, &copy_to))?);
    let unique = median(dev.time_ms(reps, || st.unique(&stream, &xd, &vals))?);
    let rle = median(dev.time_ms(reps, || st.run_length_encode(&stream, &xd, &vals, &lens))?);
    println!("copy i32                        {:>10.1} us", copy * 1e3);
    for (what, ms) in [("unique", unique), ("run_length_encode", rle)] {
        println!(
            "tilus {what:<18}        {:>10.1} us  copies' worth {:.2}",
            ms * 1e3,
            ms / copy
        );
    }
    Ok(())
}
