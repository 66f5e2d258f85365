//! The tile collectives (reductions along an axis, scans, sorts, ranks), as the two back ends
//! must agree on them.
//!
//! A collective moves data between the threads of a block, so *how* it combines elements
//! depends on where they live ([`crate::layout`]). For integers, `bool`, `min`/`max` and the
//! sorts that does not matter: their operators are associative and commutative (float `min`
//! and `max` too: NaN is ignored and `-0.0 < +0.0`), so any order gives one answer. Float
//! `add` and `mul` are not associative, and a GPU result is only reproducible bit for bit if
//! the order is fixed: this module fixes it. Each collective has a *plan*, chosen from the
//! tile's shape, the axis and the layout alone (so both back ends choose the same), that says
//! which elements each lane folds, how lanes are combined and in which order. The PTX
//! generator realises the plan; the emulator evaluates it here, on host values.
//!
//! * [`reduce`]: [`ReducePlan`], the plan of an axis reduction, and its evaluation.
//! * [`scan`]: [`ScanPlan`], the plan of a scan, and its evaluation.
//! * [`order`]: the sorts, top-k, `take`, ranks and histograms (exact, any order).
//!
//! `f16`/`bf16` are folded in `f32` and rounded once per result element, as the whole-tile
//! reduction does.

pub mod order;
pub mod reduce;
pub mod scan;

pub use reduce::ReducePlan;
pub use scan::ScanPlan;

/// A tile's shape seen around one axis: `outer` lines before it, its length `len`, `inner`
/// elements after it (row-major: the element at (outer index `a`, axis index `k`, inner index
/// `b`) is at flat index `(a * len + k) * inner + b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisView {
    pub outer: usize,
    pub len: usize,
    pub inner: usize,
}

impl AxisView {
    pub fn new(shape: &[usize], axis: usize) -> AxisView {
        AxisView {
            outer: shape[..axis].iter().product(),
            len: shape[axis],
            inner: shape[axis + 1..].iter().product(),
        }
    }
    /// Lines along the axis (also the number of results of a reduction).
    pub fn lines(&self) -> usize {
        self.outer * self.inner
    }
    /// The flat index of element `k` of line `line` (lines in row-major order of the other
    /// axes: `line = a * inner + b`).
    pub fn flat(&self, line: usize, k: usize) -> usize {
        let (a, b) = (line / self.inner, line % self.inner);
        (a * self.len + k) * self.inner + b
    }
    /// The line and the axis index of flat element `f`.
    pub fn line_of(&self, f: usize) -> (usize, usize) {
        let b = f % self.inner;
        let ak = f / self.inner;
        let (a, k) = (ak / self.len, ak % self.len);
        (a * self.inner + b, k)
    }
}

/// The largest power of two not above `x` (1 for 0).
pub(crate) fn pow2_floor(x: usize) -> usize {
    if x <= 1 {
        1
    } else {
        1 << (usize::BITS - 1 - x.leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_views_address_every_element_once() {
        for (shape, axis) in [
            (vec![5usize], 0usize),
            (vec![3, 7], 0),
            (vec![3, 7], 1),
            (vec![2, 3, 4], 1),
            (vec![2, 3, 4], 2),
        ] {
            let v = AxisView::new(&shape, axis);
            let n: usize = shape.iter().product();
            let mut seen = vec![false; n];
            for line in 0..v.lines() {
                for k in 0..v.len {
                    let f = v.flat(line, k);
                    assert!(!seen[f]);
                    seen[f] = true;
                    assert_eq!(v.line_of(f), (line, k));
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
        assert_eq!(
            (pow2_floor(0), pow2_floor(1), pow2_floor(33), pow2_floor(64)),
            (1, 1, 32, 64)
        );
    }
}
