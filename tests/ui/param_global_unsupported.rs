use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<char>) {
    store_global(x, zeros([128]), offsets = [0]);
}

fn main() {}
