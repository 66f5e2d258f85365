//! The driver entry points the backend calls, declared with plain `c_int` results and
//! arguments, and the launch-configuration types `cuLaunchKernelEx` takes.
//!
//! Why not `cust::sys` (cust_raw 0.11.3): its bindings come from CUDA 11.4's `cuda.h` and
//! declare `CUresult` and the attribute enums as Rust enums. A newer driver returns codes that
//! enum lacks (`CUDA_ERROR_INVALID_CLUSTER_SIZE` = 912, measured from `cuLaunchKernelEx` on an
//! H100 with driver 13.0), and the cluster attributes (function attribute 14, device attribute
//! 120) are not variants of it; receiving or passing such values through those declarations
//! would be undefined behaviour. Every symbol below is exported by `libcuda.so` under exactly
//! this name (cust_raw declares all of them too, so the CI link stub exports them), and the
//! library is linked by cust_raw's build script.
//!
//! `cuLaunchKernelEx`, `cuOccupancyMaxPotentialClusterSize` (CUDA 11.8 and 11.7) are not in
//! cust_raw and not in the stub: they are looked up at run time with `cuGetProcAddress`
//! ([`proc_address`]), NVIDIA's mechanism for newer entry points than the headers one built
//! against.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};

pub(crate) type CUstream = cust::sys::CUstream;
pub(crate) type CUevent = cust::sys::CUevent;
pub(crate) type CUcontext = cust::sys::CUcontext;
pub(crate) type CUfunction = cust::sys::CUfunction;
pub(crate) type CUmodule = cust::sys::CUmodule;
pub(crate) type CUdeviceptr = u64;

/// `CUDA_SUCCESS`.
pub(crate) const SUCCESS: c_int = 0;
/// `CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`.
pub(crate) const PEER_ACCESS_ALREADY_ENABLED: c_int = 704;
/// `CUDA_ERROR_NOT_READY` (an event or stream with work pending).
pub(crate) const NOT_READY: c_int = 600;

// Attribute and option values from cuda.h (identical in CUDA 11.8 through 13.x).
pub(crate) const DEV_ATTR_MAX_THREADS_PER_BLOCK: c_int = 1;
pub(crate) const DEV_ATTR_MAX_GRID_DIM_X: c_int = 5;
pub(crate) const DEV_ATTR_MULTIPROCESSOR_COUNT: c_int = 16;
pub(crate) const DEV_ATTR_MAX_GRID_DIM_Y: c_int = 6;
pub(crate) const DEV_ATTR_MAX_GRID_DIM_Z: c_int = 7;
pub(crate) const DEV_ATTR_CC_MAJOR: c_int = 75;
pub(crate) const DEV_ATTR_CC_MINOR: c_int = 76;
pub(crate) const DEV_ATTR_MAX_SHARED_PER_BLOCK_OPTIN: c_int = 97;
/// `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH` (CUDA 11.8+; older drivers answer `INVALID_VALUE`).
pub(crate) const DEV_ATTR_CLUSTER_LAUNCH: c_int = 120;
pub(crate) const DEV_ATTR_CAN_MAP_HOST_MEMORY: c_int = 19;
/// `cuMemHostAlloc` flags: usable from every context, mapped into the device's address space.
pub(crate) const MEMHOSTALLOC_PORTABLE: c_uint = 1;
pub(crate) const MEMHOSTALLOC_DEVICEMAP: c_uint = 2;
pub(crate) const FUNC_ATTR_MAX_THREADS_PER_BLOCK: c_int = 0;
pub(crate) const FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
pub(crate) const FUNC_ATTR_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: c_int = 14;
pub(crate) const POINTER_ATTR_CONTEXT: c_int = 1;
pub(crate) const POINTER_ATTR_DEVICE_ORDINAL: c_int = 9;
pub(crate) const JIT_ERROR_LOG_BUFFER: c_int = 5;
pub(crate) const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
pub(crate) const EVENT_DEFAULT: c_uint = 0;
pub(crate) const EVENT_DISABLE_TIMING: c_uint = 2;
/// `CU_STREAM_DEFAULT`: a blocking stream, ordered with the legacy default stream.
pub(crate) const STREAM_DEFAULT: c_uint = 0;
/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`.
pub(crate) const LAUNCH_ATTR_CLUSTER_DIMENSION: u32 = 4;
/// `CU_GET_PROC_ADDRESS_LEGACY_STREAM`: a null stream means the legacy default stream, as for
/// the non-`_ptsz` symbols cust_raw links.
const PROC_ADDRESS_LEGACY_STREAM: u64 = 1;

extern "C" {
    #[link_name = "cuGetErrorName"]
    pub(crate) fn get_error_name(code: c_int, s: *mut *const c_char) -> c_int;
    #[link_name = "cuGetErrorString"]
    pub(crate) fn get_error_string(code: c_int, s: *mut *const c_char) -> c_int;
    #[link_name = "cuDriverGetVersion"]
    pub(crate) fn driver_get_version(v: *mut c_int) -> c_int;
    #[link_name = "cuGetProcAddress"]
    fn get_proc_address(sym: *const c_char, pfn: *mut *mut c_void, ver: c_int, flags: u64)
        -> c_int;
    #[link_name = "cuDeviceGetAttribute"]
    pub(crate) fn device_get_attribute(v: *mut c_int, attr: c_int, dev: c_int) -> c_int;
    #[link_name = "cuCtxSynchronize"]
    pub(crate) fn ctx_synchronize() -> c_int;

    #[link_name = "cuMemAlloc_v2"]
    pub(crate) fn mem_alloc(ptr: *mut CUdeviceptr, bytes: usize) -> c_int;
    #[link_name = "cuMemFree_v2"]
    pub(crate) fn mem_free(ptr: CUdeviceptr) -> c_int;
    #[link_name = "cuMemAllocHost_v2"]
    pub(crate) fn mem_alloc_host(ptr: *mut *mut c_void, bytes: usize) -> c_int;
    #[link_name = "cuMemFreeHost"]
    pub(crate) fn mem_free_host(ptr: *mut c_void) -> c_int;
    #[link_name = "cuDeviceCanAccessPeer"]
    pub(crate) fn device_can_access_peer(can: *mut c_int, dev: c_int, peer: c_int) -> c_int;
    #[link_name = "cuCtxEnablePeerAccess"]
    pub(crate) fn ctx_enable_peer_access(peer: CUcontext, flags: c_uint) -> c_int;
    #[link_name = "cuMemHostAlloc"]
    pub(crate) fn mem_host_alloc(ptr: *mut *mut c_void, bytes: usize, flags: c_uint) -> c_int;
    #[link_name = "cuMemHostGetDevicePointer_v2"]
    pub(crate) fn mem_host_get_device_pointer(
        dptr: *mut CUdeviceptr,
        host: *mut c_void,
        flags: c_uint,
    ) -> c_int;
    #[link_name = "cuPointerGetAttribute"]
    pub(crate) fn pointer_get_attribute(data: *mut c_void, attr: c_int, ptr: CUdeviceptr) -> c_int;
    #[link_name = "cuMemcpyHtoDAsync_v2"]
    pub(crate) fn memcpy_htod_async(
        dst: CUdeviceptr,
        src: *const c_void,
        bytes: usize,
        s: CUstream,
    ) -> c_int;
    #[link_name = "cuMemcpyDtoHAsync_v2"]
    pub(crate) fn memcpy_dtoh_async(
        dst: *mut c_void,
        src: CUdeviceptr,
        bytes: usize,
        s: CUstream,
    ) -> c_int;
    #[link_name = "cuMemcpyDtoDAsync_v2"]
    pub(crate) fn memcpy_dtod_async(
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
        s: CUstream,
    ) -> c_int;
    #[link_name = "cuMemsetD8Async"]
    pub(crate) fn memset_d8_async(dst: CUdeviceptr, v: u8, n: usize, s: CUstream) -> c_int;
    #[link_name = "cuMemsetD16Async"]
    pub(crate) fn memset_d16_async(dst: CUdeviceptr, v: u16, n: usize, s: CUstream) -> c_int;
    #[link_name = "cuMemsetD32Async"]
    pub(crate) fn memset_d32_async(dst: CUdeviceptr, v: u32, n: usize, s: CUstream) -> c_int;
    #[link_name = "cuMemsetD2D32Async"]
    pub(crate) fn memset_d2d32_async(
        dst: CUdeviceptr,
        pitch: usize,
        v: u32,
        width: usize,
        height: usize,
        s: CUstream,
    ) -> c_int;

    #[link_name = "cuStreamCreate"]
    pub(crate) fn stream_create(s: *mut CUstream, flags: c_uint) -> c_int;
    #[link_name = "cuStreamDestroy_v2"]
    pub(crate) fn stream_destroy(s: CUstream) -> c_int;
    #[link_name = "cuStreamSynchronize"]
    pub(crate) fn stream_synchronize(s: CUstream) -> c_int;
    #[link_name = "cuStreamGetCtx"]
    pub(crate) fn stream_get_ctx(s: CUstream, ctx: *mut CUcontext) -> c_int;
    #[link_name = "cuStreamWaitEvent"]
    pub(crate) fn stream_wait_event(s: CUstream, e: CUevent, flags: c_uint) -> c_int;
    #[link_name = "cuEventCreate"]
    pub(crate) fn event_create(e: *mut CUevent, flags: c_uint) -> c_int;
    #[link_name = "cuEventDestroy_v2"]
    pub(crate) fn event_destroy(e: CUevent) -> c_int;
    #[link_name = "cuEventRecord"]
    pub(crate) fn event_record(e: CUevent, s: CUstream) -> c_int;
    #[link_name = "cuEventSynchronize"]
    pub(crate) fn event_synchronize(e: CUevent) -> c_int;
    #[link_name = "cuEventQuery"]
    pub(crate) fn event_query(e: CUevent) -> c_int;
    #[link_name = "cuEventElapsedTime"]
    pub(crate) fn event_elapsed_time(ms: *mut f32, start: CUevent, end: CUevent) -> c_int;

    #[link_name = "cuModuleLoadDataEx"]
    pub(crate) fn module_load_data_ex(
        module: *mut CUmodule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut c_int,
        values: *mut *mut c_void,
    ) -> c_int;
    #[link_name = "cuModuleGetFunction"]
    pub(crate) fn module_get_function(
        f: *mut CUfunction,
        module: CUmodule,
        name: *const c_char,
    ) -> c_int;
    #[link_name = "cuModuleUnload"]
    pub(crate) fn module_unload(module: CUmodule) -> c_int;
    #[link_name = "cuFuncSetAttribute"]
    pub(crate) fn func_set_attribute(f: CUfunction, attr: c_int, value: c_int) -> c_int;
    #[link_name = "cuFuncGetAttribute"]
    pub(crate) fn func_get_attribute(v: *mut c_int, attr: c_int, f: CUfunction) -> c_int;
    #[link_name = "cuLaunchKernel"]
    pub(crate) fn launch_kernel(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        s: CUstream,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> c_int;
}

/// `CUlaunchAttributeValue::clusterDim`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClusterDim {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// `CUlaunchAttributeValue`: a 64-byte union (its largest member is `char pad[64]`) aligned to
/// 8 (one member holds a pointer). Only the members tilus uses are declared; `_align` gives
/// the C union's alignment.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union LaunchAttributeValue {
    pub pad: [u8; 64],
    pub cluster_dim: ClusterDim,
    _align: [u64; 8],
}

/// `CUlaunchAttribute`: `{ CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct LaunchAttribute {
    pub id: u32,
    pub pad: [u8; 4],
    pub value: LaunchAttributeValue,
}

/// `CUlaunchConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaunchConfig {
    pub grid_dim_x: c_uint,
    pub grid_dim_y: c_uint,
    pub grid_dim_z: c_uint,
    pub block_dim_x: c_uint,
    pub block_dim_y: c_uint,
    pub block_dim_z: c_uint,
    pub shared_mem_bytes: c_uint,
    pub h_stream: CUstream,
    pub attrs: *mut LaunchAttribute,
    pub num_attrs: c_uint,
}

// The layouts of `CUlaunchConfig`/`CUlaunchAttribute` in cuda.h 12.0, 12.8 and 13.0 (identical
// in all three): sizes and offsets printed from cudarc 0.19's bindgen output of NVIDIA's headers
// (`cudarc/src/driver/sys`), and the same numbers that drove real cluster launches through
// ctypes on an H100 with driver 13.0 when this module was written. The build checks them.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<ClusterDim>() == 12);
    assert!(size_of::<LaunchAttributeValue>() == 64);
    assert!(align_of::<LaunchAttributeValue>() == 8);
    assert!(size_of::<LaunchAttribute>() == 72);
    assert!(offset_of!(LaunchAttribute, value) == 8);
    assert!(size_of::<LaunchConfig>() == 56);
    assert!(offset_of!(LaunchConfig, shared_mem_bytes) == 24);
    assert!(offset_of!(LaunchConfig, h_stream) == 32);
    assert!(offset_of!(LaunchConfig, attrs) == 40);
    assert!(offset_of!(LaunchConfig, num_attrs) == 48);
};

/// `cuLaunchKernelEx` (ABI `PFN_cuLaunchKernelEx_v11060`).
pub(crate) type LaunchKernelEx = unsafe extern "C" fn(
    config: *const LaunchConfig,
    f: CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> c_int;

/// `cuOccupancyMaxPotentialClusterSize` (CUDA 11.7+).
pub(crate) type OccupancyMaxPotentialClusterSize =
    unsafe extern "C" fn(size: *mut c_int, f: CUfunction, config: *const LaunchConfig) -> c_int;

/// The address of driver entry point `symbol` (its base name, no `_v2` suffix) in the ABI of
/// CUDA `version` (1000 × major + 10 × minor), or the driver's error code. The v1
/// `cuGetProcAddress` answers `CUDA_ERROR_NOT_FOUND` (500) with a null pointer for an unknown
/// symbol; both are checked.
pub(crate) fn proc_address(symbol: &str, version: c_int) -> Result<*mut c_void, c_int> {
    let name = CString::new(symbol).map_err(|_| 1)?;
    let mut pfn: *mut c_void = std::ptr::null_mut();
    // SAFETY: `name` is NUL-terminated and outlives the call; `pfn` is a local out-pointer.
    let r =
        unsafe { get_proc_address(name.as_ptr(), &mut pfn, version, PROC_ADDRESS_LEGACY_STREAM) };
    match (r, pfn.is_null()) {
        (SUCCESS, false) => Ok(pfn),
        (SUCCESS, true) => Err(500),
        (code, _) => Err(code),
    }
}
