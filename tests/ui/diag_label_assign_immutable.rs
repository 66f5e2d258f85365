use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let total = load_global(x, offsets = [0], shape = [128]);
    total = total + 1;
    store_global(x, total, offsets = [0]);
}

fn main() {}
