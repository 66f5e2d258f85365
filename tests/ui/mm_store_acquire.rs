use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(flag: GlobalTensor<i32>) {
    atomic_store(flag, 0, 1, order = MemoryOrder::Acquire);
}

fn main() {}
