//! Lowering of scalar and element-wise instructions. Element-wise operations run slot by slot
//! over the destination's layout (operands of one shape share the layout, scalars are used as
//! is); slot `s` of the result depends only on slot `s` of the operands, so writing a variable's
//! own registers in place is safe even when it is also an operand.

use super::emit::{internal, Emitter, Res, Storage};
use super::regs::{Class, EVal, Reg};
use crate::dtype::DType;
use crate::ir::{BinOp, Inst, Operand, Scope, Sem, Ty, UnOp, VarId};

/// `x`, `y` or `z` for a grid axis (the lowering only admits 0..=2).
fn axis_name(axis: u8) -> &'static str {
    ["x", "y", "z"][(axis as usize).min(2)]
}

/// Short description for the PTX comment above each instruction.
fn inst_kind(inst: &Inst) -> String {
    match inst {
        Inst::Mov(_) => "mov".into(),
        Inst::BlockIdx { axis } => format!("block_idx.{}", axis_name(*axis)),
        Inst::GridDim { axis } => format!("grid_dim.{}", axis_name(*axis)),
        Inst::Dim { axis, .. } => format!("dim {axis}"),
        Inst::View { .. } => "view".into(),
        Inst::Arange { n, dtype } => format!("arange {n} {dtype}"),
        Inst::LaneIds { shape, dtype } => format!("lane_ids {shape:?} {dtype}"),
        Inst::Full { shape, .. } => format!("full {shape:?}"),
        Inst::Binary { op, .. } => format!("{op:?}").to_lowercase(),
        Inst::Unary { op, .. } => format!("{op:?}").to_lowercase(),
        Inst::Select { .. } => "select".into(),
        Inst::Fma { .. } => "fma".into(),
        Inst::Bitcast { dtype, .. } => format!("bitcast {}", dtype.name()),
        Inst::Cast { dtype, .. } => format!("cast {}", dtype.name()),
        Inst::Reshape { shape, .. } => format!("reshape {shape:?}"),
        Inst::Broadcast { shape, .. } => format!("broadcast {shape:?}"),
        Inst::Reduce { op, .. } => format!("reduce {op:?}").to_lowercase(),
        Inst::ReduceAxis { op, axis, .. } => format!("reduce {op:?} axis {axis}").to_lowercase(),
        Inst::Scan { op, axis, .. } => format!("scan {} axis {axis}", op.name()),
        Inst::Sort { axis, .. } => format!("sort axis {axis}"),
        Inst::ArgSort { axis, .. } => format!("argsort axis {axis}"),
        Inst::Take { axis, .. } => format!("take axis {axis}"),
        Inst::TopK { k, axis, .. } => format!("topk {k} axis {axis}"),
        Inst::EqualRank { .. } => "equal_rank".into(),
        Inst::Histogram { bins, .. } => format!("histogram {bins}"),
        Inst::AllocShared {
            shape,
            offset,
            distributed,
            ..
        } => {
            let what = if *distributed {
                "alloc_cluster_shared"
            } else {
                "alloc_shared"
            };
            format!("{what} {shape:?} at {offset}")
        }
        Inst::Sync => "sync".into(),
        Inst::ClusterRank => "cluster_rank".into(),
        Inst::ClusterSize => "cluster_size".into(),
        Inst::ClusterIdx { axis } => format!("cluster_idx.{}", axis_name(*axis)),
        Inst::ClusterSync => "cluster_sync".into(),
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
            Inst::Fence { sem, scope } => return self.fence(*sem, *scope),
            Inst::AllocShared {
                shape,
                offset,
                distributed,
                ..
            } => {
                let Some(d) = dst else { return Ok(()) };
                return self.alloc_shared(d, shape, *offset, *distributed);
            }
            Inst::ClusterSync => {
                self.cluster_sync();
                return Ok(());
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
        self.pure_inst(d, inst)?;
        self.record_bound(d, inst)
    }

    /// An instruction that only computes the value of `d`.
    fn pure_inst(&mut self, d: VarId, inst: &Inst) -> Res<()> {
        match inst {
            Inst::Load { .. } => self.memory(Some(d), inst),
            Inst::Mov(o) => self.mov(d, *o),
            Inst::BlockIdx { .. }
            | Inst::GridDim { .. }
            | Inst::ClusterRank
            | Inst::ClusterSize
            | Inst::ClusterIdx { .. } => self.special_reg(d, inst),
            Inst::Dim { tensor, axis } => self.tensor_dim(d, *tensor, *axis),
            Inst::View { src, offset, shape } => self.view(d, *src, *offset, shape),
            Inst::Arange { n, dtype } => self.arange(d, *n, *dtype),
            Inst::LaneIds { dtype, .. } => self.lane_ids(d, *dtype),
            Inst::Full { value, .. } => {
                let dt = self.dtype_of(*value)?;
                self.elementwise(d, &[*value], |e, r, v| e.copy_elem(dt, r, v[0]))
            }
            Inst::Binary { op, lhs, rhs } => self.binary(d, *op, *lhs, *rhs),
            Inst::Unary { op, x } => self.unary(d, *op, *x),
            Inst::Select { cond, a, b } => self.select(d, *cond, *a, *b),
            Inst::Fma { a, b, c } => {
                let dt = self.dtype_of(*a)?;
                self.elementwise(d, &[*a, *b, *c], |e, r, v| {
                    e.fma_elem(dt, r, v[0], v[1], v[2])
                })
            }
            Inst::Cast { x, dtype } => self.cast(d, *x, *dtype),
            Inst::Bitcast { x, dtype } => {
                let from = self.dtype_of(*x)?;
                self.elementwise(d, &[*x], |e, r, v| e.bitcast(from, *dtype, r, v[0]))
            }
            Inst::Reshape { x, .. } => {
                let dt = self.dtype_of(Operand::Var(*x))?;
                self.elementwise(d, &[Operand::Var(*x)], |e, r, v| e.copy_elem(dt, r, v[0]))
            }
            Inst::Broadcast { x, shape } => self.broadcast(d, *x, shape),
            Inst::Reduce { op, x } => self.reduce(d, *op, *x),
            _ => internal("unhandled instruction"),
        }
    }

    /// A tile-level fence: the thread-level `fence` of the legality table between two barriers.
    fn fence(&mut self, sem: Sem, scope: Scope) -> Res<()> {
        let text = crate::table::check_fence(sem, scope, Some(self.k.target))
            .map_err(|e| super::CodegenError::new(e.message))?;
        // Tile-level fence: the barriers make it order the whole block's accesses (the
        // writes of every thread before it, the reads of every thread after it), not
        // only each thread's own, like the tile-level release/acquire atomics.
        self.line("bar.sync \t0;");
        self.line(format!("{text};"));
        self.line("bar.sync \t0;");
        Ok(())
    }

    /// Binds `d` to its shared allocation; a distributed one has `1 / blocks` of axis 0 per
    /// block of the cluster.
    fn alloc_shared(
        &mut self,
        d: VarId,
        shape: &[usize],
        offset: usize,
        distributed: bool,
    ) -> Res<()> {
        let rows = distributed.then(|| {
            let blocks = self.k.cluster.blocks().max(1) as usize;
            shape.first().copied().unwrap_or(1) / blocks
        });
        self.set_shared(d, offset, shape.to_vec(), rows)
    }

    /// A cluster-wide barrier (needs PTX 8.0).
    fn cluster_sync(&mut self) {
        // Every thread arrives and waits (not `.aligned`: control flow may diverge
        // within a warp around it in hand-written PTX; ours is uniform, this is just
        // the general form). Release/acquire make the cluster's shared-memory writes
        // before it visible after it.
        self.line("barrier.cluster.arrive.release;");
        self.line("barrier.cluster.wait.acquire;");
        self.min_version = self.min_version.max(80);
    }

    /// A grid or cluster index or size: a move from its special register (no trailing zero bits
    /// known).
    fn special_reg(&mut self, d: VarId, inst: &Inst) -> Res<()> {
        let r = self.dst_regs(d)?[0];
        let sreg = match inst {
            Inst::BlockIdx { axis } => format!("%ctaid.{}", axis_name(*axis)),
            Inst::GridDim { axis } => format!("%nctaid.{}", axis_name(*axis)),
            Inst::ClusterIdx { axis } => format!("%clusterid.{}", axis_name(*axis)),
            Inst::ClusterRank => "%cluster_ctarank".into(),
            _ => "%cluster_nctarank".into(),
        };
        self.line(format!("mov.u32 \t{r}, {sreg};"));
        self.set_tz(d, 0);
        Ok(())
    }

    /// Axis `axis` of a global tensor's dims (a 64-bit parameter register).
    fn tensor_dim(&mut self, d: VarId, tensor: VarId, axis: usize) -> Res<()> {
        let g = self.global(tensor)?;
        let Some(dim) = g.dims.get(axis).copied() else {
            return internal("dim axis out of range");
        };
        let r = self.dst_regs(d)?[0];
        self.line(format!("mov.b64 \t{r}, {dim};"));
        self.set_tz(d, 0);
        Ok(())
    }

    /// `arange(n)`: each slot's flat tile index, from the thread's run base plus the slot's
    /// constant (widened once for 64-bit types).
    fn arange(&mut self, d: VarId, n: usize, dtype: DType) -> Res<()> {
        let layout = self.layout_of(&[n]);
        let base = self.tid_times(layout.v);
        let rs = self.dst_regs(d)?;
        let wide = dtype.bits() > 32;
        let base64 = if wide {
            let w = self.r64();
            self.line(format!("cvt.u64.u32 \t{w}, {base};"));
            Some(w)
        } else {
            None
        };
        for (s, r) in rs.iter().enumerate() {
            let c = layout.slot_const(s);
            match base64 {
                Some(w) => self.line(format!("add.s64 \t{r}, {w}, {c};")),
                None => {
                    self.line(format!("add.s32 \t{r}, {base}, {c};"));
                    self.normalize(dtype, *r);
                }
            }
        }
        Ok(())
    }

    /// `lane_ids(shape)`: every element a thread holds is in its lane (`tid % 32`), so every
    /// slot is a copy of one register (which ptxas folds away).
    fn lane_ids(&mut self, d: VarId, dtype: DType) -> Res<()> {
        let lane = self.lane();
        for r in self.dst_regs(d)? {
            if dtype.bits() > 32 {
                self.line(format!("cvt.u64.u32 \t{r}, {lane};"));
            } else {
                self.line(format!("mov.b32 \t{r}, {lane};"));
            }
        }
        Ok(())
    }

    pub(super) fn set_shared(
        &mut self,
        d: VarId,
        offset: usize,
        shape: Vec<usize>,
        rows: Option<usize>,
    ) -> Res<()> {
        match &self.storage[d as usize] {
            None => {
                self.storage[d as usize] = Some(Storage::Shared {
                    offset,
                    shape,
                    rows,
                });
                Ok(())
            }
            Some(Storage::Shared {
                offset: o,
                shape: s,
                rows: r,
            }) if *o == offset && *s == shape && *r == rows => Ok(()),
            Some(_) => internal(format!(
                "shared tensor variable `{}` is re-assigned to a different allocation (not supported)",
                self.name(d)
            )),
        }
    }

    /// Element operand `slot` of `o` (bool operands as predicates or constants).
    fn operand_elem(&mut self, o: Operand, slot: usize) -> Res<EVal> {
        self.eval(o, slot)
    }

    /// Run `f(dst_slot_reg, operand_slot_values)` for every slot of `d`.
    pub fn elementwise(
        &mut self,
        d: VarId,
        ops: &[Operand],
        mut f: impl FnMut(&mut Self, Reg, &[EVal]) -> Res<()>,
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

    fn mov(&mut self, d: VarId, o: Operand) -> Res<()> {
        match (self.ty(d)?, o) {
            (Ty::Global { .. }, Operand::Var(src)) => {
                let s = self.global(src)?;
                let g = self.dst_global(d)?;
                if s.dims.len() != g.dims.len() {
                    return internal("global mov between different ranks");
                }
                for (a, b) in [(g.ptr, s.ptr), (g.len, s.len), (g.off, s.off)]
                    .into_iter()
                    .chain(g.dims.iter().copied().zip(s.dims.iter().copied()))
                {
                    if a != b {
                        self.line(format!("mov.b64 \t{a}, {b};"));
                    }
                }
                let tz = self.tz_of(Operand::Var(src));
                self.set_tz(d, tz);
                Ok(())
            }
            (Ty::Shared { .. }, Operand::Var(src)) => match self.storage(src)?.clone() {
                Storage::Shared {
                    offset,
                    shape,
                    rows,
                } => self.set_shared(d, offset, shape, rows),
                _ => internal("shared mov from a non-shared value"),
            },
            _ => {
                let tz = self.tz_of(o);
                let dt = self.dtype_of(o)?;
                self.elementwise(d, &[o], |e, r, v| e.copy_elem(dt, r, v[0]))?;
                self.set_tz(d, tz);
                Ok(())
            }
        }
    }

    /// A 64-bit register (or constant) holding integer scalar `o` sign- or zero-extended.
    pub fn wide_int(&mut self, o: Operand) -> Res<EVal> {
        let d = self.dtype_of(o)?;
        let v = self.eval(o, 0)?;
        Ok(match v {
            EVal::Const(bits, _) => {
                EVal::Const(crate::elem::as_i128(d, bits) as i64 as u64, DType::I64)
            }
            EVal::Reg(r) if d.bits() > 32 => EVal::Reg(r),
            EVal::Reg(r) => {
                let w = self.r64();
                let ext = if d.is_signed() { "s32" } else { "u32" };
                self.line(format!("cvt.s64.{ext} \t{w}, {r};"));
                EVal::Reg(w)
            }
        })
    }

    /// `r = a + b` on i64, saturating at the i64 range (view offsets, `crate::ir::Inst::View`).
    fn add_sat64(&mut self, r: Reg, a: Reg, b: EVal) {
        let (t, x1, x2) = (self.r64(), self.r64(), self.r64());
        let ovf = self.pred();
        self.line(format!("add.s64 \t{t}, {a}, {b};"));
        self.line(format!("xor.b64 \t{x1}, {a}, {t};"));
        self.line(format!("xor.b64 \t{x2}, {b}, {t};"));
        self.line(format!("and.b64 \t{x1}, {x1}, {x2};"));
        self.line(format!("setp.lt.s64 \t{ovf}, {x1}, 0;"));
        // On overflow: MAX when `a` was non-negative, MIN when negative.
        self.line(format!("shr.s64 \t{x2}, {a}, 63;"));
        self.line(format!("xor.b64 \t{x2}, {x2}, 9223372036854775807;"));
        self.line(format!("selp.b64 \t{r}, {x2}, {t}, {ovf};"));
    }

    fn view(&mut self, d: VarId, src: VarId, offset: Operand, shape: &[Operand]) -> Res<()> {
        let s = self.global(src)?;
        let off = self.wide_int(offset)?;
        let tz = self.tz_of(Operand::Var(src)).min(self.tz_of(offset));
        let mut dims = Vec::with_capacity(shape.len());
        for o in shape {
            dims.push(self.wide_int(*o)?);
        }
        let g = self.dst_global(d)?;
        if g.dims.len() != dims.len() {
            return internal("view rank does not match its type");
        }
        // Offset first: when `d` is `src` the remaining reads are of other registers.
        if off == EVal::Const(0, DType::I64) {
            if g.off != s.off {
                self.line(format!("mov.b64 \t{}, {};", g.off, s.off));
            }
        } else {
            self.add_sat64(g.off, s.off, off);
        }
        if g.ptr != s.ptr {
            self.line(format!("mov.b64 \t{}, {};", g.ptr, s.ptr));
            self.line(format!("mov.b64 \t{}, {};", g.len, s.len));
        }
        for (r, v) in g.dims.iter().zip(dims) {
            self.line(format!("mov.b64 \t{r}, {v};"));
        }
        self.set_tz(d, tz);
        Ok(())
    }

    fn binary(&mut self, d: VarId, op: BinOp, lhs: Operand, rhs: Operand) -> Res<()> {
        let dt = self.dtype_of(lhs)?;
        if dt == DType::Bool {
            return self.elementwise(d, &[lhs, rhs], |e, r, v| {
                let (a, b) = (e.ereg(v[0]), e.ereg(v[1]));
                e.bool_binary(op, r, a, b)
            });
        }
        // Divisibility facts for alignment proofs (integers).
        let (ta, tb) = (self.tz_of(lhs), self.tz_of(rhs));
        let tz = match (op, rhs) {
            _ if !dt.is_int() => 0,
            (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Min | BinOp::Max, _) => {
                ta.min(tb)
            }
            (BinOp::Mul, _) => ta + tb,
            (BinOp::And, _) => ta.max(tb),
            (BinOp::Shl, Operand::Imm(..)) => match rhs.imm_int() {
                Some(k) if (0..64).contains(&k) => ta + k as u32,
                _ => 0,
            },
            _ => 0,
        };
        self.elementwise(d, &[lhs, rhs], |e, r, v| {
            e.binary_elem(op, dt, r, v[0], v[1])
        })?;
        if !op.is_comparison() {
            self.set_tz(d, tz.min(dt.bits()));
        }
        Ok(())
    }

    /// `r = a op b` on one element of type `dt` (`r` is a predicate for comparisons).
    pub fn binary_elem(&mut self, op: BinOp, dt: DType, r: Reg, a: EVal, b: EVal) -> Res<()> {
        if let (EVal::Const(x, _), EVal::Const(y, _)) = (a, b) {
            let c = crate::elem::binary(op, dt, x, y);
            let out = if op.is_comparison() { DType::Bool } else { dt };
            if out == DType::Bool {
                self.line(format!("mov.pred \t{r}, {};", (c != 0) as u32));
                return Ok(());
            }
            return self.copy_elem(out, r, EVal::Const(c, out));
        }
        let info = dt.info();
        if dt.is_half_float() {
            // f16/bf16: compute in f32, round once.
            let (fa, fb) = (self.widen_f32(dt, a), self.widen_f32(dt, b));
            if op.is_comparison() {
                return self.binary_elem(op, DType::F32, r, EVal::Reg(fa), EVal::Reg(fb));
            }
            let f = self.regs.new_reg(Class::F32);
            self.binary_elem(op, DType::F32, f, EVal::Reg(fa), EVal::Reg(fb))?;
            self.narrow_f32(dt, f, r);
            return Ok(());
        }
        let ty = info.arith;
        if op.is_comparison() {
            let cmp = cmp_name(op);
            let cmp = if dt.is_float() && cmp == "ne" {
                "neu"
            } else {
                cmp
            };
            let (a, b) = self.imm_operands(dt, a, b);
            self.line(format!("setp.{cmp}.{ty} \t{r}, {a}, {b};"));
            return Ok(());
        }
        let (a, b) = self.imm_operands(dt, a, b);
        let float = dt.is_float();
        let bit = info.bit_reg();
        match op {
            BinOp::Shl | BinOp::Shr => {
                let amt = self.shift_amount(dt, b);
                let ins = if op == BinOp::Shl {
                    format!("shl.{bit}")
                } else {
                    format!("shr.{ty}")
                };
                self.line(format!("{ins} \t{r}, {a}, {amt};"));
            }
            _ => {
                let ins = match (op, float) {
                    (BinOp::Add, true) => format!("add.rn.{ty}"),
                    (BinOp::Sub, true) => format!("sub.rn.{ty}"),
                    (BinOp::Mul, true) => format!("mul.rn.{ty}"),
                    (BinOp::Div, true) => format!("div.rn.{ty}"),
                    (BinOp::Min, true) => format!("min.{ty}"),
                    (BinOp::Max, true) => format!("max.{ty}"),
                    (BinOp::Add, false) => format!("add.{ty}"),
                    (BinOp::Sub, false) => format!("sub.{ty}"),
                    (BinOp::Mul, false) => format!("mul.lo.{ty}"),
                    (BinOp::Div, false) => format!("div.{ty}"),
                    (BinOp::Rem, false) => format!("rem.{ty}"),
                    (BinOp::Min, false) => format!("min.{ty}"),
                    (BinOp::Max, false) => format!("max.{ty}"),
                    (BinOp::And, false) => format!("and.{bit}"),
                    (BinOp::Or, false) => format!("or.{bit}"),
                    (BinOp::Xor, false) => format!("xor.{bit}"),
                    _ => return internal(format!("operator {op:?} on `{dt}`")),
                };
                self.line(format!("{ins} \t{r}, {a}, {b};"));
            }
        }
        if matches!(
            op,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Shl
        ) {
            self.normalize(dt, r);
        }
        Ok(())
    }

    /// Operands for an arithmetic instruction: a 16-bit float constant has no immediate form.
    fn imm_operands(&mut self, dt: DType, a: EVal, b: EVal) -> (EVal, EVal) {
        let fix = |e: &mut Self, v: EVal| match v {
            EVal::Const(..) if dt.is_half_float() => EVal::Reg(e.ereg(v)),
            // The first operand of an instruction must be a register.
            _ => v,
        };
        let a = match a {
            EVal::Const(..) => EVal::Reg(self.ereg(a)),
            _ => a,
        };
        (fix(self, a), fix(self, b))
    }

    /// A shift amount (an element of type `dt`, read as unsigned) as a `.u32` operand, clamped
    /// so that amounts past the width shift everything out.
    fn shift_amount(&mut self, dt: DType, b: EVal) -> EVal {
        match b {
            EVal::Const(bits, _) => EVal::Const(bits.min(64), DType::U32),
            EVal::Reg(r) if dt.bits() > 32 => {
                let (t, n) = (self.r64(), self.r32());
                self.line(format!("min.u64 \t{t}, {r}, 64;"));
                self.line(format!("cvt.u32.u64 \t{n}, {t};"));
                EVal::Reg(n)
            }
            EVal::Reg(_) => b,
        }
    }

    /// Binary ops on bools (operands are predicate registers).
    fn bool_binary(&mut self, op: BinOp, r: Reg, a: Reg, b: Reg) -> Res<()> {
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
        let dt = self.dtype_of(x)?;
        self.elementwise(d, &[x], |e, r, v| e.unary_elem(op, dt, r, v[0]))?;
        if op == UnOp::Neg && dt.is_int() {
            self.set_tz(d, tz);
        }
        Ok(())
    }

    /// `r = op a` on one element of type `dt`.
    pub fn unary_elem(&mut self, op: UnOp, dt: DType, r: Reg, a: EVal) -> Res<()> {
        if let EVal::Const(x, _) = a {
            let c = crate::elem::unary(op, dt, x);
            return self.copy_elem(dt, r, EVal::Const(c, dt));
        }
        let info = dt.info();
        let (ty, bit) = (info.arith, info.bit_reg());
        let float_fn = matches!(
            op,
            UnOp::Sqrt | UnOp::Floor | UnOp::Ceil | UnOp::Trunc | UnOp::Round | UnOp::RoundEven
        );
        if float_fn {
            if info.size == 2 {
                // f16/bf16: in f32, rounded once.
                let f = self.widen_f32(dt, a);
                let g = self.regs.new_reg(Class::F32);
                self.unary_elem(op, DType::F32, g, EVal::Reg(f))?;
                self.narrow_f32(dt, g, r);
                return Ok(());
            }
            let a = self.ereg(a);
            match op {
                UnOp::Sqrt => self.line(format!("sqrt.rn.{ty} \t{r}, {a};")),
                UnOp::Floor => self.line(format!("cvt.rmi.{ty}.{ty} \t{r}, {a};")),
                UnOp::Ceil => self.line(format!("cvt.rpi.{ty}.{ty} \t{r}, {a};")),
                UnOp::Trunc => self.line(format!("cvt.rzi.{ty}.{ty} \t{r}, {a};")),
                UnOp::RoundEven => self.line(format!("cvt.rni.{ty}.{ty} \t{r}, {a};")),
                _ => {
                    // Half away from zero (crate::elem): t = trunc(a), plus copysign(1, a)
                    // when |a - t| >= 0.5 (the difference is exact).
                    let (t, df, one) = (self.reg_of(dt), self.reg_of(dt), self.reg_of(dt));
                    let p = self.pred();
                    let half = EVal::Const(crate::elem::cast(DType::F64, dt, 0.5f64.to_bits()), dt);
                    let unit = EVal::Const(crate::elem::cast(DType::F64, dt, 1f64.to_bits()), dt);
                    self.line(format!("cvt.rzi.{ty}.{ty} \t{t}, {a};"));
                    self.line(format!("sub.rn.{ty} \t{df}, {a}, {t};"));
                    self.line(format!("abs.{ty} \t{df}, {df};"));
                    self.line(format!("setp.ge.{ty} \t{p}, {df}, {half};"));
                    self.line(format!("copysign.{ty} \t{one}, {a}, {unit};"));
                    self.line(format!("mov.{ty} \t{r}, {t};"));
                    self.line(format!("@{p} add.rn.{ty} \t{r}, {t}, {one};"));
                }
            }
            return Ok(());
        }
        match (op, info.class) {
            (UnOp::Not, crate::dtype::Class::Bool) => self.line(format!("not.pred \t{r}, {a};")),
            (UnOp::Not, _) => self.line(format!("not.{bit} \t{r}, {a};")),
            // Float sign operations are bit operations (exact, NaN payloads kept).
            (UnOp::Neg, crate::dtype::Class::Float) => {
                let m = dt.sign_bit();
                self.line(format!("xor.{bit} \t{r}, {a}, {m};"));
            }
            (UnOp::Abs, crate::dtype::Class::Float) => {
                let m = !dt.sign_bit() & dt.mask();
                self.line(format!("and.{bit} \t{r}, {a}, {m};"));
            }
            (UnOp::Neg, _) => self.line(format!("neg.{} \t{r}, {a};", signed(ty))),
            (UnOp::Abs, crate::dtype::Class::Signed) => self.line(format!("abs.{ty} \t{r}, {a};")),
            (UnOp::Abs, _) => return self.copy_elem(dt, r, a),
            _ => return internal(format!("`{op:?}` on `{dt}`")),
        }
        self.normalize(dt, r);
        Ok(())
    }

    /// `r = a * b + c` with one rounding (16-bit floats through an `f32` fma).
    fn fma_elem(&mut self, dt: DType, r: Reg, a: EVal, b: EVal, c: EVal) -> Res<()> {
        if let (EVal::Const(x, _), EVal::Const(y, _), EVal::Const(z, _)) = (a, b, c) {
            let mut out = Vec::new();
            let l = |v| crate::elem::Lanes::Scalar(v);
            crate::elem::fma_into(dt, l(x), l(y), l(z), 1, &mut out);
            return self.copy_elem(dt, r, EVal::Const(out[0], dt));
        }
        if dt.is_half_float() {
            let (fa, fb, fc) = (
                self.widen_f32(dt, a),
                self.widen_f32(dt, b),
                self.widen_f32(dt, c),
            );
            let g = self.regs.new_reg(Class::F32);
            self.line(format!("fma.rn.f32 \t{g}, {fa}, {fb}, {fc};"));
            self.narrow_f32(dt, g, r);
            return Ok(());
        }
        let ty = dt.info().arith;
        let a = self.ereg(a);
        self.line(format!("fma.rn.{ty} \t{r}, {a}, {b}, {c};"));
        Ok(())
    }

    fn select(&mut self, d: VarId, cond: Operand, a: Operand, b: Operand) -> Res<()> {
        let dt = self.dtype_of(a)?;
        let tz = self.tz_of(a).min(self.tz_of(b));
        self.elementwise(d, &[cond, a, b], |e, r, v| {
            let c = e.ereg(v[0]);
            if dt == DType::Bool {
                let (x, y) = (e.ereg(v[1]), e.ereg(v[2]));
                // r = (c & x) | (!c & y), through temporaries so `r` may alias an operand.
                let (t1, t2) = (e.pred(), e.pred());
                e.line(format!("and.pred \t{t1}, {c}, {x};"));
                e.line(format!("not.pred \t{t2}, {c};"));
                e.line(format!("and.pred \t{t2}, {t2}, {y};"));
                e.line(format!("or.pred \t{r}, {t1}, {t2};"));
            } else {
                let (x, y) = e.imm_operands(dt, v[1], v[2]);
                e.line(format!(
                    "selp.{} \t{r}, {x}, {y}, {c};",
                    dt.info().bit_reg()
                ));
            }
            Ok(())
        })?;
        if dt.is_int() {
            self.set_tz(d, tz);
        }
        Ok(())
    }

    fn cast(&mut self, d: VarId, x: Operand, to: DType) -> Res<()> {
        let from = self.dtype_of(x)?;
        self.elementwise(d, &[x], |e, r, v| e.convert(from, to, r, v[0]))
    }
}

/// The signed PTX type of the same width (`neg` takes signed types).
fn signed(ty: &str) -> String {
    format!("s{}", &ty[1..])
}
