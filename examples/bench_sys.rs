//! What `scope = sys` costs, measured (a benchmark, not a test: on the emulator it only checks
//! that each protocol gives the right answer):
//!
//! * the round trip host -> kernel -> host through flags in mapped memory: a persistent
//!   one-block kernel answers each ping of the host with a pong;
//! * atomics at `gpu` and `sys` scope, relaxed and release, on device memory and on mapped
//!   host memory: a grid of blocks adding into 1024 counters;
//! * the throughput of the work queue of `examples/work_queue.rs`.
//!
//! cargo run --release --example bench_sys --features cuda    # ROUNDS=.. ITEMS=.. REPS=..

use std::sync::atomic::Ordering;
use std::time::Instant;
use tilus::prelude::*;

/// Answers ping `k` (acquired at system scope) with pong `k` (released), `rounds` times.
#[tile_kernel(threads = 32)]
fn echo(ping: GlobalTensor<i32>, pong: GlobalTensor<i32>, rounds: i32) {
    for k in 1..rounds + 1 {
        while atomic_load(ping, 0, sem = acquire, scope = sys) != k {}
        atomic_store(pong, 0, k, sem = release, scope = sys);
    }
}

macro_rules! adds {
    ($name:ident, $sem:ident, $scope:ident) => {
        /// `reps` rounds of one atomic add per thread into 1024 counters.
        #[tile_kernel(threads = 256)]
        fn $name(counters: GlobalTensor<u32>, reps: i32) {
            let at = (block_idx() * 256 + arange(256)) % 1024;
            for _r in 0..reps {
                atomic::global_scatter_add(
                    counters,
                    dim = 0,
                    indices = at,
                    values = 1u32,
                    sem = $sem,
                    scope = $scope,
                );
            }
        }
    };
}
adds!(adds_relaxed_gpu, relaxed, gpu);
adds!(adds_relaxed_sys, relaxed, sys);
adds!(adds_release_gpu, release, gpu);
adds!(adds_release_sys, release, sys);

/// The work queue's kernel, from the example itself.
#[path = "work_queue.rs"]
#[allow(dead_code)] // the example's `main` and helpers
mod work_queue;
use work_queue::drain;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn round_trip(dev: &Device, rounds: usize) -> Result<f64, tilus::Error> {
    let (ping, pong) = (dev.mapped::<i32>(1)?, dev.mapped::<i32>(1)?);
    std::thread::scope(|s| {
        let run = s.spawn(|| -> Result<(), tilus::Error> {
            echo::launch(dev, 1, &ping, &pong, rounds as i32)?;
            dev.synchronize()
        });
        let t0 = Instant::now();
        for k in 1..=rounds as i32 {
            ping.store(0, k, Ordering::Release);
            while pong.load(0, Ordering::Acquire) != k {
                if run.is_finished() {
                    // The kernel ended early: it failed; `join` below says why.
                    return run.join().expect("the launching thread").map(|()| f64::NAN);
                }
                std::hint::spin_loop();
            }
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / rounds as f64;
        run.join().expect("the launching thread")?;
        Ok(us)
    })
}

/// A launch of one of the `adds_*` kernels on device memory, and on mapped host memory.
type OnDevice = fn(&Device, u32, &GlobalTensor<u32>, i32) -> tilus::Result<()>;
type OnMapped = fn(&Device, u32, &tilus::MappedTensor<u32>, i32) -> tilus::Result<()>;

fn atomics(dev: &Device, reps: usize, grid: u32) -> Result<(), tilus::Error> {
    let kernels: [(&str, OnDevice, OnMapped); 4] = [
        (
            "relaxed, gpu",
            |d, g, t, r| adds_relaxed_gpu::launch(d, g, t, r),
            |d, g, t, r| adds_relaxed_gpu::launch(d, g, t, r),
        ),
        (
            "relaxed, sys",
            |d, g, t, r| adds_relaxed_sys::launch(d, g, t, r),
            |d, g, t, r| adds_relaxed_sys::launch(d, g, t, r),
        ),
        (
            "release, gpu",
            |d, g, t, r| adds_release_gpu::launch(d, g, t, r),
            |d, g, t, r| adds_release_gpu::launch(d, g, t, r),
        ),
        (
            "release, sys",
            |d, g, t, r| adds_release_sys::launch(d, g, t, r),
            |d, g, t, r| adds_release_sys::launch(d, g, t, r),
        ),
    ];
    let total = grid as usize * 256 * reps;
    for (what, on_device, on_mapped) in kernels {
        let device_mem = dev.zeros::<u32>(1024)?;
        let t = dev.time_ms(3, || on_device(dev, grid, &device_mem, reps as i32))?;
        let ms_dev = t.iter().cloned().fold(f64::MAX, f64::min);
        let mapped = dev.mapped::<u32>(1024)?;
        let t = dev.time_ms(3, || on_mapped(dev, grid, &mapped, reps as i32))?;
        dev.synchronize()?;
        let ms_map = t.iter().cloned().fold(f64::MAX, f64::min);
        // Thread `t` of the grid adds 1 to counter `t % 1024` in each rep of 3 runs.
        let mut want = vec![0u32; 1024];
        for t in 0..grid as usize * 256 {
            want[t % 1024] += 3 * reps as u32;
        }
        assert_eq!(device_mem.download()?, want, "{what}: device counts");
        assert_eq!(mapped.to_vec(), want, "{what}: mapped counts");
        println!(
            "atomic adds {what:13}: device memory {:9.1} M/s   mapped host memory {:9.1} M/s",
            total as f64 / ms_dev / 1e3,
            total as f64 / ms_map / 1e3
        );
    }
    Ok(())
}

fn queue(dev: &Device, n: usize) -> Result<f64, tilus::Error> {
    let items = dev.mapped::<i32>(n)?;
    let ctrl = dev.mapped::<i32>(2)?;
    let next = dev.zeros::<i32>(1)?;
    let out = dev.zeros::<i32>(n)?;
    let done = dev.zeros::<i32>(n)?;
    for k in 0..n {
        items.store(k, k as i32, Ordering::Relaxed);
    }
    let secs = std::thread::scope(|s| {
        let t0 = Instant::now();
        let run = s.spawn(|| -> Result<(), tilus::Error> {
            drain::launch(dev, 64, &items, &ctrl, &next, &out, &done)?;
            dev.synchronize()
        });
        // Publish in batches of 1024, as a producer would.
        for end in (1024..=n).step_by(1024).chain([n]) {
            ctrl.store(0, end as i32, Ordering::Release);
        }
        ctrl.store(1, 1, Ordering::Release);
        run.join().expect("the launching thread")?;
        Ok::<f64, tilus::Error>(t0.elapsed().as_secs_f64())
    })?;
    let (got, done) = (out.download()?, done.download()?);
    assert!(
        got.iter().enumerate().all(|(k, &v)| v == k as i32 * 3 + 1),
        "queue results"
    );
    assert!(done.iter().all(|&d| d == 1), "every item taken once");
    Ok(n as f64 / secs / 1e6)
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let gpu = dev.name() != "CPU emulator";
    let rounds = env("ROUNDS", if gpu { 20_000 } else { 50 });
    println!("{}", dev.name());
    println!(
        "round trip host -> kernel -> host through mapped flags: {:.2} us ({rounds} rounds)",
        round_trip(&dev, rounds)?
    );
    atomics(
        &dev,
        env("REPS", if gpu { 64 } else { 1 }),
        if gpu { 528 } else { 2 },
    )?;
    let items = env("ITEMS", if gpu { 1 << 20 } else { 3000 });
    println!(
        "work queue: {:.2} M items/s ({items} items)",
        queue(&dev, items)?
    );
    Ok(())
}
