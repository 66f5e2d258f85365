//! The one table of what is legal for memory operations, and the PTX form of each legal one.
//!
//! Front end validation and PTX generation both read this module, so a combination the compiler
//! accepts is exactly a combination it knows how to print. Adding a dtype (u32, f32) means adding
//! rows to [`RMW_ROWS`] and [`ACCESS_ROWS`]; nothing else consults dtypes for legality.
//!
//! Facts encoded here (checked against ptxas 13.0, see `shared/reference/README.md`):
//! * `red` exists for add/min/max/and/or/xor but not exch/cas, and accepts only `.relaxed` and
//!   `.release`;
//! * `exch`, `cas` and the bitwise ops take bit types (`.b32`); `min`/`max` take signed types for
//!   i32 (`.s32`);
//! * `.cluster` scope needs `.target sm_90` (and PTX ISA 7.8);
//! * `ld` accepts `.relaxed`/`.acquire`, `st` accepts `.relaxed`/`.release`.

use crate::ir::{DType, RmwOp, Scope, Sem, Space, Target};

/// How an RMW's destination addresses are formed, which decides which ops are meaningful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RmwForm {
    /// tilus element-wise: one distinct address per element.
    Elementwise,
    /// tilus scatter (`dim` + `indices`): duplicates expected, so only order-insensitive ops.
    Scatter,
    /// cuTile indexed atomics (`atomic_add(array, indices, ...)`): every op, by the user's choice.
    Indexed,
}

/// One row per legal (op, dtype): the PTX op and type suffix, whether `red` has the op, and
/// whether tilus scatter forms allow it.
#[derive(Debug, PartialEq, Eq)]
pub struct RmwRow {
    pub op: RmwOp,
    pub dtype: DType,
    /// PTX op name (`sub` is printed as `add` of the negated operand).
    pub ptx_op: &'static str,
    pub ptx_type: &'static str,
    /// Whether PTX has a destination-less `red.{ptx_op}.{ptx_type}`.
    pub has_red: bool,
    /// Whether the tilus scatter form accepts it (defined under duplicate indices).
    pub scatter: bool,
}

const fn row(
    op: RmwOp,
    ptx_op: &'static str,
    ptx_type: &'static str,
    has_red: bool,
    scatter: bool,
) -> RmwRow {
    RmwRow {
        op,
        dtype: DType::I32,
        ptx_op,
        ptx_type,
        has_red,
        scatter,
    }
}

/// The legal (op, dtype) pairs.
///
/// i32 `add` is printed with the `.u32` type: the bits of a wrapping add are the same, and ptxas
/// turns `red.shared.add.u32 [a], 1` into the warp-aggregated `ATOMS.POPC.INC` (the `.s32` form
/// becomes a plain `ATOMS.ADD`, several times slower when a warp hits one address: a histogram
/// of identical values). `min`/`max` must stay signed.
pub const RMW_ROWS: &[RmwRow] = &[
    row(RmwOp::Add, "add", "u32", true, true),
    row(RmwOp::Sub, "add", "u32", true, true),
    row(RmwOp::Min, "min", "s32", true, true),
    row(RmwOp::Max, "max", "s32", true, true),
    row(RmwOp::Exch, "exch", "b32", false, false),
    row(RmwOp::Cas, "cas", "b32", false, false),
    row(RmwOp::And, "and", "b32", true, false),
    row(RmwOp::Or, "or", "b32", true, false),
    row(RmwOp::Xor, "xor", "b32", true, false),
];

/// (dtype, PTX type for plain and atomic `ld`/`st`).
pub const ACCESS_ROWS: &[(DType, &str)] = &[(DType::I32, "s32")];

/// The PTX type used to load/store `dtype`, if it can live in memory.
pub fn access_type(dtype: DType) -> Option<&'static str> {
    ACCESS_ROWS
        .iter()
        .find(|(d, _)| *d == dtype)
        .map(|(_, t)| *t)
}

/// A rejected combination, with the reason and, where there is one, what to use instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Illegal {
    pub message: String,
    pub help: Option<String>,
}

fn illegal(message: impl Into<String>, help: Option<&str>) -> Illegal {
    Illegal {
        message: message.into(),
        help: help.map(str::to_string),
    }
}

/// The minimum target a scope needs.
pub fn scope_min_target(scope: Scope) -> Target {
    match scope {
        Scope::Cluster => Target::SM_90,
        _ => Target::DEFAULT,
    }
}

fn check_scope(scope: Scope, target: Option<Target>) -> Result<(), Illegal> {
    let need = scope_min_target(scope);
    match target {
        Some(t) if t < need => Err(illegal(
            format!(
                "scope `{}` needs target sm_{} or newer, but this kernel targets sm_{}",
                scope.ptx(),
                need.0,
                t.0
            ),
            Some("remove the explicit `target` or raise it to 90"),
        )),
        _ => Ok(()),
    }
}

/// Look up the (op, dtype) row.
pub fn rmw_row(op: RmwOp, dtype: DType) -> Option<&'static RmwRow> {
    RMW_ROWS.iter().find(|r| r.op == op && r.dtype == dtype)
}

/// Validate an atomic read-modify-write. `target` is the user's explicit target, if any.
pub fn check_rmw(
    op: RmwOp,
    dtype: DType,
    form: RmwForm,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static RmwRow, Illegal> {
    let Some(row) = rmw_row(op, dtype) else {
        return Err(illegal(
            format!(
                "atomic `{}` is not supported on `{}` elements",
                op.name(),
                dtype.name()
            ),
            Some("this version supports atomics on i32 only"),
        ));
    };
    if form == RmwForm::Scatter && !row.scatter {
        let help = match op {
            RmwOp::Exch => Some("for collision-free indices use the non-atomic `store_shared_scatter` / `store_global_scatter`, or the element-wise `atomic::shared_exch` / `atomic::global_exch`"),
            RmwOp::Cas => Some("use the element-wise `atomic::shared_cas` / `atomic::global_cas`, or the indexed `atomic_cas(array, indices, expected, desired)`, whose per-element result says which update won"),
            _ => None,
        };
        return Err(illegal(
            format!(
                "scatter `{}` is not provided: its result is undefined when indices repeat (which element wins depends on timing)",
                op.name()
            ),
            help,
        ));
    }
    check_scope(scope, target)?;
    Ok(row)
}

/// The PTX instruction (without operands) for an RMW, and whether it is the `red` form.
///
/// `with_output` says whether the result is used; without it the `red` form is chosen where
/// PTX has one for this op and sem, otherwise `atom` with a discarded destination.
pub fn rmw_ptx(
    row: &RmwRow,
    space: Space,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    let red = !with_output && row.has_red && matches!(sem, Sem::Relaxed | Sem::Release);
    let space = match space {
        Space::Shared => "shared",
        Space::Global => "global",
    };
    let instr = if red { "red" } else { "atom" };
    (
        format!(
            "{instr}.{}.{}.{space}.{}.{}",
            sem.ptx(),
            scope.ptx(),
            row.ptx_op,
            row.ptx_type
        ),
        red,
    )
}

/// Validate an atomic load (`ld.{sem}.{scope}`).
pub fn check_atomic_load(
    dtype: DType,
    sem: Sem,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static str, Illegal> {
    let ty = access_type(dtype).ok_or_else(|| {
        illegal(
            format!("atomic load of `{}` is not supported", dtype.name()),
            None,
        )
    })?;
    if sem.has_release() {
        return Err(illegal(
            format!(
                "an atomic load cannot have `{}` order: a load has no release component",
                sem.ptx()
            ),
            Some("use `Acquire` to order the block's later accesses after the load, or `Relaxed`"),
        ));
    }
    check_scope(scope, target)?;
    Ok(ty)
}

/// Validate an atomic store (`st.{sem}.{scope}`).
pub fn check_atomic_store(
    dtype: DType,
    sem: Sem,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static str, Illegal> {
    let ty = access_type(dtype).ok_or_else(|| {
        illegal(
            format!("atomic store of `{}` is not supported", dtype.name()),
            None,
        )
    })?;
    if sem.has_acquire() {
        return Err(illegal(
            format!(
                "an atomic store cannot have `{}` order: a store has no acquire component",
                sem.ptx()
            ),
            Some(
                "use `Release` to publish the block's earlier writes with the store, or `Relaxed`",
            ),
        ));
    }
    check_scope(scope, target)?;
    Ok(ty)
}

/// Validate a fence.
pub fn check_fence(sem: Sem, scope: Scope, target: Option<Target>) -> Result<String, Illegal> {
    if sem == Sem::Relaxed {
        return Err(illegal(
            "a fence cannot be `relaxed`: a relaxed fence orders nothing",
            Some("use `AcqRel` (or `Acquire` / `Release`)"),
        ));
    }
    check_scope(scope, target)?;
    // PTX fences are `fence.acq_rel` or `fence.sc`; acquire and release fences are acq_rel ones.
    Ok(format!("fence.acq_rel.{}", scope.ptx()))
}

/// The default scope of an operation on `space` when the user names none (tilus convention).
pub fn default_scope(space: Space) -> Scope {
    match space {
        Space::Shared => Scope::Cta,
        Space::Global => Scope::Gpu,
    }
}

/// Names accepted for orders: tilus's `sem` strings and cuTile's `MemoryOrder` variants.
pub const SEM_NAMES: &[(&str, Sem)] = &[
    ("relaxed", Sem::Relaxed),
    ("acquire", Sem::Acquire),
    ("release", Sem::Release),
    ("acq_rel", Sem::AcqRel),
    ("Relaxed", Sem::Relaxed),
    ("Acquire", Sem::Acquire),
    ("Release", Sem::Release),
    ("AcqRel", Sem::AcqRel),
    ("RELAXED", Sem::Relaxed),
    ("ACQUIRE", Sem::Acquire),
    ("RELEASE", Sem::Release),
    ("ACQ_REL", Sem::AcqRel),
];

/// Names accepted for scopes: tilus's `scope` strings and cuTile's `MemoryScope` variants
/// (Block = cta, Device = gpu, Sys = sys).
pub const SCOPE_NAMES: &[(&str, Scope)] = &[
    ("cta", Scope::Cta),
    ("cluster", Scope::Cluster),
    ("gpu", Scope::Gpu),
    ("sys", Scope::Sys),
    ("Block", Scope::Cta),
    ("Cluster", Scope::Cluster),
    ("Device", Scope::Gpu),
    ("Sys", Scope::Sys),
    ("BLOCK", Scope::Cta),
    ("CLUSTER", Scope::Cluster),
    ("DEVICE", Scope::Gpu),
    ("SYS", Scope::Sys),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_only_for_relaxed_and_release_and_never_exch_cas() {
        for row in RMW_ROWS {
            for sem in Sem::ALL {
                let (text, red) = rmw_ptx(row, Space::Global, sem, Scope::Gpu, false);
                let expect_red = row.has_red && matches!(sem, Sem::Relaxed | Sem::Release);
                assert_eq!(red, expect_red, "{text}");
                assert_eq!(text.starts_with("red."), expect_red, "{text}");
                if matches!(row.op, RmwOp::Exch | RmwOp::Cas) {
                    assert!(!red);
                }
                let (text, red) = rmw_ptx(row, Space::Shared, sem, Scope::Cta, true);
                assert!(!red && text.starts_with("atom."), "{text}");
            }
        }
    }

    #[test]
    fn scatter_rejects_exch_and_cas_with_help() {
        for op in [RmwOp::Exch, RmwOp::Cas] {
            let e = check_rmw(op, DType::I32, RmwForm::Scatter, Scope::Cta, None).unwrap_err();
            assert!(e.message.contains("undefined"), "{}", e.message);
            assert!(e.help.is_some());
        }
        assert!(check_rmw(
            RmwOp::Cas,
            DType::I32,
            RmwForm::Elementwise,
            Scope::Cta,
            None
        )
        .is_ok());
        assert!(check_rmw(RmwOp::Cas, DType::I32, RmwForm::Indexed, Scope::Gpu, None).is_ok());
    }

    #[test]
    fn cluster_needs_sm90() {
        assert!(check_rmw(
            RmwOp::Add,
            DType::I32,
            RmwForm::Elementwise,
            Scope::Cluster,
            Some(Target(80))
        )
        .is_err());
        assert!(check_rmw(
            RmwOp::Add,
            DType::I32,
            RmwForm::Elementwise,
            Scope::Cluster,
            Some(Target(90))
        )
        .is_ok());
        assert!(check_rmw(
            RmwOp::Add,
            DType::I32,
            RmwForm::Elementwise,
            Scope::Cluster,
            None
        )
        .is_ok());
    }

    #[test]
    fn load_store_orders() {
        assert!(check_atomic_load(DType::I32, Sem::Acquire, Scope::Gpu, None).is_ok());
        assert!(check_atomic_load(DType::I32, Sem::Release, Scope::Gpu, None).is_err());
        assert!(check_atomic_load(DType::I32, Sem::AcqRel, Scope::Gpu, None).is_err());
        assert!(check_atomic_store(DType::I32, Sem::Release, Scope::Gpu, None).is_ok());
        assert!(check_atomic_store(DType::I32, Sem::Acquire, Scope::Gpu, None).is_err());
        assert!(check_fence(Sem::Relaxed, Scope::Gpu, None).is_err());
    }

    #[test]
    fn bool_has_no_atomics() {
        assert!(check_rmw(
            RmwOp::Add,
            DType::Bool,
            RmwForm::Elementwise,
            Scope::Cta,
            None
        )
        .is_err());
    }
}
