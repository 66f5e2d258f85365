use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, n: i32) {
    if n == 0 {
        return;
    }
    store_global(x, zeros([128]), offsets = [0]);
}

fn main() {}
