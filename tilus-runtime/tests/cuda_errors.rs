//! Driver failures as typed errors that keep the driver's code (GPU only): out of memory, and
//! the device staying usable afterwards. Skipped without a GPU unless `TILUS_REQUIRE_GPU=1`.
//! (An illegal address poisons the context: see `cuda_illegal_address.rs`.)
#![cfg(feature = "cuda")]

mod common;

use tilus::Error;

#[test]
fn out_of_memory_is_typed_and_not_sticky() {
    let Some(dev) = common::gpu() else { return };
    // 2^46 bytes: far beyond any GPU's memory.
    let err = dev.zeros::<f32>(1 << 44).unwrap_err();
    match &err {
        Error::OutOfMemory(d) => {
            assert_eq!(d.code, 2);
            assert_eq!(d.name, "CUDA_ERROR_OUT_OF_MEMORY");
            assert!(!d.is_sticky());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.driver().map(|d| d.code), Some(2));
    // The device still works.
    let t = dev.upload(&[1, 2, 3]).unwrap();
    assert_eq!(t.download().unwrap(), vec![1, 2, 3]);
}
