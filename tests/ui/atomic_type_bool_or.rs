use tilus::prelude::*;

// No atomics on `bool`: flags live in an integer tensor.
#[tile_kernel(threads = 128)]
fn k(flags: GlobalTensor<bool>) {
    atomic_or(flags, 0, true);
}

fn main() {}
