//! CPU emulator: runs the IR of a kernel over host memory with the semantics documented in
//! [`crate::ir`].

use crate::ir::Kernel;
use std::sync::atomic::AtomicI32;

/// A launch argument, in parameter order.
#[derive(Debug, Clone, Copy)]
pub enum EmuArg<'a> {
    /// A `GlobalTensor<i32>` (its memory, shared with other blocks and other arguments).
    Tensor(&'a [AtomicI32]),
    I32(i32),
}

#[derive(Debug, Clone)]
pub struct EmuOptions {
    /// Report duplicate addresses among the active elements of one non-atomic scatter store as
    /// an error (on in tests).
    pub strict_scatter: bool,
    /// Host threads running blocks concurrently (blocks are handed out in increasing order).
    /// 0 = enough for every block of the grid to be in flight up to a cap of 256.
    pub workers: usize,
    /// Abort with [`EmuError::StepLimit`] after this many loop iterations in one block
    /// (a spin that never ends fails instead of hanging). `None` = unlimited.
    pub max_loop_iterations: Option<u64>,
}

impl Default for EmuOptions {
    fn default() -> Self {
        EmuOptions { strict_scatter: false, workers: 0, max_loop_iterations: None }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    #[error("kernel `{kernel}` expects {expected} arguments, got {got}")]
    ArgCount { kernel: String, expected: usize, got: usize },
    #[error("argument {index} (`{name}`) of kernel `{kernel}` has the wrong kind: expected {expected}")]
    ArgKind { kernel: String, index: usize, name: String, expected: String },
    #[error("non-atomic scatter store in kernel `{kernel}`, block {block}: {count} active elements write the same address (index {index}); use an atomic or a collision-free index tile")]
    DuplicateScatter { kernel: String, block: u32, index: i64, count: usize },
    #[error("kernel `{kernel}`, block {block}: a loop ran more than {limit} iterations (emulator step limit)")]
    StepLimit { kernel: String, block: u32, limit: u64 },
}

/// Run `kernel` over a grid of `grid` blocks.
pub fn launch(kernel: &Kernel, grid: u32, args: &[EmuArg<'_>], opts: &EmuOptions) -> Result<(), EmuError> {
    let _ = (kernel, grid, args, opts);
    todo!("emulator")
}
