//! Bound tests made once a thread: an access whose slots are a range (`offsets = [o]`) or an
//! `arange`-derived index (the thread's register plus each slot's constant) tests the first
//! and the last of a thread's slots, and where both are inside the tensor its slots go
//! untested on a branch of their own (`ptx/access`, `range_all_inside`, `affine_all_inside`).
//! Here each such access runs at offsets that put some threads wholly inside, some across an
//! end and some wholly outside, at both ends of the tensor and where `o + index` wraps past
//! `i32::MAX`: loads, stores and atomics must touch exactly the elements inside, on every
//! backend, and the PTX must hold the two paths (or the test proves nothing).

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

const T: usize = 1024;

/// `out[k] = x[o + k]` (or `-1` outside): a range load of 16 slots a thread.
#[tile_kernel(threads = 64, vector_width = 1)]
fn range_load(x: GlobalTensor<i32>, out: GlobalTensor<i32>, o: i32) {
    let t = load_global(x, offsets = [o], shape = [1024], other = -1);
    store_global(out, t, offsets = [0]);
}

/// `out[o + k] = x[k]` where inside: a range store of 16 slots a thread.
#[tile_kernel(threads = 64, vector_width = 1)]
fn range_store(x: GlobalTensor<i32>, out: GlobalTensor<i32>, o: i32) {
    let t = load_global(x, offsets = [0], shape = [1024]);
    store_global(out, t, offsets = [o]);
}

/// The index of slot `k` of a warp-striped tile at `o`: `o + ((k >> 5) & 1) * 512 + (k >> 6) *
/// 32 + (k & 31)` (a permutation of `o .. o + 1024`), as the kernels compute it.
fn striped(o: i32, k: usize) -> i32 {
    let k = k as i32;
    o.wrapping_add(((k >> 5) & 1) * 512 + (k >> 6) * 32 + (k & 31))
}

/// `out[k] = x[striped(o, k)]` (or `-1` outside): a gather at an `arange`-derived index.
#[tile_kernel(threads = 64, vector_width = 1)]
fn affine_gather(x: GlobalTensor<i32>, out: GlobalTensor<i32>, o: i32) {
    let f = arange(1024);
    let at = o + ((f >> 5) & 1) * 512 + (f >> 6) * 32 + (f & 31);
    let t = load_global(x, offsets = [at], shape = [1024], other = -1);
    store_global(out, t, offsets = [0]);
}

/// `out[striped(o, k)] = x[k]` where inside: a scatter at an `arange`-derived index.
#[tile_kernel(threads = 64, vector_width = 1)]
fn affine_scatter(x: GlobalTensor<i32>, out: GlobalTensor<i32>, o: i32) {
    let f = arange(1024);
    let at = o + ((f >> 5) & 1) * 512 + (f >> 6) * 32 + (f & 31);
    let t = load_global(x, offsets = [0], shape = [1024]);
    store_global_scatter(out, dim = 0, indices = at, values = t);
}

/// `out[striped(o, k)] += 1` where inside, twice (both index tiles alike): an atomic at an
/// `arange`-derived index.
#[tile_kernel(threads = 64, vector_width = 1)]
fn affine_atomic(out: GlobalTensor<i32>, o: i32) {
    let f = arange(1024);
    let at = o + ((f >> 5) & 1) * 512 + (f >> 6) * 32 + (f & 31);
    atomic::global_scatter_add(out, dim = 0, indices = at, values = 1);
    atomic::global_scatter_add(out, dim = 0, indices = at, values = 1);
}

/// Offsets around both ends of a tensor of `len`, and where `o + 1023` wraps past `i32::MAX`.
fn offsets(rng: &mut Rng, len: usize) -> Vec<i32> {
    let len = len as i32;
    let mut o = vec![
        0,
        len - T as i32,
        len - T as i32 + 1,
        len - 1,
        len,
        -1,
        -(T as i32) + 1,
        -(T as i32),
        i32::MAX - 600,
        i32::MAX,
        i32::MIN,
    ];
    for _ in 0..6 {
        o.push(rng.range(-(T as i32) - 100, len + 100));
    }
    o
}

#[test]
fn bound_tests_at_the_ends_touch_exactly_the_elements_inside() {
    for (name, ptx, target) in common::kernels![
        range_load,
        range_store,
        affine_gather,
        affine_scatter,
        affine_atomic
    ] {
        // The untested path and the tested one, for each access the test is about.
        assert!(
            ptx.contains("slots_checked"),
            "{name}: no bound tests at the ends in\n{ptx}"
        );
        assemble_all(name, ptx, target);
    }
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        // Shorter and longer than a tile, not a multiple of a thread's slots.
        let len = rng.range(300, 3000) as usize;
        let x: Vec<i32> = (0..len.max(T)).map(|_| rng.next_u64() as i32).collect();
        let inside = |i: i32| usize::try_from(i).ok().filter(|&i| i < len);
        for o in offsets(&mut rng, len) {
            let want_load: Vec<i32> = (0..T)
                .map(|k| inside(o.wrapping_add(k as i32)).map_or(-1, |i| x[i]))
                .collect();
            let want_gather: Vec<i32> = (0..T)
                .map(|k| inside(striped(o, k)).map_or(-1, |i| x[i]))
                .collect();
            let poison = vec![i32::MIN + 7; len];
            let (mut want_store, mut want_scatter, mut want_atomic) =
                (poison.clone(), poison.clone(), vec![0; len]);
            for (k, &v) in x[..T].iter().enumerate() {
                if let Some(i) = inside(o.wrapping_add(k as i32)) {
                    want_store[i] = v;
                }
                if let Some(i) = inside(striped(o, k)) {
                    want_scatter[i] = v;
                    want_atomic[i] += 2;
                }
            }
            for dev in backends() {
                let what = format!("{dev:?}, len {len}, o {o}");
                let xs = dev.upload(&x[..len]).unwrap();
                let xt = dev.upload(&x[..T]).unwrap();
                let out = dev.full(T, 5).unwrap();
                range_load::launch(&dev, 1, &xs, &out, o).unwrap();
                assert_eq!(out.download().unwrap(), want_load, "range load: {what}");
                let out = dev.full(T, 5).unwrap();
                affine_gather::launch(&dev, 1, &xs, &out, o).unwrap();
                assert_eq!(out.download().unwrap(), want_gather, "gather: {what}");
                let out = dev.upload(&poison).unwrap();
                range_store::launch(&dev, 1, &xt, &out, o).unwrap();
                assert_eq!(out.download().unwrap(), want_store, "range store: {what}");
                let out = dev.upload(&poison).unwrap();
                affine_scatter::launch(&dev, 1, &xt, &out, o).unwrap();
                assert_eq!(out.download().unwrap(), want_scatter, "scatter: {what}");
                let out = dev.zeros(len).unwrap();
                affine_atomic::launch(&dev, 1, &out, o).unwrap();
                assert_eq!(out.download().unwrap(), want_atomic, "atomic: {what}");
            }
        }
    }
}
