use tilus::prelude::*;

// `usize` has no fixed width on the GPU: kernels take sized types.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>, n: usize) {
    store_global(x, zeros([128]), offsets = [0]);
}

fn main() {}
