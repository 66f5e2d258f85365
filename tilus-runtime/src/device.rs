//! [`Device`]: where tensors live and kernels run.

use crate::error::{Error, Result};
use crate::grid::{
    check_cluster_shape, check_cluster_size, check_grid, ptx_target, EMULATOR_MAX_CLUSTER_BLOCKS,
    EMULATOR_MAX_GRID,
};
use crate::spec::{ArgRepr, AsTensor, KernelArg, KernelSpec};
use crate::stream::{Stream, StreamKind};
use crate::tensor::{Element, EmuBuf, GlobalTensor, Mem, MemRef};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use tilus_core::emu::{self, EmuArg, EmuOptions};
use tilus_core::ir::{Grid, ParamKind};

/// Shared memory per block the emulator accepts: 227 KiB, the opt-in limit of H100/H200, so
/// that a kernel the emulator runs also fits those GPUs.
pub const EMULATOR_MAX_SHARED_BYTES: usize = tilus_core::target::MAX_SHARED_BYTES;

/// Threads per block the emulator accepts (the CUDA limit).
pub const EMULATOR_MAX_THREADS: u32 = 1024;

/// Environment variable: when set to `1`, [`Device::default`] fails instead of falling back to
/// the emulator if no GPU can be opened.
pub const REQUIRE_GPU_ENV: &str = "TILUS_REQUIRE_GPU";

/// A device: an NVIDIA GPU (feature `cuda`) or the CPU emulator.
///
/// Cheap to clone (a reference-counted handle) and usable from any thread. Work issued without
/// a [`Stream`] runs in issue order on the device's default stream (on a GPU, CUDA's legacy
/// default stream, which is also ordered with every blocking stream); emulator work runs
/// synchronously. `Device::cuda` returns the same device (context, loaded modules) for the
/// same ordinal throughout the process.
///
/// ```
/// use tilus_runtime::Device;
/// # fn main() -> tilus_runtime::Result<()> {
/// let dev = Device::emulator();
/// let a = dev.upload(&[1, 2, 3, 4])?;
/// let b = dev.zeros::<i32>(4)?;
/// dev.copy(&a, &b)?;
/// assert_eq!(b.download()?, vec![1, 2, 3, 4]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// Distinguishes emulator devices in messages.
    id: u64,
    pub(crate) backend: Backend,
    /// Devices whose memory this one's kernels may access (`Device::enable_peer_access`).
    pub(crate) peers: std::sync::Mutex<Vec<Device>>,
}

pub(crate) enum Backend {
    Emu(EmuOptions),
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::CudaDevice),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn require_gpu() -> bool {
    std::env::var(REQUIRE_GPU_ENV)
        .map(|v| v.trim() == "1")
        .unwrap_or(false)
}

impl Device {
    fn from_backend(backend: Backend) -> Device {
        Device {
            inner: Arc::new(Inner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                backend,
                peers: std::sync::Mutex::new(Vec::new()),
            }),
        }
    }

    /// The default device: with feature `cuda`, GPU 0 if the driver initialises and a GPU
    /// exists, else the emulator; without it, the emulator. If the environment variable
    /// `TILUS_REQUIRE_GPU` is `1` and no GPU can be opened, an [`Error::NoGpu`] instead.
    ///
    /// Repeated calls return the same device.
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Device> {
        #[cfg(feature = "cuda")]
        {
            match Device::cuda(0) {
                Ok(d) => return Ok(d),
                Err(e) if require_gpu() => {
                    return Err(Error::NoGpu {
                        message: format!("{REQUIRE_GPU_ENV}=1 but GPU 0 could not be opened: {e}"),
                    })
                }
                Err(_) => {}
            }
        }
        #[cfg(not(feature = "cuda"))]
        if require_gpu() {
            return Err(Error::NoGpu {
                message: format!(
                    "{REQUIRE_GPU_ENV}=1 but tilus was built without the `cuda` feature"
                ),
            });
        }
        static EMU: OnceLock<Device> = OnceLock::new();
        Ok(EMU.get_or_init(Device::emulator).clone())
    }

    /// A new emulator device with default [`EmuOptions`].
    pub fn emulator() -> Device {
        Device::emulator_with(EmuOptions::default())
    }

    /// A new emulator device with the given options.
    ///
    /// ```
    /// use tilus_runtime::{Device, EmuOptions};
    /// let dev = Device::emulator_with(EmuOptions { strict_scatter: true, ..EmuOptions::default() });
    /// assert!(!dev.is_gpu());
    /// ```
    pub fn emulator_with(opts: EmuOptions) -> Device {
        Device::from_backend(Backend::Emu(opts))
    }

    /// GPU `ordinal`, opened on first use (driver initialisation, primary context, device
    /// limits) and shared by all later calls with the same ordinal.
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn cuda(ordinal: u32) -> Result<Device> {
        use std::collections::HashMap;
        use std::sync::Mutex;
        static OPEN: OnceLock<Mutex<HashMap<u32, Device>>> = OnceLock::new();
        let mut open = OPEN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(d) = open.get(&ordinal) {
            return Ok(d.clone());
        }
        let d = Device::from_backend(Backend::Cuda(crate::cuda::CudaDevice::open(ordinal)?));
        open.insert(ordinal, d.clone());
        Ok(d)
    }

    /// The CUDA context of a GPU device (`None` on the emulator), for code that uses `cust`
    /// directly alongside tilus: make it current with
    /// `cust::context::CurrentContext::set_current(ctx)` on each thread before `cust` calls.
    /// It is the device's primary context, shared with other users of it in the process
    /// (cudarc's `CudaContext::new` retains the same one).
    #[cfg(feature = "cuda")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cuda")))]
    pub fn cuda_context(&self) -> Option<&cust::context::Context> {
        match &self.inner.backend {
            Backend::Cuda(c) => Some(c.context()),
            Backend::Emu(_) => None,
        }
    }

    /// Whether this is a GPU (as opposed to the emulator).
    pub fn is_gpu(&self) -> bool {
        match &self.inner.backend {
            Backend::Emu(_) => false,
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => true,
        }
    }

    /// A human-readable name: the GPU's name, or `"CPU emulator"`.
    pub fn name(&self) -> String {
        match &self.inner.backend {
            Backend::Emu(_) => "CPU emulator".to_string(),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.name.clone(),
        }
    }

    /// The device for messages: `GPU 0 (NVIDIA H100 80GB HBM3, sm_90)` or `CPU emulator #3`.
    pub(crate) fn describe(&self) -> String {
        match &self.inner.backend {
            Backend::Emu(_) => format!("CPU emulator #{}", self.inner.id),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.describe(),
        }
    }

    /// The emulator's options (`None` on a GPU).
    pub fn emulator_options(&self) -> Option<&EmuOptions> {
        match &self.inner.backend {
            Backend::Emu(o) => Some(o),
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => None,
        }
    }

    /// The most threads per block a kernel may use on this device.
    pub fn max_threads_per_block(&self) -> u32 {
        match &self.inner.backend {
            Backend::Emu(_) => EMULATOR_MAX_THREADS,
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.max_threads,
        }
    }

    /// The most dynamic shared memory per block a kernel may request on this device (the
    /// opt-in limit on a GPU; [`EMULATOR_MAX_SHARED_BYTES`] on the emulator).
    pub fn max_shared_bytes_per_block(&self) -> usize {
        match &self.inner.backend {
            Backend::Emu(_) => EMULATOR_MAX_SHARED_BYTES,
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.max_shared,
        }
    }

    /// The largest grid, per dimension: the GPU's `MAX_GRID_DIM_{X,Y,Z}` attributes (2^31 - 1,
    /// 65,535 and 65,535 on every GPU since compute capability 3.0), or
    /// [`EMULATOR_MAX_GRID`](crate::EMULATOR_MAX_GRID) (the same numbers) on the emulator.
    pub fn max_grid(&self) -> Grid {
        match &self.inner.backend {
            Backend::Emu(_) => EMULATOR_MAX_GRID,
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.max_grid,
        }
    }

    /// How many blocks run at once, as a unit for sizing grid-stride loops: the GPU's
    /// streaming multiprocessors (132 on an H100 SXM), or the emulator's workers (its host
    /// threads running blocks: [`EmuOptions::workers`], or the host's cores when that is 0).
    pub fn multiprocessors(&self) -> u32 {
        match &self.inner.backend {
            Backend::Emu(o) => match o.workers {
                0 => emu::default_workers() as u32,
                w => w as u32,
            },
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.multiprocessors,
        }
    }

    /// The GPU's compute capability (major, minor); `None` on the emulator, which runs kernels
    /// of every target.
    pub fn compute_capability(&self) -> Option<(u32, u32)> {
        match &self.inner.backend {
            Backend::Emu(_) => None,
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => Some(c.cc),
        }
    }

    /// Whether kernels with thread-block clusters (`#[tile_kernel(cluster = ..)]`) can run
    /// here: on the emulator, and on GPUs of compute capability 9.0 and later whose driver
    /// supports cluster launch (11.8 and later).
    pub fn supports_clusters(&self) -> bool {
        self.cluster_support().is_ok()
    }

    fn cluster_support(&self) -> std::result::Result<(), String> {
        match &self.inner.backend {
            Backend::Emu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.cluster_support(),
        }
    }

    /// The largest cluster this device may run before per-kernel limits: the emulator mirrors
    /// an H100 (16 with the non-portable opt-in); a GPU's limit depends on the kernel and is
    /// asked of the driver at launch.
    fn max_cluster_blocks(&self) -> u32 {
        match &self.inner.backend {
            Backend::Emu(_) => EMULATOR_MAX_CLUSTER_BLOCKS,
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => u32::MAX,
        }
    }

    #[cfg(feature = "cuda")]
    pub(crate) fn cuda_backend(&self) -> Result<&crate::cuda::CudaDevice> {
        match &self.inner.backend {
            Backend::Cuda(c) => Ok(c),
            Backend::Emu(_) => Err(Error::WrongBackend {
                op: "a CUDA operation",
                needed: "CUDA",
                device: self.describe(),
            }),
        }
    }

    /// Whether `self` and `other` are the same device.
    pub fn same_device(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// `Err(DeviceMismatch)` unless `other` is this device.
    pub(crate) fn expect_same(&self, other: &Device, op: &'static str) -> Result<()> {
        if self.same_device(other) {
            return Ok(());
        }
        Err(Error::DeviceMismatch {
            op,
            a: other.describe(),
            b: self.describe(),
        })
    }

    /// A new tensor of `len` elements, each `bits` (the element's bit pattern).
    fn alloc<T: Element>(&self, len: usize, bits: u64) -> Result<GlobalTensor<T>> {
        let width = T::DTYPE.size_bytes();
        let oom = || {
            Error::host_out_of_memory(format!(
                "allocating {len} elements of {} bytes on {}",
                width,
                self.describe()
            ))
        };
        // The byte size is needed by the GPU backend; its overflow is an out-of-memory anywhere.
        #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
        let bytes = len.checked_mul(width).ok_or_else(oom)?;
        match &self.inner.backend {
            Backend::Emu(_) => {
                let buf = EmuBuf::filled(width, len, bits).ok_or_else(oom)?;
                Ok(GlobalTensor::from_parts(self.clone(), len, Mem::Emu(buf)))
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                let ptr = c.alloc(bytes)?;
                let t = GlobalTensor::from_parts(self.clone(), len, Mem::Cuda(ptr));
                c.fill(ptr, width, bits, len, crate::cuda::DEFAULT_STREAM)?;
                // The fill is complete before the tensor is returned: work on any stream, a
                // non-blocking one too (which the legacy default stream does not order), then
                // sees the values.
                c.stream_synchronize(crate::cuda::DEFAULT_STREAM, "filling a tensor")?;
                Ok(t)
            }
        }
    }

    /// A tensor holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<GlobalTensor<T>> {
        let t = match &self.inner.backend {
            Backend::Emu(_) => self.alloc::<T>(data.len(), 0)?,
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                let ptr = c.alloc(std::mem::size_of_val(data))?;
                GlobalTensor::from_parts(self.clone(), data.len(), Mem::Cuda(ptr))
            }
        };
        t.copy_from_host(data)?;
        Ok(t)
    }

    /// A tensor of `len` zeros.
    pub fn zeros<T: Element>(&self, len: usize) -> Result<GlobalTensor<T>> {
        self.full(len, T::default())
    }

    /// A tensor of `len` copies of `value`. [`Error::OutOfMemory`] if the device (or, on the
    /// emulator, the host) cannot hold it.
    pub fn full<T: Element>(&self, len: usize, value: T) -> Result<GlobalTensor<T>> {
        self.alloc(len, value.to_bits())
    }

    /// Wait until all work issued to the device has finished, on every stream (a no-op on the
    /// emulator, whose work is synchronous).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner.backend {
            Backend::Emu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.synchronize("Device::synchronize"),
        }
    }

    /// A new stream of this device: an ordered queue of launches, copies and event records
    /// that may overlap with other streams' work. See [`Stream`].
    pub fn stream(&self) -> Result<Stream<'static>> {
        Stream::new(self)
    }

    /// The device's default stream, the one [`launch`](Self::launch) and the blocking calls
    /// use (CUDA's legacy default stream on a GPU), as a [`Stream`] for
    /// [`Event::record`](crate::Event::record) and [`Stream::wait_event`].
    pub fn default_stream(&self) -> Stream<'static> {
        Stream::default_of(self)
    }

    /// Device-to-device copy of `src` into `dst` (equal lengths, both on this device; tensors
    /// or views). On a GPU it is issued to the default stream like a launch (so it can be
    /// timed with [`time_ms`](Self::time_ms)); on the emulator it completes before returning.
    pub fn copy<T: Element>(&self, src: &impl AsTensor<T>, dst: &impl AsTensor<T>) -> Result<()> {
        self.copy_on(src, dst, &StreamKind::Default, "Device::copy")
    }

    pub(crate) fn copy_on<T: Element>(
        &self,
        src: &impl AsTensor<T>,
        dst: &impl AsTensor<T>,
        stream: &StreamKind,
        op: &'static str,
    ) -> Result<()> {
        let (s, d) = (src.tensor_ref(), dst.tensor_ref());
        for t in [s.device, d.device] {
            self.expect_same(t, op)?;
        }
        if s.len != d.len {
            return Err(Error::LengthMismatch {
                op,
                expected: d.len,
                got: s.len,
            });
        }
        // Copying elements onto themselves changes nothing; a partial overlap is undefined in
        // CUDA, and refused on both backends alike.
        let bytes = (s.len * std::mem::size_of::<T>()) as u64;
        let (sa, da) = (s.address(), d.address());
        if sa == da {
            return Ok(());
        }
        if bytes > 0 && sa < da + bytes && da < sa + bytes {
            return Err(Error::OverlappingCopy { op });
        }
        match (s.mem, d.mem) {
            (MemRef::Emu(sm, _), MemRef::Emu(dm, _)) => {
                let _ = stream; // the emulator runs each operation when it is issued
                if !sm.same(&dm) {
                    // Overlaps were refused above; a view onto itself changes nothing.
                    dm.copy_from(&sm);
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (MemRef::Cuda(sp), MemRef::Cuda(dp)) => self.cuda_backend()?.copy_dtod(
                dp,
                sp,
                s.len * std::mem::size_of::<T>(),
                stream.raw(),
            ),
            #[cfg(feature = "cuda")]
            _ => unreachable!("tensors of one device share its backend"),
        }
    }

    /// Run `f` `reps` times and return the duration of each run in milliseconds: measured with
    /// events recorded on the default stream around `f` (on a GPU it times the device work
    /// `f` issues there; on the emulator, whose work runs when issued, the host time of `f`).
    /// Stops at the first error of `f`.
    ///
    /// ```
    /// use tilus_runtime::Device;
    /// # fn main() -> tilus_runtime::Result<()> {
    /// let dev = Device::emulator();
    /// let (a, b) = (dev.zeros::<i32>(1 << 10)?, dev.zeros::<i32>(1 << 10)?);
    /// let times = dev.time_ms(3, || dev.copy(&a, &b))?;
    /// assert_eq!(times.len(), 3);
    /// # Ok(()) }
    /// ```
    pub fn time_ms(&self, reps: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
        let stream = self.default_stream();
        let (start, end) = (self.event()?, self.event()?);
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            start.record(&stream)?;
            f()?;
            end.record(&stream)?;
            out.push(start.elapsed_ms(&end)? as f64);
        }
        Ok(out)
    }

    /// Launch `spec` over `grid` on the default stream with `args` (one per parameter, in
    /// order). `grid` is a block count (`u32`), `(x, y)`, `(x, y, z)`, `[x, y, z]` or a
    /// [`Grid`].
    ///
    /// Everything is validated before the device is touched, each failure an [`Error`] naming
    /// the kernel and the parameter: each grid dimension against the device's limits
    /// ([`InvalidGrid`](Error::InvalidGrid)); for a cluster kernel, that the device can launch
    /// clusters ([`ClusterUnsupported`](Error::ClusterUnsupported)), that the grid is a whole
    /// number of clusters ([`ClusterShape`](Error::ClusterShape)) and that the cluster is not
    /// larger than the device runs ([`ClusterTooLarge`](Error::ClusterTooLarge)); on a GPU, the
    /// kernel's PTX target against its compute capability
    /// ([`TargetUnsupported`](Error::TargetUnsupported)); the block size and shared memory
    /// against the device's limits; the number of arguments, each argument's kind and element
    /// type, that each tensor lives on this device and has a 16-byte aligned address. On a GPU
    /// the launch is asynchronous (errors of the running kernel surface at the next
    /// synchronising call); on the emulator it runs to completion.
    ///
    /// Launchers generated by `#[tile_kernel]` call this; by hand:
    ///
    /// ```ignore
    /// dev.launch(my_kernel::spec(), blocks, &[KernelArg::from(&input), KernelArg::from(n)])?;
    /// ```
    pub fn launch(
        &self,
        spec: &'static KernelSpec,
        grid: impl Into<Grid>,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        self.launch_on(spec, grid.into(), args, &StreamKind::Default)
    }

    pub(crate) fn launch_on(
        &self,
        spec: &'static KernelSpec,
        grid: Grid,
        args: &[KernelArg<'_>],
        stream: &StreamKind,
    ) -> Result<()> {
        self.validate(spec, grid, args)?;
        match &self.inner.backend {
            Backend::Emu(opts) => {
                let ir = spec.ir()?;
                let emu_args: Vec<EmuArg<'_>> = args
                    .iter()
                    .map(|a| match a.repr {
                        ArgRepr::Tensor(t) => match t.mem {
                            MemRef::Emu(m, _) => EmuArg::Tensor(m),
                            #[cfg(feature = "cuda")]
                            MemRef::Cuda(_) => {
                                unreachable!("validated: tensors live on this device")
                            }
                        },
                        ArgRepr::Scalar(_, bits) => EmuArg::Scalar(bits),
                    })
                    .collect();
                let _ = stream; // the emulator runs each operation when it is issued
                emu::launch(ir, grid, &emu_args, opts).map_err(|error| Error::Emulator {
                    kernel: spec.name().to_string(),
                    error,
                })
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.launch(spec, grid, args, stream.raw()),
        }
    }

    fn validate(&self, spec: &KernelSpec, grid: Grid, args: &[KernelArg<'_>]) -> Result<()> {
        let name = spec.name();
        let kernel = || name.to_string();
        let device = self.describe();
        check_grid(name, grid, self.max_grid(), &device)?;
        let blocks = check_cluster_shape(name, grid, spec.cluster())?;
        if blocks > 1 {
            self.cluster_support()
                .map_err(|reason| Error::ClusterUnsupported {
                    kernel: kernel(),
                    device: device.clone(),
                    reason,
                })?;
            check_cluster_size(
                name,
                blocks,
                self.max_cluster_blocks(),
                &device,
                String::new(),
            )?;
        }
        if let (Some((major, minor)), Some(target)) =
            (self.compute_capability(), ptx_target(spec.ptx()))
        {
            if target > major * 10 + minor {
                return Err(Error::TargetUnsupported {
                    kernel: kernel(),
                    target,
                    device,
                    compute_capability: (major, minor),
                });
            }
        }
        let max_threads = self.max_threads_per_block();
        if spec.threads() == 0 || spec.threads() > max_threads {
            return Err(Error::Threads {
                kernel: kernel(),
                threads: spec.threads(),
                limit: max_threads,
                device: self.describe(),
                detail: if spec.threads() == 0 {
                    "; a block needs at least one thread".into()
                } else {
                    String::new()
                },
            });
        }
        let max_shared = self.max_shared_bytes_per_block();
        if spec.shared_bytes() > max_shared {
            return Err(Error::SharedMemory {
                kernel: kernel(),
                requested: spec.shared_bytes(),
                limit: max_shared,
                device: self.describe(),
            });
        }
        let params = spec.params();
        if params.len() != args.len() {
            return Err(Error::ArgCount {
                kernel: kernel(),
                expected: params.len(),
                got: args.len(),
            });
        }
        for (index, (p, a)) in params.iter().zip(args).enumerate() {
            if p.kind() != &a.kind() {
                return Err(Error::ArgType {
                    kernel: kernel(),
                    index,
                    param: p.name().to_string(),
                    expected: p.describe(),
                    got: a.describe(),
                });
            }
            if let (ParamKind::Tensor(_), ArgRepr::Tensor(t)) = (p.kind(), &a.repr) {
                if !t.device.same_device(self) && !self.is_peer(t.device) {
                    return Err(Error::WrongDevice {
                        kernel: kernel(),
                        param: p.name().to_string(),
                        tensor_device: t.device.describe(),
                        device: self.describe(),
                    });
                }
                let addr = t.align_addr();
                if addr % 16 != 0 {
                    return Err(Error::Misaligned {
                        kernel: kernel(),
                        param: p.name().to_string(),
                        addr,
                    });
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Device").field(&self.describe()).finish()
    }
}
