//! A lock-free hash table of `(key, value)` pairs of `u64`, filled by every block at once with
//! one 128-bit compare-and-swap per probe (`atomic_cas128`, PTX `atom.cas.b128`, sm_90): a slot
//! goes from empty `(0, 0)` to a whole entry in one atomic step, so no reader ever sees a key
//! without its value and no lock is needed. Open addressing with linear probing: an insert that
//! finds its slot taken tries the next one.
//!
//! The table is a `[capacity, 2]` view of a `u64` tensor; `(slot, arange(2))` indexes both halves
//! of a slot, so the `[64, 2]` operation is 64 pairs. Keys are distinct and non-zero (0 marks an
//! empty slot). Checks that every key landed once with its own value, in the slot its probe
//! sequence allows, and that nothing else was written.
//!
//! cargo run --release --example pair_hash                    # the CPU emulator
//! cargo run --release --example pair_hash --features cuda    # an NVIDIA GPU (sm_90 or newer)

use tilus::prelude::*;

/// Inserts `keys[i] -> values[i]`, 64 keys per block and step, into `table` (`2 * capacity`
/// elements, capacity a power of two, `shift = 64 - log2(capacity)`).
#[tile_kernel(threads = 64)]
fn insert(
    keys: GlobalTensor<u64>,
    values: GlobalTensor<u64>,
    table: GlobalTensor<u64>,
    shift: u64,
) {
    let n = keys.len();
    let capacity = (table.len() / 2) as u64;
    let slots = table.view(0, [capacity, 2]);
    let half = arange(2u64).reshape([1, 2]);
    for start in (block_idx() * 64..n).step_by(grid_dim() * 64) {
        let k = load_global(keys, offsets = [start], shape = [64]).reshape([64, 1]);
        let v = load_global(values, offsets = [start], shape = [64]).reshape([64, 1]);
        // Past the end the key loads as 0: nothing to insert.
        let entry = select(half == 0, k, v);
        // Fibonacci hashing: the top bits of the key times 2^64 / phi.
        let mut slot = ((k * 0x9E37_79B9_7F4A_7C15u64) >> shift) + 0 * half;
        let mut pending = (k != 0) & (half < 2);
        while (pending as i32).sum() > 0 {
            // Done entries index past the table: skipped, and they read back `expected`.
            let at = select(pending, slot, capacity);
            let old = atomic_cas128(slots, (at, half), 0u64, entry, order = MemoryOrder::Relaxed);
            // An empty slot held (0, 0) in both halves: the entry is in.
            pending = pending & (old != 0);
            slot = select(pending, (slot + 1) & (capacity - 1), slot);
        }
    }
}

/// SplitMix64: distinct-looking non-zero keys from a counter.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let log2_capacity = if dev.is_gpu() { 20 } else { 12 };
    let capacity = 1usize << log2_capacity;
    // Three quarters full (long probe chains), and not a multiple of the 64 keys per step.
    let n = capacity * 3 / 4 - 5;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut keys: Vec<u64> = (0..n as u64).map(|i| mix(seed ^ i) | 1).collect();
    keys.sort_unstable();
    keys.dedup();
    let values: Vec<u64> = keys.iter().map(|k| k.rotate_left(17) ^ 0x5555).collect();

    let (k, v) = (dev.upload(&keys)?, dev.upload(&values)?);
    let table = dev.zeros::<u64>(2 * capacity)?;
    let blocks = if dev.is_gpu() { 264 } else { 8 };
    insert::launch(&dev, blocks, &k, &v, &table, 64 - log2_capacity)?;
    let table = table.download()?;

    // Every key once, with its value, at a slot reachable from its hash without passing an
    // empty slot; every other slot empty.
    let mut found = std::collections::HashMap::new();
    for s in 0..capacity {
        let (key, value) = (table[2 * s], table[2 * s + 1]);
        if key == 0 {
            assert_eq!(value, 0, "slot {s}: a value without a key");
            continue;
        }
        assert!(
            found.insert(key, (s, value)).is_none(),
            "key {key:#x} twice"
        );
    }
    assert_eq!(found.len(), keys.len(), "keys in the table");
    for (key, value) in keys.iter().zip(&values) {
        let (s, got) = found[key];
        assert_eq!(got, *value, "key {key:#x}: torn or foreign value");
        let mut at = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - log2_capacity)) as usize;
        while at != s {
            assert_ne!(table[2 * at], 0, "key {key:#x} skipped an empty slot");
            at = (at + 1) % capacity;
        }
    }
    assert!(insert::PTX.contains("atom.relaxed.gpu.global.cas.b128"));
    println!(
        "pair_hash: {} keys in {capacity} slots, every entry whole and reachable: ok",
        keys.len()
    );
    Ok(())
}
