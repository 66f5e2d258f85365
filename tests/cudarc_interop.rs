//! Borrowing cudarc's device memory (feature `cudarc`): round trips with no copy (same device
//! address before and after, results against the CPU), cudarc's event tracking across streams
//! in both directions, sub-views and reinterpreted bytes, the end of a scope that fails or
//! panics, and the errors: emulator, another GPU, another CUDA context, another `CudaContext`
//! object, element sizes that do not divide, misaligned views.
//!
//! Everything but the first test needs a GPU: without one they pass as skipped (printing so),
//! with `TILUS_REQUIRE_GPU=1` they fail.
//!
//! cargo test --features cudarc --test cudarc_interop

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use tilus::cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use tilus::prelude::*;
use tilus::Error;

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

/// `x[i] = 2·x[i]` in place, in bf16.
#[tile_kernel(threads = 128)]
fn double_bf16(x: GlobalTensor<bf16>) {
    for start in (block_idx() * 512..x.len()).step_by(grid_dim() * 512) {
        let v = load_global(x, offsets = [start], shape = [512]);
        store_global(x, v + v, offsets = [start]);
    }
}

/// Integer-valued inputs (exact in f32 and bf16 arithmetic, fused or not).
fn inputs(n: usize, seed: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| ((i + seed) % 1000) as f32 - 500.0).collect();
    let y = (0..n)
        .map(|i| (((i + seed) * 7919) % 2001) as f32 - 1000.0)
        .collect();
    (x, y)
}

fn axpy_ref(x: &[f32], y: &[f32], a: f32) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| y + a * x).collect()
}

/// The GPU, or `None` (printed as a skip) without one; a failure with `TILUS_REQUIRE_GPU=1`.
fn gpu(test: &str) -> Option<Device> {
    let dev = common::gpu();
    if dev.is_none() {
        eprintln!("{test}: skipped: no GPU (set TILUS_REQUIRE_GPU=1 to make this a failure)");
    }
    dev
}

/// The device address cudarc reports for `s`.
fn address<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    let (ptr, _record) = s.device_ptr(stream);
    ptr
}

#[test]
fn kernels_match_the_cpu_on_the_emulator() {
    // The kernels and references of the GPU tests below, checked where there is no GPU.
    let dev = common::emulator();
    let (x, y) = inputs(5_000, 3);
    let (xt, yt) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
    axpy::launch(&dev, 4, &xt, &yt, 3.0).unwrap();
    assert_eq!(yt.download().unwrap(), axpy_ref(&x, &y, 3.0));
    clamp_below::launch(&dev, 2, &yt.view(1024..2048).unwrap(), 0.0).unwrap();
    let mut want = axpy_ref(&x, &y, 3.0);
    for w in &mut want[1024..2048] {
        *w = w.max(0.0);
    }
    assert_eq!(yt.download().unwrap(), want);
    let h: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(v)).collect();
    let ht = dev.upload(&h).unwrap();
    double_bf16::launch(&dev, 2, &ht).unwrap();
    let want: Vec<bf16> = x.iter().map(|&v| bf16::from_f32(2.0 * v)).collect();
    assert_eq!(ht.download().unwrap(), want);
}

#[test]
fn safe_scope_round_trip_on_the_default_stream() {
    let Some(dev) = gpu("safe_scope_round_trip_on_the_default_stream") else {
        return;
    };
    // cudarc in single-stream mode: everything on the null stream, no events.
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let (xh, yh) = inputs(300_001, 0);
    let x = stream.clone_htod(&xh).unwrap();
    let mut y = stream.clone_htod(&yh).unwrap();
    let (xa, ya) = (address(&x, &stream), address(&y, &stream));
    let seen = dev
        .cudarc_scope(&stream, |scope| {
            let xv = scope.borrow(&x)?;
            let yv = scope.borrow_mut(&mut y)?;
            assert_eq!((xv.len(), yv.len()), (xh.len(), yh.len()));
            assert_eq!(scope.stream().as_raw(), Some(std::ptr::null_mut()));
            axpy::launch_on(scope.stream(), 40, &xv, &yv, -2.0)?;
            Ok((xv.device_ptr(), yv.device_ptr()))
        })
        .unwrap();
    assert_eq!(seen, (Some(xa), Some(ya)), "the views are cudarc's memory");
    assert!(stream.clone_dtoh(&y).unwrap() == axpy_ref(&xh, &yh, -2.0));
    assert!(
        stream.clone_dtoh(&x).unwrap() == xh,
        "read-only input unchanged"
    );
    assert_eq!((address(&x, &stream), address(&y, &stream)), (xa, ya));
}

#[test]
fn cudarc_events_order_kernels_across_streams() {
    let Some(dev) = gpu("cudarc_events_order_kernels_across_streams") else {
        return;
    };
    // Multi-stream mode: cudarc orders its streams with each slice's read and write events.
    // Uploads on one stream, kernels on a second, read-backs on a third; the stream-ordered
    // scope adds no host synchronisation, so only the events order them. Large buffers and
    // several rounds, so that a missing wait would show as wrong values.
    let ctx = CudaContext::new(0).unwrap();
    let (up, compute, down) = (
        ctx.new_stream().unwrap(),
        ctx.new_stream().unwrap(),
        ctx.new_stream().unwrap(),
    );
    assert!(ctx.is_managing_stream_synchronization());
    let n = 1 << 23;
    for round in 0..4 {
        let (xh, yh) = inputs(n, round);
        let x = up.clone_htod(&xh).unwrap(); // in flight when the kernel is queued
        let mut y = up.clone_htod(&yh).unwrap();
        let before = address(&y, &up);
        // SAFETY: the views are used only by launches on `scope.stream()`.
        unsafe {
            dev.cudarc_scope_on_stream(&compute, |scope| {
                let xv = scope.borrow(&x)?;
                let yv = scope.borrow_mut(&mut y)?;
                for _ in 0..3 {
                    axpy::launch_on(scope.stream(), 264, &xv, &yv, 1.0)?;
                }
                Ok(())
            })
        }
        .unwrap();
        // `down` waits for `y`'s write event, recorded on `compute` after the kernels.
        let got = down.clone_dtoh(&y).unwrap();
        let want = axpy_ref(&xh, &axpy_ref(&xh, &axpy_ref(&xh, &yh, 1.0), 1.0), 1.0);
        assert!(got == want, "round {round}: results differ from the CPU");
        assert_eq!(address(&y, &down), before);
        // A cudarc write after the scope waits for the kernels' reads of `x` (its read event).
        let mut x = x;
        up.memset_zeros(&mut x).unwrap();
        assert!(down.clone_dtoh(&x).unwrap() == vec![0.0; n]);
    }
}

#[test]
fn safe_scope_views_on_other_streams() {
    let Some(dev) = gpu("safe_scope_views_on_other_streams") else {
        return;
    };
    // In the safe scope a view may go to any stream: here the device's default stream (not
    // ordered with cudarc's non-blocking streams) and a tilus stream; the scope's
    // synchronisation orders them with cudarc.
    let ctx = CudaContext::new(0).unwrap();
    let (up, compute) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let (xh, yh) = inputs(1 << 22, 5);
    let x = up.clone_htod(&xh).unwrap();
    let mut y = up.clone_htod(&yh).unwrap();
    let mine = dev.stream().unwrap();
    dev.cudarc_scope(&compute, |scope| {
        let xv = scope.borrow(&x)?;
        let yv = scope.borrow_mut(&mut y)?;
        axpy::launch(&dev, 132, &xv, &yv, 1.0)?;
        mine.synchronize()?;
        axpy::launch_on(&mine, 132, &xv, &yv, 1.0)?;
        dev.synchronize()?;
        assert!(yv.download()? == axpy_ref(&xh, &axpy_ref(&xh, &yh, 1.0), 1.0));
        Ok(())
    })
    .unwrap();
    assert!(up.clone_dtoh(&y).unwrap() == axpy_ref(&xh, &axpy_ref(&xh, &yh, 1.0), 1.0));
}

#[test]
fn sub_views_and_reinterpreted_bytes() {
    let Some(dev) = gpu("sub_views_and_reinterpreted_bytes") else {
        return;
    };
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let (xh, _) = inputs(10_000, 1);

    // A cudarc `CudaViewMut` (a range of a slice): the view starts at its address.
    let mut x = stream.clone_htod(&xh).unwrap();
    let base = address(&x, &stream);
    {
        let mut mid = x.slice_mut(256..8_000);
        dev.cudarc_scope(&stream, |scope| {
            let v = scope.borrow_mut(&mut mid)?;
            assert_eq!(v.device_ptr(), Some(base + 4 * 256));
            assert_eq!(v.len(), 8_000 - 256);
            clamp_below::launch_on(scope.stream(), 8, &v, 0.0)
        })
        .unwrap();
    }
    let mut want = xh.clone();
    for w in &mut want[256..8_000] {
        *w = w.max(0.0);
    }
    assert_eq!(stream.clone_dtoh(&x).unwrap(), want);

    // Bytes as f32: a `CudaSlice<u8>` of 4n bytes is n floats.
    let bytes: Vec<u8> = xh.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut b = stream.clone_htod(&bytes).unwrap();
    dev.cudarc_scope(&stream, |scope| {
        let v = scope.borrow_mut_as::<f32>(&mut b)?;
        assert_eq!(v.len(), xh.len());
        clamp_below::launch_on(scope.stream(), 8, &v, 100.0)
    })
    .unwrap();
    let got: Vec<f32> = stream
        .clone_dtoh(&b)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, xh.iter().map(|v| v.max(100.0)).collect::<Vec<_>>());

    // bf16 bit patterns kept as u16 (cudarc without its `f16` feature) as bf16.
    let bits: Vec<u16> = xh.iter().map(|&v| bf16::from_f32(v).to_bits()).collect();
    let mut h = stream.clone_htod(&bits).unwrap();
    dev.cudarc_scope(&stream, |scope| {
        let v = scope.borrow_mut_as::<bf16>(&mut h)?;
        double_bf16::launch_on(scope.stream(), 8, &v)
    })
    .unwrap();
    let want: Vec<u16> = xh
        .iter()
        .map(|&v| bf16::from_f32(2.0 * v).to_bits())
        .collect();
    assert_eq!(stream.clone_dtoh(&h).unwrap(), want);

    // A shared borrow of the same memory as another type.
    let f = stream.clone_htod(&xh).unwrap();
    dev.cudarc_scope(&stream, |scope| {
        let as_u32 = scope.borrow_as::<u32>(&f)?;
        assert_eq!(as_u32.len(), xh.len());
        let got: Vec<u32> = as_u32.download()?;
        assert_eq!(got, xh.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        Ok(())
    })
    .unwrap();

    // Element sizes that do not divide the bytes: an error before anything is borrowed.
    let odd = stream.alloc_zeros::<u8>(4 * 1000 + 2).unwrap();
    let err = dev
        .cudarc_scope(&stream, |scope| scope.borrow_as::<f32>(&odd).map(|_| ()))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ElementSize {
                bytes: 4002,
                from: tilus::DType::U8,
                to: tilus::DType::F32,
                ..
            }
        ),
        "{err}"
    );
    let mut odd16 = stream.alloc_zeros::<u16>(3).unwrap();
    let err = dev
        .cudarc_scope(&stream, |scope| {
            scope.borrow_mut_as::<u32>(&mut odd16).map(|_| ())
        })
        .unwrap_err();
    assert!(matches!(err, Error::ElementSize { bytes: 6, .. }), "{err}");

    // A view that starts one f32 into an allocation: borrowed, but kernels reject it.
    let tail = x.slice(1..);
    let err = dev
        .cudarc_scope(&stream, |scope| {
            let v = scope.borrow(&tail)?;
            clamp_below::launch_on(scope.stream(), 8, &v, 0.0)
        })
        .unwrap_err();
    assert!(matches!(err, Error::Misaligned { .. }), "{err}");
}

#[test]
fn a_scope_ends_when_its_closure_fails_or_panics() {
    let Some(dev) = gpu("a_scope_ends_when_its_closure_fails_or_panics") else {
        return;
    };
    let ctx = CudaContext::new(0).unwrap();
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let (xh, yh) = inputs(1 << 20, 9);
    let x = s1.clone_htod(&xh).unwrap();
    let mut y = s1.clone_htod(&yh).unwrap();

    // An error returned by the closure comes back after the scope has ended.
    let err = dev
        .cudarc_scope(&s2, |scope| {
            let xv = scope.borrow(&x)?;
            let yv = scope.borrow_mut(&mut y)?;
            axpy::launch_on(scope.stream(), 64, &xv, &yv, 1.0)?;
            Err::<(), _>(Error::NoGpu {
                message: "from the closure".into(),
            })
        })
        .unwrap_err();
    assert!(matches!(err, Error::NoGpu { .. }), "{err}");
    assert!(s1.clone_dtoh(&y).unwrap() == axpy_ref(&xh, &yh, 1.0));

    // A panic unwinds through the end of the scope, which records cudarc's events (and, in
    // a synchronising scope, waits for the kernels).
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the views are used only by the launch on `scope.stream()`.
        unsafe {
            dev.cudarc_scope_on_stream(&s2, |scope| {
                let xv = scope.borrow(&x)?;
                let yv = scope.borrow_mut(&mut y)?;
                axpy::launch_on(scope.stream(), 64, &xv, &yv, 1.0)?;
                if !yv.is_empty() {
                    panic!("inside the scope");
                }
                Ok(())
            })
        }
    }));
    assert!(panicked.is_err());
    // s1 waits for `y`'s write event, recorded on s2 while unwinding.
    let want = axpy_ref(&xh, &axpy_ref(&xh, &yh, 1.0), 1.0);
    assert!(s1.clone_dtoh(&y).unwrap() == want);
}

#[test]
fn stream_from_cudarc() {
    let Some(dev) = gpu("stream_from_cudarc") else {
        return;
    };
    let ctx = CudaContext::new(0).unwrap();
    let theirs = ctx.new_stream().unwrap();
    let s = tilus::Stream::from_cudarc(&dev, &theirs).unwrap();
    assert_eq!(s.as_raw(), Some(theirs.cu_stream().cast()));
    let (xh, yh) = inputs(100_000, 2);
    let (x, y) = (dev.upload(&xh).unwrap(), dev.upload(&yh).unwrap());
    axpy::launch_on(&s, 16, &x, &y, 5.0).unwrap();
    theirs.synchronize().unwrap();
    assert!(y.download().unwrap() == axpy_ref(&xh, &yh, 5.0));
    let null = ctx.default_stream();
    let d = tilus::Stream::from_cudarc(&dev, &null).unwrap();
    assert_eq!(d.as_raw(), Some(std::ptr::null_mut()));
}

#[test]
fn wrong_device_and_context_are_errors() {
    let Some(dev) = gpu("wrong_device_and_context_are_errors") else {
        return;
    };
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let x = stream.clone_htod(&[1.0f32; 64]).unwrap();

    // The emulator has no cudarc memory.
    let emu = common::emulator();
    let err = emu.cudarc_scope(&stream, |_| Ok(())).unwrap_err();
    assert!(matches!(err, Error::WrongBackend { .. }), "{err}");
    let err = tilus::Stream::from_cudarc(&emu, &stream).unwrap_err();
    assert!(matches!(err, Error::WrongBackend { .. }), "{err}");

    // Memory and stream of two `CudaContext` objects (of the same primary context): cudarc
    // tracks events per object, so the borrow is refused.
    let ctx2 = CudaContext::new(0).unwrap();
    let stream2 = ctx2.new_stream().unwrap();
    let err = dev
        .cudarc_scope(&stream2, |scope| scope.borrow(&x).map(|_| ()))
        .unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");

    // A context other than the primary one (cudarc's `new_non_primary` calls cuCtxCreate_v4,
    // driver 12.5 or newer).
    let mut driver = 0;
    // SAFETY: writes one int.
    let _ = unsafe { tilus::cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    let other = (driver >= 12050).then(|| CudaContext::new_non_primary(0, 0));
    if let Some(Ok(other)) = other {
        let other_stream = other.new_stream().unwrap();
        let theirs = other_stream.clone_htod(&[1.0f32; 64]).unwrap();
        let err = dev.cudarc_scope(&other_stream, |_| Ok(())).unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        assert!(err.to_string().contains("primary"), "{err}");
        let err = tilus::Stream::from_cudarc(&dev, &other_stream).unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        let err = dev
            .cudarc_scope(&stream, |scope| scope.borrow(&theirs).map(|_| ()))
            .unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        drop(theirs);
        other_stream.synchronize().unwrap();
    } else {
        // Older drivers lack cuCtxCreate_v4; a GPU in exclusive-process mode allows one context.
        eprintln!("non-primary context: skipped (driver {driver}: {other:?})");
    }

    // Another GPU's memory and stream.
    if CudaContext::device_count().unwrap() >= 2 {
        let gpu1 = CudaContext::new(1).unwrap();
        let s1 = gpu1.new_stream().unwrap();
        let theirs = s1.clone_htod(&[1.0f32; 64]).unwrap();
        let err = dev.cudarc_scope(&s1, |_| Ok(())).unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
        assert!(err.to_string().contains("GPU 1"), "{err}");
        let err = dev
            .cudarc_scope(&stream, |scope| scope.borrow(&theirs).map(|_| ()))
            .unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
    } else {
        eprintln!("another GPU's memory: skipped (one GPU)");
    }

    // After all that, the memory is still fine to use.
    dev.cudarc_scope(&stream, |scope| {
        let v = scope.borrow(&x)?;
        assert_eq!(v.download()?, vec![1.0; 64]);
        Ok(())
    })
    .unwrap();
}
