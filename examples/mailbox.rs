//! The memory model's `sys_scope_example`, in Rust: GPU blocks publish data to the host. Each
//! block writes its 16 values into mapped host memory, then adds one to a counter with a
//! `release` atomic at `sys` scope; the host acquires the counter until every block has
//! published, and then reads the data, complete. (The example in the memory-model page has one
//! block raise the flag for all of them, which orders only that block's writes: here every
//! block publishes its own.)
//!
//! cargo run --release --example mailbox                    # the CPU emulator
//! cargo run --release --example mailbox --features cuda    # an NVIDIA GPU, if present

use std::sync::atomic::Ordering;
use tilus::prelude::*;

#[tile_kernel(threads = 32)]
fn sys_scope_example(system_flag: GlobalTensor<u32>, gpu_data: GlobalTensor<f32>) {
    let bid = block_idx();
    // The block's data, then its release at system scope: visible to the CPU (and other GPUs)
    // before the flag is.
    store_global(gpu_data, full([16], bid as f32), offsets = [bid * 16]);
    atomic::global_add(system_flag, ones([1]), sem = release, scope = sys);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dev = tilus::Device::default()?;
    let blocks = 24u32;
    let flag = dev.mapped::<u32>(1)?;
    let data = dev.mapped::<f32>(blocks as usize * 16)?;
    std::thread::scope(|s| -> Result<(), tilus::Error> {
        let run = s.spawn(|| -> Result<(), tilus::Error> {
            sys_scope_example::launch(&dev, blocks, &flag, &data)?;
            dev.synchronize()
        });
        // Acquire the flag; once it counts every block, all their data is visible.
        // (Or stop waiting when the launch has ended: it failed, and `join` says why.)
        while flag.load(0, Ordering::Acquire) < blocks && !run.is_finished() {
            std::hint::spin_loop();
        }
        if flag.load(0, Ordering::Acquire) == blocks {
            let got = data.to_vec();
            for (b, chunk) in got.chunks(16).enumerate() {
                assert!(chunk.iter().all(|&v| v == b as f32), "block {b}: {chunk:?}");
            }
        }
        run.join().expect("the launching thread")
    })?;
    println!(
        "{}: the host saw the data of all {blocks} blocks once their flags were up",
        dev.name()
    );
    Ok(())
}
