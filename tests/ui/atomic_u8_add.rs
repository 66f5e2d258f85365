use tilus::prelude::*;

// PTX has no 8-bit atomics: the help says what to use instead.
#[tile_kernel(threads = 128)]
fn k(counts: GlobalTensor<u8>) {
    atomic::global_add(counts, values = full([128], 1));
}

fn main() {}
