//! A kernel that faults on the GPU: the fault is an `Err` at the next synchronising call, never
//! a panic or abort, and later calls keep returning errors. Alone in its test binary because a
//! fault leaves the process's context unusable. Skipped without a GPU unless
//! `TILUS_REQUIRE_GPU=1`.
#![cfg(feature = "cuda")]

use tilus_runtime::*;

const PTX: &str = r#".version 7.0
.target sm_70
.address_size 64
.visible .entry null_store()
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    mov.u64 %rd1, 0;
    mov.u32 %r1, 1;
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;

static SPEC: KernelSpec = unsafe { KernelSpec::new("null_store", PTX, b"", 32, 0, &[]) };

#[test]
fn kernel_fault_is_an_error() {
    let dev = match Device::cuda(0) {
        Ok(d) => d,
        Err(e) => {
            assert_ne!(
                std::env::var("TILUS_REQUIRE_GPU").as_deref(),
                Ok("1"),
                "no GPU: {e}"
            );
            eprintln!("skipping: no GPU ({e})");
            return;
        }
    };
    let t = dev.upload(&[1, 2, 3]).unwrap();
    // The launch itself is asynchronous and normally succeeds.
    let launched = dev.launch(&SPEC, 1, &[]);
    let err = match launched {
        Err(e) => e,
        Ok(()) => t.download().unwrap_err(),
    };
    eprintln!("fault reported as: {err}");
    // A store through a null pointer: the driver reports an illegal address (700), which is
    // sticky; older drivers may report it as a failed launch (719).
    assert!(
        matches!(err, Error::IllegalAddress(_) | Error::LaunchFailed(_)),
        "{err}"
    );
    assert!(err.driver().is_some_and(|d| d.is_sticky()), "{err}");
    assert!(dev.synchronize().is_err());
    assert!(dev.launch(&SPEC, 1, &[]).is_err() || dev.synchronize().is_err());
    drop(t); // must not panic
}
