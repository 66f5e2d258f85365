//! Thread-block clusters (issue 9): cluster ranks and indices over 1-, 2- and 3-D grids,
//! `cluster_sync()`, and distributed shared memory (`cluster_shared_tensor`: axis 0 split over
//! the cluster's blocks, any block reading, writing and updating any element atomically) on
//! every backend (the emulator, and the GPU with `--features cuda`); the emulator's checks of
//! the cluster protocol; every kernel assembles for sm_90.

mod common;

use common::{backends, Rng};
use tilus::prelude::*;

// ---------------------------------------------------------------------------------------------
// Where each block is: rank, cluster size and cluster index against the grid position.

#[tile_kernel(threads = 64, cluster = [2, 2, 1])]
fn cluster_info(out: GlobalTensor<i32>) {
    let b = block_idx(0) + grid_dim(0) * (block_idx(1) + grid_dim(1) * block_idx(2));
    let row = arange(8) * 0
        + select(
            arange(8) == 0,
            cluster_rank(),
            select(
                arange(8) == 1,
                cluster_size(),
                select(
                    arange(8) == 2,
                    cluster_idx(0),
                    select(
                        arange(8) == 3,
                        cluster_idx(1),
                        select(
                            arange(8) == 4,
                            cluster_idx(2),
                            block_idx(0) + block_idx(1) * 100,
                        ),
                    ),
                ),
            ),
        );
    store_global(out, row, offsets = [b * 8]);
}

#[test]
fn ranks_and_cluster_indices_follow_the_grid() {
    let grid = (4u32, 6u32, 3u32);
    let blocks = (grid.0 * grid.1 * grid.2) as usize;
    for dev in backends() {
        let out = dev.full(blocks * 8, -7i32).unwrap();
        cluster_info::launch(&dev, grid, &out).unwrap();
        let got = out.download().unwrap();
        for z in 0..grid.2 {
            for y in 0..grid.1 {
                for x in 0..grid.0 {
                    let b = (x + grid.0 * (y + grid.1 * z)) as usize;
                    // %cluster_ctarank: x fastest within the 2x2x1 cluster.
                    let rank = (x % 2 + 2 * (y % 2)) as i32;
                    let want = [rank, 4, (x / 2) as i32, (y / 2) as i32, z as i32];
                    assert_eq!(
                        &got[b * 8..b * 8 + 5],
                        &want,
                        "{dev:?}: block ({x}, {y}, {z})"
                    );
                    assert_eq!(got[b * 8 + 5], (x + y * 100) as i32, "{dev:?}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Distributed shared memory: a histogram whose bins are spread over the cluster's blocks.

/// 4096 bins over a cluster of 4 (1024 per block); every block counts its tiles into the bin's
/// owner, whoever that is, then each block adds its own part to the global histogram.
#[tile_kernel(threads = 256, cluster = 4)]
fn cluster_histogram(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    let counts = cluster_shared_tensor(i32, [4096]);
    let mine = cluster_rank() * 1024 + arange(1024);
    store_shared_scatter(counts, dim = 0, indices = mine, values = 0);
    cluster_sync();
    let n = values.len();
    for start in (block_idx() * 2048..n).step_by(grid_dim() * 2048) {
        let bins = load_global(values, offsets = [start], shape = [2048], other = -1);
        atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
    }
    cluster_sync();
    let c = atomic_load(counts, mine);
    atomic_add(hist, mine, c);
}

fn cpu_histogram(values: &[i32], bins: usize) -> Vec<i32> {
    let mut h = vec![0i32; bins];
    for &v in values {
        if (0..bins as i32).contains(&v) {
            h[v as usize] += 1;
        }
    }
    h
}

#[test]
fn distributed_histogram_counts_into_every_block() {
    let mut r = Rng::from_env_or_clock();
    let n = 100_000 + r.range(0, 5000) as usize; // not a multiple of the tile
    let uniform: Vec<i32> = (0..n).map(|_| r.range(-50, 4146)).collect();
    // Contention: most values in a few bins, spread over every owner block.
    let skewed: Vec<i32> = (0..n)
        .map(|i| match i % 5 {
            0 => 5,
            1 => 1029,
            2 => 4095,
            3 => 2048,
            _ => r.range(0, 4096),
        })
        .collect();
    for dev in backends() {
        for (label, data) in [("uniform", &uniform), ("skewed", &skewed)] {
            let values = dev.upload(data).unwrap();
            for blocks in [4u32, 12, 40] {
                let hist = dev.zeros::<i32>(4096).unwrap();
                cluster_histogram::launch(&dev, blocks, &values, &hist).unwrap();
                let got = hist.download().unwrap();
                assert_eq!(
                    got,
                    cpu_histogram(data, 4096),
                    "{dev:?}: {label}, {blocks} blocks"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Peer reads and writes: every block writes its neighbour's part, then reads its own.

#[tile_kernel(threads = 128, cluster = 8)]
fn ring(out: GlobalTensor<i64>) {
    let parts = cluster_shared_tensor(i64, [8, 300]);
    let me = cluster_rank();
    let next = (me + 1) % cluster_size();
    // Row `next` of the tensor lives in block `next`.
    let cols = arange(300);
    let v = (block_idx() as i64) * 1000 + cols.reshape([1, 300]) as i64;
    // The neighbour must be running before its shared memory is written.
    cluster_sync();
    store_shared_scatter(
        parts,
        dim = 0,
        indices = cols.reshape([1, 300]) * 0 + next,
        values = v,
    );
    cluster_sync();
    // Own row: written by the previous block.
    let got = atomic_load(parts, (cols * 0 + me, cols));
    store_global(out, got, offsets = [block_idx() as i64 * 300]);
}

#[test]
fn blocks_write_and_read_each_others_shared_memory() {
    for dev in backends() {
        let blocks = 24u32;
        let out = dev.full(blocks as usize * 300, -1i64).unwrap();
        ring::launch(&dev, blocks, &out).unwrap();
        let got = out.download().unwrap();
        for b in 0..blocks as i64 {
            // The writer of block b's row is the previous block of its cluster.
            let base = b - b % 8;
            let prev = base + (b % 8 + 7) % 8;
            for c in 0..300 {
                assert_eq!(
                    got[(b * 300 + c) as usize],
                    prev * 1000 + c,
                    "{dev:?}: block {b}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every atomic on distributed shared memory, contended by all blocks of the cluster.

/// Row `k` of `t` (rows 3r..3r+3 owned by block rank r) gets op `k` from all four blocks: add,
/// sub, min, max, and, or, xor, inc, scatter add (rows 8..11), exch (row 11). The owners then
/// copy their rows out; the values the exchanges swapped out are stored too.
#[tile_kernel(threads = 64, cluster = 4)]
fn peer_atomics(vals: GlobalTensor<u32>, init: GlobalTensor<u32>, out: GlobalTensor<u32>) {
    let t = cluster_shared_tensor(u32, [12, 64]);
    let cols = arange(64);
    let me = cluster_rank();
    for r in me * 3..me * 3 + 3 {
        let v0 = load_global(init, offsets = [r * 64], shape = [64]);
        atomic_store(t, (r, cols), v0, sem = relaxed);
    }
    cluster_sync();
    let v = load_global(vals, offsets = [block_idx() * 64], shape = [64]);
    atomic_add(t, (0, cols), v);
    atomic_sub(t, (1, cols), v);
    atomic_min(t, (2, cols), v);
    atomic_max(t, (3, cols), v);
    atomic_and(t, (4, cols), v | 0x0f0f_0f0f);
    atomic_or(t, (5, cols), v & 0x0101_0101);
    atomic_xor(t, (6, cols), v);
    atomic_inc(t, (7, cols), 5);
    atomic::shared_scatter_add(
        t,
        dim = 0,
        indices = (cols % 3 + 8).reshape([1, 64]),
        values = v.reshape([1, 64]),
    );
    let old = atomic_xchg(t, (11, cols), v);
    let clusters = grid_dim() / cluster_size();
    store_global(out, old, offsets = [(clusters * 12 + block_idx()) * 64]);
    cluster_sync();
    for r in me * 3..me * 3 + 3 {
        let row = atomic_load(t, (r, cols));
        store_global(out, row, offsets = [(cluster_idx() * 12 + r) * 64]);
    }
}

#[test]
fn every_atomic_on_peer_shared_memory_is_atomic_under_contention() {
    let mut r = Rng::from_env_or_clock();
    let clusters = 3usize;
    let blocks = clusters * 4;
    for dev in backends() {
        let vals: Vec<u32> = (0..blocks * 64).map(|_| r.next_u64() as u32).collect();
        let init: Vec<u32> = (0..12 * 64).map(|_| r.next_u64() as u32 % 7).collect();
        let vdev = dev.upload(&vals).unwrap();
        let idev = dev.upload(&init).unwrap();
        let out = dev
            .full((clusters * 12 + blocks) * 64, 0xdead_beefu32)
            .unwrap();
        peer_atomics::launch(&dev, blocks as u32, &vdev, &idev, &out).unwrap();
        let got = out.download().unwrap();
        for c in 0..clusters {
            for j in 0..64 {
                let v = |b: usize| vals[(c * 4 + b) * 64 + j];
                let at = |k: usize| got[(c * 12 + k) * 64 + j];
                let i = |k: usize| init[k * 64 + j];
                let fold =
                    |k: usize, f: &dyn Fn(u32, u32) -> u32| (0..4).fold(i(k), |a, b| f(a, v(b)));
                let what = format!("{dev:?}, cluster {c}, column {j}");
                assert_eq!(at(0), fold(0, &|a, x| a.wrapping_add(x)), "add {what}");
                assert_eq!(at(1), fold(1, &|a, x| a.wrapping_sub(x)), "sub {what}");
                assert_eq!(at(2), fold(2, &|a, x| a.min(x)), "min {what}");
                assert_eq!(at(3), fold(3, &|a, x| a.max(x)), "max {what}");
                assert_eq!(at(4), fold(4, &|a, x| a & (x | 0x0f0f_0f0f)), "and {what}");
                assert_eq!(at(5), fold(5, &|a, x| a | (x & 0x0101_0101)), "or {what}");
                assert_eq!(at(6), fold(6, &|a, x| a ^ x), "xor {what}");
                assert_eq!(
                    at(7),
                    fold(7, &|a, _| if a >= 5 { 0 } else { a + 1 }),
                    "inc {what}"
                );
                for row in 8..11 {
                    let want = if j % 3 + 8 == row {
                        fold(row, &|a, x| a.wrapping_add(x))
                    } else {
                        i(row)
                    };
                    assert_eq!(at(row), want, "scatter add row {row} {what}");
                }
                // Exchanges: the final value and the four swapped-out ones are the initial
                // value and the four blocks' values, each once.
                let mut seen: Vec<u32> = (0..4)
                    .map(|b| got[(clusters * 12 + c * 4 + b) * 64 + j])
                    .collect();
                seen.push(at(11));
                let mut want: Vec<u32> = (0..4).map(v).collect();
                want.push(i(11));
                seen.sort_unstable();
                want.sort_unstable();
                assert_eq!(seen, want, "exch {what}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Producer/consumer between two blocks of a cluster: weak stores into the peer's shared memory
// published by a cluster-scope release store, observed by a cluster-scope acquire load.

#[tile_kernel(threads = 64, cluster = 2)]
fn handoff(out: GlobalTensor<i32>) {
    // Block r owns words 65 r .. 65 r + 65: 64 of payload and a flag.
    let mail = cluster_shared_tensor(i32, [130]);
    let me = cluster_rank();
    atomic_store(mail, me * 65 + 64, 0, sem = relaxed);
    cluster_sync();
    if me == 0 {
        let payload = arange(64) * 3 + block_idx() * 1000;
        store_shared_scatter(mail, dim = 0, indices = 65 + arange(64), values = payload);
        atomic_store(mail, 129, 1, sem = release, scope = cluster);
    } else {
        while atomic_load(mail, 129, sem = acquire, scope = cluster) == 0 {}
        let got = atomic_load(mail, 65 + arange(64), sem = relaxed);
        store_global(out, got, offsets = [block_idx() / 2 * 64]);
    }
}

#[test]
fn release_acquire_at_cluster_scope_hands_data_between_blocks() {
    for dev in backends() {
        let pairs = 20usize;
        let out = dev.full(pairs * 64, -1i32).unwrap();
        handoff::launch(&dev, (2 * pairs) as u32, &out).unwrap();
        let got = out.download().unwrap();
        for p in 0..pairs {
            for j in 0..64 {
                // The producer is block 2 p (rank 0 of cluster p).
                let want = j as i32 * 3 + (2 * p) as i32 * 1000;
                assert_eq!(got[p * 64 + j], want, "{dev:?}: pair {p}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The cluster rules: a use before the first cluster barrier gets one from the compiler; a
// barrier some blocks skip is a compile error (`tests/ui/cluster_sync_varying.rs`); the
// emulator still reports both in IR that breaks them, and a grid that is not a whole number of
// clusters.

/// Each block writes its peer's part before its own first `cluster_sync()`: the peer may not
/// have started, so the compiler puts a cluster barrier at the start of the kernel.
#[tile_kernel(threads = 32, cluster = 2)]
fn too_early(out: GlobalTensor<i32>) {
    let t = cluster_shared_tensor(i32, [64]);
    store_shared_scatter(
        t,
        dim = 0,
        indices = arange(32) + 32 * (1 - cluster_rank()),
        values = 1,
    );
    cluster_sync();
    // Each block its own half of `out` (both writing one place would race between blocks).
    store_global(
        out,
        atomic_load(t, arange(32) + 32 * cluster_rank()),
        offsets = [block_idx() * 32],
    );
}

/// A barrier taken only where `skip` is 0 (a uniform condition: it compiles); the test turns
/// the condition into one on the block's rank in the IR, which the compiler would reject.
#[tile_kernel(threads = 32, cluster = 2)]
fn skipped_barrier(out: GlobalTensor<i32>, skip: i32) {
    let first = cluster_rank() == 0;
    if skip == 0 {
        cluster_sync();
    }
    store_global(out, full([32], first as i32), offsets = [block_idx() * 32]);
}

/// Both blocks of a cluster store into the first 32 elements (block 0's part): with `ordered`
/// a cluster barrier separates block 0's stores from block 1's, without it they race.
#[tile_kernel(threads = 32, cluster = 2)]
fn shared_writers(out: GlobalTensor<i32>, ordered: i32) {
    let t = cluster_shared_tensor(i32, [64]);
    cluster_sync();
    if cluster_rank() == 0 {
        store_shared_scatter(t, dim = 0, indices = arange(32), values = 10);
    }
    if ordered == 1 {
        cluster_sync();
    }
    if cluster_rank() == 1 {
        store_shared_scatter(t, dim = 0, indices = arange(32), values = 11);
    }
    cluster_sync();
    store_global(
        out,
        atomic_load(t, arange(32)),
        offsets = [block_idx() * 32],
    );
}

#[test]
fn the_emulator_reports_races_on_distributed_shared_memory() {
    // Ordered: the same answer everywhere (block 1's stores are the last).
    for dev in backends() {
        let out = dev.zeros::<i32>(64).unwrap();
        shared_writers::launch(&dev, 2u32, &out, 1).unwrap();
        assert_eq!(out.download().unwrap(), vec![11; 64], "{dev:?}");
    }
    // Unordered: a race on the GPU (either block's value may win), an error in the emulator.
    let dev = common::emulator();
    let out = dev.zeros::<i32>(64).unwrap();
    let e = shared_writers::launch(&dev, 2u32, &out, 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("write-after-write race") && e.contains("cluster_sync()"),
        "{e}"
    );
    assert!(
        e.contains("block 1 of the cluster") && e.contains("block 0 of the cluster"),
        "{e}"
    );
}

/// Block 0 raises two flags around its payload: `early` before writing it (it releases
/// nothing of it), `late` after. Block 1 waits for the flag `wait` (0: early, 1: late) and
/// reads the payload: correct only after the late flag. With `fences` the flags are relaxed
/// atomics ordered by a release fence (before the store) and an acquire fence (after the load).
#[tile_kernel(threads = 32, cluster = 2)]
fn two_flags(out: GlobalTensor<i32>, wait: i32, fences: i32) {
    // Block 0's part: payload 0..32, flags 32 (early) and 33 (late).
    let mail = cluster_shared_tensor(i32, [128]);
    let me = cluster_rank();
    atomic_store(mail, me * 64 + 32 + arange(2), zeros([2]), sem = relaxed);
    cluster_sync();
    if me == 0 {
        for flag in 32..34 {
            if fences == 1 {
                fence(sem = release, scope = cluster);
                atomic_store(mail, flag, 1, sem = relaxed, scope = cluster);
            } else {
                atomic_store(mail, flag, 1, sem = release, scope = cluster);
            }
            if flag == 32 {
                store_shared_scatter(mail, dim = 0, indices = arange(32), values = 7);
            }
        }
    } else {
        if fences == 1 {
            while atomic_load(mail, 32 + wait, sem = relaxed, scope = cluster) == 0 {}
            fence(sem = acquire, scope = cluster);
        } else {
            while atomic_load(mail, 32 + wait, sem = acquire, scope = cluster) == 0 {}
        }
        let got = atomic_load(mail, arange(32), sem = relaxed);
        store_global(out, got, offsets = [block_idx() / 2 * 32]);
    }
}

/// Happens-before between blocks is tracked per location (vector clocks): acquiring a flag
/// that was released before the payload was written does not order the payload, even when the
/// writer has released another flag since (which a global release count would take as
/// ordering).
#[test]
fn the_emulator_orders_blocks_only_through_the_location_they_synchronise_on() {
    for fences in [0, 1] {
        for dev in backends() {
            let out = dev.full(2 * 32, -1i32).unwrap();
            two_flags::launch(&dev, 4u32, &out, 1, fences).unwrap();
            assert_eq!(
                out.download().unwrap(),
                vec![7; 64],
                "{dev:?} fences {fences}"
            );
        }
        // Waiting for the early flag: a race (on the GPU block 1 may read before the payload).
        for _ in 0..8 {
            let dev = common::emulator();
            let out = dev.full(2 * 32, -1i32).unwrap();
            let e = two_flags::launch(&dev, 4u32, &out, 0, fences)
                .unwrap_err()
                .to_string();
            assert!(e.contains("race") && e.contains("release/acquire"), "{e}");
        }
    }
}

#[test]
fn a_use_before_the_first_cluster_sync_gets_a_barrier_first() {
    for dev in backends() {
        let out = dev.full(64, -1i32).unwrap();
        too_early::launch(&dev, 2u32, &out).unwrap();
        assert_eq!(out.download().unwrap(), vec![1; 64], "{dev:?}");
    }
    // In the PTX the barrier comes before the first access to a peer's shared memory.
    let ptx = too_early::PTX;
    let barrier = ptx
        .find("barrier.cluster.arrive")
        .expect("a cluster barrier");
    let access = ptx.find("shared::cluster").expect("a distributed access");
    assert!(barrier < access, "{ptx}");
    // A kernel whose accesses all follow its own first barrier gets none: `shared_writers` has
    // its three and the one at the end that every kernel with distributed shared memory has.
    assert_eq!(
        shared_writers::PTX
            .matches("barrier.cluster.arrive")
            .count(),
        4,
        "{}",
        shared_writers::PTX
    );
}

/// The kernel's IR with `edit` applied, run on the strict emulator with 2-block clusters on
/// one `i32` tensor of 64 elements and the scalar `arg`.
fn run_edited_ir(
    spec: &tilus::KernelSpec,
    edit: impl FnOnce(&mut tilus::core::ir::Kernel),
    arg: Option<i32>,
) -> Result<(), tilus::core::emu::EmuError> {
    use std::sync::atomic::AtomicU32;
    use tilus::core::emu::{EmuArg, EmuOptions, GlobalMem};
    let mut ir = spec.ir().unwrap().clone();
    edit(&mut ir);
    let cells: Vec<AtomicU32> = (0..64).map(|_| AtomicU32::new(0)).collect();
    let mut args = vec![EmuArg::Tensor(GlobalMem::W32(&cells))];
    args.extend(arg.map(EmuArg::i32));
    let opts = EmuOptions {
        check_races: true,
        ..EmuOptions::default()
    };
    tilus::core::emu::launch(&ir, 2u32, &args, &opts)
}

/// The emulator's own checks, on IR that breaks the cluster rules (the compiler produces none:
/// a hand-built `KernelSpec` could).
#[test]
fn the_emulator_reports_cluster_protocol_errors() {
    use tilus::core::ir::{Inst, Operand, Stmt};
    // Without the compiler's barrier at the start: a peer's part touched too early.
    let e = run_edited_ir(
        too_early::spec(),
        |k| {
            assert!(matches!(
                k.body[0],
                Stmt::Inst {
                    inst: Inst::ClusterSync,
                    ..
                }
            ));
            k.body.remove(0);
        },
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("before this block's first `cluster_sync()`"),
        "{e}"
    );
    // The barrier under a condition on the rank: block 1 skips it, and block 0 waits for a
    // block that has exited.
    let e = run_edited_ir(
        skipped_barrier::spec(),
        |k| {
            let first = k.vars.iter().position(|v| v.name == "first").unwrap() as u32;
            for s in &mut k.body {
                if let Stmt::If { cond, .. } = s {
                    *cond = Operand::Var(first);
                }
            }
        },
        Some(0),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("already exited"), "{e}");
    let dev = common::emulator();
    let out = dev.zeros::<i32>(64).unwrap();
    let e = cluster_info::launch(&dev, (3u32, 2u32, 1u32), &out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cluster"), "{e}");
}

#[test]
fn cluster_launches_need_whole_clusters_on_every_backend() {
    for dev in backends() {
        let out = dev.zeros::<i32>(1024).unwrap();
        assert!(
            cluster_info::launch(&dev, (3u32, 2u32, 1u32), &out).is_err(),
            "{dev:?}"
        );
        assert!(
            cluster_histogram::launch(&dev, 6u32, &out, &out).is_err(),
            "{dev:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Contiguous runs: `start + arange(n)` indices into a distributed tensor go as one `mapa` and
// vector accesses per run of a thread (own window or `.shared::cluster`), with per-element code
// for runs that are misaligned, straddle two blocks or leave the tensor.

/// Block rank 0 stores 512 values at `put + arange(512)` (crossing into block 1's rows when
/// `put` is near 1024); after a barrier every block reads 1024 elements at `get + arange(1024)`
/// with relaxed atomic loads (0 outside the tensor). Untouched elements hold -7.
macro_rules! run_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 64, cluster = 2)]
        fn $name(src: GlobalTensor<$t>, out: GlobalTensor<$t>, put: i32, get: i32) {
            let t = cluster_shared_tensor($t, [2048]);
            let me = cluster_rank();
            store_shared_scatter(t, dim = 0, indices = me * 1024 + arange(1024), values = -7);
            cluster_sync();
            let v = load_global(src, offsets = [0], shape = [512]);
            store_shared_scatter(
                t,
                dim = 0,
                indices = put + arange(512),
                values = v,
                mask = me == 0,
            );
            cluster_sync();
            let got = atomic_load(t, get + arange(1024), sem = relaxed);
            store_global(out, got, offsets = [block_idx() as i64 * 1024]);
        }
    };
}

/// Relaxed atomic stores of contiguous runs: both blocks store the same 512 values at
/// `put + arange(512)` (atomic, so the overlap is no race), then each reads its own half.
#[tile_kernel(threads = 64, cluster = 2)]
fn atomic_runs(src: GlobalTensor<i32>, out: GlobalTensor<i32>, put: i32) {
    let t = cluster_shared_tensor(i32, [2048]);
    let me = cluster_rank();
    atomic_store(t, me * 1024 + arange(1024), -7, order = relaxed);
    cluster_sync();
    let v = load_global(src, offsets = [0], shape = [512]);
    let owner = put + arange(512);
    atomic_store(t, owner, v, order = relaxed);
    cluster_sync();
    let got = atomic_load(t, me * 1024 + arange(1024), order = relaxed);
    store_global(out, got, offsets = [block_idx() as i64 * 1024]);
}

run_kernel!(runs_i32, i32);
run_kernel!(runs_i64, i64);
run_kernel!(runs_i16, i16);

type RunLaunch<T> = fn(
    &tilus::Device,
    u32,
    &tilus::GlobalTensor<T>,
    &tilus::GlobalTensor<T>,
    i32,
    i32,
) -> Result<(), tilus::Error>;

fn check_runs<T>(launch: RunLaunch<T>, from_i64: fn(i64) -> T)
where
    T: tilus::Element + Copy + PartialEq + std::fmt::Debug,
{
    let mut rng = Rng::from_env_or_clock();
    // Aligned and inside one block, crossing the blocks' boundary aligned and not, partly
    // outside the tensor at either end, and random.
    let mut cases = vec![
        (0, 0),
        (1024, 1024),
        (768, 512),
        (770, 1021),
        (-3, -5),
        (1800, 1500),
    ];
    for _ in 0..4 {
        cases.push((rng.range(-600, 2100), rng.range(-1100, 2100)));
    }
    for dev in backends() {
        let blocks = 4u32;
        let src_host: Vec<T> = (0..512)
            .map(|i| from_i64(rng.range(0, 100) as i64 * 3 + i % 2))
            .collect();
        let src = dev.upload(&src_host).unwrap();
        for &(put, get) in &cases {
            let out = dev.full(blocks as usize * 1024, from_i64(99)).unwrap();
            launch(&dev, blocks, &src, &out, put, get).unwrap();
            let mut t = [from_i64(-7); 2048];
            for (i, v) in src_host.iter().enumerate() {
                let at = put as i64 + i as i64;
                if (0..2048).contains(&at) {
                    t[at as usize] = *v;
                }
            }
            let got = out.download().unwrap();
            for b in 0..blocks as usize {
                for f in 0..1024 {
                    let at = get as i64 + f as i64;
                    let want = if (0..2048).contains(&at) {
                        t[at as usize]
                    } else {
                        from_i64(0)
                    };
                    assert_eq!(
                        got[b * 1024 + f],
                        want,
                        "{dev:?}: put {put}, get {get}, block {b}, element {f}"
                    );
                }
            }
        }
    }
}

#[test]
fn relaxed_atomic_stores_of_runs_go_as_vectors() {
    let mut rng = Rng::from_env_or_clock();
    let src_host: Vec<i32> = (0..512).map(|_| rng.range(0, 1000)).collect();
    for dev in backends() {
        let src = dev.upload(&src_host).unwrap();
        for put in [0, 1024, 768, 770, -3, 1800, rng.range(-600, 2100)] {
            let out = dev.full(4 * 1024, 99).unwrap();
            atomic_runs::launch(&dev, 4, &src, &out, put).unwrap();
            let mut t = [-7i32; 2048];
            for (i, v) in src_host.iter().enumerate() {
                if let Ok(k) = usize::try_from(put + i as i32) {
                    if k < 2048 {
                        t[k] = *v;
                    }
                }
            }
            let got = out.download().unwrap();
            for b in 0..4 {
                let own = &t[(b % 2) * 1024..(b % 2 + 1) * 1024];
                assert_eq!(
                    &got[b * 1024..(b + 1) * 1024],
                    own,
                    "{dev:?}: put {put}, block {b}"
                );
            }
        }
    }
    let p = atomic_runs::PTX;
    assert!(
        p.contains("st.relaxed.cluster.shared::cluster.v4.s32"),
        "{p}"
    );
    assert!(p.contains("st.relaxed.cluster.shared.v4.s32"), "{p}");
    common::assemble_all("atomic_runs", p, 90);
}

#[test]
fn contiguous_runs_of_a_distributed_tensor_go_as_vectors_and_stay_exact() {
    check_runs::<i32>(runs_i32::launch, |x| x as i32);
    check_runs::<i64>(runs_i64::launch, |x| x);
    check_runs::<i16>(runs_i16::launch, |x| x as i16);
    // One `mapa` per run, vectors in both the own window and the cluster window.
    let p = runs_i32::PTX;
    assert!(p.contains("st.shared::cluster.v4.s32"), "{p}");
    assert!(p.contains("st.shared.v4.s32"), "{p}");
    assert!(
        p.contains("ld.relaxed.cluster.shared::cluster.v4.s32"),
        "{p}"
    );
    assert!(p.contains("ld.relaxed.cluster.shared.v4.s32"), "{p}");
    assert!(runs_i64::PTX.contains("ld.relaxed.cluster.shared::cluster.v2.s64"));
    // Packed 16-bit elements travel in 32-bit words, always through the cluster window.
    assert!(runs_i16::PTX.contains("ld.relaxed.cluster.shared::cluster.v4.b32"));
    for (name, ptx) in [
        ("runs_i32", runs_i32::PTX),
        ("runs_i64", runs_i64::PTX),
        ("runs_i16", runs_i16::PTX),
    ] {
        common::assemble_all(name, ptx, 90);
    }
}

// ---------------------------------------------------------------------------------------------
// PTX: cluster special registers, the barrier, `mapa` + `.shared::cluster` accesses, the
// cluster shape in the kernel, and ptxas accepts all of it.

#[test]
fn cluster_kernels_assemble_with_their_cluster_shape() {
    for (name, ptx, target) in common::kernels![
        cluster_info,
        cluster_histogram,
        ring,
        too_early,
        skipped_barrier,
        peer_atomics,
        handoff,
        shared_writers,
        two_flags
    ] {
        assert_eq!(target, 90, "{name}");
        common::assemble_all(name, ptx, target);
    }
    let h = cluster_histogram::PTX;
    assert!(h.contains("mapa.shared::cluster.u32"), "{h}");
    // Atomics on a distributed tensor are cluster-scoped by default.
    assert!(
        h.contains("red.relaxed.cluster.shared::cluster.add.u32"),
        "{h}"
    );
    assert!(h.contains("ld.acquire.cluster.shared::cluster.s32"), "{h}");
    assert!(h.contains("barrier.cluster.arrive.release;"), "{h}");
    assert!(cluster_info::PTX.contains("%cluster_ctarank"));
    // A kernel with distributed shared memory ends with a cluster barrier: no block exits
    // while another may still use its part.
    let tail = &h[h.rfind("barrier.cluster.arrive").unwrap()..];
    assert!(tail.contains("ret;"), "{tail}");
}
