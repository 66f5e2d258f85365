// Cluster builtins need a declared cluster; a distributed tensor's rows must split evenly over
// the cluster; its atomics must not be block-scoped (other blocks update it too).
use tilus::prelude::*;

#[tile_kernel(threads = 32)]
fn no_cluster(out: GlobalTensor<i32>) {
    store_global(out, arange(32) + cluster_rank(), offsets = [0]);
}

#[tile_kernel(threads = 32, cluster = 4)]
fn uneven(out: GlobalTensor<i32>) {
    let t = cluster_shared_tensor(i32, [30]);
    cluster_sync();
    store_global(out, atomic_load(t, arange(30)), offsets = [0]);
}

#[tile_kernel(threads = 32, cluster = 2)]
fn block_scoped(out: GlobalTensor<i32>) {
    let t = cluster_shared_tensor(i32, [64]);
    cluster_sync();
    atomic::shared_scatter_add(t, dim = 0, indices = arange(32), values = 1, scope = cta);
    store_global(out, atomic_load(t, arange(32)), offsets = [0]);
}

fn main() {}
