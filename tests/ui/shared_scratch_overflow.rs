use tilus::prelude::*;

// 200 000 bytes of shared tensors fit, but the broadcast's scratch space pushes the kernel past
// the 227 KiB a block can have: reported at build time, not at every launch.
#[tile_kernel(threads = 256)]
fn k(x: GlobalTensor<i32>) {
    let s = shared_tensor(i32, [50000]);
    store_shared(s, 0);
    let wide = arange(16384).reshape([1, 16384]).broadcast_to([2, 16384]);
    store_global(x.view(0, [2, 16384]), wide, offsets = [0, 0]);
}

fn main() {}
