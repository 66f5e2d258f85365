use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let values = load_global(x, offsets = [0], shape = [128]);
    store_global(x, value + 1, offsets = [0]);
}

fn main() {}
