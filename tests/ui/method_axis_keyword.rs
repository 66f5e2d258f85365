use tilus::prelude::*;

// `axis = ..` is not silently read as the operand of an element-wise `max`.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<i32>) {
    let a = load_global(x.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    let m = a.max(axis = 0);
    store_global(x, full([1], m), offsets = [0]);
}

fn main() {}
