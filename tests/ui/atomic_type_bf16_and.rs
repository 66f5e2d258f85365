use tilus::prelude::*;

// 16-bit floats have `add`, `cas`, and `min`/`max`/`exch` as `cas.b16` loops, but no bitwise
// atomics: the help names the integer tensor of the same width.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<bf16>, idx: GlobalTensor<i32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic_and(x, i, v);
}

fn main() {}
