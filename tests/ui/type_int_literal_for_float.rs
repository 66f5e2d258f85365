use tilus::prelude::*;

// As in Rust, an integer literal is not a float: `1.0` is.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>) {
    atomic::global_add(x, values = 1);
}

fn main() {}
