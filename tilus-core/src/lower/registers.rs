//! Register budget: a tile lives in its threads' registers ([`crate::layout`]), so a tile with
//! too many elements per thread is rejected at compile time instead of becoming a PTX module
//! that spills everything and takes ptxas minutes (a 65,535-element tile of `atomic_cas` on 32
//! threads: 2,048 unrolled CAS loops per thread, 820 KB of PTX, over a minute in ptxas; at 256
//! elements per thread the same kernel assembles in a second).

use crate::diag::Diagnostic;
use crate::ir::{for_each_inst, Kernel, Ty};
use crate::layout::{vector_width, Layout};

/// Most elements of one tile that a thread may hold (the hardware has 255 32-bit registers per
/// thread; beyond this a kernel is all spills and its compile time grows without bound).
pub const MAX_ELEMENTS_PER_THREAD: usize = 256;

/// The first tile (in program order) that needs more than [`MAX_ELEMENTS_PER_THREAD`] elements
/// in each thread, if any: only the first, because every value computed from it is as large and
/// one fix (more threads, a smaller tile) covers them all.
pub(super) fn check(k: &Kernel) -> Option<Diagnostic> {
    let vmax = vector_width(k);
    let mut error: Option<Diagnostic> = None;
    for_each_inst(&k.body, &mut |dst, _, span| {
        let Some(dst) = dst else { return };
        let Ty::Tile { shape, .. } = &k.vars[dst as usize].ty else {
            return;
        };
        let n: usize = shape.iter().product();
        let threads = k.threads as usize;
        let per_thread = Layout::new(n, threads, vmax).slots();
        if per_thread <= MAX_ELEMENTS_PER_THREAD || error.is_some() {
            return;
        }
        let enough = n.div_ceil(MAX_ELEMENTS_PER_THREAD).next_multiple_of(32);
        let fix = if enough <= 1024 {
            format!("use `threads = {enough}` or more, a smaller tile, or a loop over parts of it")
        } else {
            "use a smaller tile, or a loop over parts of it".to_string()
        };
        error = Some(
            Diagnostic::new(
                span,
                format!(
                    "a tile of {n} elements on {threads} threads puts {per_thread} elements in each thread's registers (at most {MAX_ELEMENTS_PER_THREAD})"
                ),
            )
            .note("a tile is spread over the block's threads and held in their registers")
            .help(fix),
        );
    });
    error
}
