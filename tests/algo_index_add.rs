//! `tilus::algo::index_add` against the sequential CPU loop, bit for bit, on every backend: f32,
//! f64, f16 and bf16; every index equal (one hot output), few and many outputs, indices out of
//! range, NaN, infinities and signed zeros among the values, n = 0, 1 and sizes that are not
//! multiples of the tile; repeated runs and reused storage give the same bits.

mod common;

use common::{backends, Rng};
use tilus::algo::{
    index_add, index_add_rows, IndexAddElement, IndexAddRowsStorage, IndexAddStorage,
};
use tilus::{bf16, f16, Device};

trait Float: IndexAddElement + std::ops::Add<Output = Self> + std::fmt::Debug {
    fn from(x: f64) -> Self;
    fn bits(self) -> u64;
    fn is_nan(self) -> bool;
}

macro_rules! float {
    ($($t:ty: $from:expr, $bits:expr;)*) => {$(
        impl Float for $t {
            fn from(x: f64) -> Self {
                $from(x)
            }
            fn bits(self) -> u64 {
                $bits(self) as u64
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    )*};
}

float! {
    f32: |x| x as f32, f32::to_bits;
    f64: |x| x, f64::to_bits;
    f16: f16::from_f64, f16::to_bits;
    bf16: bf16::from_f64, bf16::to_bits;
}

/// The loop the result must equal.
fn sequential<T: Float>(out: &mut [T], idx: &[i32], vals: &[T]) {
    for (&i, &v) in idx.iter().zip(vals) {
        if i >= 0 && (i as usize) < out.len() {
            out[i as usize] = out[i as usize] + v;
        }
    }
}

/// Values of very different magnitudes (so that the order of the additions shows in the bits),
/// with a few NaN, infinities and signed zeros when `special`.
fn values<T: Float>(rng: &mut Rng, n: usize, special: bool) -> Vec<T> {
    (0..n)
        .map(|_| {
            if special && rng.below(400) == 0 {
                [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN][rng.below(5) as usize]
            } else {
                let mag = 2f64.powi(rng.range(-12, 12));
                (rng.range(-1000, 1000) as f64 + 0.123) * mag
            }
        })
        .map(T::from)
        .collect()
}

/// Bits, except that every NaN is one: the GPU's arithmetic gives the canonical NaN where the
/// CPU keeps an operand's payload (documented on `index_add`).
fn bits_of<T: Float>(v: Vec<T>) -> Vec<u64> {
    v.into_iter()
        .map(|x| if x.is_nan() { u64::MAX } else { x.bits() })
        .collect()
}

fn check<T: Float>(rng: &mut Rng, dev: &Device, n: usize, m: usize, hot: bool, special: bool) {
    let idx: Vec<i32> = if hot {
        vec![(m / 2) as i32; n]
    } else {
        // A few indices outside 0..m on both sides.
        (0..n).map(|_| rng.range(-2, m as i32 + 2)).collect()
    };
    check_indices::<T>(rng, dev, &idx, m, special, &format!("hot {hot}"), None);
}

/// `idx` into `m` outputs of `T` against the loop, twice with the same storage (made with
/// `storage` where given).
fn check_indices<T: Float>(
    rng: &mut Rng,
    dev: &Device,
    idx: &[i32],
    m: usize,
    special: bool,
    case: &str,
    storage: Option<IndexAddStorage<T>>,
) {
    let n = idx.len();
    let vals: Vec<T> = values(rng, n, special);
    let start: Vec<T> = values(rng, m, false);
    let mut want = start.clone();
    sequential(&mut want, idx, &vals);
    let (id, vd) = (dev.upload(idx).unwrap(), dev.upload(&vals).unwrap());
    let out = dev.upload(&start).unwrap();
    let mut st = storage.unwrap_or_else(|| IndexAddStorage::<T>::new(dev, n, m).unwrap());
    st.index_add(&dev.default_stream(), &out, &id, &vd).unwrap();
    let bits = bits_of::<T>;
    let what = format!(
        "{} values into {m} {}, {case} on {}",
        n,
        std::any::type_name::<T>(),
        dev.name()
    );
    assert_eq!(bits(out.download().unwrap()), bits(want.clone()), "{what}");
    // Again from the same start, with the same storage: the same bits.
    out.copy_from_host(&start).unwrap();
    st.index_add(&dev.default_stream(), &out, &id, &vd).unwrap();
    assert_eq!(
        bits(out.download().unwrap()),
        bits(want),
        "{what}, second run"
    );
}

/// Indices into `m` outputs: uniform over `-2..m + 2`, except that a value goes to one of the
/// `hubs` with probability `hub_share` (hubs spread `stride` apart from `first`).
fn hub_indices(
    rng: &mut Rng,
    n: usize,
    m: usize,
    (first, stride, hubs): (usize, usize, usize),
    hub_share: f64,
) -> Vec<i32> {
    (0..n)
        .map(|_| {
            if (rng.below(1 << 20) as f64) < hub_share * (1 << 20) as f64 {
                (first + stride * rng.below(hubs as u64) as usize) as i32
            } else {
                rng.range(-2, m as i32 + 2)
            }
        })
        .collect()
}

#[test]
fn index_add_is_the_sequential_loop_bit_for_bit() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for (n, m, hot) in [
            (0usize, 5usize, false),
            (1, 1, false),
            (10_007, 37, false),
            (5_000, 3000, false),
            (9_001, 11, true),
            (70_000, 300, false),
        ] {
            check::<f32>(&mut rng, &dev, n, m, hot, true);
            check::<bf16>(&mut rng, &dev, n, m, hot, true);
        }
        check::<f64>(&mut rng, &dev, 20_011, 100, false, true);
        check::<f16>(&mut rng, &dev, 20_011, 100, false, false);
        // More outputs than one byte of key: a three-pass sort (keys 0..=70000).
        check::<f32>(&mut rng, &dev, 50_000, 70_000, false, false);
    }
}

/// From 2^18 outputs the values are bucketed by the top 8 bits of their index in one pass and
/// folded a bucket a block (two levels, see `tilus::algo::index_add`): random indices; hubs
/// (outputs that take a share of all values, so that a chunk holds more of them than its
/// rounds, and the rest of their values go to the late list); more than 32 hubs in one bucket
/// (the late fold takes them 32 at a time); every index equal; the claims restarted often
/// (their round count); and the widest buckets (2^22 outputs of 16-bit and 32-bit types, 2^21
/// of `f64`, with a hub at the last output), and an `m` that is no power of two.
#[test]
fn many_outputs_fold_in_buckets_bit_for_bit() {
    let mut rng = Rng::from_env_or_clock();
    let m20 = 1usize << 20;
    for dev in backends() {
        let r = &mut rng;
        let idx = hub_indices(r, 50_011, m20, (0, 1, 1), 0.0);
        check_indices::<f32>(r, &dev, &idx, m20, true, "random", None);
        check_indices::<bf16>(r, &dev, &idx, m20, true, "random", None);
        check_indices::<f16>(r, &dev, &idx, m20, false, "random", None);
        let idx = hub_indices(r, 40_000, m20, (777, 1, 1), 0.125);
        check_indices::<f32>(r, &dev, &idx, m20, true, "one hub", None);
        check_indices::<bf16>(r, &dev, &idx, m20, true, "one hub", None);
        // 40 hubs in bucket 3 (outputs 3 * 4096 ..), three quarters of the values.
        let idx = hub_indices(r, 60_000, m20, (3 * 4096 + 5, 97, 40), 0.75);
        check_indices::<f32>(r, &dev, &idx, m20, false, "40 hubs in a bucket", None);
        let idx = vec![(m20 / 2 + 1) as i32; 9_000];
        check_indices::<f32>(r, &dev, &idx, m20, true, "every index equal", None);
        let st = IndexAddStorage::<f32>::new(&dev, 30_000, m20)
            .unwrap()
            .restart_claims_after(3);
        let idx = hub_indices(r, 30_000, m20, (4096 + 17, 3, 5), 0.5);
        check_indices::<f32>(r, &dev, &idx, m20, false, "claims restarted", Some(st));
        let m22 = 1usize << 22;
        let idx = hub_indices(r, 30_000, m22, (m22 - 1, 1, 1), 0.25);
        check_indices::<f32>(r, &dev, &idx, m22, true, "2^22 outputs", None);
        check_indices::<bf16>(r, &dev, &idx, m22, false, "2^22 outputs", None);
        let m21 = 1usize << 21;
        let idx = hub_indices(r, 30_000, m21, (12_345, 1, 1), 0.25);
        check_indices::<f64>(r, &dev, &idx, m21, true, "2^21 outputs", None);
        // The narrowest buckets (1024 outputs): a chunk meets an output twice on average.
        let m18 = 1usize << 18;
        let idx = hub_indices(r, 40_000, m18, (5000, 1, 1), 0.1);
        check_indices::<f32>(r, &dev, &idx, m18, true, "2^18 outputs", None);
        let odd = 1_500_007;
        let idx = hub_indices(r, 45_000, odd, (odd - 3, 1, 1), 0.1);
        check_indices::<f32>(r, &dev, &idx, odd, true, "m no power of two", None);
    }
}

/// Rows `[n, d]` into `[m, d]` against the loop over rows.
fn check_rows<T: Float>(rng: &mut Rng, dev: &Device, n: usize, m: usize, d: usize, hot: bool) {
    let idx: Vec<i32> = if hot {
        vec![(m / 3) as i32; n]
    } else {
        (0..n).map(|_| rng.range(-1, m as i32 + 1)).collect()
    };
    let src: Vec<T> = values(rng, n * d, true);
    let start: Vec<T> = values(rng, m * d, false);
    let mut want = start.clone();
    for (i, &r) in idx.iter().enumerate() {
        if r >= 0 && (r as usize) < m {
            for c in 0..d {
                let o = r as usize * d + c;
                want[o] = want[o] + src[i * d + c];
            }
        }
    }
    let (id, sd) = (dev.upload(&idx).unwrap(), dev.upload(&src).unwrap());
    let out = dev.upload(&start).unwrap();
    let mut st = IndexAddRowsStorage::<T>::new(dev, n, m).unwrap();
    st.index_add_rows(&dev.default_stream(), &out, &id, &sd, d)
        .unwrap();
    let what = format!(
        "{n} rows of {d} into {m} {}, hot {hot}",
        std::any::type_name::<T>()
    );
    assert_eq!(bits_of(out.download().unwrap()), bits_of(want), "{what}");
}

#[test]
fn row_index_add_is_the_sequential_loop_bit_for_bit() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for (n, m, d, hot) in [
            (0usize, 3usize, 8usize, false),
            (1, 1, 128, false),
            (3000, 40, 128, false),
            (1000, 300, 37, false),
            (500, 9, 200, true),
            // 256 outputs: every key fits one byte (an index outside takes a key below 256).
            (3000, 256, 40, false),
        ] {
            check_rows::<f32>(&mut rng, &dev, n, m, d, hot);
            check_rows::<bf16>(&mut rng, &dev, n, m, d, hot);
        }
        check_rows::<f64>(&mut rng, &dev, 700, 50, 130, false);
    }
}

/// Rows whose indices are all outside the output (below 0, at `m`, far past it) are skipped,
/// however many: every output row keeps its bits exactly, NaN payloads included (the loop adds
/// nothing to them; the fold must not even add a zero).
#[test]
fn rows_outside_the_output_leave_every_row_untouched() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let (n, m, d) = (5000usize, 64usize, 130usize);
        let outside = [-1, -7, i32::MIN, m as i32, m as i32 + 1, i32::MAX];
        let idx: Vec<i32> = (0..n)
            .map(|_| outside[rng.below(outside.len() as u64) as usize])
            .collect();
        let src: Vec<f32> = values(&mut rng, n * d, true);
        // Start rows with NaNs of several payloads, infinities and signed zeros.
        let start: Vec<f32> = (0..m * d)
            .map(|i| match i % 7 {
                0 => f32::from_bits(0x7fc0_0000 | (i as u32 & 0xffff)),
                1 => f32::from_bits(0xffa0_0001),
                2 => -0.0,
                3 => f32::NEG_INFINITY,
                _ => rng.range(-1000, 1000) as f32 * 0.37,
            })
            .collect();
        let (id, sd) = (dev.upload(&idx).unwrap(), dev.upload(&src).unwrap());
        let out = dev.upload(&start).unwrap();
        let mut st = IndexAddRowsStorage::<f32>::new(&dev, n, m).unwrap();
        st.index_add_rows(&dev.default_stream(), &out, &id, &sd, d)
            .unwrap();
        let got: Vec<u32> = out
            .download()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let want: Vec<u32> = start.iter().map(|x| x.to_bits()).collect();
        assert!(
            got == want,
            "rows outside changed the output on {}",
            dev.name()
        );
    }
}

#[test]
fn the_one_shot_function_and_its_errors() {
    let dev = Device::emulator();
    let out = dev.upload(&[1.0f32, 2.0]).unwrap();
    let idx = dev.upload(&[1, 1, 0, 5, -1]).unwrap();
    let vals = dev.upload(&[0.5f32, 0.25, 4.0, 100.0, 100.0]).unwrap();
    index_add(&dev, &out, &idx, &vals).unwrap();
    assert_eq!(out.download().unwrap(), vec![5.0, 2.75]);
    let short = dev.upload(&[1.0f32]).unwrap();
    assert!(matches!(
        index_add(&dev, &out, &idx, &short),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    assert_eq!(out.download().unwrap(), vec![5.0, 2.75]);
    let mut st = IndexAddStorage::<f32>::new(&dev, 5, 1).unwrap();
    assert!(st
        .index_add(&dev.default_stream(), &out, &idx, &vals)
        .is_err());
    assert_eq!(out.download().unwrap(), vec![5.0, 2.75]);
    // Rows of 2: out is one row, src five (indices 5 and -1 outside, 1 outside too).
    let src = dev
        .upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
        .unwrap();
    index_add_rows(&dev, &out, &idx, &src, 2).unwrap();
    assert_eq!(out.download().unwrap(), vec![5.0 + 5.0, 2.75 + 6.0]);
    // Source rows that are not whole, an output that is not whole rows: errors, nothing moves.
    assert!(matches!(
        index_add_rows(&dev, &out, &idx, &src.view(0..9).unwrap(), 2),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        index_add_rows(&dev, &out, &idx, &src, 3),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        index_add_rows(&dev, &out, &idx, &src, 0),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    assert_eq!(out.download().unwrap(), vec![10.0, 8.75]);
}

/// The schedules the repeated runs compare: the emulator with each of `workers` threads running
/// blocks, and the GPU where there is one.
fn schedules(workers: &[usize]) -> Vec<Device> {
    let mut devices: Vec<Device> = workers
        .iter()
        .map(|&workers| {
            Device::emulator_with(tilus::EmuOptions {
                workers,
                ..Default::default()
            })
        })
        .collect();
    devices.extend(backends().into_iter().filter(|d| d.is_gpu()));
    devices
}

/// The acceptance run: 100 runs in each of four schedules give the same bits, those of
/// the loop. The library picks its grids from the sizes, so the schedules vary what can vary:
/// the emulator's worker count (1, 2 and 4 threads running blocks) and, where there is one,
/// the GPU. All values but two are added to one output (the others: an infinity, and a -0.0
/// onto a -0.0), and `n` is no multiple of a tile.
#[test]
fn a_hundred_runs_in_four_schedules_give_the_loops_bits() {
    let mut rng = Rng::from_env_or_clock();
    let n = 3 * 4096 + 77;
    let mut idx = vec![2i32; n];
    let mut vals: Vec<f32> = values(&mut rng, n, false);
    // Output 1 gets -0.0 onto -0.0 (stays -0.0), output 3 an infinity, output 2 the rest.
    (idx[5], vals[5]) = (1, -0.0);
    (idx[900], vals[900]) = (3, f32::INFINITY);
    let mut want = vec![0.5f32, -0.0, -0.0, 7.0];
    sequential(&mut want, &idx, &vals);
    for dev in schedules(&[1, 2, 4]) {
        let (id, vd) = (dev.upload(&idx).unwrap(), dev.upload(&vals).unwrap());
        let start = dev.upload(&[0.5f32, -0.0, -0.0, 7.0]).unwrap();
        let out = dev.zeros::<f32>(4).unwrap();
        let mut st = IndexAddStorage::<f32>::new(&dev, n, 4).unwrap();
        for run in 0..100 {
            dev.copy(&start, &out).unwrap();
            st.index_add(&dev.default_stream(), &out, &id, &vd).unwrap();
            assert_eq!(
                bits_of(out.download().unwrap()),
                bits_of(want.clone()),
                "run {run} on {}",
                dev.name()
            );
        }
    }
}

/// The same promise into 2^20 outputs, where the values are bucketed and folded a bucket a
/// block (see `many_outputs_fold_in_buckets_bit_for_bit`): 100 runs on the emulator with 1 and
/// 4 workers and, where there is one, the GPU give the loop's bits, with a hub whose late
/// values a warp folds after the rest, an infinity and -0.0 among the values.
#[test]
fn a_hundred_runs_in_buckets_give_the_loops_bits() {
    let mut rng = Rng::from_env_or_clock();
    let m = 1usize << 20;
    let n = 2 * 4096 + 123;
    let idx = hub_indices(&mut rng, n, m, (m - 4096 + 9, 1, 1), 0.5);
    let mut vals: Vec<f32> = values(&mut rng, n, false);
    (vals[7], vals[4000]) = (f32::INFINITY, -0.0);
    let start: Vec<f32> = values(&mut rng, m, false);
    let mut want = start.clone();
    sequential(&mut want, &idx, &vals);
    let want = bits_of(want);
    for dev in schedules(&[1, 4]) {
        let (id, vd) = (dev.upload(&idx).unwrap(), dev.upload(&vals).unwrap());
        let first = dev.upload(&start).unwrap();
        let out = dev.zeros::<f32>(m).unwrap();
        let mut st = IndexAddStorage::<f32>::new(&dev, n, m).unwrap();
        for run in 0..100 {
            dev.copy(&first, &out).unwrap();
            st.index_add(&dev.default_stream(), &out, &id, &vd).unwrap();
            assert!(
                bits_of(out.download().unwrap()) == want,
                "run {run} on {}",
                dev.name()
            );
        }
    }
}
