//! Register allocation, Dr.Jit style: one prefix and one counter per register class, declared
//! once at the top of the entry with exact counts after the body has been generated.
//!
//! Registers are never reused: ptxas does liveness analysis and register allocation itself, so
//! the only job here is handing out unique, deterministic names.

use std::fmt;

/// The three register classes the generator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// `%r`: 32-bit values (i32 elements, shared addresses, indices).
    B32,
    /// `%rd`: 64-bit values (global addresses).
    B64,
    /// `%p`: predicates (bool elements, activity masks).
    Pred,
}

impl Class {
    fn prefix(self) -> &'static str {
        match self {
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::Pred => "%p",
        }
    }
    fn decl_type(self) -> &'static str {
        match self {
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::Pred => ".pred",
        }
    }
    const ALL: [Class; 3] = [Class::Pred, Class::B32, Class::B64];
    fn index(self) -> usize {
        match self {
            Class::B32 => 0,
            Class::B64 => 1,
            Class::Pred => 2,
        }
    }
}

/// One virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reg {
    pub class: Class,
    pub idx: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.class.prefix(), self.idx)
    }
}

/// A 32-bit source operand: a register or an immediate. Immediates are folded where cheap so
/// that compile-time facts (offsets, shapes) do not cost instructions.
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
    counts: [u32; 3],
}

impl Regs {
    pub fn new_reg(&mut self, class: Class) -> Reg {
        let c = &mut self.counts[class.index()];
        let r = Reg { class, idx: *c };
        *c += 1;
        r
    }

    /// `.reg` declarations with exact counts (classes never used are not declared).
    pub fn declarations(&self) -> String {
        let mut s = String::new();
        for class in Class::ALL {
            let n = self.counts[class.index()];
            if n > 0 {
                s.push_str(&format!(
                    "\t.reg {} {}<{}>;\n",
                    class.decl_type(),
                    class.prefix(),
                    n
                ));
            }
        }
        s
    }
}
