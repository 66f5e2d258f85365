//! Operations that move data between threads: `Broadcast` and `Reduce`. Both go through the
//! back end's shared scratch (after the user's allocations, see `Emitter::scratch`) and end with
//! a barrier, so the next collective may reuse the scratch immediately.

use super::emit::{internal, Emitter, Res};
use super::regs::{Class, PVal, Reg, Val};
use crate::ir::{numel, DType, Operand, ReduceOp, Ty, VarId};

impl Emitter<'_> {
    /// A 0/1 (bool) or i32 register holding slot `s` of `x`, for storing to memory.
    fn as_i32(&mut self, x: Operand, s: usize) -> Res<Val> {
        let v = self.elem(x, s)?;
        match v {
            Val::Reg(r) if r.class == Class::Pred => {
                let t = self.r32();
                self.line(format!("selp.b32 \t{t}, 1, 0, {r};"));
                Ok(Val::Reg(t))
            }
            _ => Ok(v),
        }
    }

    /// Numpy broadcast of tile `x` to `shape`: owners write the source to scratch, then every
    /// thread reads the source element of each destination element it owns.
    pub fn broadcast(&mut self, d: VarId, x: VarId, shape: &[usize]) -> Res<()> {
        let src_ty = self.ty(x)?;
        let Ty::Tile {
            dtype,
            shape: src_shape,
        } = src_ty
        else {
            // A scalar source: every element is the scalar.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| {
                let cls = if r.class == Class::Pred {
                    "pred"
                } else {
                    "b32"
                };
                e.line(format!("mov.{cls} \t{r}, {};", v[0]));
                Ok(())
            });
        };
        if src_shape.len() != shape.len() {
            return internal("broadcast between different ranks");
        }
        if numel(src_shape) == numel(shape) {
            // Nothing to replicate: same elements, same layout.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| {
                let cls = if r.class == Class::Pred {
                    "pred"
                } else {
                    "b32"
                };
                e.line(format!("mov.{cls} \t{r}, {};", v[0]));
                Ok(())
            });
        }
        let src_layout = self.layout_of(src_shape);
        let scratch = self.scratch(4 * src_layout.n);
        let smem = self.smem_base();
        // Owners store the source (tid * v is the first index of the thread's slots).
        let base = self.tid_times(src_layout.v);
        let t = self.r32();
        let a = self.r32();
        self.line(format!("shl.b32 \t{t}, {base}, 2;"));
        self.line(format!("add.s32 \t{a}, {smem}, {t};"));
        for s in 0..src_layout.slots() {
            let ex = self.chunk_exists(&src_layout, s / src_layout.v);
            if ex == PVal::False {
                continue;
            }
            let val = self.as_i32(Operand::Var(x), s)?;
            let val = self.in_reg(val);
            let off = scratch + 4 * src_layout.slot_const(s);
            self.line(format!(
                "{}st.shared.b32 \t[{a}+{off}], {val};",
                Self::guard(ex)
            ));
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
                Val::Imm(c) => (smem, scratch + 4 * c as usize),
                Val::Reg(ir) => {
                    let t = self.r32();
                    let a = self.r32();
                    self.line(format!("shl.b32 \t{t}, {ir}, 2;"));
                    self.line(format!("add.s32 \t{a}, {smem}, {t};"));
                    (a, scratch)
                }
            };
            if *dtype == DType::Bool {
                let t = self.r32();
                self.line(format!("{g}ld.shared.b32 \t{t}, [{addr_base}+{off}];"));
                self.line(format!("{g}setp.ne.s32 \t{r}, {t}, 0;"));
            } else {
                self.line(format!("{g}ld.shared.b32 \t{r}, [{addr_base}+{off}];"));
            }
        }
        self.line("bar.sync \t0;");
        Ok(())
    }

    /// Reduce a tile to a block-uniform scalar: per-thread partial over existing slots, warp
    /// butterfly, per-warp partials through scratch, then every thread combines the partials.
    pub fn reduce(&mut self, d: VarId, op: ReduceOp, x: VarId) -> Res<()> {
        let x_ty = self.ty(x)?;
        let Ty::Tile { shape, .. } = x_ty else {
            // Reducing a scalar is the scalar itself.
            return self.elementwise(d, &[Operand::Var(x)], |e, r, v| {
                match (r.class, v[0]) {
                    (Class::Pred, Val::Reg(p)) if p.class == Class::Pred => {
                        e.line(format!("mov.pred \t{r}, {p};"))
                    }
                    (Class::Pred, a) => e.line(format!("setp.ne.s32 \t{r}, {a}, 0;")),
                    (_, Val::Reg(p)) if p.class == Class::Pred => {
                        e.line(format!("selp.b32 \t{r}, 1, 0, {p};"))
                    }
                    (_, a) => e.line(format!("mov.b32 \t{r}, {a};")),
                }
                Ok(())
            });
        };
        let (ins, identity) = match op {
            ReduceOp::Sum => ("add.s32", 0),
            ReduceOp::Min => ("min.s32", i32::MAX),
            ReduceOp::Max => ("max.s32", i32::MIN),
            ReduceOp::Or => ("or.b32", 0),
            ReduceOp::And => ("and.b32", -1),
        };
        let layout = self.layout_of(shape);
        let acc = self.r32();
        self.line(format!("mov.b32 \t{acc}, {identity};"));
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == PVal::False {
                continue;
            }
            let val = self.as_i32(Operand::Var(x), s)?;
            self.line(format!("{}{ins} \t{acc}, {acc}, {val};", Self::guard(ex)));
        }
        for off in [16, 8, 4, 2, 1] {
            let t = self.r32();
            self.line(format!("shfl.sync.bfly.b32 \t{t}, {acc}, {off}, 31, -1;"));
            self.line(format!("{ins} \t{acc}, {acc}, {t};"));
        }
        let warps = self.threads / 32;
        if warps > 1 {
            let scratch = self.scratch(4 * warps);
            let smem = self.smem_base();
            let lane = self.lane();
            let warp = self.warp();
            let p = self.pred();
            let t = self.r32();
            let a = self.r32();
            self.line(format!("setp.eq.u32 \t{p}, {lane}, 0;"));
            self.line(format!("shl.b32 \t{t}, {warp}, 2;"));
            self.line(format!("add.s32 \t{a}, {smem}, {t};"));
            self.line(format!("@{p} st.shared.b32 \t[{a}+{scratch}], {acc};"));
            self.line("bar.sync \t0;");
            // Every thread reads all partials (broadcast reads, no bank conflicts), in a fixed
            // order so all threads get the same value.
            let parts: Vec<Reg> = (0..warps).map(|_| self.r32()).collect();
            let mut w = 0;
            while w < warps {
                let n = if warps - w >= 4 { 4 } else { 1 };
                let off = scratch + 4 * w;
                if n == 4 {
                    let regs: Vec<String> = parts[w..w + 4].iter().map(|r| r.to_string()).collect();
                    self.line(format!(
                        "ld.shared.v4.b32 \t{{{}}}, [{smem}+{off}];",
                        regs.join(", ")
                    ));
                } else {
                    self.line(format!("ld.shared.b32 \t{}, [{smem}+{off}];", parts[w]));
                }
                w += n;
            }
            self.line(format!("mov.b32 \t{acc}, {};", parts[0]));
            for part in &parts[1..] {
                self.line(format!("{ins} \t{acc}, {acc}, {part};"));
            }
            self.line("bar.sync \t0;");
        }
        let r = self.dst_regs(d)?[0];
        if r.class == Class::Pred {
            self.line(format!("setp.ne.s32 \t{r}, {acc}, 0;"));
        } else {
            self.line(format!("mov.b32 \t{r}, {acc};"));
        }
        Ok(())
    }
}
