//! The PTX of the tile collectives assembles for every element type and plan: reductions along
//! an axis (rows kept in place, staged lines, more lines than threads), scans (per row, staged,
//! a whole tile over several warps and chunks; exclusive and reverse), sorts and top-k, `take`
//! with narrow and 64-bit indices, equal ranks and histograms. Their values are tested against
//! CPU references on every backend in `tests/collectives.rs`.

mod common;

use common::assemble_all;
use tilus::prelude::*;

/// Every form on `f32`, as the language pages show them.
#[tile_kernel(threads = 128)]
fn every_form(
    x: GlobalTensor<f32>,
    idx: GlobalTensor<i32>,
    out: GlobalTensor<f32>,
    io: GlobalTensor<i32>,
) {
    let t = load_global(x.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    let rows = t.sum(1);
    let cols = t.max(axis = 0, keepdims = true);
    let last = t.min(axis = -1);
    let any = (t > 0.0).any(0);
    let am = t.argmax(axis = 1);
    let flat = t.argmin();
    let cs = t.cumsum(1, exclusive = true, reverse = true);
    let sc = t.scan(max, axis = 0);
    let srt = t.sort(descending = true);
    let order = t.argsort(axis = 1);
    let moved = t.take(order, axis = 1);
    let top = t.topk(4);
    let top_i = t.argtopk(4, largest = false);
    let keys = load_global(idx, offsets = [0], shape = [128]) & 15;
    let rank = keys.equal_rank();
    let counts = keys.histogram(16);
    store_global(out, rows + last + (am + flat) as f32, offsets = [0]);
    store_global(out, any as i32 as f32, offsets = [4]);
    store_global(out.view(0, [1, 32]), cols, offsets = [0, 0]);
    store_global(
        out.view(0, [4, 32]),
        cs + sc + srt + moved,
        offsets = [0, 0],
    );
    store_global(out.view(0, [4, 4]), top + top_i as f32, offsets = [0, 0]);
    store_global(io, rank + counts.sum(), offsets = [0]);
}

/// 16-bit floats and narrow integers: folds in 32 bits, rounded once; sorts by total order.
#[tile_kernel(threads = 64)]
fn narrow(h: GlobalTensor<f16>, b: GlobalTensor<bf16>, c: GlobalTensor<i8>, u: GlobalTensor<u8>) {
    let th = load_global(h.view(0, [5, 7]), offsets = [0, 0], shape = [5, 7]);
    store_global(
        h.view(0, [5, 7]),
        th.cumsum(0) + th.sort(axis = 1),
        offsets = [0, 0],
    );
    store_global(h, th.sum(1), offsets = [0]);
    let tb = load_global(b, offsets = [0], shape = [300]);
    store_global(b, tb.cumprod(0, reverse = true) + tb.sort(), offsets = [0]);
    let tc = load_global(c.view(0, [3, 12]), offsets = [0, 0], shape = [3, 12]);
    store_global(
        c.view(0, [3, 12]),
        tc.cummax(1, exclusive = true),
        offsets = [0, 0],
    );
    store_global(c, tc.min(axis = 0) + tc.max(axis = 1).sum(), offsets = [0]);
    store_global(
        c.view(0, [3, 12]),
        tc.sort(axis = 0, descending = true),
        offsets = [0, 0],
    );
    let tu = load_global(u, offsets = [0], shape = [100]);
    store_global(u, tu.equal_rank() as u8, offsets = [0]);
    store_global(u.view(0, [10]), tu.histogram(10) as u8, offsets = [0]);
    let odd = (tu & 1) == 1;
    store_global(u, odd.scan(xor, 0) as u8, offsets = [0]);
}

/// 64-bit types; a whole-tile scan over several chunks; more lines than threads.
#[tile_kernel(threads = 32)]
fn wide(a: GlobalTensor<i64>, w: GlobalTensor<u64>, f: GlobalTensor<f64>, i: GlobalTensor<i64>) {
    let ta = load_global(a.view(0, [40, 3]), offsets = [0, 0], shape = [40, 3]);
    store_global(a, ta.sum(1) + ta.argmin(1) as i64, offsets = [0]);
    store_global(a.view(0, [40, 3]), ta.cumsum(0), offsets = [0, 0]);
    let tw = load_global(w, offsets = [0], shape = [1000]);
    store_global(w, tw.cumsum(0) ^ tw.sort(descending = true), offsets = [0]);
    store_global(w.view(0, [8]), tw.topk(8), offsets = [0]);
    let tf = load_global(f.view(0, [16, 64]), offsets = [0, 0], shape = [16, 64]);
    store_global(f, tf.sum(1) + tf.max(axis = 0).sum(), offsets = [0]);
    store_global(
        f.view(0, [16, 64]),
        tf.cumsum(1, reverse = true),
        offsets = [0, 0],
    );
    let ti = load_global(i.view(0, [16, 8]), offsets = [0, 0], shape = [16, 8]);
    store_global(f.view(0, [16, 8]), tf.take(ti, axis = 1), offsets = [0, 0]);
    store_global(
        i.view(0, [16, 8]),
        tf.argtopk(8, axis = 1) as i64,
        offsets = [0, 0],
    );
}

#[test]
fn collectives_assemble() {
    assemble_all("every_form", every_form::PTX, every_form::TARGET);
    assemble_all("narrow", narrow::PTX, narrow::TARGET);
    assemble_all("wide", wide::PTX, wide::TARGET);
}

/// Integer folds of rows that span a warp's 32 lanes, and of a whole tile, on sm_90.
#[tile_kernel(threads = 128, target = 90)]
fn warp_folds(
    x: GlobalTensor<i32>,
    u: GlobalTensor<u32>,
    f: GlobalTensor<f32>,
    out: GlobalTensor<i32>,
) {
    let t = load_global(x.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    let tu = load_global(u.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    let tf = load_global(f.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    let rows = t.sum(1) + t.max(axis = 1) + (tu.min(axis = 1) as i32) + (tf.sum(1) as i32);
    let all = full([4], t.sum());
    store_global(out, rows + all, offsets = [0]);
}

/// From sm_80 on a warp folds 32-bit integers in one `redux.sync`, along an axis and whole;
/// floats keep the butterfly (their order is fixed, and `redux.sync` has no `f32` before
/// sm_100a).
#[test]
fn integer_warp_folds_are_one_redux() {
    let ptx = warp_folds::PTX;
    assemble_all("warp_folds", ptx, warp_folds::TARGET);
    for s in [
        "redux.sync.add.s32",
        "redux.sync.max.s32",
        "redux.sync.min.u32",
    ] {
        assert!(ptx.contains(s), "missing `{s}`:\n{ptx}");
    }
    assert!(
        ptx.contains("shfl.sync.bfly.b32"),
        "the f32 fold's butterfly:\n{ptx}"
    );
}
