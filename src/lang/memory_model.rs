//! Memory orders and scopes: a guide to choosing them, with the operations that take them.
//!
//! Blocks of a launch run concurrently and their memory accesses can become visible to other
//! blocks late and out of program order. Plain loads and stores (`load_global`, `store_global`,
//! ...) promise nothing about what another block sees and when. Communication between blocks
//! goes through *atomic* accesses, and whether an atomic also makes *other* data visible is
//! decided by its **order**; which threads it synchronises with is decided by its **scope**.
//!
//! Within one block, `sync()` is all you need: it is a barrier and it makes the block's earlier
//! accesses (shared and global) visible to its later ones.
//!
//! # Vocabulary
//!
//! An order says what an atomic access does for the accesses around it:
//!
//! * **relaxed**: the access itself is atomic (no torn or lost updates), nothing else is ordered.
//!   Right for counters, statistics and tickets whose values are the whole message.
//! * **release** (writes): everything the block wrote before becomes visible to any thread that
//!   later reads this write with *acquire*. The producer's side of a hand-off.
//! * **acquire** (reads): once this read has seen a released value, everything written before
//!   that release is visible to the block's later accesses. The consumer's side.
//! * **acq_rel** (read-modify-writes): both at once. The order of a lock-taking CAS or of an
//!   arrival counter whose last arrival reads what the others wrote.
//!
//! A scope says which threads the synchronisation is guaranteed with: the block (`cta`), the
//! cluster of blocks (sm_90), the whole GPU (`gpu`), or the GPU and the host and other devices
//! (`sys`). Wider is slower. Both sides of a hand-off must use a scope that contains the other
//! side: blocks talking through global memory need `gpu` (Device).
//!
//! The language accepts the tilus spellings and cuTile's enum spellings; they mean the same:
//!
//! | order (`sem` / `order`) | also accepted | PTX |
//! |---|---|---|
//! | `MemoryOrder::Relaxed` | `relaxed`, `"relaxed"`, `RELAXED` | `.relaxed` |
//! | `MemoryOrder::Acquire` | `acquire`, `ACQUIRE` | `.acquire` |
//! | `MemoryOrder::Release` | `release`, `RELEASE` | `.release` |
//! | `MemoryOrder::AcqRel` | `acq_rel`, `ACQ_REL` | `.acq_rel` |
//!
//! | scope (`scope`) | also accepted | PTX | synchronises with |
//! |---|---|---|---|
//! | `MemoryScope::Block` | `cta`, `BLOCK` | `.cta` | threads of the same block |
//! | `MemoryScope::Cluster` | `cluster`, `CLUSTER` | `.cluster` | blocks of the same cluster (needs sm_90: the kernel's target is raised to it) |
//! | `MemoryScope::Device` | `gpu`, `DEVICE` | `.gpu` | every block of every kernel on this GPU |
//! | `MemoryScope::Sys` | `sys`, `SYS` | `.sys` | also the host and peer devices (mapped memory) |
//!
//! The keywords are `sem` (aliases `order`, `memory_order`) and `scope` (alias `memory_scope`).
//!
//! # Operations
//!
//! | operation | orders allowed | default order | default scope | PTX |
//! |---|---|---|---|---|
//! | [`atomic_load(array, indices, check_bounds = true, order, scope)`](super::atomic_load) | relaxed, acquire | acquire | Device (global), Block (shared) | `ld.{sem}.{scope}`; acquire on global: `ld.relaxed.{scope}` + `fence.acq_rel.{scope}` (1) |
//! | [`atomic_store(array, indices, value, check_bounds = true, order, scope)`](super::atomic_store) | relaxed, release | release | same | `st.{sem}.{scope}` |
//! | `atomic_{add,sub,min,max,and,or,xor,xchg,inc,dec}(array, indices, update, check_bounds = true, order, scope)` ([`atomic_add`](super::atomic_add), ...) | relaxed, acq_rel | acq_rel | same | `atom` / `red` |
//! | [`atomic_cas(array, indices, expected, desired, check_bounds = true, order, scope)`](super::atomic_cas) | relaxed, acq_rel | acq_rel | same | `atom.cas` |
//! | [`fence(sem, scope)`](super::fence) (both required) | acquire, release, acq_rel | none | none | `fence.acq_rel.{scope}` |
//! | tilus `atomic::*` (see [`atomic`](super::atomic)) | all four | relaxed | `cta` (shared), `gpu` (global) | `atom` / `red` |
//!
//! (1) The PTX memory model's acquire pattern: a relaxed load followed by a fence orders what
//! follows as an acquire load does. tilus writes acquire loads of global memory that way
//! because ptxas (12.8 and 13.0, sm_90) can drop the load of the global memory descriptor from
//! a kernel with a predicated `ld.acquire.gpu.global` whose value it finds unused, which then
//! stops with an illegal instruction on the GPU (found by the differential test on an H100).
//!
//! Keyword aliases: `indices` may be spelled `index`; the `update` of an RMW `value` or `values`;
//! the `value` of `atomic_store` `values` or `update`.
//!
//! ## Indexed atomics: indices, broadcasting, bounds
//!
//! [`atomic_load`](super::atomic_load), [`atomic_store`](super::atomic_store) and the indexed
//! RMWs ([`atomic_cas`](super::atomic_cas), [`atomic_xchg`](super::atomic_xchg),
//! [`atomic_add`](super::atomic_add), [`atomic_sub`](super::atomic_sub),
//! [`atomic_min`](super::atomic_min), [`atomic_max`](super::atomic_max),
//! [`atomic_and`](super::atomic_and), [`atomic_or`](super::atomic_or),
//! [`atomic_xor`](super::atomic_xor), [`atomic_inc`](super::atomic_inc),
//! [`atomic_dec`](super::atomic_dec)) work on any global tensor, view or shared tensor, of every
//! element type the op has (loads and stores: every type; the RMWs: see
//! [the table](super::types#atomics-per-element-type)):
//!
//! * `indices` gives one integer index (of any integer type) per dimension of the array: a bare value for rank 1, a
//!   tuple `(rows, cols)` (or a list `[rows, cols]`) otherwise. Each index is a tile or a scalar;
//!   the tiles are broadcast to one shape, the shape of the operation and of its result. So
//!   `(arange(4).reshape([4, 1]), arange(8).reshape([1, 8]))` addresses a `[4, 8]` block and
//!   `(arange(4), 3)` column 3 of four rows.
//! * The operands (`update`, `value`, `expected`, `desired`) must broadcast *to* that shape;
//!   scalars always do.
//! * When every index is a scalar, the operation touches one element and its result is a
//!   block-uniform scalar, usable in `if` and `while`: `let slot = atomic_add(counter, 0, 1);`.
//! * With `check_bounds = true` (the default) elements outside the array are skipped; their result
//!   is 0, or `expected` for `atomic_cas`. `check_bounds = false` promises that every index is in
//!   bounds and drops the check; breaking the promise is undefined on the GPU, and an error in
//!   the emulator. Being a promise, it is only accepted in an unsafe context: inside
//!   `unsafe { .. }` (the kernel's author vouches for it for every launch, typically under an
//!   `if` that checks the lengths) or in an `unsafe fn` kernel, whose `launch` is then `unsafe`
//!   and whose callers vouch for it (see [Soundness](crate#soundness)).
//! * Unlike the scatter forms of [`atomic`](super::atomic), every op is available even with
//!   repeated indices; each element's result tells it what it saw (for `atomic_cas`, whether its
//!   swap won).
//!
//! Each element performs its own atomic access: a tile of 256 indices is 256 atomics, not one.
//!
//! # The tile-level ordering rule
//!
//! An atomic on a tile (or on a scalar index, which one thread performs for the block) is issued
//! by some of the block's threads, while the data it publishes or guards was written and is read
//! by all of them. Orders are therefore applied at the level of the tile: an access whose order
//! has a **release** half is preceded by a block barrier, and one whose order has an **acquire**
//! half is followed by a block barrier. A release store thus publishes everything the *block*
//! wrote before it, and after an acquire load the *whole block* sees what was published; no
//! `sync()` is needed around them. (A relaxed atomic adds no barrier.)
//!
//! A `fence` is a tile operation too: the block synchronises before and after it, so it orders
//! every thread's accesses before it against every thread's accesses after it, and a relaxed flag
//! store after a release fence (or a relaxed flag load before an acquire fence) works as a
//! release store (an acquire load) would, as the second kernel of the first example shows.
//!
//! # Pattern: producer and consumer across blocks
//!
//! The producer writes its data with plain stores, then sets a flag with a release store; the
//! consumer spins on the flag with acquire loads, then reads the data with plain loads. Both
//! use Device scope. The second kernel does the same with relaxed flag accesses and fences.
//!
//! ```
//! use tilus::prelude::*;
//!
//! /// Even blocks produce 256 values; the next odd block doubles them.
//! #[tile_kernel(threads = 128)]
//! fn handoff(data: GlobalTensor<i32>, flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let pair = block_idx() / 2;
//!     if block_idx() % 2 == 0 {
//!         store_global(data, arange(256) + pair * 1000, offsets = [pair * 256]);
//!         atomic_store(flag, pair, 1, order = MemoryOrder::Release, scope = MemoryScope::Device);
//!     } else {
//!         let mut ready = 0;
//!         while ready == 0 {
//!             ready = atomic_load(flag, pair, order = MemoryOrder::Acquire, scope = MemoryScope::Device);
//!         }
//!         let v = load_global(data, offsets = [pair * 256], shape = [256]);
//!         store_global(out, v * 2, offsets = [pair * 256]);
//!     }
//! }
//!
//! /// The same hand-off with relaxed flag accesses and explicit fences.
//! #[tile_kernel(threads = 128)]
//! fn handoff_fenced(data: GlobalTensor<i32>, flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let pair = block_idx() / 2;
//!     if block_idx() % 2 == 0 {
//!         store_global(data, arange(256) + pair * 1000, offsets = [pair * 256]);
//!         fence(sem = release, scope = gpu); // the block's stores are ordered before the flag
//!         atomic_store(flag, pair, 1, order = relaxed, scope = gpu);
//!     } else {
//!         let mut ready = 0;
//!         while ready == 0 {
//!             ready = atomic_load(flag, pair, order = relaxed, scope = gpu);
//!         }
//!         fence(sem = acquire, scope = gpu); // the block's loads are ordered after the flag
//!         let v = load_global(data, offsets = [pair * 256], shape = [256]);
//!         store_global(out, v * 2, offsets = [pair * 256]);
//!     }
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let want: Vec<i32> = (0..4 * 256).map(|k| 2 * ((k % 256) + (k / 256) * 1000)).collect();
//!     for fenced in [false, true] {
//!         let data = dev.zeros::<i32>(4 * 256)?;
//!         let flag = dev.zeros::<i32>(4)?;
//!         let out = dev.zeros::<i32>(4 * 256)?;
//!         if fenced {
//!             handoff_fenced::launch(&dev, 8, &data, &flag, &out)?;
//!         } else {
//!             handoff::launch(&dev, 8, &data, &flag, &out)?;
//!         }
//!         assert_eq!(out.download()?, want);
//!     }
//!     assert!(handoff::PTX.contains("st.release.gpu"));
//!     assert!(handoff::PTX.contains("ld.relaxed.gpu.global.s32")); // an acquire load: (1)
//!     assert!(handoff::PTX.contains("fence.acq_rel.gpu;"));
//!     assert!(handoff_fenced::PTX.contains("fence.acq_rel.gpu"));
//!     Ok(())
//! }
//! ```
//!
//! A consumer that spins on a block that has not started never finishes: on a GPU, spin only on
//! blocks with a lower index (blocks start in increasing order) or keep the grid small enough for
//! every block to be resident at once.
//!
//! # Pattern: an atomic counter handing out slots
//!
//! A counter that only hands out distinct numbers needs no ordering: `relaxed` is enough, and the
//! host reads the results after the launch. With a scalar index the block gets one slot (a
//! scalar); with a tile of indices every element gets its own ticket.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn append(counter: GlobalTensor<i32>, rows: GlobalTensor<i32>, tickets: GlobalTensor<i32>) {
//!     let b = block_idx();
//!     // One slot per block: append a 16-element row at the slot's position.
//!     let slot = atomic_add(counter, 0, 1, order = MemoryOrder::Relaxed);
//!     store_global(rows, arange(16) + b * 100, offsets = [slot * 16]);
//!     // One ticket per element: 64 RMWs on counter[1] (the update 1 broadcasts).
//!     let t = atomic_add(counter, ones([64]), 1, order = MemoryOrder::Relaxed);
//!     store_global(tickets, t, offsets = [b * 64]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let g = 6;
//!     let counter = dev.zeros::<i32>(2)?;
//!     let rows = dev.zeros::<i32>(g * 16)?;
//!     let tickets = dev.zeros::<i32>(g * 64)?;
//!     append::launch(&dev, g as u32, &counter, &rows, &tickets)?;
//!     assert_eq!(counter.download()?, vec![g as i32, (g * 64) as i32]);
//!     // Every block's row appears exactly once, in some order.
//!     let mut firsts: Vec<i32> = rows.download()?.chunks(16).map(|r| r[0]).collect();
//!     firsts.sort();
//!     assert_eq!(firsts, (0..g as i32).map(|b| b * 100).collect::<Vec<_>>());
//!     let mut t = tickets.download()?;
//!     t.sort();
//!     assert_eq!(t, (0..(g * 64) as i32).collect::<Vec<_>>());
//!     Ok(())
//! }
//! ```
//!
//! If the consumer of a slot is another block, publish the slot's contents as in the first
//! pattern (a release store of a per-slot flag after writing it).
//!
//! # Indexed atomics: broadcasting and bounds
//!
//! The remaining indexed RMWs on a `[4, 8]` view, with broadcast index tiles, scalar indices
//! (scalar results) and out-of-range rows; and a launch that breaks a `check_bounds = false`
//! promise, which the emulator reports.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn indexed(m: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let a = m.view(0, [4, 8]);
//!     let rows = (arange(6) - 1).reshape([6, 1]); // rows -1 and 4 are outside: skipped
//!     let cols = arange(8).reshape([1, 8]);
//!     let old = atomic_add(a, (rows, cols), 1000); // [6, 8] result, 0 where skipped
//!     store_global(out, old.reshape([48]), offsets = [0]);
//!     atomic_min(a, (arange(4), 0), -5); // column 0 of each row
//!     atomic_max(a, (3, cols), 5000 + cols); // row 3
//!     atomic_or(a, (arange(4), 1), 1 << 16);
//!     atomic_and(a, (arange(4), 2), 0xff);
//!     atomic_xor(a, (0, cols), 1, order = MemoryOrder::Relaxed);
//!     let prev = atomic_xchg(m, 40, 7); // scalar index: scalar result
//!     let won = atomic_cas(m, 41, 41, -1); // expected, desired
//!     store_global(out, full([1], prev), offsets = [48]);
//!     store_global(out, full([1], won), offsets = [49]);
//! }
//!
//! /// Callers promise that `m` has at least 64 elements.
//! #[tile_kernel(threads = 128)]
//! unsafe fn broken_promise(m: GlobalTensor<i32>) {
//!     atomic_add(m, arange(64), 1, check_bounds = false);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let init: Vec<i32> = (0..42).collect();
//!     let m = dev.upload(&init)?;
//!     let out = dev.zeros::<i32>(50)?;
//!     indexed::launch(&dev, 1, &m, &out)?;
//!     let (got, out) = (m.download()?, out.download()?);
//!     // The add saw the initial values of rows 0..4 and skipped the other two rows.
//!     assert_eq!(&out[..8], &[0; 8]);
//!     assert_eq!(&out[8..40], &init[..32]);
//!     assert_eq!(&out[40..48], &[0; 8]);
//!     for r in 0..4 {
//!         for c in 0..8 {
//!             let mut v = init[r * 8 + c] + 1000;
//!             if c == 0 { v = v.min(-5); }
//!             if r == 3 { v = v.max(5000 + c as i32); }
//!             if c == 1 { v |= 1 << 16; }
//!             if c == 2 { v &= 0xff; }
//!             if r == 0 { v ^= 1; }
//!             assert_eq!(got[r * 8 + c], v, "({r}, {c})");
//!         }
//!     }
//!     assert_eq!((got[40], out[48]), (7, 40));
//!     assert_eq!((got[41], out[49]), (-1, 41)); // the CAS matched
//!     // `m` has 42 elements: the promise is broken. On a GPU that is undefined behaviour; the
//!     // emulator reports it instead.
//!     assert!(unsafe { broken_promise::launch(&dev, 1, &m) }.is_err());
//!     Ok(())
//! }
//! ```
//!
//! # Pattern: a spinlock protecting a non-atomic update
//!
//! Taking the lock is a CAS from 0 to 1 that must *acquire* (the previous holder's writes become
//! visible); releasing it is a store of 0 that must *release* (this holder's writes are published
//! first). Between the two, plain loads and stores are safe. With the indexed forms, the CAS is
//! `acq_rel` (cuTile's rule: an RMW that synchronises has both halves) and the unlock an
//! `atomic_store`; the tilus forms allow an acquire-only `global_cas` and a release `global_exch`.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn locked_increment(lock: GlobalTensor<i32>, data: GlobalTensor<i32>, rounds: i32) {
//!     for _round in 0..rounds {
//!         let mut old = 1;
//!         while old != 0 {
//!             old = atomic_cas(lock, 0, 0, 1); // AcqRel at Device scope by default
//!         }
//!         let v = load_global(data, offsets = [0], shape = [256]);
//!         store_global(data, v + 1, offsets = [0]);
//!         atomic_store(lock, 0, 0, order = MemoryOrder::Release);
//!     }
//! }
//!
//! #[tile_kernel(threads = 128)]
//! fn locked_increment_tilus(lock: GlobalTensor<i32>, data: GlobalTensor<i32>, rounds: i32) {
//!     for _round in 0..rounds {
//!         let mut old = 1;
//!         while old != 0 {
//!             old = atomic::global_cas(lock, compare = 0, values = ones([1]), sem = acquire).item();
//!         }
//!         let v = load_global(data, offsets = [0], shape = [256]);
//!         store_global(data, v + 1, offsets = [0]);
//!         atomic::global_exch(lock, zeros([1]), sem = release);
//!     }
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     for tilus_form in [false, true] {
//!         let lock = dev.zeros::<i32>(1)?;
//!         let data = dev.zeros::<i32>(256)?;
//!         if tilus_form {
//!             locked_increment_tilus::launch(&dev, 8, &lock, &data, 10)?;
//!         } else {
//!             locked_increment::launch(&dev, 8, &lock, &data, 10)?;
//!         }
//!         assert_eq!(data.download()?, vec![80; 256]); // no lost update
//!         assert_eq!(lock.download()?, vec![0]);
//!     }
//!     Ok(())
//! }
//! ```
//!
//! # Pattern: the host and a running kernel (`sys` scope)
//!
//! `sys` scope synchronises with the host and with peer devices, through memory both can
//! reach: a [`MappedTensor`](crate::MappedTensor) (`dev.mapped::<T>(n)`), host memory mapped
//! into the device, which a kernel takes like any tensor and the host reads and writes while
//! the kernel runs, with `std::sync::atomic` orderings. The host's `Acquire` load pairs with a
//! kernel's `release` at `sys` scope, and its `Release` store with a kernel's `acquire` at
//! `sys` scope. A narrower scope (`gpu`) does not order anything for the host.
//!
//! ```
//! use std::sync::atomic::Ordering;
//! use tilus::prelude::*;
//!
//! /// Each block writes its data into host memory, then raises its flag for the host.
//! #[tile_kernel(threads = 32)]
//! fn publish(flags: GlobalTensor<u32>, data: GlobalTensor<f32>) {
//!     let b = block_idx();
//!     store_global(data, full([16], b as f32), offsets = [b * 16]);
//!     atomic_store(flags, b, 1u32, sem = release, scope = sys);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let (flags, data) = (dev.mapped::<u32>(4)?, dev.mapped::<f32>(64)?);
//!     std::thread::scope(|s| {
//!         // The launch on another thread: the host watches the kernel while it runs.
//!         let run = s.spawn(|| publish::launch(&dev, 4, &flags, &data));
//!         for b in 0..4 {
//!             // Acquire pairs with the release; stop waiting if the launch ends (it failed).
//!             while flags.load(b, Ordering::Acquire) == 0 && !run.is_finished() {}
//!             if flags.load(b, Ordering::Acquire) == 0 {
//!                 break;
//!             }
//!             // Only block `b`'s data: the others' may still be being written (reading them
//!             // would race, and the emulator's race checker would fail the launch).
//!             for i in b * 16..b * 16 + 16 {
//!                 assert_eq!(data.load(i, Ordering::Relaxed), b as f32);
//!             }
//!         }
//!         run.join().unwrap()
//!     })
//! }
//! ```
//!
//! `examples/progress.rs` (a kernel reporting its progress), `examples/work_queue.rs` (a
//! persistent kernel fed by the host) and `examples/mailbox.rs` run these protocols on both
//! back ends.
//!
//! # Pattern: double buffering across launches
//!
//! Launches on one device run one after the other, and everything a launch wrote is visible to
//! the next. A switch kept in device memory lets a kernel pick the buffer to read without the
//! host tracking it: each launch acquires the switch, computes from the current buffer into the
//! other one, and the *last* block to finish (found with an `acq_rel` arrival counter) resets the
//! counter and flips the switch with a release store. Flipping from any earlier block would let a
//! slower block of the same launch see the new value and read the wrong buffer.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn step(a: GlobalTensor<i32>, b: GlobalTensor<i32>, switch: GlobalTensor<i32>, done: GlobalTensor<i32>, k: i32) {
//!     let cur = atomic_load(switch, 0, order = MemoryOrder::Acquire, scope = MemoryScope::Device);
//!     let off = block_idx() * 256;
//!     if cur == 0 {
//!         store_global(b, load_global(a, offsets = [off], shape = [256]) * 2 + k, offsets = [off]);
//!     } else {
//!         store_global(a, load_global(b, offsets = [off], shape = [256]) * 2 + k, offsets = [off]);
//!     }
//!     let arrived = atomic_add(done, 0, 1); // AcqRel, Device
//!     if arrived == grid_dim() - 1 {
//!         atomic_store(done, 0, 0, order = MemoryOrder::Relaxed);
//!         atomic_store(switch, 0, 1 - cur, order = MemoryOrder::Release, scope = MemoryScope::Device);
//!     }
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let init: Vec<i32> = (0..1024).collect();
//!     let a = dev.upload(&init)?;
//!     let b = dev.zeros::<i32>(1024)?;
//!     let switch = dev.zeros::<i32>(1)?;
//!     let done = dev.zeros::<i32>(1)?;
//!     let mut want = init.clone();
//!     for k in 0..5 {
//!         step::launch(&dev, 4, &a, &b, &switch, &done, k)?;
//!         want = want.iter().map(|v| v * 2 + k).collect();
//!     }
//!     // Five flips: the latest values are in `b`, and the switch says so.
//!     assert_eq!(switch.download()?, vec![1]);
//!     assert_eq!(b.download()?, want);
//!     assert_eq!(done.download()?, vec![0]);
//!     Ok(())
//! }
//! ```
//!
//! # Mistakes the compiler catches
//!
//! These are compile errors, reported at the offending call:
//!
//! * **A load with a release half** (`atomic_load(.., order = Release)` or `AcqRel`): a load
//!   publishes nothing. Use `Acquire` or `Relaxed`.
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128)]
//! fn k(flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let f = atomic_load(flag, 0, order = MemoryOrder::Release);
//!     store_global(out, full([1], f), offsets = [0]);
//! }
//! # fn main() {}
//! ```
//!
//! * **A store with an acquire half** (`atomic_store(.., order = Acquire)` or `AcqRel`): a store
//!   observes nothing. Use `Release` or `Relaxed`.
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128)]
//! fn k(flag: GlobalTensor<i32>) {
//!     atomic_store(flag, 0, 1, order = MemoryOrder::Acquire);
//! }
//! # fn main() {}
//! ```
//!
//! * **A relaxed fence**: it would order nothing. Use `AcqRel`, `Acquire` or `Release`.
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128)]
//! fn k(flag: GlobalTensor<i32>) {
//!     fence(sem = MemoryOrder::Relaxed, scope = MemoryScope::Device);
//!     atomic_store(flag, 0, 1);
//! }
//! # fn main() {}
//! ```
//!
//! * **Cluster scope below sm_90**: with an explicit `target` older than 90, `cluster` scope is
//!   rejected (without one, the target is raised to sm_90).
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128, target = 80)]
//! fn k(x: GlobalTensor<i32>) {
//!     atomic::global_add(x, ones([128]), scope = cluster);
//! }
//! # fn main() {}
//! ```
//!
//! * **An indexed RMW that is acquire-only or release-only**: an RMW that synchronises should do
//!   both (with `Acquire` its write publishes nothing, with `Release` its read observes nothing),
//!   so the indexed forms accept only `AcqRel` or `Relaxed`. (The tilus forms in
//!   [`atomic`](super::atomic) accept every order, for lock-style code that knows which half it
//!   needs.)
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128)]
//! fn k(counter: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let slot = atomic_add(counter, 0, 1, order = MemoryOrder::Acquire);
//!     store_global(out, full([1], slot), offsets = [0]);
//! }
//! # fn main() {}
//! ```
//!
//! * **A scope mismatch between a release and an acquire on the same tensor** (views count as
//!   their tensor): they would not synchronise with each other. Checked between the accesses of
//!   one kernel.
//!
//! ```compile_fail
//! use tilus::prelude::*;
//! #[tile_kernel(threads = 128)]
//! fn k(data: GlobalTensor<i32>, flag: GlobalTensor<i32>) {
//!     store_global(data, ones([128]), offsets = [block_idx() * 128]);
//!     atomic_store(flag, 0, 1, order = MemoryOrder::Release, scope = MemoryScope::Device);
//!     let f = atomic_load(flag, 0, order = MemoryOrder::Acquire, scope = MemoryScope::Block);
//!     store_global(data, full([128], f), offsets = [0]);
//! }
//! # fn main() {}
//! ```
//!
//! # Mistakes the compiler cannot catch
//!
//! Whether data reaches another block correctly depends on which accesses race at run time, which
//! the compiler does not see. In particular it cannot tell that:
//!
//! * a hand-off uses **no release at all**: a plain `store_global` of the flag, or a `Relaxed`
//!   `atomic_store` with no fence, compiles and usually works, and then fails on another GPU or
//!   under load. Every flag that publishes data needs a release (or a release `fence` before it) on
//!   the writer and an acquire (or an acquire `fence` after it) on the reader;
//! * the data is read **before** the acquire (or written after the release);
//! * the two sides use mismatched scopes in **different kernels** (the scope check sees one kernel
//!   at a time), or `Block` scope for a hand-off between blocks on both sides;
//! * a consumer spins on a block that cannot run yet (see the first pattern);
//! * non-atomic scatters collide (the emulator's strict mode reports it).
