//! The emulator subset (`emu.rs`) through the runtime: a `KernelSpec` made from the compiled
//! kernel, typed tensors uploaded to a `Device`, `Device::launch`, downloads. Runs on every
//! backend of `common::backends()`: the strict emulator, and the GPU with `--features cuda`
//! (skipped without one unless `TILUS_REQUIRE_GPU=1`), so the same references check the
//! hardware's float min/max, 16-bit cas and contended adds.

use super::build::{param_names, THREADS};
use super::model::Combo;
use tilus::core::dtype::DType;
use tilus::core::elem::Elem;
use tilus::core::Compiled;
use tilus::{Device, GlobalTensor, KernelArg, KernelSpec, ParamSpec};

macro_rules! device_buffers {
    ($($v:ident $t:ty),*) => {
        /// A tensor on the device, of one of the 13 element types.
        enum DevBuf {
            $($v(GlobalTensor<$t>)),*
        }

        impl DevBuf {
            fn upload(dev: &Device, d: DType, bits: &[u64]) -> Result<DevBuf, String> {
                match d {
                    $(DType::$v => {
                        let host: Vec<$t> = bits.iter().map(|b| <$t as Elem>::from_bits(*b)).collect();
                        dev.upload(&host).map(DevBuf::$v).map_err(|e| format!("upload: {e}"))
                    })*
                }
            }
            fn arg(&self) -> KernelArg<'_> {
                match self {
                    $(DevBuf::$v(t) => KernelArg::from(t)),*
                }
            }
            fn bits(&self) -> Result<Vec<u64>, String> {
                match self {
                    $(DevBuf::$v(t) => t
                        .download()
                        .map(|v| v.into_iter().map(Elem::to_bits).collect())
                        .map_err(|e| format!("download: {e}"))),*
                }
            }
        }
    };
}

device_buffers!(
    Bool bool, I8 i8, U8 u8, I16 i16, U16 u16, I32 i32, U32 u32, I64 i64, U64 u64,
    F16 tilus::f16, BF16 tilus::bf16, F32 f32, F64 f64
);

/// The kernel as the launcher `#[tile_kernel]` would generate it: PTX, IR and parameters all
/// from the one compiled kernel (the safety contract of `KernelSpec::new`). Leaked: a launch
/// needs a `'static` spec, and the test makes a few hundred.
fn spec(c: &Combo, k: &Compiled) -> &'static KernelSpec {
    let params: Vec<ParamSpec> = param_names(c)
        .into_iter()
        .zip(&k.ir.params)
        .map(|(name, p)| ParamSpec::tensor(name, p_dtype(p)))
        .collect();
    let name: &'static str = Box::leak(k.ir.name.clone().into_boxed_str());
    let ptx: &'static str = Box::leak(k.ptx.clone().into_boxed_str());
    let ir: &'static [u8] = Box::leak(k.ir.to_bytes().into_boxed_slice());
    let params: &'static [ParamSpec] = Box::leak(params.into_boxed_slice());
    // SAFETY: PTX, IR and parameter list are the output of one `tilus::core::compile`, as in
    // the launchers the macro generates; every tensor is accessed within its length (bounds
    // checks, or indices the test keeps in range).
    Box::leak(Box::new(unsafe {
        KernelSpec::new(name, ptx, ir, THREADS, k.shared_bytes, params)
    }))
}

fn p_dtype(p: &tilus::core::ir::Param) -> DType {
    match p.kind {
        tilus::core::ir::ParamKind::Tensor(d) | tilus::core::ir::ParamKind::Scalar(d) => d,
    }
}

/// Launch on `dev` and read every tensor back.
pub fn run_on(
    dev: &Device,
    c: &Combo,
    k: &Compiled,
    blocks: u32,
    inputs: &[(DType, Vec<u64>)],
) -> Result<Vec<Vec<u64>>, String> {
    let bufs = inputs
        .iter()
        .map(|(d, b)| DevBuf::upload(dev, *d, b))
        .collect::<Result<Vec<_>, _>>()?;
    let args: Vec<KernelArg<'_>> = bufs.iter().map(DevBuf::arg).collect();
    dev.launch(spec(c, k), blocks, &args)
        .map_err(|e| format!("launch: {e}"))?;
    dev.synchronize().map_err(|e| format!("synchronize: {e}"))?;
    bufs.iter().map(DevBuf::bits).collect()
}
