//! Tile-shaped memory operations: `Load`, `Store`, `AtomicLoad`, `AtomicStore`, `AtomicRmw`.
//!
//! Every operation is planned the same way: uniform set-up (view offsets, clamped dims, strides,
//! bound limits), then per owned element an *activity* predicate (slot exists, in bounds, mask)
//! and an address, then the instruction itself (`memops.rs`), predicated per element. Inactive
//! elements never touch memory.
//!
//! Global views carry 64-bit offsets, dims and lengths (tensors may exceed 2^31 elements); shared
//! memory is addressed in 32 bits (a coordinate of a 64-bit type is saturated to 32 bits first,
//! which keeps it out of bounds if it was). Two ways to compute activity and addresses:
//! * the *range* path, for rank-1 accesses with coordinate `offset + pos` (the streaming case):
//!   element `f` of the tile is active iff `lo <= f <= hi` for two uniform limits (computed
//!   exactly, in 64 bits for global memory, then clamped to the tile), and its address is one
//!   per-thread base plus a compile-time byte offset;
//! * the *general* path, for everything else: coordinates from div/rem of the flat index by
//!   constants, or from index tiles, checked axis by axis and against the base tensor's length.
//!
//! Weak loads and stores on the range path also get a *vector* path: when the thread's run of
//! `v` elements is active and aligned (proved from known trailing zero bits, or tested once at
//! run time), 16-byte (or smaller) vector accesses with no per-element work; elements narrower
//! than 4 bytes travel in 32-bit words. The per-element code remains as the fallback for the
//! partial tail.

use super::code::{Guard, Label};
use super::emit::{internal, CodegenResult, Emitter, GlobalView, Storage};
use super::known::trailing_zeros_of_imm;
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
            Op::Rmw(_) => false,
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
enum VectorPart {
    /// Nothing: no vector path (the per-element code does it all).
    None,
    /// Everything: every thread's run was proved active and aligned.
    All,
    /// The full runs; threads on the partial tail branched past to the per-element code,
    /// which ends at this label.
    UpTo(Label),
}

impl Emitter<'_> {
    pub fn memory(&mut self, dst: Option<VarId>, inst: &Inst) -> CodegenResult<()> {
        let (access, sem) = match inst {
            Inst::Load { access, .. } | Inst::Store { access, .. } => (access, Sem::Relaxed),
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
        let vector = op.has_vector_form() && !uniform && plan.layout.v > 1;
        let mut done = None;
        if vector {
            match self.vector_part(&plan, &op)? {
                VectorPart::None => {}
                VectorPart::All => {
                    self.after(sem);
                    return Ok(());
                }
                VectorPart::UpTo(end) => done = Some(end),
            }
        }
        let planned = self.plan_elements(&plan, slots)?;
        let elems: Vec<(Predicate, Addr)> = planned.iter().map(|p| (p.act, p.addr)).collect();
        let local_alts: Vec<_> = planned.iter().map(|p| p.local).collect();
        // Without a range plan (2-D views, index tiles), runs that turn out contiguous at run
        // time still go as vectors.
        let needed = match (&op, &plan.range, &done) {
            (Op::Load { .. } | Op::Store { .. }, None, None) => {
                self.general_vectors(&plan, &op, &elems)?
            }
            _ => None,
        };
        self.element_ops(&plan, &op, &elems, needed.as_deref(), &local_alts)?;
        if let Some(end) = done {
            self.label(end);
        }
        self.after(sem);
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
        let tail = self.new_label("tail");
        let end = self.new_label("vec_done");
        if let Predicate::Reg(p) = full {
            // Per-thread (not uniform) branch: only threads on the partial tail fall back.
            self.branch(Guard::Unless(p), tail);
        }
        match first {
            Some(first) => self.vector_ops(plan, op, first)?,
            None => self.dist_vector_ops(plan, op)?,
        }
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
            self.barrier();
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

    /// The range plans of a rank-1 access at coordinate `offset + pos` (`n` elements per
    /// thread): `plan.range`, when it is complete (`true`); for a distributed tensor,
    /// `plan.dist_range` for the vector path, the general plan still to follow (`false`).
    fn range_plan(&mut self, plan: &mut Plan, offset: Operand, n: i64) -> CodegenResult<bool> {
        let (uniform, size) = (plan.uniform, plan.size);
        let f0 = self.flat_base(plan);
        match &plan.mem {
            Mem::Global(g) => {
                let g = g.clone();
                let r = self.global_range(&g, offset, n, plan.access.check_bounds, f0, size)?;
                plan.range = Some(r);
                return Ok(true);
            }
            // A scalar access to a distributed tensor has no run to vectorise.
            Mem::Shared { rows: Some(_), .. } if uniform => {}
            Mem::Shared { shape, rows, .. } => {
                let (len, rows) = (shape[0], *rows);
                let off0 = self.coord32(offset, 0)?;
                let (lo, hi) = if plan.access.check_bounds {
                    let lo = self.sub32(RegOrImm::Imm(0), off0);
                    let h = self.sub32(RegOrImm::Imm(len as i32), off0);
                    let h = self.min_max32(false, h, RegOrImm::Imm(n as i32));
                    (Some(lo), Some(self.sub32(h, RegOrImm::Imm(1))))
                } else {
                    (None, None)
                };
                let m0 = self.add32(off0, f0);
                match rows {
                    None => {
                        let first = self.shared_address(plan, m0);
                        plan.range = Some(Range { lo, hi, first });
                        return Ok(true);
                    }
                    // A distributed tensor: the range serves the vector path; the
                    // per-element fallback takes the general path (`general_plan`).
                    Some(rows) => {
                        plan.dist_range = Some(DistRange { lo, hi, m0, rows });
                    }
                }
            }
        }
        Ok(false)
    }

    /// The set-up of the general path: per-axis dims (clamped for bounds checks) and row-major
    /// strides.
    fn general_plan(&mut self, plan: &Plan, rank: usize) -> General {
        match &plan.mem {
            Mem::Global(g) => {
                let g = g.clone();
                let mut dims = Vec::with_capacity(rank);
                for d in &g.dims {
                    if plan.access.check_bounds && !g.whole {
                        let c = self.r64();
                        self.ins(["max", "s64"], (c, d, 0));
                        dims.push(c);
                    } else {
                        dims.push(*d);
                    }
                }
                let mut strides: Vec<Option<Reg>> = vec![None; rank];
                for k in (0..rank.saturating_sub(1)).rev() {
                    strides[k] = Some(match strides[k + 1] {
                        None => g.dims[k + 1],
                        Some(next) => {
                            let st = self.r64();
                            self.ins(["mul", "lo", "s64"], (st, next, g.dims[k + 1]));
                            st
                        }
                    });
                }
                General::Global {
                    dims32: std::cell::RefCell::new(vec![[None, None]; rank]),
                    dims,
                    strides,
                }
            }
            Mem::Shared { shape, .. } => {
                let dims = shape.iter().map(|&d| RegOrImm::Imm(d as i32)).collect();
                let mut strides = vec![RegOrImm::Imm(1); rank];
                for k in (0..rank.saturating_sub(1)).rev() {
                    strides[k] =
                        RegOrImm::Imm(strides[k + 1].imm().unwrap_or(1) * shape[k + 1] as i32);
                }
                General::Shared { dims, strides }
            }
        }
    }

    /// The range plan of a rank-1 global access at `offset`: with `c0 = view offset + offset`
    /// (exact, 64-bit), element `f` is in bounds iff `0 <= offset + f < dim` and
    /// `0 <= c0 + f < len`; the limits are clamped to the tile (`-1..=n`) so that the
    /// per-element tests are 32-bit.
    fn global_range(
        &mut self,
        g: &GlobalView,
        offset: Operand,
        n: i64,
        check: bool,
        f0: RegOrImm,
        size: usize,
    ) -> CodegenResult<Range> {
        let off = self.wide_int(offset)?;
        // c0 = g.off + offset (the whole-tensor case needs no add).
        let c0 = if g.whole {
            off
        } else if off == RegOrConst::Const(0, DType::I64) {
            RegOrConst::Reg(g.off)
        } else {
            let t = self.r64();
            self.ins(["add", "s64"], (t, g.off, off));
            RegOrConst::Reg(t)
        };
        let (lo, hi) = if check {
            let lo = match (off, c0) {
                (RegOrConst::Const(a, _), RegOrConst::Const(..)) => {
                    // Only the whole tensor has a constant c0 (== off).
                    RegOrImm::Imm(clamp_tile((a as i64).saturating_neg(), n))
                }
                _ => {
                    // lo = max(-offset, -c0), clamped to [-1, n].
                    let t = self.r64();
                    let u = self.r64();
                    let o = self.in_reg64(off);
                    self.ins(["neg", "s64"], (t, o));
                    if !g.whole {
                        let c = self.in_reg64(c0);
                        self.ins(["neg", "s64"], (u, c));
                        self.ins(["max", "s64"], (t, t, u));
                    }
                    self.clamp64(t, n)
                }
            };
            // hi = min(dim - offset, len - c0, n) - 1.
            let t = self.r64();
            let od = self.in_reg64(off);
            self.ins(["sub", "s64"], (t, g.dims[0], od));
            if !g.whole {
                let u = self.r64();
                let c = self.in_reg64(c0);
                self.ins(["sub", "s64"], (u, g.len, c));
                self.ins(["min", "s64"], (t, t, u));
            }
            self.ins(["add", "s64"], (t, t, -1));
            // At most the tile's last element: a thread whose first element lies past the end
            // of a tile shorter than the block must fail the test (clamping to `n` let one such
            // thread through, which ran [1]-tile RMWs twice on the GPU).
            let hi = self.clamp64(t, n - 1);
            (Some(lo), Some(hi))
        } else {
            (None, None)
        };
        // first = ptr + size * (c0 + tid * v), wrapping like the address arithmetic it stands for
        // (an offset near the ends of i64 is out of bounds, never accessed, but still printed).
        let first = match (c0, f0) {
            (RegOrConst::Const(c, _), RegOrImm::Imm(f)) => Addr {
                base: g.ptr,
                imm: (c as i64).wrapping_add(f as i64).wrapping_mul(size as i64),
            },
            (RegOrConst::Const(c, _), RegOrImm::Reg(fr)) => {
                let a = self.r64();
                self.ins(["mul", "wide", "u32"], (a, fr, size));
                self.ins(["add", "s64"], (a, a, g.ptr));
                Addr {
                    base: a,
                    imm: (c as i64).wrapping_mul(size as i64),
                }
            }
            (RegOrConst::Reg(cr), f) => {
                let m = self.r64();
                match f {
                    RegOrImm::Imm(0) => self.ins(["mov", "b64"], (m, cr)),
                    RegOrImm::Imm(fi) => self.ins(["add", "s64"], (m, cr, fi)),
                    RegOrImm::Reg(fr) => {
                        let w = self.r64();
                        self.ins(["cvt", "u64", "u32"], (w, fr));
                        self.ins(["add", "s64"], (m, cr, w));
                    }
                }
                let a = self.r64();
                self.ins(["mad", "lo", "s64"], (a, m, size, g.ptr));
                Addr { base: a, imm: 0 }
            }
        };
        Ok(Range { lo, hi, first })
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

    /// A 64-bit limit clamped to `[-1, n]` as a 32-bit value.
    fn clamp64(&mut self, t: Reg, n: i64) -> RegOrImm {
        let r = self.r32();
        self.ins(["max", "s64"], (t, t, -1));
        self.ins(["min", "s64"], (t, t, n));
        self.ins(["cvt", "u32", "u64"], (r, t));
        RegOrImm::Reg(r)
    }

    /// The thread's first flat index (`tid * v`), or 0 when uniform.
    fn flat_base(&mut self, plan: &Plan) -> RegOrImm {
        if plan.uniform {
            RegOrImm::Imm(0)
        } else {
            RegOrImm::Reg(self.tid_times(plan.layout.v))
        }
    }

    /// A distributed tensor's row `c` as (row in the owner's part, owner rank). The rank is
    /// clamped to the cluster (an inactive element's row may be anything, and `mapa` must
    /// name a block that exists).
    pub(super) fn split_rows(&mut self, c: RegOrImm, rows: usize) -> (RegOrImm, RegOrImm) {
        let last = self.kernel().cluster.blocks().max(1) as i32 - 1;
        let rows = rows as i32;
        match c {
            RegOrImm::Imm(c) => (
                RegOrImm::Imm((c as u32 % rows as u32) as i32),
                RegOrImm::Imm(((c as u32 / rows as u32) as i32).min(last)),
            ),
            RegOrImm::Reg(r) => {
                let (local, rank) = (self.r32(), self.r32());
                if (rows as u32).is_power_of_two() {
                    let shift = rows.trailing_zeros();
                    self.ins(["and", "b32"], (local, r, rows - 1));
                    self.ins(["shr", "u32"], (rank, r, shift));
                } else {
                    self.ins(["rem", "u32"], (local, r, rows));
                    self.ins(["div", "u32"], (rank, r, rows));
                }
                self.ins(["min", "u32"], (rank, rank, last));
                (RegOrImm::Reg(local), RegOrImm::Reg(rank))
            }
        }
    }

    /// The `.shared::cluster` address of the same shared-window address in block `rank`.
    pub(super) fn map_to_block(&mut self, addr: Addr, rank: RegOrImm) -> Addr {
        let (local, mapped) = (self.r32(), self.r32());
        self.ins(["add", "u32"], (local, addr.base, addr.imm));
        self.ins(["mapa", "shared::cluster", "u32"], (mapped, local, rank));
        Addr {
            base: mapped,
            imm: 0,
        }
    }

    /// Address of element `m` of a shared allocation (relative to the allocation).
    pub(super) fn shared_address(&mut self, plan: &Plan, m: RegOrImm) -> Addr {
        let Mem::Shared { smem, offset, .. } = &plan.mem else {
            unreachable!("shared plan")
        };
        let size = plan.size;
        match m {
            RegOrImm::Imm(c) => Addr {
                base: *smem,
                imm: *offset as i64 + size as i64 * c as i64,
            },
            RegOrImm::Reg(r) => {
                let a = self.r32();
                self.ins(["mad", "lo", "s32"], (a, r, size, smem));
                Addr {
                    base: a,
                    imm: *offset as i64,
                }
            }
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
            let act = match (r.lo, r.hi) {
                (Some(lo), Some(hi)) => {
                    let f = self.flat(plan, s);
                    let a = self.setp32(BinOp::Ge, "s32", f, lo);
                    let b = self.setp32(BinOp::Le, "s32", f, hi);
                    self.and_pred(a, b)
                }
                _ => self.exists(plan, s),
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

    /// The position of slot `s` along tile axis `axis` (computed once per axis and slot).
    fn pos_of(
        &mut self,
        plan: &Plan,
        s: usize,
        axis: usize,
        f: &mut Option<RegOrImm>,
        pos: &mut [Option<RegOrImm>],
    ) -> CodegenResult<RegOrImm> {
        let shape = &plan.access.shape;
        let Some(ext) = shape.get(axis).copied() else {
            return internal("coordinate axis out of range");
        };
        if let Some(p) = pos[axis] {
            return Ok(p);
        }
        let p = if plan.uniform {
            RegOrImm::Imm(0)
        } else {
            let fv = match *f {
                Some(fv) => fv,
                None => {
                    let fv = self.flat(plan, s);
                    *f = Some(fv);
                    fv
                }
            };
            self.tile_pos(fv, shape, axis, ext)
        };
        pos[axis] = Some(p);
        Ok(p)
    }

    fn shared_element(
        &mut self,
        plan: &Plan,
        s: usize,
        mut act: Predicate,
    ) -> CodegenResult<Planned> {
        let Some(General::Shared { dims, strides }) = &plan.general else {
            return internal("shared plan without its set-up");
        };
        let (dims, strides) = (dims.clone(), strides.clone());
        let mut f = None;
        let mut pos: Vec<Option<RegOrImm>> = vec![None; plan.access.shape.len()];
        let mut m = RegOrImm::Imm(0);
        let mut owner = None;
        for (k, coord) in plan.access.coords.iter().enumerate() {
            // The largest value an index can have, where its type or its computation bounds
            // it (`u8`: 255; `bins * 32 + lane_ids(..)`: `bounds`).
            let mut index_max = None;
            let mut c = match coord {
                Coord::Pos { axis, offset } => {
                    let p = self.pos_of(plan, s, *axis, &mut f, &mut pos)?;
                    let o = self.coord32(*offset, 0)?;
                    self.add32(o, p)
                }
                Coord::Index(o) => {
                    index_max = self.known().upper_bound(*o);
                    let slot = self.slot_of(*o, s)?;
                    self.coord32(*o, slot)?
                }
            };
            // An index that cannot reach the axis's length needs no test (a 256-bin histogram
            // of bytes pays one compare and one `and` per element otherwise).
            let always_inside =
                matches!((index_max, dims[k]), (Some(m), RegOrImm::Imm(d)) if m < d as u64);
            if plan.access.check_bounds && !always_inside {
                let ok = self.setp32(BinOp::Lt, "u32", c, dims[k]);
                act = self.and_pred(act, ok);
            }
            if let (
                0,
                Mem::Shared {
                    rows: Some(rows), ..
                },
            ) = (k, &plan.mem)
            {
                let (local, rank) = self.split_rows(c, *rows);
                c = local;
                owner = Some(rank);
            }
            let t = self.mul32(c, strides[k]);
            m = self.add32(m, t);
        }
        let addr = self.shared_address(plan, m);
        match owner {
            None => Ok(Planned::at(act, addr)),
            Some(rank) => {
                // Elements this block owns can also be reached in its own window, where an
                // atomic does not go through the cluster's network (see `rmw_elems`).
                let me = self.cluster_rank_reg();
                let local = self.setp32(BinOp::Eq, "u32", rank, RegOrImm::Reg(me));
                let mut p = Planned::at(act, self.map_to_block(addr, rank));
                p.local = Some((local, addr));
                Ok(p)
            }
        }
    }

    /// The uniform `min(dim, limit)` of axis `k` for 32-bit coordinates of the given signedness
    /// (computed on first use): an unsigned 32-bit compare against it is the exact bound test.
    fn dim32(&mut self, plan: &Plan, k: usize, signed: bool) -> CodegenResult<RegOrImm> {
        let Some(General::Global { dims, dims32, .. }) = &plan.general else {
            return internal("global plan without its set-up");
        };
        if let Some(v) = dims32.borrow()[k][signed as usize] {
            return Ok(v);
        }
        let d = dims[k];
        let limit: i64 = if signed {
            i32::MAX as i64
        } else {
            u32::MAX as i64
        };
        let (t, r) = (self.r64(), self.r32());
        self.ins(["min", "s64"], (t, d, limit));
        self.ins(["cvt", "u32", "u64"], (r, t));
        // The set-up is shared by all slots of the access: remember it.
        dims32.borrow_mut()[k][signed as usize] = Some(RegOrImm::Reg(r));
        Ok(RegOrImm::Reg(r))
    }

    fn global_element(
        &mut self,
        plan: &Plan,
        g: &GlobalView,
        s: usize,
        mut act: Predicate,
        want_head: bool,
    ) -> CodegenResult<Planned> {
        let Some(General::Global { dims, strides, .. }) = &plan.general else {
            return internal("global plan without its set-up");
        };
        let (dims, strides) = (dims.clone(), strides.clone());
        let check = plan.access.check_bounds;
        let mut f = None;
        let mut pos: Vec<Option<RegOrImm>> = vec![None; plan.access.shape.len()];
        // m = sum(c_k * stride_k) in 64 bits (the view offset added below).
        let mut m: Option<Reg> = None;
        let mut m_imm: i64 = 0;
        // For a run head: the bounds of every axis but the last, and the last coordinate.
        let last = plan.access.coords.len().saturating_sub(1);
        let mut rows = Predicate::True;
        let mut c_last = None;
        for (k, coord) in plan.access.coords.iter().enumerate() {
            let c = self.global_coord(plan, s, coord, &mut f, &mut pos)?;
            if check {
                let ok = self.global_axis_check(plan, k, dims[k], c)?;
                act = self.and_pred(act, ok);
                if want_head && k != last {
                    rows = self.and_pred(rows, ok);
                }
            }
            if want_head && k == last {
                c_last = c.c64;
            }
            // Accumulate c_k * stride_k.
            let Some(term) = self.stride_term(c, strides[k], &mut m_imm)? else {
                continue;
            };
            m = Some(match m {
                None => self.in_reg64(term),
                Some(acc) => {
                    let t = self.r64();
                    self.ins(["add", "s64"], (t, acc, term));
                    t
                }
            });
        }
        let (idx, inside) = self.base_index(g, m, m_imm, check);
        if let Some(ok) = inside {
            act = self.and_pred(act, ok);
        }
        let size = plan.size as i64;
        let addr = match idx {
            None => Addr {
                base: g.ptr,
                imm: m_imm.wrapping_mul(size),
            },
            Some(i) => {
                let a = self.r64();
                self.ins(["mad", "lo", "s64"], (a, i, size, g.ptr));
                Addr {
                    base: a,
                    imm: m_imm.wrapping_mul(size),
                }
            }
        };
        let mut p = Planned::at(act, addr);
        if want_head {
            p.head = Some(RunHead {
                rows,
                c_last: if check { c_last } else { None },
                idx_end: (check && !g.whole).then_some((idx, m_imm)),
                addr,
            });
        }
        Ok(p)
    }

    /// Coordinate `coord` of slot `s` of a global access: kept in 32 bits when its type is,
    /// else widened to 64 (an offset plus a position may pass `i32::MAX`).
    fn global_coord(
        &mut self,
        plan: &Plan,
        s: usize,
        coord: &Coord,
        f: &mut Option<RegOrImm>,
        pos: &mut [Option<RegOrImm>],
    ) -> CodegenResult<GlobalCoord> {
        let (c32, c64, signed) = match coord {
            Coord::Pos { axis, offset } => {
                let p = self.pos_of(plan, s, *axis, f, pos)?;
                let od = self.dtype_of(*offset)?;
                if od.bits() <= 32 {
                    let o = self.reg_or_imm(*offset, 0)?;
                    // offset + position may pass i32::MAX: widen before adding.
                    let w = self.wide_add(o, od.is_signed(), p);
                    (None, Some(w), true)
                } else {
                    let o = self.wide_int(*offset)?;
                    let w = self.wide_add_e(o, p);
                    (None, Some(w), true)
                }
            }
            Coord::Index(o) => {
                let slot = self.slot_of(*o, s)?;
                let od = self.dtype_of(*o)?;
                if od.bits() <= 32 {
                    (Some(self.reg_or_imm(*o, slot)?), None, od.is_signed())
                } else {
                    let v = self.reg_or_const(*o, slot)?;
                    (None, Some(v), od.is_signed())
                }
            }
        };
        Ok(GlobalCoord { c32, c64, signed })
    }

    /// The bound test of coordinate `c` on axis `k` (of dim `dim`): one unsigned compare, in
    /// 32 bits against the saturated dim when the coordinate is 32-bit.
    fn global_axis_check(
        &mut self,
        plan: &Plan,
        k: usize,
        dim: Reg,
        c: GlobalCoord,
    ) -> CodegenResult<Predicate> {
        Ok(match (c.c32, c.c64) {
            (Some(c32), _) => {
                let d32 = self.dim32(plan, k, c.signed)?;
                self.setp32(BinOp::Lt, "u32", c32, d32)
            }
            (None, Some(c64)) => {
                let p = self.new_pred();
                self.ins(["setp", "lt", "u64"], (p, c64, dim));
                Predicate::Reg(p)
            }
            _ => Predicate::True,
        })
    }

    /// `c * stride` as a 64-bit term of the element index (`None` stride: 1); a constant
    /// 32-bit coordinate of a stride-1 axis is added to `m_imm` instead (`None` returned).
    fn stride_term(
        &mut self,
        c: GlobalCoord,
        stride: Option<Reg>,
        m_imm: &mut i64,
    ) -> CodegenResult<Option<RegOrConst>> {
        let c64 = match (c.c32, c.c64) {
            (Some(RegOrImm::Imm(c)), _) if stride.is_none() => {
                *m_imm = m_imm.wrapping_add(c as i64);
                return Ok(None);
            }
            (Some(c32), _) => {
                let w = self.r64();
                let ext = if c.signed { "s32" } else { "u32" };
                let c32 = self.in_reg32(c32);
                self.ins(["cvt", "s64", ext], (w, c32));
                RegOrConst::Reg(w)
            }
            (None, Some(c64)) => c64,
            _ => return internal("coordinate without a value"),
        };
        Ok(Some(match stride {
            None => c64,
            Some(st) => {
                let t = self.r64();
                self.ins(["mul", "lo", "s64"], (t, c64, st));
                RegOrConst::Reg(t)
            }
        }))
    }

    /// The element's index into the base tensor less `m_imm`: `off + m` (`None`: zero, a whole
    /// tensor with no variable term); and when bounds are checked through a view, the test
    /// that `off + m + m_imm` is inside the base tensor.
    fn base_index(
        &mut self,
        g: &GlobalView,
        m: Option<Reg>,
        m_imm: i64,
        check: bool,
    ) -> (Option<Reg>, Option<Predicate>) {
        let idx: Option<Reg> = match (g.whole, m) {
            (true, m) => m,
            (false, None) => Some(g.off),
            (false, Some(acc)) => {
                let t = self.r64();
                self.ins(["add", "s64"], (t, acc, g.off));
                Some(t)
            }
        };
        if !check || g.whole {
            return (idx, None);
        }
        // The view's element must be inside the base tensor.
        let p = self.new_pred();
        match idx {
            Some(i) if m_imm != 0 => {
                let t = self.r64();
                self.ins(["add", "s64"], (t, i, m_imm));
                self.ins(["setp", "lt", "u64"], (p, t, g.len));
            }
            Some(i) => self.ins(["setp", "lt", "u64"], (p, i, g.len)),
            None => self.ins(["setp", "lt", "u64"], (p, m_imm, g.len)),
        }
        (idx, Some(Predicate::Reg(p)))
    }

    /// The run length `v` when the elements of this access can be derived from their run's
    /// first element: a global access without a range plan whose last coordinate is the tile's
    /// last axis (so a run, which never crosses a row of the tile when `v` divides its last
    /// dimension, is consecutive in the tensor's last axis, of stride 1) and whose other
    /// coordinates do not depend on it.
    fn derivable_runs(&self, plan: &Plan) -> Option<usize> {
        let v = plan.layout.v;
        let shape = &plan.access.shape;
        let coords = &plan.access.coords;
        let tile_last = shape.len().checked_sub(1)?;
        if plan.uniform
            || plan.range.is_some()
            || v < 2
            || !matches!(plan.mem, Mem::Global(_))
            || !shape[tile_last].is_multiple_of(v)
        {
            return None;
        }
        let (last, others) = coords.split_last()?;
        if !matches!(last, Coord::Pos { axis, .. } if *axis == tile_last) {
            return None;
        }
        let independent = |c: &Coord| match c {
            Coord::Pos { axis, .. } => *axis != tile_last,
            Coord::Index(o) => !self.is_tile(*o).unwrap_or(true),
        };
        others.iter().all(independent).then_some(v)
    }

    /// Element `i` (`1..v`) of the run that starts at slot `s - i`, from its head.
    fn run_member(
        &mut self,
        plan: &Plan,
        s: usize,
        i: usize,
        h: RunHead,
    ) -> CodegenResult<Planned> {
        let exists = self.exists(plan, s);
        let mask = self.mask(plan, s)?;
        let mut act = self.and_pred(exists, mask);
        act = self.and_pred(act, h.rows);
        let Some(General::Global { dims, .. }) = &plan.general else {
            return internal("global plan without its set-up");
        };
        let dim_last = dims[dims.len() - 1];
        if let Some(c) = h.c_last {
            let t = self.r64();
            let c = self.in_reg64(c);
            self.ins(["add", "s64"], (t, c, i));
            let p = self.new_pred();
            self.ins(["setp", "lt", "u64"], (p, t, dim_last));
            act = self.and_pred(act, Predicate::Reg(p));
        }
        if let (Some((idx, m_imm)), Mem::Global(g)) = (h.idx_end, &plan.mem) {
            let len = g.len;
            let end = m_imm.wrapping_add(i as i64);
            let p = self.new_pred();
            match idx {
                Some(r) => {
                    let t = self.r64();
                    self.ins(["add", "s64"], (t, r, end));
                    self.ins(["setp", "lt", "u64"], (p, t, len));
                }
                None => self.ins(["setp", "lt", "u64"], (p, end, len)),
            }
            act = self.and_pred(act, Predicate::Reg(p));
        }
        Ok(Planned::at(act, h.addr.plus(i as i64 * plan.size as i64)))
    }

    /// `o + p` in 64 bits for a 32-bit `o` (of the given signedness) and a tile position `p`.
    fn wide_add(&mut self, o: RegOrImm, signed: bool, p: RegOrImm) -> RegOrConst {
        match (o, p) {
            (RegOrImm::Imm(a), RegOrImm::Imm(b)) => {
                let a = if signed { a as i64 } else { a as u32 as i64 };
                RegOrConst::Const((a + b as i64) as u64, DType::I64)
            }
            _ => {
                let w = self.r64();
                let ext = if signed { "s32" } else { "u32" };
                let o = self.in_reg32(o);
                self.ins(["cvt", "s64", ext], (w, o));
                if p != RegOrImm::Imm(0) {
                    self.add_position(w, w, p);
                }
                RegOrConst::Reg(w)
            }
        }
    }

    /// `o + p` in 64 bits for a 64-bit `o` and a tile position `p`.
    fn wide_add_e(&mut self, o: RegOrConst, p: RegOrImm) -> RegOrConst {
        match (o, p) {
            (RegOrConst::Const(a, _), RegOrImm::Imm(b)) => {
                RegOrConst::Const((a as i64).saturating_add(b as i64) as u64, DType::I64)
            }
            _ => {
                let w = self.r64();
                let o = self.in_reg64(o);
                self.add_position(w, o, p);
                RegOrConst::Reg(w)
            }
        }
    }

    /// `w = o + p` in 64 bits for a tile position `p` (an unsigned 32-bit value).
    fn add_position(&mut self, w: Reg, o: Reg, p: RegOrImm) {
        match p {
            RegOrImm::Imm(b) => self.ins(["add", "s64"], (w, o, b)),
            RegOrImm::Reg(pr) => {
                let t = self.r64();
                self.ins(["cvt", "u64", "u32"], (t, pr));
                self.ins(["add", "s64"], (w, o, t));
            }
        }
    }

    /// Position along `axis` of tile flat index `f` (div/rem by compile-time constants).
    fn tile_pos(&mut self, f: RegOrImm, shape: &[usize], axis: usize, ext: usize) -> RegOrImm {
        let stride: usize = shape[axis + 1..].iter().product();
        let mut p = f;
        if stride != 1 {
            p = match p {
                RegOrImm::Imm(c) => RegOrImm::Imm(c / stride as i32),
                RegOrImm::Reg(r) => {
                    let q = self.r32();
                    self.ins(["div", "u32"], (q, r, stride));
                    RegOrImm::Reg(q)
                }
            };
        }
        if axis != 0 && ext != 1 {
            p = match p {
                RegOrImm::Imm(c) => RegOrImm::Imm(c % ext as i32),
                RegOrImm::Reg(r) => {
                    let q = self.r32();
                    self.ins(["rem", "u32"], (q, r, ext));
                    RegOrImm::Reg(q)
                }
            };
        } else if ext == 1 {
            p = RegOrImm::Imm(0);
        }
        p
    }

    /// Whether the whole thread's tile can use vector accesses: all slots active, aligned, and a
    /// run of at least 4 bytes. Returns the (per-thread) predicate and the first address, or
    /// `None` without a range plan.
    fn vector_check(&mut self, plan: &Plan) -> CodegenResult<Option<(Predicate, Option<Addr>)>> {
        let layout = plan.layout;
        let v = layout.v;
        let (lo, hi, first) = match (&plan.range, &plan.dist_range) {
            (Some(r), _) => (r.lo, r.hi, Some(r.first)),
            // An aligned run of `v` stays in one block when `v` divides the rows per block.
            (None, Some(d)) if d.rows.is_multiple_of(v) => (d.lo, d.hi, None),
            _ => return Ok(None),
        };
        if v * plan.size < 4 {
            return Ok(None);
        }
        let vbits = v.trailing_zeros();
        // Alignment of the element index of the thread's first element (tid * v is aligned).
        let (offset, view_zeros) = match (&plan.mem, &plan.access.coords[0]) {
            (Mem::Global(_), Coord::Pos { offset, .. }) => (
                *offset,
                self.known().trailing_zeros(Operand::Var(plan.access.mem)),
            ),
            (Mem::Shared { .. }, Coord::Pos { offset, .. }) => (*offset, 64),
            _ => return Ok(None),
        };
        // Statically misaligned (aligned view, constant offset not a multiple of v): no vector path.
        if let Some(c) = offset.imm_int() {
            if view_zeros >= vbits && trailing_zeros_of_imm(c as i64) < vbits {
                return Ok(None);
            }
        }
        let mut full = if self.known().trailing_zeros(offset).min(view_zeros) >= vbits {
            Predicate::True
        } else {
            // One uniform test of the first element index's alignment.
            let c0 = match &plan.mem {
                Mem::Global(g) => {
                    let g = g.clone();
                    let o = self.wide_int(offset)?;
                    let t = self.r64();
                    self.ins(["add", "s64"], (t, g.off, o));
                    let w = self.r32();
                    self.ins(["cvt", "u32", "u64"], (w, t));
                    RegOrImm::Reg(w)
                }
                Mem::Shared { .. } => self.coord32(offset, 0)?,
            };
            let c0 = self.in_reg32(c0);
            let t = self.r32();
            self.ins(["and", "b32"], (t, c0, v - 1));
            self.setp32(BinOp::Eq, "s32", RegOrImm::Reg(t), RegOrImm::Imm(0))
        };
        let base = RegOrImm::Reg(self.tid_times(v));
        let last = layout.slot_const(layout.slots() - 1) as i32;
        let in_range = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let a = self.setp32(BinOp::Ge, "s32", base, lo);
                let end = self.add32(base, RegOrImm::Imm(last));
                let b = self.setp32(BinOp::Le, "s32", end, hi);
                self.and_pred(a, b)
            }
            _ => {
                let layout = plan.layout;
                self.chunk_exists(&layout, layout.outer - 1)
            }
        };
        full = self.and_pred(full, in_range);
        for s in 0..layout.slots() {
            let m = self.mask(plan, s)?;
            full = self.and_pred(full, m);
        }
        if full == Predicate::False {
            return Ok(None);
        }
        Ok(Some((full, first)))
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

/// `-x` clamped to the tile range `[-1, n]`.
fn clamp_tile(x: i64, n: i64) -> i32 {
    x.clamp(-1, n) as i32
}
