//! 16-bit atomics that no PTX instruction has (`i16`/`u16` add, sub, min, max, exch and the
//! bitwise ops; `f16`/`bf16` min, max and exch): the compiler performs them as `atom.cas.b16`
//! loops, each element as atomic as one instruction. Checked on every backend against a CPU
//! reference under contention (many blocks and repeated indices on the same elements), and
//! the PTX assembled.

mod common;

use common::{assemble_all, backends, Rng};
use half::{bf16, f16};
use tilus::prelude::*;

/// Every block scatters its 512 values into 40 bins (repeats within and across blocks):
/// shared-memory sums and maxima per block, then global ones.
#[tile_kernel(threads = 128)]
fn i16_bins(
    bins: GlobalTensor<i32>,
    vals: GlobalTensor<i16>,
    sum: GlobalTensor<i16>,
    max: GlobalTensor<i16>,
) {
    let at = load_global(bins, offsets = [block_idx() * 512], shape = [512]);
    let v = load_global(vals, offsets = [block_idx() * 512], shape = [512]);
    let s = shared_tensor(i16, [40]);
    store_shared(s, zeros([40], dtype = i16));
    sync();
    atomic::shared_scatter_add(s, dim = 0, indices = at, values = v);
    sync();
    atomic::global_add(sum, load_shared(s));
    atomic::global_scatter_max(max, dim = 0, indices = at, values = v);
}

/// `u16` counters: wrapping `sub` and the bitwise ops, every block on the same 64 elements.
#[tile_kernel(threads = 64)]
fn u16_mix(
    x: GlobalTensor<u16>,
    or: GlobalTensor<u16>,
    xor: GlobalTensor<u16>,
    and: GlobalTensor<u16>,
) {
    let b = block_idx() as u16;
    let lane = arange(64u16);
    atomic::global_sub(x, values = full([64], 3u16) + lane);
    atomic::global_or(or, values = (lane + b) & 255u16);
    atomic::global_xor(xor, values = lane * 7u16 + b);
    atomic::global_and(and, values = !(1u16 << (b % 16)) | lane);
}

/// Float `min`/`max` by IEEE `totalOrder` (`-0.0 < +0.0`, NaN at the ends) through the indexed
/// form, results used; and `exch` handing a value chain along.
macro_rules! float16_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 64)]
        fn $name(
            vals: GlobalTensor<$t>,
            idx: GlobalTensor<i32>,
            lo: GlobalTensor<$t>,
            hi: GlobalTensor<$t>,
            last: GlobalTensor<$t>,
            prev: GlobalTensor<$t>,
        ) {
            let v = load_global(vals, offsets = [block_idx() * 256], shape = [256]);
            let i = load_global(idx, offsets = [block_idx() * 256], shape = [256]);
            atomic_min(lo, i, v, order = MemoryOrder::Relaxed);
            let before = atomic_max(hi, i, v);
            let p = atomic_xchg(last, i % 8, v);
            store_global(prev, p, offsets = [block_idx() * 256]);
            store_global(prev, before, offsets = [block_idx() * 256 + 8192]);
        }
    };
}
float16_kernel!(f16_order, f16);
float16_kernel!(bf16_order, bf16);

#[test]
fn i16_sums_and_maxima_under_contention() {
    let mut r = Rng::from_env_or_clock();
    let blocks = 24;
    let bins: Vec<i32> = (0..blocks * 512).map(|_| r.range(0, 40)).collect();
    let vals: Vec<i16> = (0..blocks * 512)
        .map(|_| r.range(-300, 300) as i16)
        .collect();
    let mut want_sum = vec![0i16; 40];
    let mut want_max = vec![i16::MIN; 40];
    for (b, v) in bins.iter().zip(&vals) {
        want_sum[*b as usize] = want_sum[*b as usize].wrapping_add(*v);
        want_max[*b as usize] = want_max[*b as usize].max(*v);
    }
    for dev in backends() {
        let (b, v) = (dev.upload(&bins).unwrap(), dev.upload(&vals).unwrap());
        let sum = dev.zeros::<i16>(40).unwrap();
        let max = dev.full(40, i16::MIN).unwrap();
        i16_bins::launch(&dev, blocks as u32, &b, &v, &sum, &max).unwrap();
        assert_eq!(sum.download().unwrap(), want_sum, "{dev:?} sums (wrapping)");
        assert_eq!(max.download().unwrap(), want_max, "{dev:?} maxima");
    }
}

#[test]
fn u16_wrapping_and_bitwise() {
    let blocks = 37u16;
    let mut want_x = vec![5u16; 64];
    let mut want_or = vec![0u16; 64];
    let mut want_xor = vec![0x1234u16; 64];
    let mut want_and = vec![u16::MAX; 64];
    for b in 0..blocks {
        for l in 0..64u16 {
            let k = l as usize;
            want_x[k] = want_x[k].wrapping_sub(3 + l);
            want_or[k] |= (l + b) & 255;
            want_xor[k] ^= l.wrapping_mul(7).wrapping_add(b);
            want_and[k] &= !(1u16 << (b % 16)) | l;
        }
    }
    for dev in backends() {
        let x = dev.full(64, 5u16).unwrap();
        let or = dev.zeros::<u16>(64).unwrap();
        let xor = dev.full(64, 0x1234u16).unwrap();
        let and = dev.full(64, u16::MAX).unwrap();
        u16_mix::launch(&dev, blocks as u32, &x, &or, &xor, &and).unwrap();
        assert_eq!(x.download().unwrap(), want_x, "{dev:?} sub");
        assert_eq!(or.download().unwrap(), want_or, "{dev:?} or");
        assert_eq!(xor.download().unwrap(), want_xor, "{dev:?} xor");
        assert_eq!(and.download().unwrap(), want_and, "{dev:?} and");
    }
}

/// The values of the float test: ordinary numbers, both zeros, infinities and NaNs of both
/// signs, as bit patterns of a 16-bit float type.
fn specials(r: &mut Rng, n: usize, from_f32: fn(f32) -> u16, nan: u16) -> Vec<u16> {
    (0..n)
        .map(|_| match r.range(0, 12) {
            0 => from_f32(0.0),
            1 => from_f32(-0.0),
            2 => from_f32(f32::INFINITY),
            3 => from_f32(f32::NEG_INFINITY),
            4 => nan,
            5 => nan | 0x8000,
            _ => from_f32(r.range(-1000, 1000) as f32 / 8.0),
        })
        .collect()
}

/// IEEE `totalOrder` of 16-bit float bits: the key that sorts them.
fn key(bits: u16) -> i32 {
    let k = bits as i16 as i32;
    if k < 0 {
        k ^ 0x7FFF
    } else {
        k
    }
}

fn check_order<T: tilus::Element + Copy + std::fmt::Debug>(
    name: &str,
    to_bits: fn(T) -> u16,
    from_bits: fn(u16) -> T,
    from_f32: fn(f32) -> u16,
    nan: u16,
    launch: impl Fn(&Device, &[GlobalTensor<T>; 6], &GlobalTensor<i32>) -> Result<(), tilus::Error>,
) {
    let mut r = Rng::from_env_or_clock();
    let blocks = 32;
    let n = blocks * 256;
    let vals = specials(&mut r, n, from_f32, nan);
    let idx: Vec<i32> = (0..n).map(|_| r.range(0, 64)).collect();
    let init_lo = from_f32(f32::INFINITY);
    let init_hi = from_f32(f32::NEG_INFINITY);
    let mut lo = vec![init_lo; 64];
    let mut hi = vec![init_hi; 64];
    for (&v, &i) in vals.iter().zip(&idx) {
        let i = i as usize;
        if key(v) < key(lo[i]) {
            lo[i] = v;
        }
        if key(v) > key(hi[i]) {
            hi[i] = v;
        }
    }
    let t = |v: &[u16]| v.iter().map(|&b| from_bits(b)).collect::<Vec<T>>();
    for dev in backends() {
        let bufs = [
            dev.upload(&t(&vals)).unwrap(),
            dev.upload(&t(&[init_lo; 64])).unwrap(),
            dev.upload(&t(&[init_hi; 64])).unwrap(),
            dev.upload(&t(&[from_f32(-1.0); 8])).unwrap(),
            dev.upload(&t(&vec![nan; 2 * 8192])).unwrap(),
            dev.upload(&t(&[0; 1])).unwrap(),
        ];
        let i = dev.upload(&idx).unwrap();
        launch(&dev, &bufs, &i).unwrap();
        let bits = |g: &GlobalTensor<T>| {
            g.download()
                .unwrap()
                .into_iter()
                .map(to_bits)
                .collect::<Vec<u16>>()
        };
        assert_eq!(bits(&bufs[1]), lo, "{name} {dev:?} min");
        assert_eq!(bits(&bufs[2]), hi, "{name} {dev:?} max");
        // exch: per slot, the values handed back plus the last one are the initial value and
        // every value written there, each once.
        let (last, prev) = (bits(&bufs[3]), bits(&bufs[4]));
        for (slot, &final_value) in last.iter().enumerate() {
            let mut seen: Vec<u16> = (0..n)
                .filter(|k| idx[*k] % 8 == slot as i32)
                .map(|k| prev[k])
                .collect();
            seen.push(final_value);
            let mut want: Vec<u16> = (0..n)
                .filter(|k| idx[*k] % 8 == slot as i32)
                .map(|k| vals[k])
                .collect();
            want.push(from_f32(-1.0));
            seen.sort_unstable();
            want.sort_unstable();
            assert_eq!(seen, want, "{name} {dev:?} exch slot {slot}");
        }
        // The results of `max`: each is a value its element held at some point, so never above
        // the final maximum.
        let before = &prev[8192..8192 + n];
        for k in 0..n {
            assert!(
                key(before[k]) <= key(hi[idx[k] as usize]),
                "{name} {dev:?} max result {k}"
            );
        }
    }
}

#[test]
fn f16_and_bf16_min_max_by_total_order_and_exch() {
    check_order(
        "f16",
        f16::to_bits,
        f16::from_bits,
        |x| f16::from_f32(x).to_bits(),
        0x7E00,
        |dev, b, i| f16_order::launch(dev, 32, &b[0], i, &b[1], &b[2], &b[3], &b[4]),
    );
    check_order(
        "bf16",
        bf16::to_bits,
        bf16::from_bits,
        |x| bf16::from_f32(x).to_bits(),
        0x7FC0,
        |dev, b, i| bf16_order::launch(dev, 32, &b[0], i, &b[1], &b[2], &b[3], &b[4]),
    );
}

#[test]
fn ptx_has_cas_loops_and_assembles() {
    for (name, ptx) in [
        ("i16_bins", i16_bins::PTX),
        ("u16_mix", u16_mix::PTX),
        ("f16_order", f16_order::PTX),
        ("bf16_order", bf16_order::PTX),
    ] {
        assert!(ptx.contains(".cas.b16"), "{name}");
        assert!(ptx.contains("$L_cas_loop_"), "{name}");
        assemble_all(name, ptx, 70);
    }
    assert!(i16_bins::PTX.contains("atom.relaxed.cta.shared.cas.b16"));
    assert!(f16_order::PTX.contains("atom.acq_rel.gpu.global.cas.b16"));
}
