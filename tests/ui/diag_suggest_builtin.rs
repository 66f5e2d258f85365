use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = laod_global(x, offsets = [0], shape = [128]);
    store_global(x, a, offsets = [0]);
}

fn main() {}
