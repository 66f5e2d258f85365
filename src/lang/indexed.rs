//! The cuTile-style indexed atomics (`atomic_add(array, indices, update)`, ...), `atomic_load`
//! and `atomic_store`, as documentation-only functions. Orders, scopes and the patterns that use
//! them are on [the memory model page](super::memory_model); the tilus element-wise and scatter
//! forms are in [`atomic`](super::atomic).
//!
//! The **Element types** line of every RMW here must list the types `tilus_core::table::RMW_ROWS`
//! has for its op: the `doc_tables` unit test checks it.

use super::values::{Indices, Int, Memory, MemoryOrder, MemoryScope, Num, Value};
use crate::Element;

/// An atomic load with an order: reads the addressed elements, atomically, so a value another
/// block wrote atomically is read whole, and with `acquire` the block's later accesses see what
/// was published before it.
///
/// ```text
/// atomic_load(array, indices, check_bounds = true, sem = acquire, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acquire`) | `relaxed` or `acquire` |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// The result has the shape of the operation (a scalar for scalar indices, usable in `if` and
/// `while`: the way to spin on a flag); skipped elements read 0. An acquire load is followed by a
/// block barrier, so the *whole block* sees what was published
/// ([the tile-level ordering rule](super::memory_model#the-tile-level-ordering-rule)).
///
/// **Element types:** any. **Target:** any. PTX: `ld.{sem}.{scope}.{space}`.
///
/// # Example
///
/// The consumer side of a hand-off, from
/// [the producer/consumer pattern](super::memory_model#pattern-producer-and-consumer-across-blocks):
///
/// ```text
/// while atomic_load(flag, slot, order = MemoryOrder::Acquire, scope = MemoryScope::Device) == 0 {}
/// let data = load_global(buf, offsets = [slot * 64], shape = [64]);
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(flag: GlobalTensor<i32>) {
///     // error: an atomic load cannot have `release` order (help: use `Acquire` or `Relaxed`)
///     let f = atomic_load(flag, 0, sem = release);
///     store_global(flag, full([1], f), offsets = [1]);
/// }
/// # fn main() {}
/// ```
pub fn atomic_load<T: Element, A: Memory<T>>(array: A, indices: Indices) -> impl Value<T> {
    unreachable!()
}

/// An atomic store with an order: writes `value` to the addressed elements, atomically; with
/// `release`, everything the block wrote before is visible to a thread that reads this write with
/// `acquire`.
///
/// ```text
/// atomic_store(array, indices, value, check_bounds = true, sem = release, scope = ..)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `value` (also `values`, `update`) | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `release`) | `relaxed` or `release` |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// A release store is preceded by a block barrier, so it publishes what the *whole block* wrote
/// ([the tile-level ordering rule](super::memory_model#the-tile-level-ordering-rule)).
///
/// **Element types:** any. **Target:** any. PTX: `st.{sem}.{scope}.{space}`.
///
/// # Example
///
/// The producer side of a hand-off, from
/// [the producer/consumer pattern](super::memory_model#pattern-producer-and-consumer-across-blocks):
///
/// ```text
/// store_global(buf, values, offsets = [slot * 64]);
/// atomic_store(flag, slot, 1, order = MemoryOrder::Release, scope = MemoryScope::Device);
/// ```
pub fn atomic_store<T: Element, A: Memory<T>>(array: A, indices: Indices, value: impl Value<T>) {
    unreachable!()
}

/// Indexed atomic `add`: adds `update` to each addressed element.
///
/// ```text
/// atomic_add(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `old + update` (integers wrap; floats round to nearest even)`. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// Float sums depend on the order of the updates (rounding), which is not fixed; `f32` on global
/// memory flushes subnormal inputs and results to zero (what `atom.global.add.f32` does), every
/// other float add keeps them. `f16`/`bf16` use the `.noftz` forms.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any (`bf16` sm_90). PTX: `atom`/`red` `.add` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
/// `index_add_` of rows: row `r` of `src` (`[n, d]`) is added to row `index[r]` of `dst`
/// (`[m, d]`). Many rows hit one destination row, so the updates must be atomic; the `[4, 32]`
/// tile of updates broadcasts against the `([4, 1], [1, 32])` indices. An index of `-1` and the
/// columns past `d` are outside the view and skipped:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn index_add(src: GlobalTensor<f32>, index: GlobalTensor<i32>, dst: GlobalTensor<f32>, d: i32) {
///     let r0 = block_idx() * 4;
///     let rows = load_global(index, offsets = [r0], shape = [4], other = -1);
///     let v = load_global(src.view(0, [index.len(), d]), offsets = [r0, 0], shape = [4, 32]);
///     let out = dst.view(0, [dst.len() / d as i64, d]);
///     atomic_add(out, (rows.reshape([4, 1]), arange(32).reshape([1, 32])), v, sem = relaxed);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (n, m, d) = (30usize, 3usize, 20usize);
///     let index: Vec<i32> = (0..n).map(|r| if r % 7 == 6 { -1 } else { (r * 5 % m) as i32 }).collect();
///     // Small integers: every order of the additions gives the same f32 sums.
///     let src: Vec<f32> = (0..n * d).map(|i| (i % 13) as f32 - 6.0).collect();
///     let dst = dev.full(m * d, 0.5f32)?;
///     index_add::launch(&dev, 8, &dev.upload(&src)?, &dev.upload(&index)?, &dst, d as i32)?;
///     let mut want = vec![0.5f32; m * d];
///     for r in 0..n {
///         if index[r] >= 0 {
///             for c in 0..d {
///                 want[index[r] as usize * d + c] += src[r * d + c];
///             }
///         }
///     }
///     assert_eq!(dst.download()?, want);
///     Ok(())
/// }
/// ```
///
/// A counter handing out slots, and the other integer ops on a matrix, are in
/// [the memory model](super::memory_model#pattern-an-atomic-counter-handing-out-slots).
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(c: GlobalTensor<u8>) {
///     // error: atomic `add` is not supported on `u8` elements (help: PTX has no 8-bit atomics)
///     atomic_add(c, arange(32), 1);
/// }
/// # fn main() {}
/// ```
pub fn atomic_add<T: Num, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `sub`: subtracts `update` from each addressed element.
///
/// ```text
/// atomic_sub(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `old - update` (printed as an `add` of `-update`: PTX has no `atom.sub`)`. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// Float sums depend on the order of the updates (rounding), which is not fixed; `f32` on global
/// memory flushes subnormal inputs and results to zero (what `atom.global.add.f32` does), every
/// other float add keeps them. `f16`/`bf16` use the `.noftz` forms.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any (`bf16` sm_90). PTX: `atom`/`red` `.add` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
///
/// ```text
/// let old = atomic_sub(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the `index_add_` of rows under [`atomic_add`].
pub fn atomic_sub<T: Num, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `min`: replaces each addressed element by the minimum of it and `update`.
///
/// ```text
/// atomic_min(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `min(old, update)``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// Integers compare by their signedness. Floats have no PTX `atom.min/max`: they are compared
/// by their bit patterns, which orders them by IEEE 754 `totalOrder` (`-NaN < -inf < .. < -0.0 <
/// +0.0 < .. < +inf < +NaN`, as `f32::total_cmp`): exact, with `-0.0` below `+0.0`, but a NaN
/// operand wins a `max` when positive and a `min` when negative, where the element-wise
/// [`min`](super::min) would ignore it.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.min` (as `red` when the result is unused and the order is `relaxed` or `release`); floats use two such instructions on the bits chosen by the operand's sign.
///
/// # Example
///
/// ```text
/// let old = atomic_min(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the float example under [`atomic_max`].
pub fn atomic_min<T: Num, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `max`: replaces each addressed element by the maximum of it and `update`.
///
/// ```text
/// atomic_max(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `max(old, update)``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// Integers compare by their signedness. Floats have no PTX `atom.min/max`: they are compared
/// by their bit patterns, which orders them by IEEE 754 `totalOrder` (`-NaN < -inf < .. < -0.0 <
/// +0.0 < .. < +inf < +NaN`, as `f32::total_cmp`): exact, with `-0.0` below `+0.0`, but a NaN
/// operand wins a `max` when positive and a `min` when negative, where the element-wise
/// [`max`](super::max) would ignore it.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.max` (as `red` when the result is unused and the order is `relaxed` or `release`); floats use two such instructions on the bits chosen by the operand's sign.
///
/// # Example
/// Float `min`/`max` are exact and follow `totalOrder`: `+0.0` beats `-0.0`, and a positive NaN
/// beats everything (unlike the element-wise [`max`](super::max), which ignores NaN). Four
/// elements go to each slot:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn extremes(x: GlobalTensor<f32>, hi: GlobalTensor<f32>, lo: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [12]);
///     let slot = arange(12) / 4;
///     atomic_max(hi, slot, t);
///     atomic_min(lo, slot, t);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data = [-0.0, 0.0, -0.0, 0.0, 1.0, f32::NAN, f32::NEG_INFINITY, 3.0, -2.5, 7.0, 1e-40, -1e30f32];
///     let x = dev.upload(&data)?;
///     let (hi, lo) = (dev.full(3, f32::NEG_INFINITY)?, dev.full(3, f32::INFINITY)?);
///     extremes::launch(&dev, 1, &x, &hi, &lo)?;
///     let bits = |v: Vec<f32>| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
///     assert_eq!(bits(hi.download()?), bits(vec![0.0, f32::NAN, 7.0]));
///     assert_eq!(bits(lo.download()?), bits(vec![-0.0, f32::NEG_INFINITY, -1e30]));
///     Ok(())
/// }
/// ```
pub fn atomic_max<T: Num, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `and`: bitwise-ands `update` into each addressed element.
///
/// ```text
/// atomic_and(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `old & update``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.and` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
///
/// ```text
/// let old = atomic_and(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the bit set under [`atomic_or`].
pub fn atomic_and<T: Int, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `or`: bitwise-ors `update` into each addressed element.
///
/// ```text
/// atomic_or(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `old | update``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.or` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
/// A bit set of 200 elements in `u64` words, then bits cleared and flipped with scalar indices
/// (one element each, scalar results). The default order `acq_rel` puts a block barrier around
/// each, so the three statements apply in order:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn bits(words: GlobalTensor<u64>, seen: GlobalTensor<u64>) {
///     let k = arange::<u64>(200);
///     atomic_or(words, k / 64, ones::<u64>([200]) << (k % 64));
///     let before = atomic_and(words, 3, 0xf0);
///     let _ = atomic_xor(words, 0, u64::MAX);
///     store_global(seen, full([1], before), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (words, seen) = (dev.zeros::<u64>(4)?, dev.zeros::<u64>(1)?);
///     bits::launch(&dev, 1, &words, &seen)?;
///     assert_eq!(words.download()?, vec![0, u64::MAX, u64::MAX, 0xf0]);
///     assert_eq!(seen.download()?, vec![0xff]); // bits 192..200
///     Ok(())
/// }
/// ```
pub fn atomic_or<T: Int, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `xor`: bitwise-xors `update` into each addressed element.
///
/// ```text
/// atomic_xor(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `old ^ update``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.xor` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
///
/// ```text
/// let old = atomic_xor(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the bit set under [`atomic_or`].
pub fn atomic_xor<T: Int, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `xchg`: replaces each addressed element by `update` (exchange).
///
/// ```text
/// atomic_xchg(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the operand: a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `update``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom.{sem}.{scope}.{space}.exch.b{32,64}`.
///
/// # Example
///
/// ```text
/// let old = atomic_xchg(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the slot race under [`atomic_cas`].
pub fn atomic_xchg<T: Element, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic compare-and-swap: where an addressed element equals `expected`, replaces it
/// by `desired`.
///
/// ```text
/// atomic_cas(array, indices, expected, desired, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `expected` | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `desired` | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`, as for the other indexed RMWs |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; if old == expected { array[i] = desired }`,
/// comparing bit patterns (so a float `-0.0` does not match `+0.0`, and a NaN matches the same
/// NaN). The result holds each element's `old`, so `old == expected` says whether its swap
/// happened; skipped elements give `expected`. When every index is a scalar it is a scalar.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (see [the table](super::types#atomics-per-element-type)); `cas.b16`
/// is PTX's one 16-bit integer atomic instruction (the other 16-bit ops are loops of it).
/// **Target:** any. PTX: `atom.{sem}.{scope}.{space}.cas.b{16,32,64}` (there is no `red` form).
///
/// # Example
/// Four blocks race to claim 16 `u16` slots (`atom.cas.b16`); each slot is won
/// by exactly one block, and the old value tells each element whether its swap happened:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn claim(owner: GlobalTensor<u16>, wins: GlobalTensor<i32>) {
///     let b = block_idx();
///     let old = atomic_cas(owner, arange(16), 0, (b + 1) as u16);
///     store_global(wins, full([1], ((old == 0) as i32).sum()), offsets = [b]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (owner, wins) = (dev.zeros::<u16>(16)?, dev.zeros::<i32>(4)?);
///     claim::launch(&dev, 4, &owner, &wins)?;
///     let (owner, wins) = (owner.download()?, wins.download()?);
///     for b in 0..4 {
///         assert_eq!(wins[b], owner.iter().filter(|&&o| o == b as u16 + 1).count() as i32);
///     }
///     assert_eq!(wins.iter().sum::<i32>(), 16);
///     Ok(())
/// }
/// ```
///
/// The spinlock of [the memory model](super::memory_model#pattern-a-spinlock-protecting-a-non-atomic-update)
/// takes its lock with `atomic_cas(lock, 0, 0, 1)` (`acq_rel` by default).
pub fn atomic_cas<T: Element, A: Memory<T>>(
    array: A,
    indices: Indices,
    expected: impl Value<T>,
    desired: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed 128-bit atomic exchange on pairs of 64-bit elements: replaces each addressed pair by the pair of `update`.
///
/// ```text
/// atomic_xchg128(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a block's own shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation, whose last axis has even length: elements `2k` and `2k + 1` along it are one pair |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, pairs with an element outside `array` are skipped; `false` promises they are all inside |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`, as for the other indexed RMWs |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every performed pair `(e, e + 1)` of the operation, atomically as one 128-bit access: `old = (array[i_e], array[i_e + 1])`, and the pair becomes `(update[e], update[e + 1])`. Skipped pairs give 0. A pair is performed when both of its elements are addressed (in bounds), the second
/// index addresses the memory element right after the first (`(slot, 0)` and `(slot, 1)` of a
/// `[capacity, 2]` view), and the first is 16-byte aligned (an even element of a tensor the
/// runtime allocated); other pairs touch no memory.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it). PTX: `atom.{sem}.{scope}.{space}.exch.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// Inside a kernel body, publishing 32 `(key, value)` entries of a `[32, 2]` tile into the slots
/// `slot` (a `[32, 1]` tile) of a `[capacity, 2]` view:
///
/// ```text
/// let old = atomic_xchg128(table, (slot, arange(2u64).reshape([1, 2])), entries);
/// ```
pub fn atomic_xchg128<T: Element, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed 128-bit atomic `cas` on pairs of 64-bit elements: replaces each addressed pair by the pair of `desired` where both of its elements equal the pair of `expected`.
///
/// ```text
/// atomic_cas128(array, indices, expected, desired, check_bounds = true, sem = acq_rel, scope = ..) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a block's own shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation, whose last axis has even length: elements `2k` and `2k + 1` along it are one pair |
/// | `expected` | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `desired` | [`Value<T>`], required | broadcasts to the shape of the operation |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, pairs with an element outside `array` are skipped; `false` promises they are all inside |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`, as for the other indexed RMWs |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every performed pair `(e, e + 1)` of the operation, atomically as one 128-bit access: `old = (array[i_e], array[i_e + 1])`, and the pair becomes `(desired[e], desired[e + 1])` if `old == (expected[e], expected[e + 1])` (bit patterns). Skipped pairs give `expected`, so `old == expected` says whether a pair's swap happened. A pair is performed when both of its elements are addressed (in bounds), the second
/// index addresses the memory element right after the first (`(slot, 0)` and `(slot, 1)` of a
/// `[capacity, 2]` view), and the first is 16-byte aligned (an even element of a tensor the
/// runtime allocated); other pairs touch no memory.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it). PTX: `atom.{sem}.{scope}.{space}.cas.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// A lock-free hash table of `(key, value)` pairs, each slot filled in one step from `(0, 0)`,
/// so that no reader sees a key without its value: `examples/pair_hash.rs`, whose probe loop is
///
/// ```text
/// let at = select(pending, slot, capacity); // done entries index past the table: skipped
/// let old = atomic_cas128(slots, (at, arange(2u64).reshape([1, 2])), 0u64, entry, order = MemoryOrder::Relaxed);
/// pending = pending & (old != 0);            // an empty slot held (0, 0): the entry is in
/// ```
pub fn atomic_cas128<T: Element, A: Memory<T>>(
    array: A,
    indices: Indices,
    expected: impl Value<T>,
    desired: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `inc`: increments each addressed element, wrapping to 0 past the bound `update`.
///
/// ```text
/// atomic_inc(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the bound (the largest value the counter takes): a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `if old >= update { 0 } else { old + 1 }``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.inc` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
/// `inc` and `dec` count modulo `bound + 1` (here 8) without a separate wrap: a ring-buffer
/// position. 100 increments and 100 decrements of two counters that start at 0:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn ring(pos: GlobalTensor<u32>, seen: GlobalTensor<u32>) {
///     let zero = arange(100) * 0;
///     let old = atomic_inc(pos, zero, 7u32);
///     atomic_dec(pos, zero + 1, 7u32);
///     store_global(seen, old, offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (pos, seen) = (dev.zeros::<u32>(2)?, dev.zeros::<u32>(100)?);
///     ring::launch(&dev, 1, &pos, &seen)?;
///     assert_eq!(pos.download()?, vec![100 % 8, (8 - 100 % 8) % 8]);
///     // Each element saw a distinct step of the ring: 0..8 repeated.
///     let mut s = seen.download()?;
///     s.sort();
///     let mut want: Vec<u32> = (0..100).map(|k| k % 8).collect();
///     want.sort();
///     assert_eq!(s, want);
///     Ok(())
/// }
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(c: GlobalTensor<i32>) {
///     // error: atomic `inc` is not supported on `i32` elements (help: PTX has `atom.inc` only for `u32`)
///     atomic_inc(c, 0, 10);
/// }
/// # fn main() {}
/// ```
pub fn atomic_inc<T: Int, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Indexed atomic `dec`: decrements each addressed element, wrapping to the bound `update` below 0.
///
/// ```text
/// atomic_dec(array, indices, update, check_bounds = true, sem = acq_rel, scope = ..) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `array` | [`Memory<T>`], required | a global tensor, a view, or a shared tensor |
/// | `indices` (also `index`) | [`Indices`], required | one integer index (tile or scalar) per dimension of `array`; the tiles broadcast to the shape of the operation |
/// | `update` (also `value`, `values`) | [`Value<T>`], required | the bound (the largest value the counter takes): a tile or scalar that broadcasts to the shape of the operation; an unsuffixed literal takes `T` |
/// | `check_bounds` | `bool` literal, optional (default `true`) | with `true`, elements outside `array` are skipped; `false` promises they are all inside and drops the check (a broken promise is undefined on the GPU and an error on the emulator) |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `acq_rel`) | `relaxed` or `acq_rel`; an acquire-only or release-only RMW is a compile error (the tilus [`atomic`](super::atomic) forms take every order) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu` on global, `cta` on shared memory) | `cluster` needs sm_90 |
///
/// Every addressed element, atomically: `old = array[i]; array[i] = `if old == 0 || old > update { update } else { old - 1 }``. The result has
/// the shape of the operation and holds each element's `old` (0 for skipped elements); when every
/// index is a scalar it is a block-uniform scalar. Repeated indices are fine: each update is
/// applied once, in an unspecified order, and its result says what it saw.
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)); others are
/// compile errors that say what to use instead.
/// **Target:** any. PTX: `atom`/`red` `.dec` (as `red` when the result is unused and the order is `relaxed` or `release`).
///
/// # Example
///
/// ```text
/// let old = atomic_dec(counts, bins, v, sem = relaxed); // `let old =` is optional
/// ```
///
/// See the ring counter under [`atomic_inc`].
pub fn atomic_dec<T: Int, A: Memory<T>>(
    array: A,
    indices: Indices,
    update: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}
