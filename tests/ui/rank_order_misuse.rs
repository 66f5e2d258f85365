use tilus::prelude::*;

// Misuse of the `order` of `equal_rank` and `place`: each is an error at the token it is about.
#[tile_kernel(threads = 256)]
fn k(d: GlobalTensor<u8>) {
    let digits = load_global(d, offsets = [0], shape = [512]).reshape([2, 8, 32]);
    let starts = (digits.reshape([512]) as i32).histogram(256);
    // An axis twice.
    let a = digits.equal_rank(order = [1, 1, 2]);
    // Too few axes.
    let b = digits.place(starts, order = [1, 0]);
    // An axis the tile does not have.
    let c = digits.place(starts, order = [1, 0, 3]);
    // Not a literal.
    let n = 2;
    let e = digits.equal_rank(order = [n, 0, 1]);
}

fn main() {}
