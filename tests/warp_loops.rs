//! `while t.any()` loops whose lanes stop changing once their elements of `t` are false run
//! warp by warp in the PTX (`vote.sync.any` a step, no block barrier; `tilus-core/src/ptx/emit/
//! warp_loop.rs`), and give the block-wide loop's results; loops whose lanes go on changing stay
//! block-wide. The same kernels on every backend against CPU references.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// The radix sort's look-back, as a test: each of 256 lanes walks back from `tile` over
/// `status` words (a state in the high half: 1 an aggregate, 2 an inclusive prefix, anything
/// else not ready) for its own column, two tiles a step, adding aggregates until it meets an
/// inclusive prefix; then writes what it found and how many steps it took.
#[tile_kernel(threads = 256)]
fn walk(status: GlobalTensor<u64>, out: GlobalTensor<i32>, tile: i32) {
    let lanes = arange(256);
    let mut before = lanes * 0;
    let mut back = (tile - 1) * 256 + lanes;
    let mut live = lanes * 0 + tile > 0;
    let mut steps = lanes * 0;
    while live.any() {
        let w0 = atomic_load(status, back, sem = relaxed);
        let w1 = atomic_load(status, back - 256, sem = relaxed);
        let s0 = ((w0 >> 32) as i32) - 1;
        let s1 = ((w1 >> 32) as i32) - 1;
        let g0 = live & ((s0 as u32) < 2);
        let g1 = g0 & (s0 == 0) & ((s1 as u32) < 2);
        before = before + select(g0, w0 as i32, 0) + select(g1, w1 as i32, 0);
        back = back - (g0 as i32 + g1 as i32) * 256;
        steps = steps + live as i32;
        let inclusive = (g0 & (s0 == 1)) | (g1 & (s1 == 1));
        live = live & !inclusive;
    }
    store_global(out, before, offsets = [0]);
    store_global(out, steps, offsets = [256]);
}

/// Counts each lane up to its limit, masked by `live`: a lane that is done stays as it is.
#[tile_kernel(threads = 128)]
fn masked_count(lim: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let l = load_global(lim, offsets = [0], shape = [128]);
    let mut x = l * 0;
    let mut live = x < l;
    while live.any() {
        x = select(live, x + 1, x);
        live = live & (x < l);
    }
    store_global(out, x, offsets = [0]);
}

/// The same with the condition recomputed from `x` alone: a lane that is done is a fixed point
/// here too, but only through `live == (x < l)`, which the compiler does not track: block-wide.
#[tile_kernel(threads = 128)]
fn recount(lim: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let l = load_global(lim, offsets = [0], shape = [128]);
    let mut x = l * 0;
    let mut live = x < l;
    while live.any() {
        x = select(live, x + 1, x);
        live = x < l;
    }
    store_global(out, x, offsets = [0]);
}

/// The same without the mask: every lane counts on until the block's largest limit, so the
/// loop must stay block-wide (a warp that stopped early would stop short of it).
#[tile_kernel(threads = 128)]
fn unmasked_count(lim: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let l = load_global(lim, offsets = [0], shape = [128]);
    let mut x = l * 0;
    let mut live = x < l;
    while live.any() {
        x = x + 1;
        live = live & (x < l);
    }
    store_global(out, x, offsets = [0]);
}

/// A loop that writes memory stays block-wide too (a skipped iteration would skip a store).
#[tile_kernel(threads = 128)]
fn storing(lim: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let l = load_global(lim, offsets = [0], shape = [128]);
    let mut x = l * 0;
    let mut live = x < l;
    while live.any() {
        x = select(live, x + 1, x);
        store_global(out, x, offsets = [0]);
        live = x < l;
    }
}

/// The warp loop's part of `ptx`: the lines from its head's label to its end's.
fn warp_loop_of(ptx: &str) -> String {
    let lines: Vec<&str> = ptx.lines().collect();
    let head = lines.iter().position(|l| l.starts_with("$L_warp_while_"));
    let end = lines
        .iter()
        .position(|l| l.starts_with("$L_warp_while_end_"));
    match (head, end) {
        (Some(h), Some(e)) if h < e => lines[h..e].join("\n"),
        _ => panic!("no warp loop:\n{ptx}"),
    }
}

#[test]
fn ptx_runs_done_lanes_loops_warp_by_warp() {
    for (name, ptx) in [
        ("walk", walk::PTX),
        ("masked_count", masked_count::PTX),
        ("recount", recount::PTX),
        ("unmasked_count", unmasked_count::PTX),
        ("storing", storing::PTX),
    ] {
        assemble_all(name, ptx, 70);
    }
    for ptx in [walk::PTX, masked_count::PTX] {
        let body = warp_loop_of(ptx);
        assert!(body.contains("vote.sync.any.pred"), "{ptx}");
        assert!(
            !body.contains("bar."),
            "no block barrier in the loop:\n{body}"
        );
    }
    for ptx in [recount::PTX, unmasked_count::PTX, storing::PTX] {
        assert!(!ptx.contains("warp_while"), "stays block-wide:\n{ptx}");
        assert!(ptx.contains("bar.red.or.pred"), "{ptx}");
    }
}

/// The CPU's walk of lane `l` from `tile`: (sum, steps).
fn cpu_walk(status: &[u64], tile: usize, l: usize) -> (i32, i32) {
    let (mut before, mut back, mut steps) = (0i32, (tile as i64 - 1) * 256 + l as i64, 0);
    let mut live = tile > 0;
    let word = |i: i64| -> u64 {
        if i >= 0 && (i as usize) < status.len() {
            status[i as usize]
        } else {
            0
        }
    };
    while live {
        steps += 1;
        let (w0, w1) = (word(back), word(back - 256));
        let (s0, s1) = ((w0 >> 32) as i32 - 1, (w1 >> 32) as i32 - 1);
        let g0 = (s0 as u32) < 2;
        let g1 = g0 && s0 == 0 && (s1 as u32) < 2;
        if g0 {
            before = before.wrapping_add(w0 as i32);
        }
        if g1 {
            before = before.wrapping_add(w1 as i32);
        }
        back -= (g0 as i64 + g1 as i64) * 256;
        live = !((g0 && s0 == 1) || (g1 && s1 == 1));
    }
    (before, steps)
}

#[test]
fn warp_by_warp_loops_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    let tiles = 40;
    // Tile 0's words inclusive; later tiles aggregates, inclusive now and then; the walks are
    // of different lengths in different lanes.
    let status: Vec<u64> = (0..tiles * 256)
        .map(|i| {
            let state = if i < 256 || rng.below(7) == 0 { 2 } else { 1 };
            (state << 32) | rng.below(1000)
        })
        .collect();
    let lim: Vec<i32> = (0..128).map(|i| (rng.below(50) + i % 3) as i32).collect();
    for dev in backends() {
        let st = dev.upload(&status).unwrap();
        for tile in [0, 1, 2, 17, tiles - 1] {
            let out = dev.full::<i32>(512, -1).unwrap();
            walk::launch(&dev, 1, &st, &out, tile).unwrap();
            let got = out.download().unwrap();
            for l in 0..256 {
                let (sum, steps) = cpu_walk(&status, tile as usize, l);
                assert_eq!(
                    (got[l], got[256 + l]),
                    (sum, steps),
                    "lane {l} from tile {tile} on {}",
                    dev.name()
                );
            }
        }
        let ld = dev.upload(&lim).unwrap();
        let out = dev.full::<i32>(128, -1).unwrap();
        masked_count::launch(&dev, 1, &ld, &out).unwrap();
        assert_eq!(out.download().unwrap(), lim, "{}", dev.name());
        recount::launch(&dev, 1, &ld, &out).unwrap();
        assert_eq!(out.download().unwrap(), lim, "{}", dev.name());
        unmasked_count::launch(&dev, 1, &ld, &out).unwrap();
        let top = *lim.iter().max().unwrap();
        assert_eq!(out.download().unwrap(), vec![top; 128], "{}", dev.name());
        let out = dev.full::<i32>(128, -1).unwrap();
        storing::launch(&dev, 1, &ld, &out).unwrap();
        // Every lane stores on every iteration, its own count the last time.
        assert_eq!(out.download().unwrap(), lim, "{}", dev.name());
    }
}
