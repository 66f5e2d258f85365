//! `Device::default` and `TILUS_REQUIRE_GPU` (one test: it changes the environment).

use tilus_runtime::{Device, Error};

#[test]
fn default_device_and_require_gpu() {
    let require = std::env::var("TILUS_REQUIRE_GPU").ok();

    std::env::remove_var("TILUS_REQUIRE_GPU");
    let d = Device::default().expect("without TILUS_REQUIRE_GPU there is always a device");
    let again = Device::default().unwrap();
    assert!(d.same_device(&again), "the default device is shared");
    if !cfg!(feature = "cuda") {
        assert!(!d.is_gpu());
    }

    std::env::set_var("TILUS_REQUIRE_GPU", "1");
    match Device::default() {
        Ok(d) => assert!(
            d.is_gpu(),
            "TILUS_REQUIRE_GPU=1 must never give the emulator"
        ),
        Err(e) => {
            assert!(matches!(e, Error::NoGpu { .. }), "{e}");
            assert!(e.to_string().contains("TILUS_REQUIRE_GPU=1"), "{e}");
        }
    }

    match require {
        Some(v) => std::env::set_var("TILUS_REQUIRE_GPU", v),
        None => std::env::remove_var("TILUS_REQUIRE_GPU"),
    }
}
