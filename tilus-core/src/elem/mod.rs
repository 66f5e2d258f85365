//! The semantics of element operations, written once.
//!
//! Both back ends obey these definitions: the emulator evaluates them, and the PTX generator folds
//! constants with them and emits instructions that compute the same values (the PTX forms are
//! chosen to match: `.rn` float arithmetic, no flush to zero, wrapping integers, saturating
//! float-to-integer conversions). A value is a `u64` holding the type's bit pattern in its low
//! bits, the rest zero ([`canon`]); `bool` is 0 or 1.
//!
//! Definitions where Rust and PTX could differ:
//! * integer `/` and `%` by zero give 0 (the GPU value is unspecified; the emulator and the
//!   constant folder agree on 0), `MIN / -1` wraps;
//! * shifts read the amount as unsigned: by the type's width or more, `<<` gives 0 and `>>`
//!   gives 0 or the sign bits (PTX clamps the amount, Rust would panic);
//! * float results that are NaN are the canonical NaN of their type (what NVIDIA GPUs produce);
//! * float `min`/`max` return the other operand when one is NaN (IEEE 754 minNum/maxNum, PTX
//!   `min.f32`), order `-0.0` below `+0.0`, and give NaN only when both are NaN;
//! * conversions are Rust's `as`: integers wrap, float to integer truncates and saturates (NaN
//!   gives 0), everything else rounds to nearest even; `f16`/`bf16` are reached through `f32`
//!   (as the PTX computes them) except from `f64` to `f16`, which rounds once; `x as bool` is
//!   `x != 0`.

mod ops;
mod rmw;

pub use ops::*;
pub use rmw::*;

use crate::dtype::DType;
use half::{bf16, f16};

/// The canonical bit pattern of `bits` as a value of `d` (upper bits cleared, bools 0/1).
#[inline(always)]
pub fn canon(d: DType, bits: u64) -> u64 {
    match d {
        DType::Bool => (bits != 0) as u64,
        _ => bits & d.mask(),
    }
}

/// A Rust type with the semantics of one element type.
pub trait Elem: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    fn from_bits(bits: u64) -> Self;
    fn to_bits(self) -> u64;
}

/// Arithmetic of one element type, as defined in the module documentation.
pub trait Num: Elem + PartialOrd {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    /// Integer remainder (not defined on floats: the front end rejects it).
    fn rem(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    fn zero() -> Self;
    /// The identity of `min` / `max` reductions (the largest / smallest value, NaN for floats).
    fn min_identity() -> Self;
    fn max_identity() -> Self;
    /// Rust's `as` to and from the widest types of the other classes.
    fn to_i128(self) -> i128;
    fn to_f64(self) -> f64;
    fn from_i128(v: i128) -> Self;
    fn from_f64(v: f64) -> Self;
    fn is_nan(self) -> bool;
    /// Float functions (the identity on integers, which the front end never asks for).
    fn sqrt(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn round_even(self) -> Self;
    /// `self * b + c` rounded once.
    fn fma(self, b: Self, c: Self) -> Self;
}

/// Bit operations of the integer types (and `bool`).
pub trait Bits: Elem {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// `<<` and `>>` by an amount read as unsigned.
    fn shl(self, amount: u64) -> Self;
    fn shr(self, amount: u64) -> Self;
}

macro_rules! int_elem {
    ($($t:ty => $d:ident),*) => {$(
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_bits(bits: u64) -> Self { bits as $t }
            #[inline(always)]
            fn to_bits(self) -> u64 { canon(DType::$d, self as u64) }
        }
        impl Num for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn div(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_div(o) } }
            #[inline(always)] fn rem(self, o: Self) -> Self { if o == 0 { 0 } else { self.wrapping_rem(o) } }
            #[inline(always)] fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn neg(self) -> Self { (0 as $t).wrapping_sub(self) }
            #[inline(always)] fn abs(self) -> Self { if self < (0 as $t) { self.neg() } else { self } }
            #[inline(always)] fn zero() -> Self { 0 }
            #[inline(always)] fn min_identity() -> Self { <$t>::MAX }
            #[inline(always)] fn max_identity() -> Self { <$t>::MIN }
            #[inline(always)] fn to_i128(self) -> i128 { self as i128 }
            #[inline(always)] fn to_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn from_i128(v: i128) -> Self { v as $t }
            #[inline(always)] fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)] fn is_nan(self) -> bool { false }
            fn sqrt(self) -> Self { self }
            fn floor(self) -> Self { self }
            fn ceil(self) -> Self { self }
            fn trunc(self) -> Self { self }
            fn round_even(self) -> Self { self }
            fn fma(self, b: Self, c: Self) -> Self { self.wrapping_mul(b).wrapping_add(c) }
        }
        impl Bits for $t {
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
            #[inline(always)] fn not(self) -> Self { !self }
            #[inline(always)]
            fn shl(self, amount: u64) -> Self {
                if amount >= <$t>::BITS as u64 { 0 } else { self << amount }
            }
            #[inline(always)]
            fn shr(self, amount: u64) -> Self {
                let w = <$t>::BITS as u64;
                if amount >= w {
                    // Arithmetic for signed types: only sign bits remain (0 for unsigned).
                    self >> (w - 1) >> 1
                } else {
                    self >> amount
                }
            }
        }
    )*};
}

int_elem!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64);

impl Elem for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn from_bits(bits: u64) -> Self {
        bits != 0
    }
    #[inline(always)]
    fn to_bits(self) -> u64 {
        self as u64
    }
}

impl Bits for bool {
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn not(self) -> Self {
        !self
    }
    fn shl(self, _: u64) -> Self {
        self
    }
    fn shr(self, _: u64) -> Self {
        self
    }
}

/// The canonical NaN of each float type (what NVIDIA GPUs return for a NaN result).
pub const NAN_F32: u32 = 0x7fff_ffff;
pub const NAN_F64: u64 = 0x7fff_ffff_ffff_ffff;
pub const NAN_F16: u16 = 0x7fff;
pub const NAN_BF16: u16 = 0x7fff;

/// Float arithmetic in the type's own precision (`f32`, `f64`).
macro_rules! float_elem {
    ($t:ty => $d:ident, $bits:ty, $nan:expr) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            #[inline(always)]
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
        }
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                canon_nan(self + o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                canon_nan(self - o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                canon_nan(self * o)
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                canon_nan(self / o)
            }
            fn rem(self, o: Self) -> Self {
                canon_nan(self % o)
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                fmin(self, o)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                fmax(self, o)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn zero() -> Self {
                // The additive identity: -0.0 + x == x for every x, +0.0 and -0.0 included.
                -0.0
            }
            fn min_identity() -> Self {
                <$t>::from_bits($nan)
            }
            fn max_identity() -> Self {
                <$t>::from_bits($nan)
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                canon_nan(v as $t)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn sqrt(self) -> Self {
                canon_nan(<$t>::sqrt(self))
            }
            fn floor(self) -> Self {
                canon_nan(<$t>::floor(self))
            }
            fn ceil(self) -> Self {
                canon_nan(<$t>::ceil(self))
            }
            fn trunc(self) -> Self {
                canon_nan(<$t>::trunc(self))
            }
            fn round_even(self) -> Self {
                canon_nan(<$t>::round_ties_even(self))
            }
            fn fma(self, b: Self, c: Self) -> Self {
                canon_nan(<$t>::mul_add(self, b, c))
            }
        }
    };
}

float_elem!(f32 => F32, u32, NAN_F32);
float_elem!(f64 => F64, u64, NAN_F64);

/// Replace any NaN by the canonical NaN.
pub trait CanonNan: Copy {
    fn canon_nan(self) -> Self;
}
impl CanonNan for f32 {
    #[inline(always)]
    fn canon_nan(self) -> Self {
        if self.is_nan() {
            f32::from_bits(NAN_F32)
        } else {
            self
        }
    }
}
impl CanonNan for f64 {
    #[inline(always)]
    fn canon_nan(self) -> Self {
        if self.is_nan() {
            f64::from_bits(NAN_F64)
        } else {
            self
        }
    }
}
#[inline(always)]
fn canon_nan<T: CanonNan>(x: T) -> T {
    x.canon_nan()
}

/// minNum with `-0.0 < +0.0`; NaN only when both are NaN.
#[inline(always)]
fn fmin<T: Num + CanonNan + Into<f64>>(a: T, b: T) -> T {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => canon_nan(a),
        (true, false) => b,
        (false, true) => a,
        _ => {
            let (x, y): (f64, f64) = (a.into(), b.into());
            if x < y || (x == y && x.is_sign_negative()) {
                a
            } else {
                b
            }
        }
    }
}

/// maxNum with `-0.0 < +0.0`; NaN only when both are NaN.
#[inline(always)]
fn fmax<T: Num + CanonNan + Into<f64>>(a: T, b: T) -> T {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => canon_nan(a),
        (true, false) => b,
        (false, true) => a,
        _ => {
            let (x, y): (f64, f64) = (a.into(), b.into());
            if x > y || (x == y && x.is_sign_positive()) {
                a
            } else {
                b
            }
        }
    }
}

/// `f16` and `bf16`: computed in `f32`, rounded to nearest even.
macro_rules! half_elem {
    ($t:ty => $d:ident, $nan:expr) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as u16)
            }
            #[inline(always)]
            fn to_bits(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
        }
        impl CanonNan for $t {
            #[inline(always)]
            fn canon_nan(self) -> Self {
                if self.is_nan() {
                    <$t>::from_bits($nan)
                } else {
                    self
                }
            }
        }
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                round_f32::<$t>(self.to_f32() + o.to_f32())
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                round_f32::<$t>(self.to_f32() - o.to_f32())
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                round_f32::<$t>(self.to_f32() * o.to_f32())
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                round_f32::<$t>(self.to_f32() / o.to_f32())
            }
            fn rem(self, o: Self) -> Self {
                round_f32::<$t>(self.to_f32() % o.to_f32())
            }
            #[inline(always)]
            fn min(self, o: Self) -> Self {
                round_f32::<$t>(fmin(self.to_f32(), o.to_f32()))
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                round_f32::<$t>(fmax(self.to_f32(), o.to_f32()))
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::from_bits(<$t>::to_bits(self) & 0x7fff)
            }
            fn zero() -> Self {
                <$t>::NEG_ZERO
            }
            fn min_identity() -> Self {
                <$t>::from_bits($nan)
            }
            fn max_identity() -> Self {
                <$t>::from_bits($nan)
            }
            #[inline(always)]
            fn to_i128(self) -> i128 {
                self.to_f32() as i128
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
            #[inline(always)]
            fn from_i128(v: i128) -> Self {
                round_f32::<$t>(v as f32)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t as FromWide>::from_f64_as_ptx(v)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn sqrt(self) -> Self {
                round_f32::<$t>(self.to_f32().sqrt())
            }
            fn floor(self) -> Self {
                round_f32::<$t>(self.to_f32().floor())
            }
            fn ceil(self) -> Self {
                round_f32::<$t>(self.to_f32().ceil())
            }
            fn trunc(self) -> Self {
                round_f32::<$t>(self.to_f32().trunc())
            }
            fn round_even(self) -> Self {
                round_f32::<$t>(self.to_f32().round_ties_even())
            }
            fn fma(self, b: Self, c: Self) -> Self {
                round_f32::<$t>(self.to_f32().mul_add(b.to_f32(), c.to_f32()))
            }
        }
    };
}

half_elem!(f16 => F16, NAN_F16);
half_elem!(bf16 => BF16, NAN_BF16);

/// Rounding of wider floats into a 16-bit type, as the PTX computes it.
pub trait FromWide: Sized {
    fn from_f32_rn(x: f32) -> Self;
    fn from_f64_as_ptx(x: f64) -> Self;
}

impl FromWide for f16 {
    #[inline(always)]
    fn from_f32_rn(x: f32) -> Self {
        f16::from_f32(x).canon_nan()
    }
    /// `cvt.rn.f16.f64`: one rounding (`half`'s `from_f64` rounds twice where the CPU has
    /// F16C, through `f32`, and drops low bits elsewhere).
    fn from_f64_as_ptx(x: f64) -> Self {
        f16::from_bits(f64_to_binary16(x, 10, 5)).canon_nan()
    }
}

impl FromWide for bf16 {
    #[inline(always)]
    fn from_f32_rn(x: f32) -> Self {
        bf16::from_f32(x).canon_nan()
    }
    /// Through `f32` (`cvt.rn.f32.f64` then `cvt.rn.bf16.f32`).
    fn from_f64_as_ptx(x: f64) -> Self {
        bf16::from_f32(x as f32).canon_nan()
    }
}

/// `x` rounded once, to nearest with ties to even, to a 16-bit binary float of `man` fraction
/// bits and `exp` exponent bits (`f16`: 10, 5; `bf16`: 7, 8): its bits (NaN as some NaN).
pub(crate) fn f64_to_binary16(x: f64, man: u32, exp: u32) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let inf = (((1u32 << exp) - 1) << man) as u16;
    if x.is_nan() {
        return inf | (1 << (man - 1));
    }
    if x.is_infinite() {
        return sign | inf;
    }
    let a = x.abs();
    let bias = (1i32 << (exp - 1)) - 1;
    let emin = 1 - bias;
    // The binade of `a` (subnormals share the smallest normal one's quantum).
    let mut e = Ord::max(((a.to_bits() >> 52) as i32) - 1023, emin);
    // a / quantum is exact (a power-of-two scaling far from f64's limits).
    let mut r = (a / 2f64.powi(e - man as i32)).round_ties_even() as u32;
    if r >= 1 << (man + 1) {
        // Rounded up into the next binade.
        r >>= 1;
        e += 1;
    }
    if r < 1 << man {
        return sign | r as u16; // subnormal or zero
    }
    let field = e + bias;
    if field >= (1 << exp) - 1 {
        return sign | inf;
    }
    sign | ((field as u16) << man) | (r - (1 << man)) as u16
}

#[inline(always)]
fn round_f32<T: FromWide>(x: f32) -> T {
    T::from_f32_rn(x)
}

/// Calls `$body` with `$T` bound to the Rust type of the numeric dtype `$d` (not bool).
#[macro_export]
#[doc(hidden)]
macro_rules! with_num_type {
    ($d:expr, $T:ident => $body:expr, bool => $b:expr) => {{
        use $crate::dtype::DType;
        match $d {
            DType::Bool => $b,
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::F16 => {
                type $T = half::f16;
                $body
            }
            DType::BF16 => {
                type $T = half::bf16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
        }
    }};
}

/// Calls `$body` with `$T` bound to the Rust type of the integer dtype `$d`; `$other` for
/// floats and bool.
#[macro_export]
#[doc(hidden)]
macro_rules! with_int_type {
    ($d:expr, $T:ident => $body:expr, _ => $other:expr) => {{
        use $crate::dtype::DType;
        match $d {
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            _ => $other,
        }
    }};
}

#[cfg(test)]
mod binary16_tests {
    use super::*;

    /// Every f32 exactly representable in f64 rounds the same once from f64 as from f32
    /// (half's f32 conversions round correctly); sampled over all exponents, both signs.
    #[test]
    fn rounding_from_f64_agrees_with_the_f32_conversions() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..2_000_000u64 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let bits = if i < 65536 {
                (i as u32) << 16 | 0x8000
            } else {
                s as u32
            };
            let x = f32::from_bits(bits);
            if x.is_nan() {
                continue;
            }
            let b = f64_to_binary16(x as f64, 7, 8);
            assert_eq!(b, bf16::from_f32(x).to_bits(), "bf16 of {x:e} ({bits:#x})");
            let h = f64_to_binary16(x as f64, 10, 5);
            assert_eq!(h, f16::from_f32(x).to_bits(), "f16 of {x:e} ({bits:#x})");
        }
    }

    /// Found on an H100 (tests/collectives.rs, a bf16 cumprod): 0x3fa28007 as bf16 is 0x3fa3
    /// (cvt.rn.bf16.f32); `half::bf16::from_f64` gives 0x3fa2.
    #[test]
    fn casts_round_once_to_nearest() {
        assert_eq!(cast(DType::F32, DType::BF16, 0x3fa2_8007), 0x3fa3);
        let wide = (f32::from_bits(0x3fa2_8007) as f64).to_bits();
        assert_eq!(cast(DType::F64, DType::BF16, wide), 0x3fa3);
        // f64 -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie, so it rounds up (through
        // f32 it would first become the tie 1 + 2^-11, then round to even, down).
        let y = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(cast(DType::F64, DType::F16, y.to_bits()), 0x3c01);
        assert_eq!(f64_to_binary16(65519.0, 10, 5), 0x7bff);
        assert_eq!(f64_to_binary16(65520.0, 10, 5), 0x7c00);
        assert_eq!(f64_to_binary16(-2f64.powi(-25), 10, 5), 0x8000);
        assert_eq!(f64_to_binary16(2f64.powi(-25) * 1.5, 10, 5), 0x0001);
        assert_eq!(float_const(DType::BF16, "1.01171875000001"), Some(0x3f82));
    }
}
