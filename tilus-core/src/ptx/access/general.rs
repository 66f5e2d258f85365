//! The general path: per element, coordinates from div/rem of the flat index by constants or
//! from index tiles, each checked against its axis (and, through a view, against the base
//! tensor's length), and the element's address from row-major strides; distributed shared
//! tensors through the owner block's window.

use super::{Addr, General, GlobalCoord, Mem, Plan, Planned, RunHead};
use crate::dtype::DType;
use crate::ir::{BinOp, Coord};
use crate::ptx::emit::{internal, CodegenResult, Emitter, GlobalView};
use crate::ptx::regs::Reg;
use crate::ptx::value::{Predicate, RegOrConst, RegOrImm};

impl Emitter<'_> {
    /// The set-up of the general path: per-axis dims (clamped for bounds checks) and row-major
    /// strides.
    pub(super) fn general_plan(&mut self, plan: &Plan, rank: usize) -> General {
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
                    affine_addrs: Default::default(),
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

    pub(super) fn shared_element(
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

    pub(super) fn global_element(
        &mut self,
        plan: &Plan,
        g: &GlobalView,
        s: usize,
        mut act: Predicate,
        want_head: bool,
    ) -> CodegenResult<Planned> {
        let check = plan.access.check_bounds;
        let (sum, rows, c_last) = self.index_sum(plan, g, s, &mut act, want_head)?;
        let (idx, inside) = self.base_index(g, sum.m, sum.m_imm, check);
        if let Some(ok) = inside {
            act = self.and_pred(act, ok);
        }
        let addr = self.element_address(plan, g, &sum, idx)?;
        let mut p = Planned::at(act, addr);
        if want_head {
            p.head = Some(RunHead {
                rows,
                c_last: if check { c_last } else { None },
                idx_end: (check && !g.whole).then_some((idx, sum.m_imm)),
                addr,
            });
        }
        Ok(p)
    }

    /// An element's linear index in its view, `sum(c_k * stride_k)`, with each axis's bounds
    /// test and-ed into `act`; for a run head (`want_head`) also the bounds of every axis but
    /// the last, and the last coordinate.
    fn index_sum(
        &mut self,
        plan: &Plan,
        g: &GlobalView,
        s: usize,
        act: &mut Predicate,
        want_head: bool,
    ) -> CodegenResult<(IndexSum, Predicate, Option<RegOrConst>)> {
        let Some(General::Global {
            dims,
            strides,
            affine_addrs,
            ..
        }) = &plan.general
        else {
            return internal("global plan without its set-up");
        };
        let (dims, strides) = (dims.clone(), strides.clone());
        // A whole tensor's one coordinate, an `arange`-derived index: the thread's register
        // addresses every slot (`affine_base`), computed once an access.
        let one_affine = plan.access.coords.len() == 1 && g.whole;
        let check = plan.access.check_bounds;
        let mut sum = IndexSum::default();
        let mut f = None;
        let mut pos: Vec<Option<RegOrImm>> = vec![None; plan.access.shape.len()];
        let last = plan.access.coords.len().saturating_sub(1);
        let mut rows = Predicate::True;
        let mut c_last = None;
        for (k, coord) in plan.access.coords.iter().enumerate() {
            let c = self.global_coord(plan, s, coord, &mut f, &mut pos)?;
            if check {
                let ok = self.global_axis_check(plan, k, dims[k], c)?;
                *act = self.and_pred(*act, ok);
                if want_head && k != last {
                    rows = self.and_pred(rows, ok);
                }
            }
            if want_head && k == last {
                c_last = c.c64;
            }
            // An `i32` index known as the thread's register plus the slot's constant, along
            // a stride-1 axis: the thread's register addresses it, the constant is the
            // offset. (An element accessed has its index in `0..dim` below 2^31: the sign
            // extension of the register plus the constant is that index.)
            let affine = match (affine_index(coord), strides[k], want_head) {
                (Some(o), None, false) => self.affine_coord(o, s)?,
                _ => None,
            };
            // Accumulate c_k * stride_k.
            let (term, narrow) = match affine {
                Some((base, c)) if one_affine => {
                    sum.m_imm = sum.m_imm.wrapping_add(c);
                    sum.affine_base = Some(base);
                    let known = affine_addrs
                        .borrow()
                        .iter()
                        .find(|e| e.0 == base)
                        .map(|e| e.1);
                    if let Some(a) = known {
                        sum.shared_addr = Some(a);
                        continue;
                    }
                    let w = self.r64();
                    self.ins(["cvt", "s64", "s32"], (w, base));
                    (RegOrConst::Reg(w), None)
                }
                Some((base, c)) => {
                    let w = self.r64();
                    self.ins(["cvt", "s64", "s32"], (w, base));
                    sum.m_imm = sum.m_imm.wrapping_add(c);
                    (RegOrConst::Reg(w), None)
                }
                None => {
                    let narrow = match (c.c32, strides[k]) {
                        (Some(RegOrImm::Reg(r)), None) => Some(r),
                        _ => None,
                    };
                    match self.stride_term(c, strides[k], &mut sum.m_imm)? {
                        Some(term) => (term, narrow),
                        None => continue,
                    }
                }
            };
            sum.m_narrow = if sum.m.is_none() { narrow } else { None };
            sum.m = Some(match sum.m {
                None => self.in_reg64(term),
                Some(acc) => {
                    let t = self.r64();
                    self.ins(["add", "s64"], (t, acc, term));
                    t
                }
            });
        }
        Ok((sum, rows, c_last))
    }

    /// The address of the element at `sum` in `g`, given its index in the tensor (`idx`, from
    /// [`base_index`](Self::base_index): the view's offset added, `None` when constant).
    fn element_address(
        &mut self,
        plan: &Plan,
        g: &GlobalView,
        sum: &IndexSum,
        idx: Option<Reg>,
    ) -> CodegenResult<Addr> {
        let size = plan.size as i64;
        let imm = sum.m_imm.wrapping_mul(size);
        if let Some(a) = sum.shared_addr {
            return Ok(Addr { base: a, imm });
        }
        Ok(match (idx, sum.m_narrow) {
            (None, _) => Addr { base: g.ptr, imm },
            // The index is a zero-extended 32-bit coordinate: `mul.wide.u32` and an add, which
            // ptxas makes one `IMAD.WIDE.U32` (from `cvt.u64.u32` and `mad.lo.s64` it adds a
            // zero to the high word after it: one more instruction an element).
            (Some(i), Some(narrow)) if g.whole && Some(i) == sum.m => {
                let a = self.r64();
                self.ins(["mul", "wide", "u32"], (a, narrow, size));
                self.ins(["add", "s64"], (a, a, g.ptr));
                Addr { base: a, imm }
            }
            (Some(i), _) => {
                let a = self.r64();
                self.ins(["mad", "lo", "s64"], (a, i, size, g.ptr));
                if let Some(base) = sum.affine_base {
                    let Some(General::Global { affine_addrs, .. }) = &plan.general else {
                        return internal("global plan without its set-up");
                    };
                    affine_addrs.borrow_mut().push((base, a));
                }
                Addr { base: a, imm }
            }
        })
    }

    /// For a bounds-checked access of a whole tensor at an `arange`-derived `i32` index (the
    /// thread's register plus each slot's constant, `emit/affine.rs`): whether every slot of
    /// this thread is inside the tensor, tested at the smallest and the largest constant, so
    /// that where it holds the slots need no test each (`None`: not such an access).
    ///
    /// Why two tests suffice: the constants are not negative, so `base + lo` cannot wrap below
    /// `i32::MIN`; where either end wraps past `i32::MAX` it reads negative and fails the
    /// unsigned test. Both ends inside `0..dim` with no wrap put every index between them, each
    /// slot's own `base + c`, inside too.
    pub(super) fn affine_all_inside(
        &mut self,
        plan: &Plan,
        slots: usize,
    ) -> CodegenResult<Option<Predicate>> {
        if plan.uniform || !plan.access.check_bounds || plan.range.is_some() {
            return Ok(None);
        }
        let (Mem::Global(g), [Coord::Index(o)]) = (&plan.mem, plan.access.coords.as_slice()) else {
            return Ok(None);
        };
        if !g.whole {
            return Ok(None);
        }
        let mut ends: Option<(Reg, i64, i64)> = None;
        for s in 0..slots {
            let Some((base, c)) = self.affine_coord(*o, s)? else {
                return Ok(None);
            };
            ends = match ends {
                None => Some((base, c, c)),
                Some((b, lo, hi)) if b == base => Some((b, lo.min(c), hi.max(c))),
                Some(_) => return Ok(None),
            };
        }
        let Some((base, lo, hi)) = ends else {
            return Ok(None);
        };
        let (Ok(lo), Ok(hi)) = (i32::try_from(lo), i32::try_from(hi)) else {
            return Ok(None);
        };
        let dim = self.dim32(plan, 0, true)?;
        let first = self.add32(RegOrImm::Reg(base), RegOrImm::Imm(lo));
        let last = self.add32(RegOrImm::Reg(base), RegOrImm::Imm(hi));
        let first_in = self.setp32(BinOp::Lt, "u32", first, dim);
        let last_in = self.setp32(BinOp::Lt, "u32", last, dim);
        Ok(Some(self.and_pred(first_in, last_in)))
    }

    /// The thread's register and slot `s`'s constant of an `i32` index tile `o` known as
    /// their sum (`emit/affine.rs`), where the constant is not negative.
    fn affine_coord(
        &mut self,
        o: crate::ir::Operand,
        s: usize,
    ) -> CodegenResult<Option<(Reg, i64)>> {
        if self.dtype_of(o)? != DType::I32 {
            return Ok(None);
        }
        let slot = self.slot_of(o, s)?;
        Ok(self.affine_of(o).and_then(|a| {
            let c = *a.consts.get(slot)?;
            (c >= 0).then_some((a.base, c))
        }))
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
                // Zero-extended whatever its type: an element that is accessed has its
                // coordinate in `0..dim` (the unsigned bound test passed, or the bound was
                // proven or promised), where both extensions agree, and `cvt.u64.u32` lets
                // ptxas fold the widening into one wide multiply-add of the address (a sign
                // extension costs three more instructions an element).
                let w = self.r64();
                let c32 = self.in_reg32(c32);
                self.ins(["cvt", "u64", "u32"], (w, c32));
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
    pub(super) fn derivable_runs(&self, plan: &Plan) -> Option<usize> {
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

    /// The vector path of a derivable-run access (weak global loads and stores of 2-D and
    /// 3-D views, see [`derivable_runs`](Self::derivable_runs)): only each run's first element
    /// is planned in full; the run is wholly active when its first element is, its last one
    /// is in bounds (bounds are monotone along the run), and every element's mask holds; it is
    /// aligned when its first address is. A thread whose runs all qualify issues only vector
    /// instructions and branches past the per-element code, which the others run (with every
    /// element's checks, as without this path).
    pub(super) fn run_vector_part(
        &mut self,
        plan: &Plan,
        op: &super::Op,
    ) -> CodegenResult<super::VectorPart> {
        let Some(v) = self.derivable_runs(plan) else {
            return Ok(super::VectorPart::None);
        };
        let size = plan.size;
        let lanes = crate::ptx::memops::vector_lanes(size, v);
        if lanes < 2 || lanes * size < 4 {
            return Ok(super::VectorPart::None);
        }
        let slots = plan.layout.slots();
        let mut all = Predicate::True;
        let mut heads = Vec::with_capacity(slots / v);
        for s in (0..slots).step_by(v) {
            let p = self.element(plan, s, true)?;
            let Some(h) = p.head else {
                return internal("a derivable run without its head");
            };
            // The last element's activity: its mask and bounds (the rows are the head's).
            let last = self.run_member(plan, s + v - 1, v - 1, h)?;
            let mut ok = self.and_pred(p.act, last.act);
            for i in 1..v - 1 {
                let m = self.mask(plan, s + i)?;
                ok = self.and_pred(ok, m);
            }
            if ok == Predicate::False {
                // Never wholly active (a constant mask): the per-element code does it all.
                return Ok(super::VectorPart::None);
            }
            let base = self.addr_reg(p.addr);
            let aligned = self.aligned(base, lanes * size);
            ok = self.and_pred(ok, aligned);
            all = self.and_pred(all, ok);
            heads.push(p.addr);
        }
        self.vectors_or_fallback(all, ["runs_partial", "runs_done"], |e| {
            e.vector_runs(plan, op, &heads)
        })
    }

    /// Element `i` (`1..v`) of the run that starts at slot `s - i`, from its head.
    pub(super) fn run_member(
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
    pub(in crate::ptx) fn tile_pos(
        &mut self,
        f: RegOrImm,
        shape: &[usize],
        axis: usize,
        ext: usize,
    ) -> RegOrImm {
        let stride: usize = shape[axis + 1..].iter().product();
        let mut p = f;
        if stride != 1 {
            p = self.div_u32(p, stride);
        }
        if axis != 0 && ext != 1 {
            p = self.rem_u32(p, ext);
        } else if ext == 1 {
            p = RegOrImm::Imm(0);
        }
        p
    }

    /// A distributed tensor's row `c` as (row in the owner's part, owner rank). The rank is
    /// clamped to the cluster (an inactive element's row may be anything, and `mapa` must
    /// name a block that exists).
    pub(in crate::ptx) fn split_rows(&mut self, c: RegOrImm, rows: usize) -> (RegOrImm, RegOrImm) {
        let last = self.kernel().cluster.blocks().max(1) as i32 - 1;
        let rows = rows as i32;
        match c {
            RegOrImm::Imm(c) => (
                RegOrImm::Imm((c as u32 % rows as u32) as i32),
                RegOrImm::Imm(((c as u32 / rows as u32) as i32).min(last)),
            ),
            RegOrImm::Reg(_) => {
                let local = self.rem_u32(c, rows as usize);
                let owner = self.div_u32(c, rows as usize);
                let rank = self.r32();
                self.ins(["min", "u32"], (rank, owner, last));
                (local, RegOrImm::Reg(rank))
            }
        }
    }

    /// The `.shared::cluster` address of the same shared-window address in block `rank`.
    pub(in crate::ptx) fn map_to_block(&mut self, addr: Addr, rank: RegOrImm) -> Addr {
        let (local, mapped) = (self.r32(), self.r32());
        self.ins(["add", "u32"], (local, addr.base, addr.imm));
        self.ins(["mapa", "shared::cluster", "u32"], (mapped, local, rank));
        Addr {
            base: mapped,
            imm: 0,
        }
    }

    /// Address of element `m` of a shared allocation (relative to the allocation).
    pub(in crate::ptx) fn shared_address(&mut self, plan: &Plan, m: RegOrImm) -> Addr {
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
}

/// The index tile of an index coordinate.
fn affine_index(coord: &Coord) -> Option<crate::ir::Operand> {
    match coord {
        Coord::Index(o) => Some(*o),
        Coord::Pos { .. } => None,
    }
}

/// An element's linear index in its view as [`Emitter::index_sum`] builds it: `m + m_imm`.
#[derive(Default)]
struct IndexSum {
    /// The sum of the coordinates' terms `c_k * stride_k` held in registers (64-bit), `None`
    /// while every term is a constant.
    m: Option<Reg>,
    /// The 32-bit coordinate `m` is the zero extension of, while it is one such term.
    m_narrow: Option<Reg>,
    /// The constant part of the index.
    m_imm: i64,
    /// A whole tensor's one `arange`-derived coordinate: the thread's register that addresses
    /// every slot of the access.
    affine_base: Option<Reg>,
    /// The address an earlier slot of the access computed from `affine_base`.
    shared_addr: Option<Reg>,
}
