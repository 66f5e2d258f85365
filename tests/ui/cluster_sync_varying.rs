use tilus::prelude::*;

// A cluster barrier that some blocks of the cluster skip (or take more often) pairs with the
// wrong barrier of their peers: every such `cluster_sync()` is an error.
#[tile_kernel(threads = 32, cluster = 2)]
fn k(flags: GlobalTensor<i32>, n: i32) {
    let t = cluster_shared_tensor(i32, [64]);
    cluster_sync();
    if cluster_rank() == 0 {
        cluster_sync();
        atomic_add(t, 40, 1);
    }
    for _i in 0..block_idx() {
        cluster_sync();
    }
    while atomic_load(flags, 0) == 0 {
        cluster_sync();
    }
    for i in 0..n {
        if atomic_load(flags, i) != 0 {
            break;
        }
        cluster_sync();
    }
    // A variable is cluster-uniform only if every assignment to it is.
    let mut again = n > 3;
    if n > 5 {
        again = block_idx() % 2 == 0;
    }
    if again {
        cluster_sync();
    }
}

fn main() {}
