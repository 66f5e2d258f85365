use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
    let idx = load_global(x, offsets = [0], shape = [256]);
    atomic::global_scatter_cas(y, dim = 0, indices = idx, values = 1);
}

fn main() {}
