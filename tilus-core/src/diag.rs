//! Diagnostics: an error message tied to a source span, with secondary labelled spans and
//! span-less notes and help, shaped like rustc's own.
//!
//! A [`Diagnostic`] is data; how it looks is the renderer's business. The `#[tile_kernel]` macro
//! renders it as rustc errors (see `tilus-macros/src/expand.rs` for the layout on stable Rust,
//! and why notes print above the location there); [`Diagnostic::render`] is the plain-text form
//! of the primary message for tests and tools.

use crate::ir::Span;

/// Whether a span-less line says something about the error (`note`) or what to write (`help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    Note,
    Help,
}

impl NoteKind {
    /// rustc's word for the line: `note` / `help`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Note => "note",
            NoteKind::Help => "help",
        }
    }
}

/// A span-less line after the message (`= note: ...` / `= help: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: NoteKind,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The code the error is about (underlined).
    pub span: Span,
    pub message: String,
    /// Other code the error is about, each with what it is ("the earlier access", "declared
    /// here"), in the order they were added.
    pub labels: Vec<(Span, String)>,
    /// Notes and help, in the order they were added.
    pub notes: Vec<Note>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }
    /// A compiler bug found while compiling the user's code at `span`: reported, never a panic.
    pub fn internal(span: Span, what: &str) -> Self {
        Diagnostic::new(span, format!("internal compiler error: {what}"))
            .note("this is a bug in tilus-rs, not in your kernel; please report it with the kernel's source")
    }
    /// Add a `note:` line: a fact that explains the error.
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(Note {
            kind: NoteKind::Note,
            text: text.into(),
        });
        self
    }
    /// Add a `help:` line: what to write instead.
    pub fn help(mut self, text: impl Into<String>) -> Self {
        self.notes.push(Note {
            kind: NoteKind::Help,
            text: text.into(),
        });
        self
    }
    /// Add a `help:` line when there is one (a "did you mean" that found a close name).
    pub fn maybe_help(self, text: Option<String>) -> Self {
        match text {
            Some(t) => self.help(t),
            None => self,
        }
    }
    /// Point at other code the error is about, saying what it is there. A label at
    /// [`Span::NONE`] (code with no source, such as a context-typed binding) is left out.
    pub fn label(mut self, span: Span, text: impl Into<String>) -> Self {
        if span != Span::NONE {
            self.labels.push((span, text.into()));
        }
        self
    }
    /// The message with its notes and help, one per line, as rustc prints a proc macro's
    /// error message (`= note: ...` / `= help: ...`). Labels are not in it: they need the
    /// source the spans point into, which only the renderer has.
    pub fn render(&self) -> String {
        let mut s = self.message.clone();
        for n in &self.notes {
            s.push_str("\n= ");
            s.push_str(n.kind.as_str());
            s.push_str(": ");
            s.push_str(&n.text);
        }
        s
    }
}

/// `n` `thing`s in words, for messages: `1 argument`, `3 arguments`.
pub fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// "`n` were supplied" in the right number: `1 was`, `3 were`.
pub fn were(n: usize) -> String {
    if n == 1 {
        "1 was".into()
    } else {
        format!("{n} were")
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_keeps_order_and_kinds() {
        let d = Diagnostic::new(Span(3), "bad")
            .note("why")
            .label(Span(1), "earlier")
            .help("fix")
            .maybe_help(None)
            .maybe_help(Some("other fix".into()))
            .label(Span::NONE, "nowhere");
        assert_eq!(d.labels, vec![(Span(1), "earlier".to_string())]);
        let kinds: Vec<_> = d.notes.iter().map(|n| n.kind).collect();
        assert_eq!(kinds, [NoteKind::Note, NoteKind::Help, NoteKind::Help]);
        assert_eq!(
            d.render(),
            "bad\n= note: why\n= help: fix\n= help: other fix"
        );
    }

    #[test]
    fn counts_in_words() {
        assert_eq!(count(1, "argument"), "1 argument");
        assert_eq!(count(0, "argument"), "0 arguments");
        assert_eq!(were(1), "1 was");
        assert_eq!(were(3), "3 were");
    }
}
