//! Memory arguments and addressing: tensors, shapes of values, offsets, masks, scatter
//! coordinates and views, shared by the load/store and atomic builtins.

use super::args::Bound;
use super::{shape_str, ty_name, LResult, Lowerer};
use crate::ast::ExprKind;
use crate::ir::{Access, Coord, DType, Inst, Operand, Space, Span, Ty, VarId};

impl Lowerer {
    /// A shared tensor argument: (var, dtype, shape).
    pub(super) fn shared_arg(
        &mut self,
        o: Operand,
        span: Span,
    ) -> LResult<(VarId, DType, Vec<usize>)> {
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Shared { dtype, shape }) => Ok((v, dtype, shape)),
            (_, t) => self.err(
                span,
                format!(
                    "expected a shared tensor (from `shared_tensor`), found {}",
                    ty_name(&t)
                ),
            ),
        }
    }

    /// A global tensor argument: (var, dtype, rank).
    pub(super) fn global_arg(&mut self, o: Operand, span: Span) -> LResult<(VarId, DType, usize)> {
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Global { dtype, rank }) => Ok((v, dtype, rank)),
            (_, t) => self.err(span, format!("expected a global tensor (a `GlobalTensor` parameter or a view of one), found {}", ty_name(&t))),
        }
    }

    /// A memory argument of the given space; for global tensors the "shape" has `usize::MAX`
    /// for runtime dims.
    pub(super) fn mem_arg(
        &mut self,
        o: Operand,
        span: Span,
        space: Space,
    ) -> LResult<(VarId, DType, Vec<usize>)> {
        match space {
            Space::Shared => self.shared_arg(o, span),
            Space::Global => {
                let (v, d, rank) = self.global_arg(o, span)?;
                Ok((v, d, vec![usize::MAX; rank]))
            }
        }
    }

    /// Either kind of memory, for the cuTile-style indexed operations.
    pub(super) fn any_mem_arg(
        &mut self,
        o: Operand,
        span: Span,
    ) -> LResult<(VarId, DType, Space, usize)> {
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Global { dtype, rank }) => Ok((v, dtype, Space::Global, rank)),
            (Operand::Var(v), Ty::Shared { dtype, shape }) => {
                Ok((v, dtype, Space::Shared, shape.len()))
            }
            (_, t) => self.err(
                span,
                format!("expected a global or shared tensor, found {}", ty_name(&t)),
            ),
        }
    }

    /// A value that must be a tile of exactly `shape` (or a scalar, broadcast to it).
    pub(super) fn value_of_shape(
        &mut self,
        v: Operand,
        span: Span,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> LResult<Operand> {
        let t = self.ty(v);
        match &t {
            Ty::Scalar(d) if *d == dtype => Ok(v),
            Ty::Tile { dtype: d, shape: s } if *d == dtype && s == shape => Ok(v),
            Ty::Tile { dtype: d, shape: s } if *d == dtype => self.err(
                span,
                format!("shape mismatch: {what} has shape {} but the destination needs {}", shape_str(s), shape_str(shape)),
            ),
            _ => self.err(span, format!("mismatched types: {what} must be `{}` (a tile of shape {} or a scalar), found {}", dtype.name(), shape_str(shape), ty_name(&t))),
        }
    }

    /// `offsets = [o0, o1]` (scalars; a bare scalar for rank 1) → Pos coordinates.
    pub(super) fn offsets_arg(
        &mut self,
        items: &[(Operand, Span)],
        span: Span,
        rank: usize,
    ) -> LResult<Vec<Coord>> {
        if items.len() != rank {
            return self.err(
                span,
                format!(
                    "expected {rank} offset(s), one per tensor dimension, found {}",
                    items.len()
                ),
            );
        }
        let mut coords = Vec::new();
        for (axis, (o, sp)) in items.iter().enumerate() {
            let o = self.uniform_int(*o, *sp, "an offset")?;
            coords.push(Coord::Pos { axis, offset: o });
        }
        Ok(coords)
    }

    /// The offsets of a gather load of `shape`: a scalar shifts that axis's positions (as
    /// [`offsets_arg`](Self::offsets_arg)); an integer tile gives each element's coordinate
    /// along that axis: a rank-1 tile of the axis's length lies along the axis (`x[src, :]` is
    /// `offsets = [src, 0]`), any other tile is broadcast to `shape` (numpy's rule).
    pub(super) fn gather_offsets(
        &mut self,
        items: &[(Operand, Span)],
        span: Span,
        shape: &[usize],
    ) -> LResult<Vec<Coord>> {
        let rank = shape.len();
        if items.len() != rank {
            return self.err(
                span,
                format!(
                    "expected {rank} offset(s), one per tensor dimension, found {}",
                    items.len()
                ),
            );
        }
        let mut coords = Vec::new();
        for (axis, &(o, sp)) in items.iter().enumerate() {
            let Ty::Tile { dtype, shape: s } = self.ty(o) else {
                let o = self.uniform_int(o, sp, "an offset")?;
                coords.push(Coord::Pos { axis, offset: o });
                continue;
            };
            if !dtype.is_int() {
                return self.err(
                    sp,
                    format!("a gather index must be an integer tile, found a `{dtype}` tile: convert with `as i32`"),
                );
            }
            let along = if s.len() == 1 && rank > 1 && s[0] == shape[axis] {
                let mut r = vec![1; rank];
                r[axis] = s[0];
                let v = o.var().expect("tiles are variables");
                self.emit(
                    Inst::Reshape {
                        x: v,
                        shape: r.clone(),
                    },
                    Ty::Tile { dtype, shape: r },
                    sp,
                )
            } else {
                o
            };
            let index = self.broadcast_to(along, shape, sp)?;
            coords.push(Coord::Index(index));
        }
        Ok(coords)
    }

    /// The `mask` argument of `bound`, checked against the operation's shape.
    pub(super) fn mask_arg(
        &mut self,
        bound: &Bound<'_>,
        shape: &[usize],
    ) -> LResult<Option<Operand>> {
        let Some(m) = self.arg(bound, "mask", None)? else {
            return Ok(None);
        };
        let e = bound.req("mask");
        match self.ty(m) {
            Ty::Scalar(DType::Bool) => Ok(Some(m)),
            Ty::Tile {
                dtype: DType::Bool,
                shape: s,
            } if s == shape => Ok(Some(m)),
            Ty::Tile {
                dtype: DType::Bool,
                shape: s,
            } => self.err(
                e.span,
                format!(
                    "shape mismatch: the mask has shape {} but the operation has {}",
                    shape_str(&s),
                    shape_str(shape)
                ),
            ),
            t => self.err(
                e.span,
                format!("a mask must be `bool`, found {}", ty_name(&t)),
            ),
        }
    }

    /// The scatter addressing shared by scatter stores and scatter atomics.
    pub(super) fn scatter_access(
        &mut self,
        bound: &Bound<'_>,
        m: VarId,
        dst_shape: &[usize],
    ) -> LResult<(Access, Vec<usize>)> {
        let rank = dst_shape.len();
        let de = bound.req("dim");
        let dim = self.const_usize(de, "`dim`")?;
        if dim >= rank {
            return self.err(de.span, format!("`dim = {dim}` is out of range for a rank-{rank} destination (valid: 0..{rank})"));
        }
        let ie = bound.req("indices");
        let idx = self.req_arg(bound, "indices", None)?;
        let Ty::Tile { dtype, shape } = self.ty(idx) else {
            return self.err(
                ie.span,
                format!(
                    "`indices` must be an integer tile, found {}",
                    ty_name(&self.ty(idx))
                ),
            );
        };
        if !dtype.is_int() {
            return self.err(
                ie.span,
                format!(
                    "`indices` must be an integer tile, found a `{}` tile",
                    dtype.name()
                ),
            );
        }
        if shape.len() != rank {
            return self.err(
                ie.span,
                format!(
                    "`indices` has rank {} but the destination has rank {rank}",
                    shape.len()
                ),
            );
        }
        for k in 0..rank {
            if k != dim && dst_shape[k] != usize::MAX && dst_shape[k] != shape[k] {
                return self.err(
                    ie.span,
                    format!(
                        "shape mismatch on non-scatter axis {k}: `indices` has {} but the destination has {} (only axis `dim = {dim}` may differ)",
                        shape[k], dst_shape[k]
                    ),
                );
            }
        }
        let coords = (0..rank)
            .map(|k| {
                if k == dim {
                    Coord::Index(idx)
                } else {
                    Coord::Pos {
                        axis: k,
                        offset: Operand::i32(0),
                    }
                }
            })
            .collect();
        let mask = self.mask_arg(bound, &shape)?;
        Ok((
            Access {
                mem: m,
                shape: shape.clone(),
                coords,
                mask,
                check_bounds: true,
            },
            shape,
        ))
    }
}

pub(super) fn identity_coords(rank: usize) -> Vec<Coord> {
    (0..rank)
        .map(|axis| Coord::Pos {
            axis,
            offset: Operand::i32(0),
        })
        .collect()
}

pub(super) fn whole(m: VarId, shape: &[usize]) -> Access {
    Access {
        mem: m,
        shape: shape.to_vec(),
        coords: identity_coords(shape.len()),
        mask: None,
        check_bounds: false,
    }
}

impl Lowerer {
    /// `tensor.view(offset, [d0, d1, ...])`: a row-major window with runtime dims.
    pub(crate) fn view(
        &mut self,
        recv: Operand,
        bound: &Bound<'_>,
        span: Span,
    ) -> LResult<Operand> {
        let se = bound.req("shape");
        if !matches!(se.kind, ExprKind::Array(_)) {
            return self.err(
                se.span,
                "the shape of a view is a list of dimensions, e.g. `[rows, cols]`",
            );
        }
        let oe = bound.req("offset");
        // Any integer type is accepted: a literal is taken as an `i64` (so that offsets past
        // `i32::MAX` can be written), but an open `let mut` is not decided by it.
        let prefer = self.preference(oe, DType::I64);
        let offset = self.req_arg(bound, "offset", prefer)?;
        let offset = self.uniform_int(offset, oe.span, "a view offset")?;
        let offset = self.cast(offset, DType::I64, oe.span)?;
        let se = bound.req("shape");
        let items = bound.list("shape").expect("required");
        if items.is_empty() || items.len() > super::MAX_RANK {
            return self.err(
                se.span,
                format!("a view must have 1 to {} dimensions", super::MAX_RANK),
            );
        }
        let mut dims = Vec::new();
        for (d, sp) in items {
            let d = self.uniform_int(d, sp, "a view dimension")?;
            dims.push(self.cast(d, DType::I64, sp)?);
        }
        let src = recv.var().expect("tensor");
        let dtype = self.ty(recv).dtype();
        let rank = dims.len();
        let out = self.emit(
            Inst::View {
                src,
                offset,
                shape: dims,
            },
            Ty::Global { dtype, rank },
            span,
        );
        let base = self.base_of(src);
        let out_var = out.var().expect("var");
        self.view_base.insert(out_var, base);
        let constant = match offset {
            Operand::Imm(..) => self
                .const_offset(src)
                .zip(offset.imm_int())
                .map(|(s, o)| s + o as i64),
            Operand::Var(_) => None,
        };
        self.view_offset.insert(out_var, constant);
        Ok(out)
    }
}
