use tilus::prelude::*;

// `&&` does not short-circuit in tile code: an operand with an effect is rejected.
#[tile_kernel(threads = 128)]
fn k(flag: GlobalTensor<i32>, c: i32) {
    let go = c > 0 && atomic_load(flag, 0, order = MemoryOrder::Acquire) == 1;
    if go {
        sync();
    }
}

fn main() {}
