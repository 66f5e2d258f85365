//! A critical section across blocks: every block takes one global lock
//! (`atomic::global_cas(.., sem = acquire)` in a bounded spin loop), increments 128 counters with
//! a plain, non-atomic load + store, and releases the lock with `atomic::global_exch(.., sem =
//! release)`. Without the lock, increments would be lost; with it the counts are exact.
//!
//! cargo run --example spinlock                    # the CPU emulator
//! cargo run --example spinlock --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// `reps` times: lock, `data[0..128] += 1` non-atomically, unlock. A block that fails to take
/// the lock within the spin bound counts the failure in `data[128]` (must stay 0).
#[tile_kernel(threads = 128)]
fn locked_increment(lock: GlobalTensor<i32>, data: GlobalTensor<i32>, reps: i32) {
    for _r in 0..reps {
        let mut got = false;
        let mut spins = 0;
        while !got && spins < 10000000 {
            // One lane tries 0 -> 1; acquire orders the block's later accesses after it.
            let old = atomic::global_cas(
                lock,
                compare = zeros([1]),
                values = ones([1]),
                sem = acquire,
            )
            .item();
            got = old == 0;
            spins += 1;
        }
        if got {
            let d = load_global(data, offsets = [0], shape = [128]);
            store_global(data, d + 1, offsets = [0]);
            // Release publishes the block's stores (the block synchronises before the RMW).
            atomic::global_exch(lock, zeros([1]), sem = release);
        } else {
            atomic::global_add(data.view(128, [1]), ones([1]));
        }
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let (blocks, reps) = (96u32, 20);
    let lock = dev.zeros::<i32>(1)?;
    let data = dev.zeros::<i32>(129)?;
    let t = std::time::Instant::now();
    locked_increment::launch(&dev, blocks, &lock, &data, reps)?;
    let got = data.download()?;
    let elapsed = t.elapsed();
    let mut want = vec![blocks as i32 * reps; 128];
    want.push(0);
    let lock_after = lock.download()?;
    if got != want || lock_after != [0] {
        let bad = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
        eprintln!(
            "MISMATCH: counter {bad} is {}, expected {} ({} failed acquisitions, lock {:?})",
            got[bad], want[bad], got[128], lock_after
        );
        std::process::exit(1);
    }
    println!(
        "{blocks} blocks x {reps} critical sections: all 128 counters = {} ({elapsed:.2?})",
        want[0]
    );
    Ok(())
}
