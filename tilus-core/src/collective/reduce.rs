//! Reductions along an axis: which lanes fold which elements, and in which order.
//!
//! Each line along the axis is reduced by a group of `lanes` lanes of one warp (a power of
//! two, at most 32). Lane `j` folds its share of the line from the operator's identity, in
//! ascending axis order; the group's partials are then combined by a butterfly: for `b` in
//! `lanes / 2, lanes / 4, .., 1`, every lane replaces its partial `p_j` by `p_j op p_(j ^ b)`
//! (the result is the same in every lane: float `add` and `mul` are commutative). Which share
//! is lane `j`'s depends on the plan:
//!
//! * [`ReducePlan::Rows`] (the axis is the last, the tile fills whole chunks of the layout and
//!   a row is a whole number `lanes` of thread runs of `v` elements, `lanes` a power of two up
//!   to 32): the lanes that hold the row in the layout reduce it where it is, with no shared
//!   memory but for the results. Lane `j` folds the row's elements `j * v .. j * v + v`.
//! * [`ReducePlan::Staged`] (everything else): the tile goes through shared memory, line by
//!   line, and lane `j` of a line's group folds the elements `j, j + lanes, j + 2 * lanes, ..`.
//!   `lanes` is the largest power of two up to 32 and up to the line's length for which all
//!   lines' groups fit the block at once (1 when there are more lines than threads).

use super::{pow2_floor, AxisView};
use crate::elem;
use crate::ir::{AxisReduce, BinOp, DType, ReduceOp};
use crate::layout::Layout;

/// How a reduction along one axis combines its elements (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReducePlan {
    /// Rows reduced where the layout put them: `lanes` lanes of `v` elements each per row.
    Rows { lanes: usize, v: usize },
    /// Lines staged through shared memory, each folded by `lanes` lanes, strided.
    Staged { lanes: usize },
}

impl ReducePlan {
    /// The plan for reducing a tile of `shape` (laid out as `layout`) along `axis`.
    pub fn choose(shape: &[usize], axis: usize, layout: Layout) -> ReducePlan {
        let view = AxisView::new(shape, axis);
        let k = view.len;
        let whole_chunks = layout.n.is_multiple_of(layout.chunk());
        if view.inner == 1 && whole_chunks && k.is_multiple_of(layout.v) {
            let lanes = k / layout.v;
            if lanes.is_power_of_two() && lanes <= 32 {
                return ReducePlan::Rows { lanes, v: layout.v };
            }
        }
        let per_line = (layout.threads / view.lines().max(1)).max(1);
        let lanes = 32.min(pow2_floor(k)).min(pow2_floor(per_line));
        ReducePlan::Staged { lanes }
    }

    /// Lanes per line.
    pub fn lanes(&self) -> usize {
        match *self {
            ReducePlan::Rows { lanes, .. } | ReducePlan::Staged { lanes } => lanes,
        }
    }

    /// The axis indices lane `j` folds, in order, for a line of `len` elements.
    pub fn share(&self, j: usize, len: usize) -> Vec<usize> {
        match *self {
            ReducePlan::Rows { v, .. } => (j * v..(j * v + v).min(len)).collect(),
            ReducePlan::Staged { lanes } => (j..len).step_by(lanes).collect(),
        }
    }
}

/// The result of reducing `xs` (a tile of type `d` and shape `shape`, laid out as `layout`)
/// along `axis` with `op`: one value per line, in row-major order of the remaining axes (bit
/// patterns of `d`, or of `i32` for the arg forms).
pub fn reduce_axis(
    op: AxisReduce,
    d: DType,
    xs: &[u64],
    shape: &[usize],
    axis: usize,
    layout: Layout,
) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let line = |l: usize| (0..view.len).map(move |k| xs[view.flat(l, k)]);
    match op {
        AxisReduce::Fold(ReduceOp::Sum) if d.is_float() => {
            let plan = ReducePlan::choose(shape, axis, layout);
            (0..view.lines())
                .map(|l| ordered_sum(d, &line(l).collect::<Vec<_>>(), plan))
                .collect()
        }
        AxisReduce::Fold(r) => {
            let bop = fold_op(r);
            let id = elem::reduce_identity(r, d);
            (0..view.lines())
                .map(|l| line(l).fold(id, |acc, x| elem::binary(bop, d, acc, x)))
                .collect()
        }
        AxisReduce::ArgMin | AxisReduce::ArgMax => (0..view.lines())
            .map(|l| arg_best(op == AxisReduce::ArgMax, d, line(l)) as u32 as u64)
            .collect(),
    }
}

/// The element-wise operator of a fold.
pub fn fold_op(op: ReduceOp) -> BinOp {
    match op {
        ReduceOp::Sum => BinOp::Add,
        ReduceOp::Min => BinOp::Min,
        ReduceOp::Max => BinOp::Max,
        ReduceOp::Or => BinOp::Or,
        ReduceOp::And => BinOp::And,
    }
}

/// A float line's sum in the plan's order, in the type's compute type, rounded once.
fn ordered_sum(d: DType, line: &[u64], plan: ReducePlan) -> u64 {
    let c = d.info().compute;
    let id = elem::reduce_identity(ReduceOp::Sum, c);
    let add = |a: u64, b: u64| elem::binary(BinOp::Add, c, a, b);
    let mut partials: Vec<u64> = (0..plan.lanes())
        .map(|j| {
            plan.share(j, line.len())
                .into_iter()
                .fold(id, |acc, k| add(acc, elem::cast(d, c, line[k])))
        })
        .collect();
    butterfly(&mut partials, add);
    elem::cast(c, d, partials[0])
}

/// The butterfly over a power-of-two group of partials: for `b` = half the group down to 1,
/// every `p[j]` becomes `p[j] op p[j ^ b]`, all at once.
pub fn butterfly(p: &mut [u64], op: impl Fn(u64, u64) -> u64) {
    let mut b = p.len() / 2;
    while b >= 1 {
        let old = p.to_vec();
        for (j, x) in p.iter_mut().enumerate() {
            *x = op(old[j], old[j ^ b]);
        }
        b /= 2;
    }
}

/// Whether `x` is a NaN of float type `d` (NaN is the one value unequal to itself).
pub(crate) fn is_nan(d: DType, x: u64) -> bool {
    d.is_float() && elem::binary(BinOp::Ne, d, x, x) != 0
}

/// The index of the first largest (`max`) or smallest element: NaNs never win unless every
/// element is one (then 0), equal values go to the lower index.
pub fn arg_best(max: bool, d: DType, xs: impl Iterator<Item = u64>) -> usize {
    let mut best: Option<(usize, u64)> = None;
    for (k, x) in xs.enumerate() {
        if is_nan(d, x) {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, b)) => {
                let op = if max { BinOp::Gt } else { BinOp::Lt };
                elem::binary(op, d, x, b) != 0
            }
        };
        if better {
            best = Some((k, x));
        }
    }
    best.map_or(0, |(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_the_layout() {
        // [32, 128] i32 rows on 256 threads, runs of 4: 32 lanes per row.
        let l = Layout::new(4096, 256, 4);
        assert_eq!(
            ReducePlan::choose(&[32, 128], 1, l),
            ReducePlan::Rows { lanes: 32, v: 4 }
        );
        // Rows of 16 with runs of 4: 4 lanes per row.
        let l = Layout::new(1024, 256, 4);
        assert_eq!(
            ReducePlan::choose(&[64, 16], 1, l),
            ReducePlan::Rows { lanes: 4, v: 4 }
        );
        // Columns go through shared memory: 16 lines, 16 lanes each on 256 threads.
        assert_eq!(
            ReducePlan::choose(&[64, 16], 0, l),
            ReducePlan::Staged { lanes: 16 }
        );
        // A partial chunk, or rows of 12: staged.
        let l = Layout::new(36, 256, 4);
        assert_eq!(
            ReducePlan::choose(&[3, 12], 1, l),
            ReducePlan::Staged { lanes: 8 }
        );
        assert_eq!(ReducePlan::Staged { lanes: 4 }.share(1, 10), vec![1, 5, 9]);
        assert_eq!(ReducePlan::Rows { lanes: 4, v: 2 }.share(3, 8), vec![6, 7]);
    }

    #[test]
    fn sums_follow_the_plan_and_other_folds_are_exact() {
        // Floats whose sum depends on the order: the plan's order, exactly.
        let big = 1.0e8f32;
        let row: Vec<f32> = vec![big, 1.0, -big, 1.0, 0.5, 0.25, 3.0, -0.125];
        let xs: Vec<u64> = row.iter().map(|x| x.to_bits() as u64).collect();
        let l = Layout::new(8, 32, 4);
        let plan = ReducePlan::choose(&[1, 8], 1, l);
        let got = f32::from_bits(
            reduce_axis(
                AxisReduce::Fold(ReduceOp::Sum),
                DType::F32,
                &xs,
                &[1, 8],
                1,
                l,
            )[0] as u32,
        );
        let lanes: Vec<f32> = (0..plan.lanes())
            .map(|j| plan.share(j, 8).iter().fold(-0.0f32, |a, &k| a + row[k]))
            .collect();
        let mut p = lanes.clone();
        let mut b = p.len() / 2;
        while b >= 1 {
            let old = p.clone();
            for j in 0..p.len() {
                p[j] = old[j] + old[j ^ b];
            }
            b /= 2;
        }
        assert_eq!(got.to_bits(), p[0].to_bits());
        // Column sums of an i32 tile: exact whatever the order.
        let xs: Vec<u64> = (0..12i32).map(|i| (i * 7 - 20) as u32 as u64).collect();
        let l = Layout::new(12, 32, 4);
        let cols = reduce_axis(
            AxisReduce::Fold(ReduceOp::Sum),
            DType::I32,
            &xs,
            &[3, 4],
            0,
            l,
        );
        let want: Vec<u64> = (0..4)
            .map(|c| (0..3).map(|r| (r * 4 + c) * 7 - 20).sum::<i32>() as u32 as u64)
            .collect();
        assert_eq!(cols, want);
    }

    #[test]
    fn arg_forms_take_the_first_best_and_skip_nans() {
        let f = |v: &[f32]| v.iter().map(|x| x.to_bits() as u64).collect::<Vec<_>>();
        let xs = f(&[1.0, f32::NAN, 3.0, 3.0, -0.0, 0.0]);
        assert_eq!(arg_best(true, DType::F32, xs.iter().copied()), 2);
        assert_eq!(arg_best(false, DType::F32, xs.iter().copied()), 4);
        let nans = f(&[f32::NAN, f32::NAN]);
        assert_eq!(arg_best(true, DType::F32, nans.into_iter()), 0);
    }
}
