//! The instructions of memory operations, per element and per vector (`access.rs` plans the
//! activity and addresses they use; read-modify-writes are `rmw.rs` and `rmw_pairs.rs`).
//!
//! Registers hold elements in their class (`dtype.rs`): narrow integers in 32-bit registers
//! (`ld.u8` zero-extends, `ld.s8` sign-extends, `st.u8` stores the low byte), `f16`/`bf16` in
//! 16-bit ones, `bool` as predicates (one byte, 0 or 1, in memory).

use super::access::{Addr, Op, Plan};
use super::code::{Arg, Guard, Opcode};
use super::emit::{internal, CodegenResult, Emitter};
use super::regs::Reg;
use super::value::{Predicate, RegOrConst, RegOrImm};
use crate::dtype::{Class, DType, RegClass};
use crate::ir::{BinOp, Space};

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
    pub(super) fn fill_inactive(
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
                // The inactive elements' value goes in first, unpredicated, and the loads
                // overwrite it where active: a fill after the loads would read their
                // registers (ptxas makes it a select), so every masked load would wait for
                // memory where it is issued rather than where its value is used (H100, with
                // the coalescing pass: the radix sort's keys 12.3 -> 10.9 ms). Where vector
                // loads have already written some elements (a gather's runs tested at run
                // time), an unpredicated fill would overwrite them, so the fill stays after the
                // loads and covers only the inactive elements (predicated and moved first, it
                // changed no measured gather: BENCHMARKS.md, session 38). Bools load through a
                // word and keep the fill after.
                let fill_first = d != DType::Bool && needed.is_none();
                for (s, (act, _)) in elems.iter().enumerate() {
                    if fill_first && *act != Predicate::True {
                        let val = self.slot_value(*other, s)?;
                        self.copy_elem(d, dst[s], val)?;
                    }
                }
                for (s, (act, addr)) in elems.iter().enumerate() {
                    let act = self.and_pred(*act, need(s));
                    if act != Predicate::False {
                        let g = act.guard();
                        self.load_elem(g, ["ld", sp].into(), d, dst[s], *addr);
                    }
                }
                if !fill_first {
                    for (s, (act, _)) in elems.iter().enumerate() {
                        let val = self.slot_value(*other, s)?;
                        self.fill_inactive(d, *act, dst[s], val)?;
                    }
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
            Op::Prefetch => {
                for (act, addr) in elems {
                    if *act != Predicate::False {
                        self.ins_if(act.guard(), ["prefetch", "global", "L2"], (*addr,));
                    }
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

    /// An address as one register of its base's width (the base where there is no offset).
    pub(super) fn addr_reg(&mut self, a: Addr) -> Reg {
        if a.imm == 0 {
            return a.base;
        }
        let r = self.new_reg(a.base.class);
        let ty = int_type(a.base.class == RegClass::B64).arith;
        self.ins(["add", ty], (r, a.base, a.imm));
        r
    }

    /// Vector loads and stores of the thread's runs (`vector_check` proved them active and
    /// aligned). Elements of 4 bytes or more travel as themselves (`v4.f32`, `v2.u64`), narrower
    /// ones packed in 32-bit words (16 `u8` in one `v4.b32`).
    pub(super) fn vector_ops(&mut self, plan: &Plan, op: &Op, first: Addr) -> CodegenResult<()> {
        let layout = plan.layout;
        let runs: Vec<Addr> = (0..layout.outer)
            .map(|o| first.plus((plan.size * o * layout.chunk()) as i64))
            .collect();
        self.vector_runs(plan, op, &runs)
    }

    /// Vector loads and stores of the thread's runs, run `o` (slots `o * v..(o + 1) * v`)
    /// starting at `runs[o]`, unguarded.
    pub(super) fn vector_runs(&mut self, plan: &Plan, op: &Op, runs: &[Addr]) -> CodegenResult<()> {
        let (v, size) = (plan.layout.v, plan.size);
        let lanes = vector_lanes(size, v);
        let sp = self.state_space(plan);
        for (o, run) in runs.iter().enumerate() {
            let slots: Vec<usize> = (o * v..(o + 1) * v).collect();
            for (i, chunk) in slots.chunks(lanes).enumerate() {
                let addr = run.plus((i * lanes * size) as i64);
                self.vector_piece(plan, op, chunk, addr, Guard::Always, sp)?;
            }
        }
        Ok(())
    }

    /// Whether the address in `base` (a global or a shared one) is a multiple of `bytes` (a
    /// power of two).
    pub(super) fn aligned(&mut self, base: Reg, bytes: usize) -> Predicate {
        let info = int_type(base.class == RegClass::B64);
        let t = self.new_reg(base.class);
        self.ins(["and", info.bit], (t, base, bytes as i64 - 1));
        let p = self.new_pred();
        self.ins(["setp", "eq", info.arith], (p, t, 0));
        Predicate::Reg(p)
    }

    /// Vector loads and stores where the access has no rank-1 range (2-D views, index tiles):
    /// per piece of a run, one vector instruction where at run time all its elements are active,
    /// consecutive in memory and aligned ([`piece_ok`](Self::piece_ok)). Returns, per slot, when
    /// its scalar instruction must still run (`None` when no piece can be a vector, or for a
    /// store under a mask of the user's: see below).
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
        // A store under a mask of the user's goes element by element: its pieces are whole only
        // where the mask holds for every element, which for a mask computed from the data (a
        // compaction's keep flags) is rare, and the test costs more than it saves (the
        // comparison compaction's static SASS, `select_cmp_i32`: 2136 -> 1888 instructions).
        if plan.access.mask.is_some() && matches!(op, Op::Store { .. }) {
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
        let ty = info.arith;
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
        let aligned = self.aligned(base0, piece.len() * size as usize);
        Some(self.and_pred(ok, aligned))
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
    pub(super) fn vector_piece(
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
            Op::Prefetch => return internal("vector path for a prefetch"),
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
pub(super) fn int_type(wide: bool) -> &'static crate::dtype::Info {
    if wide {
        DType::I64.info()
    } else {
        DType::I32.info()
    }
}

/// Elements per vector instruction: 16 bytes of them, at most a run of `v`.
pub(super) fn vector_lanes(size: usize, v: usize) -> usize {
    (16 / size.max(1)).min(v).max(1)
}
