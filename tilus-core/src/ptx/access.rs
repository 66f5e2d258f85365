//! Tile-shaped memory operations: `Load`, `Store`, `AtomicLoad`, `AtomicStore`, `AtomicRmw`.
//!
//! Every operation is planned the same way: uniform set-up (view offsets, clamped dims, strides,
//! bound limits), then per owned element an *activity* predicate (slot exists, in bounds, mask)
//! and an address, then the instruction itself, predicated per element. Inactive elements never
//! touch memory.
//!
//! Two ways to compute activity and addresses:
//! * the *range* path, for rank-1 accesses with coordinate `offset + pos` (the streaming case):
//!   element `f` of the tile is active iff `lo <= f <= hi` for two uniform limits, and its
//!   address is one per-thread base plus a compile-time byte offset;
//! * the *general* path, for everything else: coordinates from div/rem of the flat index by
//!   constants, or from index tiles, checked axis by axis and against the base tensor's length.
//!
//! Weak loads and stores on the range path also get a *vector* path: when the thread's runs of
//! `v` elements are all active and the address is `4v`-aligned (proved from known trailing zero
//! bits, or tested once at run time), `ld/st.v4` / `.v2` with no per-element work at all; the
//! per-element code remains as the fallback for the partial tail.

use std::fmt;

use super::emit::{internal, tz_imm, Emitter, GlobalSt, Res, Storage};
use super::layout::Layout;
use super::regs::{PVal, Reg, Val};
use crate::ir::{
    Access, Coord, InactiveResult, Inst, Operand, RmwOp, Scope, Sem, Space, Ty, VarId,
};
use crate::table;

/// A memory operand: a base register plus a compile-time byte offset.
#[derive(Debug, Clone, Copy)]
struct Addr {
    base: Reg,
    imm: i64,
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.imm == 0 {
            write!(f, "[{}]", self.base)
        } else {
            write!(f, "[{}+{}]", self.base, self.imm)
        }
    }
}

impl Addr {
    fn plus(self, bytes: i64) -> Addr {
        Addr {
            base: self.base,
            imm: self.imm + bytes,
        }
    }
}

enum Mem {
    Global(GlobalSt),
    /// Shared window base register and the allocation's byte offset and shape.
    Shared {
        smem: Reg,
        offset: usize,
        shape: Vec<usize>,
    },
}

/// Rank-1 streaming formulation: element `f` is active iff `lo <= f <= hi`; its address is
/// `first + 4 * (f - f_first)`.
struct Range {
    lo: Option<Val>,
    hi: Option<Val>,
    first: Addr,
}

struct Plan<'a> {
    access: &'a Access,
    layout: Layout,
    /// Every thread performs the (single) element: a scalar destination.
    uniform: bool,
    mem: Mem,
    range: Option<Range>,
    /// General path: per-axis limits (clamped dims) and row-major strides.
    dims: Vec<Val>,
    strides: Vec<Val>,
    /// General path on a global tensor of rank >= 2: the flat index is computed in 64 bits (a
    /// product of runtime dims can exceed i32, and a wrapped index could pass the bounds check
    /// and address the wrong element). Strides (`None` = 1) and the base length, widened.
    wide: Option<Wide>,
}

struct Wide {
    strides: Vec<Option<Reg>>,
    len: Reg,
}

/// What to do at each active element.
enum Op {
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
    Rmw {
        dst: Vec<Reg>,
        with_output: bool,
        op: RmwOp,
        values: Operand,
        compare: Option<Operand>,
        sem: Sem,
        scope: Scope,
        inactive: InactiveResult,
    },
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Shared => "shared",
        Space::Global => "global",
    }
}

impl Emitter<'_> {
    pub fn memory(&mut self, dst: Option<VarId>, inst: &Inst) -> Res<()> {
        let (access, sem) = match inst {
            Inst::Load { access, .. } | Inst::Store { access, .. } => (access, Sem::Relaxed),
            Inst::AtomicLoad { access, sem, .. }
            | Inst::AtomicStore { access, sem, .. }
            | Inst::AtomicRmw { access, sem, .. } => (access, *sem),
            _ => return internal("not a memory instruction"),
        };
        let mem_ty = self.ty(access.mem)?;
        let Some(ptx_ty) = table::access_type(mem_ty.dtype()) else {
            return internal(format!(
                "`{}` elements cannot live in memory",
                mem_ty.dtype().name()
            ));
        };
        let uniform = matches!(dst.map(|d| self.ty(d)).transpose()?, Some(Ty::Scalar(_)));
        let slots = if uniform {
            1
        } else {
            self.layout_of(&access.shape).slots()
        };
        // Destination registers (a scratch register when an atom's result is unused).
        let dst_regs = |e: &mut Self| -> Res<Vec<Reg>> {
            match dst {
                Some(d) => e.dst_regs(d),
                None => {
                    let r = e.r32();
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
                None => return Ok(()),
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
                ..
            } => {
                if uniform {
                    return internal(
                        "an atomic read-modify-write with a scalar result is not supported",
                    );
                }
                Op::Rmw {
                    dst: dst_regs(self)?,
                    with_output: dst.is_some(),
                    op: *op,
                    values: *values,
                    compare: *compare,
                    sem,
                    scope: *scope,
                    inactive: *inactive,
                }
            }
            _ => return internal("not a memory instruction"),
        };
        // Tile-level ordering (ir.rs): release = barrier before, acquire = barrier after.
        if sem.has_release() {
            self.line("bar.sync \t0;");
        }
        let plan = self.plan(access, uniform)?;
        let vector =
            matches!(op, Op::Load { .. } | Op::Store { .. }) && !uniform && plan.layout.v > 1;
        let mut done = None;
        if vector {
            if let Some((full, first)) = self.vector_check(&plan)? {
                let tail = self.new_label("tail");
                let end = self.new_label("vec_done");
                if let PVal::Reg(p) = full {
                    // Per-thread (not uniform) branch: only threads on the partial tail fall back.
                    self.line(format!("@!{p} bra \t{tail};"));
                }
                self.vector_ops(&plan, &op, first, ptx_ty)?;
                if full == PVal::True {
                    self.after(sem);
                    return Ok(());
                }
                self.line(format!("bra \t{end};"));
                self.body.push(format!("{tail}:"));
                done = Some(end);
            }
        }
        // Plan every element first (reads index and mask tiles), then issue the operations,
        // so loads are issued back to back and a destination may alias an operand.
        let mut elems = Vec::with_capacity(slots);
        for s in 0..slots {
            elems.push(self.element(&plan, s)?);
        }
        self.element_ops(&plan, &op, &elems, ptx_ty)?;
        if let Some(end) = done {
            self.body.push(format!("{end}:"));
        }
        self.after(sem);
        Ok(())
    }

    fn after(&mut self, sem: Sem) {
        if sem.has_acquire() {
            self.line("bar.sync \t0;");
        }
    }

    /// Flat tile index of slot `s` of this thread (as a value).
    fn flat(&mut self, plan: &Plan, s: usize) -> Val {
        if plan.uniform {
            return Val::Imm(0);
        }
        let base = self.tid_times(plan.layout.v);
        let c = plan.layout.slot_const(s) as i32;
        self.vadd(Val::Reg(base), Val::Imm(c))
    }

    fn exists(&mut self, plan: &Plan, s: usize) -> PVal {
        if plan.uniform {
            return PVal::True;
        }
        let layout = plan.layout;
        self.chunk_exists(&layout, s / layout.v)
    }

    fn mask(&mut self, plan: &Plan, s: usize) -> Res<PVal> {
        match plan.access.mask {
            None => Ok(PVal::True),
            Some(m) => {
                let slot = if self.is_tile(m)? { s } else { 0 };
                self.elem_pval(m, slot)
            }
        }
    }

    fn plan<'a>(&mut self, access: &'a Access, uniform: bool) -> Res<Plan<'a>> {
        let layout = self.layout_of(&access.shape);
        let mem = match self.storage(access.mem)?.clone() {
            Storage::Global(g) => Mem::Global(g),
            Storage::Shared { offset, shape } => Mem::Shared {
                smem: self.smem_base(),
                offset,
                shape,
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
        let n = if uniform { 1 } else { layout.n as i32 };
        let mut plan = Plan {
            access,
            layout,
            uniform,
            mem,
            range: None,
            dims: Vec::new(),
            strides: Vec::new(),
            wide: None,
        };
        if let ([Coord::Pos { axis: 0, offset }], 1) =
            (access.coords.as_slice(), access.shape.len())
        {
            // Range path. c0 = memory flat index of tile element 0 (relative to the base tensor
            // for global memory, to the allocation for shared memory).
            let off0 = self.elem(*offset, 0)?;
            let (c0, lo, hi) = match &plan.mem {
                Mem::Global(g) => {
                    let c0 = self.vadd(Val::Reg(g.off), off0);
                    if access.check_bounds {
                        // 0 <= off0 + f < dim  and  0 <= c0 + f < len  and  f < n.
                        let a = self.vsub(Val::Imm(0), off0);
                        let b = self.vsub(Val::Imm(0), c0);
                        let lo = self.vminmax(true, a, b);
                        let h1 = self.vsub(Val::Reg(g.dims[0]), off0);
                        let h2 = self.vsub(Val::Reg(g.len), c0);
                        let h = self.vminmax(false, h1, h2);
                        let h = self.vminmax(false, h, Val::Imm(n));
                        let hi = self.vsub(h, Val::Imm(1));
                        (c0, Some(lo), Some(hi))
                    } else {
                        (c0, None, None)
                    }
                }
                Mem::Shared { shape, .. } => {
                    if access.check_bounds {
                        let lo = self.vsub(Val::Imm(0), off0);
                        let h = self.vsub(Val::Imm(shape[0] as i32), off0);
                        let h = self.vminmax(false, h, Val::Imm(n));
                        let hi = self.vsub(h, Val::Imm(1));
                        (off0, Some(lo), Some(hi))
                    } else {
                        (off0, None, None)
                    }
                }
            };
            let f0 = self.flat_base(&plan);
            let m0 = self.vadd(c0, f0);
            let first = self.address(&plan, m0);
            plan.range = Some(Range { lo, hi, first });
            return Ok(plan);
        }
        // General path: clamped dims (so one unsigned compare checks 0 <= c < dim) and strides.
        match &plan.mem {
            Mem::Global(g) => {
                let g = g.clone();
                if access.check_bounds {
                    for d in &g.dims {
                        let c = self.vminmax(true, Val::Reg(*d), Val::Imm(0));
                        plan.dims.push(c);
                    }
                }
                if rank >= 2 {
                    let mut strides: Vec<Option<Reg>> = vec![None; rank];
                    for k in (0..rank - 1).rev() {
                        let dim = self.r64();
                        self.line(format!("cvt.s64.s32 \t{dim}, {};", g.dims[k + 1]));
                        strides[k] = Some(match strides[k + 1] {
                            None => dim,
                            Some(next) => {
                                let st = self.r64();
                                self.line(format!("mul.lo.s64 \t{st}, {next}, {dim};"));
                                st
                            }
                        });
                    }
                    let len = self.r64();
                    self.line(format!("cvt.u64.u32 \t{len}, {};", g.len));
                    plan.wide = Some(Wide { strides, len });
                } else {
                    plan.strides = vec![Val::Imm(1)];
                }
            }
            Mem::Shared { shape, .. } => {
                plan.dims = shape.iter().map(|&d| Val::Imm(d as i32)).collect();
                let mut strides = vec![Val::Imm(1); rank];
                for k in (0..rank.saturating_sub(1)).rev() {
                    strides[k] = Val::Imm(strides[k + 1].imm().unwrap_or(1) * shape[k + 1] as i32);
                }
                plan.strides = strides;
            }
        }
        Ok(plan)
    }

    /// The thread's first flat index (`tid * v`), or 0 when uniform.
    fn flat_base(&mut self, plan: &Plan) -> Val {
        if plan.uniform {
            Val::Imm(0)
        } else {
            Val::Reg(self.tid_times(plan.layout.v))
        }
    }

    /// Address of memory flat index `m` (relative to the view's base tensor / the allocation).
    fn address(&mut self, plan: &Plan, m: Val) -> Addr {
        match &plan.mem {
            Mem::Global(g) => {
                match m {
                    Val::Imm(0) => {
                        return Addr {
                            base: g.ptr,
                            imm: 0,
                        }
                    }
                    Val::Imm(c) if c > 0 => {
                        return Addr {
                            base: g.ptr,
                            imm: 4 * c as i64,
                        }
                    }
                    _ => {}
                }
                let m = self.in_reg(m);
                let a = self.r64();
                let t = self.r64();
                self.line(format!("mul.wide.s32 \t{t}, {m}, 4;"));
                self.line(format!("add.s64 \t{a}, {}, {t};", g.ptr));
                Addr { base: a, imm: 0 }
            }
            Mem::Shared { smem, offset, .. } => match m {
                Val::Imm(c) => Addr {
                    base: *smem,
                    imm: *offset as i64 + 4 * c as i64,
                },
                Val::Reg(r) => {
                    let t = self.r32();
                    let a = self.r32();
                    self.line(format!("shl.b32 \t{t}, {r}, 2;"));
                    self.line(format!("add.s32 \t{a}, {smem}, {t};"));
                    Addr {
                        base: a,
                        imm: *offset as i64,
                    }
                }
            },
        }
    }

    /// Activity and address of slot `s`.
    fn element(&mut self, plan: &Plan, s: usize) -> Res<(PVal, Addr)> {
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
                    let a = self.vsetp("ge", "s32", f, lo);
                    let b = self.vsetp("le", "s32", f, hi);
                    self.pand(a, b)
                }
                _ => self.exists(plan, s),
            };
            let act = self.pand(act, mask);
            return Ok((act, r.first.plus(4 * c as i64)));
        }
        let exists = self.exists(plan, s);
        let mut act = self.pand(exists, mask);
        // The flat index is only needed for `Pos` coordinates (computed on first use).
        let mut f = None;
        let shape = plan.access.shape.clone();
        let mut pos: Vec<Option<Val>> = vec![None; shape.len()];
        let mut m = Val::Imm(0);
        let mut coords64: Vec<(Val, Option<Reg>)> = Vec::new();
        for (k, coord) in plan.access.coords.iter().enumerate() {
            let c = match coord {
                Coord::Pos { axis, offset } => {
                    let Some(ext) = shape.get(*axis).copied() else {
                        return internal("coordinate axis out of range");
                    };
                    let p = match pos[*axis] {
                        Some(p) => p,
                        None => {
                            let p = if plan.uniform {
                                Val::Imm(0)
                            } else {
                                let fv = match f {
                                    Some(fv) => fv,
                                    None => {
                                        let fv = self.flat(plan, s);
                                        f = Some(fv);
                                        fv
                                    }
                                };
                                self.tile_pos(fv, &shape, *axis, ext)
                            };
                            pos[*axis] = Some(p);
                            p
                        }
                    };
                    let o = self.elem(*offset, 0)?;
                    self.vadd(o, p)
                }
                Coord::Index(o) => {
                    let slot = if self.is_tile(*o)? { s } else { 0 };
                    self.elem(*o, slot)?
                }
            };
            if plan.access.check_bounds {
                let ok = self.vsetp("lt", "u32", c, plan.dims[k]);
                act = self.pand(act, ok);
            }
            if let Some(w) = &plan.wide {
                coords64.push((c, w.strides[k]));
                continue;
            }
            let t = self.vmul(c, plan.strides[k]);
            m = self.vadd(m, t);
        }
        if let (Some(w), Mem::Global(g)) = (&plan.wide, &plan.mem) {
            // m = off + sum(c_k * stride_k), exactly, in 64 bits.
            let acc = self.r64();
            self.line(format!("cvt.s64.s32 \t{acc}, {};", g.off));
            for (c, stride) in coords64 {
                let c = self.in_reg(c);
                let c64 = self.r64();
                self.line(format!("cvt.s64.s32 \t{c64}, {c};"));
                match stride {
                    None => self.line(format!("add.s64 \t{acc}, {acc}, {c64};")),
                    Some(st) => self.line(format!("mad.lo.s64 \t{acc}, {c64}, {st}, {acc};")),
                }
            }
            if plan.access.check_bounds {
                let ok = self.pred();
                self.line(format!("setp.lt.u64 \t{ok}, {acc}, {};", w.len));
                act = self.pand(act, PVal::Reg(ok));
            }
            let t = self.r64();
            let a = self.r64();
            self.line(format!("shl.b64 \t{t}, {acc}, 2;"));
            self.line(format!("add.s64 \t{a}, {}, {t};", g.ptr));
            return Ok((act, Addr { base: a, imm: 0 }));
        }
        if let Mem::Global(g) = &plan.mem {
            let g = g.clone();
            m = self.vadd(Val::Reg(g.off), m);
            if plan.access.check_bounds {
                let ok = self.vsetp("lt", "u32", m, Val::Reg(g.len));
                act = self.pand(act, ok);
            }
        }
        let addr = self.address(plan, m);
        Ok((act, addr))
    }

    /// Position along `axis` of tile flat index `f` (div/rem by compile-time constants).
    fn tile_pos(&mut self, f: Val, shape: &[usize], axis: usize, ext: usize) -> Val {
        let stride: usize = shape[axis + 1..].iter().product();
        let mut p = f;
        if stride != 1 {
            p = match p {
                Val::Imm(c) => Val::Imm(c / stride as i32),
                Val::Reg(r) => {
                    let q = self.r32();
                    self.line(format!("div.u32 \t{q}, {r}, {stride};"));
                    Val::Reg(q)
                }
            };
        }
        if axis != 0 && ext != 1 {
            p = match p {
                Val::Imm(c) => Val::Imm(c % ext as i32),
                Val::Reg(r) => {
                    let q = self.r32();
                    self.line(format!("rem.u32 \t{q}, {r}, {ext};"));
                    Val::Reg(q)
                }
            };
        } else if ext == 1 {
            p = Val::Imm(0);
        }
        p
    }

    /// Whether the whole thread's tile can use vector accesses: all slots active, aligned.
    /// Returns the (per-thread) predicate and the first address, or `None` without a range plan.
    fn vector_check(&mut self, plan: &Plan) -> Res<Option<(PVal, Addr)>> {
        let Some(r) = &plan.range else {
            return Ok(None);
        };
        let (lo, hi, first) = (r.lo, r.hi, r.first);
        let layout = plan.layout;
        let v = layout.v;
        let vbits = v.trailing_zeros();
        // Alignment of the element index of the thread's first element (tid * v is aligned).
        let (offset, view_tz) = match (&plan.mem, &plan.access.coords[0]) {
            (Mem::Global(_), Coord::Pos { offset, .. }) => {
                (*offset, self.tz_of(Operand::Var(plan.access.mem)))
            }
            (Mem::Shared { .. }, Coord::Pos { offset, .. }) => (*offset, 32),
            _ => return Ok(None),
        };
        // Statically misaligned (aligned view, constant offset not a multiple of v): no vector path.
        if let Operand::Imm(c, _) = offset {
            if view_tz >= vbits && tz_imm(c) < vbits {
                return Ok(None);
            }
        }
        let mut full = if self.tz_of(offset).min(view_tz) >= vbits {
            PVal::True
        } else {
            // One uniform test of the first element index's alignment.
            let mut c0 = self.elem(offset, 0)?;
            if let Mem::Global(g) = &plan.mem {
                let off = g.off;
                c0 = self.vadd(Val::Reg(off), c0);
            }
            let c0 = self.in_reg(c0);
            let t = self.r32();
            self.line(format!("and.b32 \t{t}, {c0}, {};", v - 1));
            self.vsetp("eq", "s32", Val::Reg(t), Val::Imm(0))
        };
        let base = Val::Reg(self.tid_times(v));
        let last = layout.slot_const(layout.slots() - 1) as i32;
        let in_range = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let a = self.vsetp("ge", "s32", base, lo);
                let end = self.vadd(base, Val::Imm(last));
                let b = self.vsetp("le", "s32", end, hi);
                self.pand(a, b)
            }
            _ => {
                let layout = plan.layout;
                self.chunk_exists(&layout, layout.outer - 1)
            }
        };
        full = self.pand(full, in_range);
        for s in 0..layout.slots() {
            let m = self.mask(plan, s)?;
            full = self.pand(full, m);
        }
        if full == PVal::False {
            return Ok(None);
        }
        Ok(Some((full, first)))
    }

    fn vector_ops(&mut self, plan: &Plan, op: &Op, first: Addr, ty: &str) -> Res<()> {
        let layout = plan.layout;
        let v = layout.v;
        let space = space_name(self.space_of(plan));
        for o in 0..layout.outer {
            let addr = first.plus(4 * (o * layout.chunk()) as i64);
            let slots = o * v..(o + 1) * v;
            match op {
                Op::Load { dst, .. } => {
                    let regs: Vec<String> = dst[slots].iter().map(|r| r.to_string()).collect();
                    self.line(format!(
                        "ld.{space}.v{v}.{ty} \t{{{}}}, {addr};",
                        regs.join(", ")
                    ));
                }
                Op::Store { value } => {
                    let mut regs = Vec::with_capacity(v);
                    for s in slots {
                        let slot = if self.is_tile(*value)? { s } else { 0 };
                        let val = self.elem(*value, slot)?;
                        regs.push(self.in_reg(val).to_string());
                    }
                    self.line(format!(
                        "st.{space}.v{v}.{ty} \t{addr}, {{{}}};",
                        regs.join(", ")
                    ));
                }
                _ => return internal("vector path for an atomic"),
            }
        }
        Ok(())
    }

    fn space_of(&self, plan: &Plan) -> Space {
        match plan.mem {
            Mem::Global(_) => Space::Global,
            Mem::Shared { .. } => Space::Shared,
        }
    }

    fn element_ops(&mut self, plan: &Plan, op: &Op, elems: &[(PVal, Addr)], ty: &str) -> Res<()> {
        let space = self.space_of(plan);
        let sp = space_name(space);
        let slot_of = |e: &Self, o: Operand, s: usize| -> Res<usize> {
            Ok(if e.is_tile(o)? { s } else { 0 })
        };
        match op {
            Op::Load { dst, other } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act != PVal::False {
                        self.line(format!(
                            "{}ld.{sp}.{ty} \t{}, {addr};",
                            Self::guard(*act),
                            dst[s]
                        ));
                    }
                }
                for (s, (act, _)) in elems.iter().enumerate() {
                    let val = self.elem(*other, slot_of(self, *other, s)?)?;
                    match act {
                        PVal::True => {}
                        PVal::False => self.line(format!("mov.b32 \t{}, {val};", dst[s])),
                        PVal::Reg(p) => self.line(format!("@!{p} mov.b32 \t{}, {val};", dst[s])),
                    }
                }
            }
            Op::Store { value } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act == PVal::False {
                        continue;
                    }
                    let val = self.elem(*value, slot_of(self, *value, s)?)?;
                    let val = self.in_reg(val);
                    self.line(format!(
                        "{}st.{sp}.{ty} \t{addr}, {val};",
                        Self::guard(*act)
                    ));
                }
            }
            Op::AtomicLoad { dst, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act != PVal::False {
                        self.line(format!(
                            "{}ld.{}.{}.{sp}.{ty} \t{}, {addr};",
                            Self::guard(*act),
                            sem.ptx(),
                            scope.ptx(),
                            dst[s]
                        ));
                    }
                    match act {
                        PVal::True => {}
                        PVal::False => self.line(format!("mov.b32 \t{}, 0;", dst[s])),
                        PVal::Reg(p) => self.line(format!("@!{p} mov.b32 \t{}, 0;", dst[s])),
                    }
                }
            }
            Op::AtomicStore { value, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act == PVal::False {
                        continue;
                    }
                    let val = self.elem(*value, slot_of(self, *value, s)?)?;
                    let val = self.in_reg(val);
                    self.line(format!(
                        "{}st.{}.{}.{sp}.{ty} \t{addr}, {val};",
                        Self::guard(*act),
                        sem.ptx(),
                        scope.ptx()
                    ));
                }
            }
            Op::Rmw {
                dst,
                with_output,
                op,
                values,
                compare,
                sem,
                scope,
                inactive,
            } => {
                let dtype = self.ty(plan.access.mem)?.dtype();
                let Some(row) = table::rmw_row(*op, dtype) else {
                    return internal(format!("no atomic `{}` on `{}`", op.name(), dtype.name()));
                };
                let (instr, red) = table::rmw_ptx(row, space, *sem, *scope, *with_output);
                if *op == RmwOp::Cas && compare.is_none() {
                    return internal("cas without a compare operand");
                }
                // Sub is add of the wrapping negation; a scalar operand is negated once.
                let mut neg_scalar = None;
                if *op == RmwOp::Sub && !self.is_tile(*values)? {
                    let v = self.elem(*values, 0)?;
                    neg_scalar = Some(self.negate(v));
                }
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let cmp = match compare {
                        Some(c) => Some(self.elem(*c, slot_of(self, *c, s)?)?),
                        None => None,
                    };
                    if *with_output {
                        let fallback = match (inactive, cmp) {
                            (InactiveResult::Compare, Some(c)) => c,
                            _ => Val::Imm(0),
                        };
                        match act {
                            PVal::True => {}
                            PVal::False => self.line(format!("mov.b32 \t{}, {fallback};", dst[s])),
                            PVal::Reg(p) => {
                                self.line(format!("@!{p} mov.b32 \t{}, {fallback};", dst[s]))
                            }
                        }
                    }
                    if *act == PVal::False {
                        continue;
                    }
                    let b = match neg_scalar {
                        Some(b) => b,
                        None => {
                            let v = self.elem(*values, slot_of(self, *values, s)?)?;
                            if *op == RmwOp::Sub {
                                self.negate(v)
                            } else {
                                v
                            }
                        }
                    };
                    let g = Self::guard(*act);
                    match (red, cmp) {
                        (true, _) => self.line(format!("{g}{instr} \t{addr}, {b};")),
                        (false, Some(c)) => {
                            self.line(format!("{g}{instr} \t{}, {addr}, {c}, {b};", dst[s]))
                        }
                        (false, None) => {
                            self.line(format!("{g}{instr} \t{}, {addr}, {b};", dst[s]))
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn negate(&mut self, v: Val) -> Val {
        match v {
            Val::Imm(c) => Val::Imm(c.wrapping_neg()),
            Val::Reg(r) => {
                let t = self.r32();
                self.line(format!("neg.s32 \t{t}, {r};"));
                Val::Reg(t)
            }
        }
    }
}
