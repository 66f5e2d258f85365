//! PTX code generation from the IR. Deterministic: the same IR gives byte-identical text.
//!
//! Three layers, each apart from the others:
//! * analysis, `known`: what is known of values at compile time (definition sites, trailing
//!   zero bits, and in `known/bounds` upper bounds of non-negative integers);
//! * selection, which chooses the instructions and appends them to a typed list (`code`):
//!   `emit` (the emitter's state: variable storage, operands, the per-thread prologue,
//!   structured control flow), `inst` (scalar and element-wise instructions), `convert`
//!   (conversions between element types), `access` (loads, stores and atomics: bounds, masks,
//!   vector accesses), whose instructions are `memops` (loads and stores), `rmw` and
//!   `rmw_pairs` (read-modify-writes), and `collective` (broadcast and reduce through shared
//!   scratch); it computes with `value`s (a register or a compile-time value) and registers
//!   numbered by `regs`;
//! * printing, `print`: the module's text, the only place that spells PTX syntax.
//!
//! Running `ptxas` on the text is a test helper of the workspace (`tilus-testkit`).

mod access;
mod code;
mod collective;
mod convert;
mod emit;
mod inst;
mod known;
mod memops;
mod print;
mod regs;
mod rmw;
mod rmw_pairs;
#[cfg(test)]
mod tests;
mod value;

use crate::ir::Kernel;

pub use crate::layout::Layout;

/// A generated PTX module holding one `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxModule {
    pub text: String,
    /// Dynamic shared memory bytes the launch must request.
    pub shared_bytes: usize,
    /// The statement that needs the most back-end scratch (shared memory after the user's
    /// allocations, for `broadcast_to` and reductions), when any does.
    pub scratch_span: Option<crate::ir::Span>,
}

/// A failure of the back end on IR the front end accepted: a compiler bug, reported with the
/// span of the statement being generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("internal codegen error: {message}")]
pub struct CodegenError {
    pub span: crate::ir::Span,
    pub message: String,
}

impl CodegenError {
    pub(crate) fn new(message: impl Into<String>) -> CodegenError {
        CodegenError {
            span: crate::ir::Span::NONE,
            message: message.into(),
        }
    }
}

/// The name of the shared window symbol. `$` cannot appear in a Rust identifier, so no name a
/// user chooses can collide with it (see [`entry_name`]).
pub const SMEM_SYMBOL: &str = "tilus$smem";

/// The PTX entry point of kernel `name`: the name behind a `tk_` prefix, so that no Rust
/// identifier can collide with a PTX keyword, directive, type or special register (`WARP_SZ`,
/// `ld`, `reg` are all valid kernel names) or with the generator's own symbols, which all
/// contain `$`. Injective: different kernel names give different entries.
pub fn entry_name(name: &str) -> String {
    format!("tk_{name}")
}

pub use crate::target::param_type;

pub fn generate(kernel: &Kernel) -> Result<PtxModule, CodegenError> {
    if kernel.threads == 0 || kernel.threads & 31 != 0 || kernel.threads > 1024 {
        return Err(CodegenError::new(format!(
            "block size {} is not a multiple of 32 in 32..=1024",
            kernel.threads
        )));
    }
    if kernel.vars.len() < kernel.params.len() {
        return Err(CodegenError::new("fewer variables than parameters"));
    }
    let mut e = emit::Emitter::new(kernel);
    e.params()?;
    e.block(&kernel.body)?;
    let g = e.finish();
    // The oldest PTX ISA that has everything the module uses (so that older drivers load it):
    // 7.8 for `.cluster` and the memory model forms, 8.1 for more than 4352 bytes of
    // parameters and for vector atomics, 8.3 for 128-bit atomics (8.4 at `.sys` scope), and at
    // least the first version that knows the target (8.6 for sm_100, ...).
    let version = g.min_version.max(crate::target::ptx_version_for(kernel));
    Ok(PtxModule {
        text: print::module(kernel, version, g.shared_bytes, &g.regs, &g.code),
        shared_bytes: g.shared_bytes,
        scratch_span: g.scratch_span,
    })
}
