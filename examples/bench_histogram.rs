//! Benchmark (not a test): 256-bin histogram of 2^28 int32 values in [0, 256), uniform and
//! all-in-one-bin, against a device-to-device copy measured in the same run.
//!
//! cargo run --release --example bench_histogram --features cuda [-- LOG2_N]
//!
//! Prints GB/s of input read for each kernel variant and grid size, the copy rate (bytes read +
//! written per second) and the ratio. Every result is checked against a CPU count.

use tilus::prelude::*;

/// One histogram kernel per (threads, tile) variant: the body of `examples/histogram.rs` with
/// the block size and the tile length as parameters (kernels take literal shapes, so a
/// `macro_rules!` template instantiates them).
macro_rules! histogram_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal, $doc:literal) => {
        #[doc = $doc]
        #[tile_kernel(threads = $threads)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = shared_tensor(i32, [256]);
            store_shared(counts, zeros([256]));
            sync();
            let n = values.len();
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                let bins = load_global(values, offsets = [start], shape = [$tile], other = -1);
                atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
            }
            sync();
            let c = load_shared(counts);
            atomic::global_add(hist, c, mask = c != 0);
        }
    };
}

histogram_kernel!(
    hist_t4096,
    threads = 256,
    tile = 4096,
    "The shipped example's kernel: 16 values per thread, 4 × 16-byte loads."
);
histogram_kernel!(
    hist_t8192,
    threads = 256,
    tile = 8192,
    "Larger tiles: 32 values per thread in flight."
);
histogram_kernel!(
    hist_w512,
    threads = 512,
    tile = 4096,
    "512 threads: 8 values per thread."
);

type Launch =
    fn(&tilus::Device, u32, &GlobalTensor<i32>, &GlobalTensor<i32>) -> Result<(), tilus::Error>;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let default_log2 = if dev.is_gpu() { 28 } else { 22 };
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_log2);
    let n = 1usize << log2;
    let reps = if dev.is_gpu() { 30 } else { 3 };
    println!(
        "# device: {}, n = 2^{log2} int32 ({} MB), median of {reps} runs",
        dev.name(),
        (n * 4) >> 20
    );

    let mut seed = 0x9e3779b97f4a7c15u64;
    let uniform: Vec<i32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as i32 & 255
        })
        .collect();
    let onebin = vec![7i32; n];

    // The memory roofline: a device-to-device copy, bytes read + written.
    let src = dev.upload(&uniform)?;
    let dst = dev.zeros::<i32>(n)?;
    dev.copy(&src, &dst)?;
    let copy_ms = median(dev.time_ms(reps, || dev.copy(&src, &dst))?);
    let copy_gbs = 2.0 * (n * 4) as f64 / (copy_ms * 1e-3) / 1e9;
    println!(
        "{:<34} {:>10.1} us {:>9.1} GB/s",
        "device copy (read+write)",
        copy_ms * 1e3,
        copy_gbs
    );
    drop(dst);

    let kernels: [(&str, Launch); 3] = [
        ("tile 4096, 256 thr", hist_t4096::launch),
        ("tile 8192, 256 thr", hist_t8192::launch),
        ("tile 4096, 512 thr", hist_w512::launch),
    ];
    let grids: &[u32] = if dev.is_gpu() {
        &[132, 264, 528, 1056, 2112]
    } else {
        &[64]
    };
    let mut best = Vec::new();
    for (label, data) in [("uniform", &uniform), ("one bin", &onebin)] {
        let values = dev.upload(data)?;
        let mut want = vec![0i32; 256];
        for &v in data.iter() {
            want[v as usize] += 1;
        }
        let hist = dev.zeros::<i32>(256)?;
        let mut best_row = (0.0f64, String::new());
        for (kname, launch) in kernels {
            for &grid in grids {
                hist.copy_from_host(&[0; 256])?;
                launch(&dev, grid, &values, &hist)?;
                let got = hist.download()?;
                if got != want {
                    eprintln!("{label} {kname} grid {grid}: WRONG RESULT");
                    std::process::exit(1);
                }
                let ms = median(dev.time_ms(reps, || launch(&dev, grid, &values, &hist))?);
                let gbs = (n * 4) as f64 / (ms * 1e-3) / 1e9;
                println!("hist256 {label:<8} {kname:<20} grid {grid:>5} {:>10.1} us {gbs:>9.1} GB/s  ratio {:.3}", ms * 1e3, gbs / copy_gbs);
                if gbs > best_row.0 {
                    best_row = (gbs, format!("{kname}, grid {grid}"));
                }
            }
        }
        best.push((label, best_row));
    }
    println!("# summary (GB/s of input read; ratio to the copy rate {copy_gbs:.1} GB/s):");
    for (label, (gbs, which)) in best {
        println!(
            "#   {label:<8} best {gbs:>8.1} GB/s  ratio {:.3}  ({which})",
            gbs / copy_gbs
        );
    }
    Ok(())
}
