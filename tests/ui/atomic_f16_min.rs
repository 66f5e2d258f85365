use tilus::prelude::*;

// PTX has no scalar f16 min/max atomic.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f16>) {
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::global_min(x, values = v);
}

fn main() {}
