use tilus::prelude::*;

// Bitwise atomics are integer-only (`atom.or` takes `.b32`/`.b64`): not on `f64`, even in shared
// memory where the bits would fit.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f64>) {
    let s = shared_tensor(f64, [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::shared_or(s, values = v);
}

fn main() {}
