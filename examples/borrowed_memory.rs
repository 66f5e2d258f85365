//! Kernels on memory tilus does not own, with no copy: the round trip hands another library's
//! buffer to a tilus kernel as a `TensorView` and reads the result back through that library,
//! checking that the device address is the same before and after.
//!
//! On a GPU (`--features cuda`) the other library is `cust`: a `DeviceBuffer` is borrowed with
//! `TensorView::with_cust` (safe: the view lives in a scope that waits for the device at its
//! end, so no free of the buffer, not even cust's stream-ordered `drop_async`, can overtake the
//! kernels), and a range of it through the raw-pointer constructor `TensorView::from_raw`
//! (unsafe: its contract is written at the call). On the emulator the owner is a `GlobalTensor` standing in for the foreign buffer, and
//! the views are borrowed ranges of it (`GlobalTensor::view`): the same kernels, the same
//! checks.
//!
//! cargo run --release --example borrowed_memory                    # the CPU emulator
//! cargo run --release --example borrowed_memory --features cuda    # an NVIDIA GPU, if present

use std::error::Error;
use tilus::prelude::*;

/// `x[i] = max(x[i], floor)` in place.
#[tile_kernel(threads = 128)]
fn clamp_below(x: GlobalTensor<f32>, floor: f32) {
    for start in (block_idx() * 512..x.len()).step_by(grid_dim() * 512) {
        let a = load_global(x, offsets = [start], shape = [512]);
        store_global(x, max(a, floor), offsets = [start]);
    }
}

fn input(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919) % 2001) as f32 - 1000.0)
        .collect()
}

/// What the kernels below do, on the CPU: everything clamped at -500, then elements
/// `lo..hi` at 0.
fn reference(data: &[f32], lo: usize, hi: usize) -> Vec<f32> {
    let mut want: Vec<f32> = data.iter().map(|x| x.max(-500.0)).collect();
    for w in &mut want[lo..hi] {
        *w = w.max(0.0);
    }
    want
}

#[cfg(feature = "cuda")]
fn on_gpu(dev: &Device, data: &[f32], lo: usize, hi: usize) -> Result<Vec<f32>, Box<dyn Error>> {
    use tilus::cust::memory::{CopyDestination, DeviceBuffer};
    let buf = DeviceBuffer::from_slice(data)?; // owned by "the other library"
    let before = buf.as_device_ptr().as_raw();
    TensorView::with_cust(dev, &buf, |whole| {
        assert_eq!(whole.device_ptr(), Some(before));
        clamp_below::launch(dev, 8, whole, -500.0)
    })?;
    {
        // SAFETY: `lo..hi` lies inside `buf`, which outlives the view (declared in this block,
        // `buf` outside it, and the device is synchronised before the block ends); the address
        // is 16-byte aligned (lo is a multiple of 4 f32s), on `dev`'s context, initialised;
        // nothing else writes `buf` meanwhile.
        let part = unsafe { TensorView::<f32>::from_raw(dev, before + 4 * lo as u64, hi - lo) }?;
        clamp_below::launch(dev, 2, &part, 0.0)?;
        dev.synchronize()?;
    }
    let after = buf.as_device_ptr().as_raw();
    println!("cust buffer at {before:#x} before, {after:#x} after");
    assert_eq!(before, after, "the kernels worked on the buffer itself");
    let mut out = vec![0.0; data.len()];
    buf.copy_to(&mut out[..])?;
    Ok(out)
}

fn on_emulator(
    dev: &Device,
    data: &[f32],
    lo: usize,
    hi: usize,
) -> Result<Vec<f32>, Box<dyn Error>> {
    let owner = dev.upload(data)?; // stands in for another library's buffer
    let before = owner.address();
    {
        let whole = owner.view(0..owner.len())?;
        assert_eq!(whole.address(), before);
        clamp_below::launch(dev, 8, &whole, -500.0)?;
        let part = owner.view(lo..hi)?;
        assert_eq!(part.address(), before + 4 * lo as u64);
        clamp_below::launch(dev, 2, &part, 0.0)?;
    }
    let after = owner.address();
    println!("owner at {before:#x} before, {after:#x} after");
    assert_eq!(before, after);
    Ok(owner.download()?)
}

fn main() -> Result<(), Box<dyn Error>> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let n = 50_001;
    let (lo, hi) = (1_024, 30_003);
    let data = input(n);
    #[cfg(feature = "cuda")]
    let out = if dev.is_gpu() {
        on_gpu(&dev, &data, lo, hi)?
    } else {
        on_emulator(&dev, &data, lo, hi)?
    };
    #[cfg(not(feature = "cuda"))]
    let out = on_emulator(&dev, &data, lo, hi)?;
    assert_eq!(out, reference(&data, lo, hi), "differs from the CPU");
    println!("{n} elements borrowed in place, no copy: results match the CPU");
    Ok(())
}
