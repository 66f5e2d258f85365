//! The methods of the kernel language, declared once in [`METHODS`]: each row gives the name,
//! what it applies to, its parameters (bound like a builtin's: positional, then keywords, each
//! value argument evaluated once in source order) and how messages list it. Overloads share a
//! name (`.min()` of a whole tile, `.min(x)` element-wise); the first row whose receiver and
//! parameters fit the call is taken, so a keyword no row has is an error, never ignored.

use super::args::{fits, opt, opt_alias, req, Bound, P};
use super::{shape_str, ty_name, LResult, Lowerer, Reported};
use crate::ast::{Arg, Expr};
use crate::diag::Diagnostic;
use crate::ir::{DType, Inst, Operand, ReduceOp, ScanOp, Span, Ty};

/// What a method is called on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recv {
    /// A global tensor or view.
    Tensor,
    /// A register tile.
    Tile,
    /// A scalar or a tile (element-wise methods).
    Value,
}

/// Which element types a method is defined on (for the lists in messages; the handler checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elems {
    Any,
    Float,
}

/// What a method does: the handler it dispatches to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Len,
    Dim,
    View,
    Reshape,
    BroadcastTo,
    /// A whole-tile reduction to a scalar (`.sum()`, `.item()`, ...).
    ReduceAll,
    /// Element-wise `.min(x)` / `.max(x)`.
    MinMax,
    Abs,
    Exp,
    Ln,
    ToBits,
    MulAdd,
    /// `sqrt` and the roundings.
    FloatFn,
    /// A fold along an axis (`.sum(axis)`, `.max(axis = ..)`).
    ReduceAlong,
    /// `.argmin` / `.argmax`, of the whole tile or along an axis.
    ArgReduce,
    /// A scan with a fixed operator (`.cumsum`), or the one named by its `op` argument.
    Scan(Option<ScanOp>),
    /// `.sort` / `.argsort`.
    Sort {
        indices: bool,
    },
    /// `.topk` / `.argtopk`.
    TopK {
        indices: bool,
    },
    Take,
    EqualRank,
    Place,
    Histogram,
}

/// One method row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MethodDef {
    pub name: &'static str,
    pub recv: Recv,
    pub params: &'static [P],
    pub form: Form,
    pub elems: Elems,
}

const fn m(name: &'static str, recv: Recv, params: &'static [P], form: Form) -> MethodDef {
    MethodDef {
        name,
        recv,
        params,
        form,
        elems: Elems::Any,
    }
}

const fn float(name: &'static str, form: Form) -> MethodDef {
    MethodDef {
        name,
        recv: Recv::Value,
        params: &[],
        form,
        elems: Elems::Float,
    }
}

const SHAPE: &[P] = &[req("shape").meta()];
const NONE: &[P] = &[];
const KEEPDIMS: P = opt_alias("keepdims", &["keep_dims"]).meta().keyword();
/// A reduction along an axis given by position or keyword (`.sum(1)`, `.sum(axis = 1)`).
const ALONG: &[P] = &[req("axis").meta(), KEEPDIMS];
/// A reduction along an axis given by keyword only: `.min(x)` is the element-wise minimum.
const ALONG_KEYWORD: &[P] = &[req("axis").meta().keyword(), KEEPDIMS];
const ARG: &[P] = &[opt("axis").meta(), KEEPDIMS];
const SCAN: &[P] = &[
    opt("axis").meta(),
    opt("exclusive").meta().keyword(),
    opt("reverse").meta().keyword(),
];
/// The order an equal rank counts in: the axes, outermost first (`order = [1, 0]`).
const ORDER: P = opt("order").meta().keyword();
const SORT: &[P] = &[opt("axis").meta(), opt("descending").meta().keyword()];
const TOPK: &[P] = &[
    req("k").meta(),
    opt("axis").meta(),
    opt("largest").meta().keyword(),
];

/// Every method, in the order messages list them.
pub(crate) const METHODS: &[MethodDef] = &[
    m("len", Recv::Tensor, NONE, Form::Len),
    m("dim", Recv::Tensor, &[req("axis").meta()], Form::Dim),
    m(
        "view",
        Recv::Tensor,
        &[req("offset"), req("shape").list()],
        Form::View,
    ),
    m("reshape", Recv::Tile, SHAPE, Form::Reshape),
    m("broadcast_to", Recv::Tile, SHAPE, Form::BroadcastTo),
    m("sum", Recv::Tile, NONE, Form::ReduceAll),
    m("sum", Recv::Tile, ALONG, Form::ReduceAlong),
    m("min", Recv::Tile, NONE, Form::ReduceAll),
    m("min", Recv::Tile, ALONG_KEYWORD, Form::ReduceAlong),
    m("max", Recv::Tile, NONE, Form::ReduceAll),
    m("max", Recv::Tile, ALONG_KEYWORD, Form::ReduceAlong),
    m("any", Recv::Tile, NONE, Form::ReduceAll),
    m("any", Recv::Tile, ALONG, Form::ReduceAlong),
    m("all", Recv::Tile, NONE, Form::ReduceAll),
    m("all", Recv::Tile, ALONG, Form::ReduceAlong),
    m("item", Recv::Tile, NONE, Form::ReduceAll),
    m("argmin", Recv::Tile, ARG, Form::ArgReduce),
    m("argmax", Recv::Tile, ARG, Form::ArgReduce),
    m("cumsum", Recv::Tile, SCAN, Form::Scan(Some(ScanOp::Add))),
    m("cumprod", Recv::Tile, SCAN, Form::Scan(Some(ScanOp::Mul))),
    m("cummin", Recv::Tile, SCAN, Form::Scan(Some(ScanOp::Min))),
    m("cummax", Recv::Tile, SCAN, Form::Scan(Some(ScanOp::Max))),
    m(
        "scan",
        Recv::Tile,
        &[
            req("op").meta(),
            opt("axis").meta(),
            opt("exclusive").meta().keyword(),
            opt("reverse").meta().keyword(),
        ],
        Form::Scan(None),
    ),
    m("sort", Recv::Tile, SORT, Form::Sort { indices: false }),
    m("argsort", Recv::Tile, SORT, Form::Sort { indices: true }),
    m("topk", Recv::Tile, TOPK, Form::TopK { indices: false }),
    m("argtopk", Recv::Tile, TOPK, Form::TopK { indices: true }),
    m(
        "take",
        Recv::Tile,
        &[req("indices"), opt("axis").meta()],
        Form::Take,
    ),
    m("equal_rank", Recv::Tile, &[ORDER], Form::EqualRank),
    m("place", Recv::Tile, &[req("starts"), ORDER], Form::Place),
    m(
        "histogram",
        Recv::Tile,
        &[req("bins").meta()],
        Form::Histogram,
    ),
    m("min", Recv::Value, &[req("other")], Form::MinMax),
    m("max", Recv::Value, &[req("other")], Form::MinMax),
    m("abs", Recv::Value, NONE, Form::Abs),
    float("sqrt", Form::FloatFn),
    float("floor", Form::FloatFn),
    float("ceil", Form::FloatFn),
    float("trunc", Form::FloatFn),
    float("round", Form::FloatFn),
    float("round_ties_even", Form::FloatFn),
    float("exp", Form::Exp),
    float("ln", Form::Ln),
    float("to_bits", Form::ToBits),
    MethodDef {
        name: "mul_add",
        recv: Recv::Value,
        params: &[req("b"), req("c")],
        form: Form::MulAdd,
        elems: Elems::Float,
    },
];

impl Recv {
    fn accepts(self, ty: &Ty) -> bool {
        match self {
            Recv::Tensor => matches!(ty, Ty::Global { .. }),
            Recv::Tile => matches!(ty, Ty::Tile { .. }),
            Recv::Value => matches!(ty, Ty::Tile { .. } | Ty::Scalar(_)),
        }
    }
}

impl MethodDef {
    /// How a list shows it: `.min()`, `.min(other)`, `.view(offset, shape)`.
    fn shown(&self) -> String {
        let ps: Vec<String> = self
            .params
            .iter()
            .map(|p| match (p.required, p.keyword_only) {
                (true, false) => p.name.to_string(),
                _ => format!("{} = ..", p.name),
            })
            .collect();
        format!("`.{}({})`", self.name, ps.join(", "))
    }
}

/// Every method name, once each (for the fuzzer's vocabulary and the documentation check).
pub fn method_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = Vec::new();
    for d in METHODS {
        if !v.contains(&d.name) {
            v.push(d.name);
        }
    }
    v
}

/// The methods of a value of type `ty`, as messages list them.
pub(crate) fn methods_of(ty: &Ty) -> Vec<&'static MethodDef> {
    METHODS.iter().filter(|d| d.recv.accepts(ty)).collect()
}

/// The note listing the methods of `ty`.
fn method_list(ty: &Ty) -> String {
    let defs = methods_of(ty);
    if defs.is_empty() {
        return "shared tensors are used through `load_shared`, `store_shared` and the atomics"
            .into();
    }
    let kind = match ty {
        Ty::Global { .. } => "global tensors",
        Ty::Tile { .. } => "tiles",
        _ => "scalars",
    };
    let all: Vec<String> = defs
        .iter()
        .filter(|d| d.elems == Elems::Any)
        .map(|d| d.shown())
        .collect();
    let floats: Vec<String> = defs
        .iter()
        .filter(|d| d.elems == Elems::Float)
        .map(|d| d.shown())
        .collect();
    let mut s = format!("{kind} have {}", all.join(", "));
    if !floats.is_empty() {
        s += &format!(", and on floats {}", floats.join(", "));
    }
    s
}

impl Lowerer {
    /// `x.method(args)`. `want` is the element type the context needs (it reaches a
    /// context-typed receiver through value-preserving methods: `arange(8).reshape(..)`).
    pub(super) fn method(
        &mut self,
        receiver: &Expr,
        method: &str,
        method_span: Span,
        args: &[Arg],
        want: Option<DType>,
        span: Span,
    ) -> LResult<Option<Operand>> {
        // Element-wise `min`/`max` of two context-typed operands agree like a binary operator.
        if matches!(method, "min" | "max") && args.len() == 1 && args[0].name.is_none() {
            if let (Some(_), Some(_)) = (self.flex_kind(receiver), self.flex_kind(&args[0].value)) {
                let (a, b) = self.operand_pair(receiver, &args[0].value, want, None)?;
                return self.minmax(method == "min", a, b, span).map(Some);
            }
        }
        let recv = self.expr_as(receiver, self.flex_kind(receiver).and(want))?;
        let ty = self.ty(recv);
        let named: Vec<&MethodDef> = METHODS
            .iter()
            .filter(|d| d.name == method && d.recv.accepts(&ty))
            .collect();
        if named.is_empty() {
            return Err(self.no_method(&ty, method, method_span));
        }
        let def = match named.iter().find(|d| fits(d.params, args)) {
            Some(d) => *d,
            // One form: binding reports what does not fit, against its signature.
            None if named.len() == 1 => named[0],
            None => return Err(self.no_overload(&named, args, span)),
        };
        let fname = format!(".{method}");
        let bound = self.bind_args(&fname, def.params, args, span)?;
        self.method_form(def, recv, &ty, &bound, method_span, span)
            .map(Some)
    }

    /// Dispatch a bound method call to its handler.
    fn method_form(
        &mut self,
        def: &MethodDef,
        recv: Operand,
        ty: &Ty,
        bound: &Bound<'_>,
        method_span: Span,
        span: Span,
    ) -> LResult<Operand> {
        let d = ty.dtype();
        match def.form {
            Form::Len | Form::Dim => self.tensor_dim(recv, ty, def.form, bound, span),
            Form::View => self.view(recv, bound, span),
            Form::Reshape => self.reshape_method(recv, ty, bound, span),
            Form::BroadcastTo => {
                let new = self.shape_arg(bound.req("shape"))?;
                self.broadcast_to(recv, &new, span)
            }
            Form::ReduceAll => self.reduce_method(recv, ty, def.name, method_span, span),
            Form::MinMax => {
                let other = self.req_arg(bound, "other", Some(d))?;
                self.minmax(def.name == "min", recv, other, span)
            }
            Form::Abs => self.abs(recv, span),
            Form::Exp => self.math_fn(super::mathfns::MathFn::Exp, recv, span),
            Form::Ln => self.math_fn(super::mathfns::MathFn::Ln, recv, span),
            Form::ToBits => {
                let bits = if d.is_float() { d.bits_type() } else { d };
                self.bitcast_checked(recv, d, bits, "to_bits", span)
            }
            Form::MulAdd => {
                let b = self.req_arg(bound, "b", Some(d))?;
                let c = self.req_arg(bound, "c", Some(d))?;
                self.fma(recv, b, c, span)
            }
            Form::FloatFn => self.float_fn(def.name, recv, span),
            _ => {
                let Ty::Tile { shape, .. } = ty else {
                    unreachable!("`Recv::Tile` accepts tiles only")
                };
                self.collective_method(def, recv, d, shape, bound, span)
            }
        }
    }

    /// `.len()` and `.dim(axis)` of a global tensor: a runtime `i64` extent.
    fn tensor_dim(
        &mut self,
        recv: Operand,
        ty: &Ty,
        form: Form,
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        let Ty::Global { rank, .. } = ty else {
            unreachable!("`Recv::Tensor` accepts global tensors only")
        };
        let axis = match form {
            Form::Len => 0,
            _ => {
                let e = bound.req("axis");
                let axis = self.const_usize(e, "an axis")?;
                if axis >= *rank {
                    return self.err(
                        e.span,
                        format!("axis {axis} is out of range for a rank-{rank} tensor"),
                    );
                }
                axis
            }
        };
        let v = recv.var().expect("tensor");
        Ok(self.emit(Inst::Dim { tensor: v, axis }, Ty::Scalar(DType::I64), span))
    }

    /// `.reshape(shape)` of a tile (the element count must not change).
    fn reshape_method(
        &mut self,
        recv: Operand,
        ty: &Ty,
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        let Ty::Tile { dtype, shape } = ty else {
            unreachable!("`Recv::Tile` accepts tiles only")
        };
        let se = bound.req("shape");
        let new = self.shape_arg(se)?;
        if crate::ir::numel(&new) != crate::ir::numel(shape) {
            return self.err(
                se.span,
                format!(
                    "cannot reshape {} ({} elements) to {}",
                    shape_str(shape),
                    crate::ir::numel(shape),
                    shape_str(&new)
                ),
            );
        }
        let v = recv.var().expect("tile");
        Ok(self.emit(
            Inst::Reshape {
                x: v,
                shape: new.clone(),
            },
            Ty::Tile {
                dtype: *dtype,
                shape: new,
            },
            span,
        ))
    }

    /// A whole-tile reduction to a scalar (`.sum()`, `.min()`, `.max()`, `.any()`, `.all()`,
    /// `.item()`), rejected where the element type does not support it.
    fn reduce_method(
        &mut self,
        recv: Operand,
        ty: &Ty,
        method: &str,
        method_span: Span,
        span: Span,
    ) -> LResult<Operand> {
        let Ty::Tile { dtype: d, shape } = ty else {
            unreachable!("`Recv::Tile` accepts tiles only")
        };
        let d = *d;
        let op = match method {
            "sum" if d.is_numeric() => ReduceOp::Sum,
            "min" if d.is_numeric() => ReduceOp::Min,
            "max" if d.is_numeric() => ReduceOp::Max,
            "any" if d == DType::Bool => ReduceOp::Or,
            "all" if d == DType::Bool => ReduceOp::And,
            "item" => {
                if crate::ir::numel(shape) != 1 {
                    return self.err(
                        method_span,
                        format!(
                            "`.item()` needs a tile of exactly one element, found shape {}",
                            shape_str(shape)
                        ),
                    );
                }
                if d == DType::Bool {
                    ReduceOp::Or
                } else {
                    ReduceOp::Sum
                }
            }
            m => {
                let mut diag = Diagnostic::new(
                    method_span,
                    format!("`.{m}()` is not defined on `{d}` tiles"),
                );
                if d == DType::Bool && m == "sum" {
                    diag = diag.help("count the `true`s with `(x as i32).sum()`");
                } else if m == "any" || m == "all" {
                    diag = diag.help("compare first: `(x != 0).any()`");
                }
                return Err(self.error(diag));
            }
        };
        let v = recv.var().expect("tile");
        Ok(self.emit(Inst::Reduce { op, x: v }, Ty::Scalar(d), span))
    }

    /// The error for a call that fits none of a method's forms: at the first keyword no form
    /// has, else at the call, listing the forms.
    fn no_overload(&mut self, forms: &[&MethodDef], args: &[Arg], span: Span) -> Reported {
        let name = forms[0].name;
        let shown: Vec<String> = forms.iter().map(|d| d.shown()).collect();
        let note = format!("`.{name}` is {}", shown.join(" or "));
        let unknown = args.iter().filter_map(|a| a.name.as_ref()).find(|(n, _)| {
            !forms.iter().any(|d| {
                d.params
                    .iter()
                    .any(|p| p.name == n || p.aliases.contains(&n.as_str()))
            })
        });
        let d = match unknown {
            Some((n, at)) => Diagnostic::new(*at, format!("`.{name}` has no argument named `{n}`")),
            None => Diagnostic::new(span, format!("no form of `.{name}` takes these arguments")),
        };
        self.error(d.note(note))
    }

    /// The error for a method `ty` does not have: a close name as help, else the list as a note.
    fn no_method(&mut self, ty: &Ty, method: &str, method_span: Span) -> Reported {
        let d = Diagnostic::new(
            method_span,
            format!("no method `{method}` on {}", ty_name(ty)),
        );
        let names: Vec<&str> = methods_of(ty).iter().map(|d| d.name).collect();
        let d = match super::suggest::similar("a method", method, names) {
            Some(h) => d.help(h),
            None => d.note(method_list(ty)),
        };
        self.error(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_come_from_the_table() {
        let tile = Ty::Tile {
            dtype: DType::F32,
            shape: vec![4],
        };
        let list = method_list(&tile);
        for d in METHODS.iter().filter(|d| d.recv.accepts(&tile)) {
            assert!(
                list.contains(&format!("`.{}(", d.name)),
                "{} missing: {list}",
                d.name
            );
        }
        assert!(
            list.contains("`.exp()`") && list.contains("`.ln()`") && list.contains("`.to_bits()`")
        );
        assert!(!method_list(&Ty::Scalar(DType::I32)).contains("`.sum()`"));
    }
}
