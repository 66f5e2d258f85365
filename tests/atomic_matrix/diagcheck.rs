//! Checks of the diagnostics of a rejected combination: each one must be about one of the
//! oracle's [`Reason`]s, point at the token that reason is about, name what is wrong, and say
//! what to write instead (a `help:` line that names an alternative).

use super::build::{CALL, SCOPE, SEM, TARGET};
use super::model::{cutile_name, Combo};
use super::oracle::{sem_of, Reason};
use tilus::core::diag::Diagnostic;
use tilus::core::dtype::DType;
use tilus::core::ir::Span;

/// The `help:` lines of a diagnostic (read from its rendering, which is the stable interface).
fn helps(d: &Diagnostic) -> Vec<String> {
    d.render()
        .lines()
        .filter_map(|l| l.strip_prefix("= help: ").map(str::to_string))
        .collect()
}

fn ticked(s: &str) -> String {
    format!("`{s}`")
}

/// The op as the message may spell it (`exch` is `xchg` in the cuTile form).
fn names_op(text: &str, op: &str) -> bool {
    text.contains(&ticked(op)) || text.contains(&ticked(cutile_name(op)))
}

/// A help line that offers something concrete: another element type, another op or form.
fn useful_help(help: &str, c: &Combo) -> bool {
    let other_type = DType::ALL
        .iter()
        .any(|d| *d != c.dtype && help.contains(&ticked(d.name())));
    let other_form = [
        "atomic_",
        "atomic::",
        "store_",
        "cas",
        "target",
        "MemoryOrder",
        "Relaxed",
        "Acquire",
        "Release",
        "AcqRel",
        "relaxed",
        "acquire",
        "release",
        "acq_rel",
    ]
    .iter()
    .any(|w| help.contains(w));
    other_type || other_form
}

/// Whether `d` is a good report of `reason` for `c`; `Err` says what is missing.
fn reports(c: &Combo, reason: Reason, d: &Diagnostic) -> Result<(), String> {
    let msg = &d.message;
    let (spans, ok_msg, what): (&[Span], bool, &str) = match reason {
        Reason::NoInstruction => (
            &[CALL],
            names_op(msg, c.op) && msg.contains(&ticked(c.dtype.name())),
            "names the op and the element type",
        ),
        Reason::ScatterOp => (
            &[CALL],
            msg.contains("scatter") && names_op(msg, c.op),
            "says the scatter form of the op is not provided",
        ),
        Reason::Order => (&[SEM], msg.contains(sem_of(c)), "names the memory order"),
        Reason::ClusterTarget => (
            &[SCOPE, TARGET],
            msg.contains("cluster") && msg.contains("sm_90"),
            "names the cluster scope and sm_90",
        ),
        Reason::RowTarget => (
            &[CALL, TARGET],
            names_op(msg, c.op) && msg.contains(&ticked(c.dtype.name())) && msg.contains("sm_90"),
            "names the op, the type and sm_90",
        ),
    };
    if !spans.contains(&d.span) {
        return Err(format!(
            "points at {:?}, expected one of {spans:?} (call {CALL:?}, sem {SEM:?}, scope {SCOPE:?}, target {TARGET:?})",
            d.span
        ));
    }
    if !ok_msg {
        return Err(format!("message should be one that {what}"));
    }
    let h = helps(d);
    if !h.iter().any(|h| useful_help(h, c)) {
        return Err(format!(
            "no `help:` line naming an alternative (helps: {h:?})"
        ));
    }
    Ok(())
}

/// Every diagnostic must be a good report of one of `reasons`.
pub fn check(c: &Combo, reasons: &[Reason], ds: &[Diagnostic]) -> Result<(), String> {
    if ds.is_empty() {
        return Err("rejected without a diagnostic".into());
    }
    for d in ds {
        let why: Vec<String> = reasons
            .iter()
            .map(|r| match reports(c, *r, d) {
                Ok(()) => String::new(),
                Err(e) => format!("as {r:?}: {e}"),
            })
            .collect();
        if !why.iter().any(String::is_empty) {
            return Err(format!(
                "diagnostic `{}` at {:?} reports none of {reasons:?}: {}",
                d.render().replace('\n', " / "),
                d.span,
                why.join("; ")
            ));
        }
    }
    Ok(())
}
