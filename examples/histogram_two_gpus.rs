//! A 65,536-bin histogram of 2^29 values, half on each of two GPUs, three ways, against one GPU
//! doing all of it:
//!
//! * **(a) peer atomics**: each GPU counts its half straight into GPU 0's bins (GPU 1's atomics
//!   cross the link between the GPUs);
//! * **(b) NCCL**: each GPU counts into its own bins, then NCCL all-reduces them (with feature
//!   `nccl`, through cudarc; skipped with a printed reason where NCCL is not loadable);
//! * **(c) one peer kernel**: each GPU counts into its own bins, then a kernel on GPU 1 adds its
//!   65,536 bins into GPU 0's.
//!
//! Each way with two counting kernels: plain global atomics (every value an atomic on the
//! bins, so in (a) half of them cross the link), and the privatised cluster kernel of
//! `examples/histogram_cluster.rs` (counts in distributed shared memory, one flush of 65,536
//! atomics per cluster at the end). Every result is checked against a CPU count.
//!
//! cargo run --release --example histogram_two_gpus --features nccl    # LOG2_N=29 by default

use std::time::Instant;
use tilus::prelude::*;

/// Every value one atomic on `hist` (which may be another GPU's).
#[tile_kernel(threads = 256)]
fn count_global(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    for start in (block_idx() * 4096..values.len()).step_by(grid_dim() * 4096) {
        let v = load_global(values, offsets = [start], shape = [4096], other = -1);
        atomic::global_scatter_add(
            hist,
            dim = 0,
            indices = v,
            values = 1,
            sem = relaxed,
            scope = sys,
        );
    }
}

/// Counts in a cluster's distributed shared memory (each block of the 2 owns half the bins,
/// tiles exchanged through a staging tensor), flushed to `hist` once at the end.
#[tile_kernel(threads = 512, cluster = 2)]
fn count_cluster(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
    let counts = shared_tensor(i32, [32768]);
    let stage = cluster_shared_tensor(i32, [32768]);
    let me = cluster_rank();
    let peer = 1 - me;
    let first = me * 32768;
    for j in (0..32768).step_by(4096) {
        store_shared_scatter(counts, dim = 0, indices = j + arange(4096), values = 0);
    }
    cluster_sync();
    let n = values.len();
    let step = (grid_dim() / 2) * 16384;
    for start in (cluster_idx() * 16384..n).step_by(step) {
        let parity = (start / step) % 2;
        let bins = load_global(
            values,
            offsets = [start + me * 8192],
            shape = [8192],
            other = -1,
        );
        store_shared_scatter(
            stage,
            dim = 0,
            indices = (2 * me + parity) * 8192 + arange(8192),
            values = bins,
        );
        cluster_sync();
        let theirs = atomic_load(
            stage,
            (2 * peer + parity) * 8192 + arange(8192),
            sem = relaxed,
        );
        atomic::shared_scatter_add(counts, dim = 0, indices = bins - first, values = 1);
        atomic::shared_scatter_add(counts, dim = 0, indices = theirs - first, values = 1);
    }
    sync();
    for j in (0..32768).step_by(4096) {
        let mine = j + arange(4096);
        let c = atomic_load(counts, mine, sem = relaxed, scope = cta);
        atomic::global_scatter_add(
            hist,
            dim = 0,
            indices = first + mine,
            values = c,
            mask = c != 0,
            scope = sys,
        );
    }
}

/// `total[i] += part[i]` for the 65,536 bins (`total` on the other GPU).
#[tile_kernel(threads = 256)]
fn add_bins(part: GlobalTensor<i32>, total: GlobalTensor<i32>) {
    for start in (block_idx() * 4096..part.len()).step_by(grid_dim() * 4096) {
        let c = load_global(part, offsets = [start], shape = [4096]);
        atomic::global_add(total, c, offsets = [start], mask = c != 0, scope = sys);
    }
}

const BINS: usize = 65536;

type Count = fn(&Device, u32, &GlobalTensor<i32>, &GlobalTensor<i32>) -> tilus::Result<()>;

fn values(n: usize, seed: u64) -> Vec<i32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as i32 % BINS as i32
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (a, b) = match (Device::cuda(0), Device::cuda(1)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            println!("skipped: two GPUs are needed ({e})");
            return Ok(());
        }
    };
    a.enable_peer_access(&b)?;
    b.enable_peer_access(&a)?;
    let log2_n: u32 = std::env::var("LOG2_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(29);
    let n = 1usize << log2_n;
    let data = values(n, 0x7115);
    let mut want = vec![0i32; BINS];
    for &v in &data {
        want[v as usize] += 1;
    }
    let (lo, hi) = data.split_at(n / 2);
    let (va, vb) = (a.upload(lo)?, b.upload(hi)?);
    let all = a.upload(&data)?;
    println!("{} + {}, {n} values, {BINS} bins", a.name(), b.name());
    let kernels: [(&str, Count, u32); 2] = [
        (
            "global atomics",
            |d, g, v, h| count_global::launch(d, g, v, h),
            528,
        ),
        (
            "cluster-privatised",
            |d, g, v, h| count_cluster::launch(d, g, v, h),
            264,
        ),
    ];
    for (kname, count, grid) in kernels {
        let time = |f: &mut dyn FnMut() -> tilus::Result<()>| -> tilus::Result<f64> {
            f()?; // warm up (and load the modules)
            let t0 = Instant::now();
            let reps = 5;
            for _ in 0..reps {
                f()?;
            }
            Ok(t0.elapsed().as_secs_f64() * 1e3 / reps as f64)
        };
        // One GPU, all the values.
        let h1 = a.zeros::<i32>(BINS)?;
        let one = time(&mut || {
            a.copy(&a.zeros::<i32>(BINS)?, &h1)?;
            count(&a, grid, &all, &h1)?;
            a.synchronize()
        })?;
        assert_eq!(h1.download()?, want, "{kname}: one GPU");
        // (a) both into GPU 0's bins.
        let h = a.zeros::<i32>(BINS)?;
        let peer = time(&mut || {
            a.copy(&a.zeros::<i32>(BINS)?, &h)?;
            count(&a, grid, &va, &h)?;
            count(&b, grid, &vb, &h)?;
            a.synchronize()?;
            b.synchronize()
        })?;
        assert_eq!(h.download()?, want, "{kname}: (a)");
        // (c) local bins, then GPU 1 adds its bins into GPU 0's.
        let (ha, hb) = (a.zeros::<i32>(BINS)?, b.zeros::<i32>(BINS)?);
        let local_then_add = time(&mut || {
            a.copy(&a.zeros::<i32>(BINS)?, &ha)?;
            b.copy(&b.zeros::<i32>(BINS)?, &hb)?;
            count(&a, grid, &va, &ha)?;
            count(&b, grid, &vb, &hb)?;
            a.synchronize()?;
            add_bins::launch(&b, 16, &hb, &ha)?;
            b.synchronize()
        })?;
        assert_eq!(ha.download()?, want, "{kname}: (c)");
        let nccl = nccl_all_reduce(&a, &b, &va, &vb, count, grid, &want, &time)?;
        println!(
            "{kname:19}: one GPU {one:8.3} ms | (a) peer atomics {peer:8.3} ms ({:.2}x) | (b) NCCL {} | (c) one peer kernel {local_then_add:8.3} ms ({:.2}x)",
            one / peer,
            nccl.map_or("not run".to_string(), |ms| format!("{ms:8.3} ms ({:.2}x)", one / ms)),
            one / local_then_add
        );
    }
    Ok(())
}

/// (b): local bins, then NCCL's all-reduce of the two (sum, in place, on each GPU's default
/// stream). `None` without feature `nccl` or where NCCL cannot be loaded.
#[allow(clippy::too_many_arguments)]
/// Times a closure (median milliseconds of several runs).
type Timer = dyn Fn(&mut dyn FnMut() -> tilus::Result<()>) -> tilus::Result<f64>;

#[allow(clippy::too_many_arguments)]
fn nccl_all_reduce(
    a: &Device,
    b: &Device,
    va: &GlobalTensor<i32>,
    vb: &GlobalTensor<i32>,
    count: Count,
    grid: u32,
    want: &[i32],
    time: &Timer,
) -> Result<Option<f64>, Box<dyn std::error::Error>> {
    #[cfg(feature = "nccl")]
    {
        use tilus::cudarc::nccl::{result, sys};
        // SAFETY: a query of the dynamic loader only.
        if !unsafe { sys::is_culib_present() } {
            println!("(b) skipped: libnccl.so cannot be loaded (put it on LD_LIBRARY_PATH)");
            return Ok(None);
        }
        let mut comms = [std::ptr::null_mut(); 2];
        let devs = [0i32, 1];
        // SAFETY: two out-slots for the two communicators of devices 0 and 1.
        unsafe { result::comm_init_all(comms.as_mut_ptr(), 2, devs.as_ptr()) }
            .map_err(|e| format!("{e:?}"))?;
        let (ha, hb) = (a.zeros::<i32>(BINS)?, b.zeros::<i32>(BINS)?);
        let ms = time(&mut || {
            a.copy(&a.zeros::<i32>(BINS)?, &ha)?;
            b.copy(&b.zeros::<i32>(BINS)?, &hb)?;
            count(a, grid, va, &ha)?;
            count(b, grid, vb, &hb)?;
            result::group_start().expect("ncclGroupStart");
            for (comm, h) in comms.iter().zip([&ha, &hb]) {
                let p = h.device_ptr().expect("a GPU tensor") as *mut std::ffi::c_void;
                // SAFETY: `p` holds BINS i32 on the communicator's device, alive until the
                // synchronisations below; the null stream is that device's legacy default
                // stream, where the counting kernels ran.
                unsafe {
                    result::all_reduce(
                        p,
                        p,
                        BINS,
                        sys::ncclDataType_t::ncclInt32,
                        sys::ncclRedOp_t::ncclSum,
                        *comm,
                        std::ptr::null_mut(),
                    )
                }
                .expect("ncclAllReduce");
            }
            result::group_end().expect("ncclGroupEnd");
            a.synchronize()?;
            b.synchronize()
        })?;
        assert_eq!(ha.download()?, want, "(b) GPU 0");
        assert_eq!(hb.download()?, want, "(b) GPU 1");
        for c in comms {
            // SAFETY: each communicator once, after its work.
            let _ = unsafe { result::comm_destroy(c) };
        }
        Ok(Some(ms))
    }
    #[cfg(not(feature = "nccl"))]
    {
        let _ = (a, b, va, vb, count, grid, want, time);
        println!("(b) skipped: built without feature `nccl`");
        Ok(None)
    }
}
