//! Expressions: literals, names, operators (with numpy broadcasting), casts, methods.

use super::types::Flex;
use super::{shape_str, ty_name, LResult, Lowerer, Reported, MAX_RANK};
use crate::ast::{self, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{BinOp, DType, Inst, Operand, Span, Ty, UnOp};

impl Lowerer {
    /// Lower an expression used as a statement (a call whose result is discarded).
    pub(crate) fn expr_stmt(&mut self, e: &Expr) -> LResult<()> {
        match &e.kind {
            ExprKind::Call { .. } | ExprKind::Method { .. } => {
                self.expr_opt(e)?;
                Ok(())
            }
            ExprKind::Unsafe(x) => {
                self.unsafe_depth += 1;
                let r = self.expr_stmt(x);
                self.unsafe_depth -= 1;
                r
            }
            _ => self.err(
                e.span,
                "this expression has no effect: only calls may stand alone as statements",
            ),
        }
    }

    /// Lower an expression that must produce a value (context-typed parts get their default
    /// types).
    pub(crate) fn expr(&mut self, e: &Expr) -> LResult<Operand> {
        self.expr_as(e, None)
    }

    /// Lower an expression that must produce a value; `want` is the element type its context
    /// needs, which context-typed expressions take (`types.rs`). The result may still have
    /// another type: callers check it.
    pub(crate) fn expr_as(&mut self, e: &Expr, want: Option<DType>) -> LResult<Operand> {
        match self.expr_opt_as(e, want)? {
            Some(v) => Ok(v),
            None => self.err(e.span, "this call produces no value"),
        }
    }

    /// Lower an expression; calls without a result give `None`.
    pub(crate) fn expr_opt(&mut self, e: &Expr) -> LResult<Option<Operand>> {
        self.expr_opt_as(e, None)
    }

    fn expr_opt_as(&mut self, e: &Expr, want: Option<DType>) -> LResult<Option<Operand>> {
        let v = match &e.kind {
            ExprKind::Int { value, suffix } => {
                self.int_literal(*value, suffix.as_deref(), want, e.span)?
            }
            ExprKind::Float { text, suffix } => {
                self.float_literal(text, suffix.as_deref(), want, false, e.span)?
            }
            ExprKind::Bool(b) => Operand::bool(*b),
            ExprKind::Str(_) => {
                return self.err(
                    e.span,
                    "a string is only accepted as a `sem`/`scope`/`order` name",
                )
            }
            ExprKind::Path(p) => self.path_value(p, want, e.span)?,
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
            ExprKind::Binary { op, lhs, rhs } => self.binary_expr(*op, lhs, rhs, want, e.span)?,
            ExprKind::Unary { op, x } => {
                if let Some(lit) = self.negated_literal(*op, x, want, e.span) {
                    return lit.map(Some);
                }
                let inner_want = self.flex_kind(x).and(want);
                let a = self.expr_as(x, inner_want)?;
                self.unary(*op, a, e.span)?
            }
            ExprKind::Cast { x, ty, ty_span } => {
                let a = self.expr(x)?;
                let Some(d) = DType::from_name(ty) else {
                    return Err(self.error(super::suggest::unknown_dtype(
                        Diagnostic::new(
                            *ty_span,
                            format!("cannot cast to `{ty}`: it is not an element type"),
                        ),
                        ty,
                    )));
                };
                self.cast(a, d, e.span)?
            }
            ExprKind::Unsafe(x) => {
                self.unsafe_depth += 1;
                let v = self.expr_opt_as(x, want);
                self.unsafe_depth -= 1;
                return v;
            }
            ExprKind::IfElse { cond, then, els } => {
                // A value-`if` is an element-wise select: both arms are evaluated, so an arm
                // must not have effects (an atomic in one arm would run regardless of `cond`).
                let c = self.expr(cond)?;
                let what = "an arm of an `if` expression";
                let (a, b) = self.operand_pair(then, els, want, Some(what))?;
                self.select(c, a, b, e.span)?
            }
            ExprKind::Call {
                path,
                path_span,
                generics,
                args,
            } => {
                return self.call(path, *path_span, generics, args, want, e.span);
            }
            ExprKind::Method {
                receiver,
                method,
                method_span,
                args,
            } => {
                return self.method(receiver, method, *method_span, args, want, e.span);
            }
        };
        Ok(Some(v))
    }

    /// A negated literal is one literal, so that `i32::MIN` (and `-128i8`) can be written:
    /// `Some` of it when `-x` is one, `None` for any other unary expression.
    fn negated_literal(
        &mut self,
        op: ast::UnOp,
        x: &Expr,
        want: Option<DType>,
        span: Span,
    ) -> Option<LResult<Operand>> {
        if op != ast::UnOp::Neg {
            return None;
        }
        match &x.kind {
            ExprKind::Int { value, suffix } => Some(
                self.int_literal(-*value, suffix.as_deref(), want, span)
                    .and_then(|o| {
                        let d = self.ty(o).dtype();
                        if d.is_signed() {
                            Ok(o)
                        } else {
                            self.err(
                                span,
                                format!("cannot negate a value of unsigned type `{d}`"),
                            )
                        }
                    }),
            ),
            ExprKind::Float { text, suffix } => {
                Some(self.float_literal(text, suffix.as_deref(), want, true, span))
            }
            _ => None,
        }
    }

    /// Lower two operands that must agree in type (of a binary operator, `select`, `min`):
    /// the typed one first, then a context-typed one as its type; two context-typed ones as
    /// `want` (or their default). In source order when both are typed. `pure`: the operands
    /// may not have effects (they are evaluated unconditionally), naming them so in the error.
    pub(crate) fn operand_pair(
        &mut self,
        l: &Expr,
        r: &Expr,
        want: Option<DType>,
        pure: Option<&str>,
    ) -> LResult<(Operand, Operand)> {
        let lower = |cx: &mut Self, e: &Expr, w: Option<DType>| match pure {
            Some(what) => cx.pure_expr_as(e, w, what),
            None => cx.expr_as(e, w),
        };
        match (self.flex_kind(l), self.flex_kind(r)) {
            (None, None) | (None, Some(_)) => {
                let a = lower(self, l, None)?;
                let wb = Some(self.ty(a).dtype());
                let b = lower(self, r, wb)?;
                Ok((a, b))
            }
            (Some(_), None) => {
                // The context-typed side is pure: lowering it second changes nothing.
                let b = lower(self, r, None)?;
                let wa = Some(self.ty(b).dtype());
                let a = lower(self, l, wa)?;
                Ok((a, b))
            }
            (Some(kl), Some(kr)) => {
                let w = match Flex::unify(kl, kr) {
                    Some(k) => want.filter(|d| k.accepts(*d)),
                    None => None,
                };
                let a = lower(self, l, w)?;
                let b = lower(self, r, w.or(Some(self.ty(a).dtype())))?;
                Ok((a, b))
            }
        }
    }

    /// A binary operator expression.
    fn binary_expr(
        &mut self,
        op: ast::BinOp,
        lhs: &Expr,
        rhs: &Expr,
        want: Option<DType>,
        span: Span,
    ) -> LResult<Operand> {
        use ast::BinOp as A;
        match op {
            // Tile code has no short circuit: both operands run, so neither may have effects
            // that Rust readers would expect `&&`/`||` to skip.
            A::And | A::Or => {
                let what = "an operand of `&&` / `||`";
                let a = self.pure_expr_as(lhs, None, what)?;
                let b = self.pure_expr_as(rhs, None, what)?;
                self.binary(op, a, b, span)
            }
            A::Shl | A::Shr => {
                let w = self.flex_kind(lhs).and(want);
                let a = self.expr_as(lhs, w)?;
                let b = self.expr(rhs)?;
                self.binary(op, a, b, span)
            }
            A::Eq | A::Ne | A::Lt | A::Le | A::Gt | A::Ge => {
                let (a, b) = self.operand_pair(lhs, rhs, None, None)?;
                self.binary(op, a, b, span)
            }
            _ => {
                let (a, b) = self.operand_pair(lhs, rhs, want, None)?;
                self.binary(op, a, b, span)
            }
        }
    }

    /// Lower an expression that must not have side effects (it is evaluated unconditionally
    /// where Rust would evaluate it conditionally).
    fn pure_expr_as(&mut self, e: &Expr, want: Option<DType>, what: &str) -> LResult<Operand> {
        let mark = self.blocks.last().map_or(0, Vec::len);
        let v = self.expr_as(e, want)?;
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

    fn path_value(&mut self, p: &[String], want: Option<DType>, span: Span) -> LResult<Operand> {
        if p.len() == 1 {
            match self.lookup(&p[0]) {
                Some(super::Binding::Var { var, .. }) => {
                    // The first use of an open `let mut` decides its type.
                    self.settle(var, want);
                    return Ok(Operand::Var(var));
                }
                Some(super::Binding::Flex(e)) => return self.expr_as(&e, want),
                Some(super::Binding::Poisoned) => return Err(Reported),
                None => {}
            }
        }
        if let [ty, name] = p {
            if let Some(c) = type_constant(ty, name) {
                return Ok(c);
            }
        }
        let help = match p {
            [name] => self.similar_variable(name),
            [ty, _] if DType::from_name(ty).is_none() => super::suggest::dtype(ty),
            _ => None,
        };
        Err(self.error(
            Diagnostic::new(
                span,
                format!("cannot find value `{}` in this kernel", p.join("::")),
            )
            .maybe_help(help),
        ))
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
        if matches!(op, A::Shl | A::Shr) {
            if !da.is_int() || !db.is_int() {
                return self.err(
                    span,
                    format!(
                        "operator `{}` shifts integers, found {} and {}",
                        binop_str(op),
                        ty_name(&ta),
                        ty_name(&tb)
                    ),
                );
            }
            let amount = self.shift_amount(b, da, span);
            let ir_op = if op == A::Shl { BinOp::Shl } else { BinOp::Shr };
            return self.binop_ir(ir_op, a, amount, da, span);
        }
        if da != db {
            return Err(self.error(
                Diagnostic::new(
                    span,
                    format!(
                        "mismatched types for `{}`: {} and {}",
                        binop_str(op),
                        ty_name(&ta),
                        ty_name(&tb)
                    ),
                )
                .help(super::types::unify_help(da, db)),
            ));
        }
        let d = da;
        let (ir_op, out) = match op {
            A::Add => (BinOp::Add, d),
            A::Sub => (BinOp::Sub, d),
            A::Mul => (BinOp::Mul, d),
            A::Div => (BinOp::Div, d),
            A::Rem => (BinOp::Rem, d),
            A::BitAnd => (BinOp::And, d),
            A::BitOr => (BinOp::Or, d),
            A::BitXor => (BinOp::Xor, d),
            A::And => (BinOp::And, d),
            A::Or => (BinOp::Or, d),
            A::Eq => (BinOp::Eq, DType::Bool),
            A::Ne => (BinOp::Ne, DType::Bool),
            A::Lt => (BinOp::Lt, DType::Bool),
            A::Le => (BinOp::Le, DType::Bool),
            A::Gt => (BinOp::Gt, DType::Bool),
            A::Ge => (BinOp::Ge, DType::Bool),
            A::Shl | A::Shr => unreachable!("handled above"),
        };
        let defined = match op {
            A::And | A::Or => d == DType::Bool,
            _ => crate::elem::binary_defined(ir_op, d),
        };
        if !defined {
            let mut diag = Diagnostic::new(
                span,
                format!(
                    "operator `{}` is not defined on `{d}` values",
                    binop_str(op)
                ),
            );
            if op == A::Rem && d.is_float() {
                diag = diag.help("PTX has no float remainder: compute `a - (a / b).trunc() * b` yourself, or work in integers");
            }
            if matches!(op, A::And | A::Or) {
                diag = diag.help("`&&` and `||` take `bool`s: compare first (`x != 0`)");
            }
            if d == DType::Bool && matches!(op, A::Add | A::Sub | A::Mul | A::Div | A::Rem) {
                diag = diag.help("convert the `bool`s with `as i32` to count them");
            }
            return Err(self.error(diag));
        }
        self.binop_ir(ir_op, a, b, out, span)
    }

    /// A shift amount of any integer type as an operand of the shifted value's type `d`, read
    /// as unsigned and clamped to the width (so that converting it cannot wrap a large amount
    /// into a small one).
    fn shift_amount(&mut self, b: Operand, d: DType, span: Span) -> Operand {
        let bd = self.ty(b).dtype();
        if bd == d {
            return b;
        }
        if let Some(v) = b.imm_int() {
            let amount = (crate::elem::cast(bd, bd.unsigned(), crate::elem::canon(bd, v as u64)))
                .min(d.bits() as u64);
            return Operand::int(amount as i128, d);
        }
        let u = bd.unsigned();
        let as_u = if u == bd {
            b
        } else {
            self.emit(
                Inst::Cast { x: b, dtype: u },
                self.ty(b).with_dtype(u),
                span,
            )
        };
        let clamped = self.emit(
            Inst::Binary {
                op: BinOp::Min,
                lhs: as_u,
                rhs: Operand::int(d.bits() as i128, u),
            },
            self.ty(as_u),
            span,
        );
        self.emit(
            Inst::Cast {
                x: clamped,
                dtype: d,
            },
            self.ty(clamped).with_dtype(d),
            span,
        )
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
        let d = t.dtype();
        let ir_op = match op {
            ast::UnOp::Neg if d.is_signed() || d.is_float() => UnOp::Neg,
            ast::UnOp::Not if d.is_int() || d == DType::Bool => UnOp::Not,
            ast::UnOp::Neg if d.is_int() => {
                return self.err(
                    span,
                    format!("cannot negate a value of unsigned type `{d}`"),
                )
            }
            ast::UnOp::Neg => return self.err(span, format!("cannot negate `{d}` values")),
            ast::UnOp::Not => {
                return self.err(span, format!("operator `!` is not defined on `{d}` values"))
            }
        };
        Ok(self.emit(Inst::Unary { op: ir_op, x: a }, t, span))
    }

    /// `abs(x)`: numeric values.
    pub(crate) fn abs(&mut self, a: Operand, span: Span) -> LResult<Operand> {
        let t = self.ty(a);
        if !t.dtype().is_numeric() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return self.err(span, format!("`abs` takes numbers, found {}", ty_name(&t)));
        }
        if !t.dtype().is_signed() && !t.dtype().is_float() {
            return Ok(a);
        }
        Ok(self.emit(
            Inst::Unary {
                op: UnOp::Abs,
                x: a,
            },
            t,
            span,
        ))
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

    /// A float function of one operand (`sqrt`, the roundings).
    pub(crate) fn float_fn(&mut self, name: &str, a: Operand, span: Span) -> LResult<Operand> {
        let t = self.ty(a);
        if !t.dtype().is_float() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return Err(self.error(
                Diagnostic::new(
                    span,
                    format!("`{name}` takes floats, found {}", ty_name(&t)),
                )
                .help(format!("convert first: `(x as f32).{name}()`")),
            ));
        }
        let op = match name {
            "sqrt" => UnOp::Sqrt,
            "floor" => UnOp::Floor,
            "ceil" => UnOp::Ceil,
            "trunc" => UnOp::Trunc,
            "round" => UnOp::Round,
            _ => UnOp::RoundEven,
        };
        Ok(self.emit(Inst::Unary { op, x: a }, t, span))
    }

    /// Reinterpret `x` (of type `from`) as `to`: `f32::to_bits`/`from_bits` and friends, which
    /// pair each float type with the unsigned integer of its size.
    pub(crate) fn bitcast_checked(
        &mut self,
        x: Operand,
        from: DType,
        to: DType,
        name: &str,
        span: Span,
    ) -> LResult<Operand> {
        let t = self.ty(x);
        let (float, int) = if name == "to_bits" {
            (from, to)
        } else {
            (to, from)
        };
        if t.dtype() != from
            || !float.is_float()
            || matches!(t, Ty::Global { .. } | Ty::Shared { .. })
        {
            let msg = if name == "to_bits" {
                format!("`to_bits` takes floats, found {}", ty_name(&t))
            } else {
                format!(
                    "`{float}::from_bits` takes a `{int}`, found {}",
                    ty_name(&t)
                )
            };
            return Err(self.error(Diagnostic::new(span, msg)));
        }
        let ty = match t.tile_shape() {
            Some(shape) => Ty::Tile {
                dtype: to,
                shape: shape.to_vec(),
            },
            None => Ty::Scalar(to),
        };
        Ok(self.emit(Inst::Bitcast { x, dtype: to }, ty, span))
    }

    /// `a * b + c` with one rounding (`a.mul_add(b, c)`, `fma(a, b, c)`), with broadcasting.
    pub(crate) fn fma(
        &mut self,
        a: Operand,
        b: Operand,
        c: Operand,
        span: Span,
    ) -> LResult<Operand> {
        let d = self.ty(a).dtype();
        for o in [a, b, c] {
            let t = self.ty(o);
            if !t.dtype().is_float() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return self.err(
                    span,
                    format!("`mul_add` takes floats, found {}", ty_name(&t)),
                );
            }
            if t.dtype() != d {
                return Err(self.error(
                    Diagnostic::new(
                        span,
                        format!("mismatched types for `mul_add`: `{d}` and `{}`", t.dtype()),
                    )
                    .help(super::types::cast_help(t.dtype(), d)),
                ));
            }
        }
        let (a, b) = self.broadcast_pair(a, b, span)?;
        let (a, c) = self.broadcast_pair(a, c, span)?;
        let (a, b) = self.broadcast_pair(a, b, span)?;
        let (b, c) = self.broadcast_pair(b, c, span)?;
        let shape = [a, b, c]
            .iter()
            .find_map(|o| self.ty(*o).tile_shape().map(|s| s.to_vec()));
        let ty = match shape {
            Some(shape) => Ty::Tile { dtype: d, shape },
            None => Ty::Scalar(d),
        };
        Ok(self.emit(Inst::Fma { a, b, c }, ty, span))
    }

    /// `min(a, b)` / `max(a, b)` of numbers of one type.
    pub(crate) fn minmax(
        &mut self,
        min: bool,
        a: Operand,
        b: Operand,
        span: Span,
    ) -> LResult<Operand> {
        let name = if min { "min" } else { "max" };
        let (ta, tb) = (self.ty(a), self.ty(b));
        for t in [&ta, &tb] {
            if !t.dtype().is_numeric() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return self.err(
                    span,
                    format!(
                        "`{name}` takes numbers (scalars or tiles), found {}",
                        ty_name(t)
                    ),
                );
            }
        }
        if ta.dtype() != tb.dtype() {
            return Err(self.error(
                Diagnostic::new(
                    span,
                    format!(
                        "mismatched types for `{name}`: {} and {}",
                        ty_name(&ta),
                        ty_name(&tb)
                    ),
                )
                .help(super::types::unify_help(ta.dtype(), tb.dtype())),
            ));
        }
        let op = if min { BinOp::Min } else { BinOp::Max };
        self.binop_ir(op, a, b, ta.dtype(), span)
    }

    /// A compile-time non-negative integer (literal).
    pub(crate) fn const_usize(&mut self, e: &Expr, what: &str) -> LResult<usize> {
        match const_int(e) {
            Some(v) if v >= 0 && v <= u32::MAX as i128 => Ok(v as usize),
            _ => self.err(
                e.span,
                format!("{what} must be a non-negative integer literal"),
            ),
        }
    }

    /// A compile-time shape: `[d0, d1, ...]` of positive integer literals.
    pub(crate) fn shape_arg(&mut self, e: &Expr) -> LResult<Vec<usize>> {
        self.shape_arg_max(e, super::MAX_TILE_ELEMENTS)
    }

    /// A shape of at most `max` elements (a distributed shared tensor may be larger than a
    /// tile: only each block's part must fit its shared memory).
    pub(crate) fn shape_arg_max(&mut self, e: &Expr, max: usize) -> LResult<Vec<usize>> {
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
            match const_int(it) {
                Some(v) if v > 0 && v <= (1 << 20) => shape.push(v as usize),
                Some(v) if v <= 0 => {
                    return self.err(it.span, format!("dimension `{v}` must be positive"))
                }
                Some(v) => {
                    return self.err(
                        it.span,
                        format!(
                            "dimension `{v}` is too large: a tile has at most {} elements",
                            super::MAX_TILE_ELEMENTS
                        ),
                    )
                }
                None => {
                    return Err(self.error(
                        Diagnostic::new(it.span, "a tile dimension must be a compile-time integer: a literal, or arithmetic of literals like `4 * 1024`")
                            .note("tile shapes are compile-time constants: they decide the registers of every thread"),
                    ))
                }
            }
        }
        let n: usize = shape.iter().product();
        if n > max {
            return self.err(
                e.span,
                format!("a tile of {n} elements is too large (at most {max} per tile)"),
            );
        }
        Ok(shape)
    }
}

/// The value of a compile-time integer expression: a literal, or `+ - * / % << >> & | ^` and
/// negation of them (shapes written from a `macro_rules!` parameter, `[4 * $tile]`). `None`
/// for anything else, a division by zero or an overflow of `i128`.
pub(crate) fn const_int(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value),
        ExprKind::Unary {
            op: ast::UnOp::Neg,
            x,
        } => const_int(x)?.checked_neg(),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (const_int(lhs)?, const_int(rhs)?);
            match op {
                ast::BinOp::Add => a.checked_add(b),
                ast::BinOp::Sub => a.checked_sub(b),
                ast::BinOp::Mul => a.checked_mul(b),
                ast::BinOp::Div => a.checked_div(b),
                ast::BinOp::Rem => a.checked_rem(b),
                ast::BinOp::Shl => a.checked_shl(u32::try_from(b).ok().filter(|&s| s < 64)?),
                ast::BinOp::Shr => a.checked_shr(u32::try_from(b).ok().filter(|&s| s < 64)?),
                ast::BinOp::BitAnd => Some(a & b),
                ast::BinOp::BitOr => Some(a | b),
                ast::BinOp::BitXor => Some(a ^ b),
                _ => None,
            }
        }
        _ => None,
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

/// `T::MIN`, `T::MAX` of the numeric types, and the float constants `INFINITY`,
/// `NEG_INFINITY`, `NAN`, `EPSILON`, `MIN_POSITIVE`.
fn type_constant(ty: &str, name: &str) -> Option<Operand> {
    use half::{bf16, f16};
    let d = DType::from_name(ty)?;
    if d.is_int() {
        let bits = match name {
            "MIN" => crate::elem::max_identity(d),
            "MAX" => crate::elem::min_identity(d),
            "BITS" => return Some(Operand::int(d.bits() as i128, DType::U32)),
            _ => return None,
        };
        return Some(Operand::Imm(bits, d));
    }
    let bits: u64 = match (d, name) {
        (DType::F32, "MIN") => f32::MIN.to_bits() as u64,
        (DType::F32, "MAX") => f32::MAX.to_bits() as u64,
        (DType::F32, "INFINITY") => f32::INFINITY.to_bits() as u64,
        (DType::F32, "NEG_INFINITY") => f32::NEG_INFINITY.to_bits() as u64,
        (DType::F32, "NAN") => crate::elem::NAN_F32 as u64,
        (DType::F32, "EPSILON") => f32::EPSILON.to_bits() as u64,
        (DType::F32, "MIN_POSITIVE") => f32::MIN_POSITIVE.to_bits() as u64,
        (DType::F64, "MIN") => f64::MIN.to_bits(),
        (DType::F64, "MAX") => f64::MAX.to_bits(),
        (DType::F64, "INFINITY") => f64::INFINITY.to_bits(),
        (DType::F64, "NEG_INFINITY") => f64::NEG_INFINITY.to_bits(),
        (DType::F64, "NAN") => crate::elem::NAN_F64,
        (DType::F64, "EPSILON") => f64::EPSILON.to_bits(),
        (DType::F64, "MIN_POSITIVE") => f64::MIN_POSITIVE.to_bits(),
        (DType::F16, "MIN") => f16::MIN.to_bits() as u64,
        (DType::F16, "MAX") => f16::MAX.to_bits() as u64,
        (DType::F16, "INFINITY") => f16::INFINITY.to_bits() as u64,
        (DType::F16, "NEG_INFINITY") => f16::NEG_INFINITY.to_bits() as u64,
        (DType::F16, "NAN") => crate::elem::NAN_F16 as u64,
        (DType::F16, "EPSILON") => f16::EPSILON.to_bits() as u64,
        (DType::F16, "MIN_POSITIVE") => f16::MIN_POSITIVE.to_bits() as u64,
        (DType::BF16, "MIN") => bf16::MIN.to_bits() as u64,
        (DType::BF16, "MAX") => bf16::MAX.to_bits() as u64,
        (DType::BF16, "INFINITY") => bf16::INFINITY.to_bits() as u64,
        (DType::BF16, "NEG_INFINITY") => bf16::NEG_INFINITY.to_bits() as u64,
        (DType::BF16, "NAN") => crate::elem::NAN_BF16 as u64,
        (DType::BF16, "EPSILON") => bf16::EPSILON.to_bits() as u64,
        (DType::BF16, "MIN_POSITIVE") => bf16::MIN_POSITIVE.to_bits() as u64,
        _ => return None,
    };
    Some(Operand::Imm(bits, d))
}
