//! Register allocation, Dr.Jit style: one prefix and one counter per register class, declared
//! once at the top of the entry with exact counts after the body has been generated.
//!
//! Registers are never reused: ptxas does liveness analysis and register allocation itself, so
//! the only job here is handing out unique, deterministic names.

use crate::dtype::{DType, RegClass};
use std::fmt;

/// The register classes the generator uses: the element classes of [`RegClass`] (one row of
/// the dtype table each), which also cover addresses (`B64`) and indices (`B32`).
pub type Class = RegClass;

/// Prefix and declaration type of each class, indexed by [`class_index`].
const CLASS_ROWS: [(RegClass, &str, &str); 7] = [
    (RegClass::Pred, "%p", ".pred"),
    (RegClass::B16, "%rs", ".b16"),
    (RegClass::B32, "%r", ".b32"),
    (RegClass::B64, "%rd", ".b64"),
    (RegClass::F32, "%f", ".f32"),
    (RegClass::F64, "%fd", ".f64"),
    (RegClass::B128, "%rq", ".b128"),
];

fn class_index(c: RegClass) -> usize {
    match c {
        RegClass::Pred => 0,
        RegClass::B16 => 1,
        RegClass::B32 => 2,
        RegClass::B64 => 3,
        RegClass::F32 => 4,
        RegClass::F64 => 5,
        RegClass::B128 => 6,
    }
}

fn prefix(c: RegClass) -> &'static str {
    CLASS_ROWS[class_index(c)].1
}

/// One virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reg {
    pub class: Class,
    pub idx: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", prefix(self.class), self.idx)
    }
}

/// A 32-bit index operand (offsets, coordinates, addresses within the shared window): a register
/// or an immediate. Immediates are folded where cheap so that compile-time facts (offsets,
/// shapes) do not cost instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Val {
    Reg(Reg),
    Imm(i32),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Reg(r) => r.fmt(f),
            Val::Imm(i) => i.fmt(f),
        }
    }
}

impl Val {
    pub fn imm(self) -> Option<i32> {
        match self {
            Val::Imm(i) => Some(i),
            Val::Reg(_) => None,
        }
    }
}

/// An element operand of any type: a register of the type's class, or a constant printed in
/// the type's immediate syntax ([`imm_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EVal {
    Reg(Reg),
    Const(u64, DType),
}

impl fmt::Display for EVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EVal::Reg(r) => r.fmt(f),
            EVal::Const(bits, d) => f.write_str(&imm_text(*d, *bits)),
        }
    }
}

/// The PTX immediate syntax of element constant `bits` of type `d`: integers in decimal (hex
/// for unsigned 64-bit values past `i64::MAX`), `f32` as `0fXXXXXXXX`, `f64` as
/// `0dXXXXXXXXXXXXXXXX`, 16-bit floats as their bit pattern (for `mov.b16`).
pub fn imm_text(d: DType, bits: u64) -> String {
    use crate::dtype::Class;
    match d.class() {
        Class::Bool => ((bits != 0) as u32).to_string(),
        Class::Signed => crate::elem::as_i128(d, bits).to_string(),
        Class::Unsigned if bits > i64::MAX as u64 => format!("0x{bits:016X}"),
        Class::Unsigned => bits.to_string(),
        Class::Float => match d {
            DType::F32 => format!("0f{:08X}", bits as u32),
            DType::F64 => format!("0d{bits:016X}"),
            _ => format!("0x{:04X}", bits as u16),
        },
    }
}

/// A predicate that may be known at compile time (so checks that cannot fail emit nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PVal {
    True,
    False,
    Reg(Reg),
}

/// The per-class counters.
#[derive(Debug, Default)]
pub struct Regs {
    counts: [u32; 7],
}

impl Regs {
    pub fn new_reg(&mut self, class: Class) -> Reg {
        let c = &mut self.counts[class_index(class)];
        let r = Reg { class, idx: *c };
        *c += 1;
        r
    }

    /// `.reg` declarations with exact counts (classes never used are not declared).
    pub fn declarations(&self) -> String {
        let mut s = String::new();
        for (i, (_, prefix, decl)) in CLASS_ROWS.iter().enumerate() {
            let n = self.counts[i];
            if n > 0 {
                s.push_str(&format!("\t.reg {decl} {prefix}<{n}>;\n"));
            }
        }
        s
    }
}
