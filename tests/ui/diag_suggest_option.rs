use tilus::prelude::*;

#[tile_kernel(thread = 128)]
fn k(x: GlobalTensor<i32>) {
    store_global(x, zeros([128]), offsets = [0]);
}

fn main() {}
