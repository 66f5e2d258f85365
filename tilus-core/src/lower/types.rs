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
//! type open until its first use decides it (`let mut acc = 0.0; acc += x.sum();` with an
//! `f32` tile makes `acc` an `f32`): the initialising instruction is retyped in place.
//!
//! Nothing converts implicitly: operands of different types are an error at the operator,
//! saying which `as` to write.

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

/// A `let mut` variable whose type is still open, and the instructions to retype.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub kind: Flex,
    /// (block level, statement index, the literal expression it was assigned).
    pub defs: Vec<(usize, usize, Expr)>,
}

impl Lowerer {
    /// The context-typed kind of `e`, if its type is decided by where it is used.
    pub(crate) fn flex_kind(&self, e: &Expr) -> Option<Flex> {
        match &e.kind {
            ExprKind::Int { suffix: None, .. } => Some(Flex::Int),
            ExprKind::Float { suffix: None, .. } => Some(Flex::Float),
            ExprKind::Unary { x, .. } => self.flex_kind(x),
            ExprKind::Binary { op, lhs, rhs } => {
                use ast::BinOp as B;
                match op {
                    B::Shl | B::Shr => self
                        .flex_kind(lhs)
                        .filter(|_| self.flex_kind(rhs).is_some()),
                    B::Add
                    | B::Sub
                    | B::Mul
                    | B::Div
                    | B::Rem
                    | B::BitAnd
                    | B::BitOr
                    | B::BitXor => Flex::unify(self.flex_kind(lhs)?, self.flex_kind(rhs)?),
                    _ => None,
                }
            }
            ExprKind::Path(p) if p.len() == 1 => match self.lookup(&p[0]) {
                Some(super::Binding::Flex(e)) => self.flex_kind(&e),
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
                    (Some("arange"), true) if args.len() == 1 => self.flex_kind(&args[0].value),
                    (Some("zeros" | "ones"), true) if args.len() == 1 => Some(Flex::Num),
                    (Some("lane_ids"), true) if args.len() == 1 => Some(Flex::Int),
                    (Some("full"), true) if args.len() == 2 => self.flex_kind(&args[1].value),
                    _ => None,
                }
            }
            ExprKind::IfElse { cond, then, els } => {
                let _ = cond;
                Flex::unify(self.flex_kind(then)?, self.flex_kind(els)?)
            }
            _ => None,
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
        let d = kind.default_type();
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
                let value = self.expr_as(lit, None)?;
                (Ty::Scalar(self.ty(value).dtype()), Inst::Mov(value))
            }
        };
        let var = self.new_var(name, ty);
        self.push(Stmt::Inst {
            dst: Some(var),
            inst,
            span,
        });
        self.note_open_def(var, kind, lit);
        Ok(var)
    }

    /// Record that the statement just pushed defines open-typed variable `v` with `lit`.
    pub(crate) fn note_open_def(&mut self, v: VarId, kind: Flex, lit: &Expr) {
        let level = self.blocks.len() - 1;
        let index = self.blocks[level].len() - 1;
        let p = self.pending.entry(v).or_insert(Pending {
            kind,
            defs: Vec::new(),
        });
        p.defs.push((level, index, lit.clone()));
    }

    /// Decide the type of open variable `v`: `want` when its kind accepts it, else its default
    /// (which its instructions already have).
    pub(crate) fn settle(&mut self, v: VarId, want: Option<DType>) {
        let Some(p) = self.pending.remove(&v) else {
            return;
        };
        let Some(d) = want.filter(|d| p.kind.accepts(*d)) else {
            return;
        };
        if d == self.vars[v as usize].ty.dtype() {
            return;
        }
        let ty = match &self.vars[v as usize].ty {
            Ty::Scalar(_) => Ty::Scalar(d),
            Ty::Tile { shape, .. } => Ty::Tile {
                dtype: d,
                shape: shape.clone(),
            },
            _ => return,
        };
        self.vars[v as usize].ty = ty;
        for (level, index, lit) in p.defs {
            let Some(value) = self.literal_value(&lit, d) else {
                continue;
            };
            if let Some(Stmt::Inst {
                inst: Inst::Mov(o) | Inst::Full { value: o, .. },
                ..
            }) = self.blocks.get_mut(level).and_then(|b| b.get_mut(index))
            {
                *o = value;
            }
        }
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
