//! Producer/consumer through a flag, across the blocks of ONE launch (the memory-model
//! document's example 1, without the second launch): even blocks write 1024 values and publish
//! them with `atomic_store(.., order = Release, scope = Device)`; odd block `b` waits for
//! producer `g - 1 - b` (so block 1 waits for a later block and block g - 1 for block 0) with a
//! bounded `while` on `atomic_load(.., order = Acquire, scope = Device)`, then reads the data,
//! which must be complete. The grid is small (32 blocks) so every block is resident at once.
//!
//! cargo run --release --example producer_consumer                    # the CPU emulator
//! cargo run --release --example producer_consumer --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

const SPIN_LIMIT: i32 = 4_000_000;

#[tile_kernel(threads = 256)]
fn producer_consumer(
    data: GlobalTensor<i32>,
    flag: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    spins: GlobalTensor<i32>,
) {
    let b = block_idx();
    let g = grid_dim();
    if b % 2 == 0 {
        // Producer: scratch writes first (a consumer that read too early would see them), then
        // the real data, then the release store of the flag.
        for k in 0..16 {
            store_global(data, full([1024], -k), offsets = [b * 1024]);
        }
        store_global(data, arange(1024) + b * 10000, offsets = [b * 1024]);
        atomic_store(
            flag,
            b,
            1,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
    } else {
        // Consumer: acquire spin (bounded), then plain loads.
        let p = g - 1 - b;
        let mut f = atomic_load(
            flag,
            p,
            order = MemoryOrder::Acquire,
            scope = MemoryScope::Device,
        );
        let mut n = 0;
        while f == 0 && n < 4000000 {
            f = atomic_load(
                flag,
                p,
                order = MemoryOrder::Acquire,
                scope = MemoryScope::Device,
            );
            n += 1;
        }
        let d = load_global(data, offsets = [p * 1024], shape = [1024]);
        store_global(out, d, offsets = [b * 1024]);
        // -1: gave up waiting.
        store_global(spins, full([1], select(f == 1, n, -1)), offsets = [b]);
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let g = 32usize;
    for round in 0..5 {
        let data = dev.full::<i32>(g * 1024, -1)?;
        let flag = dev.zeros::<i32>(g)?;
        let out = dev.full::<i32>(g * 1024, -2)?;
        let spins = dev.zeros::<i32>(g)?;
        let t = std::time::Instant::now();
        producer_consumer::launch(&dev, g as u32, &data, &flag, &out, &spins)?;
        let out = out.download()?;
        let spins = spins.download()?;
        let elapsed = t.elapsed();
        for b in (1..g).step_by(2) {
            let p = g - 1 - b;
            if spins[b] < 0 {
                eprintln!("round {round}: consumer {b} gave up waiting for producer {p} after {SPIN_LIMIT} spins");
                std::process::exit(1);
            }
            for j in 0..1024 {
                let want = (p * 10000 + j) as i32;
                if out[b * 1024 + j] != want {
                    eprintln!("round {round}: consumer {b} read {} at {j} of producer {p}'s data, expected {want}", out[b * 1024 + j]);
                    std::process::exit(1);
                }
            }
        }
        let waited: Vec<i32> = (1..g).step_by(2).map(|b| spins[b]).collect();
        println!("round {round}: {} consumers saw complete data ({elapsed:.2?}); spins per consumer: {waited:?}", g / 2);
    }
    Ok(())
}
