//! The emitter: per-variable register storage, operand resolution, the cached per-thread
//! prologue, and structured control flow. Instruction lowering lives in `inst.rs`, memory
//! accesses in `access.rs`, cross-thread collectives in `collective.rs`.

use std::collections::BTreeMap;

use super::code::{Address, Args, Base, Code, Guard, Ins, Label, Line, Opcode, ParamPart, Special};
use super::known::Known;
use super::regs::{Class, Reg, Regs};
use super::value::{Predicate, RegOrConst, RegOrImm};
use super::CodegenError;
use crate::ir::{DType, Kernel, Operand, ParamKind, Span, Stmt, Ty, VarId};
use crate::layout::Layout;

pub(super) type CodegenResult<T> = Result<T, CodegenError>;

pub(super) fn internal<T>(msg: impl Into<String>) -> CodegenResult<T> {
    Err(CodegenError::new(msg))
}

/// A global tensor or view: base pointer and length (elements) of the parameter it came from,
/// the element offset of the view inside it and the view's runtime dims, all 64-bit. All in
/// registers owned by the variable, so re-assigning a `let mut` view overwrites them in place.
#[derive(Debug, Clone)]
pub(super) struct GlobalView {
    pub ptr: Reg,
    pub len: Reg,
    pub off: Reg,
    pub dims: Vec<Reg>,
    /// The variable is a parameter itself (never re-assigned): offset 0 and dims `[len]`, so
    /// accesses may skip the view arithmetic.
    pub whole: bool,
}

/// Where a variable's value lives. A variable keeps the same storage for its whole life: the
/// first emitted assignment allocates it, later ones (loop-carried `let mut`) write into it.
#[derive(Debug, Clone)]
pub(super) enum Storage {
    Scalar(Reg),
    /// One register per layout slot.
    Tile(Vec<Reg>),
    Global(GlobalView),
    /// Compile-time placement in the shared window. `rows`: a distributed (cluster) tensor
    /// whose axis 0 is split over the cluster's blocks, `rows` rows per block.
    Shared {
        offset: usize,
        shape: Vec<usize>,
        rows: Option<usize>,
    },
}

/// Keys of values computed once in the prologue (they depend only on the thread index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cached {
    TidTimes(usize),
    /// `tid < owners` for partial chunks.
    TidLt(usize),
    SmemBase,
    ConstPred(bool),
    Lane,
    Warp,
    Zero16,
    ClusterRank,
}

pub(super) struct Emitter<'k> {
    pub kernel: &'k Kernel,
    pub threads: usize,
    pub regs: Regs,
    pub code: Code,
    pub storage: Vec<Option<Storage>>,
    /// What is known of values (definition sites, trailing zeros, bounds).
    pub known: Known<'k>,
    cache: BTreeMap<Cached, Reg>,
    labels: u32,
    loop_ends: Vec<Label>,
    pub tid: Reg,
    /// The kernel's tile run length (`crate::layout::vector_width`).
    pub vector_width: usize,
    /// The oldest PTX ISA version (times 10) the instructions emitted so far need.
    pub min_version: u32,
    /// Bytes of back-end scratch needed after the user's shared allocations.
    pub scratch_bytes: usize,
    /// The statement that asked for `scratch_bytes`.
    pub scratch_span: Span,
    /// The statement being generated (for errors and scratch accounting).
    span: Span,
}

fn stmt_span(s: &Stmt) -> Span {
    match s {
        Stmt::Inst { span, .. }
        | Stmt::For { span, .. }
        | Stmt::While { span, .. }
        | Stmt::If { span, .. }
        | Stmt::Break { span } => *span,
    }
}

impl<'k> Emitter<'k> {
    pub fn new(k: &'k Kernel) -> Emitter<'k> {
        let n = k.vars.len();
        let mut regs = Regs::default();
        let tid = regs.new_reg(Class::B32);
        let mut code = Code::default();
        code.prologue.push(Line::Ins(Ins::new(
            Guard::Always,
            ["mov", "u32"],
            (tid, Special::ThreadIdx),
        )));
        Emitter {
            kernel: k,
            threads: k.threads as usize,
            regs,
            code,
            storage: vec![None; n],
            known: Known::new(k),
            cache: BTreeMap::new(),
            labels: 0,
            loop_ends: Vec::new(),
            tid,
            vector_width: crate::layout::vector_width(k),
            min_version: 78,
            scratch_bytes: 0,
            scratch_span: Span::NONE,
            span: Span::NONE,
        }
    }

    // ----- code -----

    /// Appends instruction `opcode args`.
    pub fn ins(&mut self, opcode: impl Into<Opcode>, args: impl Args) {
        self.ins_if(Guard::Always, opcode, args);
    }
    /// Appends instruction `opcode args` under `guard`.
    pub fn ins_if(&mut self, guard: Guard, opcode: impl Into<Opcode>, args: impl Args) {
        self.code
            .body
            .push(Line::Ins(Ins::new(guard, opcode, args)));
    }
    pub fn comment(&mut self, s: impl Into<String>) {
        self.code.body.push(Line::Comment(s.into()));
    }
    pub(super) fn label(&mut self, l: Label) {
        self.code.body.push(Line::Label(l));
    }
    pub fn new_label(&mut self, kind: &'static str) -> Label {
        self.labels += 1;
        Label {
            kind,
            n: self.labels,
        }
    }
    /// A branch to `l` taken by all threads of a warp alike (`bra.uni`) where `guard` holds.
    pub(super) fn branch_uniform(&mut self, guard: Guard, l: Label) {
        self.ins_if(guard, ["bra", "uni"], (l,));
    }
    /// A branch to `l` where `guard` holds, which threads of a warp may take apart (`bra`).
    pub(super) fn branch(&mut self, guard: Guard, l: Label) {
        self.ins_if(guard, ["bra"], (l,));
    }
    /// A barrier of the whole block (`bar.sync 0`).
    pub(super) fn barrier(&mut self) {
        self.ins(["bar", "sync"], (0,));
    }
    pub fn r32(&mut self) -> Reg {
        self.regs.new_reg(Class::B32)
    }
    pub fn r64(&mut self) -> Reg {
        self.regs.new_reg(Class::B64)
    }
    pub fn new_pred(&mut self) -> Reg {
        self.regs.new_reg(Class::Pred)
    }

    /// The guard of code that runs where `p` holds: none when it always does (and, as callers
    /// emit no code under a predicate that never holds, none for `False` either).
    pub fn guard(p: Predicate) -> Guard {
        match p {
            Predicate::Reg(r) => Guard::If(r),
            _ => Guard::Always,
        }
    }

    // ----- prologue caches -----

    /// The register holding the prologue value `key`, computed there on first use by
    /// `make(register, tid)`.
    fn cached(&mut self, key: Cached, class: Class, make: impl FnOnce(Reg, Reg) -> Ins) -> Reg {
        if let Some(r) = self.cache.get(&key) {
            return *r;
        }
        let r = self.regs.new_reg(class);
        let ins = make(r, self.tid);
        self.code.prologue.push(Line::Ins(ins));
        self.cache.insert(key, r);
        r
    }

    /// `tid * v`: the thread's first flat index in every layout of width `v`.
    pub fn tid_times(&mut self, v: usize) -> Reg {
        if v == 1 {
            return self.tid;
        }
        let sh = v.trailing_zeros();
        self.cached(Cached::TidTimes(v), Class::B32, |r, t| {
            Ins::new(Guard::Always, ["shl", "b32"], (r, t, sh))
        })
    }

    /// Whether the thread owns slot chunk `o` of `layout` (compile-time true for full chunks).
    pub fn chunk_exists(&mut self, layout: &Layout, o: usize) -> Predicate {
        if layout.chunk_full(o) {
            return Predicate::True;
        }
        let owners = layout.chunk_owners(o);
        Predicate::Reg(self.cached(Cached::TidLt(owners), Class::Pred, |r, t| {
            Ins::new(Guard::Always, ["setp", "lt", "u32"], (r, t, owners))
        }))
    }

    /// 32-bit shared address of the dynamic window.
    pub fn smem_base(&mut self) -> Reg {
        self.cached(Cached::SmemBase, Class::B32, |r, _| {
            Ins::new(Guard::Always, ["mov", "u32"], (r, Special::SharedWindow))
        })
    }

    pub fn const_pred(&mut self, b: bool) -> Reg {
        self.cached(Cached::ConstPred(b), Class::Pred, |r, _| {
            Ins::new(Guard::Always, ["mov", "pred"], (r, b as i32))
        })
    }

    /// This block's rank in its cluster.
    pub fn cluster_rank_reg(&mut self) -> Reg {
        self.cached(Cached::ClusterRank, Class::B32, |r, _| {
            Ins::new(Guard::Always, ["mov", "u32"], (r, Special::ClusterRank))
        })
    }

    /// A 16-bit register holding 0 (the low half when widening `bf16`).
    pub fn zero16(&mut self) -> Reg {
        self.cached(Cached::Zero16, Class::B16, |r, _| {
            Ins::new(Guard::Always, ["mov", "b16"], (r, 0))
        })
    }

    pub fn lane(&mut self) -> Reg {
        self.cached(Cached::Lane, Class::B32, |r, t| {
            Ins::new(Guard::Always, ["and", "b32"], (r, t, 31))
        })
    }

    pub fn warp(&mut self) -> Reg {
        self.cached(Cached::Warp, Class::B32, |r, t| {
            Ins::new(Guard::Always, ["shr", "u32"], (r, t, 5))
        })
    }

    /// Reserve `bytes` of scratch (shared memory after the user's allocations); returns its
    /// 32-bit shared address register expression base and byte offset.
    pub fn scratch(&mut self, bytes: usize) -> usize {
        if bytes > self.scratch_bytes {
            self.scratch_bytes = bytes;
            self.scratch_span = self.span;
        }
        self.scratch_offset()
    }
    pub fn scratch_offset(&self) -> usize {
        self.kernel.shared_bytes.div_ceil(16) * 16
    }

    // ----- types and storage -----

    pub fn ty(&self, v: VarId) -> CodegenResult<&'k Ty> {
        match self.kernel.vars.get(v as usize) {
            Some(var) => Ok(&var.ty),
            None => internal(format!("variable {v} out of range")),
        }
    }
    pub fn name(&self, v: VarId) -> &str {
        self.kernel
            .vars
            .get(v as usize)
            .map(|x| x.name.as_str())
            .unwrap_or("?")
    }
    pub fn op_ty(&self, o: Operand) -> CodegenResult<Ty> {
        match o {
            Operand::Var(v) => Ok(self.ty(v)?.clone()),
            Operand::Imm(_, d) => Ok(Ty::Scalar(d)),
        }
    }
    pub fn layout_of(&self, shape: &[usize]) -> Layout {
        Layout::new(crate::ir::numel(shape), self.threads, self.vector_width)
    }
    pub fn class_of(d: DType) -> Class {
        d.info().reg
    }
    /// A fresh register holding an element of type `d`.
    pub fn reg_of(&mut self, d: DType) -> Reg {
        self.regs.new_reg(Self::class_of(d))
    }

    pub fn storage(&self, v: VarId) -> CodegenResult<&Storage> {
        match self.storage.get(v as usize) {
            Some(Some(s)) => Ok(s),
            _ => internal(format!(
                "variable `{}` ({v}) read before it is assigned",
                self.name(v)
            )),
        }
    }

    /// The registers of a scalar or tile variable, allocating them on its first assignment.
    pub fn dst_regs(&mut self, v: VarId) -> CodegenResult<Vec<Reg>> {
        if let Some(Some(s)) = self.storage.get(v as usize) {
            return match s {
                Storage::Scalar(r) => Ok(vec![*r]),
                Storage::Tile(rs) => Ok(rs.clone()),
                _ => internal(format!("`{}` is not a register value", self.name(v))),
            };
        }
        let (st, regs) = match self.ty(v)? {
            Ty::Scalar(d) => {
                let r = self.regs.new_reg(Self::class_of(*d));
                (Storage::Scalar(r), vec![r])
            }
            Ty::Tile { dtype, shape } => {
                let n = self.layout_of(shape).slots();
                let rs: Vec<Reg> = (0..n)
                    .map(|_| self.regs.new_reg(Self::class_of(*dtype)))
                    .collect();
                (Storage::Tile(rs.clone()), rs)
            }
            _ => return internal(format!("`{}` is not a register value", self.name(v))),
        };
        self.storage[v as usize] = Some(st);
        Ok(regs)
    }

    /// The global storage of `v`, allocating registers on first assignment.
    pub fn dst_global(&mut self, v: VarId) -> CodegenResult<GlobalView> {
        if let Some(Some(s)) = self.storage.get(v as usize) {
            return match s {
                Storage::Global(g) => Ok(g.clone()),
                _ => internal(format!("`{}` is not a global tensor", self.name(v))),
            };
        }
        let Ty::Global { rank, .. } = self.ty(v)? else {
            return internal(format!("`{}` is not a global tensor", self.name(v)));
        };
        let whole = (v as usize) < self.kernel.params.len();
        let g = GlobalView {
            ptr: self.r64(),
            len: self.r64(),
            off: self.r64(),
            dims: (0..*rank).map(|_| self.r64()).collect(),
            whole,
        };
        self.storage[v as usize] = Some(Storage::Global(g.clone()));
        Ok(g)
    }

    pub fn global(&self, v: VarId) -> CodegenResult<GlobalView> {
        match self.storage(v)? {
            Storage::Global(g) => Ok(g.clone()),
            _ => internal(format!("`{}` is not a global tensor", self.name(v))),
        }
    }

    /// Number of register slots of an operand (1 for scalars).
    pub fn is_tile(&self, o: Operand) -> CodegenResult<bool> {
        Ok(matches!(self.op_ty(o)?, Ty::Tile { .. }))
    }

    /// Element `slot` of an operand as a register or a 32-bit immediate: for index arithmetic
    /// on 32-bit (and narrower) integers, and for any operand held in a register.
    pub fn reg_or_imm(&mut self, o: Operand, slot: usize) -> CodegenResult<RegOrImm> {
        match o {
            Operand::Imm(bits, d) if d.bits() <= 32 && !d.is_float() => {
                Ok(RegOrImm::Imm(crate::elem::as_i128(d, bits) as i32))
            }
            Operand::Imm(bits, d) => {
                // A wide or float constant in an index position: materialise it.
                let r = self.reg_of(d);
                self.ins(["mov", d.info().bit_reg()], (r, RegOrConst::Const(bits, d)));
                Ok(RegOrImm::Reg(r))
            }
            Operand::Var(v) => match self.storage(v)? {
                Storage::Scalar(r) => Ok(RegOrImm::Reg(*r)),
                Storage::Tile(rs) => match rs.get(slot) {
                    Some(r) => Ok(RegOrImm::Reg(*r)),
                    None => internal(format!("slot {slot} of `{}` out of range", self.name(v))),
                },
                _ => internal(format!("`{}` is not a value", self.name(v))),
            },
        }
    }

    /// Element `slot` of an operand of any type (a constant stays a constant).
    pub fn reg_or_const(&mut self, o: Operand, slot: usize) -> CodegenResult<RegOrConst> {
        match o {
            Operand::Imm(bits, d) => Ok(RegOrConst::Const(crate::elem::canon(d, bits), d)),
            Operand::Var(_) => match self.reg_or_imm(o, slot)? {
                RegOrImm::Reg(r) => Ok(RegOrConst::Reg(r)),
                RegOrImm::Imm(_) => internal("a variable resolved to an immediate"),
            },
        }
    }

    /// An element value in a register of its type's class (constants are moved in).
    pub fn in_reg(&mut self, v: RegOrConst) -> Reg {
        match v {
            RegOrConst::Reg(r) => r,
            RegOrConst::Const(bits, DType::Bool) => self.const_pred(bits != 0),
            RegOrConst::Const(bits, d) => {
                let r = self.reg_of(d);
                self.ins(["mov", d.info().bit_reg()], (r, RegOrConst::Const(bits, d)));
                r
            }
        }
    }

    /// The operand's element type.
    pub fn dtype_of(&self, o: Operand) -> CodegenResult<DType> {
        Ok(self.op_ty(o)?.dtype())
    }

    /// Element `slot` of a bool operand as a predicate (immediates fold).
    pub fn predicate_of(&mut self, o: Operand, slot: usize) -> CodegenResult<Predicate> {
        match o {
            Operand::Imm(i, _) => Ok(if i != 0 {
                Predicate::True
            } else {
                Predicate::False
            }),
            Operand::Var(_) => match self.reg_or_imm(o, slot)? {
                RegOrImm::Reg(r) if r.class == Class::Pred => Ok(Predicate::Reg(r)),
                _ => internal("expected a bool operand"),
            },
        }
    }

    // ----- small folding arithmetic on uniform or per-thread 32-bit values -----

    pub fn add32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_add(y)),
            (x, RegOrImm::Imm(0)) | (RegOrImm::Imm(0), x) => x,
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.add32(b, a),
            _ => {
                let r = self.r32();
                self.ins(["add", "s32"], (r, a, b));
                RegOrImm::Reg(r)
            }
        }
    }
    pub fn sub32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_sub(y)),
            (x, RegOrImm::Imm(0)) => x,
            _ => {
                let r = self.r32();
                self.ins(["sub", "s32"], (r, a, b));
                RegOrImm::Reg(r)
            }
        }
    }
    pub fn mul32(&mut self, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => RegOrImm::Imm(x.wrapping_mul(y)),
            (_, RegOrImm::Imm(0)) | (RegOrImm::Imm(0), _) => RegOrImm::Imm(0),
            (x, RegOrImm::Imm(1)) | (RegOrImm::Imm(1), x) => x,
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.mul32(b, a),
            _ => {
                let r = self.r32();
                self.ins(["mul", "lo", "s32"], (r, a, b));
                RegOrImm::Reg(r)
            }
        }
    }
    pub fn min_max32(&mut self, max: bool, a: RegOrImm, b: RegOrImm) -> RegOrImm {
        match (a, b) {
            (RegOrImm::Imm(x), RegOrImm::Imm(y)) => {
                RegOrImm::Imm(if max { x.max(y) } else { x.min(y) })
            }
            (RegOrImm::Imm(_), RegOrImm::Reg(_)) => self.min_max32(max, b, a),
            _ => {
                let r = self.r32();
                self.ins([if max { "max" } else { "min" }, "s32"], (r, a, b));
                RegOrImm::Reg(r)
            }
        }
    }
    /// `a cmp b` (cmp a PTX comparison like `lt`, ty `s32`/`u32`), folded when both are known.
    pub fn setp32(
        &mut self,
        cmp: &'static str,
        ty: &'static str,
        a: RegOrImm,
        b: RegOrImm,
    ) -> Predicate {
        if let (RegOrImm::Imm(x), RegOrImm::Imm(y)) = (a, b) {
            let r = if ty == "u32" {
                let (x, y) = (x as u32, y as u32);
                fold_cmp(cmp, x.cmp(&y))
            } else {
                fold_cmp(cmp, x.cmp(&y))
            };
            return if r { Predicate::True } else { Predicate::False };
        }
        let p = self.new_pred();
        self.ins(["setp", cmp, ty], (p, a, b));
        Predicate::Reg(p)
    }
    pub fn and_pred(&mut self, a: Predicate, b: Predicate) -> Predicate {
        match (a, b) {
            (Predicate::False, _) | (_, Predicate::False) => Predicate::False,
            (Predicate::True, x) | (x, Predicate::True) => x,
            (Predicate::Reg(x), Predicate::Reg(y)) => {
                let p = self.new_pred();
                self.ins(["and", "pred"], (p, x, y));
                Predicate::Reg(p)
            }
        }
    }
    /// Materialise a value into a fresh register (for instruction slots that take no immediate).
    pub fn in_reg32(&mut self, v: RegOrImm) -> Reg {
        match v {
            RegOrImm::Reg(r) => r,
            RegOrImm::Imm(i) => {
                let r = self.r32();
                self.ins(["mov", "b32"], (r, i));
                r
            }
        }
    }

    // ----- statements -----

    pub fn params(&mut self) -> CodegenResult<()> {
        let param = |i: usize, part: ParamPart| Address {
            base: Base::Param(i, part),
            offset: None,
        };
        for (i, p) in self.kernel.params.iter().enumerate() {
            let v = i as VarId;
            match &p.kind {
                ParamKind::Tensor(_) => {
                    let g = self.dst_global(v)?;
                    let raw = self.r64();
                    self.ins(["ld", "param", "u64"], (raw, param(i, ParamPart::Ptr)));
                    self.ins(["cvta", "to", "global", "u64"], (g.ptr, raw));
                    self.ins(["ld", "param", "u64"], (g.len, param(i, ParamPart::Len)));
                    self.ins(["mov", "b64"], (g.off, 0));
                    for d in &g.dims {
                        self.ins(["mov", "b64"], (d, g.len));
                    }
                    self.known.record_tensor_param(v);
                }
                ParamKind::Scalar(d) => {
                    let r = self.dst_regs(v)?[0];
                    let (pty, _) = super::param_type(*d);
                    let name = param(i, ParamPart::Value);
                    match d {
                        DType::Bool => {
                            let t = self.r32();
                            self.ins(["ld", "param", pty], (t, name));
                            self.ins(["setp", "ne", "s32"], (r, t, 0));
                        }
                        _ => {
                            self.ins(["ld", "param", pty], (r, name));
                            // Narrow integers arrive widened; keep the register normalised.
                            self.normalize(*d, r);
                        }
                    }
                }
            }
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

    pub fn block(&mut self, b: &[Stmt]) -> CodegenResult<()> {
        for s in b {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Branch to `label` when the uniform bool `cond` equals `when`.
    fn branch_if(&mut self, cond: Operand, when: bool, label: Label) -> CodegenResult<()> {
        match self.predicate_of(cond, 0)? {
            Predicate::Reg(p) if when => self.branch_uniform(Guard::If(p), label),
            Predicate::Reg(p) => self.branch_uniform(Guard::Unless(p), label),
            Predicate::True if when => self.branch_uniform(Guard::Always, label),
            Predicate::False if !when => self.branch_uniform(Guard::Always, label),
            _ => {}
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> CodegenResult<()> {
        let outer = self.span;
        self.span = stmt_span(s);
        let r = self.stmt_inner(s).map_err(|mut e| {
            if e.span == Span::NONE {
                e.span = self.span;
            }
            e
        });
        self.span = outer;
        r
    }

    fn stmt_inner(&mut self, s: &Stmt) -> CodegenResult<()> {
        match s {
            Stmt::Inst { dst, inst, .. } => self.inst(*dst, inst),
            Stmt::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                let (head, end_l) = (self.new_label("for_body"), self.new_label("for_end"));
                self.comment(format!(
                    "for {} in ({start:?}..{end:?}).step_by({step:?})",
                    self.name(*var)
                ));
                let d = self.ty(*var)?.dtype();
                let ty = d.info().arith;
                let start_v = self.reg_or_const(*start, 0)?;
                // `end` and `step` are evaluated once, before the loop (Rust range semantics).
                let end_v = self.reg_or_const(*end, 0)?;
                let step_v = self.reg_or_const(*step, 0)?;
                let (end_v, step_v) = (self.snapshot(*end, end_v), self.snapshot(*step, step_v));
                let i = self.dst_regs(*var)?[0];
                self.known.record_loop_var(*var, *start, *step);
                self.ins(["mov", d.info().bit_reg()], (i, start_v));
                let nonpos = self.setp_elem("le", d, step_v, RegOrConst::Const(0, d));
                let empty = self.setp_elem("ge", d, RegOrConst::Reg(i), end_v);
                for p in [nonpos, empty] {
                    match p {
                        Predicate::Reg(p) => self.branch_uniform(Guard::If(p), end_l),
                        Predicate::True => self.branch_uniform(Guard::Always, end_l),
                        Predicate::False => {}
                    }
                }
                self.label(head);
                self.loop_ends.push(end_l);
                self.block(body)?;
                self.loop_ends.pop();
                // Continue while step < end - i. With i < end the difference is exact as an
                // unsigned number of the register's width, so the test cannot overflow (i + step
                // might).
                let uty = if ty.ends_with("64") { "u64" } else { "u32" };
                let rem = self.reg_of(d);
                self.ins(["sub", ty], (rem, end_v, i));
                let more = self.new_pred();
                self.ins(["setp", "lt", uty], (more, step_v, rem));
                self.ins(["add", ty], (i, i, step_v));
                self.branch_uniform(Guard::If(more), head);
                self.label(end_l);
                Ok(())
            }
            Stmt::While {
                cond_block,
                cond,
                body,
                ..
            } => {
                let (head, end_l) = (self.new_label("while_head"), self.new_label("while_end"));
                self.comment("while");
                self.label(head);
                self.loop_ends.push(end_l);
                self.block(cond_block)?;
                self.branch_if(*cond, false, end_l)?;
                self.block(body)?;
                self.loop_ends.pop();
                self.branch_uniform(Guard::Always, head);
                self.label(end_l);
                Ok(())
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let (else_l, end_l) = (self.new_label("if_else"), self.new_label("if_end"));
                self.comment("if");
                self.branch_if(*cond, false, if els.is_empty() { end_l } else { else_l })?;
                self.block(then)?;
                if !els.is_empty() {
                    self.branch_uniform(Guard::Always, end_l);
                    self.label(else_l);
                    self.block(els)?;
                }
                self.label(end_l);
                Ok(())
            }
            Stmt::Break { .. } => match self.loop_ends.last().copied() {
                Some(l) => {
                    self.branch_uniform(Guard::Always, l);
                    Ok(())
                }
                None => internal("break outside a loop"),
            },
        }
    }

    /// A copy of a loop bound when its variable may be re-assigned inside the loop.
    fn snapshot(&mut self, o: Operand, v: RegOrConst) -> RegOrConst {
        match (o, v) {
            (Operand::Var(x), RegOrConst::Reg(r)) if !self.known.single_site(x) => {
                let c = self.regs.new_reg(r.class);
                self.ins(["mov", class_bits(r.class)], (c, r));
                RegOrConst::Reg(c)
            }
            _ => v,
        }
    }

    /// `a cmp b` on two elements of type `d` (integer or float comparison; `ne` on floats is
    /// the unordered one, true when either is NaN), folded when both are constants.
    pub fn setp_elem(
        &mut self,
        cmp: &'static str,
        d: DType,
        a: RegOrConst,
        b: RegOrConst,
    ) -> Predicate {
        use crate::ir::BinOp;
        if let (RegOrConst::Const(x, _), RegOrConst::Const(y, _)) = (a, b) {
            let op = match cmp {
                "eq" => BinOp::Eq,
                "ne" => BinOp::Ne,
                "lt" => BinOp::Lt,
                "le" => BinOp::Le,
                "gt" => BinOp::Gt,
                _ => BinOp::Ge,
            };
            return if crate::elem::binary(op, d, x, y) != 0 {
                Predicate::True
            } else {
                Predicate::False
            };
        }
        let p = self.new_pred();
        let cmp = if d.is_float() && cmp == "ne" {
            "neu"
        } else {
            cmp
        };
        self.ins(["setp", cmp, d.info().arith], (p, a, b));
        Predicate::Reg(p)
    }
}

fn fold_cmp(cmp: &str, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match cmp {
        "eq" => o == Equal,
        "ne" => o != Equal,
        "lt" => o == Less,
        "le" => o != Greater,
        "gt" => o == Greater,
        _ => o != Less,
    }
}

/// The bit type of a register class, for moves.
pub(super) fn class_bits(c: Class) -> &'static str {
    match c {
        Class::Pred => "pred",
        Class::B16 => "b16",
        Class::B32 | Class::F32 => "b32",
        Class::B64 | Class::F64 => "b64",
        Class::B128 => "b128",
    }
}
