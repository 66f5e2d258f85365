//! A kernel writing through an out-of-contract `TensorView::from_raw` (longer than its memory)
//! faults with `Error::IllegalAddress`, reported by the next synchronising call with the
//! driver's code. Alone in its test binary: the fault poisons the process's CUDA context.
//! Skipped without a GPU unless `TILUS_REQUIRE_GPU=1`.
#![cfg(feature = "cuda")]

mod common;

use tilus::prelude::*;
use tilus::Error;

/// Store `value` at element `at` of `x`.
#[tile_kernel(threads = 32)]
fn poke(x: GlobalTensor<i32>, at: i64, value: i32) {
    store_global(x, full([1], value), offsets = [at]);
}

#[test]
fn a_write_past_the_allocation_is_an_illegal_address() {
    let Some(dev) = common::gpu() else { return };
    let t = dev.zeros::<i32>(64).unwrap();
    let ptr = t.device_ptr().unwrap();
    // 2^36 elements claimed over 64: the last one is 256 GiB past the allocation, where nothing
    // is mapped. Breaks the `from_raw` extent contract on purpose, which is the point here.
    let len = 1usize << 36;
    // SAFETY: deliberately violated (extent): the test checks the fault is reported as an
    // error. Nothing on the host reads the memory.
    let v = unsafe { TensorView::<i32>::from_raw(&dev, ptr, len) }.unwrap();
    // Inside the allocation: fine.
    poke::launch(&dev, 1, &v, 3, 9).unwrap();
    assert_eq!(t.download().unwrap()[3], 9);
    let launched = poke::launch(&dev, 1, &v, len as i64 - 1, 1);
    let err = match launched {
        Err(e) => e,
        Ok(()) => dev.synchronize().unwrap_err(),
    };
    eprintln!("reported as: {err}");
    match &err {
        Error::IllegalAddress(d) => {
            assert_eq!(d.code, 700);
            assert!(d.is_sticky());
        }
        other => panic!("{other:?}"),
    }
    // Sticky: later calls fail too, with errors rather than panics.
    assert!(t.download().is_err());
}
