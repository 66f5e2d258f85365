//! `prefetch_global`: a hint that changes nothing. Kernels that prefetch regions inside, across
//! and wholly outside a tensor (before its start and past its end, at offsets near the end of
//! `i32`) and then load must give exactly what the loads alone give, on every backend; the PTX
//! holds one `prefetch.global.L2` a 128-byte line and assembles for sm_70/80/90.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// Prefetches around `x`, then copies `x[o .. o + 1000]` to `out` (as `i32`).
#[tile_kernel(threads = 256)]
fn ahead_i32(x: GlobalTensor<i32>, out: GlobalTensor<i32>, o: i32, far: i32) {
    prefetch_global(x, offsets = [o + 1000], shape = [1000]);
    prefetch_global(x, offsets = [-700], shape = [1000]);
    prefetch_global(x, offsets = [x.len() as i32 - 10], shape = [4096]);
    prefetch_global(x, offsets = [far], shape = [4096]);
    let t = load_global(x, offsets = [o], shape = [1000], other = -1);
    store_global(out, t, offsets = [0]);
}

/// The same for one-byte and eight-byte elements (a line is 128 and 16 elements).
#[tile_kernel(threads = 128)]
fn ahead_u8(x: GlobalTensor<u8>, out: GlobalTensor<u8>, o: i64) {
    prefetch_global(x, offsets = [o - 100], shape = [777]);
    let t = load_global(x, offsets = [o], shape = [700]);
    store_global(out, t, offsets = [0]);
}

#[tile_kernel(threads = 64)]
fn ahead_f64(x: GlobalTensor<f64>, out: GlobalTensor<f64>, o: i32) {
    prefetch_global(x.view(3, [x.len() - 3]), offsets = [o], shape = [33]);
    let t = load_global(x, offsets = [o], shape = [300], other = 0.5);
    store_global(out, t, offsets = [0]);
}

#[test]
fn prefetches_change_nothing() {
    for (name, ptx, target) in common::kernels![ahead_i32, ahead_u8, ahead_f64] {
        assert!(
            ptx.contains("prefetch.global.L2"),
            "{name}: no prefetch in\n{ptx}"
        );
        assemble_all(name, ptx, target);
    }
    // Four regions, each at least one prefetch instruction (a line's element on a thread).
    let prefetches = |ptx: &str| ptx.matches("prefetch.global.L2").count();
    assert!(prefetches(ahead_i32::PTX) >= 4, "{}", ahead_i32::PTX);
    let mut rng = Rng::from_env_or_clock();
    for round in 0..6 {
        let len = rng.range(500, 5000) as usize;
        let o = rng.range(-1200, len as i32 + 200);
        // Regions far past the end, at the end of `i32` (where `o + n` leaves it), below 0.
        let far = [i32::MAX - 100, i32::MIN, len as i32 + 3][round % 3];
        let x: Vec<i32> = (0..len).map(|_| rng.next_u64() as i32).collect();
        let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let wide: Vec<f64> = (0..len).map(|i| i as f64 * 0.25).collect();
        let at = |i: i64| usize::try_from(i).ok().filter(|&i| i < len);
        let want_i32: Vec<i32> = (0..1000)
            .map(|k| at(o as i64 + k).map_or(-1, |i| x[i]))
            .collect();
        let want_u8: Vec<u8> = (0..700)
            .map(|k| at(o as i64 + k).map_or(0, |i| bytes[i]))
            .collect();
        let want_f64: Vec<f64> = (0..300)
            .map(|k| at(o as i64 + k).map_or(0.5, |i| wide[i]))
            .collect();
        for dev in backends() {
            let what = format!("{dev:?}, len {len}, o {o}, far {far}");
            let (xd, out) = (dev.upload(&x).unwrap(), dev.full(1000, 7).unwrap());
            ahead_i32::launch(&dev, 1, &xd, &out, o, far).unwrap();
            assert_eq!(out.download().unwrap(), want_i32, "i32: {what}");
            let (xd, out) = (dev.upload(&bytes).unwrap(), dev.full(700, 7u8).unwrap());
            ahead_u8::launch(&dev, 1, &xd, &out, o as i64).unwrap();
            assert_eq!(out.download().unwrap(), want_u8, "u8: {what}");
            let (xd, out) = (dev.upload(&wide).unwrap(), dev.full(300, 7.0).unwrap());
            ahead_f64::launch(&dev, 1, &xd, &out, o).unwrap();
            assert_eq!(out.download().unwrap(), want_f64, "f64: {what}");
        }
    }
}
