//! IR-to-IR passes, run after lowering and before code generation.

pub mod affine_index;
pub mod coalesce;
pub mod dce;
pub mod range_mask;

use crate::ir::Kernel;

/// The pass pipeline, in order.
pub fn run_all(kernel: &mut Kernel) {
    range_mask::run(kernel);
    affine_index::run(kernel);
    dce::run(kernel);
    coalesce::run(kernel);
}
