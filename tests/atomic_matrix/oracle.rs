//! The oracle: what the compiler must do with each [`Combo`], written from the specifications,
//! not from the compiler's legality table (`tilus_core::table`), so that a wrong row there shows
//! up here. Sources:
//!
//! * PTX `atom`/`red` (`shared/reference/003`, and the ptxas-verified facts of the project's
//!   PTX report): scalar `atom` types; `add` on `.u32 .s32 .u64 .f32 .f64` and `.noftz`
//!   `.f16` / `.bf16` (bf16 on sm_90 only); **no `add.s64`** (a wrapping `i64` add is the `.u64`
//!   add of the same bits); `min`/`max` on `.u32 .s32 .u64 .s64` only (no scalar float or 16-bit
//!   form); `exch`, `and`, `or`, `xor` on `.b32 .b64`; `cas` on `.b16 .b32 .b64`; `inc`/`dec`
//!   on `.u32` only; no 8-bit atomics; `red` has no `exch`/`cas` and takes only `.relaxed` and
//!   `.release`; `.cluster` scope needs sm_90.
//! * The language (issue 8, `src/lang`): float `min`/`max` of `f32`/`f64` are provided through
//!   the integer order of the bit patterns (IEEE totalOrder): `max` is `atom.max.s{w}` for an
//!   operand with a clear sign bit and `atom.min.u{w}` for one with the sign bit set (`min` the
//!   other way round); bitwise ops are integer-only (no `and` on floats, none on `bool`); `sub`
//!   is an `add` of the negated operand; the 16-bit ops PTX has no instruction for (`i16`/`u16`
//!   add, sub, min, max, exch, and, or, xor; `f16`/`bf16` min, max, exch) are `atom.cas.b16`
//!   loops, so their only RMW instruction is that `cas` (never `red`).
//! * tilus (`shared/reference/000`): the scatter family is `add`/`sub`/`min`/`max` only (`exch`
//!   and `cas` are undefined under duplicate indices); element-wise has every op; `sem` defaults
//!   to relaxed, `scope` to `cta` on shared and `gpu` on global; a result nobody reads becomes
//!   `red` where PTX has it.
//! * cuTile (`shared/reference/002`, `004`): indexed RMWs default to `ACQ_REL` at `DEVICE`
//!   scope and must not be `ACQUIRE` or `RELEASE` ("common mistake 3"); the project documents
//!   (`src/lang/memory_model.rs`) `atomic_load` as relaxed/acquire (default acquire),
//!   `atomic_store` as relaxed/release (default release), and `Block` as the default scope of a
//!   shared array.

use super::model::{is_rmw, Combo, Form, Space};
use tilus::core::dtype::DType;

/// How PTX performs an RMW of (op, dtype) at all (independent of form, space, sem, scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lowering {
    /// One instruction `{op}.{type}`, `type` one of the accepted suffixes.
    Direct {
        ptx_op: &'static str,
        types: &'static [&'static str],
    },
    /// Float min/max on the bit patterns: `pos` for operands with a clear sign bit, `neg` for
    /// the others (both `{op}.{type}` strings).
    FloatOrder {
        pos: &'static str,
        neg: &'static str,
    },
    /// A loop of `atom.cas.b16` computing the new value (the 16-bit ops with no instruction).
    CasLoop,
}

/// The PTX lowering of an RMW `op` on `d`, or `None` where PTX (and the language) has none.
pub fn lowering(op: &str, d: DType) -> Option<Lowering> {
    use DType::*;
    let direct = |ptx_op, types| Some(Lowering::Direct { ptx_op, types });
    match (op, d) {
        // 32-bit integer add: the signed and unsigned forms are the same bits.
        ("add" | "sub", I32 | U32) => direct("add", &["u32", "s32"]),
        // No `atom.add.s64`: the unsigned form is the wrapping add of the same bits.
        ("add" | "sub", I64 | U64) => direct("add", &["u64"]),
        ("add" | "sub", F32) => direct("add", &["f32"]),
        ("add" | "sub", F64) => direct("add", &["f64"]),
        // `.noftz` is required on 16-bit float adds.
        ("add" | "sub", F16) => direct("add", &["noftz.f16"]),
        ("add" | "sub", BF16) => direct("add", &["noftz.bf16"]),
        ("min" | "max", I32) => direct(op_static(op), &["s32"]),
        ("min" | "max", U32) => direct(op_static(op), &["u32"]),
        ("min" | "max", I64) => direct(op_static(op), &["s64"]),
        ("min" | "max", U64) => direct(op_static(op), &["u64"]),
        ("max", F32) => Some(Lowering::FloatOrder {
            pos: "max.s32",
            neg: "min.u32",
        }),
        ("min", F32) => Some(Lowering::FloatOrder {
            pos: "min.s32",
            neg: "max.u32",
        }),
        ("max", F64) => Some(Lowering::FloatOrder {
            pos: "max.s64",
            neg: "min.u64",
        }),
        ("min", F64) => Some(Lowering::FloatOrder {
            pos: "min.s64",
            neg: "max.u64",
        }),
        ("exch", I32 | U32 | F32) => direct("exch", &["b32"]),
        ("exch", I64 | U64 | F64) => direct("exch", &["b64"]),
        ("cas", I16 | U16 | F16 | BF16) => direct("cas", &["b16"]),
        ("cas", I32 | U32 | F32) => direct("cas", &["b32"]),
        ("cas", I64 | U64 | F64) => direct("cas", &["b64"]),
        ("and" | "or" | "xor", I32 | U32) => direct(op_static(op), &["b32"]),
        ("and" | "or" | "xor", I64 | U64) => direct(op_static(op), &["b64"]),
        ("inc" | "dec", U32) => direct(op_static(op), &["u32"]),
        ("add" | "sub" | "min" | "max" | "exch" | "and" | "or" | "xor", I16 | U16) => {
            Some(Lowering::CasLoop)
        }
        ("min" | "max" | "exch", F16 | BF16) => Some(Lowering::CasLoop),
        _ => None,
    }
}

fn op_static(op: &str) -> &'static str {
    super::model::OPS
        .iter()
        .find(|o| **o == op)
        .expect("a known op")
}

/// The oldest target with the (op, dtype) instruction.
pub fn min_target(op: &str, d: DType) -> u32 {
    match (op, d) {
        // `atom.add.noftz.bf16`: sm_90 only (sm_80 rejects it).
        ("add" | "sub", DType::BF16) => 90,
        _ => 70,
    }
}

/// Whether PTX has a destination-less `red` of the op.
pub fn has_red(op: &str) -> bool {
    !matches!(op, "exch" | "cas")
}

/// The order and scope in effect (explicit or default).
pub fn sem_of(c: &Combo) -> &'static str {
    c.sem.unwrap_or(match (c.op, c.form) {
        ("load", _) => "acquire",
        ("store", _) => "release",
        (_, Form::Indexed) => "acq_rel",
        _ => "relaxed",
    })
}

pub fn scope_of(c: &Combo) -> &'static str {
    c.scope.unwrap_or(match c.space {
        Space::Shared => "cta",
        Space::Global => "gpu",
    })
}

/// Why a combination is illegal (every reason that applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// PTX has no atomic `op` on this element type.
    NoInstruction,
    /// A tilus scatter of an op other than add/sub/min/max.
    ScatterOp,
    /// An order the operation cannot have (indexed RMW acquire/release, load with a release
    /// half, store with an acquire half).
    Order,
    /// `.cluster` scope with an explicit target below sm_90.
    ClusterTarget,
    /// An instruction newer than the explicit target (bf16 add below sm_90).
    RowTarget,
}

/// The reasons `c` must be rejected; empty = it must compile.
pub fn reasons(c: &Combo) -> Vec<Reason> {
    let mut r = Vec::new();
    let sem = sem_of(c);
    if is_rmw(c.op) {
        if lowering(c.op, c.dtype).is_none() {
            r.push(Reason::NoInstruction);
        }
        if c.form.is_scatter() && !matches!(c.op, "add" | "sub" | "min" | "max") {
            r.push(Reason::ScatterOp);
        }
        if c.form == Form::Indexed && matches!(sem, "acquire" | "release") {
            r.push(Reason::Order);
        }
        if let Some(t) = c.target {
            if lowering(c.op, c.dtype).is_some() && t < min_target(c.op, c.dtype) {
                r.push(Reason::RowTarget);
            }
        }
    } else {
        let bad = if c.op == "load" {
            matches!(sem, "release" | "acq_rel")
        } else {
            matches!(sem, "acquire" | "acq_rel")
        };
        if bad {
            r.push(Reason::Order);
        }
    }
    if scope_of(c) == "cluster" && c.target.is_some_and(|t| t < 90) {
        r.push(Reason::ClusterTarget);
    }
    r
}

/// The target an accepted kernel must have: the explicit one, else the oldest that has every
/// instruction (sm_70, the first with `.sem`/`.scope`, raised by cluster scope and the row).
pub fn expected_target(c: &Combo) -> u32 {
    if let Some(t) = c.target {
        return t;
    }
    let mut t = 70;
    if scope_of(c) == "cluster" {
        t = 90;
    }
    if is_rmw(c.op) {
        t = t.max(min_target(c.op, c.dtype));
    }
    t
}

/// Whether an accepted RMW must print as `red` (no destination).
pub fn expect_red(c: &Combo) -> bool {
    let cas_loop = lowering(c.op, c.dtype) == Some(Lowering::CasLoop);
    !c.used && has_red(c.op) && !cas_loop && matches!(sem_of(c), "relaxed" | "release")
}

/// The PTX type suffixes an ordered `ld`/`st` of `d` may use (`ld.global.f16` does not exist:
/// 16-bit floats move as `.b16`; `bool` is one byte; an integer moves as any type of its width).
pub fn access_types(d: DType) -> &'static [&'static str] {
    use DType::*;
    match d {
        Bool | I8 | U8 => &["u8", "s8", "b8"],
        I16 | U16 => &["u16", "s16", "b16"],
        F16 | BF16 => &["b16"],
        I32 | U32 => &["u32", "s32", "b32"],
        F32 => &["f32", "b32"],
        I64 | U64 => &["u64", "s64", "b64"],
        F64 => &["f64", "b64"],
    }
}
