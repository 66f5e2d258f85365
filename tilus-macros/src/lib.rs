//! `#[tile_kernel]`: the thin proc-macro layer of tilus-rs.
//!
//! parse (`attr`, `parse`: Rust tokens → `tilus_core::ast`, with a span table) → compile
//! (`tilus_core::compile`: lowering, validation, passes, PTX) → expand (`expand`: the embedded
//! PTX and IR plus a typed launcher). Errors from any stage are reported at the user's tokens,
//! and a stub launcher is still emitted so that one mistake does not cascade through the crate.

mod attr;
mod expand;
#[cfg(test)]
mod fuzz;
mod parse;

use proc_macro::TokenStream;

/// Compile a Rust function into a tile kernel (PTX embedded at build time, plus a CPU emulator
/// form) and replace it with a unit struct of the same name carrying `launch`, `PTX` and
/// `spec()`. See the `tilus` crate documentation for the kernel language.
#[proc_macro_attribute]
pub fn tile_kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::tile_kernel(attr.into(), item.into()).into()
}
