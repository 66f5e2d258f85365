//! Known compiler bugs the matrix finds, each with the cells it affects. The matrix test expects
//! every affected cell to still fail its check and fails when one passes (the bug is fixed: delete
//! its entry), so this list cannot go stale silently.

use super::model::Combo;
use super::oracle::Reason;

pub struct KnownBug {
    pub id: &'static str,
    /// What is wrong, and a minimal kernel that shows it.
    pub what: &'static str,
    /// The cells the bug affects (the check of these cells is expected to fail).
    pub applies: fn(&Combo, &[Reason]) -> bool,
}

pub const KNOWN_BUGS: &[KnownBug] = &[
    // None known: the two span bugs of cluster-scoped atomics were fixed by pointing every
    // rejection at the argument it is about (`table::Culprit`).
];

/// The known bug that covers `c`, if any.
pub fn known(c: &Combo, reasons: &[Reason]) -> Option<usize> {
    KNOWN_BUGS.iter().position(|b| (b.applies)(c, reasons))
}
