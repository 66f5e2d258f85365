//! `#[tile_kernel(min_blocks_per_sm = n)]`: the register budget that lets `n` blocks share an
//! SM (PTX `.minnctapersm`, CUDA's `__launch_bounds__` minimum). Without it ptxas may spend
//! registers freely, and where shared memory would let several blocks share an SM, registers
//! can become the limit instead (measured on an H100: the 65,536-bin cluster histogram of
//! `examples/histogram_cluster.rs` went from 3 to 2 blocks per SM when its flush loop grew a
//! vector path, and lost 18% of its speed).

mod common;

use common::{backends, Rng};
use tilus::prelude::*;

/// A 16,384-bin histogram over a cluster of 4 (64 KiB of shared memory per block, so three
/// blocks fit an SM), counted remotely and flushed with vector loads.
macro_rules! spread_histogram {
    ($name:ident $(, $min:literal)?) => {
        #[tile_kernel(threads = 512, cluster = 4 $(, min_blocks_per_sm = $min)?)]
        fn $name(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
            let counts = cluster_shared_tensor(i32, [65536]);
            let first = cluster_rank() * 16384;
            for j in (0..16384).step_by(4096) {
                store_shared_scatter(counts, dim = 0, indices = first + j + arange(4096), values = 0);
            }
            cluster_sync();
            let n = values.len();
            for start in (block_idx() * 8192..n).step_by(grid_dim() * 8192) {
                let bins = load_global(values, offsets = [start], shape = [8192], other = -1);
                atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
            }
            cluster_sync();
            for j in (0..16384).step_by(4096) {
                let mine = first + j + arange(4096);
                let c = atomic_load(counts, mine, sem = relaxed);
                atomic::global_scatter_add(hist, dim = 0, indices = mine, values = c, mask = c != 0);
            }
        }
    };
}

spread_histogram!(free);
spread_histogram!(three_per_sm, 3);

#[test]
fn the_hint_is_in_the_ptx_and_bounds_the_registers() {
    assert!(three_per_sm::PTX.contains(".maxntid 512, 1, 1\n.minnctapersm 3\n"));
    assert!(!free::PTX.contains(".minnctapersm"));
    // Three blocks of 512 threads share 65,536 registers: at most 42 per thread.
    if let Some((regs, spills)) = tilus_testkit::ptxas::registers(three_per_sm::PTX, 90).unwrap() {
        assert!(regs <= 42, "{regs} registers");
        assert_eq!(spills, 0, "spills");
        let (free_regs, _) = tilus_testkit::ptxas::registers(free::PTX, 90)
            .unwrap()
            .unwrap();
        eprintln!("registers: {free_regs} without the hint, {regs} with it");
    }
}

#[test]
fn the_hinted_kernel_counts_the_same() {
    let mut rng = Rng::from_env_or_clock();
    let data: Vec<i32> = (0..100_003).map(|_| rng.range(-3, 65536)).collect();
    let mut want = vec![0i32; 65536];
    for &v in &data {
        if v >= 0 {
            want[v as usize] += 1;
        }
    }
    for dev in backends() {
        let values = dev.upload(&data).unwrap();
        for launch in [free::launch, three_per_sm::launch] {
            let hist = dev.zeros::<i32>(65536).unwrap();
            launch(&dev, 8, &values, &hist).unwrap();
            assert_eq!(hist.download().unwrap(), want, "{dev:?}");
        }
    }
}
