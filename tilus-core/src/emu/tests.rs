//! Emulator tests over hand-built IR.

use super::*;
use crate::ir::*;
use std::sync::atomic::AtomicU32;
use std::time::Instant;

/// Builds a kernel's parameter and variable tables; statements are built with the free helpers.
struct Kb {
    params: Vec<Param>,
    vars: Vec<Var>,
    shared_bytes: usize,
}

impl Kb {
    fn new() -> Self {
        Kb {
            params: vec![],
            vars: vec![],
            shared_bytes: 0,
        }
    }
    fn param(&mut self, name: &str, kind: ParamKind, ty: Ty) -> VarId {
        assert_eq!(self.params.len(), self.vars.len(), "parameters come first");
        self.params.push(Param {
            name: name.into(),
            kind,
        });
        self.var(ty)
    }
    fn tensor(&mut self, name: &str) -> VarId {
        self.param(
            name,
            ParamKind::Tensor(DType::I32),
            Ty::Global {
                dtype: DType::I32,
                rank: 1,
            },
        )
    }
    fn scalar_param(&mut self, name: &str) -> VarId {
        self.param(name, ParamKind::Scalar(DType::I32), Ty::Scalar(DType::I32))
    }
    fn var(&mut self, ty: Ty) -> VarId {
        self.vars
            .push(Var::new(format!("_t{}", self.vars.len()), ty));
        (self.vars.len() - 1) as VarId
    }
    fn s(&mut self) -> VarId {
        self.var(Ty::Scalar(DType::I32))
    }
    fn b(&mut self) -> VarId {
        self.var(Ty::Scalar(DType::Bool))
    }
    fn t(&mut self, shape: &[usize]) -> VarId {
        self.var(Ty::Tile {
            dtype: DType::I32,
            shape: shape.to_vec(),
        })
    }
    fn bt(&mut self, shape: &[usize]) -> VarId {
        self.var(Ty::Tile {
            dtype: DType::Bool,
            shape: shape.to_vec(),
        })
    }
    fn g(&mut self, rank: usize) -> VarId {
        self.var(Ty::Global {
            dtype: DType::I32,
            rank,
        })
    }
    /// A shared allocation statement (appended to the window).
    fn shared(&mut self, shape: &[usize]) -> (VarId, Stmt) {
        let v = self.var(Ty::Shared {
            dtype: DType::I32,
            shape: shape.to_vec(),
        });
        let offset = self.shared_bytes;
        self.shared_bytes += (numel(shape) * 4).div_ceil(16) * 16;
        (
            v,
            inst(
                v,
                Inst::AllocShared {
                    dtype: DType::I32,
                    shape: shape.to_vec(),
                    offset,
                    distributed: false,
                },
            ),
        )
    }
    fn finish(self, body: Block) -> Kernel {
        Kernel {
            name: "test_kernel".into(),
            threads: 128,
            target: Target::DEFAULT,
            cluster: Grid::new(1, 1, 1),
            min_blocks_per_sm: None,
            vector_width: None,
            params: self.params,
            vars: self.vars,
            shared_bytes: self.shared_bytes,
            body,
        }
    }
}

fn imm(v: i32) -> Operand {
    Operand::i32(v)
}
fn bimm(b: bool) -> Operand {
    Operand::bool(b)
}
fn v(id: VarId) -> Operand {
    Operand::Var(id)
}
fn inst(dst: VarId, inst: Inst) -> Stmt {
    Stmt::Inst {
        dst: Some(dst),
        inst,
        span: Span::NONE,
    }
}
fn eff(inst: Inst) -> Stmt {
    Stmt::Inst {
        dst: None,
        inst,
        span: Span::NONE,
    }
}
fn bin(dst: VarId, op: BinOp, lhs: Operand, rhs: Operand) -> Stmt {
    inst(dst, Inst::Binary { op, lhs, rhs })
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
/// `out[k..k+len] = tile` (or a scalar at `k` with `len` 1), bounds-checked.
fn put(out: VarId, k: i32, len: usize, x: Operand) -> Stmt {
    eff(Inst::Store {
        access: acc(out, &[len], vec![pos(0, imm(k))], None, true),
        value: x,
    })
}
fn rmw(op: RmwOp, access: Access, values: Operand, compare: Option<Operand>, sem: Sem) -> Inst {
    Inst::AtomicRmw {
        op,
        access,
        values,
        compare,
        sem,
        scope: Scope::Gpu,
        inactive: InactiveResult::Zero,
        pairs: false,
    }
}
fn for_(var: VarId, start: Operand, end: Operand, step: Operand, body: Block) -> Stmt {
    Stmt::For(crate::ir::ForLoop {
        var,
        start,
        end,
        step,
        body,
        span: Span::NONE,
    })
}

fn mem(xs: &[i32]) -> Vec<AtomicU32> {
    xs.iter().map(|&x| AtomicU32::new(x as u32)).collect()
}
fn read(xs: &[AtomicU32]) -> Vec<i32> {
    xs.iter()
        .map(|x| x.load(Ordering::Relaxed) as i32)
        .collect()
}
fn strict() -> EmuOptions {
    EmuOptions {
        strict_scatter: true,
        max_loop_iterations: Some(10_000_000),
        ..Default::default()
    }
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

/// A histogram: each block accumulates its grid-strided tiles into a shared histogram with
/// shared atomics, then adds it to the global one.
fn histogram_kernel(tile: usize, bins: usize) -> Kernel {
    let mut k = Kb::new();
    let (data, n, hist) = (k.tensor("data"), k.scalar_param("n"), k.tensor("hist"));
    let (sh, alloc) = k.shared(&[bins]);
    let (bid, gd, start, stride, t) = (k.s(), k.s(), k.s(), k.s(), k.s());
    let (ar, idx, vals, hv) = (k.t(&[tile]), k.t(&[tile]), k.t(&[tile]), k.t(&[bins]));
    let m = k.bt(&[tile]);
    let tl = tile as i32;
    let body = vec![
        alloc,
        eff(Inst::Store {
            access: acc(sh, &[bins], vec![pos(0, imm(0))], None, false),
            value: imm(0),
        }),
        eff(Inst::Sync),
        inst(bid, Inst::BlockIdx { axis: 0 }),
        inst(gd, Inst::GridDim { axis: 0 }),
        bin(start, BinOp::Mul, v(bid), imm(tl)),
        bin(stride, BinOp::Mul, v(gd), imm(tl)),
        for_(
            t,
            v(start),
            v(n),
            v(stride),
            vec![
                inst(
                    ar,
                    Inst::Arange {
                        n: tile,
                        dtype: DType::I32,
                    },
                ),
                bin(idx, BinOp::Add, v(ar), v(t)),
                bin(m, BinOp::Lt, v(idx), v(n)),
                inst(
                    vals,
                    Inst::Load {
                        access: acc(data, &[tile], vec![Coord::Index(v(idx))], None, true),
                        other: imm(0),
                    },
                ),
                eff(Inst::AtomicRmw {
                    op: RmwOp::Add,
                    access: acc(sh, &[tile], vec![Coord::Index(v(vals))], Some(v(m)), false),
                    values: imm(1),
                    compare: None,
                    sem: Sem::Relaxed,
                    scope: Scope::Cta,
                    inactive: InactiveResult::Zero,
                    pairs: false,
                }),
            ],
        ),
        eff(Inst::Sync),
        inst(
            hv,
            Inst::Load {
                access: acc(sh, &[bins], vec![pos(0, imm(0))], None, false),
                other: imm(0),
            },
        ),
        eff(rmw(
            RmwOp::Add,
            acc(hist, &[bins], vec![pos(0, imm(0))], None, true),
            v(hv),
            None,
            Sem::Relaxed,
        )),
    ];
    k.finish(body)
}

fn run_histogram(n: usize, tile: usize, bins: usize, grid: u32, opts: &EmuOptions) -> f64 {
    let mut rng = XorShift(0x9e3779b97f4a7c15 ^ n as u64);
    let data: Vec<i32> = (0..n).map(|_| (rng.next() % bins as u32) as i32).collect();
    let mut want = vec![0i32; bins];
    for &x in &data {
        want[x as usize] += 1;
    }
    let kernel = histogram_kernel(tile, bins);
    let (d, h) = (mem(&data), mem(&vec![0; bins]));
    let t0 = Instant::now();
    launch(
        &kernel,
        grid,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::i32(n as i32),
            EmuArg::Tensor(GlobalMem::W32(&h)),
        ],
        opts,
    )
    .unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(read(&h), want, "n={n} tile={tile} grid={grid}");
    secs
}

#[test]
fn histogram_matches_cpu_count() {
    for (n, tile, grid) in [
        (1000, 128, 3),
        (4099, 256, 7),
        (1, 64, 4),
        (0, 64, 2),
        (100_003, 512, 16),
    ] {
        run_histogram(n, tile, 64, grid, &strict());
        run_histogram(
            n,
            tile,
            64,
            grid,
            &EmuOptions {
                workers: 1,
                ..strict()
            },
        );
    }
}

/// Run with `cargo test --release -p tilus-core histogram_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn histogram_speed() {
    for workers in [0, 1, 4, 16] {
        let opts = EmuOptions {
            workers,
            ..Default::default()
        };
        let secs = run_histogram(1 << 22, 1024, 256, 256, &opts);
        println!(
            "histogram 2^22 ints, grid 256, workers {workers}: {:.1} ms",
            secs * 1e3
        );
    }
}

#[test]
fn scatter_add_with_heavy_duplicates() {
    let (n, grid) = (1000usize, 4u32);
    let mut k = Kb::new();
    let (out, olds, sub) = (k.tensor("out"), k.tensor("olds"), k.tensor("sub"));
    let (ar, idx, old, bid, base) = (k.t(&[n]), k.t(&[n]), k.t(&[n]), k.s(), k.s());
    let body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        bin(base, BinOp::Mul, v(bid), imm(n as i32)),
        inst(
            ar,
            Inst::Arange {
                n,
                dtype: DType::I32,
            },
        ),
        bin(idx, BinOp::Rem, v(ar), imm(4)),
        inst(
            old,
            rmw(
                RmwOp::Add,
                acc(out, &[n], vec![Coord::Index(v(idx))], None, true),
                v(ar),
                None,
                Sem::AcqRel,
            ),
        ),
        eff(rmw(
            RmwOp::Sub,
            acc(sub, &[n], vec![Coord::Index(v(idx))], None, true),
            v(ar),
            None,
            Sem::Relaxed,
        )),
        eff(Inst::Store {
            access: acc(olds, &[n], vec![pos(0, v(base))], None, true),
            value: v(old),
        }),
    ];
    let kernel = k.finish(body);
    for grid in [1, grid] {
        let (o, ol, s) = (mem(&[0; 4]), mem(&vec![0; n * grid as usize]), mem(&[7; 4]));
        let args = [
            EmuArg::Tensor(GlobalMem::W32(&o)),
            EmuArg::Tensor(GlobalMem::W32(&ol)),
            EmuArg::Tensor(GlobalMem::W32(&s)),
        ];
        launch(&kernel, grid, &args, &strict()).unwrap();
        let per: Vec<i32> = (0..4)
            .map(|j| (0..n as i32).filter(|i| i % 4 == j).sum::<i32>() * grid as i32)
            .collect();
        assert_eq!(read(&o), per);
        assert_eq!(read(&s), per.iter().map(|p| 7 - p).collect::<Vec<_>>());
        let olds = read(&ol);
        if grid == 1 {
            // One block performs its elements in row-major order: each sees the sum before it.
            for (i, &o) in olds.iter().enumerate() {
                let want: i32 = (0..i as i32).filter(|p| p % 4 == i as i32 % 4).sum();
                assert_eq!(o, want, "element {i}");
            }
        } else {
            // Each pre-value at one address is distinct (every add changed it, all values > 0
            // except element 0's).
            for j in 0..4 {
                let mut seen: Vec<i32> = (0..olds.len())
                    .filter(|i| i % 4 == j)
                    .map(|i| olds[i])
                    .collect();
                seen.sort();
                let len = seen.len();
                seen.dedup();
                assert!(
                    seen.len() >= len - grid as usize,
                    "address {j}: repeated pre-values"
                );
            }
        }
    }
}

/// Element-wise RMWs of several blocks on the same cells: every returned value must be a value
/// the cell really held.
#[test]
fn elementwise_cas_exch_min_max_return_valid_pre_values() {
    const N: usize = 256;
    const GRID: u32 = 8;
    for op in [RmwOp::Cas, RmwOp::Exch, RmwOp::Min, RmwOp::Max] {
        let mut k = Kb::new();
        let (x, res) = (k.tensor("x"), k.tensor("res"));
        let (bid, base, val) = (k.s(), k.s(), k.s());
        let (ar, vals, old) = (k.t(&[N]), k.t(&[N]), k.t(&[N]));
        // Block b writes value(b, j) = (b * 37 + j * 11) % 1000 - 300 (Cas: b + 1).
        let mut body = vec![
            inst(bid, Inst::BlockIdx { axis: 0 }),
            bin(base, BinOp::Mul, v(bid), imm(N as i32)),
            inst(
                ar,
                Inst::Arange {
                    n: N,
                    dtype: DType::I32,
                },
            ),
            bin(val, BinOp::Mul, v(bid), imm(37)),
            bin(vals, BinOp::Mul, v(ar), imm(11)),
            bin(vals, BinOp::Add, v(vals), v(val)),
            bin(vals, BinOp::Rem, v(vals), imm(1000)),
            bin(vals, BinOp::Sub, v(vals), imm(300)),
        ];
        let (values, compare) = if op == RmwOp::Cas {
            body.push(bin(val, BinOp::Add, v(bid), imm(1)));
            (v(val), Some(imm(0)))
        } else {
            (v(vals), None)
        };
        body.push(inst(
            old,
            rmw(
                op,
                acc(x, &[N], vec![pos(0, imm(0))], None, false),
                values,
                compare,
                Sem::AcqRel,
            ),
        ));
        body.push(eff(Inst::Store {
            access: acc(res, &[N], vec![pos(0, v(base))], None, false),
            value: v(old),
        }));
        let kernel = k.finish(body);
        let init = if op == RmwOp::Cas { 0 } else { 500 };
        let (xm, rm) = (mem(&[init; N]), mem(&[0; N * GRID as usize]));
        launch(
            &kernel,
            GRID,
            &[
                EmuArg::Tensor(GlobalMem::W32(&xm)),
                EmuArg::Tensor(GlobalMem::W32(&rm)),
            ],
            &strict(),
        )
        .unwrap();
        let (fin, res) = (read(&xm), read(&rm));
        let value = |b: usize, j: usize| ((b * 37 + j * 11) % 1000) as i32 - 300;
        for j in 0..N {
            let olds: Vec<i32> = (0..GRID as usize).map(|b| res[b * N + j]).collect();
            let written: Vec<i32> = (0..GRID as usize).map(|b| value(b, j)).collect();
            match op {
                RmwOp::Cas => {
                    // Exactly one block saw 0 and won; everyone else saw the winner's value.
                    let winners: Vec<usize> =
                        (0..GRID as usize).filter(|&b| olds[b] == 0).collect();
                    assert_eq!(winners.len(), 1, "cell {j}: {olds:?}");
                    assert_eq!(fin[j], winners[0] as i32 + 1);
                    assert!(olds.iter().all(|&o| o == 0 || o == fin[j]));
                }
                RmwOp::Exch => {
                    // The chain of swaps: {init} + written == olds + {final} as multisets.
                    let mut a: Vec<i32> = written.clone();
                    a.push(init);
                    let mut b = olds.clone();
                    b.push(fin[j]);
                    a.sort();
                    b.sort();
                    assert_eq!(a, b, "cell {j}");
                }
                _ => {
                    let pick = |xs: &[i32]| {
                        if op == RmwOp::Min {
                            *xs.iter().min().unwrap()
                        } else {
                            *xs.iter().max().unwrap()
                        }
                    };
                    assert_eq!(fin[j], pick(&[pick(&written), init]));
                    for (b, &o) in olds.iter().enumerate() {
                        // A pre-value is init or a combination of other blocks' values, never
                        // the block's own value unless another block wrote it too.
                        let others: Vec<i32> = written
                            .iter()
                            .enumerate()
                            .filter(|&(c, _)| c != b)
                            .map(|(_, &w)| w)
                            .collect();
                        assert!(
                            o == init || others.contains(&o),
                            "cell {j}: block {b} saw {o}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn masks_and_bounds_checks_skip_elements() {
    let mut k = Kb::new();
    let (data, out) = (k.tensor("data"), k.tensor("out"));
    let (x, ar, r) = (k.t(&[16]), k.t(&[16]), k.t(&[16]));
    let even = k.bt(&[16]);
    let body = vec![
        inst(
            x,
            Inst::Load {
                access: acc(data, &[16], vec![pos(0, imm(0))], None, true),
                other: imm(-7),
            },
        ),
        put(out, 0, 16, v(x)),
        inst(
            ar,
            Inst::Arange {
                n: 16,
                dtype: DType::I32,
            },
        ),
        bin(r, BinOp::Rem, v(ar), imm(2)),
        bin(even, BinOp::Eq, v(r), imm(0)),
        bin(r, BinOp::Mul, v(ar), imm(10)),
        // Masked and bounds-checked: odd elements and elements past 20 are skipped.
        eff(Inst::Store {
            access: acc(out, &[16], vec![pos(0, imm(16))], Some(v(even)), true),
            value: v(r),
        }),
        // Masked off entirely with bounds checks off: no access, so no error.
        eff(Inst::Store {
            access: acc(
                out,
                &[16],
                vec![pos(0, imm(1000))],
                Some(bimm(false)),
                false,
            ),
            value: v(r),
        }),
    ];
    let kernel = k.finish(body);
    let data: Vec<i32> = (0..10).map(|i| i * 3).collect();
    let (d, o) = (mem(&data), mem(&[1; 20]));
    launch(
        &kernel,
        1,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ],
        &strict(),
    )
    .unwrap();
    let o = read(&o);
    let want_load: Vec<i32> = (0..16).map(|i| if i < 10 { i * 3 } else { -7 }).collect();
    assert_eq!(&o[..16], &want_load[..]);
    // out[16..20] = elements 0..4 of r where even: 0, (1 skipped), 20, (3 skipped).
    assert_eq!(&o[16..], &[0, 1, 20, 1]);
}

#[test]
fn unchecked_out_of_bounds_is_an_error_and_touches_nothing() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let ar = k.t(&[16]);
    let body = vec![
        inst(
            ar,
            Inst::Arange {
                n: 16,
                dtype: DType::I32,
            },
        ),
        eff(Inst::Store {
            access: acc(out, &[16], vec![pos(0, imm(0))], None, false),
            value: v(ar),
        }),
    ];
    let kernel = k.finish(body);
    let o = mem(&[-1; 10]);
    let e = launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap_err();
    assert!(
        matches!(&e, EmuError::OutOfBounds { element: 10, space, .. } if space == "global"),
        "{e}"
    );
    assert_eq!(
        read(&o),
        vec![-1; 10],
        "resolution happens before any write"
    );

    // Shared: coordinates are checked against the compile-time shape.
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[4, 4]);
    let x = k.t(&[4]);
    let body = vec![
        alloc,
        inst(
            x,
            Inst::Load {
                access: acc(
                    sh,
                    &[4],
                    vec![Coord::Index(imm(1)), pos(0, imm(2))],
                    None,
                    false,
                ),
                other: imm(0),
            },
        ),
        put(out, 0, 4, v(x)),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 4]);
    let e = launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap_err();
    assert!(
        matches!(&e, EmuError::OutOfBounds { element: 2, space, detail, .. } if space == "shared" && detail.contains("coordinate 1")),
        "{e}"
    );
}

#[test]
fn strict_scatter_reports_duplicates_else_last_writer_wins() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (ar, idx) = (k.t(&[16]), k.t(&[16]));
    let body = vec![
        inst(
            ar,
            Inst::Arange {
                n: 16,
                dtype: DType::I32,
            },
        ),
        bin(idx, BinOp::Rem, v(ar), imm(8)),
        eff(Inst::Store {
            access: acc(out, &[16], vec![Coord::Index(v(idx))], None, true),
            value: v(ar),
        }),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 8]);
    let e = launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap_err();
    assert_eq!(
        e,
        EmuError::DuplicateScatter {
            kernel: "test_kernel".into(),
            block: 0,
            index: 0,
            count: 2
        }
    );
    launch(
        &kernel,
        1,
        &[EmuArg::Tensor(GlobalMem::W32(&o))],
        &EmuOptions::default(),
    )
    .unwrap();
    assert_eq!(read(&o), (8..16).collect::<Vec<_>>());
}

#[test]
fn views_address_through_offset_and_dims_and_check_the_base_length() {
    let mut k = Kb::new();
    let (data, out) = (k.tensor("data"), k.tensor("out"));
    let (v2, v3) = (k.g(2), k.g(2));
    let (x, flat, y, d1) = (k.t(&[4, 8]), k.t(&[32]), k.t(&[4, 4]), k.s());
    let body = vec![
        // 5 + [4, 8] over a 30-element tensor: the last 7 elements fall outside the base.
        inst(
            v2,
            Inst::View {
                src: data,
                offset: imm(5),
                shape: vec![imm(4), imm(8)],
            },
        ),
        inst(
            x,
            Inst::Load {
                access: acc(
                    v2,
                    &[4, 8],
                    vec![pos(0, imm(0)), pos(1, imm(0))],
                    None,
                    true,
                ),
                other: imm(-1),
            },
        ),
        inst(flat, Inst::Reshape { x, shape: vec![32] }),
        put(out, 0, 32, v(flat)),
        // Columns 6..10 of a width-8 view: 8 and 9 are outside the view though inside the base.
        inst(
            y,
            Inst::Load {
                access: acc(
                    v2,
                    &[4, 4],
                    vec![pos(0, imm(0)), pos(1, imm(6))],
                    None,
                    true,
                ),
                other: imm(-2),
            },
        ),
        inst(
            flat,
            Inst::Reshape {
                x: y,
                shape: vec![16],
            },
        ),
        put(out, 32, 16, v(flat)),
        // A view of a view: offsets add up.
        inst(
            v3,
            Inst::View {
                src: v2,
                offset: imm(8),
                shape: vec![imm(2), imm(3)],
            },
        ),
        inst(
            d1,
            Inst::Dim {
                tensor: v3,
                axis: 1,
            },
        ),
        put(out, 48, 1, v(d1)),
        inst(
            y,
            Inst::Load {
                access: acc(
                    v3,
                    &[4, 4],
                    vec![pos(0, imm(0)), pos(1, imm(0))],
                    None,
                    true,
                ),
                other: imm(-3),
            },
        ),
        inst(
            flat,
            Inst::Reshape {
                x: y,
                shape: vec![16],
            },
        ),
        put(out, 49, 16, v(flat)),
    ];
    let kernel = k.finish(body);
    let data: Vec<i32> = (0..30).map(|i| 100 + i).collect();
    let (d, o) = (mem(&data), mem(&[0; 65]));
    launch(
        &kernel,
        1,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ],
        &strict(),
    )
    .unwrap();
    let o = read(&o);
    let want: Vec<i32> = (0..32)
        .map(|f| if 5 + f < 30 { 105 + f } else { -1 })
        .collect();
    assert_eq!(&o[..32], &want[..]);
    let want: Vec<i32> = (0..16)
        .map(|e| {
            let (r, c) = (e / 4, 6 + e % 4);
            if c < 8 && 5 + r * 8 + c < 30 {
                105 + r * 8 + c
            } else {
                -2
            }
        })
        .collect();
    assert_eq!(&o[32..48], &want[..]);
    assert_eq!(o[48], 3);
    let want: Vec<i32> = (0..16)
        .map(|e| {
            if e / 4 < 2 && e % 4 < 3 {
                113 + (e / 4) * 3 + e % 4
            } else {
                -3
            }
        })
        .collect();
    assert_eq!(&o[49..], &want[..]);
}

#[test]
fn tile_ops_broadcast_reduce_select_cast_and_arithmetic_edges() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (row, col, a, b, s, c) = (
        k.t(&[1, 4]),
        k.t(&[3, 1]),
        k.t(&[3, 4]),
        k.t(&[3, 4]),
        k.t(&[3, 4]),
        k.t(&[12]),
    );
    let (ar4, ar3, sum, mn, mx, bor, band, sc) = (
        k.t(&[4]),
        k.t(&[3]),
        k.s(),
        k.s(),
        k.s(),
        k.s(),
        k.s(),
        k.s(),
    );
    let (m, nm) = (k.bt(&[3, 4]), k.bt(&[3, 4]));
    let (bb, bany, ball) = (k.b(), k.b(), k.b());
    let body = vec![
        inst(
            ar4,
            Inst::Arange {
                n: 4,
                dtype: DType::I32,
            },
        ),
        inst(
            ar3,
            Inst::Arange {
                n: 3,
                dtype: DType::I32,
            },
        ),
        inst(
            row,
            Inst::Reshape {
                x: ar4,
                shape: vec![1, 4],
            },
        ),
        inst(
            col,
            Inst::Reshape {
                x: ar3,
                shape: vec![3, 1],
            },
        ),
        inst(
            a,
            Inst::Broadcast {
                x: row,
                shape: vec![3, 4],
            },
        ),
        inst(
            b,
            Inst::Broadcast {
                x: col,
                shape: vec![3, 4],
            },
        ),
        bin(s, BinOp::Mul, v(b), imm(10)),
        bin(s, BinOp::Add, v(s), v(a)), // s[r][c] = 10r + c
        inst(
            c,
            Inst::Reshape {
                x: s,
                shape: vec![12],
            },
        ),
        put(out, 0, 12, v(c)),
        inst(
            sum,
            Inst::Reduce {
                op: ReduceOp::Sum,
                x: s,
            },
        ),
        inst(
            mn,
            Inst::Reduce {
                op: ReduceOp::Min,
                x: s,
            },
        ),
        inst(
            mx,
            Inst::Reduce {
                op: ReduceOp::Max,
                x: s,
            },
        ),
        inst(
            bor,
            Inst::Reduce {
                op: ReduceOp::Or,
                x: s,
            },
        ),
        inst(
            band,
            Inst::Reduce {
                op: ReduceOp::And,
                x: s,
            },
        ),
        put(out, 12, 1, v(sum)),
        put(out, 13, 1, v(mn)),
        put(out, 14, 1, v(mx)),
        put(out, 15, 1, v(bor)),
        put(out, 16, 1, v(band)),
        // select(s > 15, s, -s), and a bool tile through Not, Reduce and Cast.
        bin(m, BinOp::Gt, v(s), imm(15)),
        inst(
            a,
            Inst::Unary {
                op: UnOp::Neg,
                x: v(s),
            },
        ),
        inst(
            b,
            Inst::Select {
                cond: v(m),
                a: v(s),
                b: v(a),
            },
        ),
        inst(
            c,
            Inst::Reshape {
                x: b,
                shape: vec![12],
            },
        ),
        put(out, 17, 12, v(c)),
        inst(
            nm,
            Inst::Unary {
                op: UnOp::Not,
                x: v(m),
            },
        ),
        inst(
            bany,
            Inst::Reduce {
                op: ReduceOp::Or,
                x: nm,
            },
        ),
        inst(
            ball,
            Inst::Reduce {
                op: ReduceOp::And,
                x: nm,
            },
        ),
        inst(
            sc,
            Inst::Cast {
                x: v(bany),
                dtype: DType::I32,
            },
        ),
        put(out, 29, 1, v(sc)),
        inst(
            sc,
            Inst::Cast {
                x: v(ball),
                dtype: DType::I32,
            },
        ),
        put(out, 30, 1, v(sc)),
        inst(
            a,
            Inst::Cast {
                x: v(nm),
                dtype: DType::I32,
            },
        ),
        inst(
            sum,
            Inst::Reduce {
                op: ReduceOp::Sum,
                x: a,
            },
        ),
        put(out, 31, 1, v(sum)),
        // Scalar arithmetic edges.
        bin(sc, BinOp::Div, imm(7), imm(0)),
        put(out, 32, 1, v(sc)),
        bin(sc, BinOp::Div, imm(i32::MIN), imm(-1)),
        put(out, 33, 1, v(sc)),
        bin(sc, BinOp::Rem, imm(-7), imm(3)),
        put(out, 34, 1, v(sc)),
        bin(sc, BinOp::Shl, imm(1), imm(33)),
        put(out, 35, 1, v(sc)),
        bin(sc, BinOp::Shr, imm(-8), imm(40)),
        put(out, 36, 1, v(sc)),
        bin(sc, BinOp::Shr, imm(-8), imm(1)),
        put(out, 37, 1, v(sc)),
        inst(
            sc,
            Inst::Unary {
                op: UnOp::Not,
                x: imm(5),
            },
        ),
        put(out, 38, 1, v(sc)),
        inst(
            bb,
            Inst::Cast {
                x: imm(-3),
                dtype: DType::Bool,
            },
        ),
        inst(
            sc,
            Inst::Select {
                cond: v(bb),
                a: imm(11),
                b: imm(22),
            },
        ),
        put(out, 39, 1, v(sc)),
        inst(
            sc,
            Inst::Unary {
                op: UnOp::Neg,
                x: imm(i32::MIN),
            },
        ),
        put(out, 40, 1, v(sc)),
        // Full and a tile-scalar comparison.
        inst(
            c,
            Inst::Full {
                shape: vec![12],
                value: imm(9),
            },
        ),
        inst(
            sum,
            Inst::Reduce {
                op: ReduceOp::Sum,
                x: c,
            },
        ),
        put(out, 41, 1, v(sum)),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 42]);
    launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap();
    let o = read(&o);
    let s: Vec<i32> = (0..12).map(|e| 10 * (e / 4) + e % 4).collect();
    assert_eq!(&o[..12], &s[..]);
    assert_eq!(o[12], s.iter().sum::<i32>());
    assert_eq!((o[13], o[14]), (0, 23));
    assert_eq!(o[15], s.iter().fold(0, |a, x| a | x));
    assert_eq!(o[16], s.iter().fold(-1, |a, x| a & x));
    let sel: Vec<i32> = s.iter().map(|&x| if x > 15 { x } else { -x }).collect();
    assert_eq!(&o[17..29], &sel[..]);
    assert_eq!(
        (o[29], o[30], o[31]),
        (1, 0, s.iter().filter(|&&x| x <= 15).count() as i32)
    );
    assert_eq!(&o[32..41], &[0, i32::MIN, -1, 0, -1, -4, !5, 11, i32::MIN]);
    assert_eq!(o[41], 108);
}

/// Block 1 publishes data with a release store of a flag; block 0 spins on an acquire load of
/// the flag, in the same launch, then copies the data. Needs both blocks in flight at once.
fn producer_consumer_kernel() -> Kernel {
    let mut k = Kb::new();
    let (data, flag, out) = (k.tensor("data"), k.tensor("flag"), k.tensor("out"));
    let (bid, f) = (k.s(), k.s());
    let (is_consumer, waiting) = (k.b(), k.b());
    let (ar, x) = (k.t(&[64]), k.t(&[64]));
    let flag_at0 = || acc(flag, &[1], vec![Coord::Index(imm(0))], None, false);
    let body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        bin(is_consumer, BinOp::Eq, v(bid), imm(0)),
        Stmt::If {
            cond: v(is_consumer),
            then: vec![
                Stmt::While {
                    cond_block: vec![
                        // A one-element atomic load into a scalar-typed variable.
                        inst(
                            f,
                            Inst::AtomicLoad {
                                access: flag_at0(),
                                sem: Sem::Acquire,
                                scope: Scope::Gpu,
                            },
                        ),
                        bin(waiting, BinOp::Eq, v(f), imm(0)),
                    ],
                    cond: v(waiting),
                    body: vec![],
                    span: Span::NONE,
                },
                inst(
                    x,
                    Inst::Load {
                        access: acc(data, &[64], vec![pos(0, imm(0))], None, false),
                        other: imm(0),
                    },
                ),
                put(out, 0, 64, v(x)),
            ],
            els: vec![
                inst(
                    ar,
                    Inst::Arange {
                        n: 64,
                        dtype: DType::I32,
                    },
                ),
                bin(ar, BinOp::Mul, v(ar), imm(2)),
                bin(ar, BinOp::Add, v(ar), imm(1)),
                put(data, 0, 64, v(ar)),
                eff(Inst::AtomicStore {
                    access: flag_at0(),
                    value: imm(1),
                    sem: Sem::Release,
                    scope: Scope::Gpu,
                }),
            ],
            span: Span::NONE,
        },
    ];
    k.finish(body)
}

#[test]
fn cross_block_producer_consumer_in_one_launch_terminates() {
    let kernel = producer_consumer_kernel();
    for _ in 0..50 {
        let (d, f, o) = (mem(&[0; 64]), mem(&[0]), mem(&[0; 64]));
        let opts = EmuOptions {
            max_loop_iterations: Some(200_000_000),
            ..strict()
        };
        launch(
            &kernel,
            2,
            &[
                EmuArg::Tensor(GlobalMem::W32(&d)),
                EmuArg::Tensor(GlobalMem::W32(&f)),
                EmuArg::Tensor(GlobalMem::W32(&o)),
            ],
            &opts,
        )
        .unwrap();
        assert_eq!(read(&o), (0..64).map(|i| 2 * i + 1).collect::<Vec<_>>());
    }
}

#[test]
fn step_limit_stops_a_spin_that_cannot_end() {
    // A grid of one block: block 0 spins for a producer that does not exist.
    let kernel = producer_consumer_kernel();
    let (d, f, o) = (mem(&[0; 64]), mem(&[0]), mem(&[0; 64]));
    let opts = EmuOptions {
        workers: 1,
        max_loop_iterations: Some(10_000),
        ..strict()
    };
    let e = launch(
        &kernel,
        1,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::Tensor(GlobalMem::W32(&f)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ],
        &opts,
    )
    .unwrap_err();
    assert_eq!(
        e,
        EmuError::StepLimit {
            kernel: "test_kernel".into(),
            block: 0,
            limit: 10_000
        }
    );
}

/// Block `b` waits (acquire spin on `flag[b + dir]`) for block `b + dir`, reads its value with
/// a weak load, and publishes its own (one more) with a release store of `flag[b]`; the block
/// without a predecessor in the grid starts the chain with 1.
fn chain_kernel() -> Kernel {
    chain_kernel_with(Sem::Release, Sem::Acquire, false)
}

/// [`chain_kernel`] with the flag stored with `store` and loaded with `load`; `fences`: a
/// release fence before the flag's store and an acquire fence after the spin.
fn chain_kernel_with(store: Sem, load: Sem, fences: bool) -> Kernel {
    let mut k = Kb::new();
    let (data, flag, dir) = (k.tensor("data"), k.tensor("flag"), k.scalar_param("dir"));
    let (bid, g, src, f, x) = (k.s(), k.s(), k.s(), k.s(), k.s());
    let (lo, hi, has_src, waiting) = (k.b(), k.b(), k.b(), k.b());
    let at = |t: VarId, i: VarId| acc(t, &[1], vec![Coord::Index(v(i))], None, false);
    let body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        inst(g, Inst::GridDim { axis: 0 }),
        bin(src, BinOp::Add, v(bid), v(dir)),
        bin(lo, BinOp::Ge, v(src), imm(0)),
        bin(hi, BinOp::Lt, v(src), v(g)),
        bin(has_src, BinOp::And, v(lo), v(hi)),
        inst(x, Inst::Mov(imm(0))),
        Stmt::If {
            cond: v(has_src),
            then: vec![
                Stmt::While {
                    cond_block: vec![
                        inst(
                            f,
                            Inst::AtomicLoad {
                                access: at(flag, src),
                                sem: load,
                                scope: Scope::Gpu,
                            },
                        ),
                        bin(waiting, BinOp::Eq, v(f), imm(0)),
                    ],
                    cond: v(waiting),
                    body: vec![],
                    span: Span::NONE,
                },
                fence_if(fences, Sem::Acquire),
                inst(
                    x,
                    Inst::Load {
                        access: at(data, src),
                        other: imm(0),
                    },
                ),
            ],
            els: vec![],
            span: Span::NONE,
        },
        bin(x, BinOp::Add, v(x), imm(1)),
        eff(Inst::Store {
            access: at(data, bid),
            value: v(x),
        }),
        fence_if(fences, Sem::Release),
        eff(Inst::AtomicStore {
            access: at(flag, bid),
            value: imm(1),
            sem: store,
            scope: Scope::Gpu,
        }),
    ];
    k.finish(body)
}

/// A fence of `sem` (`on`), or an empty `if`.
fn fence_if(on: bool, sem: Sem) -> Stmt {
    let fence = eff(Inst::Fence {
        sem,
        scope: Scope::Gpu,
    });
    Stmt::If {
        cond: bimm(on),
        then: if on { vec![fence] } else { vec![] },
        els: vec![],
        span: Span::NONE,
    }
}

/// A 64-block chain of producers and consumers (block `b` waits for block `b - 1`, and the
/// other way round: every block waits for a later one) completes on one and two workers: a
/// spinning block yields its worker.
#[test]
fn waiting_blocks_complete_on_fewer_workers_than_blocks() {
    let kernel = chain_kernel();
    let g = 64usize;
    for workers in [1, 2] {
        for dir in [-1, 1] {
            let (d, f) = (mem(&vec![0; g]), mem(&vec![0; g]));
            let opts = EmuOptions {
                workers,
                ..strict()
            };
            let args = [
                EmuArg::Tensor(GlobalMem::W32(&d)),
                EmuArg::Tensor(GlobalMem::W32(&f)),
                EmuArg::i32(dir),
            ];
            launch(&kernel, g as u32, &args, &opts).unwrap();
            let want: Vec<i32> = (0..g as i32)
                .map(|b| if dir < 0 { b + 1 } else { g as i32 - b })
                .collect();
            assert_eq!(read(&d), want, "workers {workers}, dir {dir}");
        }
    }
}

#[test]
fn an_error_in_one_block_stops_blocks_spinning_forever() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (bid, x) = (k.s(), k.t(&[4]));
    let bad = k.b();
    let body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        bin(bad, BinOp::Eq, v(bid), imm(5)),
        Stmt::If {
            cond: v(bad),
            then: vec![inst(
                x,
                Inst::Load {
                    access: acc(out, &[4], vec![pos(0, imm(-2))], None, false),
                    other: imm(0),
                },
            )],
            els: vec![Stmt::While {
                cond_block: vec![],
                cond: bimm(true),
                body: vec![],
                span: Span::NONE,
            }],
            span: Span::NONE,
        },
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 4]);
    let e = launch(
        &kernel,
        8,
        &[EmuArg::Tensor(GlobalMem::W32(&o))],
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, EmuError::OutOfBounds { block: 5, .. }), "{e}");
}

#[test]
fn loops_breaks_and_branches() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (i, total, count, j) = (k.s(), k.s(), k.s(), k.s());
    let (stop, more) = (k.b(), k.b());
    let body = vec![
        inst(total, Inst::Mov(imm(0))),
        // for i in (1..20).step_by(3) { if i >= 13 { break } total += i }
        for_(
            i,
            imm(1),
            imm(20),
            imm(3),
            vec![
                bin(stop, BinOp::Ge, v(i), imm(13)),
                Stmt::If {
                    cond: v(stop),
                    then: vec![Stmt::Break { span: Span::NONE }],
                    els: vec![],
                    span: Span::NONE,
                },
                bin(total, BinOp::Add, v(total), v(i)),
            ],
        ),
        put(out, 0, 1, v(total)),
        // Non-positive steps run zero iterations.
        inst(count, Inst::Mov(imm(0))),
        for_(
            j,
            imm(0),
            imm(10),
            imm(0),
            vec![bin(count, BinOp::Add, v(count), imm(1))],
        ),
        for_(
            j,
            imm(0),
            imm(10),
            imm(-1),
            vec![bin(count, BinOp::Add, v(count), imm(1))],
        ),
        // A range ending at i32::MAX stops instead of wrapping.
        for_(
            j,
            imm(i32::MAX - 5),
            imm(i32::MAX),
            imm(4),
            vec![bin(count, BinOp::Add, v(count), imm(100))],
        ),
        put(out, 1, 1, v(count)),
        // while j < 50 { j = j * 2 + 1 }
        inst(j, Inst::Mov(imm(1))),
        Stmt::While {
            cond_block: vec![bin(more, BinOp::Lt, v(j), imm(50))],
            cond: v(more),
            body: vec![
                bin(j, BinOp::Mul, v(j), imm(2)),
                bin(j, BinOp::Add, v(j), imm(1)),
            ],
            span: Span::NONE,
        },
        put(out, 2, 1, v(j)),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 3]);
    launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap();
    assert_eq!(read(&o), vec![1 + 4 + 7 + 10, 200, 63]);
}

#[test]
fn shared_memory_is_poisoned_per_block() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[4]);
    let (bid, x, at) = (k.s(), k.t(&[4]), k.s());
    let body = vec![
        alloc,
        inst(bid, Inst::BlockIdx { axis: 0 }),
        inst(
            x,
            Inst::Load {
                access: acc(sh, &[4], vec![pos(0, imm(0))], None, false),
                other: imm(0),
            },
        ),
        bin(at, BinOp::Mul, v(bid), imm(4)),
        // Each block its own words (blocks writing one global word would race).
        eff(Inst::Store {
            access: acc(out, &[4], vec![pos(0, v(at))], None, false),
            value: v(x),
        }),
        // Write shared after reading it: the next block on this worker must not see this.
        eff(Inst::Store {
            access: acc(sh, &[4], vec![pos(0, imm(0))], None, false),
            value: v(bid),
        }),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 12]);
    launch(
        &kernel,
        3,
        &[EmuArg::Tensor(GlobalMem::W32(&o))],
        &EmuOptions {
            workers: 1,
            ..strict()
        },
    )
    .unwrap();
    assert_eq!(read(&o), vec![SHARED_POISON; 12]);
}

#[test]
fn shared_rmw_inactive_results_and_cas() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[4]);
    let (ar, old, exp) = (k.t(&[8]), k.t(&[8]), k.t(&[8]));
    let body = vec![
        alloc,
        eff(Inst::Store {
            access: acc(sh, &[4], vec![pos(0, imm(0))], None, false),
            value: imm(5),
        }),
        inst(
            ar,
            Inst::Arange {
                n: 8,
                dtype: DType::I32,
            },
        ),
        bin(exp, BinOp::Add, v(ar), imm(3)), // expected 3..11: only element 2 (index 2) matches 5
        // Elements 4..8 are out of bounds (checked): they yield their compare operand.
        inst(
            old,
            Inst::AtomicRmw {
                op: RmwOp::Cas,
                access: acc(sh, &[8], vec![pos(0, imm(0))], None, true),
                values: imm(42),
                compare: Some(v(exp)),
                sem: Sem::AcqRel,
                scope: Scope::Cta,
                inactive: InactiveResult::Compare,
                pairs: false,
            },
        ),
        put(out, 0, 8, v(old)),
        inst(
            old,
            Inst::Load {
                access: acc(sh, &[8], vec![pos(0, imm(0))], None, true),
                other: imm(-1),
            },
        ),
        put(out, 8, 8, v(old)),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 16]);
    launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap();
    assert_eq!(
        read(&o),
        vec![5, 5, 5, 5, 7, 8, 9, 10, 5, 5, 42, 5, -1, -1, -1, -1]
    );
}

#[test]
fn argument_checks_and_empty_grid() {
    let mut k = Kb::new();
    k.tensor("x");
    k.scalar_param("n");
    let kernel = k.finish(vec![]);
    let x = mem(&[0]);
    assert!(matches!(
        launch(&kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&x))], &strict()),
        Err(EmuError::ArgCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        launch(&kernel, 1, &[EmuArg::i32(1), EmuArg::i32(1)], &strict()),
        Err(EmuError::ArgKind { index: 0, .. })
    ));
    assert!(matches!(
        launch(
            &kernel,
            1,
            &[
                EmuArg::Tensor(GlobalMem::W32(&x)),
                EmuArg::Tensor(GlobalMem::W32(&x))
            ],
            &strict()
        ),
        Err(EmuError::ArgKind { index: 1, .. })
    ));
    launch(
        &kernel,
        0,
        &[EmuArg::Tensor(GlobalMem::W32(&x)), EmuArg::i32(1)],
        &strict(),
    )
    .unwrap();
    launch(
        &kernel,
        1000,
        &[EmuArg::Tensor(GlobalMem::W32(&x)), EmuArg::i32(1)],
        &strict(),
    )
    .unwrap();
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (a, b) = (k.s(), k.t(&[4]));
    let cases: Vec<Block> = vec![
        vec![bin(a, BinOp::Add, v(a), imm(1))], // read before assignment
        vec![bin(a, BinOp::Add, v(99), imm(1))], // no such variable
        vec![inst(
            b,
            Inst::Reshape {
                x: out,
                shape: vec![4],
            },
        )], // a tensor as a value
        vec![Stmt::Break { span: Span::NONE }],
        vec![inst(
            b,
            Inst::Load {
                access: acc(out, &[4], vec![], None, true),
                other: imm(0),
            },
        )],
        vec![inst(
            b,
            Inst::AllocShared {
                dtype: DType::I32,
                shape: vec![4],
                offset: 0,
                distributed: false,
            },
        )],
    ];
    for body in cases {
        let kernel = Kb {
            params: k.params.clone(),
            vars: k.vars.clone(),
            shared_bytes: 0,
        }
        .finish(body);
        let o = mem(&[0; 4]);
        let e = launch(&kernel, 2, &[EmuArg::Tensor(GlobalMem::W32(&o))], &strict()).unwrap_err();
        assert!(matches!(e, EmuError::Malformed { .. }), "{e}");
    }
}

#[test]
fn kernel_survives_a_bytes_round_trip() {
    let kernel = Kernel::from_bytes(&histogram_kernel(64, 16).to_bytes()).unwrap();
    let (d, h) = (mem(&[1, 2, 3, 3, 15]), mem(&[0; 16]));
    launch(
        &kernel,
        2,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::i32(5),
            EmuArg::Tensor(GlobalMem::W32(&h)),
        ],
        &strict(),
    )
    .unwrap();
    let mut want = vec![0; 16];
    for i in [1, 2, 3, 3, 15] {
        want[i] += 1;
    }
    assert_eq!(read(&h), want);
}

/// Bytes that are not a whole kernel's IR are an error naming why, never a panic: another
/// format (the JSON of earlier versions), another version's magic, a cut or padded encoding.
#[test]
fn malformed_ir_bytes_are_errors() {
    let bytes = histogram_kernel(64, 16).to_bytes();
    assert!(bytes.starts_with(IR_MAGIC));
    assert_eq!(
        Kernel::from_bytes(b"{\"name\":\"k\"}"),
        Err(IrDecodeError::NotIr)
    );
    let mut other_version = b"tilus-ir 0.0.0\0".to_vec();
    other_version.extend_from_slice(&bytes[IR_MAGIC.len()..]);
    assert_eq!(
        Kernel::from_bytes(&other_version),
        Err(IrDecodeError::NotIr)
    );
    for cut in [
        IR_MAGIC.len(),
        IR_MAGIC.len() + 1,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let e = Kernel::from_bytes(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(e, IrDecodeError::Malformed(_)),
            "cut at {cut}: {e}"
        );
    }
    let mut padded = bytes.clone();
    padded.push(0);
    assert_eq!(Kernel::from_bytes(&padded), Err(IrDecodeError::Trailing(1)));
    assert!(IrDecodeError::NotIr
        .to_string()
        .contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn checked_gather_skips_negative_and_large_indices_and_uses_tile_other() {
    let mut k = Kb::new();
    let (data, out) = (k.tensor("data"), k.tensor("out"));
    let (ar, idx, oth, x) = (k.t(&[8]), k.t(&[8]), k.t(&[8]), k.t(&[8]));
    let body = vec![
        inst(
            ar,
            Inst::Arange {
                n: 8,
                dtype: DType::I32,
            },
        ),
        bin(idx, BinOp::Mul, v(ar), imm(3)),
        bin(idx, BinOp::Sub, v(idx), imm(6)), // -6, -3, 0, 3, 6, 9, 12, 15
        bin(oth, BinOp::Sub, imm(0), v(ar)),
        inst(
            x,
            Inst::Load {
                access: acc(data, &[8], vec![Coord::Index(v(idx))], None, true),
                other: v(oth),
            },
        ),
        put(out, 0, 8, v(x)),
    ];
    let kernel = k.finish(body);
    let (d, o) = (
        mem(&(0..10).map(|i| 10 * i).collect::<Vec<_>>()),
        mem(&[99; 8]),
    );
    launch(
        &kernel,
        1,
        &[
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ],
        &strict(),
    )
    .unwrap();
    assert_eq!(read(&o), vec![0, -1, 0, 30, 60, 90, -6, -7]);
}

// ---------------------------------------------------------------------------------------------
// Shared-memory race checking (`EmuOptions::check_races`).

fn races() -> EmuOptions {
    EmuOptions {
        check_races: true,
        ..strict()
    }
}

/// Run a one-output kernel (`out` of `len` words) on one block.
fn run_out(kernel: &Kernel, len: usize, opts: &EmuOptions) -> Result<Vec<i32>, EmuError> {
    let o = mem(&vec![0; len]);
    launch(kernel, 1, &[EmuArg::Tensor(GlobalMem::W32(&o))], opts)?;
    Ok(read(&o))
}

/// The race message, asserting it is one.
fn race_detail(r: Result<Vec<i32>, EmuError>) -> String {
    match r {
        Err(EmuError::SharedRace {
            kernel,
            block,
            detail,
        }) => {
            assert_eq!((kernel.as_str(), block), ("test_kernel", 0));
            assert!(
                detail.contains("add `sync()` between the two accesses"),
                "{detail}"
            );
            detail
        }
        other => panic!("expected a shared race, got {other:?}"),
    }
}

fn sh_load(dst: VarId, sh: VarId, shape: &[usize], coords: Vec<Coord>) -> Stmt {
    inst(
        dst,
        Inst::Load {
            access: acc(sh, shape, coords, None, false),
            other: imm(0),
        },
    )
}
fn sh_store(sh: VarId, shape: &[usize], coords: Vec<Coord>, value: Operand) -> Stmt {
    eff(Inst::Store {
        access: acc(sh, shape, coords, None, false),
        value,
    })
}

/// `buf[0..256] = arange(256)` (v = 2 on 128 threads: thread t writes 2t, 2t+1), optionally
/// `sync()`, then `out = buf[0..len]` read as a `[len]` tile.
fn store_then_load(sync: bool, len: usize) -> Kernel {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[256]);
    k.vars[sh as usize].name = "buf".into();
    let (a, y) = (k.t(&[256]), k.t(&[len]));
    let mut body = vec![
        alloc,
        inst(
            a,
            Inst::Arange {
                n: 256,
                dtype: DType::I32,
            },
        ),
        sh_store(sh, &[256], vec![pos(0, imm(0))], v(a)),
    ];
    if sync {
        body.push(eff(Inst::Sync));
    }
    body.push(sh_load(y, sh, &[len], vec![pos(0, imm(0))]));
    body.push(put(out, 0, len, v(y)));
    k.finish(body)
}

#[test]
fn race_store_then_load_with_another_layout_needs_a_sync() {
    let want: Vec<i32> = (0..128).collect();
    // Without race checking the emulator computes the "right" answer...
    let unchecked = EmuOptions {
        check_races: false,
        ..strict()
    };
    assert_eq!(
        run_out(&store_then_load(false, 128), 128, &unchecked).unwrap(),
        want
    );
    // ...but element 1 is written by thread 0 and read by thread 1.
    let d = race_detail(run_out(&store_then_load(false, 128), 128, &races()));
    assert!(
        d.starts_with(
            "read-after-write race on shared tensor `buf` (shape [256], allocated at byte 0"
        ),
        "{d}"
    );
    assert!(
        d.contains("thread 1 reads it after thread 0 wrote it"),
        "{d}"
    );
    assert!(
        d.contains("element [1], byte offset 4 of the window"),
        "{d}"
    );
    let e = EmuError::SharedRace {
        kernel: "k".into(),
        block: 3,
        detail: d,
    };
    assert!(e
        .to_string()
        .starts_with("kernel `k`, block 3: read-after-write"));
    // With the sync it passes.
    assert_eq!(
        run_out(&store_then_load(true, 128), 128, &races()).unwrap(),
        want
    );
    // Reading back with the same layout: every thread reads its own writes, no sync needed.
    let want: Vec<i32> = (0..256).collect();
    assert_eq!(
        run_out(&store_then_load(false, 256), 256, &races()).unwrap(),
        want
    );
}

/// Thread t stores `buf[t]`, then (optionally after a sync) a second op of kind `second` by
/// thread t touches `buf[127 - t]` (written by thread 127 - t).
fn reversed_second(sync: bool, second: &str) -> Kernel {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[128]);
    k.vars[sh as usize].name = "buf".into();
    let (a, rev, y) = (k.t(&[128]), k.t(&[128]), k.t(&[128]));
    let mut body = vec![
        alloc,
        inst(
            a,
            Inst::Arange {
                n: 128,
                dtype: DType::I32,
            },
        ),
        bin(rev, BinOp::Sub, imm(127), v(a)),
        sh_store(sh, &[128], vec![pos(0, imm(0))], v(a)),
    ];
    if sync {
        body.push(eff(Inst::Sync));
    }
    let at_rev = || acc(sh, &[128], vec![Coord::Index(v(rev))], None, false);
    body.push(match second {
        "store" => eff(Inst::Store {
            access: at_rev(),
            value: imm(7),
        }),
        "rmw" => eff(rmw(RmwOp::Add, at_rev(), imm(1000), None, Sem::Relaxed)),
        "atomic_store" => eff(Inst::AtomicStore {
            access: at_rev(),
            value: imm(7),
            sem: Sem::Relaxed,
            scope: Scope::Cta,
        }),
        "atomic_load" => inst(
            y,
            Inst::AtomicLoad {
                access: at_rev(),
                sem: Sem::Relaxed,
                scope: Scope::Cta,
            },
        ),
        "load" => inst(
            y,
            Inst::Load {
                access: at_rev(),
                other: imm(0),
            },
        ),
        _ => unreachable!(),
    });
    body.push(eff(Inst::Sync));
    if second == "load" || second == "atomic_load" {
        body.push(put(out, 0, 128, v(y)));
    } else {
        body.push(sh_load(y, sh, &[128], vec![pos(0, imm(0))]));
        body.push(put(out, 0, 128, v(y)));
    }
    k.finish(body)
}

#[test]
fn race_write_after_write_between_scatters_of_different_threads() {
    let d = race_detail(run_out(&reversed_second(false, "store"), 128, &races()));
    assert!(d.starts_with("write-after-write race"), "{d}");
    assert!(
        d.contains("thread 0 writes it after thread 127 wrote it"),
        "{d}"
    );
    assert_eq!(
        run_out(&reversed_second(true, "store"), 128, &races()).unwrap(),
        vec![7; 128]
    );
}

#[test]
fn race_atomic_against_plain_accesses() {
    let plus: Vec<i32> = (0..128).map(|i| i + 1000).collect();
    for second in ["rmw", "atomic_store", "atomic_load", "load"] {
        let d = race_detail(run_out(&reversed_second(false, second), 128, &races()));
        let kind = if second.contains("load") {
            "read-after-write"
        } else {
            "write-after-write"
        };
        assert!(d.starts_with(kind), "{second}: {d}");
        let fine = run_out(&reversed_second(true, second), 128, &races()).unwrap();
        let want: Vec<i32> = match second {
            "rmw" => plus.clone(),
            "atomic_store" => vec![7; 128],
            _ => (0..128).rev().collect(),
        };
        assert_eq!(fine, want, "{second}");
    }

    // Atomics of different threads on one word need no barrier among themselves, but a plain
    // read or write after them does.
    let atomics_then = |then: Option<&str>| {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (sh, alloc) = k.shared(&[128]);
        let (a, rev, y) = (k.t(&[128]), k.t(&[128]), k.t(&[128]));
        let at = |i| acc(sh, &[128], vec![Coord::Index(v(i))], None, false);
        let mut body = vec![
            alloc,
            inst(
                a,
                Inst::Arange {
                    n: 128,
                    dtype: DType::I32,
                },
            ),
            bin(rev, BinOp::Sub, imm(127), v(a)),
            sh_store(sh, &[128], vec![pos(0, imm(0))], imm(0)),
            eff(Inst::Sync),
            eff(rmw(RmwOp::Add, at(a), imm(1), None, Sem::Relaxed)),
            eff(rmw(RmwOp::Add, at(rev), imm(2), None, Sem::Relaxed)),
            inst(
                y,
                Inst::AtomicLoad {
                    access: at(rev),
                    sem: Sem::Relaxed,
                    scope: Scope::Cta,
                },
            ),
            eff(rmw(RmwOp::Add, at(a), imm(4), None, Sem::Relaxed)),
        ];
        match then {
            Some("load") => body.push(sh_load(y, sh, &[128], vec![Coord::Index(v(rev))])),
            Some("store") => body.push(sh_store(sh, &[128], vec![Coord::Index(v(rev))], imm(9))),
            _ => {}
        }
        body.push(eff(Inst::Sync));
        body.push(sh_load(y, sh, &[128], vec![pos(0, imm(0))]));
        body.push(put(out, 0, 128, v(y)));
        k.finish(body)
    };
    assert_eq!(
        run_out(&atomics_then(None), 128, &races()).unwrap(),
        vec![7; 128]
    );
    let d = race_detail(run_out(&atomics_then(Some("load")), 128, &races()));
    assert!(d.starts_with("read-after-write"), "{d}");
    let d = race_detail(run_out(&atomics_then(Some("store")), 128, &races()));
    assert!(d.starts_with("write-after-write"), "{d}");
}

#[test]
fn race_write_after_read() {
    // Thread t reads buf[127 - t], then writes buf[t] (which thread 127 - t read).
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[128]);
    let (a, rev, y) = (k.t(&[128]), k.t(&[128]), k.t(&[128]));
    let build = |k: &Kb, sync: bool, atomic_write: bool| {
        let mut body = vec![
            alloc.clone(),
            inst(
                a,
                Inst::Arange {
                    n: 128,
                    dtype: DType::I32,
                },
            ),
            bin(rev, BinOp::Sub, imm(127), v(a)),
            sh_store(sh, &[128], vec![pos(0, imm(0))], v(a)),
            eff(Inst::Sync),
            sh_load(y, sh, &[128], vec![Coord::Index(v(rev))]),
        ];
        if sync {
            body.push(eff(Inst::Sync));
        }
        let own = acc(sh, &[128], vec![pos(0, imm(0))], None, false);
        body.push(if atomic_write {
            eff(rmw(RmwOp::Exch, own, imm(5), None, Sem::Relaxed))
        } else {
            eff(Inst::Store {
                access: own,
                value: imm(5),
            })
        });
        body.push(put(out, 0, 128, v(y)));
        Kb {
            params: k.params.clone(),
            vars: k.vars.clone(),
            shared_bytes: k.shared_bytes,
        }
        .finish(body)
    };
    for atomic_write in [false, true] {
        let d = race_detail(run_out(&build(&k, false, atomic_write), 128, &races()));
        assert!(d.starts_with("write-after-read"), "{d}");
        assert!(
            d.contains("thread 0 ") && d.contains("after thread 127 read it"),
            "{d}"
        );
        let want: Vec<i32> = (0..128).rev().collect();
        assert_eq!(
            run_out(&build(&k, true, atomic_write), 128, &races()).unwrap(),
            want
        );
    }
}

/// A one-element tile lives on thread 0, which reads its own write back without a barrier; a
/// scalar (block-uniform) load is done by every thread, so it needs one.
#[test]
fn race_single_element_tile_and_scalar_loads() {
    let build = |sync: bool, scalar: bool| {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (sh, alloc) = k.shared(&[4]);
        let y = if scalar { k.s() } else { k.t(&[1]) };
        let mut body = vec![alloc, sh_store(sh, &[1], vec![pos(0, imm(2))], imm(42))];
        if sync {
            body.push(eff(Inst::Sync));
        }
        body.push(sh_load(y, sh, &[1], vec![pos(0, imm(2))]));
        body.push(put(out, 0, 1, v(y)));
        k.finish(body)
    };
    assert_eq!(
        run_out(&build(false, false), 1, &races()).unwrap(),
        vec![42]
    );
    assert_eq!(run_out(&build(true, true), 1, &races()).unwrap(), vec![42]);
    let d = race_detail(run_out(&build(false, true), 1, &races()));
    assert!(
        d.contains("every thread (a block-uniform scalar access"),
        "{d}"
    );
    assert!(d.contains("after thread 0 wrote it"), "{d}");
}

/// A `Reduce` over more than one warp contains barriers; over one warp it does not.
#[test]
fn race_reduce_barrier_orders_accesses_on_more_than_one_warp() {
    let build = |threads: u32| {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (sh, alloc) = k.shared(&[128]);
        let (a, rev, y, s) = (k.t(&[128]), k.t(&[128]), k.t(&[128]), k.s());
        let body = vec![
            alloc,
            inst(
                a,
                Inst::Arange {
                    n: 128,
                    dtype: DType::I32,
                },
            ),
            bin(rev, BinOp::Sub, imm(127), v(a)),
            sh_store(sh, &[128], vec![pos(0, imm(0))], v(a)),
            inst(
                s,
                Inst::Reduce {
                    op: ReduceOp::Sum,
                    x: a,
                },
            ),
            sh_load(y, sh, &[128], vec![Coord::Index(v(rev))]),
            bin(y, BinOp::Add, v(y), v(s)),
            put(out, 0, 128, v(y)),
        ];
        let mut kernel = k.finish(body);
        kernel.threads = threads;
        kernel
    };
    let want: Vec<i32> = (0..128).rev().map(|i| i + 8128).collect();
    assert_eq!(run_out(&build(128), 128, &races()).unwrap(), want);
    let d = race_detail(run_out(&build(32), 128, &races()));
    assert!(d.starts_with("read-after-write"), "{d}");
}

/// Release atomics have a barrier before them, acquire atomics one after (tile-level ordering),
/// and a fence is bracketed by barriers.
#[test]
fn race_release_acquire_atomics_and_fences_are_barriers() {
    let build = |between: Option<Inst>| {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (sh, alloc) = k.shared(&[128]);
        let (a, rev, y) = (k.t(&[128]), k.t(&[128]), k.t(&[128]));
        let mut body = vec![
            alloc,
            inst(
                a,
                Inst::Arange {
                    n: 128,
                    dtype: DType::I32,
                },
            ),
            bin(rev, BinOp::Sub, imm(127), v(a)),
            sh_store(sh, &[128], vec![pos(0, imm(0))], v(a)),
        ];
        if let Some(i) = between {
            body.push(eff(i));
        }
        body.push(sh_load(y, sh, &[128], vec![Coord::Index(v(rev))]));
        body.push(put(out, 0, 128, v(y)));
        (k.finish(body), out)
    };
    let flag = |sem: Sem| Inst::AtomicRmw {
        op: RmwOp::Add,
        access: acc(0, &[1], vec![pos(0, imm(200))], None, true),
        values: imm(1),
        compare: None,
        sem,
        scope: Scope::Gpu,
        inactive: InactiveResult::Zero,
        pairs: false,
    };
    let want: Vec<i32> = (0..128).rev().collect();
    for (between, ok) in [
        (None, false),
        (Some(flag(Sem::Relaxed)), false),
        (Some(flag(Sem::Release)), true),
        (Some(flag(Sem::Acquire)), true),
        (Some(flag(Sem::AcqRel)), true),
        (
            Some(Inst::AtomicStore {
                access: acc(0, &[1], vec![pos(0, imm(200))], None, true),
                value: imm(1),
                sem: Sem::Release,
                scope: Scope::Gpu,
            }),
            true,
        ),
        (
            Some(Inst::Fence {
                sem: Sem::AcqRel,
                scope: Scope::Cta,
            }),
            true,
        ),
    ] {
        let (kernel, _) = build(between.clone());
        let r = run_out(&kernel, 128, &races());
        if ok {
            assert_eq!(r.unwrap(), want, "{between:?}");
        } else {
            race_detail(r);
        }
    }
}

#[test]
fn race_histogram_pattern() {
    // atomics into a zeroed shared histogram, sync, load: fine.
    run_histogram(4099, 256, 64, 7, &races());
    run_histogram(
        4099,
        256,
        64,
        3,
        &EmuOptions {
            workers: 1,
            ..races()
        },
    );
    // Without the sync between the atomics and the load, or between the zeroing and the
    // atomics: a race.
    for which in [0, 1] {
        let mut kernel = histogram_kernel(256, 64);
        let syncs: Vec<usize> = kernel
            .body
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                matches!(
                    s,
                    Stmt::Inst {
                        inst: Inst::Sync,
                        ..
                    }
                )
            })
            .map(|(i, _)| i)
            .collect();
        assert_eq!(syncs.len(), 2);
        kernel.body.remove(syncs[which]);
        let mut rng = XorShift(5);
        let data: Vec<i32> = (0..4099).map(|_| (rng.next() % 64) as i32).collect();
        let (d, h) = (mem(&data), mem(&[0; 64]));
        let r = launch(
            &kernel,
            3,
            &[
                EmuArg::Tensor(GlobalMem::W32(&d)),
                EmuArg::i32(4099),
                EmuArg::Tensor(GlobalMem::W32(&h)),
            ],
            &races(),
        );
        let Err(EmuError::SharedRace { detail, .. }) = r else {
            panic!("expected a race without sync {which}, got {r:?}");
        };
        let (kind, how) = [
            ("write-after-write", "atomically writes it after thread"),
            ("read-after-write", "reads it after"),
        ][which];
        assert!(detail.starts_with(kind), "{detail}");
        assert!(detail.contains(how), "{detail}");
        if which == 1 {
            assert!(detail.contains("atomically wrote it"), "{detail}");
        }
    }
}

/// The race checker records atomics lazily (`race.rs`): a barrier interval of more atomic
/// elements than it keeps pending (2^18) is recorded in parts, and a load without a barrier
/// after all of them still races with the atomics of every part.
#[test]
fn race_after_a_long_interval_of_atomics() {
    let n: usize = 300_000;
    let mut rng = XorShift(11);
    let data: Vec<i32> = (0..n).map(|_| (rng.next() % 64) as i32).collect();
    let run = |kernel: &Kernel| {
        let (d, h) = (mem(&data), mem(&[0; 64]));
        let args = [
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::i32(n as i32),
            EmuArg::Tensor(GlobalMem::W32(&h)),
        ];
        launch(kernel, 1, &args, &races()).map(|()| read(&h))
    };
    let mut want = vec![0; 64];
    data.iter().for_each(|&x| want[x as usize] += 1);
    let kernel = histogram_kernel(4096, 64);
    assert_eq!(run(&kernel), Ok(want));
    let mut racy = kernel.clone();
    let last_sync = racy
        .body
        .iter()
        .rposition(|s| {
            matches!(
                s,
                Stmt::Inst {
                    inst: Inst::Sync,
                    ..
                }
            )
        })
        .unwrap();
    racy.body.remove(last_sync);
    let r = run(&racy);
    let Err(EmuError::SharedRace { detail, .. }) = &r else {
        panic!("expected a race, got {r:?}");
    };
    assert!(detail.starts_with("read-after-write"), "{detail}");
    assert!(detail.contains("atomically wrote it"), "{detail}");
}

/// Nothing recorded in one block conflicts with the next block the same worker runs.
#[test]
fn race_state_does_not_leak_between_blocks() {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (sh, alloc) = k.shared(&[128]);
    let (a, rev) = (k.t(&[128]), k.t(&[128]));
    let (bid, at) = (k.s(), k.s());
    let body = vec![
        alloc,
        inst(
            a,
            Inst::Arange {
                n: 128,
                dtype: DType::I32,
            },
        ),
        bin(rev, BinOp::Sub, imm(127), v(a)),
        // Block b: thread t writes word 127 - t; the previous block's thread 127 - t wrote it.
        sh_store(sh, &[128], vec![Coord::Index(v(rev))], v(a)),
        eff(Inst::Sync),
        sh_load(a, sh, &[128], vec![pos(0, imm(0))]),
        // Each block its own words (blocks writing one global word would race).
        inst(bid, Inst::BlockIdx { axis: 0 }),
        bin(at, BinOp::Mul, v(bid), imm(128)),
        eff(Inst::Store {
            access: acc(out, &[128], vec![pos(0, v(at))], None, true),
            value: v(a),
        }),
    ];
    let kernel = k.finish(body);
    let o = mem(&[0; 128 * 5]);
    let opts = EmuOptions {
        workers: 1,
        ..races()
    };
    launch(&kernel, 5, &[EmuArg::Tensor(GlobalMem::W32(&o))], &opts).unwrap();
    let want: Vec<i32> = (0..128).rev().collect();
    assert!(read(&o).chunks(128).all(|c| c == want));
}

/// The race checker's owner of each tile element is the thread whose slot holds it in the PTX
/// layout (enumerated the way the PTX back end does: `tid * v + slot_const(s)`).
#[test]
fn race_owners_match_the_ptx_slots() {
    use crate::ptx::Layout;
    for n in [
        1usize, 2, 3, 6, 16, 100, 128, 256, 257, 300, 1024, 4096, 4100,
    ] {
        for threads in [32usize, 96, 128, 256, 1024] {
            let l = Layout::new(n, threads, 4);
            let mut want = vec![usize::MAX; n];
            for t in 0..threads {
                for s in 0..l.slots() {
                    let f = t * l.v + l.slot_const(s);
                    if f < n {
                        want[f] = t;
                    }
                }
            }
            let got: Vec<usize> = super::race::owners(l).take(n).collect();
            assert_eq!(got, want, "n={n} threads={threads}");
        }
    }
}

/// Tiles smaller than the block and partial last chunks: ownership follows the PTX layout.
#[test]
fn race_ownership_follows_the_ptx_layout() {
    use crate::ptx::Layout;
    // For several sizes: store a tile of n, read it back with the same shape (own elements: no
    // race), and through a layout of another size (a race exactly when some element changes
    // owner).
    for (n, m) in [
        (6usize, 6usize),
        (6, 3),
        (100, 100),
        (300, 150),
        (512, 1024),
        (1030, 515),
    ] {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (sh, alloc) = k.shared(&[n.max(m)]);
        let (a, y) = (k.t(&[n]), k.t(&[m]));
        let body = vec![
            alloc,
            inst(
                a,
                Inst::Arange {
                    n,
                    dtype: DType::I32,
                },
            ),
            sh_store(sh, &[n], vec![pos(0, imm(0))], v(a)),
            inst(
                y,
                Inst::Load {
                    access: acc(sh, &[m], vec![pos(0, imm(0))], None, true),
                    other: imm(-1),
                },
            ),
            put(out, 0, m, v(y)),
        ];
        let kernel = k.finish(body);
        let (ln, lm) = (Layout::new(n, 128, 4), Layout::new(m, 128, 4));
        let owner = |l: &Layout, f: usize| (f % l.chunk()) / l.v;
        let changes = (0..n.min(m)).any(|f| owner(&ln, f) != owner(&lm, f));
        let r = run_out(&kernel, m, &races());
        if changes {
            race_detail(r);
        } else {
            // (Words past n were never written: the poison.)
            let want: Vec<i32> = (0..m as i32)
                .map(|i| if i < n as i32 { i } else { SHARED_POISON })
                .collect();
            assert!(r.unwrap() == want, "n={n} m={m}");
        }
    }
}

/// Run with `cargo test --release -p tilus-core race_check_overhead -- --ignored --nocapture`.
#[test]
#[ignore]
fn race_check_overhead() {
    for check_races in [false, true] {
        let opts = EmuOptions {
            workers: 1,
            check_races,
            ..Default::default()
        };
        let mut best = f64::MAX;
        for _ in 0..3 {
            best = best.min(run_histogram(1 << 22, 1024, 256, 64, &opts));
        }
        println!("histogram 4M elements, 1 worker, check_races={check_races}: {best:.3}s");
    }
}

/// The tile collectives (`collectives.rs`) on a `[3, 12]` i32 tile: each result against a
/// direct computation (the evaluators in `crate::collective` have their own tests; this checks
/// the emulator's reading of operands, result shapes and types, and the scalar form).
#[test]
fn collectives_along_axes_give_their_shapes_and_values() {
    let mut k = Kb::new();
    let (inp, out) = (k.tensor("inp"), k.tensor("out"));
    let flat = k.t(&[36]);
    let x = k.t(&[3, 12]);
    let (rs, am, am_flat, cs, cs_flat) = (
        k.t(&[3]),
        k.t(&[1, 12]),
        k.t(&[12]),
        k.t(&[3, 12]),
        k.t(&[36]),
    );
    let (so, so_flat, order, taken, taken_flat) = (
        k.t(&[3, 12]),
        k.t(&[36]),
        k.t(&[3, 12]),
        k.t(&[3, 12]),
        k.t(&[36]),
    );
    let (top, top_flat, ranks, hist, first_min) =
        (k.t(&[3, 2]), k.t(&[6]), k.t(&[36]), k.t(&[4]), k.s());
    let flat_of = |dst, x, n| inst(dst, Inst::Reshape { x, shape: vec![n] });
    let body = vec![
        inst(
            flat,
            Inst::Load {
                access: acc(inp, &[36], vec![pos(0, imm(0))], None, true),
                other: imm(0),
            },
        ),
        inst(
            x,
            Inst::Reshape {
                x: flat,
                shape: vec![3, 12],
            },
        ),
        inst(
            rs,
            Inst::ReduceAxis {
                op: AxisReduce::Fold(ReduceOp::Sum),
                x,
                axis: 1,
                keepdims: false,
            },
        ),
        put(out, 0, 3, v(rs)),
        inst(
            am,
            Inst::ReduceAxis {
                op: AxisReduce::ArgMax,
                x,
                axis: 0,
                keepdims: true,
            },
        ),
        flat_of(am_flat, am, 12),
        put(out, 3, 12, v(am_flat)),
        inst(
            cs,
            Inst::Scan {
                op: ScanOp::Add,
                x,
                axis: 1,
                exclusive: true,
                reverse: false,
            },
        ),
        flat_of(cs_flat, cs, 36),
        put(out, 15, 36, v(cs_flat)),
        inst(
            so,
            Inst::Sort {
                x,
                axis: 0,
                descending: true,
            },
        ),
        flat_of(so_flat, so, 36),
        put(out, 51, 36, v(so_flat)),
        inst(
            order,
            Inst::ArgSort {
                x,
                axis: 1,
                descending: false,
            },
        ),
        inst(
            taken,
            Inst::Take {
                x,
                indices: order,
                axis: 1,
            },
        ),
        flat_of(taken_flat, taken, 36),
        put(out, 87, 36, v(taken_flat)),
        inst(
            top,
            Inst::TopK {
                x,
                k: 2,
                axis: 1,
                largest: true,
                indices: true,
            },
        ),
        flat_of(top_flat, top, 6),
        put(out, 123, 6, v(top_flat)),
        inst(
            ranks,
            Inst::EqualRank {
                x: flat,
                order: None,
            },
        ),
        put(out, 129, 36, v(ranks)),
        inst(hist, Inst::Histogram { x: flat, bins: 4 }),
        put(out, 165, 4, v(hist)),
        inst(
            first_min,
            Inst::ReduceAxis {
                op: AxisReduce::ArgMin,
                x: flat,
                axis: 0,
                keepdims: false,
            },
        ),
        put(out, 169, 1, v(first_min)),
    ];
    let kernel = k.finish(body);
    let mut rng = XorShift(0x1234_5678);
    let xs: Vec<i32> = (0..36).map(|_| (rng.next() % 7) as i32 - 2).collect();
    let (i, o) = (mem(&xs), mem(&[-99; 170]));
    let args = [
        EmuArg::Tensor(GlobalMem::W32(&i)),
        EmuArg::Tensor(GlobalMem::W32(&o)),
    ];
    let mut opts = strict();
    opts.check_races = true;
    launch(&kernel, 1, &args, &opts).unwrap();
    let o = read(&o);
    let at = |r: usize, c: usize| xs[r * 12 + c];
    let row = |r: usize| -> Vec<i32> { (0..12).map(|c| at(r, c)).collect() };
    for r in 0..3 {
        assert_eq!(o[r], row(r).iter().sum::<i32>(), "row sum {r}");
        let mut sorted = row(r);
        sorted.sort();
        assert_eq!(
            &o[87 + r * 12..99 + r * 12],
            &sorted[..],
            "row {r} taken by argsort"
        );
        let mut by: Vec<usize> = (0..12).collect();
        by.sort_by_key(|&c| std::cmp::Reverse(at(r, c)));
        assert_eq!(o[123 + r * 2], by[0] as i32);
        assert_eq!(o[124 + r * 2], by[1] as i32);
        let mut acc = 0;
        for c in 0..12 {
            assert_eq!(o[15 + r * 12 + c], acc, "exclusive cumsum ({r}, {c})");
            acc += at(r, c);
        }
    }
    for c in 0..12 {
        let col: Vec<i32> = (0..3).map(|r| at(r, c)).collect();
        let best = *col.iter().max().unwrap();
        let first = col.iter().position(|&x| x == best).unwrap();
        assert_eq!(o[3 + c], first as i32, "argmax of column {c}");
        let mut desc = col.clone();
        desc.sort_by(|a, b| b.cmp(a));
        for r in 0..3 {
            assert_eq!(o[51 + r * 12 + c], desc[r], "column {c} sorted");
        }
    }
    for e in 0..36 {
        let before = xs[..e].iter().filter(|&&x| x == xs[e]).count() as i32;
        assert_eq!(o[129 + e], before, "equal rank of {e}");
    }
    for b in 0..4 {
        assert_eq!(
            o[165 + b],
            xs.iter().filter(|&&x| x == b as i32).count() as i32
        );
    }
    let min = *xs.iter().min().unwrap();
    assert_eq!(o[169], xs.iter().position(|&x| x == min).unwrap() as i32);
}

// ---------------------------------------------------------------------------------------------
// Global-memory race checking between blocks (`race_global.rs`).

/// The global race message, asserting it is one.
fn global_race(r: Result<(), EmuError>) -> String {
    match r {
        Err(EmuError::GlobalRace { detail, .. }) => {
            assert!(detail.contains("race on global tensor"), "{detail}");
            detail
        }
        other => panic!("expected a global race, got {other:?}"),
    }
}

/// The chain of hand-offs (block `b` reads block `b - 1`'s value after acquiring its flag):
/// correct with release/acquire atomics or relaxed ones between fences, a race (on every run,
/// whatever the interleaving) when either side is relaxed without a fence.
#[test]
fn global_race_hand_off_needs_release_and_acquire() {
    let g = 16usize;
    let run = |kernel: &Kernel, workers: usize| {
        let (d, f) = (mem(&vec![0; g]), mem(&vec![0; g]));
        let args = [
            EmuArg::Tensor(GlobalMem::W32(&d)),
            EmuArg::Tensor(GlobalMem::W32(&f)),
            EmuArg::i32(-1),
        ];
        let opts = EmuOptions { workers, ..races() };
        launch(kernel, g as u32, &args, &opts).map(|()| read(&d))
    };
    let want: Vec<i32> = (1..=g as i32).collect();
    for workers in [1, 2, 4] {
        for _ in 0..3 {
            let ok = chain_kernel_with(Sem::Release, Sem::Acquire, false);
            assert_eq!(run(&ok, workers).unwrap(), want);
            let fenced = chain_kernel_with(Sem::Relaxed, Sem::Relaxed, true);
            assert_eq!(run(&fenced, workers).unwrap(), want);
            for (store, load) in [(Sem::Relaxed, Sem::Acquire), (Sem::Release, Sem::Relaxed)] {
                let broken = chain_kernel_with(store, load, false);
                let d = global_race(run(&broken, workers).map(|_| ()));
                assert!(
                    d.contains("read-after-write race on global tensor `data`"),
                    "{d}"
                );
            }
        }
    }
}

/// `out[at..at + len] = bid` (a weak store), then (`read`) a weak load of `out[read]` stored to
/// `out[bid + 8]`.
fn overlap_kernel(at: i32, len: usize, read: Option<i32>) -> Kernel {
    let mut k = Kb::new();
    let out = k.tensor("out");
    let (bid, y, dst) = (k.s(), k.t(&[1]), k.s());
    let mut body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        bin(dst, BinOp::Add, v(bid), imm(8)),
    ];
    if len > 0 {
        body.push(put(out, at, len, v(bid)));
    }
    if let Some(r) = read {
        body.push(sh_load(y, out, &[1], vec![pos(0, imm(r))]));
        body.push(eff(Inst::Store {
            access: acc(out, &[1], vec![pos(0, v(dst))], None, true),
            value: v(y),
        }));
    }
    k.finish(body)
}

#[test]
fn global_race_plain_accesses_of_two_blocks() {
    let run = |kernel: &Kernel, blocks: u32, workers: usize| {
        let o = mem(&[0; 16]);
        let opts = EmuOptions { workers, ..races() };
        launch(kernel, blocks, &[EmuArg::Tensor(GlobalMem::W32(&o))], &opts)
    };
    for workers in [1, 2] {
        // Every block writes element 0: write-after-write between blocks, not within one.
        let both = overlap_kernel(0, 1, None);
        run(&both, 1, workers).unwrap();
        let d = global_race(run(&both, 2, workers));
        assert!(
            d.contains("write-after-write race on global tensor `out` at element 0"),
            "{d}"
        );
        // Block 0 reads element 3, which the writes of the blocks' [0, 4) cover: whichever
        // runs first, the second access sees the first.
        let rw = overlap_kernel(0, 4, Some(3));
        run(&rw, 1, workers).unwrap();
        global_race(run(&rw, 2, workers));
        // Reads of one element by many blocks, with no writer, are no race.
        let reads = overlap_kernel(0, 0, Some(3));
        run(&reads, 8, workers).unwrap();
    }
}

/// Every block adds 1 to `count[0]` atomically (`sem`), then (`plain_read`) reads it weakly:
/// atomics of many blocks on one element are no race, a weak read of it is (nothing orders it
/// after the other blocks' adds).
fn counter_kernel(sem: Sem, plain_read: bool) -> Kernel {
    let mut k = Kb::new();
    let (count, out) = (k.tensor("count"), k.tensor("out"));
    let (bid, y) = (k.s(), k.t(&[1]));
    let mut body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        eff(rmw(
            RmwOp::Add,
            acc(count, &[1], vec![pos(0, imm(0))], None, true),
            imm(1),
            None,
            sem,
        )),
    ];
    if plain_read {
        body.push(sh_load(y, count, &[1], vec![pos(0, imm(0))]));
        body.push(eff(Inst::Store {
            access: acc(out, &[1], vec![pos(0, v(bid))], None, true),
            value: v(y),
        }));
    }
    k.finish(body)
}

#[test]
fn global_race_atomics_of_many_blocks_are_not_races() {
    let run = |kernel: &Kernel, workers: usize| {
        let (c, o) = (mem(&[0]), mem(&[0; 64]));
        let opts = EmuOptions { workers, ..races() };
        let args = [
            EmuArg::Tensor(GlobalMem::W32(&c)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ];
        launch(kernel, 64, &args, &opts).map(|()| read(&c))
    };
    for workers in [1, 2] {
        for sem in [Sem::Relaxed, Sem::AcqRel] {
            assert_eq!(run(&counter_kernel(sem, false), workers).unwrap(), vec![64]);
        }
        // A weak read after an atomic of another block, or an atomic after another block's
        // weak read, whichever the blocks ran first.
        let d = global_race(run(&counter_kernel(Sem::Relaxed, true), workers).map(|_| ()));
        assert!(
            d.contains("atomically wrote it") || d.contains("atomically writes it"),
            "{d}"
        );
    }
}

/// The "last block" pattern: every block writes its partial weakly and draws a ticket with an
/// atomic add of `sem`; the block that draws the last ticket sums the partials. With acq_rel
/// the ticket's release sequence orders every partial before the sum; relaxed, it races.
fn last_block_kernel(sem: Sem) -> Kernel {
    let mut k = Kb::new();
    let (part, ticket, out) = (k.tensor("part"), k.tensor("ticket"), k.tensor("out"));
    let (bid, g, t, last, y, total) = (k.s(), k.s(), k.s(), k.s(), k.t(&[64]), k.s());
    let is_last = k.b();
    let body = vec![
        inst(bid, Inst::BlockIdx { axis: 0 }),
        inst(g, Inst::GridDim { axis: 0 }),
        eff(Inst::Store {
            access: acc(part, &[1], vec![pos(0, v(bid))], None, true),
            value: v(bid),
        }),
        inst(
            t,
            rmw(
                RmwOp::Add,
                acc(ticket, &[1], vec![pos(0, imm(0))], None, true),
                imm(1),
                None,
                sem,
            ),
        ),
        bin(last, BinOp::Sub, v(g), imm(1)),
        bin(is_last, BinOp::Eq, v(t), v(last)),
        Stmt::If {
            cond: v(is_last),
            then: vec![
                sh_load(y, part, &[64], vec![pos(0, imm(0))]),
                inst(
                    total,
                    Inst::Reduce {
                        op: ReduceOp::Sum,
                        x: y,
                    },
                ),
                put(out, 0, 1, v(total)),
            ],
            els: vec![],
            span: Span::NONE,
        },
    ];
    k.finish(body)
}

#[test]
fn global_race_last_block_pattern() {
    let run = |sem: Sem, workers: usize| {
        let (p, t, o) = (mem(&[0; 64]), mem(&[0]), mem(&[0]));
        let opts = EmuOptions { workers, ..races() };
        let args = [
            EmuArg::Tensor(GlobalMem::W32(&p)),
            EmuArg::Tensor(GlobalMem::W32(&t)),
            EmuArg::Tensor(GlobalMem::W32(&o)),
        ];
        launch(&last_block_kernel(sem), 64, &args, &opts).map(|()| read(&o))
    };
    for workers in [1, 2, 4] {
        assert_eq!(
            run(Sem::AcqRel, workers).unwrap(),
            vec![(0..64).sum::<i32>()]
        );
        let d = global_race(run(Sem::Relaxed, workers).map(|_| ()));
        assert!(d.contains("race on global tensor `part`"), "{d}");
    }
}

#[test]
fn global_race_vector_clocks_join() {
    use super::race_global::VClock;
    let mut a = VClock::default();
    a.raise(5, 2);
    a.raise(1, 7);
    let mut b = VClock::default();
    b.raise(3, 1);
    b.raise(5, 1);
    assert!(!a.join(&VClock::default()));
    assert!(a.join(&b));
    assert_eq!((a.get(1), a.get(3), a.get(5), a.get(9)), (7, 1, 2, 0));
    assert!(!a.join(&b), "already covered");
}

/// A cluster barrier orders the cluster's blocks in global memory: rank 0 writes `out[0]`,
/// rank 1 copies it to `out[1]` after a `cluster_sync()` (no race) or without one (a race).
#[test]
fn global_race_cluster_sync_orders_the_blocks_of_a_cluster() {
    let kernel = |sync: bool| {
        let mut k = Kb::new();
        let out = k.tensor("out");
        let (rank, y) = (k.s(), k.t(&[1]));
        let (first, second) = (k.b(), k.b());
        let mut body = vec![
            inst(rank, Inst::ClusterRank),
            bin(first, BinOp::Eq, v(rank), imm(0)),
            bin(second, BinOp::Eq, v(rank), imm(1)),
            Stmt::If {
                cond: v(first),
                then: vec![put(out, 0, 1, imm(7))],
                els: vec![],
                span: Span::NONE,
            },
        ];
        if sync {
            body.push(eff(Inst::ClusterSync));
        }
        body.push(Stmt::If {
            cond: v(second),
            then: vec![
                sh_load(y, out, &[1], vec![pos(0, imm(0))]),
                put(out, 1, 1, v(y)),
            ],
            els: vec![],
            span: Span::NONE,
        });
        let mut kernel = k.finish(body);
        kernel.cluster = Grid::new(2, 1, 1);
        kernel
    };
    for _ in 0..4 {
        let o = mem(&[0, 0]);
        let args = [EmuArg::Tensor(GlobalMem::W32(&o))];
        launch(&kernel(true), 2, &args, &races()).unwrap();
        assert_eq!(read(&o), vec![7, 7]);
        let o = mem(&[0, 0]);
        let args = [EmuArg::Tensor(GlobalMem::W32(&o))];
        global_race(launch(&kernel(false), 2, &args, &races()));
    }
}
