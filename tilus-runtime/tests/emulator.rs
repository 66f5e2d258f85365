//! The runtime on the emulator: memory operations, launch validation, launches.

mod common;

use common::*;
use tilus_core::emu::EmuError;
use tilus_core::ir::{DType, ParamKind};
use tilus_runtime::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn handles_are_send_and_sync() {
    assert_send_sync::<Device>();
    assert_send_sync::<GlobalTensor<i32>>();
    assert_send_sync::<KernelSpec>();
    assert_send_sync::<Error>();
    assert_send_sync::<Stream<'static>>();
    assert_send_sync::<Event>();
    assert_send_sync::<TensorView<'static, f32>>();
    assert_send_sync::<HostBuffer<u8>>();
    assert_send_sync::<Pending<Vec<i32>>>();
}

#[test]
fn upload_download_round_trip() {
    let dev = Device::emulator();
    assert!(!dev.is_gpu());
    assert_eq!(dev.name(), "CPU emulator");
    let data: Vec<i32> = (0..1000).map(|i| i * 7 - 3000).collect();
    let t = dev.upload(&data).unwrap();
    assert_eq!(t.len(), 1000);
    assert!(!t.is_empty());
    assert!(t.device().same_device(&dev));
    assert_eq!(t.download().unwrap(), data);
    assert_eq!(dev.zeros::<i32>(5).unwrap().download().unwrap(), vec![0; 5]);
    assert_eq!(dev.full(4, -9i32).unwrap().download().unwrap(), vec![-9; 4]);
    let e = dev.upload::<i32>(&[]).unwrap();
    assert!(e.is_empty());
    assert_eq!(e.download().unwrap(), Vec::<i32>::new());
}

#[test]
fn copy_from_host_checks_length() {
    let dev = Device::emulator();
    let t = dev.zeros::<i32>(3).unwrap();
    t.copy_from_host(&[1, 2, 3]).unwrap();
    assert_eq!(t.download().unwrap(), vec![1, 2, 3]);
    let err = t.copy_from_host(&[1, 2]).unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            op: "GlobalTensor::copy_from_host",
            expected: 3,
            got: 2
        }
    );
    assert!(err.to_string().contains("length mismatch"), "{err}");
    assert_eq!(
        t.download().unwrap(),
        vec![1, 2, 3],
        "a failed copy leaves the tensor alone"
    );
}

#[test]
fn device_copy() {
    let dev = Device::emulator();
    let a = dev.upload(&[1, 2, 3]).unwrap();
    let b = dev.zeros::<i32>(3).unwrap();
    dev.copy(&a, &b).unwrap();
    assert_eq!(b.download().unwrap(), vec![1, 2, 3]);
    dev.copy(&a, &a).unwrap();
    assert_eq!(a.download().unwrap(), vec![1, 2, 3]);

    let c = dev.zeros::<i32>(4).unwrap();
    assert!(matches!(
        dev.copy(&a, &c),
        Err(Error::LengthMismatch {
            op: "Device::copy",
            expected: 4,
            got: 3
        })
    ));

    let other = Device::emulator();
    let d = other.zeros::<i32>(3).unwrap();
    let err = dev.copy(&a, &d).unwrap_err();
    assert!(matches!(err, Error::DeviceMismatch { .. }), "{err}");
}

#[test]
fn time_ms_reports_each_rep() {
    let dev = Device::emulator();
    let a = dev.zeros::<i32>(1 << 12).unwrap();
    let b = dev.zeros::<i32>(1 << 12).unwrap();
    let times = dev.time_ms(4, || dev.copy(&a, &b)).unwrap();
    assert_eq!(times.len(), 4);
    assert!(times.iter().all(|t| t.is_finite() && *t >= 0.0));
    let mut n = 0;
    let err = dev
        .time_ms(5, || {
            n += 1;
            if n == 2 {
                Err(Error::NoGpu {
                    message: "x".into(),
                })
            } else {
                Ok(())
            }
        })
        .unwrap_err();
    assert!(matches!(err, Error::NoGpu { .. }));
    assert_eq!(n, 2, "stops at the first error");
}

fn two_param_spec() -> &'static KernelSpec {
    let k = empty_kernel(
        "two",
        128,
        &[
            ("data", ParamKind::Tensor(DType::I32)),
            ("n", ParamKind::Scalar(DType::I32)),
        ],
    );
    leak_spec(&k, "", 0)
}

#[test]
fn launch_rejects_wrong_arg_count() {
    let dev = Device::emulator();
    let spec = two_param_spec();
    let t = dev.zeros::<i32>(8).unwrap();
    let err = dev.launch(spec, 1, &[KernelArg::from(&t)]).unwrap_err();
    assert_eq!(
        err,
        Error::ArgCount {
            kernel: "two".into(),
            expected: 2,
            got: 1
        }
    );
    assert_eq!(err.to_string(), "kernel `two` expects 2 arguments, got 1");
    let err = dev
        .launch(spec, 1, &[KernelArg::from(&t), 1.into(), 2.into()])
        .unwrap_err();
    assert!(matches!(
        err,
        Error::ArgCount {
            expected: 2,
            got: 3,
            ..
        }
    ));
}

#[test]
fn launch_rejects_wrong_kind() {
    let dev = Device::emulator();
    let spec = two_param_spec();
    let t = dev.zeros::<i32>(8).unwrap();
    let err = dev
        .launch(spec, 1, &[KernelArg::from(3), KernelArg::from(3)])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "argument 0 (`data`) of kernel `two`: expected a `GlobalTensor<i32>`, got an `i32` scalar"
    );
    let err = dev
        .launch(spec, 1, &[KernelArg::from(&t), KernelArg::from(&t)])
        .unwrap_err();
    match err {
        Error::ArgType {
            kernel,
            index,
            param,
            ..
        } => {
            assert_eq!((kernel.as_str(), index, param.as_str()), ("two", 1, "n"));
        }
        e => panic!("{e}"),
    }
    // A launcher declaring a bool tensor: an i32 tensor does not fit.
    static BOOL_SPEC: KernelSpec = unsafe {
        KernelSpec::new(
            "flags",
            "",
            b"",
            32,
            0,
            &[ParamSpec::tensor("f", DType::Bool)],
        )
    };
    let err = dev
        .launch(&BOOL_SPEC, 1, &[KernelArg::from(&t)])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("expected a `GlobalTensor<bool>`, got a `GlobalTensor<i32>`"),
        "{err}"
    );
}

#[test]
fn launch_rejects_bad_grid() {
    let dev = Device::emulator();
    let spec = two_param_spec();
    let t = dev.zeros::<i32>(8).unwrap();
    let args = [KernelArg::from(&t), KernelArg::from(8)];
    let err = dev.launch(spec, 0, &args).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidGrid {
            kernel: "two".into(),
            grid: Grid::new(0, 1, 1),
            limit: EMULATOR_MAX_GRID,
            device: err_device(&err),
        }
    );
    assert!(err.to_string().contains("kernel `two`"), "{err}");
    let err = dev.launch(spec, 1 << 31, &args).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidGrid {
            grid: Grid {
                x: 2147483648,
                y: 1,
                z: 1
            },
            ..
        }
    ));
    let err = dev.launch(spec, (1, 1, 65_536), &args).unwrap_err();
    assert!(err.to_string().contains("1×1×65536 blocks"), "{err}");
}

#[test]
fn launch_rejects_too_much_shared_memory() {
    let dev = Device::emulator();
    assert_eq!(dev.max_shared_bytes_per_block(), 232_448);
    let k = empty_kernel("big_smem", 128, &[]);
    let spec = leak_spec(&k, "", EMULATOR_MAX_SHARED_BYTES + 1);
    let err = dev.launch(spec, 1, &[]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::SharedMemory {
                requested: 232_449,
                limit: 232_448,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("kernel `big_smem` needs 232449 bytes of shared memory"),
        "{err}"
    );
}

#[test]
fn launch_rejects_too_many_threads() {
    let dev = Device::emulator();
    static SPEC: KernelSpec = unsafe { KernelSpec::new("wide", "", b"", 2048, 0, &[]) };
    let err = dev.launch(&SPEC, 1, &[]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Threads {
                threads: 2048,
                limit: 1024,
                ..
            }
        ),
        "{err}"
    );
    static ZERO: KernelSpec = unsafe { KernelSpec::new("none", "", b"", 0, 0, &[]) };
    assert!(matches!(
        dev.launch(&ZERO, 1, &[]),
        Err(Error::Threads { threads: 0, .. })
    ));
}

#[test]
fn launch_rejects_tensor_of_another_device() {
    let dev = Device::emulator();
    let other = Device::emulator();
    let spec = two_param_spec();
    let t = other.zeros::<i32>(8).unwrap();
    let err = dev
        .launch(spec, 1, &[KernelArg::from(&t), KernelArg::from(8)])
        .unwrap_err();
    assert!(
        matches!(&err, Error::WrongDevice { param, .. } if param == "data"),
        "{err}"
    );
    assert!(
        err.to_string().contains("argument `data` of kernel `two`"),
        "{err}"
    );
}

#[test]
fn launch_rejects_invalid_ir() {
    let dev = Device::emulator();
    static BAD: KernelSpec = unsafe { KernelSpec::new("bad", "", b"not IR", 32, 0, &[]) };
    let err = dev.launch(&BAD, 1, &[]).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidSpec { kernel, .. } if kernel == "bad"),
        "{err}"
    );
    // Again: the parse error is cached, not a panic.
    assert!(matches!(
        dev.launch(&BAD, 1, &[]),
        Err(Error::InvalidSpec { .. })
    ));

    // IR whose parameters disagree with the launcher's.
    let k = empty_kernel("mismatch", 32, &[("x", ParamKind::Scalar(DType::I32))]);
    let ir: &'static [u8] = Box::leak(k.to_bytes().into_boxed_slice());
    let spec: &'static KernelSpec = Box::leak(Box::new(unsafe {
        KernelSpec::new(
            "mismatch",
            "",
            ir,
            32,
            0,
            Box::leak(Box::new([ParamSpec::scalar("y", DType::I32)])),
        )
    }));
    let err = dev.launch(spec, 1, &[KernelArg::from(1)]).unwrap_err();
    assert!(err.to_string().contains("parameter 0 is `x`"), "{err}");
}

#[test]
fn launch_runs_the_emulator() {
    let dev = Device::emulator();
    let spec = leak_spec(&fill_kernel(), "", 0);
    let out = dev.zeros::<i32>(1000).unwrap();
    dev.launch(spec, 3, &[KernelArg::from(&out), KernelArg::from(42)])
        .unwrap();
    let got = out.download().unwrap();
    assert!(got[..768].iter().all(|&v| v == 42));
    assert!(got[768..].iter().all(|&v| v == 0));
    // All 4 blocks; the last one is partly out of bounds.
    dev.launch(spec, 4, &[KernelArg::from(&out), KernelArg::from(-1)])
        .unwrap();
    assert_eq!(out.download().unwrap(), vec![-1; 1000]);
}

#[test]
fn launch_from_many_threads() {
    let dev = Device::emulator();
    let spec = leak_spec(&fill_kernel(), "", 0);
    std::thread::scope(|s| {
        for i in 0..8 {
            let dev = dev.clone();
            s.spawn(move || {
                let out = dev.zeros::<i32>(512).unwrap();
                dev.launch(spec, 2, &[KernelArg::from(&out), KernelArg::from(i)])
                    .unwrap();
                assert_eq!(out.download().unwrap(), vec![i; 512]);
            });
        }
    });
}

#[test]
fn emulator_errors_are_reported() {
    let dev = Device::emulator_with(EmuOptions {
        max_loop_iterations: Some(100),
        ..EmuOptions::default()
    });
    assert_eq!(
        dev.emulator_options().unwrap().max_loop_iterations,
        Some(100)
    );
    let spec = leak_spec(&spin_kernel(), "", 0);
    let err = dev.launch(spec, 2, &[]).unwrap_err();
    match &err {
        Error::Emulator {
            kernel,
            error: EmuError::StepLimit { limit: 100, .. },
        } => assert_eq!(kernel, "spin"),
        e => panic!("{e}"),
    }
    assert!(
        err.to_string()
            .starts_with("kernel `spin` failed in the emulator:"),
        "{err}"
    );
    // Printed as a chain (what `anyhow`'s `{:#}` does), the emulator's message appears once.
    let Error::Emulator { error: inner, .. } = &err else {
        unreachable!()
    };
    let inner = inner.to_string();
    let chain = chain(&err);
    assert_eq!(chain.matches(&inner).count(), 1, "{chain}");
}

/// The device named by an `InvalidGrid` error (emulators are numbered).
fn err_device(e: &Error) -> String {
    match e {
        Error::InvalidGrid { device, .. } if device.starts_with("CPU emulator") => device.clone(),
        _ => "not an emulator's InvalidGrid".into(),
    }
}

/// An error and its `source()`s, joined with ": ".
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}
