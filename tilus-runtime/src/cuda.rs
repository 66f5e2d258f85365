//! The CUDA backend (feature `cuda`), on `cust` 0.3 and, where `cust` has no safe wrapper,
//! its raw driver bindings `cust::sys`.
//!
//! Every entry point makes the device's context current on the calling thread first: CUDA's
//! current context is per thread, and devices are used from many threads.

use crate::error::{Error, Result};
use crate::spec::{ArgRepr, KernelArg, KernelSpec};
use crate::tensor::MemRef;
use cust::context::{Context, CurrentContext};
use cust::event::{Event, EventFlags};
use cust::memory::DeviceBuffer;
use cust::stream::{Stream, StreamFlags};
use cust::sys as cu;
use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::os::raw::c_char;
use std::sync::Mutex;
use tilus_core::ir::DType;

/// Dynamic shared memory a function may use without opting in.
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

/// A driver result as `Result`, the error naming what we were doing.
fn check(r: cu::CUresult, context: impl FnOnce() -> String) -> Result<()> {
    if r == cu::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cuda {
            context: context(),
            message: describe_result(r),
        })
    }
}

fn describe_result(r: cu::CUresult) -> String {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static NUL-terminated string or fails.
    let ok = unsafe { cu::cuGetErrorString(r, &mut p) } == cu::CUresult::CUDA_SUCCESS;
    if ok && !p.is_null() {
        // SAFETY: see above.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy();
        format!("{r:?} ({s})")
    } else {
        format!("{r:?}")
    }
}

fn cust_err(context: impl Into<String>) -> impl FnOnce(cust::error::CudaError) -> Error {
    let context = context.into();
    move |e| Error::Cuda {
        context,
        // Not `e.to_string()`: cust's `Display` fails (and `to_string` panics) when the driver
        // cannot describe the error, e.g. before initialisation or with a stub library.
        message: format!("{e:?} (CUDA error {})", e as u32),
    }
}

/// A loaded kernel: the raw module and function handles.
struct Loaded {
    module: cu::CUmodule,
    func: cu::CUfunction,
    /// The most threads per block the compiled function can be launched with (limited by its
    /// register use).
    max_threads: u32,
}

// SAFETY: `CUmodule` and `CUfunction` are opaque driver handles, not thread-bound: the driver API
// is thread-safe and a handle may be used from any thread on which its context is current
// (every use here makes it current first). The module is unloaded only when the owning
// `CudaDevice` is dropped. cust declares its own `Module` and `Function` Send + Sync on the same
// grounds.
unsafe impl Send for Loaded {}
// SAFETY: as above; `Loaded` has no interior mutability.
unsafe impl Sync for Loaded {}

/// One GPU: its primary context, the stream all work is issued to, device limits and the
/// kernels loaded so far.
pub(crate) struct CudaDevice {
    pub(crate) ordinal: u32,
    pub(crate) name: String,
    pub(crate) cc: (i32, i32),
    pub(crate) max_threads: u32,
    /// The opt-in limit of dynamic shared memory per block.
    pub(crate) max_shared: usize,
    /// Keyed by the address of the (`'static`) `KernelSpec`. Fields drop in declaration order:
    /// modules and the stream go before the context.
    modules: Mutex<HashMap<usize, Loaded>>,
    stream: Stream,
    ctx: Context,
}

impl CudaDevice {
    pub(crate) fn open(ordinal: u32) -> Result<CudaDevice> {
        cust::init(cust::CudaFlags::empty())
            .map_err(cust_err("initialising the CUDA driver (cuInit)"))?;
        let count = cust::device::Device::num_devices().map_err(cust_err("counting GPUs"))?;
        if ordinal >= count {
            return Err(Error::NoGpu {
                message: format!("GPU {ordinal} does not exist ({count} GPUs found)"),
            });
        }
        let dev = cust::device::Device::get_device(ordinal)
            .map_err(cust_err(format!("opening GPU {ordinal}")))?;
        // Retains the primary context (shared with any other cust user in the process) and makes
        // it current on this thread.
        let ctx = Context::new(dev)
            .map_err(cust_err(format!("creating the context of GPU {ordinal}")))?;
        let name = dev.name().map_err(cust_err("querying the GPU's name"))?;
        let attr = |a: cu::CUdevice_attribute| -> Result<i32> {
            let mut v = 0i32;
            // SAFETY: plain query into a local.
            check(
                unsafe { cu::cuDeviceGetAttribute(&mut v, a, dev.as_raw()) },
                || format!("querying device attribute {a:?} of GPU {ordinal}"),
            )?;
            Ok(v)
        };
        use cu::CUdevice_attribute::*;
        let max_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        let max_shared = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let cc = (
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        // cust 0.3 always creates a blocking stream (it strips NON_BLOCKING): it is ordered with
        // the legacy default stream, so synchronous cust copies of user buffers stay ordered
        // with our launches.
        let stream = Stream::new(StreamFlags::DEFAULT, None)
            .map_err(cust_err(format!("creating a stream on GPU {ordinal}")))?;
        Ok(CudaDevice {
            ordinal,
            name,
            cc,
            max_threads: max_threads.max(0) as u32,
            max_shared: max_shared.max(0) as usize,
            modules: Mutex::new(HashMap::new()),
            stream,
            ctx,
        })
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "GPU {} ({}, sm_{}{})",
            self.ordinal, self.name, self.cc.0, self.cc.1
        )
    }

    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    /// Make the context current on the calling thread.
    pub(crate) fn make_current(&self) -> Result<()> {
        CurrentContext::set_current(&self.ctx).map_err(cust_err(format!(
            "making the context of GPU {} current",
            self.ordinal
        )))
    }

    pub(crate) fn synchronize(&self, what: &str) -> Result<()> {
        self.make_current()?;
        self.stream.synchronize().map_err(cust_err(format!(
            "{what} (waiting for the device's stream; the error may come from an earlier kernel launch)"
        )))
    }

    /// Before freeing memory: make the context current and let the stream drain, ignoring errors
    /// (called from `Drop`).
    pub(crate) fn quiesce_for_free(&self) {
        if self.make_current().is_ok() {
            let _ = self.stream.synchronize();
        }
    }

    /// An allocation of `bytes` bytes; the caller initialises it before handing it out.
    pub(crate) fn alloc(&self, bytes: usize) -> Result<DeviceBuffer<u8>> {
        self.make_current()?;
        // SAFETY: the contents are overwritten (upload or fill) before the tensor is visible.
        unsafe { DeviceBuffer::uninitialized(bytes) }.map_err(cust_err(format!(
            "allocating {bytes} bytes on GPU {}",
            self.ordinal
        )))
    }

    /// Copy `src` to device address `dst` (the caller checked the length), ordered on the stream;
    /// returns when complete.
    pub(crate) fn upload(&self, dst: u64, src: &[u8]) -> Result<()> {
        self.make_current()?;
        let bytes = std::mem::size_of_val(src);
        if bytes > 0 {
            // SAFETY: `dst` is an allocation of at least `src.len()` elements; `src` outlives the
            // copy because the stream is synchronised below before returning.
            check(
                unsafe {
                    cu::cuMemcpyHtoDAsync_v2(
                        dst,
                        src.as_ptr() as *const c_void,
                        bytes,
                        self.stream.as_inner(),
                    )
                },
                || "copying host data to the device".into(),
            )?;
        }
        self.synchronize("copying host data to the device")
    }

    /// Copy from device address `src` into `dst`, after all work issued before it.
    pub(crate) fn download(&self, src: u64, dst: &mut [u8]) -> Result<()> {
        self.make_current()?;
        let bytes = std::mem::size_of_val(dst);
        if bytes > 0 {
            // SAFETY: `src` holds `dst.len()` elements; `dst` outlives the copy (synchronised
            // below).
            check(
                unsafe {
                    cu::cuMemcpyDtoHAsync_v2(
                        dst.as_mut_ptr() as *mut c_void,
                        src,
                        bytes,
                        self.stream.as_inner(),
                    )
                },
                || "copying device data to the host".into(),
            )?;
        }
        self.synchronize("downloading a tensor")
    }

    /// Fill `len` elements of `width` bytes at `dst` with `bits`, on the stream (8-byte
    /// elements through a 2-D 32-bit set of their two halves).
    pub(crate) fn fill(&self, dst: u64, width: usize, bits: u64, len: usize) -> Result<()> {
        self.make_current()?;
        if len == 0 {
            return Ok(());
        }
        let st = self.stream.as_inner();
        // SAFETY: `dst` is an allocation of `len` elements of `width` bytes.
        let r = unsafe {
            match width {
                1 => cu::cuMemsetD8Async(dst, bits as u8, len, st),
                2 => cu::cuMemsetD16Async(dst, bits as u16, len, st),
                4 => cu::cuMemsetD32Async(dst, bits as u32, len, st),
                _ => {
                    // Two columns of 32-bit words, `len` rows of pitch 8.
                    let lo = cu::cuMemsetD2D32Async(dst, 8, bits as u32, 1, len, st);
                    if lo != cu::CUresult::CUDA_SUCCESS {
                        lo
                    } else {
                        cu::cuMemsetD2D32Async(dst + 4, 8, (bits >> 32) as u32, 1, len, st)
                    }
                }
            }
        };
        check(r, || "filling a tensor".into())
    }

    /// Device-to-device copy of `bytes` on the stream.
    pub(crate) fn copy_dtod(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.make_current()?;
        if bytes > 0 {
            // SAFETY: both are allocations of `bytes` bytes (checked equal lengths) on this device.
            check(
                unsafe { cu::cuMemcpyDtoDAsync_v2(dst, src, bytes, self.stream.as_inner()) },
                || "copying between tensors (Device::copy)".into(),
            )?;
        }
        Ok(())
    }

    /// Check that device address `ptr` belongs to this device's context.
    pub(crate) fn check_owns(&self, ptr: u64, dev: &str) -> Result<()> {
        self.make_current()?;
        let mut ctx: cu::CUcontext = std::ptr::null_mut();
        // SAFETY: CU_POINTER_ATTRIBUTE_CONTEXT writes one CUcontext.
        check(
            unsafe {
                cu::cuPointerGetAttribute(
                    &mut ctx as *mut cu::CUcontext as *mut c_void,
                    cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                    ptr,
                )
            },
            || "querying the context of a cust buffer (GlobalTensor::from_cust)".into(),
        )?;
        if ctx != self.ctx.as_raw() {
            return Err(Error::DeviceMismatch {
                op: "GlobalTensor::from_cust",
                a: "the cust buffer's context".into(),
                b: dev.to_string(),
            });
        }
        Ok(())
    }

    pub(crate) fn time_ms(
        &self,
        reps: usize,
        f: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        self.make_current()?;
        let start = Event::new(EventFlags::DEFAULT).map_err(cust_err("creating a timing event"))?;
        let end = Event::new(EventFlags::DEFAULT).map_err(cust_err("creating a timing event"))?;
        let mut out = Vec::with_capacity(reps);
        for _ in 0..reps {
            self.make_current()?;
            start
                .record(&self.stream)
                .map_err(cust_err("recording a timing event"))?;
            f()?;
            self.make_current()?;
            end.record(&self.stream)
                .map_err(cust_err("recording a timing event"))?;
            end.synchronize().map_err(cust_err(
                "waiting for a timing event (the error may come from the timed work)",
            ))?;
            let ms = end
                .elapsed_time_f32(&start)
                .map_err(cust_err("reading a timing event"))?;
            out.push(ms as f64);
        }
        Ok(out)
    }

    /// Load (once) the module of `spec`; returns the function and its thread limit.
    fn function(&self, spec: &'static KernelSpec) -> Result<(cu::CUfunction, u32)> {
        let key = spec as *const KernelSpec as usize;
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = modules.get(&key) {
            return Ok((l.func, l.max_threads));
        }
        let kernel = spec.name();
        let ptx = CString::new(spec.ptx()).map_err(|_| Error::InvalidSpec {
            kernel: kernel.into(),
            message: "the PTX text contains a NUL byte".into(),
        })?;
        let fname =
            CString::new(tilus_core::ptx::entry_name(kernel)).map_err(|_| Error::InvalidSpec {
                kernel: kernel.into(),
                message: "the name contains a NUL byte".into(),
            })?;

        // Load with an error log buffer so that PTX errors come with the JIT's explanation.
        let mut log = vec![0u8; 16 * 1024];
        let mut opts = [
            cu::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            cu::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // cuModuleLoadDataEx takes option values that fit in a pointer by value.
        let mut vals = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        let mut module: cu::CUmodule = std::ptr::null_mut();
        // SAFETY: `ptx` is NUL-terminated; `opts`/`vals` have 2 entries; the log buffer outlives the
        // call and its size is passed.
        let r = unsafe {
            cu::cuModuleLoadDataEx(
                &mut module,
                ptx.as_ptr() as *const c_void,
                2,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        if r != cu::CUresult::CUDA_SUCCESS {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let jit = String::from_utf8_lossy(&log[..end]).trim().to_string();
            let mut message = describe_result(r);
            if !jit.is_empty() {
                message = format!("{message}\nPTX JIT log:\n{jit}");
            }
            return Err(Error::Cuda {
                context: format!(
                    "loading the PTX of kernel `{kernel}` on {}",
                    self.describe()
                ),
                message,
            });
        }
        let unload = |module| {
            // SAFETY: unloading the module we just loaded and will not use again.
            unsafe { cu::cuModuleUnload(module) };
        };
        let mut func: cu::CUfunction = std::ptr::null_mut();
        // SAFETY: `module` is loaded, `fname` NUL-terminated.
        let r = unsafe { cu::cuModuleGetFunction(&mut func, module, fname.as_ptr()) };
        if let Err(e) = check(r, || {
            format!("looking up kernel `{kernel}` in its PTX module")
        }) {
            unload(module);
            return Err(e);
        }
        let shared = spec.shared_bytes();
        if shared > DEFAULT_SHARED_LIMIT {
            // SAFETY: valid function handle; the value was checked against the opt-in limit.
            let r = unsafe {
                cu::cuFuncSetAttribute(
                    func,
                    cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared as i32,
                )
            };
            if let Err(e) = check(r, || {
                format!("allowing kernel `{kernel}` {shared} bytes of dynamic shared memory")
            }) {
                unload(module);
                return Err(e);
            }
        }
        let mut max_threads = 0i32;
        // SAFETY: valid function handle; writes one int.
        let r = unsafe {
            cu::cuFuncGetAttribute(
                &mut max_threads,
                cu::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                func,
            )
        };
        if let Err(e) = check(r, || {
            format!("querying the thread limit of kernel `{kernel}`")
        }) {
            unload(module);
            return Err(e);
        }
        let max_threads = max_threads.max(0) as u32;
        modules.insert(
            key,
            Loaded {
                module,
                func,
                max_threads,
            },
        );
        Ok((func, max_threads))
    }

    /// Launch (validated by the caller) on the stream.
    pub(crate) fn launch(
        &self,
        spec: &'static KernelSpec,
        grid: u32,
        args: &[KernelArg<'_>],
    ) -> Result<()> {
        self.make_current()?;
        let (func, fn_max_threads) = self.function(spec)?;
        if spec.threads() > fn_max_threads {
            return Err(Error::Threads {
                kernel: spec.name().into(),
                threads: spec.threads(),
                limit: fn_max_threads,
                device: self.describe(),
                detail: "; the compiled kernel's register use limits its block size".into(),
            });
        }
        // The parameter ABI (tilus_core::ptx): a tensor is (u64 device pointer, u64 element
        // count); a scalar is its value in `param_type`'s width (narrow integers and bools
        // widened to 32 bits). The slots are complete before pointers to them are taken.
        enum Slot {
            U64(u64),
            U32(u32),
            U16(u16),
        }
        let mut slots = Vec::with_capacity(args.len() * 2);
        for a in args {
            match a.repr {
                ArgRepr::Tensor(t) => {
                    let MemRef::Cuda(ptr) = t.mem else {
                        unreachable!("validated: tensors live on this device")
                    };
                    slots.push(Slot::U64(ptr));
                    slots.push(Slot::U64(t.len as u64));
                }
                ArgRepr::Scalar(d, bits) => {
                    let wide = tilus_core::elem::as_i128(d, bits);
                    slots.push(match tilus_core::ptx::param_type(d).1 {
                        2 => Slot::U16(bits as u16),
                        4 if d.is_int() || d == DType::Bool => Slot::U32(wide as u32),
                        4 => Slot::U32(bits as u32),
                        _ => Slot::U64(bits),
                    });
                }
            }
        }
        let mut params: Vec<*mut c_void> = slots
            .iter()
            .map(|s| match s {
                Slot::U64(v) => v as *const u64 as *mut c_void,
                Slot::U32(v) => v as *const u32 as *mut c_void,
                Slot::U16(v) => v as *const u16 as *mut c_void,
            })
            .collect();
        // SAFETY: `func` is a loaded kernel whose parameters are the slots' types in order
        // (the macro generates the PTX entry with this ABI); `params` points into `slots`,
        // alive for the call (the driver copies parameter values at launch); the tensors behind
        // the pointers outlive the launch's use of them (a tensor's drop drains the stream).
        let r = unsafe {
            cu::cuLaunchKernel(
                func,
                grid,
                1,
                1,
                spec.threads(),
                1,
                1,
                spec.shared_bytes() as u32, // validated: <= the opt-in limit
                self.stream.as_inner(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(r, || {
            format!(
                "launching kernel `{}` ({grid} blocks of {} threads) on {}",
                spec.name(),
                spec.threads(),
                self.describe()
            )
        })
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // Unloading modules and destroying the stream need the context current on this thread.
        if self.make_current().is_ok() {
            let _ = self.stream.synchronize();
            let modules = self.modules.get_mut().unwrap_or_else(|p| p.into_inner());
            for (_, l) in modules.drain() {
                // SAFETY: the module is not used after this.
                unsafe { cu::cuModuleUnload(l.module) };
            }
        }
    }
}
