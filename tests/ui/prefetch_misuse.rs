use tilus::prelude::*;

// A prefetch takes a region of a 1-D global tensor: not a 2-D one, not shared memory.
#[tile_kernel(threads = 128)]
fn two_d(x: GlobalTensor<f32>) {
    let m = x.view(0, [8, 16]);
    prefetch_global(m, offsets = [0, 0], shape = [8, 16]);
}

#[tile_kernel(threads = 128)]
fn shared(x: GlobalTensor<f32>) {
    let s = shared_tensor(f32, [128]);
    prefetch_global(s, offsets = [0], shape = [128]);
    store_global(x, load_shared(s), offsets = [0]);
}

#[tile_kernel(threads = 128)]
fn two_offsets(x: GlobalTensor<f32>) {
    prefetch_global(x, offsets = [0, 4], shape = [128]);
}

fn main() {}
