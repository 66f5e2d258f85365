//! Prefix sums of values the compiler knows to be small: flags (`bool as i32`), bytes (`u8 as
//! i32`) and low bits (`x & 3`). Their warp scans share a 32-bit word between several chunks of
//! the tile (the packed fields of `scan_regs.rs`: a chunk's prefixes over a warp fit a few
//! bits), and an exclusive count of flags indexes a shared scatter with no bounds test (the
//! compaction's pattern), also after a sum of a first half's flags (and keeps its test where
//! an inclusive rank can reach the end). Every backend, against CPU references: all zero, all
//! at their largest (every field as full as it gets), random, and tiles whose last chunk is
//! partial. The packed scans' arithmetic runs only in the PTX: the GPU runs check it.

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

/// Flags of two halves ranked one after the other, as `select_if` does: half 2's places start
/// at half 1's count (a sum of 2048 flags, at most 2048), so an exclusive rank stays below 4096
/// (no index test); an inclusive one can reach 4096 (the test stays, the element is dropped).
macro_rules! halves {
    ($name:ident, [$($rank:tt)*]) => {
        #[tile_kernel(threads = 128)]
        fn $name(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
            let v1 = load_global(x, offsets = [0], shape = [2048]);
            let v2 = load_global(x, offsets = [2048], shape = [2048]);
            let first = ((v1 > 0) as i32).sum();
            let stage = shared_tensor::<i32>([4096]);
            store_shared(stage, full([4096], -1));
            sync();
            let at = first + ((v2 > 0) as i32).$($rank)*;
            store_shared_scatter(stage, dim = 0, indices = at, values = v2, mask = v2 > 0);
            sync();
            store_global(out, load_shared(stage), offsets = [0]);
        }
    };
}

halves!(halves_exclusive, [cumsum(0, exclusive = true)]);
halves!(halves_inclusive, [cumsum(0)]);

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
        .filter(|l| common::is_bound_test(l, len))
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
fn a_rank_after_a_sum_keeps_its_test_only_where_it_can_reach_the_end() {
    assemble_all(
        "halves_exclusive",
        halves_exclusive::PTX,
        halves_exclusive::TARGET,
    );
    assemble_all(
        "halves_inclusive",
        halves_inclusive::PTX,
        halves_inclusive::TARGET,
    );
    let exclusive = scatter_bound_tests(halves_exclusive::PTX, 4096);
    assert_eq!(
        exclusive,
        0,
        "a bounds test is left\n{}",
        halves_exclusive::PTX
    );
    let inclusive = scatter_bound_tests(halves_inclusive::PTX, 4096);
    assert!(
        inclusive > 0,
        "the bounds test is gone\n{}",
        halves_inclusive::PTX
    );
    let mut rng = Rng::from_env_or_clock();
    for x in patterns(&mut rng, 4096) {
        let first = x[..2048].iter().filter(|&&v| v > 0).count();
        for (name, shift, launch) in [
            ("exclusive", 0, halves_exclusive::launch as Launch2),
            ("inclusive", 1, halves_inclusive::launch as Launch2),
        ] {
            // Half 2's kept values from `first` (+ 1 when inclusive) on; one past the end dropped.
            let mut want = vec![-1; 4096];
            let kept = x[2048..].iter().filter(|&&v| v > 0);
            for (slot, &v) in want.iter_mut().skip(first + shift).zip(kept) {
                *slot = v;
            }
            for dev in backends() {
                let xd = dev.upload(&x).unwrap();
                let out = dev.full(4096, -7i32).unwrap();
                launch(&dev, 1, &xd, &out).unwrap();
                assert_eq!(
                    out.download().unwrap(),
                    want,
                    "{name} on {dev:?}, x = {x:?}"
                );
            }
        }
    }
}

type Launch2 = fn(&Device, u32, &GlobalTensor<i32>, &GlobalTensor<i32>) -> Result<(), tilus::Error>;

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
