//! `#[tile_kernel]`: the thin proc-macro layer of tilus-rs.
//!
//! parse (`attr`, `parse`: Rust tokens → `tilus_core::ast`, with a span table) → compile
//! (`tilus_core::compile`: lowering, validation, passes, PTX) → expand (`expand`: the embedded
//! PTX and IR plus a typed launcher). Errors from any stage are reported at the user's tokens,
//! and a stub launcher is still emitted so that one mistake does not cascade through the crate.
//!
//! Errors are rustc errors at the user's tokens; `report` says how they are laid out on stable
//! Rust (notes above the location: a proc macro cannot put them after it without the unstable
//! `proc_macro::Diagnostic`) and how to get rustc's own layout on nightly
//! (`RUSTFLAGS="--cfg tilus_nightly_diagnostics"`).

#![cfg_attr(
    tilus_nightly_diagnostics,
    feature(proc_macro_diagnostic, proc_macro_span)
)]

mod attr;
#[cfg(test)]
mod compile_time;
mod edges;
mod expand;
#[cfg(test)]
mod fuzz;
mod parse;
mod report;
#[cfg(test)]
mod roundtrip;
mod timing;

use proc_macro::TokenStream;

/// Compile a Rust function into a tile kernel (PTX embedded at build time, plus a CPU emulator
/// form) and replace it with a unit struct of the same name carrying `launch`, `PTX` and
/// `spec()`. See the `tilus` crate documentation for the kernel language.
///
/// # Errors
///
/// A kernel the compiler rejects is reported as rustc errors at the offending tokens, each with
/// its notes and help (`= note: ...`, `= help: ...`, a name with a similar spelling when one is
/// close), followed by an `error: note: ...` at each other place the error is about (the earlier
/// access of a scope mismatch, the first declaration of a duplicate name). On stable Rust a proc
/// macro can only report through `compile_error!`, whose message rustc prints whole above the
/// `-->` location, so the notes come before the snippet rather than after it, and a secondary
/// place is its own error rather than a `note:` of the first. With a nightly toolchain and
/// `RUSTFLAGS="--cfg tilus_nightly_diagnostics"` the macro reports through the unstable
/// `proc_macro::Diagnostic` instead: rustc's own layout, notes and help after the snippet and
/// secondary places as `note:`s.
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut stages = timing::Stages::from_env();
    let (name, out) = expand::tile_kernel(attr.into(), item.into(), &mut stages);
    let out = out.into();
    timing::Stages::mark(&mut stages, "to_rustc");
    timing::Stages::finish(stages, &name);
    out
}
