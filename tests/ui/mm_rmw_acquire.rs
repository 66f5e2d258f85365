use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let idx = arange(128);
    atomic_add(x, idx, 1, order = MemoryOrder::Acquire);
}

fn main() {}
