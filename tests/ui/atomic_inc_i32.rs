use tilus::prelude::*;

// `inc`/`dec` are PTX's u32-only wrapping counters.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    atomic_inc(x, 0, 10);
}

fn main() {}
