use tilus::prelude::*;

// A value-`if` selects per element and runs both arms: an atomic in an arm is rejected.
#[tile_kernel(threads = 128)]
fn k(counter: GlobalTensor<i32>, c: i32) {
    let x = if c > 0 { atomic_add(counter, 0, 1) } else { 0 };
    store_global(counter, full([1], x), offsets = [1]);
}

fn main() {}
