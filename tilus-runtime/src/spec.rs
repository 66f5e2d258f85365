//! Static descriptions of compiled kernels and launch arguments.

use crate::error::{Error, Result};
use crate::tensor::{Element, GlobalTensor, TensorRef};
use crate::view::TensorView;
use std::sync::OnceLock;
use tilus_core::ir::{DType, Kernel, ParamKind};

/// One kernel parameter as the launcher declares it.
///
/// ```
/// use tilus_runtime::{DType, ParamSpec};
/// const P: ParamSpec = ParamSpec::tensor("values", DType::I32);
/// assert!(P.is_tensor());
/// assert_eq!(P.name(), "values");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamSpec {
    name: &'static str,
    kind: ParamKind,
}

impl ParamSpec {
    /// A `GlobalTensor<T>` parameter with element type `dtype`.
    pub const fn tensor(name: &'static str, dtype: DType) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Tensor(dtype),
        }
    }

    /// A scalar parameter passed by value.
    pub const fn scalar(name: &'static str, dtype: DType) -> ParamSpec {
        ParamSpec {
            name,
            kind: ParamKind::Scalar(dtype),
        }
    }

    /// The parameter's name in the kernel's source.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Tensor or scalar, and the element type.
    pub fn kind(&self) -> &ParamKind {
        &self.kind
    }

    /// Whether this is a tensor parameter.
    pub fn is_tensor(&self) -> bool {
        matches!(self.kind, ParamKind::Tensor(_))
    }

    /// The element type (of the tensor, or of the scalar).
    pub fn dtype(&self) -> DType {
        match self.kind {
            ParamKind::Tensor(d) | ParamKind::Scalar(d) => d,
        }
    }

    /// How the parameter reads in messages, e.g. ``a `GlobalTensor<i32>` ``.
    pub(crate) fn describe(&self) -> String {
        describe_kind(&self.kind)
    }
}

pub(crate) fn describe_kind(kind: &ParamKind) -> String {
    match kind {
        ParamKind::Tensor(d) => format!("a `GlobalTensor<{}>`", d.name()),
        // "an `i32`", "an `f32`", "a `u8`", "a `bool`", as the names are read aloud.
        ParamKind::Scalar(d) => {
            let article = if d.name().starts_with(['i', 'f']) {
                "an"
            } else {
                "a"
            };
            format!("{article} `{}` scalar", d.name())
        }
    }
}

/// Everything the runtime needs to launch one compiled kernel: its name, PTX, serialised IR
/// (for the emulator), block size, dynamic shared memory and parameter list.
///
/// `#[tile_kernel]` generates one of these in a `static` per kernel; the constructor is a
/// `const fn` and the IR is parsed lazily, once, on the first emulator launch.
///
/// ```
/// use tilus_runtime::{DType, KernelSpec, ParamSpec};
/// // SAFETY: the spec is only inspected here, never launched.
/// static SPEC: KernelSpec = unsafe {
///     KernelSpec::new(
///         "fill", "// ptx", b"", 256, 0,
///         &[ParamSpec::tensor("out", DType::I32), ParamSpec::scalar("value", DType::I32)],
///     )
/// };
/// assert_eq!(SPEC.name(), "fill");
/// assert_eq!(SPEC.params().len(), 2);
/// ```
#[derive(Debug)]
pub struct KernelSpec {
    name: &'static str,
    ptx: &'static str,
    ir_bytes: &'static [u8],
    threads: u32,
    shared_bytes: usize,
    params: &'static [ParamSpec],
    cluster: [u32; 3],
    /// The kernel for newer targets: `(compute capability, PTX)`, oldest first.
    variants: &'static [(u32, &'static str)],
    ir: OnceLock<std::result::Result<Kernel, String>>,
}

impl KernelSpec {
    /// Describe a kernel. `name` is the kernel's name: its PTX entry is
    /// [`tilus_core::ptx::entry_name`]`(name)`; `shared_bytes` is the dynamic
    /// shared memory requested per block at launch.
    ///
    /// # Safety
    ///
    /// Launching runs `ptx` on the GPU with the arguments laid out from `params` (a `u64`
    /// pointer and a `u64` length per tensor, each scalar in its PTX parameter width: narrow
    /// integers and `bool` widened to 32 bits). The caller promises that the PTX entry
    /// `entry_name(name)` takes exactly those parameters and accesses each tensor only within
    /// `0..len`, and that `ir_bytes` is the IR of the same kernel (`Kernel::to_bytes`). `#[tile_kernel]` upholds this
    /// by construction (it generates all of them from one checked IR); hand-written specs must.
    pub const unsafe fn new(
        name: &'static str,
        ptx: &'static str,
        ir_bytes: &'static [u8],
        threads: u32,
        shared_bytes: usize,
        params: &'static [ParamSpec],
    ) -> KernelSpec {
        // SAFETY: the caller's promise, for a kernel without clusters or variants.
        unsafe { Self::new_clustered(name, ptx, ir_bytes, threads, shared_bytes, params, [1; 3]) }
    }

    /// [`new`](Self::new) for a kernel launched in thread-block clusters of `cluster` blocks.
    ///
    /// # Safety
    ///
    /// As for [`new`](Self::new); the PTX must also have been compiled for clusters of this
    /// shape (`#[tile_kernel(cluster = ..)]` does both).
    #[allow(clippy::too_many_arguments)]
    pub const unsafe fn new_clustered(
        name: &'static str,
        ptx: &'static str,
        ir_bytes: &'static [u8],
        threads: u32,
        shared_bytes: usize,
        params: &'static [ParamSpec],
        cluster: [u32; 3],
    ) -> KernelSpec {
        // SAFETY: the caller's promise, for a kernel without variants.
        unsafe {
            Self::new_with_variants(
                name,
                ptx,
                &[],
                ir_bytes,
                threads,
                shared_bytes,
                params,
                cluster,
            )
        }
    }

    /// [`new_clustered`](Self::new_clustered) with the same kernel generated for newer targets,
    /// `(compute capability, PTX)` oldest first (`#[tile_kernel]` adds one where the compiler has
    /// better instructions there, e.g. vector atomics on sm_90): a GPU loads the newest its
    /// compute capability runs.
    ///
    /// # Safety
    ///
    /// As for [`new`](Self::new), for the main PTX and every variant: the same entry,
    /// parameters, accesses and shared memory.
    #[allow(clippy::too_many_arguments)]
    pub const unsafe fn new_with_variants(
        name: &'static str,
        ptx: &'static str,
        variants: &'static [(u32, &'static str)],
        ir_bytes: &'static [u8],
        threads: u32,
        shared_bytes: usize,
        params: &'static [ParamSpec],
        cluster: [u32; 3],
    ) -> KernelSpec {
        KernelSpec {
            name,
            ptx,
            ir_bytes,
            threads,
            shared_bytes,
            params,
            cluster,
            variants,
            ir: OnceLock::new(),
        }
    }

    /// Blocks per thread-block cluster (`[1, 1, 1]`: no cluster).
    pub fn cluster(&self) -> [u32; 3] {
        self.cluster
    }

    /// The kernel's name (its PTX entry is [`tilus_core::ptx::entry_name`] of it).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX module text (for the kernel's own target, the oldest it runs on).
    pub fn ptx(&self) -> &'static str {
        self.ptx
    }

    /// The variants for newer targets (see [`new_with_variants`](Self::new_with_variants)).
    pub fn variants(&self) -> &'static [(u32, &'static str)] {
        self.variants
    }

    /// The PTX a device of compute capability `cc` (`90` for 9.0) loads: the newest variant it
    /// runs, else the main module.
    pub fn ptx_for(&self, cc: u32) -> &'static str {
        self.variants
            .iter()
            .rev()
            .find(|(target, _)| *target <= cc)
            .map_or(self.ptx, |(_, ptx)| ptx)
    }

    /// The IR the emulator runs, serialised ([`Kernel::to_bytes`]).
    pub fn ir_bytes(&self) -> &'static [u8] {
        self.ir_bytes
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// Dynamic shared memory per block, in bytes.
    pub fn shared_bytes(&self) -> usize {
        self.shared_bytes
    }

    /// The parameters, in order.
    pub fn params(&self) -> &'static [ParamSpec] {
        self.params
    }

    /// The kernel's IR, decoded from [`ir_bytes`](Self::ir_bytes) on first use and checked against
    /// the parameter list and block size of this spec.
    pub fn ir(&self) -> Result<&Kernel> {
        self.ir
            .get_or_init(|| {
                let k = Kernel::from_bytes(self.ir_bytes)
                    .map_err(|e| format!("the embedded IR does not decode: {e}"))?;
                self.check_ir(&k)?;
                Ok(k)
            })
            .as_ref()
            .map_err(|message| Error::InvalidSpec {
                kernel: self.name.to_string(),
                message: message.clone(),
            })
    }

    fn check_ir(&self, k: &Kernel) -> std::result::Result<(), String> {
        if k.name != self.name {
            return Err(format!("the IR is of kernel `{}`", k.name));
        }
        if k.threads != self.threads {
            return Err(format!(
                "the IR has {} threads per block, the launcher {}",
                k.threads, self.threads
            ));
        }
        if k.params.len() != self.params.len() {
            return Err(format!(
                "the IR has {} parameters, the launcher {}",
                k.params.len(),
                self.params.len()
            ));
        }
        for (i, (ir, sp)) in k.params.iter().zip(self.params).enumerate() {
            if ir.name != sp.name || ir.kind != sp.kind {
                return Err(format!(
                    "parameter {i} is `{}` ({}) in the IR but `{}` ({}) in the launcher",
                    ir.name,
                    describe_kind(&ir.kind),
                    sp.name,
                    sp.describe()
                ));
            }
        }
        Ok(())
    }
}

/// One launch argument: a borrowed tensor or a scalar. Built with `KernelArg::from`.
///
/// ```
/// use tilus_runtime::{Device, KernelArg};
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let t = dev.zeros::<i32>(16)?;
/// let args = [KernelArg::from(&t), KernelArg::from(7i32)];
/// # let _ = args; Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct KernelArg<'a> {
    pub(crate) repr: ArgRepr<'a>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgRepr<'a> {
    Tensor(TensorRef<'a>),
    /// A scalar of the given type, as its bit pattern (`tilus_core::elem`).
    Scalar(DType, u64),
}

impl KernelArg<'_> {
    /// What the argument is, for messages.
    pub(crate) fn describe(&self) -> String {
        match &self.repr {
            ArgRepr::Tensor(t) => describe_kind(&ParamKind::Tensor(t.dtype)),
            ArgRepr::Scalar(d, _) => describe_kind(&ParamKind::Scalar(*d)),
        }
    }

    pub(crate) fn kind(&self) -> ParamKind {
        match &self.repr {
            ArgRepr::Tensor(t) => ParamKind::Tensor(t.dtype),
            ArgRepr::Scalar(d, _) => ParamKind::Scalar(*d),
        }
    }
}

impl<'a> KernelArg<'a> {
    /// A tensor argument: a [`GlobalTensor`] or a [`TensorView`] (the generated launchers
    /// call this for each tensor parameter).
    ///
    /// ```
    /// use tilus_runtime::{Device, KernelArg};
    /// # fn main() -> tilus_runtime::Result<()> {
    /// let dev = Device::emulator();
    /// let t = dev.zeros::<f32>(64)?;
    /// let v = t.view(16..48)?;
    /// let args = [KernelArg::tensor(&t), KernelArg::tensor(&v)];
    /// # let _ = args; Ok(()) }
    /// ```
    pub fn tensor<T: Element>(t: &'a (impl AsTensor<T> + ?Sized)) -> KernelArg<'a> {
        KernelArg {
            repr: ArgRepr::Tensor(t.tensor_ref()),
        }
    }
}

impl<'a, T: Element> From<&'a GlobalTensor<T>> for KernelArg<'a> {
    fn from(t: &'a GlobalTensor<T>) -> Self {
        KernelArg::tensor(t)
    }
}

impl<'a, T: Element> From<&'a TensorView<'_, T>> for KernelArg<'a> {
    fn from(t: &'a TensorView<'_, T>) -> Self {
        KernelArg::tensor(t)
    }
}

impl<T: Element> From<T> for KernelArg<'_> {
    fn from(v: T) -> Self {
        KernelArg {
            repr: ArgRepr::Scalar(T::DTYPE, v.to_bits()),
        }
    }
}

pub(crate) mod tensor_sealed {
    /// Device memory of elements `T` the runtime can hand to kernels and copies.
    pub trait TensorSource<T> {
        /// The memory, type-erased.
        fn tensor_ref(&self) -> crate::tensor::TensorRef<'_>;
    }
}

/// Device memory of `T` elements that kernels and copies accept: a [`GlobalTensor<T>`] (owned)
/// or a [`TensorView<'_, T>`](TensorView) (borrowed). Sealed.
///
/// Launchers generated by `#[tile_kernel]` take `&impl AsTensor<T>` for a `GlobalTensor<T>`
/// parameter, so both can be passed:
///
/// ```ignore
/// my_kernel::launch(&dev, blocks, &tensor)?;
/// my_kernel::launch(&dev, blocks, &tensor.view(1024..2048)?)?;
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not device memory of `{T}` elements",
    label = "expected a `&GlobalTensor<{T}>` or a `&TensorView<'_, {T}>`"
)]
pub trait AsTensor<T: Element>: tensor_sealed::TensorSource<T> {
    /// Elements in the tensor or view.
    fn tensor_len(&self) -> usize {
        self.tensor_ref().len
    }

    /// The same memory as a view of `U` elements of `T`'s width: element `i` of the view is
    /// element `i` reinterpreted, bit for bit (`f32::to_bits`'s view of an `f32` tensor is a
    /// `u32` one). No copy. [`Error::Bitcast`] when the widths differ or either type is `bool`
    /// (not every byte is a `bool`).
    ///
    /// ```
    /// use tilus_runtime::{AsTensor, Device};
    /// # fn main() -> tilus_runtime::Result<()> {
    /// let dev = Device::emulator();
    /// let t = dev.upload(&[1.0f32, -0.0])?;
    /// assert_eq!(t.bitcast::<u32>()?.download()?, vec![0x3f80_0000, 0x8000_0000]);
    /// assert!(t.bitcast::<u64>().is_err());
    /// assert!(dev.upload(&[2u8])?.bitcast::<bool>().is_err());
    /// # Ok(()) }
    /// ```
    fn bitcast<U: Element>(&self) -> Result<TensorView<'_, U>> {
        let r = self.tensor_ref();
        let (from, to) = (T::DTYPE, U::DTYPE);
        let reason = if from == DType::Bool || to == DType::Bool {
            Some("`bool` takes part in no bitcast (a byte other than 0 and 1 is no `bool`)")
        } else if from.size_bytes() != to.size_bytes() {
            Some("a bitcast keeps the element width")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::Bitcast { from, to, reason });
        }
        Ok(TensorView::from_parts(r.device.clone(), r.len, r.mem))
    }
}

impl<T: Element, X: tensor_sealed::TensorSource<T> + ?Sized> AsTensor<T> for X {}

impl<T: Element> tensor_sealed::TensorSource<T> for GlobalTensor<T> {
    fn tensor_ref(&self) -> TensorRef<'_> {
        self.as_ref_arg()
    }
}

impl<T: Element> tensor_sealed::TensorSource<T> for TensorView<'_, T> {
    fn tensor_ref(&self) -> TensorRef<'_> {
        self.as_ref_arg()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_loads_the_newest_variant_it_runs() {
        static VARIANTS: [(u32, &str); 2] = [(90, "sm90"), (100, "sm100")];
        // SAFETY: never launched.
        let spec = unsafe {
            KernelSpec::new_with_variants("k", "base", &VARIANTS, b"", 32, 0, &[], [1; 3])
        };
        assert_eq!(spec.ptx_for(70), "base");
        assert_eq!(spec.ptx_for(89), "base");
        assert_eq!(spec.ptx_for(90), "sm90");
        assert_eq!(spec.ptx_for(91), "sm90");
        assert_eq!(spec.ptx_for(120), "sm100");
        assert_eq!(spec.ptx(), "base");
        // SAFETY: never launched.
        let plain = unsafe { KernelSpec::new("k", "base", b"", 32, 0, &[]) };
        assert_eq!(plain.ptx_for(90), "base");
    }
}
