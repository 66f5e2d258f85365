use tilus::prelude::*;

// `atom.inc` is `.u32` only: a 64-bit wrapping counter is not one instruction.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i64>) {
    atomic::global_inc(x, values = full([128], 100i64));
}

fn main() {}
