//! `tilus::algo::histogram_even` against the CPU on every backend: every sample type, bin counts
//! on both sides of each kernel's limit (2,048, 16,384, 65,536), widths of 1 and uneven widths,
//! samples outside the range and at its edges, NaN/inf/-0.0, all samples in one bin, n = 0, 1
//! and non-multiples of the tile, poisoned counts, and bad arguments refused before anything
//! runs.

mod common;

use common::{backends, Rng};
use tilus::algo::{histogram_even, HistogramSample};
use tilus::{Device, Error};

/// The bin of an integer sample as the docs define it: `(x - lower) * bins / (upper - lower)`,
/// exactly; `None` outside `[lower, upper)`.
fn int_bin(x: i128, lower: i128, upper: i128, bins: usize) -> Option<usize> {
    (lower <= x && x < upper).then(|| ((x - lower) * bins as i128 / (upper - lower)) as usize)
}

fn count(bins: usize, of: impl Iterator<Item = Option<usize>>) -> Vec<u32> {
    let mut h = vec![0u32; bins];
    for b in of.flatten() {
        h[b] += 1;
    }
    h
}

/// Runs the histogram into poisoned counts and compares with `want`.
fn check<S: HistogramSample>(dev: &Device, x: &[S], lower: S, upper: S, want: &[u32], what: &str) {
    let xd = dev.upload(x).unwrap();
    let counts = dev.full::<u32>(want.len(), 0xdead_beef).unwrap();
    histogram_even(dev, &xd, &counts, lower, upper).unwrap();
    let got = counts.download().unwrap();
    if got != want {
        let first = (0..want.len()).find(|&b| got[b] != want[b]).unwrap();
        panic!(
            "{dev:?} {what}: n = {}, {} bins over {lower:?}..{upper:?}: bin {first} is {} instead of {}",
            x.len(),
            want.len(),
            got[first],
            want[first]
        );
    }
}

/// Integer samples of type `S`, drawn around `[lower, upper)` so that some fall outside.
macro_rules! int_case {
    ($dev:expr, $rng:expr, $t:ty, $n:expr, $bins:expr, $lower:expr, $upper:expr) => {{
        let (lower, upper): ($t, $t) = ($lower, $upper);
        let (lo, hi) = (lower as i128, upper as i128);
        let span = (hi - lo) as u128;
        let x: Vec<$t> = (0..$n)
            .map(|_| {
                // Mostly inside, some just outside on either side (clamped to the type).
                let r = $rng.next_u64() as u128 % (span + span / 8 + 2);
                let v = lo - (span / 16) as i128 - 1 + r as i128;
                v.clamp(<$t>::MIN as i128, <$t>::MAX as i128) as $t
            })
            .collect();
        let want = count($bins, x.iter().map(|&v| int_bin(v as i128, lo, hi, $bins)));
        check($dev, &x, lower, upper, &want, stringify!($t));
    }};
}

#[test]
fn integer_histograms_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let d = &dev;
        // Width 1 (the bin is x - lower) around every kernel's limit, and uneven widths.
        for (n, bins) in [
            (0usize, 256usize),
            (1, 1),
            (8191, 2048),
            (8193, 2049),
            (100_003, 16_384),
            (60_001, 16_385),
            (200_000, 65_536),
            (70_000, 65_537),
            (1_000_000, 1_000),
        ] {
            int_case!(d, rng, i32, n, bins, -1000, bins as i32 - 1000);
        }
        int_case!(d, rng, i32, 50_000, 7, -1000, 37);
        int_case!(d, rng, i32, 50_000, 40_000, i32::MIN, i32::MAX);
        int_case!(d, rng, u32, 30_000, 3, 0, u32::MAX);
        int_case!(d, rng, u32, 30_000, 100_000, 5, 4_000_000_000);
        int_case!(d, rng, u8, 70_001, 256, 0, 255);
        int_case!(d, rng, u8, 9_000, 7, 10, 200);
        int_case!(d, rng, i8, 9_000, 5, -128, 127);
        int_case!(d, rng, u16, 20_000, 1000, 100, 65_000);
        int_case!(d, rng, i16, 20_000, 30_000, -20_000, 20_000);
        int_case!(d, rng, u64, 20_000, 999, u64::MAX - (1 << 32), u64::MAX);
        int_case!(
            d,
            rng,
            i64,
            20_000,
            20_000,
            -(1 << 40),
            -(1 << 40) + (1 << 32)
        );
        int_case!(d, rng, i64, 20_000, 300, -5, 1000);
    }
}

/// The float bin as the docs define it: `floor((x - lower) * scale)` in the sample's type with
/// `scale = bins / (upper - lower)` computed in f64, at most `bins - 1`.
fn f32_bin(x: f32, lower: f32, upper: f32, bins: usize) -> Option<usize> {
    let scale = (bins as f64 / (upper as f64 - lower as f64)) as f32;
    (lower <= x && x < upper).then(|| (((x - lower) * scale).floor() as usize).min(bins - 1))
}

fn f64_bin(x: f64, lower: f64, upper: f64, bins: usize) -> Option<usize> {
    let scale = bins as f64 / (upper - lower);
    (lower <= x && x < upper).then(|| (((x - lower) * scale).floor() as usize).min(bins - 1))
}

#[test]
fn float_histograms_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for (n, bins, lower, upper) in [
            (100_001usize, 10usize, -1.5f32, 2.25f32),
            (50_000, 3000, 0.0, 1.0),
            (40_000, 20_000, -1e6, 1e6),
            (30_000, 100, 1e-3, 1e-3 + 1e-6),
        ] {
            let span = upper - lower;
            let mut x: Vec<f32> = (0..n)
                .map(|_| {
                    lower - span * 0.1 + span * 1.2 * (rng.below(1 << 24) as f32 / (1 << 24) as f32)
                })
                .collect();
            // Edges, specials and the last ulp below upper.
            let specials = [
                lower,
                upper,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                -0.0,
                0.0,
                f32::from_bits(upper.to_bits() - 1),
            ];
            for (i, s) in specials.into_iter().enumerate() {
                x[i * 7] = s;
            }
            let want = count(bins, x.iter().map(|&v| f32_bin(v, lower, upper, bins)));
            check(&dev, &x, lower, upper, &want, "f32");
            let x64: Vec<f64> = x.iter().map(|&v| v as f64 * 1.000_000_1).collect();
            let (l, u) = (lower as f64, upper as f64);
            let want = count(bins, x64.iter().map(|&v| f64_bin(v, l, u, bins)));
            check(&dev, &x64, l, u, &want, "f64");
        }
    }
}

#[test]
fn one_bin_takes_every_sample_under_contention() {
    for dev in backends() {
        for bins in [256usize, 10_000, 50_000, 100_000] {
            let x = vec![7i32; 300_001];
            let mut want = vec![0u32; bins];
            want[7] = x.len() as u32;
            check(&dev, &x, 0, bins as i32, &want, "all equal");
        }
    }
}

#[test]
fn counts_may_be_i32_and_samples_a_view() {
    for dev in backends() {
        let x: Vec<u16> = (0..40_000u32).map(|i| (i * 7919 % 1000) as u16).collect();
        let xd = dev.upload(&x).unwrap();
        let counts = dev.full::<i32>(10, -1).unwrap();
        let part = xd.view(8..30_008).unwrap();
        histogram_even(&dev, &part, &counts, 0u16, 1000u16).unwrap();
        let mut want = vec![0i32; 10];
        for &v in &x[8..30_008] {
            want[v as usize / 100] += 1;
        }
        assert_eq!(counts.download().unwrap(), want, "{dev:?}");
    }
}

#[test]
fn bad_arguments_are_refused_and_touch_nothing() {
    for dev in backends() {
        let x = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
        let xi = dev.upload(&[1u64, 2, 3]).unwrap();
        let counts = dev.full::<u32>(4, 9).unwrap();
        let none = dev.zeros::<u32>(0).unwrap();
        let refused = |r: Result<(), Error>, what: &str| match r {
            Err(Error::InvalidArgument { op, reason }) => {
                assert_eq!(op, "tilus::algo::histogram_even");
                assert!(!reason.is_empty(), "{what}");
            }
            other => panic!("{dev:?} {what}: expected InvalidArgument, got {other:?}"),
        };
        refused(histogram_even(&dev, &x, &none, 0.0, 1.0), "no bins");
        refused(histogram_even(&dev, &x, &counts, 1.0, 1.0), "empty range");
        refused(
            histogram_even(&dev, &x, &counts, 2.0, 1.0),
            "reversed range",
        );
        refused(
            histogram_even(&dev, &x, &counts, f32::NAN, 1.0),
            "NaN bound",
        );
        refused(
            histogram_even(&dev, &x, &counts, 0.0, f32::INFINITY),
            "infinite bound",
        );
        refused(
            histogram_even(&dev, &xi, &counts, 0, (1 << 32) + 1),
            "range over 2^32",
        );
        assert_eq!(
            counts.download().unwrap(),
            vec![9; 4],
            "{dev:?}: counts touched"
        );
        // A range of exactly 2^32 is accepted.
        histogram_even(&dev, &xi, &counts, 0, 1 << 32).unwrap();
        assert_eq!(counts.download().unwrap(), vec![3, 0, 0, 0], "{dev:?}");
    }
}
