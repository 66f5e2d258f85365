//! The collectives whose results do not depend on an order of combination: sorts, top-k,
//! `take`, equal-key ranks and histograms. They are exact, so the emulator computes them
//! directly.
//!
//! **Sort order.** Integers sort by value. Floats sort by IEEE 754 `totalOrder`:
//! `-NaN < -inf < .. < -0.0 < +0.0 < .. < +inf < +NaN` (the canonical NaN the arithmetic
//! produces is positive, so it sorts last ascending and first descending). Sorts are stable:
//! equal keys (the same bits) keep their order, descending ones too (a descending sort is not
//! the reverse of an ascending one where keys repeat).

use super::AxisView;
use crate::elem;
use crate::ir::DType;
use std::cmp::Ordering;

/// The key of bit pattern `x` of type `d` in the sort order (see the module docs).
pub fn sort_key(d: DType, x: u64) -> i128 {
    if d.is_float() {
        elem::total_order_key(d, x) as i128
    } else {
        elem::as_i128(d, x)
    }
}

/// The stable sorting permutation of each line of `xs` along `axis`: for each result position
/// `k` of a line, the axis index of the element that goes there.
pub fn argsort(d: DType, xs: &[u64], shape: &[usize], axis: usize, descending: bool) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let mut out = vec![0u64; xs.len()];
    for l in 0..view.lines() {
        for (k, src) in line_order(d, xs, view, l, descending)
            .into_iter()
            .enumerate()
        {
            out[view.flat(l, k)] = src as u64;
        }
    }
    out
}

/// Each line sorted along `axis`.
pub fn sort(d: DType, xs: &[u64], shape: &[usize], axis: usize, descending: bool) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let mut out = vec![0u64; xs.len()];
    for l in 0..view.lines() {
        for (k, src) in line_order(d, xs, view, l, descending)
            .into_iter()
            .enumerate()
        {
            out[view.flat(l, k)] = xs[view.flat(l, src)];
        }
    }
    out
}

/// The axis indices of line `l`, stably sorted by key.
fn line_order(d: DType, xs: &[u64], view: AxisView, l: usize, descending: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..view.len).collect();
    let key = |k: usize| sort_key(d, xs[view.flat(l, k)]);
    // `sort_by` is stable: equal keys keep their axis order in both directions.
    idx.sort_by(|&a, &b| {
        let o = key(a).cmp(&key(b));
        if descending {
            o.reverse()
        } else {
            o
        }
    });
    idx
}

/// The first `k` of each line sorted (descending when `largest`), or their axis indices (as
/// `i32` bit patterns) with `indices`: the result has `k` along `axis`.
#[allow(clippy::too_many_arguments)]
pub fn topk(
    d: DType,
    xs: &[u64],
    shape: &[usize],
    axis: usize,
    k: usize,
    largest: bool,
    indices: bool,
) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let mut out_shape = shape.to_vec();
    out_shape[axis] = k;
    let out_view = AxisView::new(&out_shape, axis);
    let mut out = vec![0u64; out_view.lines() * k];
    for l in 0..view.lines() {
        let order = line_order(d, xs, view, l, largest);
        for (j, &src) in order.iter().take(k).enumerate() {
            out[out_view.flat(l, j)] = if indices {
                src as u32 as u64
            } else {
                xs[view.flat(l, src)]
            };
        }
    }
    out
}

/// `take` along `axis`: for each element of `indices` (integers of type `id`, shape
/// `out_shape`), `x` at the same coordinates but the index along `axis`; 0 where the index is
/// outside `0..shape[axis]`.
pub fn take(
    xs: &[u64],
    shape: &[usize],
    id: DType,
    indices: &[u64],
    out_shape: &[usize],
    axis: usize,
) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let out_view = AxisView::new(out_shape, axis);
    let mut out = vec![0u64; indices.len()];
    for l in 0..out_view.lines() {
        for j in 0..out_view.len {
            let f = out_view.flat(l, j);
            let i = elem::as_i128(id, indices[f]);
            if (0..view.len as i128).contains(&i) {
                out[f] = xs[view.flat(l, i as usize)];
            }
        }
    }
    out
}

/// For each element of `xs` (of type `d`), its place in a stable counting sort by value whose
/// values start at `starts` (`i32` bits): `starts[x]` (0 for a value outside `starts`) plus
/// the element's [`equal_rank`] in `order` (see there), wrapping as `i32` arithmetic does.
pub fn place(
    d: DType,
    xs: &[u64],
    starts: &[u64],
    shape: &[usize],
    order: Option<&[usize]>,
) -> Vec<u64> {
    xs.iter()
        .zip(equal_rank(xs, shape, order))
        .map(|(&x, rank)| {
            let v = elem::as_i128(d, x);
            let start = match usize::try_from(v) {
                Ok(i) if i < starts.len() => starts[i] as u32,
                _ => 0,
            };
            start.wrapping_add(rank as u32) as u64
        })
        .collect()
}

/// For each element (a tile of `shape`, row-major), how many elements before it have the same
/// bits: before in row-major order, or with `order` (a permutation of the axes, outermost
/// first) in the row-major order of the coordinates permuted by it.
pub fn equal_rank(xs: &[u64], shape: &[usize], order: Option<&[usize]>) -> Vec<u64> {
    let visit: Vec<usize> = match order {
        None => (0..xs.len()).collect(),
        Some(order) => permuted_visit(shape, order),
    };
    let mut seen: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut out = vec![0; xs.len()];
    for f in visit {
        let c = seen.entry(xs[f]).or_default();
        out[f] = *c;
        *c += 1;
    }
    out
}

/// The row-major flat indices of a tile of `shape`, in the row-major order of their
/// coordinates permuted by `order` (`order[0]` outermost).
pub fn permuted_visit(shape: &[usize], order: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    // Each permuted axis's extent and its row-major stride in the tile.
    let dims: Vec<usize> = order.iter().map(|&a| shape[a]).collect();
    let steps: Vec<usize> = order
        .iter()
        .map(|&a| AxisView::new(shape, a).inner)
        .collect();
    (0..n)
        .map(|mut p| {
            let mut f = 0;
            for k in (0..dims.len()).rev() {
                f += (p % dims[k]) * steps[k];
                p /= dims[k];
            }
            f
        })
        .collect()
}

/// The counts of the values `0..bins` among `xs` (integers of type `d`), as `i32` bit patterns.
pub fn histogram(d: DType, xs: &[u64], bins: usize) -> Vec<u64> {
    let mut counts = vec![0u32; bins];
    for &x in xs {
        let v = elem::as_i128(d, x);
        if (0..bins as i128).contains(&v) {
            counts[v as usize] = counts[v as usize].wrapping_add(1);
        }
    }
    counts.into_iter().map(|c| c as u64).collect()
}

/// Compare two bit patterns of type `d` in the sort order.
pub fn compare(d: DType, a: u64, b: u64) -> Ordering {
    sort_key(d, a).cmp(&sort_key(d, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_sort_by_total_order_and_sorts_are_stable() {
        let v = [
            1.0f32,
            -0.0,
            f32::NAN,
            0.0,
            -f32::NAN,
            f32::NEG_INFINITY,
            1.0,
        ];
        let xs: Vec<u64> = v.iter().map(|x| x.to_bits() as u64).collect();
        let order = argsort(DType::F32, &xs, &[7], 0, false);
        assert_eq!(order, vec![4, 5, 1, 3, 0, 6, 2]);
        let desc = argsort(DType::F32, &xs, &[7], 0, true);
        // Descending keeps equal keys (the two 1.0s) in their order: 0 before 6.
        assert_eq!(desc, vec![2, 0, 6, 3, 1, 5, 4]);
        let top = topk(DType::F32, &xs, &[7], 0, 3, true, true);
        assert_eq!(top, vec![2, 0, 6]);
    }

    #[test]
    fn ranks_takes_and_histograms() {
        let xs: Vec<u64> = [3u64, 1, 3, 3, 0, 1].to_vec();
        assert_eq!(equal_rank(&xs, &[6], None), vec![0, 0, 1, 2, 0, 1]);
        // As a [2, 3] tile counted down its columns: 3, 3 (rank 1), 1, 0, 3 (rank 2), 1 (rank 1).
        assert_eq!(
            equal_rank(&xs, &[2, 3], Some(&[1, 0])),
            vec![0, 0, 2, 1, 0, 1]
        );
        assert_eq!(permuted_visit(&[2, 3], &[1, 0]), vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(
            permuted_visit(&[2, 2, 2], &[1, 0, 2]),
            vec![0, 1, 4, 5, 2, 3, 6, 7]
        );
        assert_eq!(histogram(DType::I32, &xs, 3), vec![1, 2, 0]);
        // Rows of [2, 3], columns taken in another order (and one out of range).
        let t: Vec<u64> = (10..16).collect();
        let idx: Vec<u64> = [2u64, 0, 7, 1, 1, 0].to_vec();
        assert_eq!(
            take(&t, &[2, 3], DType::I32, &idx, &[2, 3], 1),
            vec![12, 10, 0, 14, 14, 13]
        );
        let ints: Vec<u64> = [5i32, -1, 5, 2].iter().map(|&x| x as u32 as u64).collect();
        assert_eq!(sort(DType::I32, &ints, &[4], 0, false)[0] as u32 as i32, -1);
    }
}
