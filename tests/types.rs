//! Element types end to end (issue 8): every type through loads, stores, arithmetic,
//! conversions, reductions and atomics, on every backend (the strict emulator, and the GPU with
//! `--features cuda`), against CPU references written with Rust's own operators. Odd lengths
//! that are not multiples of the tiles, fresh random inputs, poisoned outputs.

mod common;

use common::{backends, Rng};
use tilus::prelude::*;
use tilus::Device;

fn rng() -> Rng {
    Rng::from_env_or_clock()
}

fn f32s(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| (r.range(-1_000_000, 1_000_000) as f32) / 1024.0)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// f32 arithmetic and math, elementwise: results must be bit-identical to Rust's f32 operations.

#[tile_kernel(threads = 128)]
fn f32_math(x: GlobalTensor<f32>, y: GlobalTensor<f32>, out: GlobalTensor<f32>) {
    let start = block_idx() * 512;
    let a = load_global(x, offsets = [start], shape = [512], other = 1.0);
    let b = load_global(y, offsets = [start], shape = [512], other = 2.0);
    // Literals take the tile's type (`f32`) from context.
    let s = (a + b) * 0.5 - a / b;
    let t = a.abs().sqrt().mul_add(b, 1.25);
    let r = (a * 3.0).round() + (b * 2.0).floor() + b.ceil() + a.trunc();
    let m = min(a, b) + max(a, 0.0);
    // Four quarters of `out`, each as long as the inputs: the tail of each tile stays inside
    // its quarter (views bound-check).
    let q = out.len() / 4;
    store_global(out.view(0, [q]), s, offsets = [start]);
    store_global(out.view(q, [q]), t, offsets = [start]);
    store_global(out.view(2 * q, [q]), r, offsets = [start]);
    store_global(out.view(3 * q, [q]), m, offsets = [start]);
}

#[test]
fn f32_arithmetic_is_ieee_and_matches_rust() {
    let mut r = rng();
    let n = 1000; // not a multiple of the 512-element tile
    let x = f32s(&mut r, n);
    let y: Vec<f32> = f32s(&mut r, n)
        .into_iter()
        .map(|v| if v == 0.0 { 0.5 } else { v })
        .collect();
    let mut want = vec![0f32; 4 * n];
    for i in 0..n {
        let (a, b) = (x[i], y[i]);
        want[i] = (a + b) * 0.5 - a / b;
        want[n + i] = a.abs().sqrt().mul_add(b, 1.25);
        want[2 * n + i] = (a * 3.0).round() + (b * 2.0).floor() + b.ceil() + a.trunc();
        want[3 * n + i] = a.min(b) + a.max(0.0);
    }
    for dev in backends() {
        let (tx, ty) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
        let out = dev.full(4 * n, f32::NAN).unwrap();
        f32_math::launch(&dev, 2, &tx, &ty, &out).unwrap();
        let got = out.download().unwrap();
        for i in 0..4 * n {
            assert_eq!(
                got[i].to_bits(),
                want[i].to_bits(),
                "{dev:?}: element {i}: {} vs {}",
                got[i],
                want[i]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// u8 with 16-byte vector loads, widened to i32 and summed; i8 sign extension; shifts.

#[tile_kernel(threads = 64)]
fn bytes(x: GlobalTensor<u8>, s: GlobalTensor<i8>, out: GlobalTensor<i32>, w: GlobalTensor<u8>) {
    let start = block_idx() * 2048;
    let a = load_global(x, offsets = [start], shape = [2048]);
    let total = (a as i32).sum();
    atomic_add(out, 0, total);
    let b = load_global(s, offsets = [start], shape = [2048]);
    atomic_add(out, 1, (b as i32).sum());
    // u8 arithmetic wraps; shifts by the width or more give 0.
    let c = (a + 200) ^ (a << 3) ^ (a >> 9u32);
    store_global(w, c, offsets = [start]);
}

#[test]
fn bytes_load_widen_and_wrap() {
    let mut r = rng();
    let n = 5000;
    let x: Vec<u8> = (0..n).map(|_| r.range(0, 256) as u8).collect();
    let s: Vec<i8> = (0..n).map(|_| r.range(-128, 128) as i8).collect();
    let want_sum: i32 = x.iter().map(|&v| v as i32).sum();
    let want_ssum: i32 = s.iter().map(|&v| v as i32).sum();
    let want_w: Vec<u8> = x
        .iter()
        .map(|&a| a.wrapping_add(200) ^ a.wrapping_shl(3))
        .collect();
    for dev in backends() {
        let (tx, ts) = (dev.upload(&x).unwrap(), dev.upload(&s).unwrap());
        let out = dev.zeros::<i32>(2).unwrap();
        let w = dev.full(n, 0xa5u8).unwrap();
        bytes::launch(&dev, 3, &tx, &ts, &out, &w).unwrap();
        assert_eq!(
            out.download().unwrap(),
            vec![want_sum, want_ssum],
            "{dev:?}"
        );
        assert_eq!(w.download().unwrap(), want_w, "{dev:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 64-bit counters past 2^32, and u64 arithmetic.

#[tile_kernel(threads = 32)]
fn wide_counter(c: GlobalTensor<u64>, t: GlobalTensor<i64>) {
    let step = (1u64 << 33) + 7;
    atomic_add(c, 0, step);
    let old = atomic_add(c, 1, 3u64);
    // Everyone also takes a ticket: i64 arithmetic on the old value.
    store_global(t, full([1], (old as i64) * -2), offsets = [block_idx()]);
}

#[test]
fn sixty_four_bit_counters_pass_2_pow_32() {
    let blocks = 777u64;
    for dev in backends() {
        let c = dev.zeros::<u64>(2).unwrap();
        let t = dev.full(blocks as usize, i64::MIN).unwrap();
        wide_counter::launch(&dev, blocks as u32, &c, &t).unwrap();
        let got = c.download().unwrap();
        assert_eq!(got[0], blocks * ((1u64 << 33) + 7), "{dev:?}");
        assert_eq!(got[1], blocks * 3, "{dev:?}");
        let mut tickets: Vec<i64> = t.download().unwrap();
        tickets.sort_unstable();
        let want: Vec<i64> = (0..blocks as i64).rev().map(|k| k * 3 * -2).collect();
        assert_eq!(tickets, want, "{dev:?}: every old value seen once");
    }
}

// ---------------------------------------------------------------------------------------------
// f16 and bf16: computed in f32, rounded to nearest even (the `half` crate's conversions).

#[tile_kernel(threads = 128)]
fn halves(
    a: GlobalTensor<f16>,
    b: GlobalTensor<bf16>,
    out16: GlobalTensor<f16>,
    outb: GlobalTensor<bf16>,
    wide: GlobalTensor<f32>,
) {
    let start = block_idx() * 256;
    let x = load_global(a, offsets = [start], shape = [256]);
    let y = load_global(b, offsets = [start], shape = [256]);
    store_global(out16, x * x + 0.25, offsets = [start]);
    store_global(outb, y * 3.0 - 1.0, offsets = [start]);
    store_global(wide, (x as f32) + (y as f32), offsets = [start]);
}

#[test]
fn sixteen_bit_floats_round_like_the_half_crate() {
    let mut r = rng();
    let n = 700;
    let a: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(r.range(-2000, 2000) as f32 / 37.0))
        .collect();
    let b: Vec<bf16> = (0..n)
        .map(|_| bf16::from_f32(r.range(-200000, 200000) as f32 / 113.0))
        .collect();
    let want16: Vec<f16> = a
        .iter()
        .map(|&x| f16::from_f32(f16::from_f32(x.to_f32() * x.to_f32()).to_f32() + 0.25))
        .collect();
    let wantb: Vec<bf16> = b
        .iter()
        .map(|&y| bf16::from_f32(bf16::from_f32(y.to_f32() * 3.0).to_f32() - 1.0))
        .collect();
    let wantw: Vec<f32> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.to_f32() + y.to_f32())
        .collect();
    for dev in backends() {
        let (ta, tb) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
        let o16 = dev.full(n, f16::NAN).unwrap();
        let ob = dev.full(n, bf16::NAN).unwrap();
        let ow = dev.full(n, f32::NAN).unwrap();
        halves::launch(&dev, 3, &ta, &tb, &o16, &ob, &ow).unwrap();
        let bits = |v: Vec<f16>| v.into_iter().map(f16::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bits(o16.download().unwrap()),
            bits(want16.clone()),
            "{dev:?}: f16"
        );
        let bitsb = |v: Vec<bf16>| v.into_iter().map(bf16::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bitsb(ob.download().unwrap()),
            bitsb(wantb.clone()),
            "{dev:?}: bf16"
        );
        assert_eq!(ow.download().unwrap(), wantw, "{dev:?}: widened");
    }
}

// ---------------------------------------------------------------------------------------------
// Float atomics: add under heavy contention, min/max in IEEE totalOrder (exact).

#[tile_kernel(threads = 128)]
fn float_atomics(
    v: GlobalTensor<f32>,
    idx: GlobalTensor<i32>,
    sum: GlobalTensor<f32>,
    lo: GlobalTensor<f32>,
    hi: GlobalTensor<f32>,
) {
    let start = block_idx() * 1024;
    let x = load_global(v, offsets = [start], shape = [1024]);
    let i = load_global(idx, offsets = [start], shape = [1024], other = -1);
    atomic::global_scatter_add(sum, dim = 0, indices = i, values = x);
    atomic::global_scatter_min(lo, dim = 0, indices = i, values = x);
    atomic::global_scatter_max(hi, dim = 0, indices = i, values = x);
}

#[test]
fn float_atomics_add_with_tolerance_and_min_max_exactly() {
    let mut r = rng();
    let n = 9000;
    let bins = 5;
    let mut v = f32s(&mut r, n);
    // Specials: NaNs of both signs, signed zeros, infinities.
    v[0] = f32::NAN;
    v[1] = -f32::NAN;
    v[2] = -0.0;
    v[3] = 0.0;
    v[4] = f32::INFINITY;
    v[5] = f32::NEG_INFINITY;
    let idx: Vec<i32> = (0..n)
        .map(|i| {
            if i < 6 {
                (i % 2) as i32 + 3
            } else {
                r.range(0, bins + 1)
            }
        })
        .collect();
    // Bins 3 and 4 hold the specials; bins 0..=2 ordinary values (index 5 is out of range).
    let mut want_sum = vec![0f64; bins as usize];
    let mut want_lo = vec![f32::INFINITY; bins as usize];
    let mut want_hi = vec![f32::NEG_INFINITY; bins as usize];
    for (k, (&x, &i)) in v.iter().zip(&idx).enumerate() {
        if !(0..bins).contains(&i) {
            continue;
        }
        let b = i as usize;
        if k >= 6 {
            want_sum[b] += x as f64;
        }
        if x.total_cmp(&want_lo[b]).is_lt() {
            want_lo[b] = x;
        }
        if x.total_cmp(&want_hi[b]).is_gt() {
            want_hi[b] = x;
        }
    }
    for dev in backends() {
        let (tv, ti) = (dev.upload(&v).unwrap(), dev.upload(&idx).unwrap());
        let sum = dev.zeros::<f32>(bins as usize).unwrap();
        let lo = dev.full(bins as usize, f32::INFINITY).unwrap();
        let hi = dev.full(bins as usize, f32::NEG_INFINITY).unwrap();
        float_atomics::launch(&dev, 9, &tv, &ti, &sum, &lo, &hi).unwrap();
        let (s, l, h) = (
            sum.download().unwrap(),
            lo.download().unwrap(),
            hi.download().unwrap(),
        );
        for b in 0..3 {
            // f32 sums of ~1800 values of magnitude <= 1000 in any order: the error is far
            // below n * eps * sum|x| (~1e-3 relative to the sum of magnitudes).
            let mag: f64 = v
                .iter()
                .zip(&idx)
                .skip(6)
                .filter(|(_, &i)| i == b as i32)
                .map(|(x, _)| x.abs() as f64)
                .sum();
            let err = (s[b] as f64 - want_sum[b]).abs();
            assert!(
                err <= 1e-5 * mag + 1e-3,
                "{dev:?}: bin {b}: {} vs {}",
                s[b],
                want_sum[b]
            );
        }
        for b in 0..bins as usize {
            assert_eq!(
                l[b].to_bits(),
                want_lo[b].to_bits(),
                "{dev:?}: min of bin {b}"
            );
            assert_eq!(
                h[b].to_bits(),
                want_hi[b].to_bits(),
                "{dev:?}: max of bin {b}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Literal typing and context-typed builtins, on every backend.

#[tile_kernel(threads = 32)]
fn literals(out8: GlobalTensor<u8>, out64: GlobalTensor<i64>, outf: GlobalTensor<f64>) {
    // `250` and `10` are `u8` from context: the sum wraps.
    let a = load_global(out8, offsets = [0], shape = [4]);
    store_global(out8, a + 250 + 10, offsets = [0]);
    // block_idx() and arange take the `i64` type of the tensor length.
    let n = out64.len();
    let i = arange(4) + block_idx() * 4 + n * 1000000000000;
    store_global(out64, i, offsets = [0]);
    // An open `let mut` literal takes its type from its first use (f64 here, the default).
    let mut acc = 0.0;
    for k in 0..3 {
        acc += 0.5 * (k as f64);
    }
    store_global(outf, full([4], acc), offsets = [0]);
}

#[test]
fn literals_take_their_type_from_context() {
    for dev in backends() {
        let o8 = dev.upload(&[0u8, 1, 2, 250]).unwrap();
        let o64 = dev.zeros::<i64>(4).unwrap();
        let of = dev.zeros::<f64>(4).unwrap();
        literals::launch(&dev, 1, &o8, &o64, &of).unwrap();
        assert_eq!(o8.download().unwrap(), vec![4, 5, 6, 254], "{dev:?}");
        let big = 4 * 1_000_000_000_000i64;
        assert_eq!(
            o64.download().unwrap(),
            vec![big, big + 1, big + 2, big + 3],
            "{dev:?}"
        );
        assert_eq!(of.download().unwrap(), vec![1.5; 4], "{dev:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// bool tensors and conversions between every pair of types (Rust's `as`).

#[tile_kernel(threads = 32)]
fn conversions(
    x: GlobalTensor<f32>,
    b: GlobalTensor<bool>,
    o_u8: GlobalTensor<u8>,
    o_i16: GlobalTensor<i16>,
    o_u32: GlobalTensor<u32>,
    o_i64: GlobalTensor<i64>,
    o_f64: GlobalTensor<f64>,
    o_b: GlobalTensor<bool>,
) {
    let v = load_global(x, offsets = [0], shape = [64]);
    store_global(o_u8, v as u8, offsets = [0]);
    store_global(o_i16, v as i16, offsets = [0]);
    store_global(o_u32, (v as i64) as u32, offsets = [0]);
    store_global(o_i64, v as i64, offsets = [0]);
    store_global(o_f64, (v as bf16) as f64, offsets = [0]);
    let m = load_global(b, offsets = [0], shape = [64]);
    store_global(o_b, m ^ (v > 0.0), offsets = [0]);
}

#[test]
fn conversions_are_rusts_as() {
    let mut r = rng();
    let mut x = f32s(&mut r, 64);
    x[0] = f32::NAN;
    x[1] = 1e20;
    x[2] = -1e20;
    x[3] = -0.9;
    x[4] = 255.9;
    x[5] = 70000.5;
    let b: Vec<bool> = (0..64).map(|_| r.range(0, 2) == 1).collect();
    for dev in backends() {
        let tx = dev.upload(&x).unwrap();
        let tb = dev.upload(&b).unwrap();
        let (o1, o2) = (dev.zeros::<u8>(64).unwrap(), dev.zeros::<i16>(64).unwrap());
        let (o3, o4) = (dev.zeros::<u32>(64).unwrap(), dev.zeros::<i64>(64).unwrap());
        let (o5, o6) = (
            dev.zeros::<f64>(64).unwrap(),
            dev.zeros::<bool>(64).unwrap(),
        );
        conversions::launch(&dev, 1, &tx, &tb, &o1, &o2, &o3, &o4, &o5, &o6).unwrap();
        let want_u8: Vec<u8> = x.iter().map(|&v| v as u8).collect();
        let want_i16: Vec<i16> = x.iter().map(|&v| v as i16).collect();
        let want_u32: Vec<u32> = x.iter().map(|&v| (v as i64) as u32).collect();
        let want_i64: Vec<i64> = x.iter().map(|&v| v as i64).collect();
        let want_b: Vec<bool> = x.iter().zip(&b).map(|(&v, &m)| m ^ (v > 0.0)).collect();
        assert_eq!(o1.download().unwrap(), want_u8, "{dev:?}");
        assert_eq!(o2.download().unwrap(), want_i16, "{dev:?}");
        assert_eq!(o3.download().unwrap(), want_u32, "{dev:?}");
        assert_eq!(o4.download().unwrap(), want_i64, "{dev:?}");
        assert_eq!(o6.download().unwrap(), want_b, "{dev:?}");
        let got = o5.download().unwrap();
        for i in 0..64 {
            let w = bf16::from_f32(x[i]).to_f64();
            assert!(
                got[i] == w || (got[i].is_nan() && w.is_nan()),
                "{dev:?}: {i}: {} vs {w}",
                got[i]
            );
        }
        let _ = Device::emulator;
    }
}

// ---------------------------------------------------------------------------------------------
// exp / ln: expanded into correctly rounded operations, so every backend gives the same bits;
// accuracy against higher-precision references over random bit patterns (all magnitudes,
// subnormals, infinities, NaNs) and the special values.

#[tile_kernel(threads = 128)]
fn transcendental(
    x: GlobalTensor<f32>,
    w: GlobalTensor<f64>,
    h: GlobalTensor<f16>,
    o32: GlobalTensor<f32>,
    o64: GlobalTensor<f64>,
    oh: GlobalTensor<f16>,
    bits: GlobalTensor<u32>,
) {
    let start = block_idx() * 256;
    let n = x.len();
    let m = h.len();
    let a = load_global(x, offsets = [start], shape = [256]);
    let b = load_global(w, offsets = [start], shape = [256]);
    let c = load_global(h, offsets = [start], shape = [256]);
    store_global(o32.view(0, [n]), a.exp(), offsets = [start]);
    store_global(o32.view(n, [n]), ln(a), offsets = [start]);
    // Sign flip through the bits: `from_bits(to_bits(a) ^ sign)` is `-a`, NaN payloads kept.
    store_global(
        o32.view(2 * n, [n]),
        f32::from_bits(a.to_bits() ^ 0x8000_0000),
        offsets = [start],
    );
    store_global(o64.view(0, [n]), exp(b), offsets = [start]);
    store_global(o64.view(n, [n]), b.ln(), offsets = [start]);
    store_global(oh.view(0, [m]), c.exp(), offsets = [start]);
    store_global(oh.view(m, [m]), log(c), offsets = [start]);
    store_global(bits, a.to_bits(), offsets = [start]);
}

/// Distance in units in the last place (0 for equal values, NaN only equal to NaN).
fn ulps(got: f64, want: f64, to_key: impl Fn(f64) -> i64) -> i64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() {
            0
        } else {
            i64::MAX
        };
    }
    (to_key(got) - to_key(want)).abs()
}

fn key32(v: f64) -> i64 {
    let b = (v as f32).to_bits() as i32;
    (if b < 0 { i32::MIN - b } else { b }) as i64
}

fn key64(v: f64) -> i64 {
    let b = v.to_bits() as i64;
    if b < 0 {
        i64::MIN - b
    } else {
        b
    }
}

fn key16(v: f64) -> i64 {
    let b = f16::from_f64(v).to_bits() as i16;
    (if b < 0 { i16::MIN - b } else { b }) as i64
}

#[test]
fn exp_and_ln_are_accurate_and_identical_on_every_backend() {
    let mut r = rng();
    let specials32 = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-45,
        f32::MAX,
        88.72283,
        88.72284,
        -87.33654,
        -103.27893,
        -103.97208,
        -104.0,
        0.5,
        2.0,
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        std::f32::consts::E,
    ];
    let n = 5000 + specials32.len(); // not a multiple of the 256-element tile
    let mut x: Vec<f32> = specials32.to_vec();
    while x.len() < n {
        // Half random bit patterns (every magnitude), half values where exp is finite.
        let v = if r.next_u64().is_multiple_of(2) {
            f32::from_bits(r.next_u64() as u32)
        } else {
            (r.next_u64() % 200_000) as f32 / 1000.0 - 110.0
        };
        x.push(v);
    }
    let mut w: Vec<f64> = vec![
        0.0,
        -0.0,
        1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::MAX,
        709.782712893384,
        709.782712893385,
        -708.3964185322641,
        -745.1332191019411,
        -745.2,
        1.0 + f64::EPSILON,
        1.0 - f64::EPSILON / 2.0,
    ];
    while w.len() < n {
        let v = if r.next_u64().is_multiple_of(2) {
            f64::from_bits(r.next_u64())
        } else {
            (r.next_u64() % 1_500_000) as f64 / 1000.0 - 750.0
        };
        w.push(v);
    }
    let h: Vec<f16> = (0..n)
        .map(|i| match i {
            0 => f16::INFINITY,
            1 => f16::NEG_INFINITY,
            2 => f16::NAN,
            3 => f16::from_bits(1), // smallest subnormal
            4 => f16::MAX,
            5 => f16::ZERO,
            _ => f16::from_bits(r.next_u64() as u16),
        })
        .collect();
    let mut results = Vec::new();
    for dev in backends() {
        let xs = dev.upload(&x).unwrap();
        let ws = dev.upload(&w).unwrap();
        let hs = dev.upload(&h).unwrap();
        let o32 = dev.full(3 * n, f32::from_bits(0x7fbad000)).unwrap();
        let o64 = dev.full(2 * n, -7.0f64).unwrap();
        let oh = dev.full(2 * n, f16::from_f32(-7.0)).unwrap();
        let bits = dev.full(n, 0xdead_beefu32).unwrap();
        let grid = n.div_ceil(256) as u32;
        transcendental::launch(&dev, grid, &xs, &ws, &hs, &o32, &o64, &oh, &bits).unwrap();
        let (o32, o64, oh, bits) = (
            o32.download().unwrap(),
            o64.download().unwrap(),
            oh.download().unwrap(),
            bits.download().unwrap(),
        );
        let mut worst = [0i64; 6];
        for i in 0..n {
            let a = x[i] as f64;
            let errs = [
                ulps(o32[i] as f64, a.exp(), key32),
                ulps(o32[n + i] as f64, a.ln(), key32),
                ulps(o64[i], w[i].exp(), key64),
                ulps(o64[n + i], w[i].ln(), key64),
                ulps(oh[i].to_f64(), h[i].to_f64().exp(), key16),
                ulps(oh[n + i].to_f64(), h[i].to_f64().ln(), key16),
            ];
            for (k, e) in errs.into_iter().enumerate() {
                assert!(
                    e <= 2,
                    "{dev:?}: function {k} at element {i} (x = {:e}, w = {:e}, h = {}): {e} ulp; got {:e} / {:e} / {}",
                    x[i], w[i], h[i], o32[i], o64[i], oh[i]
                );
                worst[k] = worst[k].max(e);
            }
            assert_eq!(bits[i], x[i].to_bits(), "{dev:?}: to_bits at {i}");
            assert_eq!(
                o32[2 * n + i].to_bits(),
                x[i].to_bits() ^ 0x8000_0000,
                "{dev:?}: from_bits at {i}"
            );
        }
        eprintln!(
            "{dev:?}: worst ulp exp/ln f32 {:?}, f64 {:?}, f16 {:?}",
            &worst[0..2],
            &worst[2..4],
            &worst[4..6]
        );
        results.push((format!("{dev:?}"), o32, o64, oh));
    }
    // The same bits on every backend (the expansion uses correctly rounded operations only);
    // NaN payloads are the one thing IEEE leaves open (a GPU converting a NaN to `f16`
    // canonicalises it, the host keeps the payload), so there a NaN only has to be a NaN.
    let same = |a: u64, b: u64, a_nan: bool, b_nan: bool| a == b || (a_nan && b_nan);
    for other in &results[1..] {
        let first = &results[0];
        let same32 = (first.1.iter().zip(&other.1)).all(|(a, b)| {
            same(
                a.to_bits() as u64,
                b.to_bits() as u64,
                a.is_nan(),
                b.is_nan(),
            )
        });
        let same64 = (first.2.iter().zip(&other.2))
            .all(|(a, b)| same(a.to_bits(), b.to_bits(), a.is_nan(), b.is_nan()));
        let same16 = (first.3.iter().zip(&other.3)).all(|(a, b)| {
            same(
                a.to_bits() as u64,
                b.to_bits() as u64,
                a.is_nan(),
                b.is_nan(),
            )
        });
        assert!(
            same32 && same64 && same16,
            "{} and {} differ",
            first.0,
            other.0
        );
    }
}

#[test]
fn every_kernel_here_assembles() {
    for (name, ptx, target) in common::kernels![
        f32_math,
        bytes,
        wide_counter,
        halves,
        float_atomics,
        literals,
        conversions,
        transcendental
    ] {
        common::assemble_all(name, ptx, target);
    }
    // 16 bytes per thread access for u8: one `ld.global.v4.b32` moves 16 elements.
    assert!(bytes::PTX.contains("ld.global.v4.b32"), "{}", bytes::PTX);
}
