//! Row sums of a CSR matrix's values, `tilus::algo::segmented_sum`: rows of random length
//! 1..64 (as `cub_algos.cu` draws them), checked against the CPU, then timed against a device
//! copy of the values.
//!
//! The sums are differences of one device-wide scan at each row's two ends (exact for
//! integers: wrapping addition is a group), so short rows cost no more than long ones.
//!
//! cargo run --release --example csr_rows [--features cuda] [-- LOG2_N]

use rand::Rng;
use tilus::algo::{segmented_reduce, ScanOp, SegmentedStorage};

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
    // Row lengths 1..=64 from cub_algos.cu's generator, so that the rows are the same there.
    let mut offsets = vec![0i32];
    let mut s = 12345u64;
    while (*offsets.last().unwrap() as usize) < n {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = 1 + ((s >> 33) % 64) as i32;
        offsets.push((offsets.last().unwrap() + len).min(n as i32));
    }
    let rows = offsets.len() - 1;
    let mut rng = rand::thread_rng();
    let values: Vec<i32> = (0..n).map(|_| rng.gen_range(-8..8)).collect();
    let (x, o) = (dev.upload(&values)?, dev.upload(&offsets)?);
    let out = dev.full::<i32>(rows, i32::MIN)?;
    let mut storage = SegmentedStorage::<i32>::new(&dev, n)?;
    let stream = dev.default_stream();
    storage.sum(&stream, &x, &o, &out)?;
    let got = out.download()?;
    for (r, w) in offsets.windows(2).enumerate() {
        let want: i32 = values[w[0] as usize..w[1] as usize].iter().sum();
        if got[r] != want {
            eprintln!("MISMATCH in row {r}: got {}, want {want}", got[r]);
            std::process::exit(1);
        }
    }
    println!(
        "{}: sums of {rows} rows (1..64 values) of 2^{log2} i32 match the CPU",
        dev.name()
    );
    let reps = if dev.is_gpu() { 30 } else { 2 };
    let copy_to = dev.zeros::<i32>(n)?;
    let copy = median(dev.time_ms(reps, || dev.copy(&x, &copy_to))?);
    let sums = median(dev.time_ms(reps, || storage.sum(&stream, &x, &o, &out))?);
    let gbs = |ms: f64| (n * 4) as f64 / (ms * 1e-3) / 1e9;
    println!("copy i32                        {:>10.1} us", copy * 1e3);
    println!(
        "tilus segmented_sum i32         {:>10.1} us {:>8.1} GB/s(in)  ratio to copy {:.3}",
        sums * 1e3,
        gbs(sums),
        copy / sums
    );
    // The in-order fold (`segmented_reduce`): f32 sums equal to the sequential loop's bits.
    let xf: Vec<f32> = values.iter().map(|&v| v as f32 * 0.37).collect();
    let (xfd, outf) = (dev.upload(&xf)?, dev.zeros::<f32>(rows)?);
    segmented_reduce(&dev, &xfd, &o, &outf, ScanOp::Sum)?;
    let gotf = outf.download()?;
    for (r, w) in offsets.windows(2).enumerate() {
        let want = xf[w[0] as usize..w[1] as usize]
            .iter()
            .fold(0.0f32, |a, &b| a + b);
        if gotf[r].to_bits() != want.to_bits() {
            eprintln!("MISMATCH in f32 row {r}: got {}, want {want}", gotf[r]);
            std::process::exit(1);
        }
    }
    let fold_f32 = median(dev.time_ms(reps, || {
        segmented_reduce(&dev, &xfd, &o, &outf, ScanOp::Sum)
    })?);
    let fold_i32 = median(dev.time_ms(reps, || segmented_reduce(&dev, &x, &o, &out, ScanOp::Sum))?);
    for (what, ms) in [("f32 (in order)", fold_f32), ("i32 (in order)", fold_i32)] {
        println!(
            "tilus segmented_reduce {what:<14}{:>10.1} us {:>8.1} GB/s(in)  ratio to copy {:.3}",
            ms * 1e3,
            gbs(ms),
            copy / ms
        );
    }
    Ok(())
}
