//! The tile-level atomic instruction group: `atomic::shared_add(..)` to
//! `atomic::global_scatter_max(..)`, one documentation item per instruction.
//!
//! These instructions update memory from a whole tile at once. Each element of the tile performs
//! one atomic read-modify-write (RMW) on one address; the block as a whole performs as many RMWs
//! as the tile has active elements, never more (tiles are not replicated over threads). They are
//! called with the `atomic::` path inside a kernel body (`tilus::atomic::` works too). For the
//! cuTile-style indexed forms ([`atomic_add(array, indices, ..)`](super::atomic_add) and the
//! rest), [`atomic_load`](super::atomic_load), [`atomic_store`](super::atomic_store) and
//! [`fence`](super::fence), see [`memory_model`](super::memory_model); for the non-atomic
//! scatter stores, [`store_shared_scatter`](super::store_shared_scatter) and
//! [`store_global_scatter`](super::store_global_scatter).
//!
//! # Element-wise and scatter
//!
//! **Element-wise** instructions (`shared_add`, ..., `global_dec`) pair element `e` of the
//! `values` tile with element `e` of the destination: the tile and the destination window have
//! the same shape, and every element touches a different address. Nothing is broadcast over the
//! destination or reduced within the block. Use them for per-element counters, for merging a
//! block's partial results into a global accumulator, or for one-element flags and locks.
//!
//! * On shared memory the destination is the whole shared tensor and `values` has its shape.
//! * On global memory the window has the shape of `values` and starts at `offsets` (one scalar
//!   per dimension of the tensor or view, default all zeros). Elements outside the tensor (or the
//!   view's dims) are skipped.
//!
//! **Scatter** instructions (`shared_scatter_add`, ..., `global_scatter_max`) choose the address
//! from data, in the manner of `scatter_add` in array libraries: a literal `dim` and an integer
//! tile `indices` of the destination's rank. For the element at position `(p0, .., pk, ..)` of
//! `indices`, the coordinate along axis `dim` is `indices[p0, .., pk, ..]` and the coordinate
//! along every other axis is the element's own position. So on a rank-1 destination element `e`
//! updates `dst[indices[e]]`, and on a matrix with `dim = 1` it updates
//! `dst[row, indices[row, col]]`. Several elements may hit one address (that is what a histogram
//! does); each RMW is still atomic. Indices outside the destination are skipped. The non-scatter
//! axes of `indices` must match a shared destination's shape.
//!
//! # Op family
//!
//! | op | new value of the destination `d` | element-wise | scatter |
//! |---|---|:-:|:-:|
//! | `add` | `d + v` (integers wrap) | yes | yes |
//! | `sub` | `d - v` (emitted as an `add` of `-v`, as PTX has no `atom.sub`) | yes | yes |
//! | `min` | `min(d, v)` (integers by signedness, floats by `totalOrder`) | yes | yes |
//! | `max` | `max(d, v)` | yes | yes |
//! | `exch` | `v` | yes | no |
//! | `cas` | `v` if `d == compare`, else `d` | yes | no |
//! | `and`, `or`, `xor` | `d & v`, `d \| v`, `d ^ v` | yes | no |
//! | `inc` | `if d >= v { 0 } else { d + 1 }` | yes | no |
//! | `dec` | `if d == 0 \|\| d > v { v } else { d - 1 }` | yes | no |
//!
//! Which element types each op takes is [the table on the types page](super::types#atomics-per-element-type):
//! in short, `add`/`sub` on 32- and 64-bit integers and on every float (`bf16` from sm_90),
//! `min`/`max`/`exch` on 32- and 64-bit integers and floats, the bitwise ops on 32- and 64-bit
//! integers, `inc`/`dec` on `u32`, and `cas` on every 16-, 32- and 64-bit type. PTX has no 8-bit
//! atomics and no atomics on `bool`; asking for an op a type lacks is a compile error whose help
//! says what to use instead.
//!
//! Scatter has only the ops whose final value cannot depend on the order of the updates: with
//! repeated indices, which element's value ends up in memory for `exch` (or which compare
//! succeeds for `cas`) depends on timing, so the result would be meaningless. Asking for one is a
//! compile error that suggests an alternative (the [indexed forms](super::atomic_and) have every
//! op, with per-element results).
//!
//! ```compile_fail
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn k(x: GlobalTensor<i32>) {
//!     let slots = shared_tensor(i32, [64]);
//!     let idx = load_global(x, offsets = [0], shape = [128]);
//!     // error: scatter `exch` is not provided (help: `store_shared_scatter`, or `shared_exch`)
//!     atomic::shared_scatter_exch(slots, dim = 0, indices = idx, values = 1);
//! }
//! # fn main() {}
//! ```
//!
//! # Order and scope: `sem` and `scope`
//!
//! Every instruction accepts two optional keywords, printed into the PTX as
//! `atom.{sem}.{scope}` (or `red.{sem}.{scope}`):
//!
//! * `sem` (also spelled `order` or `memory_order`): `relaxed` (default), `acquire`, `release`
//!   or `acq_rel`;
//! * `scope` (also `memory_scope`): `cta`, `cluster`, `gpu` or `sys`; the default is `cta` on
//!   shared memory and `gpu` on global memory. `cluster` needs sm_90.
//!
//! Names may be bare (`sem = acquire`), quoted (`sem = "acquire"`) or written with cuTile's enums
//! (`sem = MemoryOrder::Acquire`, `scope = MemoryScope::Device`); see
//! [`MemoryOrder`] and [`MemoryScope`]. A relaxed atomic
//! is still atomic; it just orders nothing else. An order with a release half puts a block
//! barrier before the instruction, one with an acquire half a barrier after it, so that the
//! ordering covers the accesses of the whole block; see [the memory model](super::memory_model)
//! for when to use which.
//!
//! # The result, and `red` versus `atom`
//!
//! Every atomic returns a tile (of the shape of `values`, or of `indices` for scatter) holding the
//! value each element's address had *before* its RMW. Masked-off or skipped elements give 0. The
//! result costs a register and a round trip to memory, so you only pay for it if you use it: when
//! the kernel never reads the result, dead-code elimination drops it and the instruction is
//! printed as PTX's destination-less `red` where one exists, and as `atom` otherwise:
//!
//! | op | result unused, `sem` relaxed or release | result unused, `sem` acquire or acq_rel | result used |
//! |---|---|---|---|
//! | `add`, `sub`, `min`, `max`, `and`, `or`, `xor`, `inc`, `dec` | `red` | `atom` | `atom` |
//! | `exch`, `cas` | `atom` | `atom` | `atom` |
//!
//! (`red` exists only with `.relaxed` and `.release`; PTX has no `red.exch` or `red.cas`.) The
//! element-wise example under [`shared_add`] checks the PTX for both forms.
//!
//! # Mask
//!
//! Every instruction of the group takes `mask = ..`: a `bool` tile of the operation's shape, or a
//! `bool` scalar. Elements where it is false touch no memory. Masks, `values` and `compare` are
//! not broadcast (a scalar is the one exception): a `[1, 64]` tile for a `[4, 64]` operation is a
//! shape error; use `.broadcast_to([4, 64])`.
//!
//! # Instructions
//!
//! Element-wise on shared memory: [`shared_add`], [`shared_sub`], [`shared_min`],
//! [`shared_max`], [`shared_exch`], [`shared_cas`], [`shared_and`], [`shared_or`],
//! [`shared_xor`], [`shared_inc`], [`shared_dec`].
//!
//! Element-wise on global memory: [`global_add`], [`global_sub`], [`global_min`],
//! [`global_max`], [`global_exch`], [`global_cas`], [`global_and`], [`global_or`],
//! [`global_xor`], [`global_inc`], [`global_dec`].
//!
//! 128-bit, on pairs of 64-bit elements (sm_90): [`shared_exch128`], [`shared_cas128`],
//! [`global_exch128`], [`global_cas128`]. A 64-bit atomic on one half of a pair is atomic by
//! itself, but PTX's memory model does not promise that it is atomic towards the pair's
//! 128-bit ones (mixed sizes; see [Soundness](crate#soundness)): use the pair forms for every
//! atomic access of a pair where that matters.
//!
//! Scatter on shared memory: [`shared_scatter_add`], [`shared_scatter_sub`],
//! [`shared_scatter_min`], [`shared_scatter_max`].
//!
//! Scatter on global memory: [`global_scatter_add`], [`global_scatter_sub`],
//! [`global_scatter_min`], [`global_scatter_max`].
//!
//! Examples: [`shared_add`](shared_add#example) (the six arithmetic and exchange ops on shared
//! memory, and the `red`/`atom` rule), [`shared_and`](shared_and#example) (bitwise ops and
//! `inc`/`dec` on `u32`), [`global_inc`](global_inc#example) (the same on global memory, with
//! `u64` masks), [`global_add`](global_add#example) (add/sub/min/max on global memory),
//! [`global_cas`](global_cas#example) (`exch` and `cas` on global memory),
//! [`shared_scatter_add`](shared_scatter_add#example) (per-bin statistics),
//! [`global_scatter_add`](global_scatter_add#example) (a 2-D scatter across blocks) and
//! [`global_scatter_max`](global_scatter_max#example) (`f32` per-bin sums and maxima).
//!
//! The items below exist only in the documentation: their signatures use the
//! documentation-only types of [`lang`](super) ([`Tile`],
//! [`SharedTensor`], ...), and the **Element types** line of each is
//! checked against the compiler's legality table by a unit test.

use super::values::{
    Coords, GlobalTensor, Int, MemoryOrder, MemoryScope, Num, SharedTensor, Tile, Value,
};
use crate::Element;

/// Element-wise atomic `add` on shared memory: adds `values` to the destination.
///
/// ```text
/// atomic::shared_add(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old + v` (integers wrap; floats round to nearest even), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.shared.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
///
/// All six element-wise ops on one shared tensor, with a barrier between ops that do not commute.
/// The results of `shared_sub` and `shared_max` are not used, so they become `red`; the others are
/// `atom`:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn shared_elementwise(out: GlobalTensor<i32>) {
///     let i = arange(64);
///     let a = shared_tensor(i32, [64]);
///     store_shared(a, i);
///     sync();
///     let before = atomic::shared_add(a, 100); // a = i + 100, before = i
///     atomic::shared_sub(a, i); // a = 100 (add and sub commute: no barrier needed)
///     sync();
///     atomic::shared_max(a, i * 3); // a = max(100, 3 i)
///     sync();
///     atomic::shared_min(a, 150, mask = i % 2 == 0); // even i only: min(.., 150)
///     sync();
///     let seen = atomic::shared_exch(a, -i); // seen = the value so far, a = -i
///     sync();
///     // Swap in 7 where a == compare: for i < 10 the compare is -i (it matches), else 0.
///     let old = atomic::shared_cas(a, compare = select(i < 10, -i, 0), values = 7);
///     sync();
///     store_global(out, before, offsets = [0]);
///     store_global(out, seen, offsets = [64]);
///     store_global(out, old, offsets = [128]);
///     store_global(out, load_shared(a), offsets = [192]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.zeros::<i32>(256)?;
///     shared_elementwise::launch(&dev, 1, &out)?;
///     let got = out.download()?;
///     for i in 0..64i32 {
///         let u = i as usize;
///         let m = 100.max(3 * i);
///         let m = if i % 2 == 0 { m.min(150) } else { m };
///         assert_eq!(got[u], i);
///         assert_eq!(got[64 + u], m);
///         assert_eq!(got[128 + u], -i);
///         assert_eq!(got[192 + u], if i < 10 { 7 } else { -i });
///     }
///     // The red/atom rule, in the generated PTX.
///     let ptx = shared_elementwise::PTX;
///     assert!(ptx.contains("atom.relaxed.cta.shared.add.u32")); // shared_add: result used
///     assert!(ptx.contains("red.relaxed.cta.shared.add.u32")); // shared_sub: unused, add of -v
///     assert!(ptx.contains("red.relaxed.cta.shared.max.s32")); // shared_max: unused
///     assert!(ptx.contains("atom.relaxed.cta.shared.exch.b32"));
///     assert!(ptx.contains("atom.relaxed.cta.shared.cas.b32"));
///     Ok(())
/// }
/// ```
pub fn shared_add<T: Num>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `sub` on shared memory: subtracts `values` from the destination.
///
/// ```text
/// atomic::shared_sub(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old - v` (emitted as an `add` of `-v`: PTX has no `atom.sub`), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.shared.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_sub(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](shared_add#example), which uses the six arithmetic and exchange ops on one shared tensor.
pub fn shared_sub<T: Num>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `min` on shared memory: keeps the minimum of the destination and `values`.
///
/// ```text
/// atomic::shared_min(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `min(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.min.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_min(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](shared_add#example), which uses the six arithmetic and exchange ops on one shared tensor.
pub fn shared_min<T: Num>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `max` on shared memory: keeps the maximum of the destination and `values`.
///
/// ```text
/// atomic::shared_max(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `max(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.max.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_max(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](shared_add#example), which uses the six arithmetic and exchange ops on one shared tensor.
pub fn shared_max<T: Num>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `exch` on shared memory: replaces the destination by `values`.
///
/// ```text
/// atomic::shared_exch(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `atom.{sem}.{scope}.shared.exch.b{16,32,64}`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_exch(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](shared_add#example), which uses the six arithmetic and exchange ops on one shared tensor.
pub fn shared_exch<T: Element>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `cas` on shared memory: compare-and-swap: replaces the destination by `values` where it equals `compare`.
///
/// ```text
/// atomic::shared_cas(dst, compare, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `compare` | [`Value<T>`], required | a tile of the shape of `dst` or a scalar |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old == compare { v } else { old }` (bit patterns compared), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements), so `old == compare` says whether an element's swap happened.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `atom.{sem}.{scope}.shared.cas.b{16,32,64}`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_cas(lock, compare = expected, values = desired, sem = acquire);
/// ```
///
/// See the example under [`shared_add`](shared_add#example), which uses the six arithmetic and exchange ops on one shared tensor.
pub fn shared_cas<T: Element>(
    dst: SharedTensor<T>,
    compare: impl Value<T>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `and` on shared memory: bitwise-ands `values` into the destination.
///
/// ```text
/// atomic::shared_and(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old & v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.and.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// The bitwise ops and `inc`/`dec` on a shared `u32` tensor; each op's elements touch distinct
/// addresses, and a barrier separates ops that do not commute:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn bitwise(out: GlobalTensor<u32>) {
///     let i = arange::<u32>(64);
///     let s = shared_tensor(u32, [64]);
///     store_shared(s, i * 3);
///     sync();
///     atomic::shared_or(s, 1u32 << (i % 32));
///     sync();
///     atomic::shared_and(s, !0xfu32);
///     sync();
///     atomic::shared_xor(s, i);
///     sync();
///     let before = atomic::shared_inc(s, 200u32); // wraps to 0 past 200
///     sync();
///     atomic::shared_dec(s, 100u32, mask = i < 8); // above the bound 100: set to 100
///     sync();
///     store_global(out, load_shared(s), offsets = [0]);
///     store_global(out, before, offsets = [64]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.zeros::<u32>(128)?;
///     bitwise::launch(&dev, 1, &out)?;
///     let got = out.download()?;
///     for i in 0..64u32 {
///         let x = ((i * 3) | (1 << (i % 32))) & !0xf ^ i;
///         let inc = if x >= 200 { 0 } else { x + 1 };
///         let dec = if i < 8 { if inc == 0 || inc > 100 { 100 } else { inc - 1 } } else { inc };
///         assert_eq!((got[i as usize], got[64 + i as usize]), (dec, x), "{i}");
///     }
///     Ok(())
/// }
/// ```
pub fn shared_and<T: Int>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `or` on shared memory: bitwise-ors `values` into the destination.
///
/// ```text
/// atomic::shared_or(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old | v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.or.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_or(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_and`](shared_and#example), which uses the bitwise ops and `inc`/`dec` on a shared `u32` tensor.
pub fn shared_or<T: Int>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `xor` on shared memory: bitwise-xors `values` into the destination.
///
/// ```text
/// atomic::shared_xor(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old ^ v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.xor.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_xor(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_and`](shared_and#example), which uses the bitwise ops and `inc`/`dec` on a shared `u32` tensor.
pub fn shared_xor<T: Int>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `inc` on shared memory: increments the destination, wrapping to 0 past the bound `values`.
///
/// ```text
/// atomic::shared_inc(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the bound: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old >= v { 0 } else { old + 1 }` (`v` is the bound), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.inc.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_inc(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_and`](shared_and#example), which uses the bitwise ops and `inc`/`dec` on a shared `u32` tensor.
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k() {
///     let s = shared_tensor(i32, [32]);
///     // error: atomic `inc` is not supported on `i32` elements (help: PTX has `atom.inc` only for `u32`)
///     atomic::shared_inc(s, 10);
/// }
/// # fn main() {}
/// ```
pub fn shared_inc<T: Int>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `dec` on shared memory: decrements the destination, wrapping to the bound `values` below 0.
///
/// ```text
/// atomic::shared_dec(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the whole tensor is updated, element `e` by element `e` of `values` |
/// | `values` | [`Value<T>`], required | the bound: a tile of the shape of `dst`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `dst` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old == 0 || old > v { v } else { old - 1 }` (`v` is the bound), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.dec.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_dec(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_and`](shared_and#example), which uses the bitwise ops and `inc`/`dec` on a shared `u32` tensor.
pub fn shared_dec<T: Int>(dst: SharedTensor<T>, values: impl Value<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `add` on global memory: adds `values` to the destination.
///
/// ```text
/// atomic::global_add(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old + v` (integers wrap; floats round to nearest even), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.global.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
///
/// Four blocks merge their tiles into global accumulators. `acc` is shorter than the tile, so its
/// last 28 elements are skipped by the bounds check; `hi` is updated through a window at an offset:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn merge(x: GlobalTensor<i32>, acc: GlobalTensor<i32>, lo: GlobalTensor<i32>, hi: GlobalTensor<i32>) {
///     let b = block_idx();
///     let t = load_global(x, offsets = [b * 128], shape = [128]);
///     atomic::global_add(acc, t); // acc[j] += t[j] for j < acc.len()
///     atomic::global_sub(acc, ones([128])); // acc[j] -= 1
///     atomic::global_min(lo, t, mask = t % 2 == 0); // even values only
///     atomic::global_max(hi, t, offsets = [10], sem = relaxed, scope = gpu); // hi[10 + j]
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..512).map(|k| (k * 37) % 101).collect();
///     let x = dev.upload(&data)?;
///     let acc = dev.zeros::<i32>(100)?;
///     let lo = dev.full::<i32>(128, i32::MAX)?;
///     let hi = dev.full::<i32>(138, i32::MIN)?;
///     merge::launch(&dev, 4, &x, &acc, &lo, &hi)?;
///     let (acc, lo, hi) = (acc.download()?, lo.download()?, hi.download()?);
///     for j in 0..128 {
///         let col: Vec<i32> = (0..4).map(|b| data[b * 128 + j]).collect();
///         if j < 100 {
///             assert_eq!(acc[j], col.iter().sum::<i32>() - 4);
///         }
///         let even_min = col.iter().copied().filter(|v| v % 2 == 0).min().unwrap_or(i32::MAX);
///         assert_eq!(lo[j], even_min);
///         assert_eq!(hi[10 + j], *col.iter().max().unwrap());
///     }
///     assert_eq!(&hi[..10], &[i32::MIN; 10]);
///     Ok(())
/// }
/// ```
pub fn global_add<T: Num>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `sub` on global memory: subtracts `values` from the destination.
///
/// ```text
/// atomic::global_sub(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old - v` (emitted as an `add` of `-v`: PTX has no `atom.sub`), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.global.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_sub(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_add`](global_add#example), which merges tiles with add, sub, min and max on global memory.
pub fn global_sub<T: Num>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `min` on global memory: keeps the minimum of the destination and `values`.
///
/// ```text
/// atomic::global_min(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `min(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.min.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_min(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_add`](global_add#example), which merges tiles with add, sub, min and max on global memory.
pub fn global_min<T: Num>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `max` on global memory: keeps the maximum of the destination and `values`.
///
/// ```text
/// atomic::global_max(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `max(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.max.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_max(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_add`](global_add#example), which merges tiles with add, sub, min and max on global memory.
pub fn global_max<T: Num>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `exch` on global memory: replaces the destination by `values`.
///
/// ```text
/// atomic::global_exch(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `atom.{sem}.{scope}.global.exch.b{16,32,64}`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_exch(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_cas`](global_cas#example), which races blocks with `global_cas` and `global_exch`.
pub fn global_exch<T: Element>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `cas` on global memory: compare-and-swap: replaces the destination by `values` where it equals `compare`.
///
/// ```text
/// atomic::global_cas(dst, compare, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `compare` | [`Value<T>`], required | a tile of the shape of `values` or a scalar |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old == compare { v } else { old }` (bit patterns compared), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements), so `old == compare` says whether an element's swap happened.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `atom.{sem}.{scope}.global.cas.b{16,32,64}`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
///
/// Eight blocks race for 64 slots. With `global_cas` each slot is claimed by exactly one block
/// (the old value tells a block whether its swap happened); with `global_exch` every block gets
/// back the id of the block before it, so per slot the ids form a chain in which each block
/// appears once:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn race(owner: GlobalTensor<i32>, wins: GlobalTensor<i32>, last: GlobalTensor<i32>, prev: GlobalTensor<i32>) {
///     let b = block_idx();
///     let mine = full([64], b);
///     let old = atomic::global_cas(owner, compare = -1, values = mine);
///     let won = ((old == -1) as i32).sum();
///     store_global(wins, full([1], won), offsets = [b]);
///     let p = atomic::global_exch(last, mine);
///     store_global(prev, p, offsets = [b * 64]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let owner = dev.full::<i32>(64, -1)?;
///     let wins = dev.zeros::<i32>(8)?;
///     let last = dev.full::<i32>(64, -1)?;
///     let prev = dev.zeros::<i32>(8 * 64)?;
///     race::launch(&dev, 8, &owner, &wins, &last, &prev)?;
///     let (owner, wins, last, prev) = (owner.download()?, wins.download()?, last.download()?, prev.download()?);
///     for b in 0..8 {
///         assert_eq!(wins[b], owner.iter().filter(|&&o| o == b as i32).count() as i32);
///     }
///     assert_eq!(wins.iter().sum::<i32>(), 64);
///     for j in 0..64 {
///         let mut chain: Vec<i32> = (0..8).map(|b| prev[b * 64 + j]).chain([last[j]]).collect();
///         chain.sort();
///         assert_eq!(chain, (-1..8).collect::<Vec<i32>>());
///     }
///     Ok(())
/// }
/// ```
pub fn global_cas<T: Element>(
    dst: GlobalTensor<T>,
    compare: impl Value<T>,
    values: Tile<T>,
) -> Tile<T> {
    unreachable!()
}

/// Element-wise 128-bit atomic exchange on shared memory, on pairs of 64-bit elements: replaces each pair of the destination by the pair of `values`.
///
/// ```text
/// atomic::shared_exch128(dst, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | a block's own `shared_tensor` (not a cluster shared tensor) |
/// | `values` | [`Tile<T>`], required | the operand: a tile of `dst`'s rank whose last axis has even length; elements `2k` and `2k + 1` along it are one pair |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; a pair with either element `false` touches no memory |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every performed pair `(e, e + 1)`, atomically as one 128-bit access: `old = (dst[e], dst[e + 1])`, and the pair becomes `(values[e], values[e + 1])`. A pair is performed when both of its elements are active and its first element is
/// 16-byte aligned: an even element of a tensor allocated by the runtime (allocations are
/// 16-byte aligned; a view starting at an odd element is not). Other pairs touch no memory and
/// give 0. The result is the tile of the `old` pairs. No `red` form exists: the instruction is
/// `atom` whether or not the result is used.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it; an explicit lower `target` is a compile error). PTX: `atom.{sem}.{scope}.shared.exch.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_exch128(dst, values = pairs); // `values`: a [n, 2] tile of `u64`
/// ```
///
/// See the example under [`global_cas128`](global_cas128#example).
pub fn shared_exch128<T: Element>(dst: SharedTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise 128-bit atomic compare-and-swap on shared memory, on pairs of 64-bit elements: replaces each pair of the destination by the pair of `values` where both of its elements equal the pair of `compare`.
///
/// ```text
/// atomic::shared_cas128(dst, compare, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | a block's own `shared_tensor` (not a cluster shared tensor) |
/// | `compare` | [`Value<T>`], required | a tile of the shape of `values` or a scalar (both halves of each pair compare with it) |
/// | `values` | [`Tile<T>`], required | the operand: a tile of `dst`'s rank whose last axis has even length; elements `2k` and `2k + 1` along it are one pair |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; a pair with either element `false` touches no memory |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every performed pair `(e, e + 1)`, atomically as one 128-bit access: `old = (dst[e], dst[e + 1])`, and the pair becomes `(values[e], values[e + 1])` if `old == (compare[e], compare[e + 1])` (bit patterns compared, so `-0.0` does not match `0.0`). A pair is performed when both of its elements are active and its first element is
/// 16-byte aligned: an even element of a tensor allocated by the runtime (allocations are
/// 16-byte aligned; a view starting at an odd element is not). Other pairs touch no memory and
/// give 0. The result is the tile of the `old` pairs. No `red` form exists: the instruction is
/// `atom` whether or not the result is used.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it; an explicit lower `target` is a compile error). PTX: `atom.{sem}.{scope}.shared.cas.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_cas128(dst, compare = c, values = pairs); // `values`: a [n, 2] tile of `u64`
/// ```
///
/// See the example under [`global_cas128`](global_cas128#example).
pub fn shared_cas128<T: Element>(
    dst: SharedTensor<T>,
    compare: impl Value<T>,
    values: Tile<T>,
) -> Tile<T> {
    unreachable!()
}

/// Element-wise 128-bit atomic exchange on global memory, on pairs of 64-bit elements: replaces each pair of the destination by the pair of `values`.
///
/// ```text
/// atomic::global_exch128(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile of `dst`'s rank whose last axis has even length; elements `2k` and `2k + 1` along it are one pair |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; a pair with either element `false` touches no memory |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every performed pair `(e, e + 1)`, atomically as one 128-bit access: `old = (dst[e], dst[e + 1])`, and the pair becomes `(values[e], values[e + 1])`. A pair is performed when both of its elements are active and its first element is
/// 16-byte aligned: an even element of a tensor allocated by the runtime (allocations are
/// 16-byte aligned; a view starting at an odd element is not). Other pairs touch no memory and
/// give 0. The result is the tile of the `old` pairs. No `red` form exists: the instruction is
/// `atom` whether or not the result is used.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it; an explicit lower `target` is a compile error). PTX: `atom.{sem}.{scope}.global.exch.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_exch128(dst, values = pairs); // `values`: a [n, 2] tile of `u64`
/// ```
///
/// See the example under [`global_cas128`](global_cas128#example).
pub fn global_exch128<T: Element>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise 128-bit atomic compare-and-swap on global memory, on pairs of 64-bit elements: replaces each pair of the destination by the pair of `values` where both of its elements equal the pair of `compare`.
///
/// ```text
/// atomic::global_cas128(dst, compare, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `compare` | [`Value<T>`], required | a tile of the shape of `values` or a scalar (both halves of each pair compare with it) |
/// | `values` | [`Tile<T>`], required | the operand: a tile of `dst`'s rank whose last axis has even length; elements `2k` and `2k + 1` along it are one pair |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; a pair with either element `false` touches no memory |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every performed pair `(e, e + 1)`, atomically as one 128-bit access: `old = (dst[e], dst[e + 1])`, and the pair becomes `(values[e], values[e + 1])` if `old == (compare[e], compare[e + 1])` (bit patterns compared, so `-0.0` does not match `0.0`). A pair is performed when both of its elements are active and its first element is
/// 16-byte aligned: an even element of a tensor allocated by the runtime (allocations are
/// 16-byte aligned; a view starting at an odd element is not). Other pairs touch no memory and
/// give 0. The result is the tile of the `old` pairs. No `red` form exists: the instruction is
/// `atom` whether or not the result is used.
///
/// **Element types:** `i64` `u64` `f64`.
/// **Target:** sm_90 (the kernel's target is raised to it; an explicit lower `target` is a compile error). PTX: `atom.{sem}.{scope}.global.cas.b128` (PTX ISA 8.3; 8.4 with `scope = sys`).
///
/// # Example
///
/// Blocks race to claim 16 pair slots holding `(owner, tag)`: each slot is won by one block,
/// and both halves of a slot always come from the same block:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn claim(slots: GlobalTensor<u64>) {
///     let me = (block_idx() + 1) as u64;
///     let half = arange(2u64).reshape([1, 2]);
///     let slot = arange(16u64).reshape([16, 1]);
///     let mine = me + half * (me * 99 + slot); // (me, me * 100 + slot)
///     atomic::global_cas128(slots.view(0, [16, 2]), compare = 0, values = mine);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let slots = dev.zeros::<u64>(32)?;
///     claim::launch(&dev, 4, &slots)?;
///     let slots = slots.download()?;
///     for j in 0..16 {
///         let (me, tag) = (slots[2 * j], slots[2 * j + 1]);
///         assert!((1..=4).contains(&me) && tag == me * 100 + j as u64);
///     }
///     assert!(claim::PTX.contains("atom.relaxed.gpu.global.cas.b128"));
///     Ok(())
/// }
/// ```
pub fn global_cas128<T: Element>(
    dst: GlobalTensor<T>,
    compare: impl Value<T>,
    values: Tile<T>,
) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `and` on global memory: bitwise-ands `values` into the destination.
///
/// ```text
/// atomic::global_and(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old & v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.and.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_and(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_inc`](global_inc#example), which uses the bitwise ops and `inc`/`dec` on global `u32` and `u64` tensors.
pub fn global_and<T: Int>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `or` on global memory: bitwise-ors `values` into the destination.
///
/// ```text
/// atomic::global_or(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old | v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.or.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_or(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_inc`](global_inc#example), which uses the bitwise ops and `inc`/`dec` on global `u32` and `u64` tensors.
pub fn global_or<T: Int>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `xor` on global memory: bitwise-xors `values` into the destination.
///
/// ```text
/// atomic::global_xor(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the operand: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `old ^ v`, where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.xor.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_xor(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_inc`](global_inc#example), which uses the bitwise ops and `inc`/`dec` on global `u32` and `u64` tensors.
pub fn global_xor<T: Int>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `inc` on global memory: increments the destination, wrapping to 0 past the bound `values`.
///
/// ```text
/// atomic::global_inc(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the bound: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old >= v { 0 } else { old + 1 }` (`v` is the bound), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.inc.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Thirteen blocks update counters and bit masks in global memory: `inc`/`dec` with the bound 9
/// count modulo 10, and each block sets, flips or clears its own bit:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn marks(pos: GlobalTensor<u32>, flags: GlobalTensor<u64>) {
///     let bit = 1u64 << (block_idx() as u64);
///     atomic::global_inc(pos, full([4], 9u32)); // pos[0..4]
///     atomic::global_dec(pos, full([4], 9u32), offsets = [4]); // pos[4..8]
///     atomic::global_or(flags, full([2], bit)); // flags[0..2]
///     atomic::global_xor(flags, full([1], u64::MAX), offsets = [2]);
///     atomic::global_and(flags, full([1], !bit), offsets = [3]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let pos = dev.zeros::<u32>(8)?;
///     let flags = dev.upload(&[0u64, 0, 0, u64::MAX])?;
///     marks::launch(&dev, 13, &pos, &flags)?;
///     assert_eq!(pos.download()?, vec![3, 3, 3, 3, 7, 7, 7, 7]); // 13 % 10 and -13 mod 10
///     let low = (1u64 << 13) - 1;
///     assert_eq!(flags.download()?, vec![low, low, u64::MAX, !low]); // 13 xors: odd
///     Ok(())
/// }
/// ```
pub fn global_inc<T: Int>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Element-wise atomic `dec` on global memory: decrements the destination, wrapping to the bound `values` below 0.
///
/// ```text
/// atomic::global_dec(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view; the window updated starts at `offsets` |
/// | `values` | [`Tile<T>`], required | the bound: a tile (not a scalar: its shape is the window's) of `dst`'s rank |
/// | `offsets` | [`Coords`], optional (default all zeros) | the window's first element; window elements outside `dst` are skipped |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `values` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element `e`, atomically: `old = dst[e]`, and `dst[e]` becomes `if old == 0 || old > v { v } else { old - 1 }` (`v` is the bound), where `v = values[e]`. The result is the tile of the `old` values (0 for skipped elements).
///
/// **Element types:** `u32` (see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.dec.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_dec(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`global_inc`](global_inc#example), which uses the bitwise ops and `inc`/`dec` on global `u32` and `u64` tensors.
pub fn global_dec<T: Int>(dst: GlobalTensor<T>, values: Tile<T>) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `add` on shared memory: adds `values` to the destination, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_add(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the tensor updated at the chosen addresses |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type; on every other axis its extent must equal `dst`'s |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `old + v` (integers wrap; floats round to nearest even), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `add`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.shared.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
///
/// Per-bin statistics of 200 values in 8 bins (`v % 8`), kept in shared memory. The lanes past the
/// end of the input read -1, whose bin (-1) is out of range, so the scatters skip them. The result
/// of `shared_scatter_add` hands every element a distinct rank within its bin:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn bins(x: GlobalTensor<i32>, out: GlobalTensor<i32>, rank: GlobalTensor<i32>) {
///     let v = load_global(x, offsets = [0], shape = [256], other = -1);
///     let bin = v % 8;
///     let count = shared_tensor(i32, [8]);
///     let neg = shared_tensor(i32, [8]);
///     let lo = shared_tensor(i32, [8]);
///     let hi = shared_tensor(i32, [8]);
///     store_shared(count, zeros([8]));
///     store_shared(neg, zeros([8]));
///     store_shared(lo, full([8], i32::MAX));
///     store_shared(hi, full([8], i32::MIN));
///     sync();
///     let r = atomic::shared_scatter_add(count, dim = 0, indices = bin, values = 1);
///     atomic::shared_scatter_sub(neg, 0, bin, v); // positional: dst, dim, indices, values
///     atomic::shared_scatter_min(lo, dim = 0, indices = bin, values = v);
///     atomic::shared_scatter_max(hi, dim = 0, indices = bin, values = v, mask = v < 100);
///     sync();
///     store_global(out, load_shared(count), offsets = [0]);
///     store_global(out, load_shared(neg), offsets = [8]);
///     store_global(out, load_shared(lo), offsets = [16]);
///     store_global(out, load_shared(hi), offsets = [24]);
///     store_global(rank, r, offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..200).map(|k| (k * 53) % 199).collect();
///     let x = dev.upload(&data)?;
///     let out = dev.zeros::<i32>(32)?;
///     let rank = dev.full::<i32>(256, -5)?;
///     bins::launch(&dev, 1, &x, &out, &rank)?;
///     let (got, rank) = (out.download()?, rank.download()?);
///     for b in 0..8 {
///         let in_bin: Vec<usize> = (0..200).filter(|&k| data[k] % 8 == b as i32).collect();
///         let vals: Vec<i32> = in_bin.iter().map(|&k| data[k]).collect();
///         assert_eq!(got[b], vals.len() as i32);
///         assert_eq!(got[8 + b], -vals.iter().sum::<i32>());
///         assert_eq!(got[16 + b], vals.iter().copied().min().unwrap_or(i32::MAX));
///         assert_eq!(got[24 + b], vals.iter().copied().filter(|&v| v < 100).max().unwrap_or(i32::MIN));
///         // The ranks within a bin are 0, 1, .., count - 1 in some order.
///         let mut ranks: Vec<i32> = in_bin.iter().map(|&k| rank[k]).collect();
///         ranks.sort();
///         assert_eq!(ranks, (0..vals.len() as i32).collect::<Vec<_>>());
///     }
///     // Skipped lanes report 0.
///     assert!(rank[200..].iter().all(|&r| r == 0));
///     Ok(())
/// }
/// ```
///
/// The histogram example of the repository (`examples/histogram.rs`) is the same pattern at scale.
pub fn shared_scatter_add<T: Num, I: Int>(
    dst: SharedTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `sub` on shared memory: subtracts `values` from the destination, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_sub(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the tensor updated at the chosen addresses |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type; on every other axis its extent must equal `dst`'s |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `old - v` (emitted as an `add` of `-v`: PTX has no `atom.sub`), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `sub`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.shared.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_sub(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](shared_scatter_add#example), which computes per-bin statistics with all four shared scatter ops.
pub fn shared_scatter_sub<T: Num, I: Int>(
    dst: SharedTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `min` on shared memory: keeps the minimum of the destination and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_min(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the tensor updated at the chosen addresses |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type; on every other axis its extent must equal `dst`'s |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `min(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `min`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.min.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_min(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](shared_scatter_add#example), which computes per-bin statistics with all four shared scatter ops.
pub fn shared_scatter_min<T: Num, I: Int>(
    dst: SharedTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `max` on shared memory: keeps the maximum of the destination and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_max(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | the tensor updated at the chosen addresses |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type; on every other axis its extent must equal `dst`'s |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `cta`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `max(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `max`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.shared.max.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_max(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](shared_scatter_add#example), which computes per-bin statistics with all four shared scatter ops.
pub fn shared_scatter_max<T: Num, I: Int>(
    dst: SharedTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `add` on global memory: adds `values` to the destination, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_add(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view (use a view to scatter into a matrix or at an offset) |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `old + v` (integers wrap; floats round to nearest even), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `add`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.global.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
///
/// Two blocks scatter a `[4, 64]` tile along `dim = 1` into `[4, 8]` matrices (views of one global
/// buffer): element `(r, c)` updates `m[r, idx[r, c]]`. Indices of 8 and above are outside the
/// view and skipped:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn scatter2d(out: GlobalTensor<i32>) {
///     let r = arange(4).reshape([4, 1]);
///     let c = arange(64).reshape([1, 64]);
///     let idx = (c + r) % 9; // 0..=8; 8 is out of range
///     let v = (c + 100 * block_idx()).broadcast_to([4, 64]); // values are not broadcast: give the full shape
///     atomic::global_scatter_add(out.view(0, [4, 8]), dim = 1, indices = idx, values = 1);
///     atomic::global_scatter_sub(out.view(32, [4, 8]), dim = 1, indices = idx, values = v);
///     atomic::global_scatter_min(out.view(64, [4, 8]), dim = 1, indices = idx, values = v);
///     atomic::global_scatter_max(out.view(96, [4, 8]), 1, idx, v); // positional
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let mut init = vec![0; 128];
///     init[64..96].fill(i32::MAX);
///     init[96..128].fill(i32::MIN);
///     let out = dev.upload(&init)?;
///     scatter2d::launch(&dev, 2, &out)?;
///     let got = out.download()?;
///     for r in 0..4 {
///         for k in 0..8 {
///             // (c + r) % 9 == k: the values c + 100 b of both blocks that land in column k.
///             let vals: Vec<i32> = (0..2)
///                 .flat_map(|b| (0..64).filter(move |c| (c + r) % 9 == k).map(move |c| c as i32 + 100 * b))
///                 .collect();
///             let at = r * 8 + k;
///             assert_eq!(got[at], vals.len() as i32);
///             assert_eq!(got[32 + at], -vals.iter().sum::<i32>());
///             assert_eq!(got[64 + at], *vals.iter().min().unwrap());
///             assert_eq!(got[96 + at], *vals.iter().max().unwrap());
///         }
///     }
///     Ok(())
/// }
/// ```
pub fn global_scatter_add<T: Num, I: Int>(
    dst: GlobalTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `sub` on global memory: subtracts `values` from the destination, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_sub(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view (use a view to scatter into a matrix or at an offset) |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `old - v` (emitted as an `add` of `-v`: PTX has no `atom.sub`), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `sub`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// `f32` on global memory flushes subnormal inputs and results to zero, as `atom.global.add.f32` does; every other float add keeps them.
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `f32` `f64`, and `bf16` from sm_90 (`i16` `u16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any (`bf16` from sm_90). PTX: `red.{sem}.{scope}.global.add.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_scatter_sub(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`global_scatter_add`](global_scatter_add#example), which scatters a 2-D tile with all four global scatter ops.
pub fn global_scatter_sub<T: Num, I: Int>(
    dst: GlobalTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `min` on global memory: keeps the minimum of the destination and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_min(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view (use a view to scatter into a matrix or at an offset) |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `min(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `min`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.min.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_scatter_min(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`global_scatter_add`](global_scatter_add#example), which scatters a 2-D tile with all four global scatter ops.
pub fn global_scatter_min<T: Num, I: Int>(
    dst: GlobalTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}

/// Scatter atomic `max` on global memory: keeps the maximum of the destination and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_max(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view (use a view to scatter into a matrix or at an offset) |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank, any integer type |
/// | `values` | [`Value<T>`], required | the operand: a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar; where it is `false` no memory is touched |
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], optional (default `relaxed`) | any of the four, see [order and scope](super::atomic#order-and-scope-sem-and-scope) |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], optional (default `gpu`) | `cluster` needs sm_90 |
///
/// For every active element at position `p` of `indices`, with `a` the position `p` whose coordinate on axis `dim` is replaced by `indices[p]`, atomically: `old = dst[a]`, and `dst[a]` becomes `max(old, v)` (integers by signedness; floats by `totalOrder`, see below), where `v = values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `max`, up to float rounding for `add`/`sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// Floats (`f32`, `f64`) have no PTX `atom.min/max`; they are compared by their bit patterns, which orders them by IEEE `totalOrder`: exact, `-0.0` below `+0.0`, a positive NaN above everything and a negative NaN below (where the element-wise [`min`](super::min)/[`max`](super::max) would ignore a NaN).
///
/// **Element types:** `i16` `u16` `i32` `u32` `i64` `u64` `f16` `bf16` `f32` `f64` (`i16` `u16` `f16` `bf16` as `cas.b16` loops; see [the table](super::types#atomics-per-element-type)).
/// **Target:** any. PTX: `red.{sem}.{scope}.global.max.{type}` when the result is unused and `sem` is `relaxed` or `release`, `atom` otherwise (see [`red` versus `atom`](super::atomic#the-result-and-red-versus-atom)).
///
/// # Example
///
/// Per-bin sums and maxima of `f32` weights, the `index_add_`/`scatter_reduce` pattern. Float
/// `max` is exact (it compares bit patterns), so the maxima equal the CPU's; the sums use small
/// integers here so that every order of the additions gives the same result:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn weighted(bins: GlobalTensor<i32>, w: GlobalTensor<f32>, sum: GlobalTensor<f32>, hi: GlobalTensor<f32>) {
///     let s = block_idx() * 256;
///     let b = load_global(bins, offsets = [s], shape = [256], other = -1); // -1: skipped
///     let v = load_global(w, offsets = [s], shape = [256]);
///     atomic::global_scatter_add(sum, dim = 0, indices = b, values = v);
///     atomic::global_scatter_max(hi, dim = 0, indices = b, values = v);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let n = 1000;
///     let bins: Vec<i32> = (0..n).map(|i| (i * 7 % 10) as i32).collect();
///     let w: Vec<f32> = (0..n).map(|i| ((i * 13) % 17) as f32 - 8.0).collect();
///     let (sum, hi) = (dev.zeros::<f32>(10)?, dev.full(10, f32::NEG_INFINITY)?);
///     weighted::launch(&dev, 4, &dev.upload(&bins)?, &dev.upload(&w)?, &sum, &hi)?;
///     let (sum, hi) = (sum.download()?, hi.download()?);
///     for k in 0..10 {
///         let vals: Vec<f32> = (0..n).filter(|&i| bins[i] == k as i32).map(|i| w[i]).collect();
///         assert_eq!(sum[k], vals.iter().sum::<f32>());
///         assert_eq!(hi[k], vals.iter().cloned().fold(f32::NEG_INFINITY, f32::max));
///     }
///     Ok(())
/// }
/// ```
pub fn global_scatter_max<T: Num, I: Int>(
    dst: GlobalTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) -> Tile<T> {
    unreachable!()
}
