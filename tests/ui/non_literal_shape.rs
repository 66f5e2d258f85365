use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, n: i32) {
    let a = zeros([n]);
    store_global(x, a, offsets = [0]);
}

fn main() {}
