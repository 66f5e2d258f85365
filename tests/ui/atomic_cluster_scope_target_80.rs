use tilus::prelude::*;

#[tile_kernel(threads = 256, target = 80)]
fn k(x: GlobalTensor<i32>) {
    let v = load_global(x, offsets = [0], shape = [256]);
    atomic::global_add(x, v, scope = cluster);
}

fn main() {}
