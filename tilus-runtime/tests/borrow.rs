//! Borrowed device memory: `TensorView`s of tilus tensors (both backends) and of cust buffers
//! or raw device pointers (GPU), passed to the typed launchers in place of `GlobalTensor`s with
//! no copy.

mod common;

use rand::Rng;
use tilus::prelude::*;
use tilus::Error;

/// `x[i] = x[i] * 2 + k` for every element.
#[tile_kernel(threads = 64)]
fn twice_plus(x: GlobalTensor<i32>, k: i32) {
    for start in (block_idx() * 256..x.len()).step_by(grid_dim() * 256) {
        let a = load_global(x, offsets = [start], shape = [256]);
        store_global(x, a * 2 + k, offsets = [start]);
    }
}

#[test]
fn a_view_is_written_in_place_and_nothing_else_is() {
    let mut rng = rand::thread_rng();
    for dev in common::devices() {
        let n = 3_000 + rng.gen_range(0..100);
        let data: Vec<i32> = (0..n).map(|_| rng.gen_range(-10_000..10_000)).collect();
        let t = dev.upload(&data).unwrap();
        // An aligned sub-range (4 i32 = 16 bytes) of odd length.
        let (lo, hi) = (4 * rng.gen_range(1..100), n - rng.gen_range(1..50));
        let v = t.view(lo..hi).unwrap();
        assert_eq!(v.address(), t.address() + 4 * lo as u64);
        twice_plus::launch(&dev, 3, &v, 7).unwrap();
        let mut want = data.clone();
        for w in &mut want[lo..hi] {
            *w = *w * 2 + 7;
        }
        assert_eq!(t.download().unwrap(), want, "{}", dev.name());
        // A view of the view, then the whole tensor: launchers take both kinds.
        let w = v.view(4..8).unwrap();
        twice_plus::launch(&dev, 1, &w, 0).unwrap();
        for x in &mut want[lo + 4..lo + 8] {
            *x *= 2;
        }
        twice_plus::launch(&dev, 2, &t, 1).unwrap();
        for x in &mut want {
            *x = *x * 2 + 1;
        }
        assert_eq!(t.download().unwrap(), want, "{}", dev.name());
    }
}

#[test]
fn unaligned_and_out_of_range_views_are_refused() {
    for dev in common::devices() {
        let t = dev.zeros::<i32>(100).unwrap();
        let v = t.view(1..50).unwrap(); // 4 bytes past an aligned start
        match twice_plus::launch(&dev, 1, &v, 1) {
            Err(Error::Misaligned { param, .. }) => assert_eq!(param, "x"),
            other => panic!("{}: {other:?}", dev.name()),
        }
        assert_eq!(t.download().unwrap(), vec![0; 100], "nothing ran");
        #[allow(clippy::reversed_empty_ranges)] // a reversed range is one of the cases
        for r in [90..101, 50..40, 101..101] {
            assert!(
                matches!(t.view(r.clone()), Err(Error::OutOfRange { .. })),
                "{r:?}"
            );
        }
        assert!(t.view(100..100).unwrap().is_empty());
    }
}

#[cfg(feature = "cuda")]
#[test]
fn raw_views_need_a_gpu() {
    let dev = Device::emulator();
    // SAFETY: refused before the pointer is used.
    let r = unsafe { TensorView::<i32>::from_raw(&dev, 0x1000, 4) };
    assert!(matches!(r, Err(Error::WrongBackend { .. })));
}

#[cfg(feature = "cuda")]
#[test]
fn cust_buffers_round_trip_with_no_copy() {
    use tilus::cust::memory::{CopyDestination, DeviceBuffer};
    let Some(dev) = common::gpu() else { return };
    // cust calls on this thread need the device's context current (see `Device::cuda_context`).
    tilus::cust::context::CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let data: Vec<i32> = (0..10_000).map(|i| i * 7 - 3_000).collect();
    let buf = DeviceBuffer::from_slice(&data).unwrap();
    let before = buf.as_device_ptr().as_raw();
    TensorView::with_cust(&dev, &buf, |v| {
        assert_eq!(
            v.device_ptr(),
            Some(before),
            "the view is the buffer itself"
        );
        twice_plus::launch(&dev, 8, v, 5)
    })
    .unwrap();
    {
        // The same memory by raw address: a second view of the buffer.
        // SAFETY: `buf` outlives the view; in bounds, aligned, initialised, on `dev`'s context.
        let r = unsafe { TensorView::<i32>::from_raw(&dev, before + 4 * 16, 100) }.unwrap();
        twice_plus::launch(&dev, 1, &r, 0).unwrap();
        dev.synchronize().unwrap();
    }
    assert_eq!(
        buf.as_device_ptr().as_raw(),
        before,
        "still the user's buffer"
    );
    let mut out = vec![0; data.len()];
    buf.copy_to(&mut out[..]).unwrap();
    let want: Vec<i32> = data
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let y = x * 2 + 5;
            if (16..116).contains(&i) {
                y * 2
            } else {
                y
            }
        })
        .collect();
    assert_eq!(out, want);
    // A pointer the driver does not know is refused at construction.
    let bogus = unsafe { TensorView::<i32>::from_raw(&dev, 0x10, 4) };
    assert!(bogus.is_err(), "{bogus:?}");
}

/// A long kernel: `rounds` passes of `x = x * 2 + 1` over all of `x`.
#[tile_kernel(threads = 256)]
fn churn(x: GlobalTensor<i32>, rounds: i32) {
    for _r in 0..rounds {
        for start in (block_idx() * 1024..x.len()).step_by(grid_dim() * 1024) {
            let a = load_global(x, offsets = [start], shape = [1024]);
            store_global(x, a * 2 + 1, offsets = [start]);
        }
    }
}

/// The safe borrow of a cust buffer ends only once the work that used it is done, on every
/// stream: cust's stream-ordered `drop_async` right after the scope cannot free the memory
/// under a running kernel (with the old safe `from_cust` it could).
#[cfg(feature = "cuda")]
#[test]
fn a_cust_borrow_ends_after_its_work_on_every_stream() {
    use tilus::cust::memory::DeviceBuffer;
    use tilus::cust::stream::{Stream as CustStream, StreamFlags};
    let Some(dev) = common::gpu() else { return };
    tilus::cust::context::CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let buf = DeviceBuffer::from_slice(&vec![0i32; 1 << 22]).unwrap();
    let other = CustStream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let s = tilus::Stream::borrow_cust(&dev, &other).unwrap();
    let done = dev.event().unwrap();
    TensorView::with_cust(&dev, &buf, |v| {
        churn::launch_on(&s, 132, v, 200)?;
        done.record(&s)
    })
    .unwrap();
    assert!(
        done.is_complete().unwrap(),
        "the scope returned while its kernel was running"
    );
    // Now a stream-ordered free on another stream is safe.
    buf.drop_async(&other).unwrap();
    other.synchronize().unwrap();
}

/// A freshly filled tensor holds its values for work on any stream, a non-blocking one too
/// (which the legacy default stream of the fill does not order).
#[cfg(feature = "cuda")]
#[test]
fn filled_tensors_are_filled_for_non_blocking_streams() {
    use tilus::cust::stream::{Stream as CustStream, StreamFlags};
    let Some(dev) = common::gpu() else { return };
    tilus::cust::context::CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let other = CustStream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let s = tilus::Stream::borrow_cust(&dev, &other).unwrap();
    for round in 0..4 {
        // Freed memory full of non-zero values, likely handed out again by the next allocation.
        drop(dev.full::<i32>(1 << 24, -1).unwrap());
        let z = dev.zeros::<i32>(1 << 24).unwrap();
        // At once on the other stream: `x * 2 + 1` of zeros is 1 everywhere.
        churn::launch_on(&s, 132, &z, 1).unwrap();
        s.synchronize().unwrap();
        let got = z.download().unwrap();
        let bad = got.iter().filter(|&&v| v != 1).count();
        assert_eq!(bad, 0, "round {round}: the kernel saw unfilled memory");
    }
}

/// Copying between overlapping views is undefined in CUDA: both backends refuse it alike, and a
/// copy of elements onto themselves does nothing.
#[test]
fn overlapping_copies_are_refused_on_every_backend() {
    for dev in common::devices() {
        let data: Vec<i32> = (0..64).collect();
        let t = dev.upload(&data).unwrap();
        let (a, b) = (t.view(0..32).unwrap(), t.view(16..48).unwrap());
        match dev.copy(&a, &b) {
            Err(Error::OverlappingCopy { op }) => assert_eq!(op, "Device::copy"),
            other => panic!("{}: {other:?}", dev.name()),
        }
        let s = dev.stream().unwrap();
        assert!(matches!(s.copy(&b, &a), Err(Error::OverlappingCopy { .. })));
        dev.copy(&a, &t.view(0..32).unwrap()).unwrap();
        // Adjacent views do not overlap.
        dev.copy(&t.view(0..16).unwrap(), &t.view(16..32).unwrap())
            .unwrap();
        let mut want = data.clone();
        want.copy_within(0..16, 16);
        assert_eq!(t.download().unwrap(), want, "{}", dev.name());
    }
}
