//! The atomic builtins: qualifiers (`sem`, `scope`, `check_bounds`), tilus element-wise and
//! scatter read-modify-writes, and the cuTile indexed atomics, atomic loads and stores.

use super::args::Bound;
use super::memory::identity_coords;
use super::{shape_str, ty_name, LResult, Lowerer};
use crate::ast::{Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::ir::{
    Access, Coord, DType, InactiveResult, Inst, Operand, RmwOp, Scope, Sem, Space, Span, Ty, VarId,
};
use crate::table::{self, RmwForm};

impl Lowerer {
    /// Report a combination the table rejects at the argument it is about: `sem = ..` for an
    /// order, `scope = ..` for a scope, the call for the operation, its element type or form
    /// (and the call when the argument was left to its default).
    pub(super) fn illegal(
        &mut self,
        bound: &Bound<'_>,
        call: Span,
        e: table::Illegal,
    ) -> super::Reported {
        let arg = match e.about {
            table::Culprit::Call => None,
            table::Culprit::Order => bound.get("sem"),
            table::Culprit::Scope => bound.get("scope"),
        };
        let mut d = Diagnostic::new(arg.map_or(call, |a| a.span), e.message);
        if let Some(h) = e.help {
            d = d.help(h);
        }
        self.error(d)
    }

    pub(super) fn sem_arg(&mut self, e: Option<&Expr>, default: Sem) -> LResult<Sem> {
        self.named_arg(
            e,
            default,
            table::SEM_NAMES,
            ("memory order", "MemoryOrder"),
            "the orders are `relaxed`, `acquire`, `release`, `acq_rel`, or `MemoryOrder::{Relaxed, Acquire, Release, AcqRel}`",
        )
    }

    pub(super) fn scope_arg(&mut self, e: Option<&Expr>, default: Scope) -> LResult<Scope> {
        self.named_arg(
            e,
            default,
            table::SCOPE_NAMES,
            ("memory scope", "MemoryScope"),
            "the scopes are `cta`, `cluster`, `gpu`, `sys`, or `MemoryScope::{Block, Cluster, Device, Sys}`",
        )
    }

    /// A qualifier given by name (`acquire`, `"acquire"`, `MemoryOrder::Acquire`), looked up
    /// in one of the legality table's name lists; `what` is what the name is and the Rust enum
    /// of its capitalised spellings.
    fn named_arg<T: Copy>(
        &mut self,
        e: Option<&Expr>,
        default: T,
        names: &[(&str, T)],
        (what, enum_name): (&str, &str),
        note: &str,
    ) -> LResult<T> {
        let Some(e) = e else { return Ok(default) };
        let name = name_of(e);
        match names.iter().find(|(n, _)| Some(*n) == name.as_deref()) {
            Some((_, v)) => Ok(*v),
            None => {
                let name = name.unwrap_or_else(|| "?".into());
                // Suggested the way the user wrote the name (`MemoryOrder::AcqRel`, `"acq_rel"`);
                // an enum variant for a bare name is written with its enum (`device` →
                // `MemoryScope::Device`), as the variant alone reads like a typo.
                let close = super::suggest::closest(&name, names.iter().map(|(n, _)| *n));
                let written: Vec<String> = close
                    .into_iter()
                    .map(|c| match &e.kind {
                        ExprKind::Path(p) if p.len() > 1 => {
                            format!("{}::{c}", p[..p.len() - 1].join("::"))
                        }
                        ExprKind::Str(_) => format!("\"{c}\""),
                        // CamelCase is the enum's spelling (ALL_CAPS is a name of its own).
                        _ if c.starts_with(|ch: char| ch.is_ascii_uppercase())
                            && c.contains(|ch: char| ch.is_ascii_lowercase()) =>
                        {
                            format!("{enum_name}::{c}")
                        }
                        _ => c.to_string(),
                    })
                    .collect();
                Err(self.error(
                    Diagnostic::new(e.span, format!("unknown {what} `{name}`"))
                        .note(note)
                        .maybe_help(super::suggest::help_line(&format!("a {what}"), &written)),
                ))
            }
        }
    }

    pub(super) fn bool_const(
        &mut self,
        e: Option<&Expr>,
        default: bool,
        what: &str,
    ) -> LResult<bool> {
        match e.map(|e| (&e.kind, e.span)) {
            None => Ok(default),
            Some((ExprKind::Bool(b), _)) => Ok(*b),
            Some((_, span)) => self.err(span, format!("{what} must be `true` or `false`")),
        }
    }

    /// Validate and record an RMW's qualifiers; returns (sem, scope).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rmw_qualifiers(
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
        let row = match table::check_rmw(op, dtype, form, scope, self.explicit_target) {
            Ok(row) => row,
            Err(e) => return Err(self.illegal(bound, span, e)),
        };
        self.require_target(table::scope_min_target(scope));
        self.require_target(row.min_target);
        let _ = space;
        Ok((sem, scope))
    }

    pub(super) fn elementwise_rmw(
        &mut self,
        bound: &Bound<'_>,
        space: Space,
        op: RmwOp,
        pairs: bool,
        span: Span,
    ) -> LResult<Operand> {
        let (dst, dst_span) = (self.req_arg(bound, "dst", None)?, bound.req("dst").span);
        let (m, dtype, shape, coords, check_bounds) = match space {
            Space::Shared => {
                let (m, dtype, shape) = self.shared_arg(dst, dst_span)?;
                let coords = identity_coords(shape.len());
                (m, dtype, shape, coords, false)
            }
            Space::Global => {
                let (m, dtype, rank) = self.global_arg(dst, dst_span)?;
                // The tile shape comes from `values` (the view's dims are runtime values; elements
                // past them are skipped by the bounds check).
                let ve = bound.req("values");
                let v = self.req_arg(bound, "values", Some(dtype))?;
                let Ty::Tile { shape, .. } = self.ty(v) else {
                    return self.err(ve.span, format!("`values` of a global element-wise atomic must be a tile (its shape is the window's shape), found {}", ty_name(&self.ty(v))));
                };
                if shape.len() != rank {
                    return self.err(ve.span, format!("shape mismatch: `values` has rank {} but the destination has rank {rank}", shape.len()));
                }
                let coords = match bound.list("offsets") {
                    Some(items) => self.offsets_arg(&items, bound.req("offsets").span, rank)?,
                    None => identity_coords(rank),
                };
                (m, dtype, shape, coords, true)
            }
        };
        let (sem, scope) = if pairs {
            let at = bound.req("values").span;
            self.pair_qualifiers(bound, op, dtype, m, (&shape, at), Sem::Relaxed, span)?
        } else {
            self.rmw_qualifiers(
                bound,
                op,
                dtype,
                RmwForm::Elementwise,
                space,
                Sem::Relaxed,
                self.scope_default(space, m),
                span,
            )?
        };
        let values = self.arg_of_shape(bound, "values", dtype, &shape, "`values`")?;
        let compare = match op {
            RmwOp::Cas => Some(self.arg_of_shape(bound, "compare", dtype, &shape, "`compare`")?),
            _ => None,
        };
        let mask = self.mask_arg(bound, &shape)?;
        let access = Access {
            mem: m,
            shape: shape.clone(),
            coords,
            mask,
            check_bounds,
        };
        self.note_sync(&access, sem, scope, span);
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare,
            sem,
            scope,
            inactive: InactiveResult::Zero,
            pairs,
        };
        Ok(self.emit(inst, Ty::Tile { dtype, shape }, span))
    }

    /// The qualifiers of a 128-bit RMW on element pairs, and its rules: a legal (op, type) for
    /// the table, block-local or global memory, and pairs along an even-length last axis of
    /// `shape` (which comes from the argument at `shape_at`).
    #[allow(clippy::too_many_arguments)]
    fn pair_qualifiers(
        &mut self,
        bound: &Bound<'_>,
        op: RmwOp,
        dtype: DType,
        mem: VarId,
        (shape, shape_at): (&[usize], Span),
        default_sem: Sem,
        span: Span,
    ) -> LResult<(Sem, Scope)> {
        let sem = self.sem_arg(bound.get("sem"), default_sem)?;
        let space = match self.ty(Operand::Var(mem)) {
            Ty::Shared { .. } => Space::Shared,
            _ => Space::Global,
        };
        let scope = self.scope_arg(bound.get("scope"), table::default_scope(space))?;
        if let Err(e) = table::check_pair_rmw(op, dtype, scope, self.explicit_target) {
            return Err(self.illegal(bound, span, e));
        }
        if self.distributed_vars.contains(&mem) {
            return Err(self.error(
                Diagnostic::new(
                    bound.req("dst").span,
                    "128-bit atomics on a cluster shared tensor are not supported",
                )
                .help("use a block's own `shared_tensor`, or global memory"),
            ));
        }
        if shape.last().is_none_or(|n| n % 2 != 0) {
            return self.err(
                shape_at,
                format!(
                    "a 128-bit atomic works on pairs along the last axis, which needs an even length, but the operation has shape {}",
                    shape_str(shape)
                ),
            );
        }
        self.require_target(table::scope_min_target(scope));
        self.require_target(table::PAIR_RMW_TARGET);
        Ok((sem, scope))
    }

    pub(super) fn scatter_rmw(
        &mut self,
        bound: &Bound<'_>,
        space: Space,
        op: RmwOp,
        span: Span,
    ) -> LResult<Operand> {
        let dst = self.req_arg(bound, "dst", None)?;
        let (m, dtype, dst_shape) = self.mem_arg(dst, bound.req("dst").span, space)?;
        let (sem, scope) = self.rmw_qualifiers(
            bound,
            op,
            dtype,
            RmwForm::Scatter,
            space,
            Sem::Relaxed,
            self.scope_default(space, m),
            span,
        )?;
        let (access, shape) = self.scatter_access(bound, m, &dst_shape)?;
        let values = self.arg_of_shape(bound, "values", dtype, &shape, "`values`")?;
        self.note_sync(&access, sem, scope, span);
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare: None,
            sem,
            scope,
            inactive: InactiveResult::Zero,
            pairs: false,
        };
        Ok(self.emit(inst, Ty::Tile { dtype, shape }, span))
    }

    /// cuTile indices: one integer tile or scalar per array axis (a bare one for rank 1),
    /// broadcast to a common shape. Returns (coords, shape, all_scalar).
    pub(super) fn indices_arg(
        &mut self,
        items: &[(Operand, Span)],
        span: Span,
        rank: usize,
    ) -> LResult<(Vec<Operand>, Vec<usize>, bool)> {
        if items.len() != rank {
            return self.err(
                span,
                format!(
                    "`indices` needs one index per array dimension: {rank} expected, {} given",
                    items.len()
                ),
            );
        }
        let mut ops = Vec::new();
        let mut shape: Option<Vec<usize>> = None;
        for &(o, it_span) in items {
            let t = self.ty(o);
            if !t.dtype().is_int() || matches!(t, Ty::Global { .. } | Ty::Shared { .. }) {
                return self.err(
                    it_span,
                    format!(
                        "an index must be an integer tile or scalar, found {}",
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
                                it_span,
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
            ops.push((o, it_span));
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
    pub(super) fn value_to_shape(
        &mut self,
        bound: &Bound<'_>,
        name: &str,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> LResult<Operand> {
        let (v, e) = (self.req_arg(bound, name, Some(dtype))?, bound.req(name));
        let v = self.expect_dtype(v, dtype, e.span, what)?;
        let t = self.ty(v);
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

    pub(super) fn indexed_access(
        &mut self,
        bound: &Bound<'_>,
    ) -> LResult<(VarId, DType, Space, Access, bool)> {
        let array = self.req_arg(bound, "array", None)?;
        let (m, dtype, space, rank) = self.any_mem_arg(array, bound.req("array").span)?;
        let (idx, shape, all_scalar) = self.indices_arg(
            &bound.list("indices").expect("required"),
            bound.req("indices").span,
            rank,
        )?;
        let check_bounds = self.bool_const(bound.get("check_bounds"), true, "`check_bounds`")?;
        if !check_bounds && self.unsafe_depth == 0 {
            let at = bound.get("check_bounds").map_or(Span::NONE, |e| e.span);
            return Err(self.error(
                Diagnostic::new(at, "`check_bounds = false` is unsafe: an index outside the tensor would read or write memory the kernel does not own")
                    .note("safe kernels cannot cause undefined behaviour whatever their arguments, so unchecked accesses need a promise")
                    .help("write the call inside `unsafe { .. }`, promising that its indices are in bounds for every launch, or declare the kernel `unsafe fn`, so that its launchers are `unsafe` and their callers promise it"),
            ));
        }
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
    pub(super) fn maybe_scalar(
        &mut self,
        r: Operand,
        dtype: DType,
        all_scalar: bool,
        span: Span,
    ) -> Operand {
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

    pub(super) fn indexed_rmw(
        &mut self,
        bound: &Bound<'_>,
        op: RmwOp,
        pairs: bool,
        span: Span,
    ) -> LResult<Operand> {
        let (_, dtype, space, access, all_scalar) = self.indexed_access(bound)?;
        let shape = access.shape.clone();
        // cuTile's defaults: AcqRel at Device scope (Block for shared memory, where it is the widest that means anything).
        let (sem, scope) = if pairs {
            let at = bound.req("indices").span;
            let m = access.mem;
            self.pair_qualifiers(bound, op, dtype, m, (&shape, at), Sem::AcqRel, span)?
        } else {
            self.rmw_qualifiers(
                bound,
                op,
                dtype,
                RmwForm::Indexed,
                space,
                Sem::AcqRel,
                self.scope_default(space, access.mem),
                span,
            )?
        };
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
            let desired = self.value_to_shape(bound, "desired", dtype, &shape, "`desired`")?;
            let expected = self.value_to_shape(bound, "expected", dtype, &shape, "`expected`")?;
            (desired, Some(expected), InactiveResult::Compare)
        } else {
            (
                self.value_to_shape(bound, "update", dtype, &shape, "`update`")?,
                None,
                InactiveResult::Zero,
            )
        };
        self.note_sync(&access, sem, scope, span);
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare,
            sem,
            scope,
            inactive,
            pairs,
        };
        let r = self.emit(inst, Ty::Tile { dtype, shape }, span);
        Ok(self.maybe_scalar(r, dtype, all_scalar, span))
    }

    pub(super) fn indexed_load(&mut self, bound: &Bound<'_>, span: Span) -> LResult<Operand> {
        let (_, dtype, space, access, all_scalar) = self.indexed_access(bound)?;
        let sem = self.sem_arg(bound.get("sem"), Sem::Acquire)?;
        let scope = self.scope_arg(bound.get("scope"), self.scope_default(space, access.mem))?;
        if let Err(e) = table::check_atomic_load(dtype, sem, scope, self.explicit_target) {
            return Err(self.illegal(bound, span, e));
        }
        self.require_target(table::scope_min_target(scope));
        self.note_sync(&access, sem, scope, span);
        let shape = access.shape.clone();
        let r = self.emit(
            Inst::AtomicLoad { access, sem, scope },
            Ty::Tile { dtype, shape },
            span,
        );
        Ok(self.maybe_scalar(r, dtype, all_scalar, span))
    }

    pub(super) fn indexed_store(&mut self, bound: &Bound<'_>, span: Span) -> LResult<()> {
        let (_, dtype, space, access, _) = self.indexed_access(bound)?;
        let sem = self.sem_arg(bound.get("sem"), Sem::Release)?;
        let scope = self.scope_arg(bound.get("scope"), self.scope_default(space, access.mem))?;
        if let Err(e) = table::check_atomic_store(dtype, sem, scope, self.explicit_target) {
            return Err(self.illegal(bound, span, e));
        }
        self.require_target(table::scope_min_target(scope));
        let shape = access.shape.clone();
        let value = self.value_to_shape(bound, "value", dtype, &shape, "`value`")?;
        self.note_sync(&access, sem, scope, span);
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

    /// A value argument that must be a tile of exactly `shape` (or a scalar).
    fn arg_of_shape(
        &mut self,
        bound: &Bound<'_>,
        name: &str,
        dtype: DType,
        shape: &[usize],
        what: &str,
    ) -> LResult<Operand> {
        let span = bound.req(name).span;
        let v = self.req_arg(bound, name, Some(dtype))?;
        self.value_of_shape(v, span, dtype, shape, what)
    }

    /// Record a synchronising access (for the scope-mismatch check in `finish`).
    /// The default scope of an atomic on `mem`: the table's for its space, but `cluster` for a
    /// distributed shared tensor (blocks of the whole cluster access it).
    pub(super) fn scope_default(&self, space: Space, mem: crate::ir::VarId) -> Scope {
        if self.distributed_vars.contains(&mem) {
            Scope::Cluster
        } else {
            table::default_scope(space)
        }
    }

    pub(super) fn note_sync(&mut self, access: &Access, sem: Sem, scope: Scope, span: Span) {
        if scope == Scope::Cta && self.distributed_vars.contains(&access.mem) {
            self.error(
                Diagnostic::new(span, "a `cta`-scoped atomic on a cluster shared tensor")
                    .note("other blocks of the cluster access its elements too: at block scope their atomics are not atomic with this one, and nothing is ordered across blocks")
                    .help("use `scope = cluster` (the default for cluster shared tensors)"),
            );
        }
        if sem == Sem::Relaxed {
            return;
        }
        let base = self.base_of(access.mem);
        let range = self.const_range(access);
        self.sync_uses.push(super::SyncUse {
            base,
            range,
            sem,
            scope,
            span,
        });
    }

    /// The element range `[start, end)` of the base tensor a rank-1 access can touch, when it
    /// is known at compile time (immediate view offsets and coordinates); `None` = anywhere.
    fn const_range(&self, access: &Access) -> Option<(i64, i64)> {
        let origin = self.const_offset(access.mem)?;
        match access.coords.as_slice() {
            [Coord::Index(o @ Operand::Imm(..))] => {
                let i = o.imm_int()? as i64;
                Some((origin + i, origin + i + 1))
            }
            [Coord::Pos {
                axis,
                offset: o @ Operand::Imm(..),
            }] => {
                let start = origin + o.imm_int()? as i64;
                Some((start, start + access.shape[*axis] as i64))
            }
            _ => None,
        }
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
