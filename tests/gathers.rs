//! Gather loads: index tiles in offset positions of `load_global` and `load_shared`, against a
//! CPU reference on every backend: rows (`x[src, :]`), single elements (`x[i]`), a coordinate
//! broadcast over two axes, indices out of bounds (read `other`), masks, and several types.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// Rows `src` of a `[rows, 32]` view and elements `src * 3 + 1` of the whole tensor.
#[tile_kernel(threads = 64)]
fn rows_and_elements(
    x: GlobalTensor<f32>,
    idx: GlobalTensor<i32>,
    out: GlobalTensor<f32>,
    rows: i32,
) {
    let src = load_global(idx, offsets = [0], shape = [16], other = -1);
    let r = load_global(
        x.view(0, [rows, 32]),
        offsets = [src, 0],
        shape = [16, 32],
        other = -7.0,
    );
    store_global(out.view(0, [16, 32]), r, offsets = [0, 0]);
    let e = load_global(
        x,
        offsets = [src * 3 + 1],
        shape = [16],
        other = -9.0,
        mask = src != 5,
    );
    store_global(out, e, offsets = [512]);
}

#[test]
fn rows_and_elements_are_gathered() {
    assemble_all(
        "rows_and_elements",
        rows_and_elements::PTX,
        rows_and_elements::TARGET,
    );
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let rows = 40 + rng.range(0, 20) as usize;
        let x: Vec<f32> = (0..rows * 32)
            .map(|_| rng.range(-1000, 1000) as f32 * 0.25)
            .collect();
        // In range, repeated, out of range both ways, and the masked value 5.
        let mut idx: Vec<i32> = (0..16).map(|_| rng.range(0, rows as i32)).collect();
        idx[3] = idx[2];
        idx[7] = rows as i32;
        idx[8] = -2;
        idx[11] = 5;
        let (xd, id) = (dev.upload(&x).unwrap(), dev.upload(&idx).unwrap());
        let out = dev.full(528, f32::NAN).unwrap();
        rows_and_elements::launch(&dev, 1, &xd, &id, &out, rows as i32).unwrap();
        let got = out.download().unwrap();
        for (e, &s) in idx.iter().enumerate() {
            for c in 0..32 {
                let want = if (0..rows as i32).contains(&s) {
                    x[s as usize * 32 + c]
                } else {
                    -7.0
                };
                assert_eq!(got[e * 32 + c], want, "{dev:?} row {e} col {c}");
            }
            let flat = s * 3 + 1;
            let want = if s == 5 || !(0..x.len() as i32).contains(&flat) {
                -9.0
            } else {
                x[flat as usize]
            };
            assert_eq!(got[512 + e], want, "{dev:?} element {e}");
        }
    }
}

/// A gather from shared memory: columns `perm` of a `[8, 24]` shared tile, and a rank-3
/// coordinate broadcast from `[4, 1, 1]`.
#[tile_kernel(threads = 32)]
fn shared_gather(x: GlobalTensor<u16>, perm: GlobalTensor<i64>, out: GlobalTensor<u16>) {
    let s = shared_tensor(u16, [8, 24]);
    store_shared(
        s,
        load_global(x.view(0, [8, 24]), offsets = [0, 0], shape = [8, 24]),
    );
    sync();
    let p = load_global(perm, offsets = [0], shape = [24]);
    let cols = load_shared(s, offsets = [0, p], shape = [8, 24], other = 7u16);
    store_global(out.view(0, [8, 24]), cols, offsets = [0, 0]);
    let t = shared_tensor(u16, [4, 6, 8]);
    store_shared(
        t,
        load_global(x.view(0, [4, 6, 8]), offsets = [0, 0, 0], shape = [4, 6, 8]),
    );
    sync();
    let firsts = (load_global(perm, offsets = [0], shape = [4]) % 6).reshape([4, 1, 1]);
    let g = load_shared(t, offsets = [0, firsts, 0], shape = [4, 6, 8]);
    store_global(out.view(192, [4, 6, 8]), g, offsets = [0, 0, 0]);
}

#[test]
fn shared_tensors_are_gathered_with_broadcast_coordinates() {
    assemble_all("shared_gather", shared_gather::PTX, shared_gather::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let x: Vec<u16> = (0..192).map(|_| rng.range(0, 65535) as u16).collect();
        let mut perm: Vec<i64> = (0..24).map(|i| (i * 7 % 24) as i64).collect();
        perm[5] = 30; // out of the axis: `other`
        let (xd, pd) = (dev.upload(&x).unwrap(), dev.upload(&perm).unwrap());
        let out = dev.zeros::<u16>(192 + 192).unwrap();
        shared_gather::launch(&dev, 1, &xd, &pd, &out).unwrap();
        let got = out.download().unwrap();
        for r in 0..8 {
            for c in 0..24 {
                let p = perm[c];
                let want = if p < 24 { x[r * 24 + p as usize] } else { 7 };
                assert_eq!(got[r * 24 + c], want, "{dev:?} ({r}, {c})");
            }
        }
        for a in 0..4 {
            let f = (perm[a] % 6) as usize;
            for b in 0..6 {
                for c in 0..8 {
                    assert_eq!(
                        got[192 + (a * 6 + b) * 8 + c],
                        x[(a * 6 + f) * 8 + c],
                        "{dev:?} ({a}, {b}, {c})"
                    );
                }
            }
        }
    }
}
