//! Facts about the targets and the ABI, in one place that the front end, the PTX generator
//! and the runtime read: the architectures and the PTX ISA versions that know them, the limits
//! of a block and an SM, and how parameters are laid out in an entry's `.param` space.

use crate::ir::{Kernel, ParamKind};
use serde::{Deserialize, Serialize};

/// PTX compilation target (compute capability), e.g. 70 for `sm_70`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Target(pub u32);

impl Target {
    /// The default: the oldest architecture with the `.sem`/`.scope` memory model (Volta).
    pub const DEFAULT: Target = Target(70);
    pub const SM_90: Target = Target(90);

    /// Every architecture a kernel may target, with the oldest PTX ISA version (major * 10 +
    /// minor) that knows it: one row per architecture. Checked against ptxas (12.8 for sm_70 and
    /// sm_72, which CUDA 13 dropped; 13.0 for the rest); sm_101 is gone from CUDA 13 (now sm_110).
    pub const KNOWN: &'static [(u32, u32)] = &[
        (70, 60),
        (72, 61),
        (75, 63),
        (80, 70),
        (86, 71),
        (87, 74),
        (89, 78),
        (90, 78),
        (100, 86),
        (103, 88),
        (110, 90),
        (120, 87),
        (121, 88),
    ];

    /// The oldest PTX ISA version that knows this architecture, or `None` for an unknown one.
    pub fn min_ptx_version(self) -> Option<u32> {
        Target::KNOWN
            .iter()
            .find(|(sm, _)| *sm == self.0)
            .map(|(_, v)| *v)
    }
}

/// The oldest PTX ISA version (major * 10 + minor) every module uses: 7.8, for `.cluster`
/// scope and the memory-model forms.
pub const BASE_PTX_VERSION: u32 = 78;
/// Bytes of `.param` space an entry may declare up to PTX ISA 8.0.
pub const LEGACY_PARAM_BYTES: usize = 4352;
/// The PTX ISA version from which an entry may declare up to [`MAX_PARAM_BYTES`].
pub const LARGE_PARAMS_PTX_VERSION: u32 = 81;
/// Bytes of `.param` space an entry may declare from PTX ISA 8.1, which the generator
/// declares when the parameters need it (checked against ptxas).
pub const MAX_PARAM_BYTES: usize = 32764;

/// Maximum shared memory a kernel may use per block: the H100/H200 per-block opt-in limit.
pub const MAX_SHARED_BYTES: usize = 227 * 1024;
/// Shared memory of one SM that blocks can use, in bytes: 228 KiB on sm_90, the most of any
/// target (a block also costs 1 KiB reserved by the system).
pub const SM_SHARED_BYTES: usize = 228 * 1024;
/// Shared memory the system reserves per block on an SM.
pub const BLOCK_RESERVED_SHARED_BYTES: usize = 1024;
/// Threads one SM runs at once (sm_70 to sm_90).
pub const MAX_THREADS_PER_SM: u32 = 2048;
/// Blocks one SM runs at once (sm_70 to sm_90).
pub const MAX_BLOCKS_PER_SM: u32 = 32;

/// The PTX type and size of a scalar parameter of type `d`: narrow integers and `bool` are
/// passed widened to 32 bits (the runtime widens them), everything else as itself.
pub fn param_type(d: crate::ir::DType) -> (&'static str, usize) {
    use crate::ir::DType as D;
    match d {
        D::Bool | D::U8 | D::U16 => ("u32", 4),
        D::I8 | D::I16 => ("s32", 4),
        D::F16 | D::BF16 => ("b16", 2),
        _ => (d.info().mem, d.size_bytes()),
    }
}

/// The `.param` bytes used after appending a parameter of `kind` (PTX lays parameters out in
/// order, each aligned to its size): a tensor is a `.u64` pointer and a `.u64` length.
pub fn param_space_after(used: usize, kind: &ParamKind) -> usize {
    match kind {
        ParamKind::Tensor(_) => used.next_multiple_of(8) + 16,
        ParamKind::Scalar(d) => {
            let size = param_type(*d).1;
            used.next_multiple_of(size) + size
        }
    }
}

/// The `.param` bytes all of `k`'s parameters take.
pub fn param_bytes(k: &Kernel) -> usize {
    k.params
        .iter()
        .fold(0, |used, p| param_space_after(used, &p.kind))
}

/// The oldest PTX ISA version a module of `k` can declare before its instructions raise it:
/// the base version, the first that knows `k`'s target, and 8.1 when its parameters need more
/// than the legacy space.
pub fn ptx_version_for(k: &Kernel) -> u32 {
    let mut v = BASE_PTX_VERSION.max(k.target.min_ptx_version().unwrap_or(0));
    if param_bytes(k) > LEGACY_PARAM_BYTES {
        v = v.max(LARGE_PARAMS_PTX_VERSION);
    }
    v
}
