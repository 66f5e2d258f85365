//! [`Device`]: where tensors live and kernels run.

use crate::error::{Error, Result};
use crate::spec::{ArgRepr, KernelArg, KernelSpec};
use crate::tensor::{Element, EmuBuf, GlobalTensor, Mem, MemRef};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tilus_core::emu::{self, EmuArg, EmuOptions};
use tilus_core::ir::ParamKind;

/// Shared memory per block the emulator accepts: 227 KiB, the opt-in limit of H100/H200, so
/// that a kernel the emulator runs also fits those GPUs.
pub const EMULATOR_MAX_SHARED_BYTES: usize = 232_448;

/// Threads per block the emulator accepts (the CUDA limit).
pub const EMULATOR_MAX_THREADS: u32 = 1024;

/// Environment variable: when set to `1`, [`Device::default`] fails instead of falling back to
/// the emulator if no GPU can be opened.
pub const REQUIRE_GPU_ENV: &str = "TILUS_REQUIRE_GPU";

/// A device: an NVIDIA GPU (feature `cuda`) or the CPU emulator.
///
/// Cheap to clone (a reference-counted handle) and usable from any thread. All work issued to a
/// GPU device runs in issue order on one stream; emulator launches run synchronously.
/// `Device::cuda` returns the same device (context, stream, loaded modules) for the same
/// ordinal throughout the process.
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

    /// GPU `ordinal`, opened on first use (driver initialisation, primary context, one stream)
    /// and shared by all later calls with the same ordinal.
    #[cfg(feature = "cuda")]
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
    /// It is the device's primary context, shared with other users of it in the process.
    #[cfg(feature = "cuda")]
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

    /// A tensor holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<GlobalTensor<T>> {
        match &self.inner.backend {
            Backend::Emu(_) => {
                let buf = EmuBuf::filled(T::DTYPE.size_bytes(), data.len(), 0);
                let t = GlobalTensor::from_parts(self.clone(), data.len(), Mem::Emu(buf));
                t.copy_from_host(data)?;
                Ok(t)
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                let buf = c.alloc(std::mem::size_of_val(data))?;
                let t = GlobalTensor::from_parts(
                    self.clone(),
                    data.len(),
                    Mem::Cuda(std::mem::ManuallyDrop::new(buf)),
                );
                t.copy_from_host(data)?;
                Ok(t)
            }
        }
    }

    /// A tensor of `len` zeros.
    pub fn zeros<T: Element>(&self, len: usize) -> Result<GlobalTensor<T>> {
        self.full(len, T::default())
    }

    /// A tensor of `len` copies of `value`.
    pub fn full<T: Element>(&self, len: usize, value: T) -> Result<GlobalTensor<T>> {
        let width = T::DTYPE.size_bytes();
        match &self.inner.backend {
            Backend::Emu(_) => {
                let buf = EmuBuf::filled(width, len, value.to_bits());
                Ok(GlobalTensor::from_parts(self.clone(), len, Mem::Emu(buf)))
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => {
                let buf = c.alloc(len * width)?;
                let ptr = buf.as_device_ptr().as_raw();
                let t = GlobalTensor::from_parts(
                    self.clone(),
                    len,
                    Mem::Cuda(std::mem::ManuallyDrop::new(buf)),
                );
                c.fill(ptr, width, value.to_bits(), len)?;
                Ok(t)
            }
        }
    }

    /// Wait until all work issued to the device has finished (a no-op on the emulator, whose
    /// launches are synchronous).
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner.backend {
            Backend::Emu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.synchronize("Device::synchronize"),
        }
    }

    /// Device-to-device copy of `src` into `dst` (equal lengths, both on this device). On a GPU
    /// it is issued to the device's stream like a launch (so it can be timed with
    /// [`time_ms`](Self::time_ms)); on the emulator it completes before returning.
    pub fn copy<T: Element>(&self, src: &GlobalTensor<T>, dst: &GlobalTensor<T>) -> Result<()> {
        for t in [src.device(), dst.device()] {
            if !t.same_device(self) {
                return Err(Error::DeviceMismatch {
                    op: "Device::copy",
                    a: t.describe(),
                    b: self.describe(),
                });
            }
        }
        if src.len() != dst.len() {
            return Err(Error::LengthMismatch {
                op: "Device::copy",
                expected: dst.len(),
                got: src.len(),
            });
        }
        match (src.as_ref_arg().mem, dst.as_ref_arg().mem) {
            (MemRef::Emu(s), MemRef::Emu(d)) => {
                if !s.same(&d) {
                    for i in 0..src.len() {
                        d.store(i, s.load(i, Ordering::Relaxed), Ordering::Relaxed);
                    }
                }
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (MemRef::Cuda(s), MemRef::Cuda(d)) => {
                if s == d {
                    return Ok(());
                }
                self.cuda_backend()?
                    .copy_dtod(d, s, src.len() * std::mem::size_of::<T>())
            }
            #[cfg(feature = "cuda")]
            _ => unreachable!("tensors of one device share its backend"),
        }
    }

    /// Run `f` `reps` times and return the duration of each run in milliseconds: measured with
    /// CUDA events recorded on the device's stream around `f` on a GPU (so it times the device
    /// work `f` issues), with the host clock around `f` and a [`synchronize`](Self::synchronize)
    /// on the emulator. Stops at the first error of `f`.
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
        match &self.inner.backend {
            Backend::Emu(_) => {
                let mut out = Vec::with_capacity(reps);
                for _ in 0..reps {
                    let t0 = Instant::now();
                    f()?;
                    self.synchronize()?;
                    out.push(t0.elapsed().as_secs_f64() * 1e3);
                }
                Ok(out)
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.time_ms(reps, &mut f),
        }
    }

    /// Launch `spec` over `grid` blocks with `args` (one per parameter, in order).
    ///
    /// Everything is validated before the device is touched, each failure an [`Error`] naming
    /// the kernel and the parameter: the grid size (`1..=2^31-1`), the block size and shared
    /// memory against the device's limits, the number of arguments, each argument's kind and
    /// element type, that each tensor lives on this device, has at most `i32::MAX` elements and
    /// a 16-byte aligned address. On a GPU the launch is asynchronous (errors of the running
    /// kernel surface at the next synchronising call); on the emulator it runs to completion.
    ///
    /// Launchers generated by `#[tile_kernel]` call this; by hand:
    ///
    /// ```ignore
    /// dev.launch(my_kernel::spec(), blocks, &[KernelArg::from(&input), KernelArg::from(n)])?;
    /// ```
    pub fn launch(
        &self,
        spec: &'static KernelSpec,
        grid: u32,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        self.validate(spec, grid, args)?;
        match &self.inner.backend {
            Backend::Emu(opts) => {
                let ir = spec.ir()?;
                let emu_args: Vec<EmuArg<'_>> = args
                    .iter()
                    .map(|a| match a.repr {
                        ArgRepr::Tensor(t) => match t.mem {
                            MemRef::Emu(m) => EmuArg::Tensor(m),
                            #[cfg(feature = "cuda")]
                            MemRef::Cuda(_) => {
                                unreachable!("validated: tensors live on this device")
                            }
                        },
                        ArgRepr::Scalar(_, bits) => EmuArg::Scalar(bits),
                    })
                    .collect();
                emu::launch(ir, grid, &emu_args, opts).map_err(|source| Error::Emulator {
                    kernel: spec.name().to_string(),
                    source,
                })
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(c) => c.launch(spec, grid, args),
        }
    }

    fn validate(&self, spec: &KernelSpec, grid: u32, args: &[KernelArg<'_>]) -> Result<()> {
        let kernel = || spec.name().to_string();
        if grid == 0 || grid > i32::MAX as u32 {
            return Err(Error::InvalidGrid {
                kernel: kernel(),
                grid,
            });
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
                if !t.device.same_device(self) {
                    return Err(Error::WrongDevice {
                        kernel: kernel(),
                        param: p.name().to_string(),
                        tensor_device: t.device.describe(),
                        device: self.describe(),
                    });
                }
                #[cfg(feature = "cuda")]
                if let MemRef::Cuda(addr) = t.mem {
                    if addr % 16 != 0 {
                        return Err(Error::Misaligned {
                            kernel: kernel(),
                            param: p.name().to_string(),
                            addr,
                        });
                    }
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
