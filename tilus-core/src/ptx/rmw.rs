//! Atomic read-modify-writes of tiles, per element (the instruction the legality table
//! `crate::table` has, or an emulation: float `min`/`max` on the bit patterns, a CAS loop) and,
//! where a thread's run of elements turns out contiguous at run time, as one vector or packed
//! instruction. The operand is converted to the instruction's register width where they differ
//! (16-bit `cas` of an integer held in 32 bits). 128-bit RMWs on element pairs are
//! `rmw_pairs.rs`.

use super::access::{Addr, Plan, Rmw};
use super::code::{Arg, Guard, Opcode};
use super::emit::{internal, CodegenResult, Emitter};
use super::memops::int_type;
use super::regs::Reg;
use super::value::{Predicate, RegOrConst};
use crate::dtype::{DType, RegClass};
use crate::ir::{BinOp, InactiveResult, Operand, RmwOp};
use crate::table::{self, RmwHow};

impl Emitter<'_> {
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
    pub(super) fn rmw_elems(
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
        let g = act.guard();
        let at = RmwElem { act, addr, out, b };
        match row.how {
            RmwHow::FloatMinMax => self.float_minmax(rmw, form, at)?,
            RmwHow::CasLoop => self.cas_loop(rmw, form, at)?,
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

    /// Float `min`/`max` on the bit patterns (IEEE `totalOrder`, `crate::elem::rmw`): the signed
    /// integer op for operands with a clear sign bit, the opposite unsigned one otherwise.
    fn float_minmax(&mut self, rmw: &Rmw, form: &RmwInstr, at: RmwElem) -> CodegenResult<()> {
        let RmwElem { act, addr, out, b } = at;
        let wide = form.row.dtype.bits() == 64;
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
        // The instruction of the form is the one for a clear sign bit.
        let (sem, scope, with_output) = (rmw.sem, rmw.scope, rmw.with_output);
        let (negi, _) = table::float_minmax_negative(form.row, form.space, sem, scope, with_output);
        let (pos, negi) = (Opcode::table(form.instr.clone()), Opcode::table(negi));
        if form.red {
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
    fn cas_loop(&mut self, rmw: &Rmw, form: &RmwInstr, at: RmwElem) -> CodegenResult<()> {
        let (RmwElem { act, addr, out, b }, d) = (at, form.row.dtype);
        if d.bits() != 16 {
            return internal(format!("no CAS loop for `{d}`"));
        }
        let (row, space) = (form.row, form.space);
        let (cas, _) = table::rmw_ptx(row, space, rmw.sem, rmw.scope, true);
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
        if rmw.with_output {
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

/// One element's RMW: where it runs, its address, its result register and its operand.
#[derive(Debug, Clone, Copy)]
struct RmwElem {
    act: Predicate,
    addr: Addr,
    out: Reg,
    b: RegOrConst,
}

/// An RMW instruction on several adjacent elements of a thread's run.
#[derive(Debug, Clone, Copy)]
enum MultiForm {
    /// `red/atom.global.add.v{n}.f32` and the like (sm_90, global memory): `n` lanes.
    Vector(usize),
    /// `red/atom.add.noftz.f16x2`: two 16-bit elements packed in one 32-bit word.
    Packed,
}
