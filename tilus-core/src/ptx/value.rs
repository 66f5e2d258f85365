//! The values selection computes with: a register, or something known at compile time that
//! costs no instruction until an instruction needs it in a register. Folding on them (`add32`,
//! `and_pred`, ...) keeps compile-time facts (offsets, shapes, full chunks) out of the code.

use super::code::Guard;
use super::regs::Reg;
use crate::dtype::DType;

/// A 32-bit index operand (offsets, coordinates, addresses within the shared window): a register
/// or an immediate. Immediates are folded where cheap so that compile-time facts (offsets,
/// shapes) do not cost instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegOrImm {
    Reg(Reg),
    Imm(i32),
}

impl RegOrImm {
    pub fn imm(self) -> Option<i32> {
        match self {
            RegOrImm::Imm(i) => Some(i),
            RegOrImm::Reg(_) => None,
        }
    }
}

impl From<Reg> for RegOrImm {
    fn from(r: Reg) -> RegOrImm {
        RegOrImm::Reg(r)
    }
}

impl From<i32> for RegOrImm {
    fn from(i: i32) -> RegOrImm {
        RegOrImm::Imm(i)
    }
}

/// An element operand of any type: a register of the type's class, or a constant (its bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegOrConst {
    Reg(Reg),
    Const(u64, DType),
}

/// A predicate that may be known at compile time (so checks that cannot fail emit nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predicate {
    True,
    False,
    Reg(Reg),
}

impl Predicate {
    /// `True` or `False`.
    pub fn known(holds: bool) -> Predicate {
        if holds {
            Predicate::True
        } else {
            Predicate::False
        }
    }

    /// The guard of code that runs where this predicate holds: none when it always does (and,
    /// as no code is emitted under a predicate that never holds, none for `False` either).
    pub fn guard(self) -> Guard {
        match self {
            Predicate::Reg(r) => Guard::If(r),
            _ => Guard::Always,
        }
    }
}
