//! The core language on every backend: constructors, arithmetic, comparisons, select, masked
//! global loads/stores against runtime lengths, shared tensors, 2-D tiles and views, broadcasting,
//! reductions, loops and `if`. Each kernel runs on random data of sizes that are not multiples of
//! its tile, against a CPU reference, on the strict emulator and (with `--features cuda`) the GPU,
//! and its PTX is assembled by ptxas.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

const POISON: i32 = -0x5a5a5a5b;

/// y[i] = 3 * x[i] - 7 for i < len, over a grid-stride loop of [1024] tiles.
#[tile_kernel(threads = 128)]
fn affine(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
    let n = x.len();
    for start in (block_idx() * 1024..n).step_by(grid_dim() * 1024) {
        let a = load_global(x, offsets = [start], shape = [1024]);
        // y may be longer than x: only the lanes that loaded a real element store.
        store_global(
            y,
            a * 3 - 7,
            offsets = [start],
            mask = arange(1024) + start < n,
        );
    }
}

#[test]
fn affine_grid_stride_masks_the_tail() {
    assemble_all(affine::NAME, affine::PTX, affine::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for n in [1, 1000, 1024, 5000, 70_001] {
            let data = rng.vec(n, -1 << 20, 1 << 20);
            let x = dev.upload(&data).unwrap();
            // y is one element longer than x: the element past the end must stay poisoned.
            let y = dev.full::<i32>(n + 1, POISON).unwrap();
            affine::launch(&dev, 3, &x, &y).unwrap();
            let got = y.download().unwrap();
            let want: Vec<i32> = data.iter().map(|v| v * 3 - 7).chain([POISON]).collect();
            assert_eq!(got, want, "{} n={n}", dev.name());
        }
    }
}

/// Element-wise ops, comparisons and select on one tile; scalar parameters broadcast.
#[tile_kernel(threads = 64)]
fn elementwise(x: GlobalTensor<i32>, out: GlobalTensor<i32>, k: i32) {
    let base = block_idx() * 300;
    let a = load_global(x, offsets = [base], shape = [300]);
    let idx = arange(300) + base;
    let r = select(a > k, a % 7, (a / 3) ^ idx);
    let r = r + min(a, k) - max(a, -k) + (a << 2) + (a >> 1) + (a & 255) + (a | 1);
    let r = r + (a == k) as i32 + ((a != 0) & (idx < 1000)) as i32 * 5 - -a;
    store_global(out, r, offsets = [base]);
}

fn elementwise_ref(a: i32, i: i32, k: i32) -> i32 {
    let r = if a > k { a % 7 } else { (a / 3) ^ i };
    let r = r + a.min(k) - a.max(-k) + (a << 2) + (a >> 1) + (a & 255) + (a | 1);
    r + (a == k) as i32 + ((a != 0 && i < 1000) as i32) * 5 + a
}

#[test]
fn elementwise_ops_match_rust() {
    assemble_all(elementwise::NAME, elementwise::PTX, elementwise::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 1234;
        let data = rng.vec(n, -5000, 5000);
        let k = rng.range(-100, 100);
        let x = dev.upload(&data).unwrap();
        let out = dev.full::<i32>(n, POISON).unwrap();
        elementwise::launch(&dev, n.div_ceil(300) as u32, &x, &out, k).unwrap();
        let want: Vec<i32> = data
            .iter()
            .enumerate()
            .map(|(i, &a)| elementwise_ref(a, i as i32, k))
            .collect();
        assert_eq!(out.download().unwrap(), want, "{}", dev.name());
    }
}

/// A 2-D view of a row-major matrix with runtime rows/cols (not multiples of the tile); each
/// block round-trips a [16, 32] tile through shared memory and adds broadcast row/column terms:
/// out[r, c] = m[r, c] + 1000 * (r % 16) + (c % 32).
#[tile_kernel(threads = 128)]
fn tile2d(m: GlobalTensor<i32>, out: GlobalTensor<i32>, rows: i32, cols: i32) {
    let mv = m.view(0, [rows, cols]);
    let ov = out.view(0, [rows, cols]);
    let tiles_c = (cols + 31) / 32;
    let r0 = (block_idx() / tiles_c) * 16;
    let c0 = (block_idx() % tiles_c) * 32;
    let t = load_global(mv, offsets = [r0, c0], shape = [16, 32]);
    let s = shared_tensor(i32, [16, 32]);
    store_shared(s, t);
    sync();
    let back = load_shared(s);
    let row = arange(16).reshape([16, 1]) * 1000;
    let col = arange(32).reshape([1, 32]);
    store_global(ov, back + row + col, offsets = [r0, c0]);
}

#[test]
fn two_d_views_shared_round_trip_and_broadcast() {
    assemble_all(tile2d::NAME, tile2d::PTX, tile2d::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let (rows, cols) = (37usize, 50usize);
        let data = rng.vec(rows * cols, -1000, 1000);
        let m = dev.upload(&data).unwrap();
        let out = dev.full::<i32>(rows * cols + 3, POISON).unwrap();
        let grid = rows.div_ceil(16) * cols.div_ceil(32);
        tile2d::launch(&dev, grid as u32, &m, &out, rows as i32, cols as i32).unwrap();
        let got = out.download().unwrap();
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(
                    got[r * cols + c],
                    data[r * cols + c] + 1000 * (r % 16) as i32 + (c % 32) as i32,
                    "{} at ({r}, {c})",
                    dev.name()
                );
            }
        }
        assert_eq!(
            &got[rows * cols..],
            &[POISON; 3],
            "{}: wrote past the view",
            dev.name()
        );
    }
}

/// Reductions to block-uniform scalars, `if` on scalars, `while` and `loop`/`break`.
#[tile_kernel(threads = 256)]
fn reductions(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let base = block_idx() * 700;
    let valid = (arange(700) + base) < x.len();
    let a = load_global(x, offsets = [base], shape = [700]);
    let s = a.sum();
    let lo = load_global(x, offsets = [base], shape = [700], other = i32::MAX).min();
    let hi = load_global(x, offsets = [base], shape = [700], other = i32::MIN).max();
    let any_neg = (a < 0).any();
    let all_valid = valid.all();
    let mut steps = 0;
    let mut v = hi;
    while v > lo {
        v = v - (hi - lo + 3) / 4;
        steps += 1;
    }
    let mut k = 0;
    loop {
        k += 1;
        if k >= 5 {
            break;
        }
    }
    let mut flags = 0;
    if any_neg {
        flags = flags | 1;
    } else {
        flags = flags | 2;
    }
    if all_valid {
        flags = flags | 4;
    }
    let res = select(
        arange(8) == 0,
        s,
        select(arange(8) == 1, lo, select(arange(8) == 2, hi, 0)),
    );
    let res = res
        + select(arange(8) == 3, steps, 0)
        + select(arange(8) == 4, k, 0)
        + select(arange(8) == 5, flags, 0);
    store_global(out, res, offsets = [block_idx() * 8]);
}

#[test]
fn reductions_and_control_flow() {
    assemble_all(reductions::NAME, reductions::PTX, reductions::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 2 * 700 + 123;
        let data = rng.vec(n, -300, 1000);
        let x = dev.upload(&data).unwrap();
        let blocks = n.div_ceil(700);
        let out = dev.full::<i32>(blocks * 8, POISON).unwrap();
        reductions::launch(&dev, blocks as u32, &x, &out).unwrap();
        let got = out.download().unwrap();
        for b in 0..blocks {
            let chunk = &data[b * 700..((b + 1) * 700).min(n)];
            let s: i32 = chunk.iter().sum();
            let lo = *chunk.iter().min().unwrap();
            let hi = *chunk.iter().max().unwrap();
            let mut steps = 0;
            let mut v = hi;
            while v > lo {
                v -= (hi - lo + 3) / 4;
                steps += 1;
            }
            let flags = if chunk.iter().any(|&v| v < 0) { 1 } else { 2 }
                | if chunk.len() == 700 { 4 } else { 0 };
            assert_eq!(
                &got[b * 8..b * 8 + 8],
                &[s, lo, hi, steps, 5, flags, 0, 0],
                "{} block {b}",
                dev.name()
            );
        }
    }
}

/// A tile smaller than the block: a [1] tile from 256 threads stores exactly once, and a [40]
/// tile covers only 40 threads; a scalar store through a mask.
#[tile_kernel(threads = 256)]
fn small_tiles(out: GlobalTensor<i32>, counter: GlobalTensor<i32>) {
    let one = full([1], 1);
    atomic::global_add(counter, one);
    let t = arange(40) * 2;
    // Block 0 alone writes `out` (seven blocks storing the same words would race).
    store_global(out, t, offsets = [0], mask = (t < 60) & (block_idx() == 0));
}

#[test]
fn tiles_smaller_than_the_block_are_not_replicated() {
    assemble_all(small_tiles::NAME, small_tiles::PTX, small_tiles::TARGET);
    for dev in backends() {
        let out = dev.full::<i32>(41, POISON).unwrap();
        let counter = dev.zeros::<i32>(1).unwrap();
        small_tiles::launch(&dev, 7, &out, &counter).unwrap();
        assert_eq!(
            counter.download().unwrap(),
            vec![7],
            "{}: one RMW per block",
            dev.name()
        );
        let got = out.download().unwrap();
        let want: Vec<i32> = (0..41)
            .map(|i| if i < 30 { 2 * i } else { POISON })
            .collect();
        assert_eq!(got, want, "{}", dev.name());
    }
}

/// Views whose flat index leaves the i32 range: every backend must treat the elements as out of
/// bounds (reading `other`), never wrap around to valid memory.
#[tile_kernel(threads = 32)]
fn huge_views(x: GlobalTensor<i32>, out: GlobalTensor<i32>, rows: i32, r: i32, big: i32) {
    // rows * 3 overflows i32: row r starts at 3r, which wraps to 2 in 32-bit arithmetic.
    let v = x.view(0, [rows, 3]);
    let a = load_global(v, offsets = [r, 0], shape = [1, 3], other = -7).reshape([3]);
    store_global(out, a, offsets = [0]);
    // A view of a view whose offsets add past i32::MAX.
    let w = x.view(big, [8]).view(big, [8]);
    let b = load_global(w, offsets = [0], shape = [8], other = -9);
    store_global(out, b, offsets = [3]);
    // A 2-D scatter to row r of the overflowing view: nothing may be written.
    atomic::global_scatter_add(v, dim = 0, indices = full([1, 3], r), values = 100);
}

#[test]
fn address_arithmetic_never_wraps_into_valid_memory() {
    assemble_all(huge_views::NAME, huge_views::PTX, huge_views::TARGET);
    for dev in backends() {
        let x = dev.upload(&(0..16).collect::<Vec<i32>>()).unwrap();
        let out = dev.full::<i32>(11, POISON).unwrap();
        huge_views::launch(&dev, 1, &x, &out, i32::MAX, 1_431_655_766, i32::MAX).unwrap();
        let mut want = vec![-7; 3];
        want.extend([-9; 8]);
        assert_eq!(out.download().unwrap(), want, "{}", dev.name());
        assert_eq!(
            x.download().unwrap(),
            (0..16).collect::<Vec<i32>>(),
            "{}: wrote through a wrapped index",
            dev.name()
        );
    }
}

/// Reverses a tile through shared memory. Without the `sync()` thread t would read what thread
/// 127 - t wrote, a race on the GPU: the emulator reports it instead of hiding it.
#[tile_kernel(threads = 128)]
fn reverse(x: GlobalTensor<i32>, out: GlobalTensor<i32>, with_sync: i32) {
    let buf = shared_tensor(i32, [128]);
    let t = load_global(x, offsets = [0], shape = [128]);
    store_shared_scatter(buf, dim = 0, indices = 127 - arange(128), values = t);
    if with_sync != 0 {
        sync();
    }
    store_global(out, load_shared(buf), offsets = [0]);
}

#[test]
fn a_missing_sync_is_an_error_on_the_emulator() {
    let dev = common::emulator();
    let x = dev.upload(&(0..128).collect::<Vec<i32>>()).unwrap();
    let out = dev.zeros::<i32>(128).unwrap();
    reverse::launch(&dev, 1, &x, &out, 1).unwrap();
    assert_eq!(
        out.download().unwrap(),
        (0..128).rev().collect::<Vec<i32>>()
    );
    let e = reverse::launch(&dev, 1, &x, &out, 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("race") && e.contains("`buf`") && e.contains("sync()"),
        "{e}"
    );
    for dev in backends() {
        let x = dev.upload(&(0..128).collect::<Vec<i32>>()).unwrap();
        let out = dev.zeros::<i32>(128).unwrap();
        reverse::launch(&dev, 1, &x, &out, 1).unwrap();
        assert_eq!(
            out.download().unwrap(),
            (0..128).rev().collect::<Vec<i32>>(),
            "{}",
            dev.name()
        );
    }
}

/// Edge cases of i32 arithmetic on constants: the PTX back end folds them at build time with the
/// emulator's definition (ir.rs: wrapping, x / 0 = x % 0 = 0, PTX shift clamping).
#[tile_kernel(threads = 32)]
fn folded(out: GlobalTensor<i32>) {
    let a = full([1], i32::MIN / -1);
    let b = full([1], 7 % 0);
    let c = full([1], 1 << 40);
    let d = full([1], -8 >> 40);
    let e = full([1], i32::MAX + 1);
    let f = full([1], i32::MIN % -1);
    store_global(out, a, offsets = [0]);
    store_global(out, b, offsets = [1]);
    store_global(out, c, offsets = [2]);
    store_global(out, d, offsets = [3]);
    store_global(out, e, offsets = [4]);
    store_global(out, f, offsets = [5]);
}

#[test]
fn constant_folding_agrees_with_the_emulator() {
    assemble_all(folded::NAME, folded::PTX, folded::TARGET);
    for dev in backends() {
        let out = dev.full::<i32>(6, POISON).unwrap();
        folded::launch(&dev, 1, &out).unwrap();
        assert_eq!(
            out.download().unwrap(),
            vec![i32::MIN, 0, 0, -1, i32::MIN, 0],
            "{}",
            dev.name()
        );
    }
}

#[test]
fn bad_launches_are_errors_not_panics() {
    for dev in backends() {
        let x = dev.upload(&[1, 2, 3]).unwrap();
        let y = dev.zeros::<i32>(3).unwrap();
        let e = affine::launch(&dev, 0, &x, &y).unwrap_err();
        assert!(e.to_string().contains("grid"), "{e}");
        // A tensor of another device.
        let other = common::emulator();
        let z = other.zeros::<i32>(3).unwrap();
        if !dev.same_device(&other) {
            let e = affine::launch(&dev, 1, &x, &z).unwrap_err();
            assert!(!e.to_string().is_empty());
        }
    }
}

/// The README's histogram (shared-memory scatter counts, then one global add per bin), taken
/// from the example itself, so that the kernel is written once.
#[path = "../examples/histogram.rs"]
#[allow(dead_code)] // the example's `main`
mod readme_example;
use readme_example::histogram;

#[test]
fn histogram_counts_with_out_of_range_values_and_tails() {
    assemble_all(histogram::NAME, histogram::PTX, histogram::TARGET);
    // The hot loop: 16-byte loads and warp-aggregatable shared reductions, no `atom`.
    assert!(histogram::PTX.contains("ld.global.v4.s32"));
    assert!(histogram::PTX.contains("red.relaxed.cta.shared.add.u32"));
    assert!(histogram::PTX.contains("red.relaxed.gpu.global.add.u32"));
    assert!(!histogram::PTX.contains("atom."));
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for (n, grid) in [(1, 1), (4095, 3), (4097, 1), (100_003, 7), (300_001, 64)] {
            // Values outside 0..256 (about 1 in 10) must be ignored.
            let data = rng.vec(n, -30, 280);
            let values = dev.upload(&data).unwrap();
            let hist = dev.full::<i32>(257, 0).unwrap(); // one extra bin must stay 0
            histogram::launch(&dev, grid, &values, &hist).unwrap();
            let mut want = vec![0; 257];
            for &v in &data {
                if (0..256).contains(&v) {
                    want[v as usize] += 1;
                }
            }
            assert_eq!(
                hist.download().unwrap(),
                want,
                "{} n={n} grid={grid}",
                dev.name()
            );
        }
        // An output buffer of the wrong (smaller) size is not a fault: bins past its end are
        // skipped by the bounds check, the others are exact.
        let data = rng.vec(50_000, 0, 256);
        let values = dev.upload(&data).unwrap();
        let small = dev.zeros::<i32>(100).unwrap();
        histogram::launch(&dev, 5, &values, &small).unwrap();
        let mut want = vec![0; 100];
        for &v in data.iter().filter(|&&v| v < 100) {
            want[v as usize] += 1;
        }
        assert_eq!(small.download().unwrap(), want, "{}", dev.name());
    }
}

/// Indices loaded a step ahead, then a masked gather by them. Its snapshot pins two codegen
/// rules: a loaded-ahead value is loaded into its variable (no copy that would wait for the
/// load), and a masked load's fill goes before the load, except in a gather whose runs may go
/// as vector loads (a fill there after them would overwrite what they loaded).
#[tile_kernel(threads = 64)]
fn gather_ahead(src: GlobalTensor<i32>, idx: GlobalTensor<i32>, dst: GlobalTensor<i32>) {
    let n = idx.len() as i32;
    let mut next = load_global(idx, offsets = [0], shape = [256], other = -1);
    for s in (0..n).step_by(256) {
        let i = next;
        next = load_global(idx, offsets = [s + 256], shape = [256], other = -1);
        let x = load_global(src, offsets = [i], shape = [256], mask = i >= 0, other = 7);
        store_global(dst, x, offsets = [s]);
    }
}

#[test]
fn a_gather_by_indices_loaded_ahead_reads_them() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let m = 600usize;
        let src: Vec<i32> = (0..m as i32).map(|v| v * 5 - 11).collect();
        // Runs of consecutive indices (vector loads where aligned), repeats, -1 (masked: 7)
        // and indices past the end (out of bounds: 7), over a length that is no multiple of
        // the tile.
        let n = 256 * 3 + 77;
        let idx: Vec<i32> = (0..n)
            .map(|e| match rng.range(0, 4) {
                0 => -1,
                1 => rng.range(0, m as i32 + 40),
                _ => (e as i32 * 2) % m as i32,
            })
            .collect();
        let (sd, id) = (dev.upload(&src).unwrap(), dev.upload(&idx).unwrap());
        let out = dev.full(n, i32::MIN).unwrap();
        gather_ahead::launch(&dev, 1, &sd, &id, &out).unwrap();
        let want: Vec<i32> = idx
            .iter()
            .map(|&i| {
                if (0..m as i32).contains(&i) {
                    src[i as usize]
                } else {
                    7
                }
            })
            .collect();
        assert_eq!(out.download().unwrap(), want, "{}", dev.name());
    }
}

#[test]
fn ptx_is_deterministic_and_snapshotted() {
    insta::assert_snapshot!("histogram", histogram::PTX);
    insta::assert_snapshot!("affine", affine::PTX);
    insta::assert_snapshot!("small_tiles", small_tiles::PTX);
    insta::assert_snapshot!("gather_ahead", gather_ahead::PTX);
    assert_eq!(affine::PTX, affine::spec().ptx());
}

// ---------------------------------------------------------------------------------------------
// Shapes may be arithmetic of literals (what a `macro_rules!` parameter gives: `[4 * $tile]`).

macro_rules! scaled_copy {
    ($name:ident, $tile:literal) => {
        #[tile_kernel(threads = 64)]
        fn $name(src: GlobalTensor<i32>, dst: GlobalTensor<i32>) {
            let staged = shared_tensor(i32, [2 * $tile]);
            let x = load_global(src, offsets = [0], shape = [(1 << 1) * $tile]);
            store_shared(staged, x + zeros([$tile * 4 / 2 - 0]));
            sync();
            store_global(dst, load_shared(staged), offsets = [0]);
        }
    };
}

scaled_copy!(scaled_copy_96, 96);

#[test]
fn shapes_may_be_arithmetic_of_literals() {
    let mut rng = Rng::from_env_or_clock();
    let data = rng.vec(192, -1000, 1000);
    for dev in backends() {
        let src = dev.upload(&data).unwrap();
        let dst = dev.full(192, 7).unwrap();
        scaled_copy_96::launch(&dev, 1, &src, &dst).unwrap();
        assert_eq!(dst.download().unwrap(), data, "{dev:?}");
    }
    assemble_all(
        "scaled_copy_96",
        scaled_copy_96::PTX,
        scaled_copy_96::TARGET,
    );
}

/// A spin loop with a growing back-off: `nanosleep` of a variable and of a literal.
#[tile_kernel(threads = 64)]
fn wait_with_backoff(flag: GlobalTensor<i32>, x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
    if block_idx() == 0 {
        nanosleep(1000);
        store_global(x, arange(64) * 3, offsets = [0]);
        atomic_store(flag, 0, 1, order = release, scope = gpu);
    } else {
        let mut pause = 16u32;
        while atomic_load(flag, 0, order = acquire, scope = gpu) == 0 {
            nanosleep(pause);
            pause = min(pause * 2, 2048u32);
        }
        let v = load_global(x, offsets = [0], shape = [64]);
        store_global(y, v, offsets = [(block_idx() - 1) * 64]);
    }
}

#[test]
fn nanosleep_backs_off_a_spin_loop() {
    let ptx = wait_with_backoff::PTX;
    assemble_all(wait_with_backoff::NAME, ptx, wait_with_backoff::TARGET);
    assert!(ptx.contains("\tnanosleep.u32 \t1000;"), "{ptx}");
    assert_eq!(ptx.matches("nanosleep.u32").count(), 2);
    for dev in backends() {
        for blocks in [2u32, 9] {
            let flag = dev.zeros::<i32>(1).unwrap();
            let x = dev.full::<i32>(64, -1).unwrap();
            let y = dev.full::<i32>(64 * (blocks as usize - 1), -5).unwrap();
            wait_with_backoff::launch(&dev, blocks, &flag, &x, &y).unwrap();
            let want: Vec<i32> = (0..blocks as i32 - 1)
                .flat_map(|_| (0..64).map(|i| i * 3))
                .collect();
            assert_eq!(
                y.download().unwrap(),
                want,
                "{} blocks={blocks}",
                dev.name()
            );
        }
    }
}
