use tilus::prelude::*;

// No implicit conversions: the error says which `as` to write.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>, i: GlobalTensor<i32>) {
    let a = load_global(x, offsets = [0], shape = [128]);
    let b = load_global(i, offsets = [0], shape = [128]);
    store_global(x, a + b, offsets = [0]);
}

fn main() {}
