//! Ranks counted in a permuted order (`equal_rank(order = ..)`, `place(starts, order = ..)`)
//! and index arithmetic on `arange` (which the PTX back end folds into a thread's register
//! plus a slot's constant, `emit/affine.rs`), on every backend, against CPU references written
//! here.
//!
//! The ordered ranks take three lowerings: the warp-striped shape `[J, W, 32]` counted in order
//! `[1, 0, 2]` on `32 W` threads (each warp ranks its own registers, nothing staged), the byte
//! rank staged in another order, and the general rank of wider integers; each is run here with
//! duplicates (few distinct values) and many distinct ones. The index arithmetic covers the
//! foldable forms (shifts and masks of `arange` whose slot constants allow them, sums of folded
//! tiles, products by scalars) and forms that must not fold (a shift of values that may be
//! negative, constants that are not multiples of the shift), and gathers at such indices,
//! inside and outside the tensor.

mod common;

use common::{assemble_all, backends, places_from, wrapping_starts, Rng};
use tilus::prelude::*;

/// Ranks in permuted orders: `a` as a warp-striped `[6, 8, 32]` `u8` tile (place from 256
/// starts, and equal rank), as `bool` and `i8` tiles of that shape; the byte rank staged in
/// order `[2, 0, 1]` of a `[3, 8, 32]` tile and `[1, 0]` of a `[37, 5]` tile; the general rank
/// of `i32` `[20, 10]` in order `[1, 0]`.
#[tile_kernel(threads = 256, vector_width = 1)]
fn ordered(
    a: GlobalTensor<u8>,
    c: GlobalTensor<i32>,
    s: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
) {
    let x = load_global(a, offsets = [0], shape = [1536]).reshape([6, 8, 32]);
    let starts = load_global(s, offsets = [0], shape = [256]);
    let p = x.place(starts, order = [1, 0, 2]);
    store_global(out, p.reshape([1536]), offsets = [0]);
    let r = x.equal_rank(order = [1, 0, 2]);
    store_global(out, r.reshape([1536]), offsets = [1536]);
    let b = x > 100;
    store_global(
        out,
        b.equal_rank(order = [1, 0, 2]).reshape([1536]),
        offsets = [3072],
    );
    let i = x.reshape([1536]) as i8;
    let ir = i.reshape([6, 8, 32]).equal_rank(order = [1, 0, 2]);
    store_global(out, ir.reshape([1536]), offsets = [4608]);
    let y = load_global(a, offsets = [5], shape = [768]).reshape([3, 8, 32]);
    let yr = y.place(starts, order = [2, 0, 1]);
    store_global(out, yr.reshape([768]), offsets = [6144]);
    let z = load_global(a, offsets = [11], shape = [185]).reshape([37, 5]);
    store_global(
        out,
        z.equal_rank(order = [1, 0]).reshape([185]),
        offsets = [6912],
    );
    let w = load_global(c, offsets = [0], shape = [200]).reshape([20, 10]);
    let s50 = load_global(s, offsets = [0], shape = [50]);
    store_global(
        out,
        w.place(s50, order = [1, 0]).reshape([200]),
        offsets = [7097],
    );
}

/// The same ranks on 128 threads: `[6, 8, 32]` is not warp-striped there (4 warps).
#[tile_kernel(threads = 128, vector_width = 1)]
fn ordered_128(a: GlobalTensor<u8>, s: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let x = load_global(a, offsets = [0], shape = [1536]).reshape([6, 8, 32]);
    let starts = load_global(s, offsets = [0], shape = [256]);
    store_global(
        out,
        x.place(starts, order = [1, 0, 2]).reshape([1536]),
        offsets = [0],
    );
}

/// For each element of a tile of `shape` (row-major `x`), the number of equal elements before
/// it in the row-major order of its coordinates permuted by `order`.
fn ordered_ranks<E: Copy + std::hash::Hash + Eq>(
    x: &[E],
    shape: &[usize],
    order: &[usize],
) -> Vec<i32> {
    let coords = |mut f: usize| {
        let mut c = vec![0; shape.len()];
        for k in (0..shape.len()).rev() {
            c[k] = f % shape[k];
            f /= shape[k];
        }
        c
    };
    let mut visit: Vec<usize> = (0..x.len()).collect();
    visit.sort_by_key(|&f| {
        let c = coords(f);
        order.iter().map(|&a| c[a]).collect::<Vec<_>>()
    });
    let mut seen = std::collections::HashMap::new();
    let mut out = vec![0; x.len()];
    for f in visit {
        let c = seen.entry(x[f]).or_insert(0);
        out[f] = *c;
        *c += 1;
    }
    out
}

/// `starts[v]` (0 outside) plus the ordered rank, wrapping.
fn ordered_places<E: Copy + std::hash::Hash + Eq + Into<i128>>(
    x: &[E],
    shape: &[usize],
    order: &[usize],
    starts: &[i32],
) -> Vec<i32> {
    places_from(x, &ordered_ranks(x, shape, order), starts)
}

fn same(got: &[i32], want: &[i32], what: &str) {
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i}: got {}, want {}", got[i], want[i]);
    }
}

#[test]
fn ranks_in_permuted_orders() {
    assemble_all("ordered", ordered::PTX, ordered::TARGET);
    assemble_all("ordered_128", ordered_128::PTX, ordered_128::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for round in 0..6 {
        let spread = [2, 17, 256][round % 3];
        let a: Vec<u8> = (0..1536).map(|_| rng.range(0, spread) as u8).collect();
        let c: Vec<i32> = (0..200).map(|_| rng.range(-5, 60)).collect();
        let s = wrapping_starts(&mut rng, 256);
        let striped = [6, 8, 32];
        let mut want = ordered_places(&a, &striped, &[1, 0, 2], &s);
        want.extend(ordered_ranks(&a, &striped, &[1, 0, 2]));
        let b: Vec<bool> = a.iter().map(|&v| v > 100).collect();
        want.extend(ordered_ranks(&b, &striped, &[1, 0, 2]));
        let i: Vec<i8> = a.iter().map(|&v| v as i8).collect();
        want.extend(ordered_ranks(&i, &striped, &[1, 0, 2]));
        want.extend(ordered_places(&a[5..773], &[3, 8, 32], &[2, 0, 1], &s));
        want.extend(ordered_ranks(&a[11..196], &[37, 5], &[1, 0]));
        want.extend(ordered_places(&c, &[20, 10], &[1, 0], &s[..50]));
        let want_128 = ordered_places(&a, &striped, &[1, 0, 2], &s);
        for dev in backends() {
            let (ad, cd, sd) = (
                dev.upload(&a).unwrap(),
                dev.upload(&c).unwrap(),
                dev.upload(&s).unwrap(),
            );
            let out = dev.full(want.len(), -1i32).unwrap();
            ordered::launch(&dev, 1, &ad, &cd, &sd, &out).unwrap();
            let what = format!("{dev:?}, spread {spread}");
            same(&out.download().unwrap(), &want, &what);
            let out = dev.full(want_128.len(), -1i32).unwrap();
            ordered_128::launch(&dev, 1, &ad, &sd, &out).unwrap();
            same(
                &out.download().unwrap(),
                &want_128,
                &format!("{what}, 128 threads"),
            );
        }
    }
}

/// Index arithmetic on `arange` of 1000 (slots of 256 on 256 threads, a last one part empty)
/// and gathers at such indices from `x` (of `len` elements, `other` -1 outside).
#[tile_kernel(threads = 256, vector_width = 1)]
fn index_math(x: GlobalTensor<i32>, out: GlobalTensor<i32>, start: i32, m: i32) {
    let f = arange(1000);
    // Folded: the slot constants (multiples of 256) survive these.
    let a = start + ((f >> 5) & 7) * m + (f >> 8) * 32 + (f & 31);
    store_global(out, a, offsets = [0]);
    store_global(out, (f << 3) - (f * 5) + 7, offsets = [1000]);
    store_global(out, 3 - f, offsets = [2000]);
    // Not folded: values that may be negative, constants not multiples of the shift.
    store_global(out, (f - 500) >> 4, offsets = [3000]);
    store_global(out, (f + 3) >> 3, offsets = [4000]);
    store_global(out, (f * 3) & 255, offsets = [5000]);
    store_global(out, (f + start) >> 1, offsets = [6000]);
    // Gathers at folded indices: some before the tensor, some past its end.
    let g = load_global(x, offsets = [a], shape = [1000], other = -1);
    store_global(out, g, offsets = [7000]);
    let h = load_global(
        x,
        offsets = [(f & 255) * 2 - 40 + start],
        shape = [1000],
        other = -1,
    );
    store_global(out, h, offsets = [8000]);
    let u = arange(1000) as u32;
    store_global(out, ((u >> 8) * 7 + (u & 3)) as i32, offsets = [9000]);
}

#[test]
fn index_arithmetic_on_arange() {
    assemble_all("index_math", index_math::PTX, index_math::TARGET);
    let mut rng = Rng::from_env_or_clock();
    // Random starts, and starts whose indices wrap past `i32::MAX` or lie far below 0 (the
    // gathers' bound tests compare each slot's constant with the thread's bounds).
    let extremes = [i32::MAX - 600, i32::MIN + 100, -5000];
    for round in 0..7 {
        let len = rng.range(200, 3000) as usize;
        let x: Vec<i32> = (0..len).map(|_| rng.range(-1_000_000, 1_000_000)).collect();
        let start = match round {
            0..4 => rng.range(-300, 2000),
            r => extremes[r - 4],
        };
        let m = rng.range(0, 400);
        let at = |i: i64| -> i32 {
            usize::try_from(i)
                .ok()
                .and_then(|i| x.get(i))
                .copied()
                .unwrap_or(-1)
        };
        let mut want = Vec::new();
        let idx: Vec<i32> = (0..1000)
            .map(|f: i32| start.wrapping_add(((f >> 5) & 7) * m + (f >> 8) * 32 + (f & 31)))
            .collect();
        want.extend(&idx);
        want.extend((0..1000).map(|f: i32| (f << 3) - f * 5 + 7));
        want.extend((0..1000).map(|f: i32| 3 - f));
        want.extend((0..1000).map(|f: i32| (f - 500) >> 4));
        want.extend((0..1000).map(|f: i32| (f + 3) >> 3));
        want.extend((0..1000).map(|f: i32| (f * 3) & 255));
        want.extend((0..1000).map(|f: i32| f.wrapping_add(start) >> 1));
        want.extend(idx.iter().map(|&i| at(i as i64)));
        want.extend((0..1000).map(|f: i32| at(((f & 255) * 2 - 40).wrapping_add(start) as i64)));
        want.extend((0..1000u32).map(|u| ((u >> 8) * 7 + (u & 3)) as i32));
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(want.len(), i32::MIN).unwrap();
            index_math::launch(&dev, 1, &xd, &out, start, m).unwrap();
            same(
                &out.download().unwrap(),
                &want,
                &format!("{dev:?}, start {start}, m {m}, len {len}"),
            );
        }
    }
}
