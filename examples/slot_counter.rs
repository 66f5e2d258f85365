//! An atomic counter handing out unique slots (the memory-model document's example 2): each block
//! repeatedly takes `slot = atomic_add(counter, 0, 1)` (a block-uniform scalar: all-scalar
//! indices), writes 8 values at that slot, publishes them with a release store of `ready[slot]`,
//! then acquire-waits for slot - 1 and combines it with its own data. The host checks that every
//! slot was used exactly once and that every combination saw complete data.
//!
//! cargo run --release --example slot_counter                    # the CPU emulator
//! cargo run --release --example slot_counter --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn take_slots(
    counter: GlobalTensor<i32>,
    owner: GlobalTensor<i32>,
    data: GlobalTensor<i32>,
    ready: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    rounds: i32,
) {
    for k in 0..rounds {
        let slot = atomic_add(counter, 0, 1);
        let tag = block_idx() * 1000 + k;
        store_global(owner, full([1], tag), offsets = [slot]);
        let mine = full([8], tag * 8) + arange(8);
        store_global(data, mine, offsets = [slot * 8]);
        atomic_store(
            ready,
            slot,
            1,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
        if slot > 0 {
            // Slot - 1 was handed out before ours, to a block that is running: it will publish.
            let mut r = 0;
            let mut spins = 0;
            while r == 0 && spins < 4000000 {
                r = atomic_load(
                    ready,
                    slot - 1,
                    order = MemoryOrder::Acquire,
                    scope = MemoryScope::Device,
                );
                spins += 1;
            }
            let prev = load_global(data, offsets = [(slot - 1) * 8], shape = [8]);
            store_global(out, mine + prev, offsets = [slot * 8]);
        }
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let (g, rounds) = (64usize, 50usize);
    let n = g * rounds;
    let counter = dev.zeros::<i32>(1)?;
    let owner = dev.full::<i32>(n, -1)?;
    let data = dev.full::<i32>(n * 8, -1)?;
    let ready = dev.zeros::<i32>(n)?;
    let out = dev.full::<i32>(n * 8, -1)?;
    let t = std::time::Instant::now();
    take_slots::launch(
        &dev,
        g as u32,
        &counter,
        &owner,
        &data,
        &ready,
        &out,
        rounds as i32,
    )?;
    let owner = owner.download()?;
    let elapsed = t.elapsed();
    let fail = |msg: String| -> ! {
        eprintln!("MISMATCH: {msg}");
        std::process::exit(1)
    };
    if counter.download()? != vec![n as i32] {
        fail(format!(
            "counter is {:?}, expected {n}",
            counter.download()?
        ));
    }
    let mut tags = owner.clone();
    tags.sort();
    let mut want: Vec<i32> = (0..g)
        .flat_map(|b| (0..rounds).map(move |k| (b * 1000 + k) as i32))
        .collect();
    want.sort();
    if tags != want {
        fail("some slot was taken twice or never".into());
    }
    let out = out.download()?;
    for s in 1..n {
        for j in 0..8 {
            let want = (owner[s] + owner[s - 1]) * 8 + 2 * j as i32;
            if out[s * 8 + j] != want {
                fail(format!("slot {s} combined stale data of slot {}", s - 1));
            }
        }
    }
    let hops = owner
        .windows(2)
        .filter(|w| w[0] / 1000 != w[1] / 1000)
        .count();
    println!("{g} blocks x {rounds} rounds: {n} unique slots, every chained read complete ({elapsed:.2?}); consecutive slots changed block {hops} times");
    Ok(())
}
