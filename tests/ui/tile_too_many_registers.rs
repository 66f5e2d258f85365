use tilus::prelude::*;

// 65,535 CAS loops over 32 threads would be 2,048 per thread: far past the register file.
#[tile_kernel(threads = 32)]
fn claim(owner: GlobalTensor<u16>, claimed: GlobalTensor<i32>) {
    let b = block_idx();
    let old = atomic_cas(owner, arange(65535u16), 0, (b + 1) as u16);
    store_global(claimed, full([1], ((old == 0) as i32).sum()), offsets = [b]);
}

// The same tile on 256 threads fits (256 elements each), so it compiles.
#[tile_kernel(threads = 256)]
fn claim_wide(owner: GlobalTensor<u16>, claimed: GlobalTensor<i32>) {
    let b = block_idx();
    let old = atomic_cas(owner, arange(65535u16), 0, (b + 1) as u16);
    store_global(claimed, full([1], ((old == 0) as i32).sum()), offsets = [b]);
}

fn main() {}
