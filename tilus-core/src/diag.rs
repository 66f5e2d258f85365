//! Diagnostics: an error message tied to a source span, with optional notes and help.

use crate::ir::Span;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// Extra lines shown after the message (`= note: ...` / `= help: ...` style).
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    /// A compiler bug found while compiling the user's code at `span`: reported, never a panic.
    pub fn internal(span: Span, what: &str) -> Self {
        Diagnostic::new(span, format!("internal compiler error: {what}"))
            .note("this is a bug in tilus-rs, not in your kernel; please report it with the kernel's source")
    }
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(format!("note: {}", note.into()));
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.notes.push(format!("help: {}", help.into()));
        self
    }
    /// The message with its notes, one per line, as the macro reports it.
    pub fn render(&self) -> String {
        // rustc-style trailing lines: `= note: ...` / `= help: ...`.
        let mut s = self.message.clone();
        for n in &self.notes {
            s.push_str("\n= ");
            s.push_str(n);
        }
        s
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}
