//! The runtime's error type.
//!
//! Every message is printed once in an error chain: a variant that wraps another error (the
//! emulator's) puts that error's text into its own `Display` and does not also return it from
//! [`source`](std::error::Error::source), so chain printers (`anyhow`'s `{:#}`, `eyre`, a loop
//! over `source()`) do not repeat it. The wrapped error stays reachable as a field.

use crate::grid::fmt_dims;
use tilus_core::emu::EmuError;
use tilus_core::ir::{DType, Grid};

/// Everything that can go wrong in the runtime: launch validation, memory operations, streams
/// and events, the emulator and the CUDA driver.
///
/// Launch validation errors name the kernel and, where one is at fault, the parameter, and are
/// reported before anything is sent to the device. Driver failures are typed by the driver's
/// error code ([`OutOfMemory`](Error::OutOfMemory), [`IllegalAddress`](Error::IllegalAddress),
/// ...; [`Cuda`](Error::Cuda) for the codes without a variant of their own), each carrying a
/// [`DriverError`] with the code; [`Error::driver`] returns it whatever the variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A grid dimension is zero or larger than the device allows (on a GPU its
    /// `MAX_GRID_DIM_{X,Y,Z}` attributes; the emulator mirrors an H100:
    /// [`EMULATOR_MAX_GRID`](crate::EMULATOR_MAX_GRID)).
    #[error("kernel `{kernel}`: a grid of {} blocks is invalid on {device}: each dimension must be at least 1 and at most {}", fmt_dims(grid.x, grid.y, grid.z), fmt_dims(limit.x, limit.y, limit.z))]
    InvalidGrid {
        /// The kernel's name.
        kernel: String,
        /// The requested grid.
        grid: Grid,
        /// The device's largest grid, per dimension.
        limit: Grid,
        /// The device's name.
        device: String,
    },
    /// The grid is not a whole number of thread-block clusters in some dimension (or the
    /// kernel's cluster shape has a zero dimension).
    #[error("kernel `{kernel}` runs in clusters of {} blocks, but the grid of {} blocks is not a multiple of that in every dimension", fmt_dims(cluster[0], cluster[1], cluster[2]), fmt_dims(grid.x, grid.y, grid.z))]
    ClusterShape {
        /// The kernel's name.
        kernel: String,
        /// The requested grid.
        grid: Grid,
        /// Blocks per cluster, per dimension.
        cluster: [u32; 3],
    },
    /// The kernel's cluster has more blocks than the device can co-schedule for it.
    #[error("kernel `{kernel}` needs clusters of {blocks} blocks, but {device} runs at most {limit} blocks per cluster for this kernel{detail}")]
    ClusterTooLarge {
        /// The kernel's name.
        kernel: String,
        /// Blocks per cluster.
        blocks: u32,
        /// The largest cluster the device runs for this kernel.
        limit: u32,
        /// The device's name.
        device: String,
        /// Extra explanation (empty, or starting with `"; "`).
        detail: String,
    },
    /// The kernel runs in thread-block clusters, which the device (or its driver) cannot launch.
    #[error(
        "kernel `{kernel}` runs in thread-block clusters, which {device} cannot launch: {reason}"
    )]
    ClusterUnsupported {
        /// The kernel's name.
        kernel: String,
        /// The device's name.
        device: String,
        /// Why (compute capability below 9.0, driver too old, ...).
        reason: String,
    },
    /// The kernel was compiled for a newer architecture than the device's.
    #[error("kernel `{kernel}` is compiled for sm_{target}, but {device} is sm_{}{}", compute_capability.0, compute_capability.1)]
    TargetUnsupported {
        /// The kernel's name.
        kernel: String,
        /// The kernel's PTX target, as a compute capability (90 = `sm_90`).
        target: u32,
        /// The device's name.
        device: String,
        /// The device's compute capability (major, minor).
        compute_capability: (u32, u32),
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
    /// A tensor argument's address is not 16-byte aligned (kernels use 16-byte vector
    /// accesses): a view starting at an unaligned element, or a buffer brought in through
    /// `GlobalTensor::from_cust` or `TensorView::from_raw`. On the emulator the address is the
    /// view's byte offset into its tensor, whose start counts as aligned, like `cuMemAlloc`'s.
    #[error(
        "argument `{param}` of kernel `{kernel}`: device address {addr:#x} is not 16-byte aligned"
    )]
    Misaligned {
        /// The kernel's name.
        kernel: String,
        /// The parameter's name.
        param: String,
        /// The device address (the byte offset into the tensor on the emulator).
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
    /// The embedded kernel description is unusable (IR that does not decode, or that
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
    /// The source and the destination of a copy overlap without being the same elements
    /// (views of one tensor): CUDA leaves such a copy undefined, so neither backend performs
    /// it.
    #[error("{op}: the source and the destination overlap (two views of one memory): copy through a temporary tensor")]
    OverlappingCopy {
        /// The operation, e.g. `"Device::copy"`.
        op: &'static str,
    },
    /// One device's kernels cannot access another's memory (`Device::enable_peer_access`).
    #[error("{device} cannot access the memory of {peer}: {reason}")]
    PeerAccessUnsupported {
        /// The device whose kernels would access the memory.
        device: String,
        /// The device that owns the memory.
        peer: String,
        /// Why not.
        reason: String,
    },
    /// The device cannot map host memory into its address space (`Device::mapped`).
    #[error("{device} cannot map host memory into its address space (CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0)")]
    MappedMemoryUnsupported {
        /// The device.
        device: String,
    },
    /// A view's element range does not lie inside its tensor.
    #[error("{op}: the range {start}..{end} is not inside a tensor of {len} elements")]
    OutOfRange {
        /// The operation, e.g. `"GlobalTensor::view"`.
        op: &'static str,
        /// First element of the range.
        start: usize,
        /// One past the last element.
        end: usize,
        /// The tensor's length.
        len: usize,
    },
    /// Memory of one element type viewed as another whose size does not divide its byte
    /// length (feature `cudarc`: `CudarcScope::borrow_as`).
    #[error("{op}: {bytes} bytes of `{from}` elements are not a whole number of `{to}` elements ({} bytes each)", to.size_bytes())]
    ElementSize {
        /// The operation, e.g. `"CudarcScope::borrow_as"`.
        op: &'static str,
        /// The byte length of the memory.
        bytes: usize,
        /// The memory's element type.
        from: DType,
        /// The element type of the view.
        to: DType,
    },
    /// A bitcast view ([`AsTensor::bitcast`](crate::AsTensor::bitcast)) between element types
    /// of different widths, or of `bool`.
    #[error("a view of `{from}` elements as `{to}` elements: {reason}")]
    Bitcast {
        /// The memory's element type.
        from: DType,
        /// The element type of the view.
        to: DType,
        /// Why the view is refused.
        reason: &'static str,
    },
    /// An argument outside what an operation accepts, e.g. a histogram whose range is empty.
    #[error("{op}: {reason}")]
    InvalidArgument {
        /// The operation, e.g. `"tilus::algo::histogram_even"`.
        op: &'static str,
        /// What is wrong with the argument.
        reason: String,
    },
    /// Two objects of one operation (tensors, streams, events, buffers) belong to different
    /// devices.
    #[error("{op}: the operands belong to different devices ({a} and {b})")]
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
    /// An event was used for timing or waiting before it was recorded on a stream.
    #[error("{op}: the event has not been recorded on a stream yet")]
    EventNotRecorded {
        /// The operation, e.g. `"Event::elapsed_ms"`.
        op: &'static str,
    },
    /// No GPU could be opened where one was required (`TILUS_REQUIRE_GPU=1`, or an explicit
    /// `Device::cuda`).
    #[error("no GPU available: {message}")]
    NoGpu {
        /// Why.
        message: String,
    },
    /// The emulator reported an error while running a kernel. The emulator's message is part
    /// of this one (and [`source`](std::error::Error::source) is `None`, so that it is printed
    /// once); the error itself is the `error` field.
    #[error("kernel `{kernel}` failed in the emulator: {error}")]
    Emulator {
        /// The kernel's name.
        kernel: String,
        /// The emulator's error.
        error: EmuError,
    },
    /// The device is out of memory (`CUDA_ERROR_OUT_OF_MEMORY`, 2); on the emulator, the host
    /// could not allocate the tensor. Not sticky: the device stays usable.
    #[error("{0}")]
    OutOfMemory(DriverError),
    /// The driver rejected an argument (`CUDA_ERROR_INVALID_VALUE`, 1).
    #[error("{0}")]
    InvalidValue(DriverError),
    /// A kernel accessed an address outside any allocation (`CUDA_ERROR_ILLEGAL_ADDRESS`, 700).
    /// Sticky: the context is unusable afterwards and every later call fails.
    #[error("{0}")]
    IllegalAddress(DriverError),
    /// The launch needs more resources (registers, shared memory) than the device has
    /// (`CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`, 701). Not sticky.
    #[error("{0}")]
    LaunchOutOfResources(DriverError),
    /// A kernel ran too long (`CUDA_ERROR_LAUNCH_TIMEOUT`, 702: a display watchdog). Sticky.
    #[error("{0}")]
    LaunchTimeout(DriverError),
    /// A kernel executed an illegal instruction (`CUDA_ERROR_ILLEGAL_INSTRUCTION`, 715). Sticky.
    #[error("{0}")]
    IllegalInstruction(DriverError),
    /// A kernel made a misaligned memory access (`CUDA_ERROR_MISALIGNED_ADDRESS`, 716). Sticky.
    #[error("{0}")]
    MisalignedAddress(DriverError),
    /// A kernel failed for another reason (`CUDA_ERROR_LAUNCH_FAILED`, 719). Sticky.
    #[error("{0}")]
    LaunchFailed(DriverError),
    /// The device or driver does not support the operation (`CUDA_ERROR_NOT_SUPPORTED`, 801).
    #[error("{0}")]
    NotSupported(DriverError),
    /// Any other driver failure, with its code. Errors of a kernel that faulted are reported
    /// by the next call that synchronises (e.g. `GlobalTensor::download`).
    #[error("{0}")]
    Cuda(DriverError),
}

/// A CUDA driver failure: what the runtime was doing and the driver's error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CUDA error in {context}: {name} ({code}): {description}")]
#[non_exhaustive]
pub struct DriverError {
    /// What the runtime was doing, e.g. `"allocating 4096 bytes on GPU 0"`.
    pub context: String,
    /// The driver's `CUresult` code (`CUDA_ERROR_OUT_OF_MEMORY` is 2).
    pub code: i32,
    /// The code's name from the driver (`cuGetErrorName`), e.g. `CUDA_ERROR_OUT_OF_MEMORY`, or
    /// `CUDA error <code>` when the driver cannot name it.
    pub name: String,
    /// The driver's description of the code (`cuGetErrorString`), possibly with more detail
    /// (the PTX JIT's log for a module that does not load).
    pub description: String,
}

/// A variant's constructor.
type MakeError = fn(DriverError) -> Error;

/// Driver codes with a variant of their own (`cuda.h`'s `CUresult` values), and the
/// constructor. Everything else becomes [`Error::Cuda`].
const TYPED_CODES: &[(i32, MakeError)] = &[
    (1, Error::InvalidValue),
    (2, Error::OutOfMemory),
    (700, Error::IllegalAddress),
    (701, Error::LaunchOutOfResources),
    (702, Error::LaunchTimeout),
    (715, Error::IllegalInstruction),
    (716, Error::MisalignedAddress),
    (719, Error::LaunchFailed),
    (801, Error::NotSupported),
];

/// Codes after which the context is unusable ("sticky" errors in the driver's documentation):
/// every later call in the process fails with the same code.
/// (720, a cooperative launch too large, fails at launch and is not sticky; 226 and 721 are
/// sticky on CUDA 12 and later.)
const STICKY_CODES: &[i32] = &[226, 700, 702, 710, 714, 715, 716, 717, 718, 719, 721];

impl DriverError {
    /// A driver error (the constructor the backends use).
    pub(crate) fn new(
        context: impl Into<String>,
        code: i32,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> DriverError {
        DriverError {
            context: context.into(),
            code,
            name: name.into(),
            description: description.into(),
        }
    }

    /// Whether the error leaves the CUDA context unusable (an illegal address, a failed or
    /// timed-out kernel, ...): the driver then fails every later call of the process.
    pub fn is_sticky(&self) -> bool {
        STICKY_CODES.contains(&self.code)
    }
}

impl From<DriverError> for Error {
    /// The variant of the driver's code.
    fn from(e: DriverError) -> Error {
        match TYPED_CODES.iter().find(|(c, _)| *c == e.code) {
            Some((_, make)) => make(e),
            None => Error::Cuda(e),
        }
    }
}

impl Error {
    /// The driver error behind a driver-failure variant ([`OutOfMemory`](Error::OutOfMemory),
    /// ..., [`Cuda`](Error::Cuda)); `None` for validation and emulator errors.
    ///
    /// ```
    /// use tilus_runtime::Device;
    /// let dev = Device::emulator();
    /// let err = dev.zeros::<i32>(usize::MAX / 2).unwrap_err(); // far more than any host has
    /// assert_eq!(err.driver().map(|d| d.code), Some(2)); // CUDA_ERROR_OUT_OF_MEMORY
    /// ```
    pub fn driver(&self) -> Option<&DriverError> {
        match self {
            Error::OutOfMemory(d)
            | Error::InvalidValue(d)
            | Error::IllegalAddress(d)
            | Error::LaunchOutOfResources(d)
            | Error::LaunchTimeout(d)
            | Error::IllegalInstruction(d)
            | Error::MisalignedAddress(d)
            | Error::LaunchFailed(d)
            | Error::NotSupported(d)
            | Error::Cuda(d) => Some(d),
            _ => None,
        }
    }

    /// An out-of-memory error on the emulator (the host allocation failed), with the code the
    /// driver uses for the same failure.
    pub(crate) fn host_out_of_memory(context: String) -> Error {
        Error::OutOfMemory(DriverError::new(
            context,
            2,
            "CUDA_ERROR_OUT_OF_MEMORY",
            "out of memory (the emulator could not allocate host memory)",
        ))
    }
}

/// `std::result::Result` with the runtime's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    fn driver_err(code: i32) -> Error {
        DriverError::new("testing", code, format!("code {code}"), "described").into()
    }

    #[test]
    fn driver_codes_become_their_variants_and_keep_the_code() {
        type IsVariant = fn(&Error) -> bool;
        let cases: &[(i32, IsVariant)] = &[
            (1, |e| matches!(e, Error::InvalidValue(_))),
            (2, |e| matches!(e, Error::OutOfMemory(_))),
            (700, |e| matches!(e, Error::IllegalAddress(_))),
            (701, |e| matches!(e, Error::LaunchOutOfResources(_))),
            (719, |e| matches!(e, Error::LaunchFailed(_))),
            (801, |e| matches!(e, Error::NotSupported(_))),
            (912, |e| matches!(e, Error::Cuda(_))),
            (999, |e| matches!(e, Error::Cuda(_))),
        ];
        for &(code, is_variant) in cases {
            let e = driver_err(code);
            assert!(is_variant(&e), "{code}: {e:?}");
            assert_eq!(e.driver().map(|d| d.code), Some(code));
            // The driver's text once, with what the runtime was doing.
            assert_eq!(
                e.to_string(),
                format!("CUDA error in testing: code {code} ({code}): described")
            );
            assert!(std::error::Error::source(&e).is_none());
        }
        assert!(driver_err(700).driver().unwrap().is_sticky());
        assert!(!driver_err(2).driver().unwrap().is_sticky());
        assert!(!driver_err(720).driver().unwrap().is_sticky());
        assert!(Error::EventNotRecorded { op: "x" }.driver().is_none());
    }
}
