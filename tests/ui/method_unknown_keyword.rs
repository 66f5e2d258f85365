use tilus::prelude::*;

// A keyword no form of the method has is an error at the keyword, on every method.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>) {
    let a = load_global(x, offsets = [0], shape = [128]);
    let b = a.min(dim = 1.0);
    let c = a.reshape(shape = [4, 32], order = 1);
    let d = a.sqrt(fast = true);
    let e = a.mul_add(b = a, z = a);
    store_global(x, b + d + e + c.reshape([128]), offsets = [0]);
}

fn main() {}
