use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a: i32 = block_idx();
    store_global(x, zeros([128]), offsets = [a]);
}

fn main() {}
