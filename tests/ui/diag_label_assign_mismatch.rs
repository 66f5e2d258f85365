use tilus::prelude::*;

// A type error in an assignment points at the variable's declaration, which fixed its type.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let mut acc = zeros::<i32>([128]);
    let v = load_global(x, offsets = [0], shape = [64]);
    acc = v;
    store_global(x, acc, offsets = [0]);
}

fn main() {}
