//! `tilus::algo`'s device-wide scans against CPU references on every backend: lengths around
//! the tile (0, 1, tile - 1, tile, tile + 1, non-multiples, 10^6), every operator and integer
//! type, floats with exact sums, adversarial inputs (all equal, sorted, reversed, extremes),
//! storage reused run after run; and the race checker on the look-back protocol: the correct
//! one passes, a flag published relaxed and an aggregate read before the acquire are races.

mod common;

use common::{backends, Rng};
use tilus::algo::scan::{TILE as TILE_FOR_TESTS, TILE_32};
use tilus::algo::{exclusive_scan, inclusive_scan, ScanOp, ScanStorage};
use tilus::prelude::*;

fn prefix<T: Copy>(x: &[T], id: T, op: impl Fn(T, T) -> T, exclusive: bool) -> Vec<T> {
    let mut acc = id;
    x.iter()
        .map(|&v| {
            let before = acc;
            acc = op(acc, v);
            if exclusive {
                before
            } else {
                acc
            }
        })
        .collect()
}

#[test]
fn sums_of_every_length_around_the_tile() {
    let mut rng = Rng::from_env_or_clock();
    // The tiles of 32-bit scans, and of 64-bit ones.
    let (s, t) = (TILE_32, TILE_FOR_TESTS);
    for dev in backends() {
        for n in [
            0,
            1,
            2,
            s - 1,
            s,
            s + 1,
            t - 1,
            t,
            t + 1,
            3 * t + 17,
            10_000,
            1_000_000,
        ] {
            let x: Vec<i32> = (0..n).map(|_| rng.range(-1000, 1001)).collect();
            let input = dev.upload(&x).unwrap();
            let out = dev.full(n, i32::MIN).unwrap();
            inclusive_scan(&dev, &input, &out).unwrap();
            let want = prefix(&x, 0, i32::wrapping_add, false);
            assert_eq!(out.download().unwrap(), want, "{dev:?} n={n} inclusive");
            exclusive_scan(&dev, &input, &out).unwrap();
            let want = prefix(&x, 0, i32::wrapping_add, true);
            assert_eq!(out.download().unwrap(), want, "{dev:?} n={n} exclusive");
        }
    }
}

#[test]
fn every_operator_on_every_integer_type_with_adversarial_inputs() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 3 * TILE_FOR_TESTS + 5;
        let patterns: Vec<Vec<i64>> = vec![
            (0..n).map(|_| rng.next_u64() as i64).collect(),
            vec![7; n],
            (0..n as i64).collect(),
            (0..n as i64).rev().collect(),
            (0..n)
                .map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX })
                .collect(),
        ];
        let mut st64 = ScanStorage::<i64>::new(&dev, n).unwrap();
        let mut st32 = ScanStorage::<u32>::new(&dev, n).unwrap();
        let stream = dev.default_stream();
        for (p, x) in patterns.iter().enumerate() {
            let x32: Vec<u32> = x.iter().map(|&v| v as u32).collect();
            let (i64s, u32s) = (dev.upload(x).unwrap(), dev.upload(&x32).unwrap());
            let (o64, o32) = (dev.zeros::<i64>(n).unwrap(), dev.zeros::<u32>(n).unwrap());
            for op in [ScanOp::Sum, ScanOp::Min, ScanOp::Max] {
                for exclusive in [false, true] {
                    st64.scan(&stream, op, &i64s, &o64, exclusive).unwrap();
                    st32.scan(&stream, op, &u32s, &o32, exclusive).unwrap();
                    let (w64, w32) = match op {
                        ScanOp::Sum => (
                            prefix(x, 0, i64::wrapping_add, exclusive),
                            prefix(&x32, 0, u32::wrapping_add, exclusive),
                        ),
                        ScanOp::Min => (
                            prefix(x, i64::MAX, i64::min, exclusive),
                            prefix(&x32, u32::MAX, u32::min, exclusive),
                        ),
                        ScanOp::Max => (
                            prefix(x, i64::MIN, i64::max, exclusive),
                            prefix(&x32, 0, u32::max, exclusive),
                        ),
                    };
                    let what = format!("{dev:?} pattern {p} {op:?} exclusive {exclusive}");
                    assert_eq!(o64.download().unwrap(), w64, "i64 {what}");
                    assert_eq!(o32.download().unwrap(), w32, "u32 {what}");
                }
            }
        }
    }
}

#[test]
fn float_sums_and_storage_reused_across_runs() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let cap = 5 * TILE_FOR_TESTS;
        let mut st = ScanStorage::<f32>::new(&dev, cap).unwrap();
        let mut st64 = ScanStorage::<f64>::new(&dev, cap).unwrap();
        let mut stu = ScanStorage::<u64>::new(&dev, cap).unwrap();
        let stream = dev.default_stream();
        // Lengths change from run to run; flags left by earlier runs must read as stale.
        for n in [cap, 1, TILE_FOR_TESTS + 1, cap - 3, 0, 77] {
            // Small integers: every partial sum is exact, whatever the order of combination.
            let x: Vec<f32> = (0..n).map(|_| rng.range(-8, 9) as f32).collect();
            // Float sums have a kernel a direction: both, for both types.
            let xd: Vec<f64> = x.iter().map(|&v| v as f64 * 0.5).collect();
            for exclusive in [false, true] {
                let (input, out) = (dev.upload(&x).unwrap(), dev.zeros::<f32>(n).unwrap());
                st.scan(&stream, ScanOp::Sum, &input, &out, exclusive)
                    .unwrap();
                assert_eq!(
                    out.download().unwrap(),
                    prefix(&x, 0.0, |a, b| a + b, exclusive),
                    "{dev:?} f32 n={n} exclusive {exclusive}"
                );
                let (input, out) = (dev.upload(&xd).unwrap(), dev.zeros::<f64>(n).unwrap());
                st64.scan(&stream, ScanOp::Sum, &input, &out, exclusive)
                    .unwrap();
                assert_eq!(
                    out.download().unwrap(),
                    prefix(&xd, 0.0, |a, b| a + b, exclusive),
                    "{dev:?} f64 n={n} exclusive {exclusive}"
                );
            }
            let xu: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            let (input, out) = (dev.upload(&xu).unwrap(), dev.zeros::<u64>(n).unwrap());
            stu.scan(&stream, ScanOp::Sum, &input, &out, false).unwrap();
            assert_eq!(
                out.download().unwrap(),
                prefix(&xu, 0, u64::wrapping_add, false),
                "{dev:?} u64 n={n}"
            );
        }
        // Over capacity, and mismatched lengths: errors, nothing written.
        let x = dev.zeros::<f32>(cap + TILE_FOR_TESTS).unwrap();
        assert!(st.scan(&stream, ScanOp::Sum, &x, &x, false).is_err());
        let y = dev.zeros::<f32>(3).unwrap();
        assert!(st.scan(&stream, ScanOp::Sum, &y, &x, false).is_err());
        assert!(st.scan(&stream, ScanOp::Min, &y, &y, false).is_err());
        // A refused operator leaves the storage as it was: the next scan on it is right.
        let x: Vec<f32> = (0..3 * TILE_FOR_TESTS + 5)
            .map(|_| rng.range(-8, 9) as f32)
            .collect();
        let (input, out) = (dev.upload(&x).unwrap(), dev.zeros::<f32>(x.len()).unwrap());
        assert!(st.scan(&stream, ScanOp::Max, &input, &out, false).is_err());
        st.scan(&stream, ScanOp::Sum, &input, &out, false).unwrap();
        assert_eq!(
            out.download().unwrap(),
            prefix(&x, 0.0, |a, b| a + b, false),
            "{dev:?} f32 after a refused scan"
        );
    }
}

/// The look-back's hand-off between two tiles, three ways: `mode` 0 publishes the aggregate
/// with a release store and reads it after an acquire load (correct); 1 publishes the flag
/// relaxed; 2 reads the aggregate before acquiring the flag.
#[tile_kernel(threads = 128)]
fn handoff(
    agg: GlobalTensor<i32>,
    flags: GlobalTensor<i32>,
    ticket: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    mode: i32,
) {
    let tile = atomic::global_add(ticket, ones([1])).item();
    if tile == 0 {
        store_global(agg, full([1], 41), offsets = [0]);
        if mode == 1 {
            atomic_store(flags, 0, 1, order = relaxed, scope = gpu);
        } else {
            atomic_store(flags, 0, 1, order = release, scope = gpu);
        }
    } else {
        // Only mode 2 reads early: in the others an early read, used or not, would race too.
        let early = load_global(
            agg,
            offsets = [0],
            shape = [1],
            mask = full([1], mode) == 2,
            other = 0,
        );
        let mut f = 0;
        while f == 0 {
            f = atomic_load(flags, 0, order = acquire, scope = gpu);
        }
        let late = load_global(agg, offsets = [0], shape = [1]);
        let seen = select(mode == 2, early, late);
        store_global(out, seen + 1, offsets = [0]);
    }
}

#[test]
fn the_race_checker_knows_the_look_back_protocol() {
    for _ in 0..4 {
        let dev = common::emulator();
        let run = |mode: i32| {
            let agg = dev.zeros::<i32>(1).unwrap();
            let flags = dev.zeros::<i32>(1).unwrap();
            let ticket = dev.zeros::<i32>(1).unwrap();
            let out = dev.zeros::<i32>(1).unwrap();
            handoff::launch(&dev, 2u32, &agg, &flags, &ticket, &out, mode)
                .map(|_| out.download().unwrap())
        };
        assert_eq!(run(0).unwrap(), vec![42]);
        for broken in [1, 2] {
            let e = run(broken).unwrap_err().to_string();
            assert!(e.contains("race"), "mode {broken}: {e}");
        }
    }
}

/// Past tile 512 the packed look-back sleeps before its first read (`delay`): scans long
/// enough to reach it, on every backend, against the CPU. `f32` sums of -1, 0 and 1 stay
/// exact.
#[test]
fn scans_past_the_delayed_tiles() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 700 * TILE_32 + 5;
        let x: Vec<i32> = (0..n).map(|_| rng.range(-1000, 1001)).collect();
        let input = dev.upload(&x).unwrap();
        let out = dev.full(n, i32::MIN).unwrap();
        inclusive_scan(&dev, &input, &out).unwrap();
        assert!(
            out.download().unwrap() == prefix(&x, 0, i32::wrapping_add, false),
            "{dev:?} i32 inclusive"
        );
        exclusive_scan(&dev, &input, &out).unwrap();
        assert!(
            out.download().unwrap() == prefix(&x, 0, i32::wrapping_add, true),
            "{dev:?} i32 exclusive"
        );
        let xf: Vec<f32> = (0..n).map(|_| rng.range(-1, 2) as f32).collect();
        let input = dev.upload(&xf).unwrap();
        let out = dev.full(n, f32::NAN).unwrap();
        inclusive_scan(&dev, &input, &out).unwrap();
        assert!(
            out.download().unwrap() == prefix(&xf, 0.0, |a, b| a + b, false),
            "{dev:?} f32 inclusive"
        );
        exclusive_scan(&dev, &input, &out).unwrap();
        assert!(
            out.download().unwrap() == prefix(&xf, 0.0, |a, b| a + b, true),
            "{dev:?} f32 exclusive"
        );
    }
}
