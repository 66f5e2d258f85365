//! A long kernel that reports its progress to the host while it runs, through mapped host
//! memory (`Device::mapped`): after each tile a block adds one to a counter with a `release`
//! atomic at `sys` scope, and the host reads it with `Acquire` and draws a progress bar.
//!
//! To show (and check) that the host sees the counter move *before the launch completes*,
//! every block waits after its first tile until the host acknowledges, through a second mapped
//! flag, that it has seen progress: the kernel provably cannot finish before that.
//!
//! cargo run --release --example progress                    # the CPU emulator
//! cargo run --release --example progress --features cuda    # an NVIDIA GPU, if present

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tilus::prelude::*;

/// `y = x * x + 1`, tile by tile; `progress[0]` counts the tiles done.
#[tile_kernel(threads = 128)]
fn squares(
    x: GlobalTensor<f32>,
    y: GlobalTensor<f32>,
    progress: GlobalTensor<u32>,
    ack: GlobalTensor<u32>,
) {
    let n = x.len();
    let mut first = true;
    for start in (block_idx() * 1024..n).step_by(grid_dim() * 1024) {
        let a = load_global(x, offsets = [start], shape = [1024]);
        store_global(y, a * a + 1.0, offsets = [start]);
        // Publish the tile: its stores happen before the count (release at system scope).
        atomic::global_add(progress, ones([1]), sem = release, scope = sys);
        if first {
            // Wait for the host to have seen progress.
            while atomic_load(ack, 0, sem = acquire, scope = sys) == 0 {}
            first = false;
        }
    }
}

const TILE: usize = 1024;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dev = tilus::Device::default()?;
    let tiles: usize = std::env::var("TILES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(96);
    let grid = 8u32;
    let data: Vec<f32> = (0..tiles * TILE).map(|i| (i % 1000) as f32 * 0.5).collect();
    let (x, y) = (dev.upload(&data)?, dev.zeros::<f32>(data.len())?);
    let (progress, ack) = (dev.mapped::<u32>(1)?, dev.mapped::<u32>(1)?);
    let bar = ProgressBar::new(tiles as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} tiles")?);
    let seen_while_running = std::thread::scope(|s| {
        // The launch (and, on a GPU, the wait for it) on a thread of its own: an emulator
        // launch returns when the kernel is done.
        let run = s.spawn(|| -> Result<(), tilus::Error> {
            squares::launch(&dev, grid, &x, &y, &progress, &ack)?;
            dev.synchronize()
        });
        let mut seen = 0;
        // (Or stop waiting when the launch has ended: it failed, and `join` says why.)
        while seen == 0 && !run.is_finished() {
            seen = progress.load(0, Ordering::Acquire);
            std::hint::spin_loop();
        }
        // Seen before the kernel could finish: every block waits for this acknowledgement.
        ack.store(0, 1, Ordering::Release);
        while !run.is_finished() {
            bar.set_position(progress.load(0, Ordering::Acquire) as u64);
            std::thread::sleep(Duration::from_millis(2));
        }
        run.join().expect("the launching thread")?;
        Ok::<u32, tilus::Error>(seen)
    })?;
    bar.finish();
    assert!(
        (1..tiles as u32).contains(&seen_while_running),
        "progress seen while running: {seen_while_running} of {tiles}"
    );
    assert_eq!(
        progress.load(0, Ordering::Acquire) as usize,
        tiles,
        "every tile counted"
    );
    let want: Vec<f32> = data.iter().map(|a| a * a + 1.0).collect();
    assert_eq!(y.download()?, want);
    println!(
        "{}: the host saw {seen_while_running} of {tiles} tiles done before the kernel finished; all {tiles} counted",
        dev.name()
    );
    Ok(())
}
