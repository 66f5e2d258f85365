//! A spinlock (the memory-model document's example 3) protecting a non-atomic read-modify-write:
//! every block, `rounds` times, takes the lock with an acq_rel exchange (or compare-and-swap),
//! loads 512 values with a plain `load_global`, adds 1, stores them back with a plain
//! `store_global`, and frees the lock with `atomic_store(.., order = Release)`. Lost updates would
//! show as values below `blocks * rounds`.
//!
//! cargo run --release --example locked_update                    # the CPU emulator
//! cargo run --release --example locked_update --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn locked_update(
    lock: GlobalTensor<i32>,
    data: GlobalTensor<i32>,
    fails: GlobalTensor<i32>,
    rounds: i32,
    use_cas: i32,
) {
    for k in 0..rounds {
        let mut got = 0;
        let mut tries = 0;
        loop {
            let mut old = 1;
            if use_cas == 1 {
                old = atomic_cas(
                    lock,
                    0,
                    0,
                    1,
                    order = MemoryOrder::AcqRel,
                    scope = MemoryScope::Device,
                );
            } else {
                old = atomic_xchg(
                    lock,
                    0,
                    1,
                    order = MemoryOrder::AcqRel,
                    scope = MemoryScope::Device,
                );
            }
            if old == 0 {
                got = 1;
                break;
            }
            tries += 1;
            if tries >= 4194304 {
                break;
            }
        }
        if got == 1 {
            // Critical section: plain accesses, ordered by the lock.
            let v = load_global(data, offsets = [0], shape = [512]);
            store_global(data, v + 1, offsets = [0]);
            atomic_store(
                lock,
                0,
                0,
                order = MemoryOrder::Release,
                scope = MemoryScope::Device,
            );
        } else {
            atomic_add(fails, 0, 1, order = MemoryOrder::Relaxed);
        }
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    // The emulator runs the 64 contending blocks on host threads: fewer rounds keep it quick.
    let (g, rounds) = (64usize, if dev.is_gpu() { 100usize } else { 8 });
    for (label, use_cas) in [("exchange", 0), ("compare-and-swap", 1)] {
        let lock = dev.zeros::<i32>(1)?;
        let data = dev.zeros::<i32>(512)?;
        let fails = dev.zeros::<i32>(1)?;
        let t = std::time::Instant::now();
        locked_update::launch(&dev, g as u32, &lock, &data, &fails, rounds as i32, use_cas)?;
        let got = data.download()?;
        let elapsed = t.elapsed();
        let want = (g * rounds) as i32;
        let fails = fails.download()?[0];
        if fails != 0 || got.iter().any(|&v| v != want) || lock.download()? != vec![0] {
            let lo = got.iter().min().copied().unwrap_or(0);
            eprintln!("{label}: MISMATCH: min value {lo}, expected {want} everywhere; {fails} lock timeouts");
            std::process::exit(1);
        }
        println!("{label}: {g} blocks x {rounds} locked updates of 512 values: all {want} ({elapsed:.2?})");
    }
    Ok(())
}
