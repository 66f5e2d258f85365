//! The AST printed back as surface Rust: a [`KernelDef`] prints as a `#[tile_kernel(..)] fn`
//! item that the `#[tile_kernel]` macro accepts and parses back to the same tree (up to spans,
//! and up to how negative literals are spelled: an `Int` with a negative value prints as unary
//! minus on its magnitude, which is how the parser represents it).
//!
//! Parentheses are conservative: a child expression is parenthesised unless it is an atom (a
//! literal, a name, a call, a method call, a list or a tuple) or the omission is one of a few
//! obviously safe cases (`a * b + c`, `a + b < c`, `a < b && c`, left-nested chains of one
//! operator family such as `a + b - c`). The parser drops parentheses, so extra ones never change
//! the tree.
//!
//! Statements and blocks are indented by four spaces per level; [`Stmt`] prints without a
//! trailing newline, nested lines indented relative to the statement's own column.

use super::{
    Arg, BinOp, Expr, ExprKind, GenericArg, KernelDef, KernelOptions, ParamDef, ParamTy, RangeExpr,
    Stmt, UnOp,
};
use std::fmt::{self, Display, Formatter, Write};

/// The operator's Rust token (`+`, `<<`, `&&`, ...).
fn binop_symbol(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&&",
        BinOp::Or => "||",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
    }
}

/// The operator's Rust token (`-`, `!`).
fn unop_symbol(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "-",
        UnOp::Not => "!",
    }
}

impl Display for BinOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(binop_symbol(*self))
    }
}

impl Display for UnOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(unop_symbol(*self))
    }
}

/// Operator families, in Rust's precedence order (loosest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Or,
    And,
    Cmp,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Add,
    Mul,
}

fn class(op: BinOp) -> Class {
    match op {
        BinOp::Or => Class::Or,
        BinOp::And => Class::And,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Class::Cmp,
        BinOp::BitOr => Class::BitOr,
        BinOp::BitXor => Class::BitXor,
        BinOp::BitAnd => Class::BitAnd,
        BinOp::Shl | BinOp::Shr => Class::Shift,
        BinOp::Add | BinOp::Sub => Class::Add,
        BinOp::Mul | BinOp::Div | BinOp::Rem => Class::Mul,
    }
}

/// Whether `child` (an operand of a binary `parent`, on the left or the right) may be printed
/// without parentheses. Conservative: only the obviously safe cases.
fn bare_in_binary(child: &Expr, parent: BinOp, left: bool) -> bool {
    match &child.kind {
        ExprKind::Binary { op, .. } => {
            let (c, p) = (class(*op), class(parent));
            // `a + b - c`, `a && b && c`: left-nested chains of one family (not comparisons,
            // which Rust does not chain).
            (left && c == p && c != Class::Cmp)
                // `a * b + c`
                || (c == Class::Mul && p == Class::Add)
                // `a + b < c * d`
                || (matches!(c, Class::Add | Class::Mul) && p == Class::Cmp)
                // `a < b && c`, `a && b || c`
                || (c >= Class::Cmp && p == Class::And)
                || (c >= Class::And && p == Class::Or)
        }
        // `-x * y` is `(-x) * y` in Rust, but a negative literal reads better in parentheses
        // too; a cast before `<` or `<<` would start generic arguments.
        _ => is_atom(child),
    }
}

/// A literal, a name, a call, a list or a tuple: never needs parentheses around it.
/// (Negative numbers are unary minus applied to a literal, so they are not atoms.)
fn is_atom(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { value, .. } => *value >= 0,
        ExprKind::Float { text, .. } => !text.starts_with('-'),
        ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Path(_)
        | ExprKind::Array(_)
        | ExprKind::Tuple(_)
        | ExprKind::Call { .. }
        | ExprKind::Method { .. } => true,
        ExprKind::Binary { .. }
        | ExprKind::Unary { .. }
        | ExprKind::IfElse { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Unsafe(_) => false,
    }
}

/// Whether a receiver of a method call may be printed bare: names, calls and method calls
/// (`x.len()`, `arange(4).reshape(..)`, `t.sum().min(3)`), lists and tuples. Literals are
/// parenthesised (`(1).max(x)`, and `1.5.max(..)` would not lex as intended).
fn bare_receiver(e: &Expr) -> bool {
    matches!(
        &e.kind,
        ExprKind::Path(_)
            | ExprKind::Call { .. }
            | ExprKind::Method { .. }
            | ExprKind::Array(_)
            | ExprKind::Tuple(_)
    )
}

struct Paren<'a>(&'a Expr);

impl Display for Paren<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "({})", self.0)
    }
}

/// `e`, parenthesised unless `bare`.
fn maybe_paren(f: &mut Formatter<'_>, e: &Expr, bare: bool) -> fmt::Result {
    if bare {
        write!(f, "{e}")
    } else {
        write!(f, "{}", Paren(e))
    }
}

fn comma_list<T: Display>(f: &mut Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{it}")?;
    }
    Ok(())
}

/// An expression in a position where Rust would parse an `if` as the start of a statement or a
/// block (conditions, range bounds): everything but an `if` expression may stand bare.
fn fmt_in_head(f: &mut Formatter<'_>, e: &Expr) -> fmt::Result {
    maybe_paren(f, e, !matches!(e.kind, ExprKind::IfElse { .. }))
}

impl Display for Expr {
    /// The expression in surface syntax, without parentheses around itself.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Int { value, suffix } => {
                let s = suffix.as_deref().unwrap_or("");
                if *value < 0 {
                    write!(f, "-{}{s}", value.unsigned_abs())
                } else {
                    write!(f, "{value}{s}")
                }
            }
            ExprKind::Float { text, suffix } => {
                write!(f, "{text}{}", suffix.as_deref().unwrap_or(""))
            }
            ExprKind::Bool(b) => write!(f, "{b}"),
            ExprKind::Str(s) => write!(f, "{s:?}"),
            ExprKind::Path(p) => f.write_str(&p.join("::")),
            ExprKind::Array(items) => {
                f.write_char('[')?;
                comma_list(f, items)?;
                f.write_char(']')
            }
            ExprKind::Tuple(items) => {
                f.write_char('(')?;
                comma_list(f, items)?;
                if items.len() == 1 {
                    f.write_char(',')?;
                }
                f.write_char(')')
            }
            ExprKind::Binary { op, lhs, rhs } => {
                maybe_paren(f, lhs, bare_in_binary(lhs, *op, true))?;
                write!(f, " {op} ")?;
                maybe_paren(f, rhs, bare_in_binary(rhs, *op, false))
            }
            ExprKind::Unary { op, x } => {
                f.write_str(unop_symbol(*op))?;
                // `-5`, `-1.5`, `-x`, `!t.any()`; anything else in parentheses (`-(-x)`,
                // `-(a + b)`).
                let bare = match &x.kind {
                    ExprKind::Int { value, .. } => *value >= 0,
                    ExprKind::Float { text, .. } => !text.starts_with('-'),
                    _ => bare_receiver(x) || matches!(x.kind, ExprKind::Bool(_)),
                };
                maybe_paren(f, x, bare)
            }
            ExprKind::Call {
                path,
                generics,
                args,
                ..
            } => {
                f.write_str(&path.join("::"))?;
                if !generics.is_empty() {
                    f.write_str("::<")?;
                    comma_list(f, generics)?;
                    f.write_char('>')?;
                }
                f.write_char('(')?;
                comma_list(f, args)?;
                f.write_char(')')
            }
            ExprKind::Method {
                receiver,
                method,
                args,
                ..
            } => {
                maybe_paren(f, receiver, bare_receiver(receiver))?;
                write!(f, ".{method}(")?;
                comma_list(f, args)?;
                f.write_char(')')
            }
            ExprKind::IfElse { cond, then, els } => {
                f.write_str("if ")?;
                fmt_in_head(f, cond)?;
                write!(f, " {{ {then} }} else {{ {els} }}")
            }
            ExprKind::Cast { x, ty, .. } => {
                // `x as i32`, `t.sum() as bool`; `(a + b) as i32`, `(-x) as bool`.
                maybe_paren(f, x, is_atom(x))?;
                write!(f, " as {ty}")
            }
            ExprKind::Unsafe(x) => write!(f, "unsafe {{ {x} }}"),
        }
    }
}

impl Display for Arg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some((name, _)) = &self.name {
            write!(f, "{name} = ")?;
        }
        write!(f, "{}", self.value)
    }
}

impl Display for GenericArg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            GenericArg::Type(t, _) => f.write_str(t),
            // A const argument other than a literal must be braced in Rust (the macro's front
            // end accepts only literals there, so only hand-built trees print braces).
            GenericArg::Const(e) => match &e.kind {
                ExprKind::Int { value, .. } if *value >= 0 => write!(f, "{e}"),
                _ => write!(f, "{{ {e} }}"),
            },
        }
    }
}

impl Display for RangeExpr {
    /// `start..end` or `(start..end).step_by(step)`.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let plain = |f: &mut Formatter<'_>| -> fmt::Result {
            fmt_in_head(f, &self.start)?;
            f.write_str("..")?;
            fmt_in_head(f, &self.end)
        };
        match &self.step {
            None => plain(f),
            Some(step) => {
                f.write_char('(')?;
                plain(f)?;
                write!(f, ").step_by({step})")
            }
        }
    }
}

const INDENT: &str = "    ";

fn pad(f: &mut Formatter<'_>, level: usize) -> fmt::Result {
    for _ in 0..level {
        f.write_str(INDENT)?;
    }
    Ok(())
}

/// `{`, the statements one per line at `level + 1`, and `}` at `level` (the caller has written
/// the text before the brace).
fn fmt_block(f: &mut Formatter<'_>, body: &[Stmt], level: usize) -> fmt::Result {
    f.write_str("{\n")?;
    for s in body {
        pad(f, level + 1)?;
        fmt_stmt(f, s, level + 1)?;
        f.write_char('\n')?;
    }
    pad(f, level)?;
    f.write_char('}')
}

/// One statement starting at the current column, its nested lines at `level`'s indentation.
fn fmt_stmt(f: &mut Formatter<'_>, s: &Stmt, level: usize) -> fmt::Result {
    match s {
        Stmt::Let {
            name,
            mutable,
            init,
            ..
        } => {
            let m = if *mutable { "mut " } else { "" };
            write!(f, "let {m}{name} = {init};")
        }
        Stmt::Assign {
            name, op, value, ..
        } => {
            let op = op.map_or("", binop_symbol);
            write!(f, "{name} {op}= {value};")
        }
        Stmt::Expr(e) => {
            // An expression statement is a call in any valid kernel; anything else in parentheses,
            // so that it cannot be read as the start of a statement (`if`, a block).
            maybe_paren(f, e, bare_receiver(e))?;
            f.write_char(';')
        }
        Stmt::For {
            var, range, body, ..
        } => {
            write!(f, "for {var} in {range} ")?;
            fmt_block(f, body, level)
        }
        Stmt::While { cond, body, .. } => {
            f.write_str("while ")?;
            fmt_in_head(f, cond)?;
            f.write_char(' ')?;
            fmt_block(f, body, level)
        }
        Stmt::Loop { body, .. } => {
            f.write_str("loop ")?;
            fmt_block(f, body, level)
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            f.write_str("if ")?;
            fmt_in_head(f, cond)?;
            f.write_char(' ')?;
            fmt_block(f, then, level)?;
            match els.as_deref() {
                None => Ok(()),
                // `else if`: the parser turns it into an else block holding one `if`.
                Some([inner @ Stmt::If { .. }]) => {
                    f.write_str(" else ")?;
                    fmt_stmt(f, inner, level)
                }
                Some(els) => {
                    f.write_str(" else ")?;
                    fmt_block(f, els, level)
                }
            }
        }
        Stmt::Break { .. } => f.write_str("break;"),
        Stmt::Unsafe { body, .. } => {
            f.write_str("unsafe ")?;
            fmt_block(f, body, level)
        }
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        fmt_stmt(f, self, 0)
    }
}

impl Display for ParamTy {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ParamTy::GlobalTensor { elem } => write!(f, "GlobalTensor<{elem}>"),
            ParamTy::Scalar(t) => f.write_str(t),
        }
    }
}

impl Display for ParamDef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.ty)
    }
}

impl Display for KernelOptions {
    /// The attribute: `#[tile_kernel(threads = 128)]`, with `, target = 90`,
    /// `, cluster = 4` (or `[2, 2, 1]`) and `, min_blocks_per_sm = 2` when they are given.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "#[tile_kernel(threads = {}", self.threads)?;
        if let Some(t) = self.target {
            write!(f, ", target = {t}")?;
        }
        match self.cluster {
            None => {}
            Some([x, 1, 1]) => write!(f, ", cluster = {x}")?,
            Some([x, y, z]) => write!(f, ", cluster = [{x}, {y}, {z}]")?,
        }
        if let Some(m) = self.min_blocks_per_sm {
            write!(f, ", min_blocks_per_sm = {m}")?;
        }
        if let Some(v) = self.vector_width {
            write!(f, ", vector_width = {v}")?;
        }
        f.write_str(")]")
    }
}

/// Rust's keywords that a raw identifier (`r#loop`) may spell (`crate`, `self`, `super` and
/// `Self` cannot be raw).
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];

impl Display for KernelDef {
    /// The whole item: the attribute, the signature and the body (no trailing newline).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.options)?;
        // The kernel's name is stored without its `r#` (it is the PTX entry point); every other
        // name keeps the `r#` it was written with.
        let raw = if KEYWORDS.contains(&self.name.as_str()) {
            "r#"
        } else {
            ""
        };
        let unsafety = if self.options.unsafe_fn {
            "unsafe "
        } else {
            ""
        };
        write!(f, "{unsafety}fn {raw}{}(", self.name)?;
        comma_list(f, &self.params)?;
        f.write_str(") ")?;
        fmt_block(f, &self.body, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::ir::Span;

    const S: Span = Span::NONE;

    fn ex(kind: ExprKind) -> Expr {
        Expr { kind, span: S }
    }
    fn int(v: i128) -> Expr {
        Expr::int(v, S)
    }
    fn var(n: &str) -> Expr {
        ex(ExprKind::Path(vec![n.into()]))
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        ex(ExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        })
    }
    fn un(op: UnOp, x: Expr) -> Expr {
        ex(ExprKind::Unary { op, x: Box::new(x) })
    }
    fn arg(name: Option<&str>, value: Expr) -> Arg {
        Arg {
            name: name.map(|n| (n.to_string(), S)),
            value,
            span: S,
        }
    }
    fn call(path: &str, args: Vec<Arg>) -> Expr {
        ex(ExprKind::Call {
            path: path.split("::").map(str::to_string).collect(),
            path_span: S,
            generics: vec![],
            args,
        })
    }
    fn method(recv: Expr, m: &str, args: Vec<Arg>) -> Expr {
        ex(ExprKind::Method {
            receiver: Box::new(recv),
            method: m.into(),
            method_span: S,
            args,
        })
    }

    #[test]
    fn literals() {
        assert_eq!(int(7).to_string(), "7");
        let suffixed = ex(ExprKind::Int {
            value: 7,
            suffix: Some("u64".into()),
        });
        assert_eq!(suffixed.to_string(), "7u64");
        assert_eq!(int(-5).to_string(), "-5");
        assert_eq!(un(UnOp::Neg, int(2147483648)).to_string(), "-2147483648");
        let f = ex(ExprKind::Float {
            text: "2e-3".into(),
            suffix: Some("f32".into()),
        });
        assert_eq!(f.to_string(), "2e-3f32");
        assert_eq!(ex(ExprKind::Bool(true)).to_string(), "true");
        assert_eq!(
            ex(ExprKind::Str("acq_rel".into())).to_string(),
            "\"acq_rel\""
        );
        let path = ex(ExprKind::Path(vec!["MemoryOrder".into(), "Relaxed".into()]));
        assert_eq!(path.to_string(), "MemoryOrder::Relaxed");
        // A negative literal as an operand or a receiver is parenthesised.
        assert_eq!(bin(BinOp::Mul, int(-5), var("x")).to_string(), "(-5) * x");
        assert_eq!(
            method(int(-5), "min", vec![arg(None, int(3))]).to_string(),
            "(-5).min(3)"
        );
        assert_eq!(
            method(int(5), "max", vec![arg(None, int(3))]).to_string(),
            "(5).max(3)"
        );
        assert_eq!(un(UnOp::Neg, int(-5)).to_string(), "-(-5)");
        let half = ex(ExprKind::Float {
            text: "0.5".into(),
            suffix: None,
        });
        assert_eq!(un(UnOp::Neg, half.clone()).to_string(), "-0.5");
        assert_eq!(
            bin(BinOp::Sub, half.clone(), un(UnOp::Neg, half)).to_string(),
            "0.5 - (-0.5)"
        );
    }

    #[test]
    fn precedence() {
        let (a, b, c) = (var("a"), var("b"), var("c"));
        let sum = bin(BinOp::Add, a.clone(), b.clone());
        assert_eq!(
            bin(BinOp::Mul, sum.clone(), c.clone()).to_string(),
            "(a + b) * c"
        );
        assert_eq!(
            bin(BinOp::Mul, c.clone(), sum.clone()).to_string(),
            "c * (a + b)"
        );
        let prod = bin(BinOp::Mul, a.clone(), b.clone());
        assert_eq!(bin(BinOp::Add, prod, c.clone()).to_string(), "a * b + c");
        // Left-nested chains stay bare, right-nested ones do not.
        assert_eq!(
            bin(BinOp::Sub, sum.clone(), c.clone()).to_string(),
            "a + b - c"
        );
        assert_eq!(
            bin(BinOp::Sub, c.clone(), sum.clone()).to_string(),
            "c - (a + b)"
        );
        // Comparisons never chain; bitwise ops are always parenthesised inside others.
        let lt = bin(BinOp::Lt, a.clone(), b.clone());
        assert_eq!(
            bin(BinOp::Eq, lt.clone(), c.clone()).to_string(),
            "(a < b) == c"
        );
        let and = bin(BinOp::BitAnd, a.clone(), b.clone());
        assert_eq!(
            bin(BinOp::Eq, and.clone(), c.clone()).to_string(),
            "(a & b) == c"
        );
        assert_eq!(bin(BinOp::Shl, c.clone(), and).to_string(), "c << (a & b)");
        assert_eq!(
            bin(BinOp::And, lt.clone(), bin(BinOp::Or, a.clone(), b.clone())).to_string(),
            "a < b && (a || b)"
        );
        assert_eq!(
            bin(BinOp::Or, bin(BinOp::And, a.clone(), b.clone()), c.clone()).to_string(),
            "a && b || c"
        );
        // Unary operators and casts.
        assert_eq!(un(UnOp::Neg, sum.clone()).to_string(), "-(a + b)");
        assert_eq!(un(UnOp::Neg, un(UnOp::Neg, a.clone())).to_string(), "-(-a)");
        assert_eq!(
            un(UnOp::Not, method(a.clone(), "any", vec![])).to_string(),
            "!a.any()"
        );
        let cast = ex(ExprKind::Cast {
            x: Box::new(sum.clone()),
            ty: "i32".into(),
            ty_span: S,
        });
        assert_eq!(cast.to_string(), "(a + b) as i32");
        // A cast before `<` would open generic arguments: always parenthesised as an operand.
        assert_eq!(
            bin(BinOp::Lt, cast, c.clone()).to_string(),
            "((a + b) as i32) < c"
        );
        // Method receivers.
        assert_eq!(method(sum, "sum", vec![]).to_string(), "(a + b).sum()");
        let ifelse = ex(ExprKind::IfElse {
            cond: Box::new(lt),
            then: Box::new(a.clone()),
            els: Box::new(b.clone()),
        });
        assert_eq!(ifelse.to_string(), "if a < b { a } else { b }");
        assert_eq!(
            bin(BinOp::Add, ifelse.clone(), c.clone()).to_string(),
            "(if a < b { a } else { b }) + c"
        );
    }

    #[test]
    fn calls_keywords_and_indices() {
        let e = call(
            "atomic::global_add",
            vec![
                arg(None, var("out")),
                arg(
                    Some("values"),
                    call(
                        "atomic::shared_add",
                        vec![arg(None, var("e")), arg(None, int(1))],
                    ),
                ),
                arg(Some("offsets"), ex(ExprKind::Array(vec![int(0), int(-3)]))),
                arg(Some("sem"), ex(ExprKind::Str("relaxed".into()))),
            ],
        );
        assert_eq!(
            e.to_string(),
            "atomic::global_add(out, values = atomic::shared_add(e, 1), offsets = [0, -3], sem = \"relaxed\")"
        );
        let idx = ex(ExprKind::Tuple(vec![var("rows"), int(3)]));
        let e = call(
            "atomic_cas",
            vec![
                arg(None, var("a")),
                arg(None, idx),
                arg(Some("check_bounds"), ex(ExprKind::Bool(false))),
            ],
        );
        assert_eq!(
            e.to_string(),
            "atomic_cas(a, (rows, 3), check_bounds = false)"
        );
        assert_eq!(ex(ExprKind::Tuple(vec![var("i")])).to_string(), "(i,)");
        let generic = ex(ExprKind::Call {
            path: vec!["shared_tensor".into()],
            path_span: S,
            generics: vec![GenericArg::Type("i32".into(), S)],
            args: vec![arg(None, ex(ExprKind::Array(vec![int(4), int(8)])))],
        });
        assert_eq!(generic.to_string(), "shared_tensor::<i32>([4, 8])");
    }

    #[test]
    fn kernel_item() {
        let body = vec![
            Stmt::Let {
                name: "b".into(),
                name_span: S,
                mutable: false,
                init: call("block_idx", vec![]),
                span: S,
            },
            Stmt::Let {
                name: "_t1".into(),
                name_span: S,
                mutable: true,
                init: bin(BinOp::Add, var("b"), un(UnOp::Neg, int(2147483648))),
                span: S,
            },
            Stmt::For {
                var: "i".into(),
                var_span: S,
                range: RangeExpr {
                    start: int(0),
                    end: bin(BinOp::BitAnd, var("k"), int(3)),
                    step: Some(int(2)),
                    span: S,
                },
                body: vec![Stmt::Assign {
                    name: "_t1".into(),
                    name_span: S,
                    op: Some(BinOp::BitXor),
                    value: var("i"),
                    span: S,
                }],
                span: S,
            },
            Stmt::While {
                cond: bin(BinOp::Lt, var("_t1"), int(10)),
                body: vec![
                    Stmt::If {
                        cond: bin(BinOp::Gt, var("b"), int(1)),
                        then: vec![Stmt::Break { span: S }],
                        els: Some(vec![Stmt::If {
                            cond: ex(ExprKind::Bool(true)),
                            then: vec![],
                            els: Some(vec![Stmt::Expr(call("sync", vec![]))]),
                            span: S,
                        }]),
                        span: S,
                    },
                    Stmt::Assign {
                        name: "_t1".into(),
                        name_span: S,
                        op: None,
                        value: int(10),
                        span: S,
                    },
                ],
                span: S,
            },
            Stmt::Loop {
                body: vec![Stmt::Break { span: S }],
                span: S,
            },
        ];
        let def = KernelDef {
            name: "k".into(),
            name_span: S,
            params: vec![
                ParamDef {
                    name: "x".into(),
                    span: S,
                    ty: ParamTy::GlobalTensor { elem: "i32".into() },
                    ty_span: S,
                },
                ParamDef {
                    name: "k".into(),
                    span: S,
                    ty: ParamTy::Scalar("i32".into()),
                    ty_span: S,
                },
            ],
            body,
            options: KernelOptions {
                target: Some(90),
                ..KernelOptions::default()
            },
        };
        let want = "\
#[tile_kernel(threads = 128, target = 90)]
fn k(x: GlobalTensor<i32>, k: i32) {
    let b = block_idx();
    let mut _t1 = b + (-2147483648);
    for i in (0..k & 3).step_by(2) {
        _t1 ^= i;
    }
    while _t1 < 10 {
        if b > 1 {
            break;
        } else if true {
        } else {
            sync();
        }
        _t1 = 10;
    }
    loop {
        break;
    }
}";
        assert_eq!(def.to_string(), want);
        // A statement alone prints without indentation of its own.
        assert_eq!(def.body[0].to_string(), "let b = block_idx();");
        // A kernel named by a keyword is stored without its `r#` (the PTX entry point).
        let raw = KernelDef {
            name: "loop".into(),
            params: vec![],
            body: vec![],
            ..def.clone()
        };
        assert_eq!(
            raw.to_string(),
            "#[tile_kernel(threads = 128, target = 90)]\nfn r#loop() {\n}"
        );
        // Cluster shapes.
        let mut o = KernelOptions {
            cluster: Some([4, 1, 1]),
            ..KernelOptions::default()
        };
        assert_eq!(o.to_string(), "#[tile_kernel(threads = 128, cluster = 4)]");
        o.cluster = Some([2, 2, 1]);
        assert_eq!(
            o.to_string(),
            "#[tile_kernel(threads = 128, cluster = [2, 2, 1])]"
        );
        o.min_blocks_per_sm = Some(3);
        assert_eq!(
            o.to_string(),
            "#[tile_kernel(threads = 128, cluster = [2, 2, 1], min_blocks_per_sm = 3)]"
        );
    }
}
