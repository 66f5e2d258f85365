//! Hand-built kernel specs for tests (no proc macro involved).
#![allow(dead_code)]

use tilus_core::ir::{
    Access, Coord, DType, Grid, Inst, Kernel, Operand, Param, ParamKind, Span, Stmt, Target, Ty,
    Var,
};
use tilus_runtime::{KernelSpec, ParamSpec};

/// Leak a spec built from `kernel` (its IR serialised), with PTX `ptx`.
pub fn leak_spec(kernel: &Kernel, ptx: &str, shared_bytes: usize) -> &'static KernelSpec {
    let params: Vec<ParamSpec> = kernel
        .params
        .iter()
        .map(|p| {
            let name: &'static str = Box::leak(p.name.clone().into_boxed_str());
            match p.kind {
                ParamKind::Tensor(d) => ParamSpec::tensor(name, d),
                ParamKind::Scalar(d) => ParamSpec::scalar(name, d),
            }
        })
        .collect();
    Box::leak(Box::new(unsafe {
        KernelSpec::new(
            Box::leak(kernel.name.clone().into_boxed_str()),
            Box::leak(ptx.to_string().into_boxed_str()),
            Box::leak(kernel.to_bytes().into_boxed_slice()),
            kernel.threads,
            shared_bytes,
            Box::leak(params.into_boxed_slice()),
        )
    }))
}

fn param_var(p: &Param) -> Var {
    Var::new(
        p.name.clone(),
        match p.kind {
            ParamKind::Tensor(d) => Ty::Global { dtype: d, rank: 1 },
            ParamKind::Scalar(d) => Ty::Scalar(d),
        },
    )
}

/// A kernel with the given parameters and an empty body.
pub fn empty_kernel(name: &str, threads: u32, params: &[(&str, ParamKind)]) -> Kernel {
    let params: Vec<Param> = params
        .iter()
        .map(|(n, k)| Param {
            name: n.to_string(),
            kind: k.clone(),
        })
        .collect();
    Kernel {
        name: name.into(),
        threads,
        target: Target::DEFAULT,
        cluster: Grid::new(1, 1, 1),
        min_blocks_per_sm: None,
        vector_width: None,
        vars: params.iter().map(param_var).collect(),
        params,
        shared_bytes: 0,
        body: vec![],
    }
}

/// `fill(out: GlobalTensor<i32>, value: i32)`: block `b` stores `value` into
/// `out[b*256 .. b*256+256]` (bounds-checked); 256 threads.
pub fn fill_kernel() -> Kernel {
    let mut k = empty_kernel(
        "fill",
        256,
        &[
            ("out", ParamKind::Tensor(DType::I32)),
            ("value", ParamKind::Scalar(DType::I32)),
        ],
    );
    k.vars.push(Var::new("bid", Ty::Scalar(DType::I32))); // 2
    k.vars.push(Var::new("base", Ty::Scalar(DType::I32))); // 3
    let s = |dst: Option<u32>, inst| Stmt::Inst {
        dst,
        inst,
        span: Span::NONE,
    };
    k.body = vec![
        s(Some(2), Inst::BlockIdx { axis: 0 }),
        s(
            Some(3),
            Inst::Binary {
                op: tilus_core::ir::BinOp::Mul,
                lhs: Operand::Var(2),
                rhs: Operand::Imm(256, DType::I32),
            },
        ),
        s(
            None,
            Inst::Store {
                access: Access {
                    mem: 0,
                    shape: vec![256],
                    coords: vec![Coord::Pos {
                        axis: 0,
                        offset: Operand::Var(3),
                    }],
                    mask: None,
                    check_bounds: true,
                },
                value: Operand::Var(1),
            },
        ),
    ];
    k
}

/// `spin()`: `while true {}` (for the emulator's step limit).
pub fn spin_kernel() -> Kernel {
    let mut k = empty_kernel("spin", 32, &[]);
    k.body = vec![Stmt::While {
        cond_block: vec![],
        cond: Operand::Imm(1, DType::Bool),
        body: vec![],
        span: Span::NONE,
    }];
    k
}

/// GPU 0 when built with `cuda` and one opens; `None` (skip) otherwise, except that with
/// `TILUS_REQUIRE_GPU=1` a GPU that does not open is a test failure.
pub fn gpu() -> Option<tilus_runtime::Device> {
    #[cfg(feature = "cuda")]
    match tilus_runtime::Device::cuda(0) {
        Ok(d) => return Some(d),
        Err(e) => eprintln!("no GPU: {e}"),
    }
    assert_ne!(
        std::env::var("TILUS_REQUIRE_GPU").as_deref(),
        Ok("1"),
        "TILUS_REQUIRE_GPU=1 but no GPU could be opened (built with `--features cuda`?)"
    );
    None
}

/// The devices a backend-independent test runs on: the emulator, then the GPU if [`gpu`] has
/// one.
pub fn devices() -> Vec<tilus_runtime::Device> {
    let mut v = vec![tilus_runtime::Device::emulator()];
    v.extend(gpu());
    v
}
