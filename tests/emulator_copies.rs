//! Device copies on the emulator copy bytes when they have device memory to themselves, and one
//! relaxed atomic per element while kernels run (`tilus-core/src/emu/global.rs`, `MEMORY`).
//! These tests hold what that must keep: a kernel waiting for a copy made by another host thread
//! still sees it (the copy never waits for the kernel), copies and launches from several host
//! threads at once give the right values, and copies to and from host-mapped memory (which the
//! host writes at any time) stay element-wise and right.

mod common;

use std::sync::atomic::Ordering;
use tilus::prelude::*;

/// Says it runs (`hello`, mapped), waits until `flag[0]` is not 0, then copies `flag[0]` into
/// `out`.
#[tile_kernel(threads = 64)]
fn wait_for_flag(hello: GlobalTensor<i32>, flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    atomic_store(hello, 0, 1, sem = release, scope = sys);
    let mut f = 0;
    while f == 0 {
        f = atomic_load(flag, 0, sem = relaxed, scope = gpu);
    }
    store_global(out, full([1], f), offsets = [0]);
}

#[test]
fn a_kernel_sees_a_copy_made_while_it_runs() {
    let dev = common::emulator();
    let hello = dev.mapped::<i32>(1).unwrap();
    let flag = dev.zeros::<i32>(1).unwrap();
    let seven = dev.upload(&[7]).unwrap();
    let out = dev.zeros::<i32>(1).unwrap();
    std::thread::scope(|s| {
        let run = s.spawn(|| wait_for_flag::launch(&dev, 1, &hello, &flag, &out));
        while hello.load(0, Ordering::Acquire) == 0 && !run.is_finished() {
            std::thread::yield_now();
        }
        // The kernel is running: this copy must not wait for it.
        dev.copy(&seven, &flag).unwrap();
        run.join().expect("the launching thread").unwrap();
    });
    assert_eq!(out.download().unwrap(), vec![7]);
}

/// `y = 2 x + 1`.
#[tile_kernel(threads = 128)]
fn affine(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
    let start = block_idx() * 1024;
    let t = load_global(x, offsets = [start], shape = [1024], other = 0);
    store_global(y, t * 2 + 1, offsets = [start]);
}

#[test]
fn copies_and_launches_from_several_threads() {
    let dev = common::emulator();
    let n = 100_000;
    let x: Vec<i32> = (0..n as i32).map(|i| i * 7 - 3).collect();
    let xd = dev.upload(&x).unwrap();
    std::thread::scope(|s| {
        let launcher = s.spawn(|| {
            let y = dev.zeros::<i32>(n).unwrap();
            for _ in 0..20 {
                affine::launch(&dev, n.div_ceil(1024) as u32, &xd, &y).unwrap();
                let got = y.download().unwrap();
                assert!(got.iter().zip(&x).all(|(g, v)| *g == v * 2 + 1));
            }
        });
        let copiers: Vec<_> = (0..2)
            .map(|k| {
                let (dev, xd, x) = (&dev, &xd, &x);
                s.spawn(move || {
                    let a = dev.full(n, k).unwrap();
                    let b = dev.zeros::<i32>(n).unwrap();
                    for _ in 0..50 {
                        dev.copy(xd, &a).unwrap();
                        dev.copy(&a, &b).unwrap();
                        assert_eq!(&b.download().unwrap(), x);
                        // A copy within one tensor's views: memmove, overlaps refused.
                        let (lo, hi) = (b.view(0..n / 2).unwrap(), b.view(n / 2..n).unwrap());
                        dev.copy(&hi, &lo).unwrap();
                        assert_eq!(b.download().unwrap()[..n / 2], x[n / 2..]);
                    }
                })
            })
            .collect();
        launcher.join().unwrap();
        copiers.into_iter().for_each(|c| c.join().unwrap());
    });
}

#[test]
fn copies_to_and_from_mapped_memory() {
    let dev = common::emulator();
    let x: Vec<i64> = (0..5000).map(|i| i * 1_000_000_007).collect();
    let xd = dev.upload(&x).unwrap();
    let m = dev.mapped::<i64>(5000).unwrap();
    dev.copy(&xd, &m).unwrap();
    assert_eq!(m.to_vec(), x);
    m.store(17, -1, Ordering::Relaxed);
    let back = dev.zeros::<i64>(5000).unwrap();
    dev.copy(&m, &back).unwrap();
    let mut want = x.clone();
    want[17] = -1;
    assert_eq!(back.download().unwrap(), want);
}

#[test]
fn uploads_and_downloads_keep_every_bit_pattern() {
    let dev = common::emulator();
    fn round<T: tilus::Element + Copy + PartialEq + std::fmt::Debug>(
        dev: &tilus::Device,
        v: Vec<T>,
    ) {
        let t = dev.upload(&v).unwrap();
        assert_eq!(t.download().unwrap(), v);
        let u = dev.zeros::<T>(v.len()).unwrap();
        u.copy_from_host(&v).unwrap();
        assert_eq!(u.download().unwrap(), v);
    }
    round(&dev, (0..999).map(|i| (i * 37) as i8).collect::<Vec<_>>());
    round(
        &dev,
        (0..999).map(|i| (i * 4099) as u16).collect::<Vec<_>>(),
    );
    round(&dev, (0..999).map(|i| i % 3 == 0).collect::<Vec<_>>());
    round(
        &dev,
        (0..999)
            .map(|i| (i as i64) << 40 | i as i64)
            .collect::<Vec<_>>(),
    );
    let h: Vec<half::f16> = (0..999).map(|i| half::f16::from_bits(i * 61)).collect();
    let back = dev.upload(&h).unwrap().download().unwrap();
    assert!(back.iter().zip(&h).all(|(a, b)| a.to_bits() == b.to_bits()));
    // NaN payloads and negative zeros travel as they are (compared by bits).
    let f: Vec<u32> = (0..999)
        .map(|i| 0x7fc0_0001u32.wrapping_add(i * 977))
        .collect();
    let fv: Vec<f32> = f.iter().map(|&b| f32::from_bits(b)).chain([-0.0]).collect();
    let back = dev.upload(&fv).unwrap().download().unwrap();
    assert!(back
        .iter()
        .zip(&fv)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}
