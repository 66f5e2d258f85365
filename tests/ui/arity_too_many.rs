use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = zeros([128], i32, 0);
    store_global(x, a, offsets = [0]);
}

fn main() {}
