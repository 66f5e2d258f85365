//! The compiler's [`Diagnostic`]s as rustc errors at the user's tokens.
//!
//! # Layout on stable Rust, and why
//!
//! A proc macro on stable Rust has one honest way to report an error: `compile_error!`, spanned
//! at the user's tokens. rustc prints every line of its message *above* the `-->` location, so
//! the notes and help of a diagnostic cannot come after the snippet the way rustc's own do.
//! The API that could put them there, `proc_macro::Diagnostic` (`.note`, `.help`,
//! `.span_note`), is unstable (rust-lang/rust#54140), and the crates that wrap it
//! (proc-macro2-diagnostics, proc-macro-error2, manyhow) fall back to the same `compile_error!`
//! on stable. So a diagnostic is rendered as:
//!
//! * the message, then its notes and help as `= note: ...` / `= help: ...` lines (rustc indents
//!   them under the message, above the location), over the first..last token of the code it is
//!   about;
//! * then one more error per secondary label, `note: <label>`, at the label's code, so the
//!   other place the error is about gets its own snippet ("the earlier access", "first
//!   declared here").
//!
//! ```text
//! error: scope mismatch: ...
//!        = note: a release and an acquire synchronise only if ...
//!        = help: use the same scope on both sides ...
//!   --> src/lib.rs:12:9
//!    |
//! 12 |         atomic_load(flag, order = "acquire", scope = "gpu");
//!    |         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
//!
//! error: note: the earlier `release` access, at scope `cta`
//!   --> src/lib.rs:9:9
//! ```
//!
//! # Nightly
//!
//! Built with `RUSTFLAGS="--cfg tilus_nightly_diagnostics"` on a nightly toolchain, the macro
//! emits the same diagnostics through `proc_macro::Diagnostic` instead: rustc's own layout, with
//! `= note`/`= help` after the snippet and each label as a `note:` with its snippet. It is a
//! `--cfg`, not a cargo feature, so that `--all-features` on stable never turns it on.

use crate::parse::Parser;
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use tilus_core::diag::Diagnostic;

/// Where a compiler span is in the user's tokens (the kernel's name where it is unknown).
fn range(p: &Parser, fallback: Span, s: tilus_core::ir::Span) -> (Span, Span) {
    p.span_of(s).unwrap_or((fallback, fallback))
}

/// One diagnostic as errors: the primary, then a `note:` error per label.
#[cfg_attr(tilus_nightly_diagnostics, allow(dead_code))]
pub(crate) fn to_errors(p: &Parser, name: Span, d: &Diagnostic) -> Vec<syn::Error> {
    let mut out = vec![error_at(range(p, name, d.span), &d.render())];
    for (s, text) in &d.labels {
        out.push(error_at(range(p, name, *s), &format!("note: {text}")));
    }
    out
}

/// An error underlining `start..=end` (syn spans an error over the first and last token it is
/// given; on stable Rust that is the only way to cover more than one token).
#[cfg_attr(tilus_nightly_diagnostics, allow(dead_code))]
fn error_at((start, end): (Span, Span), msg: &str) -> syn::Error {
    let mut tokens = TokenStream::new();
    tokens.extend(quote_spanned! {start=> start});
    tokens.extend(quote_spanned! {end=> end});
    syn::Error::new_spanned(tokens, msg)
}

/// Emit `diags` through the unstable `proc_macro::Diagnostic` (rustc's own layout). Only inside
/// a proc macro invocation: the `proc_macro` API panics anywhere else.
#[cfg(tilus_nightly_diagnostics)]
pub(crate) fn emit_nightly(p: &Parser, name: Span, diags: &[Diagnostic]) {
    use tilus_core::diag::NoteKind;
    let join = |s| {
        let (a, b) = range(p, name, s);
        let (a, b) = (a.unwrap(), b.unwrap());
        a.join(b).unwrap_or(a)
    };
    for d in diags {
        let mut out = proc_macro::Diagnostic::spanned(
            join(d.span),
            proc_macro::Level::Error,
            d.message.clone(),
        );
        for n in &d.notes {
            out = match n.kind {
                NoteKind::Note => out.note(n.text.clone()),
                NoteKind::Help => out.help(n.text.clone()),
            };
        }
        for (s, text) in &d.labels {
            out = out.span_note(join(*s), text.clone());
        }
        out.emit();
    }
}
