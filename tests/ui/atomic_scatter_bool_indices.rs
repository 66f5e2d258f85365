use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [256]);
    let v = load_global(x, offsets = [0], shape = [256]);
    atomic::shared_scatter_add(s, dim = 0, indices = v > 0, values = 1);
}

fn main() {}
