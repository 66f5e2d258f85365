//! Binding call arguments (positional, then `name = value` keywords) to a builtin's signature.
//!
//! Binding also *evaluates* the arguments: every value argument is lowered exactly once, in
//! source order (as Rust evaluates call arguments), and its operand is kept in the [`Bound`]
//! table. Handlers read the operands from there and never lower an argument expression
//! themselves, so an argument with an effect (an atomic used as a value) happens once, in the
//! order the user wrote it. The one exception is a context-typed argument (a literal, or
//! `block_idx()`, see `types.rs`): it is pure, so it is lowered when the handler asks for it
//! with the type it needs ([`Lowerer::arg`]), still once. Compile-time arguments (shapes,
//! `dim`, orders, scopes) are [`Kind::Meta`]: they are read from the syntax, never lowered.

use super::{LResult, Lowerer};
use crate::ast::{Arg, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{Operand, Span};

/// How an argument is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One value, lowered at binding.
    Value,
    /// A list of values (`[a, b]`, `(a, b)`, or a single value), each lowered at binding.
    List,
    /// A compile-time argument read from its syntax (a shape, `dim`, an order or scope name).
    Meta,
}

/// One parameter of a builtin: its name, other accepted keyword spellings, whether it must be
/// given, and how it is evaluated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct P {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub required: bool,
    pub kind: Kind,
    /// Only given as `name = value` (a positional argument never binds to it).
    pub keyword_only: bool,
}

pub(crate) const fn req(name: &'static str) -> P {
    P {
        name,
        aliases: &[],
        required: true,
        kind: Kind::Value,
        keyword_only: false,
    }
}
pub(crate) const fn opt(name: &'static str) -> P {
    P {
        name,
        aliases: &[],
        required: false,
        kind: Kind::Value,
        keyword_only: false,
    }
}
pub(crate) const fn req_alias(name: &'static str, aliases: &'static [&'static str]) -> P {
    P {
        name,
        aliases,
        required: true,
        kind: Kind::Value,
        keyword_only: false,
    }
}
pub(crate) const fn opt_alias(name: &'static str, aliases: &'static [&'static str]) -> P {
    P {
        name,
        aliases,
        required: false,
        kind: Kind::Value,
        keyword_only: false,
    }
}

impl P {
    /// The same parameter, evaluated as a list of values.
    pub(crate) const fn list(self) -> P {
        P {
            kind: Kind::List,
            ..self
        }
    }
    /// The same parameter, read at compile time.
    pub(crate) const fn meta(self) -> P {
        P {
            kind: Kind::Meta,
            ..self
        }
    }
    /// The same parameter, given only by keyword.
    pub(crate) const fn keyword(self) -> P {
        P {
            keyword_only: true,
            ..self
        }
    }
}

/// A lowered value argument.
#[derive(Debug, Clone)]
pub(crate) enum Lowered {
    One(Operand),
    /// The items of a list argument with their spans (a single value is a one-item list).
    Many(Vec<(Operand, Span)>),
    /// A context-typed value, lowered on request (see the module docs).
    Deferred,
}

/// Arguments bound to parameter slots, value arguments already lowered.
pub(crate) struct Bound<'a> {
    params: &'a [P],
    slots: Vec<Option<&'a Expr>>,
    vals: std::cell::RefCell<Vec<Option<Lowered>>>,
}

impl<'a> Bound<'a> {
    fn index(&self, name: &str) -> usize {
        self.params
            .iter()
            .position(|p| p.name == name)
            .expect("parameter name from the signature")
    }
    /// Whether the signature has a parameter `name`.
    pub fn has(&self, name: &str) -> bool {
        self.params.iter().any(|p| p.name == name)
    }
    /// The syntax of an argument (for spans and compile-time arguments).
    pub fn get(&self, name: &str) -> Option<&'a Expr> {
        self.slots[self.index(name)]
    }
    /// A required argument's syntax (binding guaranteed it is present).
    pub fn req(&self, name: &str) -> &'a Expr {
        self.get(name)
            .expect("required arguments are checked when binding")
    }
    /// The items of a [`Kind::List`] argument, if given.
    pub fn list(&self, name: &str) -> Option<Vec<(Operand, Span)>> {
        match &self.vals.borrow()[self.index(name)] {
            Some(Lowered::Many(v)) => Some(v.clone()),
            Some(_) => unreachable!("`{name}` is a value parameter"),
            None => None,
        }
    }
}

/// How many parameters a positional argument can bind to (the keyword-only ones come last).
pub(crate) fn positional_capacity(params: &[P]) -> usize {
    params.iter().take_while(|p| !p.keyword_only).count()
}

/// Whether `args` would bind to `params` without an error (no unknown or repeated keyword, not
/// too many positional arguments, every required parameter given): how an overloaded method
/// picks its form. Nothing is lowered or reported.
pub(crate) fn fits(params: &[P], args: &[Arg]) -> bool {
    let mut given = vec![false; params.len()];
    let positional = args.iter().take_while(|a| a.name.is_none()).count();
    if positional > positional_capacity(params)
        || args[positional..].iter().any(|a| a.name.is_none())
    {
        return false;
    }
    given[..positional].iter_mut().for_each(|g| *g = true);
    for a in &args[positional..] {
        let (name, _) = a
            .name
            .as_ref()
            .expect("keyword arguments after the positional ones");
        match params
            .iter()
            .position(|p| p.name == name || p.aliases.contains(&name.as_str()))
        {
            Some(i) if !given[i] => given[i] = true,
            _ => return false,
        }
    }
    params.iter().zip(&given).all(|(p, g)| *g || !p.required)
}

pub(crate) fn signature_str(fname: &str, params: &[P]) -> String {
    let ps: Vec<String> = params
        .iter()
        .map(|p| {
            if p.required {
                p.name.to_string()
            } else {
                format!("{} = ..", p.name)
            }
        })
        .collect();
    format!("{fname}({})", ps.join(", "))
}

/// The items of a list argument's syntax: `[a, b]` / `(a, b)` or a single value.
pub(crate) fn list_items(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Array(items) | ExprKind::Tuple(items) => items.iter().collect(),
        _ => vec![e],
    }
}

/// Arguments matched to parameter slots, before evaluation.
struct Matched<'a> {
    slots: Vec<Option<&'a Expr>>,
    /// Where each bound parameter was given (its keyword, or the positional argument).
    given_at: Vec<Span>,
    /// Parameter names offered for unknown keyword arguments ("did you mean").
    suggested: Vec<&'static str>,
    /// Parameter index of each argument, in source order.
    order: Vec<usize>,
    /// No argument was misplaced, repeated or unknown.
    ok: bool,
}

impl Lowerer {
    /// Match `args` to `params`, then lower the value arguments in source order.
    pub(crate) fn bind_args<'a>(
        &mut self,
        fname: &str,
        params: &'a [P],
        args: &'a [Arg],
        call_span: Span,
    ) -> LResult<Bound<'a>> {
        let m = self.match_args(fname, params, args)?;
        let all_given = self.check_missing(fname, params, &m, call_span);
        if !(m.ok && all_given) {
            return Err(super::Reported);
        }
        let vals = self.lower_bound_args(params, &m.slots, &m.order)?;
        Ok(Bound {
            params,
            slots: m.slots,
            vals: std::cell::RefCell::new(vals),
        })
    }

    /// Assign each argument to its parameter slot, reporting a positional argument after a
    /// keyword, repeated and unknown keywords; too many positional arguments end binding.
    fn match_args<'a>(
        &mut self,
        fname: &str,
        params: &'a [P],
        args: &'a [Arg],
    ) -> LResult<Matched<'a>> {
        let mut m = Matched {
            slots: vec![None; params.len()],
            given_at: vec![Span::NONE; params.len()],
            suggested: Vec::new(),
            order: Vec::with_capacity(args.len()),
            ok: true,
        };
        let mut positional = 0;
        let mut seen_keyword = false;
        for a in args {
            match &a.name {
                None => {
                    if seen_keyword {
                        self.error(Diagnostic::new(
                            a.span,
                            "positional argument after a keyword argument",
                        ));
                        m.ok = false;
                        continue;
                    }
                    if positional >= positional_capacity(params) {
                        let d = Diagnostic::new(
                            a.span,
                            format!(
                                "`{fname}` takes {} but {} supplied",
                                crate::diag::count(
                                    positional_capacity(params),
                                    if positional_capacity(params) < params.len() {
                                        "positional argument"
                                    } else {
                                        "argument"
                                    }
                                ),
                                crate::diag::were(args.iter().filter(|a| a.name.is_none()).count())
                            ),
                        )
                        .note(format!("signature: `{}`", signature_str(fname, params)));
                        return Err(self.error(d));
                    }
                    m.slots[positional] = Some(&a.value);
                    m.given_at[positional] = a.span;
                    m.order.push(positional);
                    positional += 1;
                }
                Some((name, nspan)) => {
                    seen_keyword = true;
                    self.match_keyword(fname, params, &mut m, name, *nspan, &a.value);
                }
            }
        }
        Ok(m)
    }

    /// Bind the keyword argument `name = value` (`name` may be an alias) into `m`, or report
    /// it as given twice or unknown (with the close parameter names as help).
    fn match_keyword<'a>(
        &mut self,
        fname: &str,
        params: &'a [P],
        m: &mut Matched<'a>,
        name: &str,
        nspan: Span,
        value: &'a Expr,
    ) {
        match params
            .iter()
            .position(|p| p.name == name || p.aliases.contains(&name))
        {
            Some(i) if m.slots[i].is_some() => {
                self.error(
                    Diagnostic::new(
                        nspan,
                        format!("argument `{}` is given twice", params[i].name),
                    )
                    .label(
                        m.given_at[i],
                        format!("`{}` is first given here", params[i].name),
                    ),
                );
                m.ok = false;
            }
            Some(i) => {
                m.slots[i] = Some(value);
                m.given_at[i] = nspan;
                m.order.push(i);
            }
            None => {
                let names = params
                    .iter()
                    .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()));
                let close = super::suggest::closest(name, names);
                let shown: Vec<String> = close.iter().map(|c| c.to_string()).collect();
                m.suggested.extend(close);
                self.error(
                    Diagnostic::new(nspan, format!("`{fname}` has no argument named `{name}`"))
                        .note(format!("signature: `{}`", signature_str(fname, params)))
                        .maybe_help(super::suggest::help_line("an argument", &shown)),
                );
                m.ok = false;
            }
        }
    }

    /// Report each required parameter left without an argument; `false` if any was.
    fn check_missing(
        &mut self,
        fname: &str,
        params: &[P],
        m: &Matched<'_>,
        call_span: Span,
    ) -> bool {
        let mut ok = true;
        for (p, s) in params.iter().zip(&m.slots) {
            // A missing argument that an unknown one was suggested for has been reported (as
            // the misspelling it most likely is).
            let misspelt = m
                .suggested
                .iter()
                .any(|n| *n == p.name || p.aliases.contains(n));
            if p.required && s.is_none() && !misspelt {
                self.error(
                    Diagnostic::new(
                        call_span,
                        format!("`{fname}` is missing its argument `{}`", p.name),
                    )
                    .note(format!("signature: `{}`", signature_str(fname, params))),
                );
                ok = false;
            }
        }
        ok
    }

    /// Evaluate the bound arguments: each value argument once, left to right as written
    /// (`order`); context-typed ones are deferred and compile-time ones are not lowered.
    fn lower_bound_args(
        &mut self,
        params: &[P],
        slots: &[Option<&Expr>],
        order: &[usize],
    ) -> LResult<Vec<Option<Lowered>>> {
        let mut vals: Vec<Option<Lowered>> = vec![None; params.len()];
        for &i in order {
            let e = slots[i].expect("bound above");
            vals[i] = match params[i].kind {
                Kind::Meta => None,
                Kind::Value if self.flex_kind(e).is_some() => Some(Lowered::Deferred),
                Kind::Value => Some(Lowered::One(self.expr(e)?)),
                Kind::List => {
                    let mut items = Vec::new();
                    for it in list_items(e) {
                        items.push((self.expr(it)?, it.span));
                    }
                    Some(Lowered::Many(items))
                }
            };
        }
        Ok(vals)
    }

    /// The operand of value argument `name`, if given: the one lowered at binding, or a
    /// context-typed one lowered now as `want` (once: later calls get the same operand).
    pub(crate) fn arg(
        &mut self,
        bound: &Bound<'_>,
        name: &str,
        want: Option<crate::ir::DType>,
    ) -> LResult<Option<Operand>> {
        let i = bound.index(name);
        let cur = bound.vals.borrow()[i].clone();
        match cur {
            Some(Lowered::One(o)) => Ok(Some(o)),
            Some(Lowered::Deferred) => {
                let e = bound.slots[i].expect("deferred arguments are bound");
                let o = self.expr_as(e, want)?;
                bound.vals.borrow_mut()[i] = Some(Lowered::One(o));
                Ok(Some(o))
            }
            Some(Lowered::Many(_)) => unreachable!("`{name}` is a list parameter"),
            None => Ok(None),
        }
    }

    /// A required value argument (see [`Lowerer::arg`]).
    pub(crate) fn req_arg(
        &mut self,
        bound: &Bound<'_>,
        name: &str,
        want: Option<crate::ir::DType>,
    ) -> LResult<Operand> {
        Ok(self
            .arg(bound, name, want)?
            .expect("required arguments are bound"))
    }

    /// The type an argument will have if it is lowered without a wanted type (for arguments
    /// that decide the type of others): `None` for context-typed ones.
    pub(crate) fn arg_type(&self, bound: &Bound<'_>, name: &str) -> Option<crate::ir::Ty> {
        match &bound.vals.borrow()[bound.index(name)] {
            Some(Lowered::One(o)) => Some(self.ty(*o)),
            _ => None,
        }
    }
}
