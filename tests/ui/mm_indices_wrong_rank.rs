use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let m = x.view(0, [16, 16]);
    let idx = arange(16);
    atomic_add(m, idx, 1);
}

fn main() {}
