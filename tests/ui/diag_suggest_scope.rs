use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::global_add(x, v, scope = "gpuu");
    atomic_add(x, 0, 1, scope = MemoryScope::device);
}

fn main() {}
