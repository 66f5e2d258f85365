//! Scans along an axis: how each line is split over lanes, and the order of combination.
//!
//! A line is split into *segments* of consecutive elements, one per lane, grouped into
//! *blocks* of at most 32 lanes (one warp). The inclusive scan of element `i` of lane `j`'s
//! segment in block `b` is
//!
//! ```text
//! y = (P_b op e_bj) op local_bji
//! ```
//!
//! where `local_bji` is the sequential inclusive scan of the segment up to `i` (from its first
//! element), `e_bj` is the exclusive scan of the block's lane totals (the operator's identity
//! for lane 0) computed by Kogge-Stone (`for d in 1, 2, 4, ..: t_j = t_(j - d) op t_j` for
//! `j >= d`, all lanes at once, then `e_j = t_(j - 1)`), and `P_b` is the sequential fold of the
//! earlier blocks' totals from the identity. An exclusive scan is the inclusive one shifted by
//! one element, starting with `0` for `add`, `1` for `mul` and the identity otherwise. A
//! reverse scan is the forward scan of the line read from its end, with every segment, lane
//! and block mirrored. The plans:
//!
//! * [`ScanPlan::Rows`]: the axis is the last, the tile fills whole chunks, and a row is a
//!   power-of-two number (up to 32) of thread runs of `v` elements: one block per row, each
//!   lane's segment its run.
//! * [`ScanPlan::Whole`]: the tile is one line (a rank-1 tile, or one whose other axes have
//!   length 1): its segments are the thread runs of the layout, its blocks the warps of each
//!   chunk, in order.
//! * [`ScanPlan::Staged`]: anything else goes through shared memory: one block per line of
//!   `lanes` lanes (as for reductions), lane `j`'s segment the `j`-th of `lanes` equal parts
//!   (`ceil(len / lanes)` elements each, the last ones shorter or empty).
//!
//! Integer scans (wrapping), `min`, `max` and the bitwise operators are associative and
//! commutative: any order gives the same values, and the emulator scans them in order.

use super::{pow2_floor, AxisView};
use crate::elem;
use crate::ir::{DType, ReduceOp, ScanOp};
use crate::layout::Layout;

/// How a scan along one axis splits and combines its lines (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanPlan {
    Rows { lanes: usize, v: usize },
    Whole { layout: Layout },
    Staged { lanes: usize },
}

/// A line's segments: blocks of lanes of axis indices, in order.
pub type Segments = Vec<Vec<Vec<usize>>>;

impl ScanPlan {
    /// The plan for scanning a tile of `shape` (laid out as `layout`) along `axis`.
    pub fn choose(shape: &[usize], axis: usize, layout: Layout) -> ScanPlan {
        let view = AxisView::new(shape, axis);
        let k = view.len;
        let whole_chunks = layout.n.is_multiple_of(layout.chunk());
        if view.inner == 1 && whole_chunks && k.is_multiple_of(layout.v) {
            let lanes = k / layout.v;
            if lanes.is_power_of_two() && lanes <= 32 {
                return ScanPlan::Rows { lanes, v: layout.v };
            }
        }
        if view.lines() == 1 {
            return ScanPlan::Whole { layout };
        }
        let per_line = (layout.threads / view.lines()).max(1);
        let lanes = 32.min(pow2_floor(k)).min(pow2_floor(per_line));
        ScanPlan::Staged { lanes }
    }

    /// The forward segments of a line of `len` elements.
    pub fn segments(&self, len: usize) -> Segments {
        match *self {
            ScanPlan::Rows { lanes, v } => vec![(0..lanes)
                .map(|j| (j * v..((j + 1) * v).min(len)).collect())
                .collect()],
            ScanPlan::Whole { layout } => {
                let warps = layout.threads / 32;
                let mut blocks = Vec::new();
                for o in 0..layout.outer {
                    for w in 0..warps {
                        blocks.push(
                            (0..32)
                                .map(|l| {
                                    let first = o * layout.chunk() + (w * 32 + l) * layout.v;
                                    (first..(first + layout.v).min(len)).collect()
                                })
                                .collect(),
                        );
                    }
                }
                blocks
            }
            ScanPlan::Staged { lanes } => {
                let per = len.div_ceil(lanes);
                vec![(0..lanes)
                    .map(|j| (j * per..((j + 1) * per).min(len)).collect())
                    .collect()]
            }
        }
    }
}

/// The first element of an exclusive scan: `0` for `add`, `1` for `mul`, the identity of the
/// others.
pub fn exclusive_first(op: ScanOp, d: DType) -> u64 {
    match op {
        ScanOp::Add => elem::cast(DType::I32, d, 0),
        ScanOp::Mul => elem::cast(DType::I32, d, 1),
        _ => identity(op, d),
    }
}

/// The identity of `op` on type `d`.
pub fn identity(op: ScanOp, d: DType) -> u64 {
    match op {
        ScanOp::Add => elem::reduce_identity(ReduceOp::Sum, d),
        ScanOp::Mul => elem::cast(DType::I32, d, 1),
        ScanOp::Min => elem::reduce_identity(ReduceOp::Min, d),
        ScanOp::Max => elem::reduce_identity(ReduceOp::Max, d),
        ScanOp::And => elem::reduce_identity(ReduceOp::And, d),
        ScanOp::Or | ScanOp::Xor => 0,
    }
}

/// Scan `xs` (a tile of type `d` and shape `shape`, laid out as `layout`) along `axis`.
#[allow(clippy::too_many_arguments)]
pub fn scan(
    op: ScanOp,
    d: DType,
    xs: &[u64],
    shape: &[usize],
    axis: usize,
    exclusive: bool,
    reverse: bool,
    layout: Layout,
) -> Vec<u64> {
    let view = AxisView::new(shape, axis);
    let ordered = d.is_float() && matches!(op, ScanOp::Add | ScanOp::Mul);
    let plan = ScanPlan::choose(shape, axis, layout);
    let mut out = vec![0u64; xs.len()];
    for l in 0..view.lines() {
        // The line as it is scanned: from its end when `reverse`.
        let at = |k: usize| if reverse { view.len - 1 - k } else { k };
        let line: Vec<u64> = (0..view.len).map(|k| xs[view.flat(l, at(k))]).collect();
        let incl = if ordered {
            let segs = plan.segments(view.len);
            let segs = if reverse {
                mirror(segs, view.len)
            } else {
                segs
            };
            ordered_scan(op, d, &line, &segs)
        } else {
            let mut acc = identity(op, d);
            line.iter()
                .map(|&x| {
                    acc = elem::binary(op.binop(), d, acc, x);
                    acc
                })
                .collect()
        };
        for k in 0..view.len {
            let y = match (exclusive, k) {
                (false, _) => incl[k],
                (true, 0) => exclusive_first(op, d),
                (true, _) => incl[k - 1],
            };
            out[view.flat(l, at(k))] = y;
        }
    }
    out
}

/// `segs` of a line of `len` read from its end: every index mirrored, and every list reversed.
fn mirror(segs: Segments, len: usize) -> Segments {
    segs.into_iter()
        .rev()
        .map(|block| {
            block
                .into_iter()
                .rev()
                .map(|lane| lane.into_iter().rev().map(|k| len - 1 - k).collect())
                .collect()
        })
        .collect()
}

/// The inclusive float scan of `line` in the order of `segs` (see the module docs), in the
/// type's compute type, each result rounded once.
fn ordered_scan(op: ScanOp, d: DType, line: &[u64], segs: &Segments) -> Vec<u64> {
    let c = d.info().compute;
    let f = |a: u64, b: u64| elem::binary(op.binop(), c, a, b);
    let id = identity(op, c);
    let mut out = vec![0u64; line.len()];
    let mut prefix = id;
    for block in segs {
        // Each lane's sequential inclusive scan, and its total.
        let locals: Vec<Vec<u64>> = block
            .iter()
            .map(|lane| {
                let mut acc = id;
                lane.iter()
                    .map(|&k| {
                        acc = f(acc, elem::cast(d, c, line[k]));
                        acc
                    })
                    .collect()
            })
            .collect();
        let mut t: Vec<u64> = locals
            .iter()
            .map(|l| l.last().copied().unwrap_or(id))
            .collect();
        let mut dist = 1;
        while dist < t.len() {
            let old = t.clone();
            for j in dist..t.len() {
                t[j] = f(old[j - dist], old[j]);
            }
            dist *= 2;
        }
        for (j, lane) in block.iter().enumerate() {
            let e = if j == 0 { id } else { t[j - 1] };
            let base = f(prefix, e);
            for (i, &k) in lane.iter().enumerate() {
                out[k] = elem::cast(c, d, f(base, locals[j][i]));
            }
        }
        prefix = f(prefix, *t.last().unwrap_or(&id));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits() as u64).collect()
    }

    #[test]
    fn integer_scans_are_prefix_folds_in_every_form() {
        let xs: Vec<u64> = (0..12).map(|i| (i * 3 + 1) as u64).collect();
        let l = Layout::new(12, 32, 4);
        let incl = scan(ScanOp::Add, DType::I32, &xs, &[3, 4], 1, false, false, l);
        assert_eq!(&incl[..4], &[1, 5, 12, 22]);
        let excl = scan(ScanOp::Add, DType::I32, &xs, &[3, 4], 1, true, false, l);
        assert_eq!(&excl[..4], &[0, 1, 5, 12]);
        let rev = scan(ScanOp::Add, DType::I32, &xs, &[3, 4], 1, false, true, l);
        assert_eq!(&rev[..4], &[22, 21, 17, 10]);
        let cols = scan(ScanOp::Max, DType::I32, &xs, &[3, 4], 0, false, false, l);
        assert_eq!(cols, xs);
        let rev_excl = scan(ScanOp::Mul, DType::I32, &xs[..3], &[3], 0, true, true, l);
        assert_eq!(rev_excl, vec![4 * 7, 7, 1]);
    }

    #[test]
    fn float_scans_follow_the_segments() {
        // One line of 64 on 32 threads with runs of 1: the whole-tile plan, 2 blocks of 32.
        let v: Vec<f32> = (0..64)
            .map(|i| if i % 3 == 0 { 1.0e7 } else { 0.3 + i as f32 })
            .collect();
        let l = Layout::new(64, 32, 1);
        let plan = ScanPlan::choose(&[64], 0, l);
        assert!(matches!(plan, ScanPlan::Whole { .. }));
        let got = scan(
            ScanOp::Add,
            DType::F32,
            &f32s(&v),
            &[64],
            0,
            false,
            false,
            l,
        );
        // Lanes of one element: Kogge-Stone over 32 lanes, then the second block adds the
        // first block's total in front.
        let ks = |t: &mut Vec<f32>| {
            let mut d = 1;
            while d < t.len() {
                let old = t.clone();
                for j in d..t.len() {
                    t[j] = old[j - d] + old[j];
                }
                d *= 2;
            }
        };
        let mut first: Vec<f32> = v[..32].to_vec();
        ks(&mut first);
        let mut second: Vec<f32> = v[32..].to_vec();
        ks(&mut second);
        for (j, g) in got.iter().enumerate() {
            let want = if j < 32 {
                (-0.0f32 + if j == 0 { -0.0 } else { first[j - 1] }) + v[j]
            } else {
                let e = if j == 32 { -0.0 } else { second[j - 33] };
                ((-0.0f32 + first[31]) + e) + v[j]
            };
            assert_eq!(*g as u32, want.to_bits(), "element {j}");
        }
        // A reverse scan mirrors the segments: element 63 is the first scanned.
        let rev = scan(ScanOp::Add, DType::F32, &f32s(&v), &[64], 0, false, true, l);
        assert_eq!(rev[63] as u32, v[63].to_bits());
    }
}
