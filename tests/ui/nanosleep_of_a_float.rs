use tilus::prelude::*;

#[tile_kernel(threads = 32)]
fn k(x: GlobalTensor<f32>) {
    let pause = load_global(x, offsets = [0], shape = [1]).item();
    nanosleep(pause);
}

fn main() {}
