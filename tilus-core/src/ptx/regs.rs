//! Register numbering, Dr.Jit style: one counter per register class, declared once at the top
//! of the entry with exact counts after the body has been generated (`print` spells the
//! names and declarations).
//!
//! Registers are never reused: ptxas does liveness analysis and register allocation itself, so
//! the only job here is handing out unique, deterministic names.

use crate::dtype::RegClass;

/// The register classes the generator uses: the element classes of [`RegClass`] (one row of
/// the dtype table each), which also cover addresses (`B64`) and indices (`B32`).
pub type Class = RegClass;

/// The classes in declaration order (the order of the `.reg` lines).
const CLASSES: [RegClass; 7] = [
    RegClass::Pred,
    RegClass::B16,
    RegClass::B32,
    RegClass::B64,
    RegClass::F32,
    RegClass::F64,
    RegClass::B128,
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

/// One virtual register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Reg {
    pub class: Class,
    pub idx: u32,
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

    /// The classes used, with how many registers of each, in declaration order (classes never
    /// used are not declared).
    pub fn used(&self) -> impl Iterator<Item = (Class, u32)> + '_ {
        CLASSES
            .iter()
            .map(|&c| (c, self.counts[class_index(c)]))
            .filter(|&(_, n)| n > 0)
    }
}
