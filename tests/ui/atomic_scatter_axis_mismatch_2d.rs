use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [16, 32]);
    let v = x.view(0, [8, 16]);
    let idx = load_global(v, offsets = [0, 0], shape = [8, 16]);
    atomic::shared_scatter_add(s, dim = 0, indices = idx, values = 1);
}

fn main() {}
