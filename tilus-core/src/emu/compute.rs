//! Instructions that compute values: block and grid indices, views, element-wise arithmetic
//! (typed loops in `elementwise.rs`), shapes, reductions and shared allocations. Memory
//! instructions live in `mem.rs`, the tile collectives along an axis in `collectives.rs`.

use super::buf::{Buf, Pool, Word, Words};
use super::cluster::rank_of;
use super::elementwise;
use super::interp::{Interp, R};
use super::ops;
use super::value::{next_pos, numel_checked, operand, Elems, GlobalView, SharedView, Tile, Value};
use crate::elem;
use crate::ir::{BinOp, DType, Inst, Operand, ReduceOp, Ty, VarId};

impl<'k> Interp<'_, 'k, '_> {
    /// Instructions that compute the value of `d`.
    pub(crate) fn value_inst(&mut self, d: VarId, inst: &'k Inst) -> R<()> {
        let scalar = |v: u64| Value::Scalar(v);
        match inst {
            Inst::Mov(op) => self.mov(d, *op),
            Inst::BlockIdx { axis } => {
                let c = self.ctx.grid.coords(self.block as u64)[(*axis as usize).min(2)];
                self.set(d, scalar(c as u64))
            }
            Inst::GridDim { axis } => self.set(d, scalar(self.ctx.grid.dim(*axis) as u64)),
            Inst::ClusterRank => self.set(d, scalar(self.rank as u64)),
            Inst::ClusterSize => self.set(d, scalar(self.ctx.kernel.cluster.blocks())),
            Inst::ClusterIdx { axis } => {
                let coords = self.ctx.grid.coords(self.block as u64);
                let cid = rank_of(coords, self.ctx.kernel.cluster).1;
                self.set(d, scalar(cid[(*axis as usize).min(2)] as u64))
            }
            Inst::Dim { tensor, axis } => self.dim(d, *tensor, *axis),
            Inst::View { src, offset, shape } => self.view(d, *src, *offset, shape),
            Inst::Arange { n, dtype } => {
                let buf = elementwise::int_tile(*dtype, *n, &mut self.pool, |i| i as i128);
                self.set_tile(d, vec![*n], buf)
            }
            Inst::LaneIds { shape, dtype } => {
                let n = self.numel(shape)?;
                // The thread holding flat index `f` (`crate::layout`), then its lane.
                let l = self.layout(n);
                let lane = |f: usize| ((f % l.chunk()) / l.v % 32) as i128;
                let buf = elementwise::int_tile(*dtype, n, &mut self.pool, lane);
                self.set_tile(d, shape.clone(), buf)
            }
            Inst::Full { shape, value } => {
                let n = self.numel(shape)?;
                let v = self.scalar(*value)?;
                let width = self.dtype(Operand::Var(d)).size_bytes();
                let buf = Buf::filled(width, n, v, &mut self.pool);
                self.set_tile(d, shape.clone(), buf)
            }
            Inst::Binary { op, lhs, rhs } => self.binary(d, *op, *lhs, *rhs),
            Inst::Unary { op, x } => {
                let dt = self.dtype(*x);
                self.map(d, *x, |x, n, pool| elementwise::unary(*op, dt, x, n, pool))
            }
            Inst::Cast { x, dtype } => {
                let from = self.dtype(*x);
                self.map(d, *x, |x, n, pool| {
                    elementwise::cast(from, *dtype, x, n, pool)
                })
            }
            // Values are canonical bit patterns and the sizes agree: only the type changes.
            Inst::Bitcast { x, dtype } => self.map(d, *x, |x, n, pool| {
                Ok(match x {
                    Elems::Scalar(v) => {
                        Buf::filled(dtype.size_bytes(), n, elem::canon(*dtype, v), pool)
                    }
                    Elems::Tile(_, words) => words.to_buf(pool),
                })
            }),
            Inst::Fma { a, b, c } => {
                let dt = self.dtype(*a);
                self.ternary(d, [*a, *b, *c], "fma", |ops, n, pool| {
                    elementwise::fma(dt, ops, n, pool)
                })
            }
            Inst::Select { cond, a, b } => {
                let width = self.dtype(*a).size_bytes();
                self.ternary(d, [*cond, *a, *b], "select", |ops, n, pool| {
                    elementwise::select(ops, width, n, pool)
                })
            }
            Inst::Reshape { x, shape } => self.reshape(d, *x, shape),
            Inst::Broadcast { x, shape } => self.broadcast(d, *x, shape),
            Inst::Reduce { op, x } => self.reduce(d, *op, *x),
            Inst::ReduceAxis { .. }
            | Inst::Scan { .. }
            | Inst::Sort { .. }
            | Inst::ArgSort { .. }
            | Inst::Take { .. }
            | Inst::TopK { .. }
            | Inst::EqualRank { .. }
            | Inst::Place { .. }
            | Inst::Histogram { .. } => self.collective(d, inst),
            Inst::AllocShared {
                shape,
                offset,
                dtype,
                distributed,
            } => self.alloc_shared(d, shape, *offset, *dtype, *distributed),
            _ => Err(self.malformed("not a value instruction".into())),
        }
    }

    /// `f(variables, pool)`: operands read from the variables, results in buffers from the
    /// pool; an `Err` message is malformed IR.
    fn compute<T>(&mut self, f: impl FnOnce(&[Value], &mut Pool) -> Result<T, String>) -> R<T> {
        let r = f(&self.vars, &mut self.pool);
        r.map_err(|m| self.malformed(m))
    }

    /// `Mov`: a copy of a value, or of a memory reference (`let v = t;`).
    fn mov(&mut self, d: VarId, op: Operand) -> R<()> {
        if let Operand::Var(v) = op {
            if let Some(m @ (Value::Global(_) | Value::Shared(_))) = self.vars.get(v as usize) {
                let m = m.clone();
                return self.set(d, m);
            }
        }
        let v = self.compute(|vars, pool| {
            Ok(match operand(vars, op)? {
                Elems::Scalar(v) => Value::Scalar(v),
                Elems::Tile(s, words) => Value::Tile(Tile {
                    shape: s.to_vec(),
                    data: words.to_buf(pool),
                }),
            })
        })?;
        self.set(d, v)
    }

    /// `Dim`: the extent of a tensor along `axis`.
    fn dim(&mut self, d: VarId, tensor: VarId, axis: usize) -> R<()> {
        let v = match self.vars.get(tensor as usize) {
            Some(Value::Global(g)) => g.dims.get(axis).copied(),
            Some(Value::Shared(s)) => s.shape.get(axis).map(|&x| x as i64),
            _ => None,
        };
        let v = v.ok_or_else(|| {
            self.malformed(format!("`dim` axis {axis} of a non-tensor or lower rank"))
        })?;
        self.set(d, Value::Scalar(v as u64))
    }

    /// `View`: a window of a global tensor.
    fn view(&mut self, d: VarId, src: VarId, offset: Operand, shape: &[Operand]) -> R<()> {
        let Some(Value::Global(g)) = self.vars.get(src as usize) else {
            return Err(self.malformed(format!(
                "view of variable {src}, which is not a global tensor"
            )));
        };
        let (param, base) = (g.param, g.offset);
        // Saturating like the PTX (ir.rs: a huge offset stays out of bounds).
        let offset = base.saturating_add(clamp_i64(self.int(offset)?));
        let dims = shape
            .iter()
            .map(|o| self.int(*o).map(clamp_i64))
            .collect::<R<Vec<_>>>()?;
        self.set(
            d,
            Value::Global(GlobalView {
                param,
                offset,
                dims,
            }),
        )
    }

    /// A binary operator on two scalars or tiles of one element count (or a tile and a scalar).
    fn binary(&mut self, d: VarId, op: BinOp, lhs: Operand, rhs: Operand) -> R<()> {
        let dt = self.dtype(lhs);
        if let (Ok(Elems::Scalar(x)), Ok(Elems::Scalar(y))) =
            (operand(&self.vars, lhs), operand(&self.vars, rhs))
        {
            return self.set(d, Value::Scalar(elem::binary(op, dt, x, y)));
        }
        let (shape, buf) = self.compute(|vars, pool| {
            let (a, b) = (operand(vars, lhs)?, operand(vars, rhs)?);
            let (s, n) = match (a, b) {
                (Elems::Tile(s, x), Elems::Tile(_, y)) if x.len() != y.len() => {
                    return Err(format!(
                        "binary operands of shapes {s:?} and {:?}",
                        b.shape()
                    ));
                }
                (Elems::Tile(s, x), _) | (_, Elems::Tile(s, x)) => (s, x.len()),
                _ => unreachable!("two scalars are handled above"),
            };
            Ok((s.to_vec(), elementwise::binary(op, dt, a, b, n, pool)?))
        })?;
        self.set_tile(d, shape, buf)
    }

    /// An element-wise map of one operand: `f(x, n, pool)` computes the `n` results (one for a
    /// scalar, which stays a scalar).
    fn map(
        &mut self,
        d: VarId,
        x: Operand,
        f: impl FnOnce(Elems<'_>, usize, &mut Pool) -> Result<Buf, String>,
    ) -> R<()> {
        let (shape, buf) = self.compute(|vars, pool| {
            let x = operand(vars, x)?;
            let (shape, n) = match x {
                Elems::Scalar(_) => (None, 1),
                Elems::Tile(s, words) => (Some(s.to_vec()), words.len()),
            };
            Ok((shape, f(x, n, pool)?))
        })?;
        self.set_result(d, shape, buf)
    }

    /// A result of `n` elements: a tile of `shape`, or (without a shape) the scalar in `buf`.
    fn set_result(&mut self, d: VarId, shape: Option<Vec<usize>>, buf: Buf) -> R<()> {
        match shape {
            Some(shape) => self.set_tile(d, shape, buf),
            None => {
                let v = buf.words().at(0);
                self.pool.give(buf);
                self.set(d, Value::Scalar(v))
            }
        }
    }

    /// An element-wise operation of three operands, scalars or tiles of one element count:
    /// `f(operands, n, pool)` computes the `n` results; three scalars give a scalar. `what` names
    /// the operation in the error for operands of different shapes.
    fn ternary(
        &mut self,
        d: VarId,
        operands: [Operand; 3],
        what: &str,
        f: impl FnOnce([Elems<'_>; 3], usize, &mut Pool) -> Result<Buf, String>,
    ) -> R<()> {
        let (shape, buf) = self.compute(|vars, pool| {
            let ops = [
                operand(vars, operands[0])?,
                operand(vars, operands[1])?,
                operand(vars, operands[2])?,
            ];
            let shape = ops.iter().find_map(|t| t.shape()).map(|s| s.to_vec());
            let n = ops.iter().find_map(|t| t.len()).unwrap_or(1);
            if ops.iter().any(|t| t.len().is_some_and(|l| l != n)) {
                return Err(format!("{what} operands of different shapes"));
            }
            Ok((shape, f(ops, n, pool)?))
        })?;
        self.set_result(d, shape, buf)
    }

    /// `Reshape`: the same elements in row-major order, another shape.
    fn reshape(&mut self, d: VarId, x: VarId, shape: &[usize]) -> R<()> {
        let n = self.numel(shape)?;
        let width = self.dtype(Operand::Var(x)).size_bytes();
        let buf = self.compute(|vars, pool| {
            Ok(match operand(vars, Operand::Var(x))? {
                Elems::Scalar(v) => Buf::filled(width, 1, v, pool),
                Elems::Tile(_, words) => words.to_buf(pool),
            })
        })?;
        if buf.len() != n {
            return Err(self.malformed(format!("reshape of {} elements to {shape:?}", buf.len())));
        }
        self.set_tile(d, shape.to_vec(), buf)
    }

    /// `Broadcast` to `shape`.
    fn broadcast(&mut self, d: VarId, x: VarId, shape: &[usize]) -> R<()> {
        let n = self.numel(shape)?;
        let width = self.dtype(Operand::Var(x)).size_bytes();
        let buf = self.compute(|vars, pool| {
            broadcast(operand(vars, Operand::Var(x))?, width, shape, n, pool)
        })?;
        // The PTX replicates a tile through shared scratch between two barriers (a scalar
        // source or an equal element count is a register move).
        if let Some(Ty::Tile { shape: s, .. }) = self.ty(x) {
            if crate::ir::numel(s) != n {
                self.barrier();
            }
        }
        self.set_tile(d, shape.to_vec(), buf)
    }

    /// `Reduce` of a tile to a scalar, in the PTX's order of combination.
    fn reduce(&mut self, d: VarId, op: ReduceOp, x: VarId) -> R<()> {
        let dt = self.dtype(Operand::Var(x));
        let v = match self.operand(Operand::Var(x))? {
            Elems::Scalar(v) => {
                let one = Buf::filled(dt.size_bytes(), 1, v, &mut Pool::default());
                ops::reduce(op, dt, one.words(), self.layout(1))
            }
            Elems::Tile(_, xs) => ops::reduce(op, dt, xs, self.layout(xs.len())),
        };
        let v = v.ok_or_else(|| self.malformed(format!("a {op:?} reduction of {}", dt.name())))?;
        // The PTX combines the warps' partials of a tile through shared scratch, between two
        // barriers (one warp needs no barrier).
        if self.ctx.kernel.threads > 32 && matches!(self.ty(x), Some(Ty::Tile { .. })) {
            self.barrier();
        }
        self.set(d, Value::Scalar(v))
    }

    /// `AllocShared`: a view of the window (of this block's part of a distributed tensor).
    fn alloc_shared(
        &mut self,
        d: VarId,
        shape: &[usize],
        offset: usize,
        dtype: DType,
        distributed: bool,
    ) -> R<()> {
        let blocks = if distributed {
            self.ctx.kernel.cluster.blocks().max(1) as usize
        } else {
            1
        };
        let part = self.numel(shape)? / blocks;
        let window = match self.cluster {
            Some(c) => c.window,
            None => self.shared.len(),
        };
        let end = part
            .checked_mul(dtype.size_bytes())
            .and_then(|b| b.checked_add(offset));
        if !offset.is_multiple_of(dtype.size_bytes()) || !matches!(end, Some(end) if end <= window)
        {
            return Err(self.malformed(format!(
                "shared allocation of {shape:?} at byte {offset} does not fit the {}-byte window",
                self.ctx.kernel.shared_bytes
            )));
        }
        self.set(
            d,
            Value::Shared(SharedView {
                byte: offset,
                shape: shape.to_vec(),
                dtype,
                part: distributed.then_some(part),
            }),
        )
    }

    pub(crate) fn numel(&self, shape: &[usize]) -> R<usize> {
        numel_checked(shape).ok_or_else(|| self.malformed(format!("shape {shape:?} is too large")))
    }
}

/// Numpy broadcast of `src` (elements of `width` bytes) to `shape` (`n` elements): a source of
/// lower rank is padded with leading 1s, and each source axis must be 1 or equal to the
/// target's.
fn broadcast(
    src: Elems<'_>,
    width: usize,
    shape: &[usize],
    n: usize,
    pool: &mut Pool,
) -> Result<Buf, String> {
    let (sshape, data) = match src {
        Elems::Scalar(v) => return Ok(Buf::filled(width, n, v, pool)),
        Elems::Tile(s, d) => (s, d),
    };
    if sshape.len() > shape.len() {
        return Err(format!(
            "broadcast of shape {sshape:?} to lower rank {shape:?}"
        ));
    }
    let pad = shape.len() - sshape.len();
    // Source stride per target axis; 0 on broadcast axes.
    let mut strides = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for k in (0..sshape.len()).rev() {
        let (s, t) = (sshape[k], shape[pad + k]);
        if s != 1 && s != t {
            return Err(format!("cannot broadcast shape {sshape:?} to {shape:?}"));
        }
        strides[pad + k] = if s == 1 { 0 } else { acc };
        acc = acc.saturating_mul(s);
    }
    if acc != data.len() {
        return Err(format!(
            "broadcast source of shape {sshape:?} holds {} elements",
            data.len()
        ));
    }
    let mut pos = vec![0usize; shape.len()];
    let index = (0..n).map(|_| {
        let idx: usize = pos.iter().zip(&strides).map(|(p, s)| p * s).sum();
        next_pos(&mut pos, shape);
        idx
    });
    Ok(match data {
        Words::W8(d) => gather(d, index, pool),
        Words::W16(d) => gather(d, index, pool),
        Words::W32(d) => gather(d, index, pool),
        Words::W64(d) => gather(d, index, pool),
    })
}

/// The words of `data` at `index`.
fn gather<W: Word>(data: &[W], index: impl Iterator<Item = usize>, pool: &mut Pool) -> Buf {
    let mut out = pool.take::<W>();
    out.extend(index.map(|i| data.get(i).copied().unwrap_or_default()));
    W::wrap(out)
}

/// An integer read as i64, saturating (view offsets and dims).
fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}
