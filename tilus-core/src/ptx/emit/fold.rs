//! Small arithmetic on 32-bit index values and predicates that folds what is known at compile
//! time: an instruction only where an operand is a register.

use std::cmp::Ordering;

use super::Emitter;
use crate::ir::{BinOp, DType};
use crate::ptx::regs::Reg;
use crate::ptx::value::{Predicate, RegOrConst, RegOrImm};

/// The PTX comparison of a comparison operator (`setp.lt`).
fn cmp_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        _ => "ge",
    }
}

/// The PTX comparison of `op` on elements of type `d`: `ne` on floats is the unordered one,
/// true when either operand is NaN (as Rust's `!=`).
pub(in crate::ptx) fn cmp_name_for(op: BinOp, d: DType) -> &'static str {
    match cmp_name(op) {
        "ne" if d.is_float() => "neu",
        name => name,
    }
}

/// Whether comparison `op` holds between two values ordered `o`.
fn holds(op: BinOp, o: Ordering) -> bool {
    match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }
}

impl Emitter<'_> {
    pub fn add32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_add(y)),
            (x, RegOrImm::Imm(0)) | (RegOrImm::Imm(0), x) => x,
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.add32(b, a),
            _ => self.op32(["add", "s32"], a, b),
        }
    }
    pub fn sub32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_sub(y)),
            (x, RegOrImm::Imm(0)) => x,
            _ => self.op32(["sub", "s32"], a, b),
        }
    }
    pub fn mul32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_mul(y)),
            (_, RegOrImm::Imm(0)) | (RegOrImm::Imm(0), _) => RegOrImm::Imm(0),
            (x, RegOrImm::Imm(1)) | (RegOrImm::Imm(1), x) => x,
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.mul32(b, a),
            _ => self.op32(["mul", "lo", "s32"], a, b),
        }
    }
    /// `a / c` of an unsigned 32-bit index by a constant: a shift for a power of two (ptxas 13.0
    /// expands `div.u32` by an immediate power of two into its general reciprocal sequence, about
    /// ten instructions), `a` itself for 1.
    pub fn div_u32(&mut self, a: RegOrImm, c: usize) -> RegOrImm {
        assert!(c > 0, "division of an index by zero");
        match a {
            RegOrImm::Imm(x) => RegOrImm::Imm((x as u32 / c as u32) as i32),
            _ if c == 1 => a,
            _ if c.is_power_of_two() => {
                self.op32(["shr", "u32"], a, RegOrImm::Imm(c.trailing_zeros() as i32))
            }
            _ => self.op32(["div", "u32"], a, RegOrImm::Imm(c as i32)),
        }
    }
    /// `a % c` of an unsigned 32-bit index by a constant: a mask for a power of two, 0 for 1.
    pub fn rem_u32(&mut self, a: RegOrImm, c: usize) -> RegOrImm {
        assert!(c > 0, "remainder of an index by zero");
        match a {
            RegOrImm::Imm(x) => RegOrImm::Imm((x as u32 % c as u32) as i32),
            _ if c == 1 => RegOrImm::Imm(0),
            _ if c.is_power_of_two() => self.op32(["and", "b32"], a, RegOrImm::Imm(c as i32 - 1)),
            _ => self.op32(["rem", "u32"], a, RegOrImm::Imm(c as i32)),
        }
    }
    pub fn min_max32(&mut self, max: bool, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => {
                RegOrImm::Imm(if max { x.max(y) } else { x.min(y) })
            }
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.min_max32(max, b, a),
            _ => self.op32([if max { "max" } else { "min" }, "s32"], a, b),
        }
    }
    /// `a op b` into a fresh 32-bit register.
    fn op32<const N: usize>(
        &mut self,
        opcode: [&'static str; N],
        a: RegOrImm,
        b: RegOrImm,
    ) -> RegOrImm {
        let r = self.r32();
        self.ins(opcode, (r, a, b));
        RegOrImm::Reg(r)
    }

    /// `a op b` for a comparison `op` on 32-bit values (`ty`: `s32` or `u32`), folded when both
    /// are known.
    pub fn setp32(&mut self, op: BinOp, ty: &'static str, a: RegOrImm, b: RegOrImm) -> Predicate {
        if let (RegOrImm::Imm(x), RegOrImm::Imm(y)) = (a, b) {
            let order = match ty {
                "u32" => (x as u32).cmp(&(y as u32)),
                _ => x.cmp(&y),
            };
            return Predicate::known(holds(op, order));
        }
        let p = self.new_pred();
        self.ins(["setp", cmp_name(op), ty], (p, a, b));
        Predicate::Reg(p)
    }

    /// `a op b` for a comparison `op` on two elements of type `d` (integer or float
    /// comparison), folded when both are constants.
    pub fn setp_elem(&mut self, op: BinOp, d: DType, a: RegOrConst, b: RegOrConst) -> Predicate {
        if let (RegOrConst::Const(x, _), RegOrConst::Const(y, _)) = (a, b) {
            return Predicate::known(crate::elem::binary(op, d, x, y) != 0);
        }
        let p = self.new_pred();
        self.ins(["setp", cmp_name_for(op, d), d.info().arith], (p, a, b));
        Predicate::Reg(p)
    }

    pub fn and_pred(&mut self, a: Predicate, b: Predicate) -> Predicate {
        match (a, b) {
            (Predicate::False, _) | (_, Predicate::False) => Predicate::False,
            (Predicate::True, x) | (x, Predicate::True) => x,
            (Predicate::Reg(x), Predicate::Reg(y)) => {
                let p = self.new_pred();
                self.ins(["and", "pred"], (p, x, y));
                Predicate::Reg(p)
            }
        }
    }

    /// `!p`.
    pub fn not_pred(&mut self, p: Predicate) -> Predicate {
        match p {
            Predicate::True => Predicate::False,
            Predicate::False => Predicate::True,
            Predicate::Reg(r) => {
                let q = self.new_pred();
                self.ins(["not", "pred"], (q, r));
                Predicate::Reg(q)
            }
        }
    }

    /// Materialise a value into a fresh register (for instruction slots that take no immediate).
    pub fn in_reg32(&mut self, v: RegOrImm) -> Reg {
        match v {
            RegOrImm::Reg(r) => r,
            RegOrImm::Imm(i) => {
                let r = self.r32();
                self.ins(["mov", "b32"], (r, i));
                r
            }
        }
    }
}
