// Clusters are sm_90: an explicit lower target is a contradiction, reported at the cluster.
use tilus::prelude::*;

#[tile_kernel(threads = 32, cluster = 2, target = 80)]
fn old_gpu(out: GlobalTensor<i32>) {
    store_global(out, arange(32) + cluster_size(), offsets = [0]);
}

fn main() {}
