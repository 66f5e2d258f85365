use tilus::prelude::*;

#[tile_kernel(threads = 256, min_blocks_per_sm = 0)]
fn none_at_all(out: GlobalTensor<i32>) {
    store_global(out, zeros([256]), offsets = [0]);
}

#[tile_kernel(threads = 512, min_blocks_per_sm = 5)]
fn too_many_threads(out: GlobalTensor<i32>) {
    store_global(out, zeros([512]), offsets = [0]);
}

#[tile_kernel(threads = 256, min_blocks_per_sm = 3)]
fn too_much_shared(out: GlobalTensor<i32>) {
    let big = shared_tensor(i32, [20000]);
    store_shared(big, 1);
    sync();
    store_global(out, atomic_load(big, arange(256)), offsets = [0]);
}

fn main() {}
