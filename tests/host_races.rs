//! The race checker knows the host (issue 21, item 3): in mapped memory the host is one more
//! agent. Each protocol runs on the strict emulator in both directions, correct and broken:
//! * host -> kernel: the host writes data, then publishes a flag; the kernel waits for the flag,
//!   then reads the data. Correct with `Ordering::Release` and an acquire at `scope = sys`; a
//!   race with a relaxed flag on either side, and with an acquire at `scope = gpu` (the host is
//!   outside it).
//! * kernel -> host (the mailbox): the kernel writes data, then publishes a flag; the host waits
//!   for it, then reads the data. Correct with a release at `scope = sys` and
//!   `Ordering::Acquire`; a race with a relaxed flag, or a release at `scope = gpu`.
//! * transitive: what block 0 acquired from the host at `sys` scope, block 1 sees through a
//!   `gpu`-scope release/acquire with block 0: no race.
//!
//! The kernel first says it is running (`hello`), so that every host access of the protocol
//! happens while the launch, and its race checking, is live.

mod common;

use std::sync::atomic::Ordering;
use tilus::prelude::*;
use tilus::MappedTensor;

/// Host -> kernel: wait for `flag[0]` (`$sem`, `$scope`), then copy `data` into `out`.
macro_rules! consumer {
    ($name:ident, $sem:ident, $scope:ident) => {
        #[tile_kernel(threads = 32)]
        fn $name(
            hello: GlobalTensor<i32>,
            flag: GlobalTensor<i32>,
            data: GlobalTensor<i32>,
            out: GlobalTensor<i32>,
        ) {
            atomic_store(hello, 0, 1, sem = release, scope = sys);
            let mut f = 0;
            while f == 0 {
                f = atomic_load(flag, 0, sem = $sem, scope = $scope);
            }
            let v = load_global(data, offsets = [0], shape = [16]);
            store_global(out, v, offsets = [0]);
        }
    };
}

consumer!(consume_sys, acquire, sys);
consumer!(consume_gpu, acquire, gpu);
consumer!(consume_relaxed, relaxed, sys);

type Launch4 = fn(
    &tilus::Device,
    u32,
    &MappedTensor<i32>,
    &MappedTensor<i32>,
    &MappedTensor<i32>,
    &GlobalTensor<i32>,
) -> Result<(), tilus::Error>;

/// Runs a consumer while the host posts 16 values and then the flag with `flag_order`.
fn host_to_kernel(launch: Launch4, flag_order: Ordering) -> Result<Vec<i32>, tilus::Error> {
    let dev = common::emulator();
    let hello = dev.mapped::<i32>(1)?;
    let flag = dev.mapped::<i32>(1)?;
    let data = dev.mapped::<i32>(16)?;
    let out = dev.zeros::<i32>(16)?;
    std::thread::scope(|s| {
        let run = s.spawn(|| launch(&dev, 1, &hello, &flag, &data, &out));
        while hello.load(0, Ordering::Acquire) == 0 && !run.is_finished() {
            std::thread::yield_now();
        }
        for i in 0..16 {
            data.store(i, 100 + i as i32, Ordering::Relaxed);
        }
        flag.store(0, 1, flag_order);
        run.join().expect("the launching thread")
    })?;
    out.download()
}

#[test]
fn host_to_kernel_needs_a_release_and_an_acquire_at_sys_scope() {
    let want: Vec<i32> = (100..116).collect();
    assert_eq!(
        host_to_kernel(consume_sys::launch, Ordering::Release).unwrap(),
        want
    );
    for (what, launch, order) in [
        (
            "acquire at gpu scope",
            consume_gpu::launch as Launch4,
            Ordering::Release,
        ),
        (
            "relaxed flag (host)",
            consume_sys::launch,
            Ordering::Relaxed,
        ),
        (
            "relaxed flag (kernel)",
            consume_relaxed::launch,
            Ordering::Release,
        ),
    ] {
        let e = host_to_kernel(launch, order).unwrap_err().to_string();
        assert!(
            e.contains("read-after-write race") && e.contains("after the host atomically wrote"),
            "{what}: {e}"
        );
    }
}

/// Kernel -> host: write 16 values of `data`, publish `flag[0]` (`$sem`, `$scope`), then wait
/// for the host's `ack` (so that the launch still runs while the host reads).
macro_rules! producer {
    ($name:ident, $sem:ident, $scope:ident) => {
        #[tile_kernel(threads = 32)]
        fn $name(
            hello: GlobalTensor<i32>,
            flag: GlobalTensor<i32>,
            data: GlobalTensor<i32>,
            ack: GlobalTensor<i32>,
        ) {
            atomic_store(hello, 0, 1, sem = release, scope = sys);
            store_global(data, arange(16) + 200, offsets = [0]);
            atomic_store(flag, 0, 1, sem = $sem, scope = $scope);
            let mut a = 0;
            while a == 0 {
                a = atomic_load(ack, 0, sem = acquire, scope = sys);
            }
        }
    };
}

producer!(publish_sys, release, sys);
producer!(publish_gpu, release, gpu);
producer!(publish_relaxed, relaxed, sys);

type Produce = fn(
    &tilus::Device,
    u32,
    &MappedTensor<i32>,
    &MappedTensor<i32>,
    &MappedTensor<i32>,
    &MappedTensor<i32>,
) -> Result<(), tilus::Error>;

/// Runs a producer while the host waits for the flag (acquire), reads the data, and acks.
fn kernel_to_host(launch: Produce) -> (Result<(), tilus::Error>, Vec<i32>) {
    let dev = common::emulator();
    let (hello, flag, ack) = (
        dev.mapped::<i32>(1).unwrap(),
        dev.mapped::<i32>(1).unwrap(),
        dev.mapped::<i32>(1).unwrap(),
    );
    let data = dev.mapped::<i32>(16).unwrap();
    std::thread::scope(|s| {
        let run = s.spawn(|| launch(&dev, 1, &hello, &flag, &data, &ack));
        while (hello.load(0, Ordering::Acquire) == 0 || flag.load(0, Ordering::Acquire) == 0)
            && !run.is_finished()
        {
            std::thread::yield_now();
        }
        let seen = data.to_vec();
        ack.store(0, 1, Ordering::Release);
        (run.join().expect("the launching thread"), seen)
    })
}

#[test]
fn kernel_to_host_needs_a_release_at_sys_scope() {
    let (r, seen) = kernel_to_host(publish_sys::launch);
    r.unwrap();
    assert_eq!(seen, (200..216).collect::<Vec<_>>());
    for (what, launch) in [
        ("release at gpu scope", publish_gpu::launch as Produce),
        ("relaxed flag", publish_relaxed::launch),
    ] {
        let e = kernel_to_host(launch).0.unwrap_err().to_string();
        assert!(
            e.contains("read-after-write race")
                && e.contains("race on global tensor `data` at element 0: the host atomically reads it after block 0 wrote it")
                && e.contains("scope = sys"),
            "{what}: {e}"
        );
    }
}

/// Block 0 acquires the host's flag at `sys` scope and passes it on to block 1 with a
/// `gpu`-scope release; block 1 acquires that at `gpu` scope and reads the host's data.
#[tile_kernel(threads = 32)]
fn relay(
    hello: GlobalTensor<i32>,
    flag: GlobalTensor<i32>,
    data: GlobalTensor<i32>,
    relay: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
) {
    if block_idx() == 0 {
        atomic_store(hello, 0, 1, sem = release, scope = sys);
        let mut f = 0;
        while f == 0 {
            f = atomic_load(flag, 0, sem = acquire, scope = sys);
        }
        atomic_store(relay, 0, 1, sem = release, scope = gpu);
    } else {
        let mut r = 0;
        while r == 0 {
            r = atomic_load(relay, 0, sem = acquire, scope = gpu);
        }
        store_global(
            out,
            load_global(data, offsets = [0], shape = [16]),
            offsets = [0],
        );
    }
}

#[test]
fn what_a_block_acquired_from_the_host_passes_on_at_gpu_scope() {
    let dev = common::emulator();
    let (hello, flag) = (dev.mapped::<i32>(1).unwrap(), dev.mapped::<i32>(1).unwrap());
    let data = dev.mapped::<i32>(16).unwrap();
    let (r, out) = (dev.zeros::<i32>(1).unwrap(), dev.zeros::<i32>(16).unwrap());
    std::thread::scope(|s| {
        let run = s.spawn(|| relay::launch(&dev, 2, &hello, &flag, &data, &r, &out));
        while hello.load(0, Ordering::Acquire) == 0 && !run.is_finished() {
            std::thread::yield_now();
        }
        for i in 0..16 {
            data.store(i, 7 * i as i32, Ordering::Relaxed);
        }
        flag.store(0, 1, Ordering::Release);
        run.join().expect("the launching thread").unwrap();
    });
    assert_eq!(
        out.download().unwrap(),
        (0..16).map(|i| 7 * i).collect::<Vec<_>>()
    );
}
