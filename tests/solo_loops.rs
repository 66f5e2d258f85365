//! Loops whose tiles all fit in one warp run on warp 0 alone in the PTX (no block barrier per
//! reduction; `tilus-core/src/ptx/emit/solo.rs`), and the scalars they assign reach every
//! thread after them. The same kernels on every backend against CPU references: live-out
//! scalars of several types (`i32`, `i64`, `f32`, `bool`), a `break`, a nested loop, a `for`
//! loop, a float fold over a window of NaNs, acquire loads after the whole block's writes, and
//! loops that must stay block-wide.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// Walks `x` backwards 32 at a time from `n`, as a look-back does, until it meets a 7 or the
/// start; folds what it passes in several types. Every thread then uses the results.
#[tile_kernel(threads = 128)]
fn walk(
    x: GlobalTensor<i32>,
    f: GlobalTensor<f32>,
    out: GlobalTensor<i32>,
    fout: GlobalTensor<f32>,
    n: i32,
) {
    let lanes = arange(32);
    let mut end = n;
    let mut total = 0;
    let mut wide = 0 as i64;
    let mut found = false;
    let mut at_seven = -1;
    let mut best = f32::NEG_INFINITY;
    let mut steps = 0;
    while end > 0 {
        let at = lanes + (end - 32);
        let inside = at >= 0;
        let place = select(inside, at, 0);
        let v = select(inside, atomic_load(x, place, sem = relaxed), 0);
        let fv = select(
            inside,
            atomic_load(f, place, sem = relaxed),
            f32::NEG_INFINITY,
        );
        let seven = select(v == 7, at, -1).max();
        steps += 1;
        // A vote of the warp's lanes (a block's vote would be `bar.red`, which warp 0 alone
        // must not reach).
        if (v == 7).any() {
            found = true;
            at_seven = seven;
            break;
        }
        total += v.sum();
        wide = wide + (v as i64 * 1000003).sum();
        best = max(best, fv.max());
        // A nested loop of the same kind: counts the odd values of this window, 8 at a time.
        let mut k = 0;
        while k < 32 {
            let odd = ((v & 1) == 1) & (lanes >= k) & (lanes < k + 8);
            total += (odd as i32).sum() * 1000;
            k += 8;
        }
        end = end - 32;
    }
    let all = arange(128);
    store_global(out, all + total, offsets = [0]);
    store_global(
        out,
        full([128], (wide >> 3) as i32) + steps,
        offsets = [128],
    );
    store_global(
        out,
        select(all < 64, found as i32, at_seven),
        offsets = [256],
    );
    store_global(fout, full([128], best) + all as f32, offsets = [0]);
}

/// A `for` loop of one-warp tiles, and a loop that must stay block-wide (a 64-element tile).
#[tile_kernel(threads = 96)]
fn rounds(x: GlobalTensor<i32>, out: GlobalTensor<i32>, r: i32) {
    let mut acc = 0;
    let mut hi = i32::MIN;
    for k in 0..r {
        let t = load_global(x, offsets = [k * 32], shape = [32], other = 0);
        acc += t.sum();
        hi = max(hi, t.max());
    }
    let mut wide = 0;
    for k in 0..r {
        let t = load_global(x, offsets = [k * 32], shape = [64], other = 0);
        wide += t.sum();
    }
    store_global(out, full([96], acc) + arange(96), offsets = [0]);
    store_global(out, full([96], hi - wide), offsets = [96]);
}

/// Every warp writes `data`; a one-warp loop reads it back after acquire loads. A tile-level
/// acquire orders the whole block's earlier accesses before what follows it, so the loop
/// starts with a block barrier (the warps that do not run it wrote `data` too).
#[tile_kernel(threads = 128)]
fn acquire_after_block_writes(
    data: GlobalTensor<i32>,
    flags: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
) {
    store_global(data, arange(128) * 3, offsets = [0]);
    let lanes = arange(32);
    let mut k = 0;
    let mut total = 0;
    while k < 128 {
        let f = atomic_load(flags, lanes, sem = acquire, scope = gpu);
        let d = load_global(data, offsets = [k], shape = [32]);
        total += (d + f).sum();
        k += 32;
    }
    store_global(out, full([1], total), offsets = [0]);
}

fn reference_walk(x: &[i32], f: &[f32], n: i32) -> (Vec<i32>, Vec<f32>) {
    let (mut end, mut total, mut wide) = (n, 0i32, 0i64);
    let (mut found, mut at_seven, mut best, mut steps) = (false, -1, f32::NEG_INFINITY, 0);
    while end > 0 {
        let window: Vec<(i32, i32, f32)> = (0..32)
            .map(|l| end - 32 + l)
            .map(|a| match a >= 0 {
                true => (a, x[a as usize], f[a as usize]),
                false => (a, 0, f32::NEG_INFINITY),
            })
            .collect();
        steps += 1;
        if let Some(&(a, _, _)) = window.iter().rev().find(|w| w.1 == 7) {
            found = true;
            at_seven = a;
            break;
        }
        total = window.iter().fold(total, |s, w| s.wrapping_add(w.1));
        wide = window
            .iter()
            .fold(wide, |s, w| s.wrapping_add(w.1 as i64 * 1000003));
        // PTX `max.f32` and Rust's `f32::max` both ignore a NaN operand.
        best = window.iter().fold(best, |m, w| m.max(w.2));
        let odd = window.iter().filter(|w| w.1 & 1 == 1).count() as i32;
        total = total.wrapping_add(odd * 1000);
        end -= 32;
    }
    let mut out: Vec<i32> = (0..128).map(|i| i + total).collect();
    out.extend((0..128).map(|_| (wide >> 3) as i32 + steps));
    out.extend((0..128).map(|i| if i < 64 { found as i32 } else { at_seven }));
    let fout = (0..128).map(|i| best + i as f32).collect();
    (out, fout)
}

#[test]
fn live_outs_reach_every_thread() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for case in 0..8 {
            let len = 32 * 40;
            let mut x = rng.vec(len, -6, 6);
            // No 7 at all in some cases, one or two (the later one wins) in others.
            for v in x.iter_mut() {
                if *v == 7 {
                    *v = 6;
                }
            }
            if case % 2 == 1 {
                let at = rng.range(0, len as i32) as usize;
                x[at] = 7;
                x[rng.range(0, at as i32 + 1) as usize] = 7;
            }
            let mut f: Vec<f32> = (0..len)
                .map(|_| rng.range(-1000, 1000) as f32 / 8.0)
                .collect();
            if case == 2 {
                // A window of NaNs only: the fold ignores them.
                for v in &mut f[len - 64..len - 32] {
                    *v = f32::NAN;
                }
            }
            let n = rng.range(1, len as i32 + 1);
            let (want, fwant) = reference_walk(&x, &f, n);
            let out = dev.full(384, -99i32).unwrap();
            let fout = dev.full(128, -99.0f32).unwrap();
            let (xd, fd) = (dev.upload(&x).unwrap(), dev.upload(&f).unwrap());
            walk::launch(&dev, 1, &xd, &fd, &out, &fout, n).unwrap();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{dev:?}, case {case}, n = {n}"
            );
            let got = fout.download().unwrap();
            assert!(
                got.iter()
                    .zip(&fwant)
                    .all(|(g, w)| g.to_bits() == w.to_bits()),
                "{dev:?}, case {case}, n = {n}: {got:?} != {fwant:?}"
            );
        }
    }
}

#[test]
fn for_loops_and_wide_tiles() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let x = rng.vec(32 * 9, -100, 100);
        for r in [0, 1, 5, 8] {
            let t = |k: i32, len: usize| -> Vec<i32> {
                (0..len)
                    .map(|i| *x.get(k as usize * 32 + i).unwrap_or(&0))
                    .collect()
            };
            let acc: i32 = (0..r).map(|k| t(k, 32).iter().sum::<i32>()).sum();
            let hi = (0..r).flat_map(|k| t(k, 32)).fold(i32::MIN, i32::max);
            let wide: i32 = (0..r).map(|k| t(k, 64).iter().sum::<i32>()).sum();
            let mut want: Vec<i32> = (0..96).map(|i| acc + i).collect();
            want.extend((0..96).map(|_| hi.wrapping_sub(wide)));
            let out = dev.full(192, -99i32).unwrap();
            rounds::launch(&dev, 1, &dev.upload(&x).unwrap(), &out, r).unwrap();
            assert_eq!(out.download().unwrap(), want, "{dev:?}, r = {r}");
        }
    }
}

/// The loops that qualify run on warp 0 without a barrier inside; the one with a 64-element
/// tile keeps the block-wide reduction.
#[test]
fn ptx_runs_small_loops_on_one_warp() {
    assemble_all("walk", walk::PTX, 70);
    assemble_all("rounds", rounds::PTX, 70);
    let inside = |ptx: &str| -> Vec<String> {
        let start = ptx.find("one warp runs this loop").expect("a solo loop");
        let end = start + ptx[start..].find("$L_solo_end").unwrap();
        let end = end + ptx[end + 1..].find("$L_solo_end").unwrap();
        ptx[start..end].lines().map(str::to_owned).collect()
    };
    // `walk`'s outer loop is solo, its nested loop with it.
    assert_eq!(walk::PTX.matches("one warp runs this loop").count(), 1);
    assert!(!inside(walk::PTX)
        .iter()
        .any(|l| l.contains("bar.sync") || l.contains("bar.red")));
    // `rounds`: the first loop is solo, the second (64 elements) is not.
    assert_eq!(rounds::PTX.matches("one warp runs this loop").count(), 1);
    let after = rounds::PTX.split("$L_solo_end").last().unwrap();
    assert!(
        after.contains("bar.sync"),
        "the block-wide loop keeps its barriers"
    );
}

#[test]
fn acquire_loops_start_with_a_block_barrier() {
    assemble_all(
        "acquire_after_block_writes",
        acquire_after_block_writes::PTX,
        70,
    );
    let ptx = acquire_after_block_writes::PTX;
    let start = ptx.find("one warp runs this loop").expect("a solo loop");
    let branch = start + ptx[start..].find("bra.uni").unwrap();
    assert!(
        ptx[start..branch].contains("bar.sync"),
        "a block barrier before warp 0 goes alone"
    );
    // The loop: from the branch to the label it jumps to (at the start of a line).
    let end = branch + ptx[branch..].find("\n$L_solo_end").unwrap();
    let body = &ptx[branch..end];
    assert!(
        !body.contains("bar.sync"),
        "no block barrier in the loop:\n{body}"
    );
    assert!(
        body.contains("bar.warp.sync"),
        "the acquire's barrier is the warp's:\n{body}"
    );
    for dev in backends() {
        let data = dev.zeros::<i32>(128).unwrap();
        let flags = dev.full(32, 1i32).unwrap();
        let out = dev.full(1, -99i32).unwrap();
        acquire_after_block_writes::launch(&dev, 1, &data, &flags, &out).unwrap();
        let want = (0..128).map(|i| 3 * i).sum::<i32>() + 4 * 32;
        assert_eq!(out.download().unwrap(), vec![want], "{dev:?}");
    }
}
