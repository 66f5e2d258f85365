//! Dead-code elimination.
//!
//! 1. Instructions without side effects whose result is never read are removed (to a fixed
//!    point, since removing one can make its operands dead).
//! 2. An atomic read-modify-write whose result is never read loses its output (`dst = None`), so
//!    code generation may lower it to the destination-less `red.*` form where PTX has one (the
//!    legality table decides; exch/cas and acquire orders keep `atom`).
//!
//! "Read" is flow-insensitive: a variable read anywhere (including by a loop condition) is live.
//! That is exact for tile kernels, whose variables are few and whose loops re-read their state.

use crate::ir::{Block, Inst, Kernel, Stmt, VarId, VarUse};

pub fn run(kernel: &mut Kernel) {
    loop {
        let used = used_vars(&kernel.body);
        let removed = sweep(&mut kernel.body, &used);
        if !removed {
            break;
        }
    }
}

/// The variables read as an operand (or loop bound / condition) anywhere in a block, by
/// variable id (a vector, not a hash set: the pass runs in the macro, unoptimised in release
/// builds, where hashing each read cost more than the rest of the pass).
pub struct Used(Vec<bool>);

impl Used {
    pub fn contains(&self, v: VarId) -> bool {
        self.0.get(v as usize).copied().unwrap_or(false)
    }
}

/// Every variable read as an operand (or loop bound / condition) anywhere in `block`.
pub fn used_vars(block: &Block) -> Used {
    let mut used = Vec::new();
    crate::ir::for_each_var(block, &mut |u| {
        if let VarUse::Read(v) = u {
            let v = v as usize;
            if v >= used.len() {
                used.resize(v + 1, false);
            }
            used[v] = true;
        }
    });
    Used(used)
}

/// Remove dead pure instructions and drop unused RMW outputs; returns whether anything changed.
fn sweep(block: &mut Block, used: &Used) -> bool {
    let mut changed = false;
    block.retain_mut(|s| match s {
        Stmt::Inst {
            dst: Some(d), inst, ..
        } if !used.contains(*d) => {
            if matches!(inst, Inst::AtomicRmw { .. }) {
                *s = match std::mem::replace(
                    s,
                    Stmt::Break {
                        span: Default::default(),
                    },
                ) {
                    Stmt::Inst { inst, span, .. } => Stmt::Inst {
                        dst: None,
                        inst,
                        span,
                    },
                    _ => unreachable!("matched an instruction above"),
                };
                changed = true;
                true
            } else if inst.has_side_effects() {
                true
            } else {
                changed = true;
                false
            }
        }
        Stmt::For(l) => {
            changed |= sweep(&mut l.body, used);
            true
        }
        Stmt::While {
            cond_block, body, ..
        } => {
            changed |= sweep(cond_block, used);
            changed |= sweep(body, used);
            true
        }
        Stmt::If { then, els, .. } => {
            changed |= sweep(then, used);
            changed |= sweep(els, used);
            true
        }
        _ => true,
    });
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::*;

    fn kernel(body: Block, vars: Vec<Ty>) -> Kernel {
        let vars = vars
            .into_iter()
            .enumerate()
            .map(|(i, ty)| Var::new(format!("v{i}"), ty))
            .collect();
        crate::passes::test_kernel(body, vars)
    }

    fn rmw(op: RmwOp, sem: Sem) -> Inst {
        Inst::AtomicRmw {
            op,
            access: crate::passes::test_access(),
            values: Operand::i32(1),
            compare: (op == RmwOp::Cas).then_some(Operand::i32(0)),
            sem,
            scope: Scope::Gpu,
            inactive: InactiveResult::Zero,
            pairs: false,
        }
    }

    fn tile() -> Ty {
        Ty::Tile {
            dtype: DType::I32,
            shape: vec![4],
        }
    }

    #[test]
    fn unused_rmw_output_is_dropped_used_one_kept() {
        let body = vec![
            Stmt::Inst {
                dst: Some(1),
                inst: rmw(RmwOp::Add, Sem::Relaxed),
                span: Span(0),
            },
            Stmt::Inst {
                dst: Some(2),
                inst: rmw(RmwOp::Cas, Sem::Acquire),
                span: Span(1),
            },
            Stmt::Inst {
                dst: Some(3),
                inst: Inst::Binary {
                    op: BinOp::Add,
                    lhs: Operand::Var(2),
                    rhs: Operand::i32(1),
                },
                span: Span(2),
            },
            Stmt::Inst {
                dst: None,
                inst: Inst::Store {
                    access: crate::passes::test_access(),
                    value: Operand::Var(3),
                },
                span: Span(3),
            },
        ];
        let mut k = kernel(
            body,
            vec![
                Ty::Global {
                    dtype: DType::I32,
                    rank: 1,
                },
                tile(),
                tile(),
                tile(),
            ],
        );
        run(&mut k);
        assert!(
            matches!(
                k.body[0],
                Stmt::Inst {
                    dst: None,
                    inst: Inst::AtomicRmw { .. },
                    ..
                }
            ),
            "{:?}",
            k.body[0]
        );
        assert!(matches!(k.body[1], Stmt::Inst { dst: Some(2), .. }));
        assert_eq!(k.body.len(), 4);
    }

    #[test]
    fn dead_chains_are_removed_to_a_fixed_point() {
        let body = vec![
            Stmt::Inst {
                dst: Some(1),
                inst: Inst::Arange {
                    n: 4,
                    dtype: DType::I32,
                },
                span: Span(0),
            },
            Stmt::Inst {
                dst: Some(2),
                inst: Inst::Binary {
                    op: BinOp::Mul,
                    lhs: Operand::Var(1),
                    rhs: Operand::i32(2),
                },
                span: Span(1),
            },
            Stmt::For(crate::ir::ForLoop {
                var: 3,
                start: Operand::i32(0),
                end: Operand::i32(4),
                step: Operand::i32(1),
                body: vec![Stmt::Inst {
                    dst: Some(4),
                    inst: Inst::Mov(Operand::Var(2)),
                    span: Span(2),
                }],
                span: Span(3),
            }),
        ];
        let mut k = kernel(
            body,
            vec![
                Ty::Global {
                    dtype: DType::I32,
                    rank: 1,
                },
                tile(),
                tile(),
                Ty::Scalar(DType::I32),
                tile(),
            ],
        );
        run(&mut k);
        assert_eq!(k.body.len(), 1, "{:#?}", k.body);
        assert!(matches!(&k.body[0], Stmt::For(l) if l.body.is_empty()));
    }

    #[test]
    fn atomic_loads_are_kept_even_when_unused() {
        let access = Access {
            mem: 0,
            shape: vec![1],
            coords: vec![Coord::Index(Operand::i32(0))],
            mask: None,
            check_bounds: true,
        };
        let body = vec![Stmt::Inst {
            dst: Some(1),
            inst: Inst::AtomicLoad {
                access,
                sem: Sem::Acquire,
                scope: Scope::Gpu,
            },
            span: Span(0),
        }];
        let mut k = kernel(
            body,
            vec![
                Ty::Global {
                    dtype: DType::I32,
                    rank: 1,
                },
                Ty::Tile {
                    dtype: DType::I32,
                    shape: vec![1],
                },
            ],
        );
        run(&mut k);
        assert_eq!(k.body.len(), 1);
    }
}
