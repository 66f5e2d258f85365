//! "Did you mean": the names closest to a misspelt one, for a `help:` line.
//!
//! A candidate is offered only when it is close: no suggestion is better than a wrong one. The
//! rules follow rustc's (`find_best_match_for_name`), tuned on the kernel language's names:
//!
//! * the same name in another case (`device` → `Device`), or the same `_`-separated words in
//!   another order (`global_load` → `load_global`);
//! * an edit distance (insertions, deletions, substitutions and swaps of two neighbours, so
//!   `laod` → `load` is one edit) of at most a third of the name's length (`f23` → `f32`,
//!   `offset` → `offsets`, `acqrel` → `acq_rel`); names of one or two characters get no
//!   edits at all (every other short name is one edit away);
//! * for paths, the name is compared within its module (`atomic::global_ad` →
//!   `atomic::global_add`); across modules only the same name counts (`atomic::load` →
//!   `atomic_load`, `global_add` → `atomic::global_add`).
//!
//! The closest candidates win (the fewest edits, a different case counting as edits, so a
//! lowercase misspelling gets the lowercase spelling); ties are all shown, in table order.

use crate::diag::Diagnostic;
use crate::dtype::DType;

/// At most this many candidates in one help line.
const MAX_SHOWN: usize = 3;

/// The candidates closest to `name`, best first (table order among equals), none when none is
/// close. Candidates equal to each other but for case are shown once.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| score(name, c).map(|s| (s, c)))
        .collect();
    let Some(best) = scored.iter().map(|(s, _)| *s).min() else {
        return Vec::new();
    };
    scored.retain(|(s, _)| *s == best);
    let mut out: Vec<&str> = Vec::new();
    for (_, c) in scored {
        if !out.iter().any(|o| o.eq_ignore_ascii_case(c)) {
            out.push(c);
        }
    }
    out.truncate(MAX_SHOWN);
    out
}

/// The help line for a misspelt `name`, e.g. "a builtin with a similar name exists:
/// `load_global`"; `what` is one candidate with its article ("a builtin"). `None` when no
/// candidate is close.
pub fn similar<'a>(
    what: &str,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let found: Vec<String> = closest(name, candidates)
        .into_iter()
        .map(String::from)
        .collect();
    help_line(what, &found)
}

/// "`what` with a similar name exists: `a`" (or "`a` or `b`", "`a`, `b` or `c`") for names
/// already chosen (and written the way the user should write them).
pub fn help_line(what: &str, names: &[String]) -> Option<String> {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let list = match quoted.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    Some(format!("{what} with a similar name exists: {list}"))
}

/// The help line for an unknown element type name (`f23` → `f32`).
pub fn dtype(name: &str) -> Option<String> {
    similar("an element type", name, DType::ALL.iter().map(|d| d.name()))
}

/// An unknown element type's diagnostic completed: the close name as help, or else the list of
/// element types as a note.
pub fn unknown_dtype(d: Diagnostic, name: &str) -> Diagnostic {
    match dtype(name) {
        Some(h) => d.help(h),
        None => {
            let all: Vec<String> = DType::ALL
                .iter()
                .map(|t| format!("`{}`", t.name()))
                .collect();
            d.note(format!("the element types are {}", all.join(", ")))
        }
    }
}

impl super::Lowerer {
    /// The help line for an unknown variable `name`: a variable in scope with a similar name.
    pub(super) fn similar_variable(&self, name: &str) -> Option<String> {
        let mut names: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.keys())
            .map(String::as_str)
            .filter(|n| *n != "_")
            .collect();
        // Scopes are hash maps: sort for a deterministic order among equally close names.
        names.sort_unstable();
        names.dedup();
        similar("a variable", name, names)
    }
}

/// How far `cand` is from `name` (smaller is closer), or `None` when it is not close.
fn score(name: &str, cand: &str) -> Option<usize> {
    if name == cand {
        return None;
    }
    let (name_mod, name_last) = split_path(name);
    let (cand_mod, cand_last) = split_path(cand);
    if name_mod == cand_mod {
        return word_score(name_last, cand_last);
    }
    // Another module: `::` written as `_` or the other way round, or the right name in the
    // wrong (or a missing) module.
    (flat(name) == flat(cand) || name_last == cand_last).then_some(0)
}

fn word_score(name: &str, cand: &str) -> Option<usize> {
    let exact = strsim::osa_distance(name, cand);
    let (ln, lc) = (name.to_ascii_lowercase(), cand.to_ascii_lowercase());
    if ln == lc {
        return Some(exact);
    }
    if name.contains('_') && words(&ln) == words(&lc) {
        return Some(1);
    }
    let len = name.chars().count();
    let max = if len < 3 { 0 } else { len / 3 };
    (strsim::osa_distance(&ln, &lc) <= max).then_some(exact)
}

fn split_path(s: &str) -> (&str, &str) {
    s.rsplit_once("::").unwrap_or(("", s))
}

fn flat(s: &str) -> String {
    s.replace("::", "_")
}

fn words(s: &str) -> Vec<&str> {
    let mut w: Vec<&str> = s.split('_').filter(|w| !w.is_empty()).collect();
    w.sort_unstable();
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILTINS: &[&str] = &[
        "load_global",
        "store_global",
        "load_shared",
        "atomic_add",
        "atomic_and",
        "atomic_load",
        "atomic::global_add",
        "atomic::shared_add",
        "atomic::global_scatter_add",
    ];

    #[test]
    fn typos_within_a_third_of_the_length() {
        assert_eq!(
            closest("laod_global", BUILTINS.iter().copied()),
            ["load_global"]
        );
        assert_eq!(
            closest("load_globl", BUILTINS.iter().copied()),
            ["load_global"]
        );
        assert_eq!(
            closest("global_load", BUILTINS.iter().copied()),
            ["load_global"]
        );
        assert_eq!(closest("f23", DType::ALL.iter().map(|d| d.name())), ["f32"]);
        assert_eq!(closest("offset", ["src", "offsets", "shape"]), ["offsets"]);
        // ties are all shown, in table order
        assert_eq!(
            closest("atomic_ad", BUILTINS.iter().copied()),
            ["atomic_add", "atomic_and"]
        );
    }

    #[test]
    fn nothing_when_nothing_is_close() {
        assert!(closest("thread_idx", BUILTINS.iter().copied()).is_empty());
        assert!(closest("fill", ["src", "offsets", "shape", "other", "mask"]).is_empty());
        // one- and two-letter names: every other short name is one edit away
        assert!(closest("f8", DType::ALL.iter().map(|d| d.name())).is_empty());
        assert!(closest("float", DType::ALL.iter().map(|d| d.name())).is_empty());
        // an exact name is not a misspelling of itself
        assert!(closest("f32", ["f32"]).is_empty());
    }

    #[test]
    fn the_users_spelling_style_wins() {
        let sems = [
            "relaxed", "acquire", "acq_rel", "Relaxed", "AcqRel", "RELAXED", "ACQ_REL",
        ];
        assert_eq!(closest("acqrel", sems), ["acq_rel"]);
        assert_eq!(closest("Acqrel", sems), ["AcqRel"]);
        assert_eq!(closest("ACQREL", sems), ["ACQ_REL"]);
        assert_eq!(closest("acquired", sems), ["acquire"]);
        let scopes = ["cta", "gpu", "Block", "Device", "DEVICE"];
        // the closest case wins: `Device`, not `DEVICE`
        assert_eq!(closest("device", scopes), ["Device"]);
    }

    #[test]
    fn paths_compare_within_their_module() {
        let b = BUILTINS.iter().copied();
        assert_eq!(
            closest("atomic::global_ad", b.clone()),
            ["atomic::global_add"]
        );
        assert_eq!(closest("atomic::load", b.clone()), ["atomic_load"]);
        assert_eq!(
            closest("atomic_global_add", b.clone()),
            ["atomic::global_add"]
        );
        assert_eq!(closest("global_add", b.clone()), ["atomic::global_add"]);
        // a name that is far from every name of its module is not compared with the whole path
        assert!(closest("atomic::globl_foo", b).is_empty());
    }

    #[test]
    fn help_lines() {
        assert_eq!(
            similar("a builtin", "laod_global", BUILTINS.iter().copied()).as_deref(),
            Some("a builtin with a similar name exists: `load_global`")
        );
        assert_eq!(
            help_line("a builtin", &["a".into(), "b".into(), "c".into()]).as_deref(),
            Some("a builtin with a similar name exists: `a`, `b` or `c`")
        );
        assert_eq!(similar("a builtin", "zzz", BUILTINS.iter().copied()), None);
        assert_eq!(
            dtype("u23").as_deref(),
            Some("an element type with a similar name exists: `u32`")
        );
    }
}
