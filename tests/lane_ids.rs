//! `lane_ids(shape)`: each element's warp lane in the tile layout, the same on the emulator and
//! the GPU; and the index bounds the compiler derives from it (and from other computations), so
//! that a histogram spread over per-lane copies pays no bounds test, while an index that can
//! leave the tensor keeps its test and is skipped at run time.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// The documented layout (`tilus::core::layout`): with runs of `v` elements (the largest power
/// of two up to `vmax` dividing `n` with `n >= v * threads`, else 1), flat element `f` is held
/// by thread `(f % (threads * v)) / v`.
fn lane_of(n: usize, threads: usize, vmax: usize, f: usize) -> i64 {
    let v = [16, 8, 4, 2, 1]
        .into_iter()
        .find(|&v| v <= vmax && n.is_multiple_of(v) && n >= v * threads)
        .unwrap_or(1);
    ((f % (threads * v)) / v % 32) as i64
}

/// An `i32`/`i64`-only kernel: runs of up to 4 elements. Tiles of 256 (runs of 4), 40 (fewer
/// elements than threads: runs of 1), a rank-2 `[8, 32]` and 64-bit values.
#[tile_kernel(threads = 64)]
fn lanes_wide(
    a: GlobalTensor<i32>,
    b: GlobalTensor<i32>,
    c: GlobalTensor<i32>,
    d: GlobalTensor<i64>,
) {
    store_global(a, lane_ids([256]), offsets = [0]);
    store_global(b, lane_ids([40]), offsets = [0]);
    store_global(c, lane_ids([8, 32]).reshape([256]), offsets = [0]);
    store_global(d, lane_ids([128]), offsets = [0]);
}

/// A kernel that reads bytes: runs of up to 16 elements.
#[tile_kernel(threads = 128)]
fn lanes_narrow(x: GlobalTensor<u8>, out: GlobalTensor<u16>) {
    let v = load_global(x, offsets = [0], shape = [4096]);
    store_global(out, lane_ids([4096]) + (v & 0u8) as u16, offsets = [0]);
}

#[test]
fn lane_ids_follow_the_layout_on_every_backend() {
    for dev in backends() {
        let a = dev.full(256, -1i32).unwrap();
        let b = dev.full(40, -1i32).unwrap();
        let c = dev.full(256, -1i32).unwrap();
        let d = dev.full(128, -1i64).unwrap();
        lanes_wide::launch(&dev, 1, &a, &b, &c, &d).unwrap();
        let want = |n: usize| (0..n).map(|f| lane_of(n, 64, 4, f)).collect::<Vec<i64>>();
        let as64 = |v: Vec<i32>| v.into_iter().map(i64::from).collect::<Vec<i64>>();
        assert_eq!(as64(a.download().unwrap()), want(256), "{dev:?} [256]");
        assert_eq!(as64(b.download().unwrap()), want(40), "{dev:?} [40]");
        assert_eq!(as64(c.download().unwrap()), want(256), "{dev:?} [8, 32]");
        assert_eq!(d.download().unwrap(), want(128), "{dev:?} i64 [128]");

        let x = dev.zeros::<u8>(4096).unwrap();
        let out = dev.full(4096, 999u16).unwrap();
        lanes_narrow::launch(&dev, 1, &x, &out).unwrap();
        let got: Vec<i64> = out.download().unwrap().into_iter().map(i64::from).collect();
        let want: Vec<i64> = (0..4096).map(|f| lane_of(4096, 128, 16, f)).collect();
        assert_eq!(got, want, "{dev:?} u8 kernel [4096]");
    }
    assemble_all("lanes_wide", lanes_wide::PTX, 70);
    assemble_all("lanes_narrow", lanes_narrow::PTX, 70);
}

/// A byte histogram into per-lane copies: `counts[$index] += 1` over the bytes of `image` (`b`:
/// a byte as `i32`, `l`: its lane), into a shared tensor of `$len` counters copied out at the
/// end, so that a misplaced count shows. Elements whose index is outside `0..$len` are skipped.
macro_rules! index_case {
    ($name:ident, $len:literal, |$b:ident, $l:ident| $index:expr) => {
        #[tile_kernel(threads = 128)]
        fn $name(image: GlobalTensor<u8>, out: GlobalTensor<u32>) {
            let counts = shared_tensor(u32, [$len]);
            store_shared(counts, zeros([$len]));
            sync();
            let n = image.len();
            for start in (block_idx() * 2048..n).step_by(grid_dim() * 2048) {
                let pixels = load_global(image, offsets = [start], shape = [2048]);
                let inside = arange(2048) + start < n;
                let $b = pixels as i32;
                let $l = lane_ids([2048]);
                atomic::shared_scatter_add(
                    counts,
                    dim = 0,
                    indices = $index,
                    values = 1,
                    mask = inside,
                );
            }
            sync();
            atomic::global_add(out, load_shared(counts));
        }
    };
}

index_case!(spread32, 8192, |bins, lanes| bins * 32 + lanes);
index_case!(spread16, 4096, |bins, lanes| (lanes & 15) + bins * 16);
index_case!(spread_rem, 4096, |bins, lanes| bins * 16 + lanes % 16);
// Each can reach the tensor's length or go below zero: the test stays, the element is skipped.
index_case!(spread_past, 8192, |bins, lanes| bins * 32 + lanes + 1);
index_case!(spread_below, 8192, |bins, lanes| (bins - 1) * 32 + lanes);

/// Bounds compares of a scatter index against the tensor's length: in the loop's scatter
/// (from the first shared atomic's comment to the loop's back edge).
fn bound_tests(ptx: &str, len: usize) -> usize {
    ptx.lines()
        .skip_while(|l| !l.contains("// _ = atomic_add relaxed cta"))
        .take_while(|l| !l.contains("$L_for_body"))
        .filter(|l| common::is_bound_test(l, len))
        .count()
}

#[test]
fn spread_histograms_are_exact_and_need_no_bounds_test() {
    // The masked scatter is unswitched on whole tiles (`passes::range_mask`): both copies of it
    // are checked below, on the tiles before the last and on the last, partial one.
    assert!(
        spread32::PTX
            .lines()
            .any(|l| l.contains("setp.eq.s32") && l.trim_end().ends_with(", 2048;")),
        "{}",
        spread32::PTX
    );
    assert_eq!(bound_tests(spread32::PTX, 8192), 0, "{}", spread32::PTX);
    assert_eq!(bound_tests(spread16::PTX, 4096), 0, "{}", spread16::PTX);
    assert_eq!(bound_tests(spread_rem::PTX, 4096), 0, "{}", spread_rem::PTX);
    assert!(
        bound_tests(spread_past::PTX, 8192) > 0,
        "{}",
        spread_past::PTX
    );
    assert!(
        bound_tests(spread_below::PTX, 8192) > 0,
        "{}",
        spread_below::PTX
    );

    let mut r = Rng::from_env_or_clock();
    // Not a multiple of the tile; every byte value, with 0 and 255 hot (contended, and the
    // edges of the index range).
    let n = 100_003;
    let image: Vec<u8> = (0..n)
        .map(|_| match r.range(0, 4) {
            0 => 0,
            1 => 255,
            _ => r.range(0, 256) as u8,
        })
        .collect();
    let per_bin = |pick: &dyn Fn(u8) -> bool| {
        let mut h = vec![0u64; 256];
        for &p in &image {
            if pick(p) {
                h[p as usize] += 1;
            }
        }
        h
    };
    for dev in backends() {
        let img = dev.upload(&image).unwrap();
        let run = |len: usize, launch: &dyn Fn(&tilus::GlobalTensor<u32>)| {
            let out = dev.zeros::<u32>(len).unwrap();
            launch(&out);
            out.download().unwrap()
        };
        // Sum the copies of each bin (copies of bin b at b * c .. b * c + c, shifted by `at`).
        let bins_of = |copies: &[u32], c: usize, at: isize| {
            let mut h = vec![0u64; 256];
            for (i, &k) in copies.iter().enumerate() {
                let b = (i as isize - at).div_euclid(c as isize);
                if (0..256).contains(&b) {
                    h[b as usize] += k as u64;
                }
            }
            h
        };
        let all = per_bin(&|_| true);
        let c32 = run(8192, &|o| spread32::launch(&dev, 9, &img, o).unwrap());
        assert_eq!(bins_of(&c32, 32, 0), all, "{dev:?} spread32");
        let c16 = run(4096, &|o| spread16::launch(&dev, 9, &img, o).unwrap());
        assert_eq!(bins_of(&c16, 16, 0), all, "{dev:?} spread16");
        let cr = run(4096, &|o| spread_rem::launch(&dev, 9, &img, o).unwrap());
        assert_eq!(bins_of(&cr, 16, 0), all, "{dev:?} spread_rem");
        // `+ 1`: the copy of lane 31 of bin 255 falls off the end; the rest shift by one.
        let cp = run(8192, &|o| spread_past::launch(&dev, 9, &img, o).unwrap());
        let kept: u64 = cp.iter().map(|&k| k as u64).sum();
        assert!(kept < n as u64, "{dev:?} spread_past kept every count");
        assert_eq!(
            bins_of(&cp, 32, 1)[..255],
            all[..255],
            "{dev:?} spread_past"
        );
        // `(bins - 1) * 32`: bin 0 goes below zero and is skipped, the others move down a bin.
        let cb = run(8192, &|o| spread_below::launch(&dev, 9, &img, o).unwrap());
        assert_eq!(bins_of(&cb, 32, -32)[1..], all[1..], "{dev:?} spread_below");
        assert_eq!(bins_of(&cb, 32, -32)[0], 0, "{dev:?} spread_below bin 0");
    }
    for (name, ptx) in [
        ("spread32", spread32::PTX),
        ("spread16", spread16::PTX),
        ("spread_rem", spread_rem::PTX),
        ("spread_past", spread_past::PTX),
        ("spread_below", spread_below::PTX),
    ] {
        assemble_all(name, ptx, 70);
    }
}

// Each expression's largest value is reached by some byte and lane; `_fits` has one counter
// more than that (no test needed), `_tight` exactly that many (the largest index is outside).
index_case!(or_shift_fits, 8192, |b, l| (b | 7) * 32 + l);
index_case!(or_shift_tight, 8191, |b, l| (b | 7) * 32 + l);
index_case!(div_shr_fits, 93, |b, l| b / 3 + (l >> 2));
index_case!(div_shr_tight, 92, |b, l| b / 3 + (l >> 2));
index_case!(xor_rem_fits, 100, |b, l| (b ^ l) % 100);
index_case!(and_shl_fits, 241, |b, l| ((b & 15) << 4) + (l & 0));
index_case!(and_shl_tight, 240, |b, l| ((b & 15) << 4) + (l & 0));
index_case!(min_max_fits, 256, |b, l| max(min(b, 255), l));
// Unbounded: a subtraction can go below zero, a signed remainder of a negative is negative.
index_case!(sub_rem_unbounded, 256, |b, l| (b - l) % 256);

#[test]
fn derived_index_bounds_are_exact() {
    let fits = [
        ("or_shift_fits", or_shift_fits::PTX, 8192),
        ("div_shr_fits", div_shr_fits::PTX, 93),
        ("xor_rem_fits", xor_rem_fits::PTX, 100),
        ("and_shl_fits", and_shl_fits::PTX, 241),
        ("min_max_fits", min_max_fits::PTX, 256),
    ];
    for (name, ptx, len) in fits {
        assert_eq!(
            bound_tests(ptx, len),
            0,
            "{name}: a bounds test is left\n{ptx}"
        );
    }
    let kept = [
        ("or_shift_tight", or_shift_tight::PTX, 8191),
        ("div_shr_tight", div_shr_tight::PTX, 92),
        ("and_shl_tight", and_shl_tight::PTX, 240),
        ("sub_rem_unbounded", sub_rem_unbounded::PTX, 256),
    ];
    for (name, ptx, len) in kept {
        assert!(
            bound_tests(ptx, len) > 0,
            "{name}: the bounds test is gone\n{ptx}"
        );
    }
    // Every byte value at many positions (so at every lane), plus an odd tail.
    let n = 2048 * 5 + 777;
    let image: Vec<u8> = (0..n).map(|i| (i * 131 % 256) as u8).collect();
    type Launch = fn(
        &tilus::Device,
        u32,
        &tilus::GlobalTensor<u8>,
        &tilus::GlobalTensor<u32>,
    ) -> Result<(), tilus::Error>;
    type Index = fn(i64, i64) -> i64;
    let cases: [(&str, usize, Launch, Index); 9] = [
        ("or_shift_fits", 8192, or_shift_fits::launch, |b, l| {
            (b | 7) * 32 + l
        }),
        ("or_shift_tight", 8191, or_shift_tight::launch, |b, l| {
            (b | 7) * 32 + l
        }),
        ("div_shr_fits", 93, div_shr_fits::launch, |b, l| {
            b / 3 + (l >> 2)
        }),
        ("div_shr_tight", 92, div_shr_tight::launch, |b, l| {
            b / 3 + (l >> 2)
        }),
        ("xor_rem_fits", 100, xor_rem_fits::launch, |b, l| {
            (b ^ l) % 100
        }),
        ("and_shl_fits", 241, and_shl_fits::launch, |b, _| {
            (b & 15) << 4
        }),
        ("and_shl_tight", 240, and_shl_tight::launch, |b, _| {
            (b & 15) << 4
        }),
        ("min_max_fits", 256, min_max_fits::launch, |b, l| b.max(l)),
        (
            "sub_rem_unbounded",
            256,
            sub_rem_unbounded::launch,
            |b, l| (b - l) % 256,
        ),
    ];
    for dev in backends() {
        let img = dev.upload(&image).unwrap();
        for (name, len, launch, index) in cases {
            let mut want = vec![0u32; len];
            let mut skipped = 0;
            for (i, &p) in image.iter().enumerate() {
                let at = index(p as i64, lane_of(2048, 128, 16, i % 2048));
                match usize::try_from(at).ok().filter(|&a| a < len) {
                    Some(a) => want[a] += 1,
                    None => skipped += 1,
                }
            }
            if name.ends_with("_tight") || name.ends_with("_unbounded") {
                assert!(skipped > 0, "{name}: the case never leaves the tensor");
            }
            let out = dev.zeros::<u32>(len).unwrap();
            launch(&dev, 4, &img, &out).unwrap();
            assert_eq!(out.download().unwrap(), want, "{dev:?} {name}");
        }
    }
    for (name, ptx) in [
        ("or_shift_fits", or_shift_fits::PTX),
        ("div_shr_tight", div_shr_tight::PTX),
        ("sub_rem_unbounded", sub_rem_unbounded::PTX),
    ] {
        assemble_all(name, ptx, 70);
    }
}
