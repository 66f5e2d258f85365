use tilus::prelude::*;

// There is no sm_101 any more (CUDA 13 renamed it sm_110): an unknown architecture is a compile
// error, not a `.target` line that ptxas rejects.
#[tile_kernel(threads = 32, target = 101)]
fn k(x: GlobalTensor<i32>) {
    atomic_add(x, 0, 1);
}

fn main() {}
