//! Binding call arguments (positional, then `name = value` keywords) to a builtin's signature.

use super::{LResult, Lowerer};
use crate::ast::{Arg, Expr};
use crate::diag::Diagnostic;
use crate::ir::Span;

/// One parameter of a builtin: its name, other accepted keyword spellings, and whether it must
/// be given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct P {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub required: bool,
}

pub(crate) const fn req(name: &'static str) -> P {
    P {
        name,
        aliases: &[],
        required: true,
    }
}
pub(crate) const fn opt(name: &'static str) -> P {
    P {
        name,
        aliases: &[],
        required: false,
    }
}
pub(crate) const fn req_alias(name: &'static str, aliases: &'static [&'static str]) -> P {
    P {
        name,
        aliases,
        required: true,
    }
}
pub(crate) const fn opt_alias(name: &'static str, aliases: &'static [&'static str]) -> P {
    P {
        name,
        aliases,
        required: false,
    }
}

/// Arguments bound to parameter slots.
pub(crate) struct Bound<'a> {
    params: &'a [P],
    slots: Vec<Option<&'a Expr>>,
}

impl<'a> Bound<'a> {
    pub fn get(&self, name: &str) -> Option<&'a Expr> {
        let i = self
            .params
            .iter()
            .position(|p| p.name == name)
            .expect("parameter name from the signature");
        self.slots[i]
    }
    /// A required parameter (binding guaranteed it is present).
    pub fn req(&self, name: &str) -> &'a Expr {
        self.get(name)
            .expect("required arguments are checked when binding")
    }
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

impl Lowerer {
    pub(crate) fn bind_args<'a>(
        &mut self,
        fname: &str,
        params: &'a [P],
        args: &'a [Arg],
        call_span: Span,
    ) -> LResult<Bound<'a>> {
        let mut slots: Vec<Option<&'a Expr>> = vec![None; params.len()];
        let mut ok = true;
        let mut positional = 0;
        let mut seen_keyword = false;
        let sig = || signature_str(fname, params);
        for a in args {
            match &a.name {
                None => {
                    if seen_keyword {
                        self.error(Diagnostic::new(
                            a.span,
                            "positional argument after a keyword argument",
                        ));
                        ok = false;
                        continue;
                    }
                    if positional >= params.len() {
                        let d = Diagnostic::new(
                            a.span,
                            format!(
                                "`{fname}` takes {} argument(s) but {} were supplied",
                                params.len(),
                                args.iter().filter(|a| a.name.is_none()).count()
                            ),
                        )
                        .note(format!("signature: `{}`", sig()));
                        return Err(self.error(d));
                    }
                    slots[positional] = Some(&a.value);
                    positional += 1;
                }
                Some((name, nspan)) => {
                    seen_keyword = true;
                    match params
                        .iter()
                        .position(|p| p.name == name || p.aliases.contains(&name.as_str()))
                    {
                        Some(i) if slots[i].is_some() => {
                            self.error(Diagnostic::new(
                                *nspan,
                                format!("argument `{}` is given twice", params[i].name),
                            ));
                            ok = false;
                        }
                        Some(i) => slots[i] = Some(&a.value),
                        None => {
                            self.error(
                                Diagnostic::new(
                                    *nspan,
                                    format!("`{fname}` has no argument named `{name}`"),
                                )
                                .note(format!("signature: `{}`", sig())),
                            );
                            ok = false;
                        }
                    }
                }
            }
        }
        for (p, s) in params.iter().zip(&slots) {
            if p.required && s.is_none() {
                self.error(
                    Diagnostic::new(
                        call_span,
                        format!("`{fname}` is missing its argument `{}`", p.name),
                    )
                    .note(format!("signature: `{}`", sig())),
                );
                ok = false;
            }
        }
        if ok {
            Ok(Bound { params, slots })
        } else {
            Err(super::Reported)
        }
    }
}
