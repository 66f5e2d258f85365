//! Conversions between element types (`crate::elem::cast` semantics) and the `f16`/`bf16`
//! widening and rounding every 16-bit float operation goes through.
//!
//! Integers convert through their registers (narrow ones are kept normalised, so widening is a
//! move or a sign extension); floats with `cvt` and its rounding modifiers: `.rn` into floats,
//! `.rzi` into integers (which saturates, NaN giving 0, as Rust's `as` does). `bf16` has no
//! `cvt` below sm_80 (and no widening `cvt` below sm_90): it is widened by placing its bits in
//! the top half of an `f32`, and rounded in integer arithmetic (round to nearest even, NaN to
//! the canonical NaN) where the target lacks the instruction.

use super::emit::{Emitter, Res};
use super::regs::{EVal, Reg};
use crate::dtype::{Class, DType, RegClass};

impl Emitter<'_> {
    /// Move `v` (of type `d`) into register `r` of the same class.
    pub fn copy_elem(&mut self, d: DType, r: Reg, v: EVal) -> Res<()> {
        if v == EVal::Reg(r) {
            return Ok(());
        }
        let ty = d.info().mov_type();
        self.line(format!("mov.{ty} \t{r}, {v};"));
        Ok(())
    }

    /// An `f16`/`bf16` value widened (exactly) to a fresh `f32` register.
    pub fn widen_f32(&mut self, d: DType, v: EVal) -> Reg {
        let f = self.regs.new_reg(crate::dtype::RegClass::F32);
        if let EVal::Const(bits, _) = v {
            let x = crate::elem::cast(d, DType::F32, bits);
            self.line(format!("mov.f32 \t{f}, {};", EVal::Const(x, DType::F32)));
            return f;
        }
        let h = self.ereg(v);
        match d {
            DType::F16 => self.line(format!("cvt.f32.f16 \t{f}, {h};")),
            _ => {
                // bf16 is the top half of an f32.
                let z = self.zero16();
                self.line(format!("mov.b32 \t{f}, {{{z}, {h}}};"));
            }
        }
        f
    }

    /// Round the `f32` in `f` to `d` (`f16`/`bf16`, nearest even) into 16-bit register `r`.
    pub fn narrow_f32(&mut self, d: DType, f: Reg, r: Reg) {
        match d {
            DType::F16 => self.line(format!("cvt.rn.f16.f32 \t{r}, {f};")),
            _ if self.k.target.0 >= 80 => self.line(format!("cvt.rn.bf16.f32 \t{r}, {f};")),
            _ => {
                // Round to nearest even on the bits: add 0x7fff plus the lowest kept bit.
                let (b, l, t) = (self.r32(), self.r32(), self.r32());
                let nan = self.pred();
                self.line(format!("mov.b32 \t{b}, {f};"));
                self.line(format!("bfe.u32 \t{l}, {b}, 16, 1;"));
                self.line(format!("add.u32 \t{t}, {b}, 32767;"));
                self.line(format!("add.u32 \t{t}, {t}, {l};"));
                self.line(format!("shr.u32 \t{t}, {t}, 16;"));
                self.line(format!("testp.notanumber.f32 \t{nan}, {f};"));
                self.line(format!("selp.b32 \t{t}, 32767, {t}, {nan};"));
                self.line(format!("cvt.u16.u32 \t{r}, {t};"));
            }
        }
    }

    /// `r = a as to` for `a` of type `from` (`r` is a register of `to`'s class).
    pub fn convert(&mut self, from: DType, to: DType, r: Reg, a: EVal) -> Res<()> {
        if let EVal::Const(bits, _) = a {
            let c = crate::elem::cast(from, to, bits);
            return self.copy_elem(to, r, EVal::Const(c, to));
        }
        if from == to {
            return self.copy_elem(to, r, a);
        }
        let (fi, ti) = (from.info(), to.info());
        match (fi.class, ti.class) {
            (Class::Bool, _) => {
                // true -> 1, false -> 0 in the target type.
                let one = EVal::Const(crate::elem::cast(DType::Bool, to, 1), to);
                let zero = EVal::Const(crate::elem::cast(DType::Bool, to, 0), to);
                let p = self.ereg(a);
                let (one, zero) = (self.ereg_if_half(to, one), self.ereg_if_half(to, zero));
                self.line(format!("selp.{} \t{r}, {one}, {zero}, {p};", ti.bit_reg()));
            }
            (_, Class::Bool) => {
                let zero = EVal::Const(0, from);
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
                self.line(format!("setp.{cmp}.{} \t{r}, {src}, {zero};", fi.arith));
            }
            (Class::Signed | Class::Unsigned, Class::Signed | Class::Unsigned) => {
                self.int_to_int(from, to, r, a);
            }
            (Class::Signed | Class::Unsigned, Class::Float) => {
                let src = self.ereg(a);
                match to {
                    DType::F32 | DType::F64 => {
                        self.line(format!("cvt.rn.{}.{} \t{r}, {src};", ti.arith, fi.arith))
                    }
                    _ => {
                        let f = self.regs.new_reg(crate::dtype::RegClass::F32);
                        self.line(format!("cvt.rn.f32.{} \t{f}, {src};", fi.arith));
                        self.narrow_f32(to, f, r);
                    }
                }
            }
            (Class::Float, Class::Signed | Class::Unsigned) => {
                let src = match from {
                    DType::F16 | DType::BF16 => self.widen_f32(from, a),
                    _ => self.ereg(a),
                };
                let sty = if fi.size == 2 { "f32" } else { fi.arith };
                if ti.bits >= 32 {
                    self.line(format!("cvt.rzi.{}.{sty} \t{r}, {src};", ti.arith));
                    if ti.bits == 64 {
                        // Measured on an H100: `cvt.rzi.s64/u64` turns NaN into the type's
                        // minimum / maximum, not 0 (the 32-bit forms give 0, like Rust's `as`).
                        let nan = self.pred();
                        self.line(format!("setp.nan.{sty} \t{nan}, {src}, {src};"));
                        self.line(format!("@{nan} mov.b64 \t{r}, 0;"));
                    }
                } else {
                    // Saturate at 32 bits, then at the narrow type's range.
                    let (lo, hi) = to.int_range();
                    self.line(format!("cvt.rzi.{}.{sty} \t{r}, {src};", ti.arith));
                    self.line(format!("max.{} \t{r}, {r}, {lo};", ti.arith));
                    self.line(format!("min.{} \t{r}, {r}, {hi};", ti.arith));
                }
            }
            (Class::Float, Class::Float) => self.float_to_float(from, to, r, a),
        }
        Ok(())
    }

    fn pred_ne_zero_f32(&mut self, p: Reg, f: Reg) -> Res<()> {
        self.line(format!("setp.neu.f32 \t{p}, {f}, 0f00000000;"));
        Ok(())
    }

    /// 16-bit float constants have no immediate form in `selp`: put them in a register.
    fn ereg_if_half(&mut self, d: DType, v: EVal) -> EVal {
        if d.is_half_float() {
            EVal::Reg(self.ereg(v))
        } else {
            v
        }
    }

    fn int_to_int(&mut self, from: DType, to: DType, r: Reg, a: EVal) {
        let (fi, ti) = (from.info(), to.info());
        let src = self.ereg(a);
        match (fi.bits > 32, ti.bits > 32) {
            (false, false) => {
                // Same 32-bit register class: the value is already extended by its own
                // signedness, which is Rust's widening; narrowing re-normalises.
                self.line(format!("mov.b32 \t{r}, {src};"));
                if ti.bits < 32 {
                    self.normalize(to, r);
                }
            }
            (false, true) => {
                let ext = if fi.class == Class::Signed { "s" } else { "u" };
                self.line(format!("cvt.{}.{ext}32 \t{r}, {src};", ti.arith));
            }
            (true, false) => {
                self.line(format!("cvt.u32.u64 \t{r}, {src};"));
                if ti.bits < 32 {
                    self.normalize(to, r);
                }
            }
            (true, true) => self.line(format!("mov.b64 \t{r}, {src};")),
        }
    }

    fn float_to_float(&mut self, from: DType, to: DType, r: Reg, a: EVal) {
        let (fi, ti) = (from.info(), to.info());
        match (from, to) {
            (DType::F32, DType::F64) => {
                let s = self.ereg(a);
                self.line(format!("cvt.f64.f32 \t{r}, {s};"));
            }
            (DType::F64, DType::F32) => {
                let s = self.ereg(a);
                self.line(format!("cvt.rn.f32.f64 \t{r}, {s};"));
            }
            (DType::F64, DType::F16) => {
                let s = self.ereg(a);
                self.line(format!("cvt.rn.f16.f64 \t{r}, {s};"));
            }
            (DType::F32, _) => {
                let s = self.ereg(a);
                self.narrow_f32(to, s, r);
            }
            (DType::F64, _) => {
                // bf16 from f64 goes through f32 (crate::elem).
                let s = self.ereg(a);
                let f = self.regs.new_reg(crate::dtype::RegClass::F32);
                self.line(format!("cvt.rn.f32.f64 \t{f}, {s};"));
                self.narrow_f32(to, f, r);
            }
            (_, DType::F32) => {
                let f = self.widen_f32(from, a);
                self.line(format!("mov.f32 \t{r}, {f};"));
            }
            (_, DType::F64) => {
                let f = self.widen_f32(from, a);
                self.line(format!("cvt.f64.f32 \t{r}, {f};"));
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
    pub fn bitcast(&mut self, from: DType, to: DType, r: Reg, v: EVal) -> Res<()> {
        if let EVal::Const(bits, _) = v {
            return self.copy_elem(to, r, EVal::Const(crate::elem::canon(to, bits), to));
        }
        let (fi, ti) = (from.info(), to.info());
        if fi.size != ti.size || from == DType::Bool || to == DType::Bool {
            return super::emit::internal(format!("bitcast from {from} to {to}"));
        }
        let src = self.ereg(v);
        let line = match (fi.size, ti.reg, fi.reg) {
            (4 | 8, _, _) => format!("mov.{} 	{r}, {src};", ti.bit_reg()),
            (_, RegClass::B16, RegClass::B16) => format!("mov.b16 	{r}, {src};"),
            // Narrow integer into a 16-bit float register: keep the low 16 bits.
            (_, RegClass::B16, _) => format!("cvt.u16.u32 	{r}, {src};"),
            // Into a narrow integer: extend its low bits as the destination type does.
            (_, _, _) => {
                let wide = if ti.class == Class::Signed {
                    "s32"
                } else {
                    "u32"
                };
                format!("cvt.{wide}.{} 	{r}, {src};", ti.mem)
            }
        };
        self.line(line);
        Ok(())
    }
}
