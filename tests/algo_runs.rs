//! `tilus::algo::unique` and `run_length_encode` against the CPU on every backend: runs of
//! random lengths (1 to thousands, over tile boundaries), all elements equal, all distinct,
//! n = 0 and 1, float equality (-0.0 == 0.0, NaN never equal), storage reused, and `out`
//! beyond the runs left alone.

mod common;

use common::{backends, Rng};
use tilus::algo::{run_length_encode, unique, RunStorage};

/// Runs as the CPU sees them with `eq`: (value, length) in order.
fn runs<T: Copy>(x: &[T], eq: impl Fn(T, T) -> bool) -> Vec<(T, i32)> {
    let mut out: Vec<(T, i32)> = Vec::new();
    for &v in x {
        match out.last_mut() {
            Some((w, len)) if eq(*w, v) => *len += 1,
            _ => out.push((v, 1)),
        }
    }
    out
}

/// `n` values in runs of lengths drawn from `lens`.
fn in_runs(rng: &mut Rng, n: usize, lens: (i32, i32)) -> Vec<i64> {
    let mut x = Vec::with_capacity(n);
    while x.len() < n {
        let v = rng.range(-50, 50) as i64;
        for _ in 0..rng.range(lens.0, lens.1) {
            x.push(v);
        }
    }
    x.truncate(n);
    x
}

#[test]
fn runs_match_the_cpu() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let stream = dev.default_stream();
        let mut st = RunStorage::new(&dev, 60_000).unwrap();
        for (n, lens) in [
            (0usize, (1, 2)),
            (1, (1, 2)),
            (10_007, (1, 4)),
            (60_000, (1, 3000)),
            (50_000, (60_000, 60_001)),
            (9_000, (1, 2)),
        ] {
            let x = in_runs(&mut rng, n, lens);
            let want = runs(&x, |a, b| a == b);
            let xd = dev.upload(&x).unwrap();
            let (vals, lens_d) = (
                dev.full::<i64>(n + 1, 77).unwrap(),
                dev.full::<i32>(n + 1, -1).unwrap(),
            );
            st.run_length_encode(
                &stream,
                &xd,
                &vals.view(0..n).unwrap(),
                &lens_d.view(0..n).unwrap(),
            )
            .unwrap();
            let r = st.num_runs().download().unwrap()[0] as usize;
            assert_eq!(r, want.len(), "n={n} lens={lens:?}: number of runs");
            let (v, l) = (vals.download().unwrap(), lens_d.download().unwrap());
            let got: Vec<(i64, i32)> = v[..r].iter().copied().zip(l[..r].iter().copied()).collect();
            assert_eq!(got, want, "n={n} lens={lens:?}");
            assert!(
                v[r..].iter().all(|&e| e == 77) && l[r..].iter().all(|&e| e == -1),
                "past the runs"
            );
            // unique alone, from the same storage.
            let out = dev.full::<i64>(n, 77).unwrap();
            st.unique(&stream, &xd, &out).unwrap();
            let u = out.download().unwrap();
            assert_eq!(
                &u[..r],
                &want.iter().map(|p| p.0).collect::<Vec<_>>()[..],
                "unique, n={n}"
            );
        }
    }
}

#[test]
fn floats_compare_as_ieee() {
    for dev in backends() {
        let x = [1.0f32, 1.0, -0.0, 0.0, f32::NAN, f32::NAN, 2.0, 2.0, 2.0];
        let (v, l) = run_length_encode(&dev, &dev.upload(&x).unwrap()).unwrap();
        let v = v.download().unwrap();
        assert_eq!(l.download().unwrap(), vec![2, 2, 1, 1, 3]);
        assert_eq!(
            (v[0], v[1].to_bits(), v[4]),
            (1.0, (-0.0f32).to_bits(), 2.0)
        );
        assert!(v[2].is_nan() && v[3].is_nan());
        let u = unique(&dev, &dev.upload(&[5u32, 5, 6, 5]).unwrap()).unwrap();
        assert_eq!(u.download().unwrap(), vec![5, 6, 5]);
        assert_eq!(
            unique(&dev, &dev.zeros::<u64>(0).unwrap()).unwrap().len(),
            0
        );
    }
}
