//! Vector atomics (`red/atom.global.add.v4.f32`, `.v8` of `f16`/`bf16`): on sm_90 the compiler
//! issues one vector instruction for each run of a thread's contiguous elements that is, at run
//! time, all active, consecutive in memory and aligned to the vector, and the scalar
//! instructions elsewhere. A kernel without an explicit target gets an sm_90 variant with them
//! (`PTX_VARIANTS`), which a GPU of compute capability 9.0 or newer loads.
//!
//! Every kernel is checked against a CPU reference on each backend, with float values that are
//! small integers so that every sum is exact whatever the order of the atomics; the cases cover
//! rows that repeat (contention), indices past the end (skipped), a partial last step, runs that
//! are not consecutive (descending columns) and views that are not aligned (scalar fallback).

mod common;

use common::{assemble_all, backends, Rng};
use half::{bf16, f16};
use tilus::prelude::*;

const D: usize = 128;

/// `out[index[r], :] += src[r, :]` (or `-=`), `$rows` rows per step (4 give `f32` threads runs
/// of 4, 8 give 16-bit floats runs of 8: one 16-byte vector); rows past the end read -1.
macro_rules! rows_kernel {
    ($name:ident, $t:ident, $op:ident, $rows:literal) => {
        #[tile_kernel(threads = 128)]
        fn $name(src: GlobalTensor<$t>, index: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let n = index.len();
            let src_rows = src.view(0, [n, 128]);
            let out_rows = out.view(0, [out.len() / 128, 128]);
            let cols = arange(128).reshape([1, 128]);
            for r0 in (block_idx() * $rows..n).step_by(grid_dim() * $rows) {
                let rows = load_global(index, offsets = [r0], shape = [$rows], other = -1);
                let vals = load_global(src_rows, offsets = [r0, 0], shape = [$rows, 128]);
                $op(
                    out_rows,
                    (rows.reshape([$rows, 1]), cols),
                    vals,
                    order = MemoryOrder::Relaxed,
                );
            }
        }
    };
}

rows_kernel!(rows_add_f32, f32, atomic_add, 4);
rows_kernel!(rows_sub_f32, f32, atomic_sub, 4);
rows_kernel!(rows_add_f16, f16, atomic_add, 8);
rows_kernel!(rows_add_bf16, bf16, atomic_add, 8);

/// The same with the columns descending: no run is consecutive, so every element goes scalar.
#[tile_kernel(threads = 128)]
fn rows_reversed_f32(src: GlobalTensor<f32>, index: GlobalTensor<i32>, out: GlobalTensor<f32>) {
    let n = index.len();
    let src_rows = src.view(0, [n, 128]);
    let out_rows = out.view(0, [out.len() / 128, 128]);
    let cols = (127 - arange(128)).reshape([1, 128]);
    for r0 in (block_idx() * 4..n).step_by(grid_dim() * 4) {
        let rows = load_global(index, offsets = [r0], shape = [4], other = -1);
        let vals = load_global(src_rows, offsets = [r0, 0], shape = [4, 128]);
        atomic_add(out_rows, (rows.reshape([4, 1]), cols), vals);
    }
}

/// The result used: `atom` with a vector destination. With distinct rows each old value is the
/// initial one.
#[tile_kernel(threads = 128)]
fn rows_fetch_add_f32(
    src: GlobalTensor<f32>,
    index: GlobalTensor<i32>,
    out: GlobalTensor<f32>,
    old: GlobalTensor<f32>,
) {
    let n = index.len();
    let src_rows = src.view(0, [n, 128]);
    let old_rows = old.view(0, [n, 128]);
    let out_rows = out.view(0, [out.len() / 128, 128]);
    let cols = arange(128).reshape([1, 128]);
    for r0 in (block_idx() * 4..n).step_by(grid_dim() * 4) {
        let rows = load_global(index, offsets = [r0], shape = [4], other = -1);
        let vals = load_global(src_rows, offsets = [r0, 0], shape = [4, 128]);
        let before = atomic_add(out_rows, (rows.reshape([4, 1]), cols), vals);
        store_global(old_rows, before, offsets = [r0, 0]);
    }
}

/// tilus element-wise form on a 1-D view starting at `start`: aligned for `start % 4 == 0`,
/// misaligned (scalar fallback) otherwise; a partial last block.
#[tile_kernel(threads = 128)]
fn span_sub_f32(x: GlobalTensor<f32>, out: GlobalTensor<f32>, start: i32) {
    let b = block_idx();
    let v = load_global(x, offsets = [b * 1024], shape = [1024]);
    atomic::global_sub(out.view(start + b * 1024, [1024]), values = v);
}

/// With an explicit target below sm_90: scalar atomics only, and no variant.
#[tile_kernel(threads = 128, target = 80)]
fn rows_add_f32_sm80(src: GlobalTensor<f32>, index: GlobalTensor<i32>, out: GlobalTensor<f32>) {
    let n = index.len();
    let src_rows = src.view(0, [n, 128]);
    let out_rows = out.view(0, [out.len() / 128, 128]);
    let cols = arange(128).reshape([1, 128]);
    for r0 in (block_idx() * 4..n).step_by(grid_dim() * 4) {
        let rows = load_global(index, offsets = [r0], shape = [4], other = -1);
        let vals = load_global(src_rows, offsets = [r0, 0], shape = [4, 128]);
        atomic_add(out_rows, (rows.reshape([4, 1]), cols), vals);
    }
}

/// Rows of small integers (exact in every float type), `n` of them (not a multiple of the 4 per
/// step), indices into `m` rows with repeats, and some past the end.
fn workload(r: &mut Rng, n: usize, m: usize) -> (Vec<f32>, Vec<i32>, Vec<f32>) {
    let src: Vec<f32> = (0..n * D).map(|_| r.range(-8, 9) as f32).collect();
    let index: Vec<i32> = (0..n)
        .map(|_| match r.range(0, 20) {
            0 => m as i32 + r.range(0, 3), // past the end: skipped
            _ => r.range(0, m as i32),
        })
        .collect();
    let out: Vec<f32> = (0..m * D).map(|_| r.range(-100, 100) as f32).collect();
    (src, index, out)
}

/// `out[index[r], c] += sign * src[r, c]` on the CPU (columns reversed if `reversed`).
fn reference(src: &[f32], index: &[i32], out: &[f32], sign: f32, reversed: bool) -> Vec<f32> {
    let mut want = out.to_vec();
    let m = out.len() / D;
    for (r, &i) in index.iter().enumerate() {
        if i < 0 || i as usize >= m {
            continue;
        }
        for c in 0..D {
            let dst = if reversed { D - 1 - c } else { c };
            want[i as usize * D + dst] += sign * src[r * D + c];
        }
    }
    want
}

#[test]
fn f32_rows_add_and_sub() {
    let mut r = Rng::from_env_or_clock();
    let (n, m) = (1003, 37);
    let (src, index, out) = workload(&mut r, n, m);
    for dev in backends() {
        for (sign, reversed) in [(1.0, false), (-1.0, false), (1.0, true), (1.0, false)] {
            let s = dev.upload(&src).unwrap();
            let i = dev.upload(&index).unwrap();
            let o = dev.upload(&out).unwrap();
            match (sign > 0.0, reversed) {
                (true, false) => rows_add_f32::launch(&dev, 40, &s, &i, &o).unwrap(),
                (false, _) => rows_sub_f32::launch(&dev, 40, &s, &i, &o).unwrap(),
                (true, true) => rows_reversed_f32::launch(&dev, 40, &s, &i, &o).unwrap(),
            }
            let want = reference(&src, &index, &out, sign, reversed);
            assert_eq!(
                o.download().unwrap(),
                want,
                "{dev:?} sign {sign} rev {reversed}"
            );
        }
        // The same through the kernel with no variant.
        let (s, i, o) = (
            dev.upload(&src).unwrap(),
            dev.upload(&index).unwrap(),
            dev.upload(&out).unwrap(),
        );
        rows_add_f32_sm80::launch(&dev, 40, &s, &i, &o).unwrap();
        assert_eq!(
            o.download().unwrap(),
            reference(&src, &index, &out, 1.0, false),
            "{dev:?} sm_80"
        );
    }
}

#[test]
fn sixteen_bit_rows_add() {
    let mut r = Rng::from_env_or_clock();
    let (n, m) = (517, 23);
    let (src, index, out) = workload(&mut r, n, m);
    // Sums stay small integers (|x| <= 100 + 8 * repeats), exact in f16 and bf16.
    let want = reference(&src, &index, &out, 1.0, false);
    assert!(want.iter().all(|x| x.abs() <= 256.0), "bf16 exactness");
    for dev in backends() {
        let s16: Vec<f16> = src.iter().map(|&x| f16::from_f32(x)).collect();
        let o16: Vec<f16> = out.iter().map(|&x| f16::from_f32(x)).collect();
        let (s, i, o) = (
            dev.upload(&s16).unwrap(),
            dev.upload(&index).unwrap(),
            dev.upload(&o16).unwrap(),
        );
        rows_add_f16::launch(&dev, 19, &s, &i, &o).unwrap();
        let got: Vec<f32> = o.download().unwrap().iter().map(|x| x.to_f32()).collect();
        assert_eq!(got, want, "{dev:?} f16");

        let sb: Vec<bf16> = src.iter().map(|&x| bf16::from_f32(x)).collect();
        let ob: Vec<bf16> = out.iter().map(|&x| bf16::from_f32(x)).collect();
        let (s, i, o) = (
            dev.upload(&sb).unwrap(),
            dev.upload(&index).unwrap(),
            dev.upload(&ob).unwrap(),
        );
        rows_add_bf16::launch(&dev, 19, &s, &i, &o).unwrap();
        let got: Vec<f32> = o.download().unwrap().iter().map(|x| x.to_f32()).collect();
        assert_eq!(got, want, "{dev:?} bf16");
    }
}

#[test]
fn fetch_add_returns_each_old_row() {
    let mut r = Rng::from_env_or_clock();
    let (n, m) = (61, 64);
    // Distinct rows (a prefix of a shuffled 0..m), so each old value is the initial one.
    let mut rows: Vec<i32> = (0..m as i32).collect();
    for k in (1..rows.len()).rev() {
        rows.swap(k, r.range(0, k as i32 + 1) as usize);
    }
    let index = rows[..n].to_vec();
    let (src, _, out) = workload(&mut r, n, m);
    for dev in backends() {
        let (s, i, o) = (
            dev.upload(&src).unwrap(),
            dev.upload(&index).unwrap(),
            dev.upload(&out).unwrap(),
        );
        let old = dev.full(n * D, f32::NAN).unwrap();
        rows_fetch_add_f32::launch(&dev, 5, &s, &i, &o, &old).unwrap();
        let want_old: Vec<f32> = index
            .iter()
            .flat_map(|&i| out[i as usize * D..(i as usize + 1) * D].to_vec())
            .collect();
        assert_eq!(old.download().unwrap(), want_old, "{dev:?} old");
        assert_eq!(
            o.download().unwrap(),
            reference(&src, &index, &out, 1.0, false),
            "{dev:?} out"
        );
    }
}

#[test]
fn aligned_and_misaligned_spans() {
    let mut r = Rng::from_env_or_clock();
    let n: usize = 5000; // 4 full blocks of 1024 and a partial one
    let x: Vec<f32> = (0..n).map(|_| r.range(-50, 50) as f32).collect();
    for dev in backends() {
        for start in [0usize, 4, 1, 3] {
            let init: Vec<f32> = (0..n + 8).map(|k| (k % 7) as f32).collect();
            let (xs, o) = (dev.upload(&x).unwrap(), dev.upload(&init).unwrap());
            span_sub_f32::launch(&dev, n.div_ceil(1024) as u32, &xs, &o, start as i32).unwrap();
            let mut want = init.clone();
            for (k, v) in x.iter().enumerate() {
                want[start + k] -= v;
            }
            assert_eq!(o.download().unwrap(), want, "{dev:?} start {start}");
        }
    }
}

#[test]
fn sm_90_variants_carry_the_vector_forms() {
    // (kernel, its PTX, its variants, the vector instruction)
    type Case = (
        &'static str,
        &'static str,
        &'static [(u32, &'static str)],
        &'static str,
    );
    let cases: [Case; 5] = [
        (
            "rows_add_f32",
            rows_add_f32::PTX,
            rows_add_f32::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.v4.f32",
        ),
        (
            "rows_sub_f32",
            rows_sub_f32::PTX,
            rows_sub_f32::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.v4.f32",
        ),
        (
            "rows_add_f16",
            rows_add_f16::PTX,
            rows_add_f16::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.noftz.v8.f16",
        ),
        (
            "rows_fetch_add_f32",
            rows_fetch_add_f32::PTX,
            rows_fetch_add_f32::PTX_VARIANTS,
            "atom.acq_rel.gpu.global.add.v4.f32",
        ),
        (
            "span_sub_f32",
            span_sub_f32::PTX,
            span_sub_f32::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.v4.f32",
        ),
    ];
    for (name, ptx, variants, vector) in cases {
        assert!(ptx.contains(".target sm_70"), "{name}");
        assert!(
            !ptx.contains("global.add.v") && !ptx.contains("noftz.v"),
            "{name}"
        );
        assert_eq!(variants.len(), 1, "{name}: one sm_90 variant");
        let (target, v) = variants[0];
        assert_eq!(target, 90, "{name}");
        assert!(
            v.contains(".target sm_90") && v.contains(".version 8.1"),
            "{name}"
        );
        assert!(v.contains(vector), "{name}: no `{vector}` in\n{v}");
        assemble_all(name, ptx, 70);
        assemble_all(name, v, 90);
    }
    // bf16 `add` needs sm_90 anyway: its own PTX has the vector form, and there is no variant.
    assert!(rows_add_bf16::PTX.contains("red.relaxed.gpu.global.add.noftz.v8.bf16"));
    assert!(rows_add_bf16::PTX_VARIANTS.is_empty());
    assemble_all("rows_add_bf16", rows_add_bf16::PTX, 90);
    // An explicit target is the user's: no variant above it.
    assert!(rows_add_f32_sm80::PTX_VARIANTS.is_empty());
    assert!(!rows_add_f32_sm80::PTX.contains("global.add.v"));
    // Descending columns still get a variant (the contiguity test is at run time).
    assert_eq!(rows_reversed_f32::PTX_VARIANTS.len(), 1);
}

/// Runs of 2 and 4 (`.v2`/`.v4` forms): `out[start + k] += x[k]` for tiles of 256 and 512
/// elements on 128 threads, with a start that is aligned or not.
macro_rules! span_add_kernel {
    ($name:ident, $t:ident, $n:literal) => {
        #[tile_kernel(threads = 128)]
        fn $name(x: GlobalTensor<$t>, out: GlobalTensor<$t>, start: i32) {
            let v = load_global(x, offsets = [block_idx() * $n], shape = [$n]);
            atomic::global_add(out.view(start + block_idx() * $n, [$n]), values = v);
        }
    };
}
span_add_kernel!(pairs_f32, f32, 256);
span_add_kernel!(pairs_f16, f16, 256);
span_add_kernel!(quads_f16, f16, 512);

#[test]
fn two_and_four_lane_vectors() {
    for (name, variants, vector) in [
        (
            "pairs_f32",
            pairs_f32::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.v2.f32",
        ),
        (
            "pairs_f16",
            pairs_f16::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.noftz.v2.f16",
        ),
        (
            "quads_f16",
            quads_f16::PTX_VARIANTS,
            "red.relaxed.gpu.global.add.noftz.v4.f16",
        ),
    ] {
        assert_eq!(variants.len(), 1, "{name}");
        assert!(variants[0].1.contains(vector), "{name}: no `{vector}`");
        assemble_all(name, variants[0].1, 90);
    }
    let mut r = Rng::from_env_or_clock();
    for dev in backends() {
        for start in [0usize, 2, 1] {
            // 3 blocks of 256 (pairs) or 2 of 512 (quads) over 1000 elements: a partial last block.
            let x: Vec<f32> = (0..1024).map(|_| r.range(-20, 20) as f32).collect();
            let init: Vec<f32> = (0..1040).map(|k| (k % 9) as f32).collect();
            let mut want = init.clone();
            for k in 0..1000 {
                want[start + k] += x[k];
            }
            let out = dev.upload(&init).unwrap();
            pairs_f32::launch(
                &dev,
                4,
                &dev.upload(&x[..1000]).unwrap(),
                &out,
                start as i32,
            )
            .unwrap();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{dev:?} pairs_f32 start {start}"
            );
            let x16: Vec<f16> = x[..1000].iter().map(|&v| f16::from_f32(v)).collect();
            let init16: Vec<f16> = init.iter().map(|&v| f16::from_f32(v)).collect();
            for quads in [false, true] {
                let out = dev.upload(&init16).unwrap();
                let xs = dev.upload(&x16).unwrap();
                match quads {
                    false => pairs_f16::launch(&dev, 4, &xs, &out, start as i32).unwrap(),
                    true => quads_f16::launch(&dev, 2, &xs, &out, start as i32).unwrap(),
                }
                let got: Vec<f32> = out.download().unwrap().iter().map(|v| v.to_f32()).collect();
                assert_eq!(got, want, "{dev:?} f16 quads {quads} start {start}");
            }
        }
    }
}
