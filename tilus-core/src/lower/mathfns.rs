//! `exp` and `ln`, expanded into IR arithmetic.
//!
//! PTX has only approximate transcendental instructions (`ex2.approx`, `lg2.approx`), whose
//! results the emulator could not reproduce bit for bit. So these functions are written here,
//! once, as a sequence of correctly rounded IR operations (`fma`, `*`, `/`, integer and bit
//! operations, [`Inst::Bitcast`]): both back ends evaluate the same operations with the same
//! rounding and agree exactly. Accuracy (checked in `tests/types.rs` over random bit patterns and
//! the special values against `f64` references for `f32`/`f16` and Rust's `f64` functions for
//! `f64`; worst seen 1 ulp): within 2 ulp over the whole range, with IEEE
//! special cases (`exp(-inf) = 0`, `exp(+inf) = inf`, overflow to `inf`, gradual underflow;
//! `ln(0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`, subnormal inputs). `f16`/`bf16` are
//! computed in `f32` and rounded once more.
//!
//! * `exp(x)`: `x = k ln2 + r` with `k = round(x log2 e)` and `r` by Cody–Waite reduction (the
//!   high part of `ln 2` has trailing zero bits, so `k * LN2_HI` is exact), `e^r` by its Taylor
//!   polynomial in Horner form (|r| ≤ ln2/2: degree 7 for `f32`, 13 for `f64` leave a
//!   truncation error far below half an ulp), scaled by `2^k` built from exponent bits in two
//!   halves so that results near overflow and in the subnormal range are rounded once.
//! * `ln(x)`: `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))` read from the bits (subnormals are
//!   scaled into the normal range first), `ln m = 2 atanh(s)` with `s = (m-1)/(m+1)`, whose odd
//!   series converges fast for `|s| ≤ 0.1716`, and `e ln 2` added in two parts.

use super::{LResult, Lowerer};
use crate::diag::Diagnostic;
use crate::dtype::DType;
use crate::ir::{BinOp, Inst, Operand, Span, Ty, UnOp};

/// The constants of one float type.
struct Consts {
    float: DType,
    /// The unsigned integer type of the same size, for the bit patterns.
    bits: DType,
    mant_bits: u32,
    bias: i64,
    /// `exp` clamps its argument to `[exp_lo, exp_hi]`: beyond these the result is already 0
    /// (below half the smallest subnormal) or `inf`.
    exp_lo: f64,
    exp_hi: f64,
    ln2_hi: f64,
    /// `ln 2 - ln2_hi`, correctly rounded from the exact value (`LN_2 - ln2_hi` would inherit
    /// `LN_2`'s own rounding error, which `k` multiplies: ~200 ulp at `exp(709.78)`).
    ln2_lo: f64,
    /// Taylor coefficients of `e^r`, highest degree first.
    exp_degree: u32,
    /// Terms of the `atanh` series kept after `2s`: `1/3, 1/5, ..`.
    ln_terms: u32,
    /// `ln` scales subnormal inputs by `2^subnormal_scale`.
    subnormal_scale: i64,
}

const F32: Consts = Consts {
    float: DType::F32,
    bits: DType::U32,
    mant_bits: 23,
    bias: 127,
    exp_lo: -104.0,
    exp_hi: 89.0,
    // 16 trailing zero bits.
    ln2_hi: f32::from_bits(0x3f31_7180) as f64,
    ln2_lo: 9.058_001_351_559_417e-6,
    exp_degree: 7,
    ln_terms: 5,
    subnormal_scale: 24,
};

const F64: Consts = Consts {
    float: DType::F64,
    bits: DType::U64,
    mant_bits: 52,
    bias: 1023,
    exp_lo: -746.0,
    exp_hi: 710.0,
    // 21 trailing zero bits.
    ln2_hi: f64::from_bits(0x3fe6_2e42_fee0_0000),
    ln2_lo: 1.908_214_929_270_587_7e-10,
    exp_degree: 13,
    ln_terms: 10,
    subnormal_scale: 54,
};

/// Emits element-wise IR over operands of one shape (that of the function's argument).
struct Ew<'l> {
    l: &'l mut Lowerer,
    shape: Option<Vec<usize>>,
    span: Span,
}

impl Ew<'_> {
    fn ty(&self, d: DType) -> Ty {
        match &self.shape {
            Some(shape) => Ty::Tile {
                dtype: d,
                shape: shape.clone(),
            },
            None => Ty::Scalar(d),
        }
    }
    fn dtype(&self, o: Operand) -> DType {
        match o {
            Operand::Imm(_, d) => d,
            Operand::Var(_) => self.l.ty(o).dtype(),
        }
    }
    fn emit(&mut self, inst: Inst, d: DType) -> Operand {
        let ty = self.ty(d);
        self.l.emit(inst, ty, self.span)
    }
    fn bin(&mut self, op: BinOp, lhs: Operand, rhs: Operand) -> Operand {
        let d = if op.is_comparison() {
            DType::Bool
        } else {
            self.dtype(lhs)
        };
        self.emit(Inst::Binary { op, lhs, rhs }, d)
    }
    fn fma(&mut self, a: Operand, b: Operand, c: Operand) -> Operand {
        let d = self.dtype(a);
        self.emit(Inst::Fma { a, b, c }, d)
    }
    fn select(&mut self, cond: Operand, a: Operand, b: Operand) -> Operand {
        let d = self.dtype(a);
        self.emit(Inst::Select { cond, a, b }, d)
    }
    fn cast(&mut self, x: Operand, dtype: DType) -> Operand {
        self.emit(Inst::Cast { x, dtype }, dtype)
    }
    fn bitcast(&mut self, x: Operand, dtype: DType) -> Operand {
        self.emit(Inst::Bitcast { x, dtype }, dtype)
    }
}

/// An immediate of float type `d` holding `v` rounded to `d`.
fn fimm(d: DType, v: f64) -> Operand {
    Operand::Imm(crate::elem::cast(DType::F64, d, v.to_bits()), d)
}

fn iimm(d: DType, v: i64) -> Operand {
    Operand::int(v as i128, d)
}

/// `1 / n!`.
fn inv_factorial(n: u32) -> f64 {
    (1..=n).fold(1.0, |acc, k| acc / k as f64)
}

impl Ew<'_> {
    /// `2^k` for an `i32` operand `k` with `k + bias` in the normal exponent range.
    fn pow2(&mut self, c: &Consts, k: Operand) -> Operand {
        let biased = self.bin(BinOp::Add, k, iimm(DType::I32, c.bias));
        let biased = self.cast(biased, c.bits);
        let shift = iimm(c.bits, c.mant_bits as i64);
        let bits = self.bin(BinOp::Shl, biased, shift);
        self.bitcast(bits, c.float)
    }

    fn exp(&mut self, c: &Consts, x: Operand) -> Operand {
        let f = c.float;
        let xc = self.bin(BinOp::Min, x, fimm(f, c.exp_hi));
        let xc = self.bin(BinOp::Max, xc, fimm(f, c.exp_lo));
        let t = self.bin(BinOp::Mul, xc, fimm(f, std::f64::consts::LOG2_E));
        let k = self.emit(
            Inst::Unary {
                op: UnOp::RoundEven,
                x: t,
            },
            f,
        );
        let ln2_lo = c.ln2_lo;
        let r = self.fma(k, fimm(f, -c.ln2_hi), xc);
        let r = self.fma(k, fimm(f, -ln2_lo), r);
        let mut p = fimm(f, inv_factorial(c.exp_degree));
        for n in (0..c.exp_degree).rev() {
            p = self.fma(p, r, fimm(f, inv_factorial(n)));
        }
        // 2^k = 2^k1 * 2^k2 with both halves normal, for k in [-1077, 1025].
        let ki = self.cast(k, DType::I32);
        let k1 = self.bin(BinOp::Shr, ki, iimm(DType::I32, 1));
        let k2 = self.bin(BinOp::Sub, ki, k1);
        let s1 = self.pow2(c, k1);
        let s2 = self.pow2(c, k2);
        let y = self.bin(BinOp::Mul, p, s1);
        let y = self.bin(BinOp::Mul, y, s2);
        // NaN in, NaN out: one constant NaN, so that every back end gives the same bits (the
        // GPU's arithmetic would return its canonical NaN, the host's the input's payload).
        let nan = self.bin(BinOp::Ne, x, x);
        self.select(nan, fimm(c.float, f64::NAN), y)
    }

    fn ln(&mut self, c: &Consts, x: Operand) -> Operand {
        let (f, u) = (c.float, c.bits);
        let min_normal = f64::powi(2.0, 1 - c.bias as i32);
        let sub = self.bin(BinOp::Lt, x, fimm(f, min_normal));
        let scaled = self.bin(
            BinOp::Mul,
            x,
            fimm(f, f64::powi(2.0, c.subnormal_scale as i32)),
        );
        let xs = self.select(sub, scaled, x);
        let bits = self.bitcast(xs, u);
        let field = self.bin(BinOp::Shr, bits, iimm(u, c.mant_bits as i64));
        let field = self.cast(field, DType::I32);
        let e = self.bin(BinOp::Sub, field, iimm(DType::I32, c.bias));
        let e_sub = self.bin(BinOp::Sub, e, iimm(DType::I32, c.subnormal_scale));
        let e = self.select(sub, e_sub, e);
        let mant_mask = (1i64 << c.mant_bits) - 1;
        let one_bits = c.bias << c.mant_bits;
        let m = self.bin(BinOp::And, bits, iimm(u, mant_mask));
        let m = self.bin(BinOp::Or, m, iimm(u, one_bits));
        let m = self.bitcast(m, f);
        let big = self.bin(BinOp::Gt, m, fimm(f, std::f64::consts::SQRT_2));
        let half = self.bin(BinOp::Mul, m, fimm(f, 0.5));
        let m = self.select(big, half, m);
        let e_up = self.bin(BinOp::Add, e, iimm(DType::I32, 1));
        let e = self.select(big, e_up, e);
        // m - 1 is exact (Sterbenz); s = (m - 1) / (m + 1).
        let fm = self.bin(BinOp::Sub, m, fimm(f, 1.0));
        let den = self.bin(BinOp::Add, fm, fimm(f, 2.0));
        let s = self.bin(BinOp::Div, fm, den);
        let z = self.bin(BinOp::Mul, s, s);
        let mut q = fimm(f, 1.0 / (2 * c.ln_terms + 1) as f64);
        for n in (1..c.ln_terms).rev() {
            q = self.fma(q, z, fimm(f, 1.0 / (2 * n + 1) as f64));
        }
        let two_s = self.bin(BinOp::Add, s, s);
        let two_sz = self.bin(BinOp::Mul, two_s, z);
        let ln_m = self.fma(two_sz, q, two_s);
        let ef = self.cast(e, f);
        let ln2_lo = c.ln2_lo;
        let y = self.fma(ef, fimm(f, ln2_lo), ln_m);
        let y = self.fma(ef, fimm(f, c.ln2_hi), y);
        // Special cases, in increasing priority.
        let inf = self.bin(BinOp::Eq, x, fimm(f, f64::INFINITY));
        let y = self.select(inf, x, y);
        let zero = self.bin(BinOp::Eq, x, fimm(f, 0.0));
        let y = self.select(zero, fimm(f, f64::NEG_INFINITY), y);
        let neg = self.bin(BinOp::Lt, x, fimm(f, 0.0));
        let y = self.select(neg, fimm(f, f64::NAN), y);
        // NaN in, NaN out: one constant NaN, so that every back end gives the same bits (the
        // GPU's arithmetic would return its canonical NaN, the host's the input's payload).
        let nan = self.bin(BinOp::Ne, x, x);
        self.select(nan, fimm(c.float, f64::NAN), y)
    }
}

/// The transcendental functions, by their source names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MathFn {
    Exp,
    Ln,
}

impl Lowerer {
    /// `exp(x)` / `ln(x)` of a float scalar or tile (`f16`/`bf16` through `f32`).
    pub(crate) fn math_fn(&mut self, func: MathFn, x: Operand, span: Span) -> LResult<Operand> {
        let name = match func {
            MathFn::Exp => "exp",
            MathFn::Ln => "ln",
        };
        let t = self.ty(x);
        if !t.dtype().is_float() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return Err(self.error(
                Diagnostic::new(
                    span,
                    format!("`{name}` takes floats, found {}", super::ty_name(&t)),
                )
                .help(format!("convert first: `(x as f32).{name}()`")),
            ));
        }
        let d = t.dtype();
        let mut ew = Ew {
            shape: t.tile_shape().map(|s| s.to_vec()),
            l: self,
            span,
        };
        let (c, arg) = match d {
            DType::F64 => (&F64, x),
            DType::F32 => (&F32, x),
            _ => (&F32, ew.cast(x, DType::F32)),
        };
        let y = match func {
            MathFn::Exp => ew.exp(c, arg),
            MathFn::Ln => ew.ln(c, arg),
        };
        Ok(if d == c.float { y } else { ew.cast(y, d) })
    }
}
