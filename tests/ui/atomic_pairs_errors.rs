use tilus::prelude::*;

// 128-bit atomics work on pairs of 64-bit elements along an even last axis, with cas and exch.
#[tile_kernel(threads = 32)]
fn narrow(x: GlobalTensor<i32>) {
    atomic::global_cas128(x, compare = 0, values = full([64], 1));
}

#[tile_kernel(threads = 32)]
fn not_cas_or_exch(x: GlobalTensor<u64>) {
    atomic::global_add128(x, values = full([64], 1u64));
}

#[tile_kernel(threads = 32)]
fn odd_last_axis(x: GlobalTensor<u64>) {
    atomic::global_exch128(x.view(0, [8, 3]), values = full([8, 3], 1u64));
}

#[tile_kernel(threads = 32, cluster = 2)]
fn distributed(x: GlobalTensor<u64>) {
    let s = cluster_shared_tensor(u64, [128]);
    atomic::shared_exch128(s, values = full([64], 1u64));
    store_global(x, full([1], 0u64), offsets = [0]);
}

// The indexed form: pairs along the operation's last axis, which the indices make odd here.
#[tile_kernel(threads = 32)]
fn indexed_odd(x: GlobalTensor<u64>) {
    let old = atomic_xchg128(x, arange(3), 1u64);
    store_global(x, old, offsets = [8]);
}

fn main() {}
