//! Copy coalescing: `_t = inst; x = mov _t` becomes `x = inst` where the temporary `_t` is
//! read by that move alone and `inst` does not read `x`.
//!
//! Lowering gives every expression a temporary and every assignment a move, so `x = load(..)`
//! reaches code generation as a load into fresh registers and a copy into `x`'s. ptxas does
//! not always fold such a copy: where the load is masked (its inactive elements filled), it
//! keeps the copy right after the load, and the copy waits for memory. A value loaded ahead,
//! to be used a loop step later (the bucket fold's next chunk), then costs the load's whole
//! latency where it is issued. Writing the load's result into `x` directly leaves nothing to
//! wait on until `x` is read.

use crate::ir::{Block, Inst, Kernel, Operand, Stmt, VarId, VarUse};

pub fn run(kernel: &mut Kernel) {
    let reads = read_counts(&kernel.body, kernel.vars.len());
    let vars = &kernel.vars;
    let single_use_temp =
        |t: VarId| vars[t as usize].temp && reads.get(t as usize).copied() == Some(1);
    let same_type = |a: VarId, b: VarId| vars[a as usize].ty == vars[b as usize].ty;
    coalesce_block(&mut kernel.body, &single_use_temp, &same_type);
}

/// How many times each variable is read, anywhere in the kernel.
fn read_counts(body: &Block, vars: usize) -> Vec<u32> {
    let mut counts = vec![0u32; vars];
    crate::ir::for_each_var(body, &mut |u| {
        if let VarUse::Read(v) = u {
            if let Some(c) = counts.get_mut(v as usize) {
                *c += 1;
            }
        }
    });
    counts
}

fn coalesce_block(
    block: &mut Block,
    single_use_temp: &impl Fn(VarId) -> bool,
    same_type: &impl Fn(VarId, VarId) -> bool,
) {
    let mut i = 0;
    while i < block.len() {
        match &mut block[i] {
            Stmt::For(l) => coalesce_block(&mut l.body, single_use_temp, same_type),
            Stmt::While {
                cond_block, body, ..
            } => {
                coalesce_block(cond_block, single_use_temp, same_type);
                coalesce_block(body, single_use_temp, same_type);
            }
            Stmt::If { then, els, .. } => {
                coalesce_block(then, single_use_temp, same_type);
                coalesce_block(els, single_use_temp, same_type);
            }
            _ => {}
        }
        if let Some(x) = foldable_move(block, i, single_use_temp, same_type) {
            if let Stmt::Inst { dst, .. } = &mut block[i] {
                *dst = Some(x);
            }
            block.remove(i + 1);
        }
        i += 1;
    }
}

/// `Some(x)` where statement `i` defines a temporary that statement `i + 1` moves into `x`, and
/// nothing stops the definition from writing `x` itself.
fn foldable_move(
    block: &Block,
    i: usize,
    single_use_temp: &impl Fn(VarId) -> bool,
    same_type: &impl Fn(VarId, VarId) -> bool,
) -> Option<VarId> {
    let (
        Some(Stmt::Inst {
            dst: Some(t),
            inst: def,
            ..
        }),
        Some(Stmt::Inst {
            dst: Some(x),
            inst: Inst::Mov(Operand::Var(src)),
            ..
        }),
    ) = (block.get(i), block.get(i + 1))
    else {
        return None;
    };
    let reads_x = def.operands().contains(&Operand::Var(*x));
    let foldable = src == t
        && single_use_temp(*t)
        && same_type(*t, *x)
        && !reads_x
        // Tensor handles (shared allocations, views) are not values in registers: the pass
        // is for those, and leaves the handles as lowering made them.
        && !matches!(def, Inst::AllocShared { .. } | Inst::View { .. });
    foldable.then_some(*x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::*;

    fn tile(dtype: DType) -> Ty {
        Ty::Tile {
            dtype,
            shape: vec![4],
        }
    }

    /// Variables: 0 a global tensor, 1 a temporary tile, 2 a named tile, 3 a named `u32` tile.
    fn kernel(body: Block, temp_is_temp: bool) -> Kernel {
        let mut vars = vec![
            Var::new(
                "x",
                Ty::Global {
                    dtype: DType::I32,
                    rank: 1,
                },
            ),
            Var::new("_t1", tile(DType::I32)),
            Var::new("a", tile(DType::I32)),
            Var::new("b", tile(DType::U32)),
        ];
        vars[1].temp = temp_is_temp;
        crate::passes::test_kernel(body, vars)
    }

    use crate::passes::test_def as def;

    fn load() -> Inst {
        Inst::Load {
            access: crate::passes::test_access(),
            other: Operand::i32(0),
        }
    }

    fn store(v: VarId) -> Stmt {
        Stmt::Inst {
            dst: None,
            inst: Inst::Store {
                access: crate::passes::test_access(),
                value: Operand::Var(v),
            },
            span: Span(0),
        }
    }

    fn mov(dst: VarId, src: VarId) -> Stmt {
        def(dst, Inst::Mov(Operand::Var(src)))
    }

    /// The body after the pass.
    fn coalesced(body: Block, temp_is_temp: bool) -> Block {
        let mut k = kernel(body, temp_is_temp);
        run(&mut k);
        k.body
    }

    #[test]
    fn a_load_moved_into_a_variable_loads_into_it() {
        let body = coalesced(vec![def(1, load()), mov(2, 1), store(2)], true);
        assert_eq!(body.len(), 2, "{body:?}");
        assert!(matches!(
            &body[0],
            Stmt::Inst {
                dst: Some(2),
                inst: Inst::Load { .. },
                ..
            }
        ));
    }

    #[test]
    fn moves_inside_loops_and_branches_are_coalesced_too() {
        let inner = vec![def(1, load()), mov(2, 1)];
        let body = coalesced(
            vec![
                Stmt::If {
                    cond: Operand::Imm(1, DType::Bool),
                    then: inner,
                    els: vec![],
                    span: Span(0),
                },
                store(2),
            ],
            true,
        );
        let Stmt::If { then, .. } = &body[0] else {
            panic!("{body:?}")
        };
        assert_eq!(then.len(), 1);
        assert!(matches!(&then[0], Stmt::Inst { dst: Some(2), .. }));
    }

    #[test]
    fn what_coalescing_would_change_is_left() {
        let unchanged = |body: Block, temp_is_temp: bool| {
            assert_eq!(coalesced(body.clone(), temp_is_temp), body);
        };
        // The temporary is read again.
        unchanged(vec![def(1, load()), mov(2, 1), store(1), store(2)], true);
        // The definition reads the variable it would write.
        let add = Inst::Binary {
            op: BinOp::Add,
            lhs: Operand::Var(2),
            rhs: Operand::i32(1),
        };
        unchanged(vec![def(2, load()), def(1, add), mov(2, 1), store(2)], true);
        // A named variable, not a temporary.
        unchanged(vec![def(1, load()), mov(2, 1), store(2)], false);
        // Types differ.
        unchanged(vec![def(1, load()), mov(3, 1), store(3)], true);
        // Not adjacent.
        unchanged(vec![def(1, load()), store(2), mov(2, 1), store(2)], true);
    }
}
