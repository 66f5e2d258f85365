use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = zeros([16]);
    let b = ones([8]);
    store_global(x, a + b, offsets = [0]);
}

fn main() {}
