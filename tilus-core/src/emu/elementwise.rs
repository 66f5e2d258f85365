//! Element-wise tile operations as typed loops: the element type (and the operator) is chosen
//! once per tile operation, then one monomorphised loop runs over word slices (`buf.rs`) with
//! the semantics of `crate::elem` (its `Num` and `Bits` traits, `compare`, `cast`).
//!
//! Operands are scalars (one value for every element) or tiles of `n` elements (checked by the
//! caller); a tile whose words have the wrong width for the operation's type is an IR type
//! error, returned as `Err`.

use super::buf::{get, put, with_elem_type, with_word, Buf, Pool, Stored, Word};
use super::value::{Elems, Src};
use crate::elem::{self, Bits, Elem, Num};
use crate::ir::{BinOp, DType, UnOp};
use crate::{with_int_type, with_num_type};

type Res = Result<Buf, String>;

fn src<W: Word>(e: Elems<'_>) -> Result<Src<'_, W>, String> {
    e.src::<W>()
        .ok_or_else(|| "a tile operand whose elements have another width".to_string())
}

fn undefined(what: impl std::fmt::Debug, d: DType) -> String {
    format!("{what:?} is not defined on {}", d.name())
}

#[inline(always)]
fn map1<A: Stored, R: Stored>(
    x: Src<'_, A::W>,
    n: usize,
    pool: &mut Pool,
    f: impl Fn(A) -> R,
) -> Buf {
    let g = |w: A::W| put::<R>(f(get::<A>(w)));
    let mut out = pool.take::<R::W>();
    match x {
        Src::Each(s) => out.extend(s.iter().map(|&w| g(w))),
        Src::One(w) => out.resize(n, g(w)),
    }
    R::W::wrap(out)
}

#[inline(always)]
fn map2<A: Stored, R: Stored>(
    a: Src<'_, A::W>,
    b: Src<'_, A::W>,
    n: usize,
    pool: &mut Pool,
    f: impl Fn(A, A) -> R,
) -> Buf {
    let g = |x: A::W, y: A::W| put::<R>(f(get::<A>(x), get::<A>(y)));
    let mut out = pool.take::<R::W>();
    match (a, b) {
        (Src::Each(x), Src::Each(y)) => out.extend(x.iter().zip(y).map(|(&x, &y)| g(x, y))),
        (Src::Each(x), Src::One(y)) => out.extend(x.iter().map(|&x| g(x, y))),
        (Src::One(x), Src::Each(y)) => out.extend(y.iter().map(|&y| g(x, y))),
        (Src::One(x), Src::One(y)) => out.resize(n, g(x, y)),
    }
    R::W::wrap(out)
}

/// `a op b` on elements of the numeric type `T`; `None` for the bit operators.
fn num_binary<T: Stored + Num>(
    op: BinOp,
    a: Src<'_, T::W>,
    b: Src<'_, T::W>,
    n: usize,
    pool: &mut Pool,
) -> Option<Buf> {
    use BinOp::*;
    let cmp = |pool: &mut Pool, f: fn(T, T) -> bool| map2::<T, bool>(a, b, n, pool, f);
    Some(match op {
        Eq => cmp(pool, |x, y| elem::compare(Eq, x, y)),
        Ne => cmp(pool, |x, y| elem::compare(Ne, x, y)),
        Lt => cmp(pool, |x, y| elem::compare(Lt, x, y)),
        Le => cmp(pool, |x, y| elem::compare(Le, x, y)),
        Gt => cmp(pool, |x, y| elem::compare(Gt, x, y)),
        Ge => cmp(pool, |x, y| elem::compare(Ge, x, y)),
        Add => map2::<T, T>(a, b, n, pool, Num::add),
        Sub => map2::<T, T>(a, b, n, pool, Num::sub),
        Mul => map2::<T, T>(a, b, n, pool, Num::mul),
        Div => map2::<T, T>(a, b, n, pool, Num::div),
        Rem => map2::<T, T>(a, b, n, pool, Num::rem),
        Min => map2::<T, T>(a, b, n, pool, Num::min),
        Max => map2::<T, T>(a, b, n, pool, Num::max),
        And | Or | Xor | Shl | Shr => return None,
    })
}

/// `a op b` on elements of the integer type `T`.
fn int_binary<T: Stored + Num + Bits>(
    op: BinOp,
    a: Src<'_, T::W>,
    b: Src<'_, T::W>,
    n: usize,
    pool: &mut Pool,
) -> Buf {
    use BinOp::*;
    match op {
        And => map2::<T, T>(a, b, n, pool, Bits::and),
        Or => map2::<T, T>(a, b, n, pool, Bits::or),
        Xor => map2::<T, T>(a, b, n, pool, Bits::xor),
        // The amount is an element of the same type here, read as unsigned.
        Shl => map2::<T, T>(a, b, n, pool, |x, y| x.shl(Elem::to_bits(y))),
        Shr => map2::<T, T>(a, b, n, pool, |x, y| x.shr(Elem::to_bits(y))),
        _ => match num_binary::<T>(op, a, b, n, pool) {
            Some(buf) => buf,
            None => unreachable!("every operator is numeric or a bit operator"),
        },
    }
}

/// Calls `$body` with `$T` bound to the Rust type of the float dtype `$d`; `$other` otherwise.
macro_rules! with_float_type {
    ($d:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $d {
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
            _ => $other,
        }
    };
}

/// `a op b` over `n` elements of type `d` (comparisons give `bool` elements).
pub(crate) fn binary(
    op: BinOp,
    d: DType,
    a: Elems<'_>,
    b: Elems<'_>,
    n: usize,
    pool: &mut Pool,
) -> Res {
    if d == DType::Bool {
        let (x, y) = (src::<u8>(a)?, src::<u8>(b)?);
        return Ok(map2::<bool, bool>(x, y, n, pool, |x, y| {
            elem::bool_binary(op, x, y)
        }));
    }
    with_int_type!(d, T => {
        let (x, y) = (src(a)?, src(b)?);
        Ok(int_binary::<T>(op, x, y, n, pool))
    }, _ => with_float_type!(d, T => {
        let (x, y) = (src(a)?, src(b)?);
        num_binary::<T>(op, x, y, n, pool).ok_or_else(|| undefined(op, d))
    }, _ => Err(undefined(op, d))))
}

/// `op x` over `n` elements of type `d`.
pub(crate) fn unary(op: UnOp, d: DType, x: Elems<'_>, n: usize, pool: &mut Pool) -> Res {
    if d == DType::Bool {
        return match op {
            UnOp::Not => Ok(map1::<bool, bool>(src(x)?, n, pool, |v| !v)),
            _ => Err(undefined(op, d)),
        };
    }
    if op == UnOp::Not {
        return with_int_type!(d, T => Ok(map1::<T, T>(src(x)?, n, pool, Bits::not)),
            _ => Err(undefined(op, d)));
    }
    with_num_type!(d, T => {
        let x = src(x)?;
        Ok(match op {
            UnOp::Neg => map1::<T, T>(x, n, pool, Num::neg),
            UnOp::Abs => map1::<T, T>(x, n, pool, Num::abs),
            UnOp::Sqrt => map1::<T, T>(x, n, pool, Num::sqrt),
            UnOp::Floor => map1::<T, T>(x, n, pool, Num::floor),
            UnOp::Ceil => map1::<T, T>(x, n, pool, Num::ceil),
            UnOp::Trunc => map1::<T, T>(x, n, pool, Num::trunc),
            UnOp::RoundEven => map1::<T, T>(x, n, pool, Num::round_even),
            UnOp::Round => map1::<T, T>(x, n, pool, elem::round_half_away),
            UnOp::Not => unreachable!("handled above"),
        })
    }, bool => unreachable!("handled above"))
}

/// `x as to` over `n` elements of type `from` (Rust's `as`, `crate::elem::cast`).
pub(crate) fn cast(from: DType, to: DType, x: Elems<'_>, n: usize, pool: &mut Pool) -> Res {
    if from == to {
        return Ok(match x {
            Elems::Tile(_, words) => words.to_buf(pool),
            Elems::Scalar(v) => Buf::filled(to.size_bytes(), n, elem::canon(to, v), pool),
        });
    }
    // Typed by the source type, whose reading folds; the target type is dispatched per
    // element (one loop per pair of types would be 169 loops).
    with_elem_type!(from, A => with_word!(to.size_bytes(), B => {
        let x = src::<<A as Stored>::W>(x)?;
        let conv = move |w: <A as Stored>::W| B::of(elem::cast(<A as Elem>::DTYPE, to, w.bits()));
        let mut out = pool.take::<B>();
        match x {
            Src::Each(s) => out.extend(s.iter().map(|&w| conv(w))),
            Src::One(w) => out.resize(n, conv(w)),
        }
        Ok(B::wrap(out))
    }))
}

/// `a * b + c` with one rounding over `n` elements of type `d`.
pub(crate) fn fma(d: DType, ops: [Elems<'_>; 3], n: usize, pool: &mut Pool) -> Res {
    with_num_type!(d, T => {
        let [a, b, c] = [src::<<T as Stored>::W>(ops[0])?, src(ops[1])?, src(ops[2])?];
        let mut out = pool.take::<<T as Stored>::W>();
        out.extend((0..n).map(|e| {
            put::<T>(Num::fma(get::<T>(a.at(e)), get::<T>(b.at(e)), get::<T>(c.at(e))))
        }));
        Ok(<T as Stored>::W::wrap(out))
    }, bool => Err(undefined("fma", d)))
}

/// `cond ? a : b` over `n` elements of `width` bytes (`cond` is `bool`).
pub(crate) fn select(ops: [Elems<'_>; 3], width: usize, n: usize, pool: &mut Pool) -> Res {
    with_word!(width, W => {
        let (c, x, y) = (src::<u8>(ops[0])?, src::<W>(ops[1])?, src::<W>(ops[2])?);
        let mut out = pool.take::<W>();
        match (c, x, y) {
            (Src::Each(c), Src::Each(x), Src::Each(y)) => out.extend(
                c.iter().zip(x.iter().zip(y)).map(|(&c, (&x, &y))| if c != 0 { x } else { y }),
            ),
            _ => out.extend((0..n).map(|e| if c.at(e) != 0 { x.at(e) } else { y.at(e) })),
        }
        Ok(W::wrap(out))
    })
}

/// The tile of `n` elements of the integer type `d` whose element `i` is `value(i)` (0 where
/// `d` cannot hold it): `arange`, `lane_ids`.
pub(crate) fn int_tile(d: DType, n: usize, pool: &mut Pool, value: impl Fn(usize) -> i128) -> Buf {
    with_elem_type!(d, T => {
        let mut out = pool.take::<<T as Stored>::W>();
        out.extend((0..n).map(|i| {
            let bits = elem::int_const(<T as Elem>::DTYPE, value(i)).unwrap_or(0);
            <T as Stored>::W::of(bits)
        }));
        <T as Stored>::W::wrap(out)
    })
}
