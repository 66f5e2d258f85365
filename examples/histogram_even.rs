//! `tilus::algo::histogram_even`: counts in equal-width bins, as CUB's `HistogramEven`, for any
//! number of bins and any sample type. The library picks the kernel by the number of bins
//! (shared memory up to 16,384, a cluster's distributed shared memory up to 65,536 on sm_90,
//! global atomics beyond).
//!
//! cargo run --release --example histogram_even                    # the CPU emulator
//! cargo run --release --example histogram_even --features cuda    # an NVIDIA GPU
//!
//! Checks f32 samples into 50 bins and i32 samples into 256 to 262,144 bins against a CPU count.
//! On a GPU it then times 2^28 i32 samples (pass `-- LOG2_N` to change it) with the same input
//! as `cub_bins.cu` (a hash of the index, modulo the bins), against a device copy measured in
//! the same run; run `cub_bins.cu` in the same device call for CUB's figures.

use tilus::algo::histogram_even;

/// `cub_bins.cu`'s input: a hash of the index, modulo `bins`.
fn hashed(i: u64, bins: u64) -> i32 {
    let mut h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    (h % bins) as i32
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// f32 samples from a sum of uniforms (roughly normal), some outside `[-3, 3)`, into 50 bins.
fn check_floats(dev: &tilus::Device) -> Result<(), tilus::Error> {
    let n = 1_000_003usize;
    let x: Vec<f32> = (0..n as u64)
        .map(|i| {
            (0..4)
                .map(|k| hashed(4 * i + k, 1 << 20) as f32)
                .sum::<f32>()
                / 2f32.powi(20)
                * 2.0
                - 4.0
        })
        .collect();
    let (lower, upper, bins) = (-3.0f32, 3.0f32, 50usize);
    let counts = dev.zeros::<u32>(bins)?;
    histogram_even(dev, &dev.upload(&x)?, &counts, lower, upper)?;
    let scale = (bins as f64 / (upper - lower) as f64) as f32;
    let mut want = vec![0u32; bins];
    for &v in x.iter().filter(|&&v| lower <= v && v < upper) {
        want[(((v - lower) * scale).floor() as usize).min(bins - 1)] += 1;
    }
    let got = counts.download()?;
    if got != want {
        eprintln!("f32 histogram differs from the CPU's: {got:?}\nwant {want:?}");
        std::process::exit(1);
    }
    let peak = got.iter().max().copied().unwrap_or(0).max(1) as usize;
    for (b, &c) in got.iter().enumerate().step_by(5) {
        let edge = lower + (upper - lower) * b as f32 / bins as f32;
        println!("{edge:>6.2} {:<40} {c}", "#".repeat(c as usize * 40 / peak));
    }
    Ok(())
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    check_floats(&dev)?;

    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(if dev.is_gpu() { 28 } else { 20 });
    let n = (1usize << log2) + if dev.is_gpu() { 0 } else { 4321 };
    let reps = if dev.is_gpu() { 20 } else { 1 };
    let copy_src = dev.zeros::<i32>(n)?;
    let copy_dst = dev.zeros::<i32>(n)?;
    dev.copy(&copy_src, &copy_dst)?;
    let copy_us = median(dev.time_ms(reps, || dev.copy(&copy_src, &copy_dst))?) * 1e3;
    drop((copy_src, copy_dst));
    println!("n = {n} i32 samples; device copy {copy_us:.1} us");
    for bins in [256usize, 4096, 65_536, 262_144] {
        let x: Vec<i32> = (0..n as u64).map(|i| hashed(i, bins as u64)).collect();
        let xd = dev.upload(&x)?;
        let counts = dev.zeros::<i32>(bins)?;
        histogram_even(&dev, &xd, &counts, 0, bins as i32)?;
        let mut want = vec![0i32; bins];
        for &v in &x {
            want[v as usize] += 1;
        }
        if counts.download()? != want {
            eprintln!("{bins} bins: the counts differ from the CPU's");
            std::process::exit(1);
        }
        let us =
            median(dev.time_ms(reps, || histogram_even(&dev, &xd, &counts, 0, bins as i32))?) * 1e3;
        println!(
            "histogram_even i32 {bins:>7} bins {us:>10.1} us {:>8.1} GB/s of input  {:.2} copies",
            (n * 4) as f64 / (us * 1e-6) / 1e9,
            us / copy_us
        );
    }
    Ok(())
}
