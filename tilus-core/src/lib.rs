//! # tilus-core
//!
//! The compiler library behind `#[tile_kernel]`, usable (and tested) without the proc macro:
//!
//! * [`ast`]: the surface syntax of a kernel body, produced by the macro from Rust tokens;
//! * [`lower`]: name resolution, builtin binding, shape and type inference and validation,
//!   producing the typed [`ir`] (errors are [`diag::Diagnostic`]s with source spans);
//! * [`table`]: the one table of what is legal for memory operations (op, dtype, space, sem,
//!   scope, target) and the PTX form each legal combination lowers to;
//! * [`passes`]: dead-code elimination (an atomic whose result is unused loses its output and
//!   lowers to `red.*` where PTX has that form);
//! * [`ptx`]: deterministic PTX text generation;
//! * [`emu`]: a CPU emulator that runs the IR with the same semantics.

pub mod ast;
pub mod diag;
pub mod emu;
pub mod ir;
pub mod lower;
pub mod passes;
pub mod ptx;
pub mod table;

use ir::Kernel;

/// Everything the macro embeds for one kernel.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The optimised IR (what the emulator runs).
    pub ir: Kernel,
    /// PTX module text.
    pub ptx: String,
    /// Dynamic shared memory bytes to request at launch (user allocations plus the back end's
    /// scratch space).
    pub shared_bytes: usize,
}

/// Compile a kernel definition: lower and validate, run the passes, generate PTX.
pub fn compile(def: &ast::KernelDef) -> Result<Compiled, Vec<diag::Diagnostic>> {
    let mut ir = lower::lower(def)?;
    passes::run_all(&mut ir);
    let module = ptx::generate(&ir)
        .map_err(|e| vec![diag::Diagnostic::new(ir::Span::NONE, e.to_string())])?;
    Ok(Compiled {
        ir,
        ptx: module.text,
        shared_bytes: module.shared_bytes,
    })
}
