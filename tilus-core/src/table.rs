//! The one table of what is legal for memory operations, and the PTX form of each legal one.
//!
//! Front end validation and PTX generation both read this module, so a combination the compiler
//! accepts is exactly a combination it knows how to print. Atomic read-modify-writes are rows
//! keyed by (op, element type) in [`RMW_ROWS`]; a row says which PTX instruction performs it,
//! whether a destination-less `red` exists, whether the tilus scatter form allows it, and the
//! oldest target that has it. Element types in memory come from [`crate::dtype`]'s table.
//!
//! Facts encoded here (checked against ptxas 13.0 / 12.8, see `shared/reference/README.md`):
//! * `red` exists for add/min/max/and/or/xor/inc/dec but not exch/cas, and accepts only
//!   `.relaxed` and `.release`;
//! * `exch`, `cas` and the bitwise ops take bit types (`.b16`/`.b32`/`.b64`); `min`/`max` take
//!   signed or unsigned types by the element's signedness; `inc`/`dec` are `.u32` only;
//! * float `add` exists for `f32`, `f64`, `f16` and `bf16` (the 16-bit ones `.noftz`); float
//!   `min`/`max` do not exist for `f32`/`f64` and are performed on the bit patterns
//!   ([`RmwHow::FloatMinMax`], see `crate::elem::rmw`); PTX has no 8-bit atomics and no
//!   16-bit ones but `cas.b16` (and the float adds), so the other 16-bit ops are `cas.b16`
//!   loops ([`RmwHow::CasLoop`]);
//! * `.cluster` scope needs `.target sm_90` (and PTX ISA 7.8);
//! * `ld` accepts `.relaxed`/`.acquire`, `st` accepts `.relaxed`/`.release`.

use crate::dtype::DType;
use crate::ir::{RmwOp, Scope, Sem, Space, Target};

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

/// How the back end performs a read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmwHow {
    /// One `atom`/`red` instruction `{ptx_op}.{ptx_type}` on the operand.
    Direct,
    /// `add` of the negated operand (PTX has no `atom.sub`).
    NegateAdd,
    /// Float `min`/`max` on the bit patterns, which orders them by IEEE `totalOrder`: for `max`,
    /// `atom.max.s{w}` when the operand's sign bit is clear and `atom.min.u{w}` when it is set
    /// (`min` the other way round).
    FloatMinMax,
    /// No instruction has it: a compare-and-swap loop on the element's bits (`atom.cas.b16`),
    /// computing the new value from the old one as `crate::elem::rmw` defines it (16-bit
    /// integer arithmetic, float `min`/`max` by IEEE `totalOrder`, `exch`). Each element is
    /// atomic like a single instruction; under contention the loop retries.
    CasLoop,
}

/// One row per legal (op, dtype).
#[derive(Debug, PartialEq, Eq)]
pub struct RmwRow {
    pub op: RmwOp,
    pub dtype: DType,
    pub how: RmwHow,
    /// PTX op name (`sub` is printed as `add`; for [`RmwHow::FloatMinMax`] the op of
    /// non-negative operands).
    pub ptx_op: &'static str,
    /// PTX type suffix, with `.noftz` where the form requires it (`noftz.f16`).
    pub ptx_type: &'static str,
    /// Whether PTX has a destination-less `red.{ptx_op}.{ptx_type}`.
    pub has_red: bool,
    /// Whether the tilus scatter form accepts it (defined under duplicate indices).
    pub scatter: bool,
    /// The oldest target with the instruction.
    pub min_target: Target,
    /// The most lanes of its vector form on global memory (`red/atom.global.add.v4.f32`,
    /// `.v8.bf16`: 16 bytes; sm_90, PTX ISA 8.1), 0 where PTX has none.
    pub vector_lanes: usize,
    /// Whether it also exists on pairs of elements as one 128-bit atomic (`atom.cas.b128`,
    /// `atom.exch.b128`: 64-bit elements, sm_90, PTX ISA 8.3).
    pub pairs: bool,
    /// The PTX type of its packed form on two adjacent 16-bit elements in one 32-bit word
    /// (`noftz.f16x2`: global and shared memory, every target the row has), `""` where PTX has
    /// none. Each element is still its own atomic; the pair is one instruction.
    pub packed: &'static str,
}

#[allow(clippy::too_many_arguments)]
const fn row(
    op: RmwOp,
    dtype: DType,
    how: RmwHow,
    ptx_op: &'static str,
    ptx_type: &'static str,
    has_red: bool,
    scatter: bool,
    sm: u32,
) -> RmwRow {
    RmwRow {
        op,
        dtype,
        how,
        ptx_op,
        ptx_type,
        has_red,
        scatter,
        min_target: Target(sm),
        vector_lanes: 0,
        pairs: false,
        packed: "",
    }
}

impl RmwRow {
    /// The row with a vector form of up to `lanes` lanes.
    const fn vector(self, lanes: usize) -> RmwRow {
        RmwRow {
            vector_lanes: lanes,
            ..self
        }
    }

    /// The row with a packed form of PTX type `ty` on two adjacent elements.
    const fn packed(self, ty: &'static str) -> RmwRow {
        RmwRow { packed: ty, ..self }
    }

    /// The row with a 128-bit form on element pairs.
    const fn pairs(self) -> RmwRow {
        RmwRow {
            pairs: true,
            ..self
        }
    }
}

use DType as D;
use RmwHow::*;
use RmwOp as O;

/// The legal (op, dtype) pairs.
///
/// Integer `add` is printed with the unsigned type: the bits of a wrapping add are the same,
/// and ptxas turns `red.shared.add.u32 [a], 1` into the warp-aggregated `ATOMS.POPC.INC` (the
/// `.s32` form becomes a plain `ATOMS.ADD`, several times slower when a warp hits one address:
/// a histogram of identical values). `min`/`max` keep the element's signedness.
#[rustfmt::skip]
pub const RMW_ROWS: &[RmwRow] = &[
    //  op      dtype    how          ptx op  ptx type       red   scatter sm
    row(O::Add,  D::I32, Direct,      "add",  "u32",         true,  true,  70),
    row(O::Sub,  D::I32, NegateAdd,   "add",  "u32",         true,  true,  70),
    row(O::Min,  D::I32, Direct,      "min",  "s32",         true,  true,  70),
    row(O::Max,  D::I32, Direct,      "max",  "s32",         true,  true,  70),
    row(O::Exch, D::I32, Direct,      "exch", "b32",         false, false, 70),
    row(O::Cas,  D::I32, Direct,      "cas",  "b32",         false, false, 70),
    row(O::And,  D::I32, Direct,      "and",  "b32",         true,  false, 70),
    row(O::Or,   D::I32, Direct,      "or",   "b32",         true,  false, 70),
    row(O::Xor,  D::I32, Direct,      "xor",  "b32",         true,  false, 70),

    row(O::Add,  D::U32, Direct,      "add",  "u32",         true,  true,  70),
    row(O::Sub,  D::U32, NegateAdd,   "add",  "u32",         true,  true,  70),
    row(O::Min,  D::U32, Direct,      "min",  "u32",         true,  true,  70),
    row(O::Max,  D::U32, Direct,      "max",  "u32",         true,  true,  70),
    row(O::Exch, D::U32, Direct,      "exch", "b32",         false, false, 70),
    row(O::Cas,  D::U32, Direct,      "cas",  "b32",         false, false, 70),
    row(O::And,  D::U32, Direct,      "and",  "b32",         true,  false, 70),
    row(O::Or,   D::U32, Direct,      "or",   "b32",         true,  false, 70),
    row(O::Xor,  D::U32, Direct,      "xor",  "b32",         true,  false, 70),
    row(O::Inc,  D::U32, Direct,      "inc",  "u32",         true,  false, 70),
    row(O::Dec,  D::U32, Direct,      "dec",  "u32",         true,  false, 70),

    row(O::Add,  D::I64, Direct,      "add",  "u64",         true,  true,  70),
    row(O::Sub,  D::I64, NegateAdd,   "add",  "u64",         true,  true,  70),
    row(O::Min,  D::I64, Direct,      "min",  "s64",         true,  true,  70),
    row(O::Max,  D::I64, Direct,      "max",  "s64",         true,  true,  70),
    row(O::Exch, D::I64, Direct,      "exch", "b64",         false, false, 70).pairs(),
    row(O::Cas,  D::I64, Direct,      "cas",  "b64",         false, false, 70).pairs(),
    row(O::And,  D::I64, Direct,      "and",  "b64",         true,  false, 70),
    row(O::Or,   D::I64, Direct,      "or",   "b64",         true,  false, 70),
    row(O::Xor,  D::I64, Direct,      "xor",  "b64",         true,  false, 70),

    row(O::Add,  D::U64, Direct,      "add",  "u64",         true,  true,  70),
    row(O::Sub,  D::U64, NegateAdd,   "add",  "u64",         true,  true,  70),
    row(O::Min,  D::U64, Direct,      "min",  "u64",         true,  true,  70),
    row(O::Max,  D::U64, Direct,      "max",  "u64",         true,  true,  70),
    row(O::Exch, D::U64, Direct,      "exch", "b64",         false, false, 70).pairs(),
    row(O::Cas,  D::U64, Direct,      "cas",  "b64",         false, false, 70).pairs(),
    row(O::And,  D::U64, Direct,      "and",  "b64",         true,  false, 70),
    row(O::Or,   D::U64, Direct,      "or",   "b64",         true,  false, 70),
    row(O::Xor,  D::U64, Direct,      "xor",  "b64",         true,  false, 70),

    row(O::Add,  D::F32, Direct,      "add",  "f32",         true,  true,  70).vector(4),
    row(O::Sub,  D::F32, NegateAdd,   "add",  "f32",         true,  true,  70).vector(4),
    row(O::Min,  D::F32, FloatMinMax, "min",  "s32",         true,  true,  70),
    row(O::Max,  D::F32, FloatMinMax, "max",  "s32",         true,  true,  70),
    row(O::Exch, D::F32, Direct,      "exch", "b32",         false, false, 70),
    row(O::Cas,  D::F32, Direct,      "cas",  "b32",         false, false, 70),

    row(O::Add,  D::F64, Direct,      "add",  "f64",         true,  true,  70),
    row(O::Sub,  D::F64, NegateAdd,   "add",  "f64",         true,  true,  70),
    row(O::Min,  D::F64, FloatMinMax, "min",  "s64",         true,  true,  70),
    row(O::Max,  D::F64, FloatMinMax, "max",  "s64",         true,  true,  70),
    row(O::Exch, D::F64, Direct,      "exch", "b64",         false, false, 70).pairs(),
    row(O::Cas,  D::F64, Direct,      "cas",  "b64",         false, false, 70).pairs(),

    row(O::Add,  D::F16, Direct,      "add",  "noftz.f16",   true,  true,  70).vector(8).packed("noftz.f16x2"),
    row(O::Sub,  D::F16, NegateAdd,   "add",  "noftz.f16",   true,  true,  70).vector(8).packed("noftz.f16x2"),
    row(O::Cas,  D::F16, Direct,      "cas",  "b16",         false, false, 70),
    row(O::Min,  D::F16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Max,  D::F16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Exch, D::F16, CasLoop,     "cas",  "b16",         false, false, 70),

    row(O::Add,  D::BF16, Direct,     "add",  "noftz.bf16",  true,  true,  90).vector(8).packed("noftz.bf16x2"),
    row(O::Sub,  D::BF16, NegateAdd,  "add",  "noftz.bf16",  true,  true,  90).vector(8).packed("noftz.bf16x2"),
    row(O::Cas,  D::BF16, Direct,     "cas",  "b16",         false, false, 70),
    row(O::Min,  D::BF16, CasLoop,    "cas",  "b16",         false, true,  70),
    row(O::Max,  D::BF16, CasLoop,    "cas",  "b16",         false, true,  70),
    row(O::Exch, D::BF16, CasLoop,    "cas",  "b16",         false, false, 70),

    row(O::Add,  D::I16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Sub,  D::I16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Min,  D::I16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Max,  D::I16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Exch, D::I16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Cas,  D::I16, Direct,      "cas",  "b16",         false, false, 70),
    row(O::And,  D::I16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Or,   D::I16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Xor,  D::I16, CasLoop,     "cas",  "b16",         false, false, 70),

    row(O::Add,  D::U16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Sub,  D::U16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Min,  D::U16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Max,  D::U16, CasLoop,     "cas",  "b16",         false, true,  70),
    row(O::Exch, D::U16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Cas,  D::U16, Direct,      "cas",  "b16",         false, false, 70),
    row(O::And,  D::U16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Or,   D::U16, CasLoop,     "cas",  "b16",         false, false, 70),
    row(O::Xor,  D::U16, CasLoop,     "cas",  "b16",         false, false, 70),
];

/// The PTX type of plain and atomic `ld`/`st` of `dtype` (every type can live in memory).
pub fn access_type(dtype: DType) -> Option<&'static str> {
    Some(dtype.info().mem)
}

/// A rejected combination, with the reason and, where there is one, what to use instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Illegal {
    pub message: String,
    pub help: Option<String>,
    /// Which part of the call is wrong (where the front end points).
    pub about: Culprit,
}

/// The part of an atomic call a rejection is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Culprit {
    /// The operation on this element type (or its form, or the target it needs): the call.
    Call,
    /// The memory order (`sem = ..`).
    Order,
    /// The scope (`scope = ..`).
    Scope,
}

fn illegal(about: Culprit, message: impl Into<String>, help: Option<&str>) -> Illegal {
    Illegal {
        message: message.into(),
        help: help.map(str::to_string),
        about,
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
            Culprit::Scope,
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

/// Why PTX cannot do `op` atomically on `dtype`, and what to do instead.
fn missing_rmw(op: RmwOp, dtype: DType) -> Illegal {
    let what = format!(
        "atomic `{}` is not supported on `{dtype}` elements",
        op.name()
    );
    let help = match (op, dtype.class()) {
        (_, crate::dtype::Class::Bool) => {
            "PTX has no atomics on `bool`: keep flags in an integer tensor (`u32`) and use `atomic_or`/`atomic_and`".to_string()
        }
        (RmwOp::Inc | RmwOp::Dec, _) => format!(
            "PTX has `atom.{}` only for `u32`: use a `u32` tensor, or `add`/`sub` with a wrap of your own",
            op.name()
        ),
        (_, _) if dtype.size_bytes() == 1 => {
            "PTX has no 8-bit atomics: accumulate in a 32-bit tensor (`u32`/`i32`) and convert with `as`".into()
        }
        (RmwOp::And | RmwOp::Or | RmwOp::Xor, crate::dtype::Class::Float) => {
            "bitwise atomics take integer types: use an integer tensor of the same width (`u16`, `u32` or `u64`)".into()
        }
        _ => "see the table in `tilus::lang::atomic` for the supported combinations".into(),
    };
    Illegal {
        message: what,
        help: Some(help),
        about: Culprit::Call,
    }
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
        return Err(missing_rmw(op, dtype));
    };
    if form == RmwForm::Scatter && !row.scatter {
        let help = match op {
            RmwOp::Exch => Some("for collision-free indices use the non-atomic `store_shared_scatter` / `store_global_scatter`, or the element-wise `atomic::shared_exch` / `atomic::global_exch`"),
            RmwOp::Cas => Some("use the element-wise `atomic::shared_cas` / `atomic::global_cas`, or the indexed `atomic_cas(array, indices, expected, desired)`, whose per-element result says which update won"),
            _ => Some("use the indexed form (`atomic_and(array, indices, update)` and the like), whose per-element results say what each update saw"),
        };
        return Err(illegal(
            Culprit::Call,
            format!(
                "scatter `{}` is not provided: its result is undefined when indices repeat (which element wins depends on timing)",
                op.name()
            ),
            help,
        ));
    }
    check_scope(scope, target)?;
    if let Some(t) = target {
        if t < row.min_target {
            return Err(illegal(
                Culprit::Call,
                format!(
                    "atomic `{}` on `{dtype}` needs target sm_{} or newer, but this kernel targets sm_{}",
                    op.name(),
                    row.min_target.0,
                    t.0
                ),
                Some("remove the explicit `target` (the kernel's target is raised as needed) or raise it"),
            ));
        }
    }
    Ok(row)
}

/// The oldest target and PTX ISA version (times 10) with vector RMWs.
pub const VECTOR_RMW_TARGET: Target = Target::SM_90;
pub const VECTOR_RMW_PTX: u32 = 81;

/// The most lanes of a vector RMW of `row` on global memory for `target` (`None`: scalar only).
pub fn vector_rmw_lanes(row: &RmwRow, target: Target) -> Option<usize> {
    (target >= VECTOR_RMW_TARGET && row.vector_lanes > 1).then_some(row.vector_lanes)
}

/// The vector form of `row`'s instruction with `lanes` lanes (see [`rmw_ptx`]):
/// `red.relaxed.gpu.global.add.noftz.v8.bf16`.
pub fn rmw_vector_ptx(
    row: &RmwRow,
    lanes: usize,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    let ty = match row.ptx_type.rsplit_once('.') {
        Some((prefix, scalar)) => format!("{prefix}.v{lanes}.{scalar}"),
        None => format!("v{lanes}.{}", row.ptx_type),
    };
    rmw_text(
        row.ptx_op,
        &ty,
        row.has_red,
        "global",
        sem,
        scope,
        with_output,
    )
}

/// The oldest target with 128-bit atomics.
pub const PAIR_RMW_TARGET: Target = Target::SM_90;

/// The oldest PTX ISA version (times 10) with a 128-bit atomic of `scope`: 8.3, but 8.4 for
/// `.sys` (ptxas 13.0: "Feature '.b128 with .sys' requires PTX ISA .version 8.4").
pub fn pair_rmw_ptx(scope: Scope) -> u32 {
    match scope {
        Scope::Sys => 84,
        _ => 83,
    }
}

/// Validate a 128-bit RMW on element pairs (`atomic::global_cas128` and the like).
pub fn check_pair_rmw(
    op: RmwOp,
    dtype: DType,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static RmwRow, Illegal> {
    let row = rmw_row(op, dtype).filter(|r| r.pairs).ok_or_else(|| {
        let help = if dtype.bits() == 64 {
            "128-bit atomics are `cas` and `exch` only"
        } else {
            "a 128-bit atomic works on pairs of 64-bit elements: use an `i64`, `u64` or `f64` tensor"
        };
        illegal(
            Culprit::Call,
            format!("128-bit atomic `{}` is not supported on `{dtype}` elements", op.name()),
            Some(help),
        )
    })?;
    check_scope(scope, target)?;
    match target {
        Some(t) if t < PAIR_RMW_TARGET => Err(illegal(
            Culprit::Call,
            format!(
                "128-bit atomics need target sm_{} or newer, but this kernel targets sm_{}",
                PAIR_RMW_TARGET.0, t.0
            ),
            Some("remove the explicit `target` (the kernel's target is raised as needed) or raise it to 90"),
        )),
        _ => Ok(row),
    }
}

/// The 128-bit instruction of a pair RMW of `row` (there is no `red` form):
/// `atom.relaxed.gpu.global.cas.b128`.
pub fn rmw_pair_ptx(row: &RmwRow, space: &str, sem: Sem, scope: Scope) -> String {
    rmw_text(row.ptx_op, "b128", false, space, sem, scope, true).0
}

/// The packed form of `row`'s instruction on two 16-bit elements in one 32-bit word (see
/// [`rmw_ptx`]): `red.relaxed.cta.shared.add.noftz.f16x2`.
pub fn rmw_packed_ptx(
    row: &RmwRow,
    space: &str,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    rmw_text(
        row.ptx_op,
        row.packed,
        row.has_red,
        space,
        sem,
        scope,
        with_output,
    )
}

/// The PTX instruction (without operands) for an RMW of `row`, and whether it is the `red`
/// form. For [`RmwHow::FloatMinMax`] it is the instruction for operands with a clear sign bit;
/// [`float_minmax_negative`] gives the other.
///
/// `space` is the PTX state space (`global`, `shared`, `shared::cluster`: [`Space::ptx`] or a
/// distributed shared tensor's). `with_output` says whether the result is used; without it the `red` form is chosen where
/// PTX has one for this op and sem, otherwise `atom` with a discarded destination.
pub fn rmw_ptx(
    row: &RmwRow,
    space: &str,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    rmw_text(
        row.ptx_op,
        row.ptx_type,
        row.has_red,
        space,
        sem,
        scope,
        with_output,
    )
}

/// The instruction a [`RmwHow::FloatMinMax`] row uses for operands with the sign bit set:
/// unsigned `min` for `max` and unsigned `max` for `min`, on the same width.
pub fn float_minmax_negative(
    row: &RmwRow,
    space: &str,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    let op = if row.op == RmwOp::Max { "min" } else { "max" };
    let ty = if row.ptx_type.ends_with("64") {
        "u64"
    } else {
        "u32"
    };
    rmw_text(op, ty, row.has_red, space, sem, scope, with_output)
}

fn rmw_text(
    op: &str,
    ty: &str,
    has_red: bool,
    space: &str,
    sem: Sem,
    scope: Scope,
    with_output: bool,
) -> (String, bool) {
    let red = !with_output && has_red && matches!(sem, Sem::Relaxed | Sem::Release);
    let instr = if red { "red" } else { "atom" };
    // `.noftz` goes after the op: `atom.global.add.noftz.f16`.
    (
        format!("{instr}.{}.{}.{space}.{op}.{ty}", sem.ptx(), scope.ptx()),
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
    check_atomic_access(AccessKind::Load, dtype, sem, scope, target)
}

/// Validate an atomic store (`st.{sem}.{scope}`).
pub fn check_atomic_store(
    dtype: DType,
    sem: Sem,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static str, Illegal> {
    check_atomic_access(AccessKind::Store, dtype, sem, scope, target)
}

/// The two atomic accesses that are not read-modify-writes.
#[derive(Clone, Copy)]
enum AccessKind {
    Load,
    Store,
}

impl AccessKind {
    /// What the access is called, the order component it has no use for (a load publishes
    /// nothing, a store observes nothing), and what to write instead.
    fn facts(self) -> (&'static str, &'static str, &'static str) {
        match self {
            AccessKind::Load => (
                "load",
                "release",
                "use `Acquire` to order the block's later accesses after the load, or `Relaxed`",
            ),
            AccessKind::Store => (
                "store",
                "acquire",
                "use `Release` to publish the block's earlier writes with the store, or `Relaxed`",
            ),
        }
    }
}

/// The PTX type of an atomic load or store, or why it is illegal.
fn check_atomic_access(
    kind: AccessKind,
    dtype: DType,
    sem: Sem,
    scope: Scope,
    target: Option<Target>,
) -> Result<&'static str, Illegal> {
    let (access, missing, hint) = kind.facts();
    let ty = access_type(dtype).ok_or_else(|| {
        illegal(
            Culprit::Call,
            format!("atomic {access} of `{}` is not supported", dtype.name()),
            None,
        )
    })?;
    let has_missing = match kind {
        AccessKind::Load => sem.has_release(),
        AccessKind::Store => sem.has_acquire(),
    };
    if has_missing {
        return Err(illegal(
            Culprit::Order,
            format!(
                "an atomic {access} cannot have `{}` order: a {access} has no {missing} component",
                sem.ptx()
            ),
            Some(hint),
        ));
    }
    check_scope(scope, target)?;
    Ok(ty)
}

/// Validate a fence.
pub fn check_fence(sem: Sem, scope: Scope, target: Option<Target>) -> Result<String, Illegal> {
    if sem == Sem::Relaxed {
        return Err(illegal(
            Culprit::Order,
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
                let (text, red) = rmw_ptx(row, Space::Global.ptx(), sem, Scope::Gpu, false);
                let expect_red = row.has_red && matches!(sem, Sem::Relaxed | Sem::Release);
                assert_eq!(red, expect_red, "{text}");
                assert_eq!(text.starts_with("red."), expect_red, "{text}");
                if matches!(row.op, RmwOp::Exch | RmwOp::Cas) {
                    assert!(!red);
                }
                let (text, red) = rmw_ptx(row, Space::Shared.ptx(), sem, Scope::Cta, true);
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
