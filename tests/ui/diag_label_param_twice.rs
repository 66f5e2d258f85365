use tilus::prelude::*;

// The second declaration is the error; the first is shown as a secondary span.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, n: i32, x: GlobalTensor<i32>) {
    store_global(x, full([128], n), offsets = [0]);
}

fn main() {}
