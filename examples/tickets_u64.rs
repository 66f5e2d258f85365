//! A `u64` ticket dispenser: every request takes the next number of a global counter, as a
//! sequence-number or ID allocator does. A 32-bit counter wraps after 2^32 tickets (about a
//! second of a GPU's atomics); a 64-bit one does not.
//!
//! Two ways to take tickets, both in one kernel:
//! * one per element: an indexed `atomic_add` whose index tile is all zeros, so every thread's
//!   elements hit the same counter and each gets the value before its own increment;
//! * a batch per block: one scalar `atomic_add` of the batch size, then the block numbers its
//!   batch itself (one atomic instead of 256: how allocators avoid contention).
//!
//! The counter starts just below 2^32, so the tickets cross it. Checks that every ticket was
//! handed out exactly once, that together they are the contiguous range from the start, and
//! that the counter ends past the last ticket.
//!
//! cargo run --release --example tickets_u64                    # the CPU emulator
//! cargo run --release --example tickets_u64 --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// Block `b` writes its 128 single tickets to `singles[128 b ..]` and its batch of 256 to
/// `batches[256 b ..]`; `counter[0]` is the dispenser.
#[tile_kernel(threads = 128)]
fn take_tickets(
    counter: GlobalTensor<u64>,
    singles: GlobalTensor<u64>,
    batches: GlobalTensor<u64>,
) {
    // One ticket per element: 128 atomics on one address, each returning the old count.
    // Relaxed: a ticket's value is the whole message, nothing else is published with it.
    let mine = atomic_add(counter, zeros([128]), 1, order = MemoryOrder::Relaxed);
    store_global(singles, mine, offsets = [block_idx() * 128]);
    // A batch of 256 with one atomic: the result of a scalar-indexed atomic is block-uniform.
    let first = atomic_add(counter, 0, 256u64, order = MemoryOrder::Relaxed);
    store_global(batches, arange(256) + first, offsets = [block_idx() * 256]);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    // An odd block count; random start just below 2^32 so that the tickets cross it.
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    let blocks: u64 = if dev.is_gpu() { 4099 } else { 301 };
    let total = blocks * (128 + 256);
    let start = (1u64 << 32) - total / 2 - seed % 1000;

    let counter = dev.upload(&[start])?;
    // Poisoned outputs: a ticket slot left unwritten holds u64::MAX, which is never a ticket.
    let singles = dev.full(blocks as usize * 128, u64::MAX)?;
    let batches = dev.full(blocks as usize * 256, u64::MAX)?;
    take_tickets::launch(&dev, blocks as u32, &counter, &singles, &batches)?;

    let end = counter.download()?[0];
    let batch = batches.download()?;
    // Each block numbered its batch itself: 256 consecutive tickets from the one it took.
    let batches_ok = batch
        .chunks(256)
        .all(|c| c.iter().zip(c[0]..).all(|(&t, want)| t == want));
    let mut tickets = singles.download()?;
    tickets.extend(batch);
    tickets.sort_unstable();
    // The CPU reference: exactly the numbers start, start + 1, .., start + total - 1, once each.
    let ok = batches_ok
        && end == start + total
        && tickets.len() as u64 == total
        && tickets.iter().zip(start..).all(|(&t, want)| t == want);
    if !ok {
        let dup = tickets.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]);
        eprintln!(
            "WRONG: batches consecutive: {batches_ok}, counter {start} -> {end} (want {}), duplicate ticket {dup:?}, smallest {:?}, \
             largest {:?}",
            start + total,
            tickets.first(),
            tickets.last()
        );
        std::process::exit(1);
    }
    println!(
        "{blocks} blocks took {total} u64 tickets ({} single, {} in batches of 256) from {start} \
         to {}: each once, crossing 2^32 = {}",
        blocks * 128,
        blocks * 256,
        end - 1,
        1u64 << 32
    );
    Ok(())
}
