use tilus::prelude::*;

// An access without bounds checks reads or writes anywhere: a safe kernel cannot have one.
#[tile_kernel(threads = 128)]
fn k(m: GlobalTensor<i32>) {
    atomic_add(m, arange(256) + 1000, 1, check_bounds = false);
    let v = atomic_load(m, arange(128), check_bounds = false, sem = relaxed);
    store_global(m, v, offsets = [0]);
}

fn main() {}
