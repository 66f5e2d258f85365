//! Kernel launches: the parameter buffer, `cuLaunchKernel` for ordinary grids and
//! `cuLaunchKernelEx` with a cluster-dimension attribute for cluster kernels.

use super::{check, driver_error, ffi, CudaDevice};
use crate::error::{Error, Result};
use crate::grid::{check_cluster_size, cluster_blocks, fmt_dims, PORTABLE_CLUSTER_BLOCKS};
use crate::spec::{ArgRepr, KernelArg, KernelSpec};
use crate::tensor::MemRef;
use std::ffi::c_void;
use tilus_core::ir::{DType, Grid};

/// One kernel parameter's value, in its PTX width.
enum Slot {
    U64(u64),
    U32(u32),
    U16(u16),
}

/// The parameter ABI (tilus_core::ptx): a tensor is (u64 device pointer, u64 element count); a
/// scalar is its value in `param_type`'s width (narrow integers and bools widened to 32 bits).
fn slots(args: &[KernelArg<'_>]) -> Vec<Slot> {
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
                slots.push(match tilus_core::target::param_type(d).1 {
                    2 => Slot::U16(bits as u16),
                    4 if d.is_int() || d == DType::Bool => Slot::U32(wide as u32),
                    4 => Slot::U32(bits as u32),
                    _ => Slot::U64(bits),
                });
            }
        }
    }
    slots
}

impl CudaDevice {
    /// Launch (validated by the caller) on stream `s`.
    pub(crate) fn launch(
        &self,
        spec: &'static KernelSpec,
        grid: Grid,
        args: &[KernelArg<'_>],
        s: ffi::CUstream,
    ) -> Result<()> {
        self.make_current()?;
        let kernel = spec.name();
        let func = self.launchable(spec)?;
        let cluster = spec.cluster();
        let blocks = cluster_blocks(cluster);
        // The slots are complete before pointers to them are taken.
        let slots = slots(args);
        let mut params: Vec<*mut c_void> = slots
            .iter()
            .map(|s| match s {
                Slot::U64(v) => v as *const u64 as *mut c_void,
                Slot::U32(v) => v as *const u32 as *mut c_void,
                Slot::U16(v) => v as *const u16 as *mut c_void,
            })
            .collect();
        let what = || {
            format!(
                "launching kernel `{kernel}` ({} blocks of {} threads{}) on {}",
                fmt_dims(grid.x, grid.y, grid.z),
                spec.threads(),
                if blocks > 1 {
                    format!(
                        ", clusters of {}",
                        fmt_dims(cluster[0], cluster[1], cluster[2])
                    )
                } else {
                    String::new()
                },
                self.describe()
            )
        };
        // Validated: at most the opt-in limit, which fits a u32.
        let shared = spec.shared_bytes() as u32;
        // SAFETY (both launches): `func` is a loaded kernel whose parameters are the slots'
        // types in order (the macro generates the PTX entry with this ABI); `params` points into
        // `slots`, alive for the call (the driver copies parameter values at launch); the
        // tensors behind the pointers outlive the kernel's use of them (freeing device memory
        // waits for the device first); `s` is a live stream of this context.
        let r = if blocks == 1 {
            unsafe {
                ffi::launch_kernel(
                    func,
                    grid.x,
                    grid.y,
                    grid.z,
                    spec.threads(),
                    1,
                    1,
                    shared,
                    s,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
        } else {
            let launch_ex = self.launch_kernel_ex().map_err(|code| {
                driver_error(code, format!("{} (looking up cuLaunchKernelEx)", what()))
            })?;
            let mut attr = cluster_attribute(cluster);
            let config = ffi::LaunchConfig {
                grid_dim_x: grid.x,
                grid_dim_y: grid.y,
                grid_dim_z: grid.z,
                block_dim_x: spec.threads(),
                block_dim_y: 1,
                block_dim_z: 1,
                shared_mem_bytes: shared,
                h_stream: s,
                attrs: &mut attr,
                num_attrs: 1,
            };
            // SAFETY: as above; `config` and the attribute it points to are locals alive for
            // the call, laid out as cuda.h's (asserted in `ffi`).
            unsafe { launch_ex(&config, func, params.as_mut_ptr(), std::ptr::null_mut()) }
        };
        check(r, what)
    }

    /// The loaded function of `spec`, checked against what its compiled form allows: the
    /// block size (its register use) and the cluster size (what the device can co-schedule).
    fn launchable(&self, spec: &'static KernelSpec) -> Result<ffi::CUfunction> {
        let kernel = spec.name();
        let (func, fn_max_threads, max_cluster) = self.function(spec)?;
        if spec.threads() > fn_max_threads {
            return Err(Error::Threads {
                kernel: kernel.into(),
                threads: spec.threads(),
                limit: fn_max_threads,
                device: self.describe(),
                detail: "; the compiled kernel's register use limits its block size".into(),
            });
        }
        let blocks = cluster_blocks(spec.cluster());
        if blocks > 1 {
            let limit = max_cluster.map_err(|reason| Error::ClusterUnsupported {
                kernel: kernel.into(),
                device: self.describe(),
                reason,
            })?;
            let detail = if blocks > PORTABLE_CLUSTER_BLOCKS && limit <= PORTABLE_CLUSTER_BLOCKS {
                "; the driver refused the non-portable cluster size opt-in".into()
            } else {
                "; as cuOccupancyMaxPotentialClusterSize reports for its block size and shared memory".into()
            };
            check_cluster_size(kernel, blocks, limit, &self.describe(), detail)?;
        }
        Ok(func)
    }
}

/// The launch attribute giving a cluster's shape.
fn cluster_attribute(cluster: [u32; 3]) -> ffi::LaunchAttribute {
    let mut attr = ffi::LaunchAttribute {
        id: ffi::LAUNCH_ATTR_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: ffi::LaunchAttributeValue { pad: [0; 64] },
    };
    attr.value.cluster_dim = ffi::ClusterDim {
        x: cluster[0],
        y: cluster[1],
        z: cluster[2],
    };
    attr
}
