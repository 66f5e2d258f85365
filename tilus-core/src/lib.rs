//! # tilus-core
//!
//! The compiler library behind `#[tile_kernel]`, usable (and tested) without the proc macro:
//!
//! * [`dtype`]: the element types, one table row each, read by every layer;
//! * [`elem`]: the semantics of element operations, written once for both back ends;
//! * [`collective`]: the tile collectives (axis reductions, scans, sorts, ranks): the order
//!   both back ends combine elements in, and its evaluation on host values;
//! * [`ast`]: the surface syntax of a kernel body, produced by the macro from Rust tokens;
//! * [`lower`]: name resolution, builtin binding, shape and type inference and validation,
//!   producing the typed [`ir`] (errors are [`diag::Diagnostic`]s with source spans);
//! * [`table`]: the one table of what is legal for memory operations (op, dtype, space, sem,
//!   scope, target) and the PTX form each legal combination lowers to;
//! * [`facts`]: what several parts of the compiler know about a variable (where it is
//!   defined, how often it is read), computed once under one rule;
//! * [`passes`]: dead-code elimination (an atomic whose result is unused loses its output and
//!   lowers to `red.*` where PTX has that form);
//! * [`target`]: the architectures, PTX ISA versions, block and SM limits and the parameter
//!   layout, read by the front end, the back end and the runtime;
//! * [`ptx`]: deterministic PTX text generation;
//! * [`emu`]: a CPU emulator that runs the IR with the same semantics.

pub mod ast;
pub mod collective;
pub mod diag;
pub mod dtype;
pub mod elem;
pub mod emu;
pub mod facts;
pub mod ir;
pub mod layout;
pub mod lower;
pub mod passes;
pub mod ptx;
pub mod table;
pub mod target;

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
    /// The same kernel for newer targets, as `(target, PTX)`, where the compiler has better
    /// instructions there (vector atomics on sm_90) and the user named no target: the runtime
    /// loads the newest one the device runs. Each needs the same shared memory as `ptx`.
    pub variants: Vec<(u32, String)>,
}

/// Targets a kernel is also generated for when the user names none (see
/// [`Compiled::variants`]).
pub const VARIANT_TARGETS: &[ir::Target] = &[ir::Target::SM_90];

/// Compile a kernel definition: lower and validate, run the passes, generate PTX.
///
/// Every error is a [`diag::Diagnostic`] with the span of the source it is about; a failure of
/// the back end on a kernel the front end accepted is a compiler bug, reported as an internal
/// compiler error at the statement being generated.
pub fn compile(def: &ast::KernelDef) -> Result<Compiled, Vec<diag::Diagnostic>> {
    let mut ir = lower::lower(def)?;
    passes::run_all(&mut ir);
    let module = ptx::generate(&ir).map_err(|e| {
        let span = if e.span == ir::Span::NONE {
            def.name_span
        } else {
            e.span
        };
        vec![diag::Diagnostic::internal(span, &e.message)]
    })?;
    // The front end checked the user's allocations; the back end adds scratch for broadcasts
    // and reductions, so the total is checked again here (an error now, not at every launch),
    // at the statement that needs the scratch.
    if module.shared_bytes > target::MAX_SHARED_BYTES {
        let span = module.scratch_span.unwrap_or(def.name_span);
        let scratch = module.shared_bytes - ir.shared_bytes.next_multiple_of(16);
        let d = diag::Diagnostic::new(
            span,
            format!(
                "shared memory overflow: this operation needs {scratch} bytes of scratch space after the kernel's {} bytes of `shared_tensor` allocations, {} bytes in all, over the {}-byte limit of a block",
                ir.shared_bytes,
                module.shared_bytes,
                target::MAX_SHARED_BYTES
            ),
        )
        .note("`broadcast_to`, numpy broadcasting and reductions of tiles exchange elements between threads through shared memory")
        .help("use smaller shared tensors, or broadcast or reduce smaller tiles");
        return Err(vec![d]);
    }
    if let Some(m) = ir.min_blocks_per_sm {
        let per_block = module.shared_bytes + target::BLOCK_RESERVED_SHARED_BYTES;
        if m as usize * per_block > target::SM_SHARED_BYTES {
            let fit = target::SM_SHARED_BYTES / per_block;
            let d = diag::Diagnostic::new(
                def.options.min_blocks_span,
                format!(
                    "`min_blocks_per_sm = {m}` cannot be met: each block uses {} bytes of shared memory, and {m} of them need more than an SM's {} bytes",
                    module.shared_bytes,
                    target::SM_SHARED_BYTES
                ),
            )
            .note(format!("at most {fit} fit on an SM (the system reserves 1 KiB per block)"));
            return Err(vec![d]);
        }
    }
    let variants = if def.options.target.is_some() {
        Vec::new()
    } else {
        variants(&ir, &module)
    };
    Ok(Compiled {
        ir,
        ptx: module.text,
        shared_bytes: module.shared_bytes,
        variants,
    })
}

/// The kernel generated again for each of [`VARIANT_TARGETS`] above its own target, kept where
/// the instructions differ (not only the header) and the shared memory is the same.
fn variants(ir: &ir::Kernel, base: &ptx::PtxModule) -> Vec<(u32, String)> {
    // The text from `.address_size` on: the header lines above it are the `.version` and
    // `.target` lines, which differ by target, and a fixed comment. (Filtering every line
    // instead was a quarter of the compile stage's instructions, measured with callgrind.)
    fn body(text: &str) -> &str {
        text.find(".address_size").map_or(text, |i| &text[i..])
    }
    let base_body = body(&base.text);
    let mut out = Vec::new();
    for &target in VARIANT_TARGETS {
        if target <= ir.target {
            continue;
        }
        let mut k = ir.clone();
        k.target = target;
        match ptx::generate(&k) {
            Ok(m) if m.shared_bytes == base.shared_bytes && body(&m.text) != base_body => {
                out.push((target.0, m.text))
            }
            _ => {}
        }
    }
    out
}
