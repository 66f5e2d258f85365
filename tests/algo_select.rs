//! `tilus::algo`'s compaction against CPU references on every backend: every predicate and
//! type, flags, partition, lengths around the tile, all kept, none kept, NaNs, storage reuse.

mod common;

use common::{backends, Rng};
use tilus::algo::select::TILE;
use tilus::algo::{select_if, Keep, SelectStorage};

fn kept<T: Copy + PartialOrd>(x: &[T], keep: Keep<T>) -> Vec<T> {
    x.iter()
        .copied()
        .filter(|&v| match keep {
            Keep::Greater(t) => v > t,
            Keep::GreaterEq(t) => v >= t,
            Keep::Less(t) => v < t,
            Keep::LessEq(t) => v <= t,
            Keep::Equal(t) => v == t,
            Keep::NotEqual(t) => v != t,
        })
        .collect()
}

/// The six predicates with threshold `t`.
fn every_keep<T: Copy>(t: T) -> [Keep<T>; 6] {
    [
        Keep::Greater(t),
        Keep::GreaterEq(t),
        Keep::Less(t),
        Keep::LessEq(t),
        Keep::Equal(t),
        Keep::NotEqual(t),
    ]
}

#[test]
fn select_if_keeps_the_order_for_every_predicate_and_length() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        // Tiles are ranked in halves: 3000 and 6145 end with a partial second half and with a
        // second half of one element.
        for n in [
            0,
            1,
            TILE - 1,
            TILE,
            TILE + 1,
            3000,
            6145,
            5 * TILE + 123,
            300_000,
        ] {
            let x: Vec<i32> = (0..n).map(|_| rng.range(-50, 50)).collect();
            let input = dev.upload(&x).unwrap();
            for keep in [
                Keep::Greater(0),
                Keep::GreaterEq(3),
                Keep::Less(-10),
                Keep::LessEq(-51),
                Keep::Equal(7),
                Keep::NotEqual(1000),
            ] {
                let got = select_if(&dev, &input, keep).unwrap().download().unwrap();
                assert_eq!(got, kept(&x, keep), "{dev:?} n={n} {keep:?}");
            }
        }
    }
}

/// Every predicate on floats with NaN, -0.0 and infinities among the values and as the
/// threshold: NaN compares false except under `!=`, and -0.0 equals 0.0.
#[test]
fn float_predicates_with_nan_and_signed_zeros() {
    let mut rng = Rng::from_env_or_clock();
    let tiny = f32::from_bits(1); // the least positive subnormal
    let special = [
        f32::NAN,
        -0.0,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.5,
        tiny,
        -tiny,
    ];
    let n = 2 * TILE + 77;
    let x: Vec<f32> = (0..n)
        .map(|_| match rng.range(0, 4) {
            0 => special[rng.range(0, special.len() as i32) as usize],
            _ => rng.range(-8, 8) as f32 * 0.5,
        })
        .collect();
    for dev in backends() {
        let input = dev.upload(&x).unwrap();
        for t in [
            0.0f32,
            -0.0,
            1.5,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            tiny,
            -tiny,
        ] {
            for keep in every_keep(t) {
                let got = select_if(&dev, &input, keep).unwrap().download().unwrap();
                let want = kept(&x, keep);
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{dev:?} {keep:?}");
            }
        }
    }
}

/// Thresholds at the ends of integer types (`x > MAX` and `x < MIN` keep nothing), over values
/// that include both ends.
#[test]
fn integer_predicates_at_the_ends_of_the_type() {
    fn check<T>(x: Vec<T>, thresholds: [T; 4])
    where
        T: tilus::algo::select::SelectElement + PartialOrd + std::fmt::Debug,
    {
        for dev in backends() {
            let input = dev.upload(&x).unwrap();
            for t in thresholds {
                for keep in every_keep(t) {
                    let got = select_if(&dev, &input, keep).unwrap().download().unwrap();
                    assert_eq!(got, kept(&x, keep), "{dev:?} {keep:?}");
                }
            }
        }
    }
    let mut rng = Rng::from_env_or_clock();
    let n = TILE + 321;
    let pick = |rng: &mut Rng, ends: [i64; 2]| match rng.range(0, 3) {
        0 => ends[rng.range(0, 2) as usize],
        _ => rng.range(-5, 5) as i64,
    };
    let x: Vec<i32> = (0..n)
        .map(|_| pick(&mut rng, [i32::MIN as i64, i32::MAX as i64]) as i32)
        .collect();
    check(x, [i32::MIN, i32::MAX, 0, -1]);
    let x: Vec<u32> = (0..n)
        .map(|_| pick(&mut rng, [0, u32::MAX as i64]) as u32)
        .collect();
    check(x, [0, u32::MAX, 1, 3]);
    let x: Vec<i64> = (0..n)
        .map(|_| match rng.range(0, 3) {
            0 => i64::MIN,
            1 => i64::MAX,
            _ => rng.range(-5, 5) as i64,
        })
        .collect();
    check(x, [i64::MIN, i64::MAX, 0, 2]);
    let x: Vec<u64> = (0..n)
        .map(|_| match rng.range(0, 3) {
            0 => 0,
            1 => u64::MAX,
            _ => rng.range(0, 5) as u64,
        })
        .collect();
    check(x, [0, u64::MAX, 1, 4]);
}

#[test]
fn flags_partition_floats_and_reused_storage() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let cap = 4 * TILE + 9;
        let mut st = SelectStorage::new(&dev, cap).unwrap();
        let stream = dev.default_stream();
        for n in [cap, 17, 2 * TILE, 0, TILE + 1, 3000, TILE + TILE / 2 + 1] {
            // f64 with NaNs: NaN compares false, so it is never kept by `Greater`.
            let x: Vec<f64> = (0..n)
                .map(|i| {
                    if i % 11 == 0 {
                        f64::NAN
                    } else {
                        rng.range(-9, 9) as f64 * 0.25
                    }
                })
                .collect();
            let (input, out) = (dev.upload(&x).unwrap(), dev.full(n, -7.0f64).unwrap());
            st.select_if(&stream, &input, Keep::Greater(0.0), &out)
                .unwrap();
            let want = kept(&x, Keep::Greater(0.0));
            let k = st.num_selected().download().unwrap()[0] as usize;
            let got = out.download().unwrap();
            assert_eq!(k, want.len(), "{dev:?} n={n}");
            assert_eq!(&got[..k], &want[..], "{dev:?} n={n}");
            assert!(
                got[k..].iter().all(|&v| v == -7.0),
                "{dev:?} n={n}: past the kept ones untouched"
            );
            // Partition: kept in order, then the rejected in reverse order.
            let xs: Vec<u64> = (0..n).map(|_| rng.next_u64() % 100).collect();
            let (input, out) = (dev.upload(&xs).unwrap(), dev.zeros::<u64>(n).unwrap());
            st.partition(&stream, &input, Keep::Less(40), &out).unwrap();
            let mut want: Vec<u64> = xs.iter().copied().filter(|&v| v < 40).collect();
            want.extend(xs.iter().rev().copied().filter(|&v| v >= 40));
            assert_eq!(out.download().unwrap(), want, "{dev:?} n={n} partition");
            // Flags.
            let flags: Vec<u8> = (0..n)
                .map(|_| rng.next_u64().is_multiple_of(3) as u8 * 5)
                .collect();
            let f = dev.upload(&flags).unwrap();
            let xi: Vec<u32> = (0..n as u32).collect();
            let (input, out) = (dev.upload(&xi).unwrap(), dev.zeros::<u32>(n).unwrap());
            st.select_flagged(&stream, &input, &f, &out).unwrap();
            let want: Vec<u32> = xi
                .iter()
                .zip(&flags)
                .filter(|(_, &f)| f != 0)
                .map(|(&v, _)| v)
                .collect();
            let k = st.num_selected().download().unwrap()[0] as usize;
            assert_eq!(
                &out.download().unwrap()[..k],
                &want[..],
                "{dev:?} n={n} flagged"
            );
            assert_eq!(k, want.len());
        }
        // All kept, none kept.
        let x: Vec<i64> = (0..3 * TILE as i64).collect();
        let input = dev.upload(&x).unwrap();
        assert_eq!(
            select_if(&dev, &input, Keep::GreaterEq(0))
                .unwrap()
                .download()
                .unwrap(),
            x
        );
        assert!(select_if(&dev, &input, Keep::Less(0))
            .unwrap()
            .download()
            .unwrap()
            .is_empty());
        // Lengths that do not match: errors.
        let small = dev.zeros::<i64>(5).unwrap();
        assert!(st
            .select_if(&stream, &input, Keep::Less(0), &small)
            .is_err());
    }
}

/// Past tile 512 the compactions' look-back sleeps before its first read (`delay`): a
/// comparison, flags and a partition long enough to reach it, on every backend, against the
/// CPU.
#[test]
fn compactions_past_the_delayed_tiles() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 700 * TILE + 7;
        let x: Vec<i32> = (0..n).map(|_| rng.range(-50, 50)).collect();
        let input = dev.upload(&x).unwrap();
        let got = select_if(&dev, &input, Keep::Greater(0))
            .unwrap()
            .download()
            .unwrap();
        assert!(got == kept(&x, Keep::Greater(0)), "{dev:?} select_if");
        let mut st = SelectStorage::new(&dev, n).unwrap();
        let stream = dev.default_stream();
        let out = dev.zeros::<i32>(n).unwrap();
        st.partition(&stream, &input, Keep::Less(-20), &out)
            .unwrap();
        let mut want: Vec<i32> = x.iter().copied().filter(|&v| v < -20).collect();
        want.extend(x.iter().rev().copied().filter(|&v| v >= -20));
        assert!(out.download().unwrap() == want, "{dev:?} partition");
        let flags: Vec<u8> = (0..n)
            .map(|_| rng.next_u64().is_multiple_of(4) as u8)
            .collect();
        let f = dev.upload(&flags).unwrap();
        st.select_flagged(&stream, &input, &f, &out).unwrap();
        let want: Vec<i32> = x
            .iter()
            .zip(&flags)
            .filter(|(_, &k)| k != 0)
            .map(|(&v, _)| v)
            .collect();
        let k = st.num_selected().download().unwrap()[0] as usize;
        assert!(
            k == want.len() && out.download().unwrap()[..k] == want[..],
            "{dev:?} flags"
        );
    }
}
