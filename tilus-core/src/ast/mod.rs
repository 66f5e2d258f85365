//! The surface syntax of a kernel body, as the proc macro hands it over.
//!
//! It mirrors the subset of Rust that `#[tile_kernel]` accepts, with every node carrying the
//! [`Span`] of its source tokens. Building it is purely syntactic (the macro rejects Rust that has
//! no counterpart here); all meaning (names, builtins, shapes, types) is given by `crate::lower`.

use crate::ir::Span;

mod display;

#[derive(Debug, Clone, PartialEq)]
pub struct KernelDef {
    pub name: String,
    pub name_span: Span,
    pub params: Vec<ParamDef>,
    pub body: Vec<Stmt>,
    pub options: KernelOptions,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelOptions {
    /// Threads per block.
    pub threads: u32,
    pub threads_span: Span,
    /// Requested PTX target (compute capability); `None` = the default, raised as needed.
    pub target: Option<u32>,
    pub target_span: Span,
    /// Blocks per thread-block cluster (`cluster = 4` or `cluster = [2, 2, 1]`); `None` = no
    /// cluster.
    pub cluster: Option<[u32; 3]>,
    pub cluster_span: Span,
    /// Blocks that should fit on one SM at once (`min_blocks_per_sm = 3`); `None` = no hint.
    pub min_blocks_per_sm: Option<u32>,
    pub min_blocks_span: Span,
    /// The longest run of consecutive elements a thread holds of a tile (`vector_width = 1`);
    /// `None` = 16 bytes of the kernel's narrowest element type.
    pub vector_width: Option<u32>,
    pub vector_width_span: Span,
    /// Declared `unsafe fn`: the body is an unsafe context and the launchers are `unsafe`
    /// (their callers promise what the body's unchecked operations need).
    pub unsafe_fn: bool,
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions {
            threads: 128,
            threads_span: Span::NONE,
            target: None,
            target_span: Span::NONE,
            cluster: None,
            cluster_span: Span::NONE,
            min_blocks_per_sm: None,
            min_blocks_span: Span::NONE,
            vector_width: None,
            vector_width_span: Span::NONE,
            unsafe_fn: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamDef {
    pub name: String,
    pub span: Span,
    pub ty: ParamTy,
    pub ty_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ParamTy {
    /// `GlobalTensor<elem>`
    GlobalTensor { elem: String },
    /// A scalar type name (`i32`).
    Scalar(String),
}

// Statements are built once per kernel and never moved in bulk: size differences do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Let {
        name: String,
        name_span: Span,
        mutable: bool,
        init: Expr,
        span: Span,
    },
    /// `name = value;` or `name op= value;` (with `op`).
    Assign {
        name: String,
        name_span: Span,
        op: Option<BinOp>,
        value: Expr,
        span: Span,
    },
    Expr(Expr),
    For {
        var: String,
        var_span: Span,
        range: RangeExpr,
        body: Vec<Stmt>,
        span: Span,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    /// `loop { ... }`
    Loop {
        body: Vec<Stmt>,
        span: Span,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
        span: Span,
    },
    Break {
        span: Span,
    },
    /// `unsafe { .. }`: a block whose unchecked operations (`check_bounds = false`) the kernel's
    /// author promises are sound for every launch. A scope, as in Rust.
    Unsafe {
        body: Vec<Stmt>,
        span: Span,
    },
}

/// `start..end` or `(start..end).step_by(step)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeExpr {
    pub start: Expr,
    pub end: Expr,
    pub step: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    /// `&&` (bool only; both sides are evaluated: tile code has no short circuit)
    And,
    /// `||`
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// An unsuffixed integer literal.
    pub fn int(value: i128, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Int {
                value,
                suffix: None,
            },
            span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer literal: its value as written (range-checked by the lowering) and its type
    /// suffix, if any (`7u64` has `Some("u64")`). Without a suffix its type comes from context.
    Int {
        value: i128,
        suffix: Option<String>,
    },
    /// A float literal: its text as written without the suffix (`1.5`, `2e-3`, parsed at its
    /// type so that `f32` literals round once), and its suffix (`f32`/`f64`), if any.
    Float {
        text: String,
        suffix: Option<String>,
    },
    Bool(bool),
    /// A string literal (accepted where a name is expected, e.g. `sem = "acquire"`).
    Str(String),
    /// A path: a variable (`x`), or a qualified name (`Sem::Acquire`, `MemoryOrder::Release`).
    Path(Vec<String>),
    /// `[a, b, ...]` (shapes and coordinate lists).
    Array(Vec<Expr>),
    /// `(a, b, ...)` with at least two elements (index tuples).
    Tuple(Vec<Expr>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Unary {
        op: UnOp,
        x: Box<Expr>,
    },
    /// `path(args)` or `path::<generics>(args)`.
    Call {
        path: Vec<String>,
        path_span: Span,
        generics: Vec<GenericArg>,
        args: Vec<Arg>,
    },
    /// `receiver.method(args)`.
    Method {
        receiver: Box<Expr>,
        method: String,
        method_span: Span,
        args: Vec<Arg>,
    },
    /// `if c { a } else { b }` used as a value (both arms single expressions).
    IfElse {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    /// `expr as ty`.
    Cast {
        x: Box<Expr>,
        ty: String,
        ty_span: Span,
    },
    /// `unsafe { expr }`: an expression in an unsafe context (see [`Stmt::Unsafe`]).
    Unsafe(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum GenericArg {
    /// A type name, e.g. `i32`.
    Type(String, Span),
    /// A const expression, e.g. `[256]` or `{ [16, 16] }`.
    Const(Expr),
}

/// A call argument: positional (`name == None`) or keyword (`name = value`, spelled as a Rust
/// assignment expression inside the call).
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<(String, Span)>,
    pub value: Expr,
    pub span: Span,
}

/// Every path in `e` (variables and qualified names), in source order.
pub fn visit_paths(e: &Expr, f: &mut impl FnMut(&[String])) {
    match &e.kind {
        ExprKind::Path(p) => f(p),
        ExprKind::Array(items) | ExprKind::Tuple(items) => {
            items.iter().for_each(|x| visit_paths(x, f))
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_paths(lhs, f);
            visit_paths(rhs, f);
        }
        ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } | ExprKind::Unsafe(x) => {
            visit_paths(x, f)
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| visit_paths(&a.value, f)),
        ExprKind::Method { receiver, args, .. } => {
            visit_paths(receiver, f);
            args.iter().for_each(|a| visit_paths(&a.value, f));
        }
        ExprKind::IfElse { cond, then, els } => {
            visit_paths(cond, f);
            visit_paths(then, f);
            visit_paths(els, f);
        }
        ExprKind::Int { .. } | ExprKind::Float { .. } | ExprKind::Bool(_) | ExprKind::Str(_) => {}
    }
}

impl KernelDef {
    /// Whether the kernel makes promises the compiler cannot check: it is an `unsafe fn`, or
    /// has an `unsafe` block or expression.
    pub fn uses_unsafe(&self) -> bool {
        fn expr(e: &Expr) -> bool {
            match &e.kind {
                ExprKind::Unsafe(_) => true,
                ExprKind::Array(items) | ExprKind::Tuple(items) => items.iter().any(expr),
                ExprKind::Binary { lhs, rhs, .. } => expr(lhs) || expr(rhs),
                ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } => expr(x),
                ExprKind::Call { args, .. } => args.iter().any(|a| expr(&a.value)),
                ExprKind::Method { receiver, args, .. } => {
                    expr(receiver) || args.iter().any(|a| expr(&a.value))
                }
                ExprKind::IfElse { cond, then, els } => expr(cond) || expr(then) || expr(els),
                ExprKind::Int { .. }
                | ExprKind::Float { .. }
                | ExprKind::Bool(_)
                | ExprKind::Str(_)
                | ExprKind::Path(_) => false,
            }
        }
        fn stmts(body: &[Stmt]) -> bool {
            body.iter().any(|s| match s {
                Stmt::Unsafe { .. } => true,
                Stmt::Let { init: e, .. } | Stmt::Assign { value: e, .. } | Stmt::Expr(e) => {
                    expr(e)
                }
                Stmt::For { range, body, .. } => {
                    expr(&range.start)
                        || expr(&range.end)
                        || range.step.as_ref().is_some_and(expr)
                        || stmts(body)
                }
                Stmt::While { cond, body, .. } => expr(cond) || stmts(body),
                Stmt::Loop { body, .. } => stmts(body),
                Stmt::If {
                    cond, then, els, ..
                } => expr(cond) || stmts(then) || els.as_deref().is_some_and(stmts),
                Stmt::Break { .. } => false,
            })
        }
        self.options.unsafe_fn || stmts(&self.body)
    }
}
