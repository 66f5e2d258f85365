//! `let _ = expr;` discards a value the usual Rust way, and `let _name = ...` binds one that is
//! never read. Either way an atomic's old value is unused, so it lowers to `red` where PTX has
//! one (add, max with relaxed order) and to `atom` where it has none (exch, or the
//! default `acq_rel` order).
use tilus::prelude::*;

#[tile_kernel(threads = 32)]
fn discard(counts: GlobalTensor<i32>, hi: GlobalTensor<u32>, last: GlobalTensor<i32>) {
    let _ = atomic_add(counts, 0, 1, order = MemoryOrder::Relaxed);
    let _old = atomic_max(hi, 0, block_idx(), order = MemoryOrder::Relaxed);
    let _ = atomic_xchg(last, 0, 7);
    let _ = atomic_add(counts, 1, 1);
    // Pure values and calls without a result may be discarded too.
    let _ = block_idx() + 1;
    // (Block 0 alone: every block storing to one place would race between blocks.)
    let _ = store_global(last, full([1], 7), offsets = [1], mask = full([1], block_idx()) == 0);
}

fn main() {
    let ptx = discard::PTX;
    assert!(ptx.contains("red.relaxed.gpu.global.add.u32"), "{ptx}");
    assert!(ptx.contains("red.relaxed.gpu.global.max.u32"), "{ptx}");
    assert!(ptx.contains("atom.acq_rel.gpu.global.exch.b32"), "{ptx}");
    assert!(ptx.contains("atom.acq_rel.gpu.global.add.u32"), "{ptx}");
    assert!(!ptx.contains("atom.relaxed"), "{ptx}");
    assert!(!ptx.contains("atom.release"), "{ptx}");

    // And it runs: every block counted once, the largest block index kept.
    let dev = Device::emulator();
    let blocks = 37u32;
    let counts = dev.zeros::<i32>(2).unwrap();
    let hi = dev.zeros::<u32>(1).unwrap();
    let last = dev.full(2, -1i32).unwrap();
    discard::launch(&dev, blocks, &counts, &hi, &last).unwrap();
    assert_eq!(counts.download().unwrap(), [blocks as i32; 2]);
    assert_eq!(hi.download().unwrap(), [blocks - 1]);
    assert_eq!(last.download().unwrap(), [7, 7]);
}
