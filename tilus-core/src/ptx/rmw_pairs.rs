//! 128-bit RMWs on element pairs (`atom.cas.b128`, `atom.exch.b128`; sm_90): a pair of
//! adjacent 64-bit elements as one atomic, where both are active, adjacent in memory and the
//! first is 16-byte aligned.

use super::access::{Addr, Plan, Rmw};
use super::code::{Arg, Opcode};
use super::emit::{internal, CodegenResult, Emitter};
use super::memops::int_type;
use super::regs::Reg;
use super::value::{Predicate, RegOrConst};
use crate::dtype::{DType, RegClass};
use crate::ir::{Coord, InactiveResult};
use crate::table;

impl Emitter<'_> {
    /// 128-bit RMWs (`atom.cas.b128`, `atom.exch.b128`) on the element pairs `2k, 2k + 1` of
    /// the tile. A pair runs when both elements are active, the second addresses the memory
    /// element after the first, and the first is 16-byte aligned (`Inst::AtomicRmw::pairs`);
    /// skipped pairs give the inactive result. With runs of two or more elements per thread a
    /// pair is two slots of one thread; with runs of one (`v == 1`) it is the same slot of
    /// threads `2j` and `2j + 1`, which trade operands, addresses and results by `shfl`.
    pub(super) fn rmw_pairs(
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
