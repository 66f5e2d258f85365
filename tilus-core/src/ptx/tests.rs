//! Hand-built IR kernels: every emitted module must assemble with ptxas for sm_70, sm_80 and
//! sm_90 (those at or above its `.target`), and generation must be deterministic.

use super::generate;
use crate::ir::*;
use tilus_testkit::ptxas::{assemble, AssembleOutcome};

/// A small IR builder: variables, instructions, and nested blocks through closures.
struct B {
    k: Kernel,
    blocks: Vec<Block>,
}

const I: DType = DType::I32;
const BOOL: DType = DType::Bool;

fn imm(c: i32) -> Operand {
    Operand::i32(c)
}
fn v(x: VarId) -> Operand {
    Operand::Var(x)
}
fn tile(dtype: DType, shape: &[usize]) -> Ty {
    Ty::Tile {
        dtype,
        shape: shape.to_vec(),
    }
}
fn pos(axis: usize, offset: Operand) -> Coord {
    Coord::Pos { axis, offset }
}
fn acc(
    mem: VarId,
    shape: &[usize],
    coords: Vec<Coord>,
    mask: Option<Operand>,
    check_bounds: bool,
) -> Access {
    Access {
        mem,
        shape: shape.to_vec(),
        coords,
        mask,
        check_bounds,
    }
}
/// Identity coordinates with zero offsets.
fn ident(mem: VarId, shape: &[usize], check: bool) -> Access {
    acc(
        mem,
        shape,
        (0..shape.len()).map(|k| pos(k, imm(0))).collect(),
        None,
        check,
    )
}

impl B {
    fn new(name: &str, threads: u32, params: &[(&str, ParamKind)]) -> B {
        let mut vars = Vec::new();
        for (n, kind) in params {
            let ty = match kind {
                ParamKind::Tensor(d) => Ty::Global { dtype: *d, rank: 1 },
                ParamKind::Scalar(d) => Ty::Scalar(*d),
            };
            vars.push(Var::new(n.to_string(), ty));
        }
        let params = params
            .iter()
            .map(|(n, k)| Param {
                name: n.to_string(),
                kind: k.clone(),
            })
            .collect();
        let k = Kernel {
            name: name.into(),
            threads,
            target: Target::DEFAULT,
            cluster: Grid::new(1, 1, 1),
            min_blocks_per_sm: None,
            vector_width: None,
            params,
            vars,
            shared_bytes: 0,
            body: vec![],
        };
        B {
            k,
            blocks: vec![vec![]],
        }
    }
    fn var(&mut self, name: &str, ty: Ty) -> VarId {
        self.k.vars.push(Var::new(name, ty));
        (self.k.vars.len() - 1) as VarId
    }
    fn push(&mut self, s: Stmt) {
        self.blocks.last_mut().unwrap().push(s);
    }
    fn set(&mut self, dst: VarId, inst: Inst) {
        self.push(Stmt::Inst {
            dst: Some(dst),
            inst,
            span: Span::NONE,
        });
    }
    fn def(&mut self, name: &str, ty: Ty, inst: Inst) -> VarId {
        let d = self.var(name, ty);
        self.set(d, inst);
        d
    }
    fn eff(&mut self, inst: Inst) {
        self.push(Stmt::Inst {
            dst: None,
            inst,
            span: Span::NONE,
        });
    }
    fn scalar(&mut self, name: &str, inst: Inst) -> VarId {
        self.def(name, Ty::Scalar(I), inst)
    }
    /// `dim(axis)` of a tensor (an i64) converted to i32.
    fn dim32(&mut self, name: &str, tensor: VarId, axis: usize) -> VarId {
        let d = self.def(name, Ty::Scalar(DType::I64), Inst::Dim { tensor, axis });
        self.scalar(name, Inst::Cast { x: v(d), dtype: I })
    }
    fn bin(&mut self, name: &str, ty: Ty, op: BinOp, lhs: Operand, rhs: Operand) -> VarId {
        self.def(name, ty, Inst::Binary { op, lhs, rhs })
    }
    /// A reduction of tile `x` to a scalar of type `d`.
    fn reduce(&mut self, name: &str, d: DType, op: ReduceOp, x: VarId) -> VarId {
        self.def(name, Ty::Scalar(d), Inst::Reduce { op, x })
    }
    fn alloc(&mut self, name: &str, shape: &[usize]) -> VarId {
        let offset = self.k.shared_bytes;
        self.k.shared_bytes += (4 * numel(shape)).div_ceil(16) * 16;
        self.def(
            name,
            Ty::Shared {
                dtype: I,
                shape: shape.to_vec(),
            },
            Inst::AllocShared {
                dtype: I,
                shape: shape.to_vec(),
                offset,
                distributed: false,
            },
        )
    }
    fn sub_block(&mut self, f: impl FnOnce(&mut B)) -> Block {
        self.blocks.push(vec![]);
        f(self);
        self.blocks.pop().unwrap()
    }
    fn for_(
        &mut self,
        var: VarId,
        start: Operand,
        end: Operand,
        step: Operand,
        f: impl FnOnce(&mut B),
    ) {
        let body = self.sub_block(f);
        self.push(Stmt::For(crate::ir::ForLoop {
            var,
            start,
            end,
            step,
            body,
            span: Span::NONE,
        }));
    }
    fn while_(&mut self, c: impl FnOnce(&mut B) -> Operand, f: impl FnOnce(&mut B)) {
        let mut cond = imm(0);
        let cond_block = self.sub_block(|b| cond = c(b));
        let body = self.sub_block(f);
        self.push(Stmt::While {
            cond_block,
            cond,
            body,
            span: Span::NONE,
        });
    }
    fn if_(&mut self, cond: Operand, t: impl FnOnce(&mut B), e: impl FnOnce(&mut B)) {
        let then = self.sub_block(t);
        let els = self.sub_block(e);
        self.push(Stmt::If {
            cond,
            then,
            els,
            span: Span::NONE,
        });
    }
    fn rmw(
        &mut self,
        dst: Option<VarId>,
        op: RmwOp,
        access: Access,
        values: Operand,
        sem: Sem,
        scope: Scope,
    ) {
        let compare = (op == RmwOp::Cas).then_some(imm(0));
        let inst = Inst::AtomicRmw {
            op,
            access,
            values,
            compare,
            sem,
            scope,
            inactive: InactiveResult::Zero,
            pairs: false,
        };
        self.push(Stmt::Inst {
            dst,
            inst,
            span: Span::NONE,
        });
    }
    fn finish(mut self) -> Kernel {
        self.k.body = self.blocks.pop().unwrap();
        self.k
    }
}

/// The histogram kernel of the performance target: 256 bins in shared memory, grid-stride over
/// 4096-element tiles, then one global RMW per bin.
pub(crate) fn histogram() -> Kernel {
    let mut b = B::new(
        "histogram",
        256,
        &[
            ("values", ParamKind::Tensor(I)),
            ("hist", ParamKind::Tensor(I)),
        ],
    );
    let smem = b.alloc("bins", &[256]);
    let zeros = b.def(
        "zeros",
        tile(I, &[256]),
        Inst::Full {
            shape: vec![256],
            value: imm(0),
        },
    );
    b.eff(Inst::Store {
        access: ident(smem, &[256], false),
        value: v(zeros),
    });
    b.eff(Inst::Sync);
    let bid = b.scalar("bid", Inst::BlockIdx { axis: 0 });
    let start = b.bin("start", Ty::Scalar(I), BinOp::Mul, v(bid), imm(4096));
    let grid = b.scalar("grid", Inst::GridDim { axis: 0 });
    let step = b.bin("step", Ty::Scalar(I), BinOp::Mul, v(grid), imm(4096));
    let len = b.dim32("len", 0, 0);
    let i = b.var("i", Ty::Scalar(I));
    b.for_(i, v(start), v(len), v(step), |b| {
        let t = b.def(
            "t",
            tile(I, &[4096]),
            Inst::Load {
                access: acc(0, &[4096], vec![pos(0, v(i))], None, true),
                other: imm(0),
            },
        );
        b.rmw(
            None,
            RmwOp::Add,
            acc(smem, &[4096], vec![Coord::Index(v(t))], None, true),
            imm(1),
            Sem::Relaxed,
            Scope::Cta,
        );
    });
    b.eff(Inst::Sync);
    let h = b.def(
        "h",
        tile(I, &[256]),
        Inst::Load {
            access: ident(smem, &[256], false),
            other: imm(0),
        },
    );
    b.rmw(
        None,
        RmwOp::Add,
        ident(1, &[256], true),
        v(h),
        Sem::Relaxed,
        Scope::Gpu,
    );
    b.finish()
}

/// A kernel touching every instruction and statement form (its parts below, in order).
fn everything(target: Target) -> Kernel {
    let mut b = B::new(
        "everything",
        256,
        &[
            ("a", ParamKind::Tensor(I)),
            ("out", ParamKind::Tensor(I)),
            ("n", ParamKind::Scalar(I)),
            ("flag", ParamKind::Scalar(BOOL)),
        ],
    );
    b.k.target = target;
    let mut tiles = everything_tiles(&mut b);
    everything_elementwise(&mut b, &mut tiles);
    let sums = everything_reductions(&mut b, &tiles);
    let gs = everything_stores_and_gather(&mut b, &tiles, sums.sb);
    everything_control_flow(&mut b, sums.any);
    everything_atomics(&mut b, &sums, gs);
    b.finish()
}

/// The parameters of `everything`.
const A: VarId = 0;
const OUT: VarId = 1;
const N: VarId = 2;
const FLAG: VarId = 3;

/// The tiles of `everything`'s element-wise part.
struct Tiles {
    grid: VarId,
    /// The 2-D view's dim 1.
    d1: VarId,
    bc: VarId,
    bc2: VarId,
    ints: Vec<VarId>,
    bools: Vec<VarId>,
}

/// What `everything`'s reductions give.
struct Sums {
    sb: VarId,
    total: VarId,
    any: VarId,
    all: VarId,
    cnt: VarId,
}

/// A 2-D view and a load through it, and broadcasts.
fn everything_tiles(b: &mut B) -> Tiles {
    use BinOp::*;
    let a = A;
    let t16 = tile(I, &[16, 16]);
    let bid = b.scalar("bid", Inst::BlockIdx { axis: 0 });
    let grid = b.scalar("grid", Inst::GridDim { axis: 0 });
    let len = b.dim32("len", a, 0);
    let off = b.bin("off", Ty::Scalar(I), Mul, v(bid), imm(256));
    let rows = b.bin("rows", Ty::Scalar(I), Div, v(len), imm(16));
    // 2-D view and a 2-D load through it.
    let va = b.def(
        "va",
        Ty::Global { dtype: I, rank: 2 },
        Inst::View {
            src: a,
            offset: v(off),
            shape: vec![v(rows), imm(16)],
        },
    );
    let d1 = b.dim32("d1", va, 1);
    let x = b.def(
        "x",
        t16.clone(),
        Inst::Load {
            access: ident(va, &[16, 16], true),
            other: imm(-1),
        },
    );
    let ar = b.def(
        "ar",
        tile(I, &[16]),
        Inst::Arange {
            n: 16,
            dtype: DType::I32,
        },
    );
    // `ar` as a column and as a row, each broadcast to [16, 16].
    let [bc, bc2] =
        [("col", [16, 1], "bc"), ("row", [1, 16], "bc2")].map(|(name, shape, bname)| {
            let r = b.def(
                name,
                tile(I, &shape),
                Inst::Reshape {
                    x: ar,
                    shape: shape.to_vec(),
                },
            );
            b.def(
                bname,
                t16.clone(),
                Inst::Broadcast {
                    x: r,
                    shape: vec![16, 16],
                },
            )
        });
    Tiles {
        grid,
        d1,
        bc,
        bc2,
        ints: vec![x, bc, bc2],
        bools: Vec::new(),
    }
}

/// Every element-wise operation on `i32` and `bool` tiles, of the loaded tile `x` (the first
/// of `tiles.ints`) and the broadcasts.
fn everything_elementwise(b: &mut B, tiles: &mut Tiles) {
    use BinOp::*;
    let (n, flag) = (N, FLAG);
    let t16 = tile(I, &[16, 16]);
    let b16 = tile(BOOL, &[16, 16]);
    let (x, bc) = (tiles.ints[0], tiles.bc);
    let d1 = tiles.d1;
    let ints = &mut tiles.ints;
    let bools = &mut tiles.bools;
    for (k, op) in [Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Min, Max]
        .into_iter()
        .enumerate()
    {
        let rhs = if k % 2 == 0 { v(bc) } else { v(d1) };
        ints.push(b.bin("e", t16.clone(), op, v(x), rhs));
    }
    for op in [Eq, Ne, Lt, Le, Gt, Ge] {
        bools.push(b.bin("c", b16.clone(), op, v(x), v(bc)));
    }
    for op in [And, Or, Xor, Eq, Ne, Lt, Ge] {
        bools.push(b.bin("l", b16.clone(), op, v(bools[0]), v(bools[1])));
    }
    bools.push(b.bin("lf", b16.clone(), And, v(bools[2]), v(flag)));
    bools.push(b.bin("lt", b16.clone(), Or, v(bools[3]), Operand::bool(true)));
    bools.push(b.def(
        "nb",
        b16.clone(),
        Inst::Unary {
            op: UnOp::Not,
            x: v(bools[4]),
        },
    ));
    ints.push(b.def(
        "ng",
        t16.clone(),
        Inst::Unary {
            op: UnOp::Neg,
            x: v(x),
        },
    ));
    ints.push(b.def(
        "nt",
        t16.clone(),
        Inst::Unary {
            op: UnOp::Not,
            x: v(x),
        },
    ));
    ints.push(b.def(
        "sel",
        t16.clone(),
        Inst::Select {
            cond: v(bools[0]),
            a: v(x),
            b: imm(7),
        },
    ));
    bools.push(b.def(
        "selb",
        b16.clone(),
        Inst::Select {
            cond: v(flag),
            a: v(bools[1]),
            b: v(bools[2]),
        },
    ));
    ints.push(b.def(
        "ci",
        t16.clone(),
        Inst::Cast {
            x: v(bools[3]),
            dtype: I,
        },
    ));
    bools.push(b.def(
        "cb",
        b16.clone(),
        Inst::Cast {
            x: v(x),
            dtype: BOOL,
        },
    ));
    let full = b.def(
        "full",
        t16.clone(),
        Inst::Full {
            shape: vec![16, 16],
            value: v(n),
        },
    );
    ints.push(full);
}

/// Scalar arithmetic and the reductions of every op, of `i32` and `bool` tiles.
fn everything_reductions(b: &mut B, tiles: &Tiles) -> Sums {
    use BinOp::*;
    let (n, flag) = (N, FLAG);
    let (grid, ints, bools) = (tiles.grid, &tiles.ints, &tiles.bools);
    let t16 = tile(I, &[16, 16]);
    // Scalar arithmetic and comparisons.
    let s1 = b.bin("s1", Ty::Scalar(I), Add, v(n), v(grid));
    let sc = b.bin("sc", Ty::Scalar(BOOL), Lt, v(s1), imm(3));
    let sb = b.bin("sb", Ty::Scalar(BOOL), Eq, v(sc), v(flag));
    // Reductions of every op, of i32 and bool tiles.
    let mut total = b.def("total", Ty::Scalar(I), Inst::Mov(imm(0)));
    for (k, op) in [
        ReduceOp::Sum,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::Or,
        ReduceOp::And,
    ]
    .into_iter()
    .enumerate()
    {
        let r = b.reduce("r", I, op, ints[k * 3 % ints.len()]);
        total = b.bin("total", Ty::Scalar(I), Add, v(total), v(r));
    }
    let any = b.reduce("any", BOOL, ReduceOp::Or, bools[5]);
    let all = b.reduce("all", BOOL, ReduceOp::And, bools[6]);
    let ones = b.def(
        "ones",
        t16.clone(),
        Inst::Cast {
            x: v(bools[7]),
            dtype: I,
        },
    );
    let cnt = b.reduce("cnt", I, ReduceOp::Sum, ones);
    Sums {
        sb,
        total,
        any,
        all,
        cnt,
    }
}

/// A masked store through a 2-D view, and a gather from a shared tensor through index tiles
/// under a scalar mask; returns the gather's sum.
fn everything_stores_and_gather(b: &mut B, tiles: &Tiles, sb: VarId) -> VarId {
    use BinOp::*;
    let out = OUT;
    let (bc, bc2, ints, bools) = (tiles.bc, tiles.bc2, &tiles.ints, &tiles.bools);
    let t16 = tile(I, &[16, 16]);
    // Sum everything into one tile and store it through a 2-D view of `out` (mask tile).
    let sum = b.def("sum", t16.clone(), Inst::Mov(v(ints[0])));
    for &t in &ints[1..] {
        let s = b.bin("sum", t16.clone(), Add, v(sum), v(t));
        b.set(sum, Inst::Mov(v(s)));
    }
    let vo = b.def(
        "vo",
        Ty::Global { dtype: I, rank: 2 },
        Inst::View {
            src: out,
            offset: imm(3),
            shape: vec![imm(16), imm(16)],
        },
    );
    b.eff(Inst::Store {
        access: acc(
            vo,
            &[16, 16],
            vec![pos(0, imm(0)), pos(1, imm(0))],
            Some(v(bools[8])),
            true,
        ),
        value: v(sum),
    });
    // Shared 2-D tensor, gather through index tiles, scalar mask.
    let sm = b.alloc("sm", &[16, 16]);
    b.eff(Inst::Store {
        access: ident(sm, &[16, 16], false),
        value: v(bc),
    });
    b.eff(Inst::Sync);
    let g = b.def(
        "g",
        t16.clone(),
        Inst::Load {
            access: acc(
                sm,
                &[16, 16],
                vec![Coord::Index(v(bc2)), Coord::Index(v(bc))],
                Some(v(sb)),
                true,
            ),
            other: imm(0),
        },
    );
    b.reduce("gs", I, ReduceOp::Sum, g)
}

/// Loops (a mutable tile carried by a for loop; while with break inside if) and fences.
fn everything_control_flow(b: &mut B, any: VarId) {
    use BinOp::*;
    let (a, out, n) = (A, OUT, N);
    // Loops: a mutable tile carried by a for loop; while with break inside if.
    let carry = b.def(
        "carry",
        tile(I, &[1000]),
        Inst::Full {
            shape: vec![1000],
            value: imm(0),
        },
    );
    let i = b.var("i", Ty::Scalar(I));
    b.for_(i, imm(0), v(n), imm(1000), |b| {
        let t = b.def(
            "t",
            tile(I, &[1000]),
            Inst::Load {
                access: acc(a, &[1000], vec![pos(0, v(i))], None, true),
                other: imm(0),
            },
        );
        let s = b.bin("s", tile(I, &[1000]), Add, v(carry), v(t));
        b.set(carry, Inst::Mov(v(s)));
    });
    b.eff(Inst::Store {
        access: acc(out, &[1000], vec![pos(0, v(n))], None, true),
        value: v(carry),
    });
    let w = b.def("w", Ty::Scalar(I), Inst::Mov(imm(0)));
    b.while_(
        |b| {
            let c = b.bin("wc", Ty::Scalar(BOOL), Lt, v(w), v(n));
            v(c)
        },
        |b| {
            let w1 = b.bin("w1", Ty::Scalar(I), Add, v(w), imm(1));
            b.set(w, Inst::Mov(v(w1)));
            let hit = b.bin("hit", Ty::Scalar(BOOL), Eq, v(w), imm(5));
            b.if_(v(hit), |b| b.push(Stmt::Break { span: Span::NONE }), |_| {});
        },
    );
    b.if_(
        v(any),
        |b| {
            b.eff(Inst::Fence {
                sem: Sem::AcqRel,
                scope: Scope::Gpu,
            })
        },
        |b| {
            b.eff(Inst::Fence {
                sem: Sem::Acquire,
                scope: Scope::Cta,
            })
        },
    );
}

/// Atomics: loads and stores with orders, CAS with a used result, EXCH without, a tile [1]
/// RMW, every RMW op on shared memory, and scalar atomic loads.
fn everything_atomics(b: &mut B, sums: &Sums, gs: VarId) {
    let out = OUT;
    let total = sums.total;
    let target = b.k.target;
    // Atomics: loads/stores with orders, CAS with used result, EXCH without, tile [1] RMW.
    let t256 = tile(I, &[256]);
    let al = b.def(
        "al",
        t256.clone(),
        Inst::AtomicLoad {
            access: ident(out, &[256], true),
            sem: Sem::Acquire,
            scope: Scope::Gpu,
        },
    );
    b.eff(Inst::AtomicStore {
        access: ident(out, &[256], true),
        value: v(al),
        sem: Sem::Release,
        scope: Scope::Gpu,
    });
    let shared_scope = if target == Target::SM_90 {
        Scope::Cluster
    } else {
        Scope::Cta
    };
    let sh = b.alloc("sh", &[256]);
    b.eff(Inst::AtomicStore {
        access: ident(sh, &[256], false),
        value: v(total),
        sem: Sem::Relaxed,
        scope: shared_scope,
    });
    let cas = b.var("cas", t256.clone());
    b.push(Stmt::Inst {
        dst: Some(cas),
        inst: Inst::AtomicRmw {
            op: RmwOp::Cas,
            access: ident(out, &[256], true),
            values: v(al),
            compare: Some(v(al)),
            sem: Sem::AcqRel,
            scope: Scope::Gpu,
            inactive: InactiveResult::Compare,
            pairs: false,
        },
        span: Span::NONE,
    });
    b.rmw(
        None,
        RmwOp::Exch,
        ident(out, &[256], true),
        v(cas),
        Sem::Relaxed,
        Scope::Gpu,
    );
    b.rmw(
        None,
        RmwOp::Add,
        ident(out, &[1], true),
        imm(1),
        Sem::Relaxed,
        Scope::Gpu,
    );
    everything_rmws(b, sums, gs, (sh, cas));
}

/// Every RMW op on shared memory with used results, RMWs with orders and scopes, and scalar
/// atomic loads.
/// `sh`: a shared `[256]` tensor; `cas`: the result of a CAS.
fn everything_rmws(b: &mut B, sums: &Sums, gs: VarId, (sh, cas): (VarId, VarId)) {
    use BinOp::*;
    let (a, out) = (A, OUT);
    let (all, cnt) = (sums.all, sums.cnt);
    let t256 = tile(I, &[256]);
    let shared_scope = if b.k.target == Target::SM_90 {
        Scope::Cluster
    } else {
        Scope::Cta
    };
    let mut last = cas;
    for op in [
        RmwOp::Sub,
        RmwOp::Min,
        RmwOp::Max,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
        RmwOp::Add,
    ] {
        let r = b.var("rr", t256.clone());
        b.rmw(
            Some(r),
            op,
            ident(sh, &[256], true),
            v(last),
            Sem::Relaxed,
            shared_scope,
        );
        last = r;
    }
    b.rmw(
        None,
        RmwOp::Sub,
        ident(out, &[300], true),
        v(cnt),
        Sem::Release,
        Scope::Sys,
    );
    b.rmw(
        None,
        RmwOp::Max,
        ident(out, &[300], true),
        v(gs),
        Sem::Acquire,
        Scope::Gpu,
    );
    let mixed = b.bin("mixed", Ty::Scalar(I), Add, v(gs), v(last));
    let _ = mixed;
    let al_sh = b.def(
        "al_sh",
        Ty::Scalar(I),
        Inst::AtomicLoad {
            access: ident(sh, &[1], true),
            sem: Sem::Relaxed,
            scope: Scope::Cta,
        },
    );
    let scal = b.def(
        "scal",
        Ty::Scalar(I),
        Inst::Load {
            access: acc(a, &[1], vec![pos(0, v(al_sh))], None, true),
            other: imm(9),
        },
    );
    let allb = b.def(
        "allb",
        Ty::Scalar(I),
        Inst::Cast {
            x: v(all),
            dtype: I,
        },
    );
    let fin = b.bin("fin", Ty::Scalar(I), Add, v(scal), v(allb));
    b.eff(Inst::Store {
        access: acc(out, &[1], vec![pos(0, imm(0))], None, true),
        value: v(fin),
    });
    b.eff(Inst::Sync);
}

fn check_assembles(k: &Kernel) -> String {
    let m = generate(k).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    let again = generate(k).unwrap();
    assert_eq!(m, again, "generation is not deterministic");
    for sm in [70, 80, 90].into_iter().filter(|&sm| sm >= k.target.0) {
        match assemble(&m.text, sm) {
            Ok(AssembleOutcome::Assembled { .. }) => {}
            Ok(AssembleOutcome::Skipped) => eprintln!("ptxas not found: skipped sm_{sm}"),
            Err(e) => panic!("{}: sm_{sm}: {e}\n{}", k.name, numbered(&m.text)),
        }
    }
    m.text
}

fn numbered(s: &str) -> String {
    s.lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} {l}\n", i + 1))
        .collect()
}

#[test]
fn histogram_assembles_and_uses_fast_forms() {
    let k = histogram();
    let text = check_assembles(&k);
    assert!(text.contains(
        ".visible .entry tk_histogram(\n\t.param .u64 tk_histogram$p0_ptr,\n\t.param .u64 tk_histogram$p0_len,"
    ));
    assert!(text.contains(".maxntid 256, 1, 1"));
    assert!(text.contains("red.relaxed.cta.shared.add.u32"), "{text}");
    assert!(text.contains("red.relaxed.gpu.global.add.u32"), "{text}");
    assert!(text.contains("ld.global.v4.s32"), "{text}");
    assert!(text.contains("bar.sync"));
    assert!(
        !text.contains("atom."),
        "no atom form when results are unused:\n{text}"
    );
    // The loop offset (block_idx + k * grid) * 4096 is provably 16-byte aligned: no run-time test.
    assert!(!text.contains("and.b32"), "{text}");
    // No scratch needed: shared bytes are the user's.
    assert_eq!(generate(&k).unwrap().shared_bytes, 1024);
}

#[test]
fn everything_assembles() {
    let k = everything(Target::DEFAULT);
    let text = check_assembles(&k);
    for s in [
        "shfl.sync.bfly.b32",
        "atom.acq_rel.gpu.global.cas.b32",
        "atom.relaxed.gpu.global.exch.b32",
        "ld.relaxed.gpu.global.s32",
        "st.release.gpu.global.s32",
        "fence.acq_rel.gpu",
        "fence.acq_rel.cta",
        "red.release.sys.global.add.u32",
        "atom.acquire.gpu.global.max.s32",
        "atom.relaxed.cta.shared.add.u32",
        "neg.s32",
        "bra.uni",
        "ld.global.v2.s32",
    ] {
        assert!(text.contains(s), "missing `{s}`");
    }
    let m = generate(&k).unwrap();
    assert!(m.shared_bytes > k.shared_bytes, "scratch is reported");
}

#[test]
fn everything_sm90_cluster() {
    let k = everything(Target::SM_90);
    let text = check_assembles(&k);
    assert!(text.contains(".target sm_90"));
    assert!(text.contains("st.relaxed.cluster.shared.s32"));
}

/// A warp folds 32-bit integers in one `redux.sync` from sm_80 on (every operator, `i32` and
/// `bool`), and by shuffles before: the same kernel at both targets.
#[test]
fn warp_folds_are_one_redux_from_sm80() {
    let new = check_assembles(&everything(Target(80)));
    for s in [
        "redux.sync.add.s32",
        "redux.sync.min.s32",
        "redux.sync.max.s32",
        "redux.sync.or.b32",
        "redux.sync.and.b32",
    ] {
        assert!(new.contains(s), "missing `{s}`");
    }
    let old = check_assembles(&everything(Target::DEFAULT));
    assert!(!old.contains("redux"), "sm_70 has no redux.sync");
    let folds = |t: &str| t.matches("shfl.sync.bfly").count();
    assert!(
        folds(&new) + 5 * 5 <= folds(&old),
        "each fold's five shuffles are gone: {} -> {}",
        folds(&old),
        folds(&new)
    );
}

#[test]
fn single_element_rmw_is_one_thread() {
    let mut b = B::new("one", 256, &[("c", ParamKind::Tensor(I))]);
    b.rmw(
        None,
        RmwOp::Add,
        ident(0, &[1], true),
        imm(1),
        Sem::Relaxed,
        Scope::Gpu,
    );
    let k = b.finish();
    let text = check_assembles(&k);
    // Exactly one predicated red; its upper limit is capped at the tile size (tid <= 0).
    assert_eq!(text.matches("red.relaxed.gpu.global.add.u32").count(), 1);
    assert!(text.contains("@%p"), "{text}");
    assert!(text.contains(", 1;\n"), "{text}");
}

#[test]
fn unaligned_offset_gets_runtime_test() {
    let mut b = B::new(
        "unaligned",
        128,
        &[("x", ParamKind::Tensor(I)), ("o", ParamKind::Scalar(I))],
    );
    let t = b.def(
        "t",
        tile(I, &[1024]),
        Inst::Load {
            access: acc(0, &[1024], vec![pos(0, v(1))], None, true),
            other: imm(0),
        },
    );
    b.eff(Inst::Store {
        access: acc(0, &[1024], vec![pos(0, imm(2))], None, false),
        value: v(t),
    });
    let k = b.finish();
    let text = check_assembles(&k);
    assert!(text.contains("and.b32"), "{text}");
    assert!(text.contains("ld.global.v4.s32"));
    // Offset 2 is not 16-byte aligned: the store has no vector path.
    assert!(!text.contains("st.global.v4.s32"), "{text}");
}

#[test]
fn codegen_never_panics_on_bad_references() {
    let mut b = B::new("bad", 64, &[]);
    let x = b.var("x", tile(I, &[4]));
    b.def("y", tile(I, &[4]), Inst::Mov(v(x)));
    assert!(generate(&b.finish()).is_err());
}

#[test]
#[ignore]
fn dump_histogram() {
    println!("{}", generate(&histogram()).unwrap().text);
}

/// Every 128-bit pair form: (type, space, op, sem, scope, result used) with runs of two
/// elements per thread, and for the runs of one (the `shfl` path) both ops and results on each
/// space and type; one module, assembled for sm_90.
#[test]
fn every_pair_form_assembles() {
    let types = [DType::I64, DType::U64, DType::F64];
    let params: Vec<(String, ParamKind)> = types
        .iter()
        .map(|d| (format!("x_{d}"), ParamKind::Tensor(*d)))
        .collect();
    let params: Vec<(&str, ParamKind)> = params
        .iter()
        .map(|(n, k)| (n.as_str(), k.clone()))
        .collect();
    let mut b = B::new("pairs", 32, &params);
    b.k.target = Target::SM_90;
    let mut shared = Vec::new();
    for d in types {
        let offset = b.k.shared_bytes;
        b.k.shared_bytes += 64 * 8;
        let shape = vec![64];
        shared.push(b.def(
            "s",
            Ty::Shared {
                dtype: d,
                shape: shape.clone(),
            },
            Inst::AllocShared {
                dtype: d,
                shape,
                offset,
                distributed: false,
            },
        ));
    }
    let mut count = 0;
    for (k, d) in types.into_iter().enumerate() {
        let one = Operand::Imm(crate::elem::canon(d, 1), d);
        for (mem, check) in [(k as VarId, true), (shared[k], false)] {
            for op in [RmwOp::Cas, RmwOp::Exch] {
                for sem in Sem::ALL {
                    for scope in Scope::ALL {
                        for (n, used) in [(64, false), (64, true), (32, true)] {
                            if n == 32 && (sem, scope) != (Sem::AcqRel, Scope::Gpu) {
                                continue;
                            }
                            let dst = used.then(|| b.var("old", tile(d, &[n])));
                            b.push(Stmt::Inst {
                                dst,
                                inst: Inst::AtomicRmw {
                                    op,
                                    access: ident(mem, &[n], check),
                                    values: one,
                                    compare: (op == RmwOp::Cas).then_some(one),
                                    sem,
                                    scope,
                                    inactive: InactiveResult::Zero,
                                    pairs: true,
                                },
                                span: Span::NONE,
                            });
                            count += 1;
                        }
                    }
                }
            }
        }
    }
    let text = check_assembles(&b.finish());
    let atoms = text.matches("cas.b128 \t").count() + text.matches("exch.b128 \t").count();
    assert_eq!(atoms, count, "one 128-bit atom per form");
    for form in [
        "atom.relaxed.cta.shared.cas.b128",
        "atom.acq_rel.sys.global.exch.b128",
        "atom.release.cluster.shared.exch.b128",
        "atom.acquire.gpu.global.cas.b128",
    ] {
        assert!(text.contains(form), "missing `{form}`");
    }
    assert!(
        text.contains(".version 8.4"),
        "`.sys` forms need PTX ISA 8.4"
    );
}
