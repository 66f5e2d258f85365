//! IR-to-IR passes, run after lowering and before code generation.

pub mod dce;

use crate::ir::Kernel;

/// The pass pipeline, in order.
pub fn run_all(kernel: &mut Kernel) {
    dce::run(kernel);
}
