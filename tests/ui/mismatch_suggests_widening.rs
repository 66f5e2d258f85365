use tilus::prelude::*;

// An `i32` compared with an `i64`: the help widens the `i32` (narrowing the length would
// truncate lengths over 2^31).
#[tile_kernel(threads = 32)]
fn k(x: GlobalTensor<i64>, limit: i32) {
    let n = x.len();
    if limit < n {
        store_global(x, full([1], n), offsets = [0]);
    }
}

fn main() {}
