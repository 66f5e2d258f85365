//! Types that come from context, as in Rust.
//!
//! An unsuffixed integer literal has the integer type its context needs (`x + 1` with `x: u8`
//! adds a `u8`), an unsuffixed float literal the float type, and without context they are
//! `i32` and `f64`, as rustc's `{integer}` and `{float}` defaults. So are the expressions built
//! only from such literals and from the builtins whose values are small integers
//! (`block_idx()`, `grid_dim()`, `arange(n)`) or constants of any numeric type (`zeros`,
//! `ones`): a [`Flex`] expression is pure, so the lowering may evaluate it where its type is
//! known (after the other operand of a binary operator, at each use of a `let` bound to it).
//!
//! A `let mut` initialised with a literal (or `zeros`/`ones`/`full` of one) keeps its literal
//! type open until a use that needs one type decides it (`let mut acc = 0.0; acc += x.sum();`
//! with an `f32` tile makes `acc` an `f32`). The body is then lowered again with that type
//! fixed from the `let` on ([`Inference`]), so definitions in branches and loops before the
//! deciding use get it too. Within one expression an open variable counts as context-typed, so
//! the typed side decides it whichever side it stands on (`r < n` and `n > r` with `n: i64`
//! both make `r` an `i64`).
//!
//! A value-`if` is context-typed when its arms are and its condition is *static* (built from
//! literals, context-typed bindings and the grid builtins): it then means the same wherever it
//! is lowered. A `let` of a value-`if` whose condition is not static evaluates the condition
//! once, where the `let` stands, and keeps only the choice between the arms open
//! ([`Lowerer::freeze_conditions`]): the condition's effects happen exactly once, in order.
//!
//! Nothing converts implicitly: operands of different types are an error at the operator,
//! saying which `as` to write (widening the narrower side where one side converts losslessly).

use super::{ty_name, LResult, Lowerer};
use crate::ast::{self, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::elem;
use crate::ir::{DType, Inst, Operand, Span, Stmt, Ty, VarId};

/// The kind of type a context-typed expression may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flex {
    /// Any integer type (default `i32`).
    Int,
    /// Any float type (default `f64`).
    Float,
    /// Any numeric type (`zeros`, `ones`; default `i32`).
    Num,
}

impl Flex {
    pub fn default_type(self) -> DType {
        match self {
            Flex::Int | Flex::Num => DType::I32,
            Flex::Float => DType::F64,
        }
    }
    pub fn accepts(self, d: DType) -> bool {
        match self {
            Flex::Int => d.is_int(),
            Flex::Float => d.is_float(),
            Flex::Num => d.is_numeric(),
        }
    }
    /// The kind of an operation on two flexible operands (`None`: they cannot agree).
    pub fn unify(a: Flex, b: Flex) -> Option<Flex> {
        match (a, b) {
            (Flex::Num, x) | (x, Flex::Num) => Some(x),
            (x, y) if x == y => Some(x),
            _ => None,
        }
    }
}

/// A `let mut` variable whose type is still open (in the inference pass, see [`Inference`]).
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub kind: Flex,
    /// Which open `let mut` of the kernel it is, in lowering order.
    pub ordinal: usize,
}

/// How the types of open `let mut` variables are decided: the body is lowered twice when it
/// has any. The first pass ([`Inference::Collect`]) keeps them open and records, for each, the
/// type its first use that needs one gives (a use that accepts any type decides nothing); its
/// IR and errors are thrown away. The second ([`Inference::Decided`]) lowers each one as a
/// typed variable from its `let` on, so every definition and use, in any order or nesting, has
/// the decided type (the default where no use decided).
#[derive(Debug, Clone)]
pub(crate) enum Inference {
    Collect(Vec<Option<DType>>),
    Decided(Vec<Option<DType>>),
}

/// Where a context-typed expression is lowered later than it stands, which decides what may
/// be in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Defer {
    /// Later within the same expression (after its typed sibling): reading a variable is
    /// pure there, since no statement runs in between, so an open `let mut` counts.
    InExpression,
    /// At each use of a `let` binding: only what means the same at every later point counts,
    /// so no variables; a value-`if`'s condition is frozen first ([`Lowerer::freeze_conditions`]).
    AtUses,
}

/// The prefix of the hidden names that frozen value-`if` conditions are bound to: not a Rust
/// identifier, so no user binding can shadow one.
const FROZEN_PREFIX: &str = "#cond";

impl Lowerer {
    /// The context-typed kind of `e`, if its type is decided by where it is used (and it may
    /// be lowered after its typed sibling in the same expression).
    pub(crate) fn flex_kind(&self, e: &Expr) -> Option<Flex> {
        self.flex_kind_for(e, Defer::InExpression)
    }

    /// The context-typed kind of `e` for a use deferred as `defer` says.
    pub(crate) fn flex_kind_for(&self, e: &Expr, defer: Defer) -> Option<Flex> {
        let flex = |x: &Expr| self.flex_kind_for(x, defer);
        match &e.kind {
            ExprKind::Int { suffix: None, .. } => Some(Flex::Int),
            ExprKind::Float { suffix: None, .. } => Some(Flex::Float),
            ExprKind::Unary { x, .. } | ExprKind::Unsafe(x) => flex(x),
            ExprKind::Binary { op, lhs, rhs } => {
                use ast::BinOp as B;
                match op {
                    B::Shl | B::Shr => flex(lhs).filter(|_| flex(rhs).is_some()),
                    B::Add
                    | B::Sub
                    | B::Mul
                    | B::Div
                    | B::Rem
                    | B::BitAnd
                    | B::BitOr
                    | B::BitXor => Flex::unify(flex(lhs)?, flex(rhs)?),
                    _ => None,
                }
            }
            ExprKind::Path(p) if p.len() == 1 => match self.lookup(&p[0]) {
                Some(super::Binding::Flex(e)) => self.flex_kind_for(&e, defer),
                Some(super::Binding::Var { var, .. }) if defer == Defer::InExpression => {
                    self.pending.get(&var).map(|p| p.kind)
                }
                _ => None,
            },
            ExprKind::Call {
                path,
                args,
                generics,
                ..
            } if generics.is_empty() => {
                let name = path.last().map(String::as_str);
                let plain =
                    path.len() == 1 || matches!(path.first().map(String::as_str), Some("tilus"));
                match (name, plain) {
                    (Some("block_idx" | "grid_dim" | "cluster_idx"), true) if args.len() <= 1 => {
                        Some(Flex::Int)
                    }
                    (Some("cluster_rank" | "cluster_size"), true) if args.is_empty() => {
                        Some(Flex::Int)
                    }
                    // Typed by its length's suffix (`arange(32u64)`), else by the context.
                    (Some("arange"), true) if args.len() == 1 => flex(&args[0].value),
                    (Some("zeros" | "ones"), true) if args.len() == 1 => Some(Flex::Num),
                    (Some("lane_ids"), true) if args.len() == 1 => Some(Flex::Int),
                    (Some("full"), true) if args.len() == 2 => flex(&args[1].value),
                    _ => None,
                }
            }
            // Only a static condition may be evaluated later, or more than once, unseen: one
            // with an effect, a load or a variable would happen at the wrong time. A `let`
            // freezes any other condition first (`freeze_conditions`).
            ExprKind::IfElse { cond, then, els }
                if defer == Defer::AtUses || self.is_static(cond) =>
            {
                Flex::unify(flex(then)?, flex(els)?)
            }
            _ => None,
        }
    }

    /// `Some(d)` as the wanted type of `e` at a position that accepts any integer type and
    /// merely prefers `d` for literals: `None` when `e` reads an open `let mut`, whose type
    /// only a position that needs one type decides.
    pub(crate) fn preference(&self, e: &Expr, d: DType) -> Option<DType> {
        let mut open = false;
        crate::ast::visit_paths(e, &mut |p| {
            if let [name] = p {
                if let Some(super::Binding::Var { var, .. }) = self.lookup(name) {
                    open |= self.is_open(var);
                }
            }
        });
        (!open).then_some(d)
    }

    /// Whether `e` has the same value wherever and however often it is evaluated: literals,
    /// context-typed bindings, frozen conditions and the grid builtins, combined by operators
    /// and casts. It reads no memory and no variable, and has no effect.
    pub(crate) fn is_static(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int { .. } | ExprKind::Float { .. } | ExprKind::Bool(_) => true,
            ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } | ExprKind::Unsafe(x) => {
                self.is_static(x)
            }
            ExprKind::Binary { lhs, rhs, .. } => self.is_static(lhs) && self.is_static(rhs),
            ExprKind::IfElse { cond, then, els } => {
                self.is_static(cond) && self.is_static(then) && self.is_static(els)
            }
            ExprKind::Path(p) if p.len() == 1 => {
                p[0].starts_with(FROZEN_PREFIX)
                    || matches!(self.lookup(&p[0]), Some(super::Binding::Flex(_)))
            }
            ExprKind::Call {
                path,
                args,
                generics,
                ..
            } => {
                let plain =
                    path.len() == 1 || matches!(path.first().map(String::as_str), Some("tilus"));
                let grid = matches!(
                    path.last().map(String::as_str),
                    Some(
                        "block_idx" | "grid_dim" | "cluster_idx" | "cluster_rank" | "cluster_size"
                    )
                );
                plain
                    && grid
                    && generics.is_empty()
                    && args.iter().all(|a| self.is_static(&a.value))
            }
            _ => false,
        }
    }

    /// `e` (a `let` initialiser that is context-typed once its conditions are frozen) with the
    /// condition of every value-`if` that is not static evaluated now, in source order, and
    /// replaced by a hidden immutable binding of its value. The rest is pure and static, so
    /// lowering the result at each use of the binding evaluates every condition exactly once.
    pub(crate) fn freeze_conditions(&mut self, e: &Expr) -> LResult<Expr> {
        let mut e = e.clone();
        self.freeze_into(&mut e)?;
        Ok(e)
    }

    fn freeze_into(&mut self, e: &mut Expr) -> LResult<()> {
        match &mut e.kind {
            ExprKind::IfElse { cond, then, els } => {
                if !self.is_static(cond) {
                    let fresh_from = self.vars.len() as VarId;
                    let c = self.expr(cond)?;
                    let ty = self.ty(c);
                    if ty.dtype() != DType::Bool || !matches!(ty, Ty::Scalar(_) | Ty::Tile { .. }) {
                        return self.err(
                            cond.span,
                            format!(
                                "the condition of an `if` must be `bool`, found {}",
                                ty_name(&ty)
                            ),
                        );
                    }
                    let name = format!("{FROZEN_PREFIX}{fresh_from}");
                    let var = self.let_var(&name, false, c, ty, fresh_from, cond.span);
                    // Named for dumps and messages as what it is (the binding keeps the
                    // hidden name).
                    self.vars[var as usize].name = "if_condition".to_string();
                    self.bind(
                        &name,
                        super::Binding::Var {
                            var,
                            mutable: false,
                            decl: cond.span,
                        },
                    );
                    cond.kind = ExprKind::Path(vec![name]);
                }
                self.freeze_into(then)?;
                self.freeze_into(els)
            }
            ExprKind::Unary { x, .. } | ExprKind::Cast { x, .. } => self.freeze_into(x),
            ExprKind::Unsafe(x) => {
                self.unsafe_depth += 1;
                let r = self.freeze_into(x);
                self.unsafe_depth -= 1;
                r
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.freeze_into(lhs)?;
                self.freeze_into(rhs)
            }
            ExprKind::Call { args, .. } => {
                for a in args {
                    self.freeze_into(&mut a.value)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// An integer literal `v` with its suffix, as the type `want` when it has none.
    pub(crate) fn int_literal(
        &mut self,
        v: i128,
        suffix: Option<&str>,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        let d = match suffix {
            Some(s) => match DType::from_name(s).filter(|d| d.is_int()) {
                Some(d) => d,
                None => {
                    return self.err(span, format!("invalid suffix `{s}` for an integer literal"))
                }
            },
            None => match want {
                Some(d) if d.is_int() => d,
                Some(d) if d.is_float() => {
                    return Err(self.error(
                        Diagnostic::new(
                            span,
                            format!("mismatched types: expected `{d}`, found an integer literal"),
                        )
                        .help(format!("write a float literal: `{v}.0`")),
                    ))
                }
                _ => DType::I32,
            },
        };
        match elem::int_const(d, v) {
            Some(bits) => Ok(Operand::Imm(bits, d)),
            None => self.err(span, format!("literal `{v}` does not fit in `{d}`")),
        }
    }

    /// A float literal (`text` without suffix), as the type `want` when it has no suffix.
    pub(crate) fn float_literal(
        &mut self,
        text: &str,
        suffix: Option<&str>,
        want: Option<DType>,
        negate: bool,
        span: Span,
    ) -> LResult<Operand> {
        let d = match suffix {
            Some(s) => match DType::from_name(s).filter(|d| d.is_float()) {
                Some(d) => d,
                None => return self.err(span, format!("invalid suffix `{s}` for a float literal")),
            },
            None => match want {
                Some(d) if d.is_float() => d,
                Some(d) if d.is_int() => {
                    return Err(self.error(
                        Diagnostic::new(
                            span,
                            format!("mismatched types: expected `{d}`, found a float literal"),
                        )
                        .help(format!("convert it: `{text} as {d}`, or write an integer")),
                    ))
                }
                _ => DType::F64,
            },
        };
        let text = if negate {
            format!("-{text}")
        } else {
            text.to_string()
        };
        match elem::float_const(d, &text) {
            Some(bits) => Ok(Operand::Imm(bits, d)),
            None => self.err(span, format!("invalid float literal `{text}`")),
        }
    }

    /// Check that `o` has element type `want`: a mismatch is an error saying which `as` to
    /// write.
    pub(crate) fn expect_dtype(
        &mut self,
        o: Operand,
        want: DType,
        span: Span,
        what: &str,
    ) -> LResult<Operand> {
        let t = self.ty(o);
        if t.dtype() == want && !matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return Ok(o);
        }
        if matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return self.err(
                span,
                format!("{what} must be a `{want}` value, found {}", ty_name(&t)),
            );
        }
        Err(self.error(
            Diagnostic::new(
                span,
                format!(
                    "mismatched types: {what} must be `{want}`, found {}",
                    ty_name(&t)
                ),
            )
            .help(cast_help(t.dtype(), want)),
        ))
    }

    /// A `let mut` initialiser whose literal type is still open (see the module docs): the
    /// literal expression it assigns, or `None` when the initialiser is not of that form.
    pub(crate) fn open_literal<'e>(&self, init: &'e Expr) -> Option<(Flex, &'e Expr)> {
        let lit = match &init.kind {
            ExprKind::Call {
                path,
                args,
                generics,
                ..
            } if generics.is_empty() && path.len() == 1 => {
                match (path[0].as_str(), args.as_slice()) {
                    ("zeros" | "ones", [_]) => return Some((Flex::Num, init)),
                    ("full", [_, v]) => &v.value,
                    _ => return None,
                }
            }
            _ => init,
        };
        let plain = match &lit.kind {
            ExprKind::Unary {
                op: ast::UnOp::Neg,
                x,
            } => x,
            _ => lit,
        };
        match &plain.kind {
            ExprKind::Int { suffix: None, .. } => Some((Flex::Int, init)),
            ExprKind::Float { suffix: None, .. } => Some((Flex::Float, init)),
            _ => None,
        }
    }

    /// `let mut name = <open literal>`: a variable of the literal's default type, initialised
    /// in place (a `Mov` of the literal, or a `Full` tile for `zeros`/`ones`/`full`), whose type
    /// the first use settles.
    pub(crate) fn open_init(
        &mut self,
        name: &str,
        kind: Flex,
        lit: &Expr,
        span: Span,
    ) -> LResult<VarId> {
        let ordinal = self.open_lets;
        self.open_lets += 1;
        let decided = match &self.inference {
            Inference::Decided(types) => Some(types.get(ordinal).copied().flatten()),
            Inference::Collect(_) => None,
        };
        let d = decided.flatten().unwrap_or(kind.default_type());
        let (ty, inst) = match &lit.kind {
            ExprKind::Call { args, .. } => {
                let shape = self.shape_arg(&args[0].value)?;
                let value = self
                    .literal_value(lit, d)
                    .ok_or(())
                    .or_else(|_| self.err(lit.span, "invalid literal"))?;
                (
                    Ty::Tile {
                        dtype: d,
                        shape: shape.clone(),
                    },
                    Inst::Full { shape, value },
                )
            }
            _ => {
                let value = self.expr_as(lit, Some(d))?;
                (Ty::Scalar(self.ty(value).dtype()), Inst::Mov(value))
            }
        };
        let var = self.new_var(name, ty);
        self.push(Stmt::Inst {
            dst: Some(var),
            inst,
            span,
        });
        if decided.is_none() {
            self.pending.insert(var, Pending { kind, ordinal });
        }
        Ok(var)
    }

    /// A use of open variable `v` that needs type `want` (when `Some`): the first one decides
    /// its type ([`Inference`]). The variable takes the type at once, so that the rest of the
    /// inference pass meets fewer errors of its own making.
    pub(crate) fn settle(&mut self, v: VarId, want: Option<DType>) {
        let Some(p) = self.pending.get(&v) else {
            return;
        };
        let Some(d) = want.filter(|d| p.kind.accepts(*d)) else {
            return;
        };
        let ordinal = p.ordinal;
        self.pending.remove(&v);
        if let Inference::Collect(types) = &mut self.inference {
            if types.len() <= ordinal {
                types.resize(ordinal + 1, None);
            }
            types[ordinal] = Some(d);
        }
        self.vars[v as usize].ty = self.vars[v as usize].ty.with_dtype(d);
    }

    /// The value of literal expression `lit` (a literal, a negated one, or `zeros`/`ones`/
    /// `full` of one) as type `d`, when it is representable.
    fn literal_value(&self, lit: &Expr, d: DType) -> Option<Operand> {
        match &lit.kind {
            ExprKind::Call { path, args, .. } => match (path[0].as_str(), args.as_slice()) {
                ("zeros", _) => Some(Operand::Imm(elem::cast(DType::I32, d, 0), d)),
                ("ones", _) => Some(Operand::Imm(elem::cast(DType::I32, d, 1), d)),
                ("full", [_, v]) => self.literal_value(&v.value, d),
                _ => None,
            },
            ExprKind::Unary {
                op: ast::UnOp::Neg,
                x,
            } => match &x.kind {
                ExprKind::Int { value, .. } => {
                    elem::int_const(d, -value).map(|b| Operand::Imm(b, d))
                }
                ExprKind::Float { text, .. } => {
                    elem::float_const(d, &format!("-{text}")).map(|b| Operand::Imm(b, d))
                }
                _ => None,
            },
            ExprKind::Int { value, .. } => elem::int_const(d, *value).map(|b| Operand::Imm(b, d)),
            ExprKind::Float { text, .. } => elem::float_const(d, text).map(|b| Operand::Imm(b, d)),
            _ => None,
        }
    }

    /// Whether `v` is an open `let mut` variable.
    pub(crate) fn is_open(&self, v: VarId) -> bool {
        self.pending.contains_key(&v)
    }
}

/// The help for operands of types `a` (left) and `b` (right) that must agree: widen the side
/// that converts losslessly into the other, never narrow one.
pub(crate) fn unify_help(a: DType, b: DType) -> String {
    let never = "tile kernels never convert implicitly";
    if a.widens_to(b) {
        format!("convert the left side: `(..) as {b}`, which loses nothing ({never})")
    } else if b.widens_to(a) {
        format!("convert the right side: `(..) as {a}`, which loses nothing ({never})")
    } else {
        format!("convert one side with `as`: neither `{a}` nor `{b}` holds every value of the other, so choose which values may change ({never})")
    }
}

/// How to convert a `from` value into a `to` one, for messages.
pub(crate) fn cast_help(from: DType, to: DType) -> String {
    if from == DType::Bool && to.is_numeric() {
        return format!("convert the `bool` with `as {to}` (true is 1)");
    }
    if to == DType::Bool {
        return format!("compare instead: `x != 0` turns a `{from}` into a `bool`");
    }
    format!("convert explicitly with `as {to}`: tile kernels never convert implicitly")
}
