use tilus::prelude::*;

// A loop's bounds must share one integer type; the first typed bound decides which.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, start: i32, end: u32) {
    for i in start..end {
        store_global(x, full([1], i), offsets = [i]);
    }
}

fn main() {}
