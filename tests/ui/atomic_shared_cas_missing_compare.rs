use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [256]);
    let v = load_global(x, offsets = [0], shape = [256]);
    let old = atomic::shared_cas(s, values = v);
    store_global(x, old, offsets = [0]);
}

fn main() {}
