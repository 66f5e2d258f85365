//! Double buffering across launches (the memory-model document's example 4): a switch flag says
//! which buffer holds the current data; each launch reads it with an acquire load, computes
//! `next = 2 * current + iteration` from that buffer into the other one, and the LAST block to
//! finish (an acq_rel counter) flips the flag with a release store. (The document's sketch flips
//! it from block 0 as soon as block 0 is done; a slower block of the same launch could then read
//! the new value and go the wrong way: the counter makes the flip wait for every block.)
//! After N launches the host compares both buffers with a CPU simulation.
//!
//! cargo run --release --example double_buffer                    # the CPU emulator
//! cargo run --release --example double_buffer --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn step(
    a: GlobalTensor<i32>,
    b: GlobalTensor<i32>,
    switch: GlobalTensor<i32>,
    done: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    iteration: i32,
) {
    let cur = atomic_load(
        switch,
        0,
        order = MemoryOrder::Acquire,
        scope = MemoryScope::Device,
    );
    let off = block_idx() * 1024;
    if cur == 0 {
        let r = load_global(a, offsets = [off], shape = [1024]) * 2 + iteration;
        store_global(b, r, offsets = [off]);
        store_global(out, r, offsets = [off]);
    } else {
        let r = load_global(b, offsets = [off], shape = [1024]) * 2 + iteration;
        store_global(a, r, offsets = [off]);
        store_global(out, r, offsets = [off]);
    }
    let finished = atomic_add(
        done,
        0,
        1,
        order = MemoryOrder::AcqRel,
        scope = MemoryScope::Device,
    );
    if finished == grid_dim() - 1 {
        atomic_store(
            done,
            0,
            0,
            order = MemoryOrder::Relaxed,
            scope = MemoryScope::Device,
        );
        atomic_store(
            switch,
            0,
            1 - cur,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let g = 48usize;
    let n = g * 1024;
    let init: Vec<i32> = (0..n as i32)
        .map(|i| i.wrapping_mul(2654435761u32 as i32) % 1000)
        .collect();
    let a = dev.upload(&init)?;
    let b = dev.zeros::<i32>(n)?;
    let switch = dev.zeros::<i32>(1)?;
    let done = dev.zeros::<i32>(1)?;
    let out = dev.zeros::<i32>(n)?;
    let (mut ha, mut hb, mut flag) = (init, vec![0; n], 0);
    let launches = 20;
    let t = std::time::Instant::now();
    for it in 0..launches {
        step::launch(&dev, g as u32, &a, &b, &switch, &done, &out, it)?;
        let (src, dst) = if flag == 0 {
            (&ha, &mut hb)
        } else {
            (&hb, &mut ha)
        };
        for i in 0..n {
            dst[i] = src[i].wrapping_mul(2).wrapping_add(it);
        }
        flag = 1 - flag;
    }
    let (ga, gb, gs, gout) = (
        a.download()?,
        b.download()?,
        switch.download()?,
        out.download()?,
    );
    let elapsed = t.elapsed();
    let latest = if flag == 1 { &hb } else { &ha };
    if ga != ha || gb != hb || gs != vec![flag] || &gout != latest || done.download()? != vec![0] {
        eprintln!("MISMATCH after {launches} launches (switch = {gs:?}, expected {flag})");
        std::process::exit(1);
    }
    println!("{launches} launches of {g} blocks: both buffers and the switch match the CPU simulation ({elapsed:.2?})");
    Ok(())
}
