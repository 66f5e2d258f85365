use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<u8>) {
    let a = load_global(x, offsets = [0], shape = [128]);
    store_global(x, a + 300, offsets = [0]);
}

fn main() {}
