//! Two streams pipelining host-to-device copies with a kernel: while the compute stream runs
//! the kernel on chunk `k`, the copy stream uploads chunk `k + 1` into the other of two device
//! buffers. Events order the two (a buffer is refilled only after the kernel that read it is
//! done; a kernel starts only after its chunk arrived). On a GPU the copies overlap the kernels
//! and the event timings are printed; on the emulator every operation runs when issued (in
//! the same order), so the results are the same.
//!
//! cargo run --release --example streams                    # the CPU emulator
//! cargo run --release --example streams --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// `y = 3·x + 1`, repeated `rounds` times (the work per element).
#[tile_kernel(threads = 128)]
fn affine_rounds(x: GlobalTensor<i32>, y: GlobalTensor<i32>, rounds: i32) {
    for start in (block_idx() * 512..x.len()).step_by(grid_dim() * 512) {
        let mut a = load_global(x, offsets = [start], shape = [512]);
        for _r in 0..rounds {
            a = a * 3 + 1;
        }
        store_global(y, a, offsets = [start]);
    }
}

/// `rounds` applications of `a ↦ 3a + 1` (wrapping, as the kernel's i32 arithmetic) as one
/// affine map `a ↦ m·a + c`, so that the CPU check is one multiply-add per element.
fn reference_map(rounds: i32) -> (i32, i32) {
    (0..rounds).fold((1i32, 0i32), |(m, c), _| {
        (m.wrapping_mul(3), c.wrapping_mul(3).wrapping_add(1))
    })
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let gpu = dev.is_gpu();
    // Sizes: large on a GPU (so that overlap shows), small on the emulator.
    let (n, chunk, rounds) = if gpu {
        (64 << 20, 8 << 20, 200)
    } else {
        (100_003, 16_384, 3)
    };
    let data: Vec<i32> = (0..n as i64)
        .map(|i| (i * 2_654_435_761 % 1_000_003) as i32)
        .collect();
    let out = dev.full(n, -1i32)?; // poisoned
    let bufs = [dev.zeros::<i32>(chunk)?, dev.zeros::<i32>(chunk)?];
    let (copy, compute) = (dev.stream()?, dev.stream()?);
    let uploaded = [dev.event()?, dev.event()?];
    let consumed = [dev.event()?, dev.event()?];
    let (start, end) = (dev.event()?, dev.event()?);

    // A pinned staging buffer per chunk (allocated up front: pinning is slow and synchronous),
    // each owned by its copy until the copy completes.
    let mut staging = Vec::new();
    for lo in (0..n).step_by(chunk) {
        staging.push(dev.host_buffer_from(&data[lo..(lo + chunk).min(n)])?);
    }
    // Load the kernel's module before timing: the first launch JIT-compiles its PTX, which
    // would otherwise be counted in the pipeline (tens of milliseconds on an H100).
    affine_rounds::launch_on(&compute, 1, &bufs[0], &bufs[1], 0)?;
    start.record(&compute)?;
    copy.wait_event(&start)?;
    let mut pending = Vec::new();
    for (k, (lo, host)) in (0..n).step_by(chunk).zip(staging).enumerate() {
        let hi = (lo + chunk).min(n);
        let b = k % 2;
        let buf = bufs[b].view(0..hi - lo)?;
        // Refill buffer `b` only once the kernel two chunks back has read it.
        if k >= 2 {
            copy.wait_event(&consumed[b])?;
        }
        pending.push(copy.upload(host, &buf)?);
        uploaded[b].record(&copy)?;
        compute.wait_event(&uploaded[b])?;
        affine_rounds::launch_on(&compute, 132, &buf, &out.view(lo..hi)?, rounds)?;
        consumed[b].record(&compute)?;
    }
    end.record(&compute)?;
    for p in pending {
        p.wait()?; // gives the staging buffer back (dropped here)
    }
    let ms = start.elapsed_ms(&end)?;

    let got = out.download()?;
    let (m, c) = reference_map(rounds);
    let bad = (0..n).find(|&i| got[i] != m.wrapping_mul(data[i]).wrapping_add(c));
    assert_eq!(bad, None, "element {bad:?} differs from the CPU's");
    println!(
        "{n} elements in {} chunks on two streams: results match the CPU",
        n.div_ceil(chunk)
    );
    if gpu {
        // Each part alone, for comparison.
        let host = dev.host_buffer_from(&data[..chunk])?;
        let (a, b) = (dev.event()?, dev.event()?);
        a.record(&copy)?;
        let host = copy.upload(host, &bufs[0])?.wait()?;
        b.record(&copy)?;
        let copy_ms = a.elapsed_ms(&b)?;
        a.record(&compute)?;
        affine_rounds::launch_on(&compute, 132, &bufs[0], &bufs[1], rounds)?;
        b.record(&compute)?;
        let kernel_ms = a.elapsed_ms(&b)?;
        let chunks = n.div_ceil(chunk) as f32;
        println!(
            "pipeline {ms:.2} ms; alone per chunk: copy {copy_ms:.2} ms, kernel {kernel_ms:.2} ms \
             (serial estimate {:.2} ms)",
            chunks * (copy_ms + kernel_ms)
        );
        drop(host);
    }
    Ok(())
}
