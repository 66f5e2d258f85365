use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let f = atomic_load(flag, 0, order = MemoryOrder::AcqRel);
    store_global(out, full([128], f), offsets = [0]);
}

fn main() {}
