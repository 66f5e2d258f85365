//! The semantics of atomic read-modify-writes per element type.
//!
//! * integer `add`/`sub` wrap, `min`/`max` compare by the type's signedness;
//! * float `add` rounds to nearest even; `f32` add on *global* memory flushes subnormal inputs
//!   and results to zero of the same sign (what `atom.global.add.f32` does on NVIDIA GPUs),
//!   everywhere else subnormals are kept (`.noftz` forms, shared memory, `f64`);
//! * float `min`/`max` order values by IEEE 754 `totalOrder`:
//!   `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN` (`f32::total_cmp`). PTX has no float
//!   `atom.min/max` for `f32`/`f64`; the back end compares the bit patterns as integers, which is
//!   exactly this order, so both back ends agree and the result is never a rounding of anything;
//! * `exch` stores the operand, `cas` stores it where the old bits equal `compare`;
//! * `inc`/`dec` are PTX's (unsigned, wrapping at the bound given as the operand).

use super::{Bits, Elem, Num};
use crate::dtype::DType;
use crate::ir::RmwOp;
use crate::{with_int_type, with_num_type};

/// Whether `op` has a meaning on elements of type `d` (the legality table further restricts
/// what PTX can do atomically).
pub fn rmw_defined(op: RmwOp, d: DType) -> bool {
    match op {
        RmwOp::Add | RmwOp::Sub | RmwOp::Min | RmwOp::Max => d.is_numeric(),
        RmwOp::Exch | RmwOp::Cas => !d.is_bool(),
        RmwOp::And | RmwOp::Or | RmwOp::Xor => d.is_int(),
        RmwOp::Inc | RmwOp::Dec => d == DType::U32,
    }
}

/// Flush an `f32` subnormal to zero of the same sign.
fn ftz(x: f32) -> f32 {
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// The new value of a cell holding `old` after `op` with operand `v` (and `cmp` for `cas`).
/// `global_f32_ftz`: the cell is in global memory (see the module documentation).
#[inline]
pub fn rmw_new(op: RmwOp, d: DType, old: u64, v: u64, cmp: u64, global: bool) -> u64 {
    match op {
        RmwOp::Exch => v,
        RmwOp::Cas => {
            if old == cmp {
                v
            } else {
                old
            }
        }
        RmwOp::And => {
            with_int_type!(d, T => Elem::to_bits(T::from_bits(old).and(T::from_bits(v))), _ => old & v)
        }
        RmwOp::Or => {
            with_int_type!(d, T => Elem::to_bits(T::from_bits(old).or(T::from_bits(v))), _ => old | v)
        }
        RmwOp::Xor => {
            with_int_type!(d, T => Elem::to_bits(T::from_bits(old).xor(T::from_bits(v))), _ => old ^ v)
        }
        RmwOp::Inc => {
            let (o, b) = (old as u32, v as u32);
            (if o >= b { 0 } else { o + 1 }) as u64
        }
        RmwOp::Dec => {
            let (o, b) = (old as u32, v as u32);
            (if o == 0 || o > b { b } else { o - 1 }) as u64
        }
        RmwOp::Add | RmwOp::Sub => {
            let v = if op == RmwOp::Sub {
                super::unary(crate::ir::UnOp::Neg, d, v)
            } else {
                v
            };
            if d == DType::F32 && global {
                let (a, b) = (f32::from_bits(old as u32), f32::from_bits(v as u32));
                return Elem::to_bits(ftz(Num::add(ftz(a), ftz(b))));
            }
            with_num_type!(d, T => Elem::to_bits(Num::add(<T as Elem>::from_bits(old), <T as Elem>::from_bits(v))), bool => old | v)
        }
        RmwOp::Min | RmwOp::Max => {
            use std::cmp::Ordering::{Greater, Less};
            let ord = if d.is_float() {
                total_order_key(d, v).cmp(&total_order_key(d, old))
            } else {
                with_int_type!(d, T => Ord::cmp(&T::from_bits(v), &T::from_bits(old)), _ => v.cmp(&old))
            };
            let take_v = if op == RmwOp::Min {
                ord == Less
            } else {
                ord == Greater
            };
            if take_v {
                v
            } else {
                old
            }
        }
    }
}

/// A signed integer that orders float bit patterns by IEEE 754 `totalOrder`.
pub fn total_order_key(d: DType, bits: u64) -> i64 {
    let w = d.bits();
    let sign = 1u64 << (w - 1);
    let mag = (bits & (sign - 1)) as i64;
    if bits & sign != 0 {
        -mag - 1
    } else {
        mag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_min_max_follow_total_order() {
        let b = |x: f32| x.to_bits() as u64;
        let nan = b(f32::NAN);
        let neg_nan = b(-f32::NAN);
        assert_eq!(rmw_new(RmwOp::Max, DType::F32, b(1.0), nan, 0, true), nan);
        assert_eq!(
            rmw_new(RmwOp::Min, DType::F32, b(1.0), nan, 0, true),
            b(1.0)
        );
        assert_eq!(
            rmw_new(RmwOp::Min, DType::F32, b(1.0), neg_nan, 0, true),
            neg_nan
        );
        assert_eq!(
            rmw_new(RmwOp::Max, DType::F32, b(-0.0), b(0.0), 0, true),
            b(0.0)
        );
        assert_eq!(
            rmw_new(RmwOp::Min, DType::F32, b(0.0), b(-0.0), 0, true),
            b(-0.0)
        );
        assert_eq!(
            rmw_new(RmwOp::Min, DType::F32, b(-1.0), b(-2.0), 0, true),
            b(-2.0)
        );
        assert_eq!(
            rmw_new(RmwOp::Max, DType::F32, b(-1.0), b(-2.0), 0, true),
            b(-1.0)
        );
        for (x, y) in [(1.5f32, -3.0f32), (-0.0, 0.0), (f32::INFINITY, f32::NAN)] {
            assert_eq!(
                total_order_key(DType::F32, b(x)).cmp(&total_order_key(DType::F32, b(y))),
                x.total_cmp(&y)
            );
        }
    }

    #[test]
    fn global_f32_add_flushes_subnormals() {
        let sub = f32::from_bits(1).to_bits() as u64;
        assert_eq!(rmw_new(RmwOp::Add, DType::F32, 0, sub, 0, true), 0);
        assert_eq!(rmw_new(RmwOp::Add, DType::F32, 0, sub, 0, false), sub);
    }

    #[test]
    fn inc_dec_wrap_at_the_bound() {
        assert_eq!(rmw_new(RmwOp::Inc, DType::U32, 4, 4, 0, false), 0);
        assert_eq!(rmw_new(RmwOp::Inc, DType::U32, 3, 4, 0, false), 4);
        assert_eq!(rmw_new(RmwOp::Dec, DType::U32, 0, 4, 0, false), 4);
        assert_eq!(rmw_new(RmwOp::Dec, DType::U32, 9, 4, 0, false), 4);
        assert_eq!(rmw_new(RmwOp::Dec, DType::U32, 3, 4, 0, false), 2);
    }
}
