//! Conversions between element types (`crate::elem::cast` semantics) and the `f16`/`bf16`
//! widening and rounding every 16-bit float operation goes through.
//!
//! Integers convert through their registers (narrow ones are kept normalised, so widening is a
//! move or a sign extension); floats with `cvt` and its rounding modifiers: `.rn` into floats,
//! `.rzi` into integers (which saturates, NaN giving 0, as Rust's `as` does). `bf16` has no
//! `cvt` below sm_80 (and no widening `cvt` below sm_90): it is widened by placing its bits in
//! the top half of an `f32`, and rounded in integer arithmetic (round to nearest even, NaN to
//! the canonical NaN) where the target lacks the instruction.

use super::code::{Arg, Guard, Opcode};
use super::emit::{CodegenResult, Emitter};
use super::regs::Reg;
use super::value::RegOrConst;
use crate::dtype::{Class, DType, RegClass};

impl Emitter<'_> {
    /// Move `v` (of type `d`) into register `r` of the same class.
    pub fn copy_elem(&mut self, d: DType, r: Reg, v: RegOrConst) -> CodegenResult<()> {
        if v == RegOrConst::Reg(r) {
            return Ok(());
        }
        let ty = d.info().mov_type();
        self.ins(["mov", ty], (r, v));
        Ok(())
    }

    /// An `f16`/`bf16` value widened (exactly) to a fresh `f32` register.
    pub fn widen_f32(&mut self, d: DType, v: RegOrConst) -> Reg {
        let f = self.new_reg(crate::dtype::RegClass::F32);
        if let RegOrConst::Const(bits, _) = v {
            let x = crate::elem::cast(d, DType::F32, bits);
            self.ins(["mov", "f32"], (f, RegOrConst::Const(x, DType::F32)));
            return f;
        }
        let h = self.in_reg(v);
        match d {
            DType::F16 => self.ins(["cvt", "f32", "f16"], (f, h)),
            _ => {
                // bf16 is the top half of an f32.
                let z = self.zero16();
                self.ins(["mov", "b32"], (f, Arg::Vector(vec![z, h])));
            }
        }
        f
    }

    /// Round the `f32` in `f` to `d` (`f16`/`bf16`, nearest even) into 16-bit register `r`.
    pub fn narrow_f32(&mut self, d: DType, f: Reg, r: Reg) {
        match d {
            DType::F16 => self.ins(["cvt", "rn", "f16", "f32"], (r, f)),
            _ if self.kernel().target.0 >= 80 => self.ins(["cvt", "rn", "bf16", "f32"], (r, f)),
            _ => {
                // Round to nearest even on the bits: add 0x7fff plus the lowest kept bit.
                let (b, l, t) = (self.r32(), self.r32(), self.r32());
                let nan = self.new_pred();
                self.ins(["mov", "b32"], (b, f));
                self.ins(["bfe", "u32"], (l, b, 16, 1));
                self.ins(["add", "u32"], (t, b, 32767));
                self.ins(["add", "u32"], (t, t, l));
                self.ins(["shr", "u32"], (t, t, 16));
                self.ins(["testp", "notanumber", "f32"], (nan, f));
                self.ins(["selp", "b32"], (t, 32767, t, nan));
                self.ins(["cvt", "u16", "u32"], (r, t));
            }
        }
    }

    /// `r = a as to` for `a` of type `from` (`r` is a register of `to`'s class).
    pub fn convert(&mut self, from: DType, to: DType, r: Reg, a: RegOrConst) -> CodegenResult<()> {
        if let RegOrConst::Const(bits, _) = a {
            let c = crate::elem::cast(from, to, bits);
            return self.copy_elem(to, r, RegOrConst::Const(c, to));
        }
        if from == to {
            return self.copy_elem(to, r, a);
        }
        let (fi, ti) = (from.info(), to.info());
        match (fi.class, ti.class) {
            (Class::Bool, _) => {
                // true -> 1, false -> 0 in the target type.
                let one = RegOrConst::Const(crate::elem::cast(DType::Bool, to, 1), to);
                let zero = RegOrConst::Const(crate::elem::cast(DType::Bool, to, 0), to);
                let p = self.in_reg(a);
                let (one, zero) = (self.ereg_if_half(to, one), self.ereg_if_half(to, zero));
                self.ins(["selp", ti.bit_reg()], (r, one, zero, p));
            }
            (_, Class::Bool) => {
                let zero = RegOrConst::Const(0, from);
                let src = match fi.class {
                    Class::Float if fi.size == 2 => {
                        let f = self.widen_f32(from, a);
                        return self.pred_ne_zero_f32(r, f);
                    }
                    _ => a,
                };
                let cmp = if fi.class == Class::Float {
                    "neu"
                } else {
                    "ne"
                };
                self.ins(["setp", cmp, fi.arith], (r, src, zero));
            }
            (Class::Signed | Class::Unsigned, Class::Signed | Class::Unsigned) => {
                self.int_to_int(from, to, r, a);
            }
            (Class::Signed | Class::Unsigned, Class::Float) => {
                let src = self.in_reg(a);
                match to {
                    DType::F32 | DType::F64 => {
                        self.ins(["cvt", "rn", ti.arith, fi.arith], (r, src))
                    }
                    _ => {
                        let f = self.new_reg(crate::dtype::RegClass::F32);
                        self.ins(["cvt", "rn", "f32", fi.arith], (f, src));
                        self.narrow_f32(to, f, r);
                    }
                }
            }
            (Class::Float, Class::Signed | Class::Unsigned) => {
                let src = match from {
                    DType::F16 | DType::BF16 => self.widen_f32(from, a),
                    _ => self.in_reg(a),
                };
                let sty = if fi.size == 2 { "f32" } else { fi.arith };
                if ti.bits >= 32 {
                    self.ins(["cvt", "rzi", ti.arith, sty], (r, src));
                    if ti.bits == 64 {
                        // Measured on an H100: `cvt.rzi.s64/u64` turns NaN into the type's
                        // minimum / maximum, not 0 (the 32-bit forms give 0, like Rust's `as`).
                        let nan = self.new_pred();
                        self.ins(["setp", "nan", sty], (nan, src, src));
                        self.ins_if(Guard::If(nan), ["mov", "b64"], (r, 0));
                    }
                } else {
                    // Saturate at 32 bits, then at the narrow type's range.
                    let (lo, hi) = to.int_range();
                    self.ins(["cvt", "rzi", ti.arith, sty], (r, src));
                    self.ins(["max", ti.arith], (r, r, lo));
                    self.ins(["min", ti.arith], (r, r, hi));
                }
            }
            (Class::Float, Class::Float) => self.float_to_float(from, to, r, a),
        }
        Ok(())
    }

    fn pred_ne_zero_f32(&mut self, p: Reg, f: Reg) -> CodegenResult<()> {
        self.ins(["setp", "neu", "f32"], (p, f, Arg::Const(0, DType::F32)));
        Ok(())
    }

    /// 16-bit float constants have no immediate form in `selp`: put them in a register.
    fn ereg_if_half(&mut self, d: DType, v: RegOrConst) -> RegOrConst {
        if d.is_half_float() {
            RegOrConst::Reg(self.in_reg(v))
        } else {
            v
        }
    }

    fn int_to_int(&mut self, from: DType, to: DType, r: Reg, a: RegOrConst) {
        let (fi, ti) = (from.info(), to.info());
        let src = self.in_reg(a);
        match (fi.bits > 32, ti.bits > 32) {
            (false, false) => {
                // Same 32-bit register class: the value is already extended by its own
                // signedness, which is Rust's widening; narrowing re-normalises.
                self.ins(["mov", "b32"], (r, src));
                if ti.bits < 32 {
                    self.normalize(to, r);
                }
            }
            // From the 32-bit register the narrow value is extended in (its arithmetic type).
            (false, true) => self.ins(["cvt", ti.arith, fi.arith], (r, src)),
            (true, false) => {
                self.ins(["cvt", "u32", "u64"], (r, src));
                if ti.bits < 32 {
                    self.normalize(to, r);
                }
            }
            (true, true) => self.ins(["mov", "b64"], (r, src)),
        }
    }

    fn float_to_float(&mut self, from: DType, to: DType, r: Reg, a: RegOrConst) {
        let (fi, ti) = (from.info(), to.info());
        match (from, to) {
            (DType::F32, DType::F64) => {
                let s = self.in_reg(a);
                self.ins(["cvt", "f64", "f32"], (r, s));
            }
            (DType::F64, DType::F32) => {
                let s = self.in_reg(a);
                self.ins(["cvt", "rn", "f32", "f64"], (r, s));
            }
            (DType::F64, DType::F16) => {
                let s = self.in_reg(a);
                self.ins(["cvt", "rn", "f16", "f64"], (r, s));
            }
            (DType::F32, _) => {
                let s = self.in_reg(a);
                self.narrow_f32(to, s, r);
            }
            (DType::F64, _) => {
                // bf16 from f64 goes through f32 (crate::elem).
                let s = self.in_reg(a);
                let f = self.new_reg(crate::dtype::RegClass::F32);
                self.ins(["cvt", "rn", "f32", "f64"], (f, s));
                self.narrow_f32(to, f, r);
            }
            (_, DType::F32) => {
                let f = self.widen_f32(from, a);
                self.ins(["mov", "f32"], (r, f));
            }
            (_, DType::F64) => {
                let f = self.widen_f32(from, a);
                self.ins(["cvt", "f64", "f32"], (r, f));
            }
            _ => {
                // f16 <-> bf16: widen exactly, round once.
                let f = self.widen_f32(from, a);
                self.narrow_f32(to, f, r);
            }
        }
        let _ = (fi, ti);
    }
}

/// The `mov` type for a register of type `d`.
impl Emitter<'_> {
    /// `r = v` reinterpreted as `to` (same size; `f32::to_bits` and friends). 32- and 64-bit
    /// values move between register classes unchanged; narrow integers live sign- or
    /// zero-extended in 32-bit registers and `f16`/`bf16` in 16-bit ones, so 8/16-bit
    /// reinterpretations re-extend (a `cvt` that reads the low bits) or truncate.
    pub fn bitcast(&mut self, from: DType, to: DType, r: Reg, v: RegOrConst) -> CodegenResult<()> {
        if let RegOrConst::Const(bits, _) = v {
            return self.copy_elem(to, r, RegOrConst::Const(crate::elem::canon(to, bits), to));
        }
        let (fi, ti) = (from.info(), to.info());
        if fi.size != ti.size || from == DType::Bool || to == DType::Bool {
            return super::emit::internal(format!("bitcast from {from} to {to}"));
        }
        let src = self.in_reg(v);
        let opcode: Opcode = match (fi.size, ti.reg, fi.reg) {
            (4 | 8, _, _) => ["mov", ti.bit_reg()].into(),
            (_, RegClass::B16, RegClass::B16) => ["mov", "b16"].into(),
            // Narrow integer into a 16-bit float register: keep the low 16 bits.
            (_, RegClass::B16, _) => ["cvt", "u16", "u32"].into(),
            // Into a narrow integer: extend its low bits as the destination type does.
            (_, _, _) => ["cvt", ti.arith, ti.mem].into(),
        };
        self.ins(opcode, (r, src));
        Ok(())
    }
}
