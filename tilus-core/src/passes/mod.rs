//! IR-to-IR passes, run after lowering and before code generation.

pub mod affine_index;
pub mod coalesce;
pub mod dce;
pub mod range_mask;

use crate::ir::Kernel;

/// The pass pipeline, in order.
pub fn run_all(kernel: &mut Kernel) {
    range_mask::run(kernel);
    affine_index::run(kernel);
    dce::run(kernel);
    coalesce::run(kernel);
}

/// A one-block kernel of 128 threads around a test's body: parameter 0 is an `i32` tensor.
#[cfg(test)]
pub(crate) fn test_kernel(body: crate::ir::Block, vars: Vec<crate::ir::Var>) -> Kernel {
    use crate::ir::*;
    Kernel {
        name: "k".into(),
        threads: 128,
        target: Target::DEFAULT,
        cluster: Grid::new(1, 1, 1),
        min_blocks_per_sm: None,
        vector_width: None,
        params: vec![Param {
            name: "x".into(),
            kind: ParamKind::Tensor(DType::I32),
        }],
        vars,
        shared_bytes: 0,
        body,
    }
}

/// A one-block kernel of 32 threads whose `vars` variables are `i32` scalars, around a test's
/// body: variable 0 is the parameter `n`.
#[cfg(test)]
pub(crate) fn scalar_test_kernel(vars: usize, body: crate::ir::Block) -> Kernel {
    use crate::ir::*;
    Kernel {
        threads: 32,
        params: vec![Param {
            name: "n".into(),
            kind: ParamKind::Scalar(DType::I32),
        }],
        ..test_kernel(
            body,
            (0..vars)
                .map(|i| Var::new(format!("v{i}"), Ty::Scalar(DType::I32)))
                .collect(),
        )
    }
}

/// `dst = inst`, a statement of a test's body.
#[cfg(test)]
pub(crate) fn test_def(dst: crate::ir::VarId, inst: crate::ir::Inst) -> crate::ir::Stmt {
    crate::ir::Stmt::Inst {
        dst: Some(dst),
        inst,
        span: crate::ir::Span(0),
    }
}

/// Elements `0..4` of variable 0 (the test kernel's tensor).
#[cfg(test)]
pub(crate) fn test_access() -> crate::ir::Access {
    use crate::ir::*;
    Access {
        mem: 0,
        shape: vec![4],
        coords: vec![Coord::Pos {
            axis: 0,
            offset: Operand::i32(0),
        }],
        mask: None,
        check_bounds: true,
    }
}
