use tilus::prelude::*;

#[tile_kernel(threads = 128, vector_width = 3)]
fn not_a_power_of_two(out: GlobalTensor<i32>) {
    store_global(out, zeros([128]), offsets = [0]);
}

#[tile_kernel(threads = 128, vector_width = 32)]
fn too_long(out: GlobalTensor<i32>) {
    store_global(out, zeros([128]), offsets = [0]);
}

fn main() {}
