use tilus::prelude::*;

// Scatter exch is not provided for any type: which update wins under duplicate indices is
// timing (the help points at the non-atomic scatter store and the element-wise form).
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>, idx: GlobalTensor<i32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::global_scatter_exch(x, dim = 0, indices = i, values = v);
}

fn main() {}
