//! The emitter: per-variable register storage, operand resolution, the cached per-thread
//! prologue, and structured control flow. Instruction lowering lives in `inst.rs`, memory
//! accesses in `access.rs`, cross-thread collectives in `collective.rs`.

use std::collections::BTreeMap;

use super::regs::{Class, EVal, PVal, Reg, Regs, Val};
use super::CodegenError;
use crate::ir::{DType, Kernel, Operand, ParamKind, Span, Stmt, Ty, VarId};
use crate::layout::Layout;

pub(super) type Res<T> = Result<T, CodegenError>;

pub(super) fn internal<T>(msg: impl Into<String>) -> Res<T> {
    Err(CodegenError::new(msg))
}

/// A global tensor or view: base pointer and length (elements) of the parameter it came from,
/// the element offset of the view inside it and the view's runtime dims, all 64-bit. All in
/// registers owned by the variable, so re-assigning a `let mut` view overwrites them in place.
#[derive(Debug, Clone)]
pub(super) struct GlobalSt {
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
    Global(GlobalSt),
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
    pub k: &'k Kernel,
    pub threads: usize,
    pub regs: Regs,
    pub prologue: Vec<String>,
    pub body: Vec<String>,
    pub storage: Vec<Option<Storage>>,
    /// Where each variable is defined (`crate::facts`).
    pub defs: crate::facts::Defs,
    /// Known trailing zero bits of single-assignment i32 scalars (for a global view: of its
    /// offset). Used to prove vector accesses aligned.
    pub tz: Vec<u32>,
    /// Known upper bounds of single-assignment integers that are never negative (`bounds`).
    pub umax: Vec<Option<u64>>,
    cache: BTreeMap<Cached, Reg>,
    labels: u32,
    loop_ends: Vec<String>,
    pub tid: Reg,
    /// The kernel's tile run length (`crate::layout::vector_width`).
    pub vmax: usize,
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

/// Trailing zero bits of a constant (0 is divisible by everything).
pub(super) fn tz_imm(c: i64) -> u32 {
    if c == 0 {
        64
    } else {
        c.trailing_zeros()
    }
}

impl<'k> Emitter<'k> {
    pub fn new(k: &'k Kernel) -> Emitter<'k> {
        let n = k.vars.len();
        let defs = crate::facts::Defs::of(k);
        let mut regs = Regs::default();
        let tid = regs.new_reg(Class::B32);
        Emitter {
            k,
            threads: k.threads as usize,
            regs,
            prologue: vec![format!("\tmov.u32 \t{tid}, %tid.x;")],
            body: Vec::new(),
            storage: vec![None; n],
            defs,
            tz: vec![0; n],
            umax: vec![None; n],
            cache: BTreeMap::new(),
            labels: 0,
            loop_ends: Vec::new(),
            tid,
            vmax: crate::layout::vector_width(k),
            min_version: 78,
            scratch_bytes: 0,
            scratch_span: Span::NONE,
            span: Span::NONE,
        }
    }

    // ----- text -----

    pub fn line(&mut self, s: impl AsRef<str>) {
        self.body.push(format!("\t{}", s.as_ref()));
    }
    pub fn comment(&mut self, s: impl AsRef<str>) {
        // ptxas rejects non-ASCII anywhere in the file, comments included (`let größe = ..`).
        let s: String = s
            .as_ref()
            .chars()
            .map(|c| {
                if c.is_ascii() && !c.is_ascii_control() {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        self.body.push(format!("\t// {s}"));
    }
    pub(super) fn label(&mut self, l: &str) {
        self.body.push(format!("{l}:"));
    }
    pub fn new_label(&mut self, kind: &str) -> String {
        self.labels += 1;
        format!("$L_{kind}_{}", self.labels)
    }
    pub fn r32(&mut self) -> Reg {
        self.regs.new_reg(Class::B32)
    }
    pub fn r64(&mut self) -> Reg {
        self.regs.new_reg(Class::B64)
    }
    pub fn pred(&mut self) -> Reg {
        self.regs.new_reg(Class::Pred)
    }

    /// `@p ` / `@!p ` guard text for a predicate (empty when always true).
    pub fn guard(p: PVal) -> String {
        match p {
            PVal::Reg(r) => format!("@{r} "),
            _ => String::new(),
        }
    }

    // ----- prologue caches -----

    fn cached(&mut self, key: Cached, class: Class, text: impl FnOnce(Reg, Reg) -> String) -> Reg {
        if let Some(r) = self.cache.get(&key) {
            return *r;
        }
        let r = self.regs.new_reg(class);
        let line = text(r, self.tid);
        self.prologue.push(line);
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
            format!("\tshl.b32 \t{r}, {t}, {sh};")
        })
    }

    /// Whether the thread owns slot chunk `o` of `layout` (compile-time true for full chunks).
    pub fn chunk_exists(&mut self, layout: &Layout, o: usize) -> PVal {
        if layout.chunk_full(o) {
            return PVal::True;
        }
        let owners = layout.chunk_owners(o);
        PVal::Reg(self.cached(Cached::TidLt(owners), Class::Pred, |r, t| {
            format!("\tsetp.lt.u32 \t{r}, {t}, {owners};")
        }))
    }

    /// 32-bit shared address of the dynamic window.
    pub fn smem_base(&mut self) -> Reg {
        self.cached(Cached::SmemBase, Class::B32, |r, _| {
            format!("\tmov.u32 \t{r}, {};", super::SMEM_SYMBOL)
        })
    }

    pub fn const_pred(&mut self, b: bool) -> Reg {
        self.cached(Cached::ConstPred(b), Class::Pred, |r, _| {
            format!("\tmov.pred \t{r}, {};", b as i32)
        })
    }

    /// This block's rank in its cluster.
    pub fn cluster_rank_reg(&mut self) -> Reg {
        self.cached(Cached::ClusterRank, Class::B32, |r, _| {
            format!("\tmov.u32 \t{r}, %cluster_ctarank;")
        })
    }

    /// A 16-bit register holding 0 (the low half when widening `bf16`).
    pub fn zero16(&mut self) -> Reg {
        self.cached(Cached::Zero16, Class::B16, |r, _| {
            format!("\tmov.b16 \t{r}, 0;")
        })
    }

    pub fn lane(&mut self) -> Reg {
        self.cached(Cached::Lane, Class::B32, |r, t| {
            format!("\tand.b32 \t{r}, {t}, 31;")
        })
    }

    pub fn warp(&mut self) -> Reg {
        self.cached(Cached::Warp, Class::B32, |r, t| {
            format!("\tshr.u32 \t{r}, {t}, 5;")
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
        self.k.shared_bytes.div_ceil(16) * 16
    }

    // ----- types and storage -----

    pub fn ty(&self, v: VarId) -> Res<&'k Ty> {
        match self.k.vars.get(v as usize) {
            Some(var) => Ok(&var.ty),
            None => internal(format!("variable {v} out of range")),
        }
    }
    pub fn name(&self, v: VarId) -> &str {
        self.k
            .vars
            .get(v as usize)
            .map(|x| x.name.as_str())
            .unwrap_or("?")
    }
    pub fn op_ty(&self, o: Operand) -> Res<Ty> {
        match o {
            Operand::Var(v) => Ok(self.ty(v)?.clone()),
            Operand::Imm(_, d) => Ok(Ty::Scalar(d)),
        }
    }
    pub fn layout_of(&self, shape: &[usize]) -> Layout {
        Layout::new(crate::ir::numel(shape), self.threads, self.vmax)
    }
    pub fn class_of(d: DType) -> Class {
        d.info().reg
    }
    /// A fresh register holding an element of type `d`.
    pub fn reg_of(&mut self, d: DType) -> Reg {
        self.regs.new_reg(Self::class_of(d))
    }

    pub fn storage(&self, v: VarId) -> Res<&Storage> {
        match self.storage.get(v as usize) {
            Some(Some(s)) => Ok(s),
            _ => internal(format!(
                "variable `{}` ({v}) read before it is assigned",
                self.name(v)
            )),
        }
    }

    /// The registers of a scalar or tile variable, allocating them on its first assignment.
    pub fn dst_regs(&mut self, v: VarId) -> Res<Vec<Reg>> {
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
    pub fn dst_global(&mut self, v: VarId) -> Res<GlobalSt> {
        if let Some(Some(s)) = self.storage.get(v as usize) {
            return match s {
                Storage::Global(g) => Ok(g.clone()),
                _ => internal(format!("`{}` is not a global tensor", self.name(v))),
            };
        }
        let Ty::Global { rank, .. } = self.ty(v)? else {
            return internal(format!("`{}` is not a global tensor", self.name(v)));
        };
        let whole = (v as usize) < self.k.params.len();
        let g = GlobalSt {
            ptr: self.r64(),
            len: self.r64(),
            off: self.r64(),
            dims: (0..*rank).map(|_| self.r64()).collect(),
            whole,
        };
        self.storage[v as usize] = Some(Storage::Global(g.clone()));
        Ok(g)
    }

    pub fn global(&self, v: VarId) -> Res<GlobalSt> {
        match self.storage(v)? {
            Storage::Global(g) => Ok(g.clone()),
            _ => internal(format!("`{}` is not a global tensor", self.name(v))),
        }
    }

    /// Number of register slots of an operand (1 for scalars).
    pub fn is_tile(&self, o: Operand) -> Res<bool> {
        Ok(matches!(self.op_ty(o)?, Ty::Tile { .. }))
    }

    /// Element `slot` of an operand as a register or a 32-bit immediate: for index arithmetic
    /// on 32-bit (and narrower) integers, and for any operand held in a register.
    pub fn elem(&mut self, o: Operand, slot: usize) -> Res<Val> {
        match o {
            Operand::Imm(bits, d) if d.bits() <= 32 && !d.is_float() => {
                Ok(Val::Imm(crate::elem::as_i128(d, bits) as i32))
            }
            Operand::Imm(bits, d) => {
                // A wide or float constant in an index position: materialise it.
                let r = self.reg_of(d);
                self.line(format!(
                    "mov.{} \t{r}, {};",
                    d.info().bit_reg(),
                    EVal::Const(bits, d)
                ));
                Ok(Val::Reg(r))
            }
            Operand::Var(v) => match self.storage(v)? {
                Storage::Scalar(r) => Ok(Val::Reg(*r)),
                Storage::Tile(rs) => match rs.get(slot) {
                    Some(r) => Ok(Val::Reg(*r)),
                    None => internal(format!("slot {slot} of `{}` out of range", self.name(v))),
                },
                _ => internal(format!("`{}` is not a value", self.name(v))),
            },
        }
    }

    /// Element `slot` of an operand of any type (a constant stays a constant).
    pub fn eval(&mut self, o: Operand, slot: usize) -> Res<EVal> {
        match o {
            Operand::Imm(bits, d) => Ok(EVal::Const(crate::elem::canon(d, bits), d)),
            Operand::Var(_) => match self.elem(o, slot)? {
                Val::Reg(r) => Ok(EVal::Reg(r)),
                Val::Imm(_) => internal("a variable resolved to an immediate"),
            },
        }
    }

    /// An element value in a register of its type's class (constants are moved in).
    pub fn ereg(&mut self, v: EVal) -> Reg {
        match v {
            EVal::Reg(r) => r,
            EVal::Const(bits, DType::Bool) => self.const_pred(bits != 0),
            EVal::Const(bits, d) => {
                let r = self.reg_of(d);
                self.line(format!(
                    "mov.{} \t{r}, {};",
                    d.info().bit_reg(),
                    EVal::Const(bits, d)
                ));
                r
            }
        }
    }

    /// The operand's element type.
    pub fn dtype_of(&self, o: Operand) -> Res<DType> {
        Ok(self.op_ty(o)?.dtype())
    }

    /// Element `slot` of a bool operand as a predicate (immediates fold).
    pub fn elem_pval(&mut self, o: Operand, slot: usize) -> Res<PVal> {
        match o {
            Operand::Imm(i, _) => Ok(if i != 0 { PVal::True } else { PVal::False }),
            Operand::Var(_) => match self.elem(o, slot)? {
                Val::Reg(r) if r.class == Class::Pred => Ok(PVal::Reg(r)),
                _ => internal("expected a bool operand"),
            },
        }
    }

    /// Known trailing zero bits of an integer scalar operand.
    pub fn tz_of(&self, o: Operand) -> u32 {
        match o {
            Operand::Imm(c, d) if d.is_int() => tz_imm(crate::elem::as_i128(d, c) as i64),
            Operand::Imm(..) => 0,
            Operand::Var(v) if self.defs.single_site(v) => self.tz[v as usize],
            Operand::Var(_) => 0,
        }
    }
    pub fn set_tz(&mut self, v: VarId, tz: u32) {
        if self.defs.single_site(v) {
            self.tz[v as usize] = tz.min(64);
        }
    }

    // ----- small folding arithmetic on uniform or per-thread 32-bit values -----

    pub fn vadd(&mut self, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Imm(x), Val::Imm(y)) => Val::Imm(x.wrapping_add(y)),
            (x, Val::Imm(0)) | (Val::Imm(0), x) => x,
            (Val::Imm(_), Val::Reg(_)) => self.vadd(b, a),
            _ => {
                let r = self.r32();
                self.line(format!("add.s32 \t{r}, {a}, {b};"));
                Val::Reg(r)
            }
        }
    }
    pub fn vsub(&mut self, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Imm(x), Val::Imm(y)) => Val::Imm(x.wrapping_sub(y)),
            (x, Val::Imm(0)) => x,
            _ => {
                let r = self.r32();
                self.line(format!("sub.s32 \t{r}, {a}, {b};"));
                Val::Reg(r)
            }
        }
    }
    pub fn vmul(&mut self, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Imm(x), Val::Imm(y)) => Val::Imm(x.wrapping_mul(y)),
            (_, Val::Imm(0)) | (Val::Imm(0), _) => Val::Imm(0),
            (x, Val::Imm(1)) | (Val::Imm(1), x) => x,
            (Val::Imm(_), Val::Reg(_)) => self.vmul(b, a),
            _ => {
                let r = self.r32();
                self.line(format!("mul.lo.s32 \t{r}, {a}, {b};"));
                Val::Reg(r)
            }
        }
    }
    pub fn vminmax(&mut self, max: bool, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Imm(x), Val::Imm(y)) => Val::Imm(if max { x.max(y) } else { x.min(y) }),
            (Val::Imm(_), Val::Reg(_)) => self.vminmax(max, b, a),
            _ => {
                let r = self.r32();
                self.line(format!(
                    "{}.s32 \t{r}, {a}, {b};",
                    if max { "max" } else { "min" }
                ));
                Val::Reg(r)
            }
        }
    }
    /// `a cmp b` (cmp a PTX comparison like `lt`, ty `s32`/`u32`), folded when both are known.
    pub fn vsetp(&mut self, cmp: &str, ty: &str, a: Val, b: Val) -> PVal {
        if let (Val::Imm(x), Val::Imm(y)) = (a, b) {
            let r = if ty == "u32" {
                let (x, y) = (x as u32, y as u32);
                fold_cmp(cmp, x.cmp(&y))
            } else {
                fold_cmp(cmp, x.cmp(&y))
            };
            return if r { PVal::True } else { PVal::False };
        }
        let p = self.pred();
        self.line(format!("setp.{cmp}.{ty} \t{p}, {a}, {b};"));
        PVal::Reg(p)
    }
    pub fn pand(&mut self, a: PVal, b: PVal) -> PVal {
        match (a, b) {
            (PVal::False, _) | (_, PVal::False) => PVal::False,
            (PVal::True, x) | (x, PVal::True) => x,
            (PVal::Reg(x), PVal::Reg(y)) => {
                let p = self.pred();
                self.line(format!("and.pred \t{p}, {x}, {y};"));
                PVal::Reg(p)
            }
        }
    }
    /// Materialise a value into a fresh register (for instruction slots that take no immediate).
    pub fn in_reg(&mut self, v: Val) -> Reg {
        match v {
            Val::Reg(r) => r,
            Val::Imm(i) => {
                let r = self.r32();
                self.line(format!("mov.b32 \t{r}, {i};"));
                r
            }
        }
    }

    // ----- statements -----

    pub fn params(&mut self) -> Res<()> {
        let entry = super::entry_name(&self.k.name);
        let param = |i: usize, part: &str| super::param_name(&entry, i, part);
        for (i, p) in self.k.params.iter().enumerate() {
            let v = i as VarId;
            match &p.kind {
                ParamKind::Tensor(_) => {
                    let g = self.dst_global(v)?;
                    let raw = self.r64();
                    self.line(format!("ld.param.u64 \t{raw}, [{}];", param(i, "_ptr")));
                    self.line(format!("cvta.to.global.u64 \t{}, {raw};", g.ptr));
                    self.line(format!("ld.param.u64 \t{}, [{}];", g.len, param(i, "_len")));
                    self.line(format!("mov.b64 \t{}, 0;", g.off));
                    for d in &g.dims {
                        self.line(format!("mov.b64 \t{d}, {};", g.len));
                    }
                    self.tz[i] = 64;
                }
                ParamKind::Scalar(d) => {
                    let r = self.dst_regs(v)?[0];
                    let (pty, _) = super::param_type(*d);
                    let name = param(i, "");
                    match d {
                        DType::Bool => {
                            let t = self.r32();
                            self.line(format!("ld.param.{pty} \t{t}, [{name}];"));
                            self.line(format!("setp.ne.s32 \t{r}, {t}, 0;"));
                        }
                        _ => {
                            self.line(format!("ld.param.{pty} \t{r}, [{name}];"));
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
            self.line(format!("bfe.s32 \t{r}, {r}, 0, {bits};"));
        } else {
            self.line(format!("and.b32 \t{r}, {r}, {};", (1u32 << bits) - 1));
        }
    }

    pub fn block(&mut self, b: &[Stmt]) -> Res<()> {
        for s in b {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// Branch to `label` when the uniform bool `cond` equals `when`.
    fn branch_if(&mut self, cond: Operand, when: bool, label: &str) -> Res<()> {
        match self.elem_pval(cond, 0)? {
            PVal::Reg(p) => {
                let neg = if when { "" } else { "!" };
                self.line(format!("@{neg}{p} bra.uni \t{label};"));
            }
            PVal::True if when => self.line(format!("bra.uni \t{label};")),
            PVal::False if !when => self.line(format!("bra.uni \t{label};")),
            _ => {}
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Res<()> {
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

    fn stmt_inner(&mut self, s: &Stmt) -> Res<()> {
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
                let start_v = self.eval(*start, 0)?;
                // `end` and `step` are evaluated once, before the loop (Rust range semantics).
                let end_v = self.eval(*end, 0)?;
                let step_v = self.eval(*step, 0)?;
                let (end_v, step_v) = (self.snapshot(*end, end_v), self.snapshot(*step, step_v));
                let tz = self.tz_of(*start).min(self.tz_of(*step));
                let i = self.dst_regs(*var)?[0];
                self.set_tz(*var, tz);
                self.line(format!("mov.{} \t{i}, {start_v};", d.info().bit_reg()));
                let nonpos = self.esetp("le", d, step_v, EVal::Const(0, d));
                let empty = self.esetp("ge", d, EVal::Reg(i), end_v);
                for p in [nonpos, empty] {
                    match p {
                        PVal::Reg(p) => self.line(format!("@{p} bra.uni \t{end_l};")),
                        PVal::True => self.line(format!("bra.uni \t{end_l};")),
                        PVal::False => {}
                    }
                }
                self.label(&head);
                self.loop_ends.push(end_l.clone());
                self.block(body)?;
                self.loop_ends.pop();
                // Continue while step < end - i. With i < end the difference is exact as an
                // unsigned number of the register's width, so the test cannot overflow (i + step
                // might).
                let uty = if ty.ends_with("64") { "u64" } else { "u32" };
                let rem = self.reg_of(d);
                self.line(format!("sub.{ty} \t{rem}, {end_v}, {i};"));
                let more = self.pred();
                self.line(format!("setp.lt.{uty} \t{more}, {step_v}, {rem};"));
                self.line(format!("add.{ty} \t{i}, {i}, {step_v};"));
                self.line(format!("@{more} bra.uni \t{head};"));
                self.label(&end_l);
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
                self.label(&head);
                self.loop_ends.push(end_l.clone());
                self.block(cond_block)?;
                self.branch_if(*cond, false, &end_l)?;
                self.block(body)?;
                self.loop_ends.pop();
                self.line(format!("bra.uni \t{head};"));
                self.label(&end_l);
                Ok(())
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let (else_l, end_l) = (self.new_label("if_else"), self.new_label("if_end"));
                self.comment("if");
                self.branch_if(*cond, false, if els.is_empty() { &end_l } else { &else_l })?;
                self.block(then)?;
                if !els.is_empty() {
                    self.line(format!("bra.uni \t{end_l};"));
                    self.label(&else_l);
                    self.block(els)?;
                }
                self.label(&end_l);
                Ok(())
            }
            Stmt::Break { .. } => match self.loop_ends.last().cloned() {
                Some(l) => {
                    self.line(format!("bra.uni \t{l};"));
                    Ok(())
                }
                None => internal("break outside a loop"),
            },
        }
    }

    /// A copy of a loop bound when its variable may be re-assigned inside the loop.
    fn snapshot(&mut self, o: Operand, v: EVal) -> EVal {
        match (o, v) {
            (Operand::Var(x), EVal::Reg(r)) if !self.defs.single_site(x) => {
                let c = self.regs.new_reg(r.class);
                self.line(format!("mov.{} \t{c}, {r};", class_bits(r.class)));
                EVal::Reg(c)
            }
            _ => v,
        }
    }

    /// `a cmp b` on two elements of type `d` (integer or float comparison; `ne` on floats is
    /// the unordered one, true when either is NaN), folded when both are constants.
    pub fn esetp(&mut self, cmp: &str, d: DType, a: EVal, b: EVal) -> PVal {
        use crate::ir::BinOp;
        if let (EVal::Const(x, _), EVal::Const(y, _)) = (a, b) {
            let op = match cmp {
                "eq" => BinOp::Eq,
                "ne" => BinOp::Ne,
                "lt" => BinOp::Lt,
                "le" => BinOp::Le,
                "gt" => BinOp::Gt,
                _ => BinOp::Ge,
            };
            return if crate::elem::binary(op, d, x, y) != 0 {
                PVal::True
            } else {
                PVal::False
            };
        }
        let p = self.pred();
        let cmp = if d.is_float() && cmp == "ne" {
            "neu"
        } else {
            cmp
        };
        self.line(format!("setp.{cmp}.{} \t{p}, {a}, {b};", d.info().arith));
        PVal::Reg(p)
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
