//! The resolution of an access by one index tile, the other coordinates fixed (a gather or a
//! scatter such as `hist[bins]` or `table[row, cols]`): the bounds become one range of valid
//! index values, checked per element without a branch, so the loop vectorises.

use super::access::{Base, Src, INACTIVE};
use super::buf::{with_elem_type, Stored, Word};
use super::value::strides_i64;
use crate::elem::{self, Elem};
use crate::ir::DType;

/// Write each element's address (or [`INACTIVE`]) of an access whose coordinates are one
/// index tile and fixed values into `addrs`. `false` when the access is not of this form, or
/// (with `check_bounds` off) has an element out of bounds, which the general resolution
/// reports.
pub(super) fn one_index(
    srcs: &[Src<'_>],
    b: &Base<'_>,
    n: usize,
    check_bounds: bool,
    addrs: &mut Vec<i64>,
) -> bool {
    let mut tiles = srcs
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Src::Tile(..)));
    let (Some((k, Src::Tile(words, dt))), None) = (tiles.next(), tiles.next()) else {
        return false;
    };
    if b.distributed.is_some() || srcs.iter().any(|s| matches!(s, Src::Pos { .. })) {
        return false;
    }
    let strides = strides_i64(&b.dims);
    // The fixed coordinates' offset; one outside its dim makes every element inactive.
    let mut fixed = b.start as i128;
    let mut inside = true;
    for (j, s) in srcs.iter().enumerate() {
        if let Src::Fixed(c) = *s {
            inside &= c >= 0 && c < b.dims[j];
            fixed += c as i128 * strides[j] as i128;
        }
    }
    // Index values c with 0 <= c < dim and lo <= fixed + c * stride < hi.
    let (dim, stride) = (b.dims[k] as i128, strides[k].max(1) as i128);
    let lo = 0.max(ceil_div(b.lo as i128 - fixed, stride));
    let hi = dim.min(ceil_div(b.hi as i128 - fixed, stride));
    let (lo, span) = match inside && lo < hi {
        true => (lo as i64, (hi - lo) as u64),
        false => (0, 0),
    };
    let (base, stride) = (fixed as i64, stride as i64);
    addrs.clear();
    let filled = with_elem_type!(*dt, T => match <<T as Stored>::W as Word>::slice(*words) {
        Some(ws) if ws.len() == n => {
            addrs.extend(ws.iter().map(move |&w| {
                let c = index_of::<T>(w);
                let valid = (c.wrapping_sub(lo) as u64) < span;
                let addr = base.wrapping_add(c.wrapping_mul(stride));
                if valid {
                    addr
                } else {
                    INACTIVE
                }
            }));
            true
        }
        _ => false,
    });
    filled && (check_bounds || addrs.iter().all(|&a| a != INACTIVE))
}

/// An index value as i64, saturating (a value past the i64 range is out of bounds anyway):
/// exact for the integer types up to 64 bits but `u64`, without 128-bit arithmetic.
#[inline(always)]
fn index_of<T: Stored>(w: T::W) -> i64 {
    let d = <T as Elem>::DTYPE;
    let v = elem::as_i128(d, w.bits());
    if d == DType::U64 || !d.is_int() {
        v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    } else {
        v as i64
    }
}

/// `a / b` rounded up (`b > 0`).
fn ceil_div(a: i128, b: i128) -> i128 {
    a.div_euclid(b) + (a.rem_euclid(b) != 0) as i128
}
