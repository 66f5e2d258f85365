use tilus::prelude::*;

// The element type is the problem, not the order or the scope: the error points at the call
// even with `sem` and a cluster scope given (it once pointed at `sem = ..`).
#[tile_kernel(threads = 32)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(bool, [32]);
    atomic::shared_or(s, values = full([32], true), sem = relaxed, scope = "cluster");
    store_global(x, full([1], 0), offsets = [0]);
}

fn main() {}
