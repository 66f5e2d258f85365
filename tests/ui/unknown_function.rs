use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = thread_idx();
    store_global(x, full([128], a), offsets = [0]);
}

fn main() {}
