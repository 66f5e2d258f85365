//! Contiguous index tiles become ranges.
//!
//! A scatter or indexed access to a rank-1 shared tensor whose index tile is
//! `start + arange(n)` (or `arange(n)`, or `arange(n) + start`) touches `n` consecutive
//! elements: it is the same access as one at coordinate `start + pos` over a tile of `n`, which
//! the back end plans on its *range* path (one base address per thread, compile-time offsets,
//! 16-byte vector accesses where aligned; for a distributed tensor, one `mapa` per run instead
//! of one per element). So the coordinate `Index(x)` is rewritten to `Pos { offset: start }`.
//!
//! Both forms activate exactly the elements `start + f` that lie inside the tensor: an index
//! outside `0..len` is skipped, and a position outside is out of bounds, checked the same way.
//! The rewrite is limited to what keeps that true without a second look:
//! * shared memory only (its coordinates are 32-bit on both paths; a global access's 64-bit
//!   range could differ from an `i32` index sum that wrapped);
//! * index types `i32` and `i64`, the arange and the sum of one type, `n` the access's length;
//! * `x` and the arange each assigned once in the whole kernel, and `start` an immediate, a
//!   parameter, a variable assigned once, or a loop's variable (assigned by that loop alone): then the value
//!   of `start` that `x` was computed from is the value the access sees. Lowering defines a
//!   value before every read in its scope; `x` is read only inside the block that defines it,
//!   which a loop reading `start` encloses whole, so no assignment of `start` runs between
//!   the two.
//!
//! The sum itself is left in place; dead-code elimination removes it when nothing else reads
//! it.

use crate::dtype::DType;
use crate::facts::Defs;
use crate::ir::{for_each_inst_mut, Access, BinOp, Coord, Inst, Kernel, Operand, Ty, VarId};
use std::collections::HashMap;

pub fn run(kernel: &mut Kernel) {
    let facts = Facts::of(kernel);
    if facts.ranges.is_empty() {
        return;
    }
    let mut body = std::mem::take(&mut kernel.body);
    for_each_inst_mut(&mut body, &mut |inst| {
        if let Some(access) = inst.access_mut() {
            rewrite(access, kernel, &facts);
        }
    });
    kernel.body = body;
}

/// The index tiles known to be `start + arange(n)`: `x -> (start, n)`.
struct Facts {
    ranges: HashMap<VarId, (Operand, usize)>,
}

impl Facts {
    fn of(k: &Kernel) -> Facts {
        let defs = Defs::of(k);
        // A loop's own variable changes only at the loop's head, and a sum that reads it is
        // inside the loop, with every read of the sum (its scope): the same iteration's value.
        // Parameters are never assigned.
        let steady = |v: VarId| {
            defs.assigned_once(v)
                || defs.is_param(v)
                || (defs.is_loop_var(v) && defs.single_site(v))
        };
        let arange = |o: Operand, d: DType| -> Option<usize> {
            let Operand::Var(a) = o else { return None };
            match defs.def_of(a) {
                Some(Inst::Arange { n, dtype }) if *dtype == d => Some(*n),
                _ => None,
            }
        };
        let scalar = |o: Operand, d: DType| match o {
            Operand::Imm(_, t) => t == d,
            Operand::Var(v) => steady(v) && k.ty(v) == &Ty::Scalar(d),
        };
        let mut ranges = HashMap::new();
        for x in 0..k.vars.len() as VarId {
            let (Some(inst), Ty::Tile { dtype, shape }) = (defs.def_of(x), k.ty(x)) else {
                continue;
            };
            let d = *dtype;
            if shape.len() != 1 || !matches!(d, DType::I32 | DType::I64) {
                continue;
            }
            let found = match inst {
                Inst::Arange { n, .. } => Some((Operand::Imm(0, d), *n)),
                Inst::Binary {
                    op: BinOp::Add,
                    lhs,
                    rhs,
                } => match (arange(*lhs, d), arange(*rhs, d)) {
                    (Some(n), _) if scalar(*rhs, d) => Some((*rhs, n)),
                    (_, Some(n)) if scalar(*lhs, d) => Some((*lhs, n)),
                    _ => None,
                },
                _ => None,
            };
            if let Some((start, n)) = found {
                if n == shape[0] {
                    ranges.insert(x, (start, n));
                }
            }
        }
        Facts { ranges }
    }
}

/// `Index(x)` with `x = start + arange(n)` over a tile of `n`: `Pos { offset: start }`.
fn rewrite(access: &mut Access, k: &Kernel, facts: &Facts) {
    let shared_rank1 = matches!(k.ty(access.mem), Ty::Shared { shape, .. } if shape.len() == 1);
    if !shared_rank1 || !access.check_bounds || access.shape.len() != 1 {
        return;
    }
    let [Coord::Index(Operand::Var(x))] = access.coords.as_slice() else {
        return;
    };
    if let Some(&(start, n)) = facts.ranges.get(x) {
        if n == access.shape[0] {
            access.coords = vec![Coord::Pos {
                axis: 0,
                offset: start,
            }];
        }
    }
}
