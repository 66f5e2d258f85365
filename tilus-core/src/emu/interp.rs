//! The block interpreter: one block runs its body sequentially over whole tiles.
//!
//! Control flow is block-uniform and a tile operation completes for all of its elements before
//! the next statement starts, so a block is exactly a sequential program over tile values;
//! `Sync` has nothing to wait for. Memory instructions live in `mem.rs`.

use super::access::Run;
use super::buf::{Buf, Pool};
use super::cluster::{rank_of, BarrierError, ClusterMem};
use super::flow::{Frame, Stop};
use super::race::{BlockClock, Shadow, SyncKey};
use super::race_global::{GridClock, PageCache};
use super::sched::Sched;
use super::value::{operand, scalar, Elems, GlobalView, Tile, Value};
use super::{EmuArg, EmuError, EmuOptions};
use crate::elem;
use crate::ir::Scope;
use crate::ir::{DType, Inst, Kernel, Operand, ParamKind, Ty, VarId};
use crate::layout::Layout;
use std::sync::atomic::AtomicBool;

/// Fill pattern of a fresh shared window, as an `i32` read of 4 aligned bytes sees it (the bytes
/// repeat `ef be ad 7e`): kernels that read shared memory they never wrote see this instead of
/// a lucky zero.
pub const SHARED_POISON: i32 = 0x7ead_beef;

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
    /// Race checking of global memory between blocks and the host (under `check_races`, grids
    /// of more than one block or arguments in mapped memory).
    pub global_race: Option<std::sync::Arc<super::race_global::GlobalShadow>>,
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
    pub pool: Pool,
    /// Spare shared windows and race shadows, of blocks that were suspended elsewhere.
    pub spare: Spare,
    /// The kernel's tile layout parameter (`crate::layout::vector_width`).
    vmax: usize,
    /// Address buffer of the current access (one per element).
    pub addrs: Vec<i64>,
    /// Run buffer of the current access (`access::Run`).
    pub runs: Vec<Run>,
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
    /// This block's vector clock over the grid (race checking of global memory).
    pub gclock: GridClock,
    /// Whether the atomic instruction being run is at `sys` scope (its release or acquire then
    /// reaches the host: `host.rs`).
    pub sys_scope: bool,
    /// The global shadow's pages this worker has looked up (not the block's: kept by the worker).
    pub gpages: PageCache,
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
            pool: Pool::default(),
            spare: Spare::default(),
            vmax: crate::layout::vector_width(ctx.kernel),
            addrs: Vec::new(),
            runs: Vec::new(),
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
            gclock: GridClock::default(),
            sys_scope: false,
            gpages: PageCache::default(),
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
        if self.ctx.global_race.is_some() {
            self.gclock = GridClock::new(block);
        }
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
        // The barrier orders the cluster's blocks in global memory too.
        let key = [SyncKey::Barrier(self.cluster_key())];
        if let Some(g) = &self.ctx.global_race {
            g.publish(&key, crate::ir::Sem::Release, &self.gclock, false);
        }
        let passed = c.barrier.wait(self.ctx.abort);
        if let Some(g) = &self.ctx.global_race {
            g.observe(&key, crate::ir::Sem::Acquire, &mut self.gclock, false);
            self.gclock.tick();
        }
        passed.map_err(|e| match e {
            BarrierError::Aborted => Fault::Aborted,
            BarrierError::Broken => self.cluster_error(
                "`cluster_sync()` waits for a block of the cluster that has already exited (the GPU would hang): every block of a cluster must reach the same cluster barriers".into(),
            ),
        })
    }

    /// A name of the running block's cluster, unique in the launch (its rank-0 block's index),
    /// for the locations the global race checker keys by cluster.
    pub fn cluster_key(&self) -> usize {
        let (k, grid) = (self.ctx.kernel, self.ctx.grid);
        let (_, cid) = rank_of(grid.coords(self.block as u64), k.cluster);
        super::cluster::block_of(0, cid, k.cluster, grid) as usize
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

    fn recycle(&mut self, v: Value) {
        if let Value::Tile(t) = v {
            self.pool.give(t.data);
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
    pub fn set_tile(&mut self, dst: VarId, shape: Vec<usize>, data: Buf) -> R<()> {
        let declared_scalar =
            matches!(self.ctx.kernel.vars.get(dst as usize), Some(v) if v.ty.is_scalar());
        if declared_scalar && data.len() == 1 {
            let v = data.words().at(0);
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
            // A hint for the GPU's cache: nothing to do here.
            (Inst::Prefetch { .. }, _) => Ok(()),
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
            Inst::AtomicLoad { access, sem, scope } => {
                self.sys_scope = *scope == Scope::Sys;
                self.atomic_load(dst, access, *sem)
            }
            Inst::AtomicStore {
                access,
                value,
                sem,
                scope,
            } => {
                self.sys_scope = *scope == Scope::Sys;
                self.atomic_store(access, *value, *sem)
            }
            Inst::AtomicRmw {
                op,
                access,
                values,
                compare,
                sem,
                inactive,
                pairs,
                scope,
            } => {
                self.sys_scope = *scope == Scope::Sys;
                self.rmw(dst, *op, access, *values, *compare, *sem, *inactive, *pairs)
            }
            Inst::Fence { sem, scope } => {
                self.fence(*sem, *scope == Scope::Sys);
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

    /// `Fence`: the PTX brackets the fence with barriers.
    fn fence(&mut self, sem: crate::ir::Sem, sys: bool) {
        self.barrier();
        super::mem::fence(sem);
        self.clock.fence(sem);
        self.gclock.fence(sem, sys);
    }

    /// The declared type of a variable (for diagnostics and scalar/tile decisions).
    pub fn ty(&self, v: VarId) -> Option<&'k Ty> {
        self.ctx.kernel.vars.get(v as usize).map(|v| &v.ty)
    }
}
