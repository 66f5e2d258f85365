//! Operations that move data between threads: `Broadcast` and `Reduce`. Both go through the
//! back end's shared scratch (after the user's allocations, see `Emitter::scratch`) and end with
//! a barrier, so the next collective may reuse the scratch immediately.
//!
//! Elements travel through scratch in their memory form (`bool` as a byte). Reductions are
//! computed in the type's compute type (`f16`/`bf16` in `f32`, rounded once at the end; narrow
//! integers in 32 bits, which wraps the same way) in a fixed order the emulator reproduces
//! (`emu/ops.rs`): each thread folds its slots in order from the identity, each warp combines
//! lanes by a butterfly, then the warp partials are folded in warp order.

mod count_order;
mod order;
mod radix;
mod rank;
mod reduce_axis;
mod scan;
mod scan_regs;
mod staging;

pub(super) use order::Placed;

use super::code::{Address, Base, Guard, Opcode};
use super::emit::{internal, CodegenResult, Emitter};
use super::inst::arith_opcode;
use super::regs::Reg;
use super::value::{Predicate, RegOrConst, RegOrImm};
use crate::dtype::DType;
use crate::ir::{numel, BinOp, Operand, ReduceOp, Ty, VarId};

impl Emitter<'_> {
    /// `st.shared` of element `v` (of type `d`) at `[base+off]`, guarded by `g`.
    pub(in crate::ptx) fn st_scratch(
        &mut self,
        g: Guard,
        d: DType,
        base: Reg,
        off: usize,
        v: RegOrConst,
    ) {
        let v = if d == DType::Bool {
            let p = self.in_reg(v);
            let t = self.r32();
            self.ins(["selp", "b32"], (t, 1, 0, p));
            RegOrConst::Reg(t)
        } else {
            RegOrConst::Reg(self.in_reg(v))
        };
        self.ins_if(
            g,
            ["st", "shared", d.info().mem],
            (scratch_at(base, off), v),
        );
    }

    /// `ld.shared` of an element of type `d` from `[base+off]` into `r`, guarded by `g`.
    pub(in crate::ptx) fn ld_scratch(&mut self, g: Guard, d: DType, r: Reg, base: Reg, off: usize) {
        if d == DType::Bool {
            let t = self.r32();
            self.ins_if(g, ["ld", "shared", "u8"], (t, scratch_at(base, off)));
            self.ins_if(g, ["setp", "ne", "s32"], (r, t, 0));
        } else {
            self.ins_if(
                g,
                ["ld", "shared", d.info().mem],
                (r, scratch_at(base, off)),
            );
        }
    }

    /// Numpy broadcast of tile `x` to `shape`: owners write the source to scratch, then every
    /// thread reads the source element of each destination element it owns.
    pub fn broadcast(&mut self, d: VarId, x: VarId, shape: &[usize]) -> CodegenResult<()> {
        let src_ty = self.ty(x)?;
        let dtype = src_ty.dtype();
        let Ty::Tile {
            shape: src_shape, ..
        } = src_ty
        else {
            // A scalar source: every element is the scalar.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| e.copy_elem(dtype, r, v[0]));
        };
        if src_shape.len() != shape.len() {
            return internal("broadcast between different ranks");
        }
        if numel(src_shape) == numel(shape) {
            // Nothing to replicate: same elements, same layout.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| e.copy_elem(dtype, r, v[0]));
        }
        let size = dtype.size_bytes();
        let src_layout = self.layout_of(src_shape);
        let scratch = self.scratch(size * src_layout.n);
        let smem = self.smem_base();
        self.stage(x, dtype, &src_layout, scratch)?;
        self.barrier();
        // Source flat index of each destination element: its coordinates with broadcast axes
        // dropped, dotted with the source's row-major strides.
        let dst_layout = self.layout_of(shape);
        let rank = shape.len();
        let mut src_strides = vec![1usize; rank];
        for k in (0..rank.saturating_sub(1)).rev() {
            src_strides[k] = src_strides[k + 1] * src_shape[k + 1];
        }
        let dbase = self.tid_times(dst_layout.v);
        let rs = self.dst_regs(d)?;
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&dst_layout, s / dst_layout.v);
            if ex == Predicate::False {
                continue;
            }
            let f = self.add32(
                RegOrImm::Reg(dbase),
                RegOrImm::Imm(dst_layout.slot_const(s) as i32),
            );
            let mut idx = RegOrImm::Imm(0);
            for k in 0..rank {
                if src_shape[k] == 1 {
                    continue;
                }
                let stride: usize = shape[k + 1..].iter().product();
                let p = match f {
                    RegOrImm::Imm(c) => RegOrImm::Imm((c as usize / stride % shape[k]) as i32),
                    RegOrImm::Reg(_) => {
                        let q = self.div_u32(f, stride);
                        if k == 0 {
                            q
                        } else {
                            self.rem_u32(q, shape[k])
                        }
                    }
                };
                let term = self.mul32(p, RegOrImm::Imm(src_strides[k] as i32));
                idx = self.add32(idx, term);
            }
            let g = ex.guard();
            let (addr_base, off) = match idx {
                RegOrImm::Imm(c) => (smem, scratch + size * c as usize),
                RegOrImm::Reg(ir) => {
                    let a = self.r32();
                    self.ins(["mad", "lo", "s32"], (a, ir, size, smem));
                    (a, scratch)
                }
            };
            self.ld_scratch(g, dtype, *r, addr_base, off);
        }
        self.barrier();
        Ok(())
    }

    /// Reduce a tile to a block-uniform scalar: per-thread partial over existing slots, warp
    /// butterfly, per-warp partials through scratch, then every thread combines the partials.
    /// A block's `any`/`all` of `bool` is folded by the barrier itself (`bar.red`) instead.
    pub fn reduce(&mut self, d: VarId, op: ReduceOp, x: VarId) -> CodegenResult<()> {
        let x_ty = self.ty(x)?;
        let dtype = x_ty.dtype();
        let Ty::Tile { shape, .. } = x_ty else {
            // Reducing a scalar is the scalar itself.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| e.copy_elem(dtype, r, v[0]));
        };
        // The accumulator's type: bools as 0/1 in 32 bits, 16-bit floats in f32.
        let acc_t = match dtype {
            DType::Bool => DType::U32,
            d => d.info().compute,
        };
        let half = dtype.is_half_float();
        let (ins, identity) = reduce_op(op, acc_t, dtype)?;
        let layout = self.layout_of(shape);
        let acc = self.reg_of(acc_t);
        self.copy_elem(acc_t, acc, RegOrConst::Const(identity, acc_t))?;
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let v = self.reg_or_const(Operand::Var(x), s)?;
            let val = self.widen_for_fold(dtype, v);
            self.ins_if(ex.guard(), ins.clone(), (acc, acc, val));
        }
        let warps = self.threads() / 32;
        let any_all = matches!(op, ReduceOp::Or | ReduceOp::And);
        if dtype == DType::Bool && any_all && warps > 1 && !self.in_solo_loop() {
            // `any`/`all` of a block: the barrier itself folds one predicate a thread
            // (`bar.red`), in place of the butterfly, the partials in scratch and two barriers.
            let red = if op == ReduceOp::Or { "or" } else { "and" };
            let mine = self.new_pred();
            self.ins(["setp", "ne", "u32"], (mine, acc, 0));
            let r = self.dst_regs(d)?[0];
            self.ins(["bar", "red", red, "pred"], (r, 0, mine));
            return Ok(());
        }
        self.fold_warp(op, acc_t, acc, &ins);
        if self.solo_fold_as_block(acc_t) {
            let id = self.reg_or_const(Operand::Imm(identity, acc_t), 0)?;
            let id = self.in_reg(id);
            self.ins(ins.clone(), (acc, acc, id));
        }
        // In a loop that warp 0 runs alone the butterfly has given every lane the result.
        if warps > 1 && !self.in_solo_loop() {
            let size = acc_t.size_bytes();
            let scratch = self.scratch(size * warps);
            let smem = self.smem_base();
            let lane = self.lane();
            let warp = self.warp();
            let p = self.new_pred();
            let a = self.r32();
            let mem = acc_t.info().mem;
            self.ins(["setp", "eq", "u32"], (p, lane, 0));
            self.ins(["mad", "lo", "s32"], (a, warp, size, smem));
            self.ins_if(
                Guard::If(p),
                ["st", "shared", mem],
                (scratch_at(a, scratch), acc),
            );
            self.barrier();
            // Every thread reads all partials (broadcast reads, no bank conflicts), in a fixed
            // order so all threads get the same value.
            let parts: Vec<Reg> = (0..warps).map(|_| self.reg_of(acc_t)).collect();
            for (w, part) in parts.iter().enumerate() {
                let off = scratch + size * w;
                self.ins(["ld", "shared", mem], (part, scratch_at(smem, off)));
            }
            self.copy_elem(acc_t, acc, RegOrConst::Reg(parts[0]))?;
            for part in &parts[1..] {
                self.ins(ins.clone(), (acc, acc, part));
            }
            self.barrier();
        }
        let r = self.dst_regs(d)?[0];
        match dtype {
            DType::Bool => self.ins(["setp", "ne", "s32"], (r, acc, 0)),
            _ if half => self.narrow_f32(dtype, acc, r),
            _ => {
                self.copy_elem(acc_t, r, RegOrConst::Reg(acc))?;
                self.normalize(dtype, r);
            }
        }
        Ok(())
    }

    /// Folds `acc` (of type `acc_t`, folded by `ins`) over the warp's 32 lanes with `op`, every
    /// lane getting the result: one `redux.sync` where the target has it (sm_80 on, 32-bit
    /// integers), else a butterfly of five shuffles. Kernels that name no target get it in their
    /// sm_90 variant. (An H100, 2^28 `i32`, builds before and after in one call: `select_if`,
    /// whose look-back folds two 32-lane windows a step, 602.8 / 608.1 -> 596.7 / 596.5 us;
    /// `unique` 1568.2 -> 1521.4, `run_length_encode` 2598.6 -> 2499.3; the scan and the sort
    /// within noise.)
    pub(super) fn fold_warp(&mut self, op: ReduceOp, acc_t: DType, acc: Reg, ins: &Opcode) {
        if let Some(redux) = self.redux(op, acc_t) {
            self.ins(redux, (acc, acc, -1));
            return;
        }
        for off in [16, 8, 4, 2, 1] {
            let t = self.shfl_bfly(acc, off);
            self.ins(ins.clone(), (acc, acc, t));
        }
    }

    /// `redux.sync` folding a warp's `acc` values with `op`, where the target has it.
    fn redux(&self, op: ReduceOp, acc: DType) -> Option<Opcode> {
        if self.kernel().target.0 < 80 || acc.size_bytes() != 4 || acc.is_float() {
            return None;
        }
        let ty = if acc.is_signed() { "s32" } else { "u32" };
        let (name, ty) = match op {
            ReduceOp::Sum => ("add", ty),
            ReduceOp::Min => ("min", ty),
            ReduceOp::Max => ("max", ty),
            ReduceOp::Or => ("or", "b32"),
            ReduceOp::And => ("and", "b32"),
        };
        Some(["redux", "sync", name, ty].into())
    }

    /// The value of `v` in lane `lane ^ off` (`shfl.sync.bfly`; 64-bit values in two halves).
    pub(super) fn shfl_bfly(&mut self, v: Reg, off: u32) -> Reg {
        self.shfl("bfly", v, RegOrImm::Imm(off as i32), 31)
    }

    /// An element of tile or scalar `v` (type `d`) in a register of the type a reduction
    /// computes in (`staging::acc_type`): `bool` as 0/1, 16-bit floats widened to `f32`.
    pub(super) fn widen_for_fold(&mut self, d: DType, v: RegOrConst) -> Reg {
        match d {
            DType::Bool => {
                let p = self.in_reg(v);
                let t = self.r32();
                self.ins(["selp", "b32"], (t, 1, 0, p));
                t
            }
            _ if d.is_half_float() => self.widen_f32(d, v),
            _ => self.in_reg(v),
        }
    }
}

/// The instruction folding one element into an accumulator of type `acc`, and the identity
/// (bits of `acc`'s type) for a reduction of `d` elements.
fn reduce_op(op: ReduceOp, acc: DType, d: DType) -> CodegenResult<(Opcode, u64)> {
    let info = acc.info();
    let id = crate::elem::cast(d, acc, crate::elem::reduce_identity(op, d));
    // The binary operator that folds; `or`/`and` are bitwise whatever the type.
    let (bin, float) = match op {
        ReduceOp::Sum => (BinOp::Add, acc.is_float()),
        ReduceOp::Min => (BinOp::Min, acc.is_float()),
        ReduceOp::Max => (BinOp::Max, acc.is_float()),
        ReduceOp::Or => (BinOp::Or, false),
        ReduceOp::And => (BinOp::And, false),
    };
    match arith_opcode(bin, float, info.arith, info.bit_reg()) {
        Some(ins) => Ok((ins, id)),
        None => internal(format!(
            "no instruction folds a `{op:?}` reduction of `{acc}`"
        )),
    }
}

/// `[base+off]` in the scratch area, written with its offset even when it is 0.
fn scratch_at(base: Reg, off: usize) -> Address {
    Address {
        base: Base::Reg(base),
        offset: Some(off as i64),
    }
}
