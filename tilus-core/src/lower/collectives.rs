//! The tile collectives as methods: reductions along an axis (`t.sum(1)`, `t.max(axis = 0)`,
//! `t.argmin(axis = 1, keepdims = true)`), scans (`t.cumsum(1)`, `t.scan(max, axis = 0)`),
//! sorts (`t.sort()`, `t.argsort(descending = true)`, `t.topk(8)`), `t.take(indices, axis)`,
//! `t.equal_rank()` and `t.histogram(bins)`. The semantics are in `crate::ir`, the orders of
//! combination in `crate::collective`.

use super::args::Bound;
use super::methods::{Form, MethodDef};
use super::{shape_str, LResult, Lowerer};
use crate::ast::{Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{numel, AxisReduce, DType, Inst, Operand, ReduceOp, ScanOp, Span, Ty};

impl Lowerer {
    /// Dispatch a collective method (`def.form` is one of the collective forms).
    pub(super) fn collective_method(
        &mut self,
        def: &MethodDef,
        recv: Operand,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        let x = recv.var().expect("a tile");
        let rank = shape.len();
        match def.form {
            Form::ReduceAlong => {
                let op = self.fold_of(def.name, dtype, span)?;
                let axis = self.axis_arg(bound.req("axis"), rank)?;
                let keepdims = self.flag_arg(bound, "keepdims")?;
                Ok(self.reduce_along(AxisReduce::Fold(op), x, dtype, shape, axis, keepdims, span))
            }
            Form::ArgReduce => self.arg_reduce(def.name, x, dtype, shape, bound, span),
            Form::Scan(op) => {
                let op = match op {
                    Some(op) => op,
                    None => self.scan_op_arg(bound.req("op"))?,
                };
                self.scan_types(op, dtype, def.name, span)?;
                let axis = self.axis_or_last(bound, rank)?;
                let exclusive = self.flag_arg(bound, "exclusive")?;
                let reverse = self.flag_arg(bound, "reverse")?;
                let inst = Inst::Scan {
                    op,
                    x,
                    axis,
                    exclusive,
                    reverse,
                };
                Ok(self.emit(inst, tile(dtype, shape), span))
            }
            Form::Sort { indices } => {
                self.sortable(def.name, dtype, span)?;
                let axis = self.axis_or_last(bound, rank)?;
                let descending = self.flag_arg(bound, "descending")?;
                Ok(if indices {
                    let inst = Inst::ArgSort {
                        x,
                        axis,
                        descending,
                    };
                    self.emit(inst, tile(DType::I32, shape), span)
                } else {
                    let inst = Inst::Sort {
                        x,
                        axis,
                        descending,
                    };
                    self.emit(inst, tile(dtype, shape), span)
                })
            }
            Form::TopK { indices } => self.topk(def.name, x, dtype, shape, bound, indices, span),
            Form::Take => self.take(x, dtype, shape, bound, span),
            Form::EqualRank => self.equal_rank(x, dtype, shape, bound, span),
            Form::Place => self.place(x, dtype, shape, bound, span),
            Form::Histogram => self.histogram(x, dtype, bound, span),
            _ => unreachable!("not a collective form"),
        }
    }

    /// `.argmin()` / `.argmax()` of the whole tile (the flat index, a scalar), or along an axis.
    fn arg_reduce(
        &mut self,
        name: &str,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        self.numeric(name, dtype, span)?;
        let op = if name == "argmax" {
            AxisReduce::ArgMax
        } else {
            AxisReduce::ArgMin
        };
        let keepdims = self.flag_arg(bound, "keepdims")?;
        if let Some(e) = bound.get("axis") {
            let axis = self.axis_arg(e, shape.len())?;
            return Ok(self.reduce_along(op, x, dtype, shape, axis, keepdims, span));
        }
        let n = numel(shape);
        let flat = self.emit(
            Inst::Reshape { x, shape: vec![n] },
            Ty::Tile {
                dtype,
                shape: vec![n],
            },
            span,
        );
        let flat = flat.var().expect("a tile");
        Ok(self.reduce_along(op, flat, dtype, &[n], 0, keepdims, span))
    }

    /// Keys that `.equal_rank()` and `.place()` compare for equality: integers or `bool`s.
    fn equality_keys(&mut self, call: &str, dtype: DType, span: Span) -> LResult<()> {
        if dtype.is_int() || dtype.is_bool() {
            return Ok(());
        }
        self.err(
            span,
            format!("`{call}` ranks integer or `bool` keys, not `{dtype}`: convert to integers first (`x.to_bits()` for floats)"),
        )
    }

    /// `.equal_rank()` of an integer or `bool` tile.
    fn equal_rank(
        &mut self,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        self.equality_keys(".equal_rank()", dtype, span)?;
        let order = self.order_arg(bound, shape.len())?;
        Ok(self.emit(Inst::EqualRank { x, order }, tile(DType::I32, shape), span))
    }

    /// The `order` keyword of `.equal_rank` and `.place`: a permutation of the tile's axes,
    /// outermost first (`None` for row-major, given or not).
    fn order_arg(&mut self, bound: &Bound<'_>, rank: usize) -> LResult<Option<Vec<usize>>> {
        let Some(e) = bound.get("order") else {
            return Ok(None);
        };
        let items = super::args::list_items(e);
        let mut order = Vec::with_capacity(items.len());
        for it in &items {
            order.push(self.axis_arg(it, rank)?);
        }
        let mut seen = vec![false; rank];
        for (&a, it) in order.iter().zip(&items) {
            if std::mem::replace(&mut seen[a], true) {
                return self.err(
                    it.span,
                    format!("axis {a} is in `order` twice: it lists each of the tile's {rank} axes once (outermost first)"),
                );
            }
        }
        if order.len() != rank {
            return self.err(
                e.span,
                format!("`order` lists each of the tile's {rank} axes once (outermost first), found {} axes", order.len()),
            );
        }
        let row_major = order.iter().enumerate().all(|(k, &a)| k == a);
        Ok((!row_major).then_some(order))
    }

    /// `.place(starts)` of an integer or `bool` tile (a `bool` tile as `u8`, so that the PTX
    /// lowering sees integers only).
    fn place(
        &mut self,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        self.equality_keys(".place(starts)", dtype, span)?;
        let se = bound.req("starts");
        let starts = self.req_arg(bound, "starts", None)?;
        let ty = self.ty(starts);
        let rank_1_i32 = matches!(&ty, Ty::Tile { dtype: DType::I32, shape } if shape.len() == 1);
        if !rank_1_i32 {
            let found = super::ty_name(&ty);
            return self.err(
                se.span,
                format!("the starts of `.place` are a rank-1 `i32` tile (one start a value), found {found}"),
            );
        }
        let starts = starts.var().expect("a tile");
        let x = if dtype.is_bool() {
            let as_u8 = Inst::Cast {
                x: Operand::Var(x),
                dtype: DType::U8,
            };
            let c = self.emit(as_u8, tile(DType::U8, shape), span);
            c.var().expect("a tile")
        } else {
            x
        };
        let order = self.order_arg(bound, shape.len())?;
        Ok(self.emit(
            Inst::Place { x, starts, order },
            tile(DType::I32, shape),
            span,
        ))
    }

    /// `.histogram(bins)` of an integer tile.
    fn histogram(
        &mut self,
        x: crate::ir::VarId,
        dtype: DType,
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        if !dtype.is_int() {
            return self.err(
                span,
                format!("`.histogram(bins)` counts integer values, not `{dtype}`"),
            );
        }
        let e = bound.req("bins");
        let bins = self.const_usize(e, "the number of bins")?;
        if bins == 0 || bins > super::MAX_TILE_ELEMENTS {
            return self.err(
                e.span,
                format!(
                    "`.histogram({bins})`: the number of bins must be 1..={}",
                    super::MAX_TILE_ELEMENTS
                ),
            );
        }
        let inst = Inst::Histogram { x, bins };
        Ok(self.emit(inst, tile(DType::I32, &[bins]), span))
    }

    /// A reduction of `x` along `axis`: the whole-tile `Reduce` when nothing is left (one
    /// order of combination for one result), a scalar for a rank-1 arg form.
    #[allow(clippy::too_many_arguments)]
    fn reduce_along(
        &mut self,
        op: AxisReduce,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        axis: usize,
        keepdims: bool,
        span: Span,
    ) -> Operand {
        let out_dtype = match op {
            AxisReduce::Fold(_) => dtype,
            AxisReduce::ArgMin | AxisReduce::ArgMax => DType::I32,
        };
        let mut out: Vec<usize> = shape.to_vec();
        if keepdims {
            out[axis] = 1;
        } else {
            out.remove(axis);
        }
        let scalar = out.is_empty();
        if let (AxisReduce::Fold(fold), 1) = (op, numel(&out)) {
            // One line: the whole-tile reduction (`t.sum(0)` of a rank-1 tile is `t.sum()`,
            // bit for bit).
            let s = self.emit(Inst::Reduce { op: fold, x }, Ty::Scalar(dtype), span);
            if scalar {
                return s;
            }
            let inst = Inst::Full {
                shape: out.clone(),
                value: s,
            };
            return self.emit(inst, tile(dtype, &out), span);
        }
        let ty = if scalar {
            Ty::Scalar(out_dtype)
        } else {
            tile(out_dtype, &out)
        };
        let inst = Inst::ReduceAxis {
            op,
            x,
            axis,
            keepdims,
        };
        self.emit(inst, ty, span)
    }

    /// The fold a reduction method names, checked against the element type.
    fn fold_of(&mut self, name: &str, d: DType, span: Span) -> LResult<ReduceOp> {
        let op = match name {
            "sum" => ReduceOp::Sum,
            "min" => ReduceOp::Min,
            "max" => ReduceOp::Max,
            "any" => ReduceOp::Or,
            _ => ReduceOp::And,
        };
        let ok = match op {
            ReduceOp::Or | ReduceOp::And => d == DType::Bool,
            _ => d.is_numeric(),
        };
        if !ok {
            let mut diag =
                Diagnostic::new(span, format!("`.{name}` is not defined on `{d}` tiles"));
            if d == DType::Bool && name == "sum" {
                diag = diag.help("count the `true`s with `(x as i32).sum(..)`");
            } else if matches!(name, "any" | "all") {
                diag = diag.help("compare first: `(x != 0).any(..)`");
            }
            return Err(self.error(diag));
        }
        Ok(op)
    }

    fn numeric(&mut self, name: &str, d: DType, span: Span) -> LResult<()> {
        if d.is_numeric() {
            Ok(())
        } else {
            self.err(span, format!("`.{name}` takes numbers, not `{d}` tiles"))
        }
    }

    fn sortable(&mut self, name: &str, d: DType, span: Span) -> LResult<()> {
        if d.is_numeric() {
            return Ok(());
        }
        Err(self.error(
            Diagnostic::new(span, format!("`.{name}` sorts numbers, not `{d}` tiles"))
                .help("sort `bool`s as integers: `(x as u8).sort()`"),
        ))
    }

    /// The element types an operator scans.
    fn scan_types(&mut self, op: ScanOp, d: DType, name: &str, span: Span) -> LResult<()> {
        let ok = match op {
            ScanOp::Add | ScanOp::Mul | ScanOp::Min | ScanOp::Max => d.is_numeric(),
            ScanOp::And | ScanOp::Or | ScanOp::Xor => d.is_int() || d.is_bool(),
        };
        if ok {
            return Ok(());
        }
        self.err(
            span,
            format!(
                "`.{name}` with `{}` is not defined on `{d}` tiles",
                op.name()
            ),
        )
    }

    /// A scan operator named by path or string: `add`, `mul`, `min`, `max`, `and`, `or`, `xor`.
    fn scan_op_arg(&mut self, e: &Expr) -> LResult<ScanOp> {
        let name = match &e.kind {
            ExprKind::Path(p) if p.len() == 1 => p[0].as_str(),
            ExprKind::Str(s) => s.as_str(),
            _ => "",
        };
        match ScanOp::ALL.iter().find(|o| o.name() == name) {
            Some(op) => Ok(*op),
            None => {
                let names: Vec<String> = ScanOp::ALL
                    .iter()
                    .map(|o| format!("`{}`", o.name()))
                    .collect();
                self.err(
                    e.span,
                    format!("a scan's operator is one of {}", names.join(", ")),
                )
            }
        }
    }

    /// A compile-time axis of a rank-`rank` tile: `0..rank`, or `-rank..0` from the end.
    pub(super) fn axis_arg(&mut self, e: &Expr, rank: usize) -> LResult<usize> {
        let r = rank as i128;
        match super::expr::const_int(e) {
            Some(a) if (0..r).contains(&a) => Ok(a as usize),
            Some(a) if (-r..0).contains(&a) => Ok((a + r) as usize),
            Some(a) => self.err(
                e.span,
                format!("axis {a} does not exist: the tile has rank {rank} (axes 0..{rank}, or -{rank}..-1 from the end)"),
            ),
            None => self.err(e.span, "an axis must be an integer literal"),
        }
    }

    /// The `axis` argument, or the last axis.
    fn axis_or_last(&mut self, bound: &Bound<'_>, rank: usize) -> LResult<usize> {
        match bound.get("axis") {
            Some(e) => self.axis_arg(e, rank),
            None => Ok(rank - 1),
        }
    }

    /// A `bool` literal keyword (`false` when not given).
    fn flag_arg(&mut self, bound: &Bound<'_>, name: &str) -> LResult<bool> {
        match bound.get(name) {
            None => Ok(false),
            Some(Expr {
                kind: ExprKind::Bool(b),
                ..
            }) => Ok(*b),
            Some(e) => self.err(e.span, format!("`{name}` must be `true` or `false`")),
        }
    }

    /// `.topk(k)` / `.argtopk(k)`: the `k` largest (or smallest, `largest = false`) along the
    /// axis, or their indices.
    #[allow(clippy::too_many_arguments)]
    fn topk(
        &mut self,
        name: &str,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        indices: bool,
        span: Span,
    ) -> LResult<Operand> {
        self.sortable(name, dtype, span)?;
        let axis = self.axis_or_last(bound, shape.len())?;
        let ke = bound.req("k");
        let k = self.const_usize(ke, "`k`")?;
        if k == 0 || k > shape[axis] {
            return self.err(
                ke.span,
                format!(
                    "`.{name}({k})` of a tile of shape {}: `k` must be 1..={} (the length along axis {axis})",
                    shape_str(shape),
                    shape[axis]
                ),
            );
        }
        let largest = match bound.get("largest") {
            None => true,
            Some(_) => self.flag_arg(bound, "largest")?,
        };
        let mut out = shape.to_vec();
        out[axis] = k;
        let d = if indices { DType::I32 } else { dtype };
        let inst = Inst::TopK {
            x,
            k,
            axis,
            largest,
            indices,
        };
        Ok(self.emit(inst, tile(d, &out), span))
    }

    /// `.take(indices, axis)`: a gather within the tile along `axis`.
    fn take(
        &mut self,
        x: crate::ir::VarId,
        dtype: DType,
        shape: &[usize],
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        let axis = self.axis_or_last(bound, shape.len())?;
        let ie = bound.req("indices");
        let idx = self.req_arg(bound, "indices", None)?;
        let Ty::Tile {
            dtype: id,
            shape: ishape,
        } = self.ty(idx)
        else {
            return self.err(ie.span, "`.take` takes a tile of indices");
        };
        if !id.is_int() {
            return self.err(
                ie.span,
                format!("the indices of `.take` must be integers, found `{id}`"),
            );
        }
        let same_but_axis = ishape.len() == shape.len()
            && ishape
                .iter()
                .zip(shape)
                .enumerate()
                .all(|(a, (i, s))| a == axis || i == s);
        if !same_but_axis {
            return self.err(
                ie.span,
                format!(
                    "the indices of `.take` along axis {axis} must have the tile's shape {} but along that axis; found {}",
                    shape_str(shape),
                    shape_str(&ishape)
                ),
            );
        }
        let indices = idx.var().expect("a tile");
        let inst = Inst::Take { x, indices, axis };
        Ok(self.emit(inst, tile(dtype, &ishape), span))
    }
}

fn tile(dtype: DType, shape: &[usize]) -> Ty {
    Ty::Tile {
        dtype,
        shape: shape.to_vec(),
    }
}
