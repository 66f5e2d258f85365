use tilus::prelude::*;

// PTX's bf16 min/max atomics exist only as `.v2`+ vector forms: the scalar indexed `atomic_max`
// on a `bf16` array is rejected.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<bf16>, idx: GlobalTensor<i32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic_max(x, i, v);
}

fn main() {}
