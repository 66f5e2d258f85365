//! Expressions: literals, names, operators (with numpy broadcasting), casts, methods.

use super::{shape_str, ty_name, LResult, Lowerer, Reported, MAX_RANK};
use crate::ast::{self, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{BinOp, DType, Inst, Operand, ReduceOp, Span, Ty, UnOp};

impl Lowerer {
    /// Lower an expression used as a statement (a call whose result is discarded).
    pub(crate) fn expr_stmt(&mut self, e: &Expr) -> LResult<()> {
        match &e.kind {
            ExprKind::Call { .. } | ExprKind::Method { .. } => {
                self.expr_opt(e)?;
                Ok(())
            }
            _ => self.err(
                e.span,
                "this expression has no effect: only calls may stand alone as statements",
            ),
        }
    }

    /// Lower an expression that must produce a value.
    pub(crate) fn expr(&mut self, e: &Expr) -> LResult<Operand> {
        match self.expr_opt(e)? {
            Some(v) => Ok(v),
            None => self.err(e.span, "this call produces no value"),
        }
    }

    /// Lower an expression; calls without a result give `None`.
    pub(crate) fn expr_opt(&mut self, e: &Expr) -> LResult<Option<Operand>> {
        let v = match &e.kind {
            ExprKind::Int { value: v, suffix } => {
                if suffix.as_deref().is_some_and(|s| s != "i32") {
                    return self.err(e.span, "only `i32` integers are supported in this version");
                }
                Operand::i32(self.int_lit(*v, e.span)?)
            }
            ExprKind::Float { .. } => {
                return self.err(e.span, "float values are not supported in this version")
            }
            ExprKind::Bool(b) => Operand::bool(*b),
            ExprKind::Str(_) => {
                return self.err(
                    e.span,
                    "a string is only accepted as a `sem`/`scope`/`order` name",
                )
            }
            ExprKind::Path(p) => self.path_value(p, e.span)?,
            ExprKind::Array(_) => return self.err(
                e.span,
                "a list `[...]` is only accepted where a shape or a coordinate list is expected",
            ),
            ExprKind::Tuple(_) => {
                return self.err(
                    e.span,
                    "a tuple is only accepted as the `indices` of an indexed atomic",
                )
            }
            ExprKind::Binary { op, lhs, rhs } => {
                if matches!(op, ast::BinOp::And | ast::BinOp::Or) {
                    // Tile code has no short circuit: both operands run, so neither may have
                    // effects that Rust readers would expect `&&`/`||` to skip.
                    let what = "an operand of `&&` / `||`";
                    let a = self.pure_expr(lhs, what)?;
                    let b = self.pure_expr(rhs, what)?;
                    self.binary(*op, a, b, e.span)?
                } else {
                    let a = self.expr(lhs)?;
                    let b = self.expr(rhs)?;
                    self.binary(*op, a, b, e.span)?
                }
            }
            ExprKind::Unary { op, x } => {
                // `-literal` folds so that `i32::MIN` can be written.
                if let (
                    ast::UnOp::Neg,
                    ExprKind::Int {
                        value: v,
                        suffix: None,
                    },
                ) = (op, &x.kind)
                {
                    return Ok(Some(Operand::i32(self.int_lit(-*v, e.span)?)));
                }
                let a = self.expr(x)?;
                self.unary(*op, a, e.span)?
            }
            ExprKind::Cast { x, ty, ty_span } => {
                let a = self.expr(x)?;
                let Some(d) = super::dtype_by_name(ty) else {
                    return self.err(
                        *ty_span,
                        format!(
                            "cannot cast to `{ty}`: supported element types are `i32` and `bool`"
                        ),
                    );
                };
                self.cast(a, d, e.span)?
            }
            ExprKind::IfElse { cond, then, els } => {
                // A value-`if` is an element-wise select: both arms are evaluated, so an arm
                // must not have effects (an atomic in one arm would run regardless of `cond`).
                let c = self.expr(cond)?;
                let a = self.pure_expr(then, "an arm of an `if` expression")?;
                let b = self.pure_expr(els, "an arm of an `if` expression")?;
                self.select(c, a, b, e.span)?
            }
            ExprKind::Call {
                path,
                path_span,
                generics,
                args,
            } => {
                return self.call(path, *path_span, generics, args, e.span);
            }
            ExprKind::Method {
                receiver,
                method,
                method_span,
                args,
            } => {
                return self.method(receiver, method, *method_span, args, e.span);
            }
        };
        Ok(Some(v))
    }

    /// Lower an expression that must not have side effects (it is evaluated unconditionally
    /// where Rust would evaluate it conditionally).
    fn pure_expr(&mut self, e: &Expr, what: &str) -> LResult<Operand> {
        let mark = self.blocks.last().map_or(0, Vec::len);
        let v = self.expr(e)?;
        let effect = self.blocks.last().is_some_and(|b| {
            b[mark..].iter().any(|s| matches!(s, crate::ir::Stmt::Inst { inst, .. } if inst.has_side_effects() && !matches!(inst, Inst::AllocShared { .. })))
        });
        if effect {
            return Err(self.error(
                Diagnostic::new(e.span, format!("{what} cannot perform memory writes, atomics or barriers"))
                    .note("tile code evaluates both sides unconditionally (it selects per element), so the effect would happen whatever the condition")
                    .help("use an `if` statement: `let mut x = 0; if cond { x = ...; }`"),
            ));
        }
        Ok(v)
    }

    pub(crate) fn int_lit(&mut self, v: i128, span: Span) -> LResult<i32> {
        i32::try_from(v)
            .or_else(|_| self.err(span, format!("integer literal `{v}` does not fit in `i32`")))
    }

    fn path_value(&mut self, p: &[String], span: Span) -> LResult<Operand> {
        if p.len() == 1 {
            match self.lookup(&p[0]) {
                Some(super::Binding::Var { var, .. }) => return Ok(Operand::Var(var)),
                Some(super::Binding::Poisoned) => return Err(Reported),
                None => {}
            }
        }
        if p.len() == 2 && p[0] == "i32" && (p[1] == "MIN" || p[1] == "MAX") {
            let v = if p[1] == "MIN" { i32::MIN } else { i32::MAX };
            return Ok(Operand::i32(v));
        }
        self.err(
            span,
            format!("cannot find value `{}` in this kernel", p.join("::")),
        )
    }

    /// Make two operands shape-compatible (numpy broadcasting); scalars stay scalars.
    pub(crate) fn broadcast_pair(
        &mut self,
        a: Operand,
        b: Operand,
        span: Span,
    ) -> LResult<(Operand, Operand)> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        match (ta.tile_shape(), tb.tile_shape()) {
            (Some(sa), Some(sb)) if sa != sb => {
                let Some(shape) = broadcast_shapes(sa, sb) else {
                    return self.err(
                        span,
                        format!(
                            "shape mismatch: {} and {} do not broadcast",
                            shape_str(sa),
                            shape_str(sb)
                        ),
                    );
                };
                let a = self.broadcast_to(a, &shape, span)?;
                let b = self.broadcast_to(b, &shape, span)?;
                Ok((a, b))
            }
            _ => Ok((a, b)),
        }
    }

    /// Broadcast a tile (or keep a scalar) to `shape`.
    pub(crate) fn broadcast_to(
        &mut self,
        x: Operand,
        shape: &[usize],
        span: Span,
    ) -> LResult<Operand> {
        let ty = self.ty(x);
        let Ty::Tile { dtype, shape: s } = ty else {
            return Ok(x);
        };
        if s == shape {
            return Ok(x);
        }
        if broadcast_shapes(&s, shape).as_deref() != Some(shape) {
            return self.err(
                span,
                format!(
                    "shape mismatch: {} cannot be broadcast to {}",
                    shape_str(&s),
                    shape_str(shape)
                ),
            );
        }
        let mut x = x;
        let mut s = s;
        if s.len() < shape.len() {
            let mut padded = vec![1; shape.len() - s.len()];
            padded.extend_from_slice(&s);
            let v = x.var().expect("tiles are variables");
            x = self.emit(
                Inst::Reshape {
                    x: v,
                    shape: padded.clone(),
                },
                Ty::Tile {
                    dtype,
                    shape: padded.clone(),
                },
                span,
            );
            s = padded;
        }
        if s == shape {
            return Ok(x);
        }
        let v = x.var().expect("tiles are variables");
        Ok(self.emit(
            Inst::Broadcast {
                x: v,
                shape: shape.to_vec(),
            },
            Ty::Tile {
                dtype,
                shape: shape.to_vec(),
            },
            span,
        ))
    }

    /// The shape of the result of an element-wise op on `a` and `b` (None = scalar).
    fn result_shape(&self, a: Operand, b: Operand) -> Option<Vec<usize>> {
        self.ty(a)
            .tile_shape()
            .or(self.ty(b).tile_shape())
            .map(|s| s.to_vec())
    }

    pub(crate) fn binary(
        &mut self,
        op: ast::BinOp,
        a: Operand,
        b: Operand,
        span: Span,
    ) -> LResult<Operand> {
        use ast::BinOp as A;
        let (ta, tb) = (self.ty(a), self.ty(b));
        for t in [&ta, &tb] {
            if matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return Err(self.error(
                    Diagnostic::new(
                        span,
                        format!(
                            "operator applied to {}: tensors in memory must be loaded first",
                            ty_name(t)
                        ),
                    )
                    .help("use `load_global(...)` / `load_shared(...)` to get a register tile"),
                ));
            }
        }
        let (da, db) = (ta.dtype(), tb.dtype());
        if da != db {
            return self.err(
                span,
                format!(
                    "mismatched types for `{}`: {} and {} (convert with `as i32` / `as bool`)",
                    binop_str(op),
                    ty_name(&ta),
                    ty_name(&tb)
                ),
            );
        }
        let (ir_op, out_dtype) = match (op, da) {
            (A::Add, DType::I32) => (BinOp::Add, DType::I32),
            (A::Sub, DType::I32) => (BinOp::Sub, DType::I32),
            (A::Mul, DType::I32) => (BinOp::Mul, DType::I32),
            (A::Div, DType::I32) => (BinOp::Div, DType::I32),
            (A::Rem, DType::I32) => (BinOp::Rem, DType::I32),
            (A::Shl, DType::I32) => (BinOp::Shl, DType::I32),
            (A::Shr, DType::I32) => (BinOp::Shr, DType::I32),
            (A::BitAnd, d) => (BinOp::And, d),
            (A::BitOr, d) => (BinOp::Or, d),
            (A::BitXor, d) => (BinOp::Xor, d),
            (A::And, DType::Bool) => (BinOp::And, DType::Bool),
            (A::Or, DType::Bool) => (BinOp::Or, DType::Bool),
            (A::Eq, _) => (BinOp::Eq, DType::Bool),
            (A::Ne, _) => (BinOp::Ne, DType::Bool),
            (A::Lt, DType::I32) => (BinOp::Lt, DType::Bool),
            (A::Le, DType::I32) => (BinOp::Le, DType::Bool),
            (A::Gt, DType::I32) => (BinOp::Gt, DType::Bool),
            (A::Ge, DType::I32) => (BinOp::Ge, DType::Bool),
            (op, d) => {
                return self.err(
                    span,
                    format!(
                        "operator `{}` is not defined on `{}` values",
                        binop_str(op),
                        d.name()
                    ),
                )
            }
        };
        self.binop_ir(ir_op, a, b, out_dtype, span)
    }

    /// Emit a binary IR op with broadcasting; `out` is the result dtype.
    pub(crate) fn binop_ir(
        &mut self,
        op: BinOp,
        a: Operand,
        b: Operand,
        out: DType,
        span: Span,
    ) -> LResult<Operand> {
        let (a, b) = self.broadcast_pair(a, b, span)?;
        let ty = match self.result_shape(a, b) {
            Some(shape) => Ty::Tile { dtype: out, shape },
            None => Ty::Scalar(out),
        };
        Ok(self.emit(Inst::Binary { op, lhs: a, rhs: b }, ty, span))
    }

    fn unary(&mut self, op: ast::UnOp, a: Operand, span: Span) -> LResult<Operand> {
        let t = self.ty(a);
        if matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return self.err(
                span,
                format!("operator applied to {}: load it first", ty_name(&t)),
            );
        }
        let ir_op = match (op, t.dtype()) {
            (ast::UnOp::Neg, DType::I32) => UnOp::Neg,
            (ast::UnOp::Not, _) => UnOp::Not,
            (ast::UnOp::Neg, d) => {
                return self.err(span, format!("cannot negate `{}` values", d.name()))
            }
        };
        Ok(self.emit(Inst::Unary { op: ir_op, x: a }, t, span))
    }

    pub(crate) fn cast(&mut self, a: Operand, d: DType, span: Span) -> LResult<Operand> {
        let t = self.ty(a);
        let out = match &t {
            Ty::Scalar(_) => Ty::Scalar(d),
            Ty::Tile { shape, .. } => Ty::Tile {
                dtype: d,
                shape: shape.clone(),
            },
            other => return self.err(span, format!("cannot cast {}", ty_name(other))),
        };
        if t.dtype() == d {
            return Ok(a);
        }
        Ok(self.emit(Inst::Cast { x: a, dtype: d }, out, span))
    }

    pub(crate) fn select(
        &mut self,
        c: Operand,
        a: Operand,
        b: Operand,
        span: Span,
    ) -> LResult<Operand> {
        let tc = self.ty(c);
        if tc.dtype() != DType::Bool || matches!(tc, Ty::Global { .. } | Ty::Shared { .. }) {
            return self.err(
                span,
                format!(
                    "the condition of `select` must be `bool`, found {}",
                    ty_name(&tc)
                ),
            );
        }
        let (ta, tb) = (self.ty(a), self.ty(b));
        for t in [&ta, &tb] {
            if matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return Err(self.error(
                    Diagnostic::new(
                        span,
                        format!("cannot choose between tensors in memory: found {}", ty_name(t)),
                    )
                    .help("`select` and value-`if` choose between values: load the tensor first (`load_global` / `load_shared`)"),
                ));
            }
        }
        if ta.dtype() != tb.dtype() {
            return self.err(
                span,
                format!("mismatched types: {} and {}", ty_name(&ta), ty_name(&tb)),
            );
        }
        let (a, b) = self.broadcast_pair(a, b, span)?;
        let (c, a) = self.broadcast_pair(c, a, span)?;
        let (c, b) = self.broadcast_pair(c, b, span)?;
        let (a, b) = self.broadcast_pair(a, b, span)?;
        let shape = self
            .result_shape(a, b)
            .or(self.ty(c).tile_shape().map(|s| s.to_vec()));
        let dtype = ta.dtype();
        let ty = match shape {
            Some(shape) => Ty::Tile { dtype, shape },
            None => Ty::Scalar(dtype),
        };
        Ok(self.emit(Inst::Select { cond: c, a, b }, ty, span))
    }

    /// `x.method(args)`.
    fn method(
        &mut self,
        receiver: &Expr,
        method: &str,
        method_span: Span,
        args: &[ast::Arg],
        span: Span,
    ) -> LResult<Option<Operand>> {
        let recv = self.expr(receiver)?;
        let ty = self.ty(recv);
        let expect_args = |cx: &mut Lowerer, n: usize| -> LResult<()> {
            if args.len() != n {
                return cx.err(
                    span,
                    format!(
                        "`.{method}()` takes {n} argument(s) but {} were supplied",
                        args.len()
                    ),
                );
            }
            Ok(())
        };
        match (&ty, method) {
            (Ty::Global { .. }, "len") => {
                expect_args(self, 0)?;
                let v = recv.var().expect("tensor");
                let d = self.emit(
                    Inst::Dim { tensor: v, axis: 0 },
                    Ty::Scalar(DType::I64),
                    span,
                );
                Ok(Some(self.cast(d, DType::I32, span)?))
            }
            (Ty::Global { rank, .. }, "dim") => {
                expect_args(self, 1)?;
                let axis = self.const_usize(&args[0].value, "an axis")?;
                if axis >= *rank {
                    return self.err(
                        args[0].value.span,
                        format!("axis {axis} is out of range for a rank-{rank} tensor"),
                    );
                }
                let v = recv.var().expect("tensor");
                let d = self.emit(Inst::Dim { tensor: v, axis }, Ty::Scalar(DType::I64), span);
                Ok(Some(self.cast(d, DType::I32, span)?))
            }
            (Ty::Global { .. }, "view") => Ok(Some(self.view(recv, args, span)?)),
            (Ty::Tile { dtype, shape }, "reshape") => {
                expect_args(self, 1)?;
                let new = self.shape_arg(&args[0].value)?;
                if crate::ir::numel(&new) != crate::ir::numel(shape) {
                    return self.err(
                        args[0].value.span,
                        format!(
                            "cannot reshape {} ({} elements) to {}",
                            shape_str(shape),
                            crate::ir::numel(shape),
                            shape_str(&new)
                        ),
                    );
                }
                let v = recv.var().expect("tile");
                Ok(Some(self.emit(
                    Inst::Reshape {
                        x: v,
                        shape: new.clone(),
                    },
                    Ty::Tile {
                        dtype: *dtype,
                        shape: new,
                    },
                    span,
                )))
            }
            (Ty::Tile { .. }, "broadcast_to") => {
                expect_args(self, 1)?;
                let new = self.shape_arg(&args[0].value)?;
                Ok(Some(self.broadcast_to(recv, &new, span)?))
            }
            (Ty::Tile { dtype, shape }, "sum" | "min" | "max" | "any" | "all" | "item") => {
                expect_args(self, 0)?;
                let op = match (method, dtype) {
                    ("sum", DType::I32) => ReduceOp::Sum,
                    ("min", DType::I32) => ReduceOp::Min,
                    ("max", DType::I32) => ReduceOp::Max,
                    ("any", DType::Bool) => ReduceOp::Or,
                    ("all", DType::Bool) => ReduceOp::And,
                    ("item", DType::I32) | ("item", DType::Bool) => {
                        if crate::ir::numel(shape) != 1 {
                            return self.err(
                                method_span,
                                format!(
                                    "`.item()` needs a tile of exactly one element, found shape {}",
                                    shape_str(shape)
                                ),
                            );
                        }
                        if *dtype == DType::Bool {
                            ReduceOp::Or
                        } else {
                            ReduceOp::Sum
                        }
                    }
                    (m, d) => {
                        return self.err(
                            method_span,
                            format!("`.{m}()` is not defined on `{}` tiles", d.name()),
                        )
                    }
                };
                let v = recv.var().expect("tile");
                Ok(Some(self.emit(
                    Inst::Reduce { op, x: v },
                    Ty::Scalar(*dtype),
                    span,
                )))
            }
            (Ty::Scalar(DType::I32), "min" | "max") => {
                expect_args(self, 1)?;
                let other = self.expr(&args[0].value)?;
                let op = if method == "min" {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                let t2 = self.ty(other);
                if t2.dtype() != DType::I32 || matches!(t2, Ty::Global { .. } | Ty::Shared { .. }) {
                    return self.err(
                        args[0].value.span,
                        format!("expected `i32`, found {}", ty_name(&t2)),
                    );
                }
                Ok(Some(self.binop_ir(op, recv, other, DType::I32, span)?))
            }
            _ => Err(self.error(
                Diagnostic::new(
                    method_span,
                    format!("no method `{method}` on {}", ty_name(&ty)),
                )
                .note(method_help(&ty)),
            )),
        }
    }

    /// A compile-time non-negative integer (literal).
    pub(crate) fn const_usize(&mut self, e: &Expr, what: &str) -> LResult<usize> {
        match &e.kind {
            ExprKind::Int { value: v, .. } if *v >= 0 && *v <= u32::MAX as i128 => Ok(*v as usize),
            _ => self.err(
                e.span,
                format!("{what} must be a non-negative integer literal"),
            ),
        }
    }

    /// A compile-time shape: `[d0, d1, ...]` of positive integer literals.
    pub(crate) fn shape_arg(&mut self, e: &Expr) -> LResult<Vec<usize>> {
        let items = match &e.kind {
            ExprKind::Array(items) => items,
            _ => {
                return Err(self.error(
                    Diagnostic::new(e.span, "a tile shape must be a list of integer literals, e.g. `[256]` or `[16, 16]`")
                        .note("tile shapes are compile-time constants: they decide the registers of every thread"),
                ))
            }
        };
        if items.is_empty() || items.len() > MAX_RANK {
            return self.err(
                e.span,
                format!("a tile shape must have 1 to {MAX_RANK} dimensions"),
            );
        }
        let mut shape = Vec::new();
        for it in items {
            match &it.kind {
                ExprKind::Int { value: v, .. } if *v > 0 && *v <= (1 << 20) => shape.push(*v as usize),
                ExprKind::Int { value: v, .. } if *v <= 0 => {
                    return self.err(it.span, format!("dimension `{v}` must be positive"))
                }
                ExprKind::Int { value: v, .. } => {
                    return self.err(
                        it.span,
                        format!(
                            "dimension `{v}` is too large: a tile has at most {} elements",
                            super::MAX_TILE_ELEMENTS
                        ),
                    )
                }
                _ => {
                    return Err(self.error(
                        Diagnostic::new(it.span, "a tile dimension must be an integer literal")
                            .note("tile shapes are compile-time constants: they decide the registers of every thread"),
                    ))
                }
            }
        }
        let n: usize = shape.iter().product();
        if n > super::MAX_TILE_ELEMENTS {
            return self.err(
                e.span,
                format!(
                    "a tile of {n} elements is too large (at most {} per tile)",
                    super::MAX_TILE_ELEMENTS
                ),
            );
        }
        Ok(shape)
    }
}

/// Numpy broadcasting of two shapes (ranks aligned at the right).
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r {
            a[i + a.len() - r]
        } else {
            1
        };
        let db = if i + b.len() >= r {
            b[i + b.len() - r]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

fn binop_str(op: ast::BinOp) -> &'static str {
    use ast::BinOp::*;
    match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        BitAnd => "&",
        BitOr => "|",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
        And => "&&",
        Or => "||",
        Eq => "==",
        Ne => "!=",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
    }
}

fn method_help(ty: &Ty) -> String {
    match ty {
        Ty::Global { .. } => "global tensors have `.len()`, `.dim(axis)` and `.view(offset, [dims...])`".into(),
        Ty::Tile { .. } => {
            "tiles have `.reshape([..])`, `.broadcast_to([..])`, `.sum()`, `.min()`, `.max()`, `.any()`, `.all()`, `.item()`"
                .into()
        }
        Ty::Scalar(_) => "scalars have `.min(x)` and `.max(x)`".into(),
        Ty::Shared { .. } => "shared tensors are used through `load_shared`, `store_shared` and the atomics".into(),
    }
}
