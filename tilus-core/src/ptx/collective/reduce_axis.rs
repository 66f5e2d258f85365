//! Reductions along an axis (`t.sum(axis)`, `t.argmax(axis)`, ...), realising
//! [`ReducePlan`] exactly: the tile is staged in row-major order, each line's group of `lanes`
//! consecutive lanes of one warp folds its shares in axis order from the identity, the group
//! combines by a butterfly, and lane 0 of the group writes the line's result; every thread then
//! reads the results it owns.
//!
//! Arg forms carry a (value, index) pair, index -1 meaning "nothing yet": an element replaces
//! the pair when it is not NaN and strictly better (so the first of equal values stays), and a
//! butterfly step takes the partner's pair when it is better or equal with a lower index. A
//! line of NaNs gives index 0. Any order gives these results, as for integer, `min`/`max` and
//! `bool` folds; float sums combine in the plan's order, which the emulator evaluates the same.

use super::super::code::Guard;
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::RegOrImm;
use super::staging::{acc_opcode, acc_type, parts};
use crate::collective::reduce::fold_op;
use crate::collective::{AxisView, ReducePlan};
use crate::dtype::DType;
use crate::ir::{AxisReduce, Ty, VarId};

impl Emitter<'_> {
    pub fn reduce_axis(
        &mut self,
        dst: VarId,
        op: AxisReduce,
        x: VarId,
        axis: usize,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype } = self.ty(x)?.clone() else {
            return internal("reduce along an axis of a scalar");
        };
        let d = dtype;
        let layout = self.layout_of(&shape);
        let view = AxisView::new(&shape, axis);
        let plan = ReducePlan::choose(&shape, axis, layout);
        let lanes = plan.lanes();
        let out_d = match op {
            AxisReduce::Fold(_) => d,
            AxisReduce::ArgMin | AxisReduce::ArgMax => DType::I32,
        };
        let lines = view.lines();
        if let (AxisReduce::Fold(f), ReducePlan::Rows { lanes, v }) = (op, plan) {
            return self.fold_rows_in_place(dst, f, x, d, lanes, v);
        }
        let offs = parts(
            self,
            &[d.size_bytes() * layout.n, out_d.size_bytes() * lines],
        );
        let (src, res) = (offs[0], offs[1]);
        self.stage(x, d, &layout, src)?;
        self.barrier();
        // Role s = pass * threads + tid: line s / lanes, lane s % lanes of its group. Every
        // thread runs the same number of passes, so the butterfly's shuffles see all lanes.
        let roles = (lines * lanes).div_ceil(self.threads()) * self.threads();
        let tid = self.tid();
        self.counted_loop(
            RegOrImm::Reg(tid),
            RegOrImm::Imm(roles as i32),
            self.threads() as u32,
            |e, s| {
                let line = e.r32();
                let j = e.r32();
                e.ins(["shr", "u32"], (line, s, lanes.trailing_zeros()));
                e.ins(["and", "b32"], (j, s, lanes as u32 - 1));
                let valid = e.pred_u32("lt", line, RegOrImm::Imm(lines as i32));
                let (start, end, step) = e.lane_share(plan, j, valid, view.len);
                let base = e.line_base(&view, line);
                let (acc, idx) = match op {
                    AxisReduce::Fold(f) => {
                        let acc = e.fold_share(d, f, src, &view, base, (start, end, step))?;
                        (acc, None)
                    }
                    AxisReduce::ArgMin | AxisReduce::ArgMax => {
                        let max = op == AxisReduce::ArgMax;
                        let (best, bi) =
                            e.arg_share(d, max, src, &view, base, (start, end, step))?;
                        (best, Some(bi))
                    }
                };
                e.combine_lanes(op, d, acc, idx, lanes)?;
                let writer = e.new_pred();
                e.ins(["setp", "eq", "and", "u32"], (writer, j, 0, valid));
                let at = e.elem_at(res, out_d.size_bytes(), RegOrImm::Reg(line));
                match idx {
                    None => e.st_acc(Guard::If(writer), d, at, acc),
                    Some(bi) => {
                        // A line of NaNs (no index) gives 0.
                        let r = e.r32();
                        e.ins(["max", "s32"], (r, bi, 0));
                        e.ins_if(Guard::If(writer), ["st", "shared", "s32"], (at, r));
                    }
                }
                Ok(())
            },
        )?;
        self.barrier();
        self.unstage(dst, out_d, res)?;
        self.barrier();
        Ok(())
    }

    /// Lane `j`'s share of its line, as a counted loop's `(start, end, step)`: Rows folds
    /// `j*v .. j*v+v` by 1, Staged `j, j+lanes, ..` below `len`; lanes past the last line
    /// (`valid` false) fold nothing but still take part in the shuffles.
    fn lane_share(&mut self, plan: ReducePlan, j: Reg, valid: Reg, len: usize) -> (Reg, Reg, u32) {
        let (start, end, step) = match plan {
            ReducePlan::Rows { v, .. } => {
                let st = self.r32();
                let en = self.r32();
                self.ins(["mul", "lo", "s32"], (st, j, v));
                self.ins(["add", "s32"], (en, st, v));
                (st, en, 1)
            }
            ReducePlan::Staged { lanes } => {
                let en = self.r32();
                self.ins(["mov", "u32"], (en, len));
                (j, en, lanes as u32)
            }
        };
        self.ins(["selp", "b32"], (end, end, 0, valid));
        (start, end, step)
    }

    /// The butterfly over a line's `lanes` lanes: partials `acc` (and indices `idx` for the
    /// arg forms) become the line's result in every lane.
    fn combine_lanes(
        &mut self,
        op: AxisReduce,
        d: DType,
        acc: Reg,
        idx: Option<Reg>,
        lanes: usize,
    ) -> CodegenResult<()> {
        if let (AxisReduce::Fold(f), 32) = (op, lanes) {
            let ins = acc_opcode(fold_op(f), acc_type(d))?;
            self.fold_warp(f, acc_type(d), acc, &ins);
            return Ok(());
        }
        let mut b = lanes / 2;
        while b >= 1 {
            match (op, idx) {
                (AxisReduce::Fold(f), _) => {
                    let t = self.shfl_bfly(acc, b as u32);
                    let ins = acc_opcode(fold_op(f), acc_type(d))?;
                    self.ins(ins, (acc, acc, t));
                }
                (_, Some(bi)) => self.arg_combine(d, op == AxisReduce::ArgMax, acc, bi, b)?,
                _ => return internal("an arg reduction without indices"),
            }
            b /= 2;
        }
        Ok(())
    }

    /// A fold of rows the layout already spreads as the plan's lanes: each thread folds the
    /// `v` elements of its run in every chunk from the identity, the `lanes` threads of a row
    /// combine by a butterfly, and the row's first lane writes the result (row
    /// `o * threads / lanes + tid / lanes` of chunk `o`); nothing is staged.
    fn fold_rows_in_place(
        &mut self,
        dst: VarId,
        f: crate::ir::ReduceOp,
        x: VarId,
        d: DType,
        lanes: usize,
        v: usize,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, .. } = self.ty(x)?.clone() else {
            return internal("reduce along an axis of a scalar");
        };
        let layout = self.layout_of(&shape);
        let rows = layout.n / (lanes * v);
        let res = parts(self, &[d.size_bytes() * rows])[0];
        let acc_t = acc_type(d);
        let id = crate::elem::cast(d, acc_t, crate::elem::reduce_identity(f, d));
        let ins = acc_opcode(fold_op(f), acc_t)?;
        let tid = self.tid();
        let (row0, lane) = (self.r32(), self.r32());
        self.ins(["shr", "u32"], (row0, tid, lanes.trailing_zeros()));
        self.ins(["and", "b32"], (lane, tid, lanes as u32 - 1));
        let writer = self.pred_u32("eq", lane, 0.into());
        for o in 0..layout.outer {
            let acc = self.acc_const(acc_t, id)?;
            for i in 0..v {
                let val = self.reg_or_const(crate::ir::Operand::Var(x), o * v + i)?;
                let w = self.widen_for_fold(d, val);
                self.ins(ins.clone(), (acc, acc, w));
            }
            if lanes == 32 {
                self.fold_warp(f, acc_t, acc, &ins);
            } else {
                let mut b = lanes / 2;
                while b >= 1 {
                    let t = self.shfl_bfly(acc, b as u32);
                    self.ins(ins.clone(), (acc, acc, t));
                    b /= 2;
                }
            }
            let row = self.r32();
            let first = (o * (layout.threads / lanes)) as u32;
            self.ins(["add", "s32"], (row, row0, first));
            let at = self.elem_at(res, d.size_bytes(), row.into());
            self.st_acc(Guard::If(writer), d, at, acc);
        }
        self.barrier();
        self.unstage(dst, d, res)?;
        self.barrier();
        Ok(())
    }

    /// One lane's fold of the axis indices `start..end` (by `step`) of the line at `base`,
    /// from the identity, in the type a collective computes in.
    fn fold_share(
        &mut self,
        d: DType,
        f: crate::ir::ReduceOp,
        src: usize,
        view: &AxisView,
        base: Reg,
        (start, end, step): (Reg, Reg, u32),
    ) -> CodegenResult<Reg> {
        let acc_t = acc_type(d);
        let id = crate::elem::cast(d, acc_t, crate::elem::reduce_identity(f, d));
        let acc = self.acc_const(acc_t, id)?;
        let ins = acc_opcode(fold_op(f), acc_t)?;
        let inner = view.inner;
        self.counted_loop(RegOrImm::Reg(start), RegOrImm::Reg(end), step, |e, k| {
            let i = e.along(base, k, inner);
            let at = e.elem_at(src, d.size_bytes(), RegOrImm::Reg(i));
            let v = e.ld_acc(d, at);
            e.ins(ins, (acc, acc, v));
            Ok(())
        })?;
        Ok(acc)
    }

    /// One lane's best (value, axis index) over its share; index -1 when it saw only NaNs.
    fn arg_share(
        &mut self,
        d: DType,
        max: bool,
        src: usize,
        view: &AxisView,
        base: Reg,
        (start, end, step): (Reg, Reg, u32),
    ) -> CodegenResult<(Reg, Reg)> {
        let acc_t = acc_type(d);
        let best = self.acc_const(acc_t, 0)?;
        let bi = self.r32();
        self.ins(["mov", "s32"], (bi, -1));
        let inner = view.inner;
        self.counted_loop(RegOrImm::Reg(start), RegOrImm::Reg(end), step, |e, k| {
            let i = e.along(base, k, inner);
            let at = e.elem_at(src, d.size_bytes(), RegOrImm::Reg(i));
            let v = e.ld_acc(d, at);
            // take = (no index yet or v better) and v is a number.
            let take = e.new_pred();
            let cmp = if max { "gt" } else { "lt" };
            e.ins(["setp", cmp, acc_t.info().arith], (take, v, best));
            e.ins(["setp", "lt", "or", "s32"], (take, bi, 0, take));
            if d.is_float() {
                e.ins(
                    ["setp", "num", "and", acc_t.info().arith],
                    (take, v, v, take),
                );
            }
            e.ins_if(Guard::If(take), ["mov", acc_t.info().bit_reg()], (best, v));
            e.ins_if(Guard::If(take), ["mov", "b32"], (bi, k));
            Ok(())
        })?;
        Ok((best, bi))
    }

    /// One butterfly step of the arg forms: take the partner's pair when it has an index and
    /// this lane has none, or its value is better, or equal with a lower index.
    fn arg_combine(
        &mut self,
        d: DType,
        max: bool,
        best: Reg,
        bi: Reg,
        b: usize,
    ) -> CodegenResult<()> {
        let acc_t = acc_type(d);
        let ar = acc_t.info().arith;
        let ob = self.shfl_bfly(best, b as u32);
        let oi = self.shfl_bfly(bi, b as u32);
        let (better, tie, take, has) = (
            self.new_pred(),
            self.new_pred(),
            self.new_pred(),
            self.new_pred(),
        );
        let cmp = if max { "gt" } else { "lt" };
        self.ins(["setp", cmp, ar], (better, ob, best));
        // Equal values: the lower index (-1, "none", never reaches here with a value).
        self.ins(["setp", "eq", ar], (tie, ob, best));
        self.ins(["setp", "lt", "and", "s32"], (tie, oi, bi, tie));
        self.ins(["or", "pred"], (take, better, tie));
        self.ins(["setp", "lt", "or", "s32"], (take, bi, 0, take));
        self.ins(["setp", "ge", "and", "s32"], (has, oi, 0, take));
        self.ins_if(Guard::If(has), ["mov", acc_t.info().bit_reg()], (best, ob));
        self.ins_if(Guard::If(has), ["mov", "b32"], (bi, oi));
        Ok(())
    }
}
