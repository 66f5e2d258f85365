//! Prefix sums of values the compiler knows to be small: flags (`bool as i32`), bytes (`u8 as
//! i32`) and low bits (`x & 3`). Their warp scans share a 32-bit word between several chunks of
//! the tile (the packed fields of `scan_regs.rs`: a chunk's prefixes over a warp fit a few
//! bits), and an exclusive count of flags indexes a shared scatter with no bounds test (the
//! compaction's pattern). Every backend, against CPU references: all zero, all at their
//! largest (every field as full as it gets), random, and tiles whose last chunk is partial.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// Flags `x > 0`: their inclusive and exclusive counts, and the kept values compacted through
/// shared memory by the exclusive count (the rest of the staging left at -1).
macro_rules! flag_counts {
    ($name:ident, $threads:literal, $n:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
            let t = load_global(x, offsets = [0], shape = [$n]);
            let keep = t > 0;
            let ones = keep as i32;
            let at = ones.cumsum(0, exclusive = true);
            store_global(out, ones.cumsum(0), offsets = [0]);
            store_global(out, at, offsets = [$n]);
            let stage = shared_tensor::<i32>([$n]);
            store_shared(stage, full([$n], -1));
            sync();
            store_shared_scatter(stage, dim = 0, indices = at, values = t, mask = keep);
            sync();
            store_global(out, load_shared(stage), offsets = [2 * $n]);
        }
    };
}

flag_counts!(flags_128_4096, 128, 4096);
flag_counts!(flags_256_8192, 256, 8192);
flag_counts!(flags_64_1000, 64, 1000);
flag_counts!(flags_32_100, 32, 100);

/// Inclusive and exclusive sums of `x & 3` (three fields a word: groups of 3, 3 and 2 chunks).
#[tile_kernel(threads = 128)]
fn low_bits_128_4096(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [4096]) & 3;
    store_global(out, t.cumsum(0), offsets = [0]);
    store_global(out, t.cumsum(0, exclusive = true), offsets = [4096]);
}

/// Inclusive and exclusive sums of bytes, one a thread's run (two 13-bit fields a word), a
/// partial last chunk.
#[tile_kernel(threads = 64, vector_width = 1)]
fn bytes_64_1000(x: GlobalTensor<u8>, out: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [1000]) as i32;
    store_global(out, t.cumsum(0), offsets = [0]);
    store_global(out, t.cumsum(0, exclusive = true), offsets = [1000]);
}

fn inclusive(v: &[i32]) -> Vec<i32> {
    v.iter()
        .scan(0i32, |s, &x| {
            *s += x;
            Some(*s)
        })
        .collect()
}

fn exclusive(v: &[i32]) -> Vec<i32> {
    let inc = inclusive(v);
    std::iter::once(0)
        .chain(inc[..v.len() - 1].iter().copied())
        .collect()
}

/// The kernel's whole output for flags of `x`.
fn flags_expected(x: &[i32]) -> Vec<i32> {
    let ones: Vec<i32> = x.iter().map(|&v| (v > 0) as i32).collect();
    let mut want = inclusive(&ones);
    want.extend(exclusive(&ones));
    let mut stage = vec![-1; x.len()];
    for (slot, &v) in stage.iter_mut().zip(x.iter().filter(|&&v| v > 0)) {
        *slot = v;
    }
    want.extend(stage);
    want
}

fn sums_expected(v: &[i32]) -> Vec<i32> {
    let mut want = inclusive(v);
    want.extend(exclusive(v));
    want
}

/// Inputs of one size: none kept, all kept, random, and one in eight kept.
fn patterns(rng: &mut Rng, n: usize) -> Vec<Vec<i32>> {
    vec![
        vec![-3; n],
        rng.vec(n, 1, 1000),
        rng.vec(n, -1000, 1000),
        (0..n)
            .map(|_| if rng.below(8) == 0 { 5 } else { -5 })
            .collect(),
    ]
}

type Launch = fn(&Device, &GlobalTensor<i32>, &GlobalTensor<i32>);

/// Bounds compares against `len` in the scatter by the exclusive count (from its comment to
/// the next instruction's).
fn scatter_bound_tests(ptx: &str, len: usize) -> usize {
    let lines: Vec<&str> = ptx.lines().collect();
    let Some(start) = lines
        .iter()
        .rposition(|l| l.contains("// _ = store") && l.contains("[index("))
    else {
        return usize::MAX;
    };
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.trim_start().starts_with("//"))
        .filter(|l| l.contains("setp.lt.u32") && l.trim_end().ends_with(&format!(", {len};")))
        .count()
}

#[test]
fn flag_counts_and_their_scatter() {
    macro_rules! kernel {
        ($k:ident, $n:literal) => {
            (
                stringify!($k),
                $n,
                (|d, x, o| $k::launch(d, 1, x, o).unwrap()) as Launch,
                $k::PTX,
                $k::TARGET,
            )
        };
    }
    let kernels = [
        kernel!(flags_128_4096, 4096),
        kernel!(flags_256_8192, 8192),
        kernel!(flags_64_1000, 1000),
        kernel!(flags_32_100, 100),
    ];
    let mut rng = Rng::from_env_or_clock();
    for (name, n, launch, ptx, target) in kernels {
        assemble_all(name, ptx, target);
        // Several chunks share each warp scan: fewer scans than chunks.
        assert!(ptx.contains("bfe.u32"), "{name}: no packed scan");
        // An exclusive count of `n` flags is below `n`: no index test in the scatter.
        assert_eq!(
            scatter_bound_tests(ptx, n),
            0,
            "{name}: a bounds test is left\n{ptx}"
        );
        for x in patterns(&mut rng, n) {
            let want = flags_expected(&x);
            for dev in backends() {
                let xd = dev.upload(&x).unwrap();
                let out = dev.full(3 * n, -7i32).unwrap();
                launch(&dev, &xd, &out);
                assert_eq!(
                    out.download().unwrap(),
                    want,
                    "{name} on {dev:?}, x = {x:?}"
                );
            }
        }
    }
}

#[test]
fn sums_of_low_bits_and_bytes() {
    assemble_all(
        "low_bits_128_4096",
        low_bits_128_4096::PTX,
        low_bits_128_4096::TARGET,
    );
    assemble_all("bytes_64_1000", bytes_64_1000::PTX, bytes_64_1000::TARGET);
    for ptx in [low_bits_128_4096::PTX, bytes_64_1000::PTX] {
        assert!(ptx.contains("bfe.u32"), "no packed scan");
    }
    let mut rng = Rng::from_env_or_clock();
    let n = 4096;
    for x in patterns(&mut rng, n)
        .into_iter()
        .chain([vec![3; n], vec![-1; n]])
    {
        let want = sums_expected(&x.iter().map(|v| v & 3).collect::<Vec<_>>());
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(2 * n, -7i32).unwrap();
            low_bits_128_4096::launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(
                out.download().unwrap(),
                want,
                "low bits on {dev:?}, x = {x:?}"
            );
        }
    }
    let n = 1000;
    let full: Vec<u8> = vec![255; n];
    let random: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
    for x in [vec![0u8; n], full, random] {
        let want = sums_expected(&x.iter().map(|&v| v as i32).collect::<Vec<_>>());
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(2 * n, -7i32).unwrap();
            bytes_64_1000::launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(out.download().unwrap(), want, "bytes on {dev:?}, x = {x:?}");
        }
    }
}
