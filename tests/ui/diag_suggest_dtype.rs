use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f23>, y: GlobalTensor<i32>) {
    let a = load_global(y, offsets = [0], shape = [128]);
    store_global(y, (a as u23) as i32, offsets = [0]);
}

fn main() {}
