use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(data: GlobalTensor<i32>, flag: GlobalTensor<i32>) {
    store_global(data, ones([128]), offsets = [block_idx() * 128]);
    atomic_store(flag, 0, 1, order = MemoryOrder::Release, scope = MemoryScope::Device);
    let f = atomic_load(flag, 0, order = MemoryOrder::Acquire, scope = MemoryScope::Block);
    store_global(data, full([128], f), offsets = [0]);
}

fn main() {}
