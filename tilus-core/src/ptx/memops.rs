//! The instructions of memory operations, per element and per vector (`access.rs` plans the
//! activity and addresses they use).
//!
//! Registers hold elements in their class (`dtype.rs`): narrow integers in 32-bit registers
//! (`ld.u8` zero-extends, `ld.s8` sign-extends, `st.u8` stores the low byte), `f16`/`bf16` in
//! 16-bit ones, `bool` as predicates (one byte, 0 or 1, in memory). Atomics come from the
//! legality table (`crate::table`): the operand is converted to the instruction's register width
//! where they differ (16-bit `cas` of an integer held in 32 bits).

use super::access::{Addr, Op, Plan, Rmw};
use super::code::{Arg, Guard, Opcode};
use super::emit::{internal, CodegenResult, Emitter};
use super::regs::Reg;
use super::value::{Predicate, RegOrConst, RegOrImm};
use crate::dtype::{Class, DType, RegClass};
use crate::ir::{BinOp, Coord, InactiveResult, Operand, RmwOp, Space};
use crate::table::{self, RmwHow};

impl Emitter<'_> {
    /// The register to store for element `v` of type `d` (bools as 0/1 words).
    fn store_reg(&mut self, d: DType, v: RegOrConst) -> Reg {
        if d == DType::Bool {
            let p = self.in_reg(v);
            let t = self.r32();
            self.ins(["selp", "b32"], (t, 1, 0, p));
            return t;
        }
        self.in_reg(v)
    }

    /// `ld` of one element of type `d` into `r` (bools through a word and a compare).
    fn load_elem(&mut self, g: Guard, instr: Opcode, d: DType, r: Reg, addr: Addr) {
        let ty = d.info().mem;
        if d == DType::Bool {
            let t = self.r32();
            self.ins_if(g, instr.q(ty), (t, addr));
            self.ins_if(g, ["setp", "ne", "s32"], (r, t, 0));
        } else {
            self.ins_if(g, instr.q(ty), (r, addr));
        }
    }

    /// `r = v` where the predicate is false (the inactive elements' value).
    fn fill_inactive(
        &mut self,
        d: DType,
        act: Predicate,
        r: Reg,
        v: RegOrConst,
    ) -> CodegenResult<()> {
        match act {
            Predicate::True => Ok(()),
            Predicate::False => self.copy_elem(d, r, v),
            Predicate::Reg(p) => {
                let v = match v {
                    // A predicated move of a 16-bit float constant needs a register source.
                    RegOrConst::Const(..) if d.is_half_float() => RegOrConst::Reg(self.in_reg(v)),
                    _ => v,
                };
                if d == DType::Bool {
                    let src = self.in_reg(v);
                    self.ins_if(Guard::Unless(p), ["mov", "pred"], (r, src));
                } else {
                    let ty = d.info().mov_type();
                    self.ins_if(Guard::Unless(p), ["mov", ty], (r, v));
                }
                Ok(())
            }
        }
    }

    /// The scalar instructions of an access, one per active element; `needed` (from
    /// [`general_vectors`](Self::general_vectors)) says where no vector instruction did the
    /// element's load or store.
    pub(super) fn element_ops(
        &mut self,
        plan: &Plan,
        op: &Op,
        elems: &[(Predicate, Addr)],
        needed: Option<&[Predicate]>,
        local_alts: &[Option<(Predicate, Addr)>],
    ) -> CodegenResult<()> {
        let d = plan.dtype;
        let sp = self.state_space(plan);
        let need = |s: usize| needed.map_or(Predicate::True, |n| n[s]);
        match op {
            Op::Load { dst, other } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let act = self.and_pred(*act, need(s));
                    if act != Predicate::False {
                        let g = act.guard();
                        self.load_elem(g, ["ld", sp].into(), d, dst[s], *addr);
                    }
                }
                for (s, (act, _)) in elems.iter().enumerate() {
                    let val = self.slot_value(*other, s)?;
                    self.fill_inactive(d, *act, dst[s], val)?;
                }
            }
            Op::Store { value } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let act = self.and_pred(*act, need(s));
                    if act == Predicate::False {
                        continue;
                    }
                    let val = self.slot_value(*value, s)?;
                    let val = self.store_reg(d, val);
                    let g = act.guard();
                    self.ins_if(g, ["st", sp, d.info().mem], (*addr, val));
                }
            }
            Op::AtomicLoad { dst, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act != Predicate::False {
                        let g = act.guard();
                        let instr = ["ld", sem.ptx(), scope.ptx(), sp].into();
                        self.load_elem(g, instr, d, dst[s], *addr);
                    }
                    self.fill_inactive(d, *act, dst[s], RegOrConst::Const(0, d))?;
                }
            }
            Op::AtomicStore { value, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act == Predicate::False {
                        continue;
                    }
                    let val = self.slot_value(*value, s)?;
                    let val = self.store_reg(d, val);
                    let g = act.guard();
                    self.ins_if(
                        g,
                        ["st", sem.ptx(), scope.ptx(), sp, d.info().mem],
                        (*addr, val),
                    );
                }
            }
            Op::Rmw(rmw) if rmw.pairs => self.rmw_pairs(plan, rmw, elems)?,
            Op::Rmw(rmw) => self.rmw_elems(plan, rmw, elems, local_alts)?,
        }
        Ok(())
    }

    /// The operand of an RMW as a register of the instruction's width (negated for `sub`);
    /// a CAS loop computes with the operand as the element type holds it.
    fn rmw_operand(&mut self, d: DType, row: &table::RmwRow, v: RegOrConst) -> RegOrConst {
        if row.how == RmwHow::CasLoop {
            return v;
        }
        let v = if row.how == RmwHow::NegateAdd {
            match v {
                RegOrConst::Const(bits, _) => {
                    RegOrConst::Const(crate::elem::unary(crate::ir::UnOp::Neg, d, bits), d)
                }
                RegOrConst::Reg(_) => {
                    let r = self.reg_of(d);
                    let _ = self.unary_elem(crate::ir::UnOp::Neg, d, r, v);
                    RegOrConst::Reg(r)
                }
            }
        } else {
            v
        };
        self.atom_width_operand(d, row, v)
    }

    /// A value of `d` in the register width of `row`'s PTX type: 16-bit `cas` of an integer
    /// held in a 32-bit register narrows it; floats need registers (16-bit ones have no
    /// immediate form).
    fn atom_width_operand(&mut self, d: DType, row: &table::RmwRow, v: RegOrConst) -> RegOrConst {
        if row.ptx_type == "b16" && d.info().reg == RegClass::B32 {
            let r = self.reg16();
            match v {
                RegOrConst::Const(bits, _) => self.ins(["mov", "b16"], (r, bits as u16)),
                RegOrConst::Reg(x) => self.ins(["cvt", "u16", "u32"], (r, x)),
            }
            return RegOrConst::Reg(r);
        }
        match v {
            RegOrConst::Const(..) if d.is_float() => RegOrConst::Reg(self.in_reg(v)),
            _ => v,
        }
    }

    fn reg16(&mut self) -> Reg {
        self.new_reg(RegClass::B16)
    }

    /// The RMWs of an access. `local_alts` (distributed shared tensors): per slot, whether the
    /// element is this block's and its address in the block's own window.
    fn rmw_elems(
        &mut self,
        plan: &Plan,
        rmw: &Rmw,
        elems: &[(Predicate, Addr)],
        local_alts: &[Option<(Predicate, Addr)>],
    ) -> CodegenResult<()> {
        let Rmw {
            dst,
            with_output,
            op: _,
            values,
            compare,
            sem,
            scope,
            inactive,
            pairs: _,
        } = rmw;
        let d = plan.dtype;
        let form = self.rmw_instr_of(plan, rmw)?;
        let (row, red, narrow_result) = (form.row, form.red, form.narrow_result);
        let bs = self.rmw_operands(d, row, *values, elems)?;
        // Where the layout gives a thread runs of contiguous elements and the table has a vector
        // or packed form: those instructions where a run turns out contiguous at run time, and
        // the scalar ones below only where it does not.
        let scalar_needed = match self.multi_rmw_form(plan, row) {
            Some(multi) => {
                let q = (*sem, *scope, *with_output);
                self.rmw_vectors(plan, row, multi, q, elems, &bs, dst)?
            }
            None => vec![Predicate::True; elems.len()],
        };
        for (s, (act, addr)) in elems.iter().enumerate() {
            let cmp = match compare {
                Some(c) => Some(self.slot_value(*c, s)?),
                None => None,
            };
            if *with_output {
                let fallback = match (inactive, cmp) {
                    (InactiveResult::Compare, Some(c)) => c,
                    _ => RegOrConst::Const(0, d),
                };
                self.fill_inactive(d, *act, dst[s], fallback)?;
            }
            let (act, Some(b)) = (self.and_pred(*act, scalar_needed[s]), bs[s]) else {
                continue;
            };
            if act == Predicate::False {
                continue;
            }
            // The destination register of the instruction (16-bit for `cas.b16` of integers).
            let out = if narrow_result && !red {
                self.reg16()
            } else {
                dst[s]
            };
            if let Some(local) = owned_alt(&form, local_alts.get(s).copied().flatten(), cmp) {
                self.rmw_split_local(rmw, &form, (act, *addr), local, out, b);
                continue;
            }
            self.rmw_instr(plan, rmw, &form, (act, *addr), out, (b, cmp))?;
            if narrow_result && !red && *with_output {
                let g = act.guard();
                let ext = if d.is_signed() { "s16" } else { "u16" };
                self.ins_if(g, ["cvt", "s32", ext], (dst[s], out));
            }
        }
        Ok(())
    }

    /// The instruction of an access's RMWs, from the legality table.
    fn rmw_instr_of(&self, plan: &Plan, rmw: &Rmw) -> CodegenResult<RmwInstr> {
        let (op, d) = (rmw.op, plan.dtype);
        let space = self.state_space(plan);
        let Some(row) = table::rmw_row(op, d) else {
            return internal(format!("no atomic `{}` on `{d}`", op.name()));
        };
        if op == RmwOp::Cas && rmw.compare.is_none() {
            return internal("cas without a compare operand");
        }
        let (instr, red) = table::rmw_ptx(row, space, rmw.sem, rmw.scope, rmw.with_output);
        let narrow_result =
            row.ptx_type == "b16" && d.info().reg == RegClass::B32 && row.how != RmwHow::CasLoop;
        Ok(RmwInstr {
            row,
            space,
            instr,
            red,
            narrow_result,
        })
    }

    /// The RMW operands, converted once: one for a scalar `values`, else one per active slot
    /// (`None` for the inactive ones).
    fn rmw_operands(
        &mut self,
        d: DType,
        row: &table::RmwRow,
        values: Operand,
        elems: &[(Predicate, Addr)],
    ) -> CodegenResult<Vec<Option<RegOrConst>>> {
        let scalar_b = if self.is_tile(values)? {
            None
        } else {
            let v = self.reg_or_const(values, 0)?;
            Some(self.rmw_operand(d, row, v))
        };
        let mut bs = Vec::with_capacity(elems.len());
        for (s, (act, _)) in elems.iter().enumerate() {
            bs.push(match (scalar_b, act) {
                (Some(b), _) => Some(b),
                (None, Predicate::False) => None,
                (None, _) => {
                    let v = self.slot_value(values, s)?;
                    Some(self.rmw_operand(d, row, v))
                }
            });
        }
        Ok(bs)
    }

    /// One RMW of a distributed tensor's element that may be this block's: the `.shared::cta`
    /// form at `local_addr` where `is_local`, the cluster form at `addr` elsewhere.
    fn rmw_split_local(
        &mut self,
        rmw: &Rmw,
        form: &RmwInstr,
        (act, addr): (Predicate, Addr),
        (is_local, local_addr): (Predicate, Addr),
        out: Reg,
        b: RegOrConst,
    ) {
        // Same instruction and scope on the own window, so it is as atomic towards the other
        // blocks' `.shared::cluster` ones.
        let (local_instr, _) =
            table::rmw_ptx(form.row, "shared::cta", rmw.sem, rmw.scope, rmw.with_output);
        let here = self.and_pred(act, is_local);
        let not_local = self.not_pred(is_local);
        let there = self.and_pred(act, not_local);
        for (p, ins, a) in [
            (here, local_instr, local_addr),
            (there, form.instr.clone(), addr),
        ] {
            if p == Predicate::False {
                continue;
            }
            let g = p.guard();
            if form.red {
                self.ins_if(g, Opcode::table(ins), (a, b));
            } else {
                self.ins_if(g, Opcode::table(ins), (out, a, b));
            }
        }
    }

    /// One element's RMW where `act` holds, by the table row's method: the instruction itself
    /// (operand `b`, and `cmp` for a `cas`), or a min/max or CAS-loop emulation.
    fn rmw_instr(
        &mut self,
        plan: &Plan,
        rmw: &Rmw,
        form: &RmwInstr,
        (act, addr): (Predicate, Addr),
        out: Reg,
        (b, cmp): (RegOrConst, Option<RegOrConst>),
    ) -> CodegenResult<()> {
        let (d, row, instr) = (plan.dtype, form.row, &form.instr);
        let q = (form.space, rmw.sem, rmw.scope, rmw.with_output);
        let g = act.guard();
        match row.how {
            RmwHow::FloatMinMax => self.float_minmax(plan, row, q, act, addr, out, b)?,
            RmwHow::CasLoop => self.cas_loop(d, row, q, act, addr, out, b)?,
            _ => match (form.red, cmp) {
                (true, _) => self.ins_if(g, Opcode::table(instr.clone()), (addr, b)),
                (false, Some(c)) => {
                    let c = self.atom_width_operand(d, row, c);
                    self.ins_if(g, Opcode::table(instr.clone()), (out, addr, c, b));
                }
                (false, None) => self.ins_if(g, Opcode::table(instr.clone()), (out, addr, b)),
            },
        }
        Ok(())
    }

    /// The multi-element form of an RMW for this access, if it can have one (runs of at least
    /// two elements per thread): a vector form on global memory where the table has one on
    /// this target, else the packed form of two 16-bit elements (global memory below sm_90,
    /// and a block's own shared memory).
    fn multi_rmw_form(&self, plan: &Plan, row: &table::RmwRow) -> Option<MultiForm> {
        let v = plan.layout.v;
        if plan.uniform || v < 2 {
            return None;
        }
        let global = matches!(plan.mem, super::access::Mem::Global(_));
        let own_shared = matches!(plan.mem, super::access::Mem::Shared { rows: None, .. });
        if global {
            if let Some(most) = table::vector_rmw_lanes(row, self.kernel().target) {
                return Some(MultiForm::Vector(most.min(v)));
            }
        }
        ((global || own_shared) && !row.packed.is_empty()).then_some(MultiForm::Packed)
    }

    /// Vector or packed RMWs over pieces of `lanes` slots (each inside one run of the layout,
    /// so its elements are consecutive in the tile): a piece goes as one instruction when, at
    /// run time, all its elements are active, their addresses consecutive and the first aligned
    /// to the piece's size. Returns, per slot, when its scalar instruction must still run
    /// (`True` for slots no piece covers).
    #[allow(clippy::too_many_arguments)]
    fn rmw_vectors(
        &mut self,
        plan: &Plan,
        row: &table::RmwRow,
        form: MultiForm,
        (sem, scope, with_output): (crate::ir::Sem, crate::ir::Scope, bool),
        elems: &[(Predicate, Addr)],
        bs: &[Option<RegOrConst>],
        dst: &[Reg],
    ) -> CodegenResult<Vec<Predicate>> {
        let (lanes, (instr, red)) = match form {
            MultiForm::Vector(lanes) => {
                self.require_ptx(table::VECTOR_RMW_PTX);
                let text = table::rmw_vector_ptx(row, lanes, sem, scope, with_output);
                (lanes, text)
            }
            MultiForm::Packed => {
                let space = self.state_space(plan);
                (
                    2,
                    table::rmw_packed_ptx(row, space, sem, scope, with_output),
                )
            }
        };
        let mut needed = vec![Predicate::True; elems.len()];
        for (piece, slots) in elems.chunks(lanes).enumerate() {
            let first = piece * lanes;
            let Some(ok) = self.piece_ok(slots, plan.size) else {
                continue;
            };
            let a0 = slots[0].1;
            let g = ok.guard();
            let mut operands = Vec::with_capacity(lanes);
            for b in &bs[first..first + lanes] {
                let Some(b) = *b else {
                    return internal("vector RMW of an inactive slot");
                };
                operands.push(self.in_reg(b));
            }
            let operands = match form {
                MultiForm::Vector(_) => Arg::Vector(operands),
                MultiForm::Packed => {
                    let w = self.r32();
                    self.ins(["mov", "b32"], (w, Arg::Vector(operands)));
                    Arg::Reg(w)
                }
            };
            let instr = Opcode::table(instr.clone());
            if red {
                self.ins_if(g, instr, (a0, operands));
            } else {
                // An unused result still needs distinct registers in the vector.
                let outs: Vec<Reg> = (first..first + lanes)
                    .map(|s| match with_output {
                        true => dst[s],
                        false => self.reg_of(plan.dtype),
                    })
                    .collect();
                match form {
                    MultiForm::Vector(_) => {
                        self.ins_if(g, instr, (Arg::Vector(outs), a0, operands));
                    }
                    MultiForm::Packed => {
                        let w = self.r32();
                        self.ins_if(g, instr, (w, a0, operands));
                        self.ins_if(g, ["mov", "b32"], (Arg::Vector(outs), w));
                    }
                }
            }
            // The scalar instructions of these slots run only where the vector one did not.
            let not_ok = self.not_pred(ok);
            needed[first..first + lanes].fill(not_ok);
        }
        Ok(needed)
    }

    /// 128-bit RMWs (`atom.cas.b128`, `atom.exch.b128`) on the element pairs `2k, 2k + 1` of
    /// the tile. A pair runs when both elements are active, the second addresses the memory
    /// element after the first, and the first is 16-byte aligned (`Inst::AtomicRmw::pairs`);
    /// skipped pairs give the inactive result. With runs of two or more elements per thread a
    /// pair is two slots of one thread; with runs of one (`v == 1`) it is the same slot of
    /// threads `2j` and `2j + 1`, which trade operands, addresses and results by `shfl`.
    fn rmw_pairs(
        &mut self,
        plan: &Plan,
        rmw: &Rmw,
        elems: &[(Predicate, Addr)],
    ) -> CodegenResult<()> {
        let (op, scope) = (rmw.op, rmw.scope);
        let d = plan.dtype;
        let Some(row) = table::rmw_row(op, d).filter(|r| r.pairs) else {
            return internal(format!("no 128-bit atomic `{}` on `{d}`", op.name()));
        };
        let instr = table::rmw_pair_ptx(row, self.state_space(plan), rmw.sem, scope);
        self.require_ptx(table::pair_rmw_ptx(scope));
        // A window along the last axis (the tilus forms) has its pairs contiguous by
        // construction; indexed coordinates are checked at run time.
        let rank = plan.access.shape.len();
        let contiguous = matches!(
            plan.access.coords.last(),
            Some(Coord::Pos { axis, .. }) if *axis + 1 == rank
        );
        let mut operands = Vec::with_capacity(elems.len());
        let mut fallback = Vec::with_capacity(elems.len());
        for (s, (act, _)) in elems.iter().enumerate() {
            let c = match &rmw.compare {
                Some(c) => Some(self.slot_value(*c, s)?),
                None => None,
            };
            fallback.push(match (&rmw.inactive, c) {
                (InactiveResult::Compare, Some(c)) => c,
                _ => RegOrConst::Const(0, d),
            });
            operands.push(match act {
                Predicate::False => None,
                _ => {
                    let b = self.slot_value(rmw.values, s)?;
                    Some((self.bits64(b), c.map(|c| self.bits64(c))))
                }
            });
        }
        let pairs = Pairs {
            d,
            instr,
            operands,
            fallback,
            out: rmw.with_output.then_some(rmw.dst.as_slice()),
        };
        if plan.layout.v >= 2 {
            self.pairs_in_thread(&pairs, elems)
        } else {
            self.pairs_across_lanes(&pairs, elems, contiguous)
        }
    }

    /// The pair RMWs where a pair is two adjacent slots of one thread.
    fn pairs_in_thread(&mut self, p: &Pairs, elems: &[(Predicate, Addr)]) -> CodegenResult<()> {
        for s in (0..elems.len()).step_by(2) {
            let addr = elems[s].1;
            let ok = self.piece_ok(&elems[s..s + 2], 8);
            let (Some(ok), Some((b0, c0)), Some((b1, c1))) = (ok, p.operands[s], p.operands[s + 1])
            else {
                self.pair_results(p, Predicate::False, &[s, s + 1], None)?;
                continue;
            };
            let c = c0.zip(c1).map(|(x, y)| [x, y]);
            let old = self.atom_pair(&p.instr, ok, addr, [b0, b1], c);
            self.pair_results(p, ok, &[s, s + 1], Some(old))?;
        }
        Ok(())
    }

    /// The pair RMWs where runs are of one element: the partner of this thread's element is
    /// the same slot of lane `lane ^ 1`; the even lane issues the pair.
    fn pairs_across_lanes(
        &mut self,
        p: &Pairs,
        elems: &[(Predicate, Addr)],
        contiguous: bool,
    ) -> CodegenResult<()> {
        let parity = self.r32();
        self.ins(["and", "b32"], (parity, self.tid(), 1));
        let first = self.new_pred();
        self.ins(["setp", "eq", "u32"], (first, parity, 0));
        // Where the pair starts, back from this thread's element (0 or 8 bytes), and where the
        // partner's element is (8 bytes on or back).
        let class = elems.first().map_or(RegClass::B32, |(_, a)| a.base.class);
        let addr_type = int_type(class == RegClass::B64);
        let (back, apart) = (self.new_reg(class), self.new_reg(class));
        self.ins(["selp", addr_type.bit], (back, 0, 8, first));
        self.ins(["selp", addr_type.bit], (apart, 8, -8, first));
        for (s, (act, addr)) in elems.iter().enumerate() {
            let Some((b, c)) = p.operands[s] else {
                self.pair_results(p, Predicate::False, &[s], None)?;
                continue;
            };
            let partner_act = match act {
                Predicate::Reg(a) => {
                    let r = self.r32();
                    self.ins(["selp", "u32"], (r, 1, 0, a));
                    let r = self.shfl_bfly(r, 1);
                    let q = self.new_pred();
                    self.ins(["setp", "ne", "u32"], (q, r, 0));
                    Predicate::Reg(q)
                }
                known => *known,
            };
            let pb = self.shfl_bfly(b, 1);
            let pc = c.map(|c| self.shfl_bfly(c, 1));
            let mut ok = self.and_pred(*act, partner_act);
            let aligned = self.aligned_at(*addr, Some(back));
            ok = self.and_pred(ok, aligned);
            if !contiguous {
                let mine = self.addr_reg(*addr);
                let theirs = self.shfl_bfly(mine, 1);
                let t = self.new_reg(class);
                self.ins(["sub", addr_type.arith], (t, theirs, mine));
                let q = self.new_pred();
                self.ins(["setp", "eq", addr_type.arith], (q, t, apart));
                ok = self.and_pred(ok, Predicate::Reg(q));
            }
            let go = self.and_pred(ok, Predicate::Reg(first));
            let old = self.atom_pair(&p.instr, go, *addr, [b, pb], c.zip(pc).map(|(x, y)| [x, y]));
            if p.out.is_some() {
                // The second thread's result is the first thread's high half.
                let theirs = self.shfl_bfly(old[1], 1);
                let mine = self.r64();
                self.ins(["selp", "b64"], (mine, old[0], theirs, first));
                self.pair_results(p, ok, &[s], Some([mine, mine]))?;
            }
        }
        Ok(())
    }

    /// A 64-bit element value as a `.b64` register (an `f64` register moved, a constant put).
    fn bits64(&mut self, v: RegOrConst) -> Reg {
        match v {
            RegOrConst::Reg(r) if r.class == RegClass::B64 => r,
            RegOrConst::Reg(r) => {
                let t = self.r64();
                self.ins(["mov", "b64"], (t, r));
                t
            }
            RegOrConst::Const(bits, _) => {
                let t = self.r64();
                self.ins(["mov", "b64"], (t, bits));
                t
            }
        }
    }

    /// Whether `addr - back` is 16-byte aligned (`back`: 0, or a register of the address's
    /// width holding 0 or 8).
    fn aligned_at(&mut self, addr: Addr, back: Option<Reg>) -> Predicate {
        let info = int_type(addr.base.class == RegClass::B64);
        let (ty, bits) = (info.arith, info.bit);
        let a = self.addr_reg(addr);
        let t = self.new_reg(addr.base.class);
        self.ins(["and", bits], (t, a, 15));
        let p = self.new_pred();
        match back {
            Some(r) => self.ins(["setp", "eq", ty], (p, t, r)),
            None => self.ins(["setp", "eq", ty], (p, t, 0)),
        }
        Predicate::Reg(p)
    }

    /// One 128-bit atomic under `guard` on the pair `b` (low element first), comparing with
    /// `c` for `cas`; returns the old pair's registers (undefined where the guard is false).
    fn atom_pair(
        &mut self,
        instr: &str,
        guard: Predicate,
        addr: Addr,
        b: [Reg; 2],
        c: Option<[Reg; 2]>,
    ) -> [Reg; 2] {
        let old = [self.r64(), self.r64()];
        if guard == Predicate::False {
            return old;
        }
        let g = guard.guard();
        let qb = self.new_reg(RegClass::B128);
        self.ins(["mov", "b128"], (qb, Arg::Vector(b.to_vec())));
        let qo = self.new_reg(RegClass::B128);
        match c {
            Some(c) => {
                let qc = self.new_reg(RegClass::B128);
                self.ins(["mov", "b128"], (qc, Arg::Vector(c.to_vec())));
                self.ins_if(g, Opcode::table(instr.into()), (qo, addr, qc, qb));
            }
            None => self.ins_if(g, Opcode::table(instr.into()), (qo, addr, qb)),
        }
        self.ins_if(g, ["mov", "b128"], (Arg::Vector(old.to_vec()), qo));
        old
    }

    /// The results of the slots of a pair (when the RMW's result is used): the old values
    /// where `ok`, else the slot's fallback.
    fn pair_results(
        &mut self,
        p: &Pairs,
        ok: Predicate,
        slots: &[usize],
        old: Option<[Reg; 2]>,
    ) -> CodegenResult<()> {
        let Some(dst) = p.out else { return Ok(()) };
        let g = ok.guard();
        for (k, &s) in slots.iter().enumerate() {
            if let (Some(old), true) = (old, ok != Predicate::False) {
                self.ins_if(g, ["mov", "b64"], (dst[s], old[k]));
            }
            self.fill_inactive(p.d, ok, dst[s], p.fallback[s])?;
        }
        Ok(())
    }

    /// An address as one register of its base's width (the base where there is no offset).
    fn addr_reg(&mut self, a: Addr) -> Reg {
        if a.imm == 0 {
            return a.base;
        }
        let r = self.new_reg(a.base.class);
        let ty = int_type(a.base.class == RegClass::B64).arith;
        self.ins(["add", ty], (r, a.base, a.imm));
        r
    }

    /// Float `min`/`max` on the bit patterns (IEEE `totalOrder`, `crate::elem::rmw`): the signed
    /// integer op for operands with a clear sign bit, the opposite unsigned one otherwise.
    #[allow(clippy::too_many_arguments)]
    fn float_minmax(
        &mut self,
        plan: &Plan,
        row: &table::RmwRow,
        (space, sem, scope, with_output): (&'static str, crate::ir::Sem, crate::ir::Scope, bool),
        act: Predicate,
        addr: Addr,
        out: Reg,
        b: RegOrConst,
    ) -> CodegenResult<()> {
        let wide = plan.dtype.bits() == 64;
        let info = int_type(wide);
        let (sty, bit) = (info.arith, info.bit);
        // The operand's bits in an integer register, and its sign.
        let bits = if wide { self.r64() } else { self.r32() };
        let b = self.in_reg(b);
        self.ins(["mov", bit], (bits, b));
        let neg = self.new_pred();
        self.ins(["setp", "lt", sty], (neg, bits, 0));
        // Guards: active and non-negative / active and negative.
        let (gp, gn) = match act {
            Predicate::True => (Guard::Unless(neg), Guard::If(neg)),
            Predicate::False => return Ok(()),
            Predicate::Reg(p) => {
                let (pp, pn) = (self.new_pred(), self.new_pred());
                self.ins(["and", "pred"], (pn, p, neg));
                self.ins(["not", "pred"], (pp, neg));
                self.ins(["and", "pred"], (pp, pp, p));
                (Guard::If(pp), Guard::If(pn))
            }
        };
        let (pos, red) = table::rmw_ptx(row, space, sem, scope, with_output);
        let (negi, _) = table::float_minmax_negative(row, space, sem, scope, with_output);
        let (pos, negi) = (Opcode::table(pos), Opcode::table(negi));
        if red {
            self.ins_if(gp, pos, (addr, bits));
            self.ins_if(gn, negi, (addr, bits));
        } else {
            let old = if wide { self.r64() } else { self.r32() };
            self.ins_if(gp, pos, (old, addr, bits));
            self.ins_if(gn, negi, (old, addr, bits));
            if with_output {
                let g = act.guard();
                self.ins_if(g, ["mov", bit], (out, old));
            }
        }
        Ok(())
    }

    /// An RMW no instruction has ([`RmwHow::CasLoop`]): the old bits read, the new value
    /// computed, `atom.cas.b16` until no other thread changed the element in between. Only
    /// active threads enter (a per-thread branch); the result is the element before the
    /// successful swap.
    #[allow(clippy::too_many_arguments)]
    fn cas_loop(
        &mut self,
        d: DType,
        row: &table::RmwRow,
        (space, sem, scope, with_output): (&'static str, crate::ir::Sem, crate::ir::Scope, bool),
        act: Predicate,
        addr: Addr,
        out: Reg,
        b: RegOrConst,
    ) -> CodegenResult<()> {
        if d.bits() != 16 {
            return internal(format!("no CAS loop for `{d}`"));
        }
        let (cas, _) = table::rmw_ptx(row, space, sem, scope, true);
        let (top, skip) = (self.new_label("cas_loop"), self.new_label("cas_done"));
        match act {
            Predicate::False => return Ok(()),
            Predicate::Reg(p) => self.ins_if(Guard::Unless(p), ["bra"], (skip,)),
            Predicate::True => {}
        }
        let (old, new, seen) = (self.reg16(), self.reg16(), self.reg16());
        self.ins(["ld", space, "b16"], (old, addr));
        self.label(top);
        let old_v = self.widen16(d, old);
        let new_v = self.reg_of(d);
        match (row.op, d.is_float()) {
            (RmwOp::Exch, _) => self.copy_elem(d, new_v, b)?,
            (RmwOp::Min | RmwOp::Max, true) => {
                self.total_order_pick(row.op == RmwOp::Max, new_v, old_v, b)
            }
            (op, false) => {
                let bin = match op {
                    RmwOp::Add => BinOp::Add,
                    RmwOp::Sub => BinOp::Sub,
                    RmwOp::Min => BinOp::Min,
                    RmwOp::Max => BinOp::Max,
                    RmwOp::And => BinOp::And,
                    RmwOp::Or => BinOp::Or,
                    RmwOp::Xor => BinOp::Xor,
                    _ => return internal(format!("no CAS loop for `{}`", op.name())),
                };
                self.binary_elem(bin, d, new_v, RegOrConst::Reg(old_v), b)?;
            }
            (op, true) => return internal(format!("no CAS loop for float `{}`", op.name())),
        }
        if new_v.class == RegClass::B16 {
            self.ins(["mov", "b16"], (new, new_v));
        } else {
            self.ins(["cvt", "u16", "u32"], (new, new_v));
        }
        self.ins(Opcode::table(cas), (seen, addr, old, new));
        let again = self.new_pred();
        self.ins(["setp", "ne", "b16"], (again, seen, old));
        self.ins(["mov", "b16"], (old, seen));
        self.ins_if(Guard::If(again), ["bra"], (top,));
        if with_output {
            let v = self.widen16(d, old);
            self.copy_elem(d, out, RegOrConst::Reg(v))?;
        }
        self.label(skip);
        Ok(())
    }

    /// A 16-bit element's bits as the element type holds its values (a 32-bit register,
    /// sign- or zero-extended, for `i16`/`u16`).
    fn widen16(&mut self, d: DType, bits: Reg) -> Reg {
        if d.info().reg == RegClass::B16 {
            return bits;
        }
        let r = self.r32();
        let info = d.info();
        self.ins(["cvt", info.arith, info.mem], (r, bits));
        r
    }

    /// 16-bit float `min`/`max` by IEEE `totalOrder` (`crate::elem::rmw`): the bits as signed
    /// integers, the magnitude bits flipped for negative values, compared.
    fn total_order_pick(&mut self, max: bool, r: Reg, old: Reg, b: RegOrConst) {
        let b = self.in_reg(b);
        let mut keys = [old, b].map(|x| {
            let k = self.r32();
            self.ins(["cvt", "s32", "s16"], (k, x));
            k
        });
        for k in &mut keys {
            let (neg, flipped) = (self.new_pred(), self.r32());
            self.ins(["setp", "lt", "s32"], (neg, *k, 0));
            self.ins(["xor", "b32"], (flipped, *k, 32767));
            self.ins(["selp", "b32"], (*k, flipped, *k, neg));
        }
        let take = self.new_pred();
        let cmp = if max { "gt" } else { "lt" };
        self.ins(["setp", cmp, "s32"], (take, keys[1], keys[0]));
        self.ins(["selp", "b16"], (r, b, old, take));
    }

    /// Vector loads and stores of the thread's runs (`vector_check` proved them active and
    /// aligned). Elements of 4 bytes or more travel as themselves (`v4.f32`, `v2.u64`), narrower
    /// ones packed in 32-bit words (16 `u8` in one `v4.b32`).
    pub(super) fn vector_ops(&mut self, plan: &Plan, op: &Op, first: Addr) -> CodegenResult<()> {
        let layout = plan.layout;
        let (v, size) = (layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        for o in 0..layout.outer {
            let run = first.plus((size * o * layout.chunk()) as i64);
            let slots: Vec<usize> = (o * v..(o + 1) * v).collect();
            for (i, chunk) in slots.chunks(lanes).enumerate() {
                let addr = run.plus((i * lanes * size) as i64);
                let sp = self.state_space(plan);
                self.vector_piece(plan, op, chunk, addr, Guard::Always, sp)?;
            }
        }
        Ok(())
    }

    /// Vector loads and stores where the access has no rank-1 range (2-D views, index tiles):
    /// per piece of a run, one vector instruction where at run time all its elements are active,
    /// consecutive in memory and aligned ([`piece_ok`](Self::piece_ok)). Returns, per slot, when
    /// its scalar instruction must still run (`None` when no piece can be a vector).
    pub(super) fn general_vectors(
        &mut self,
        plan: &Plan,
        op: &Op,
        elems: &[(Predicate, Addr)],
    ) -> CodegenResult<Option<Vec<Predicate>>> {
        let (v, size) = (plan.layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        let distributed = matches!(plan.mem, super::access::Mem::Shared { rows: Some(_), .. });
        if plan.uniform || distributed || lanes < 2 || lanes * size < 4 {
            return Ok(None);
        }
        let mut needed = vec![Predicate::True; elems.len()];
        let slots: Vec<usize> = (0..elems.len()).collect();
        for chunk in slots.chunks(lanes) {
            let piece = &elems[chunk[0]..chunk[0] + chunk.len()];
            let Some(ok) = self.piece_ok(piece, size) else {
                continue;
            };
            let sp = self.state_space(plan);
            self.vector_piece(plan, op, chunk, piece[0].1, ok.guard(), sp)?;
            let not_ok = self.not_pred(ok);
            for &s in chunk {
                needed[s] = not_ok;
            }
        }
        Ok(Some(needed))
    }

    /// Whether a piece of a run (consecutive tile elements) can go as one vector: all active,
    /// consecutive addresses (known when they share a base, else tested) and the first aligned
    /// to the vector's size. `None` when some element is never active.
    pub(super) fn piece_ok(
        &mut self,
        piece: &[(Predicate, Addr)],
        size: usize,
    ) -> Option<Predicate> {
        if piece.iter().any(|(act, _)| *act == Predicate::False) {
            return None;
        }
        let size = size as i64;
        let mut ok = Predicate::True;
        for (act, _) in piece {
            ok = self.and_pred(ok, *act);
        }
        let a0 = piece[0].1;
        // Global addresses are 64-bit, shared ones 32-bit offsets in the window.
        let info = int_type(a0.base.class == RegClass::B64);
        let (ty, bits) = (info.arith, info.bit);
        let base0 = self.addr_reg(a0);
        for (i, (_, a)) in piece.iter().enumerate().skip(1) {
            if a.base == a0.base && a.imm == a0.imm.wrapping_add(i as i64 * size) {
                continue;
            }
            let ai = self.addr_reg(*a);
            let t = self.new_reg(a0.base.class);
            self.ins(["sub", ty], (t, ai, base0));
            let p = self.new_pred();
            self.ins(["setp", "eq", ty], (p, t, i as i64 * size));
            ok = self.and_pred(ok, Predicate::Reg(p));
        }
        let t = self.new_reg(a0.base.class);
        let align = piece.len() as i64 * size - 1;
        self.ins(["and", bits], (t, base0, align));
        let p = self.new_pred();
        self.ins(["setp", "eq", ty], (p, t, 0));
        Some(self.and_pred(ok, Predicate::Reg(p)))
    }

    /// The vector path of a distributed tensor's range: per run of the thread (which an aligned
    /// run never leaves: see `vector_check`), its owner and one `mapa`; the vector
    /// instructions then go to the block's own window when it owns the run (no trip through
    /// the cluster's network) and to `.shared::cluster` otherwise. Packed narrow elements
    /// always take `.shared::cluster` (two predicated loads would unpack twice).
    pub(super) fn dist_vector_ops(&mut self, plan: &Plan, op: &Op) -> CodegenResult<()> {
        let Some(d) = &plan.dist_range else {
            return internal("distributed vector path without its range");
        };
        let (m0, rows) = (d.m0, d.rows);
        let layout = plan.layout;
        let (v, size) = (layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        let me = self.cluster_rank_reg();
        for o in 0..layout.outer {
            let c = self.add32(m0, RegOrImm::Imm((o * layout.chunk()) as i32));
            let (local_row, rank) = self.split_rows(c, rows);
            let local = self.shared_address(plan, local_row);
            let mapped = self.map_to_block(local, rank);
            let own = if size < 4 {
                Predicate::False
            } else {
                self.setp32(BinOp::Eq, "u32", rank, RegOrImm::Reg(me))
            };
            let (g_own, g_peer) = (own.guard(), self.not_pred(own).guard());
            let slots: Vec<usize> = (o * v..(o + 1) * v).collect();
            for (i, chunk) in slots.chunks(lanes).enumerate() {
                let step = (i * lanes * size) as i64;
                if own != Predicate::False {
                    let sp = Space::Shared.ptx();
                    self.vector_piece(plan, op, chunk, local.plus(step), g_own, sp)?;
                }
                let sp = self.state_space(plan);
                self.vector_piece(plan, op, chunk, mapped.plus(step), g_peer, sp)?;
            }
        }
        Ok(())
    }

    /// One vector load or store of the slots `chunk` (consecutive elements) at `addr` in state
    /// space `sp`, under guard `g`.
    fn vector_piece(
        &mut self,
        plan: &Plan,
        op: &Op,
        chunk: &[usize],
        addr: Addr,
        g: Guard,
        sp: &'static str,
    ) -> CodegenResult<()> {
        let (size, d) = (plan.size, plan.dtype);
        let packed = size < 4;
        // Elements per word (1 unless packed), words in this instruction.
        let per_word = if packed { 4 / size } else { 1 };
        let per_ins = chunk.len() / per_word;
        let wty = if packed { "b32" } else { d.info().mem };
        // `ld.shared.v4.f32`, `ld.relaxed.cluster.shared::cluster.b32`, ...
        let instr = |kind: &'static str| {
            let mut opcode: Opcode = match op {
                Op::AtomicLoad { sem, scope, .. } | Op::AtomicStore { sem, scope, .. } => {
                    [kind, sem.ptx(), scope.ptx(), sp].into()
                }
                _ => [kind, sp].into(),
            };
            if let Some(v) = super::print::vector_qualifier(per_ins) {
                opcode = opcode.q(v);
            }
            opcode.q(wty)
        };
        match op {
            Op::Load { dst, .. } | Op::AtomicLoad { dst, .. } => {
                let ld = instr("ld");
                if packed {
                    let regs: Vec<Reg> = (0..per_ins).map(|_| self.r32()).collect();
                    self.ins_if(g, ld, (regs.clone(), addr));
                    for (w, wr) in regs.iter().enumerate() {
                        let elems = &chunk[w * per_word..(w + 1) * per_word];
                        let outs: Vec<Reg> = elems.iter().map(|&s| dst[s]).collect();
                        self.unpack_word(d, *wr, &outs);
                    }
                } else {
                    let regs: Vec<Reg> = chunk.iter().map(|&s| dst[s]).collect();
                    self.ins_if(g, ld, (regs, addr));
                }
            }
            Op::Store { value } | Op::AtomicStore { value, .. } => {
                let st = instr("st");
                let mut regs = Vec::with_capacity(per_ins);
                if packed {
                    for w in 0..per_ins {
                        let mut vals = Vec::with_capacity(per_word);
                        for &s in &chunk[w * per_word..(w + 1) * per_word] {
                            let x = self.slot_value(*value, s)?;
                            vals.push(self.store_reg(d, x));
                        }
                        regs.push(self.pack_word(d, &vals));
                    }
                } else {
                    for &s in chunk {
                        let x = self.slot_value(*value, s)?;
                        regs.push(self.in_reg(x));
                    }
                }
                self.ins_if(g, st, (addr, regs));
            }
            Op::Rmw(_) => return internal("vector path for an atomic read-modify-write"),
        }
        Ok(())
    }

    /// The elements of 32-bit word `w` (little endian) into `outs` (registers of `d`).
    fn unpack_word(&mut self, d: DType, w: Reg, outs: &[Reg]) {
        let bits = 32 / outs.len() as u32;
        match d.info().class {
            Class::Float => {
                // Two 16-bit floats.
                self.ins(["mov", "b32"], (Arg::Vector(outs[..2].to_vec()), w));
            }
            Class::Bool => {
                for (j, r) in outs.iter().enumerate() {
                    let t = self.r32();
                    self.ins(["bfe", "u32"], (t, w, j as u32 * bits, bits));
                    self.ins(["setp", "ne", "s32"], (r, t, 0));
                }
            }
            _ => {
                // Extended to 32 bits as the type's registers hold it.
                let ty = d.info().arith;
                for (j, r) in outs.iter().enumerate() {
                    self.ins(["bfe", ty], (r, w, j as u32 * bits, bits));
                }
            }
        }
    }

    /// One 32-bit word from `vals` (registers of `d`, bools already 0/1 words), little endian.
    fn pack_word(&mut self, d: DType, vals: &[Reg]) -> Reg {
        let w = self.r32();
        let bits = 32 / vals.len() as u32;
        if d.is_float() {
            self.ins(["mov", "b32"], (w, Arg::Vector(vals[..2].to_vec())));
            return w;
        }
        self.ins(["mov", "b32"], (w, vals[0]));
        for (j, r) in vals.iter().enumerate().skip(1) {
            self.ins(["bfi", "b32"], (w, r, w, j as u32 * bits, bits));
        }
        w
    }
}

/// The signed integer type of 64-bit (`wide`) or 32-bit registers, for arithmetic on
/// addresses and bit patterns (`s64`, `b64`).
fn int_type(wide: bool) -> &'static crate::dtype::Info {
    if wide {
        DType::I64.info()
    } else {
        DType::I32.info()
    }
}

/// Elements per vector instruction: 16 bytes of them, at most a run of `v`.
fn vector_lanes(size: usize, v: usize) -> usize {
    (16 / size.max(1)).min(v).max(1)
}

/// What the per-element RMWs of one access share: the legality table's row, the state space
/// and the instruction (`red`: the form without a result).
struct RmwInstr {
    row: &'static table::RmwRow,
    space: &'static str,
    instr: String,
    red: bool,
    /// A 16-bit `cas` of an integer held in a 32-bit register: the instruction's result is
    /// 16-bit and widened into the destination afterwards.
    narrow_result: bool,
}

/// The element's alternative in this block's own window (`alt`: whether it is this block's, and
/// its address there) where the instruction can use it: a plain one without a compare operand.
fn owned_alt(
    form: &RmwInstr,
    alt: Option<(Predicate, Addr)>,
    cmp: Option<RegOrConst>,
) -> Option<(Predicate, Addr)> {
    match (alt, form.row.how, cmp) {
        (Some(alt), RmwHow::Direct | RmwHow::NegateAdd, None) if !form.narrow_result => Some(alt),
        _ => None,
    }
}

/// What the 128-bit RMWs of one access share.
struct Pairs<'a> {
    d: DType,
    /// The instruction (`atom.relaxed.gpu.global.cas.b128`).
    instr: String,
    /// Per slot, where it is active: the operand's bits, and the compare operand's for `cas`.
    operands: Vec<Option<(Reg, Option<Reg>)>>,
    /// Per slot, the result where the RMW does not run.
    fallback: Vec<RegOrConst>,
    /// The destination registers, when the result is used.
    out: Option<&'a [Reg]>,
}

/// An RMW instruction on several adjacent elements of a thread's run.
#[derive(Debug, Clone, Copy)]
enum MultiForm {
    /// `red/atom.global.add.v{n}.f32` and the like (sm_90, global memory): `n` lanes.
    Vector(usize),
    /// `red/atom.add.noftz.f16x2`: two 16-bit elements packed in one 32-bit word.
    Packed,
}
