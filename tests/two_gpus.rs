//! Two GPUs of one host: kernels on one that use the other's memory through peer access, with
//! `sys` and `gpu` scope atomics, and a producer/consumer pair across the two with
//! release/acquire flags in each other's memory. With fewer than two GPUs (or the emulator)
//! every test here prints why it is skipped and passes; `TILUS_REQUIRE_GPUS=2` makes that a
//! failure (the two-GPU runner sets it).

mod common;

use tilus::prelude::*;

/// GPU 0 and GPU 1, each allowed to access the other's memory, or `None` with the reason
/// printed.
fn two_gpus() -> Option<(Device, Device)> {
    let required = std::env::var("TILUS_REQUIRE_GPUS").is_ok_and(|v| v.trim() == "2");
    let skip = |why: String| {
        assert!(!required, "TILUS_REQUIRE_GPUS=2 but {why}");
        eprintln!("skipped: {why}");
        None
    };
    #[cfg(feature = "cuda")]
    {
        let (a, b) = match (Device::cuda(0), Device::cuda(1)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return skip(format!("two GPUs are needed: {e}")),
        };
        if let Err(e) = a
            .enable_peer_access(&b)
            .and_then(|()| b.enable_peer_access(&a))
        {
            return skip(format!(
                "the two GPUs cannot access each other's memory: {e}"
            ));
        }
        Some((a, b))
    }
    #[cfg(not(feature = "cuda"))]
    skip("built without `--features cuda`".into())
}

macro_rules! peer_adds {
    ($name:ident, $scope:ident) => {
        /// Each thread adds 1 to bin `(start + t) % 1024` of `bins` (on the other GPU).
        #[tile_kernel(threads = 256)]
        fn $name(bins: GlobalTensor<u32>, n: i32) {
            for start in (block_idx() * 256..n).step_by(grid_dim() * 256) {
                let i = start + arange(256);
                atomic::global_scatter_add(
                    bins,
                    dim = 0,
                    indices = i % 1024,
                    values = 1u32,
                    mask = i < n,
                    sem = relaxed,
                    scope = $scope,
                );
            }
        }
    };
}
peer_adds!(peer_adds_sys, sys);
peer_adds!(peer_adds_gpu, gpu);

#[test]
fn atomics_on_a_peer_gpus_memory_are_exact() {
    let Some((a, b)) = two_gpus() else { return };
    let n = 1_000_003i32;
    let mut want = vec![0u32; 1024];
    for i in 0..n as usize {
        want[i % 1024] += 1;
    }
    for (dst, src) in [(&a, &b), (&b, &a)] {
        let bins = src.zeros::<u32>(1024).unwrap();
        peer_adds_sys::launch(dst, 264, &bins, n).unwrap();
        peer_adds_gpu::launch(dst, 264, &bins, n).unwrap();
        dst.synchronize().unwrap();
        let twice: Vec<u32> = want.iter().map(|w| 2 * w).collect();
        assert_eq!(
            bins.download().unwrap(),
            twice,
            "{} into {}",
            dst.name(),
            src.name()
        );
    }
}

/// Writes `data` (on the other GPU), then each block releases its part at system scope.
#[tile_kernel(threads = 128)]
fn produce(data: GlobalTensor<i32>, arrived: GlobalTensor<u32>) {
    let start = block_idx() * 1024;
    store_global(data, arange(1024) * 7 + start, offsets = [start]);
    atomic::global_add(arrived, ones([1]), sem = release, scope = sys);
}

/// Waits (acquire, system scope) until `blocks` producers arrived, then copies `data` (its own
/// GPU's memory) to `out`.
#[tile_kernel(threads = 128)]
fn consume(
    data: GlobalTensor<i32>,
    arrived: GlobalTensor<u32>,
    out: GlobalTensor<i32>,
    blocks: u32,
) {
    while atomic_load(arrived, 0, sem = acquire, scope = sys) < blocks {}
    for start in (block_idx() * 1024..data.len()).step_by(grid_dim() * 1024) {
        let v = load_global(data, offsets = [start], shape = [1024]);
        store_global(out, v, offsets = [start]);
    }
}

#[test]
fn a_producer_on_one_gpu_hands_data_to_a_consumer_on_the_other() {
    let Some((a, b)) = two_gpus() else { return };
    let blocks = 96u32;
    let data = b.full(blocks as usize * 1024, -1i32).unwrap();
    let arrived = b.zeros::<u32>(1).unwrap();
    let out = b.full(blocks as usize * 1024, -2i32).unwrap();
    // The consumer first, spinning on GPU 1; then the producer on GPU 0, which releases it.
    consume::launch(&b, 4, &data, &arrived, &out, blocks).unwrap();
    produce::launch(&a, blocks, &data, &arrived).unwrap();
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    let want: Vec<i32> = (0..blocks as i32 * 1024)
        .map(|i| (i % 1024) * 7 + (i / 1024) * 1024)
        .collect();
    assert_eq!(out.download().unwrap(), want);
}
