use tilus::prelude::*;

// Nothing close: no guess, the note lists what exists instead.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = load_global(x, offsets = [0], shape = [128], stride = 2);
    store_global(x, a.frobnicate(), offsets = [0]);
}

fn main() {}
