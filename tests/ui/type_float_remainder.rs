use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>) {
    let a = load_global(x, offsets = [0], shape = [128]);
    store_global(x, a % 2.0, offsets = [0]);
}

fn main() {}
