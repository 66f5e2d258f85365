use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    store_global(x, zeros([4294967296]), offsets = [0]);
}

fn main() {}
