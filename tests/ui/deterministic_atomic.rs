use tilus::prelude::*;

// No launch can promise the order of float atomics: the error points to `tilus::algo`.
#[tile_kernel(threads = 128)]
fn k(out: GlobalTensor<f32>, idx: GlobalTensor<i32>, vals: GlobalTensor<f32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(vals, offsets = [0], shape = [128]);
    atomic_add(out, i, v, deterministic = true);
}

fn main() {}
