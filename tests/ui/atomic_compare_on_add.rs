use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [256]);
    let v = load_global(x, offsets = [0], shape = [256]);
    atomic::shared_add(s, values = v, compare = 0);
}

fn main() {}
