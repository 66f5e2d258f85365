//! Operations that move data between threads: `Broadcast` and `Reduce`. Both go through the
//! back end's shared scratch (after the user's allocations, see `Emitter::scratch`) and end with
//! a barrier, so the next collective may reuse the scratch immediately.
//!
//! Elements travel through scratch in their memory form (`bool` as a byte). Reductions are
//! computed in the type's compute type (`f16`/`bf16` in `f32`, rounded once at the end; narrow
//! integers in 32 bits, which wraps the same way) in a fixed order the emulator reproduces
//! (`emu/ops.rs`): each thread folds its slots in order from the identity, each warp combines
//! lanes by a butterfly, then the warp partials are folded in warp order.

use super::emit::{internal, Emitter, Res};
use super::regs::{Class, EVal, PVal, Reg, Val};
use crate::dtype::DType;
use crate::ir::{numel, Operand, ReduceOp, Ty, VarId};

impl Emitter<'_> {
    /// `st.shared` of element `v` (of type `d`) at `[base+off]`, guarded by `g`.
    fn st_scratch(&mut self, g: &str, d: DType, base: Reg, off: usize, v: EVal) {
        let v = if d == DType::Bool {
            let p = self.ereg(v);
            let t = self.r32();
            self.line(format!("selp.b32 \t{t}, 1, 0, {p};"));
            EVal::Reg(t)
        } else {
            EVal::Reg(self.ereg(v))
        };
        self.line(format!(
            "{g}st.shared.{} \t[{base}+{off}], {v};",
            d.info().mem
        ));
    }

    /// `ld.shared` of an element of type `d` from `[base+off]` into `r`, guarded by `g`.
    fn ld_scratch(&mut self, g: &str, d: DType, r: Reg, base: Reg, off: usize) {
        if d == DType::Bool {
            let t = self.r32();
            self.line(format!("{g}ld.shared.u8 \t{t}, [{base}+{off}];"));
            self.line(format!("{g}setp.ne.s32 \t{r}, {t}, 0;"));
        } else {
            self.line(format!(
                "{g}ld.shared.{} \t{r}, [{base}+{off}];",
                d.info().mem
            ));
        }
    }

    /// Numpy broadcast of tile `x` to `shape`: owners write the source to scratch, then every
    /// thread reads the source element of each destination element it owns.
    pub fn broadcast(&mut self, d: VarId, x: VarId, shape: &[usize]) -> Res<()> {
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
        // Owners store the source (tid * v is the first index of the thread's slots).
        let base = self.tid_times(src_layout.v);
        let a = self.r32();
        self.line(format!("mad.lo.s32 \t{a}, {base}, {size}, {smem};"));
        for s in 0..src_layout.slots() {
            let ex = self.chunk_exists(&src_layout, s / src_layout.v);
            if ex == PVal::False {
                continue;
            }
            let val = self.eval(Operand::Var(x), s)?;
            let off = scratch + size * src_layout.slot_const(s);
            let g = Self::guard(ex);
            self.st_scratch(&g, dtype, a, off, val);
        }
        self.line("bar.sync \t0;");
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
            if ex == PVal::False {
                continue;
            }
            let f = self.vadd(Val::Reg(dbase), Val::Imm(dst_layout.slot_const(s) as i32));
            let mut idx = Val::Imm(0);
            for k in 0..rank {
                if src_shape[k] == 1 {
                    continue;
                }
                let stride: usize = shape[k + 1..].iter().product();
                let p = match f {
                    Val::Imm(c) => Val::Imm((c as usize / stride % shape[k]) as i32),
                    Val::Reg(fr) => {
                        let q = self.r32();
                        if stride == 1 {
                            self.line(format!("rem.u32 \t{q}, {fr}, {};", shape[k]));
                        } else if k == 0 {
                            self.line(format!("div.u32 \t{q}, {fr}, {stride};"));
                        } else {
                            self.line(format!("div.u32 \t{q}, {fr}, {stride};"));
                            self.line(format!("rem.u32 \t{q}, {q}, {};", shape[k]));
                        }
                        Val::Reg(q)
                    }
                };
                let term = self.vmul(p, Val::Imm(src_strides[k] as i32));
                idx = self.vadd(idx, term);
            }
            let g = Self::guard(ex);
            let (addr_base, off) = match idx {
                Val::Imm(c) => (smem, scratch + size * c as usize),
                Val::Reg(ir) => {
                    let a = self.r32();
                    self.line(format!("mad.lo.s32 \t{a}, {ir}, {size}, {smem};"));
                    (a, scratch)
                }
            };
            self.ld_scratch(&g, dtype, *r, addr_base, off);
        }
        self.line("bar.sync \t0;");
        Ok(())
    }

    /// Reduce a tile to a block-uniform scalar: per-thread partial over existing slots, warp
    /// butterfly, per-warp partials through scratch, then every thread combines the partials.
    pub fn reduce(&mut self, d: VarId, op: ReduceOp, x: VarId) -> Res<()> {
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
        let (ins, identity) = reduce_op(op, acc_t, dtype);
        let layout = self.layout_of(shape);
        let acc = self.reg_of(acc_t);
        self.copy_elem(acc_t, acc, EVal::Const(identity, acc_t))?;
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == PVal::False {
                continue;
            }
            let v = self.eval(Operand::Var(x), s)?;
            let val = match dtype {
                DType::Bool => {
                    let p = self.ereg(v);
                    let t = self.r32();
                    self.line(format!("selp.b32 \t{t}, 1, 0, {p};"));
                    t
                }
                _ if half => self.widen_f32(dtype, v),
                _ => self.ereg(v),
            };
            self.line(format!("{}{ins} \t{acc}, {acc}, {val};", Self::guard(ex)));
        }
        for off in [16, 8, 4, 2, 1] {
            let t = self.shfl_bfly(acc, off);
            self.line(format!("{ins} \t{acc}, {acc}, {t};"));
        }
        let warps = self.threads / 32;
        if warps > 1 {
            let size = acc_t.size_bytes();
            let scratch = self.scratch(size * warps);
            let smem = self.smem_base();
            let lane = self.lane();
            let warp = self.warp();
            let p = self.pred();
            let a = self.r32();
            let mem = acc_t.info().mem;
            self.line(format!("setp.eq.u32 \t{p}, {lane}, 0;"));
            self.line(format!("mad.lo.s32 \t{a}, {warp}, {size}, {smem};"));
            self.line(format!("@{p} st.shared.{mem} \t[{a}+{scratch}], {acc};"));
            self.line("bar.sync \t0;");
            // Every thread reads all partials (broadcast reads, no bank conflicts), in a fixed
            // order so all threads get the same value.
            let parts: Vec<Reg> = (0..warps).map(|_| self.reg_of(acc_t)).collect();
            for (w, part) in parts.iter().enumerate() {
                let off = scratch + size * w;
                self.line(format!("ld.shared.{mem} \t{part}, [{smem}+{off}];"));
            }
            self.copy_elem(acc_t, acc, EVal::Reg(parts[0]))?;
            for part in &parts[1..] {
                self.line(format!("{ins} \t{acc}, {acc}, {part};"));
            }
            self.line("bar.sync \t0;");
        }
        let r = self.dst_regs(d)?[0];
        match dtype {
            DType::Bool => self.line(format!("setp.ne.s32 \t{r}, {acc}, 0;")),
            _ if half => self.narrow_f32(dtype, acc, r),
            _ => {
                self.copy_elem(acc_t, r, EVal::Reg(acc))?;
                self.normalize(dtype, r);
            }
        }
        Ok(())
    }

    /// The value of `v` in lane `lane ^ off` (`shfl.sync.bfly`; 64-bit values in two halves).
    pub(super) fn shfl_bfly(&mut self, v: Reg, off: u32) -> Reg {
        let t = self.regs.new_reg(v.class);
        match v.class {
            Class::B64 | Class::F64 => {
                let (lo, hi) = (self.r32(), self.r32());
                self.line(format!("mov.b64 \t{{{lo}, {hi}}}, {v};"));
                self.line(format!("shfl.sync.bfly.b32 \t{lo}, {lo}, {off}, 31, -1;"));
                self.line(format!("shfl.sync.bfly.b32 \t{hi}, {hi}, {off}, 31, -1;"));
                self.line(format!("mov.b64 \t{t}, {{{lo}, {hi}}};"));
            }
            _ => self.line(format!("shfl.sync.bfly.b32 \t{t}, {v}, {off}, 31, -1;")),
        }
        t
    }
}

/// The instruction folding one element into an accumulator of type `acc`, and the identity
/// (bits of `acc`'s type) for a reduction of `d` elements.
fn reduce_op(op: ReduceOp, acc: DType, d: DType) -> (String, u64) {
    let info = acc.info();
    let (ty, bit) = (info.arith, info.bit_reg());
    let float = acc.is_float();
    let id = crate::elem::cast(d, acc, crate::elem::reduce_identity(op, d));
    let ins = match (op, float) {
        (ReduceOp::Sum, true) => format!("add.rn.{ty}"),
        (ReduceOp::Sum, false) => format!("add.{ty}"),
        (ReduceOp::Min, _) => format!("min.{ty}"),
        (ReduceOp::Max, _) => format!("max.{ty}"),
        (ReduceOp::Or, _) => format!("or.{bit}"),
        (ReduceOp::And, _) => format!("and.{bit}"),
    };
    (ins, id)
}
