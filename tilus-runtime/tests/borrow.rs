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
    {
        let v = TensorView::from_cust(&dev, &buf).unwrap();
        assert_eq!(
            v.device_ptr(),
            Some(before),
            "the view is the buffer itself"
        );
        twice_plus::launch(&dev, 8, &v, 5).unwrap();
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
