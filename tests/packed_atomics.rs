//! Packed 16-bit float atomics (`red/atom.add.noftz.f16x2`, `.bf16x2`): where a thread's run
//! holds two adjacent `f16`/`bf16` elements and no vector form applies (shared memory on every
//! target, global memory below sm_90), the compiler adds both with one instruction on their
//! 32-bit word when, at run time, both are active and the word is 4-byte aligned, and with the
//! scalar form elsewhere. Each element is still its own atomic, so results equal the scalar
//! ones.
//!
//! Checked against a CPU reference on each backend with values that are small integers (every
//! sum exact in `f16` and `bf16`, whatever the order), rows that repeat (contention), rows past
//! the end (skipped), a partial last step, and odd window starts (the scalar fallback).

mod common;

use common::{assemble_all, backends, Rng};
use half::{bf16, f16};
use tilus::prelude::*;

const D: usize = 128;
const M: usize = 16;

/// Per block: rows of `src` added into a `[16, 128]` shared accumulator at `index` (contention
/// on the shared rows), then the accumulator added into `out` (element-wise, global).
macro_rules! shared_rows_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 128)]
        fn $name(src: GlobalTensor<$t>, index: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let n = index.len();
            let acc = shared_tensor($t, [16, 128]);
            store_shared(acc, zeros([16, 128], dtype = $t));
            sync();
            let src_rows = src.view(0, [n, 128]);
            let cols = arange(128).reshape([1, 128]);
            for r0 in (block_idx() * 8..n).step_by(grid_dim() * 8) {
                let rows = load_global(index, offsets = [r0], shape = [8], other = -1);
                let vals = load_global(src_rows, offsets = [r0, 0], shape = [8, 128]);
                atomic_add(
                    acc,
                    (rows.reshape([8, 1]), cols),
                    vals,
                    order = MemoryOrder::Relaxed,
                );
            }
            sync();
            atomic::global_add(out.view(0, [16, 128]), values = load_shared(acc));
        }
    };
}

shared_rows_kernel!(shared_rows_f16, f16);
shared_rows_kernel!(shared_rows_bf16, bf16);

/// The same accumulation straight into global memory on sm_80 (no vector atomics there).
#[tile_kernel(threads = 128, target = 80)]
fn global_rows_f16_sm80(src: GlobalTensor<f16>, index: GlobalTensor<i32>, out: GlobalTensor<f16>) {
    let n = index.len();
    let src_rows = src.view(0, [n, 128]);
    let out_rows = out.view(0, [out.len() / 128, 128]);
    let cols = arange(128).reshape([1, 128]);
    for r0 in (block_idx() * 8..n).step_by(grid_dim() * 8) {
        let rows = load_global(index, offsets = [r0], shape = [8], other = -1);
        let vals = load_global(src_rows, offsets = [r0, 0], shape = [8, 128]);
        atomic_add(
            out_rows,
            (rows.reshape([8, 1]), cols),
            vals,
            order = MemoryOrder::Relaxed,
        );
    }
}

/// `out[start + k] -= x[k]` with the old values kept: `atom` with a packed destination, on a
/// window that is 4-byte aligned for even `start` only.
#[tile_kernel(threads = 64, target = 80)]
fn span_fetch_sub_f16(
    x: GlobalTensor<f16>,
    out: GlobalTensor<f16>,
    old: GlobalTensor<f16>,
    start: i32,
) {
    let b = block_idx();
    let v = load_global(x, offsets = [b * 256], shape = [256]);
    let before = atomic::global_sub(out.view(start + b * 256, [256]), values = v);
    store_global(old, before, offsets = [b * 256]);
}

/// `n` rows of small integers with indices into `M` rows (repeats, and some past the end).
fn workload(r: &mut Rng, n: usize) -> (Vec<f32>, Vec<i32>) {
    let src: Vec<f32> = (0..n * D).map(|_| r.range(-4, 5) as f32).collect();
    let index: Vec<i32> = (0..n)
        .map(|_| match r.range(0, 16) {
            0 => M as i32 + r.range(0, 3),
            _ => r.range(0, M as i32),
        })
        .collect();
    (src, index)
}

fn reference(src: &[f32], index: &[i32]) -> Vec<f32> {
    let mut want = vec![0.0f32; M * D];
    for (r, &i) in index.iter().enumerate() {
        if (0..M as i32).contains(&i) {
            for c in 0..D {
                want[i as usize * D + c] += src[r * D + c];
            }
        }
    }
    want
}

#[test]
fn shared_and_sm80_rows_add() {
    let mut r = Rng::from_env_or_clock();
    let (src, index) = workload(&mut r, 203);
    let want = reference(&src, &index);
    assert!(want.iter().all(|x| x.abs() <= 256.0), "exact in bf16");
    for dev in backends() {
        let i = dev.upload(&index).unwrap();
        let s16: Vec<f16> = src.iter().map(|&x| f16::from_f32(x)).collect();
        let sb: Vec<bf16> = src.iter().map(|&x| bf16::from_f32(x)).collect();
        let to_f32 = |v: Vec<f16>| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();

        let (s, o) = (dev.upload(&s16).unwrap(), dev.zeros::<f16>(M * D).unwrap());
        shared_rows_f16::launch(&dev, 7, &s, &i, &o).unwrap();
        assert_eq!(to_f32(o.download().unwrap()), want, "{dev:?} shared f16");

        let (s, o) = (dev.upload(&sb).unwrap(), dev.zeros::<bf16>(M * D).unwrap());
        shared_rows_bf16::launch(&dev, 7, &s, &i, &o).unwrap();
        let got: Vec<f32> = o.download().unwrap().iter().map(|x| x.to_f32()).collect();
        assert_eq!(got, want, "{dev:?} shared bf16");

        let (s, o) = (dev.upload(&s16).unwrap(), dev.zeros::<f16>(M * D).unwrap());
        global_rows_f16_sm80::launch(&dev, 9, &s, &i, &o).unwrap();
        assert_eq!(
            to_f32(o.download().unwrap()),
            want,
            "{dev:?} global f16 sm_80"
        );
    }
}

#[test]
fn packed_results_and_misaligned_windows() {
    let mut r = Rng::from_env_or_clock();
    let n: usize = 600; // two full blocks of 256 and a partial one
    let x: Vec<f16> = (0..n)
        .map(|_| f16::from_f32(r.range(-50, 50) as f32))
        .collect();
    for dev in backends() {
        for start in [0usize, 2, 1, 3] {
            let init: Vec<f16> = (0..n + 8).map(|k| f16::from_f32((k % 13) as f32)).collect();
            let (xs, o) = (dev.upload(&x).unwrap(), dev.upload(&init).unwrap());
            let old = dev.full(n.div_ceil(256) * 256, f16::NAN).unwrap();
            span_fetch_sub_f16::launch(&dev, n.div_ceil(256) as u32, &xs, &o, &old, start as i32)
                .unwrap();
            let mut want = init.clone();
            for (k, v) in x.iter().enumerate() {
                want[start + k] = f16::from_f32(want[start + k].to_f32() - v.to_f32());
            }
            assert_eq!(o.download().unwrap(), want, "{dev:?} start {start}");
            // Past the end of `x` the loaded values are 0 (still subtracted); past the end of
            // `out` the window's elements are skipped and give 0.
            let old = old.download().unwrap();
            for (k, got) in old.iter().enumerate() {
                let want = init.get(start + k).copied().unwrap_or(f16::ZERO);
                assert_eq!(*got, want, "{dev:?} start {start} old[{k}]");
            }
        }
    }
}

#[test]
fn ptx_has_the_packed_forms_and_assembles() {
    let cases: [(&str, &str, u32, &str); 4] = [
        (
            "shared_rows_f16",
            shared_rows_f16::PTX,
            70,
            "red.relaxed.cta.shared.add.noftz.f16x2",
        ),
        (
            "shared_rows_bf16",
            shared_rows_bf16::PTX,
            90,
            "red.relaxed.cta.shared.add.noftz.bf16x2",
        ),
        (
            "global_rows_f16_sm80",
            global_rows_f16_sm80::PTX,
            80,
            "red.relaxed.gpu.global.add.noftz.f16x2",
        ),
        (
            "span_fetch_sub_f16",
            span_fetch_sub_f16::PTX,
            80,
            "atom.relaxed.gpu.global.add.noftz.f16x2",
        ),
    ];
    for (name, ptx, target, form) in cases {
        assert!(ptx.contains(form), "{name}: no `{form}` in\n{ptx}");
        assemble_all(name, ptx, target);
    }
    // The global flush of the shared kernels: packed on sm_70, 8-lane vectors in the sm_90
    // variant (which keeps the packed form on shared memory).
    assert!(shared_rows_f16::PTX.contains("red.relaxed.gpu.global.add.noftz.f16x2"));
    let (t, v) = shared_rows_f16::PTX_VARIANTS[0];
    assert_eq!(t, 90);
    assert!(v.contains("red.relaxed.gpu.global.add.noftz.v8.f16"));
    assert!(v.contains("red.relaxed.cta.shared.add.noftz.f16x2"));
    assemble_all("shared_rows_f16 (sm_90)", v, 90);
    assert!(shared_rows_bf16::PTX.contains("red.relaxed.gpu.global.add.noftz.v8.bf16"));
}
