//! Lowering of scalar and element-wise instructions. Element-wise operations run slot by slot
//! over the destination's layout (operands of one shape share the layout, scalars are used as
//! is); slot `s` of the result depends only on slot `s` of the operands, so writing a variable's
//! own registers in place is safe even when it is also an operand.

use super::code::{axis_name, Guard, Opcode, Special};
use super::collective::Placed;
use super::emit::{cmp_name_for, internal, CodegenResult, Emitter, Storage};
use super::regs::{Class, Reg};
use super::value::RegOrConst;
use crate::dtype::DType;
use crate::ir::{BinOp, Inst, Operand, Scope, Sem, Ty, UnOp, VarId};

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
        Inst::Place { .. } => "place".into(),
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
        Inst::Nanosleep { .. } => "nanosleep".into(),
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
        Inst::Prefetch { access } => format!("prefetch {:?}", access.shape).to_lowercase(),
        Inst::AtomicLoad { sem, scope, .. } => format!("atomic_load {} {}", sem.ptx(), scope.ptx()),
        Inst::AtomicStore { sem, scope, .. } => {
            format!("atomic_store {} {}", sem.ptx(), scope.ptx())
        }
        Inst::AtomicRmw { op, sem, scope, .. } => {
            format!("atomic_{} {} {}", op.name(), sem.ptx(), scope.ptx())
        }
    }
}

impl Emitter<'_> {
    pub fn inst(&mut self, dst: Option<VarId>, inst: &Inst) -> CodegenResult<()> {
        let dst_name = dst
            .map(|d| self.name(d).to_string())
            .unwrap_or_else(|| "_".into());
        self.comment(format!("{dst_name} = {}", inst_kind(inst)));
        match inst {
            Inst::Sync => {
                self.barrier();
                return Ok(());
            }
            Inst::Nanosleep { ns } => {
                let v = self.reg_or_const(*ns, 0)?;
                self.ins(["nanosleep", "u32"], (v,));
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
            | Inst::Prefetch { .. }
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
        self.record_facts(d, inst);
        Ok(())
    }

    /// An instruction that only computes the value of `d`.
    fn pure_inst(&mut self, d: VarId, inst: &Inst) -> CodegenResult<()> {
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
                self.elementwise(d, &[Operand::Var(*x)], |e, r, v| e.copy_elem(dt, r, v[0]))?;
                // The same registers' values in a new shape (the layout depends on the count).
                if let Some(a) = self.affine_of(Operand::Var(*x)).cloned() {
                    self.note_affine(d, a);
                }
                Ok(())
            }
            Inst::Broadcast { x, shape } => self.broadcast(d, *x, shape),
            Inst::Reduce { op, x } => self.reduce(d, *op, *x),
            Inst::ReduceAxis { op, x, axis, .. } => self.reduce_axis(d, *op, *x, *axis),
            Inst::Scan {
                op,
                x,
                axis,
                exclusive,
                reverse,
            } => self.scan(d, *op, *x, *axis, *exclusive, *reverse),
            Inst::Sort {
                x,
                axis,
                descending,
            } => self.sort_line(d, *x, *axis, *descending, Placed::Value, None),
            Inst::ArgSort {
                x,
                axis,
                descending,
            } => self.sort_line(d, *x, *axis, *descending, Placed::Index, None),
            Inst::TopK {
                x,
                k,
                axis,
                largest,
                indices,
            } => {
                let placed = if *indices {
                    Placed::Index
                } else {
                    Placed::Value
                };
                self.sort_line(d, *x, *axis, *largest, placed, Some(*k))
            }
            Inst::Take { x, indices, axis } => self.take(d, *x, *indices, *axis),
            Inst::EqualRank { x, order } => self.equal_rank(d, *x, order.as_deref()),
            Inst::Place { x, starts, order } => self.place(d, *x, *starts, order.as_deref()),
            Inst::Histogram { x, bins } => self.histogram(d, *x, *bins),
            _ => internal("unhandled instruction"),
        }
    }

    /// A tile-level fence: the thread-level `fence` of the legality table between two barriers.
    fn fence(&mut self, sem: Sem, scope: Scope) -> CodegenResult<()> {
        let text = crate::table::check_fence(sem, scope, Some(self.kernel().target))
            .map_err(|e| super::CodegenError::new(e.message))?;
        // Tile-level fence: the barriers make it order the whole block's accesses (the
        // writes of every thread before it, the reads of every thread after it), not
        // only each thread's own, like the tile-level release/acquire atomics.
        self.barrier();
        self.ins(Opcode::table(text), ());
        self.barrier();
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
    ) -> CodegenResult<()> {
        let rows = distributed.then(|| {
            let blocks = self.kernel().cluster.blocks().max(1) as usize;
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
        self.ins(["barrier", "cluster", "arrive", "release"], ());
        self.ins(["barrier", "cluster", "wait", "acquire"], ());
        self.require_ptx(80);
    }

    /// A grid or cluster index or size: a move from its special register (no trailing zero bits
    /// known).
    fn special_reg(&mut self, d: VarId, inst: &Inst) -> CodegenResult<()> {
        let r = self.dst_regs(d)?[0];
        let sreg = match inst {
            Inst::BlockIdx { axis } => Special::BlockIdx(*axis),
            Inst::GridDim { axis } => Special::GridDim(*axis),
            Inst::ClusterIdx { axis } => Special::ClusterIdx(*axis),
            Inst::ClusterRank => Special::ClusterRank,
            _ => Special::ClusterSize,
        };
        self.ins(["mov", "u32"], (r, sreg));
        Ok(())
    }

    /// Axis `axis` of a global tensor's dims (a 64-bit parameter register).
    fn tensor_dim(&mut self, d: VarId, tensor: VarId, axis: usize) -> CodegenResult<()> {
        let g = self.global(tensor)?;
        let Some(dim) = g.dims.get(axis).copied() else {
            return internal("dim axis out of range");
        };
        let r = self.dst_regs(d)?[0];
        self.ins(["mov", "b64"], (r, dim));
        Ok(())
    }

    /// `arange(n)`: each slot's flat tile index, from the thread's run base plus the slot's
    /// constant (widened once for 64-bit types).
    fn arange(&mut self, d: VarId, n: usize, dtype: DType) -> CodegenResult<()> {
        let layout = self.layout_of(&[n]);
        let base = self.tid_times(layout.v);
        let rs = self.dst_regs(d)?;
        let wide = dtype.bits() > 32;
        let base64 = if wide {
            let w = self.r64();
            self.ins(["cvt", "u64", "u32"], (w, base));
            Some(w)
        } else {
            None
        };
        if matches!(dtype, DType::I32 | DType::U32) {
            let top = (self.threads() - 1) * layout.v;
            let a = super::emit::affine_arange(base, top, &layout);
            return self.define_affine(d, a);
        }
        for (s, r) in rs.iter().enumerate() {
            let c = layout.slot_const(s);
            match base64 {
                Some(w) => self.ins(["add", "s64"], (r, w, c)),
                None => {
                    self.ins(["add", "s32"], (r, base, c));
                    self.normalize(dtype, *r);
                }
            }
        }
        Ok(())
    }

    /// `lane_ids(shape)`: every element a thread holds is in its lane (`tid % 32`), so every
    /// slot is a copy of one register (which ptxas folds away).
    fn lane_ids(&mut self, d: VarId, dtype: DType) -> CodegenResult<()> {
        let lane = self.lane();
        for r in self.dst_regs(d)? {
            if dtype.bits() > 32 {
                self.ins(["cvt", "u64", "u32"], (r, lane));
            } else {
                self.ins(["mov", "b32"], (r, lane));
            }
        }
        Ok(())
    }

    /// Run `f(dst_slot_reg, operand_slot_values)` for every slot of `d`.
    pub fn elementwise(
        &mut self,
        d: VarId,
        ops: &[Operand],
        mut f: impl FnMut(&mut Self, Reg, &[RegOrConst]) -> CodegenResult<()>,
    ) -> CodegenResult<()> {
        let rs = self.dst_regs(d)?;
        for (s, r) in rs.iter().enumerate() {
            let mut vals = Vec::with_capacity(ops.len());
            for o in ops {
                vals.push(self.slot_value(*o, s)?);
            }
            f(self, *r, &vals)?;
        }
        Ok(())
    }

    /// Re-normalise a narrow integer register after an operation that may have carried bits
    /// past its width (sign- or zero-extension from the type's width; nothing for other types).
    pub fn normalize(&mut self, d: DType, r: Reg) {
        let bits = d.bits();
        if !d.is_int() || bits >= 32 {
            return;
        }
        if d.is_signed() {
            self.ins(["bfe", "s32"], (r, r, 0, bits));
        } else {
            self.ins(["and", "b32"], (r, r, (1u32 << bits) - 1));
        }
    }

    fn mov(&mut self, d: VarId, o: Operand) -> CodegenResult<()> {
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
                        self.ins(["mov", "b64"], (a, b));
                    }
                }
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
                let dt = self.dtype_of(o)?;
                self.elementwise(d, &[o], |e, r, v| e.copy_elem(dt, r, v[0]))
            }
        }
    }

    /// A 64-bit register (or constant) holding integer scalar `o` sign- or zero-extended.
    pub fn wide_int(&mut self, o: Operand) -> CodegenResult<RegOrConst> {
        let d = self.dtype_of(o)?;
        let v = self.reg_or_const(o, 0)?;
        Ok(match v {
            RegOrConst::Const(bits, _) => {
                RegOrConst::Const(crate::elem::as_i128(d, bits) as i64 as u64, DType::I64)
            }
            RegOrConst::Reg(r) if d.bits() > 32 => RegOrConst::Reg(r),
            RegOrConst::Reg(r) => {
                // A narrow integer's register holds it extended to 32 bits: its arithmetic type.
                let w = self.r64();
                self.ins(["cvt", "s64", d.info().arith], (w, r));
                RegOrConst::Reg(w)
            }
        })
    }

    /// `r = a + b` on i64, saturating at the i64 range (view offsets, `crate::ir::Inst::View`).
    fn add_sat64(&mut self, r: Reg, a: Reg, b: RegOrConst) {
        let (t, x1, x2) = (self.r64(), self.r64(), self.r64());
        let ovf = self.new_pred();
        self.ins(["add", "s64"], (t, a, b));
        self.ins(["xor", "b64"], (x1, a, t));
        self.ins(["xor", "b64"], (x2, b, t));
        self.ins(["and", "b64"], (x1, x1, x2));
        self.ins(["setp", "lt", "s64"], (ovf, x1, 0));
        // On overflow: MAX when `a` was non-negative, MIN when negative.
        self.ins(["shr", "s64"], (x2, a, 63));
        self.ins(["xor", "b64"], (x2, x2, 9223372036854775807_i64));
        self.ins(["selp", "b64"], (r, x2, t, ovf));
    }

    fn view(
        &mut self,
        d: VarId,
        src: VarId,
        offset: Operand,
        shape: &[Operand],
    ) -> CodegenResult<()> {
        let s = self.global(src)?;
        let off = self.wide_int(offset)?;
        let mut dims = Vec::with_capacity(shape.len());
        for o in shape {
            dims.push(self.wide_int(*o)?);
        }
        let g = self.dst_global(d)?;
        if g.dims.len() != dims.len() {
            return internal("view rank does not match its type");
        }
        // Offset first: when `d` is `src` the remaining reads are of other registers.
        if off == RegOrConst::Const(0, DType::I64) {
            if g.off != s.off {
                self.ins(["mov", "b64"], (g.off, s.off));
            }
        } else {
            self.add_sat64(g.off, s.off, off);
        }
        if g.ptr != s.ptr {
            self.ins(["mov", "b64"], (g.ptr, s.ptr));
            self.ins(["mov", "b64"], (g.len, s.len));
        }
        for (r, v) in g.dims.iter().zip(dims) {
            self.ins(["mov", "b64"], (r, v));
        }
        Ok(())
    }

    fn binary(&mut self, d: VarId, op: BinOp, lhs: Operand, rhs: Operand) -> CodegenResult<()> {
        if self.affine_binary(d, op, lhs, rhs)? {
            return Ok(());
        }
        // Two constants (`let warps = 384 / 32; let segment = 6144 / warps;`): the result is
        // one too, moved in rather than computed.
        let known = |o: Operand| {
            let c = self.known().constant(o)?;
            let d = self.known().dtype(o)?;
            Some(Operand::Imm(crate::elem::canon(d, c as u64), d))
        };
        let (lhs, rhs) = match (known(lhs), known(rhs)) {
            (Some(a), Some(b)) => (a, b),
            _ => (lhs, rhs),
        };
        let dt = self.dtype_of(lhs)?;
        if dt == DType::Bool {
            return self.elementwise(d, &[lhs, rhs], |e, r, v| {
                let (a, b) = (e.in_reg(v[0]), e.in_reg(v[1]));
                e.bool_binary(op, r, a, b)
            });
        }
        self.elementwise(d, &[lhs, rhs], |e, r, v| {
            e.binary_elem(op, dt, r, v[0], v[1])
        })
    }

    /// `r = a op b` on one element of type `dt` (`r` is a predicate for comparisons).
    pub fn binary_elem(
        &mut self,
        op: BinOp,
        dt: DType,
        r: Reg,
        a: RegOrConst,
        b: RegOrConst,
    ) -> CodegenResult<()> {
        if let (RegOrConst::Const(x, _), RegOrConst::Const(y, _)) = (a, b) {
            let c = crate::elem::binary(op, dt, x, y);
            let out = if op.is_comparison() { DType::Bool } else { dt };
            if out == DType::Bool {
                self.ins(["mov", "pred"], (r, (c != 0) as u32));
                return Ok(());
            }
            return self.copy_elem(out, r, RegOrConst::Const(c, out));
        }
        let info = dt.info();
        if dt.is_half_float() {
            // f16/bf16: compute in f32, round once.
            let (fa, fb) = (self.widen_f32(dt, a), self.widen_f32(dt, b));
            if op.is_comparison() {
                return self.binary_elem(
                    op,
                    DType::F32,
                    r,
                    RegOrConst::Reg(fa),
                    RegOrConst::Reg(fb),
                );
            }
            let f = self.new_reg(Class::F32);
            self.binary_elem(op, DType::F32, f, RegOrConst::Reg(fa), RegOrConst::Reg(fb))?;
            self.narrow_f32(dt, f, r);
            return Ok(());
        }
        let ty = info.arith;
        if op.is_comparison() {
            let (a, b) = self.imm_operands(dt, a, b);
            self.ins(["setp", cmp_name_for(op, dt), ty], (r, a, b));
            return Ok(());
        }
        let (a, b) = self.imm_operands(dt, a, b);
        let float = dt.is_float();
        let bit = info.bit_reg();
        match op {
            BinOp::Shl | BinOp::Shr => {
                let amt = self.shift_amount(dt, b);
                let opcode = if op == BinOp::Shl {
                    ["shl", bit]
                } else {
                    ["shr", ty]
                };
                self.ins(opcode, (r, a, amt));
            }
            _ => {
                let Some(opcode) = arith_opcode(op, float, ty, bit) else {
                    return internal(format!("operator {op:?} on `{dt}`"));
                };
                self.ins(opcode, (r, a, b));
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
    fn imm_operands(
        &mut self,
        dt: DType,
        a: RegOrConst,
        b: RegOrConst,
    ) -> (RegOrConst, RegOrConst) {
        let fix = |e: &mut Self, v: RegOrConst| match v {
            RegOrConst::Const(..) if dt.is_half_float() => RegOrConst::Reg(e.in_reg(v)),
            // The first operand of an instruction must be a register.
            _ => v,
        };
        let a = match a {
            RegOrConst::Const(..) => RegOrConst::Reg(self.in_reg(a)),
            _ => a,
        };
        (fix(self, a), fix(self, b))
    }

    /// A shift amount (an element of type `dt`, read as unsigned) as a `.u32` operand, clamped
    /// so that amounts past the width shift everything out.
    fn shift_amount(&mut self, dt: DType, b: RegOrConst) -> RegOrConst {
        match b {
            RegOrConst::Const(bits, _) => RegOrConst::Const(bits.min(64), DType::U32),
            RegOrConst::Reg(r) if dt.bits() > 32 => {
                let (t, n) = (self.r64(), self.r32());
                self.ins(["min", "u64"], (t, r, 64));
                self.ins(["cvt", "u32", "u64"], (n, t));
                RegOrConst::Reg(n)
            }
            RegOrConst::Reg(_) => b,
        }
    }

    /// Binary ops on bools (operands are predicate registers).
    fn bool_binary(&mut self, op: BinOp, r: Reg, a: Reg, b: Reg) -> CodegenResult<()> {
        // a < b on bools is !a & b, etc. Temporaries keep `r` free to alias an operand.
        let (na, nb) = (self.new_pred(), self.new_pred());
        match op {
            BinOp::And | BinOp::Min => self.ins(["and", "pred"], (r, a, b)),
            BinOp::Or | BinOp::Max => self.ins(["or", "pred"], (r, a, b)),
            BinOp::Xor | BinOp::Ne => self.ins(["xor", "pred"], (r, a, b)),
            BinOp::Eq => {
                self.ins(["xor", "pred"], (na, a, b));
                self.ins(["not", "pred"], (r, na));
            }
            BinOp::Lt | BinOp::Ge | BinOp::Gt | BinOp::Le => {
                // `a < b` is `!a & b`, `a > b` is `a & !b`; `>=` and `<=` their negations.
                let less = matches!(op, BinOp::Lt | BinOp::Ge);
                let t = if less {
                    self.ins(["not", "pred"], (na, a));
                    self.ins(["and", "pred"], (nb, na, b));
                    nb
                } else {
                    self.ins(["not", "pred"], (nb, b));
                    self.ins(["and", "pred"], (na, a, nb));
                    na
                };
                let strict = matches!(op, BinOp::Lt | BinOp::Gt);
                self.ins([if strict { "mov" } else { "not" }, "pred"], (r, t));
            }
            _ => return internal(format!("operator {op:?} is not defined on bool")),
        }
        Ok(())
    }

    fn unary(&mut self, d: VarId, op: UnOp, x: Operand) -> CodegenResult<()> {
        let dt = self.dtype_of(x)?;
        self.elementwise(d, &[x], |e, r, v| e.unary_elem(op, dt, r, v[0]))
    }

    /// `r = op a` on one element of type `dt`.
    pub fn unary_elem(&mut self, op: UnOp, dt: DType, r: Reg, a: RegOrConst) -> CodegenResult<()> {
        if let RegOrConst::Const(x, _) = a {
            let c = crate::elem::unary(op, dt, x);
            return self.copy_elem(dt, r, RegOrConst::Const(c, dt));
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
                let g = self.new_reg(Class::F32);
                self.unary_elem(op, DType::F32, g, RegOrConst::Reg(f))?;
                self.narrow_f32(dt, g, r);
                return Ok(());
            }
            let a = self.in_reg(a);
            match op {
                UnOp::Sqrt => self.ins(["sqrt", "rn", ty], (r, a)),
                UnOp::Floor => self.ins(["cvt", "rmi", ty, ty], (r, a)),
                UnOp::Ceil => self.ins(["cvt", "rpi", ty, ty], (r, a)),
                UnOp::Trunc => self.ins(["cvt", "rzi", ty, ty], (r, a)),
                UnOp::RoundEven => self.ins(["cvt", "rni", ty, ty], (r, a)),
                _ => {
                    // Half away from zero (crate::elem): t = trunc(a), plus copysign(1, a)
                    // when |a - t| >= 0.5 (the difference is exact).
                    let (t, df, one) = (self.reg_of(dt), self.reg_of(dt), self.reg_of(dt));
                    let p = self.new_pred();
                    let half =
                        RegOrConst::Const(crate::elem::cast(DType::F64, dt, 0.5f64.to_bits()), dt);
                    let unit =
                        RegOrConst::Const(crate::elem::cast(DType::F64, dt, 1f64.to_bits()), dt);
                    self.ins(["cvt", "rzi", ty, ty], (t, a));
                    self.ins(["sub", "rn", ty], (df, a, t));
                    self.ins(["abs", ty], (df, df));
                    self.ins(["setp", "ge", ty], (p, df, half));
                    self.ins(["copysign", ty], (one, a, unit));
                    self.ins(["mov", ty], (r, t));
                    self.ins_if(Guard::If(p), ["add", "rn", ty], (r, t, one));
                }
            }
            return Ok(());
        }
        match (op, info.class) {
            (UnOp::Not, crate::dtype::Class::Bool) => self.ins(["not", "pred"], (r, a)),
            (UnOp::Not, _) => self.ins(["not", bit], (r, a)),
            // Float sign operations are bit operations (exact, NaN payloads kept).
            (UnOp::Neg, crate::dtype::Class::Float) => {
                let m = dt.sign_bit();
                self.ins(["xor", bit], (r, a, m));
            }
            (UnOp::Abs, crate::dtype::Class::Float) => {
                let m = !dt.sign_bit() & dt.mask();
                self.ins(["and", bit], (r, a, m));
            }
            (UnOp::Neg, _) => self.ins(["neg", signed(ty)], (r, a)),
            (UnOp::Abs, crate::dtype::Class::Signed) => self.ins(["abs", ty], (r, a)),
            (UnOp::Abs, _) => return self.copy_elem(dt, r, a),
            _ => return internal(format!("`{op:?}` on `{dt}`")),
        }
        self.normalize(dt, r);
        Ok(())
    }

    /// `r = a * b + c` with one rounding (16-bit floats through an `f32` fma).
    fn fma_elem(
        &mut self,
        dt: DType,
        r: Reg,
        a: RegOrConst,
        b: RegOrConst,
        c: RegOrConst,
    ) -> CodegenResult<()> {
        if let (RegOrConst::Const(x, _), RegOrConst::Const(y, _), RegOrConst::Const(z, _)) =
            (a, b, c)
        {
            let mut out = Vec::new();
            let l = |v| crate::elem::Lanes::Scalar(v);
            crate::elem::fma_into(dt, l(x), l(y), l(z), 1, &mut out);
            return self.copy_elem(dt, r, RegOrConst::Const(out[0], dt));
        }
        if dt.is_half_float() {
            let (fa, fb, fc) = (
                self.widen_f32(dt, a),
                self.widen_f32(dt, b),
                self.widen_f32(dt, c),
            );
            let g = self.new_reg(Class::F32);
            self.ins(["fma", "rn", "f32"], (g, fa, fb, fc));
            self.narrow_f32(dt, g, r);
            return Ok(());
        }
        let ty = dt.info().arith;
        let a = self.in_reg(a);
        self.ins(["fma", "rn", ty], (r, a, b, c));
        Ok(())
    }

    fn select(&mut self, d: VarId, cond: Operand, a: Operand, b: Operand) -> CodegenResult<()> {
        let dt = self.dtype_of(a)?;
        self.elementwise(d, &[cond, a, b], |e, r, v| {
            let c = e.in_reg(v[0]);
            if dt == DType::Bool {
                let (x, y) = (e.in_reg(v[1]), e.in_reg(v[2]));
                // r = (c & x) | (!c & y), through temporaries so `r` may alias an operand.
                let (t1, t2) = (e.new_pred(), e.new_pred());
                e.ins(["and", "pred"], (t1, c, x));
                e.ins(["not", "pred"], (t2, c));
                e.ins(["and", "pred"], (t2, t2, y));
                e.ins(["or", "pred"], (r, t1, t2));
            } else {
                let (x, y) = e.imm_operands(dt, v[1], v[2]);
                e.ins(["selp", dt.info().bit_reg()], (r, x, y, c));
            }
            Ok(())
        })
    }

    fn cast(&mut self, d: VarId, x: Operand, to: DType) -> CodegenResult<()> {
        let from = self.dtype_of(x)?;
        self.elementwise(d, &[x], |e, r, v| e.convert(from, to, r, v[0]))
    }
}

/// The instruction of `a op b` for an arithmetic or bitwise operator on a type computed in
/// `ty` (`s32`, `f64`) with bit type `bit`: floats round to nearest even.
pub(super) fn arith_opcode(
    op: BinOp,
    float: bool,
    ty: &'static str,
    bit: &'static str,
) -> Option<Opcode> {
    Some(match (op, float) {
        (BinOp::Add, true) => ["add", "rn", ty].into(),
        (BinOp::Sub, true) => ["sub", "rn", ty].into(),
        (BinOp::Mul, true) => ["mul", "rn", ty].into(),
        (BinOp::Div, true) => ["div", "rn", ty].into(),
        (BinOp::Min, true) => ["min", ty].into(),
        (BinOp::Max, true) => ["max", ty].into(),
        (BinOp::Add, false) => ["add", ty].into(),
        (BinOp::Sub, false) => ["sub", ty].into(),
        (BinOp::Mul, false) => ["mul", "lo", ty].into(),
        (BinOp::Div, false) => ["div", ty].into(),
        (BinOp::Rem, false) => ["rem", ty].into(),
        (BinOp::Min, false) => ["min", ty].into(),
        (BinOp::Max, false) => ["max", ty].into(),
        (BinOp::And, false) => ["and", bit].into(),
        (BinOp::Or, false) => ["or", bit].into(),
        (BinOp::Xor, false) => ["xor", bit].into(),
        _ => return None,
    })
}

/// The signed PTX type of the width `ty` computes in (`neg` takes signed types).
fn signed(ty: &str) -> &'static str {
    if ty.ends_with("64") {
        "s64"
    } else {
        "s32"
    }
}
