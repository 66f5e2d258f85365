//! The pieces the tile collectives are built from: tiles staged in the scratch in row-major
//! order and read back, elements loaded and stored in the type a collective computes in,
//! counted loops, and warp shuffles.
//!
//! Every collective along an axis works on the tile in row-major order in shared memory, so
//! the element of line `l` at axis index `k` is at `base(l) + k * inner` whatever the layout;
//! which threads fold which elements is the plan's business (`crate::collective`), not the
//! layout's.

use super::super::code::{Address, Guard, Opcode};
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::inst::arith_opcode;
use super::super::regs::{Class, Reg};
use super::super::value::{Predicate, RegOrConst, RegOrImm};
use super::scratch_at;
use crate::collective::AxisView;
use crate::dtype::DType;
use crate::ir::{BinOp, Operand, Ty, VarId};
use crate::layout::Layout;

/// The type a collective computes in: `bool` as 0/1 in `u32`, 16-bit floats in `f32`, narrow
/// integers in 32 bits (which wraps like the narrow type once stored).
pub(super) fn acc_type(d: DType) -> DType {
    match d {
        DType::Bool => DType::U32,
        d => d.info().compute,
    }
}

/// The instruction combining two values of type `acc` with `op`.
pub(super) fn acc_opcode(op: BinOp, acc: DType) -> CodegenResult<Opcode> {
    let info = acc.info();
    match arith_opcode(op, acc.is_float(), info.arith, info.bit_reg()) {
        Some(o) => Ok(o),
        None => internal(format!("no instruction combines `{acc}` with `{op:?}`")),
    }
}

/// How many slots of a thread's run of `layout` move in one vector access to the scratch array
/// at offset `off`: 4 or 2 elements of 4 bytes, 2 of 8 (at most 16 bytes, aligned to their
/// size: `parts` aligns arrays to 16 bytes, and a run starts at a multiple of `v` elements),
/// else 1. Narrower types stay scalar: their elements do not fill a register each.
pub(super) fn vector_group(layout: &Layout, d: DType, off: usize) -> usize {
    let size = d.size_bytes();
    if d == DType::Bool || !(size == 4 || size == 8) {
        return 1;
    }
    [4usize, 2]
        .into_iter()
        .find(|&g| g * size <= 16 && layout.v.is_multiple_of(g) && off.is_multiple_of(g * size))
        .unwrap_or(1)
}

/// The qualifier of a vector access of `g` (2 or 4) elements (`print::vector_qualifier`).
pub(super) fn vector_of(g: usize) -> CodegenResult<&'static str> {
    match super::super::print::vector_qualifier(g) {
        Some(q) => Ok(q),
        None => internal(format!("no vector qualifier for {g} element(s)")),
    }
}

/// The scratch split into arrays of the given byte sizes, each 16-byte aligned: their offsets.
pub(super) fn parts(e: &mut Emitter<'_>, sizes: &[usize]) -> Vec<usize> {
    let mut offs = Vec::with_capacity(sizes.len());
    let mut total = 0;
    for s in sizes {
        offs.push(total);
        total += s.div_ceil(16) * 16;
    }
    let base = e.scratch(total.max(16));
    offs.into_iter().map(|o| base + o).collect()
}

impl Emitter<'_> {
    /// The address of element `idx` of the array of `size`-byte elements at scratch offset
    /// `off`.
    pub(super) fn elem_at(&mut self, off: usize, size: usize, idx: RegOrImm) -> Address {
        let smem = self.smem_base();
        match idx {
            RegOrImm::Imm(c) => scratch_at(smem, off + size * c as usize),
            RegOrImm::Reg(r) => {
                let a = self.r32();
                self.ins(["mad", "lo", "s32"], (a, r, size, smem));
                scratch_at(a, off)
            }
        }
    }

    /// The row-major index of slot `s` of this thread in `layout` (`tid * v + slot_const`).
    pub(super) fn flat_index(&mut self, layout: &Layout, s: usize) -> RegOrImm {
        let base = self.tid_times(layout.v);
        self.add32(
            RegOrImm::Reg(base),
            RegOrImm::Imm(layout.slot_const(s) as i32),
        )
    }

    /// Stores the elements this thread holds of tile `x` (type `d`, laid out as `layout`) at
    /// their row-major index of the array at scratch offset `off` (memory form). A thread's
    /// run goes out in vector stores where it can ([`vector_group`]): scalar stores of runs
    /// would hit each bank `v` times a warp.
    pub(super) fn stage(
        &mut self,
        x: VarId,
        d: DType,
        layout: &Layout,
        off: usize,
    ) -> CodegenResult<()> {
        let size = d.size_bytes();
        let base = self.tid_times(layout.v);
        let smem = self.smem_base();
        let a = self.r32();
        self.ins(["mad", "lo", "s32"], (a, base, size, smem));
        let g = vector_group(layout, d, off);
        for s in (0..layout.slots()).step_by(g) {
            let ex = self.chunk_exists(layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let at = off + size * layout.slot_const(s);
            if g == 1 {
                let val = self.reg_or_const(Operand::Var(x), s)?;
                self.st_scratch(ex.guard(), d, a, at, val);
                continue;
            }
            let mut regs = Vec::with_capacity(g);
            for k in 0..g {
                let val = self.reg_or_const(Operand::Var(x), s + k)?;
                regs.push(self.in_reg(val));
            }
            let vec = vector_of(g)?;
            self.ins_if(
                ex.guard(),
                ["st", "shared", vec, d.info().mem],
                (scratch_at(a, at), regs),
            );
        }
        Ok(())
    }

    /// Loads the elements this thread owns of `dst` (type `d`) from their row-major index of
    /// the array at scratch offset `off`, in vector loads where it can (as [`Emitter::stage`]);
    /// a scalar `dst` is element 0, in every thread.
    pub(super) fn unstage(&mut self, dst: VarId, d: DType, off: usize) -> CodegenResult<()> {
        let size = d.size_bytes();
        let rs = self.dst_regs(dst)?;
        let smem = self.smem_base();
        let Ty::Tile { shape, .. } = self.ty(dst)? else {
            self.ld_scratch(Guard::Always, d, rs[0], smem, off);
            return Ok(());
        };
        let layout = self.layout_of(shape);
        let base = self.tid_times(layout.v);
        let a = self.r32();
        self.ins(["mad", "lo", "s32"], (a, base, size, smem));
        let g = vector_group(&layout, d, off);
        for (s, run) in rs.chunks(g).enumerate().map(|(k, r)| (k * g, r)) {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let at = off + size * layout.slot_const(s);
            if g == 1 {
                self.ld_scratch(ex.guard(), d, run[0], a, at);
            } else {
                let vec = vector_of(g)?;
                self.ins_if(
                    ex.guard(),
                    ["ld", "shared", vec, d.info().mem],
                    (run.to_vec(), scratch_at(a, at)),
                );
            }
        }
        Ok(())
    }

    /// Loads an element of type `d` (memory form) at `addr` into a register of
    /// [`acc_type`]`(d)`.
    pub(super) fn ld_acc(&mut self, d: DType, addr: Address) -> Reg {
        match d {
            DType::Bool => {
                let r = self.r32();
                self.ins(["ld", "shared", "u8"], (r, addr));
                r
            }
            DType::F16 | DType::BF16 => {
                let h = self.new_reg(Class::B16);
                self.ins(["ld", "shared", "b16"], (h, addr));
                self.widen_f32(d, RegOrConst::Reg(h))
            }
            _ => {
                let r = self.reg_of(acc_type(d));
                self.ins(["ld", "shared", d.info().mem], (r, addr));
                r
            }
        }
    }

    /// Stores `v` (a register of [`acc_type`]`(d)`) as an element of type `d` at `addr`, where
    /// `g` holds; 16-bit floats are rounded here, once.
    pub(super) fn st_acc(&mut self, g: Guard, d: DType, addr: Address, v: Reg) {
        match d {
            DType::F16 | DType::BF16 => {
                let h = self.new_reg(Class::B16);
                self.narrow_f32(d, v, h);
                self.ins_if(g, ["st", "shared", "b16"], (addr, h));
            }
            DType::Bool => self.ins_if(g, ["st", "shared", "u8"], (addr, v)),
            _ => self.ins_if(g, ["st", "shared", d.info().mem], (addr, v)),
        }
    }

    /// A register of type `acc` holding the constant `bits` (of type `acc`).
    pub(super) fn acc_const(&mut self, acc: DType, bits: u64) -> CodegenResult<Reg> {
        let r = self.reg_of(acc);
        self.copy_elem(acc, r, RegOrConst::Const(bits, acc))?;
        Ok(r)
    }

    /// `for k in start..end` stepping by `step`, `k` in a 32-bit register (signed compare).
    /// Threads may run it different numbers of times, so the body must not hold a barrier or a
    /// shuffle unless every thread runs the same count.
    pub(super) fn counted_loop(
        &mut self,
        start: RegOrImm,
        end: RegOrImm,
        step: u32,
        body: impl FnOnce(&mut Self, Reg) -> CodegenResult<()>,
    ) -> CodegenResult<()> {
        let k = self.r32();
        self.ins(["mov", "u32"], (k, start));
        let top = self.new_label("loop");
        let done = self.new_label("loop_end");
        let p = self.new_pred();
        self.ins(["setp", "ge", "s32"], (p, k, end));
        self.branch(Guard::If(p), done);
        self.label(top);
        body(self, k)?;
        self.ins(["add", "s32"], (k, k, step));
        self.ins(["setp", "lt", "s32"], (p, k, end));
        self.branch(Guard::If(p), top);
        self.label(done);
        Ok(())
    }

    /// `shfl.sync.{mode}` of `v` with lane operand `b` and clamp operand `c`, all 32 lanes
    /// (64-bit values in two halves).
    pub(super) fn shfl(&mut self, mode: &'static str, v: Reg, b: RegOrImm, c: u32) -> Reg {
        let t = self.new_reg(v.class);
        match v.class {
            Class::B64 | Class::F64 => {
                let (lo, hi) = (self.r32(), self.r32());
                self.ins(
                    ["mov", "b64"],
                    (super::super::code::Arg::Vector(vec![lo, hi]), v),
                );
                self.ins(["shfl", "sync", mode, "b32"], (lo, lo, b, c, -1));
                self.ins(["shfl", "sync", mode, "b32"], (hi, hi, b, c, -1));
                self.ins(
                    ["mov", "b64"],
                    (t, super::super::code::Arg::Vector(vec![lo, hi])),
                );
            }
            _ => self.ins(["shfl", "sync", mode, "b32"], (t, v, b, c, -1)),
        }
        t
    }

    /// The row-major index of element 0 of line `line` of `view` (`(a * len) * inner + b` for
    /// `line = a * inner + b`).
    pub(super) fn line_base(&mut self, view: &AxisView, line: Reg) -> Reg {
        let r = self.r32();
        if view.inner == 1 {
            self.ins(["mul", "lo", "s32"], (r, line, view.len));
            return r;
        }
        let a = self.div_u32(line.into(), view.inner);
        let b = self.rem_u32(line.into(), view.inner);
        self.ins(["mad", "lo", "s32"], (r, a, view.len * view.inner, b));
        r
    }

    /// `base + k * inner`: the row-major index of axis index `k` of a line.
    pub(super) fn along(&mut self, base: Reg, k: Reg, inner: usize) -> Reg {
        let r = self.r32();
        self.ins(["mad", "lo", "s32"], (r, k, inner, base));
        r
    }

    /// A predicate register: `a op b` on 32-bit unsigned values.
    pub(super) fn pred_u32(&mut self, op: &'static str, a: Reg, b: RegOrImm) -> Reg {
        let p = self.new_pred();
        self.ins(["setp", op, "u32"], (p, a, b));
        p
    }
}
