//! tilus kernels on memory that cudarc owns, with no copy: buffers allocated and filled with
//! cudarc (the crate candle and most Rust CUDA code keep their memory in) are borrowed as
//! `TensorView`s in a `Device::cudarc_scope`, updated in place by two kernels, and read back
//! with cudarc; the result is checked against the CPU and the device address against the one
//! cudarc reported before the kernels ran.
//!
//! It uses cudarc's multi-stream mode (streams from `new_stream`), in which cudarc orders each
//! buffer's readers and writers with events: the uploads run on one cudarc stream, the kernels
//! on a second and the read-back on a third, and the events alone order them:
//!
//! * the safe `cudarc_scope` (first kernel) also waits for the device when memory is borrowed
//!   and when the scope ends, so the views may be used on any stream;
//! * the `unsafe` `cudarc_scope_on_stream` (second kernel) does not wait: its caller promises
//!   that the views are used only on the scope's stream.
//!
//! cargo run --release --example cudarc_interop --features cudarc
//!
//! cudarc's memory lives on a GPU: without one this example prints a line saying it skipped
//! and exits successfully (with `TILUS_REQUIRE_GPU=1` it fails instead).

use std::error::Error;
use tilus::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use tilus::prelude::*;

/// `y += a·x` in place.
#[tile_kernel(threads = 128)]
fn axpy(x: GlobalTensor<f32>, y: GlobalTensor<f32>, a: f32) {
    for start in (block_idx() * 512..y.len()).step_by(grid_dim() * 512) {
        let xs = load_global(x, offsets = [start], shape = [512]);
        let ys = load_global(y, offsets = [start], shape = [512]);
        store_global(y, ys + xs * a, offsets = [start]);
    }
}

/// `x[i] = max(x[i], floor)` in place.
#[tile_kernel(threads = 128)]
fn clamp_below(x: GlobalTensor<f32>, floor: f32) {
    for start in (block_idx() * 512..x.len()).step_by(grid_dim() * 512) {
        let v = load_global(x, offsets = [start], shape = [512]);
        store_global(x, max(v, floor), offsets = [start]);
    }
}

/// Integer-valued inputs, so that `y + a·x` is exact whether or not the GPU fuses it into an
/// FMA, and the comparison with the CPU can be exact.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 1000) as f32 - 500.0).collect();
    let y = (0..n)
        .map(|i| ((i * 7919) % 2001) as f32 - 1000.0)
        .collect();
    (x, y)
}

/// What the kernels below do, on the CPU.
fn reference(x: &[f32], y: &[f32], a: f32, lo: usize, hi: usize) -> Vec<f32> {
    let mut want: Vec<f32> = x.iter().zip(y).map(|(x, y)| y + a * x).collect();
    for w in &mut want[lo..hi] {
        *w = w.max(0.0);
    }
    want
}

/// The device address cudarc reports for `s`.
fn address<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (ptr, _record) = s.device_ptr(stream);
    ptr
}

fn main() -> Result<(), Box<dyn Error>> {
    // GPU 0 if there is one; with TILUS_REQUIRE_GPU=1 an error if not.
    let dev = tilus::Device::default()?;
    if !dev.is_gpu() {
        println!(
            "cudarc_interop: skipped: no GPU (running on the {}), and cudarc memory lives on \
             one; set TILUS_REQUIRE_GPU=1 to make this an error",
            dev.name()
        );
        return Ok(());
    }
    println!("device: {}", dev.name());
    let (n, a, lo, hi) = (1_000_003, 3.0f32, 4_096, 700_001);
    let (x_host, y_host) = inputs(n);

    // cudarc's side: the primary context of GPU 0 (the one tilus uses) and three streams.
    let ctx = CudaContext::new(0)?;
    let (upload, compute, readback) = (ctx.new_stream()?, ctx.new_stream()?, ctx.new_stream()?);
    let x = upload.clone_htod(&x_host)?;
    let mut y = upload.clone_htod(&y_host)?; // still in flight: `compute` waits for it
    let before = address(&y, &upload);

    // The safe scope: borrowing waits for the uploads, the end waits for the kernel.
    dev.cudarc_scope(&compute, |scope| {
        let xv = scope.borrow(&x)?; // read by the kernel
        let yv = scope.borrow_mut(&mut y)?; // written by it
        assert_eq!(yv.device_ptr(), Some(before), "the view is cudarc's memory");
        axpy::launch_on(scope.stream(), 64, &xv, &yv, a)
    })?;

    // The stream-ordered scope: no host waits at all; cudarc's events order the kernel after
    // the first one and the read-back after both.
    // SAFETY: the only use of the view (and of its range) is the launch on `scope.stream()`.
    unsafe {
        dev.cudarc_scope_on_stream(&compute, |scope| {
            let yv = scope.borrow_mut(&mut y)?;
            clamp_below::launch_on(scope.stream(), 16, &yv.view(lo..hi)?, 0.0)
        })
    }?;

    // cudarc reads back on a third stream, which waits for `y`'s write event: recorded on
    // `compute` when the scope ended, after the kernels.
    let got = readback.clone_dtoh(&y)?;
    let after = address(&y, &readback);
    println!("cudarc buffer at {before:#x} before the kernels, {after:#x} after");
    assert_eq!(
        before, after,
        "the kernels worked on cudarc's buffer itself"
    );
    assert_eq!(
        got,
        reference(&x_host, &y_host, a, lo, hi),
        "differs from the CPU"
    );
    println!("{n} elements of cudarc memory updated in place by tilus kernels, no copy: results match the CPU");
    Ok(())
}
