//! Front end: surface AST → typed IR.
//!
//! Name resolution, builtin binding, shape/type inference and validation happen in one walk over
//! the AST. Errors are accumulated (a statement with an error is skipped, its `let` binding is
//! recorded as poisoned so later uses do not report again), so one mistake gives one diagnostic.

mod args;
mod atomics;
mod builtins;
mod cluster_rules;
mod collectives;
mod expr;
mod mathfns;
mod memory;
mod methods;

pub use builtins::{builtin_names, keyword_names};
pub use methods::method_names;
mod registers;
mod stmts;
pub mod suggest;
mod transfers;
pub use registers::MAX_ELEMENTS_PER_THREAD;
mod types;

use crate::ast::{self, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{self, Block, DType, Kernel, Operand, Span, Stmt, Target, Ty, VarId};
use std::collections::HashMap;

/// Maximum number of elements of one register tile (keeps register use and codegen sane).
pub const MAX_TILE_ELEMENTS: usize = 1 << 16;
/// Maximum tile rank.
pub const MAX_RANK: usize = 3;

use crate::target::{
    param_space_after, MAX_BLOCKS_PER_SM, MAX_PARAM_BYTES, MAX_SHARED_BYTES, MAX_THREADS_PER_SM,
};

/// Lower a kernel definition to IR.
pub fn lower(def: &ast::KernelDef) -> Result<Kernel, Vec<Diagnostic>> {
    let mut cx = Lowerer::new(def);
    cx.params(def);
    let mut body = cx.block(&def.body);
    if cx.open_lets > 0 {
        // Lower again with the types of the open `let mut`s decided (`types::Inference`).
        let types::Inference::Collect(decided) = cx.inference else {
            unreachable!("the first pass collects")
        };
        cx = Lowerer::new(def);
        cx.inference = types::Inference::Decided(decided);
        cx.params(def);
        body = cx.block(&def.body);
    }
    cx.check_cluster_rules(&mut body, def.name_span);
    if cx.distributed_shared {
        // A block must not exit while other blocks of its cluster may still access its part of
        // a distributed shared tensor (its shared memory goes away with it): every block waits
        // for the whole cluster at the end.
        body.push(Stmt::Inst {
            dst: None,
            inst: ir::Inst::ClusterSync,
            span: def.name_span,
        });
    }
    cx.check_scopes();
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let target = match def.options.target {
        Some(t) => Target(t),
        None => cx.needed_target,
    };
    let cluster = def
        .options
        .cluster
        .map(ir::Grid::from)
        .unwrap_or(ir::Grid::new(1, 1, 1));
    let kernel = Kernel {
        name: def.name.clone(),
        threads: def.options.threads,
        cluster,
        min_blocks_per_sm: def.options.min_blocks_per_sm,
        vector_width: def.options.vector_width,
        target,
        params: cx.params,
        vars: cx.vars,
        shared_bytes: cx.shared_bytes,
        body,
    };
    match registers::check(&kernel) {
        None => Ok(kernel),
        Some(too_large) => Err(vec![too_large]),
    }
}

/// Lowering failed for this expression; the diagnostic has been recorded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reported;

pub(crate) type LResult<T> = Result<T, Reported>;

/// What a source name is bound to.
#[derive(Debug, Clone)]
pub(crate) enum Binding {
    Var {
        var: VarId,
        mutable: bool,
        /// Where it is declared (for labels in diagnostics).
        decl: Span,
    },
    /// An immutable binding of a context-typed expression (`let n = 4096;`), lowered at each
    /// use with that use's type (it is pure; see `types.rs`). Names of other such bindings in
    /// it are already replaced by their expressions.
    Flex(ast::Expr),
    /// The binding's initialiser had an error: uses are silently errors too.
    Poisoned,
}

/// The state of lowering one kernel: the IR under construction, the scopes, and what the
/// checks after the body need. Its fields are the `lower` module's own (its child modules
/// reach them; nothing else does).
pub(crate) struct Lowerer {
    vars: Vec<ir::Var>,
    params: Vec<ir::Param>,
    errors: Vec<Diagnostic>,
    /// Lexical scopes, innermost last.
    scopes: Vec<HashMap<String, Binding>>,
    /// Statement blocks under construction, innermost last.
    blocks: Vec<Block>,
    shared_bytes: usize,
    /// The lowest target the kernel's features need.
    needed_target: Target,
    /// The user's explicit target, if any (features above it are errors).
    explicit_target: Option<Target>,
    /// The declared cluster shape (`#[tile_kernel(cluster = ..)]`).
    cluster: Option<[u32; 3]>,
    /// The kernel allocates a distributed shared tensor (so it ends with a cluster barrier).
    distributed_shared: bool,
    /// The distributed shared tensors (their atomics default to `cluster` scope).
    distributed_vars: std::collections::HashSet<VarId>,
    loop_depth: usize,
    /// Nesting of `unsafe` contexts (an `unsafe fn` kernel's body is one).
    unsafe_depth: usize,
    temp_counter: usize,
    /// View variable → the kernel parameter it views.
    view_base: HashMap<VarId, VarId>,
    /// View variable → its element offset into the base, when all offsets are immediates.
    view_offset: HashMap<VarId, Option<i64>>,
    /// Synchronising (non-relaxed) atomic accesses, for the scope-mismatch check.
    sync_uses: Vec<SyncUse>,
    /// `let mut` variables whose literal type the first use decides (`types.rs`).
    pending: HashMap<VarId, types::Pending>,
    /// Which pass of the literal-type inference this is (`types::Inference`).
    inference: types::Inference,
    /// Open `let mut` variables declared so far (their ordinals).
    open_lets: usize,
}

/// A non-relaxed atomic access to some memory, remembered for [`Lowerer::check_scopes`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct SyncUse {
    pub base: VarId,
    /// The elements of `base` it can touch, when known at compile time.
    pub range: Option<(i64, i64)>,
    pub sem: ir::Sem,
    pub scope: ir::Scope,
    pub span: Span,
}

impl Lowerer {
    fn new(def: &ast::KernelDef) -> Self {
        let mut cx = Lowerer {
            vars: Vec::new(),
            params: Vec::new(),
            errors: Vec::new(),
            scopes: vec![HashMap::new()],
            blocks: vec![Vec::new()],
            shared_bytes: 0,
            needed_target: Target::DEFAULT,
            explicit_target: def.options.target.map(Target),
            cluster: def.options.cluster,
            distributed_shared: false,
            distributed_vars: Default::default(),
            loop_depth: 0,
            unsafe_depth: def.options.unsafe_fn as usize,
            temp_counter: 0,
            view_base: HashMap::new(),
            view_offset: HashMap::new(),
            sync_uses: Vec::new(),
            pending: HashMap::new(),
            inference: types::Inference::Collect(Vec::new()),
            open_lets: 0,
        };
        let threads = def.options.threads;
        if threads == 0 || !threads.is_multiple_of(32) || threads > 1024 {
            cx.error(Diagnostic::new(
                def.options.threads_span,
                format!("`threads = {threads}` is not a valid block size: it must be a multiple of 32 between 32 and 1024"),
            ));
        }
        if let Some(m) = def.options.min_blocks_per_sm {
            let most = (MAX_THREADS_PER_SM / threads.max(32)).min(MAX_BLOCKS_PER_SM);
            if m == 0 || m > most {
                cx.error(
                    Diagnostic::new(
                        def.options.min_blocks_span,
                        format!("`min_blocks_per_sm = {m}` cannot be met: an SM holds 1 to {most} blocks of {threads} threads"),
                    )
                    .note(format!("an SM runs at most {MAX_THREADS_PER_SM} threads and {MAX_BLOCKS_PER_SM} blocks at once")),
                );
            }
        }
        if let Some(v) = def.options.vector_width {
            if !(v.is_power_of_two() && v <= 16) {
                cx.error(Diagnostic::new(
                    def.options.vector_width_span,
                    format!("`vector_width = {v}` is not a run length: it must be 1, 2, 4, 8 or 16 elements"),
                ));
            }
        }
        if let Some(c) = def.options.cluster {
            let blocks: u64 = c.iter().map(|&d| d as u64).product();
            if c.contains(&0) || blocks > 16 {
                cx.error(
                    Diagnostic::new(
                        def.options.cluster_span,
                        format!("`cluster = {c:?}` is not a valid cluster: each dimension must be at least 1, and a cluster holds at most 16 blocks"),
                    )
                    .note("8 blocks is the portable limit; 16 needs a GPU that allows non-portable cluster sizes (checked at launch)"),
                );
            } else {
                if def.options.target.is_some_and(|t| t < 90) {
                    cx.error(
                        Diagnostic::new(
                            def.options.cluster_span,
                            "thread-block clusters need target sm_90 or newer",
                        )
                        .help("remove the explicit `target` or raise it to 90"),
                    );
                }
                cx.needed_target = cx.needed_target.max(Target::SM_90);
            }
        }
        if let Some(t) = def.options.target {
            if t < 70 {
                cx.error(Diagnostic::new(
                    def.options.target_span,
                    format!("target sm_{t} is not supported: tilus needs sm_70 or newer (the `.sem`/`.scope` memory model)"),
                ));
            } else if Target(t).min_ptx_version().is_none() {
                let known: Vec<String> =
                    Target::KNOWN.iter().map(|(sm, _)| sm.to_string()).collect();
                cx.error(
                    Diagnostic::new(
                        def.options.target_span,
                        format!("there is no NVIDIA architecture sm_{t}"),
                    )
                    .note(format!("the targets are {}", known.join(", "))),
                );
            }
        }
        cx
    }

    pub(crate) fn error(&mut self, d: Diagnostic) -> Reported {
        self.errors.push(d);
        Reported
    }

    pub(crate) fn err<T>(&mut self, span: Span, msg: impl Into<String>) -> LResult<T> {
        Err(self.error(Diagnostic::new(span, msg)))
    }

    fn params(&mut self, def: &ast::KernelDef) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut param_bytes = 0usize;
        let mut reported_space = false;
        for p in &def.params {
            if let Some(first) = seen.insert(&p.name, p.span) {
                self.error(
                    Diagnostic::new(p.span, format!("parameter `{}` is declared twice", p.name))
                        .label(first, format!("`{}` is first declared here", p.name)),
                );
            }
            let (kind, ty) = match &p.ty {
                ast::ParamTy::GlobalTensor { elem } => {
                    let d = DType::from_name(elem).unwrap_or_else(|| {
                        self.error(
                            suggest::unknown_dtype(
                                Diagnostic::new(
                                    p.ty_span,
                                    format!("`GlobalTensor<{elem}>` is not supported: `{elem}` is not an element type"),
                                ),
                                elem,
                            ),
                        );
                        DType::I32
                    });
                    (ir::ParamKind::Tensor(d), Ty::Global { dtype: d, rank: 1 })
                }
                ast::ParamTy::Scalar(name) => {
                    let d = DType::from_name(name).unwrap_or_else(|| {
                        self.error(
                            suggest::unknown_dtype(
                                Diagnostic::new(
                                    p.ty_span,
                                    format!("parameter type `{name}` is not supported: use `GlobalTensor<T>` or a scalar element type `T`"),
                                ),
                                name,
                            ),
                        );
                        DType::I32
                    });
                    (ir::ParamKind::Scalar(d), Ty::Scalar(d))
                }
            };
            param_bytes = param_space_after(param_bytes, &kind);
            if param_bytes > MAX_PARAM_BYTES && !reported_space {
                reported_space = true;
                self.error(
                    Diagnostic::new(
                        p.span,
                        format!(
                            "too many kernel parameters: with `{}` they take {param_bytes} bytes, over the {MAX_PARAM_BYTES}-byte parameter space of a PTX entry",
                            p.name
                        ),
                    )
                    .note("a `GlobalTensor` takes 16 bytes (pointer and length), a scalar its size (narrow integers 4)")
                    .help("pass fewer tensors, e.g. one tensor holding several arrays at offsets (`.view(offset, [len])`)"),
                );
            }
            let var = self.new_var(&p.name, ty);
            self.params.push(ir::Param {
                name: p.name.clone(),
                kind,
            });
            self.bind(
                &p.name,
                Binding::Var {
                    var,
                    mutable: false,
                    decl: p.span,
                },
            );
        }
    }

    /// The memory a tensor handle ultimately refers to (a parameter or a shared allocation).
    pub(crate) fn base_of(&self, v: VarId) -> VarId {
        self.view_base.get(&v).copied().unwrap_or(v)
    }

    /// A tensor handle's constant element offset into its base (0 for the base itself).
    pub(crate) fn const_offset(&self, v: VarId) -> Option<i64> {
        match self.view_offset.get(&v) {
            Some(o) => *o,
            None => Some(0),
        }
    }

    /// cuTile's "common mistake 2": a release and an acquire on the same memory that disagree on
    /// scope do not synchronise with each other (e.g. a flag released at Device scope and
    /// acquired at Block scope by another block).
    fn check_scopes(&mut self) {
        let uses = self.sync_uses.clone();
        for (i, a) in uses.iter().enumerate() {
            for b in &uses[..i] {
                let pair = (a.sem.has_acquire() && b.sem.has_release())
                    || (a.sem.has_release() && b.sem.has_acquire());
                let overlap = match (a.range, b.range) {
                    (Some((s1, e1)), Some((s2, e2))) => s1 < e2 && s2 < e1,
                    _ => true,
                };
                if a.base == b.base && overlap && pair && a.scope != b.scope {
                    let name = self.vars[a.base as usize].name.clone();
                    self.error(
                        Diagnostic::new(
                            a.span,
                            format!(
                                "memory scope mismatch on `{name}`: this `{}` access uses scope `{}` but an earlier `{}` access uses `{}`",
                                a.sem.ptx(),
                                a.scope.ptx(),
                                b.sem.ptx(),
                                b.scope.ptx()
                            ),
                        )
                        .label(b.span, format!("the earlier `{}` access, at scope `{}`", b.sem.ptx(), b.scope.ptx()))
                        .note("a release and an acquire synchronise only if each one's scope includes the other thread")
                        .help("use the same scope on both sides (`gpu`/`MemoryScope::Device` across blocks)"),
                    );
                    break;
                }
            }
        }
    }

    pub(crate) fn new_var(&mut self, name: &str, ty: Ty) -> VarId {
        self.vars.push(ir::Var::new(name, ty));
        (self.vars.len() - 1) as VarId
    }

    /// A compiler temporary: an intermediate value with no source name.
    pub(crate) fn temp(&mut self, ty: Ty) -> VarId {
        self.temp_counter += 1;
        let name = format!("_t{}", self.temp_counter);
        self.vars.push(ir::Var {
            name,
            ty,
            temp: true,
        });
        (self.vars.len() - 1) as VarId
    }

    pub(crate) fn ty(&self, o: Operand) -> Ty {
        match o {
            Operand::Var(v) => self.vars[v as usize].ty.clone(),
            Operand::Imm(_, d) => Ty::Scalar(d),
        }
    }

    pub(crate) fn push(&mut self, stmt: Stmt) {
        self.blocks.last_mut().expect("a block is open").push(stmt);
    }

    /// Emit `tmp = inst` with a fresh temporary of type `ty`.
    pub(crate) fn emit(&mut self, inst: ir::Inst, ty: Ty, span: Span) -> Operand {
        let dst = self.temp(ty);
        self.push(Stmt::Inst {
            dst: Some(dst),
            inst,
            span,
        });
        Operand::Var(dst)
    }

    /// Emit an instruction without a result.
    pub(crate) fn emit_void(&mut self, inst: ir::Inst, span: Span) {
        self.push(Stmt::Inst {
            dst: None,
            inst,
            span,
        });
    }

    pub(crate) fn bind(&mut self, name: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .insert(name.to_string(), b);
    }

    pub(crate) fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    /// Lower a nested block in its own scope, returning its statements.
    fn block(&mut self, stmts: &[ast::Stmt]) -> Block {
        self.scopes.push(HashMap::new());
        self.blocks.push(Vec::new());
        for s in stmts {
            let _ = self.stmt(s);
        }
        self.scopes.pop();
        self.blocks.pop().expect("pushed above")
    }

    /// Record that the kernel needs at least `t` (raising the default target).
    pub(crate) fn require_target(&mut self, t: Target) {
        self.needed_target = self.needed_target.max(t);
    }

    pub(crate) fn uniform_bool(&mut self, c: Operand, span: Span, what: &str) -> LResult<Operand> {
        match self.ty(c) {
            Ty::Scalar(DType::Bool) => Ok(c),
            Ty::Tile { .. } => Err(self.error(
                Diagnostic::new(span, format!("{what} must be a block-uniform scalar `bool`, found {}", ty_name(&self.ty(c))))
                    .help("reduce the tile first (`.any()`, `.all()`, `.item()`), or choose per element with `select(cond, a, b)`"),
            )),
            t => self.err(span, format!("{what} must be a scalar `bool`, found {}", ty_name(&t))),
        }
    }

    /// A block-uniform integer scalar of any integer type.
    pub(crate) fn uniform_int(&mut self, c: Operand, span: Span, what: &str) -> LResult<Operand> {
        match self.ty(c) {
            Ty::Scalar(d) if d.is_int() => Ok(c),
            t => self.err(
                span,
                format!("{what} must be a scalar integer, found {}", ty_name(&t)),
            ),
        }
    }

    /// Lower expressions that must share one integer type: the typed ones first (in source
    /// order), then the context-typed ones as that type (`i32` when all are). Each must be a
    /// block-uniform scalar.
    pub(crate) fn unify_ints(&mut self, es: &[&Expr], what: &str) -> LResult<Vec<Operand>> {
        let mut out: Vec<Option<Operand>> = vec![None; es.len()];
        let mut d: Option<(DType, Span)> = None;
        for (i, e) in es.iter().enumerate() {
            if self.flex_kind(e).is_some() {
                continue;
            }
            let v = self.expr(e)?;
            let v = self.uniform_int(v, e.span, what)?;
            let vd = self.ty(v).dtype();
            match d {
                None => d = Some((vd, e.span)),
                Some((d0, _)) if d0 == vd => {}
                Some((d0, s0)) => {
                    return Err(self.error(
                        Diagnostic::new(
                            e.span,
                            format!("mismatched types: expected `{d0}`, found `{vd}`"),
                        )
                        .label(s0, format!("expected `{d0}` because of this"))
                        .help(types::cast_help(vd, d0)),
                    ))
                }
            }
            out[i] = Some(v);
        }
        let want = d.map(|(d, _)| d).unwrap_or(DType::I32);
        for (i, e) in es.iter().enumerate() {
            if out[i].is_none() {
                let v = self.expr_as(e, Some(want))?;
                out[i] = Some(self.uniform_int(v, e.span, what)?);
            }
        }
        Ok(out.into_iter().map(|o| o.expect("lowered")).collect())
    }

    /// `e` with the names of context-typed bindings replaced by their expressions, so that
    /// the result means the same wherever it is lowered.
    fn inline_flex(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        self.inline_into(&mut e);
        e
    }

    fn inline_into(&self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Path(p) if p.len() == 1 => {
                if let Some(Binding::Flex(x)) = self.lookup(&p[0]) {
                    e.kind = x.kind;
                }
            }
            ExprKind::Unary { x, .. } => self.inline_into(x),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.inline_into(lhs);
                self.inline_into(rhs);
            }
            ExprKind::IfElse { cond, then, els } => {
                self.inline_into(cond);
                self.inline_into(then);
                self.inline_into(els);
            }
            ExprKind::Call { args, .. } => {
                for a in args {
                    self.inline_into(&mut a.value);
                }
            }
            ExprKind::Array(items) | ExprKind::Tuple(items) => {
                for it in items {
                    self.inline_into(it);
                }
            }
            ExprKind::Unsafe(x) | ExprKind::Cast { x, .. } => self.inline_into(x),
            ExprKind::Method { receiver, args, .. } => {
                self.inline_into(receiver);
                for a in args {
                    self.inline_into(&mut a.value);
                }
            }
            _ => {}
        }
    }
}

/// How a type is named in diagnostics.
pub(crate) fn ty_name(t: &Ty) -> String {
    match t {
        Ty::Scalar(d) => format!("a scalar `{}`", d.name()),
        Ty::Tile { dtype, shape } => {
            // As the names are read aloud: "an `i32`", "an `f16`", "a `u8`", "a `bool`".
            let article = if dtype.name().starts_with(['i', 'f']) {
                "an"
            } else {
                "a"
            };
            format!("{article} `{dtype}` tile of shape {}", shape_str(shape))
        }
        Ty::Global { dtype, rank } => format!("a rank-{rank} global tensor of `{}`", dtype.name()),
        Ty::Shared { dtype, shape } => format!(
            "a shared tensor of `{}` with shape {}",
            dtype.name(),
            shape_str(shape)
        ),
    }
}

pub(crate) fn shape_str(s: &[usize]) -> String {
    format!(
        "[{}]",
        s.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}
