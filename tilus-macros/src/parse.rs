//! Rust tokens (syn) → `tilus_core::ast`, purely syntactic. Anything Rust allows that tile
//! kernels do not is reported at its tokens; errors are accumulated.

use proc_macro2::Span;
use syn::spanned::Spanned;
use tilus_core::ast;
use tilus_core::ir::Span as CSpan;

/// Collects spans (the AST refers to them by index) and errors.
pub struct Parser {
    /// (first token, last token) of each recorded node: errors underline the whole node.
    pub spans: Vec<(Span, Span)>,
    pub errors: Vec<syn::Error>,
}

type PResult<T> = Result<T, ()>;

impl Parser {
    pub fn new() -> Self {
        Parser {
            spans: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Record a span from `first` to `last`.
    fn push_span(&mut self, first: Span, last: Span) -> CSpan {
        self.spans.push((first, last));
        CSpan((self.spans.len() - 1) as u32)
    }

    /// Record a single-token span.
    pub fn sp(&mut self, s: Span) -> CSpan {
        self.push_span(s, s)
    }

    /// Record the span of a whole expression, its ends found along its edges
    /// ([`crate::edges`]) rather than by printing it (which costs its size at every level).
    pub fn spe(&mut self, e: &syn::Expr) -> CSpan {
        match crate::edges::expr_edges(e) {
            Some((first, last)) => self.push_span(first, last),
            None => self.spt(e),
        }
    }

    /// Record the span of a `let` statement: its `let` to its `;`.
    fn spl(&mut self, l: &syn::Local) -> CSpan {
        if !l.attrs.is_empty() {
            return self.spt(l);
        }
        self.push_span(l.let_token.span, l.semi_token.span)
    }

    /// Record the span of a whole syntax node (its first to its last token).
    pub fn spt(&mut self, t: &dyn quote::ToTokens) -> CSpan {
        let mut it = t.to_token_stream().into_iter();
        let first = it.next().map(|t| t.span()).unwrap_or_else(Span::call_site);
        let last = it.last().map(|t| t.span()).unwrap_or(first);
        self.push_span(first, last)
    }

    pub fn span_of(&self, s: CSpan) -> Option<(Span, Span)> {
        self.spans.get(s.0 as usize).copied()
    }

    fn err<T>(&mut self, tokens: &dyn quote::ToTokens, msg: impl std::fmt::Display) -> PResult<T> {
        self.errors.push(syn::Error::new_spanned(tokens, msg));
        Err(())
    }

    pub fn params(&mut self, sig: &syn::Signature) -> Vec<ast::ParamDef> {
        let mut out = Vec::new();
        for input in &sig.inputs {
            let syn::FnArg::Typed(pt) = input else {
                let _ = self.err::<()>(input, "tile kernels take no `self`");
                continue;
            };
            let syn::Pat::Ident(pi) = &*pt.pat else {
                let _ = self.err::<()>(&pt.pat, "kernel parameters must be plain names");
                continue;
            };
            let ty = match param_ty(&pt.ty) {
                Some(t) => t,
                None => {
                    let _ = self.err::<()>(
                        &pt.ty,
                        "unsupported kernel parameter type: use `GlobalTensor<T>` or a scalar `T` (T an element type such as `f32` or `u8`)",
                    );
                    continue;
                }
            };
            let span = self.sp(pi.ident.span());
            let ty_span = self.spt(&pt.ty);
            out.push(ast::ParamDef {
                name: pi.ident.to_string(),
                span,
                ty,
                ty_span,
            });
        }
        out
    }

    pub fn block(&mut self, b: &syn::Block) -> Vec<ast::Stmt> {
        let mut out = Vec::new();
        for s in &b.stmts {
            if let Ok(s) = self.stmt(s) {
                out.push(s);
            }
        }
        out
    }

    fn stmt(&mut self, s: &syn::Stmt) -> PResult<ast::Stmt> {
        match s {
            syn::Stmt::Local(l) => {
                let (name, mutable, name_tok) = match &l.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        (pi.ident.to_string(), pi.mutability.is_some(), pi.ident.span())
                    }
                    // `let _ = expr;`: evaluated for its effect, its value dropped (so an
                    // atomic's result is unused and it may lower to `red`). A call stays a
                    // call statement, which may also be one that returns nothing.
                    syn::Pat::Wild(w) => match &l.init {
                        Some(init) if init.diverge.is_none() => {
                            let e = self.expr(&init.expr)?;
                            if matches!(e.kind, ast::ExprKind::Call { .. } | ast::ExprKind::Method { .. }) {
                                return Ok(ast::Stmt::Expr(e));
                            }
                            let name_span = self.sp(w.underscore_token.span);
                            let span = self.spl(l);
                            return Ok(ast::Stmt::Let {
                                name: "_".into(),
                                name_span,
                                mutable: false,
                                init: e,
                                span,
                            });
                        }
                        _ => ("_".to_string(), false, w.underscore_token.span),
                    },
                    syn::Pat::Type(pt) => match &*pt.pat {
                        syn::Pat::Ident(pi) => {
                            return self.err(&pt.ty, format!("type annotations are not supported on `let {}`: types are inferred", pi.ident))
                        }
                        p => return self.err(p, "only `let name = ...`, `let mut name = ...` and `let _ = ...` are supported"),
                    },
                    p => return self.err(p, "only `let name = ...`, `let mut name = ...` and `let _ = ...` are supported"),
                };
                let Some(init) = &l.init else {
                    return self.err(l, "a `let` in a tile kernel needs an initial value");
                };
                if let Some((_, d)) = &init.diverge {
                    return self.err(d, "`let ... else` is not supported in tile kernels");
                }
                let init = self.expr(&init.expr)?;
                let name_span = self.sp(name_tok);
                let span = self.spl(l);
                Ok(ast::Stmt::Let {
                    name,
                    name_span,
                    mutable,
                    init,
                    span,
                })
            }
            syn::Stmt::Expr(e, _) => self.expr_stmt(e),
            syn::Stmt::Item(i) => self.err(
                i,
                "items (fn, struct, use, ...) cannot be declared inside a tile kernel",
            ),
            syn::Stmt::Macro(m) => self.err(&m.mac, "macros are not supported inside tile kernels"),
        }
    }

    fn expr_stmt(&mut self, e: &syn::Expr) -> PResult<ast::Stmt> {
        let span = self.spe(e);
        match e {
            syn::Expr::Assign(a) => {
                let (name, name_span) = self.assign_target(&a.left)?;
                let value = self.expr(&a.right)?;
                Ok(ast::Stmt::Assign {
                    name,
                    name_span,
                    op: None,
                    value,
                    span,
                })
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let (name, name_span) = self.assign_target(&b.left)?;
                let value = self.expr(&b.right)?;
                Ok(ast::Stmt::Assign {
                    name,
                    name_span,
                    op: compound_op(&b.op),
                    value,
                    span,
                })
            }
            syn::Expr::ForLoop(f) => {
                if let Some(l) = &f.label {
                    return self.err(l, "loop labels are not supported");
                }
                let (var, var_tok) = match &*f.pat {
                    syn::Pat::Ident(pi) => (pi.ident.to_string(), pi.ident.span()),
                    syn::Pat::Wild(w) => ("_".to_string(), w.span()),
                    p => return self.err(p, "a `for` loop binds a single name"),
                };
                let range = self.range(&f.expr)?;
                let body = self.block(&f.body);
                let var_span = self.sp(var_tok);
                Ok(ast::Stmt::For {
                    var,
                    var_span,
                    range,
                    body,
                    span,
                })
            }
            syn::Expr::While(w) => {
                if let Some(l) = &w.label {
                    return self.err(l, "loop labels are not supported");
                }
                if let syn::Expr::Let(l) = &*w.cond {
                    return self.err(l, "`while let` is not supported in tile kernels");
                }
                let cond = self.expr(&w.cond)?;
                let body = self.block(&w.body);
                Ok(ast::Stmt::While { cond, body, span })
            }
            syn::Expr::Loop(l) => {
                if let Some(lb) = &l.label {
                    return self.err(lb, "loop labels are not supported");
                }
                let body = self.block(&l.body);
                Ok(ast::Stmt::Loop { body, span })
            }
            syn::Expr::If(i) => self.if_stmt(i, span),
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return self.err(b, "`break` takes no label or value in tile kernels");
                }
                Ok(ast::Stmt::Break { span })
            }
            syn::Expr::Return(r) => self.err(
                r,
                "`return` is not supported in tile kernels (every block runs to the end)",
            ),
            syn::Expr::Unsafe(u) => {
                let body = self.block(&u.block);
                Ok(ast::Stmt::Unsafe { body, span })
            }
            _ => Ok(ast::Stmt::Expr(self.expr(e)?)),
        }
    }

    /// An `if` statement, `span` its whole extent (`else` branches included).
    fn if_stmt(&mut self, i: &syn::ExprIf, span: CSpan) -> PResult<ast::Stmt> {
        if let syn::Expr::Let(l) = &*i.cond {
            return self.err(l, "`if let` is not supported in tile kernels");
        }
        let cond = self.expr(&i.cond)?;
        let then = self.block(&i.then_branch);
        let els = match &i.else_branch {
            None => None,
            Some((_, e)) => match &**e {
                syn::Expr::Block(b) => Some(self.block(&b.block)),
                syn::Expr::If(inner) => {
                    let inner_span = self.spe(e);
                    Some(vec![self.if_stmt(inner, inner_span)?])
                }
                other => return self.err(other, "unsupported `else` branch"),
            },
        };
        Ok(ast::Stmt::If {
            cond,
            then,
            els,
            span,
        })
    }

    fn assign_target(&mut self, e: &syn::Expr) -> PResult<(String, CSpan)> {
        match e {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let id = p.path.get_ident().expect("checked");
                let s = self.sp(id.span());
                Ok((id.to_string(), s))
            }
            syn::Expr::Index(ix) => self.err(
                ix,
                "element assignment is not supported: write tiles to memory with `store_global` / `store_shared` or the atomics",
            ),
            other => self.err(other, "only a variable can be assigned to"),
        }
    }

    fn range(&mut self, e: &syn::Expr) -> PResult<ast::RangeExpr> {
        let span = self.spe(e);
        match e {
            // A range from a `macro_rules!` `$r:expr` fragment, which rustc wraps in an
            // invisible group.
            syn::Expr::Group(g) => self.range(&g.expr),
            syn::Expr::Range(r) => self.plain_range(r, span, None),
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let mut inner = &*m.receiver;
                while let syn::Expr::Paren(syn::ExprParen { expr, .. })
                | syn::Expr::Group(syn::ExprGroup { expr, .. }) = inner
                {
                    inner = expr;
                }
                let syn::Expr::Range(r) = inner else {
                    return self.err(&m.receiver, "expected a range `start..end`");
                };
                let step = self.expr(&m.args[0])?;
                self.plain_range(r, span, Some(step))
            }
            other => self.err(
                other,
                "a `for` loop iterates over `start..end` or `(start..end).step_by(step)`",
            ),
        }
    }

    fn plain_range(
        &mut self,
        r: &syn::ExprRange,
        span: CSpan,
        step: Option<ast::Expr>,
    ) -> PResult<ast::RangeExpr> {
        if let syn::RangeLimits::Closed(c) = &r.limits {
            return self.err(
                c,
                "inclusive ranges are not supported: use `start..end + 1`",
            );
        }
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return self.err(r, "a loop range needs both a start and an end");
        };
        let start = self.expr(start)?;
        let end = self.expr(end)?;
        Ok(ast::RangeExpr {
            start,
            end,
            step,
            span,
        })
    }

    pub fn expr(&mut self, e: &syn::Expr) -> PResult<ast::Expr> {
        let span = self.spe(e);
        let kind = match e {
            syn::Expr::Lit(l) => self.literal(&l.lit)?,
            syn::Expr::Path(p) => {
                if p.qself.is_some() {
                    return self.err(p, "qualified paths are not supported");
                }
                ast::ExprKind::Path(self.path(&p.path)?)
            }
            syn::Expr::Paren(p) => return self.expr(&p.expr),
            syn::Expr::Group(g) => return self.expr(&g.expr),
            syn::Expr::Array(a) => ast::ExprKind::Array(self.exprs(a.elems.iter())?),
            syn::Expr::Tuple(t) => {
                let items = self.exprs(t.elems.iter())?;
                if items.len() == 1 {
                    ast::ExprKind::Tuple(items)
                } else if items.is_empty() {
                    return self.err(t, "`()` is not a value in tile kernels");
                } else {
                    ast::ExprKind::Tuple(items)
                }
            }
            syn::Expr::Binary(b) => {
                let Some(op) = bin_op(&b.op) else {
                    return self.err(&b.op, "compound assignment is only allowed as a statement");
                };
                let lhs = Box::new(self.expr(&b.left)?);
                let rhs = Box::new(self.expr(&b.right)?);
                ast::ExprKind::Binary { op, lhs, rhs }
            }
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => ast::UnOp::Neg,
                    syn::UnOp::Not(_) => ast::UnOp::Not,
                    _ => return self.err(&u.op, "dereference is not supported in tile kernels"),
                };
                ast::ExprKind::Unary { op, x: Box::new(self.expr(&u.expr)?) }
            }
            syn::Expr::Cast(c) => {
                let ty = match unwrapped(&c.ty) {
                    syn::Type::Path(p) if p.path.get_ident().is_some() => p.path.get_ident().expect("checked").to_string(),
                    other => return self.err(other, "casts are to an element type (`as f32`, `as u8`, `as bool`)"),
                };
                let ty_span = self.spt(&c.ty);
                ast::ExprKind::Cast { x: Box::new(self.expr(&c.expr)?), ty, ty_span }
            }
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else {
                    return self.err(&c.func, "only named functions can be called in tile kernels");
                };
                let (path, generics) = self.call_path(&p.path)?;
                let path_span = self.spt(&p);
                let args = self.args(c.args.iter())?;
                ast::ExprKind::Call { path, path_span, generics, args }
            }
            syn::Expr::MethodCall(m) => {
                if let Some(t) = &m.turbofish {
                    return self.err(t, "generic method arguments are not supported");
                }
                let receiver = Box::new(self.expr(&m.receiver)?);
                let method_span = self.spt(&m.method);
                let args = self.args(m.args.iter())?;
                ast::ExprKind::Method { receiver, method: m.method.to_string(), method_span, args }
            }
            syn::Expr::If(i) => {
                let cond = Box::new(self.expr(&i.cond)?);
                let then = Box::new(self.single_expr_block(&i.then_branch)?);
                let els = match &i.else_branch {
                    Some((_, e)) => match &**e {
                        syn::Expr::Block(b) => Box::new(self.single_expr_block(&b.block)?),
                        other => Box::new(self.expr(other)?),
                    },
                    None => return self.err(i, "an `if` used as a value needs an `else`"),
                };
                ast::ExprKind::IfElse { cond, then, els }
            }
            syn::Expr::Unsafe(u) => match u.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => ast::ExprKind::Unsafe(Box::new(self.expr(inner)?)),
                _ => {
                    return self.err(
                        u,
                        "an `unsafe` block used as a value must be a single expression (statements go in an `unsafe` block of their own)",
                    )
                }
            },
            other => return self.unsupported(other),
        };
        Ok(ast::Expr { kind, span })
    }

    /// A literal: integers (with their suffix), floats (their digits and suffix), `bool`s and
    /// strings (names such as `sem = "acquire"`).
    fn literal(&mut self, lit: &syn::Lit) -> PResult<ast::ExprKind> {
        Ok(match lit {
            syn::Lit::Int(i) => {
                let suffix = (!i.suffix().is_empty()).then(|| i.suffix().to_string());
                match i.base10_parse::<i128>() {
                    Ok(value) => ast::ExprKind::Int { value, suffix },
                    Err(_) => return self.err(i, "integer literal out of range"),
                }
            }
            syn::Lit::Float(f) => {
                let suffix = (!f.suffix().is_empty()).then(|| f.suffix().to_string());
                ast::ExprKind::Float {
                    text: f.base10_digits().to_string(),
                    suffix,
                }
            }
            syn::Lit::Bool(b) => ast::ExprKind::Bool(b.value),
            syn::Lit::Str(s) => ast::ExprKind::Str(s.value()),
            other => {
                return self.err(
                    other,
                    "unsupported literal: tile kernels use integer, float and `bool` values",
                )
            }
        })
    }

    /// The error for Rust syntax that has no counterpart in tile kernels, saying what to write
    /// instead where there is something.
    fn unsupported<T>(&mut self, e: &syn::Expr) -> PResult<T> {
        match e {
            syn::Expr::Index(ix) => self.err(ix, "indexing is not supported in tile kernels: load tiles with `load_global` / `load_shared`, or use `.item()`"),
            syn::Expr::Macro(m) => self.err(&m.mac, "macros are not supported inside tile kernels"),
            syn::Expr::Closure(c) => self.err(c, "closures are not supported inside tile kernels"),
            syn::Expr::Reference(r) => self.err(r, "references are not supported inside tile kernels"),
            syn::Expr::Field(f) => self.err(f, "field access is not supported inside tile kernels"),
            syn::Expr::Assign(a) => self.err(a, "an assignment is a statement, not a value"),
            syn::Expr::Block(b) => self.err(b, "block expressions are not supported here"),
            other => self.err(other, "unsupported syntax in a tile kernel"),
        }
    }

    fn single_expr_block(&mut self, b: &syn::Block) -> PResult<ast::Expr> {
        match b.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => self.expr(e),
            _ => self.err(
                b,
                "each branch of an `if` used as a value must be a single expression",
            ),
        }
    }

    fn exprs<'a>(&mut self, it: impl Iterator<Item = &'a syn::Expr>) -> PResult<Vec<ast::Expr>> {
        let mut out = Vec::new();
        let mut ok = true;
        for e in it {
            match self.expr(e) {
                Ok(x) => out.push(x),
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    fn args<'a>(&mut self, it: impl Iterator<Item = &'a syn::Expr>) -> PResult<Vec<ast::Arg>> {
        let mut out = Vec::new();
        let mut ok = true;
        for e in it {
            let span = self.spe(e);
            let r = match e {
                // `name = value` inside a call is a keyword argument.
                syn::Expr::Assign(a) => match &*a.left {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                        let id = p.path.get_ident().expect("checked");
                        let nspan = self.sp(id.span());
                        self.expr(&a.right).map(|value| ast::Arg {
                            name: Some((id.to_string(), nspan)),
                            value,
                            span,
                        })
                    }
                    other => self.err(other, "a keyword argument is written `name = value`"),
                },
                _ => self.expr(e).map(|value| ast::Arg {
                    name: None,
                    value,
                    span,
                }),
            };
            match r {
                Ok(a) => out.push(a),
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    fn path(&mut self, p: &syn::Path) -> PResult<Vec<String>> {
        let mut out = Vec::new();
        for seg in &p.segments {
            if !seg.arguments.is_none() {
                return self.err(&seg.arguments, "generic arguments are not supported here");
            }
            out.push(seg.ident.to_string());
        }
        Ok(out)
    }

    fn call_path(&mut self, p: &syn::Path) -> PResult<(Vec<String>, Vec<ast::GenericArg>)> {
        let mut out = Vec::new();
        let mut generics = Vec::new();
        let n = p.segments.len();
        for (i, seg) in p.segments.iter().enumerate() {
            match &seg.arguments {
                syn::PathArguments::None => {}
                syn::PathArguments::AngleBracketed(ab) if i + 1 == n => {
                    for ga in &ab.args {
                        let ga_type = match ga {
                            syn::GenericArgument::Type(t) => Some(unwrapped(t)),
                            _ => None,
                        };
                        match (ga, ga_type) {
                            (_, Some(syn::Type::Path(tp))) if tp.path.get_ident().is_some() => {
                                let s = self.spt(&tp);
                                generics.push(ast::GenericArg::Type(
                                    tp.path.get_ident().expect("checked").to_string(),
                                    s,
                                ));
                            }
                            (syn::GenericArgument::Const(e), _) => {
                                generics.push(ast::GenericArg::Const(self.expr(e)?))
                            }
                            (other, _) => return self.err(other, "unsupported generic argument"),
                        }
                    }
                }
                other => {
                    return self.err(
                        other,
                        "generic arguments are only allowed on the function name",
                    )
                }
            }
            out.push(seg.ident.to_string());
        }
        Ok((out, generics))
    }
}

/// The type a macro_rules `$t:ty` fragment or parentheses wrap (rustc hands such a fragment
/// over as an invisible group).
pub(crate) fn unwrapped(t: &syn::Type) -> &syn::Type {
    match t {
        syn::Type::Group(g) => unwrapped(&g.elem),
        syn::Type::Paren(p) => unwrapped(&p.elem),
        _ => t,
    }
}

/// `GlobalTensor<elem>` (any path ending in it) or a plain scalar type name.
fn param_ty(t: &syn::Type) -> Option<ast::ParamTy> {
    let syn::Type::Path(tp) = unwrapped(t) else {
        return None;
    };
    if tp.qself.is_some() {
        return None;
    }
    let last = tp.path.segments.last()?;
    if last.ident == "GlobalTensor" {
        let syn::PathArguments::AngleBracketed(ab) = &last.arguments else {
            return None;
        };
        if ab.args.len() != 1 {
            return None;
        }
        let syn::GenericArgument::Type(elem) = &ab.args[0] else {
            return None;
        };
        let syn::Type::Path(elem) = unwrapped(elem) else {
            return None;
        };
        let id = elem.path.get_ident()?;
        return Some(ast::ParamTy::GlobalTensor {
            elem: id.to_string(),
        });
    }
    let id = tp.path.get_ident()?;
    Some(ast::ParamTy::Scalar(id.to_string()))
}

fn compound_op(op: &syn::BinOp) -> Option<ast::BinOp> {
    use ast::BinOp as B;
    Some(match op {
        syn::BinOp::AddAssign(_) => B::Add,
        syn::BinOp::SubAssign(_) => B::Sub,
        syn::BinOp::MulAssign(_) => B::Mul,
        syn::BinOp::DivAssign(_) => B::Div,
        syn::BinOp::RemAssign(_) => B::Rem,
        syn::BinOp::BitAndAssign(_) => B::BitAnd,
        syn::BinOp::BitOrAssign(_) => B::BitOr,
        syn::BinOp::BitXorAssign(_) => B::BitXor,
        syn::BinOp::ShlAssign(_) => B::Shl,
        syn::BinOp::ShrAssign(_) => B::Shr,
        _ => return None,
    })
}

fn bin_op(op: &syn::BinOp) -> Option<ast::BinOp> {
    use ast::BinOp as B;
    Some(match op {
        syn::BinOp::Add(_) => B::Add,
        syn::BinOp::Sub(_) => B::Sub,
        syn::BinOp::Mul(_) => B::Mul,
        syn::BinOp::Div(_) => B::Div,
        syn::BinOp::Rem(_) => B::Rem,
        syn::BinOp::And(_) => B::And,
        syn::BinOp::Or(_) => B::Or,
        syn::BinOp::BitXor(_) => B::BitXor,
        syn::BinOp::BitAnd(_) => B::BitAnd,
        syn::BinOp::BitOr(_) => B::BitOr,
        syn::BinOp::Shl(_) => B::Shl,
        syn::BinOp::Shr(_) => B::Shr,
        syn::BinOp::Eq(_) => B::Eq,
        syn::BinOp::Lt(_) => B::Lt,
        syn::BinOp::Le(_) => B::Le,
        syn::BinOp::Ne(_) => B::Ne,
        syn::BinOp::Ge(_) => B::Ge,
        syn::BinOp::Gt(_) => B::Gt,
        _ => return None,
    })
}
