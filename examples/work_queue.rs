//! A persistent kernel that takes work from the host while it runs. The queue lives in mapped
//! host memory (`Device::mapped`): the host writes items, then publishes them by storing the
//! queue's tail with `Release`; the kernel's blocks claim indices from a counter, wait until
//! the tail (read with `acquire` at `sys` scope) covers theirs, and process the item. The host
//! posts in several batches while the kernel runs and sets a stop flag at the end; a block that
//! finds the queue drained and the flag set exits. Every item is processed exactly once.
//!
//! cargo run --release --example work_queue                    # the CPU emulator
//! cargo run --release --example work_queue --features cuda    # an NVIDIA GPU, if present

use std::sync::atomic::Ordering;
use std::time::Duration;
use tilus::prelude::*;

/// Queue control words in `ctrl`: the published tail (element 0), and the stop flag (1).
const TAIL: usize = 0;
const STOP: usize = 1;

/// Each block claims the next index (`next`, in device memory), waits for it to be published
/// (`ctrl[0]`, the tail) or for the stop flag (`ctrl[1]`), and writes `out[i] = items[i] * 3 + 1` and `done[i] += 1`.
#[tile_kernel(threads = 64)]
pub fn drain(
    items: GlobalTensor<i32>,
    ctrl: GlobalTensor<i32>,
    next: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    done: GlobalTensor<i32>,
) {
    loop {
        let i = atomic_add(next, 0, 1, sem = relaxed);
        let mut ready = false;
        loop {
            // The acquire orders the item's write (before the host's release of the tail)
            // before the load below.
            if i < atomic_load(ctrl, 0, sem = acquire, scope = sys) {
                ready = true;
                break;
            }
            if atomic_load(ctrl, 1, sem = acquire, scope = sys) != 0 {
                // The tail is final once the flag is set: check it once more.
                ready = i < atomic_load(ctrl, 0, sem = acquire, scope = sys);
                break;
            }
        }
        if !ready {
            break;
        }
        let v = load_global(items, offsets = [i], shape = [1]);
        store_global(out, v * 3 + 1, offsets = [i]);
        atomic::global_add(done, ones([1]), offsets = [i]);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dev = tilus::Device::default()?;
    let (batches, per_batch) = (6usize, 50usize);
    let total = batches * per_batch;
    let items = dev.mapped::<i32>(total)?;
    let ctrl = dev.mapped::<i32>(2)?;
    let next = dev.zeros::<i32>(1)?;
    let out = dev.full(total, i32::MIN)?;
    let done = dev.zeros::<i32>(total)?;
    std::thread::scope(|s| -> Result<(), tilus::Error> {
        let run = s.spawn(|| -> Result<(), tilus::Error> {
            drain::launch(&dev, 4, &items, &ctrl, &next, &out, &done)?;
            dev.synchronize()
        });
        for b in 0..batches {
            for k in b * per_batch..(b + 1) * per_batch {
                items.store(k, (k as i32) * 7 - 500, Ordering::Relaxed);
            }
            // Publish the batch: the items' writes happen before the new tail.
            ctrl.store(TAIL, ((b + 1) * per_batch) as i32, Ordering::Release);
            std::thread::sleep(Duration::from_millis(5));
        }
        ctrl.store(STOP, 1, Ordering::Release);
        run.join().expect("the launching thread")
    })?;
    let want: Vec<i32> = (0..total as i32).map(|k| (k * 7 - 500) * 3 + 1).collect();
    assert_eq!(out.download()?, want, "every item processed");
    assert_eq!(done.download()?, vec![1; total], "each exactly once");
    println!(
        "{}: {total} items posted in {batches} batches while the kernel ran, each processed once",
        dev.name()
    );
    Ok(())
}
