use tilus::prelude::*;

// Two flags in one buffer, at disjoint constant positions, may use different scopes: the
// scope-mismatch check only compares accesses that can touch the same elements.
#[tile_kernel(threads = 128)]
fn k(flags: GlobalTensor<i32>) {
    let block_flags = flags.view(0, [4]);
    let device_flags = flags.view(4, [4]);
    atomic_store(block_flags, 0, 1, order = MemoryOrder::Release, scope = MemoryScope::Block);
    let v = atomic_load(device_flags, 0, order = MemoryOrder::Acquire, scope = MemoryScope::Device);
    store_global(flags, full([1], v), offsets = [8]);
}

// Raw identifiers are fine: the PTX entry is `loop`.
#[tile_kernel(threads = 32)]
fn r#loop(x: GlobalTensor<i32>) {
    store_global(x, arange(32), offsets = [0]);
}

fn main() {
    assert!(r#loop::PTX.contains(".entry tk_loop("));
}
