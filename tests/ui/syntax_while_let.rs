use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, n: i32) {
    while let Some(i) = n {
        store_global(x, zeros([128]), offsets = [i]);
    }
}

fn main() {}
