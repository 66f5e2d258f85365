//! `tilus::algo::segmented_sum` against a CPU reference on every backend: random CSR rows with
//! empty ones, very long ones, wrapping sums, every element type, poisoned outputs, and the
//! length errors.

mod common;

use common::{backends, Rng};
use tilus::algo::{segmented_reduce, segmented_sum, ScanOp, SegmentedStorage};

/// CSR offsets of `n` values: row lengths drawn from `lens` (0 allowed), the last row takes the
/// rest.
fn offsets(rng: &mut Rng, n: usize, lens: (i32, i32)) -> Vec<i32> {
    let mut o = vec![0i32];
    while (*o.last().unwrap() as usize) < n {
        let len = rng.range(lens.0, lens.1);
        o.push((*o.last().unwrap() + len).min(n as i32));
    }
    o
}

fn row_sums<T: Copy + Default>(x: &[T], o: &[i32], add: impl Fn(T, T) -> T) -> Vec<T> {
    o.windows(2)
        .map(|w| {
            x[w[0] as usize..w[1] as usize]
                .iter()
                .fold(T::default(), |a, &b| add(a, b))
        })
        .collect()
}

#[test]
fn row_sums_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let stream = dev.default_stream();
        // Rows of 0..64 (many empty), 1 (one row a value), 0..3000 (rows over several scan tiles).
        for (n, lens) in [
            (0usize, (0, 3)),
            (1, (0, 2)),
            (100_003, (0, 64)),
            (20_000, (1, 2)),
            (70_001, (0, 3000)),
        ] {
            let x: Vec<i32> = rng.vec(n, -1000, 1000);
            let o = if n == 0 {
                vec![0, 0, 0]
            } else {
                offsets(&mut rng, n, lens)
            };
            let rows = o.len() - 1;
            let (xd, od) = (dev.upload(&x).unwrap(), dev.upload(&o).unwrap());
            let out = dev.full::<i32>(rows + 1, -7777).unwrap(); // one past the rows stays
            let mut st = SegmentedStorage::<i32>::new(&dev, n).unwrap();
            st.sum(&stream, &xd, &od, &out.view(0..rows).unwrap())
                .unwrap();
            let mut want = row_sums(&x, &o, i32::wrapping_add);
            want.push(-7777);
            assert_eq!(
                out.download().unwrap(),
                want,
                "{} n={n} lens={lens:?}",
                dev.name()
            );
            // Reused storage, a second run on other values.
            let y: Vec<i32> = rng.vec(n, -5, 5);
            xd.copy_from_host(&y).unwrap();
            st.sum(&stream, &xd, &od, &out.view(0..rows).unwrap())
                .unwrap();
            want = row_sums(&y, &o, i32::wrapping_add);
            want.push(-7777);
            assert_eq!(out.download().unwrap(), want, "{} rerun n={n}", dev.name());
        }
    }
}

/// `segmented_sum` of `x` over rows `o` against the CPU's wrapping sums.
fn check<T>(dev: &tilus::Device, x: &[T], o: &[i32], add: impl Fn(T, T) -> T)
where
    T: tilus::algo::SegmentedElement + PartialEq + std::fmt::Debug,
{
    let out = dev.zeros::<T>(o.len() - 1).unwrap();
    let (xd, od) = (dev.upload(x).unwrap(), dev.upload(o).unwrap());
    segmented_sum(dev, &xd, &od, &out).unwrap();
    let what = std::any::type_name::<T>();
    assert_eq!(
        out.download().unwrap(),
        row_sums(x, o, add),
        "{what} on {}",
        dev.name()
    );
}

#[test]
fn sums_wrap_in_every_integer_type() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 30_011;
        let o = offsets(&mut rng, n, (0, 700));
        let big: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        check(&dev, &big, &o, u64::wrapping_add);
        let x: Vec<i64> = big.iter().map(|&v| v as i64).collect();
        check(&dev, &x, &o, i64::wrapping_add);
        let x: Vec<u32> = big.iter().map(|&v| v as u32).collect();
        check(&dev, &x, &o, u32::wrapping_add);
    }
}

#[test]
fn wrong_lengths_are_errors() {
    for dev in backends() {
        let x = dev.zeros::<i32>(100).unwrap();
        let out = dev.full::<i32>(4, 9).unwrap();
        let short = dev.upload(&[0, 10, 20, 100]).unwrap(); // 4 offsets for 4 rows: one short
        assert!(segmented_sum(&dev, &x, &short, &out).is_err());
        let ok = dev.upload(&[0, 10, 20, 30, 100]).unwrap();
        let mut st = SegmentedStorage::<i32>::new(&dev, 50).unwrap(); // capacity below 100
        assert!(st.sum(&dev.default_stream(), &x, &ok, &out).is_err());
        assert_eq!(out.download().unwrap(), vec![9; 4], "nothing written");
        // Offsets out of order or out of range: unspecified sums, but no fault.
        let bad = dev.upload(&[50, -3, 1000, 7, i32::MAX]).unwrap();
        segmented_sum(&dev, &x, &bad, &out).unwrap();
    }
}

/// `segmented_reduce` of `x` over rows `o` against the CPU's left-to-right fold from `id`,
/// compared as bit patterns (NaN as one value: the GPU's canonical NaN).
fn check_fold<T>(
    dev: &tilus::Device,
    x: &[T],
    o: &[i32],
    op: ScanOp,
    id: T,
    f: impl Fn(T, T) -> T,
    bits: impl Fn(T) -> u64,
) where
    T: tilus::algo::SegmentedReduceElement + std::fmt::Debug,
{
    let rows = o.len() - 1;
    let out = dev.zeros::<T>(rows + 1).unwrap(); // one past the rows stays 0
    let (xd, od) = (dev.upload(x).unwrap(), dev.upload(o).unwrap());
    segmented_reduce(dev, &xd, &od, &out.view(0..rows).unwrap(), op).unwrap();
    let mut want: Vec<T> = o
        .windows(2)
        .map(|w| {
            x[w[0] as usize..w[1] as usize]
                .iter()
                .fold(id, |a, &b| f(a, b))
        })
        .collect();
    want.push(T::default());
    let got: Vec<u64> = out.download().unwrap().into_iter().map(&bits).collect();
    let want: Vec<u64> = want.into_iter().map(&bits).collect();
    let what = format!("{} {op:?} on {}", std::any::type_name::<T>(), dev.name());
    assert_eq!(got, want, "{what}");
}

#[test]
fn in_order_reductions_match_the_cpu_fold() {
    let mut rng = Rng::from_env_or_clock();
    let f32_bits = |v: f32| {
        if v.is_nan() {
            u64::MAX
        } else {
            v.to_bits() as u64
        }
    };
    let f64_bits = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    for dev in backends() {
        // Many empty and one-value rows, rows over several steps, and rows of thousands.
        for (n, lens) in [
            (0usize, (0, 3)),
            (1, (1, 2)),
            (20_011, (0, 40)),
            (30_000, (0, 3000)),
        ] {
            let o = if n == 0 {
                vec![0, 0, 0]
            } else {
                offsets(&mut rng, n, lens)
            };
            // Magnitudes far apart, so that the order of the additions shows; a few NaN and
            // infinities in the sums (no signed zeros: `min(-0.0, 0.0)` may give either).
            let x: Vec<f32> = (0..n)
                .map(|_| match rng.below(300) {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    _ => (rng.range(-1000, 1000) as f32 + 0.37) * 2f32.powi(rng.range(-20, 20)),
                })
                .collect();
            check_fold(&dev, &x, &o, ScanOp::Sum, 0.0, |a, b| a + b, f32_bits);
            check_fold(&dev, &x, &o, ScanOp::Min, f32::INFINITY, f32::min, f32_bits);
            check_fold(
                &dev,
                &x,
                &o,
                ScanOp::Max,
                f32::NEG_INFINITY,
                f32::max,
                f32_bits,
            );
            let xd: Vec<f64> = x.iter().map(|&v| v as f64 * 1.000001).collect();
            check_fold(&dev, &xd, &o, ScanOp::Sum, 0.0, |a, b| a + b, f64_bits);
            let xi: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
            check_fold(&dev, &xi, &o, ScanOp::Sum, 0, i32::wrapping_add, |v| {
                v as u32 as u64
            });
            check_fold(&dev, &xi, &o, ScanOp::Min, i32::MAX, i32::min, |v| {
                v as u32 as u64
            });
            let xu: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            check_fold(&dev, &xu, &o, ScanOp::Max, 0, u64::max, |v| v);
        }
        let short = dev.upload(&[0, 10]).unwrap();
        let out = dev.full::<f32>(2, 9.0).unwrap();
        let x = dev.zeros::<f32>(10).unwrap();
        assert!(matches!(
            segmented_reduce(&dev, &x, &short, &out, ScanOp::Sum),
            Err(tilus::Error::LengthMismatch { .. })
        ));
        assert_eq!(out.download().unwrap(), vec![9.0, 9.0]);
    }
}

/// `segmented_reduce`'s integer sums (`chunk_sums!`: a block's rows read in chunks of 2048
/// values, 1024 for 64-bit ones, and scanned, a row's sum the difference of its end's and
/// start's prefixes): rows over chunk edges (rows of each chunk's length and one less, of
/// 4096 and 4095), one row of everything, empty rows at both ends, offsets that start past 0
/// and off a multiple of 4, 512- and 256-row groups cut short, wrapping in every type, and bad
/// offsets in both widths.
#[test]
fn integer_sums_in_chunks_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    let n = 1_000_003;
    let big: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let edges = |len: i32| -> Vec<i32> { (0..=n as i32 / len).map(|r| r * len).collect() };
    let mut shapes: Vec<(&str, Vec<i32>)> = vec![
        ("rows of 1..64", offsets(&mut rng, n, (1, 65))),
        ("rows of 0..3", offsets(&mut rng, 20_000, (0, 4))),
        ("one row", vec![0, n as i32]),
        ("rows of 1024", edges(1024)),
        ("rows of 1023", edges(1023)),
        ("rows of 2048", edges(2048)),
        ("rows of 2047", edges(2047)),
        ("rows of 4096", edges(4096)),
        ("rows of 4095", edges(4095)),
        ("rows of 9000..20000", offsets(&mut rng, n, (9000, 20_000))),
    ];
    // Empty rows first and last, and a span starting at 7 (not a multiple of 4).
    let mut o = vec![7, 7, 7];
    o.extend(
        offsets(&mut rng, 300_000, (0, 100))
            .iter()
            .map(|&v| (v + 7).min(300_000)),
    );
    o.extend([300_000, 300_000]);
    shapes.push(("empty rows at both ends, from 7", o));
    for dev in backends() {
        let xd64 = dev.upload(&big).unwrap();
        let x32: Vec<i32> = big.iter().map(|&v| v as i32).collect();
        let xd32 = dev.upload(&x32).unwrap();
        for (what, o) in &shapes {
            let rows = o.len() - 1;
            let od = dev.upload(o).unwrap();
            // One past the rows stays as it was.
            let out = dev.full::<i32>(rows + 1, -7777).unwrap();
            segmented_reduce(&dev, &xd32, &od, &out.view(0..rows).unwrap(), ScanOp::Sum).unwrap();
            let mut want = row_sums(&x32, o, i32::wrapping_add);
            want.push(-7777);
            assert_eq!(
                out.download().unwrap(),
                want,
                "i32 {what} on {}",
                dev.name()
            );
            let out = dev.full::<u64>(rows, 5).unwrap();
            segmented_reduce(&dev, &xd64, &od, &out, ScanOp::Sum).unwrap();
            assert_eq!(
                out.download().unwrap(),
                row_sums(&big, o, u64::wrapping_add),
                "u64 {what} on {}",
                dev.name()
            );
        }
        // i64 and u32 on one shape.
        let o = &shapes[0].1;
        let od = dev.upload(o).unwrap();
        let x: Vec<i64> = big.iter().map(|&v| v as i64).collect();
        let out = dev.zeros::<i64>(o.len() - 1).unwrap();
        segmented_reduce(&dev, &dev.upload(&x).unwrap(), &od, &out, ScanOp::Sum).unwrap();
        assert_eq!(out.download().unwrap(), row_sums(&x, o, i64::wrapping_add));
        let x: Vec<u32> = big.iter().map(|&v| v as u32).collect();
        let out = dev.zeros::<u32>(o.len() - 1).unwrap();
        segmented_reduce(&dev, &dev.upload(&x).unwrap(), &od, &out, ScanOp::Sum).unwrap();
        assert_eq!(out.download().unwrap(), row_sums(&x, o, u32::wrapping_add));
        // Offsets out of order or out of range: unspecified sums, but no fault and no hang.
        let bad = dev
            .upload(&[50, -3, 1_000_000_000, 7, i32::MAX, -9])
            .unwrap();
        let out = dev.zeros::<i32>(5).unwrap();
        segmented_reduce(&dev, &xd32, &bad, &out, ScanOp::Sum).unwrap();
        let out = dev.zeros::<u64>(5).unwrap();
        segmented_reduce(&dev, &xd64, &bad, &out, ScanOp::Sum).unwrap();
    }
}
