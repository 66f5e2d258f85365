//! The whole-tile load and store builtins: `load_shared`/`store_shared`, `load_global`/
//! `store_global` and the scatter stores.

use super::args::Bound;
use super::memory::whole;
use super::{shape_str, ty_name, LResult, Lowerer};
use crate::diag::Diagnostic;
use crate::dtype::DType;
use crate::ir::{numel, Access, BinOp, Coord, Inst, Operand, Space, Span, Ty};

impl Lowerer {
    /// `load_shared(src)`: a load of a whole shared tensor into a tile; with `offsets` and
    /// `shape`, of a part of it, gathered where an offset is a tile (as `load_global`).
    pub(super) fn load_shared(&mut self, bound: &Bound<'_>, span: Span) -> LResult<Operand> {
        let src = self.req_arg(bound, "src", None)?;
        let (m, dtype, shape) = self.shared_arg(src, bound.req("src").span)?;
        if bound.get("offsets").is_some() || bound.get("shape").is_some() {
            return self.load_shared_part(bound, m, dtype, shape.len(), span);
        }
        for name in ["mask", "other"] {
            if let Some(e) = bound.get(name) {
                return self.err(
                    e.span,
                    format!(
                        "`{name}` applies to a part of the tensor: give `offsets` and `shape` too"
                    ),
                );
            }
        }
        if numel(&shape) > super::MAX_TILE_ELEMENTS {
            return self.err(
                span,
                format!("`load_shared` of all {} elements makes a tile larger than {}: load parts with `atomic_load(t, indices)`", numel(&shape), super::MAX_TILE_ELEMENTS),
            );
        }
        let access = whole(m, &shape);
        let other = Operand::Imm(0, dtype);
        Ok(self.emit(
            Inst::Load { access, other },
            Ty::Tile { dtype, shape },
            span,
        ))
    }

    /// `load_shared(src, offsets, shape, other, mask)`: a bounds-checked part of a shared
    /// tensor (a gather where an offset is a tile).
    fn load_shared_part(
        &mut self,
        bound: &Bound<'_>,
        m: crate::ir::VarId,
        dtype: crate::ir::DType,
        rank: usize,
        span: Span,
    ) -> LResult<Operand> {
        let (Some(oe), Some(se)) = (bound.get("offsets"), bound.get("shape")) else {
            return self.err(
                span,
                "a part of a shared tensor needs both `offsets` and `shape`",
            );
        };
        let shape = self.shape_arg(se)?;
        if shape.len() != rank {
            return self.err(
                se.span,
                format!(
                    "a tile of shape {} cannot be loaded from a rank-{rank} tensor: ranks differ",
                    shape_str(&shape)
                ),
            );
        }
        self.bounded_load(bound, m, dtype, shape, oe.span, span)
    }

    /// The load both `load_global` and a part of a shared tensor make: `offsets` (scalars or
    /// index tiles, a gather), `other` and `mask` from `bound`, bounds checked.
    fn bounded_load(
        &mut self,
        bound: &Bound<'_>,
        m: crate::ir::VarId,
        dtype: crate::ir::DType,
        shape: Vec<usize>,
        offsets_span: Span,
        span: Span,
    ) -> LResult<Operand> {
        let offsets = bound.list("offsets").expect("checked by the caller");
        let coords = self.gather_offsets(&offsets, offsets_span, &shape)?;
        let other = self.other_arg(bound, dtype)?;
        let mask = self.mask_arg(bound, &shape)?;
        let access = Access {
            mem: m,
            shape: shape.clone(),
            coords,
            mask,
            check_bounds: true,
        };
        Ok(self.emit(
            Inst::Load { access, other },
            Ty::Tile { dtype, shape },
            span,
        ))
    }

    /// The `other` argument (the value of inactive elements): a scalar of the tensor's type,
    /// 0 when not given.
    fn other_arg(&mut self, bound: &Bound<'_>, dtype: crate::ir::DType) -> LResult<Operand> {
        match bound.get("other") {
            Some(e) => {
                let o = self.req_arg(bound, "other", Some(dtype))?;
                let o = self.expect_dtype(o, dtype, e.span, "`other`")?;
                if !self.ty(o).is_scalar() {
                    return self.err(e.span, format!("`other` must be a scalar `{dtype}`"));
                }
                Ok(o)
            }
            None => Ok(Operand::Imm(0, dtype)),
        }
    }

    /// `store_shared(dst, value)`: a store of a tile (or a broadcast scalar) to a whole shared
    /// tensor.
    pub(super) fn store_shared(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let dst = self.req_arg(bound, "dst", None)?;
        let (m, dtype, shape) = self.shared_arg(dst, bound.req("dst").span)?;
        let v = self.req_arg(bound, "value", Some(dtype))?;
        let value = self.value_of_shape(
            v,
            bound.req("value").span,
            dtype,
            &shape,
            "the stored value",
        )?;
        self.emit_void(
            Inst::Store {
                access: whole(m, &shape),
                value,
            },
            span,
        );
        Ok(())
    }

    /// `load_global(src, offsets, shape)`: a bounds-checked, optionally masked load of a tile
    /// from a global tensor, `other` where masked or out of bounds.
    pub(super) fn load_global(&mut self, bound: &Bound<'_>, span: Span) -> LResult<Operand> {
        let src = self.req_arg(bound, "src", None)?;
        let (m, dtype, rank) = self.global_arg(src, bound.req("src").span)?;
        let shape = self.shape_arg(bound.req("shape"))?;
        if shape.len() != rank {
            return self.err(
                bound.req("shape").span,
                format!("a tile of shape {} cannot be loaded from a rank-{rank} tensor: ranks differ (use `.view(..)` to reshape the tensor)", shape_str(&shape)),
            );
        }
        self.bounded_load(bound, m, dtype, shape, bound.req("offsets").span, span)
    }

    /// `prefetch_global(src, offsets = [o], shape = [n])`: asks the GPU to bring elements `o ..
    /// o + n` of a 1-D global tensor into its L2 cache. Lowered to a [`Inst::Prefetch`] at one
    /// element a 128-byte line (`o`, `o + step`, .., and the last, `o + n - 1`, so that a region
    /// that starts inside a line still has its last line), bounds-checked like a load: a region
    /// partly or wholly outside the tensor prefetches what is inside, and never faults.
    pub(super) fn prefetch_global(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let src = self.req_arg(bound, "src", None)?;
        let (m, dtype, rank) = self.global_arg(src, bound.req("src").span)?;
        let shape = self.shape_arg(bound.req("shape"))?;
        if rank != 1 || shape.len() != 1 {
            return self.err(
                bound.req("shape").span,
                format!(
                    "`prefetch_global` takes a region of a 1-D tensor, found shape {} of a rank-{rank} tensor (a row of a larger one is a 1-D `.view(..)`)",
                    shape_str(&shape)
                ),
            );
        }
        let offsets = bound.list("offsets").expect("required");
        let coords = self.offsets_arg(&offsets, bound.req("offsets").span, 1)?;
        let &[Coord::Pos { offset, .. }] = coords.as_slice() else {
            return self.err(span, "internal: one offset, one coordinate");
        };
        let n = shape[0];
        if n == 0 {
            return Ok(());
        }
        let (step, points) = prefetch_points(n, dtype.size_bytes());
        // Index arithmetic in 64 bits: an offset near the end of `i32` plus the region stays
        // exact (and out of bounds, where it is skipped).
        let d = DType::I64;
        let wide = self.cast(offset, d, span)?;
        let at = self.emit(
            Inst::Arange {
                n: points,
                dtype: d,
            },
            Ty::Tile {
                dtype: d,
                shape: vec![points],
            },
            span,
        );
        let at = self.binop_ir(BinOp::Mul, at, Operand::Imm(step as u64, d), d, span)?;
        let at = self.binop_ir(BinOp::Min, at, Operand::Imm(n as u64 - 1, d), d, span)?;
        let at = self.binop_ir(BinOp::Add, at, wide, d, span)?;
        let access = Access {
            mem: m,
            shape: vec![points],
            coords: vec![Coord::Index(at)],
            mask: None,
            check_bounds: true,
        };
        self.emit_void(Inst::Prefetch { access }, span);
        Ok(())
    }

    /// `store_global(dst, offsets, value)`: a bounds-checked, optionally masked store of a tile
    /// of the tensor's element type and rank.
    pub(super) fn store_global(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let dst = self.req_arg(bound, "dst", None)?;
        let (m, dtype, rank) = self.global_arg(dst, bound.req("dst").span)?;
        let ve = bound.req("value");
        let v = self.req_arg(bound, "value", Some(dtype))?;
        let Ty::Tile { dtype: vd, shape } = self.ty(v) else {
            return self.err(
                ve.span,
                format!(
                    "`store_global` stores a tile, found {}",
                    ty_name(&self.ty(v))
                ),
            );
        };
        if vd != dtype {
            return Err(self.error(
                Diagnostic::new(
                    ve.span,
                    format!("mismatched types: storing `{vd}` into a tensor of `{dtype}`"),
                )
                .help(super::types::cast_help(vd, dtype)),
            ));
        }
        if shape.len() != rank {
            return self.err(
                ve.span,
                format!(
                    "a tile of shape {} cannot be stored to a rank-{rank} tensor",
                    shape_str(&shape)
                ),
            );
        }
        let offsets = bound.list("offsets").expect("required");
        let coords = self.offsets_arg(&offsets, bound.req("offsets").span, rank)?;
        let mask = self.mask_arg(bound, &shape)?;
        let access = Access {
            mem: m,
            shape,
            coords,
            mask,
            check_bounds: true,
        };
        self.emit_void(Inst::Store { access, value: v }, span);
        Ok(())
    }

    /// `store_{shared,global}_scatter(dst, dim, indices, values)`: a store of `values` where
    /// `indices` gives the coordinates along axis `dim` of a shared or global tensor.
    pub(super) fn store_scatter(
        &mut self,
        bound: &Bound<'_>,
        space: Space,
        span: Span,
    ) -> LResult<()> {
        let dst = self.req_arg(bound, "dst", None)?;
        let (m, dtype, dst_shape) = self.mem_arg(dst, bound.req("dst").span, space)?;
        let (access, shape) = self.scatter_access(bound, m, &dst_shape)?;
        let v = self.req_arg(bound, "values", Some(dtype))?;
        let value = self.value_of_shape(v, bound.req("values").span, dtype, &shape, "`values`")?;
        self.emit_void(Inst::Store { access, value }, span);
        Ok(())
    }
}

/// Bytes a prefetch brings in (one L2 line).
const LINE: usize = 128;

/// The elements a prefetch of `n` elements of `size` bytes names: `points` of them, `step`
/// apart and the last clipped to `n - 1`, so that every line the region touches holds one
/// wherever the region starts.
fn prefetch_points(n: usize, size: usize) -> (usize, usize) {
    let step = (LINE / size).max(1);
    (step, n.div_ceil(step) + 1)
}

#[cfg(test)]
mod tests {
    use super::{prefetch_points, LINE};
    use tilus_testkit::Rng;

    /// Every line a region touches, at any start and element size, holds a named element.
    #[test]
    fn prefetch_points_cover_every_line() {
        let mut rng = Rng::from_env_or_clock();
        for _ in 0..5000 {
            let size = [1usize, 2, 4, 8, 16][rng.below(5) as usize];
            let n = rng.range(1, 5000) as usize;
            let start = rng.below(1 << 20) as usize * size;
            let (step, points) = prefetch_points(n, size);
            let mut named: Vec<usize> = (0..points)
                .map(|k| (start + (k * step).min(n - 1) * size) / LINE)
                .collect();
            named.sort_unstable();
            named.dedup();
            let lines: Vec<usize> = (start / LINE..=(start + n * size - 1) / LINE).collect();
            assert_eq!(named, lines, "n {n}, size {size}, start {start}");
        }
    }
}
