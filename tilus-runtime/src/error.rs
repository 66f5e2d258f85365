//! The runtime's error type.

use tilus_core::emu::EmuError;

/// Everything that can go wrong in the runtime: launch validation, memory operations, the
/// emulator and the CUDA driver.
///
/// Launch validation errors name the kernel and, where one is at fault, the parameter, and are
/// reported before anything is sent to the device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The grid is empty or larger than a 1-D CUDA grid allows.
    #[error("kernel `{kernel}`: a grid of {grid} blocks is invalid (must be 1..=2147483647)")]
    InvalidGrid {
        /// The kernel's name.
        kernel: String,
        /// The requested number of blocks.
        grid: u32,
    },
    /// The number of launch arguments does not match the kernel's parameters.
    #[error("kernel `{kernel}` expects {expected} arguments, got {got}")]
    ArgCount {
        /// The kernel's name.
        kernel: String,
        /// The number of parameters of the kernel.
        expected: usize,
        /// The number of arguments passed.
        got: usize,
    },
    /// An argument has the wrong kind (tensor or scalar) or element type.
    #[error("argument {index} (`{param}`) of kernel `{kernel}`: expected {expected}, got {got}")]
    ArgType {
        /// The kernel's name.
        kernel: String,
        /// Position of the argument (0-based).
        index: usize,
        /// The parameter's name.
        param: String,
        /// What the parameter expects, e.g. ``a `GlobalTensor<i32>` ``.
        expected: String,
        /// What was passed.
        got: String,
    },
    /// A tensor argument lives on another device (or another backend) than the launch.
    #[error("argument `{param}` of kernel `{kernel}` is a tensor on {tensor_device}, but the kernel is launched on {device}")]
    WrongDevice {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        param: String,
        /// The device holding the tensor.
        tensor_device: String,
        /// The device of the launch.
        device: String,
    },
    /// A tensor argument has more elements than the kernel's `i32` indexing can address.
    #[error("argument `{param}` of kernel `{kernel}` has {len} elements; kernels index tensors with i32, so at most 2147483647 are allowed")]
    TensorTooLarge {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        param: String,
        /// The tensor's length.
        len: usize,
    },
    /// A tensor argument's device address is not 16-byte aligned (kernels use 16-byte vector
    /// accesses). Only possible with buffers brought in through `GlobalTensor::from_cust`.
    #[error(
        "argument `{param}` of kernel `{kernel}`: device address {addr:#x} is not 16-byte aligned"
    )]
    Misaligned {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        param: String,
        /// The device address.
        addr: u64,
    },
    /// The kernel needs more shared memory per block than the device offers.
    #[error("kernel `{kernel}` needs {requested} bytes of shared memory per block, but {device} allows at most {limit}")]
    SharedMemory {
        /// The kernel's name.
        kernel: String,
        /// Bytes of dynamic shared memory the kernel requests.
        requested: usize,
        /// The device's per-block limit.
        limit: usize,
        /// The device's name.
        device: String,
    },
    /// The kernel's block is larger than the device (or the compiled function) supports.
    #[error("kernel `{kernel}` uses {threads} threads per block, but {device} allows at most {limit}{detail}")]
    Threads {
        /// The kernel's name.
        kernel: String,
        /// Threads per block of the kernel.
        threads: u32,
        /// The limit.
        limit: u32,
        /// The device's name.
        device: String,
        /// Extra explanation (empty, or starting with `"; "`).
        detail: String,
    },
    /// The embedded kernel description is unusable (IR JSON that does not parse, or that
    /// disagrees with the launcher's parameter list). Indicates mismatched crate versions.
    #[error("kernel `{kernel}`: invalid kernel spec: {message}")]
    InvalidSpec {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// Host and device lengths of a copy differ.
    #[error("{op}: length mismatch: the destination has {expected} elements, the source {got}")]
    LengthMismatch {
        /// The operation, e.g. `"GlobalTensor::copy_from_host"`.
        op: &'static str,
        /// Length of the destination.
        expected: usize,
        /// Length of the source.
        got: usize,
    },
    /// Two tensors of one operation live on different devices.
    #[error("{op}: the tensors live on different devices ({a} and {b})")]
    DeviceMismatch {
        /// The operation, e.g. `"Device::copy"`.
        op: &'static str,
        /// One device.
        a: String,
        /// The other device.
        b: String,
    },
    /// An operation needs a backend the device does not have (e.g. `GlobalTensor::from_cust`
    /// with an emulator device).
    #[error("{op} needs a {needed} device, but {device} is not one")]
    WrongBackend {
        /// The operation.
        op: &'static str,
        /// The backend needed, e.g. `"CUDA"`.
        needed: &'static str,
        /// The device's name.
        device: String,
    },
    /// No GPU could be opened where one was required (`TILUS_REQUIRE_GPU=1`, or an explicit
    /// `Device::cuda`).
    #[error("no GPU available: {message}")]
    NoGpu {
        /// Why.
        message: String,
    },
    /// The emulator reported an error while running a kernel.
    #[error("kernel `{kernel}` failed in the emulator: {source}")]
    Emulator {
        /// The kernel's name.
        kernel: String,
        /// The emulator's error.
        #[source]
        source: EmuError,
    },
    /// A CUDA driver call failed. Errors of a kernel that faulted are reported by the next call
    /// that synchronises (e.g. `GlobalTensor::download`), and leave the context unusable.
    #[error("CUDA error in {context}: {message}")]
    Cuda {
        /// What the runtime was doing.
        context: String,
        /// The driver's error.
        message: String,
    },
}

/// `std::result::Result` with the runtime's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
