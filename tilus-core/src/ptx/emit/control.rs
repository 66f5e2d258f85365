//! The kernel's parameters and its statements: structured control flow (`for`, `while`, `if`,
//! `break`) as labels and uniform branches around the instructions (`inst.rs`).

use super::{internal, CodegenResult, Emitter};
use crate::ir::{BinOp, DType, ForLoop, Operand, ParamKind, Span, Stmt, VarId};
use crate::ptx::code::{Address, Base, Guard, Label, ParamPart};
use crate::ptx::value::{Predicate, RegOrConst};

/// The `.param` of parameter `i` as a memory operand.
fn param(i: usize, part: ParamPart) -> Address {
    Address {
        base: Base::Param(i, part),
        offset: None,
    }
}

impl Emitter<'_> {
    /// Loads the parameters into their variables' registers (a tensor's pointer converted to a
    /// global address, its dims its length).
    pub fn params(&mut self) -> CodegenResult<()> {
        for (i, p) in self.kernel.params.iter().enumerate() {
            let v = i as VarId;
            match &p.kind {
                ParamKind::Tensor(_) => {
                    let g = self.dst_global(v)?;
                    let raw = self.r64();
                    self.ins(["ld", "param", "u64"], (raw, param(i, ParamPart::Ptr)));
                    self.ins(["cvta", "to", "global", "u64"], (g.ptr, raw));
                    self.ins(["ld", "param", "u64"], (g.len, param(i, ParamPart::Len)));
                    self.ins(["mov", "b64"], (g.off, 0));
                    for d in &g.dims {
                        self.ins(["mov", "b64"], (d, g.len));
                    }
                    self.known.record_tensor_param(v);
                }
                ParamKind::Scalar(d) => {
                    let r = self.dst_regs(v)?[0];
                    let pty = crate::target::param_type(*d).0;
                    let value = param(i, ParamPart::Value);
                    if *d == DType::Bool {
                        let t = self.r32();
                        self.ins(["ld", "param", pty], (t, value));
                        self.ins(["setp", "ne", "s32"], (r, t, 0));
                    } else {
                        self.ins(["ld", "param", pty], (r, value));
                        // Narrow integers arrive widened; keep the register normalised.
                        self.normalize(*d, r);
                    }
                }
            }
        }
        Ok(())
    }

    pub fn block(&mut self, b: &[Stmt]) -> CodegenResult<()> {
        for s in b {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// One statement; an error without a span gets the statement's.
    fn stmt(&mut self, s: &Stmt) -> CodegenResult<()> {
        let outer = self.span;
        self.span = s.span();
        let r = self.stmt_inner(s).map_err(|mut e| {
            if e.span == Span::NONE {
                e.span = self.span;
            }
            e
        });
        self.span = outer;
        r
    }

    fn stmt_inner(&mut self, s: &Stmt) -> CodegenResult<()> {
        if matches!(s, Stmt::While { .. } | Stmt::For(_)) {
            if let Some(plan) = self.solo_plan(s) {
                return self.solo_loop(s, &plan);
            }
            if let Some(plan) = self.warp_plan(s) {
                return self.warp_loop(s, &plan);
            }
        }
        self.stmt_generic(s)
    }

    /// A statement generated for the whole block.
    pub(super) fn stmt_generic(&mut self, s: &Stmt) -> CodegenResult<()> {
        match s {
            Stmt::Inst { dst, inst, .. } => self.inst(*dst, inst),
            Stmt::For(l) => self.for_loop(l),
            Stmt::While {
                cond_block,
                cond,
                body,
                ..
            } => {
                let (head, end) = (self.new_label("while_head"), self.new_label("while_end"));
                self.comment("while");
                self.label(head);
                self.loop_ends.push(end);
                self.block(cond_block)?;
                self.branch_if(*cond, false, end)?;
                self.block(body)?;
                self.loop_ends.pop();
                self.branch_uniform(Guard::Always, head);
                self.label(end);
                Ok(())
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let (else_l, end) = (self.new_label("if_else"), self.new_label("if_end"));
                self.comment("if");
                self.branch_if(*cond, false, if els.is_empty() { end } else { else_l })?;
                self.block(then)?;
                if !els.is_empty() {
                    self.branch_uniform(Guard::Always, end);
                    self.label(else_l);
                    self.block(els)?;
                }
                self.label(end);
                Ok(())
            }
            Stmt::Break { .. } => match self.loop_ends.last().copied() {
                Some(l) => {
                    self.branch_uniform(Guard::Always, l);
                    Ok(())
                }
                None => internal("break outside a loop"),
            },
        }
    }

    /// `for var in (start..end).step_by(step) { body }`: tested before the first iteration,
    /// then at the bottom.
    fn for_loop(&mut self, l: &ForLoop) -> CodegenResult<()> {
        let ForLoop {
            var,
            start,
            end,
            step,
            ref body,
            ..
        } = *l;
        let (head, exit) = (self.new_label("for_body"), self.new_label("for_end"));
        self.comment(format!(
            "for {} in ({start:?}..{end:?}).step_by({step:?})",
            self.name(var)
        ));
        let d = self.ty(var)?.dtype();
        let ty = d.info().arith;
        let start_v = self.reg_or_const(start, 0)?;
        // `end` and `step` are evaluated once, before the loop (Rust range semantics).
        let end_v = self.reg_or_const(end, 0)?;
        let step_v = self.reg_or_const(step, 0)?;
        let (end_v, step_v) = (self.snapshot(end, end_v)?, self.snapshot(step, step_v)?);
        let i = self.dst_regs(var)?[0];
        self.known.record_loop_var(var, start, end, step);
        self.ins(["mov", d.info().bit_reg()], (i, start_v));
        let nonpos = self.setp_elem(BinOp::Le, d, step_v, RegOrConst::Const(0, d));
        let empty = self.setp_elem(BinOp::Ge, d, RegOrConst::Reg(i), end_v);
        for p in [nonpos, empty] {
            if p != Predicate::False {
                self.branch_uniform(p.guard(), exit);
            }
        }
        self.label(head);
        self.loop_ends.push(exit);
        self.block(body)?;
        self.loop_ends.pop();
        // Continue while step < end - i. With i < end the difference is exact as an unsigned
        // number of the register's width, so the test cannot overflow (i + step might).
        let uty = if ty.ends_with("64") { "u64" } else { "u32" };
        let rem = self.reg_of(d);
        self.ins(["sub", ty], (rem, end_v, i));
        let more = self.new_pred();
        self.ins(["setp", "lt", uty], (more, step_v, rem));
        self.ins(["add", ty], (i, i, step_v));
        self.branch_uniform(Guard::If(more), head);
        self.label(exit);
        Ok(())
    }

    /// A copy of a loop bound when its variable may be re-assigned inside the loop.
    fn snapshot(&mut self, o: Operand, v: RegOrConst) -> CodegenResult<RegOrConst> {
        Ok(match (o, v) {
            (Operand::Var(x), RegOrConst::Reg(r)) if !self.known.single_site(x) => {
                let c = self.new_reg(r.class);
                self.ins(["mov", self.dtype_of(o)?.info().bit_reg()], (c, r));
                RegOrConst::Reg(c)
            }
            _ => v,
        })
    }

    /// Branch to `label` when the uniform bool `cond` equals `when`.
    fn branch_if(&mut self, cond: Operand, when: bool, label: Label) -> CodegenResult<()> {
        match self.predicate_of(cond, 0)? {
            Predicate::Reg(p) if when => self.branch_uniform(Guard::If(p), label),
            Predicate::Reg(p) => self.branch_uniform(Guard::Unless(p), label),
            Predicate::True if when => self.branch_uniform(Guard::Always, label),
            Predicate::False if !when => self.branch_uniform(Guard::Always, label),
            _ => {}
        }
        Ok(())
    }
}
