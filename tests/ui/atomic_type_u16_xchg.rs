use tilus::prelude::*;

// PTX's only 16-bit atomic is `cas.b16`: exchange (and add, min, ...) on 16-bit elements is
// rejected.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<u16>, idx: GlobalTensor<i32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic_xchg(x, i, v);
}

fn main() {}
