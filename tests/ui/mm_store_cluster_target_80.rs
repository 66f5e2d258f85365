use tilus::prelude::*;

#[tile_kernel(threads = 128, target = 80)]
fn k(flag: GlobalTensor<i32>) {
    atomic_store(flag, 0, 1, order = MemoryOrder::Release, scope = MemoryScope::Cluster);
}

fn main() {}
