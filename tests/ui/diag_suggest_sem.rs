use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    fence(sem = acqrel, scope = gpu);
    atomic_store(x, 0, 1, order = MemoryOrder::Relase);
}

fn main() {}
