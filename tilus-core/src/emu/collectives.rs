//! The tile collectives: reductions along an axis, scans, sorts, top-k, `take`, equal-key ranks
//! and histograms.
//!
//! Their semantics and, for float `add`/`mul`, their order of combination are defined once in
//! `crate::collective`, on host values: the emulator reads the tile's bit patterns in row-major
//! order, evaluates them there with the tile's layout (the PTX's, [`Interp::layout`]) and
//! stores the result like any tile value. A collective moves elements between the block's
//! threads: the PTX stages the tile in shared scratch between barriers, so, for the race
//! checker, a collective is a barrier (accesses before it are ordered with accesses after it).

use super::buf::{with_word, Buf, Pool, Word};
use super::interp::{Interp, R};
use super::value::{Elems, Value};
use crate::collective::{order, reduce, scan};
use crate::ir::{numel, AxisReduce, DType, Inst, Operand, VarId};

/// A tile operand read as bit patterns, row-major.
struct Host {
    dtype: DType,
    shape: Vec<usize>,
    bits: Vec<u64>,
}

impl<'k> Interp<'_, 'k, '_> {
    /// The collective `inst`, whose result goes to `d`.
    pub(crate) fn collective(&mut self, d: VarId, inst: &'k Inst) -> R<()> {
        match *inst {
            Inst::ReduceAxis {
                op,
                x,
                axis,
                keepdims,
            } => self.reduce_axis(d, op, x, axis, keepdims),
            Inst::Scan {
                op,
                x,
                axis,
                exclusive,
                reverse,
            } => {
                let t = self.host(x, Some(axis), "a scan")?;
                let layout = self.layout(t.bits.len());
                let out = scan::scan(
                    op, t.dtype, &t.bits, &t.shape, axis, exclusive, reverse, layout,
                );
                self.finish(d, t.dtype, t.shape, &out)
            }
            Inst::Sort {
                x,
                axis,
                descending,
            } => {
                let t = self.host(x, Some(axis), "a sort")?;
                let out = order::sort(t.dtype, &t.bits, &t.shape, axis, descending);
                self.finish(d, t.dtype, t.shape, &out)
            }
            Inst::ArgSort {
                x,
                axis,
                descending,
            } => {
                let t = self.host(x, Some(axis), "an argsort")?;
                let out = order::argsort(t.dtype, &t.bits, &t.shape, axis, descending);
                self.finish(d, DType::I32, t.shape, &out)
            }
            Inst::TopK {
                x,
                k,
                axis,
                largest,
                indices,
            } => {
                let t = self.host(x, Some(axis), "a top-k")?;
                if k == 0 || k > t.shape[axis] {
                    return Err(self.malformed(format!(
                        "top-{k} of a tile of shape {:?} along axis {axis}",
                        t.shape
                    )));
                }
                let out = order::topk(t.dtype, &t.bits, &t.shape, axis, k, largest, indices);
                let mut shape = t.shape;
                shape[axis] = k;
                let dtype = if indices { DType::I32 } else { t.dtype };
                self.finish(d, dtype, shape, &out)
            }
            Inst::Take { x, indices, axis } => self.take(d, x, indices, axis),
            Inst::EqualRank { x, ref order } => {
                let t = self.host(x, None, "an equal rank")?;
                self.check_order(order.as_deref(), &t.shape)?;
                let out = order::equal_rank(&t.bits, &t.shape, order.as_deref());
                self.finish(d, DType::I32, t.shape, &out)
            }
            Inst::Place {
                x,
                starts,
                ref order,
            } => {
                let t = self.host(x, None, "a place")?;
                self.check_order(order.as_deref(), &t.shape)?;
                let s = self.host(starts, Some(0), "the starts of a place")?;
                if s.shape.len() != 1
                    || s.dtype != DType::I32
                    || !(t.dtype.is_int() || t.dtype.is_bool())
                {
                    return Err(self.malformed(format!(
                        "a place of `{}` values from `{}` starts of shape {:?}",
                        t.dtype.name(),
                        s.dtype.name(),
                        s.shape
                    )));
                }
                let out = order::place(t.dtype, &t.bits, &s.bits, &t.shape, order.as_deref());
                self.finish(d, DType::I32, t.shape, &out)
            }
            Inst::Histogram { x, bins } => {
                let t = self.host(x, None, "a histogram")?;
                if !t.dtype.is_int() {
                    return Err(
                        self.malformed(format!("a histogram of `{}` values", t.dtype.name()))
                    );
                }
                let out = order::histogram(t.dtype, &t.bits, bins);
                self.finish(d, DType::I32, vec![bins], &out)
            }
            _ => Err(self.malformed("not a collective".into())),
        }
    }

    /// `reduce_axis`: a fold, or the index of the minimum or maximum, along `axis`.
    fn reduce_axis(
        &mut self,
        d: VarId,
        op: AxisReduce,
        x: VarId,
        axis: usize,
        keepdims: bool,
    ) -> R<()> {
        let t = self.host(x, Some(axis), "a reduction along an axis")?;
        if let AxisReduce::Fold(r) = op {
            let ok = match r {
                crate::ir::ReduceOp::Or | crate::ir::ReduceOp::And => t.dtype == DType::Bool,
                _ => t.dtype.is_numeric(),
            };
            if !ok {
                return Err(
                    self.malformed(format!("a {r:?} reduction of `{}` tiles", t.dtype.name()))
                );
            }
        }
        let layout = self.layout(t.bits.len());
        let out = reduce::reduce_axis(op, t.dtype, &t.bits, &t.shape, axis, layout);
        let out_dtype = match op {
            AxisReduce::Fold(_) => t.dtype,
            AxisReduce::ArgMin | AxisReduce::ArgMax => DType::I32,
        };
        let mut shape = t.shape;
        if keepdims {
            shape[axis] = 1;
        } else {
            shape.remove(axis);
        }
        self.finish(d, out_dtype, shape, &out)
    }

    /// `take`: `x` gathered along `axis` at `indices` (of `x`'s shape but along `axis`).
    fn take(&mut self, d: VarId, x: VarId, indices: VarId, axis: usize) -> R<()> {
        let t = self.host(x, Some(axis), "a take")?;
        let i = self.host(indices, Some(axis), "the indices of a take")?;
        let same_but_axis = i.shape.len() == t.shape.len()
            && i.shape
                .iter()
                .zip(&t.shape)
                .enumerate()
                .all(|(a, (p, q))| a == axis || p == q);
        if !same_but_axis || !i.dtype.is_int() {
            return Err(self.malformed(format!(
                "a take along axis {axis} of shape {:?} with `{}` indices of shape {:?}",
                t.shape,
                i.dtype.name(),
                i.shape
            )));
        }
        let out = order::take(&t.bits, &t.shape, i.dtype, &i.bits, &i.shape, axis);
        self.finish(d, t.dtype, i.shape, &out)
    }

    /// Tile `x` as host bit patterns; with `axis`, the axis must exist.
    /// That a rank's `order` is a permutation of the tile's axes.
    fn check_order(&self, order: Option<&[usize]>, shape: &[usize]) -> R<()> {
        let Some(order) = order else { return Ok(()) };
        let mut sorted = order.to_vec();
        sorted.sort_unstable();
        if sorted != (0..shape.len()).collect::<Vec<_>>() {
            return Err(self.malformed(format!(
                "a rank in order {order:?} of a tile of shape {shape:?}"
            )));
        }
        Ok(())
    }

    fn host(&self, x: VarId, axis: Option<usize>, what: &str) -> R<Host> {
        let dtype = self.dtype(Operand::Var(x));
        let (shape, words) = match self.operand(Operand::Var(x))? {
            Elems::Tile(s, w) => (s.to_vec(), w),
            Elems::Scalar(_) => {
                return Err(self.malformed(format!("{what} of a scalar (variable {x})")))
            }
        };
        if words.len() != numel(&shape) || dtype.size_bytes().max(1) != width_of(words) {
            return Err(self.malformed(format!(
                "{what} of variable {x}: its elements do not match its type or shape"
            )));
        }
        if let Some(a) = axis {
            if a >= shape.len() {
                return Err(self.malformed(format!(
                    "{what} along axis {a} of a tile of shape {shape:?}"
                )));
            }
        }
        let bits = (0..words.len()).map(|e| words.at(e)).collect();
        Ok(Host { dtype, shape, bits })
    }

    /// Store a collective's result (bit patterns of `dtype`, row-major): a tile of `shape`, or
    /// the block-uniform scalar when no axis is left. The PTX exchanges the elements through
    /// shared scratch between barriers.
    fn finish(&mut self, d: VarId, dtype: DType, shape: Vec<usize>, out: &[u64]) -> R<()> {
        self.barrier();
        if shape.is_empty() {
            let v = out.first().copied().unwrap_or(0);
            return self.set(d, Value::Scalar(v));
        }
        if out.len() != numel(&shape) {
            return Err(self.malformed(format!(
                "a collective gave {} elements for shape {shape:?}",
                out.len()
            )));
        }
        let buf = to_buf(dtype.size_bytes(), out, &mut self.pool);
        self.set_tile(d, shape, buf)
    }
}

/// Bytes per word of a tile's buffer.
fn width_of(w: super::buf::Words<'_>) -> usize {
    match w {
        super::buf::Words::W8(_) => 1,
        super::buf::Words::W16(_) => 2,
        super::buf::Words::W32(_) => 4,
        super::buf::Words::W64(_) => 8,
    }
}

/// Bit patterns in a buffer of `width`-byte words.
fn to_buf(width: usize, bits: &[u64], pool: &mut Pool) -> Buf {
    with_word!(width, W => {
        let mut v = pool.take::<W>();
        v.extend(bits.iter().map(|&b| W::of(b)));
        W::wrap(v)
    })
}
