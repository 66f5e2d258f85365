//! cuTile-style indexed atomics: `atomic_cas(array, indices, expected, desired)` and
//! `atomic_{xchg,add,max,min,and,or,xor}(array, indices, update)` on rank-1 and rank-2 (`view`)
//! global tensors, with broadcasting of indices and operands, scalar indices (scalar result), and
//! bounds checking on and off. Every test runs on every backend of `common::backends()` (the
//! strict emulator, plus the GPU when built with `--features cuda`) and assembles its PTX.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

// ---------------------------------------------------------------------------------------------
// The worked example of the cuTile documentation.

#[tile_kernel(threads = 128)]
fn cas_example(x: GlobalTensor<i32>, old: GlobalTensor<i32>) {
    let indices = arange(4);
    let expected = full([4], 0);
    let desired = full([4], 42);
    let r = atomic_cas(x, indices, expected, desired);
    store_global(old, r, offsets = [0]);
}

#[test]
fn cas_worked_example() {
    assemble_all(cas_example::NAME, cas_example::PTX, cas_example::TARGET);
    for dev in backends() {
        let x = dev.upload(&[0, 1, 0, 1]).unwrap();
        let old = dev.zeros::<i32>(4).unwrap();
        cas_example::launch(&dev, 1, &x, &old).unwrap();
        assert_eq!(
            old.download().unwrap(),
            vec![0, 1, 0, 1],
            "old values on {}",
            dev.name()
        );
        assert_eq!(
            x.download().unwrap(),
            vec![42, 1, 42, 1],
            "array after on {}",
            dev.name()
        );
    }
}

/// Scalars for `expected` / `desired` broadcast to the indices' shape.
#[tile_kernel(threads = 64)]
fn cas_scalar_operands(x: GlobalTensor<i32>, old: GlobalTensor<i32>) {
    let r = atomic_cas(x, arange(8) * 2, 5, -7);
    store_global(old, r, offsets = [0]);
}

#[test]
fn cas_scalar_operands_broadcast() {
    assemble_all(
        cas_scalar_operands::NAME,
        cas_scalar_operands::PTX,
        cas_scalar_operands::TARGET,
    );
    for dev in backends() {
        let init: Vec<i32> = (0..16).map(|i| if i % 3 == 0 { 5 } else { i }).collect();
        let x = dev.upload(&init).unwrap();
        let old = dev.zeros::<i32>(8).unwrap();
        cas_scalar_operands::launch(&dev, 1, &x, &old).unwrap();
        let mut want = init.clone();
        let mut want_old = vec![0; 8];
        for e in 0..8 {
            let i = 2 * e;
            want_old[e] = init[i];
            if init[i] == 5 {
                want[i] = -7;
            }
        }
        assert_eq!(old.download().unwrap(), want_old, "{}", dev.name());
        assert_eq!(x.download().unwrap(), want, "{}", dev.name());
    }
}

// ---------------------------------------------------------------------------------------------
// Broadcasting: indices of shapes [M, N, 1] and [M, 1, K], expected/desired of shape [N, K].

const M: usize = 2;
const N: usize = 4;
const K: usize = 8;

/// Distinct addresses: row m*N + n, column m*K + k of an [M*N, M*K] array.
#[tile_kernel(threads = 128)]
fn cas_broadcast(
    x: GlobalTensor<i32>,
    expected: GlobalTensor<i32>,
    desired: GlobalTensor<i32>,
    old: GlobalTensor<i32>,
) {
    let a = x.view(0, [8, 16]);
    let i = arange(8).reshape([2, 4, 1]);
    let j = arange(16).reshape([2, 1, 8]);
    let e = load_global(expected, offsets = [0], shape = [32]).reshape([4, 8]);
    let d = load_global(desired, offsets = [0], shape = [32]).reshape([4, 8]);
    let r = atomic_cas(a, (i, j), e, d);
    store_global(old, r.reshape([64]), offsets = [0]);
}

/// Colliding addresses: both m = 0 and m = 1 address row n, column k of an [N, K] array.
#[tile_kernel(threads = 128)]
fn cas_broadcast_dup(
    x: GlobalTensor<i32>,
    expected: GlobalTensor<i32>,
    desired: GlobalTensor<i32>,
    old: GlobalTensor<i32>,
) {
    let a = x.view(0, [4, 8]);
    let i = (arange(8) % 4).reshape([2, 4, 1]);
    let j = (arange(16) % 8).reshape([2, 1, 8]);
    let e = load_global(expected, offsets = [0], shape = [32]).reshape([4, 8]);
    let d = load_global(desired, offsets = [0], shape = [32]).reshape([4, 8]);
    let r = atomic_cas(a, (i, j), e, d);
    store_global(old, r.reshape([64]), offsets = [0]);
}

#[test]
fn cas_broadcast_indices_mn1_m1k() {
    assemble_all(
        cas_broadcast::NAME,
        cas_broadcast::PTX,
        cas_broadcast::TARGET,
    );
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for _ in 0..4 {
            let cols = M * K;
            let init = rng.vec(M * N * cols, 0, 3);
            let exp = rng.vec(N * K, 0, 3);
            let des = rng.vec(N * K, 100, 200);
            let x = dev.upload(&init).unwrap();
            let e = dev.upload(&exp).unwrap();
            let d = dev.upload(&des).unwrap();
            let old = dev.full::<i32>(M * N * K, -99).unwrap();
            cas_broadcast::launch(&dev, 1, &x, &e, &d, &old).unwrap();
            let mut want = init.clone();
            let mut want_old = vec![0; M * N * K];
            for m in 0..M {
                for n in 0..N {
                    for k in 0..K {
                        let addr = (m * N + n) * cols + m * K + k;
                        want_old[(m * N + n) * K + k] = init[addr];
                        if init[addr] == exp[n * K + k] {
                            want[addr] = des[n * K + k];
                        }
                    }
                }
            }
            assert_eq!(
                old.download().unwrap(),
                want_old,
                "old values on {}",
                dev.name()
            );
            assert_eq!(x.download().unwrap(), want, "array on {}", dev.name());
        }
    }
}

#[test]
fn cas_broadcast_colliding_indices_are_atomic() {
    assemble_all(
        cas_broadcast_dup::NAME,
        cas_broadcast_dup::PTX,
        cas_broadcast_dup::TARGET,
    );
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for _ in 0..4 {
            let init = rng.vec(N * K, 0, 2);
            let exp = rng.vec(N * K, 0, 2);
            let des = rng.vec(N * K, 100, 200);
            let x = dev.upload(&init).unwrap();
            let e = dev.upload(&exp).unwrap();
            let d = dev.upload(&des).unwrap();
            let old = dev.full::<i32>(M * N * K, -99).unwrap();
            cas_broadcast_dup::launch(&dev, 1, &x, &e, &d, &old).unwrap();
            let got_old = old.download().unwrap();
            let got = x.download().unwrap();
            for a in 0..N * K {
                // Two CASes with the same (expected, desired) on one element: exactly one can
                // succeed; the other sees the first one's result.
                let (first, final_) = if init[a] == exp[a] {
                    (init[a], des[a])
                } else {
                    (init[a], init[a])
                };
                assert_eq!(got[a], final_, "element {a} on {}", dev.name());
                let mut olds = [got_old[a], got_old[N * K + a]];
                olds.sort();
                let mut want = [first, final_];
                want.sort();
                assert_eq!(olds, want, "old values of element {a} on {}", dev.name());
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every op, rank 1 and rank 2, distinct indices: exact old values and final contents.

/// `op`: 0 xchg, 1 add, 2 max, 3 min, 4 and, 5 or, 6 xor, 7 cas (update = desired, expected = 0).
#[tile_kernel(threads = 128)]
fn rmw_rank1(
    x: GlobalTensor<i32>,
    idx: GlobalTensor<i32>,
    upd: GlobalTensor<i32>,
    old: GlobalTensor<i32>,
    op: i32,
) {
    let i = load_global(idx, offsets = [0], shape = [256]);
    let u = load_global(upd, offsets = [0], shape = [256]);
    let mut r = zeros([256]);
    if op == 0 {
        r = atomic_xchg(x, i, u);
    } else if op == 1 {
        r = atomic_add(x, i, u);
    } else if op == 2 {
        r = atomic_max(x, i, u);
    } else if op == 3 {
        r = atomic_min(x, i, u);
    } else if op == 4 {
        r = atomic_and(x, i, u);
    } else if op == 5 {
        r = atomic_or(x, i, u);
    } else if op == 6 {
        r = atomic_xor(x, i, u);
    } else {
        r = atomic_cas(x, i, zeros([256]), u);
    }
    store_global(old, r, offsets = [0]);
}

/// The same on a [16, 16] view at offset 3, indices (idx / 16, idx % 16).
#[tile_kernel(threads = 128)]
fn rmw_rank2(
    x: GlobalTensor<i32>,
    idx: GlobalTensor<i32>,
    upd: GlobalTensor<i32>,
    old: GlobalTensor<i32>,
    op: i32,
) {
    let a = x.view(3, [16, 16]);
    let flat = load_global(idx, offsets = [0], shape = [256]);
    let rows = flat / 16;
    let cols = flat % 16;
    let u = load_global(upd, offsets = [0], shape = [256]).reshape([16, 16]);
    let rr = rows.reshape([16, 16]);
    let cc = cols.reshape([16, 16]);
    let mut r = zeros([16, 16]);
    if op == 0 {
        r = atomic_xchg(a, (rr, cc), u);
    } else if op == 1 {
        r = atomic_add(a, (rr, cc), u);
    } else if op == 2 {
        r = atomic_max(a, (rr, cc), u);
    } else if op == 3 {
        r = atomic_min(a, (rr, cc), u);
    } else if op == 4 {
        r = atomic_and(a, (rr, cc), u);
    } else if op == 5 {
        r = atomic_or(a, (rr, cc), u);
    } else if op == 6 {
        r = atomic_xor(a, (rr, cc), u);
    } else {
        r = atomic_cas(a, (rr, cc), zeros([16, 16]), u);
    }
    store_global(old, r.reshape([256]), offsets = [0]);
}

fn apply(op: i32, old: i32, u: i32) -> i32 {
    match op {
        0 => u,
        1 => old.wrapping_add(u),
        2 => old.max(u),
        3 => old.min(u),
        4 => old & u,
        5 => old | u,
        6 => old ^ u,
        _ => {
            if old == 0 {
                u
            } else {
                old
            }
        }
    }
}

fn permutation(rng: &mut Rng, n: usize) -> Vec<i32> {
    let mut p: Vec<i32> = (0..n as i32).collect();
    for i in (1..n).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

#[test]
fn every_op_rank1_and_rank2_distinct_indices() {
    assemble_all(rmw_rank1::NAME, rmw_rank1::PTX, rmw_rank1::TARGET);
    assemble_all(rmw_rank2::NAME, rmw_rank2::PTX, rmw_rank2::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for rank in [1, 2] {
            for op in 0..8 {
                let base = if rank == 1 { 0 } else { 3 };
                let len = base + 256 + 5;
                let init: Vec<i32> = (0..len)
                    .map(|_| {
                        if rng.range(0, 4) == 0 {
                            0
                        } else {
                            rng.range(-1000, 1000)
                        }
                    })
                    .collect();
                let perm = permutation(&mut rng, 256);
                let upd = rng.vec(256, -1000, 1000);
                let x = dev.upload(&init).unwrap();
                let idx = dev.upload(&perm).unwrap();
                let u = dev.upload(&upd).unwrap();
                let old = dev.full::<i32>(256, -99).unwrap();
                if rank == 1 {
                    rmw_rank1::launch(&dev, 1, &x, &idx, &u, &old, op).unwrap();
                } else {
                    rmw_rank2::launch(&dev, 1, &x, &idx, &u, &old, op).unwrap();
                }
                let mut want = init.clone();
                let mut want_old = vec![0; 256];
                for e in 0..256 {
                    let a = base + perm[e] as usize;
                    want_old[e] = init[a];
                    want[a] = apply(op, init[a], upd[e]);
                }
                assert_eq!(
                    old.download().unwrap(),
                    want_old,
                    "old values: rank {rank}, op {op}, {}",
                    dev.name()
                );
                assert_eq!(
                    x.download().unwrap(),
                    want,
                    "array: rank {rank}, op {op}, {}",
                    dev.name()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate indices: the ops are atomic per element.

/// 4 blocks each add 1 at 1024 random (colliding) indices, max and min their update there.
#[tile_kernel(threads = 256)]
fn rmw_dups(
    count: GlobalTensor<i32>,
    hi: GlobalTensor<i32>,
    lo: GlobalTensor<i32>,
    idx: GlobalTensor<i32>,
    upd: GlobalTensor<i32>,
    old: GlobalTensor<i32>,
) {
    let start = block_idx() * 1024;
    let i = load_global(idx, offsets = [start], shape = [1024]);
    let u = load_global(upd, offsets = [start], shape = [1024]);
    let r = atomic_add(count, i, 1);
    store_global(old, r, offsets = [start]);
    atomic_max(hi, i, u);
    atomic_min(lo, i, u);
}

#[test]
fn duplicate_indices_add_max_min() {
    assemble_all(rmw_dups::NAME, rmw_dups::PTX, rmw_dups::TARGET);
    let mut rng = Rng::from_env_or_clock();
    let bins = 37;
    for dev in backends() {
        let n = 4 * 1024;
        let ids = rng.vec(n, 0, bins as i32);
        let upd = rng.vec(n, -100000, 100000);
        let count = dev.zeros::<i32>(bins).unwrap();
        let hi = dev.full::<i32>(bins, i32::MIN).unwrap();
        let lo = dev.full::<i32>(bins, i32::MAX).unwrap();
        let idx = dev.upload(&ids).unwrap();
        let u = dev.upload(&upd).unwrap();
        let old = dev.full::<i32>(n, -1).unwrap();
        rmw_dups::launch(&dev, 4, &count, &hi, &lo, &idx, &u, &old).unwrap();
        let mut want_count = vec![0; bins];
        let mut want_hi = vec![i32::MIN; bins];
        let mut want_lo = vec![i32::MAX; bins];
        for (e, &b) in ids.iter().enumerate() {
            want_count[b as usize] += 1;
            want_hi[b as usize] = want_hi[b as usize].max(upd[e]);
            want_lo[b as usize] = want_lo[b as usize].min(upd[e]);
        }
        assert_eq!(count.download().unwrap(), want_count, "{}", dev.name());
        assert_eq!(hi.download().unwrap(), want_hi, "{}", dev.name());
        assert_eq!(lo.download().unwrap(), want_lo, "{}", dev.name());
        // The old values of one bin are 0, 1, ..., count-1 in some order: every add saw a
        // different value (each one got a unique "ticket").
        let olds = old.download().unwrap();
        for b in 0..bins {
            let mut got: Vec<i32> = ids
                .iter()
                .zip(&olds)
                .filter(|(&i, _)| i as usize == b)
                .map(|(_, &o)| o)
                .collect();
            got.sort();
            assert_eq!(
                got,
                (0..want_count[b]).collect::<Vec<_>>(),
                "tickets of bin {b} on {}",
                dev.name()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar and mixed indices.

/// All-scalar indices give a block-uniform scalar; a tile and a scalar index broadcast.
#[tile_kernel(threads = 128)]
fn scalar_indices(x: GlobalTensor<i32>, out: GlobalTensor<i32>, r: i32, c: i32) {
    let a = x.view(0, [8, 8]);
    // Scalar result: usable in scalar arithmetic and control flow.
    let s = atomic_add(a, (r, c), 5);
    let t = atomic_xchg(x, 63, s + 1000);
    let mut flag = 0;
    if s == 10 * r + c {
        flag = 1;
    }
    store_global(out, full([4], s) + arange(4) * 0, offsets = [0]);
    store_global(out, full([1], t), offsets = [4]);
    store_global(out, full([1], flag), offsets = [5]);
    // Column c of every row: a [8] tile index with a scalar one.
    let col = atomic_or(a, (arange(8), c), 1 << 20);
    store_global(out, col, offsets = [8]);
    // Row r: a scalar row with a [1, 8] tile of columns.
    let row = atomic_cas(
        a,
        (r, arange(8).reshape([1, 8])),
        10 * r + arange(8).reshape([1, 8]),
        -1,
    );
    store_global(out, row.reshape([8]), offsets = [16]);
}

#[test]
fn scalar_and_mixed_indices() {
    assemble_all(
        scalar_indices::NAME,
        scalar_indices::PTX,
        scalar_indices::TARGET,
    );
    for dev in backends() {
        let (r, c) = (3usize, 5usize);
        let init: Vec<i32> = (0..64).map(|i| 10 * (i / 8) + i % 8).collect();
        let x = dev.upload(&init).unwrap();
        let out = dev.full::<i32>(24, -99).unwrap();
        scalar_indices::launch(&dev, 1, &x, &out, r as i32, c as i32).unwrap();
        let got = out.download().unwrap();
        let s = (10 * r + c) as i32;
        assert_eq!(&got[0..4], &[s; 4], "scalar result on {}", dev.name());
        assert_eq!(got[4], init[63], "xchg scalar result on {}", dev.name());
        assert_eq!(got[5], 1, "scalar result usable in `if` on {}", dev.name());
        // After the add and the xchg: element (r, c) += 5, element 63 = s + 1000.
        let mut mem = init.clone();
        mem[r * 8 + c] += 5;
        mem[63] = s + 1000;
        let want_col: Vec<i32> = (0..8).map(|i| mem[i * 8 + c]).collect();
        assert_eq!(&got[8..16], &want_col[..], "column olds on {}", dev.name());
        for i in 0..8 {
            mem[i * 8 + c] |= 1 << 20;
        }
        let want_row: Vec<i32> = (0..8).map(|j| mem[r * 8 + j]).collect();
        assert_eq!(&got[16..24], &want_row[..], "row olds on {}", dev.name());
        for j in 0..8 {
            if mem[r * 8 + j] == (10 * r + j) as i32 {
                mem[r * 8 + j] = -1;
            }
        }
        assert_eq!(x.download().unwrap(), mem, "array on {}", dev.name());
    }
}

// ---------------------------------------------------------------------------------------------
// Bounds.

/// Indices -3..13 into a tensor of `x.len()` (10 in the test): out-of-bounds elements are not
/// touched; CAS returns `expected` there, the other ops 0.
#[tile_kernel(threads = 64)]
fn oob_checked(x: GlobalTensor<i32>, y: GlobalTensor<i32>, old: GlobalTensor<i32>) {
    let i = arange(16) - 3;
    let r = atomic_cas(x, i, arange(16) + 100, full([16], 7));
    store_global(old, r, offsets = [0]);
    let a = atomic_add(y, i, 1, check_bounds = true);
    store_global(old, a, offsets = [16]);
}

/// A [3, 4] view at offset 2 of a 14-element tensor: rows -1..5 x columns -1..6. An element is
/// active only inside the view's dims (and inside the base tensor).
#[tile_kernel(threads = 64)]
fn oob_view(x: GlobalTensor<i32>, old: GlobalTensor<i32>) {
    let a = x.view(2, [3, 4]);
    let rows = (arange(6) - 1).reshape([6, 1]);
    let cols = (arange(8) - 1).reshape([1, 8]);
    let r = atomic_cas(a, (rows, cols), -5, 1000 + rows * 10 + cols);
    store_global(old, r.reshape([48]), offsets = [0]);
    // A view reaching past the end of the base tensor: offset 10, dims [2, 4] covers 10..18 of 14.
    let b = x.view(10, [2, 4]);
    let t = atomic_add(b, (arange(2).reshape([2, 1]), arange(4).reshape([1, 4])), 1);
    store_global(old, t.reshape([8]), offsets = [48]);
}

/// Its callers promise `0 <= shift` and `shift + 16 <= x.len()`.
#[tile_kernel(threads = 64)]
unsafe fn unchecked(x: GlobalTensor<i32>, old: GlobalTensor<i32>, shift: i32) {
    let i = arange(16) + shift;
    let r = atomic_cas(x, i, zeros([16]), arange(16) + 1, check_bounds = false);
    store_global(old, r, offsets = [0]);
    let a = atomic_add(x, i, 100, check_bounds = false);
    store_global(old, a, offsets = [16]);
}

/// The same accesses in a safe kernel: the `unsafe` blocks are sound because the branch checks
/// what they need.
#[tile_kernel(threads = 64)]
fn unchecked_guarded(x: GlobalTensor<i32>, old: GlobalTensor<i32>, shift: i32) {
    if shift >= 0 && shift as i64 + 16 <= x.len() {
        let i = arange(16) + shift;
        let r = unsafe { atomic_cas(x, i, zeros([16]), arange(16) + 1, check_bounds = false) };
        store_global(old, r, offsets = [0]);
        unsafe {
            let a = atomic_add(x, i, 100, check_bounds = false);
            store_global(old, a, offsets = [16]);
        }
    }
}

#[test]
fn out_of_bounds_checked() {
    assemble_all(oob_checked::NAME, oob_checked::PTX, oob_checked::TARGET);
    for dev in backends() {
        let init: Vec<i32> = (0..10)
            .map(|i| if i % 2 == 0 { 100 + i + 3 } else { -i })
            .collect();
        let x = dev.upload(&init).unwrap();
        let y = dev.zeros::<i32>(10).unwrap();
        let old = dev.full::<i32>(32, -99).unwrap();
        oob_checked::launch(&dev, 1, &x, &y, &old).unwrap();
        let got = old.download().unwrap();
        let mut want_x = init.clone();
        for e in 0..16 {
            let i = e as i32 - 3;
            if (0..10).contains(&i) {
                let a = i as usize;
                assert_eq!(got[e], init[a], "cas old at {i} on {}", dev.name());
                if init[a] == e as i32 + 100 {
                    want_x[a] = 7;
                }
                assert_eq!(got[16 + e], 0, "add old at {i} on {}", dev.name());
            } else {
                assert_eq!(
                    got[e],
                    e as i32 + 100,
                    "cas out of bounds returns `expected` (index {i}) on {}",
                    dev.name()
                );
                assert_eq!(
                    got[16 + e],
                    0,
                    "add out of bounds returns 0 (index {i}) on {}",
                    dev.name()
                );
            }
        }
        assert_eq!(x.download().unwrap(), want_x, "{}", dev.name());
        assert_eq!(y.download().unwrap(), vec![1; 10], "{}", dev.name());
    }
}

#[test]
fn out_of_bounds_through_views() {
    assemble_all(oob_view::NAME, oob_view::PTX, oob_view::TARGET);
    for dev in backends() {
        let init = vec![-5; 14];
        let x = dev.upload(&init).unwrap();
        let old = dev.full::<i32>(56, -99).unwrap();
        oob_view::launch(&dev, 1, &x, &old).unwrap();
        let got = old.download().unwrap();
        let mut want_x = init.clone();
        for ri in 0..6 {
            for ci in 0..8 {
                let (r, c) = (ri as i32 - 1, ci as i32 - 1);
                let e = ri * 8 + ci;
                assert_eq!(
                    got[e],
                    -5,
                    "cas old (in or out of bounds: both -5) at ({r}, {c}) on {}",
                    dev.name()
                );
                if (0..3).contains(&r) && (0..4).contains(&c) {
                    want_x[2 + (r * 4 + c) as usize] = 1000 + r * 10 + c;
                }
            }
        }
        // Second view: elements 10..14 exist (old value as written by the first CAS or -5), 14..18 do not.
        let mut after_first = want_x.clone();
        for (k, flat) in (10..18).enumerate() {
            if flat < 14 {
                assert_eq!(
                    got[48 + k],
                    after_first[flat],
                    "view past the end: element {flat} on {}",
                    dev.name()
                );
                after_first[flat] += 1;
            } else {
                assert_eq!(
                    got[48 + k],
                    0,
                    "view past the end: element {flat} (out of the base tensor) on {}",
                    dev.name()
                );
            }
        }
        assert_eq!(x.download().unwrap(), after_first, "{}", dev.name());
    }
}

#[test]
fn unchecked_in_bounds_on_every_backend() {
    assemble_all(unchecked::NAME, unchecked::PTX, unchecked::TARGET);
    assemble_all(
        unchecked_guarded::NAME,
        unchecked_guarded::PTX,
        unchecked_guarded::TARGET,
    );
    for (dev, guarded) in backends()
        .into_iter()
        .flat_map(|d| [(d.clone(), false), (d, true)])
    {
        let init: Vec<i32> = (0..20).map(|i| i % 2).collect();
        let x = dev.upload(&init).unwrap();
        let old = dev.full::<i32>(32, -99).unwrap();
        if guarded {
            unchecked_guarded::launch(&dev, 1, &x, &old, 4).unwrap();
        } else {
            // SAFETY: 4 + 16 <= 20 elements.
            unsafe { unchecked::launch(&dev, 1, &x, &old, 4) }.unwrap();
        }
        let got = old.download().unwrap();
        let mut mem = init.clone();
        for e in 0..16 {
            let a = e + 4;
            assert_eq!(got[e], mem[a], "{}", dev.name());
            if mem[a] == 0 {
                mem[a] = e as i32 + 1;
            }
        }
        for e in 0..16 {
            let a = e + 4;
            assert_eq!(got[16 + e], mem[a], "{}", dev.name());
            mem[a] += 100;
        }
        assert_eq!(x.download().unwrap(), mem, "{}", dev.name());
    }
}

/// Out of bounds with `check_bounds = false` is undefined on the GPU: only the emulator runs it,
/// and it must report an error (touching no memory) rather than guess. The guarded kernel skips
/// instead, leaving `old` poisoned.
#[test]
fn unchecked_out_of_bounds_is_an_emulator_error() {
    let dev = common::emulator();
    for shift in [-1, 5, 1000] {
        let init: Vec<i32> = (0..20).collect();
        let x = dev.upload(&init).unwrap();
        let old = dev.full::<i32>(32, -99).unwrap();
        // A broken promise, which only the emulator may be given: it reports it, touching
        // nothing (on a GPU this would be undefined behaviour).
        let err = unsafe { unchecked::launch(&dev, 1, &x, &old, shift) }
            .expect_err("an out-of-bounds unchecked atomic must be an error");
        let msg = err.to_string();
        assert!(msg.contains("out of bounds"), "shift {shift}: {msg}");
        // Nothing of the faulting access was performed.
        assert_eq!(
            x.download().unwrap(),
            init,
            "shift {shift}: the faulting CAS touched memory"
        );
        unchecked_guarded::launch(&dev, 1, &x, &old, shift).unwrap();
        assert_eq!(old.download().unwrap(), vec![-99; 32], "shift {shift}");
        assert_eq!(x.download().unwrap(), init, "shift {shift}");
    }
}
