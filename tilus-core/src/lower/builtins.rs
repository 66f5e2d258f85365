//! The builtin functions of the kernel language: one table of names and signatures, and one
//! handler per family.

use super::args::{opt, opt_alias, req, req_alias, Bound, P};
use super::{shape_str, ty_name, LResult, Lowerer};
use crate::ast::{Arg, Expr, ExprKind, GenericArg};
use crate::diag::Diagnostic;
use crate::ir::{
    numel, Access, Coord, DType, InactiveResult, Inst, Operand, RmwOp, Scope, Sem, Space, Span, Ty,
    VarId,
};
use crate::table::{self, RmwForm};

const SEM: P = opt_alias("sem", &["order", "memory_order"]);
const SCOPE: P = opt_alias("scope", &["memory_scope"]);

/// Which builtin a call path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    BlockIdx,
    GridDim,
    Arange,
    Zeros,
    Ones,
    Full,
    Select,
    Min,
    Max,
    LoadGlobal,
    StoreGlobal,
    SharedTensor,
    LoadShared,
    StoreShared,
    Sync,
    Fence,
    StoreScatter(Space),
    /// tilus `atomic::{space}_{op}` (element-wise).
    Elementwise(Space, RmwOp),
    /// tilus `atomic::{space}_scatter_{op}`.
    Scatter(Space, RmwOp),
    /// cuTile `atomic_{op}(array, indices, ...)`.
    Indexed(RmwOp),
    AtomicLoad,
    AtomicStore,
}

/// Names of the free functions, for "did you mean" lists.
const FREE_NAMES: &[(&str, Builtin)] = &[
    ("block_idx", Builtin::BlockIdx),
    ("grid_dim", Builtin::GridDim),
    ("arange", Builtin::Arange),
    ("zeros", Builtin::Zeros),
    ("ones", Builtin::Ones),
    ("full", Builtin::Full),
    ("select", Builtin::Select),
    ("min", Builtin::Min),
    ("max", Builtin::Max),
    ("load_global", Builtin::LoadGlobal),
    ("store_global", Builtin::StoreGlobal),
    ("shared_tensor", Builtin::SharedTensor),
    ("load_shared", Builtin::LoadShared),
    ("store_shared", Builtin::StoreShared),
    ("sync", Builtin::Sync),
    ("fence", Builtin::Fence),
    ("store_shared_scatter", Builtin::StoreScatter(Space::Shared)),
    ("store_global_scatter", Builtin::StoreScatter(Space::Global)),
    ("atomic_load", Builtin::AtomicLoad),
    ("atomic_store", Builtin::AtomicStore),
    ("atomic_add", Builtin::Indexed(RmwOp::Add)),
    ("atomic_sub", Builtin::Indexed(RmwOp::Sub)),
    ("atomic_min", Builtin::Indexed(RmwOp::Min)),
    ("atomic_max", Builtin::Indexed(RmwOp::Max)),
    ("atomic_xchg", Builtin::Indexed(RmwOp::Exch)),
    ("atomic_cas", Builtin::Indexed(RmwOp::Cas)),
    ("atomic_and", Builtin::Indexed(RmwOp::And)),
    ("atomic_or", Builtin::Indexed(RmwOp::Or)),
    ("atomic_xor", Builtin::Indexed(RmwOp::Xor)),
];

/// The op names of the tilus `atomic::` group.
const TILUS_OPS: &[(&str, RmwOp)] = &[
    ("add", RmwOp::Add),
    ("sub", RmwOp::Sub),
    ("min", RmwOp::Min),
    ("max", RmwOp::Max),
    ("exch", RmwOp::Exch),
    ("cas", RmwOp::Cas),
];

fn resolve(path: &[String]) -> Option<Builtin> {
    let segs: Vec<&str> = path.iter().map(String::as_str).collect();
    // Accept an optional leading `tilus::` / `tilus::prelude::`.
    let segs: &[&str] = match segs.as_slice() {
        ["tilus", "prelude", rest @ ..] | ["tilus", rest @ ..] => rest,
        s => s,
    };
    match segs {
        [name] => FREE_NAMES.iter().find(|(n, _)| n == name).map(|(_, b)| *b),
        ["atomic", name] => {
            let (space, rest) = if let Some(r) = name.strip_prefix("shared_") {
                (Space::Shared, r)
            } else if let Some(r) = name.strip_prefix("global_") {
                (Space::Global, r)
            } else {
                return None;
            };
            if let Some(op) = rest.strip_prefix("scatter_") {
                TILUS_OPS
                    .iter()
                    .find(|(n, _)| *n == op)
                    .map(|(_, o)| Builtin::Scatter(space, *o))
            } else {
                TILUS_OPS
                    .iter()
                    .find(|(n, _)| *n == rest)
                    .map(|(_, o)| Builtin::Elementwise(space, *o))
            }
        }
        _ => None,
    }
}

fn signature(b: Builtin) -> &'static [P] {
    match b {
        Builtin::BlockIdx | Builtin::GridDim | Builtin::Sync => const { &[] },
        Builtin::Arange => const { &[req("n")] },
        Builtin::Zeros | Builtin::Ones => const { &[req("shape")] },
        Builtin::Full => const { &[req("shape"), req("value")] },
        Builtin::Select => const { &[req("cond"), req("a"), req("b")] },
        Builtin::Min | Builtin::Max => const { &[req("a"), req("b")] },
        Builtin::LoadGlobal => {
            const {
                &[
                    req("src"),
                    req("offsets"),
                    req("shape"),
                    opt("other"),
                    opt("mask"),
                ]
            }
        }
        Builtin::StoreGlobal => const { &[req("dst"), req("value"), req("offsets"), opt("mask")] },
        Builtin::SharedTensor => const { &[req("dtype"), req("shape")] },
        Builtin::LoadShared => const { &[req("src")] },
        Builtin::StoreShared => const { &[req("dst"), req("value")] },
        Builtin::Fence => {
            const {
                &[
                    req_alias("sem", &["order", "memory_order"]),
                    req_alias("scope", &["memory_scope"]),
                ]
            }
        }
        Builtin::StoreScatter(_) => {
            const {
                &[
                    req("dst"),
                    req("dim"),
                    req("indices"),
                    req("values"),
                    opt("mask"),
                ]
            }
        }
        Builtin::Elementwise(Space::Shared, RmwOp::Cas) => {
            const {
                &[
                    req("dst"),
                    req("compare"),
                    req("values"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Elementwise(Space::Global, RmwOp::Cas) => {
            const {
                &[
                    req("dst"),
                    req("compare"),
                    req("values"),
                    opt("offsets"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Elementwise(Space::Shared, _) => {
            const { &[req("dst"), req("values"), opt("mask"), SEM, SCOPE] }
        }
        Builtin::Elementwise(Space::Global, _) => {
            const {
                &[
                    req("dst"),
                    req("values"),
                    opt("offsets"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Scatter(..) => {
            const {
                &[
                    req("dst"),
                    req("dim"),
                    req("indices"),
                    req("values"),
                    opt("mask"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Indexed(RmwOp::Cas) => {
            const {
                &[
                    req("array"),
                    req_alias("indices", &["index"]),
                    req("expected"),
                    req("desired"),
                    opt("check_bounds"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::Indexed(_) => {
            const {
                &[
                    req("array"),
                    req_alias("indices", &["index"]),
                    req_alias("update", &["value", "values"]),
                    opt("check_bounds"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::AtomicLoad => {
            const {
                &[
                    req("array"),
                    req_alias("indices", &["index"]),
                    opt("check_bounds"),
                    SEM,
                    SCOPE,
                ]
            }
        }
        Builtin::AtomicStore => {
            const {
                &[
                    req("array"),
                    req_alias("indices", &["index"]),
                    req_alias("value", &["values", "update"]),
                    opt("check_bounds"),
                    SEM,
                    SCOPE,
                ]
            }
        }
    }
}

fn display_name(path: &[String]) -> String {
    path.join("::")
}

impl Lowerer {
    pub(crate) fn call(
        &mut self,
        path: &[String],
        path_span: Span,
        generics: &[GenericArg],
        args: &[Arg],
        span: Span,
    ) -> LResult<Option<Operand>> {
        let name = display_name(path);
        let Some(b) = resolve(path) else {
            let d = Diagnostic::new(path_span, format!("cannot find function `{name}` in tile kernels")).note(
                "kernel bodies may call: block_idx, grid_dim, arange, zeros, ones, full, select, min, max, load_global, \
                 store_global, shared_tensor, load_shared, store_shared, sync, fence, store_shared_scatter, \
                 store_global_scatter, atomic::{shared,global}_{add,sub,min,max,exch,cas}, \
                 atomic::{shared,global}_scatter_{add,sub,min,max}, atomic_{load,store,add,sub,min,max,xchg,cas,and,or,xor}",
            );
            return Err(self.error(d));
        };
        // Generic arguments: only `shared_tensor::<i32>(shape)` takes one.
        let mut generic_dtype = None;
        if !generics.is_empty() {
            match (b, generics) {
                (Builtin::SharedTensor, [GenericArg::Type(t, s)]) => {
                    generic_dtype = Some((t.clone(), *s))
                }
                _ => return self.err(path_span, format!("`{name}` takes no generic arguments")),
            }
        }
        let sig: &'static [P] = if b == Builtin::SharedTensor && generic_dtype.is_some() {
            const { &[req("shape")] }
        } else {
            signature(b)
        };
        if let Builtin::Elementwise(_, op) | Builtin::Scatter(_, op) | Builtin::Indexed(op) = b {
            if op != RmwOp::Cas {
                if let Some((_, at)) = args
                    .iter()
                    .filter_map(|a| a.name.as_ref())
                    .find(|(n, _)| n == "compare")
                {
                    return self.err(
                        *at,
                        format!("`{name}` takes no `compare`: only compare-and-swap does (`atomic::shared_cas`, `atomic::global_cas`, `atomic_cas`)"),
                    );
                }
            }
        }
        let bound = self.bind_args(&name, sig, args, span)?;
        match b {
            Builtin::BlockIdx => Ok(Some(self.emit(
                Inst::BlockIdx,
                Ty::Scalar(DType::I32),
                span,
            ))),
            Builtin::GridDim => Ok(Some(self.emit(Inst::GridDim, Ty::Scalar(DType::I32), span))),
            Builtin::Sync => {
                self.emit_void(Inst::Sync, span);
                Ok(None)
            }
            Builtin::Arange => {
                let n = self.const_usize(bound.req("n"), "the length of `arange`")?;
                if n == 0 || n > super::MAX_TILE_ELEMENTS {
                    return self.err(
                        bound.req("n").span,
                        format!(
                            "`arange({n})`: the length must be 1..={}",
                            super::MAX_TILE_ELEMENTS
                        ),
                    );
                }
                Ok(Some(self.emit(
                    Inst::Arange { n },
                    Ty::Tile {
                        dtype: DType::I32,
                        shape: vec![n],
                    },
                    span,
                )))
            }
            Builtin::Zeros | Builtin::Ones | Builtin::Full => {
                let shape = self.shape_arg(bound.req("shape"))?;
                let value = match b {
                    Builtin::Zeros => Operand::Imm(0, DType::I32),
                    Builtin::Ones => Operand::Imm(1, DType::I32),
                    _ => {
                        let v = self.expr(bound.req("value"))?;
                        if !self.ty(v).is_scalar() {
                            return self.err(
                                bound.req("value").span,
                                "the fill value of `full` must be a scalar",
                            );
                        }
                        v
                    }
                };
                let dtype = self.ty(value).dtype();
                Ok(Some(self.emit(
                    Inst::Full {
                        shape: shape.clone(),
                        value,
                    },
                    Ty::Tile { dtype, shape },
                    span,
                )))
            }
            Builtin::Select => {
                let c = self.expr(bound.req("cond"))?;
                let a = self.expr(bound.req("a"))?;
                let bb = self.expr(bound.req("b"))?;
                Ok(Some(self.select(c, a, bb, span)?))
            }
            Builtin::Min | Builtin::Max => {
                let a = self.expr(bound.req("a"))?;
                let bb = self.expr(bound.req("b"))?;
                for (o, e) in [(a, bound.req("a")), (bb, bound.req("b"))] {
                    let t = self.ty(o);
                    if t.dtype() != DType::I32 || matches!(t, Ty::Global { .. } | Ty::Shared { .. })
                    {
                        return self.err(
                            e.span,
                            format!(
                                "`{name}` takes `i32` scalars or tiles, found {}",
                                ty_name(&t)
                            ),
                        );
                    }
                }
                let op = if b == Builtin::Min {
                    crate::ir::BinOp::Min
                } else {
                    crate::ir::BinOp::Max
                };
                Ok(Some(self.binop_ir(op, a, bb, DType::I32, span)?))
            }
            Builtin::SharedTensor => {
                let (dtype, dspan) = match generic_dtype {
                    Some((t, s)) => (t, s),
                    None => {
                        let e = bound.req("dtype");
                        match &e.kind {
                            ExprKind::Path(p) if p.len() == 1 => (p[0].clone(), e.span),
                            _ => return self.err(e.span, "expected an element type such as `i32`"),
                        }
                    }
                };
                let Some(d) =
                    super::dtype_by_name(&dtype).filter(|d| table::access_type(*d).is_some())
                else {
                    return self.err(
                        dspan,
                        format!("shared tensors of `{dtype}` are not supported: use `i32`"),
                    );
                };
                let shape = self.shape_arg(bound.req("shape"))?;
                let bytes = numel(&shape) * d.size_bytes();
                let offset = self.shared_bytes.next_multiple_of(16);
                if offset + bytes > super::MAX_SHARED_BYTES {
                    return self.err(
                        span,
                        format!(
                            "shared memory overflow: this allocation brings the kernel to {} bytes, over the {}-byte limit of a block",
                            offset + bytes,
                            super::MAX_SHARED_BYTES
                        ),
                    );
                }
                self.shared_bytes = offset + bytes;
                Ok(Some(self.emit(
                    Inst::AllocShared {
                        dtype: d,
                        shape: shape.clone(),
                        offset,
                    },
                    Ty::Shared { dtype: d, shape },
                    span,
                )))
            }
            Builtin::LoadShared => {
                let (m, dtype, shape) = self.shared_arg(bound.req("src"))?;
                let access = whole(m, &shape);
                let other = Operand::Imm(0, dtype);
                Ok(Some(self.emit(
                    Inst::Load { access, other },
                    Ty::Tile { dtype, shape },
                    span,
                )))
            }
            Builtin::StoreShared => {
                let (m, dtype, shape) = self.shared_arg(bound.req("dst"))?;
                let value =
                    self.value_of_shape(bound.req("value"), dtype, &shape, "the stored value")?;
                self.emit_void(
                    Inst::Store {
                        access: whole(m, &shape),
                        value,
                    },
                    span,
                );
                Ok(None)
            }
            Builtin::LoadGlobal => {
                let (m, dtype, rank) = self.global_arg(bound.req("src"))?;
                let shape = self.shape_arg(bound.req("shape"))?;
                if shape.len() != rank {
                    return self.err(
                        bound.req("shape").span,
                        format!("a tile of shape {} cannot be loaded from a rank-{rank} tensor: ranks differ (use `.view(..)` to reshape the tensor)", shape_str(&shape)),
                    );
                }
                let coords = self.offsets_arg(bound.req("offsets"), rank)?;
                let other = match bound.get("other") {
                    Some(e) => {
                        let o = self.expr(e)?;
                        if self.ty(o) != Ty::Scalar(dtype) {
                            return self.err(
                                e.span,
                                format!("`other` must be a scalar `{}`", dtype.name()),
                            );
                        }
                        o
                    }
                    None => Operand::Imm(0, dtype),
                };
                let mask = self.mask_arg(bound.get("mask"), &shape)?;
                let access = Access {
                    mem: m,
                    shape: shape.clone(),
                    coords,
                    mask,
                    check_bounds: true,
                };
                Ok(Some(self.emit(
                    Inst::Load { access, other },
                    Ty::Tile { dtype, shape },
                    span,
                )))
            }
            Builtin::StoreGlobal => {
                let (m, dtype, rank) = self.global_arg(bound.req("dst"))?;
                let ve = bound.req("value");
                let v = self.expr(ve)?;
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
                    return self.err(
                        ve.span,
                        format!(
                            "mismatched types: storing `{}` into a tensor of `{}`",
                            vd.name(),
                            dtype.name()
                        ),
                    );
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
                let coords = self.offsets_arg(bound.req("offsets"), rank)?;
                let mask = self.mask_arg(bound.get("mask"), &shape)?;
                let access = Access {
                    mem: m,
                    shape,
                    coords,
                    mask,
                    check_bounds: true,
                };
                self.emit_void(Inst::Store { access, value: v }, span);
                Ok(None)
            }
            Builtin::Fence => {
                let sem = self.sem_arg(Some(bound.req("sem")), Sem::AcqRel)?;
                let scope = self.scope_arg(Some(bound.req("scope")), Scope::Gpu)?;
                if let Err(e) = table::check_fence(sem, scope, self.explicit_target) {
                    let at = self.qualifier_span(&bound, scope, span);
                    return Err(self.illegal(at, e));
                }
                self.require_target(table::scope_min_target(scope));
                self.emit_void(Inst::Fence { sem, scope }, span);
                Ok(None)
            }
            Builtin::StoreScatter(space) => {
                let (m, dtype, dst_shape) = self.mem_arg(bound.req("dst"), space)?;
                let (access, shape) = self.scatter_access(&bound, m, &dst_shape)?;
                let value = self.value_of_shape(bound.req("values"), dtype, &shape, "`values`")?;
                self.emit_void(Inst::Store { access, value }, span);
                Ok(None)
            }
            Builtin::Elementwise(space, op) => {
                self.elementwise_rmw(&bound, space, op, span).map(Some)
            }
            Builtin::Scatter(space, op) => self.scatter_rmw(&bound, space, op, span).map(Some),
            Builtin::Indexed(op) => self.indexed_rmw(&bound, op, span).map(Some),
            Builtin::AtomicLoad => self.indexed_load(&bound, span).map(Some),
            Builtin::AtomicStore => {
                self.indexed_store(&bound, span)?;
                Ok(None)
            }
        }
    }

    /// Where a rejected order/scope combination is reported: at `scope = ..` when the scope is
    /// the problem (cluster below sm_90), else at the order argument, else at the call.
    fn qualifier_span(&self, bound: &Bound<'_>, scope: Scope, call: Span) -> Span {
        let scope_bad = self
            .explicit_target
            .is_some_and(|t| t < table::scope_min_target(scope));
        let pick = if scope_bad {
            bound.get("scope")
        } else {
            bound.get("sem")
        };
        pick.map(|e| e.span).unwrap_or(call)
    }

    fn illegal(&mut self, span: Span, e: table::Illegal) -> super::Reported {
        let mut d = Diagnostic::new(span, e.message);
        if let Some(h) = e.help {
            d = d.help(h);
        }
        self.error(d)
    }

    /// A shared tensor argument: (var, dtype, shape).
    fn shared_arg(&mut self, e: &Expr) -> LResult<(VarId, DType, Vec<usize>)> {
        let o = self.expr(e)?;
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Shared { dtype, shape }) => Ok((v, dtype, shape)),
            (_, t) => self.err(
                e.span,
                format!(
                    "expected a shared tensor (from `shared_tensor`), found {}",
                    ty_name(&t)
                ),
            ),
        }
    }

    /// A global tensor argument: (var, dtype, rank).
    fn global_arg(&mut self, e: &Expr) -> LResult<(VarId, DType, usize)> {
        let o = self.expr(e)?;
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Global { dtype, rank }) => Ok((v, dtype, rank)),
            (_, t) => self.err(e.span, format!("expected a global tensor (a `GlobalTensor` parameter or a view of one), found {}", ty_name(&t))),
        }
    }

    /// A memory argument of the given space; for global tensors the "shape" has `usize::MAX`
    /// for runtime dims.
    fn mem_arg(&mut self, e: &Expr, space: Space) -> LResult<(VarId, DType, Vec<usize>)> {
        match space {
            Space::Shared => self.shared_arg(e),
            Space::Global => {
                let (v, d, rank) = self.global_arg(e)?;
                Ok((v, d, vec![usize::MAX; rank]))
            }
        }
    }

    /// Either kind of memory, for the cuTile-style indexed operations.
    fn any_mem_arg(&mut self, e: &Expr) -> LResult<(VarId, DType, Space, usize)> {
        let o = self.expr(e)?;
        match (o, self.ty(o)) {
            (Operand::Var(v), Ty::Global { dtype, rank }) => Ok((v, dtype, Space::Global, rank)),
            (Operand::Var(v), Ty::Shared { dtype, shape }) => {
                Ok((v, dtype, Space::Shared, shape.len()))
            }
            (_, t) => self.err(
                e.span,
                format!("expected a global or shared tensor, found {}", ty_name(&t)),
            ),
        }
    }

    /// A value that must be a tile of exactly `shape` (or a scalar, broadcast to it).
    fn value_of_shape(
        &mut self,
        e: &Expr,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> LResult<Operand> {
        let v = self.expr(e)?;
        let t = self.ty(v);
        match &t {
            Ty::Scalar(d) if *d == dtype => Ok(v),
            Ty::Tile { dtype: d, shape: s } if *d == dtype && s == shape => Ok(v),
            Ty::Tile { dtype: d, shape: s } if *d == dtype => self.err(
                e.span,
                format!("shape mismatch: {what} has shape {} but the destination needs {}", shape_str(s), shape_str(shape)),
            ),
            _ => self.err(e.span, format!("mismatched types: {what} must be `{}` (a tile of shape {} or a scalar), found {}", dtype.name(), shape_str(shape), ty_name(&t))),
        }
    }

    /// `offsets = [o0, o1]` (scalars; a bare scalar for rank 1) → Pos coordinates.
    fn offsets_arg(&mut self, e: &Expr, rank: usize) -> LResult<Vec<Coord>> {
        let items: Vec<&Expr> = match &e.kind {
            ExprKind::Array(items) => items.iter().collect(),
            _ => vec![e],
        };
        if items.len() != rank {
            return self.err(
                e.span,
                format!(
                    "expected {rank} offset(s), one per tensor dimension, found {}",
                    items.len()
                ),
            );
        }
        let mut coords = Vec::new();
        for (axis, it) in items.into_iter().enumerate() {
            let o = self.expr(it)?;
            let o = self.uniform_i32(o, it.span, "an offset")?;
            coords.push(Coord::Pos { axis, offset: o });
        }
        Ok(coords)
    }

    fn mask_arg(&mut self, e: Option<&Expr>, shape: &[usize]) -> LResult<Option<Operand>> {
        let Some(e) = e else { return Ok(None) };
        let m = self.expr(e)?;
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
    fn scatter_access(
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
        let idx = self.expr(ie)?;
        let Ty::Tile { dtype, shape } = self.ty(idx) else {
            return self.err(
                ie.span,
                format!(
                    "`indices` must be an integer tile, found {}",
                    ty_name(&self.ty(idx))
                ),
            );
        };
        if dtype != DType::I32 {
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
                        offset: Operand::Imm(0, DType::I32),
                    }
                }
            })
            .collect();
        let mask = self.mask_arg(bound.get("mask"), &shape)?;
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

    fn sem_arg(&mut self, e: Option<&Expr>, default: Sem) -> LResult<Sem> {
        let Some(e) = e else { return Ok(default) };
        let name = name_of(e);
        match name.as_deref().and_then(table::sem_by_name) {
            Some(s) => Ok(s),
            None => Err(self.error(
                Diagnostic::new(e.span, format!("unknown memory order `{}`", name.unwrap_or_else(|| "?".into())))
                    .note("orders: relaxed, acquire, release, acq_rel (or MemoryOrder::{Relaxed, Acquire, Release, AcqRel})"),
            )),
        }
    }

    fn scope_arg(&mut self, e: Option<&Expr>, default: Scope) -> LResult<Scope> {
        let Some(e) = e else { return Ok(default) };
        let name = name_of(e);
        match name.as_deref().and_then(table::scope_by_name) {
            Some(s) => Ok(s),
            None => Err(self.error(
                Diagnostic::new(e.span, format!("unknown memory scope `{}`", name.unwrap_or_else(|| "?".into())))
                    .note("scopes: cta, cluster, gpu, sys (or MemoryScope::{Block, Cluster, Device, Sys})"),
            )),
        }
    }

    fn bool_const(&mut self, e: Option<&Expr>, default: bool, what: &str) -> LResult<bool> {
        match e.map(|e| (&e.kind, e.span)) {
            None => Ok(default),
            Some((ExprKind::Bool(b), _)) => Ok(*b),
            Some((_, span)) => self.err(span, format!("{what} must be `true` or `false`")),
        }
    }

    /// Validate and record an RMW's qualifiers; returns (sem, scope).
    #[allow(clippy::too_many_arguments)]
    fn rmw_qualifiers(
        &mut self,
        bound: &Bound<'_>,
        op: RmwOp,
        dtype: DType,
        form: RmwForm,
        space: Space,
        default_sem: Sem,
        default_scope: Scope,
        span: Span,
    ) -> LResult<(Sem, Scope)> {
        let sem = self.sem_arg(bound.get("sem"), default_sem)?;
        let scope = self.scope_arg(bound.get("scope"), default_scope)?;
        if let Err(e) = table::check_rmw(op, dtype, form, scope, self.explicit_target) {
            let at = if scope == Scope::Cluster {
                self.qualifier_span(bound, scope, span)
            } else {
                span
            };
            return Err(self.illegal(at, e));
        }
        self.require_target(table::scope_min_target(scope));
        let _ = space;
        Ok((sem, scope))
    }

    fn elementwise_rmw(
        &mut self,
        bound: &Bound<'_>,
        space: Space,
        op: RmwOp,
        span: Span,
    ) -> LResult<Operand> {
        let de = bound.req("dst");
        let (m, dtype, shape, coords, check_bounds) = match space {
            Space::Shared => {
                let (m, dtype, shape) = self.shared_arg(de)?;
                let coords = identity_coords(shape.len());
                (m, dtype, shape, coords, false)
            }
            Space::Global => {
                let (m, dtype, rank) = self.global_arg(de)?;
                // The tile shape comes from `values` (the view's dims are runtime values; elements
                // past them are skipped by the bounds check).
                let ve = bound.req("values");
                let v = self.expr(ve)?;
                let Ty::Tile { shape, .. } = self.ty(v) else {
                    return self.err(ve.span, format!("`values` of a global element-wise atomic must be a tile (its shape is the window's shape), found {}", ty_name(&self.ty(v))));
                };
                if shape.len() != rank {
                    return self.err(ve.span, format!("shape mismatch: `values` has rank {} but the destination has rank {rank}", shape.len()));
                }
                let coords = match bound.get("offsets") {
                    Some(e) => self.offsets_arg(e, rank)?,
                    None => identity_coords(rank),
                };
                (m, dtype, shape, coords, true)
            }
        };
        let (sem, scope) = self.rmw_qualifiers(
            bound,
            op,
            dtype,
            RmwForm::Elementwise,
            space,
            Sem::Relaxed,
            table::default_scope(space),
            span,
        )?;
        let values = self.value_of_shape(bound.req("values"), dtype, &shape, "`values`")?;
        let compare = match op {
            RmwOp::Cas => {
                Some(self.value_of_shape(bound.req("compare"), dtype, &shape, "`compare`")?)
            }
            _ => None,
        };
        let mask = self.mask_arg(bound.get("mask"), &shape)?;
        let access = Access {
            mem: m,
            shape: shape.clone(),
            coords,
            mask,
            check_bounds,
        };
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare,
            sem,
            scope,
            inactive: InactiveResult::Zero,
        };
        self.note_sync(m, sem, scope, span);
        Ok(self.emit(inst, Ty::Tile { dtype, shape }, span))
    }

    fn scatter_rmw(
        &mut self,
        bound: &Bound<'_>,
        space: Space,
        op: RmwOp,
        span: Span,
    ) -> LResult<Operand> {
        let (m, dtype, dst_shape) = self.mem_arg(bound.req("dst"), space)?;
        let (sem, scope) = self.rmw_qualifiers(
            bound,
            op,
            dtype,
            RmwForm::Scatter,
            space,
            Sem::Relaxed,
            table::default_scope(space),
            span,
        )?;
        let (access, shape) = self.scatter_access(bound, m, &dst_shape)?;
        let values = self.value_of_shape(bound.req("values"), dtype, &shape, "`values`")?;
        self.note_sync(m, sem, scope, span);
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare: None,
            sem,
            scope,
            inactive: InactiveResult::Zero,
        };
        Ok(self.emit(inst, Ty::Tile { dtype, shape }, span))
    }

    /// cuTile indices: one integer tile or scalar per array axis (a bare one for rank 1),
    /// broadcast to a common shape. Returns (coords, shape, all_scalar).
    fn indices_arg(&mut self, e: &Expr, rank: usize) -> LResult<(Vec<Operand>, Vec<usize>, bool)> {
        let items: Vec<&Expr> = match &e.kind {
            ExprKind::Tuple(items) | ExprKind::Array(items) => items.iter().collect(),
            _ => vec![e],
        };
        if items.len() != rank {
            return self.err(
                e.span,
                format!(
                    "`indices` needs one index per array dimension: {rank} expected, {} given",
                    items.len()
                ),
            );
        }
        let mut ops = Vec::new();
        let mut shape: Option<Vec<usize>> = None;
        for it in &items {
            let o = self.expr(it)?;
            let t = self.ty(o);
            if t.dtype() != DType::I32 || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return self.err(
                    it.span,
                    format!(
                        "an index must be an `i32` tile or scalar, found {}",
                        ty_name(&t)
                    ),
                );
            }
            if let Some(s) = t.tile_shape() {
                shape = Some(match shape {
                    None => s.to_vec(),
                    Some(cur) => match super::expr::broadcast_shapes(&cur, s) {
                        Some(b) if b.len() <= super::MAX_RANK => b,
                        _ => {
                            return self.err(
                                it.span,
                                format!(
                                    "shape mismatch: index shapes {} and {} do not broadcast",
                                    shape_str(&cur),
                                    shape_str(s)
                                ),
                            )
                        }
                    },
                });
            }
            ops.push((o, it.span));
        }
        let all_scalar = shape.is_none();
        let shape = shape.unwrap_or_else(|| vec![1]);
        let mut out = Vec::new();
        for (o, sp) in ops {
            out.push(self.broadcast_to(o, &shape, sp)?);
        }
        Ok((out, shape, all_scalar))
    }

    /// An operand broadcast to the indices' shape (cuTile's rule: it must broadcast *to* it).
    fn value_to_shape(
        &mut self,
        e: &Expr,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> LResult<Operand> {
        let v = self.expr(e)?;
        let t = self.ty(v);
        if t.dtype() != dtype || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
            return self.err(
                e.span,
                format!(
                    "mismatched types: {what} must be `{}`, found {}",
                    dtype.name(),
                    ty_name(&t)
                ),
            );
        }
        if let Some(s) = t.tile_shape() {
            if super::expr::broadcast_shapes(s, shape).as_deref() != Some(shape) {
                return self.err(
                    e.span,
                    format!("shape mismatch: {what} has shape {} which does not broadcast to the indices' shape {}", shape_str(s), shape_str(shape)),
                );
            }
        }
        self.broadcast_to(v, shape, e.span)
    }

    fn indexed_access(
        &mut self,
        bound: &Bound<'_>,
    ) -> LResult<(VarId, DType, Space, Access, bool)> {
        let (m, dtype, space, rank) = self.any_mem_arg(bound.req("array"))?;
        let (idx, shape, all_scalar) = self.indices_arg(bound.req("indices"), rank)?;
        let check_bounds = self.bool_const(bound.get("check_bounds"), true, "`check_bounds`")?;
        let coords = idx.into_iter().map(Coord::Index).collect();
        Ok((
            m,
            dtype,
            space,
            Access {
                mem: m,
                shape,
                coords,
                mask: None,
                check_bounds,
            },
            all_scalar,
        ))
    }

    /// Turn a `[1]`-tile result of an all-scalar indexed op into a block-uniform scalar.
    fn maybe_scalar(&mut self, r: Operand, dtype: DType, all_scalar: bool, span: Span) -> Operand {
        if !all_scalar {
            return r;
        }
        let v = r.var().expect("tile result");
        self.emit(
            Inst::Reduce {
                op: crate::ir::ReduceOp::Sum,
                x: v,
            },
            Ty::Scalar(dtype),
            span,
        )
    }

    fn indexed_rmw(&mut self, bound: &Bound<'_>, op: RmwOp, span: Span) -> LResult<Operand> {
        let (m, dtype, space, access, all_scalar) = self.indexed_access(bound)?;
        let shape = access.shape.clone();
        // cuTile's defaults: AcqRel at Device scope (Block for shared memory, where it is the widest that means anything).
        let (sem, scope) = self.rmw_qualifiers(
            bound,
            op,
            dtype,
            RmwForm::Indexed,
            space,
            Sem::AcqRel,
            table::default_scope(space),
            span,
        )?;
        // cuTile's rule ("common mistake 3"): a read-modify-write that synchronises is acq_rel.
        if matches!(sem, Sem::Acquire | Sem::Release) {
            let at = bound.get("sem").map(|e| e.span).unwrap_or(span);
            return Err(self.error(
                Diagnostic::new(at, format!("a read-modify-write with `{}` order only half-synchronises", sem.ptx()))
                    .note("an atomic RMW both reads and writes: with Acquire its write publishes nothing, with Release its read acquires nothing")
                    .help("use `MemoryOrder::AcqRel` (the default), or `Relaxed` if it synchronises nothing; the tilus form `atomic::global_cas(.., sem = acquire)` is there for lock acquisition"),
            ));
        }
        let (values, compare, inactive) = if op == RmwOp::Cas {
            let desired = self.value_to_shape(bound.req("desired"), dtype, &shape, "`desired`")?;
            let expected =
                self.value_to_shape(bound.req("expected"), dtype, &shape, "`expected`")?;
            (desired, Some(expected), InactiveResult::Compare)
        } else {
            (
                self.value_to_shape(bound.req("update"), dtype, &shape, "`update`")?,
                None,
                InactiveResult::Zero,
            )
        };
        self.note_sync(m, sem, scope, span);
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare,
            sem,
            scope,
            inactive,
        };
        let r = self.emit(inst, Ty::Tile { dtype, shape }, span);
        Ok(self.maybe_scalar(r, dtype, all_scalar, span))
    }

    fn indexed_load(&mut self, bound: &Bound<'_>, span: Span) -> LResult<Operand> {
        let (m, dtype, space, access, all_scalar) = self.indexed_access(bound)?;
        let sem = self.sem_arg(bound.get("sem"), Sem::Acquire)?;
        let scope = self.scope_arg(bound.get("scope"), table::default_scope(space))?;
        if let Err(e) = table::check_atomic_load(dtype, sem, scope, self.explicit_target) {
            let at = self.qualifier_span(bound, scope, span);
            return Err(self.illegal(at, e));
        }
        self.require_target(table::scope_min_target(scope));
        self.note_sync(m, sem, scope, span);
        let shape = access.shape.clone();
        let r = self.emit(
            Inst::AtomicLoad { access, sem, scope },
            Ty::Tile { dtype, shape },
            span,
        );
        Ok(self.maybe_scalar(r, dtype, all_scalar, span))
    }

    fn indexed_store(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let (m, dtype, space, access, _) = self.indexed_access(bound)?;
        let sem = self.sem_arg(bound.get("sem"), Sem::Release)?;
        let scope = self.scope_arg(bound.get("scope"), table::default_scope(space))?;
        if let Err(e) = table::check_atomic_store(dtype, sem, scope, self.explicit_target) {
            let at = self.qualifier_span(bound, scope, span);
            return Err(self.illegal(at, e));
        }
        self.require_target(table::scope_min_target(scope));
        let shape = access.shape.clone();
        let value = self.value_to_shape(bound.req("value"), dtype, &shape, "`value`")?;
        self.note_sync(m, sem, scope, span);
        self.emit_void(
            Inst::AtomicStore {
                access,
                value,
                sem,
                scope,
            },
            span,
        );
        Ok(())
    }

    /// Record a synchronising access (for the scope-mismatch check in `finish`).
    fn note_sync(&mut self, mem: VarId, sem: Sem, scope: Scope, span: Span) {
        if sem == Sem::Relaxed {
            return;
        }
        let base = self.base_of(mem);
        self.sync_uses.push(super::SyncUse {
            base,
            sem,
            scope,
            span,
        });
    }
}

fn identity_coords(rank: usize) -> Vec<Coord> {
    (0..rank)
        .map(|axis| Coord::Pos {
            axis,
            offset: Operand::Imm(0, DType::I32),
        })
        .collect()
}

fn whole(m: VarId, shape: &[usize]) -> Access {
    Access {
        mem: m,
        shape: shape.to_vec(),
        coords: identity_coords(shape.len()),
        mask: None,
        check_bounds: false,
    }
}

/// The name in `sem = acquire`, `sem = "acquire"`, `order = MemoryOrder::Acquire`.
fn name_of(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Path(p) => p.last().cloned(),
        ExprKind::Str(s) => Some(s.clone()),
        _ => None,
    }
}

impl Lowerer {
    /// `tensor.view(offset, [d0, d1, ...])`: a row-major window with runtime dims.
    pub(crate) fn view(&mut self, recv: Operand, args: &[Arg], span: Span) -> LResult<Operand> {
        const SIG: &[P] = &[req("offset"), req("shape")];
        let bound = self.bind_args("view", SIG, args, span)?;
        let oe = bound.req("offset");
        let offset = self.expr(oe)?;
        let offset = self.uniform_i32(offset, oe.span, "a view offset")?;
        let se = bound.req("shape");
        let ExprKind::Array(items) = &se.kind else {
            return self.err(
                se.span,
                "the shape of a view is a list of dimensions, e.g. `[rows, cols]`",
            );
        };
        if items.is_empty() || items.len() > super::MAX_RANK {
            return self.err(
                se.span,
                format!("a view must have 1 to {} dimensions", super::MAX_RANK),
            );
        }
        let mut dims = Vec::new();
        for it in items {
            let d = self.expr(it)?;
            dims.push(self.uniform_i32(d, it.span, "a view dimension")?);
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
        self.view_base.insert(out.var().expect("var"), base);
        Ok(out)
    }
}
