use tilus::prelude::*;

// There are no 8-bit atomics at all, not even `cas` (the smallest is `cas.b16`).
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i8>) {
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::global_cas(x, compare = v, values = v + 1);
}

fn main() {}
