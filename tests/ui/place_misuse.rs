use tilus::prelude::*;

// Misuse of `place`: each is an error at the token it is about.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>, d: GlobalTensor<u8>, s: GlobalTensor<i64>) {
    let t = load_global(x, offsets = [0], shape = [128]);
    let digits = load_global(d, offsets = [0], shape = [128]);
    let starts = digits.histogram(256).cumsum(0, exclusive = true);
    // Float keys.
    let a = t.place(starts);
    // Starts that are not `i32`.
    let b = digits.place(load_global(s, offsets = [0], shape = [256]));
    // Starts of rank 2.
    let c = digits.place(starts.reshape([16, 16]));
}

fn main() {}
