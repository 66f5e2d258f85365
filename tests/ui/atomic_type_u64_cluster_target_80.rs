use tilus::prelude::*;

// A legal 64-bit atomic at an illegal scope for the target: `.cluster` needs sm_90.
#[tile_kernel(threads = 128, target = 80)]
fn k(x: GlobalTensor<u64>) {
    atomic::global_add(x, values = full([128], 1u64), scope = "cluster");
}

fn main() {}
