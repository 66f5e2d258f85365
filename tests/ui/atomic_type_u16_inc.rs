use tilus::prelude::*;

// Every 16-bit integer op but `inc`/`dec` exists (as `cas.b16` loops where PTX has no
// instruction); `inc`/`dec` are PTX's `u32` ones only.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<u16>) {
    atomic::global_inc(x, values = full([128], 9u16));
}

fn main() {}
