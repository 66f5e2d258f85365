//! The CUDA backend on a real GPU, with hand-written PTX that follows the launch ABI
//! (tensor: u64 pointer + u32 length; i32 scalar: 4 bytes). Skipped when no GPU can be opened,
//! unless `TILUS_REQUIRE_GPU=1`, which makes that a failure.
#![cfg(feature = "cuda")]

use cust::context::CurrentContext;
use cust::memory::DeviceBuffer;
use tilus_core::ir::DType;
use tilus_runtime::*;

fn gpu() -> Option<Device> {
    match Device::cuda(0) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var("TILUS_REQUIRE_GPU").as_deref() == Ok("1") {
                panic!("TILUS_REQUIRE_GPU=1 but no GPU: {e}");
            }
            eprintln!("skipping: no GPU ({e})");
            None
        }
    }
}

const HEADER: &str = ".version 7.0\n.target sm_70\n.address_size 64\n";

const FILL_PTX: &str = r#"
.visible .entry fill_gpu(.param .u64 fill_out, .param .u32 fill_len, .param .u32 fill_value)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [fill_out];
    ld.param.u32 %r1, [fill_len];
    ld.param.u32 %r2, [fill_value];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.u32 %r6, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r6, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r6, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r2;
DONE:
    ret;
}
"#;

const ADD_PTX: &str = r#"
.visible .entry add_k(.param .u64 add_a, .param .u32 add_alen, .param .u64 add_out,
                      .param .u32 add_olen, .param .u32 add_k)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [add_a];
    ld.param.u64 %rd2, [add_out];
    ld.param.u32 %r1, [add_olen];
    ld.param.u32 %r2, [add_k];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.u32 %r6, %r3, %r4, %r5;
    setp.ge.u32 %p1, %r6, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd3, %r6, 4;
    cvta.to.global.u64 %rd4, %rd1;
    add.s64 %rd5, %rd4, %rd3;
    ld.global.u32 %r7, [%rd5];
    add.s32 %r8, %r7, %r2;
    cvta.to.global.u64 %rd6, %rd2;
    add.s64 %rd7, %rd6, %rd3;
    st.global.u32 [%rd7], %r8;
DONE:
    ret;
}
"#;

/// Each thread writes its id 96 KiB into the dynamic shared window, then reads its neighbour's.
const SMEM_PTX: &str = r#"
.extern .shared .align 16 .b8 dyn_smem[];
.visible .entry smem_rot(.param .u64 rot_out, .param .u32 rot_len)
{
    .reg .pred %p<2>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [rot_out];
    ld.param.u32 %r1, [rot_len];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u64 %rd2, dyn_smem;
    add.s64 %rd2, %rd2, 98304;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.shared.u32 [%rd4], %r2;
    bar.sync 0;
    add.u32 %r6, %r2, 1;
    rem.u32 %r7, %r6, %r3;
    mul.wide.u32 %rd5, %r7, 4;
    add.s64 %rd6, %rd2, %rd5;
    ld.shared.u32 %r8, [%rd6];
    mad.lo.u32 %r9, %r4, %r3, %r2;
    setp.ge.u32 %p1, %r9, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd7, %rd1;
    mul.wide.u32 %rd8, %r9, 4;
    add.s64 %rd9, %rd7, %rd8;
    st.global.u32 [%rd9], %r8;
DONE:
    ret;
}
"#;

const FILL_PARAMS: &[ParamSpec] = &[
    ParamSpec::tensor("out", DType::I32),
    ParamSpec::scalar("value", DType::I32),
];
const SMEM_PARAMS: &[ParamSpec] = &[ParamSpec::tensor("out", DType::I32)];
const ADD_PARAMS: &[ParamSpec] = &[
    ParamSpec::tensor("a", DType::I32),
    ParamSpec::tensor("out", DType::I32),
    ParamSpec::scalar("k", DType::I32),
];

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn fill_spec() -> &'static KernelSpec {
    static SPEC: std::sync::OnceLock<&'static KernelSpec> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| {
        Box::leak(Box::new(unsafe {
            KernelSpec::new(
                "fill_gpu",
                leak(format!("{HEADER}{FILL_PTX}")),
                b"",
                256,
                0,
                FILL_PARAMS,
            )
        }))
    })
}

fn smem_spec(shared: usize) -> &'static KernelSpec {
    Box::leak(Box::new(unsafe {
        KernelSpec::new(
            "smem_rot",
            leak(format!("{HEADER}{SMEM_PTX}")),
            b"",
            256,
            shared,
            SMEM_PARAMS,
        )
    }))
}

#[test]
fn device_info() {
    let Some(dev) = gpu() else { return };
    assert!(dev.is_gpu());
    eprintln!(
        "{dev:?}: name {:?}, max threads {}, max shared (opt-in) {}",
        dev.name(),
        dev.max_threads_per_block(),
        dev.max_shared_bytes_per_block()
    );
    assert!(
        Device::cuda(0).unwrap().same_device(&dev),
        "one Device per ordinal"
    );
    assert!(matches!(Device::cuda(999), Err(Error::NoGpu { .. })));
}

#[test]
fn memory_round_trip_and_copy() {
    let Some(dev) = gpu() else { return };
    let data: Vec<i32> = (0..100_000).map(|i| i * 3 - 7).collect();
    let a = dev.upload(&data).unwrap();
    assert_eq!(a.download().unwrap(), data);
    assert_eq!(
        dev.zeros::<i32>(1000).unwrap().download().unwrap(),
        vec![0; 1000]
    );
    assert_eq!(
        dev.full(1000, -5i32).unwrap().download().unwrap(),
        vec![-5; 1000]
    );
    assert!(dev
        .upload::<i32>(&[])
        .unwrap()
        .download()
        .unwrap()
        .is_empty());
    let b = dev.zeros::<i32>(data.len()).unwrap();
    dev.copy(&a, &b).unwrap();
    assert_eq!(b.download().unwrap(), data);
    b.copy_from_host(&vec![9; data.len()]).unwrap();
    assert_eq!(b.download().unwrap(), vec![9; data.len()]);
    assert!(matches!(
        b.copy_from_host(&[1]),
        Err(Error::LengthMismatch { .. })
    ));
    let c = dev.zeros::<i32>(3).unwrap();
    assert!(matches!(
        dev.copy(&a, &c),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
fn launch_fill_and_abi_with_two_tensors() {
    let Some(dev) = gpu() else { return };
    let out = dev.zeros::<i32>(1000).unwrap();
    dev.launch(
        fill_spec(),
        4,
        &[KernelArg::from(&out), KernelArg::from(77)],
    )
    .unwrap();
    assert_eq!(out.download().unwrap(), vec![77; 1000]);

    static ADD: std::sync::OnceLock<&'static KernelSpec> = std::sync::OnceLock::new();
    let add = *ADD.get_or_init(|| {
        Box::leak(Box::new(unsafe {
            KernelSpec::new(
                "add_k",
                leak(format!("{HEADER}{ADD_PTX}")),
                b"",
                128,
                0,
                ADD_PARAMS,
            )
        }))
    });
    let a: Vec<i32> = (0..1000).collect();
    let a = dev.upload(&a).unwrap();
    let y = dev.zeros::<i32>(1000).unwrap();
    dev.launch(
        add,
        8,
        &[
            KernelArg::from(&a),
            KernelArg::from(&y),
            KernelArg::from(-10),
        ],
    )
    .unwrap();
    assert_eq!(
        y.download().unwrap(),
        (0..1000).map(|i| i - 10).collect::<Vec<_>>()
    );
}

#[test]
fn large_dynamic_shared_memory() {
    let Some(dev) = gpu() else { return };
    let max = dev.max_shared_bytes_per_block();
    for shared in [100 * 1024, max] {
        let spec = smem_spec(shared);
        let out = dev.zeros::<i32>(512).unwrap();
        dev.launch(spec, 2, &[KernelArg::from(&out)]).unwrap();
        let want: Vec<i32> = (0..512).map(|i| ((i % 256) + 1) % 256).collect();
        assert_eq!(out.download().unwrap(), want, "shared = {shared}");
    }
    let out = dev.zeros::<i32>(512).unwrap();
    let err = dev
        .launch(smem_spec(max + 1), 2, &[KernelArg::from(&out)])
        .unwrap_err();
    assert!(matches!(err, Error::SharedMemory { .. }), "{err}");
}

#[test]
fn validation_on_gpu() {
    let Some(dev) = gpu() else { return };
    let out = dev.zeros::<i32>(16).unwrap();
    assert!(matches!(
        dev.launch(fill_spec(), 0, &[KernelArg::from(&out), 1.into()]),
        Err(Error::InvalidGrid { .. })
    ));
    assert!(matches!(
        dev.launch(fill_spec(), 1, &[KernelArg::from(&out)]),
        Err(Error::ArgCount { .. })
    ));
    assert!(matches!(
        dev.launch(fill_spec(), 1, &[1.into(), 1.into()]),
        Err(Error::ArgType { .. })
    ));
    // An emulator tensor on the GPU, and a GPU tensor on the emulator.
    let emu = Device::emulator();
    let e = emu.zeros::<i32>(16).unwrap();
    assert!(matches!(
        dev.launch(fill_spec(), 1, &[KernelArg::from(&e), 1.into()]),
        Err(Error::WrongDevice { .. })
    ));
    assert!(matches!(
        emu.launch(fill_spec(), 1, &[KernelArg::from(&out), 1.into()]),
        Err(Error::WrongDevice { .. })
    ));
    // Bad PTX: a CUDA error carrying the JIT log, not a crash; the context stays usable.
    let bad: &'static KernelSpec = Box::leak(Box::new(unsafe {
        KernelSpec::new(
            "fill_gpu",
            leak(format!(
                "{HEADER}.visible .entry fill_gpu() {{ bogus.instruction; }}"
            )),
            b"",
            32,
            0,
            &[],
        )
    }));
    let err = dev.launch(bad, 1, &[]).unwrap_err();
    eprintln!("bad PTX: {err}");
    assert!(matches!(err, Error::Cuda { .. }), "{err}");
    let missing: &'static KernelSpec = Box::leak(Box::new(unsafe {
        KernelSpec::new(
            "no_such_entry",
            leak(format!("{HEADER}{FILL_PTX}")),
            b"",
            32,
            0,
            &[],
        )
    }));
    let err = dev.launch(missing, 1, &[]).unwrap_err();
    eprintln!("missing entry: {err}");
    dev.launch(fill_spec(), 1, &[KernelArg::from(&out), 5.into()])
        .unwrap();
    assert_eq!(out.download().unwrap(), vec![5; 16]);
}

#[test]
fn cust_interop_and_alignment() {
    let Some(dev) = gpu() else { return };
    CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let buf = DeviceBuffer::from_slice(&[1i32, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    let t = GlobalTensor::from_cust(&dev, buf).unwrap();
    assert_eq!(t.download().unwrap(), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(t.len(), 8);
    dev.launch(fill_spec(), 1, &[KernelArg::from(&t), 3.into()])
        .unwrap();
    assert_eq!(t.download().unwrap(), vec![3; 8]);

    // A view 4 bytes into the buffer: misaligned for the kernels' vector accesses.
    let base = t.device_ptr().unwrap();
    // SAFETY: the view lies inside `t`'s allocation, which outlives it.
    let v = unsafe { TensorView::<i32>::from_raw(&dev, base + 4, 4) }.unwrap();
    let err = dev
        .launch(fill_spec(), 1, &[KernelArg::from(&v), 3.into()])
        .unwrap_err();
    assert!(matches!(err, Error::Misaligned { .. }), "{err}");

    CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let buf = DeviceBuffer::from_slice(&[1i32]).unwrap();
    assert!(matches!(
        GlobalTensor::from_cust(&Device::emulator(), buf),
        Err(Error::WrongBackend { .. })
    ));
}

#[test]
fn many_threads() {
    let Some(dev) = gpu() else { return };
    std::thread::scope(|s| {
        for i in 0..8 {
            let dev = dev.clone();
            s.spawn(move || {
                for round in 0..20 {
                    let out = dev.zeros::<i32>(10_000).unwrap();
                    let v = i * 100 + round;
                    dev.launch(fill_spec(), 40, &[KernelArg::from(&out), v.into()])
                        .unwrap();
                    assert_eq!(out.download().unwrap(), vec![v; 10_000]);
                }
            });
        }
    });
}

#[test]
fn timing() {
    let Some(dev) = gpu() else { return };
    let n = 1 << 26;
    let a = dev.zeros::<i32>(n).unwrap();
    let b = dev.zeros::<i32>(n).unwrap();
    let t = dev.time_ms(5, || dev.copy(&a, &b)).unwrap();
    let best = t.iter().cloned().fold(f64::MAX, f64::min);
    eprintln!(
        "copy of {} MiB: {t:?} ms; {:.0} GB/s (read+write)",
        (n * 4) >> 20,
        2.0 * (n * 4) as f64 / best / 1e6
    );
    assert!(t.iter().all(|x| *x > 0.0));
    let out = dev.zeros::<i32>(n).unwrap();
    let k = dev
        .time_ms(3, || {
            dev.launch(
                fill_spec(),
                (n / 256) as u32,
                &[KernelArg::from(&out), 1.into()],
            )
        })
        .unwrap();
    eprintln!("fill kernel: {k:?} ms");
}
