//! One message-passing layer of a graph neural network (the sum aggregation of GCN / GraphSAGE /
//! GIN): for every edge `e`,
//!
//! ```text
//! out[dst[e], :] += x[src[e], :] * w[e]
//! ```
//!
//! with `x` the `[nodes, d]` node features, `w` one weight per edge (a GCN's `1 / sqrt(deg)`
//! normalisation, an attention score) and `out` `[nodes, d]`; torch's
//! `out.index_add_(0, dst, x[src] * w[:, None])`. The kernel reads the source rows with a gather
//! load (an index tile in the offset of `load_global`), scales them by the edge weight (a
//! `[edges, 1]` tile broadcast over the columns) and scatter-adds them into `out` with the
//! indexed `atomic_add`, without materialising the `[edges, d]` messages as torch does. Real
//! graphs have hubs (nodes with thousands of in-edges), so many blocks add to one row at once:
//! the adds must be atomic.
//!
//! Two element types: f32, and bf16 (`x`, `w` and `out` all bf16, as torch's bf16 `index_add_`
//! needs; the product is computed in f32 and rounded to bf16 once, as torch does, and each atomic
//! add rounds the running bf16 sum; bf16 atomic adds need sm_90). The feature width `d` is a
//! runtime argument. Every kernel variant is checked against an f64 CPU sum on several graphs
//! (widths that are not multiples of the tile, edge counts that are not multiples of the tile,
//! hubs, rows with no in-edges, `out` starting from random values), with tolerances derived from
//! the rounding of the type (see `check`); a mismatch ends the program with an error.
//!
//! On a GPU it then times the layer on a benchmark graph (2^18 nodes, 2^22 edges, d = 128, a
//! power-law in-degree drawn from splitmix64 of the edge number, which `bench/gnn_peer.py`
//! rebuilds bit for bit to time torch on the same graph), for each kernel variant and a few
//! grid sizes, and checks the benchmark's result too. Measured on an H100 (2026-11-26): f32
//! 2.16 ms, bf16 1.88 ms (best variant and grid), against torch's `index_add_` 8.56 / 8.60 ms
//! (3.9x / 4.6x) and PyG's `MessagePassing` 6.77 / 47.1 ms. The atomics are the limit (the
//! 2^29 element adds, not the bytes: bf16 is hardly faster than f32): cuSPARSE's CSR SpMM on
//! the graph sorted by destination, which needs no atomics, takes 0.96 / 0.68 ms.
//!
//! cargo run --release --example gnn_layer                    # the CPU emulator (checks only)
//! cargo run --release --example gnn_layer --features cuda    # an NVIDIA GPU: checks, then timings
//! GNN_SEED=123 cargo run --release --example gnn_layer       # replay the checks of one seed

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::error::Error;
use tilus::bf16;
use tilus::prelude::*;

/// One layer kernel per (element type, threads, edge tile, column tile): the shapes of a tile
/// are literals, so a `macro_rules!` template instantiates the variants.
///
/// A step takes `edges` edges and `cols` columns: `s` and `t` are `[edges, 1]` tiles of source
/// and destination rows, `cols` a `[1, cols]` tile of column numbers. The gather load reads
/// element `[i, j]` from `x[s[i], c0 + j]`, and the indexed `atomic_add` broadcasts `(t, cols)`
/// to the `[edges, cols]` shape of the messages. A thread holds contiguous columns of one row,
/// so the loads and the atomics can be vector accesses (`ld.global.v4`, and on sm_90
/// `red.global.add.v4.f32` / `.v8.bf16`).
macro_rules! gnn_kernel {
    ($name:ident, $t:ident, threads = $threads:literal, edges = $te:literal, cols = $tc:literal) => {
        #[doc = concat!("The layer in ", stringify!($t), ": ", stringify!($te), " edges x ",
                    stringify!($tc), " columns per step, ", stringify!($threads), " threads.")]
        #[tile_kernel(threads = $threads)]
        fn $name(
            x: GlobalTensor<$t>,
            src: GlobalTensor<i32>,
            dst: GlobalTensor<i32>,
            w: GlobalTensor<$t>,
            out: GlobalTensor<$t>,
            d: i32,
        ) {
            let n_edges = src.len() as i32;
            let x_rows = x.view(0, [x.len() / d as i64, d]);
            let out_rows = out.view(0, [out.len() / d as i64, d]);
            let cols = arange($tc).reshape([1, $tc]);
            for e0 in (block_idx() * $te..n_edges).step_by(grid_dim() * $te) {
                // Past the last edge the indices read -1: a row outside both views, so the
                // gather reads 0 there and the atomic skips it.
                let s = load_global(src, offsets = [e0], shape = [$te], other = -1);
                let t = load_global(dst, offsets = [e0], shape = [$te], other = -1);
                let we = load_global(w, offsets = [e0], shape = [$te]).reshape([$te, 1]);
                let s = s.reshape([$te, 1]);
                let t = t.reshape([$te, 1]);
                // `d` need not be a multiple of the column tile: columns past it are outside
                // the views, read 0 and are skipped by the atomic.
                for c0 in (0..d).step_by($tc) {
                    let rows = load_global(x_rows, offsets = [s, c0], shape = [$te, $tc]);
                    // Relaxed: the sums are the whole result, and nothing is published through
                    // them; the end of the kernel makes them visible to the host.
                    atomic_add(
                        out_rows,
                        (t, cols + c0),
                        rows * we,
                        order = MemoryOrder::Relaxed,
                    );
                }
            }
        }
    };
}

/// The kernels of one element type and the list of them (`$list`), labelled by their shapes.
macro_rules! gnn_variants {
    ($list:ident, $t:ident: $(($name:ident, threads = $threads:literal, edges = $te:literal,
        cols = $tc:literal)),+ $(,)?) => {
        $(gnn_kernel!($name, $t, threads = $threads, edges = $te, cols = $tc);)+
        const $list: &[Variant<$t>] = &[$(Variant {
            label: concat!(stringify!($te), "x", stringify!($tc), ", ", stringify!($threads), " thr"),
            launch: $name::launch,
            edge_tile: $te,
        }),+];
    };
}

// Three of the eight shapes measured on an H100 (2^22 edges, d = 128; all within 15% of each
// other, the two with 16 values per thread, 16x128 and 32x128, 30-40% slower): 8 values per
// thread in each, 16 bytes of bf16 or two 16-byte f32 accesses.
gnn_variants!(F32_VARIANTS, f32:
    (gnn_f32_e16_c64, threads = 128, edges = 16, cols = 64),
    (gnn_f32_e8_c64, threads = 64, edges = 8, cols = 64),
    (gnn_f32_e16_c32, threads = 64, edges = 16, cols = 32),
);
gnn_variants!(BF16_VARIANTS, bf16:
    (gnn_bf16_e16_c64, threads = 128, edges = 16, cols = 64),
    (gnn_bf16_e8_c64, threads = 64, edges = 8, cols = 64),
    (gnn_bf16_e16_c32, threads = 64, edges = 16, cols = 32),
);

/// A kernel's launcher: `(dev, grid, x, src, dst, w, out, d)`.
type Launch<T> = fn(
    &tilus::Device,
    u32,
    &GlobalTensor<T>,
    &GlobalTensor<i32>,
    &GlobalTensor<i32>,
    &GlobalTensor<T>,
    &GlobalTensor<T>,
    i32,
) -> Result<(), tilus::Error>;

/// A kernel variant: its label, its launcher and how many edges one step takes.
struct Variant<T: tilus::Element> {
    label: &'static str,
    launch: Launch<T>,
    edge_tile: usize,
}

/// An element type of the layer, with what the checks need to know of it.
trait Feature: tilus::Element + Copy + 'static {
    const NAME: &'static str;
    /// The unit roundoff: half an ulp of 1, the largest relative error of one rounding to
    /// nearest (2^-24 for f32, 2^-8 for bf16).
    const U: f64;
    /// The largest error of one add besides the relative one: f32 atomic adds on global memory
    /// flush subnormal inputs and results to zero (`atom.global.add.f32`), an error below the
    /// smallest normal; bf16 adds (`.noftz`) keep them.
    const FLUSH: f64;
    const VARIANTS: &'static [Variant<Self>];
    /// The compute capability the atomic add of this type needs.
    const NEEDS_CC: (u32, u32);
    fn from_f32(v: f32) -> Self;
    fn to_f64(self) -> f64;
}

impl Feature for f32 {
    const NAME: &'static str = "f32";
    const U: f64 = f32::EPSILON as f64 / 2.0;
    const FLUSH: f64 = f32::MIN_POSITIVE as f64;
    const VARIANTS: &'static [Variant<f32>] = F32_VARIANTS;
    const NEEDS_CC: (u32, u32) = (7, 0);
    fn from_f32(v: f32) -> f32 {
        v
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Feature for bf16 {
    const NAME: &'static str = "bf16";
    const U: f64 = 1.0 / 256.0;
    const FLUSH: f64 = 0.0;
    const VARIANTS: &'static [Variant<bf16>] = BF16_VARIANTS;
    const NEEDS_CC: (u32, u32) = (9, 0);
    fn from_f32(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

/// A graph as an edge list, with `nodes` rows of features and of output.
struct Graph {
    nodes: usize,
    src: Vec<i32>,
    dst: Vec<i32>,
}

/// One layer's inputs on the host: the graph, `d`, features `[nodes, d]`, edge weights and the
/// value `out` starts from.
struct Problem<T> {
    graph: Graph,
    d: usize,
    x: Vec<T>,
    w: Vec<T>,
    init: Vec<T>,
}

/// A random test graph: `hubs` nodes with `hub_degree` in-edges each and the other edges
/// spread uniformly, in a shuffled order so that a hub's edges land in many blocks at once.
fn random_graph(
    rng: &mut StdRng,
    nodes: usize,
    edges: usize,
    hubs: usize,
    hub_degree: usize,
) -> Graph {
    let hub_ids: Vec<i32> = (0..hubs).map(|_| rng.gen_range(0..nodes) as i32).collect();
    let mut dst: Vec<i32> = (0..edges)
        .map(|e| match hub_ids.get(e / hub_degree.max(1)) {
            Some(&h) => h,
            None => rng.gen_range(0..nodes) as i32,
        })
        .collect();
    // Fisher-Yates, so that a hub's edges are spread over the edge list.
    for i in (1..edges).rev() {
        dst.swap(i, rng.gen_range(0..=i));
    }
    let src = (0..edges).map(|_| rng.gen_range(0..nodes) as i32).collect();
    Graph { nodes, src, dst }
}

/// A test problem on `graph`: features in [-1, 1), weights in [0.5, 1.5) (a GCN's
/// normalisation is positive), and `out` starting from random values in [-1, 1), so that an
/// add that is lost, or a row that is overwritten instead of added to, shows.
fn random_problem<T: Feature>(rng: &mut StdRng, graph: Graph, d: usize) -> Problem<T> {
    let mut uniform = |lo: f32, hi: f32, n: usize| -> Vec<T> {
        (0..n).map(|_| T::from_f32(rng.gen_range(lo..hi))).collect()
    };
    let x = uniform(-1.0, 1.0, graph.nodes * d);
    let w = uniform(0.5, 1.5, graph.dst.len());
    let init = uniform(-1.0, 1.0, graph.nodes * d);
    Problem {
        graph,
        d,
        x,
        w,
        init,
    }
}

/// The exact result in f64, with what the tolerance needs: per output element the sum of the
/// magnitudes of everything added to it (`init` included), and per output row its in-degree.
struct Reference {
    want: Vec<f64>,
    mag: Vec<f64>,
    adds: Vec<u32>,
}

fn reference<T: Feature>(p: &Problem<T>) -> Reference {
    let d = p.d;
    let mut want: Vec<f64> = p.init.iter().map(|v| v.to_f64()).collect();
    let mut mag: Vec<f64> = want.iter().map(|v| v.abs()).collect();
    let mut adds = vec![0u32; p.graph.nodes];
    for (e, (&s, &t)) in p.graph.src.iter().zip(&p.graph.dst).enumerate() {
        let (s, t) = (s as usize, t as usize);
        adds[t] += 1;
        let we = p.w[e].to_f64();
        let (xs, out) = (&p.x[s * d..(s + 1) * d], t * d..(t + 1) * d);
        // A product of two f32 (or bf16) values is exact in f64 (48 significant bits of 53),
        // and these sums of at most a few million terms of magnitude <= 1.5 keep their error
        // far below f32 resolution.
        for ((o, m), &xv) in want[out.clone()].iter_mut().zip(&mut mag[out]).zip(xs) {
            let msg = xv.to_f64() * we;
            *o += msg;
            *m += msg.abs();
        }
    }
    Reference { want, mag, adds }
}

/// What a check found: the worst error as a fraction of its tolerance, and how many output rows
/// had no useful bound (bf16 rows with 255 or more in-edges, see `check`).
struct Checked {
    worst: f64,
    unbounded_rows: usize,
}

/// Compares the kernel's `out` with the reference.
///
/// Tolerance. Each message `x[s, c] * w[e]` is rounded once to the type (relative error at most
/// the unit roundoff u), and each of the k atomic adds into an element rounds the running sum
/// once (error at most u times the running sum, which never exceeds S, the sum of the magnitudes
/// of `init` and of the k exact messages, up to the errors so far). The adds come in any order;
/// recursive summation in any order is within gamma_k * S (Higham, Accuracy and Stability of
/// Numerical Algorithms, 4.2), and the message roundings add u * S at most, so
/// `|got - exact| <= gamma_{k+1} * S` with `gamma_n = n u / (1 - n u)`, plus the f32 flush of
/// subnormals (k times the smallest normal). Rows with no in-edge must come back bit for bit.
/// The bound needs `(k + 1) u < 1`: for bf16 (u = 2^-8) a row with 255 or more in-edges has no
/// bound at all (its sum can stagnate, which is why training accumulates in f32): such rows are
/// only checked to be finite, and counted.
fn check<T: Feature>(got: &[T], r: &Reference, d: usize, what: &str) -> Result<Checked, String> {
    let mut out = Checked {
        worst: 0.0,
        unbounded_rows: 0,
    };
    for (row, &k) in r.adds.iter().enumerate() {
        let ku = (k as f64 + 1.0) * T::U;
        let bounded = ku < 1.0;
        out.unbounded_rows += !bounded as usize;
        for c in 0..d {
            let i = row * d + c;
            let g = got[i].to_f64();
            let err = (g - r.want[i]).abs();
            let tol = if k == 0 {
                0.0
            } else {
                ku / (1.0 - ku) * r.mag[i] + k as f64 * T::FLUSH
            };
            let bad = if bounded {
                err > tol || g.is_nan()
            } else {
                !g.is_finite()
            };
            if bad {
                return Err(format!(
                    "{what}: MISMATCH at out[{row}, {c}] ({k} in-edges): got {g}, expected {} \
                     (tolerance {tol:e})",
                    r.want[i]
                ));
            }
            if bounded && tol > 0.0 {
                out.worst = out.worst.max(err / tol);
            }
        }
    }
    Ok(out)
}

/// Uploads a problem: `(x, src, dst, w)`.
type Uploaded<T> = (
    GlobalTensor<T>,
    GlobalTensor<i32>,
    GlobalTensor<i32>,
    GlobalTensor<T>,
);

fn upload<T: Feature>(dev: &tilus::Device, p: &Problem<T>) -> Result<Uploaded<T>, tilus::Error> {
    Ok((
        dev.upload(&p.x)?,
        dev.upload(&p.graph.src)?,
        dev.upload(&p.graph.dst)?,
        dev.upload(&p.w)?,
    ))
}

/// Runs every variant of `T` once on `p` from `out = init` and checks each result.
fn run_and_check<T: Feature>(
    dev: &tilus::Device,
    p: &Problem<T>,
    blocks: u32,
) -> Result<(), Box<dyn Error>> {
    let r = reference(p);
    let (x, src, dst, w) = upload(dev, p)?;
    let out = dev.upload(&p.init)?;
    let hub = r.adds.iter().max().copied().unwrap_or(0);
    let isolated = r.adds.iter().filter(|&&k| k == 0).count();
    for v in T::VARIANTS {
        out.copy_from_host(&p.init)?;
        (v.launch)(dev, blocks, &x, &src, &dst, &w, &out, p.d as i32)?;
        let what = format!(
            "{} {} nodes, {} edges, d = {}, {}",
            T::NAME,
            p.graph.nodes,
            p.graph.dst.len(),
            p.d,
            v.label
        );
        let c = check(&out.download()?, &r, p.d, &what)?;
        println!(
            "ok  {what:<58} {blocks:>4} blocks: max in-degree {hub}, {isolated} rows without \
             in-edges; worst error {:.1}% of its bound{}",
            c.worst * 100.0,
            if c.unbounded_rows > 0 {
                format!(", {} rows unbounded (finite)", c.unbounded_rows)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// The correctness checks of one element type: widths 150 and 37 (not multiples of the 32- or
/// 64-column tiles: the last columns are masked) and 128, odd edge counts (a partial last edge
/// tile), rows without in-edges, and hubs: a few nodes that get a large share of the edges, in
/// f32 hundreds (emulator) or 20,000 (GPU) each, in bf16 60 each (so that every row has a
/// bound; see `check`), on a small grid so that blocks loop over several edge tiles.
fn check_type<T: Feature>(dev: &tilus::Device, rng: &mut StdRng) -> Result<(), Box<dyn Error>> {
    let gpu = dev.is_gpu();
    let hub_degree = if T::U > 1e-3 {
        60
    } else if gpu {
        20_000
    } else {
        400
    };
    // (nodes, edges, d, hubs)
    let cases: [(usize, usize, usize, usize); 3] = if gpu {
        [
            (20_000, 400_003, 150, 4),
            (3_001, 100_001, 37, 2),
            (50_000, 250_017, 128, 3),
        ]
    } else {
        [
            (1_000, 10_001, 150, 3),
            (97, 1_001, 37, 2),
            (600, 1_517, 128, 1),
        ]
    };
    let blocks = if gpu { 4 * dev.multiprocessors() } else { 12 };
    for (nodes, edges, d, hubs) in cases {
        let hub_degree = hub_degree.min(edges / (2 * hubs));
        let graph = random_graph(rng, nodes, edges, hubs, hub_degree);
        run_and_check(dev, &random_problem::<T>(rng, graph, d), blocks)?;
    }
    Ok(())
}

/// The benchmark graph: `2^BENCH_LOG2_NODES` nodes, `BENCH_EDGES` edges, width `BENCH_D`.
/// `bench/gnn_peer.py` builds the same one: change both together.
const BENCH_LOG2_NODES: u32 = 18;
const BENCH_EDGES: usize = 1 << 22;
const BENCH_D: usize = 128;

/// splitmix64's output function (Steele, Lea and Flood): a bijective hash of a 64-bit counter.
fn splitmix64(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A value in [-1, 1) from a hash: 24 random bits, exact in f32.
fn unit(h: u64) -> f32 {
    (h >> 40) as f32 * (1.0 / (1u64 << 23) as f32) - 1.0
}

/// The benchmark graph, from `h = splitmix64(e)` for edge `e` in integers only, so that numpy
/// reproduces it exactly: `src` is the top `L` bits of the low 32 bits of `h` (uniform); `dst`
/// is `(a * a) >> (64 - L)` for `a = h >> 32`, i.e. `floor(N * u^2)` for a uniform `u`, whose
/// node `i` gets about `E / (2 sqrt(N i))` in-edges (node 0 about 8,000, the median node about
/// 11: a power law), then multiplied by an odd constant mod N so that the hubs are not
/// neighbours in memory.
fn bench_graph() -> Graph {
    let l = BENCH_LOG2_NODES;
    let n = 1usize << l;
    let mask = n as u64 - 1;
    let (mut src, mut dst) = (
        Vec::with_capacity(BENCH_EDGES),
        Vec::with_capacity(BENCH_EDGES),
    );
    for e in 0..BENCH_EDGES as u64 {
        let h = splitmix64(e);
        let a = h >> 32;
        src.push(((h & 0xffff_ffff) >> (32 - l)) as i32);
        dst.push((((a * a) >> (64 - l)).wrapping_mul(0x9e37_79b1) & mask) as i32);
    }
    Graph { nodes: n, src, dst }
}

/// The benchmark problem: features `unit(splitmix64(2^41 + i))`, weights `0.5 + (unit(
/// splitmix64(2^40 + e)) + 1) / 2` in [0.5, 1.5), `out` starting from `unit(splitmix64(3 * 2^40
/// + i)) / 4`, each rounded to `T` (as torch's `.to(bfloat16)` does, to nearest even).
fn bench_problem<T: Feature>(graph: Graph) -> Problem<T> {
    let (n, e, d) = (graph.nodes as u64, graph.dst.len() as u64, BENCH_D as u64);
    let x = (0..n * d)
        .map(|i| T::from_f32(unit(splitmix64((2 << 40) + i))))
        .collect();
    let w = (0..e)
        .map(|i| T::from_f32(0.5 + (unit(splitmix64((1 << 40) + i)) + 1.0) * 0.5))
        .collect();
    let init = (0..n * d)
        .map(|i| T::from_f32(unit(splitmix64((3 << 40) + i)) * 0.25))
        .collect();
    Problem {
        graph,
        d: BENCH_D,
        x,
        w,
        init,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times every variant of `T` on the benchmark problem over a few grid sizes, after checking
/// each variant's result from `out = init`. Bytes counted: the gathered rows of `x`, the
/// updates to `out` (one element per message), `src`, `dst` and `w`.
fn bench_type<T: Feature>(
    dev: &tilus::Device,
    p: &Problem<T>,
    reps: usize,
) -> Result<(), Box<dyn Error>> {
    let r = reference(p);
    let (x, src, dst, w) = upload(dev, p)?;
    let out = dev.upload(&p.init)?;
    let (e, d, size) = (p.graph.dst.len(), p.d, std::mem::size_of::<T>());
    let bytes = (2 * e * d * size + e * (8 + size)) as f64;
    let sms = dev.multiprocessors();
    let mut best = (f64::MAX, String::new());
    for v in T::VARIANTS {
        let one_tile_each = e.div_ceil(v.edge_tile) as u32;
        for grid in [4 * sms, 16 * sms, one_tile_each] {
            out.copy_from_host(&p.init)?;
            let run = || (v.launch)(dev, grid, &x, &src, &dst, &w, &out, d as i32);
            run()?;
            let what = format!("bench {} {} grid {grid}", T::NAME, v.label);
            let c = check(&out.download()?, &r, d, &what)?;
            for _ in 0..3 {
                run()?; // warm-ups (they add more messages into `out`; the check is done)
            }
            let us = median(dev.time_ms(reps, run)?) * 1e3;
            let gbs = bytes / (us * 1e-6) / 1e9;
            println!(
                "gnn {:<4} tilus {:<16} grid {grid:>6} {us:>10.1} us {gbs:>8.1} GB/s  (checked: \
                 worst {:.1}% of bound, {} hub rows unbounded)",
                T::NAME,
                v.label,
                c.worst * 100.0,
                c.unbounded_rows
            );
            if us < best.0 {
                best = (us, format!("{}, grid {grid}", v.label));
            }
        }
    }
    println!("# gnn {} best: {:.1} us ({})", T::NAME, best.0, best.1);
    Ok(())
}

/// Prints what identifies the benchmark graph, which `bench/gnn_peer.py` prints too.
fn describe(g: &Graph) {
    let mut deg = vec![0u32; g.nodes];
    for &t in &g.dst {
        deg[t as usize] += 1;
    }
    let (hub, max) = deg
        .iter()
        .enumerate()
        .max_by_key(|&(i, &k)| (k, std::cmp::Reverse(i)))
        .unwrap();
    let sum_src: i64 = g.src.iter().map(|&s| s as i64).sum();
    let sum_dst: i64 = g.dst.iter().map(|&t| t as i64).sum();
    let isolated = deg.iter().filter(|&&k| k == 0).count();
    println!(
        "# graph: {} nodes, {} edges, d = {BENCH_D}; max in-degree {max} (node {hub}), {isolated} \
         nodes without in-edges, sum(src) {sum_src}, sum(dst) {sum_dst}",
        g.nodes,
        g.dst.len()
    );
}

fn bench(dev: &tilus::Device) -> Result<(), Box<dyn Error>> {
    let reps = 20;
    println!(
        "# benchmark: median of {reps} launches after 4 (1 checked + 3 warm-up), {}",
        dev.name()
    );
    describe(&bench_graph());
    bench_type(dev, &bench_problem::<f32>(bench_graph()), reps)?;
    if supports::<bf16>(dev) {
        bench_type(dev, &bench_problem::<bf16>(bench_graph()), reps)?;
    }
    Ok(())
}

/// Whether `dev` has `T`'s atomic add (the emulator has every one).
fn supports<T: Feature>(dev: &tilus::Device) -> bool {
    let ok = dev.compute_capability().is_none_or(|cc| cc >= T::NEEDS_CC);
    if !ok {
        println!(
            "skipped {}: its atomic add needs sm_{}{}",
            T::NAME,
            T::NEEDS_CC.0,
            T::NEEDS_CC.1
        );
    }
    ok
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let dev = tilus::Device::default()?;
    let seed = match std::env::var("GNN_SEED") {
        Ok(s) => s.parse()?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos() as u64,
    };
    println!("device: {}; checks with GNN_SEED={seed}", dev.name());
    let mut rng = StdRng::seed_from_u64(seed);
    check_type::<f32>(&dev, &mut rng)?;
    if supports::<bf16>(&dev) {
        check_type::<bf16>(&dev, &mut rng)?;
    }
    if dev.is_gpu() {
        bench(&dev)?;
    }
    Ok(())
}
