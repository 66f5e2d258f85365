//! The CUDA backend (feature `cuda`): cust 0.3 opens the driver and the primary context; every
//! other call goes through the `c_int`-typed declarations of [`ffi`].
//!
//! Every entry point makes the device's context current on the calling thread first: CUDA's
//! current context is per thread, and devices are used from many threads.
//!
//! Work issued without a stream goes to the **legacy default stream** (the null `CUstream`):
//! CUDA orders it with every blocking stream of the context (all tilus streams, every cust
//! stream), so default-stream launches, copies and downloads see the results of work issued
//! earlier on those streams, exactly as the single private stream of earlier versions ordered
//! all work.

pub(crate) mod ffi;
mod launch;
mod module;

use crate::error::{DriverError, Error, Result};
use cust::context::{Context, CurrentContext};
use ffi::{CUdeviceptr, CUstream};
use module::Loaded;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;
use tilus_core::ir::Grid;

/// The legacy default stream.
pub(crate) const DEFAULT_STREAM: CUstream = std::ptr::null_mut();

/// `Err` of the driver's `code` unless it is `CUDA_SUCCESS`; the error names what we were doing.
pub(crate) fn check(code: c_int, context: impl FnOnce() -> String) -> Result<()> {
    if code == ffi::SUCCESS {
        Ok(())
    } else {
        Err(driver_error(code, context()))
    }
}

/// The typed error of driver code `code`, named and described by the driver.
pub(crate) fn driver_error(code: c_int, context: String) -> Error {
    let (name, description) = describe_code(code);
    DriverError::new(context, code, name, description).into()
}

/// The driver's name and description of `code` (`CUDA error <code>` when it has none, e.g.
/// with the link stub or for a code newer than the driver).
pub(crate) fn describe_code(code: c_int) -> (String, String) {
    let text = |f: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int| {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the driver writes a pointer to a static NUL-terminated string, or fails.
        let ok = unsafe { f(code, &mut p) } == ffi::SUCCESS && !p.is_null();
        // SAFETY: see above.
        ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    (
        text(ffi::get_error_name).unwrap_or_else(|| format!("CUDA error {code}")),
        text(ffi::get_error_string).unwrap_or_else(|| "no description from the driver".into()),
    )
}

/// A failed cust call as a typed error (cust's `CudaError` discriminant is the driver's code).
fn cust_err(context: impl Into<String>) -> impl FnOnce(cust::error::CudaError) -> Error {
    let context = context.into();
    // Not `e.to_string()`: cust's `Display` fails (and `to_string` panics) when the driver
    // cannot describe the error, e.g. before initialisation or with a stub library.
    move |e| driver_error(e as u32 as c_int, context)
}

/// One GPU: its primary context, device limits and the kernels loaded so far.
pub(crate) struct CudaDevice {
    pub(crate) ordinal: u32,
    pub(crate) name: String,
    pub(crate) cc: (u32, u32),
    pub(crate) max_threads: u32,
    /// The opt-in limit of dynamic shared memory per block.
    pub(crate) max_shared: usize,
    pub(crate) max_grid: Grid,
    /// Streaming multiprocessors.
    pub(crate) multiprocessors: u32,
    /// Whether the device can launch thread-block clusters (attribute 120).
    pub(crate) cluster_launch: bool,
    /// `cuDriverGetVersion`: 1000 × major + 10 × minor.
    pub(crate) driver_version: i32,
    /// Keyed by the address of the (`'static`) `KernelSpec`. Fields drop in declaration order:
    /// modules go before the context.
    modules: Mutex<HashMap<usize, Loaded>>,
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
        // Retains the primary context (shared with any other cust or cudarc user in the
        // process) and makes it current on this thread.
        let ctx = Context::new(dev)
            .map_err(cust_err(format!("creating the context of GPU {ordinal}")))?;
        let name = dev.name().map_err(cust_err("querying the GPU's name"))?;
        let attr = |a: c_int| -> Result<u32> {
            let mut v = 0;
            // SAFETY: plain query into a local.
            check(
                unsafe { ffi::device_get_attribute(&mut v, a, dev.as_raw()) },
                || format!("querying device attribute {a} of GPU {ordinal}"),
            )?;
            Ok(v.max(0) as u32)
        };
        let cc = (attr(ffi::DEV_ATTR_CC_MAJOR)?, attr(ffi::DEV_ATTR_CC_MINOR)?);
        let max_grid = Grid::new(
            attr(ffi::DEV_ATTR_MAX_GRID_DIM_X)?,
            attr(ffi::DEV_ATTR_MAX_GRID_DIM_Y)?,
            attr(ffi::DEV_ATTR_MAX_GRID_DIM_Z)?,
        );
        // Drivers before 11.8 do not know the attribute: no cluster launch there.
        let cluster_launch = attr(ffi::DEV_ATTR_CLUSTER_LAUNCH).is_ok_and(|v| v == 1);
        let mut driver_version = 0;
        // SAFETY: plain query into a local.
        check(
            unsafe { ffi::driver_get_version(&mut driver_version) },
            || "querying the driver version".into(),
        )?;
        Ok(CudaDevice {
            ordinal,
            name,
            cc,
            max_threads: attr(ffi::DEV_ATTR_MAX_THREADS_PER_BLOCK)?,
            max_shared: attr(ffi::DEV_ATTR_MAX_SHARED_PER_BLOCK_OPTIN)? as usize,
            max_grid,
            multiprocessors: attr(ffi::DEV_ATTR_MULTIPROCESSOR_COUNT)?.max(1),
            cluster_launch,
            driver_version,
            modules: Mutex::new(HashMap::new()),
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

    /// Wait for all work of the context, on every stream.
    pub(crate) fn synchronize(&self, what: &str) -> Result<()> {
        self.make_current()?;
        // SAFETY: no arguments; the context is current.
        check(unsafe { ffi::ctx_synchronize() }, || {
            format!("{what} (waiting for the device; the error may come from an earlier kernel)")
        })
    }

    /// Wait for the work issued to stream `s` so far.
    pub(crate) fn stream_synchronize(&self, s: CUstream, what: &str) -> Result<()> {
        self.make_current()?;
        // SAFETY: `s` is a live stream of this context, or the legacy default stream.
        check(unsafe { ffi::stream_synchronize(s) }, || {
            format!("{what} (waiting for a stream; the error may come from an earlier kernel)")
        })
    }

    /// Before freeing memory: make the context current and let every stream drain, ignoring
    /// errors (called from `Drop`). The whole context, not one stream: the memory may be in use
    /// by work on any stream, including a user's non-blocking one.
    pub(crate) fn quiesce_for_free(&self) {
        if self.make_current().is_ok() {
            // SAFETY: no arguments; the context is current.
            unsafe { ffi::ctx_synchronize() };
        }
    }

    /// An uninitialised allocation of `bytes` bytes (`0` for none); the caller initialises it
    /// before handing it out and frees it with [`free`](Self::free).
    pub(crate) fn alloc(&self, bytes: usize) -> Result<CUdeviceptr> {
        self.make_current()?;
        if bytes == 0 {
            return Ok(0);
        }
        let mut ptr = 0;
        // SAFETY: out-pointer to a local.
        check(unsafe { ffi::mem_alloc(&mut ptr, bytes) }, || {
            format!("allocating {bytes} bytes on {}", self.describe())
        })?;
        Ok(ptr)
    }

    /// Let this context's kernels access `peer`'s memory: `Err(None)` where the driver says the
    /// two cannot, `Err(Some(..))` for a failure of the calls.
    pub(crate) fn enable_peer(&self, peer: &CudaDevice) -> std::result::Result<(), Option<Error>> {
        self.make_current().map_err(Some)?;
        let mut can = 0;
        // SAFETY: plain query into a local.
        check(
            unsafe {
                ffi::device_can_access_peer(&mut can, self.ordinal as c_int, peer.ordinal as c_int)
            },
            || {
                format!(
                    "asking whether {} can access {}",
                    self.describe(),
                    peer.describe()
                )
            },
        )
        .map_err(Some)?;
        if can != 1 {
            return Err(None);
        }
        // SAFETY: `peer`'s context is live (it is owned by `peer`); this context is current.
        let r = unsafe { ffi::ctx_enable_peer_access(peer.ctx.as_raw(), 0) };
        if r == ffi::PEER_ACCESS_ALREADY_ENABLED {
            return Ok(());
        }
        check(r, || {
            format!(
                "enabling access of {} to {}",
                self.describe(),
                peer.describe()
            )
        })
        .map_err(Some)
    }

    /// `bytes` of zeroed page-locked host memory mapped into this device's address space: the
    /// host address and the device address. [`Error::MappedMemoryUnsupported`] where the device
    /// cannot map host memory.
    pub(crate) fn map_host(
        &self,
        bytes: usize,
        describe: &str,
    ) -> Result<(*mut std::ffi::c_void, CUdeviceptr)> {
        self.make_current()?;
        let mut can = 0;
        // SAFETY: plain query into a local.
        check(
            unsafe {
                ffi::device_get_attribute(
                    &mut can,
                    ffi::DEV_ATTR_CAN_MAP_HOST_MEMORY,
                    self.ordinal as c_int,
                )
            },
            || format!("querying whether {describe} maps host memory"),
        )?;
        if can != 1 {
            return Err(Error::MappedMemoryUnsupported {
                device: describe.to_string(),
            });
        }
        // One page at least: a zero-length mapping still has a unique address.
        let size = bytes.max(1);
        let mut host = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(
            unsafe {
                ffi::mem_host_alloc(
                    &mut host,
                    size,
                    ffi::MEMHOSTALLOC_PORTABLE | ffi::MEMHOSTALLOC_DEVICEMAP,
                )
            },
            || format!("allocating {bytes} bytes of mapped host memory for {describe}"),
        )?;
        // SAFETY: `host` is a fresh allocation of `size` bytes.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, size) };
        let mut device = 0;
        // SAFETY: out-pointer to a local; `host` is mapped memory of this context.
        let r = unsafe { ffi::mem_host_get_device_pointer(&mut device, host, 0) };
        if let Err(e) = check(r, || format!("mapping host memory into {describe}")) {
            self.unmap_host(host);
            return Err(e);
        }
        Ok((host, device))
    }

    /// Free mapped host memory of [`map_host`](Self::map_host) (after
    /// [`quiesce_for_free`](Self::quiesce_for_free)).
    pub(crate) fn unmap_host(&self, host: *mut std::ffi::c_void) {
        if self.make_current().is_ok() {
            // SAFETY: `host` came from cuMemHostAlloc and is not used again.
            unsafe { ffi::mem_free_host(host) };
        }
    }

    /// Free an allocation of [`alloc`](Self::alloc) (after [`quiesce_for_free`](Self::quiesce_for_free)).
    pub(crate) fn free(&self, ptr: CUdeviceptr) {
        if ptr != 0 && self.make_current().is_ok() {
            // SAFETY: `ptr` came from cuMemAlloc in this context and is not used again.
            unsafe { ffi::mem_free(ptr) };
        }
    }

    /// Copy `bytes` bytes from host address `src` to device address `dst` on stream `s`.
    ///
    /// # Safety
    ///
    /// `src` must stay valid (and unmodified) until the copy completes, and `dst` must be an
    /// allocation of at least `bytes` bytes.
    pub(crate) unsafe fn upload_async(
        &self,
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        s: CUstream,
    ) -> Result<()> {
        self.make_current()?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        check(
            unsafe { ffi::memcpy_htod_async(dst, src, bytes, s) },
            || format!("copying {bytes} bytes from the host to {}", self.describe()),
        )
    }

    /// Copy `bytes` bytes from device address `src` to host address `dst` on stream `s`.
    ///
    /// # Safety
    ///
    /// `dst` must stay valid, and neither read nor written by the host, until the copy
    /// completes; every bit pattern must be a valid value of the host memory's type. `src`
    /// must be an allocation of at least `bytes` bytes.
    pub(crate) unsafe fn download_async(
        &self,
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        s: CUstream,
    ) -> Result<()> {
        self.make_current()?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        check(
            unsafe { ffi::memcpy_dtoh_async(dst, src, bytes, s) },
            || format!("copying {bytes} bytes from {} to the host", self.describe()),
        )
    }

    /// Copy `src` to device address `dst` (the caller checked the length) on the default
    /// stream; returns when complete.
    pub(crate) fn upload(&self, dst: CUdeviceptr, src: &[u8]) -> Result<()> {
        // SAFETY: `dst` holds `src.len()` bytes; `src` outlives the copy, which is waited for
        // below before returning.
        unsafe { self.upload_async(dst, src.as_ptr().cast(), src.len(), DEFAULT_STREAM)? };
        self.stream_synchronize(DEFAULT_STREAM, "copying host data to the device")
    }

    /// Copy from device address `src` into `dst` on the default stream, after the work issued
    /// before it there and on blocking streams; returns when complete.
    pub(crate) fn download(&self, src: CUdeviceptr, dst: &mut [u8]) -> Result<()> {
        // SAFETY: `src` holds `dst.len()` bytes; `dst` is bytes (any value valid) and outlives
        // the copy, which is waited for below.
        unsafe { self.download_async(dst.as_mut_ptr().cast(), src, dst.len(), DEFAULT_STREAM)? };
        self.stream_synchronize(DEFAULT_STREAM, "downloading a tensor")
    }

    /// Fill `len` elements of `width` bytes at `dst` with `bits`, on stream `s` (8-byte
    /// elements through a 2-D 32-bit set of their two halves).
    pub(crate) fn fill(
        &self,
        dst: CUdeviceptr,
        width: usize,
        bits: u64,
        len: usize,
        s: CUstream,
    ) -> Result<()> {
        self.make_current()?;
        if len == 0 {
            return Ok(());
        }
        // SAFETY: `dst` is an allocation of `len` elements of `width` bytes.
        let r = unsafe {
            match width {
                1 => ffi::memset_d8_async(dst, bits as u8, len, s),
                2 => ffi::memset_d16_async(dst, bits as u16, len, s),
                4 => ffi::memset_d32_async(dst, bits as u32, len, s),
                _ => {
                    // Two columns of 32-bit words, `len` rows of pitch 8.
                    match ffi::memset_d2d32_async(dst, 8, bits as u32, 1, len, s) {
                        ffi::SUCCESS => {
                            ffi::memset_d2d32_async(dst + 4, 8, (bits >> 32) as u32, 1, len, s)
                        }
                        e => e,
                    }
                }
            }
        };
        check(r, || "filling a tensor".into())
    }

    /// Device-to-device copy of `bytes` on stream `s`.
    pub(crate) fn copy_dtod(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        s: CUstream,
    ) -> Result<()> {
        self.make_current()?;
        if bytes > 0 {
            // SAFETY: both hold `bytes` bytes (the caller checked equal lengths) on this device.
            check(
                unsafe { ffi::memcpy_dtod_async(dst, src, bytes, s) },
                || "copying between tensors".into(),
            )?;
        }
        Ok(())
    }

    /// Check that device address `ptr` belongs to this device's context (`op` names the
    /// operation in the error).
    pub(crate) fn check_owns(&self, ptr: CUdeviceptr, op: &'static str) -> Result<()> {
        // SAFETY: CU_POINTER_ATTRIBUTE_CONTEXT writes one CUcontext.
        let ctx = unsafe {
            self.pointer_attribute(ptr, ffi::POINTER_ATTR_CONTEXT, std::ptr::null_mut(), || {
                format!("{op}: querying the context of device address {ptr:#x}")
            })?
        };
        if ctx != self.ctx.as_raw() {
            return Err(Error::DeviceMismatch {
                op,
                a: format!("the memory at {ptr:#x} (another CUDA context)"),
                b: self.describe(),
            });
        }
        Ok(())
    }

    /// Check that device address `ptr` is memory of this GPU (by device ordinal, which also
    /// holds for stream-ordered pool allocations, whose context attribute is not the primary
    /// context's).
    pub(crate) fn check_device_memory(&self, ptr: CUdeviceptr, op: &'static str) -> Result<()> {
        // SAFETY: CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL writes one int.
        let ordinal: c_int = unsafe {
            self.pointer_attribute(ptr, ffi::POINTER_ATTR_DEVICE_ORDINAL, -1, || {
                format!("{op}: {ptr:#x} is not device memory the driver knows")
            })?
        };
        if ordinal != self.ordinal as c_int {
            return Err(Error::DeviceMismatch {
                op,
                a: format!("the memory at {ptr:#x} (GPU {ordinal})"),
                b: self.describe(),
            });
        }
        Ok(())
    }

    /// One attribute of device address `ptr` (`cuPointerGetAttribute`), starting from `init`.
    ///
    /// # Safety
    ///
    /// `attr` must be an attribute the driver writes as one `T`.
    unsafe fn pointer_attribute<T>(
        &self,
        ptr: CUdeviceptr,
        attr: c_int,
        init: T,
        what: impl FnOnce() -> String,
    ) -> Result<T> {
        self.make_current()?;
        let mut value = init;
        // SAFETY: the caller's promise: the driver writes one `T` to `value`.
        check(
            unsafe { ffi::pointer_get_attribute((&mut value as *mut T).cast(), attr, ptr) },
            what,
        )?;
        Ok(value)
    }

    /// Check that raw stream `s` belongs to this device's context.
    pub(crate) fn check_stream(&self, s: CUstream, op: &'static str) -> Result<()> {
        self.make_current()?;
        let mut ctx: ffi::CUcontext = std::ptr::null_mut();
        // SAFETY: `s` is a stream handle the caller vouches for; writes one CUcontext.
        check(unsafe { ffi::stream_get_ctx(s, &mut ctx) }, || {
            format!("{op}: querying the context of a stream")
        })?;
        if ctx != self.ctx.as_raw() {
            return Err(Error::DeviceMismatch {
                op,
                a: "the stream's CUDA context".into(),
                b: self.describe(),
            });
        }
        Ok(())
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // Unloading modules needs the context current on this thread.
        if self.make_current().is_ok() {
            // SAFETY: no arguments; the context is current.
            unsafe { ffi::ctx_synchronize() };
            let modules = self.modules.get_mut().unwrap_or_else(|p| p.into_inner());
            for (_, l) in modules.drain() {
                l.unload();
            }
        }
    }
}
