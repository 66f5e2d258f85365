//! A 256-bin histogram of a `u8` image (one byte per pixel): the per-channel statistics of image
//! pipelines (equalisation, thresholding, exposure meters).
//!
//! Each block counts into its own private copies of the 256 bins in shared memory, then adds its
//! non-zero bins to the global histogram: the global atomics are 256 per block, not one per pixel.
//!
//! The block keeps one copy of every bin per warp lane (`counts[bin * 32 + lane]`, 32 KiB): the 32
//! lanes of a warp then count in 32 different shared-memory banks, so their atomics never replay
//! on a bank conflict, which is what limits a single copy: on an H100 this kernel reads 2^30
//! bytes at 0.90 of the memory read rate, against 0.73 with a single copy (BENCHMARKS.md).
//!
//! Checks the histogram against a CPU count of a random image whose length is not a multiple of
//! the tile, with a few hot grey levels so that the bins are contended.
//!
//! cargo run --release --example histogram_u8                    # the CPU emulator
//! cargo run --release --example histogram_u8 --features cuda    # an NVIDIA GPU, if present

use rand::Rng;
use tilus::prelude::*;

/// `hist[v] += (number of pixels equal to v)` for every `v` in `0..256`.
///
/// 512 threads take 16384 pixels per step: 32 contiguous pixels per thread, which the compiler
/// loads with two 16-byte accesses. The counts are `u32`: an image of up to 2^32 - 1 pixels.
#[tile_kernel(threads = 512)]
fn histogram_u8(image: GlobalTensor<u8>, hist: GlobalTensor<u32>) {
    // Bin `b`'s copy for lane `l` is `counts[b * 32 + l]`.
    let counts = shared_tensor(u32, [256 * 32]);
    store_shared(counts, zeros([256 * 32]));
    sync();
    let n = image.len();
    // Whole tiles need no mask; block 0 counts the last, partial tile with one (a u8 has no
    // out-of-range value to pad the lanes past the end with). Written with the mask in one loop
    // the kernel is about 25% slower (BENCHMARKS.md).
    let whole = n - n % 16384;
    for start in (block_idx() * 16384..whole).step_by(grid_dim() * 16384) {
        let pixels = load_global(image, offsets = [start], shape = [16384]);
        // At most 255 * 32 + 31: the compiler proves the index in bounds and tests nothing.
        let at = pixels as i32 * 32 + lane_ids([16384]);
        atomic::shared_scatter_add(counts, dim = 0, indices = at, values = 1);
    }
    if block_idx() == 0 && whole < n {
        let pixels = load_global(image, offsets = [whole], shape = [16384]);
        let inside = arange(16384) + whole < n;
        let at = pixels as i32 * 32 + lane_ids([16384]);
        atomic::shared_scatter_add(counts, dim = 0, indices = at, values = 1, mask = inside);
    }
    sync();
    // Sum bin b's 32 copies. Round k reads copy (b + k) % 32 of every bin b: the 32 lanes of a
    // warp read 32 consecutive bins, each in its own bank.
    let mut c = zeros([256]);
    for k in 0..32 {
        c += atomic_load(counts, arange(256) * 32 + (arange(256) + k) % 32);
    }
    // Bins this block never saw need no global atomic.
    atomic::global_add(hist, c, mask = c != 0);
}

/// A small xorshift generator: the example needs no dependencies.
fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let mut rng = rand::thread_rng();
    // An odd length: neither a multiple of the 4096-pixel tile nor of 16.
    let n = if dev.is_gpu() { 10_000_019 } else { 1_000_003 };
    // A dark image with a few saturated highlights: a quarter of the pixels are 0 or 255,
    // the rest a random grey level.
    let image: Vec<u8> = (0..n)
        .map(|_| {
            let r = rng.gen::<u64>();
            match r % 8 {
                0 => 0,
                1 => 255,
                _ => (r >> 32) as u8,
            }
        })
        .collect();
    // The kernel adds to what is in `hist`: start from random counts (a running histogram over
    // several images) so that a bin written instead of added to, or left alone, shows.
    let init: Vec<u32> = (0..256).map(|_| (rng.gen::<u64>() >> 48) as u32).collect();
    let mut want = init.clone();
    for &p in &image {
        want[p as usize] += 1;
    }

    let t_image = dev.upload(&image)?;
    let t_hist = dev.upload(&init)?;
    let blocks = if dev.is_gpu() { 264 } else { 16 };
    histogram_u8::launch(&dev, blocks, &t_image, &t_hist)?;
    let got = t_hist.download()?;
    if got != want {
        let bad = (0..256).find(|&b| got[b] != want[b]).unwrap_or(0);
        eprintln!(
            "MISMATCH at bin {bad}: got {}, expected {}",
            got[bad], want[bad]
        );
        std::process::exit(1);
    }
    println!(
        "u8 histogram of {n} pixels ({blocks} blocks): all 256 bins match the CPU count \
         (bin 0: +{}, bin 255: +{}, bin 128: +{})",
        want[0] - init[0],
        want[255] - init[255],
        want[128] - init[128]
    );
    Ok(())
}
