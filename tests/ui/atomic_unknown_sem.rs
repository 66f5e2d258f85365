use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let v = load_global(x, offsets = [0], shape = [256]);
    atomic::global_add(x, v, sem = acquired);
}

fn main() {}
