//! A device-wide prefix sum in one pass, `tilus::algo::inclusive_scan`, checked against the
//! CPU on whichever device runs it, then timed against a device copy (the memory limit: a scan
//! reads and writes every element once, as a copy does).
//!
//! The kernel (`src/algo/scan.rs`, protocol in `src/algo/lookback.rs`) is the textbook use of
//! release/acquire between blocks, decoupled look-back (Merrill & Garland 2016):
//!
//! 1. a block draws a ticket from an atomic counter; the ticket is its tile, so blocks wait only
//!    for tiles whose blocks already run (no co-residency assumed);
//! 2. it folds its tile and publishes the fold with a **release** store of a flag ("aggregate");
//! 3. it reads its predecessors' flags 32 at a time with **acquire** loads, and folds their
//!    values back to the first one that published an inclusive prefix;
//! 4. it publishes its own inclusive prefix (release), and writes its tile's scan plus the prefix.
//!
//! Publish the flag relaxed, or read a value before acquiring its flag, and the emulator's race
//! checker reports it (`tests/algo_scan.rs`). That is the protocol for 64-bit values. For 32-bit
//! values (this example's `i32`) the library packs state and value into one 64-bit word, as CUB
//! does: one relaxed atomic store publishes both and one relaxed load reads both, so nothing
//! outside the word needs ordering and no fence runs, and the look-back reads 32 predecessors
//! at a time on one warp, after sleeping 3 us (from the 512th tile on) so that most of them
//! have published by its first read. With tiles of 8192 on 128 threads it runs at 1.12x CUB's
//! speed, 0.9 of a copy's rate (one H100; BENCHMARKS.md).
//!
//! cargo run --release --example scan [--features cuda] [-- LOG2_N]

use std::time::Instant;
use tilus::algo::{ScanOp, ScanStorage};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let default_log2 = if dev.is_gpu() { 28 } else { 18 };
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_log2);
    let n = 1usize << log2;
    // Values in [-8, 7], as cub_algos.cu uses: every i32 prefix of 2^28 of them is exact.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
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
    let mut storage = ScanStorage::<i32>::new(&dev, n)?;
    let stream = dev.default_stream();
    let t0 = Instant::now();
    storage.scan(&stream, ScanOp::Sum, &input, &out, false)?;
    let got = out.download()?;
    let first = t0.elapsed();
    let mut acc = 0i32;
    for (i, (&v, &g)) in x.iter().zip(&got).enumerate() {
        acc = acc.wrapping_add(v);
        if g != acc {
            eprintln!("MISMATCH at {i}: got {g}, want {acc}");
            std::process::exit(1);
        }
    }
    println!("{}: inclusive scan of 2^{log2} i32 matches the CPU ({first:.2?} with the check's download)", dev.name());
    let reps = if dev.is_gpu() { 30 } else { 2 };
    let copy = median(dev.time_ms(reps, || dev.copy(&input, &out))?);
    let scan = median(dev.time_ms(reps, || {
        storage.scan(&stream, ScanOp::Sum, &input, &out, false)
    })?);
    let ex = median(dev.time_ms(reps, || {
        storage.scan(&stream, ScanOp::Sum, &input, &out, true)
    })?);
    let gbs = |ms: f64| 2.0 * (n * 4) as f64 / (ms * 1e-3) / 1e9;
    println!(
        "copy i32                       {:>10.1} us {:>8.1} GB/s(r+w)",
        copy * 1e3,
        gbs(copy)
    );
    println!(
        "tilus inclusive_scan i32       {:>10.1} us {:>8.1} GB/s(r+w)  ratio to copy {:.3}",
        scan * 1e3,
        gbs(scan),
        copy / scan
    );
    println!(
        "tilus exclusive_scan i32       {:>10.1} us {:>8.1} GB/s(r+w)  ratio to copy {:.3}",
        ex * 1e3,
        gbs(ex),
        copy / ex
    );
    let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let (inf, outf) = (dev.upload(&xf)?, dev.zeros::<f32>(n)?);
    let mut sf = ScanStorage::<f32>::new(&dev, n)?;
    sf.scan(&stream, ScanOp::Sum, &inf, &outf, false)?;
    let f = median(dev.time_ms(reps, || sf.scan(&stream, ScanOp::Sum, &inf, &outf, false))?);
    println!(
        "tilus inclusive_scan f32       {:>10.1} us {:>8.1} GB/s(r+w)  ratio to copy {:.3}",
        f * 1e3,
        gbs(f),
        copy / f
    );
    Ok(())
}
