//! The block interpreter: one block runs its body sequentially over whole tiles.
//!
//! Control flow is block-uniform and a tile operation completes for all of its elements before
//! the next statement starts, so a block is exactly a sequential program over tile values;
//! `Sync` has nothing to wait for. Memory instructions live in `mem.rs`.

use super::cluster::{rank_of, BarrierError, ClusterMem};
use super::flow::{Frame, Stop};
use super::ops;
use super::race::{BlockClock, Shadow};
use super::sched::Sched;
use super::value::{
    next_pos, numel_checked, operand, scalar, Elems, GlobalView, SharedView, Tile, Value,
};
use super::{EmuArg, EmuError, EmuOptions};
use crate::elem;
use crate::elem::Lanes;
use crate::ir::{BinOp, DType, Inst, Kernel, Operand, ParamKind, ReduceOp, Ty, VarId};
use crate::layout::Layout;
use std::sync::atomic::AtomicBool;

/// Fill pattern of a fresh shared window, as an `i32` read of 4 aligned bytes sees it (the bytes
/// repeat `ef be ad 7e`): kernels that read shared memory they never wrote see this instead of
/// a lucky zero.
pub const SHARED_POISON: i32 = 0x7ead_beef;

/// Buffers kept for reuse; more than this are dropped.
const POOL_MAX: usize = 32;

/// What every block of one launch shares.
pub(crate) struct Ctx<'k, 'a> {
    pub kernel: &'k Kernel,
    pub args: &'k [EmuArg<'a>],
    /// Length of each tensor argument (0 for scalars).
    pub global_lens: Vec<i64>,
    pub grid: crate::ir::Grid,
    pub opts: &'k EmuOptions,
    /// Set when some block failed: the others stop at their next loop iteration.
    pub abort: &'k AtomicBool,
    /// The kernel has 128-bit atomics: 64-bit global writes take their chunk's lock
    /// ([`super::GlobalMem::chunk_lock`]).
    pub chunk_locks: bool,
}

/// Why a block stopped early.
#[derive(Debug)]
pub(crate) enum Fault {
    Error(EmuError),
    /// Another block failed first; this block's own state does not matter.
    Aborted,
}

pub(crate) type R<T> = Result<T, Fault>;

/// One worker's interpreter, reused for every block the worker runs (buffers are kept). The
/// fields from `vars` to `read_atomically` are the running block's state, which
/// [`Interp::suspend`] moves out when the block yields (`sched.rs`).
pub(crate) struct Interp<'c, 'k, 'a> {
    pub ctx: &'c Ctx<'k, 'a>,
    /// The launch's scheduler, which a spinning block yields to (`None`: the block runs to
    /// its end on this thread, as a cluster's blocks do).
    pub sched: Option<&'c Sched<'k>>,
    /// Spare element buffers from overwritten tiles.
    pool: Vec<Vec<u64>>,
    /// Spare shared windows and race shadows, of blocks that were suspended elsewhere.
    pub spare: Spare,
    /// The kernel's tile layout parameter (`crate::layout::vector_width`).
    vmax: usize,
    /// Address buffer of the current access.
    pub addrs: Vec<i64>,
    /// Scratch for duplicate detection.
    pub scratch: Vec<i64>,
    /// The running cluster's shared windows and barrier (kernels with a cluster of more than
    /// one block); `shared` is unused then.
    pub cluster: Option<&'c ClusterMem>,
    pub vars: Vec<Value>,
    /// The block's shared window, in bytes.
    pub shared: Vec<u8>,
    pub block: u32,
    /// Loop iterations of the block so far (the step limit).
    pub iterations: u64,
    /// Race-checking shadow of the shared window (only under `check_races`).
    pub race: Option<Shadow>,
    /// The block's rank in its cluster (0 without one).
    pub rank: u32,
    /// Cluster barriers this block has passed.
    pub cluster_phase: u64,
    /// This block's vector clock (race checking of distributed shared memory; empty without
    /// it).
    pub clock: BlockClock,
    /// Where the block is in its program (`flow.rs`).
    pub frames: Vec<Frame<'k>>,
    /// Loop iterations that read global memory atomically (the block may be spinning).
    pub spins: u64,
    /// Whether the current loop iteration has read global memory atomically.
    pub read_atomically: bool,
}

/// Buffers of suspended blocks' kind, kept for the next block a worker starts.
#[derive(Default)]
pub(crate) struct Spare {
    pub windows: Vec<Vec<u8>>,
    pub shadows: Vec<Shadow>,
}

impl<'c, 'k, 'a> Interp<'c, 'k, 'a> {
    pub fn new(ctx: &'c Ctx<'k, 'a>, sched: Option<&'c Sched<'k>>) -> Self {
        Interp {
            ctx,
            sched,
            pool: Vec::new(),
            spare: Spare::default(),
            vmax: crate::layout::vector_width(ctx.kernel),
            addrs: Vec::new(),
            scratch: Vec::new(),
            cluster: None,
            vars: Vec::new(),
            shared: Vec::new(),
            block: 0,
            iterations: 0,
            race: None,
            rank: 0,
            cluster_phase: 0,
            clock: BlockClock::default(),
            frames: Vec::new(),
            spins: 0,
            read_atomically: false,
        }
    }

    /// An interpreter for one block of a running cluster.
    pub fn in_cluster(ctx: &'c Ctx<'k, 'a>, cluster: &'c ClusterMem) -> Self {
        let mut i = Interp::new(ctx, None);
        i.cluster = Some(cluster);
        i
    }

    /// Run block `block` to completion (without a scheduler, a block never yields).
    pub fn run_block(&mut self, block: u32) -> R<()> {
        self.start(block)?;
        match self.run()? {
            Stop::Done => Ok(()),
            Stop::Yielded => Err(self.malformed("a block yielded without a scheduler".into())),
        }
    }

    /// Make block `block` the running block, at the start of its program.
    pub fn start(&mut self, block: u32) -> R<()> {
        self.block = block;
        self.iterations = 0;
        self.spins = 0;
        self.read_atomically = false;
        self.rank = rank_of(self.ctx.grid.coords(block as u64), self.ctx.kernel.cluster).0;
        self.cluster_phase = 0;
        if let Some(shadow) = self.cluster.and_then(|c| c.race.as_ref()) {
            self.clock = BlockClock::new(self.rank, shadow.blocks());
        }
        self.fresh_buffers();
        for (i, b) in self.shared.iter_mut().enumerate() {
            *b = SHARED_POISON.to_le_bytes()[i % 4];
        }
        // A fresh epoch: nothing recorded by the previous block can conflict.
        self.barrier();
        for i in 0..self.vars.len() {
            let old = std::mem::take(&mut self.vars[i]);
            self.recycle(old);
        }
        let k = self.ctx.kernel;
        self.vars.resize(k.vars.len(), Value::Undef);
        for (i, (p, a)) in k.params.iter().zip(self.ctx.args).enumerate() {
            self.vars[i] = match (&p.kind, a) {
                (ParamKind::Tensor(_), EmuArg::Tensor(s)) => Value::Global(GlobalView {
                    param: i,
                    offset: 0,
                    dims: vec![s.len() as i64],
                }),
                (ParamKind::Scalar(d), EmuArg::Scalar(v)) => Value::Scalar(elem::canon(*d, *v)),
                _ => {
                    return Err(self.malformed(format!("argument {i} does not match its parameter")))
                }
            };
        }
        self.frames.clear();
        self.frames.push(Frame::Seq {
            stmts: &k.body,
            pc: 0,
        });
        Ok(())
    }

    /// A shared window and a race shadow for a new block, where the last block took its own
    /// along when it was suspended (a cluster's blocks use the cluster's windows instead).
    fn fresh_buffers(&mut self) {
        let window = match self.cluster {
            Some(_) => 0,
            None => self.ctx.kernel.shared_bytes.next_multiple_of(4),
        };
        if self.shared.len() != window {
            self.shared = self.spare.windows.pop().unwrap_or_default();
            self.shared.resize(window, 0);
        }
        if self.race.is_none() && self.ctx.opts.check_races {
            self.race = Some(
                self.spare
                    .shadows
                    .pop()
                    .unwrap_or_else(|| Shadow::new(self.ctx.kernel)),
            );
        }
    }

    /// `barrier.cluster`: a block barrier, then (with peers) the wait for the whole cluster.
    fn cluster_sync(&mut self) -> R<()> {
        self.barrier();
        self.cluster_phase += 1;
        let Some(c) = self.cluster else { return Ok(()) };
        c.barrier.wait(self.ctx.abort).map_err(|e| match e {
            BarrierError::Aborted => Fault::Aborted,
            BarrierError::Broken => self.cluster_error(
                "`cluster_sync()` waits for a block of the cluster that has already exited (the GPU would hang): every block of a cluster must reach the same cluster barriers".into(),
            ),
        })
    }

    /// A violation of the cluster protocol.
    pub fn cluster_error(&self, detail: String) -> Fault {
        Fault::Error(EmuError::Cluster {
            kernel: self.ctx.kernel.name.clone(),
            block: self.block,
            detail,
        })
    }

    /// A block-wide barrier (`bar.sync`) of the PTX: starts a new race-checking epoch.
    #[inline]
    pub fn barrier(&mut self) {
        if let Some(r) = &mut self.race {
            r.barrier();
        }
    }

    /// An IR invariant violation (the front end should never produce it).
    pub fn malformed(&self, message: String) -> Fault {
        Fault::Error(EmuError::Malformed {
            kernel: self.ctx.kernel.name.clone(),
            block: self.block,
            message,
        })
    }

    /// A fresh (empty) element buffer, reusing an old one's capacity where possible.
    pub fn take_buf(&mut self) -> Vec<u64> {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b
    }

    fn recycle(&mut self, v: Value) {
        if let Value::Tile(t) = v {
            if self.pool.len() < POOL_MAX {
                self.pool.push(t.data);
            }
        }
    }

    pub fn set(&mut self, dst: VarId, v: Value) -> R<()> {
        let Some(slot) = self.vars.get_mut(dst as usize) else {
            return Err(self.malformed(format!("destination variable {dst} does not exist")));
        };
        let old = std::mem::replace(slot, v);
        self.recycle(old);
        Ok(())
    }

    /// Store a tile result. A one-element result assigned to a variable declared scalar becomes
    /// that scalar (a memory op at a single scalar coordinate), so either lowering works.
    pub fn set_tile(&mut self, dst: VarId, shape: Vec<usize>, data: Vec<u64>) -> R<()> {
        let declared_scalar =
            matches!(self.ctx.kernel.vars.get(dst as usize), Some(v) if v.ty.is_scalar());
        if declared_scalar && data.len() == 1 {
            let v = data[0];
            self.recycle(Value::Tile(Tile { shape, data }));
            return self.set(dst, Value::Scalar(v));
        }
        self.set(dst, Value::Tile(Tile { shape, data }))
    }

    pub fn operand(&self, op: Operand) -> R<Elems<'_>> {
        operand(&self.vars, op).map_err(|m| self.malformed(m))
    }

    pub fn scalar(&self, op: Operand) -> R<u64> {
        scalar(&self.vars, op).map_err(|m| self.malformed(m))
    }

    /// An integer scalar operand's value (sign- or zero-extended by its type).
    pub fn int(&self, op: Operand) -> R<i128> {
        let bits = self.scalar(op)?;
        Ok(elem::as_i128(self.dtype(op), bits))
    }

    /// The layout of an `n`-element tile in this kernel.
    pub fn layout(&self, n: usize) -> Layout {
        Layout::new(n, self.ctx.kernel.threads as usize, self.vmax)
    }

    /// The dtype of an operand, from its declaration.
    pub fn dtype(&self, op: Operand) -> DType {
        match op {
            Operand::Imm(_, d) => d,
            Operand::Var(v) => self
                .ctx
                .kernel
                .vars
                .get(v as usize)
                .map_or(DType::I32, |v| v.ty.dtype()),
        }
    }

    pub(crate) fn inst(&mut self, dst: Option<VarId>, inst: &'k Inst) -> R<()> {
        match (inst, dst) {
            (
                Inst::Load { .. }
                | Inst::Store { .. }
                | Inst::AtomicLoad { .. }
                | Inst::AtomicStore { .. }
                | Inst::AtomicRmw { .. }
                | Inst::Fence { .. }
                | Inst::Sync
                | Inst::ClusterSync,
                _,
            ) => self.memory_inst(dst, inst),
            (_, Some(d)) => self.value_inst(d, inst),
            // An instruction without side effects and without a destination is skipped (DCE
            // would have removed it; nothing observable changes).
            (_, None) => Ok(()),
        }
    }

    /// Memory accesses and barriers, which run whether or not their result is used (a load
    /// without a destination has no effect).
    fn memory_inst(&mut self, dst: Option<VarId>, inst: &'k Inst) -> R<()> {
        match inst {
            Inst::Load { access, other } => match dst {
                Some(d) => self.load(d, access, *other),
                None => Ok(()),
            },
            Inst::Store { access, value } => self.store(access, *value),
            Inst::AtomicLoad { access, sem, .. } => self.atomic_load(dst, access, *sem),
            Inst::AtomicStore {
                access, value, sem, ..
            } => self.atomic_store(access, *value, *sem),
            Inst::AtomicRmw {
                op,
                access,
                values,
                compare,
                sem,
                inactive,
                pairs,
                ..
            } => self.rmw(dst, *op, access, *values, *compare, *sem, *inactive, *pairs),
            Inst::Fence { sem, .. } => {
                self.fence(*sem);
                Ok(())
            }
            Inst::Sync => {
                self.barrier();
                Ok(())
            }
            Inst::ClusterSync => self.cluster_sync(),
            _ => Err(self.malformed("not a memory instruction".into())),
        }
    }

    /// Instructions that compute the value of `d`.
    fn value_inst(&mut self, d: VarId, inst: &'k Inst) -> R<()> {
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
                let mut out = self.take_buf();
                out.extend((0..*n).map(|i| elem::int_const(*dtype, i as i128).unwrap_or(0)));
                self.set_tile(d, vec![*n], out)
            }
            Inst::LaneIds { shape, dtype } => {
                let n = self.numel(shape)?;
                // The thread holding flat index `f` (`crate::layout`), then its lane.
                let l = self.layout(n);
                let mut out = self.take_buf();
                out.extend((0..n).map(|f| {
                    let lane = (f % l.chunk()) / l.v % 32;
                    elem::int_const(*dtype, lane as i128).unwrap_or(0)
                }));
                self.set_tile(d, shape.clone(), out)
            }
            Inst::Full { shape, value } => {
                let n = self.numel(shape)?;
                let v = self.scalar(*value)?;
                let mut out = self.take_buf();
                out.resize(n, v);
                self.set_tile(d, shape.clone(), out)
            }
            Inst::Binary { op, lhs, rhs } => self.binary(d, *op, *lhs, *rhs),
            Inst::Unary { op, x } => {
                let dt = self.dtype(*x);
                self.map(d, *x, |lanes, n, out| {
                    elem::unary_into(*op, dt, lanes, n, out)
                })
            }
            Inst::Cast { x, dtype } => {
                let from = self.dtype(*x);
                self.map(d, *x, |lanes, n, out| {
                    elem::cast_into(from, *dtype, lanes, n, out)
                })
            }
            // Values are canonical bit patterns and the sizes agree: only the type changes.
            Inst::Bitcast { x, dtype } => self.map(d, *x, |lanes, n, out| {
                out.extend((0..n).map(|e| elem::canon(*dtype, lanes.at(e))))
            }),
            Inst::Fma { a, b, c } => {
                let dt = self.dtype(*a);
                self.ternary(d, [*a, *b, *c], "fma", |[a, b, c], n, out| {
                    elem::fma_into(dt, a.lanes(), b.lanes(), c.lanes(), n, out)
                })
            }
            Inst::Select { cond, a, b } => {
                self.ternary(d, [*cond, *a, *b], "select", |[c, x, y], n, out| {
                    out.extend((0..n).map(|e| if c.at(e) != 0 { x.at(e) } else { y.at(e) }))
                })
            }
            Inst::Reshape { x, shape } => self.reshape(d, *x, shape),
            Inst::Broadcast { x, shape } => self.broadcast(d, *x, shape),
            Inst::Reduce { op, x } => self.reduce(d, *op, *x),
            Inst::AllocShared {
                shape,
                offset,
                dtype,
                distributed,
            } => self.alloc_shared(d, shape, *offset, *dtype, *distributed),
            _ => Err(self.malformed("not a value instruction".into())),
        }
    }

    /// `Mov`: a copy of a value, or of a memory reference (`let v = t;`).
    fn mov(&mut self, d: VarId, op: Operand) -> R<()> {
        if let Operand::Var(v) = op {
            if let Some(m @ (Value::Global(_) | Value::Shared(_))) = self.vars.get(v as usize) {
                let m = m.clone();
                return self.set(d, m);
            }
        }
        let mut out = self.take_buf();
        let v = match self.operand(op)? {
            Elems::Scalar(v) => Value::Scalar(v),
            Elems::Tile(s, data) => {
                out.extend_from_slice(data);
                Value::Tile(Tile {
                    shape: s.to_vec(),
                    data: out,
                })
            }
        };
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
        let mut out = self.take_buf();
        let (a, b) = (self.operand(lhs)?, self.operand(rhs)?);
        let shape = match (a, b) {
            (Elems::Scalar(x), Elems::Scalar(y)) => {
                let v = elem::binary(op, dt, x, y);
                self.pool.push(out);
                return self.set(d, Value::Scalar(v));
            }
            (Elems::Tile(s, x), Elems::Tile(_, y)) if x.len() != y.len() => {
                return Err(self.malformed(format!(
                    "binary operands of shapes {s:?} and {:?}",
                    b.shape()
                )));
            }
            (Elems::Tile(s, x), _) | (_, Elems::Tile(s, x)) => (s.to_vec(), x.len()),
        };
        elem::binary_into(op, dt, a.lanes(), b.lanes(), shape.1, &mut out);
        self.set_tile(d, shape.0, out)
    }

    /// An element-wise map of one operand: `f(lanes, n, out)` appends the `n` results (one for
    /// a scalar, which stays a scalar).
    fn map(
        &mut self,
        d: VarId,
        x: Operand,
        f: impl FnOnce(Lanes<'_>, usize, &mut Vec<u64>),
    ) -> R<()> {
        let mut out = self.take_buf();
        match self.operand(x)? {
            e @ Elems::Scalar(_) => {
                f(e.lanes(), 1, &mut out);
                let v = out.first().copied().unwrap_or(0);
                self.pool.push(out);
                self.set(d, Value::Scalar(v))
            }
            e @ Elems::Tile(s, xs) => {
                let s = s.to_vec();
                f(e.lanes(), xs.len(), &mut out);
                self.set_tile(d, s, out)
            }
        }
    }

    /// An element-wise operation of three operands, scalars or tiles of one element count:
    /// `f(operands, n, out)` appends the `n` results; three scalars give a scalar. `what` names
    /// the operation in the error for operands of different shapes.
    fn ternary(
        &mut self,
        d: VarId,
        operands: [Operand; 3],
        what: &str,
        f: impl FnOnce(&[Elems<'_>; 3], usize, &mut Vec<u64>),
    ) -> R<()> {
        let mut out = self.take_buf();
        let ops = [
            self.operand(operands[0])?,
            self.operand(operands[1])?,
            self.operand(operands[2])?,
        ];
        let Some(first) = ops.iter().find_map(|t| t.shape()) else {
            f(&ops, 1, &mut out);
            let v = out.first().copied().unwrap_or(0);
            self.pool.push(out);
            return self.set(d, Value::Scalar(v));
        };
        let n = ops.iter().find_map(|t| t.len()).unwrap_or(0);
        if ops.iter().any(|t| t.len().is_some_and(|l| l != n)) {
            return Err(self.malformed(format!("{what} operands of different shapes")));
        }
        let shape = first.to_vec();
        f(&ops, n, &mut out);
        self.set_tile(d, shape, out)
    }

    /// `Reshape`: the same elements in row-major order, another shape.
    fn reshape(&mut self, d: VarId, x: VarId, shape: &[usize]) -> R<()> {
        let n = self.numel(shape)?;
        let mut out = self.take_buf();
        match self.operand(Operand::Var(x))? {
            Elems::Scalar(v) => out.push(v),
            Elems::Tile(_, xs) => out.extend_from_slice(xs),
        }
        if out.len() != n {
            return Err(self.malformed(format!("reshape of {} elements to {shape:?}", out.len())));
        }
        self.set_tile(d, shape.to_vec(), out)
    }

    /// `Broadcast` to `shape`.
    fn broadcast(&mut self, d: VarId, x: VarId, shape: &[usize]) -> R<()> {
        let n = self.numel(shape)?;
        let mut out = self.take_buf();
        let src = self.operand(Operand::Var(x))?;
        broadcast(src, shape, n, &mut out).map_err(|m| self.malformed(m))?;
        // The PTX replicates a tile through shared scratch between two barriers (a scalar
        // source or an equal element count is a register move).
        if let Some(Ty::Tile { shape: s, .. }) = self.ty(x) {
            if crate::ir::numel(s) != n {
                self.barrier();
            }
        }
        self.set_tile(d, shape.to_vec(), out)
    }

    /// `Reduce` of a tile to a scalar, in the PTX's order of combination.
    fn reduce(&mut self, d: VarId, op: ReduceOp, x: VarId) -> R<()> {
        let dt = self.dtype(Operand::Var(x));
        let v = match self.operand(Operand::Var(x))? {
            Elems::Scalar(v) => ops::reduce(op, dt, &[v], self.layout(1)),
            Elems::Tile(_, xs) => ops::reduce(op, dt, xs, self.layout(xs.len())),
        };
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

    fn numel(&self, shape: &[usize]) -> R<usize> {
        numel_checked(shape).ok_or_else(|| self.malformed(format!("shape {shape:?} is too large")))
    }

    /// `Fence`: the PTX brackets the fence with barriers.
    fn fence(&mut self, sem: crate::ir::Sem) {
        self.barrier();
        super::mem::fence(sem);
        self.clock.fence(sem);
    }

    /// The declared type of a variable (for diagnostics and scalar/tile decisions).
    pub fn ty(&self, v: VarId) -> Option<&'k Ty> {
        self.ctx.kernel.vars.get(v as usize).map(|v| &v.ty)
    }
}

/// Numpy broadcast of `src` to `shape` (`n` elements): a source of lower rank is padded with
/// leading 1s, and each source axis must be 1 or equal to the target's.
fn broadcast(src: Elems<'_>, shape: &[usize], n: usize, out: &mut Vec<u64>) -> Result<(), String> {
    let (sshape, data) = match src {
        Elems::Scalar(v) => {
            out.resize(n, v);
            return Ok(());
        }
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
    for _ in 0..n {
        let idx: usize = pos.iter().zip(&strides).map(|(p, s)| p * s).sum();
        out.push(data.get(idx).copied().unwrap_or(0));
        next_pos(&mut pos, shape);
    }
    Ok(())
}

/// An integer read as i64, saturating (view offsets and dims).
fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}
