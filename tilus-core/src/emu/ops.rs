//! Element semantics of the arithmetic instructions, and tight element-wise loops over them.
//!
//! Every function here is total (no panics, no traps): i32 arithmetic wraps, division by zero
//! gives 0, and shifts follow PTX (`shl.b32` by more than 31 gives 0, `shr.s32` by more than 31
//! fills with the sign bit; the amount is read as unsigned, so a negative amount is "huge").

use super::value::Elems;
use crate::ir::{BinOp, DType, ReduceOp, UnOp};

/// Truncating division; by zero gives 0 (the GPU value is unspecified), `i32::MIN / -1` wraps.
#[inline(always)]
pub(crate) fn div(a: i32, b: i32) -> i32 {
    if b == 0 {
        0
    } else {
        a.wrapping_div(b)
    }
}

/// Remainder with the sign of the dividend; by zero gives 0, `i32::MIN % -1` is 0.
#[inline(always)]
pub(crate) fn rem(a: i32, b: i32) -> i32 {
    if b == 0 {
        0
    } else {
        a.wrapping_rem(b)
    }
}

/// PTX `shl.b32`: amounts are unsigned and clamped to 32, which shifts everything out.
#[inline(always)]
pub(crate) fn shl(a: i32, b: i32) -> i32 {
    let s = b as u32;
    if s > 31 {
        0
    } else {
        a << s
    }
}

/// PTX `shr.s32`: amounts are unsigned and clamped to 32, which leaves only sign bits.
#[inline(always)]
pub(crate) fn shr(a: i32, b: i32) -> i32 {
    a >> (b as u32).min(31)
}

/// Expands `$body` once per binary op with `$f` bound to that op's closure, so the element
/// loops are monomorphised per op instead of calling through a function pointer per element.
macro_rules! with_binop {
    ($op:expr, |$f:ident| $body:expr) => {
        match $op {
            BinOp::Add => {
                let $f = |x: i32, y: i32| x.wrapping_add(y);
                $body
            }
            BinOp::Sub => {
                let $f = |x: i32, y: i32| x.wrapping_sub(y);
                $body
            }
            BinOp::Mul => {
                let $f = |x: i32, y: i32| x.wrapping_mul(y);
                $body
            }
            BinOp::Div => {
                let $f = div;
                $body
            }
            BinOp::Rem => {
                let $f = rem;
                $body
            }
            // On bools (0/1) the bitwise ops are the logical ones.
            BinOp::And => {
                let $f = |x: i32, y: i32| x & y;
                $body
            }
            BinOp::Or => {
                let $f = |x: i32, y: i32| x | y;
                $body
            }
            BinOp::Xor => {
                let $f = |x: i32, y: i32| x ^ y;
                $body
            }
            BinOp::Shl => {
                let $f = shl;
                $body
            }
            BinOp::Shr => {
                let $f = shr;
                $body
            }
            BinOp::Min => {
                let $f = |x: i32, y: i32| x.min(y);
                $body
            }
            BinOp::Max => {
                let $f = |x: i32, y: i32| x.max(y);
                $body
            }
            BinOp::Eq => {
                let $f = |x: i32, y: i32| (x == y) as i32;
                $body
            }
            BinOp::Ne => {
                let $f = |x: i32, y: i32| (x != y) as i32;
                $body
            }
            BinOp::Lt => {
                let $f = |x: i32, y: i32| (x < y) as i32;
                $body
            }
            BinOp::Le => {
                let $f = |x: i32, y: i32| (x <= y) as i32;
                $body
            }
            BinOp::Gt => {
                let $f = |x: i32, y: i32| (x > y) as i32;
                $body
            }
            BinOp::Ge => {
                let $f = |x: i32, y: i32| (x >= y) as i32;
                $body
            }
        }
    };
}

/// A binary op on two scalars.
pub(crate) fn binary(op: BinOp, a: i32, b: i32) -> i32 {
    with_binop!(op, |f| f(a, b))
}

/// `out = a op b` element-wise over `n` elements (scalars broadcast). The caller has checked
/// that tile operands have `n` elements.
pub(crate) fn binary_into(op: BinOp, a: Elems<'_>, b: Elems<'_>, n: usize, out: &mut Vec<i32>) {
    with_binop!(op, |f| map2(a, b, n, out, f))
}

#[inline(always)]
fn map2(a: Elems<'_>, b: Elems<'_>, n: usize, out: &mut Vec<i32>, f: impl Fn(i32, i32) -> i32) {
    out.clear();
    match (a, b) {
        (Elems::Tile(_, x), Elems::Tile(_, y)) => {
            out.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)))
        }
        (Elems::Tile(_, x), Elems::Scalar(y)) => out.extend(x.iter().map(|&x| f(x, y))),
        (Elems::Scalar(x), Elems::Tile(_, y)) => out.extend(y.iter().map(|&y| f(x, y))),
        (Elems::Scalar(x), Elems::Scalar(y)) => out.resize(n, f(x, y)),
    }
}

/// A unary op; `dtype` is the operand's (Not is logical on bool, bitwise on i32).
#[inline(always)]
pub(crate) fn unary(op: UnOp, dtype: DType, x: i32) -> i32 {
    match (op, dtype) {
        (UnOp::Neg, _) => x.wrapping_neg(),
        (UnOp::Not, DType::Bool) => (x == 0) as i32,
        (UnOp::Not, DType::I32) => !x,
    }
}

/// Conversion of one element between dtypes (bool -> i32 is 0/1, i32 -> bool is `!= 0`).
#[inline(always)]
pub(crate) fn cast(from: DType, to: DType, x: i32) -> i32 {
    match (from, to) {
        (DType::I32, DType::I32) => x,
        // Bools are normalised on the way through so that any nonzero pattern reads as true.
        (_, DType::Bool) | (DType::Bool, DType::I32) => (x != 0) as i32,
    }
}

/// Reduction of all elements; an empty tile reduces to the op's identity.
pub(crate) fn reduce(op: ReduceOp, dtype: DType, xs: &[i32]) -> i32 {
    match op {
        ReduceOp::Sum => xs.iter().fold(0i32, |a, &x| a.wrapping_add(x)),
        ReduceOp::Min => xs.iter().copied().min().unwrap_or(i32::MAX),
        ReduceOp::Max => xs.iter().copied().max().unwrap_or(i32::MIN),
        ReduceOp::Or => xs.iter().fold(0, |a, &x| a | x),
        ReduceOp::And => {
            // The identity of a logical and is `true` (1), of a bitwise and all ones.
            let id = if dtype == DType::Bool { 1 } else { -1 };
            xs.iter().fold(id, |a, &x| a & x)
        }
    }
}
