//! The tile-level atomic instruction group: `atomic::shared_add(..)` to
//! `atomic::global_scatter_max(..)`, and the non-atomic scatter stores.
//!
//! These instructions update memory from a whole tile at once. Each element of the tile performs
//! one atomic read-modify-write (RMW) on one address; the block as a whole performs as many RMWs
//! as the tile has active elements, never more (tiles are not replicated over threads). They are
//! called with the `atomic::` path inside a kernel body (`tilus::atomic::` works too); the
//! scatter stores are free functions. For the cuTile-style indexed forms (`atomic_add(array,
//! indices, ..)`), `atomic_load`, `atomic_store` and `fence`, see [`memory_model`](super::memory_model).
//!
//! # Element-wise and scatter
//!
//! **Element-wise** instructions (`shared_add`, ..., `global_cas`) pair element `e` of the
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
//! from data, in the manner of `scatter_add` in array libraries: a literal `dim` and an `i32`
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
//! | `add` | `d + v` (wrapping) | yes | yes |
//! | `sub` | `d - v` (wrapping; emitted as an `add` of `-v`, as PTX has no `atom.sub`) | yes | yes |
//! | `min` | `min(d, v)` (signed) | yes | yes |
//! | `max` | `max(d, v)` (signed) | yes | yes |
//! | `exch` | `v` | yes | no |
//! | `cas` | `v` if `d == compare`, else `d` | yes | no |
//!
//! Scatter has no `exch` or `cas`: when indices repeat, which element's value ends up in memory
//! (or which compare succeeds) depends on timing, so the result would be meaningless; asking for
//! one is a compile error that suggests an alternative. Elements are `i32` (the only element type
//! of this version).
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
//!   shared memory and `gpu` on global memory.
//!
//! Names may be bare (`sem = acquire`), quoted (`sem = "acquire"`) or written with cuTile's enums
//! (`sem = MemoryOrder::Acquire`, `scope = MemoryScope::Device`). A relaxed atomic is still
//! atomic; it just orders nothing else. An order with a release half puts a block barrier before
//! the instruction, one with an acquire half a barrier after it, so that the ordering covers the
//! accesses of the whole block; see [the memory model](super::memory_model) for when to use which.
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
//! | `add`, `sub`, `min`, `max` | `red` | `atom` | `atom` |
//! | `exch`, `cas` | `atom` | `atom` | `atom` |
//!
//! (`red` exists only with `.relaxed` and `.release`; PTX has no `red.exch` or `red.cas`.) The
//! element-wise example under [`shared_add`] checks the PTX for both forms.
//!
//! # Non-atomic scatter stores
//!
//! [`store_shared_scatter`] and [`store_global_scatter`] take the same `dst`, `dim`, `indices`,
//! `values` and `mask` as the scatter atomics and store instead of updating. They are cheaper,
//! and correct whenever no two active elements address the same location (a permutation, a
//! compaction with distinct slots). With duplicates, one of the colliding values survives and
//! which one is unspecified; the emulator in strict mode reports the collision as an error.
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
//! [`shared_max`], [`shared_exch`], [`shared_cas`].
//!
//! Element-wise on global memory: [`global_add`], [`global_sub`], [`global_min`],
//! [`global_max`], [`global_exch`], [`global_cas`].
//!
//! Scatter on shared memory: [`shared_scatter_add`], [`shared_scatter_sub`],
//! [`shared_scatter_min`], [`shared_scatter_max`].
//!
//! Scatter on global memory: [`global_scatter_add`], [`global_scatter_sub`],
//! [`global_scatter_min`], [`global_scatter_max`].
//!
//! Non-atomic scatter stores: [`store_shared_scatter`], [`store_global_scatter`].
//!
//! Examples: [`shared_add`](shared_add#example) (all six element-wise ops on shared memory, and the
//! `red`/`atom` rule), [`global_add`](global_add#example) (add/sub/min/max on global memory),
//! [`global_cas`](global_cas#example) (`exch` and `cas` on global memory),
//! [`shared_scatter_add`](shared_scatter_add#example) (per-bin statistics),
//! [`global_scatter_add`](global_scatter_add#example) (a 2-D scatter across blocks) and
//! [`store_shared_scatter`](store_shared_scatter#example) (permutations).

/// Element-wise atomic `add` on shared memory: adds `values` to the destination (wrapping).
///
/// ```text
/// atomic::shared_add(dst, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = old + values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.shared.add.u32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.shared.add.u32` otherwise.
///
/// # Example
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
pub mod shared_add {}

/// Element-wise atomic `sub` on shared memory: subtracts `values` from the destination (wrapping; emitted as an atomic add of `-values`).
///
/// ```text
/// atomic::shared_sub(dst, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = old - values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.shared.add.u32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.shared.add.u32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_sub(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](crate::lang::atomic::shared_add#example), which uses all six element-wise ops on one shared tensor.
pub mod shared_sub {}

/// Element-wise atomic `min` on shared memory: replaces the destination by the signed minimum of it and `values`.
///
/// ```text
/// atomic::shared_min(dst, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = min(old, values[e])`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.shared.min.s32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.shared.min.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_min(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](crate::lang::atomic::shared_add#example), which uses all six element-wise ops on one shared tensor.
pub mod shared_min {}

/// Element-wise atomic `max` on shared memory: replaces the destination by the signed maximum of it and `values`.
///
/// ```text
/// atomic::shared_max(dst, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = max(old, values[e])`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.shared.max.s32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.shared.max.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_max(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](crate::lang::atomic::shared_add#example), which uses all six element-wise ops on one shared tensor.
pub mod shared_max {}

/// Element-wise atomic `exch` on shared memory: replaces the destination by `values`.
///
/// ```text
/// atomic::shared_exch(dst, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.shared.exch.b32`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_exch(acc, v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_add`](crate::lang::atomic::shared_add#example), which uses all six element-wise ops on one shared tensor.
pub mod shared_exch {}

/// Element-wise atomic `cas` on shared memory: replaces the destination by `values` where it equals `compare` (compare-and-swap).
///
/// ```text
/// atomic::shared_cas(dst, compare, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor (from `shared_tensor`); the whole tensor is updated.
/// * `compare`: an `i32` tile of the shape of `dst`, or a scalar (the same for every element).
/// * `values`: an `i32` tile of the shape of `dst`, or a scalar.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; if old == compare[e] { dst[e] = values[e] }`. The result is the tile of `old` values, so `old == compare` tells each element whether its swap happened. Skipped elements give 0.
///
/// PTX: `atom.{sem}.{scope}.shared.cas.b32`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_cas(lock, compare = expected, values = desired, sem = acquire);
/// ```
///
/// See the example under [`shared_add`](crate::lang::atomic::shared_add#example), which uses all six element-wise ops on one shared tensor.
pub mod shared_cas {}

/// Element-wise atomic `add` on global memory: adds `values` to the destination (wrapping).
///
/// ```text
/// atomic::global_add(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = old + values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.global.add.u32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.global.add.u32` otherwise.
///
/// # Example
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
pub mod global_add {}

/// Element-wise atomic `sub` on global memory: subtracts `values` from the destination (wrapping; emitted as an atomic add of `-values`).
///
/// ```text
/// atomic::global_sub(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = old - values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.global.add.u32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.global.add.u32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// atomic::global_sub(out, v, offsets = [row0, col0], mask = keep);
/// ```
///
/// See the example under [`global_add`](crate::lang::atomic::global_add#example), which merges tiles with `global_add`, `global_sub`, `global_min` and `global_max`.
pub mod global_sub {}

/// Element-wise atomic `min` on global memory: replaces the destination by the signed minimum of it and `values`.
///
/// ```text
/// atomic::global_min(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = min(old, values[e])`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.global.min.s32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.global.min.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// atomic::global_min(out, v, offsets = [row0, col0], mask = keep);
/// ```
///
/// See the example under [`global_add`](crate::lang::atomic::global_add#example), which merges tiles with `global_add`, `global_sub`, `global_min` and `global_max`.
pub mod global_min {}

/// Element-wise atomic `max` on global memory: replaces the destination by the signed maximum of it and `values`.
///
/// ```text
/// atomic::global_max(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = max(old, values[e])`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.global.max.s32` when the result is used or `sem` has an acquire half, `red.{sem}.{scope}.global.max.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// atomic::global_max(out, v, offsets = [row0, col0], mask = keep);
/// ```
///
/// See the example under [`global_add`](crate::lang::atomic::global_add#example), which merges tiles with `global_add`, `global_sub`, `global_min` and `global_max`.
pub mod global_max {}

/// Element-wise atomic `exch` on global memory: replaces the destination by `values`.
///
/// ```text
/// atomic::global_exch(dst, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; dst[e] = values[e]`. The result is the tile of `old` values (0 for skipped elements).
///
/// PTX: `atom.{sem}.{scope}.global.exch.b32`, whether or not the result is used (there is no `red` form).
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// atomic::global_exch(out, v, offsets = [row0, col0], mask = keep);
/// ```
///
/// See the example under [`global_cas`](crate::lang::atomic::global_cas#example), which races blocks with `global_cas` and `global_exch`.
pub mod global_exch {}

/// Element-wise atomic `cas` on global memory: replaces the destination by `values` where it equals `compare` (compare-and-swap).
///
/// ```text
/// atomic::global_cas(dst, compare, values, offsets = [0, ..], mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one, of any rank.
/// * `compare`: an `i32` tile of the shape of `values`, or a scalar.
/// * `values`: an `i32` *tile* (not a scalar: its shape is the shape of the updated window) of the rank of `dst`.
/// * `offsets`: the coordinates of the window's first element, one scalar per dimension of `dst` (a bare scalar for rank 1); default all zeros. Window elements outside `dst` are skipped.
/// * `mask`: a `bool` tile of the same shape, or a `bool` scalar; elements where it is false are skipped.
/// * `sem`, `scope`: order and scope, see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element `e`, atomically: `old = dst[e]; if old == compare[e] { dst[e] = values[e] }`. The result is the tile of `old` values, so `old == compare` tells each element whether its swap happened. Skipped elements give 0.
///
/// PTX: `atom.{sem}.{scope}.global.cas.b32`, whether or not the result is used (there is no `red` form). With `sem = acquire`, a successful swap of 0 to 1 takes a lock (see the spinlock in [the memory model](crate::lang::memory_model#pattern-a-spinlock-protecting-a-non-atomic-update)).
///
/// # Example
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
pub mod global_cas {}

/// Scatter atomic `add` on shared memory: adds `values` to the destination (wrapping), at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_add(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor.
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst` whose extent on every axis other than `dim` equals that of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = old + values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `add`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements); with `values = 1` it is the element's rank among those hitting the same address.
///
/// PTX: `red.{sem}.{scope}.shared.add.u32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.shared.add.u32` otherwise.
///
/// # Example
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
pub mod shared_scatter_add {}

/// Scatter atomic `sub` on shared memory: subtracts `values` from the destination (wrapping; emitted as an atomic add of `-values`), at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_sub(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor.
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst` whose extent on every axis other than `dim` equals that of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = old - values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.shared.add.u32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.shared.add.u32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_sub(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](crate::lang::atomic::shared_scatter_add#example), which keeps per-bin counts, sums, minima and maxima with all four shared scatter ops.
pub mod shared_scatter_sub {}

/// Scatter atomic `min` on shared memory: replaces the destination by the signed minimum of it and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_min(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor.
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst` whose extent on every axis other than `dim` equals that of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = min(old, values[p])`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `min`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.shared.min.s32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.shared.min.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_min(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](crate::lang::atomic::shared_scatter_add#example), which keeps per-bin counts, sums, minima and maxima with all four shared scatter ops.
pub mod shared_scatter_min {}

/// Scatter atomic `max` on shared memory: replaces the destination by the signed maximum of it and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::shared_scatter_max(dst, dim, indices, values, mask = .., sem = relaxed, scope = cta) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a shared tensor.
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst` whose extent on every axis other than `dim` equals that of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `cta` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = max(old, values[p])`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `max`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.shared.max.s32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.shared.max.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::shared_scatter_max(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`shared_scatter_add`](crate::lang::atomic::shared_scatter_add#example), which keeps per-bin counts, sums, minima and maxima with all four shared scatter ops.
pub mod shared_scatter_max {}

/// Scatter atomic `add` on global memory: adds `values` to the destination (wrapping), at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_add(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one (use a view to scatter into a matrix or at an offset).
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = old + values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `add`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements); with `values = 1` it is the element's rank among those hitting the same address.
///
/// PTX: `red.{sem}.{scope}.global.add.u32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.global.add.u32` otherwise.
///
/// # Example
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
pub mod global_scatter_add {}

/// Scatter atomic `sub` on global memory: subtracts `values` from the destination (wrapping; emitted as an atomic add of `-values`), at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_sub(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one (use a view to scatter into a matrix or at an offset).
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = old - values[p]`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `sub`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.global.add.u32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.global.add.u32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_scatter_sub(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`global_scatter_add`](crate::lang::atomic::global_scatter_add#example), which scatters a 2-D tile with all four global scatter ops.
pub mod global_scatter_sub {}

/// Scatter atomic `min` on global memory: replaces the destination by the signed minimum of it and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_min(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one (use a view to scatter into a matrix or at an offset).
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = min(old, values[p])`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `min`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.global.min.s32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.global.min.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_scatter_min(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`global_scatter_add`](crate::lang::atomic::global_scatter_add#example), which scatters a 2-D tile with all four global scatter ops.
pub mod global_scatter_min {}

/// Scatter atomic `max` on global memory: replaces the destination by the signed maximum of it and `values`, at data-dependent addresses.
///
/// ```text
/// atomic::global_scatter_max(dst, dim, indices, values, mask = .., sem = relaxed, scope = gpu) -> tile
/// ```
///
/// # Arguments
///
/// * `dst`: a global tensor or a view of one (use a view to scatter into a matrix or at an offset).
/// * `dim`: an integer literal, the axis of `dst` chosen by `indices`.
/// * `indices`: an `i32` tile of the rank of `dst`.
/// * `values`: an `i32` tile of the shape of `indices`, or a scalar.
/// * `mask`: a `bool` tile of the shape of `indices`, or a scalar.
/// * `sem`, `scope`: see [the group page](crate::lang::atomic#order-and-scope-sem-and-scope); by default `relaxed` at `gpu` scope.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, let `a` be `p` with its coordinate on axis `dim` replaced by `indices[p]`; atomically: `old = dst[a]; dst[a] = max(old, values[p])`. Elements whose `a` lies outside `dst` are skipped. Repeated addresses are fine: every update is applied, in an unspecified order (which cannot change the final value of `max`). The result, of the shape of `indices`, holds each element's `old` (0 for skipped elements).
///
/// PTX: `red.{sem}.{scope}.global.max.s32` when the result is unused and `sem` is `relaxed` or `release`, `atom.{sem}.{scope}.global.max.s32` otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// let old = atomic::global_scatter_max(bins, dim = 0, indices = idx, values = v); // `let old =` is optional
/// ```
///
/// See the example under [`global_scatter_add`](crate::lang::atomic::global_scatter_add#example), which scatters a 2-D tile with all four global scatter ops.
pub mod global_scatter_max {}

/// Non-atomic scatter store into shared memory (a free function, not under `atomic::`).
///
/// ```text
/// store_shared_scatter(dst, dim, indices, values, mask = ..)
/// ```
///
/// # Arguments
///
/// The same as for the scatter atomics (see [`atomic::shared_scatter_add`](crate::lang::atomic::shared_scatter_add)): `dst`, a literal `dim`, an `i32` tile `indices` of the rank of `dst`, `values` of the shape of `indices` (or a scalar), and an optional `mask`. There is no `sem`, `scope` or result.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, `dst[a] = values[p]`, where `a` is `p` with its coordinate on axis `dim` replaced by `indices[p]`; elements whose `a` is outside `dst` are skipped. These are plain (weak) stores: when two active elements address the same location, one of their values remains and which one is unspecified. Use them for collision-free patterns (permutations, compaction into distinct slots) and the atomic scatter forms otherwise. As with `store_shared`, other threads may read the result only after a `sync()`.
///
/// # Example
///
/// Reversing each block's 64 elements through shared memory, then writing them to a block-wise
/// rotated position of the output; both scatters are permutations, so no two elements collide:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn permute(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
///     let b = block_idx();
///     let i = arange(64);
///     let t = load_global(x, offsets = [b * 64], shape = [64]);
///     let s = shared_tensor(i32, [64]);
///     store_shared_scatter(s, dim = 0, indices = 63 - i, values = t);
///     sync();
///     let r = load_shared(s); // r[i] = t[63 - i]
///     // Block b writes to block slot (b + 1) % grid_dim(), rotated by 5 within it.
///     let dst = y.view(((b + 1) % grid_dim()) * 64, [64]);
///     store_global_scatter(dst, 0, (i + 5) % 64, r); // positional: dst, dim, indices, values
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..256).map(|k| k * 3 + 1).collect();
///     let x = dev.upload(&data)?;
///     let y = dev.zeros::<i32>(256)?;
///     permute::launch(&dev, 4, &x, &y)?;
///     let got = y.download()?;
///     for b in 0..4 {
///         let slot = (b + 1) % 4;
///         for i in 0..64 {
///             assert_eq!(got[slot * 64 + (i + 5) % 64], data[b * 64 + 63 - i]);
///         }
///     }
///     Ok(())
/// }
/// ```
pub mod store_shared_scatter {}

/// Non-atomic scatter store into global memory (a free function, not under `atomic::`).
///
/// ```text
/// store_global_scatter(dst, dim, indices, values, mask = ..)
/// ```
///
/// # Arguments
///
/// The same as for the scatter atomics (see [`atomic::global_scatter_add`](crate::lang::atomic::global_scatter_add)): `dst`, a literal `dim`, an `i32` tile `indices` of the rank of `dst`, `values` of the shape of `indices` (or a scalar), and an optional `mask`. There is no `sem`, `scope` or result.
///
/// # Semantics
///
/// For every active element at position `p` of `indices`, `dst[a] = values[p]`, where `a` is `p` with its coordinate on axis `dim` replaced by `indices[p]`; elements whose `a` is outside `dst` are skipped. These are plain (weak) stores: when two active elements address the same location, one of their values remains and which one is unspecified. Use them for collision-free patterns (permutations, compaction into distinct slots) and the atomic scatter forms otherwise.
///
/// # Example
///
/// Inside a kernel body:
///
/// ```text
/// store_global_scatter(out, dim = 0, indices = perm, values = v, mask = keep);
/// ```
///
/// See the example under [`store_shared_scatter`](crate::lang::atomic::store_shared_scatter#example), which uses both scatter stores.
pub mod store_global_scatter {}
