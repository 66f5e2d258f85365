//! The radix sort's other key types, checked against a CPU sort and timed: `u64` keys and
//! (`u64`, `u32`) pairs at `LOG2_N`, `i32` keys at `LOG2_N + 1` (the `u32` kernel with the order
//! map). `examples/radix_sort.rs` times `u32` keys and pairs against a copy.
//!
//! cargo run --release --example radix_sort_types [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::{SortOrder, SortStorage};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn fail(what: &str) -> ! {
    eprintln!("MISMATCH: {what}");
    std::process::exit(1);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(if dev.is_gpu() { 27 } else { 16 });
    let n = 1usize << log2;
    let reps = if dev.is_gpu() { 20 } else { 2 };
    let mut rng = rand::thread_rng();
    let stream = dev.default_stream();
    let asc = SortOrder::Ascending;
    println!(
        "{}: sorts checked against the CPU, medians of {reps}",
        dev.name()
    );

    let input: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
    let mut want = input.clone();
    want.sort_unstable();
    let keys = dev.upload(&input)?;
    let out = dev.zeros::<u64>(n)?;
    let mut st = SortStorage::<u64, u32>::new(&dev, n)?;
    st.sort_keys(&stream, &keys, &out, asc)?;
    if out.download()? != want {
        fail("u64 keys");
    }
    let t = median(dev.time_ms(reps, || st.sort_keys(&stream, &keys, &out, asc))?);
    println!("2^{log2} u64 keys        {:>10.1} us", t * 1e3);

    // The values are the keys' input positions: stable means equal keys keep them increasing.
    let positions: Vec<u32> = (0..n as u32).collect();
    let vals = dev.upload(&positions)?;
    let vals_out = dev.zeros::<u32>(n)?;
    st.sort_pairs(&stream, &keys, &vals, &out, &vals_out, asc)?;
    let (k, v) = (out.download()?, vals_out.download()?);
    for i in 0..n {
        let stable = i == 0 || k[i - 1] != k[i] || v[i - 1] < v[i];
        if k[i] != want[i] || input[v[i] as usize] != k[i] || !stable {
            fail(&format!("(u64, u32) pairs at {i}"));
        }
    }
    let t = median(dev.time_ms(reps, || {
        st.sort_pairs(&stream, &keys, &vals, &out, &vals_out, asc)
    })?);
    println!("2^{log2} (u64, u32) pairs {:>10.1} us", t * 1e3);

    let m = 2 * n;
    let input: Vec<i32> = (0..m).map(|_| rng.gen()).collect();
    let mut want = input.clone();
    want.sort_unstable();
    let keys = dev.upload(&input)?;
    let out = dev.zeros::<i32>(m)?;
    let mut st = SortStorage::<i32>::new(&dev, m)?;
    st.sort_keys(&stream, &keys, &out, asc)?;
    if out.download()? != want {
        fail("i32 keys");
    }
    let t = median(dev.time_ms(reps, || st.sort_keys(&stream, &keys, &out, asc))?);
    println!("2^{} i32 keys        {:>10.1} us", log2 + 1, t * 1e3);
    Ok(())
}
