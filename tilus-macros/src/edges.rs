//! The first and last token spans of an expression, found along its left and right edges.
//!
//! A diagnostic points from a node's first token to its last. Printing the node to tokens to
//! read its ends costs the node's size, and the parser asks for the span of every node, so
//! that cost grew with the square of an expression's nesting: a generated kernel of deeply
//! nested calls spent 15 ms in the front end, most of it printing. Here each end is one walk
//! down one edge of the tree. The spans are the printed tokens' own: a delimited group (a
//! call's parentheses, a block) is one token spanning from its open to its close delimiter.
//! Forms a tile kernel does not use (closures, matches, labels, attributes) give `None`, and
//! the caller prints just that node.

use proc_macro2::Span;
use syn::Expr;

/// `(first, last)` token spans of `e`, or `None` for a form not handled here.
pub(crate) fn expr_edges(e: &Expr) -> Option<(Span, Span)> {
    Some((first(e)?, last(e)?))
}

/// The span of `e` when it prints as one token: a delimited group or a literal.
fn one_token(e: &Expr) -> Option<Span> {
    match e {
        Expr::Array(a) => Some(a.bracket_token.span.join()),
        Expr::Block(b) if b.label.is_none() => Some(b.block.brace_token.span.join()),
        Expr::Lit(l) => Some(l.lit.span()),
        Expr::Paren(p) => Some(p.paren_token.span.join()),
        Expr::Tuple(t) => Some(t.paren_token.span.join()),
        _ => None,
    }
}

/// The span of `e`'s first token (its attributes, when it has any, print first: not handled).
fn first(e: &Expr) -> Option<Span> {
    if !attrs(e).is_empty() {
        return None;
    }
    if let Some(s) = one_token(e) {
        return Some(s);
    }
    Some(match e {
        Expr::Assign(a) => first(&a.left)?,
        Expr::Binary(b) => first(&b.left)?,
        Expr::Break(b) => b.break_token.span,
        Expr::Call(c) => first(&c.func)?,
        Expr::Cast(c) => first(&c.expr)?,
        Expr::Continue(c) => c.continue_token.span,
        Expr::Field(f) => first(&f.base)?,
        Expr::ForLoop(f) if f.label.is_none() => f.for_token.span,
        Expr::If(i) => i.if_token.span,
        Expr::Index(i) => first(&i.expr)?,
        Expr::Loop(l) if l.label.is_none() => l.loop_token.span,
        Expr::Macro(m) => path_first(&m.mac.path)?,
        Expr::MethodCall(m) => first(&m.receiver)?,
        Expr::Path(p) if p.qself.is_none() => path_first(&p.path)?,
        Expr::Range(r) => match &r.start {
            Some(s) => first(s)?,
            None => match r.limits {
                syn::RangeLimits::HalfOpen(t) => t.spans[0],
                syn::RangeLimits::Closed(t) => t.spans[0],
            },
        },
        Expr::Reference(r) => r.and_token.span,
        Expr::Return(r) => r.return_token.span,
        Expr::Unary(u) => match u.op {
            syn::UnOp::Deref(t) => t.span,
            syn::UnOp::Not(t) => t.span,
            syn::UnOp::Neg(t) => t.span,
            _ => return None,
        },
        Expr::Unsafe(u) => u.unsafe_token.span,
        Expr::While(w) if w.label.is_none() => w.while_token.span,
        _ => return None,
    })
}

/// The span of `e`'s last token (attributes print before it: no matter here).
fn last(e: &Expr) -> Option<Span> {
    if let Some(s) = one_token(e) {
        return Some(s);
    }
    Some(match e {
        Expr::Assign(a) => last(&a.right)?,
        Expr::Binary(b) => last(&b.right)?,
        // A labelled block: its label prints first.
        Expr::Block(b) => b.block.brace_token.span.join(),
        Expr::Break(b) => match (&b.label, &b.expr) {
            (_, Some(e)) => last(e)?,
            (None, None) => b.break_token.span,
            (Some(_), None) => return None,
        },
        Expr::Call(c) => c.paren_token.span.join(),
        Expr::Cast(c) => {
            let ty = quote::ToTokens::to_token_stream(&*c.ty);
            ty.into_iter().last()?.span()
        }
        Expr::Continue(c) if c.label.is_none() => c.continue_token.span,
        Expr::ForLoop(f) => f.body.brace_token.span.join(),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(i) => i.span(),
            syn::Member::Unnamed(i) => i.span,
        },
        Expr::If(i) => match &i.else_branch {
            Some((_, e)) => last(e)?,
            None => i.then_branch.brace_token.span.join(),
        },
        Expr::Index(i) => i.bracket_token.span.join(),
        Expr::Loop(l) => l.body.brace_token.span.join(),
        Expr::Macro(m) => match &m.mac.delimiter {
            syn::MacroDelimiter::Paren(p) => p.span.join(),
            syn::MacroDelimiter::Brace(b) => b.span.join(),
            syn::MacroDelimiter::Bracket(b) => b.span.join(),
        },
        Expr::MethodCall(m) => m.paren_token.span.join(),
        Expr::Path(p) if p.qself.is_none() => path_last(&p.path)?,
        Expr::Range(r) => match &r.end {
            Some(e) => last(e)?,
            None => match r.limits {
                syn::RangeLimits::HalfOpen(t) => t.spans[1],
                syn::RangeLimits::Closed(t) => t.spans[2],
            },
        },
        Expr::Reference(r) => last(&r.expr)?,
        Expr::Return(r) => match &r.expr {
            Some(e) => last(e)?,
            None => r.return_token.span,
        },
        Expr::Unary(u) => last(&u.expr)?,
        Expr::Unsafe(u) => u.block.brace_token.span.join(),
        Expr::While(w) => w.body.brace_token.span.join(),
        _ => return None,
    })
}

/// The expression's own attributes (`#[..]` before it), for the forms [`first`] handles.
fn attrs(e: &Expr) -> &[syn::Attribute] {
    match e {
        Expr::Array(x) => &x.attrs,
        Expr::Assign(x) => &x.attrs,
        Expr::Binary(x) => &x.attrs,
        Expr::Block(x) => &x.attrs,
        Expr::Break(x) => &x.attrs,
        Expr::Call(x) => &x.attrs,
        Expr::Cast(x) => &x.attrs,
        Expr::Continue(x) => &x.attrs,
        Expr::Field(x) => &x.attrs,
        Expr::ForLoop(x) => &x.attrs,
        Expr::If(x) => &x.attrs,
        Expr::Index(x) => &x.attrs,
        Expr::Lit(x) => &x.attrs,
        Expr::Loop(x) => &x.attrs,
        Expr::Macro(x) => &x.attrs,
        Expr::MethodCall(x) => &x.attrs,
        Expr::Paren(x) => &x.attrs,
        Expr::Path(x) => &x.attrs,
        Expr::Range(x) => &x.attrs,
        Expr::Reference(x) => &x.attrs,
        Expr::Return(x) => &x.attrs,
        Expr::Tuple(x) => &x.attrs,
        Expr::Unary(x) => &x.attrs,
        Expr::Unsafe(x) => &x.attrs,
        Expr::While(x) => &x.attrs,
        _ => &[],
    }
}

/// A path's first token: its leading `::` or its first segment's name.
fn path_first(p: &syn::Path) -> Option<Span> {
    match &p.leading_colon {
        Some(c) => Some(c.spans[0]),
        None => Some(p.segments.first()?.ident.span()),
    }
}

/// A path's last token: the closing `>` of its last segment's generics, or its name.
fn path_last(p: &syn::Path) -> Option<Span> {
    let seg = p.segments.last()?;
    match &seg.arguments {
        syn::PathArguments::None => Some(seg.ident.span()),
        syn::PathArguments::AngleBracketed(a) => Some(a.gt_token.span),
        syn::PathArguments::Parenthesized(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::expr_edges;
    use quote::ToTokens;

    /// The walk agrees with printing the node, for every node of every kernel body the
    /// fuzzer's corpus holds (the workspace's tests, examples and docs) that it handles.
    #[test]
    fn edges_match_the_printed_tokens() {
        struct Check(usize);
        impl<'a> syn::visit::Visit<'a> for Check {
            fn visit_expr(&mut self, e: &'a syn::Expr) {
                if let Some((a, b)) = expr_edges(e) {
                    let mut it = e.to_token_stream().into_iter();
                    let first = it.next().expect("a token").span();
                    let last = it.last().map(|t| t.span()).unwrap_or(first);
                    let show = |s: proc_macro2::Span| format!("{:?}", s.byte_range());
                    assert_eq!(
                        (show(a), show(b)),
                        (show(first), show(last)),
                        "{}",
                        e.to_token_stream()
                    );
                    self.0 += 1;
                }
                syn::visit::visit_expr(self, e);
            }
        }
        let corpus = crate::fuzz::corpus::load();
        let mut check = Check(0);
        for seed in &corpus.seeds {
            let Ok(item) = seed.kernel.item_tokens() else {
                continue;
            };
            let Ok(func) = syn::parse2::<syn::ItemFn>(item) else {
                continue;
            };
            syn::visit::Visit::visit_item_fn(&mut check, &func);
        }
        assert!(check.0 > 10_000, "only {} expressions checked", check.0);
    }
}
