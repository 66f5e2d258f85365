//! Ticket numbers: each block draws one ticket with `atomic::global_add` and uses its output (the
//! pre-add value). Every block gets a distinct ticket and all tickets 0..grid appear once; the
//! arrival order is recorded by ticket.
//!
//! cargo run --example tickets                    # the CPU emulator
//! cargo run --example tickets --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// `ticket_of[block] = t` and `block_at[t] = block`, where `t` is the counter before this
/// block's increment.
#[tile_kernel(threads = 256)]
fn draw_ticket(
    counter: GlobalTensor<i32>,
    ticket_of: GlobalTensor<i32>,
    block_at: GlobalTensor<i32>,
) {
    let b = block_idx();
    let t = atomic::global_add(counter, ones([1])).item();
    store_global(ticket_of, full([1], t), offsets = [b]);
    store_global(block_at, full([1], b), offsets = [t]);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    for grid in [1u32, 7, 1000, 4097] {
        let counter = dev.zeros::<i32>(1)?;
        let ticket_of = dev.full(grid as usize, -1)?;
        let block_at = dev.full(grid as usize, -1)?;
        draw_ticket::launch(&dev, grid, &counter, &ticket_of, &block_at)?;
        let tickets = ticket_of.download()?;
        let blocks = block_at.download()?;
        let mut sorted = tickets.clone();
        sorted.sort_unstable();
        let all: Vec<i32> = (0..grid as i32).collect();
        let consistent = tickets
            .iter()
            .enumerate()
            .all(|(b, &t)| t >= 0 && blocks[t as usize] == b as i32);
        if sorted != all || !consistent || counter.download()? != [grid as i32] {
            let missing = all.iter().find(|t| sorted.binary_search(t).is_err());
            eprintln!("MISMATCH for grid {grid}: tickets are not a permutation of 0..{grid} (first missing: {missing:?})");
            std::process::exit(1);
        }
        let first: Vec<i32> = blocks.iter().take(8).copied().collect();
        println!("grid {grid}: {grid} distinct tickets 0..{grid}; first blocks served: {first:?}");
    }
    Ok(())
}
