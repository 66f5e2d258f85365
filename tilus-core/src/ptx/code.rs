//! The code the generator selects, as values: a list of [`Line`]s that [`super::print`] turns
//! into text. Selection (`emit`, `inst`, `access`, `memops`, `convert`, `collective`) decides
//! which instructions to emit and pushes them here; the printer is the only place that spells
//! PTX syntax (the model is Cranelift's split of instruction choice, `lower.isle`, from
//! emission and printing).
//!
//! The granularity is PTX's own grammar, `[@guard] opcode{.qualifier} operand, ...;`:
//! * [`Opcode`]: a base name and its qualifiers, each a `&'static str` from the type tables
//!   (`dtype::Info::arith`, `mem`, `bit_reg()`, `mov_type()`), the IR's enums (`Sem::ptx`,
//!   `Scope::ptx`, `Space::ptx`) or a literal (`rn`, `lo`, `wide`); or a whole name the legality
//!   table (`crate::table`) spells for atomics and fences, which stays the one place that knows
//!   how those are composed.
//! * [`Arg`]: one operand (named so because the IR's operands are `ir::Operand`): a register,
//!   an integer immediate, an element constant (printed in its type's immediate syntax), an
//!   address `[base+offset]`, a register vector `{a, b}`, a label, a special register or the
//!   shared window's symbol.
//! * [`Guard`]: the predicate that guards an instruction, `@p` or `@!p`.
//!
//! The list is not an IR to optimise: no definitions and uses are tracked, nothing rewrites it
//! after selection (ptxas does register allocation and scheduling). It exists so that choosing
//! instructions and spelling them are apart, and the printing of a kernel's text is one pass.

use super::access::Addr;
use super::regs::Reg;
use super::value::{RegOrConst, RegOrImm};
use crate::dtype::DType;

/// The code of one kernel: the per-thread prologue (values computed once, at the top) and the
/// body.
#[derive(Debug, Default)]
pub(super) struct Code {
    pub prologue: Vec<Line>,
    pub body: Vec<Line>,
}

/// One line of a kernel body.
// Nearly every line is an instruction: boxing it would allocate once per instruction.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Line {
    Ins(Ins),
    Label(Label),
    /// A comment (for readers of the PTX: which IR statement the code below comes from).
    Comment(String),
}

/// One instruction: `[@guard] opcode args;`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ins {
    pub guard: Guard,
    pub opcode: Opcode,
    pub args: ArgList,
}

impl Ins {
    pub fn new(guard: Guard, opcode: impl Into<Opcode>, args: impl Args) -> Ins {
        Ins {
            guard,
            opcode: opcode.into(),
            args: args.into_args(),
        }
    }
}

/// The most qualifiers an opcode has (`ld.relaxed.cluster.shared::cluster.v4.b32`: five).
const MAX_PARTS: usize = 6;

/// An instruction name and its qualifiers, printed joined by dots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Opcode {
    /// A name the legality table spells whole (`red.relaxed.gpu.global.add.f32`), before
    /// `parts`.
    table: Option<String>,
    parts: [&'static str; MAX_PARTS],
    len: u8,
}

impl Opcode {
    /// An instruction named by the legality table (`crate::table`).
    pub fn table(name: String) -> Opcode {
        Opcode {
            table: Some(name),
            parts: [""; MAX_PARTS],
            len: 0,
        }
    }

    /// This opcode with one more qualifier.
    pub fn q(mut self, qualifier: &'static str) -> Opcode {
        self.parts[self.len as usize] = qualifier;
        self.len += 1;
        self
    }

    /// The name the legality table spells whole, if any (printed before [`Opcode::parts`]).
    pub fn table_name(&self) -> Option<&str> {
        self.table.as_deref()
    }

    /// The base name and qualifiers (after the table's name, if any).
    pub fn parts(&self) -> &[&'static str] {
        &self.parts[..self.len as usize]
    }

    /// The base name and the one qualifier of an opcode of exactly two parts and no table
    /// name (`min.s32`).
    pub fn name_and_type(&self) -> Option<(&'static str, &'static str)> {
        match (&self.table, self.len) {
            (None, 2) => Some((self.parts[0], self.parts[1])),
            _ => None,
        }
    }
}

/// `["add", "s32"]` is `add.s32`.
impl<const N: usize> From<[&'static str; N]> for Opcode {
    fn from(parts: [&'static str; N]) -> Opcode {
        // An indexed loop, not `q` per part: in release builds (and the compile_time benchmark)
        // the macro runs this unoptimised (cargo builds a proc macro's dependencies at
        // opt-level 0 there), where moving the opcode through `q` and the array's iterator
        // cost more than the rest of building the instruction.
        let mut all = [""; MAX_PARTS];
        let mut i = 0;
        while i < N {
            all[i] = parts[i];
            i += 1;
        }
        Opcode {
            table: None,
            parts: all,
            len: N as u8,
        }
    }
}

/// The predicate guarding an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Guard {
    Always,
    /// `@p`: where `p` is true.
    If(Reg),
    /// `@!p`: where `p` is false.
    Unless(Reg),
}

/// A branch target: `$L_{kind}_{n}`, numbered in the order labels are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Label {
    pub kind: &'static str,
    pub n: u32,
}

/// One operand of an instruction.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Arg {
    Reg(Reg),
    /// An integer immediate (decimal).
    Int(i128),
    /// Bits of an element constant of a type, in the type's immediate syntax (`0f3F800000`).
    Const(u64, DType),
    Addr(Address),
    /// `{a, b, ...}`: a vector operand, or the halves of a wider register.
    Vector(Vec<Reg>),
    Label(Label),
    Special(Special),
}

/// A memory operand.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Address {
    pub base: Base,
    /// The byte offset after the base; `None`: none written (`[base]`).
    pub offset: Option<i64>,
}

/// What an address is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Base {
    Reg(Reg),
    /// The `.param` of kernel parameter `index` (for a tensor, its pointer or its length).
    Param(usize, ParamPart),
}

/// Which `.param` of a kernel parameter: a scalar's value, or a tensor's pointer or length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParamPart {
    Value,
    Ptr,
    Len,
}

/// Special registers and symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Special {
    /// `%tid.x`
    ThreadIdx,
    /// `%ctaid.{axis}`
    BlockIdx(u8),
    /// `%nctaid.{axis}`
    GridDim(u8),
    /// `%clusterid.{axis}`
    ClusterIdx(u8),
    /// `%cluster_ctarank`
    ClusterRank,
    /// `%cluster_nctarank`
    ClusterSize,
    /// The shared window ([`super::SMEM_SYMBOL`]).
    SharedWindow,
}

/// `x`, `y` or `z` for a grid axis (the lowering only admits 0..=2).
pub(super) fn axis_name(axis: u8) -> &'static str {
    ["x", "y", "z"][(axis as usize).min(2)]
}

impl From<Reg> for Arg {
    fn from(r: Reg) -> Arg {
        Arg::Reg(r)
    }
}

impl From<&Reg> for Arg {
    fn from(r: &Reg) -> Arg {
        Arg::Reg(*r)
    }
}

impl From<RegOrImm> for Arg {
    fn from(v: RegOrImm) -> Arg {
        match v {
            RegOrImm::Reg(r) => Arg::Reg(r),
            RegOrImm::Imm(i) => Arg::Int(i as i128),
        }
    }
}

impl From<RegOrConst> for Arg {
    fn from(v: RegOrConst) -> Arg {
        match v {
            RegOrConst::Reg(r) => Arg::Reg(r),
            RegOrConst::Const(bits, d) => Arg::Const(bits, d),
        }
    }
}

impl From<Addr> for Arg {
    /// `[base]`, or `[base+imm]` with a non-zero offset.
    fn from(a: Addr) -> Arg {
        Arg::Addr(Address {
            base: Base::Reg(a.base),
            offset: (a.imm != 0).then_some(a.imm),
        })
    }
}

impl From<Label> for Arg {
    fn from(l: Label) -> Arg {
        Arg::Label(l)
    }
}

impl From<Special> for Arg {
    fn from(s: Special) -> Arg {
        Arg::Special(s)
    }
}

impl From<Address> for Arg {
    fn from(a: Address) -> Arg {
        Arg::Addr(a)
    }
}

macro_rules! int_args {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(i: $t) -> Arg {
                Arg::Int(i as i128)
            }
        }
    )*};
}
int_args!(i32, u32, i64, u64, usize, u16, i128);

impl From<Vec<Reg>> for Arg {
    /// One register plainly, several as a vector.
    fn from(regs: Vec<Reg>) -> Arg {
        match regs.as_slice() {
            [r] => Arg::Reg(*r),
            _ => Arg::Vector(regs),
        }
    }
}

/// The most operands an instruction has.
const MAX_ARGS: usize = 5;

/// The operands of an instruction, held in place (no allocation per instruction: building,
/// and later freeing, a `Vec` of operands for every instruction was a tenth of generating
/// the code, and the heap churn slowed what came after).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ArgList {
    args: [Arg; MAX_ARGS],
    len: u8,
}

impl ArgList {
    /// The filler of unused places.
    const NONE: Arg = Arg::Int(0);

    pub fn as_slice(&self) -> &[Arg] {
        &self.args[..self.len as usize]
    }

    /// The operands, by value.
    pub fn into_vec(self) -> Vec<Arg> {
        let len = self.len as usize;
        let mut v = Vec::from(self.args);
        v.truncate(len);
        v
    }
}

/// The operands of an instruction, as a tuple of things that become [`Arg`]s.
pub(super) trait Args {
    fn into_args(self) -> ArgList;
}

impl Args for () {
    fn into_args(self) -> ArgList {
        ArgList {
            args: [ArgList::NONE; MAX_ARGS],
            len: 0,
        }
    }
}

/// `tuple_args!(n; names; fillers)`: tuples of `n` operands, the other places filled.
macro_rules! tuple_args {
    ($n:literal; $($name:ident),+; $($fill:ident),*) => {
        impl<$($name: Into<Arg>),+> Args for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_args(self) -> ArgList {
                let ($($name,)+) = self;
                ArgList {
                    args: [$($name.into(),)+ $(ArgList::$fill,)*],
                    len: $n,
                }
            }
        }
    };
}
tuple_args!(1; A; NONE, NONE, NONE, NONE);
tuple_args!(2; A, B; NONE, NONE, NONE);
tuple_args!(3; A, B, C; NONE, NONE);
tuple_args!(4; A, B, C, D; NONE);
tuple_args!(5; A, B, C, D, E;);
