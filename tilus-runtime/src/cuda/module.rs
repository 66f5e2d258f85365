//! Loading a kernel's PTX once per device, and the per-function attributes a launch needs:
//! dynamic shared memory opt-in, the register-limited block size, and for cluster kernels the
//! non-portable opt-in and the largest cluster the driver co-schedules.

use super::{check, describe_code, driver_error, ffi, CudaDevice};
use crate::error::{DriverError, Error, Result};
use crate::grid::{cluster_blocks, PORTABLE_CLUSTER_BLOCKS};
use crate::spec::KernelSpec;
use std::ffi::{c_int, c_void, CString};

/// Dynamic shared memory a function may use without opting in.
const DEFAULT_SHARED_LIMIT: usize = 48 * 1024;

/// A loaded kernel: the raw module and function handles and what was learnt about it.
pub(crate) struct Loaded {
    module: ffi::CUmodule,
    pub(crate) func: ffi::CUfunction,
    /// The most threads per block the compiled function can be launched with (limited by its
    /// register use).
    pub(crate) max_threads: u32,
    /// For a cluster kernel, the most blocks per cluster the driver co-schedules for it
    /// (`cuOccupancyMaxPotentialClusterSize`, after the non-portable opt-in when the kernel's
    /// cluster is larger than the portable 8), or why it cannot launch clusters at all.
    pub(crate) max_cluster: std::result::Result<u32, String>,
}

// SAFETY: `CUmodule` and `CUfunction` are opaque driver handles, not thread-bound: the driver API
// is thread-safe and a handle may be used from any thread on which its context is current
// (every use makes it current first). The module is unloaded only when the owning
// `CudaDevice` is dropped. cust declares its own `Module` and `Function` Send + Sync on the same
// grounds.
unsafe impl Send for Loaded {}
// SAFETY: as above; `Loaded` has no interior mutability.
unsafe impl Sync for Loaded {}

impl Loaded {
    pub(crate) fn unload(self) {
        // SAFETY: the module is not used after this.
        unsafe { ffi::module_unload(self.module) };
    }
}

impl CudaDevice {
    /// Load (once) the module of `spec` and return what a launch needs of it.
    pub(crate) fn function(
        &self,
        spec: &'static KernelSpec,
    ) -> Result<(ffi::CUfunction, u32, std::result::Result<u32, String>)> {
        let key = spec as *const KernelSpec as usize;
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = modules.get(&key) {
            return Ok((l.func, l.max_threads, l.max_cluster.clone()));
        }
        let module = self.load_module(spec)?;
        let loaded = match self.inspect(spec, module) {
            Ok(l) => l,
            Err(e) => {
                // SAFETY: unloading the module we just loaded and will not use again.
                unsafe { ffi::module_unload(module) };
                return Err(e);
            }
        };
        let out = (loaded.func, loaded.max_threads, loaded.max_cluster.clone());
        modules.insert(key, loaded);
        Ok(out)
    }

    /// `cuModuleLoadDataEx` with an error log buffer, so that PTX errors come with the JIT's
    /// explanation.
    fn load_module(&self, spec: &KernelSpec) -> Result<ffi::CUmodule> {
        let kernel = spec.name();
        let (major, minor) = self.cc;
        let ptx =
            CString::new(spec.ptx_for(major * 10 + minor)).map_err(|_| Error::InvalidSpec {
                kernel: kernel.into(),
                message: "the PTX text contains a NUL byte".into(),
            })?;
        let mut log = vec![0u8; 16 * 1024];
        let mut opts = [
            ffi::JIT_ERROR_LOG_BUFFER,
            ffi::JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // cuModuleLoadDataEx takes option values that fit in a pointer by value.
        let mut vals = [log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        let mut module: ffi::CUmodule = std::ptr::null_mut();
        // SAFETY: `ptx` is NUL-terminated; `opts`/`vals` have 2 entries; the log buffer outlives
        // the call and its size is passed.
        let r = unsafe {
            ffi::module_load_data_ex(
                &mut module,
                ptx.as_ptr() as *const c_void,
                2,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        if r != ffi::SUCCESS {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let jit = String::from_utf8_lossy(&log[..end]).trim().to_string();
            let (name, mut description) = describe_code(r);
            if !jit.is_empty() {
                description = format!("{description}\nPTX JIT log:\n{jit}");
            }
            let context = format!(
                "loading the PTX of kernel `{kernel}` on {}",
                self.describe()
            );
            return Err(DriverError::new(context, r, name, description).into());
        }
        Ok(module)
    }

    /// Look up the entry and set and query its attributes.
    fn inspect(&self, spec: &KernelSpec, module: ffi::CUmodule) -> Result<Loaded> {
        let kernel = spec.name();
        let cname = |n: String| {
            CString::new(n).map_err(|_| Error::InvalidSpec {
                kernel: kernel.into(),
                message: "the name contains a NUL byte".into(),
            })
        };
        // The entry `#[tile_kernel]` generates (`tk_<name>`); a hand-written spec's PTX may name
        // its entry after the kernel itself.
        let generated = cname(tilus_core::ptx::entry_name(kernel))?;
        let plain = cname(kernel.to_string())?;
        let mut func: ffi::CUfunction = std::ptr::null_mut();
        // SAFETY: `module` is loaded, the names NUL-terminated.
        let mut r = unsafe { ffi::module_get_function(&mut func, module, generated.as_ptr()) };
        if r != ffi::SUCCESS {
            r = unsafe { ffi::module_get_function(&mut func, module, plain.as_ptr()) };
        }
        check(r, || {
            format!("looking up kernel `{kernel}` in its PTX module")
        })?;
        let shared = spec.shared_bytes();
        if shared > DEFAULT_SHARED_LIMIT {
            // SAFETY: valid function handle; the value was checked against the opt-in limit.
            check(
                unsafe {
                    ffi::func_set_attribute(
                        func,
                        ffi::FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared as c_int,
                    )
                },
                || format!("allowing kernel `{kernel}` {shared} bytes of dynamic shared memory"),
            )?;
        }
        let mut max_threads: c_int = 0;
        // SAFETY: valid function handle; writes one int.
        check(
            unsafe {
                ffi::func_get_attribute(
                    &mut max_threads,
                    ffi::FUNC_ATTR_MAX_THREADS_PER_BLOCK,
                    func,
                )
            },
            || format!("querying the thread limit of kernel `{kernel}`"),
        )?;
        let max_cluster = if spec.cluster() == [1, 1, 1] {
            Ok(1)
        } else {
            self.cluster_limit(spec, func)?
        };
        Ok(Loaded {
            module,
            func,
            max_threads: max_threads.max(0) as u32,
            max_cluster,
        })
    }

    /// For a cluster kernel: opt in to non-portable sizes when its cluster is larger than 8,
    /// then ask the driver for the largest cluster it co-schedules for the function. `Ok(Err)`
    /// when the device or driver cannot launch clusters (an error of the launch, not of loading).
    fn cluster_limit(
        &self,
        spec: &KernelSpec,
        func: ffi::CUfunction,
    ) -> Result<std::result::Result<u32, String>> {
        if let Err(why) = self.cluster_support() {
            return Ok(Err(why));
        }
        let kernel = spec.name();
        let blocks = cluster_blocks(spec.cluster());
        if blocks > PORTABLE_CLUSTER_BLOCKS {
            // SAFETY: valid function handle; attribute 14 takes 0 or 1.
            let r = unsafe {
                ffi::func_set_attribute(func, ffi::FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
            };
            if r != ffi::SUCCESS {
                // The driver refuses the opt-in: only portable clusters (reported at launch).
                return Ok(Ok(PORTABLE_CLUSTER_BLOCKS));
            }
        }
        let query = match self.occupancy_max_cluster_size() {
            Ok(f) => f,
            Err(code) => {
                return Err(driver_error(
                    code,
                    "looking up cuOccupancyMaxPotentialClusterSize (cuGetProcAddress)".into(),
                ))
            }
        };
        // The query ignores the configuration's cluster dimensions; the grid is any valid one.
        let config = ffi::LaunchConfig {
            grid_dim_x: blocks,
            grid_dim_y: 1,
            grid_dim_z: 1,
            block_dim_x: spec.threads(),
            block_dim_y: 1,
            block_dim_z: 1,
            shared_mem_bytes: spec.shared_bytes() as u32,
            h_stream: super::DEFAULT_STREAM,
            attrs: std::ptr::null_mut(),
            num_attrs: 0,
        };
        let mut size: c_int = 0;
        // SAFETY: `query` is the driver's cuOccupancyMaxPotentialClusterSize (ABI of CUDA 11.7+
        // as declared); `config` and `size` are locals valid for the call.
        check(unsafe { query(&mut size, func, &config) }, || {
            format!("querying the largest cluster of kernel `{kernel}`")
        })?;
        Ok(Ok(size.max(0) as u32))
    }

    /// `Ok` if this device and driver can launch clusters, else why not.
    pub(crate) fn cluster_support(&self) -> std::result::Result<(), String> {
        if self.cc.0 < 9 {
            return Err(format!(
                "clusters need compute capability 9.0 or later, this GPU has {}.{}",
                self.cc.0, self.cc.1
            ));
        }
        if self.driver_version < 11080 {
            return Err(format!(
                "cluster launch needs CUDA driver 11.8 or later, this one is {}.{}",
                self.driver_version / 1000,
                self.driver_version % 1000 / 10
            ));
        }
        if !self.cluster_launch {
            return Err(
                "the device reports no cluster launch support (attribute CLUSTER_LAUNCH = 0)"
                    .into(),
            );
        }
        Ok(())
    }

    /// The ABI version to ask `cuGetProcAddress` for: the driver's own, at most 12.0 (the ABI
    /// the declarations in `ffi` follow; both entry points have had one ABI since 11.7/11.8).
    fn proc_version(&self) -> c_int {
        self.driver_version.min(12000)
    }

    pub(crate) fn launch_kernel_ex(&self) -> std::result::Result<ffi::LaunchKernelEx, c_int> {
        let p = ffi::proc_address("cuLaunchKernelEx", self.proc_version())?;
        // SAFETY: the driver's cuLaunchKernelEx, whose only ABI (`PFN_cuLaunchKernelEx_v11060`)
        // is the declared function type.
        Ok(unsafe { std::mem::transmute::<*mut c_void, ffi::LaunchKernelEx>(p) })
    }

    fn occupancy_max_cluster_size(
        &self,
    ) -> std::result::Result<ffi::OccupancyMaxPotentialClusterSize, c_int> {
        let p = ffi::proc_address("cuOccupancyMaxPotentialClusterSize", self.proc_version())?;
        // SAFETY: the driver's cuOccupancyMaxPotentialClusterSize, of the declared type.
        Ok(unsafe { std::mem::transmute::<*mut c_void, ffi::OccupancyMaxPotentialClusterSize>(p) })
    }
}
