//! PTX code generation from the IR. Deterministic: the same IR gives byte-identical text.

use crate::ir::Kernel;

/// A generated PTX module holding one `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxModule {
    pub text: String,
    /// Dynamic shared memory bytes the launch must request.
    pub shared_bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    #[error("internal codegen error: {0}")]
    Internal(String),
}

pub fn generate(kernel: &Kernel) -> Result<PtxModule, CodegenError> {
    let _ = kernel;
    Err(CodegenError::Internal("not yet implemented".into()))
}
