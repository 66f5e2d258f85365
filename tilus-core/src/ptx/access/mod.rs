//! Tile-shaped memory operations: `Load`, `Store`, `AtomicLoad`, `AtomicStore`, `AtomicRmw`.
//!
//! Every operation is planned the same way: uniform set-up (view offsets, clamped dims, strides,
//! bound limits), then per owned element an *activity* predicate (slot exists, in bounds, mask)
//! and an address, then the instruction itself (`memops.rs`, `rmw.rs`), predicated per
//! element. Inactive elements never touch memory.
//!
//! Global views carry 64-bit offsets, dims and lengths (tensors may exceed 2^31 elements); shared
//! memory is addressed in 32 bits (a coordinate of a 64-bit type is saturated to 32 bits first,
//! which keeps it out of bounds if it was). Two ways to compute activity and addresses:
//! * the *range* path (`range.rs`), for rank-1 accesses with coordinate `offset + pos` (the
//!   streaming case): element `f` of the tile is active iff `lo <= f <= hi` for two uniform
//!   limits (computed exactly, in 64 bits for global memory, then clamped to the tile), and its
//!   address is one per-thread base plus a compile-time byte offset;
//! * the *general* path (`general.rs`), for everything else: coordinates from div/rem of the
//!   flat index by constants, or from index tiles, checked axis by axis and against the base
//!   tensor's length.
//!
//! Weak loads and stores on the range path also get a *vector* path: when the thread's run of
//! `v` elements is active and aligned (proved from known trailing zero bits, or tested once at
//! run time), 16-byte (or smaller) vector accesses with no per-element work; elements narrower
//! than 4 bytes travel in 32-bit words. The per-element code remains as the fallback for the
//! partial tail. Weak global loads and stores of 2-D and 3-D views whose runs lie along the
//! tensor's last axis (rows of a matrix, gathered rows) get the same shape of vector path
//! (`general.rs`, `run_vector_part`): only each run's first element is planned in full, and a
//! thread whose runs are all active and aligned skips the per-element code.

mod general;
mod range;

use super::code::{Guard, Label};
use super::emit::{internal, CodegenResult, Emitter, GlobalView, Storage};
use super::regs::Reg;
use super::value::{Predicate, RegOrConst, RegOrImm};
use crate::dtype::DType;
use crate::ir::{
    Access, BinOp, Coord, InactiveResult, Inst, Operand, RmwOp, Scope, Sem, Space, Ty, VarId,
};
use crate::layout::Layout;

/// A memory operand: a base register plus a compile-time byte offset.
#[derive(Debug, Clone, Copy)]
pub(super) struct Addr {
    pub base: Reg,
    pub imm: i64,
}

impl Addr {
    pub fn plus(self, bytes: i64) -> Addr {
        Addr {
            base: self.base,
            imm: self.imm.wrapping_add(bytes),
        }
    }
}

pub(super) enum Mem {
    Global(GlobalView),
    /// Shared window base register and the allocation's byte offset and shape; `rows`: a
    /// distributed tensor (`rows` of axis 0 per block of the cluster), addressed element by
    /// element in the owner block's window through `mapa` and `.shared::cluster`.
    Shared {
        smem: Reg,
        offset: usize,
        shape: Vec<usize>,
        rows: Option<usize>,
    },
}

/// Rank-1 streaming formulation: element `f` is active iff `lo <= f <= hi` (no limits when
/// bounds are not checked); its address is `first + size * (f - f_first)`.
pub(super) struct Range {
    pub lo: Option<RegOrImm>,
    pub hi: Option<RegOrImm>,
    /// The same test as one unsigned compare an element, `f - lo < span` (`span =
    /// max(hi + 1 - lo, 0)`), with `f - lo` as the thread's `f_first - lo` (`rel`) plus the
    /// slot's constant: an add and a compare, where the two signed tests took three SASS
    /// instructions an element.
    pub window: Option<(RegOrImm, RegOrImm)>,
    pub first: Addr,
}

/// The rank-1 streaming formulation of an access to a distributed shared tensor, for its
/// vector path only: element `f` is active iff `lo <= f <= hi`, and it is element
/// `m0 + (f - f_first)` of the tensor, in whichever block owns that row. (The per-element code
/// takes the general path, one owner and one `mapa` per element.)
pub(super) struct DistRange {
    pub lo: Option<RegOrImm>,
    pub hi: Option<RegOrImm>,
    /// The tensor element of the thread's first element.
    pub m0: RegOrImm,
    /// Elements per block (the owner of element `m` is `m / rows`).
    pub rows: usize,
}

/// The first element of a run of a 2-D (or 3-D) global access whose run elements are
/// consecutive in the tensor's last axis: element `i` of the run is at `addr + i * size` and in
/// bounds iff `rows` (every other axis) and `c_last + i < dim` and `idx + i < len` (the view
/// inside its base tensor).
#[derive(Debug, Clone, Copy)]
pub(super) struct RunHead {
    rows: Predicate,
    c_last: Option<RegOrConst>,
    idx_end: Option<(Option<Reg>, i64)>,
    addr: Addr,
}

/// One coordinate of a global access: `c32` when its type is 32-bit or narrower, else `c64`
/// (positions are always widened, and count as signed).
#[derive(Debug, Clone, Copy)]
struct GlobalCoord {
    c32: Option<RegOrImm>,
    c64: Option<RegOrConst>,
    signed: bool,
}

/// One planned element: its activity and address, and for the general paths what else they
/// know: in a distributed tensor whether the element is this block's (and its address in the
/// block's own window), and for the head of a derivable run what its other elements need.
pub(super) struct Planned {
    pub act: Predicate,
    pub addr: Addr,
    pub local: Option<(Predicate, Addr)>,
    pub head: Option<RunHead>,
}

impl Planned {
    fn at(act: Predicate, addr: Addr) -> Planned {
        Planned {
            act,
            addr,
            local: None,
            head: None,
        }
    }
}

/// The general path's uniform set-up.
pub(super) enum General {
    /// Shared memory: per-axis dims and row-major strides (compile-time), 32-bit math.
    Shared {
        dims: Vec<RegOrImm>,
        strides: Vec<RegOrImm>,
    },
    /// Global memory: per-axis dims clamped to `0..` (64-bit), the same clamped for 32-bit
    /// signed / unsigned coordinates (computed on first use), and 64-bit row-major strides
    /// (`None` = 1).
    Global {
        dims: Vec<Reg>,
        dims32: std::cell::RefCell<Vec<[Option<RegOrImm>; 2]>>,
        strides: Vec<Option<Reg>>,
        /// The address of element `base` of a whole tensor, for each thread register `base`
        /// of an `arange`-derived index (`emit/affine.rs`) met so far: the slots of such an
        /// index share it and differ in the immediate offset.
        affine_addrs: std::cell::RefCell<Vec<(Reg, Reg)>>,
    },
}

pub(super) struct Plan<'a> {
    pub access: &'a Access,
    pub layout: Layout,
    /// Every thread performs the (single) element: a scalar destination.
    pub uniform: bool,
    pub mem: Mem,
    pub dtype: DType,
    pub size: usize,
    pub range: Option<Range>,
    pub dist_range: Option<DistRange>,
    pub general: Option<General>,
}

impl Op {
    /// Weak loads and stores, and relaxed atomic ones (each element of a vector access is
    /// single-copy atomic), can go as vector instructions on the range path.
    fn has_vector_form(&self) -> bool {
        match self {
            Op::Load { .. } | Op::Store { .. } => true,
            Op::AtomicLoad { sem, .. } | Op::AtomicStore { sem, .. } => *sem == Sem::Relaxed,
            Op::Rmw(_) | Op::Prefetch => false,
        }
    }
}

/// What to do at each active element.
pub(super) enum Op {
    Load {
        dst: Vec<Reg>,
        other: Operand,
    },
    Store {
        value: Operand,
    },
    AtomicLoad {
        dst: Vec<Reg>,
        sem: Sem,
        scope: Scope,
    },
    AtomicStore {
        value: Operand,
        sem: Sem,
        scope: Scope,
    },
    Rmw(Rmw),
    /// `prefetch.global.L2` at each active element (`Inst::Prefetch`).
    Prefetch,
}

/// An atomic read-modify-write's operands (`Inst::AtomicRmw` with registers for its result).
pub(super) struct Rmw {
    pub dst: Vec<Reg>,
    pub with_output: bool,
    pub op: RmwOp,
    pub values: Operand,
    pub compare: Option<Operand>,
    pub sem: Sem,
    pub scope: Scope,
    pub inactive: InactiveResult,
    /// 128-bit RMWs on element pairs (`Inst::AtomicRmw::pairs`).
    pub pairs: bool,
}

/// How much of an access the vector path did.
pub(super) enum VectorPart {
    /// Nothing: no vector path (the per-element code does it all).
    None,
    /// Everything: every thread's run was proved active and aligned.
    All,
    /// The full runs; threads on the partial tail branched past to the per-element code,
    /// which ends at this label.
    UpTo(Label),
}

/// The fewest slots a thread's access must have for their bound tests to be made at the ends
/// (`range_all_inside`, `affine_all_inside`) rather than one a slot.
const MIN_SLOTS_TESTED_AT_ENDS: usize = 4;

impl Emitter<'_> {
    pub fn memory(&mut self, dst: Option<VarId>, inst: &Inst) -> CodegenResult<()> {
        let (access, sem) = match inst {
            Inst::Load { access, .. } | Inst::Store { access, .. } | Inst::Prefetch { access } => {
                (access, Sem::Relaxed)
            }
            Inst::AtomicLoad { access, sem, .. }
            | Inst::AtomicStore { access, sem, .. }
            | Inst::AtomicRmw { access, sem, .. } => (access, *sem),
            _ => return internal("not a memory instruction"),
        };
        let dtype = self.ty(access.mem)?.dtype();
        let uniform = matches!(dst.map(|d| self.ty(d)).transpose()?, Some(Ty::Scalar(_)));
        let slots = if uniform {
            1
        } else {
            self.layout_of(&access.shape).slots()
        };
        let Some(op) = self.memory_op(dst, inst, sem, uniform, dtype, slots)? else {
            return Ok(());
        };
        // Tile-level ordering (ir.rs): release = barrier before, acquire = barrier after.
        if sem.has_release() {
            self.barrier();
        }
        let plan = self.plan(access, uniform, dtype)?;
        let (op, fence) = acquire_by_fence(op, &plan);
        let vector = op.has_vector_form() && !uniform && plan.layout.v > 1;
        let mut done = None;
        if vector {
            let mut part = self.vector_part(&plan, &op)?;
            let loads_or_stores = matches!(op, Op::Load { .. } | Op::Store { .. });
            if matches!(part, VectorPart::None) && plan.range.is_none() && loads_or_stores {
                part = self.run_vector_part(&plan, &op)?;
            }
            match part {
                VectorPart::None => {}
                VectorPart::All => {
                    self.fence_after(fence)?;
                    self.after(sem);
                    return Ok(());
                }
                VectorPart::UpTo(end) => done = Some(end),
            }
        }
        // A thread whose slots are all inside the tensor (a range, or an `arange`-derived
        // index) skips their bound tests: the same elements, planned unchecked, on a branch of
        // their own. (The radix sort's keys pass: a key's load 4 SASS instructions -> 1, a
        // sort of 2^28 keys 0.4% faster on an H100.)
        let all_inside = match (done, &plan.range) {
            // Below that, two tests and a branch save little over the slots' own tests (a
            // count of instructions, not measured on a GPU).
            _ if slots < MIN_SLOTS_TESTED_AT_ENDS => None,
            (Some(_), _) => None,
            (None, Some(_)) => self.range_all_inside(&plan, slots)?,
            (None, None) => self.affine_all_inside(&plan, slots)?,
        };
        if let Some(Predicate::Reg(inside)) = all_inside {
            let unchecked_access = Access {
                check_bounds: false,
                ..access.clone()
            };
            let unchecked = self.plan(&unchecked_access, uniform, dtype)?;
            let checked = self.new_label("slots_checked");
            let end = self.new_label("slots_done");
            self.branch(Guard::Unless(inside), checked);
            self.element_path(&unchecked, &op, slots, done.is_none())?;
            self.branch(Guard::Always, end);
            self.label(checked);
            self.element_path(&plan, &op, slots, done.is_none())?;
            self.label(end);
        } else {
            self.element_path(&plan, &op, slots, done.is_none())?;
        }
        if let Some(end) = done {
            self.label(end);
        }
        self.fence_after(fence)?;
        self.after(sem);
        Ok(())
    }

    /// The per-element part of an access: every slot planned, then issued (`runs`: no vector
    /// instructions came before, so runs contiguous at run time may still go as vectors).
    fn element_path(
        &mut self,
        plan: &Plan,
        op: &Op,
        slots: usize,
        runs: bool,
    ) -> CodegenResult<()> {
        let planned = self.plan_elements(plan, slots)?;
        let elems: Vec<(Predicate, Addr)> = planned.iter().map(|p| (p.act, p.addr)).collect();
        let local_alts: Vec<_> = planned.iter().map(|p| p.local).collect();
        // Without a range plan (2-D views, index tiles), runs that turn out contiguous at run
        // time still go as vectors (not a store under the user's mask: `general_vectors`).
        let needed = match (op, &plan.range, runs) {
            (Op::Load { .. } | Op::Store { .. }, None, true) => {
                self.general_vectors(plan, op, &elems)?
            }
            _ => None,
        };
        self.element_ops(plan, op, &elems, needed.as_deref(), &local_alts)
    }

    /// The `fence.acq_rel` that makes the relaxed loads before it acquire loads (see
    /// [`acquire_by_fence`]).
    fn fence_after(&mut self, fence: Option<Scope>) -> CodegenResult<()> {
        if let Some(scope) = fence {
            let text = crate::table::check_fence(Sem::AcqRel, scope, Some(self.kernel().target))
                .map_err(|e| super::CodegenError::new(e.message))?;
            self.ins(super::code::Opcode::table(text), ());
        }
        Ok(())
    }

    /// What a memory instruction does at each active element, with its destination registers
    /// (a scratch register when an atom's result is unused); `None`: a load nobody reads.
    fn memory_op(
        &mut self,
        dst: Option<VarId>,
        inst: &Inst,
        sem: Sem,
        uniform: bool,
        dtype: DType,
        slots: usize,
    ) -> CodegenResult<Option<Op>> {
        let dst_regs = |e: &mut Self| -> CodegenResult<Vec<Reg>> {
            match dst {
                Some(d) => e.dst_regs(d),
                None => {
                    let r = e.reg_of(dtype);
                    Ok(vec![r; slots])
                }
            }
        };
        let op = match inst {
            Inst::Load { other, .. } => match dst {
                Some(d) => Op::Load {
                    dst: self.dst_regs(d)?,
                    other: *other,
                },
                None => return Ok(None),
            },
            Inst::Store { value, .. } => Op::Store { value: *value },
            Inst::Prefetch { .. } => Op::Prefetch,
            Inst::AtomicLoad { scope, .. } => Op::AtomicLoad {
                dst: dst_regs(self)?,
                sem,
                scope: *scope,
            },
            Inst::AtomicStore { value, scope, .. } => Op::AtomicStore {
                value: *value,
                sem,
                scope: *scope,
            },
            Inst::AtomicRmw {
                op,
                values,
                compare,
                scope,
                inactive,
                pairs,
                ..
            } => {
                if uniform {
                    return internal(
                        "an atomic read-modify-write with a scalar result is not supported",
                    );
                }
                Op::Rmw(Rmw {
                    dst: dst_regs(self)?,
                    with_output: dst.is_some(),
                    op: *op,
                    values: *values,
                    compare: *compare,
                    sem,
                    scope: *scope,
                    inactive: *inactive,
                    pairs: *pairs,
                })
            }
            _ => return internal("not a memory instruction"),
        };
        Ok(Some(op))
    }

    /// The vector path of a weak load or store on the range path, where it applies: the
    /// vector instructions, and the branch that sends threads on the partial tail past them.
    fn vector_part(&mut self, plan: &Plan, op: &Op) -> CodegenResult<VectorPart> {
        let Some((full, first)) = self.vector_check(plan)? else {
            return Ok(VectorPart::None);
        };
        self.vectors_or_fallback(full, ["tail", "vec_done"], |e| match first {
            Some(first) => e.vector_ops(plan, op, first),
            None => e.dist_vector_ops(plan, op),
        })
    }

    /// The vector instructions `vectors` emits, for the threads where `full` holds; the others
    /// branch past them (per thread, not uniformly) to the per-element code that follows, which
    /// ends at the returned label (labels named `names`: the fallback's, the end's).
    fn vectors_or_fallback(
        &mut self,
        full: Predicate,
        names: [&'static str; 2],
        vectors: impl FnOnce(&mut Self) -> CodegenResult<()>,
    ) -> CodegenResult<VectorPart> {
        let tail = self.new_label(names[0]);
        let end = self.new_label(names[1]);
        if let Predicate::Reg(p) = full {
            self.branch(Guard::Unless(p), tail);
        }
        vectors(self)?;
        if full == Predicate::True {
            return Ok(VectorPart::All);
        }
        self.branch(Guard::Always, end);
        self.label(tail);
        Ok(VectorPart::UpTo(end))
    }

    /// Every slot's element, planned before any operation is issued.
    fn plan_elements(&mut self, plan: &Plan, slots: usize) -> CodegenResult<Vec<Planned>> {
        // Plan every element first (reads index and mask tiles), then issue the operations,
        // so loads are issued back to back and a destination may alias an operand.
        let mut planned = Vec::with_capacity(slots);
        // Runs along the last axis: the first element of each run is planned in full, the
        // others derived from it (no per-element coordinates, strides or address arithmetic).
        let runs = self.derivable_runs(plan);
        let mut head = None;
        for s in 0..slots {
            let p = match (runs, head) {
                (Some(v), Some(h)) if s % v != 0 => self.run_member(plan, s, s % v, h)?,
                _ => {
                    let p = self.element(plan, s, runs.is_some())?;
                    head = p.head;
                    p
                }
            };
            planned.push(p);
        }
        Ok(planned)
    }

    fn after(&mut self, sem: Sem) {
        if sem.has_acquire() {
            self.barrier_after_acquire();
        }
    }

    /// Flat tile index of slot `s` of this thread (as a value).
    fn flat(&mut self, plan: &Plan, s: usize) -> RegOrImm {
        if plan.uniform {
            return RegOrImm::Imm(0);
        }
        let base = self.tid_times(plan.layout.v);
        let c = plan.layout.slot_const(s) as i32;
        self.add32(RegOrImm::Reg(base), RegOrImm::Imm(c))
    }

    fn exists(&mut self, plan: &Plan, s: usize) -> Predicate {
        if plan.uniform {
            return Predicate::True;
        }
        let layout = plan.layout;
        self.chunk_exists(&layout, s / layout.v)
    }

    pub(super) fn mask(&mut self, plan: &Plan, s: usize) -> CodegenResult<Predicate> {
        match plan.access.mask {
            None => Ok(Predicate::True),
            Some(m) => {
                let slot = self.slot_of(m, s)?;
                self.predicate_of(m, slot)
            }
        }
    }

    /// A coordinate operand as a 32-bit value: 64-bit values are saturated to the `i32` range
    /// (unsigned ones to `i32::MAX`), which keeps an out-of-range coordinate out of range for
    /// memory of fewer than 2^31 elements.
    fn coord32(&mut self, o: Operand, slot: usize) -> CodegenResult<RegOrImm> {
        let d = self.dtype_of(o)?;
        if d.bits() <= 32 {
            return self.reg_or_imm(o, slot);
        }
        match self.reg_or_const(o, slot)? {
            RegOrConst::Const(bits, _) => {
                let v = crate::elem::as_i128(d, bits);
                Ok(RegOrImm::Imm(
                    v.clamp(i32::MIN as i128, i32::MAX as i128) as i32
                ))
            }
            RegOrConst::Reg(r) => {
                let (t, n) = (self.r64(), self.r32());
                if d.is_signed() {
                    self.ins(["min", "s64"], (t, r, 2147483647));
                    self.ins(["max", "s64"], (t, t, -2147483648));
                } else {
                    self.ins(["min", "u64"], (t, r, 2147483647));
                }
                self.ins(["cvt", "u32", "u64"], (n, t));
                Ok(RegOrImm::Reg(n))
            }
        }
    }

    fn plan<'a>(
        &mut self,
        access: &'a Access,
        uniform: bool,
        dtype: DType,
    ) -> CodegenResult<Plan<'a>> {
        let layout = self.layout_of(&access.shape);
        let mem = match self.storage(access.mem)?.clone() {
            Storage::Global(g) => Mem::Global(g),
            Storage::Shared {
                offset,
                shape,
                rows,
            } => Mem::Shared {
                smem: self.smem_base(),
                offset,
                shape,
                rows,
            },
            _ => return internal("memory operand is not a tensor"),
        };
        let rank = match &mem {
            Mem::Global(g) => g.dims.len(),
            Mem::Shared { shape, .. } => shape.len(),
        };
        if access.coords.len() != rank {
            return internal(format!(
                "access has {} coordinates for a rank-{rank} tensor",
                access.coords.len()
            ));
        }
        let n = if uniform { 1 } else { layout.n as i64 };
        let size = dtype.size_bytes();
        let mut plan = Plan {
            access,
            layout,
            uniform,
            mem,
            dtype,
            size,
            range: None,
            dist_range: None,
            general: None,
        };
        if let ([Coord::Pos { axis: 0, offset }], 1) =
            (access.coords.as_slice(), access.shape.len())
        {
            if self.range_plan(&mut plan, *offset, n)? {
                return Ok(plan);
            }
        }
        plan.general = Some(self.general_plan(&plan, rank));
        Ok(plan)
    }

    /// A 64-bit value in a register.
    fn in_reg64(&mut self, v: RegOrConst) -> Reg {
        match v {
            RegOrConst::Reg(r) => r,
            RegOrConst::Const(bits, _) => {
                let r = self.r64();
                self.ins(["mov", "b64"], (r, bits as i64));
                r
            }
        }
    }

    /// The thread's first flat index (`tid * v`), or 0 when uniform.
    fn flat_base(&mut self, plan: &Plan) -> RegOrImm {
        if plan.uniform {
            RegOrImm::Imm(0)
        } else {
            RegOrImm::Reg(self.tid_times(plan.layout.v))
        }
    }

    /// Activity and address of slot `s`, and what the general paths know besides
    /// ([`Planned`]; `want_head`: record the slot as the head of a derivable run).
    fn element(&mut self, plan: &Plan, s: usize, want_head: bool) -> CodegenResult<Planned> {
        let mask = self.mask(plan, s)?;
        if let Some(r) = &plan.range {
            let c = if plan.uniform {
                0
            } else {
                plan.layout.slot_const(s)
            };
            let act = match r.window {
                Some((rel, span)) => {
                    let t = self.add32(rel, RegOrImm::Imm(c as i32));
                    self.setp32(BinOp::Lt, "u32", t, span)
                }
                None => self.exists(plan, s),
            };
            let act = self.and_pred(act, mask);
            return Ok(Planned::at(act, r.first.plus((plan.size * c) as i64)));
        }
        let exists = self.exists(plan, s);
        let act = self.and_pred(exists, mask);
        match &plan.mem {
            Mem::Shared { .. } => self.shared_element(plan, s, act),
            Mem::Global(g) => {
                let g = g.clone();
                self.global_element(plan, &g, s, act, want_head)
            }
        }
    }

    /// The PTX state space of an access: a distributed tensor's elements are addressed in
    /// `.shared::cluster` (sm_90), other shared tensors in `.shared`.
    pub(super) fn state_space(&self, plan: &Plan) -> &'static str {
        match plan.mem {
            Mem::Global(_) => Space::Global.ptx(),
            Mem::Shared { rows: Some(_), .. } => "shared::cluster",
            Mem::Shared { .. } => Space::Shared.ptx(),
        }
    }
}

/// An acquire `atomic_load` of global memory as relaxed loads and one `fence.acq_rel` of its
/// scope after them: the PTX memory model's acquire pattern, which orders what follows after
/// each of the loads as `ld.acquire` does (the elements of one tile load have no order among
/// themselves either way).
///
/// Why: ptxas (12.8 and 13.0, sm_90, -O2 and -O3, the driver JIT's default) can drop the load
/// of the global memory descriptor (`ULDC.64 URx, c[0x0][0x208]`) from a kernel holding a
/// predicated `ld.acquire.gpu.global` whose value it finds dead: every later global access
/// then goes through an uninitialised uniform register, and the kernel stops with
/// CUDA_ERROR_ILLEGAL_INSTRUCTION (the differential kernel
/// `seed_8596411326156858023` in tests/differential_seeds.rs, found on an H100, cut down and
/// checked with `cuobjdump`). The same PTX with `ld.relaxed` and a fence loads the descriptor.
/// The relaxed form also lets a tile's loads go as vector instructions, with one fence for
/// the tile instead of a cache invalidation per element.
fn acquire_by_fence(op: Op, plan: &Plan) -> (Op, Option<Scope>) {
    match op {
        Op::AtomicLoad { dst, sem, scope }
            if sem.has_acquire() && matches!(plan.mem, Mem::Global(_)) =>
        {
            let relaxed = Op::AtomicLoad {
                dst,
                sem: Sem::Relaxed,
                scope,
            };
            (relaxed, Some(scope))
        }
        op => (op, None),
    }
}
