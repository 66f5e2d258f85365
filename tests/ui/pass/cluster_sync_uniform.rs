use tilus::prelude::*;

// Conditions and loop bounds every block of a cluster agrees on: parameters, lengths,
// `grid_dim()`, `cluster_idx()`, `cluster_size()` and what is computed from them.
#[tile_kernel(threads = 32, cluster = 2)]
fn k(x: GlobalTensor<i32>, n: i32) {
    let t = cluster_shared_tensor(i32, [64]);
    cluster_sync();
    if n > 0 && x.len() > 10 {
        cluster_sync();
    }
    for i in 0..grid_dim() / cluster_size() {
        if i % 2 == cluster_idx() % 2 {
            cluster_sync();
        }
    }
    let mut rounds = n;
    while rounds > 0 {
        atomic_add(t, cluster_rank() * 32 + arange(32), 1);
        cluster_sync();
        rounds -= 1;
    }
}

fn main() {}
