use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let f = |a| a + 1;
    store_global(x, zeros([128]), offsets = [0]);
}

fn main() {}
