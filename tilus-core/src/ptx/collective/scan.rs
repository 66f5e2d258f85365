//! Scans along an axis, realising [`ScanPlan`] exactly (see `crate::collective::scan`).
//!
//! Every plan is a split of each line into *segments* `[g * w, g * w + w)` (cut at the line's
//! end) for global lanes `g` of the line, grouped into blocks of `lb` consecutive lanes (one
//! warp's lanes or part of them):
//!
//! * Rows: `w = v`, `lb` = the lanes of a row, one block per row;
//! * Staged: `w = ceil(len / lanes)`, `lb = lanes`, one block per line;
//! * Whole (one line): `w = v`, `lb = 32`, the layout's warps of every chunk in order.
//!
//! Three phases over the staged tile: (1) every lane folds its segment (its total), the block
//! scans the totals by Kogge-Stone with shuffles and the lane keeps its exclusive prefix `e`
//! and the block its total in the scratch; (2) one thread folds the block totals in order into
//! block prefixes `P_b` (Whole only: the other plans have one block per line); (3) every lane
//! scans its segment again from `P_b op e` and writes the results, each rounded once. A reverse
//! scan is the forward scan of the mirrored line: lane `g` plays lane `lanes - 1 - g`'s segment
//! read backwards. An exclusive scan writes each inclusive value one place further.
//!
//! Forward `Whole` scans of 32- and 64-bit integers, and inclusive ones of `f32`/`f64`, run in
//! registers instead (`scan_regs.rs`), in the same order.

use super::super::code::{Guard, Opcode};
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::{RegOrConst, RegOrImm};
use super::scan_regs::registers_fit;
use super::staging::{acc_opcode, acc_type, parts};
use crate::collective::scan::{exclusive_first, identity};
use crate::collective::{AxisView, ScanPlan};
use crate::dtype::DType;
use crate::ir::{ScanOp, Ty, VarId};

/// A scan's split of its lines into segments (see the module docs).
#[derive(Debug, Clone, Copy)]
struct Split {
    /// Elements per segment.
    w: usize,
    /// Lanes per line.
    lt: usize,
    /// Lanes per block (a power of two up to 32).
    lb: usize,
}

/// What every phase of a scan needs to know.
struct ScanJob {
    op: ScanOp,
    d: DType,
    view: AxisView,
    split: Split,
    reverse: bool,
    /// Scratch offsets: the staged tile, the result, lanes' prefixes, blocks' totals, blocks'
    /// prefixes.
    src: usize,
    out: usize,
    pre: usize,
    btot: usize,
    bpre: usize,
}

/// One lane's place: its global lane in its line, whether the line exists, the line's first
/// row-major index, and the segment it scans: `count` elements from axis index `first`, up
/// (down when reversed).
struct Lane {
    g: Reg,
    valid: Reg,
    base: Reg,
    first: Reg,
    count: Reg,
}

impl Emitter<'_> {
    pub fn scan(
        &mut self,
        dst: VarId,
        op: ScanOp,
        x: VarId,
        axis: usize,
        exclusive: bool,
        reverse: bool,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("scan of a scalar");
        };
        let layout = self.layout_of(&shape);
        let view = AxisView::new(&shape, axis);
        let plan = ScanPlan::choose(&shape, axis, layout);
        if matches!(plan, ScanPlan::Whole { .. })
            && !reverse
            && registers_fit(d, &layout, self.threads(), exclusive)
        {
            return self.scan_in_registers(dst, x, (d, layout), op, exclusive);
        }
        let split = match plan {
            ScanPlan::Rows { lanes, v } => Split {
                w: v,
                lt: lanes,
                lb: lanes,
            },
            ScanPlan::Staged { lanes } => Split {
                w: view.len.div_ceil(lanes),
                lt: lanes,
                lb: lanes,
            },
            ScanPlan::Whole { layout } => Split {
                w: layout.v,
                lt: layout.outer * layout.threads,
                lb: 32,
            },
        };
        let lines = view.lines();
        let blocks = split.lt / split.lb;
        let csize = acc_type(d).size_bytes();
        // Roles run in whole passes of the block (lanes past the last line scan nothing but
        // take part in the shuffles); the per-lane arrays have a place for each.
        let roles = (lines * split.lt).div_ceil(self.threads()) * self.threads();
        let offs = parts(
            self,
            &[
                d.size_bytes() * layout.n,
                d.size_bytes() * layout.n,
                csize * roles,
                csize * roles / split.lb,
                csize * roles / split.lb,
            ],
        );
        let job = ScanJob {
            op,
            d,
            view,
            split,
            reverse,
            src: offs[0],
            out: offs[1],
            pre: offs[2],
            btot: offs[3],
            bpre: offs[4],
        };
        self.stage(x, d, &layout, job.src)?;
        self.barrier();
        let tid = self.tid();
        let threads = self.threads() as u32;
        self.counted_loop(tid.into(), (roles as i32).into(), threads, |e, s| {
            e.scan_totals(&job, s)
        })?;
        self.barrier();
        if blocks > 1 {
            self.block_prefixes(&job, lines * blocks)?;
            self.barrier();
        }
        self.counted_loop(tid.into(), (roles as i32).into(), threads, |e, s| {
            e.scan_write(&job, s, exclusive)
        })?;
        self.barrier();
        self.unstage(dst, d, job.out)?;
        self.barrier();
        Ok(())
    }

    fn scan_identity(&mut self, job: &ScanJob) -> CodegenResult<Reg> {
        let acc = acc_type(job.d);
        let id = if job.d.is_float() {
            identity(job.op, acc)
        } else {
            crate::elem::cast(job.d, acc, identity(job.op, job.d))
        };
        self.acc_const(acc, id)
    }

    /// Role `s`'s line, lane and segment.
    fn scan_lane(&mut self, job: &ScanJob, s: Reg) -> Lane {
        let Split { w, lt, .. } = job.split;
        let len = job.view.len;
        let line = self.div_u32(s.into(), lt);
        let line = self.in_reg32(line);
        let g = self.rem_u32(s.into(), lt);
        let g = self.in_reg32(g);
        let valid = self.pred_u32("lt", line, RegOrImm::Imm(job.view.lines() as i32));
        // The forward segment this lane scans: its own, or its mirror's when reversed.
        let seg = if job.reverse {
            let m = self.r32();
            self.ins(["sub", "s32"], (m, lt - 1, g));
            m
        } else {
            g
        };
        let (st, en, count) = (self.r32(), self.r32(), self.r32());
        self.ins(["mul", "lo", "s32"], (st, seg, w));
        self.ins(["add", "s32"], (en, st, w));
        self.ins(["min", "s32"], (en, en, len));
        self.ins(["min", "s32"], (st, st, len));
        self.ins(["sub", "s32"], (count, en, st));
        self.ins(["selp", "b32"], (count, count, 0, valid));
        let first = if job.reverse {
            let f = self.r32();
            self.ins(["sub", "s32"], (f, en, 1));
            f
        } else {
            st
        };
        let base = self.line_base(&job.view, line);
        Lane {
            g,
            valid,
            base,
            first,
            count,
        }
    }

    /// The row-major index of the `i`-th element a lane scans.
    fn scan_elem(&mut self, job: &ScanJob, lane: &Lane, i: Reg) -> Reg {
        let k = self.r32();
        let op = if job.reverse { "sub" } else { "add" };
        self.ins([op, "s32"], (k, lane.first, i));
        self.along(lane.base, k, job.view.inner)
    }

    /// Phase 1 for role `s`: the segment's total, the block's Kogge-Stone scan of the totals,
    /// the lane's exclusive prefix and the block's total into the scratch.
    fn scan_totals(&mut self, job: &ScanJob, s: Reg) -> CodegenResult<()> {
        let acc_t = acc_type(job.d);
        let ins = acc_opcode(job.op.binop(), acc_t)?;
        let lane = self.scan_lane(job, s);
        let id = self.scan_identity(job)?;
        let t = self.reg_of(acc_t);
        self.copy_elem(acc_t, t, RegOrConst::Reg(id))?;
        let ins2 = ins.clone();
        self.counted_loop(0.into(), lane.count.into(), 1, |e, i| {
            let idx = e.scan_elem(job, &lane, i);
            let at = e.elem_at(job.src, job.d.size_bytes(), idx.into());
            let v = e.ld_acc(job.d, at);
            e.ins(ins2, (t, t, v));
            Ok(())
        })?;
        let lb = job.split.lb;
        let j = self.r32();
        self.ins(["and", "b32"], (j, lane.g, lb as u32 - 1));
        let e = self.group_scan(&ins, (t, acc_t), (j, lb), |_| Ok(id))?;
        let pre_at = self.elem_at(job.pre, acc_t.size_bytes(), s.into());
        self.st_acc(Guard::Always, acc_t, pre_at, e);
        if job.split.lt > lb {
            // The block's total from its last lane; block index s / lb.
            let last = self.pred_u32("eq", j, ((lb - 1) as i32).into());
            let ok = self.new_pred();
            self.ins(["and", "pred"], (ok, last, lane.valid));
            let b = self.r32();
            self.ins(["shr", "u32"], (b, s, lb.trailing_zeros()));
            let at = self.elem_at(job.btot, acc_t.size_bytes(), b.into());
            self.st_acc(Guard::If(ok), acc_t, at, t);
        }
        Ok(())
    }

    /// Kogge-Stone over groups of `lb` lanes (a power of two up to 32; `j` is the lane's index
    /// in its group): `t` (of type `d`) becomes the group's inclusive scan with `ins`
    /// (`t_j = t_(j-dist) op t_j` for `j >= dist`); returns the exclusive one, whose lane 0
    /// holds the identity (`id`, made after the shuffles).
    pub(super) fn group_scan(
        &mut self,
        ins: &Opcode,
        (t, d): (Reg, DType),
        (j, lb): (Reg, usize),
        id: impl FnOnce(&mut Self) -> CodegenResult<Reg>,
    ) -> CodegenResult<Reg> {
        self.group_inclusive(ins, t, (j, lb));
        let e = self.shfl("up", t, 1.into(), 0);
        let first = self.pred_u32("eq", j, 0.into());
        let id = id(self)?;
        self.ins_if(Guard::If(first), ["mov", d.info().bit_reg()], (e, id));
        Ok(e)
    }

    /// Kogge-Stone in place over groups of `lb` lanes (`j`: the lane's index in its group):
    /// `t` becomes the group's inclusive scan with `ins` (`t_j = t_(j-dist) op t_j` for
    /// `j >= dist`). Groups tile the warp when `lb` is a power of two up to 32; with `j` the
    /// lane itself, any `lb` up to 32 scans the one group at lanes `0..lb`.
    pub(super) fn group_inclusive(&mut self, ins: &Opcode, t: Reg, (j, lb): (Reg, usize)) {
        let mut dist = 1;
        while dist < lb {
            let u = self.shfl("up", t, (dist as i32).into(), 0);
            let p = self.pred_u32("ge", j, (dist as i32).into());
            self.ins_if(Guard::If(p), ins.clone(), (t, u, t));
            dist *= 2;
        }
    }

    /// Phase 2: thread 0 folds the `n` block totals in order into block prefixes.
    fn block_prefixes(&mut self, job: &ScanJob, n: usize) -> CodegenResult<()> {
        let acc_t = acc_type(job.d);
        let ins = acc_opcode(job.op.binop(), acc_t)?;
        let skip = self.new_label("prefixes_done");
        let tid = self.tid();
        let not0 = self.pred_u32("ne", tid, 0.into());
        self.branch(Guard::If(not0), skip);
        let p = self.scan_identity(job)?;
        self.counted_loop(0.into(), (n as i32).into(), 1, |e, b| {
            let at = e.elem_at(job.bpre, acc_t.size_bytes(), b.into());
            e.st_acc(Guard::Always, acc_t, at, p);
            let at = e.elem_at(job.btot, acc_t.size_bytes(), b.into());
            let t = e.ld_acc(acc_t, at);
            e.ins(ins, (p, p, t));
            Ok(())
        })?;
        self.label(skip);
        Ok(())
    }

    /// Phase 3 for role `s`: the segment scanned again from `P_b op e`, each result rounded
    /// to the element type and written (one place further when `exclusive`).
    fn scan_write(&mut self, job: &ScanJob, s: Reg, exclusive: bool) -> CodegenResult<()> {
        let acc_t = acc_type(job.d);
        let ins = acc_opcode(job.op.binop(), acc_t)?;
        let csize = acc_t.size_bytes();
        let dsize = job.d.size_bytes();
        let lane = self.scan_lane(job, s);
        let pre_at = self.elem_at(job.pre, csize, s.into());
        let e = self.ld_acc(acc_t, pre_at);
        let base = if job.split.lt > job.split.lb {
            let b = self.r32();
            self.ins(["shr", "u32"], (b, s, job.split.lb.trailing_zeros()));
            let at = self.elem_at(job.bpre, csize, b.into());
            let p = self.ld_acc(acc_t, at);
            self.ins(ins.clone(), (p, p, e));
            p
        } else {
            // P_b is the identity: identity op e.
            let p = self.scan_identity(job)?;
            self.ins(ins.clone(), (p, p, e));
            p
        };
        let local = self.scan_identity(job)?;
        let y = self.reg_of(acc_t);
        let len = job.view.len as i32;
        let inner = job.view.inner;
        self.counted_loop(0.into(), lane.count.into(), 1, |em, i| {
            let idx = em.scan_elem(job, &lane, i);
            let at = em.elem_at(job.src, dsize, idx.into());
            let v = em.ld_acc(job.d, at);
            em.ins(ins.clone(), (local, local, v));
            em.ins(ins, (y, base, local));
            if !exclusive {
                let at = em.elem_at(job.out, dsize, idx.into());
                em.st_acc(Guard::Always, job.d, at, y);
                return Ok(());
            }
            // One place further along the scan: axis index k + 1 (k - 1 reversed), if any.
            let k = em.r32();
            let op = if job.reverse { "sub" } else { "add" };
            em.ins([op, "s32"], (k, lane.first, i));
            let next = em.r32();
            em.ins(
                [if job.reverse { "sub" } else { "add" }, "s32"],
                (next, k, 1),
            );
            let inside = em.new_pred();
            if job.reverse {
                em.ins(["setp", "ge", "s32"], (inside, next, 0));
            } else {
                em.ins(["setp", "lt", "s32"], (inside, next, len));
            }
            let to = em.along(lane.base, next, inner);
            let at = em.elem_at(job.out, dsize, to.into());
            em.st_acc(Guard::If(inside), job.d, at, y);
            Ok(())
        })?;
        if exclusive {
            // The line's first scanned element: lane 0 of the line writes the operator's start.
            let lane0 = self.new_pred();
            self.ins(["setp", "eq", "and", "u32"], (lane0, lane.g, 0, lane.valid));
            let k0 = if job.reverse { len - 1 } else { 0 };
            let to = self.r32();
            self.ins(["add", "s32"], (to, lane.base, k0 * inner as i32));
            let first = crate::elem::cast(job.d, acc_t, exclusive_first(job.op, job.d));
            let f = self.acc_const(acc_t, first)?;
            let at = self.elem_at(job.out, dsize, to.into());
            self.st_acc(Guard::If(lane0), job.d, at, f);
        }
        Ok(())
    }
}
