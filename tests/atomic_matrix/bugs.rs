//! Known compiler bugs the matrix finds, each with the cells it affects. The matrix test expects
//! every affected cell to still fail its check and fails when one passes (the bug is fixed: delete
//! its entry), so this list cannot go stale silently.

use super::model::{is_rmw, Combo};
use super::oracle::Reason;

pub struct KnownBug {
    pub id: &'static str,
    /// What is wrong, and a minimal kernel that shows it.
    pub what: &'static str,
    /// The cells the bug affects (the check of these cells is expected to fail).
    pub applies: fn(&Combo, &[Reason]) -> bool,
}

pub const KNOWN_BUGS: &[KnownBug] = &[
    KnownBug {
        id: "cluster-scope-moves-rmw-error-span",
        what: "With `scope = \"cluster\"`, an error about the op or element type of an atomic \
           (no such atomic on the type, no scatter form of the op) is reported \
           at the `sem = ..` argument (or at `scope = ..` when the explicit target is also \
           below sm_90) instead of at the call: `rmw_qualifiers` in lower/atomics.rs picks \
           `qualifier_span` for every `check_rmw` error whenever the scope is cluster. Minimal: \
           `let s = shared_tensor(bool, [32]); atomic::shared_or(s, values = v, sem = relaxed, \
           scope = \"cluster\");` underlines `relaxed` for \"atomic `or` is not supported on \
           `bool` elements\".",
        applies: |c, reasons| {
            let op_error = reasons
                .iter()
                .any(|r| matches!(r, Reason::NoInstruction | Reason::ScatterOp));
            // Without an explicit `sem` and with the scope legal, the fallback is the call.
            let moved = c.sem.is_some() || reasons.contains(&Reason::ClusterTarget);
            is_rmw(c.op) && c.scope == Some("cluster") && op_error && moved
        },
    },
    KnownBug {
        id: "cluster-scope-moves-load-store-order-error-span",
        what: "The same span choice for `atomic_load` / `atomic_store` (lower/atomics.rs, \
           `indexed_load` / `indexed_store`): with `scope = \"cluster\"` and an explicit target \
           below sm_90, an order the access cannot have is reported, with the order's message, \
           at `scope = ..` instead of at `sem = ..`. Minimal: `#[tile_kernel(threads = 128, \
           target = 80)] fn k(x: GlobalTensor<i32>) { let v = atomic_load(x, 0, sem = release, \
           scope = \"cluster\"); }` underlines `\"cluster\"` for \"an atomic load cannot have \
           `release` order\".",
        applies: |c, reasons| {
            !is_rmw(c.op)
                && reasons.contains(&Reason::Order)
                && reasons.contains(&Reason::ClusterTarget)
        },
    },
];

/// The known bug that covers `c`, if any.
pub fn known(c: &Combo, reasons: &[Reason]) -> Option<usize> {
    KNOWN_BUGS.iter().position(|b| (b.applies)(c, reasons))
}
