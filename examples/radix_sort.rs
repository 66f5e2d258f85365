//! Sorting random `u32` keys, alone and with values, with `tilus::algo`'s radix sort, checked
//! in full (the output is ordered, a permutation of the input, and stable), then timed against
//! a device copy of the keys.
//!
//! The pairs carry each key's input position as its value, which makes the check one pass: the
//! values must be a permutation, each names a key equal to the one beside it, and equal keys
//! keep their positions increasing (stability).
//!
//! cargo run --release --example radix_sort [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::{SortOrder, SortStorage};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `keys` sorted by the permutation `vals` of positions of `input`, stably: the whole check.
fn check(input: &[u32], keys: &[u32], vals: &[u32]) -> Result<(), String> {
    let mut seen = vec![false; input.len()];
    for i in 0..keys.len() {
        let v = vals[i] as usize;
        if v >= input.len() || std::mem::replace(&mut seen[v], true) {
            return Err(format!("value {v} at {i} is out of range or repeated"));
        }
        if input[v] != keys[i] {
            return Err(format!(
                "key {} at {i} is not input key {v} ({})",
                keys[i], input[v]
            ));
        }
        if i > 0 && (keys[i - 1], vals[i - 1]) >= (keys[i], vals[i]) {
            return Err(format!("out of order (or unstable) at {i}"));
        }
    }
    Ok(())
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(if dev.is_gpu() { 28 } else { 18 });
    let n = 1usize << log2;
    let mut rng = rand::thread_rng();
    let input: Vec<u32> = (0..n).map(|_| rng.gen()).collect();
    let positions: Vec<u32> = (0..n as u32).collect();
    let (keys, vals) = (dev.upload(&input)?, dev.upload(&positions)?);
    let (keys_out, vals_out) = (dev.zeros::<u32>(n)?, dev.zeros::<u32>(n)?);
    let mut st = SortStorage::<u32, u32>::new(&dev, n)?;
    let stream = dev.default_stream();
    let asc = SortOrder::Ascending;
    st.sort_pairs(&stream, &keys, &vals, &keys_out, &vals_out, asc)?;
    let sorted = keys_out.download()?;
    if let Err(e) = check(&input, &sorted, &vals_out.download()?) {
        eprintln!("MISMATCH (pairs): {e}");
        std::process::exit(1);
    }
    let only = dev.zeros::<u32>(n)?;
    st.sort_keys(&stream, &keys, &only, asc)?;
    if only.download()? != sorted {
        eprintln!("MISMATCH: the keys alone sort differently from the pairs");
        std::process::exit(1);
    }
    println!(
        "{}: 2^{log2} u32 keys and pairs sorted, checked in full",
        dev.name()
    );
    let reps = if dev.is_gpu() { 20 } else { 2 };
    let copy_to = dev.zeros::<u32>(n)?;
    let copy = median(dev.time_ms(reps, || dev.copy(&keys, &copy_to))?);
    let sort_keys = median(dev.time_ms(reps, || st.sort_keys(&stream, &keys, &only, asc))?);
    let sort_pairs = median(dev.time_ms(reps, || {
        st.sort_pairs(&stream, &keys, &vals, &keys_out, &vals_out, asc)
    })?);
    let rate = |ms: f64| n as f64 / (ms * 1e-3) / 1e9;
    println!("copy u32                        {:>10.1} us", copy * 1e3);
    for (what, ms) in [("keys", sort_keys), ("pairs", sort_pairs)] {
        println!(
            "tilus radix sort u32 {what:<6}     {:>10.1} us {:>8.2} G/s  copies' worth {:.2}",
            ms * 1e3,
            rate(ms),
            ms / copy
        );
    }
    Ok(())
}
