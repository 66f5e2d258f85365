use tilus::prelude::*;

// A `let mut` initialised with an unsuffixed literal takes its type from its first typed use,
// on whichever side of an operator it stands, or as a builtin's argument: every counter here
// is an `i64` (stored into an `i64` tensor, which nothing converts to).
#[tile_kernel(threads = 32)]
fn k(x: GlobalTensor<i64>) {
    let n = x.len();
    let mut r = 0;
    while r < n {
        r += 1;
    }
    let mut s = 0;
    while n > s {
        s += 1;
    }
    let mut q = 0;
    store_global(x, full([1], q), offsets = [0]);
    q += 1;
    store_global(x, full([1], r + s + q), offsets = [1]);
}

fn main() {}
