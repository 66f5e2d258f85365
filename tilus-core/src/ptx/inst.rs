//! Lowering of scalar and element-wise instructions. Element-wise operations run slot by slot
//! over the destination's layout (operands of one shape share the layout, scalars are used as
//! is); slot `s` of the result depends only on slot `s` of the operands, so writing a variable's
//! own registers in place is safe even when it is also an operand.

use super::emit::{internal, Emitter, Res, Storage};
use super::regs::{Class, PVal, Val};
use crate::ir::{BinOp, DType, Inst, Operand, Ty, UnOp, VarId};

/// Short description for the PTX comment above each instruction.
fn inst_kind(inst: &Inst) -> String {
    match inst {
        Inst::Mov(_) => "mov".into(),
        Inst::BlockIdx => "block_idx".into(),
        Inst::GridDim => "grid_dim".into(),
        Inst::Dim { axis, .. } => format!("dim {axis}"),
        Inst::View { .. } => "view".into(),
        Inst::Arange { n } => format!("arange {n}"),
        Inst::Full { shape, .. } => format!("full {shape:?}"),
        Inst::Binary { op, .. } => format!("{op:?}").to_lowercase(),
        Inst::Unary { op, .. } => format!("{op:?}").to_lowercase(),
        Inst::Select { .. } => "select".into(),
        Inst::Cast { dtype, .. } => format!("cast {}", dtype.name()),
        Inst::Reshape { shape, .. } => format!("reshape {shape:?}"),
        Inst::Broadcast { shape, .. } => format!("broadcast {shape:?}"),
        Inst::Reduce { op, .. } => format!("reduce {op:?}").to_lowercase(),
        Inst::AllocShared { shape, offset, .. } => format!("alloc_shared {shape:?} at {offset}"),
        Inst::Sync => "sync".into(),
        Inst::Fence { sem, scope } => format!("fence {} {}", sem.ptx(), scope.ptx()),
        Inst::Load { access, .. } => {
            format!("load {:?} {:?}", access.shape, access.coords).to_lowercase()
        }
        Inst::Store { access, .. } => {
            format!("store {:?} {:?}", access.shape, access.coords).to_lowercase()
        }
        Inst::AtomicLoad { sem, scope, .. } => format!("atomic_load {} {}", sem.ptx(), scope.ptx()),
        Inst::AtomicStore { sem, scope, .. } => {
            format!("atomic_store {} {}", sem.ptx(), scope.ptx())
        }
        Inst::AtomicRmw { op, sem, scope, .. } => {
            format!("atomic_{} {} {}", op.name(), sem.ptx(), scope.ptx())
        }
    }
}

/// Constant folding of an arithmetic op: the emulator's definition of the element semantics
/// (`emu::ops`), so folded and emulated values can never disagree (comparisons are folded by the
/// caller into predicates).
fn fold_bin(op: BinOp, a: i32, b: i32) -> Option<i32> {
    (!op.is_comparison()).then(|| crate::emu::ops::binary(op, a, b))
}

fn cmp_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "eq",
        BinOp::Ne => "ne",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        _ => "ge",
    }
}

impl Emitter<'_> {
    pub fn inst(&mut self, dst: Option<VarId>, inst: &Inst) -> Res<()> {
        let dst_name = dst
            .map(|d| self.name(d).to_string())
            .unwrap_or_else(|| "_".into());
        self.comment(format!("{dst_name} = {}", inst_kind(inst)));
        match inst {
            Inst::Sync => {
                self.line("bar.sync \t0;");
                return Ok(());
            }
            Inst::Fence { sem, scope } => {
                let text = crate::table::check_fence(*sem, *scope, Some(self.k.target))
                    .map_err(|e| super::CodegenError::new(e.message))?;
                // Tile-level fence: the barriers make it order the whole block's accesses (the
                // writes of every thread before it, the reads of every thread after it), not
                // only each thread's own, like the tile-level release/acquire atomics.
                self.line("bar.sync \t0;");
                self.line(format!("{text};"));
                self.line("bar.sync \t0;");
                return Ok(());
            }
            Inst::AllocShared { shape, offset, .. } => {
                let Some(d) = dst else { return Ok(()) };
                return self.set_shared(d, *offset, shape.clone());
            }
            Inst::Store { .. }
            | Inst::AtomicStore { .. }
            | Inst::AtomicRmw { .. }
            | Inst::AtomicLoad { .. } => {
                return self.memory(dst, inst);
            }
            _ => {}
        }
        // Everything else is pure: without a destination (removed by DCE) there is nothing to do.
        let Some(d) = dst else { return Ok(()) };
        match inst {
            Inst::Load { .. } => self.memory(dst, inst),
            Inst::Mov(o) => self.mov(d, *o),
            Inst::BlockIdx | Inst::GridDim => {
                let r = self.dst_regs(d)?[0];
                let sreg = if matches!(inst, Inst::BlockIdx) {
                    "%ctaid.x"
                } else {
                    "%nctaid.x"
                };
                self.line(format!("mov.u32 \t{r}, {sreg};"));
                self.set_tz(d, 0);
                Ok(())
            }
            Inst::Dim { tensor, axis } => {
                let g = self.global(*tensor)?;
                let Some(dim) = g.dims.get(*axis).copied() else {
                    return internal("dim axis out of range");
                };
                let r = self.dst_regs(d)?[0];
                self.line(format!("mov.b32 \t{r}, {dim};"));
                self.set_tz(d, 0);
                Ok(())
            }
            Inst::View { src, offset, shape } => self.view(d, *src, *offset, shape),
            Inst::Arange { n } => {
                let layout = self.layout_of(&[*n]);
                let base = self.tid_times(layout.v);
                let rs = self.dst_regs(d)?;
                for (s, r) in rs.iter().enumerate() {
                    let c = layout.slot_const(s);
                    self.line(format!("add.s32 \t{r}, {base}, {c};"));
                }
                Ok(())
            }
            Inst::Full { value, .. } => {
                self.elementwise(d, &[*value], |e, r, v| e.copy_elem(r, v[0]))
            }
            Inst::Binary { op, lhs, rhs } => self.binary(d, *op, *lhs, *rhs),
            Inst::Unary { op, x } => self.unary(d, *op, *x),
            Inst::Select { cond, a, b } => self.select(d, *cond, *a, *b),
            Inst::Cast { x, dtype } => self.cast(d, *x, *dtype),
            Inst::Reshape { x, .. } => {
                self.elementwise(d, &[Operand::Var(*x)], |e, r, v| e.copy_elem(r, v[0]))
            }
            Inst::Broadcast { x, shape } => self.broadcast(d, *x, shape),
            Inst::Reduce { op, x } => self.reduce(d, *op, *x),
            _ => internal("unhandled instruction"),
        }
    }

    fn set_shared(&mut self, d: VarId, offset: usize, shape: Vec<usize>) -> Res<()> {
        match &self.storage[d as usize] {
            None => {
                self.storage[d as usize] = Some(Storage::Shared { offset, shape });
                Ok(())
            }
            Some(Storage::Shared { offset: o, shape: s }) if *o == offset && *s == shape => Ok(()),
            Some(_) => internal(format!(
                "shared tensor variable `{}` is re-assigned to a different allocation (not supported)",
                self.name(d)
            )),
        }
    }

    /// Element operand: a register/immediate (i32) or a predicate register (bool).
    fn operand_elem(&mut self, o: Operand, slot: usize) -> Res<Val> {
        match self.op_ty(o)?.dtype() {
            DType::Bool => Ok(Val::Reg(self.elem_pred(o, slot)?)),
            DType::I32 => self.elem(o, slot),
        }
    }

    /// Run `f(dst_slot_reg, operand_slot_values)` for every slot of `d`.
    pub fn elementwise(
        &mut self,
        d: VarId,
        ops: &[Operand],
        mut f: impl FnMut(&mut Self, super::regs::Reg, &[Val]) -> Res<()>,
    ) -> Res<()> {
        let rs = self.dst_regs(d)?;
        for (s, r) in rs.iter().enumerate() {
            let mut vals = Vec::with_capacity(ops.len());
            for o in ops {
                let slot = if self.is_tile(*o)? { s } else { 0 };
                vals.push(self.operand_elem(*o, slot)?);
            }
            f(self, *r, &vals)?;
        }
        Ok(())
    }

    fn copy_elem(&mut self, r: super::regs::Reg, v: Val) -> Res<()> {
        if v == Val::Reg(r) {
            return Ok(());
        }
        match r.class {
            Class::Pred => self.line(format!("mov.pred \t{r}, {v};")),
            _ => self.line(format!("mov.b32 \t{r}, {v};")),
        }
        Ok(())
    }

    fn mov(&mut self, d: VarId, o: Operand) -> Res<()> {
        match (self.ty(d)?, o) {
            (Ty::Global { .. }, Operand::Var(src)) => {
                let s = self.global(src)?;
                let g = self.dst_global(d)?;
                if s.dims.len() != g.dims.len() {
                    return internal("global mov between different ranks");
                }
                self.line(format!("mov.b64 \t{}, {};", g.ptr, s.ptr));
                for (a, b) in [(g.len, s.len), (g.off, s.off)]
                    .into_iter()
                    .chain(g.dims.iter().copied().zip(s.dims.iter().copied()))
                {
                    if a != b {
                        self.line(format!("mov.b32 \t{a}, {b};"));
                    }
                }
                let tz = self.tz_of(Operand::Var(src));
                self.set_tz(d, tz);
                Ok(())
            }
            (Ty::Shared { .. }, Operand::Var(src)) => match self.storage(src)?.clone() {
                Storage::Shared { offset, shape } => self.set_shared(d, offset, shape),
                _ => internal("shared mov from a non-shared value"),
            },
            _ => {
                let tz = self.tz_of(o);
                self.elementwise(d, &[o], |e, r, v| e.copy_elem(r, v[0]))?;
                self.set_tz(d, tz);
                Ok(())
            }
        }
    }

    fn view(&mut self, d: VarId, src: VarId, offset: Operand, shape: &[Operand]) -> Res<()> {
        let s = self.global(src)?;
        let off = self.elem(offset, 0)?;
        let tz = self.tz_of(Operand::Var(src)).min(self.tz_of(offset));
        let mut dims = Vec::with_capacity(shape.len());
        for o in shape {
            dims.push(self.elem(*o, 0)?);
        }
        let g = self.dst_global(d)?;
        if g.dims.len() != dims.len() {
            return internal("view rank does not match its type");
        }
        // Offset first: when `d` is `src` the remaining reads are of other registers.
        // Saturating: a view offset beyond the i32 range clamps (ir.rs), so an access through
        // it is out of bounds instead of wrapping around to valid elements.
        let wide = self.r64();
        self.line(format!("cvt.s64.s32 \t{wide}, {};", s.off));
        match off {
            Val::Imm(c) => self.line(format!("add.s64 \t{wide}, {wide}, {c};")),
            Val::Reg(r) => {
                let w2 = self.r64();
                self.line(format!("cvt.s64.s32 \t{w2}, {r};"));
                self.line(format!("add.s64 \t{wide}, {wide}, {w2};"));
            }
        }
        self.line(format!("min.s64 \t{wide}, {wide}, 2147483647;"));
        self.line(format!("max.s64 \t{wide}, {wide}, -2147483648;"));
        self.line(format!("cvt.s32.s64 \t{}, {wide};", g.off));
        if g.ptr != s.ptr {
            self.line(format!("mov.b64 \t{}, {};", g.ptr, s.ptr));
            self.line(format!("mov.b32 \t{}, {};", g.len, s.len));
        }
        for (r, v) in g.dims.iter().zip(dims) {
            self.line(format!("mov.b32 \t{r}, {v};"));
        }
        self.set_tz(d, tz);
        Ok(())
    }

    fn binary(&mut self, d: VarId, op: BinOp, lhs: Operand, rhs: Operand) -> Res<()> {
        let operand_dtype = self.op_ty(lhs)?.dtype();
        if operand_dtype == DType::Bool {
            return self.elementwise(d, &[lhs, rhs], |e, r, v| e.bool_binary(op, r, v[0], v[1]));
        }
        // Divisibility facts for alignment proofs.
        let (ta, tb) = (self.tz_of(lhs), self.tz_of(rhs));
        let tz = match (op, rhs) {
            (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Min | BinOp::Max, _) => {
                ta.min(tb)
            }
            (BinOp::Mul, _) => ta + tb,
            (BinOp::And, _) => ta.max(tb),
            (BinOp::Shl, Operand::Imm(k, _)) if (0..32).contains(&k) => ta + k as u32,
            _ => 0,
        };
        self.elementwise(d, &[lhs, rhs], |e, r, v| {
            let (a, b) = (v[0], v[1]);
            if op.is_comparison() {
                let c = cmp_name(op);
                if let (Val::Imm(x), Val::Imm(y)) = (a, b) {
                    let t = e.vsetp(c, "s32", Val::Imm(x), Val::Imm(y)) == PVal::True;
                    e.line(format!("mov.pred \t{r}, {};", t as i32));
                } else {
                    e.line(format!("setp.{c}.s32 \t{r}, {a}, {b};"));
                }
                return Ok(());
            }
            if let (Val::Imm(x), Val::Imm(y)) = (a, b) {
                let Some(c) = fold_bin(op, x, y) else {
                    return internal("bad binary op");
                };
                e.line(format!("mov.b32 \t{r}, {c};"));
                return Ok(());
            }
            let ins = match op {
                BinOp::Add => "add.s32",
                BinOp::Sub => "sub.s32",
                BinOp::Mul => "mul.lo.s32",
                BinOp::Div => "div.s32",
                BinOp::Rem => "rem.s32",
                BinOp::And => "and.b32",
                BinOp::Or => "or.b32",
                BinOp::Xor => "xor.b32",
                BinOp::Shl => "shl.b32",
                BinOp::Shr => "shr.s32",
                BinOp::Min => "min.s32",
                BinOp::Max => "max.s32",
                _ => return internal("bad binary op"),
            };
            e.line(format!("{ins} \t{r}, {a}, {b};"));
            Ok(())
        })?;
        if !op.is_comparison() {
            self.set_tz(d, tz);
        }
        Ok(())
    }

    /// Binary ops on bools (operands are predicate registers).
    fn bool_binary(&mut self, op: BinOp, r: super::regs::Reg, a: Val, b: Val) -> Res<()> {
        // a < b on bools is !a & b, etc. Temporaries keep `r` free to alias an operand.
        let (na, nb) = (self.pred(), self.pred());
        match op {
            BinOp::And | BinOp::Min => self.line(format!("and.pred \t{r}, {a}, {b};")),
            BinOp::Or | BinOp::Max => self.line(format!("or.pred \t{r}, {a}, {b};")),
            BinOp::Xor | BinOp::Ne => self.line(format!("xor.pred \t{r}, {a}, {b};")),
            BinOp::Eq => {
                self.line(format!("xor.pred \t{na}, {a}, {b};"));
                self.line(format!("not.pred \t{r}, {na};"));
            }
            BinOp::Lt | BinOp::Ge => {
                self.line(format!("not.pred \t{na}, {a};"));
                self.line(format!("and.pred \t{nb}, {na}, {b};"));
                if op == BinOp::Lt {
                    self.line(format!("mov.pred \t{r}, {nb};"));
                } else {
                    self.line(format!("not.pred \t{r}, {nb};"));
                }
            }
            BinOp::Gt | BinOp::Le => {
                self.line(format!("not.pred \t{nb}, {b};"));
                self.line(format!("and.pred \t{na}, {a}, {nb};"));
                if op == BinOp::Gt {
                    self.line(format!("mov.pred \t{r}, {na};"));
                } else {
                    self.line(format!("not.pred \t{r}, {na};"));
                }
            }
            _ => return internal(format!("operator {op:?} is not defined on bool")),
        }
        Ok(())
    }

    fn unary(&mut self, d: VarId, op: UnOp, x: Operand) -> Res<()> {
        let tz = self.tz_of(x);
        let is_bool = self.op_ty(x)?.dtype() == DType::Bool;
        self.elementwise(d, &[x], |e, r, v| {
            let a = v[0];
            match (op, is_bool, a) {
                (UnOp::Not, true, _) => e.line(format!("not.pred \t{r}, {a};")),
                (UnOp::Neg, true, _) => return internal("negation of a bool"),
                (UnOp::Neg, false, Val::Imm(c)) => {
                    e.line(format!("mov.b32 \t{r}, {};", c.wrapping_neg()))
                }
                (UnOp::Not, false, Val::Imm(c)) => e.line(format!("mov.b32 \t{r}, {};", !c)),
                (UnOp::Neg, false, _) => e.line(format!("neg.s32 \t{r}, {a};")),
                (UnOp::Not, false, _) => e.line(format!("not.b32 \t{r}, {a};")),
            }
            Ok(())
        })?;
        if op == UnOp::Neg && !is_bool {
            self.set_tz(d, tz);
        }
        Ok(())
    }

    fn select(&mut self, d: VarId, cond: Operand, a: Operand, b: Operand) -> Res<()> {
        let is_bool = self.op_ty(a)?.dtype() == DType::Bool;
        let tz = self.tz_of(a).min(self.tz_of(b));
        self.elementwise(d, &[cond, a, b], |e, r, v| {
            let (c, x, y) = (v[0], v[1], v[2]);
            if is_bool {
                // r = (c & x) | (!c & y), through temporaries so `r` may alias an operand.
                let (t1, t2) = (e.pred(), e.pred());
                e.line(format!("and.pred \t{t1}, {c}, {x};"));
                e.line(format!("not.pred \t{t2}, {c};"));
                e.line(format!("and.pred \t{t2}, {t2}, {y};"));
                e.line(format!("or.pred \t{r}, {t1}, {t2};"));
            } else {
                e.line(format!("selp.b32 \t{r}, {x}, {y}, {c};"));
            }
            Ok(())
        })?;
        if !is_bool {
            self.set_tz(d, tz);
        }
        Ok(())
    }

    fn cast(&mut self, d: VarId, x: Operand, to: DType) -> Res<()> {
        let from = self.op_ty(x)?.dtype();
        self.elementwise(d, &[x], |e, r, v| {
            let a = v[0];
            match (from, to) {
                (DType::Bool, DType::I32) => e.line(format!("selp.s32 \t{r}, 1, 0, {a};")),
                (DType::I32, DType::Bool) => match a {
                    Val::Imm(c) => e.line(format!("mov.pred \t{r}, {};", (c != 0) as i32)),
                    _ => e.line(format!("setp.ne.s32 \t{r}, {a}, 0;")),
                },
                _ => e.copy_elem(r, a)?,
            }
            Ok(())
        })
    }
}
