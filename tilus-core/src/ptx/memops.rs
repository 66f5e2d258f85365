//! The instructions of memory operations, per element and per vector (`access.rs` plans the
//! activity and addresses they use).
//!
//! Registers hold elements in their class (`dtype.rs`): narrow integers in 32-bit registers
//! (`ld.u8` zero-extends, `ld.s8` sign-extends, `st.u8` stores the low byte), `f16`/`bf16` in
//! 16-bit ones, `bool` as predicates (one byte, 0 or 1, in memory). Atomics come from the
//! legality table (`crate::table`): the operand is converted to the instruction's register width
//! where they differ (16-bit `cas` of an integer held in 32 bits).

use super::access::{Addr, Op, Plan, Rmw};
use super::emit::{internal, Emitter, Res};
use super::regs::{EVal, PVal, Reg, Val};
use crate::dtype::{Class, DType, RegClass};
use crate::ir::{BinOp, Coord, InactiveResult, Operand, RmwOp, Space};
use crate::table::{self, RmwHow};

impl Emitter<'_> {
    /// Element `slot` of operand `o`, or of a scalar operand for every slot.
    fn slot_val(&mut self, o: Operand, s: usize) -> Res<EVal> {
        let slot = if self.is_tile(o)? { s } else { 0 };
        self.eval(o, slot)
    }

    /// The register to store for element `v` of type `d` (bools as 0/1 words).
    fn store_reg(&mut self, d: DType, v: EVal) -> Reg {
        if d == DType::Bool {
            let p = self.ereg(v);
            let t = self.r32();
            self.line(format!("selp.b32 \t{t}, 1, 0, {p};"));
            return t;
        }
        self.ereg(v)
    }

    /// `ld` of one element of type `d` into `r` (bools through a word and a compare).
    fn load_elem(&mut self, g: &str, instr: &str, d: DType, r: Reg, addr: Addr) {
        let ty = d.info().mem;
        if d == DType::Bool {
            let t = self.r32();
            self.line(format!("{g}{instr}.{ty} \t{t}, {addr};"));
            self.line(format!("{g}setp.ne.s32 \t{r}, {t}, 0;"));
        } else {
            self.line(format!("{g}{instr}.{ty} \t{r}, {addr};"));
        }
    }

    /// `r = v` where the predicate is false (the inactive elements' value).
    fn fill_inactive(&mut self, d: DType, act: PVal, r: Reg, v: EVal) -> Res<()> {
        match act {
            PVal::True => Ok(()),
            PVal::False => self.copy_elem(d, r, v),
            PVal::Reg(p) => {
                let v = match v {
                    // A predicated move of a 16-bit float constant needs a register source.
                    EVal::Const(..) if d.is_half_float() => EVal::Reg(self.ereg(v)),
                    _ => v,
                };
                if d == DType::Bool {
                    let src = self.ereg(v);
                    self.line(format!("@!{p} mov.pred \t{r}, {src};"));
                } else {
                    let ty = d.info().mov_type();
                    self.line(format!("@!{p} mov.{ty} \t{r}, {v};"));
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
        elems: &[(PVal, Addr)],
        needed: Option<&[PVal]>,
        local_alts: &[Option<(PVal, Addr)>],
    ) -> Res<()> {
        let d = plan.dtype;
        let sp = self.state_space(plan);
        let need = |s: usize| needed.map_or(PVal::True, |n| n[s]);
        match op {
            Op::Load { dst, other } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let act = self.pand(*act, need(s));
                    if act != PVal::False {
                        let g = Self::guard(act);
                        self.load_elem(&g, &format!("ld.{sp}"), d, dst[s], *addr);
                    }
                }
                for (s, (act, _)) in elems.iter().enumerate() {
                    let val = self.slot_val(*other, s)?;
                    self.fill_inactive(d, *act, dst[s], val)?;
                }
            }
            Op::Store { value } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let act = self.pand(*act, need(s));
                    if act == PVal::False {
                        continue;
                    }
                    let val = self.slot_val(*value, s)?;
                    let val = self.store_reg(d, val);
                    let g = Self::guard(act);
                    self.line(format!("{g}st.{sp}.{} \t{addr}, {val};", d.info().mem));
                }
            }
            Op::AtomicLoad { dst, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act != PVal::False {
                        let g = Self::guard(*act);
                        let instr = format!("ld.{}.{}.{sp}", sem.ptx(), scope.ptx());
                        self.load_elem(&g, &instr, d, dst[s], *addr);
                    }
                    self.fill_inactive(d, *act, dst[s], EVal::Const(0, d))?;
                }
            }
            Op::AtomicStore { value, sem, scope } => {
                for (s, (act, addr)) in elems.iter().enumerate() {
                    if *act == PVal::False {
                        continue;
                    }
                    let val = self.slot_val(*value, s)?;
                    let val = self.store_reg(d, val);
                    let g = Self::guard(*act);
                    self.line(format!(
                        "{g}st.{}.{}.{sp}.{} \t{addr}, {val};",
                        sem.ptx(),
                        scope.ptx(),
                        d.info().mem
                    ));
                }
            }
            Op::Rmw(rmw) if rmw.pairs => self.rmw_pairs(plan, rmw, elems)?,
            Op::Rmw(rmw) => self.rmw_elems(plan, rmw, elems, local_alts)?,
        }
        Ok(())
    }

    /// The operand of an RMW as a register of the instruction's width (negated for `sub`);
    /// a CAS loop computes with the operand as the element type holds it.
    fn rmw_operand(&mut self, d: DType, row: &table::RmwRow, v: EVal) -> EVal {
        if row.how == RmwHow::CasLoop {
            return v;
        }
        let v = if row.how == RmwHow::NegateAdd {
            match v {
                EVal::Const(bits, _) => {
                    EVal::Const(crate::elem::unary(crate::ir::UnOp::Neg, d, bits), d)
                }
                EVal::Reg(_) => {
                    let r = self.reg_of(d);
                    let _ = self.unary_elem(crate::ir::UnOp::Neg, d, r, v);
                    EVal::Reg(r)
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
    fn atom_width_operand(&mut self, d: DType, row: &table::RmwRow, v: EVal) -> EVal {
        if row.ptx_type == "b16" && d.info().reg == RegClass::B32 {
            let r = self.reg16();
            match v {
                EVal::Const(bits, _) => self.line(format!("mov.b16 \t{r}, {};", bits as u16)),
                EVal::Reg(x) => self.line(format!("cvt.u16.u32 \t{r}, {x};")),
            }
            return EVal::Reg(r);
        }
        match v {
            EVal::Const(..) if d.is_float() => EVal::Reg(self.ereg(v)),
            _ => v,
        }
    }

    fn reg16(&mut self) -> Reg {
        self.regs.new_reg(RegClass::B16)
    }

    /// The RMWs of an access. `local_alts` (distributed shared tensors): per slot, whether the
    /// element is this block's and its address in the block's own window.
    fn rmw_elems(
        &mut self,
        plan: &Plan,
        rmw: &Rmw,
        elems: &[(PVal, Addr)],
        local_alts: &[Option<(PVal, Addr)>],
    ) -> Res<()> {
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
            None => vec![PVal::True; elems.len()],
        };
        for (s, (act, addr)) in elems.iter().enumerate() {
            let cmp = match compare {
                Some(c) => Some(self.slot_val(*c, s)?),
                None => None,
            };
            if *with_output {
                let fallback = match (inactive, cmp) {
                    (InactiveResult::Compare, Some(c)) => c,
                    _ => EVal::Const(0, d),
                };
                self.fill_inactive(d, *act, dst[s], fallback)?;
            }
            let (act, Some(b)) = (self.pand(*act, scalar_needed[s]), bs[s]) else {
                continue;
            };
            if act == PVal::False {
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
                let g = Self::guard(act);
                let ext = if d.is_signed() { "s16" } else { "u16" };
                self.line(format!("{g}cvt.s32.{ext} \t{}, {out};", dst[s]));
            }
        }
        Ok(())
    }

    /// The instruction of an access's RMWs, from the legality table.
    fn rmw_instr_of(&self, plan: &Plan, rmw: &Rmw) -> Res<RmwInstr> {
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
        elems: &[(PVal, Addr)],
    ) -> Res<Vec<Option<EVal>>> {
        let scalar_b = if self.is_tile(values)? {
            None
        } else {
            let v = self.eval(values, 0)?;
            Some(self.rmw_operand(d, row, v))
        };
        let mut bs = Vec::with_capacity(elems.len());
        for (s, (act, _)) in elems.iter().enumerate() {
            bs.push(match (scalar_b, act) {
                (Some(b), _) => Some(b),
                (None, PVal::False) => None,
                (None, _) => {
                    let v = self.slot_val(values, s)?;
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
        (act, addr): (PVal, Addr),
        (is_local, local_addr): (PVal, Addr),
        out: Reg,
        b: EVal,
    ) {
        // Same instruction and scope on the own window, so it is as atomic towards the other
        // blocks' `.shared::cluster` ones.
        let (local_instr, _) =
            table::rmw_ptx(form.row, "shared::cta", rmw.sem, rmw.scope, rmw.with_output);
        let here = self.pand(act, is_local);
        let not_local = self.pnot(is_local);
        let there = self.pand(act, not_local);
        for (p, ins, a) in [(here, &local_instr, local_addr), (there, &form.instr, addr)] {
            if p == PVal::False {
                continue;
            }
            let g = Self::guard(p);
            if form.red {
                self.line(format!("{g}{ins} \t{a}, {b};"));
            } else {
                self.line(format!("{g}{ins} \t{out}, {a}, {b};"));
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
        (act, addr): (PVal, Addr),
        out: Reg,
        (b, cmp): (EVal, Option<EVal>),
    ) -> Res<()> {
        let (d, row, instr) = (plan.dtype, form.row, &form.instr);
        let q = (form.space, rmw.sem, rmw.scope, rmw.with_output);
        let g = Self::guard(act);
        match row.how {
            RmwHow::FloatMinMax => self.float_minmax(plan, row, q, act, addr, out, b)?,
            RmwHow::CasLoop => self.cas_loop(d, row, q, act, addr, out, b)?,
            _ => match (form.red, cmp) {
                (true, _) => self.line(format!("{g}{instr} \t{addr}, {b};")),
                (false, Some(c)) => {
                    let c = self.atom_width_operand(d, row, c);
                    self.line(format!("{g}{instr} \t{out}, {addr}, {c}, {b};"));
                }
                (false, None) => self.line(format!("{g}{instr} \t{out}, {addr}, {b};")),
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
            if let Some(most) = table::vector_rmw_lanes(row, self.k.target) {
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
        elems: &[(PVal, Addr)],
        bs: &[Option<EVal>],
        dst: &[Reg],
    ) -> Res<Vec<PVal>> {
        let (lanes, (instr, red)) = match form {
            MultiForm::Vector(lanes) => {
                self.min_version = self.min_version.max(table::VECTOR_RMW_PTX);
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
        let mut needed = vec![PVal::True; elems.len()];
        for (piece, slots) in elems.chunks(lanes).enumerate() {
            let first = piece * lanes;
            let Some(ok) = self.piece_ok(slots, plan.size) else {
                continue;
            };
            let a0 = slots[0].1;
            let g = Self::guard(ok);
            let mut operands = Vec::with_capacity(lanes);
            for b in &bs[first..first + lanes] {
                let Some(b) = *b else {
                    return internal("vector RMW of an inactive slot");
                };
                operands.push(self.ereg(b).to_string());
            }
            let operands = match form {
                MultiForm::Vector(_) => format!("{{{}}}", operands.join(", ")),
                MultiForm::Packed => {
                    let w = self.r32();
                    self.line(format!("mov.b32 \t{w}, {{{}}};", operands.join(", ")));
                    w.to_string()
                }
            };
            if red {
                self.line(format!("{g}{instr} \t{a0}, {operands};"));
            } else {
                // An unused result still needs distinct registers in the vector.
                let outs: Vec<String> = (first..first + lanes)
                    .map(|s| match with_output {
                        true => dst[s].to_string(),
                        false => self.reg_of(plan.dtype).to_string(),
                    })
                    .collect();
                match form {
                    MultiForm::Vector(_) => {
                        let outs = outs.join(", ");
                        self.line(format!("{g}{instr} \t{{{outs}}}, {a0}, {operands};"));
                    }
                    MultiForm::Packed => {
                        let w = self.r32();
                        self.line(format!("{g}{instr} \t{w}, {a0}, {operands};"));
                        self.line(format!("{g}mov.b32 \t{{{}}}, {w};", outs.join(", ")));
                    }
                }
            }
            // The scalar instructions of these slots run only where the vector one did not.
            let not_ok = self.pnot(ok);
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
    fn rmw_pairs(&mut self, plan: &Plan, rmw: &Rmw, elems: &[(PVal, Addr)]) -> Res<()> {
        let (op, scope) = (rmw.op, rmw.scope);
        let d = plan.dtype;
        let Some(row) = table::rmw_row(op, d).filter(|r| r.pairs) else {
            return internal(format!("no 128-bit atomic `{}` on `{d}`", op.name()));
        };
        let instr = table::rmw_pair_ptx(row, self.state_space(plan), rmw.sem, scope);
        self.min_version = self.min_version.max(table::pair_rmw_ptx(scope));
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
                Some(c) => Some(self.slot_val(*c, s)?),
                None => None,
            };
            fallback.push(match (&rmw.inactive, c) {
                (InactiveResult::Compare, Some(c)) => c,
                _ => EVal::Const(0, d),
            });
            operands.push(match act {
                PVal::False => None,
                _ => {
                    let b = self.slot_val(rmw.values, s)?;
                    Some((self.bits64(b), c.map(|c| self.bits64(c))))
                }
            });
        }
        let out = rmw.with_output.then_some(rmw.dst.as_slice());
        if plan.layout.v >= 2 {
            for s in (0..elems.len()).step_by(2) {
                let addr = elems[s].1;
                let ok = self.piece_ok(&elems[s..s + 2], 8);
                let (Some(ok), Some((b0, c0)), Some((b1, c1))) = (ok, operands[s], operands[s + 1])
                else {
                    self.pair_results(d, PVal::False, out, &[s, s + 1], None, &fallback)?;
                    continue;
                };
                let c = c0.zip(c1).map(|(x, y)| [x, y]);
                let old = self.atom_pair(&instr, ok, addr, [b0, b1], c);
                self.pair_results(d, ok, out, &[s, s + 1], Some(old), &fallback)?;
            }
            return Ok(());
        }
        // Runs of one: the partner of this thread's element is the same slot of lane `lane ^ 1`.
        let parity = self.r32();
        self.line(format!("and.b32 \t{parity}, {}, 1;", self.tid));
        let first = self.pred();
        self.line(format!("setp.eq.u32 \t{first}, {parity}, 0;"));
        // Where the pair starts, back from this thread's element (0 or 8 bytes), and where the
        // partner's element is (8 bytes on or back).
        let class = elems.first().map_or(RegClass::B32, |(_, a)| a.base.class);
        let w = if class == RegClass::B64 { "b64" } else { "b32" };
        let (back, apart) = (self.regs.new_reg(class), self.regs.new_reg(class));
        self.line(format!("selp.{w} \t{back}, 0, 8, {first};"));
        self.line(format!("selp.{w} \t{apart}, 8, -8, {first};"));
        let first = PVal::Reg(first);
        for (s, (act, addr)) in elems.iter().enumerate() {
            let Some((b, c)) = operands[s] else {
                self.pair_results(d, PVal::False, out, &[s], None, &fallback)?;
                continue;
            };
            let partner_act = match act {
                PVal::Reg(p) => {
                    let r = self.r32();
                    self.line(format!("selp.u32 \t{r}, 1, 0, {p};"));
                    let r = self.shfl_bfly(r, 1);
                    let q = self.pred();
                    self.line(format!("setp.ne.u32 \t{q}, {r}, 0;"));
                    PVal::Reg(q)
                }
                known => *known,
            };
            let pb = self.shfl_bfly(b, 1);
            let pc = c.map(|c| self.shfl_bfly(c, 1));
            let mut ok = self.pand(*act, partner_act);
            let aligned = self.aligned_at(*addr, Some(back));
            ok = self.pand(ok, aligned);
            if !contiguous {
                let mine = self.addr_reg(*addr);
                let theirs = self.shfl_bfly(mine, 1);
                let t = self.regs.new_reg(class);
                let ty = if class == RegClass::B64 { "s64" } else { "s32" };
                self.line(format!("sub.{ty} \t{t}, {theirs}, {mine};"));
                let p = self.pred();
                self.line(format!("setp.eq.{ty} \t{p}, {t}, {apart};"));
                ok = self.pand(ok, PVal::Reg(p));
            }
            let go = self.pand(ok, first);
            let old = self.atom_pair(&instr, go, *addr, [b, pb], c.zip(pc).map(|(x, y)| [x, y]));
            if out.is_some() {
                // The second thread's result is the first thread's high half.
                let theirs = self.shfl_bfly(old[1], 1);
                let (PVal::Reg(f), mine) = (first, self.r64()) else {
                    return internal("thread parity folded");
                };
                self.line(format!("selp.b64 \t{mine}, {}, {theirs}, {f};", old[0]));
                self.pair_results(d, ok, out, &[s], Some([mine, mine]), &fallback)?;
            }
        }
        Ok(())
    }

    /// A 64-bit element value as a `.b64` register (an `f64` register moved, a constant put).
    fn bits64(&mut self, v: EVal) -> Reg {
        match v {
            EVal::Reg(r) if r.class == RegClass::B64 => r,
            EVal::Reg(r) => {
                let t = self.r64();
                self.line(format!("mov.b64 \t{t}, {r};"));
                t
            }
            EVal::Const(bits, _) => {
                let t = self.r64();
                self.line(format!("mov.b64 \t{t}, {bits};"));
                t
            }
        }
    }

    /// Whether `addr - back` is 16-byte aligned (`back`: 0, or a register of the address's
    /// width holding 0 or 8).
    fn aligned_at(&mut self, addr: Addr, back: Option<Reg>) -> PVal {
        let wide = addr.base.class == RegClass::B64;
        let (ty, bits) = if wide { ("s64", "b64") } else { ("s32", "b32") };
        let a = self.addr_reg(addr);
        let t = self.regs.new_reg(addr.base.class);
        self.line(format!("and.{bits} \t{t}, {a}, 15;"));
        let p = self.pred();
        match back {
            Some(r) => self.line(format!("setp.eq.{ty} \t{p}, {t}, {r};")),
            None => self.line(format!("setp.eq.{ty} \t{p}, {t}, 0;")),
        }
        PVal::Reg(p)
    }

    /// One 128-bit atomic under `guard` on the pair `b` (low element first), comparing with
    /// `c` for `cas`; returns the old pair's registers (undefined where the guard is false).
    fn atom_pair(
        &mut self,
        instr: &str,
        guard: PVal,
        addr: Addr,
        b: [Reg; 2],
        c: Option<[Reg; 2]>,
    ) -> [Reg; 2] {
        let old = [self.r64(), self.r64()];
        if guard == PVal::False {
            return old;
        }
        let g = Self::guard(guard);
        let qb = self.regs.new_reg(RegClass::B128);
        self.line(format!("mov.b128 \t{qb}, {{{}, {}}};", b[0], b[1]));
        let qo = self.regs.new_reg(RegClass::B128);
        match c {
            Some(c) => {
                let qc = self.regs.new_reg(RegClass::B128);
                self.line(format!("mov.b128 \t{qc}, {{{}, {}}};", c[0], c[1]));
                self.line(format!("{g}{instr} \t{qo}, {addr}, {qc}, {qb};"));
            }
            None => self.line(format!("{g}{instr} \t{qo}, {addr}, {qb};")),
        }
        self.line(format!("{g}mov.b128 \t{{{}, {}}}, {qo};", old[0], old[1]));
        old
    }

    /// The results of the slots of a pair (when the RMW's result is used): the old values
    /// where `ok`, else the slot's `fallback`.
    fn pair_results(
        &mut self,
        d: DType,
        ok: PVal,
        out: Option<&[Reg]>,
        slots: &[usize],
        old: Option<[Reg; 2]>,
        fallback: &[EVal],
    ) -> Res<()> {
        let Some(dst) = out else { return Ok(()) };
        let g = Self::guard(ok);
        for (k, &s) in slots.iter().enumerate() {
            if let (Some(old), true) = (old, ok != PVal::False) {
                self.line(format!("{g}mov.b64 \t{}, {};", dst[s], old[k]));
            }
            self.fill_inactive(d, ok, dst[s], fallback[s])?;
        }
        Ok(())
    }

    /// An address as one register of its base's width (the base where there is no offset).
    fn addr_reg(&mut self, a: Addr) -> Reg {
        if a.imm == 0 {
            return a.base;
        }
        let r = self.regs.new_reg(a.base.class);
        let ty = if a.base.class == RegClass::B64 {
            "s64"
        } else {
            "s32"
        };
        self.line(format!("add.{ty} \t{r}, {}, {};", a.base, a.imm));
        r
    }

    /// Float `min`/`max` on the bit patterns (IEEE `totalOrder`, `crate::elem::rmw`): the signed
    /// integer op for operands with a clear sign bit, the opposite unsigned one otherwise.
    #[allow(clippy::too_many_arguments)]
    fn float_minmax(
        &mut self,
        plan: &Plan,
        row: &table::RmwRow,
        (space, sem, scope, with_output): (&str, crate::ir::Sem, crate::ir::Scope, bool),
        act: PVal,
        addr: Addr,
        out: Reg,
        b: EVal,
    ) -> Res<()> {
        let wide = plan.dtype.bits() == 64;
        let (sty, bit) = if wide { ("s64", "b64") } else { ("s32", "b32") };
        // The operand's bits in an integer register, and its sign.
        let bits = if wide { self.r64() } else { self.r32() };
        let b = self.ereg(b);
        self.line(format!("mov.{bit} \t{bits}, {b};"));
        let neg = self.pred();
        self.line(format!("setp.lt.{sty} \t{neg}, {bits}, 0;"));
        // Guards: active and non-negative / active and negative.
        let (gp, gn) = match act {
            PVal::True => (format!("@!{neg} "), format!("@{neg} ")),
            PVal::False => return Ok(()),
            PVal::Reg(p) => {
                let (pp, pn) = (self.pred(), self.pred());
                self.line(format!("and.pred \t{pn}, {p}, {neg};"));
                self.line(format!("not.pred \t{pp}, {neg};"));
                self.line(format!("and.pred \t{pp}, {pp}, {p};"));
                (format!("@{pp} "), format!("@{pn} "))
            }
        };
        let (pos, red) = table::rmw_ptx(row, space, sem, scope, with_output);
        let (negi, _) = table::float_minmax_negative(row, space, sem, scope, with_output);
        if red {
            self.line(format!("{gp}{pos} \t{addr}, {bits};"));
            self.line(format!("{gn}{negi} \t{addr}, {bits};"));
        } else {
            let old = if wide { self.r64() } else { self.r32() };
            self.line(format!("{gp}{pos} \t{old}, {addr}, {bits};"));
            self.line(format!("{gn}{negi} \t{old}, {addr}, {bits};"));
            if with_output {
                let g = Self::guard(act);
                self.line(format!("{g}mov.{bit} \t{out}, {old};"));
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
        (space, sem, scope, with_output): (&str, crate::ir::Sem, crate::ir::Scope, bool),
        act: PVal,
        addr: Addr,
        out: Reg,
        b: EVal,
    ) -> Res<()> {
        if d.bits() != 16 {
            return internal(format!("no CAS loop for `{d}`"));
        }
        let (cas, _) = table::rmw_ptx(row, space, sem, scope, true);
        let (top, skip) = (self.new_label("cas_loop"), self.new_label("cas_done"));
        match act {
            PVal::False => return Ok(()),
            PVal::Reg(p) => self.line(format!("@!{p} bra \t{skip};")),
            PVal::True => {}
        }
        let (old, new, seen) = (self.reg16(), self.reg16(), self.reg16());
        self.line(format!("ld.{space}.b16 \t{old}, {addr};"));
        self.label(&top);
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
                self.binary_elem(bin, d, new_v, EVal::Reg(old_v), b)?;
            }
            (op, true) => return internal(format!("no CAS loop for float `{}`", op.name())),
        }
        if new_v.class == RegClass::B16 {
            self.line(format!("mov.b16 \t{new}, {new_v};"));
        } else {
            self.line(format!("cvt.u16.u32 \t{new}, {new_v};"));
        }
        self.line(format!("{cas} \t{seen}, {addr}, {old}, {new};"));
        let again = self.pred();
        self.line(format!("setp.ne.b16 \t{again}, {seen}, {old};"));
        self.line(format!("mov.b16 \t{old}, {seen};"));
        self.line(format!("@{again} bra \t{top};"));
        if with_output {
            let v = self.widen16(d, old);
            self.copy_elem(d, out, EVal::Reg(v))?;
        }
        self.label(&skip);
        Ok(())
    }

    /// A 16-bit element's bits as the element type holds its values (a 32-bit register,
    /// sign- or zero-extended, for `i16`/`u16`).
    fn widen16(&mut self, d: DType, bits: Reg) -> Reg {
        if d.info().reg == RegClass::B16 {
            return bits;
        }
        let r = self.r32();
        let ext = if d.is_signed() { "s16" } else { "u16" };
        let to = if d.is_signed() { "s32" } else { "u32" };
        self.line(format!("cvt.{to}.{ext} \t{r}, {bits};"));
        r
    }

    /// 16-bit float `min`/`max` by IEEE `totalOrder` (`crate::elem::rmw`): the bits as signed
    /// integers, the magnitude bits flipped for negative values, compared.
    fn total_order_pick(&mut self, max: bool, r: Reg, old: Reg, b: EVal) {
        let b = self.ereg(b);
        let mut keys = [old, b].map(|x| {
            let k = self.r32();
            self.line(format!("cvt.s32.s16 \t{k}, {x};"));
            k
        });
        for k in &mut keys {
            let (neg, flipped) = (self.pred(), self.r32());
            self.line(format!("setp.lt.s32 \t{neg}, {k}, 0;"));
            self.line(format!("xor.b32 \t{flipped}, {k}, 32767;"));
            self.line(format!("selp.b32 \t{k}, {flipped}, {k}, {neg};"));
        }
        let take = self.pred();
        let cmp = if max { "gt" } else { "lt" };
        self.line(format!(
            "setp.{cmp}.s32 \t{take}, {}, {};",
            keys[1], keys[0]
        ));
        self.line(format!("selp.b16 \t{r}, {b}, {old}, {take};"));
    }

    /// Vector loads and stores of the thread's runs (`vector_check` proved them active and
    /// aligned). Elements of 4 bytes or more travel as themselves (`v4.f32`, `v2.u64`), narrower
    /// ones packed in 32-bit words (16 `u8` in one `v4.b32`).
    pub(super) fn vector_ops(&mut self, plan: &Plan, op: &Op, first: Addr) -> Res<()> {
        let layout = plan.layout;
        let (v, size) = (layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        for o in 0..layout.outer {
            let run = first.plus((size * o * layout.chunk()) as i64);
            let slots: Vec<usize> = (o * v..(o + 1) * v).collect();
            for (i, chunk) in slots.chunks(lanes).enumerate() {
                let addr = run.plus((i * lanes * size) as i64);
                let sp = self.state_space(plan);
                self.vector_piece(plan, op, chunk, addr, "", sp)?;
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
        elems: &[(PVal, Addr)],
    ) -> Res<Option<Vec<PVal>>> {
        let (v, size) = (plan.layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        let distributed = matches!(plan.mem, super::access::Mem::Shared { rows: Some(_), .. });
        if plan.uniform || distributed || lanes < 2 || lanes * size < 4 {
            return Ok(None);
        }
        let mut needed = vec![PVal::True; elems.len()];
        let slots: Vec<usize> = (0..elems.len()).collect();
        for chunk in slots.chunks(lanes) {
            let piece = &elems[chunk[0]..chunk[0] + chunk.len()];
            let Some(ok) = self.piece_ok(piece, size) else {
                continue;
            };
            let sp = self.state_space(plan);
            self.vector_piece(plan, op, chunk, piece[0].1, &Self::guard(ok), sp)?;
            let not_ok = self.pnot(ok);
            for &s in chunk {
                needed[s] = not_ok;
            }
        }
        Ok(Some(needed))
    }

    /// Whether a piece of a run (consecutive tile elements) can go as one vector: all active,
    /// consecutive addresses (known when they share a base, else tested) and the first aligned
    /// to the vector's size. `None` when some element is never active.
    pub(super) fn piece_ok(&mut self, piece: &[(PVal, Addr)], size: usize) -> Option<PVal> {
        if piece.iter().any(|(act, _)| *act == PVal::False) {
            return None;
        }
        let size = size as i64;
        let mut ok = PVal::True;
        for (act, _) in piece {
            ok = self.pand(ok, *act);
        }
        let a0 = piece[0].1;
        // Global addresses are 64-bit, shared ones 32-bit offsets in the window.
        let (ty, bits) = if a0.base.class == RegClass::B64 {
            ("s64", "b64")
        } else {
            ("s32", "b32")
        };
        let base0 = self.addr_reg(a0);
        for (i, (_, a)) in piece.iter().enumerate().skip(1) {
            if a.base == a0.base && a.imm == a0.imm.wrapping_add(i as i64 * size) {
                continue;
            }
            let ai = self.addr_reg(*a);
            let t = self.regs.new_reg(a0.base.class);
            self.line(format!("sub.{ty} \t{t}, {ai}, {base0};"));
            let p = self.pred();
            self.line(format!("setp.eq.{ty} \t{p}, {t}, {};", i as i64 * size));
            ok = self.pand(ok, PVal::Reg(p));
        }
        let t = self.regs.new_reg(a0.base.class);
        let align = piece.len() as i64 * size - 1;
        self.line(format!("and.{bits} \t{t}, {base0}, {align};"));
        let p = self.pred();
        self.line(format!("setp.eq.{ty} \t{p}, {t}, 0;"));
        Some(self.pand(ok, PVal::Reg(p)))
    }

    /// `!p`.
    pub(super) fn pnot(&mut self, p: PVal) -> PVal {
        match p {
            PVal::True => PVal::False,
            PVal::False => PVal::True,
            PVal::Reg(r) => {
                let q = self.pred();
                self.line(format!("not.pred \t{q}, {r};"));
                PVal::Reg(q)
            }
        }
    }

    /// The vector path of a distributed tensor's range: per run of the thread (which an aligned
    /// run never leaves: see `vector_check`), its owner and one `mapa`; the vector
    /// instructions then go to the block's own window when it owns the run (no trip through
    /// the cluster's network) and to `.shared::cluster` otherwise. Packed narrow elements
    /// always take `.shared::cluster` (two predicated loads would unpack twice).
    pub(super) fn dist_vector_ops(&mut self, plan: &Plan, op: &Op) -> Res<()> {
        let Some(d) = &plan.dist_range else {
            return internal("distributed vector path without its range");
        };
        let (m0, rows) = (d.m0, d.rows);
        let layout = plan.layout;
        let (v, size) = (layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        let me = self.cluster_rank_reg();
        for o in 0..layout.outer {
            let c = self.vadd(m0, Val::Imm((o * layout.chunk()) as i32));
            let (local_row, rank) = self.split_rows(c, rows);
            let local = self.shared_address(plan, local_row);
            let mapped = self.map_to_block(local, rank);
            let own = if size < 4 {
                PVal::False
            } else {
                self.vsetp("eq", "u32", rank, Val::Reg(me))
            };
            let (g_own, g_peer) = (Self::guard(own), Self::guard(self.pnot(own)));
            let slots: Vec<usize> = (o * v..(o + 1) * v).collect();
            for (i, chunk) in slots.chunks(lanes).enumerate() {
                let step = (i * lanes * size) as i64;
                if own != PVal::False {
                    let sp = Space::Shared.ptx();
                    self.vector_piece(plan, op, chunk, local.plus(step), &g_own, sp)?;
                }
                let sp = self.state_space(plan);
                self.vector_piece(plan, op, chunk, mapped.plus(step), &g_peer, sp)?;
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
        g: &str,
        sp: &str,
    ) -> Res<()> {
        let (size, d) = (plan.size, plan.dtype);
        let packed = size < 4;
        // Elements per word (1 unless packed), words in this instruction.
        let per_word = if packed { 4 / size } else { 1 };
        let per_ins = chunk.len() / per_word;
        let wty = if packed { "b32" } else { d.info().mem };
        let vec = if per_ins > 1 {
            format!(".v{per_ins}")
        } else {
            String::new()
        };
        // `ld.shared`, `ld.relaxed.cluster.shared::cluster`, ...
        let instr = |kind: &str| match op {
            Op::AtomicLoad { sem, scope, .. } | Op::AtomicStore { sem, scope, .. } => {
                format!("{kind}.{}.{}.{sp}", sem.ptx(), scope.ptx())
            }
            _ => format!("{kind}.{sp}"),
        };
        match op {
            Op::Load { dst, .. } | Op::AtomicLoad { dst, .. } => {
                let ld = instr("ld");
                if packed {
                    let regs: Vec<Reg> = (0..per_ins).map(|_| self.r32()).collect();
                    let list = reg_list(&regs);
                    self.line(format!("{g}{ld}{vec}.{wty} \t{list}, {addr};"));
                    for (w, wr) in regs.iter().enumerate() {
                        let elems = &chunk[w * per_word..(w + 1) * per_word];
                        let outs: Vec<Reg> = elems.iter().map(|&s| dst[s]).collect();
                        self.unpack_word(d, *wr, &outs);
                    }
                } else {
                    let regs: Vec<Reg> = chunk.iter().map(|&s| dst[s]).collect();
                    let list = reg_list(&regs);
                    self.line(format!("{g}{ld}{vec}.{wty} \t{list}, {addr};"));
                }
            }
            Op::Store { value } | Op::AtomicStore { value, .. } => {
                let st = instr("st");
                let mut regs = Vec::with_capacity(per_ins);
                if packed {
                    for w in 0..per_ins {
                        let mut vals = Vec::with_capacity(per_word);
                        for &s in &chunk[w * per_word..(w + 1) * per_word] {
                            let x = self.slot_val(*value, s)?;
                            vals.push(self.store_reg(d, x));
                        }
                        regs.push(self.pack_word(d, &vals));
                    }
                } else {
                    for &s in chunk {
                        let x = self.slot_val(*value, s)?;
                        regs.push(self.ereg(x));
                    }
                }
                let list = reg_list(&regs);
                self.line(format!("{g}{st}{vec}.{wty} \t{addr}, {list};"));
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
                self.line(format!("mov.b32 \t{{{}, {}}}, {w};", outs[0], outs[1]));
            }
            Class::Bool => {
                for (j, r) in outs.iter().enumerate() {
                    let t = self.r32();
                    self.line(format!("bfe.u32 \t{t}, {w}, {}, {bits};", j as u32 * bits));
                    self.line(format!("setp.ne.s32 \t{r}, {t}, 0;"));
                }
            }
            c => {
                let ty = if c == Class::Signed { "s32" } else { "u32" };
                for (j, r) in outs.iter().enumerate() {
                    self.line(format!("bfe.{ty} \t{r}, {w}, {}, {bits};", j as u32 * bits));
                }
            }
        }
    }

    /// One 32-bit word from `vals` (registers of `d`, bools already 0/1 words), little endian.
    fn pack_word(&mut self, d: DType, vals: &[Reg]) -> Reg {
        let w = self.r32();
        let bits = 32 / vals.len() as u32;
        if d.is_float() {
            self.line(format!("mov.b32 \t{w}, {{{}, {}}};", vals[0], vals[1]));
            return w;
        }
        self.line(format!("mov.b32 \t{w}, {};", vals[0]));
        for (j, r) in vals.iter().enumerate().skip(1) {
            self.line(format!(
                "bfi.b32 \t{w}, {r}, {w}, {}, {bits};",
                j as u32 * bits
            ));
        }
        w
    }
}

/// Elements per vector instruction: 16 bytes of them, at most a run of `v`.
fn vector_lanes(size: usize, v: usize) -> usize {
    (16 / size.max(1)).min(v).max(1)
}

fn reg_list(regs: &[Reg]) -> String {
    if regs.len() == 1 {
        return regs[0].to_string();
    }
    let names: Vec<String> = regs.iter().map(|r| r.to_string()).collect();
    format!("{{{}}}", names.join(", "))
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
    alt: Option<(PVal, Addr)>,
    cmp: Option<EVal>,
) -> Option<(PVal, Addr)> {
    match (alt, form.row.how, cmp) {
        (Some(alt), RmwHow::Direct | RmwHow::NegateAdd, None) if !form.narrow_result => Some(alt),
        _ => None,
    }
}

/// An RMW instruction on several adjacent elements of a thread's run.
#[derive(Debug, Clone, Copy)]
enum MultiForm {
    /// `red/atom.global.add.v{n}.f32` and the like (sm_90, global memory): `n` lanes.
    Vector(usize),
    /// `red/atom.add.noftz.f16x2`: two 16-bit elements packed in one 32-bit word.
    Packed,
}
