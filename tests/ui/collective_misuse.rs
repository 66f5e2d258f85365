use tilus::prelude::*;

// Misuse of the tile collectives: each is an error at the token it is about.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>, b: GlobalTensor<bool>, i: GlobalTensor<i32>) {
    let t = load_global(x.view(0, [4, 32]), offsets = [0, 0], shape = [4, 32]);
    // A reduction or scan along an axis the tile does not have.
    let s = t.sum(2);
    let c = t.cumsum(axis = -3);
    let m = t.max(axis = 5, keepdims = true);
    // Sorting `bool`s.
    let f = load_global(b, offsets = [0], shape = [32]).sort();
    // Top-k with k larger than the axis.
    let top = t.topk(40);
    // A float gather index.
    let g = load_global(x, offsets = [t.reshape([128])], shape = [128]);
    // An unknown scan operator.
    let q = load_global(i, offsets = [0], shape = [32]).scan(sub);
}

fn main() {}
