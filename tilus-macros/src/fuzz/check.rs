//! One body through the macro's own path (tokens → `syn` → `expand::front` →
//! `expand::compile_caught` → `expand::emit`), and what counts as a bug.

use super::tok::Kernel;
use crate::expand::{self, Front};
use std::fmt;

/// Compiler (or emulator) bugs the fuzzer has found and that are not fixed yet: a failure whose
/// `"{class}: {message}"` contains one of these is counted as known instead of failing the test.
/// Whoever fixes one removes its line (and `TILUS_FUZZ_IGNORE_KNOWN=1` shows them all).
pub const KNOWN_BUGS: &[&str] = &[
    // None known.
];

/// How far a body got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Its text is not Rust tokens (cannot happen for mutated token trees but for odd literals).
    NotTokens,
    /// Tokens, but not a Rust function.
    NotRust,
    /// A Rust function the macro's front end (attribute, signature, body syntax) rejected.
    FrontEnd,
    /// Rejected by `tilus_core::compile` (with diagnostics).
    Compiler,
    /// Compiled to PTX.
    Accepted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// A panic in the macro's code (parse, front end, emit) or in the compiler (caught by the
    /// macro and reported as an internal compiler error).
    Panic,
    /// A diagnostic "internal compiler error" (the back end failing on IR the front end accepted).
    Internal,
    /// A diagnostic whose span the macro cannot map to a token (reported at the kernel name).
    Unspanned,
    /// Compiling the same AST twice gave different PTX (or IR).
    Nondeterminism,
    /// The IR the macro embeds as bytes (`Kernel::to_bytes`; the runtime's emulator reads it
    /// back) does not read back as the same IR.
    Roundtrip,
    /// ptxas rejected the PTX of an accepted kernel.
    Ptxas,
    /// The emulator panicked or reported `Internal`/`Malformed` on an accepted kernel.
    Emulator,
    /// A body did not finish within the time budget.
    Hang,
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Panic => "panic",
            Class::Internal => "internal compiler error",
            Class::Unspanned => "diagnostic without a span",
            Class::Nondeterminism => "nondeterministic PTX",
            Class::Roundtrip => "IR bytes round trip",
            Class::Ptxas => "ptxas rejection",
            Class::Emulator => "emulator bug",
            Class::Hang => "hang",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub class: Class,
    pub message: String,
}

impl Failure {
    pub fn new(class: Class, message: impl Into<String>) -> Failure {
        Failure {
            class,
            message: message.into(),
        }
    }

    /// What identifies "the same bug": the class and the first line of the message with numbers
    /// and quoted names blanked (so the reducer may shrink the kernel).
    pub fn signature(&self) -> String {
        let first = self.message.lines().next().unwrap_or("");
        let mut out = String::new();
        let mut quoted = false;
        let mut prev_digit = false;
        for c in first.chars() {
            if c == '`' || c == '\'' {
                quoted = !quoted;
                out.push(c);
                continue;
            }
            if quoted {
                continue;
            }
            if c.is_ascii_digit() {
                if !prev_digit {
                    out.push('N');
                }
                prev_digit = true;
                continue;
            }
            prev_digit = false;
            out.push(c);
        }
        format!(
            "{}: {}",
            self.class,
            out.chars().take(160).collect::<String>()
        )
    }

    /// Listed in [`KNOWN_BUGS`] (and not overridden by `TILUS_FUZZ_IGNORE_KNOWN=1`).
    pub fn known(&self) -> bool {
        if std::env::var("TILUS_FUZZ_IGNORE_KNOWN").is_ok_and(|v| v == "1") {
            return false;
        }
        let full = format!("{}: {}", self.class, self.message);
        KNOWN_BUGS.iter().any(|k| full.contains(k))
    }
}

pub struct Checked {
    pub stage: Stage,
    pub compiled: Option<tilus_core::Compiled>,
    pub failure: Option<Failure>,
    /// Why the kernel was rejected (the first error), for replays.
    pub rejection: Option<String>,
    /// The kernel has no `unsafe`: the emulator must find no undefined behaviour in it.
    pub safe: bool,
}

impl Checked {
    fn at(stage: Stage) -> Checked {
        Checked {
            stage,
            compiled: None,
            failure: None,
            rejection: None,
            safe: true,
        }
    }
}

/// Run `k` through the macro's path, catching panics.
pub fn check(k: &Kernel) -> Checked {
    super::take_panic_location();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_inner(k))) {
        Ok(c) => c,
        Err(payload) => {
            let at = super::take_panic_location().unwrap_or_default();
            Checked {
                stage: Stage::NotTokens,
                compiled: None,
                rejection: None,
                safe: true,
                failure: Some(Failure::new(
                    Class::Panic,
                    format!(
                        "the macro panicked: {}{at}",
                        super::panic_message(&*payload)
                    ),
                )),
            }
        }
    }
}

fn check_inner(k: &Kernel) -> Checked {
    let (Ok(attr), Ok(item)) = (k.attr_tokens(), k.item_tokens()) else {
        return Checked::at(Stage::NotTokens);
    };
    // What `tile_kernel` does with its item first.
    let func = match syn::parse2::<syn::ItemFn>(item) {
        Ok(f) => f,
        Err(e) => {
            let mut c = Checked::at(Stage::NotRust);
            c.rejection = Some(e.to_string());
            return c;
        }
    };
    let (p, def) = match expand::front(attr, &func) {
        Front::Def(p, def) => (p, def),
        Front::Errors(errors) => {
            let mut c = Checked::at(Stage::FrontEnd);
            c.rejection = errors.first().map(|e| e.to_string());
            let _ = expand::emit(&func, None, errors);
            return c;
        }
    };
    match expand::compile_caught(&def) {
        Err(diags) => {
            let failure = diags
                .iter()
                .find(|d| d.message.contains("internal compiler error"))
                .map(|d| {
                    if d.message.contains("the compiler panicked") {
                        let at = super::panic_location_of(&d.message).unwrap_or_default();
                        Failure::new(Class::Panic, format!("{}{at}", d.message))
                    } else {
                        Failure::new(Class::Internal, d.message.clone())
                    }
                })
                .or_else(|| {
                    diags
                        .iter()
                        .find(|d| p.span_of(d.span).is_none())
                        .map(|d| Failure::new(Class::Unspanned, d.message.clone()))
                });
            let rejection = diags.first().map(|d| d.render());
            let errors = expand::diagnostics_to_errors(&p, &func, diags);
            let _ = expand::emit(&func, None, errors);
            Checked {
                stage: Stage::Compiler,
                compiled: None,
                failure,
                rejection,
                safe: !def.uses_unsafe(),
            }
        }
        Ok(c) => {
            let failure = match expand::compile_caught(&def) {
                Ok(again)
                    if again.ptx == c.ptx
                        && again.shared_bytes == c.shared_bytes
                        && again.ir == c.ir =>
                {
                    roundtrip(&c.ir)
                }
                Ok(again) => {
                    let line = c
                        .ptx
                        .lines()
                        .zip(again.ptx.lines())
                        .find(|(a, b)| a != b)
                        .map(|(a, b)| format!("`{}` then `{}`", a.trim(), b.trim()))
                        .unwrap_or_else(|| "the IR, lengths or shared bytes differ".into());
                    Some(Failure::new(
                        Class::Nondeterminism,
                        format!("two compilations of one kernel differ: {line}"),
                    ))
                }
                Err(d) => Some(Failure::new(
                    Class::Nondeterminism,
                    format!(
                        "compiled once, rejected the second time: {}",
                        d.first().map(|d| d.message.as_str()).unwrap_or("")
                    ),
                )),
            };
            let _ = expand::emit(&func, Some(&c), Vec::new());
            Checked {
                stage: Stage::Accepted,
                compiled: Some(c),
                failure,
                rejection: None,
                safe: !def.uses_unsafe(),
            }
        }
    }
}

/// The embedded IR must read back as itself.
fn roundtrip(ir: &tilus_core::ir::Kernel) -> Option<Failure> {
    match tilus_core::ir::Kernel::from_bytes(&ir.to_bytes()) {
        Ok(back) if back == *ir => None,
        Ok(_) => Some(Failure::new(
            Class::Roundtrip,
            "the IR read back from its bytes differs",
        )),
        Err(e) => Some(Failure::new(
            Class::Roundtrip,
            format!("the IR's bytes do not read back: {e}"),
        )),
    }
}
