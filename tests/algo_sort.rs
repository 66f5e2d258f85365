//! `tilus::algo` radix sorts against Rust's stable sort on every backend: every key type, both
//! directions, pairs (whose values show stability), few distinct keys (contention on one
//! digit), floats with NaN, infinities and signed zeros, sizes that are not multiples of the
//! tile and 10^6 keys, sorted and reverse-sorted inputs, in-place sorts, storage reused across
//! runs, poisoned outputs and outputs inside larger tensors, and the length errors.

mod common;

use common::{backends, Rng};
use std::cmp::Ordering;
use tilus::algo::sort::{KeyBits, TILE};
use tilus::algo::{radix_sort_keys, radix_sort_pairs, SortKey, SortOrder, SortStorage, SortValue};
use tilus::{AsTensor, Device};

/// The order the sorts promise: integers by value, floats by IEEE 754 `totalOrder`.
trait Key: SortKey + std::fmt::Debug {
    fn order(a: &Self, b: &Self) -> Ordering;
    fn draw(rng: &mut Rng, distinct: u64) -> Self;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn order(a: &Self, b: &Self) -> Ordering {
                a.cmp(b)
            }
            fn draw(rng: &mut Rng, distinct: u64) -> Self {
                // Few distinct keys: small ones, and negatives for signed types; else any bits.
                if distinct == 0 {
                    rng.next_u64() as $t
                } else {
                    (rng.below(distinct) as $t).wrapping_sub((distinct / 2) as $t)
                }
            }
        }
    )*};
}
int_key!(u32, i32, u64, i64);

macro_rules! float_key {
    ($($t:ty, $bits:ty);*) => {$(
        impl Key for $t {
            fn order(a: &Self, b: &Self) -> Ordering {
                a.total_cmp(b)
            }
            fn draw(rng: &mut Rng, distinct: u64) -> Self {
                let special = [0.0, -0.0, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::NAN, -<$t>::NAN, <$t>::MIN_POSITIVE / 4.0];
                if rng.below(16) == 0 {
                    special[rng.below(special.len() as u64) as usize]
                } else if distinct == 0 {
                    <$t>::from_bits(rng.next_u64() as $bits)
                } else {
                    rng.below(distinct) as $t * 0.5 - distinct as $t / 4.0
                }
            }
        }
    )*};
}
float_key!(f32, u32; f64, u64);

fn reference<K: Key>(keys: &[K], order: SortOrder) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    // `sort_by` is stable in both directions.
    idx.sort_by(|&a, &b| {
        let o = K::order(&keys[a], &keys[b]);
        if order == SortOrder::Descending {
            o.reverse()
        } else {
            o
        }
    });
    idx
}

fn bits<K: SortKey>(dev: &Device, v: &[K]) -> Vec<u64> {
    // Compare bit patterns, so that NaNs and signed zeros are compared exactly.
    let t = dev.upload(v).unwrap();
    if std::mem::size_of::<K>() == 4 {
        t.bitcast::<u32>()
            .unwrap()
            .download()
            .unwrap()
            .into_iter()
            .map(u64::from)
            .collect()
    } else {
        t.bitcast::<u64>().unwrap().download().unwrap()
    }
}

/// Sorts pairs (keys, their input positions) of `n` keys and checks keys and values bit for bit,
/// then the same keys alone, in place.
fn check<K: Key>(rng: &mut Rng, dev: &Device, n: usize, distinct: u64, order: SortOrder) {
    let keys: Vec<K> = (0..n).map(|_| K::draw(rng, distinct)).collect();
    check_keys(dev, keys, &format!("{distinct} distinct"), order);
}

/// [`check`] of the given keys (`what` says how they were made).
fn check_keys<K: Key>(dev: &Device, keys: Vec<K>, what: &str, order: SortOrder) {
    let n = keys.len();
    let idx = reference(&keys, order);
    let want_keys: Vec<K> = idx.iter().map(|&i| keys[i]).collect();
    let want_vals: Vec<u32> = idx.iter().map(|&i| i as u32).collect();
    let stream = dev.default_stream();
    let kd = dev.upload(&keys).unwrap();
    let vd = dev.upload(&(0..n as u32).collect::<Vec<_>>()).unwrap();
    let ko = dev.upload(&vec![K::default(); n]).unwrap();
    let vo = dev.full::<u32>(n, 0xdead_beef).unwrap();
    let mut st = SortStorage::<K, u32>::new(dev, n).unwrap();
    st.sort_pairs(&stream, &kd, &vd, &ko, &vo, order).unwrap();
    let what = format!(
        "{} keys of {}, {what}, {order:?}",
        n,
        std::any::type_name::<K>()
    );
    assert_eq!(
        bits(dev, &ko.download().unwrap()),
        bits(dev, &want_keys),
        "{what}: keys"
    );
    assert_eq!(
        vo.download().unwrap(),
        want_vals,
        "{what}: values (stability)"
    );
    // Keys alone, in place, with the same storage (a later epoch).
    st.sort_keys(&stream, &kd, &kd, order).unwrap();
    assert_eq!(
        bits(dev, &kd.download().unwrap()),
        bits(dev, &want_keys),
        "{what}: in place"
    );
}

#[test]
fn sorts_match_a_stable_cpu_sort() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for order in [SortOrder::Ascending, SortOrder::Descending] {
            for (n, distinct) in [
                (0usize, 0u64),
                (1, 0),
                (1000, 0),
                (3 * TILE + 17, 5),
                (2 * TILE - 1, 0),
                (2 * <u32 as KeyBits>::KEYS_TILE + 1, 0),
            ] {
                check::<u32>(&mut rng, &dev, n, distinct, order);
                check::<i32>(&mut rng, &dev, n, distinct, order);
                check::<f32>(&mut rng, &dev, n, distinct, order);
            }
            for (n, distinct) in [(777usize, 0u64), (TILE + 5, 3)] {
                check::<u64>(&mut rng, &dev, n, distinct, order);
                check::<i64>(&mut rng, &dev, n, distinct, order);
                check::<f64>(&mut rng, &dev, n, distinct, order);
            }
        }
    }
}

/// The sizes around the tile and 10^6 keys, already sorted, sorted the other way and
/// random, in both directions: sorted inputs put a whole tile in one or two digits of the
/// high passes, so that lanes of one digit look back over long runs of tiles.
#[test]
fn sorted_reversed_and_a_million_keys() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        // Keys-only passes of 32-bit keys take larger tiles than pair passes.
        let keys_tile = <u32 as KeyBits>::KEYS_TILE;
        for n in [TILE - 1, TILE + 1, keys_tile - 1, keys_tile + 1, 1_000_000] {
            let random: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let mut sorted = random.clone();
            sorted.sort();
            let reversed: Vec<u32> = sorted.iter().rev().copied().collect();
            // Signed keys across zero, with repeats, in order.
            let signed: Vec<i32> = (0..n as i32).map(|i| i / 3 - n as i32 / 6).collect();
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                check_keys(&dev, sorted.clone(), "sorted", order);
                check_keys(&dev, reversed.clone(), "reverse-sorted", order);
                check_keys(&dev, signed.clone(), "sorted signed, repeated", order);
            }
            check_keys(&dev, random, "random", SortOrder::Ascending);
        }
    }
}

#[test]
fn every_key_equal_and_many_tiles() {
    // All keys in one digit of every pass: every tile's lanes look back on one digit, and the
    // values must come out in input order.
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        check::<u32>(&mut rng, &dev, 40 * TILE + 333, 1, SortOrder::Ascending);
        check::<i32>(&mut rng, &dev, 25 * TILE + 1, 0, SortOrder::Descending);
    }
}

#[test]
fn pairs_of_64_bit_values_and_one_shot_functions() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let n = 2 * TILE + 99;
        let keys: Vec<i32> = rng.vec(n, -50, 50);
        let vals: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
        let idx = reference(&keys, SortOrder::Ascending);
        let (kd, vd) = (dev.upload(&keys).unwrap(), dev.upload(&vals).unwrap());
        let (ko, vo) = (dev.zeros::<i32>(n).unwrap(), dev.zeros::<f64>(n).unwrap());
        radix_sort_pairs(&dev, &kd, &vd, &ko, &vo).unwrap();
        assert_eq!(
            ko.download().unwrap(),
            idx.iter().map(|&i| keys[i]).collect::<Vec<_>>()
        );
        assert_eq!(
            vo.download().unwrap(),
            idx.iter().map(|&i| vals[i]).collect::<Vec<_>>()
        );
        // A view in, a view out (16-byte aligned, as kernels' tensors are): only the range
        // moves, the rest is untouched.
        let out = dev.full::<i32>(n + 2, 7).unwrap();
        radix_sort_keys(&dev, &kd.view(4..n).unwrap(), &out.view(4..n).unwrap()).unwrap();
        let mut want: Vec<i32> = keys[4..].to_vec();
        want.sort();
        let got = out.download().unwrap();
        assert_eq!((got[0], got[3], got[n], got[n + 1]), (7, 7, 7, 7));
        assert_eq!(&got[4..n], &want[..]);
        // A misaligned view is a launch error, not a wrong result.
        assert!(matches!(
            radix_sort_keys(&dev, &kd.view(1..n).unwrap(), &out.view(1..n).unwrap()),
            Err(tilus::Error::Misaligned { .. })
        ));
    }
}

/// Pairs whose values are narrower or wider than their keys: 64-bit keys with 16- and 64-bit
/// values, 32-bit keys with 16- and 64-bit values (each width pair is its own pass kernel),
/// few distinct keys so that stability shows, over several tiles, in both directions.
#[test]
fn pairs_of_every_key_and_value_width() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for order in [SortOrder::Ascending, SortOrder::Descending] {
            let n = 2 * TILE + 37;
            pairs_of::<u64, u16>(&mut rng, &dev, n, order, |i| i as u16);
            pairs_of::<i64, u64>(&mut rng, &dev, n, order, |i| (i as u64) << 20 | 5);
            pairs_of::<f64, i16>(&mut rng, &dev, n, order, |i| -(i as i16));
            pairs_of::<u32, u16>(&mut rng, &dev, n, order, |i| i as u16 ^ 0x5a5a);
            pairs_of::<f32, u64>(&mut rng, &dev, n, order, |i| !(i as u64));
        }
    }
}

/// One sort of `n` pairs with keys `K` of few distinct values and values `val(position)`,
/// against the stable CPU order.
fn pairs_of<K: Key, V: SortValue + PartialEq + std::fmt::Debug>(
    rng: &mut Rng,
    dev: &Device,
    n: usize,
    order: SortOrder,
    val: impl Fn(usize) -> V,
) {
    let keys: Vec<K> = (0..n).map(|_| K::draw(rng, 7)).collect();
    let vals: Vec<V> = (0..n).map(val).collect();
    let idx = reference(&keys, order);
    let want_keys: Vec<K> = idx.iter().map(|&i| keys[i]).collect();
    let want_vals: Vec<V> = idx.iter().map(|&i| vals[i]).collect();
    let (kd, vd) = (dev.upload(&keys).unwrap(), dev.upload(&vals).unwrap());
    let ko = dev.upload(&vec![K::default(); n]).unwrap();
    let vo = dev.upload(&vec![V::default(); n]).unwrap();
    let mut st = SortStorage::<K, V>::new(dev, n).unwrap();
    st.sort_pairs(&dev.default_stream(), &kd, &vd, &ko, &vo, order)
        .unwrap();
    let what = format!(
        "{} keys of {} with values of {}, {order:?}",
        n,
        std::any::type_name::<K>(),
        std::any::type_name::<V>()
    );
    assert_eq!(
        bits(dev, &ko.download().unwrap()),
        bits(dev, &want_keys),
        "{what}: keys"
    );
    assert_eq!(vo.download().unwrap(), want_vals, "{what}: values");
}

#[test]
fn storage_reused_for_fewer_keys_than_its_capacity() {
    // Each pass draws tickets for the tiles it launches; runs of different sizes on one storage
    // must still number their tiles from 0 (a run of 3 tiles after one of 10 must not start
    // at tile 10 - 3).
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let mut st = SortStorage::<u32, u32>::new(&dev, 10 * TILE).unwrap();
        for n in [10 * TILE, 3 * TILE + 5, 7, 10 * TILE - 1, 2 * TILE] {
            let keys: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let idx = reference(&keys, SortOrder::Descending);
            let kd = dev.upload(&keys).unwrap();
            let vd = dev.upload(&(0..n as u32).collect::<Vec<_>>()).unwrap();
            let (ko, vo) = (dev.zeros::<u32>(n).unwrap(), dev.zeros::<u32>(n).unwrap());
            st.sort_pairs(
                &dev.default_stream(),
                &kd,
                &vd,
                &ko,
                &vo,
                SortOrder::Descending,
            )
            .unwrap();
            let want: Vec<u32> = idx.iter().map(|&i| keys[i]).collect();
            assert_eq!(ko.download().unwrap(), want, "{n} keys");
            assert_eq!(
                vo.download().unwrap(),
                idx.iter().map(|&i| i as u32).collect::<Vec<_>>(),
                "{n} keys: values"
            );
        }
    }
}

#[test]
fn length_errors_leave_the_outputs_alone() {
    let dev = Device::emulator();
    let keys = dev.upload(&[3u32, 1, 2]).unwrap();
    let short = dev.full::<u32>(2, 9).unwrap();
    assert!(matches!(
        radix_sort_keys(&dev, &keys, &short),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    assert_eq!(short.download().unwrap(), vec![9, 9]);
    let vals = dev.upload(&[1.0f32, 2.0]).unwrap();
    let out = dev.zeros::<u32>(3).unwrap();
    let vout = dev.full::<f32>(2, 5.0).unwrap();
    assert!(matches!(
        radix_sort_pairs(&dev, &keys, &vals, &out, &vout),
        Err(tilus::Error::LengthMismatch { .. })
    ));
    // Over capacity.
    let mut st = SortStorage::<u32>::new(&dev, 2).unwrap();
    assert!(st
        .sort_keys(&dev.default_stream(), &keys, &out, SortOrder::Ascending)
        .is_err());
    assert_eq!(out.download().unwrap(), vec![0, 0, 0]);
}

/// The passes read the keys past the end of the last tile as a fill whose ordered bits are all
/// ones (digit 255 at every pass) and leave it to the bounded stores to drop them: outputs that
/// are views into larger tensors keep their neighbours, for every key class and direction, with
/// real keys equal to the fill (and to its complement) among random ones.
#[test]
fn outputs_inside_larger_tensors_keep_their_neighbours() {
    macro_rules! class {
        ($rng:ident, $dev:ident, $order:ident, $($k:ty, $v:ty);*) => {$({
            let n = TILE + 1234;
            let ones = !<$v>::default();
            let specials = [ones, 0, ones >> 1, !(ones >> 1)];
            let raw: Vec<$v> = (0..n)
                .map(|i| if i % 5 == 0 { specials[i / 5 % 4] } else { $rng.next_u64() as $v })
                .collect();
            let keys: Vec<$k> = $dev.upload(&raw).unwrap().bitcast::<$k>().unwrap().download().unwrap();
            let idx = reference(&keys, $order);
            let want_keys: Vec<$k> = idx.iter().map(|&i| keys[i]).collect();
            let kd = $dev.upload(&keys).unwrap();
            let vals: Vec<u16> = (0..n).map(|i| i as u16).collect();
            let vd = $dev.upload(&vals).unwrap();
            let pad = TILE + 8;
            let poison_k = ones & 0x5a5a_5a5a;
            let big_k = $dev.full::<$v>(n + 2 * pad, poison_k).unwrap();
            let big_v = $dev.full::<u16>(n + 2 * pad, 0xbeef).unwrap();
            {
                let ko = big_k.view(pad..pad + n).unwrap();
                let ko = ko.bitcast::<$k>().unwrap();
                let vo = big_v.view(pad..pad + n).unwrap();
                let mut st = SortStorage::<$k, u16>::new(&$dev, 3 * n).unwrap();
                st.sort_pairs(&$dev.default_stream(), &kd, &vd, &ko, &vo, $order).unwrap();
            }
            let what = format!("{} keys of {}, {:?}", n, stringify!($k), $order);
            let got_k = big_k.download().unwrap();
            let got_v = big_v.download().unwrap();
            assert!(got_k[..pad].iter().chain(&got_k[pad + n..]).all(|&b| b == poison_k), "{what}: keys around");
            assert!(got_v[..pad].iter().chain(&got_v[pad + n..]).all(|&b| b == 0xbeef), "{what}: values around");
            assert_eq!(
                bits(&$dev, &$dev.upload(&got_k[pad..pad + n]).unwrap().bitcast::<$k>().unwrap().download().unwrap()),
                bits(&$dev, &want_keys),
                "{what}: keys"
            );
            let want_vals: Vec<u16> = idx.iter().map(|&i| vals[i]).collect();
            assert_eq!(&got_v[pad..pad + n], &want_vals[..], "{what}: values");
            // Keys alone into a view.
            let big = $dev.full::<$v>(n + 2 * pad, poison_k).unwrap();
            {
                let ko = big.view(pad..pad + n).unwrap();
                radix_sort_keys(&$dev, &kd, &ko.bitcast::<$k>().unwrap()).unwrap();
            }
            let got = big.download().unwrap();
            assert!(got[..pad].iter().chain(&got[pad + n..]).all(|&b| b == poison_k), "{what}: keys alone, around");
        })*};
    }
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for order in [SortOrder::Ascending, SortOrder::Descending] {
            class!(rng, dev, order, u32, u32; i32, u32; f32, u32; u64, u64; i64, u64; f64, u64);
        }
    }
}
