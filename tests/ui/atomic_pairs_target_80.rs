use tilus::prelude::*;

// 128-bit atomics exist from sm_90 on: an explicit lower target is an error at the call.
#[tile_kernel(threads = 32, target = 80)]
fn k(x: GlobalTensor<u64>) {
    atomic::global_exch128(x, values = full([64], 1u64));
}

fn main() {}
