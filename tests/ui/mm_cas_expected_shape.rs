use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let idx = arange(128);
    let expected = zeros([64]);
    let old = atomic_cas(x, idx, expected, 1);
    store_global(x, old, offsets = [0]);
}

fn main() {}
