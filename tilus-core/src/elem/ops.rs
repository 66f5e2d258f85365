//! Element operations on bit patterns, one value at a time (the emulator's tile loops,
//! `crate::emu`, are typed instantiations of the same `Num`/`Bits` methods, `compare`, `cast`).

use super::{canon, Bits, Elem, Num};
use crate::dtype::DType;
use crate::ir::{BinOp, UnOp};
use crate::{with_int_type, with_num_type};

/// The elements of an operand: one value for every element, or a slice of them.
#[derive(Debug, Clone, Copy)]
pub enum Lanes<'a> {
    Scalar(u64),
    Slice(&'a [u64]),
}

impl Lanes<'_> {
    #[inline(always)]
    pub fn at(&self, e: usize) -> u64 {
        match self {
            Lanes::Scalar(v) => *v,
            Lanes::Slice(d) => d.get(e).copied().unwrap_or(0),
        }
    }
}

/// Whether `op` is defined on operands of type `d` (the front end's rule; the back ends may
/// assume it).
pub fn binary_defined(op: BinOp, d: DType) -> bool {
    use BinOp::*;
    match op {
        Add | Sub | Mul | Div | Min | Max => d.is_numeric(),
        Rem | Shl | Shr => d.is_int(),
        And | Or | Xor => d.is_int() || d.is_bool(),
        Eq | Ne => true,
        Lt | Le | Gt | Ge => true,
    }
}

/// `x op y` on `bool`s (`min` is `and`, `max` is `or`, `false < true`).
#[inline(always)]
pub fn bool_binary(op: BinOp, x: bool, y: bool) -> bool {
    use BinOp::*;
    match op {
        And | Min => x & y,
        Or | Max => x | y,
        Xor | Ne => x ^ y,
        Eq => x == y,
        Lt => !x & y,
        Le => !x | y,
        Gt => x & !y,
        Ge => x | !y,
        _ => false,
    }
}

/// `a op b` on two values of type `d`.
pub fn binary(op: BinOp, d: DType, a: u64, b: u64) -> u64 {
    use BinOp::*;
    if d == DType::Bool {
        return bool_binary(op, a != 0, b != 0) as u64;
    }
    macro_rules! num {
        ($f:expr) => {
            with_num_type!(d, T => Elem::to_bits($f(<T as Elem>::from_bits(a), <T as Elem>::from_bits(b))), bool => 0)
        };
    }
    macro_rules! int {
        ($f:expr) => {
            with_int_type!(d, T => Elem::to_bits($f(<T as Elem>::from_bits(a), <T as Elem>::from_bits(b))), _ => 0)
        };
    }
    match op {
        Eq | Ne | Lt | Le | Gt | Ge => {
            with_num_type!(d, T => compare::<T>(op, <T as Elem>::from_bits(a), <T as Elem>::from_bits(b)) as u64, bool => 0)
        }
        Add => num!(Num::add),
        Sub => num!(Num::sub),
        Mul => num!(Num::mul),
        Div => num!(Num::div),
        Rem => num!(Num::rem),
        Min => num!(Num::min),
        Max => num!(Num::max),
        And => int!(Bits::and),
        Or => int!(Bits::or),
        Xor => int!(Bits::xor),
        Shl => int!(|x: _, y| Bits::shl(x, Elem::to_bits(y))),
        Shr => int!(|x: _, y| Bits::shr(x, Elem::to_bits(y))),
    }
}

/// IEEE comparisons for floats (`!=` is true when either is NaN, the others false), plain ones
/// for integers.
#[inline(always)]
pub fn compare<T: Num>(op: BinOp, x: T, y: T) -> bool {
    match op {
        BinOp::Eq => x == y,
        BinOp::Ne => x != y,
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        _ => x >= y,
    }
}

/// Whether unary `op` is defined on type `d`.
pub fn unary_defined(op: UnOp, d: DType) -> bool {
    match op {
        UnOp::Neg | UnOp::Abs => d.is_numeric(),
        UnOp::Not => d.is_int() || d.is_bool(),
        UnOp::Sqrt | UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::Round | UnOp::RoundEven => {
            d.is_float()
        }
    }
}

/// Rust's `round` (half away from zero) from exact operations, as the PTX computes it:
/// `t = trunc(x)`; `t + copysign(1, x)` when `|x - t| >= 0.5` (the difference is exact).
pub fn round_half_away<T: Num>(x: T) -> T {
    if x.is_nan() {
        return x.trunc();
    }
    let t = x.trunc();
    let d = x.sub(t).abs();
    if d.to_f64() >= 0.5 {
        let one = if x.to_f64() < 0.0 {
            <T as Num>::from_f64(-1.0)
        } else {
            <T as Num>::from_f64(1.0)
        };
        t.add(one)
    } else {
        t
    }
}

/// `a * b + c` with one rounding, over `n` elements of float type `d`.
pub fn fma_into(d: DType, a: Lanes<'_>, b: Lanes<'_>, c: Lanes<'_>, n: usize, out: &mut Vec<u64>) {
    out.clear();
    with_num_type!(d, T => {
        out.extend((0..n).map(|e| {
            let (x, y, z) = (
                <T as Elem>::from_bits(a.at(e)),
                <T as Elem>::from_bits(b.at(e)),
                <T as Elem>::from_bits(c.at(e)),
            );
            Elem::to_bits(x.fma(y, z))
        }))
    }, bool => ())
}

/// `op x` on one value of type `d` (0 where `op` is not defined on `d`).
#[inline]
pub fn unary(op: UnOp, d: DType, x: u64) -> u64 {
    match (op, d) {
        (UnOp::Not, DType::Bool) => (x == 0) as u64,
        (UnOp::Not, _) => {
            with_int_type!(d, T => Elem::to_bits(Bits::not(<T as Elem>::from_bits(x))), _ => 0)
        }
        _ => with_num_type!(d, T => {
            let v = <T as Elem>::from_bits(x);
            // `Num::` paths: the inherent methods of the same names (`i8::abs`, `f32::sqrt`)
            // have other semantics.
            Elem::to_bits(match op {
                UnOp::Neg => Num::neg(v),
                UnOp::Abs => Num::abs(v),
                UnOp::Sqrt => Num::sqrt(v),
                UnOp::Floor => Num::floor(v),
                UnOp::Ceil => Num::ceil(v),
                UnOp::Trunc => Num::trunc(v),
                UnOp::RoundEven => Num::round_even(v),
                UnOp::Round => round_half_away(v),
                UnOp::Not => unreachable!("handled above"),
            })
        }, bool => 0),
    }
}

/// A value read for a conversion: integers exactly, floats widened exactly to `f64`.
#[derive(Clone, Copy)]
enum Wide {
    Int(i128),
    Float(f64),
    Bool(bool),
}

#[inline(always)]
fn widen(d: DType, bits: u64) -> Wide {
    if d == DType::Bool {
        return Wide::Bool(bits != 0);
    }
    with_num_type!(d, T => {
        let v = <T as Elem>::from_bits(bits);
        if d.is_float() { Wide::Float(v.to_f64()) } else { Wide::Int(v.to_i128()) }
    }, bool => unreachable!())
}

#[inline(always)]
fn narrow(to: DType, w: Wide) -> u64 {
    if to == DType::Bool {
        return match w {
            Wide::Bool(b) => b as u64,
            Wide::Int(i) => (i != 0) as u64,
            // NaN is not zero.
            Wide::Float(f) => (f != 0.0) as u64,
        };
    }
    with_num_type!(to, T => {
        let v = match w {
            Wide::Bool(b) => T::from_i128(b as i128),
            Wide::Int(i) => T::from_i128(i),
            // The trait's conversion, not `half`'s inherent `from_f64` (which drops the low 32
            // bits of the f64 before rounding, so it rounds some values the wrong way).
            Wide::Float(f) => <T as Num>::from_f64(f),
        };
        Elem::to_bits(v)
    }, bool => unreachable!())
}

/// Rust's `x as to` for a value of type `from` (see the module documentation). Inlined, so
/// that a loop over one pair of types compiles to that conversion alone.
#[inline]
pub fn cast(from: DType, to: DType, bits: u64) -> u64 {
    if from == to {
        return canon(to, bits);
    }
    narrow(to, widen(from, bits))
}

/// The value `v` (an integer) as an element of type `d`, if it is representable.
#[inline]
pub fn int_const(d: DType, v: i128) -> Option<u64> {
    with_int_type!(d, T => {
        let t = T::try_from(v).ok()?;
        Some(Elem::to_bits(t))
    }, _ => match d {
        DType::Bool => None,
        // Integer values given where a float is expected (`zeros`, `ones`) convert exactly or
        // round like any conversion.
        _ => Some(narrow(d, Wide::Int(v))),
    })
}

/// The bits of the float literal `text` (Rust syntax without suffix) as type `d`: parsed at the
/// target precision where Rust can (`f32`, `f64`) so it rounds once.
pub fn float_const(d: DType, text: &str) -> Option<u64> {
    let text: String = text.chars().filter(|c| *c != '_').collect();
    match d {
        DType::F32 => text.parse::<f32>().ok().map(|v| v.to_bits() as u64),
        DType::F64 => text.parse::<f64>().ok().map(f64::to_bits),
        DType::F16 => text
            .parse::<f64>()
            .ok()
            .map(|v| super::f64_to_binary16(v, 10, 5) as u64),
        DType::BF16 => text
            .parse::<f64>()
            .ok()
            .map(|v| super::f64_to_binary16(v, 7, 8) as u64),
        _ => None,
    }
}

/// The value of `bits` as a signed integer of type `d` (sign- or zero-extended).
#[inline]
pub fn as_i128(d: DType, bits: u64) -> i128 {
    match widen(d, bits) {
        Wide::Int(i) => i,
        Wide::Bool(b) => b as i128,
        Wide::Float(f) => f as i128,
    }
}

/// The identity of reduction `op` on elements of type `d` (the value of an empty reduction):
/// `-0.0` for float sums (the exact additive identity), NaN for float `min`/`max` (which ignore
/// NaN operands), the extreme values for integers, all ones for `and`.
pub fn reduce_identity(op: crate::ir::ReduceOp, d: DType) -> u64 {
    use crate::ir::ReduceOp;
    match op {
        ReduceOp::Sum => zero(d),
        ReduceOp::Min => min_identity(d),
        ReduceOp::Max => max_identity(d),
        ReduceOp::Or => 0,
        ReduceOp::And => {
            if d == DType::Bool {
                1
            } else {
                d.mask()
            }
        }
    }
}

/// The additive identity, and the identities of `min` and `max`, of type `d`.
pub fn zero(d: DType) -> u64 {
    with_num_type!(d, T => Elem::to_bits(T::zero()), bool => 0)
}
pub fn min_identity(d: DType) -> u64 {
    with_num_type!(d, T => Elem::to_bits(T::min_identity()), bool => 1)
}
pub fn max_identity(d: DType) -> u64 {
    with_num_type!(d, T => Elem::to_bits(T::max_identity()), bool => 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32b(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn integer_edges() {
        let i32b = |x: i32| x as u32 as u64;
        assert_eq!(
            binary(BinOp::Div, DType::I32, i32b(i32::MIN), i32b(-1)),
            i32b(i32::MIN)
        );
        assert_eq!(binary(BinOp::Rem, DType::I32, i32b(5), 0), 0);
        assert_eq!(binary(BinOp::Add, DType::U8, 250, 10), 4);
        assert_eq!(binary(BinOp::Shl, DType::U8, 1, 8), 0);
        assert_eq!(binary(BinOp::Shr, DType::I8, 0x80, 9), 0xff);
        assert_eq!(binary(BinOp::Shr, DType::U64, u64::MAX, 64), 0);
        assert_eq!(binary(BinOp::Lt, DType::U32, 1, 0xffff_ffff), 1);
        assert_eq!(binary(BinOp::Lt, DType::I32, 1, 0xffff_ffff), 0);
        assert_eq!(unary(UnOp::Neg, DType::I64, 1), u64::MAX);
        assert_eq!(unary(UnOp::Abs, DType::I8, 0x80), 0x80);
    }

    #[test]
    fn float_semantics() {
        let nan = f32::from_bits(0x7fc0_0001);
        assert_eq!(
            binary(BinOp::Add, DType::F32, f32b(nan), f32b(1.0)),
            NAN_F32_U64
        );
        assert_eq!(
            binary(BinOp::Min, DType::F32, f32b(nan), f32b(1.0)),
            f32b(1.0)
        );
        assert_eq!(
            binary(BinOp::Min, DType::F32, f32b(0.0), f32b(-0.0)),
            f32b(-0.0)
        );
        assert_eq!(
            binary(BinOp::Max, DType::F32, f32b(-0.0), f32b(0.0)),
            f32b(0.0)
        );
        assert_eq!(binary(BinOp::Ne, DType::F32, f32b(nan), f32b(nan)), 1);
        assert_eq!(binary(BinOp::Eq, DType::F32, f32b(nan), f32b(nan)), 0);
        // f16: 1 + 2^-11 rounds to even (1.0); computed in f32.
        let one = half::f16::ONE.to_bits() as u64;
        let tiny = half::f16::from_f32(2f32.powi(-11)).to_bits() as u64;
        assert_eq!(binary(BinOp::Add, DType::F16, one, tiny), one);
    }

    const NAN_F32_U64: u64 = super::super::NAN_F32 as u64;

    #[test]
    fn conversions_are_rust_as() {
        assert_eq!(cast(DType::F32, DType::I32, f32b(1e20)), i32::MAX as u64);
        assert_eq!(cast(DType::F32, DType::U8, f32b(-3.0)), 0);
        assert_eq!(cast(DType::F32, DType::I32, f32b(f32::NAN)), 0);
        assert_eq!(cast(DType::I32, DType::U8, 0x1ff), 0xff);
        assert_eq!(cast(DType::I8, DType::I32, 0xff), 0xffff_ffff);
        assert_eq!(cast(DType::U8, DType::F32, 200), f32b(200.0));
        assert_eq!(cast(DType::F32, DType::Bool, f32b(f32::NAN)), 1);
        assert_eq!(cast(DType::Bool, DType::F64, 1), 1f64.to_bits());
        assert_eq!(
            cast(DType::F32, DType::BF16, f32b(1.0)),
            half::bf16::ONE.to_bits() as u64
        );
        assert_eq!(int_const(DType::U8, 256), None);
        assert_eq!(int_const(DType::I8, -128), Some(0x80));
        assert_eq!(float_const(DType::F32, "0.1"), Some(f32b(0.1)));
    }
}
