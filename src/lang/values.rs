//! The kinds of values a kernel body handles, as documentation-only Rust types.
//!
//! A kernel body is never compiled as Rust, so these types exist only in the documentation
//! (`#[cfg(doc)]`): they give the builtins real signatures that rustdoc can show and search,
//! and host code cannot name them.

use crate::Element;
use core::marker::PhantomData;
use half::{bf16, f16};

/// A register tile: an array of `T` with a compile-time shape (rank 1 to 3, at most 65 536
/// elements), spread over the block's threads with each element owned by exactly one thread.
///
/// Tiles come from [`arange`](super::arange), [`zeros`](super::zeros), [`ones`](super::ones),
/// [`full`](super::full), [`load_global`](super::load_global),
/// [`load_shared`](super::load_shared), the atomics (which return the values memory held
/// before), and from arithmetic on other tiles. Operators work element-wise with numpy
/// broadcasting (see [the language page](super#broadcasting)); `x as f32` converts every
/// element (see [`types`](super::types)).
///
/// A tile is a value: `let b = a;` copies nothing, and no operation changes a tile in place.
/// Its shape is part of its type, so it is written as integer literals wherever it is asked for.
///
/// The methods below are the ones a kernel may call on a tile. The float methods, `abs`, and
/// `min(x)`/`max(x)` with an argument also work on scalars (`x.sqrt()` on an `f32` scalar).
pub struct Tile<T>(PhantomData<T>);

/// A shared-memory tensor: block-local memory with a compile-time shape, from
/// [`shared_tensor`](super::shared_tensor).
///
/// It is a handle to memory, not a value: load it with [`load_shared`](super::load_shared)
/// (the whole tensor), write it with [`store_shared`](super::store_shared) or
/// [`store_shared_scatter`](super::store_shared_scatter), update it with the shared atomics
/// ([`atomic::shared_add`](super::atomic::shared_add), ...) and the indexed ones
/// ([`atomic_add`](super::atomic_add), ...). Between a write and a read by other threads,
/// put a [`sync`](super::sync). Its contents are undefined until written. All allocations of a
/// kernel together may take at most 227 KiB (each starts on a 16-byte boundary).
pub struct SharedTensor<T>(PhantomData<T>);

/// A global tensor as seen inside a kernel: a `GlobalTensor<T>` parameter (the
/// [host type](crate::GlobalTensor) passed to the launcher) or a [`view`](GlobalTensor::view)
/// of one.
///
/// A parameter is one-dimensional with a runtime length; a view is a row-major window of
/// rank 1 to 3 with runtime dims. Every access through either is bounds-checked: elements
/// outside the tensor (or outside a view's dims) are not loaded (they read `other`) and not
/// written. Global tensors are handles to memory: load them with
/// [`load_global`](super::load_global) before computing with them.
pub struct GlobalTensor<T>(PhantomData<T>);

/// A tensor in memory that the indexed atomics address: a [`GlobalTensor<T>`] (a parameter or
/// a view) or a [`SharedTensor<T>`].
pub trait Memory<T> {}

impl<T> Memory<T> for GlobalTensor<T> {}
impl<T> Memory<T> for SharedTensor<T> {}

/// A tile of `T` or a scalar `T`: the operands of operators and of most builtins.
///
/// Scalars are block-uniform (every thread holds the same value); they combine with a tile of
/// any shape, and two tiles combine by numpy broadcasting. Where a builtin's result is
/// `impl Value<T>`, it is a scalar when every operand is a scalar and a tile of the broadcast
/// shape otherwise.
pub trait Value<T> {}

impl<T> Value<T> for Tile<T> {}

macro_rules! scalar_values {
    ($($t:ty),*) => {$(
        impl Value<$t> for $t {}
    )*};
}
scalar_values!(bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64);

/// The operator of a [`Tile::scan`], written as its name: `add`, `mul`, `min`, `max`, `and`,
/// `or` or `xor` (or the same in quotes, `"max"`).
pub struct ScanOp;

/// The numeric element types: every element type but `bool`.
pub trait Num: Element {}

/// The integer element types.
pub trait Int: Num {}

/// The float element types. `f16` and `bf16` are computed in `f32` and rounded after every
/// operation (see [`types`](super::types#f16-and-bf16)).
pub trait Float: Num {}

macro_rules! classes {
    ($tr:ident: $($t:ty),*) => {$(
        impl $tr for $t {}
    )*};
}
classes!(Num: i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64);
classes!(Int: i8, u8, i16, u16, i32, u32, i64, u64);
classes!(Float: f16, bf16, f32, f64);

/// A tile shape: a list of 1 to 3 positive integer *literals*, `[256]` or `[16, 32]`, with at
/// most 65 536 elements in all.
///
/// A shape decides every thread's registers, so it is a compile-time constant: a computed value
/// in its place is a compile error.
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn k(x: GlobalTensor<i32>, n: i32) {
///     // error: a tile dimension must be an integer literal
///     let t = load_global(x, offsets = [0], shape = [n]);
///     store_global(x, t, offsets = [0]);
/// }
/// # fn main() {}
/// ```
pub struct Shape;

/// Runtime coordinates: one block-uniform integer scalar per dimension, `[row, col]`, or a bare
/// scalar for rank 1 (`offsets = start`).
///
/// The scalars may be of any integer type (`i32`, `i64` from `x.len()`, `u32`, ...) and may
/// differ from each other. Used by the `offsets` of [`load_global`](super::load_global),
/// [`store_global`](super::store_global) and the global element-wise atomics, and by the dims
/// of [`GlobalTensor::view`].
pub struct Coords;

/// The `indices` of the indexed atomics ([`atomic_add`](super::atomic_add), ...,
/// [`atomic_load`](super::atomic_load), [`atomic_store`](super::atomic_store)): one index per
/// dimension of the array, each an integer tile or scalar.
///
/// Written as a bare value for rank 1 (`atomic_add(counts, bins, 1)`), a tuple `(rows, cols)`
/// or a list `[rows, cols]` otherwise. The index tiles are broadcast to one shape, which is the
/// shape of the operation and of its result; so
/// `(arange(4).reshape([4, 1]), arange(8).reshape([1, 8]))` addresses a `[4, 8]` block, and
/// `(arange(4), 3)` column 3 of four rows. When every index is a scalar, the operation touches
/// one element and its result is a scalar.
pub struct Indices;

/// An element type written where a value is expected: the `f32` of
/// `shared_tensor(f32, [256])` or of `zeros([4], f32)`.
///
/// One of `bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64` (see
/// [`types`](super::types)). The same builtins take it as a generic argument instead:
/// `shared_tensor::<f32>([256])`, `zeros::<u8>([16])`.
pub struct ElementType<T>(PhantomData<T>);

/// A memory order: the `sem` (or `order`, `memory_order`) argument of the atomics and of
/// [`fence`](super::fence).
///
/// Written as `MemoryOrder::Acquire`, or by the tilus names `relaxed`, `acquire`, `release`,
/// `acq_rel` (bare or quoted: `sem = acquire`, `sem = "acquire"`), or `RELAXED`, `ACQUIRE`,
/// `RELEASE`, `ACQ_REL`. What each order means and which operations accept which is in
/// [the memory model](super::memory_model).
pub enum MemoryOrder {
    /// The access is atomic and orders nothing else (PTX `.relaxed`). Also `relaxed`.
    Relaxed,
    /// Later accesses of the block stay after this read (PTX `.acquire`). Also `acquire`.
    Acquire,
    /// Earlier accesses of the block are visible before this write (PTX `.release`). Also
    /// `release`.
    Release,
    /// Both (PTX `.acq_rel`), for read-modify-writes and fences. Also `acq_rel`.
    AcqRel,
}

/// A memory scope: the `scope` (or `memory_scope`) argument of the atomics and of
/// [`fence`](super::fence): which threads an atomic or fence synchronises with.
///
/// Written as `MemoryScope::Device`, or by the tilus names `cta`, `cluster`, `gpu`, `sys` (bare
/// or quoted), or `BLOCK`, `CLUSTER`, `DEVICE`, `SYS`. See [the memory model](super::memory_model).
pub enum MemoryScope {
    /// The threads of the same block (PTX `.cta`). Also `cta`. The default on shared memory.
    Block,
    /// The blocks of the same thread-block cluster (PTX `.cluster`). Also `cluster`. Needs
    /// sm_90: a kernel that uses it is compiled for sm_90, and naming an older `target` is a
    /// compile error.
    Cluster,
    /// Every thread of every kernel on this GPU (PTX `.gpu`). Also `gpu`. The default on global
    /// memory.
    Device,
    /// Also the host and other devices, through mapped memory (PTX `.sys`). Also `sys`.
    Sys,
}

impl<T: Element> Tile<T> {
    /// The same elements with another shape of the same element count, in row-major order:
    /// `arange(128).reshape([4, 32])`.
    ///
    /// The new shape is a [`Shape`] of literals. No data moves between threads unless the
    /// layout requires it (the compiler's choice).
    pub fn reshape(self, shape: Shape) -> Tile<T> {
        unreachable!()
    }

    /// The tile repeated along its axes of extent 1 (and new leading axes) to `shape`, by
    /// numpy's rule: `arange(8).reshape([1, 8]).broadcast_to([4, 8])`.
    ///
    /// Operators broadcast on their own; `broadcast_to` is needed where an argument must have
    /// exactly the operation's shape (a `mask`, the `values` of an atomic).
    pub fn broadcast_to(self, shape: Shape) -> Tile<T> {
        unreachable!()
    }

    /// The only element of a one-element tile, as a scalar (`atomic::global_cas(..).item()`).
    /// A tile of any other size is a compile error.
    pub fn item(self) -> T {
        unreachable!()
    }
}

impl<T: Num> Tile<T> {
    /// The sum of all elements, as a scalar. Integers wrap; narrow integers are summed in 32
    /// bits and wrap to their width at the end, `f16`/`bf16` are summed in `f32` and rounded
    /// once at the end. The order of a float sum is fixed (each thread's elements in order, then
    /// a butterfly across each warp, then the warps in order) and the same on the GPU and the
    /// emulator, so results are reproducible but may differ in the last bits from a sequential
    /// sum.
    ///
    /// **Along an axis**: `t.sum(axis)` (or `t.sum(axis = 1)`) sums each line along `axis` (an
    /// integer literal; negative counts from the end), giving the tile's shape without that
    /// axis, or with it of length 1 with `keepdims = true` (a scalar when nothing is left). The
    /// order of a float sum along an axis is fixed too, the same on both back ends
    /// (`tilus::core::collective::reduce`): each line is split over a power-of-two group of
    /// lanes, each lane sums its share in order, and the lanes combine by a butterfly.
    /// `.min(axis = ..)`, `.max(axis = ..)`, `.any(axis)` and `.all(axis)` likewise (for `min`
    /// and `max` the axis is a keyword: `t.min(x)` is the element-wise minimum).
    pub fn sum(self) -> T {
        unreachable!()
    }

    /// The smallest element, as a scalar. With an argument, `t.min(x)` is instead the
    /// element-wise [`min`](super::min) of `t` and `x`; with `axis = ..`, the minimum along an
    /// axis (see [`Tile::sum`]). Floats: NaNs are ignored unless every element is NaN, and
    /// `-0.0` counts as smaller than `+0.0`.
    pub fn min(self) -> T {
        unreachable!()
    }

    /// The largest element, as a scalar. With an argument, `t.max(x)` is instead the
    /// element-wise [`max`](super::max); with `axis = ..`, the maximum along an axis. Floats
    /// as for [`Tile::min`].
    pub fn max(self) -> T {
        unreachable!()
    }

    /// The index of the smallest element: `t.argmin()` gives the flat (row-major) index in the
    /// whole tile as an `i32` scalar, `t.argmin(axis)` the index along `axis` of each line (an
    /// `i32` tile, `keepdims = true` keeps the axis with length 1). Ties go to the lowest index
    /// (`-0.0` and `+0.0` tie); NaNs never win unless a line is all NaN (index 0).
    pub fn argmin(self) -> i32 {
        unreachable!()
    }

    /// The index of the largest element, as [`Tile::argmin`].
    pub fn argmax(self) -> i32 {
        unreachable!()
    }

    /// The inclusive running sum along `axis` (default: the last axis): element `k` of each
    /// line is the sum of elements `0..=k`. `exclusive = true` sums `0..k` (0 first),
    /// `reverse = true` runs from the end of each line. Integers wrap; the order of a float
    /// scan is fixed and the same on both back ends (`tilus::core::collective::scan`).
    pub fn cumsum(self) -> Tile<T> {
        unreachable!()
    }

    /// The running product along an axis, as [`Tile::cumsum`] (an exclusive one starts at 1).
    pub fn cumprod(self) -> Tile<T> {
        unreachable!()
    }

    /// The running minimum along an axis, as [`Tile::cumsum`] (an exclusive one starts at the
    /// type's largest value, NaN for floats).
    pub fn cummin(self) -> Tile<T> {
        unreachable!()
    }

    /// The running maximum along an axis, as [`Tile::cumsum`].
    pub fn cummax(self) -> Tile<T> {
        unreachable!()
    }

    /// A scan with the operator `op` (`add`, `mul`, `min`, `max`, and on integers and `bool`
    /// `and`, `or`, `xor`): `t.scan(max, axis = 1, exclusive = true)`. An exclusive scan starts
    /// with 0 for `add`, 1 for `mul` and the operator's identity for the others.
    pub fn scan(self, op: ScanOp) -> Tile<T> {
        unreachable!()
    }

    /// Each line along `axis` (default: the last) sorted ascending, or descending with
    /// `descending = true`. Stable. Floats sort by IEEE 754 `totalOrder`:
    /// `-NaN < -inf < .. < -0.0 < +0.0 < .. < +inf < +NaN` (the NaN arithmetic produces is
    /// positive: last ascending, first descending). `bool` tiles are not sorted (sort them as
    /// integers).
    ///
    /// **Cost.** A line of 8- to 32-bit keys that is the whole tile, on whole warps, is sorted
    /// by a stable LSD radix sort in shared memory, four bits a pass, while its scratch fits
    /// 128 KiB; other sorts (several lines, 64-bit keys) use a bitonic network. Up to 16 keys a
    /// thread are counted in registers: 4096 `u32` keys on 256 threads take about 123 registers,
    /// two blocks an SM, and bounding them with `min_blocks_per_sm = 3` measured 3% faster on
    /// an H100 (`examples/bench_collectives.rs`, 1.19x CUB's `BlockRadixSort`).
    pub fn sort(self) -> Tile<T> {
        unreachable!()
    }

    /// The stable sorting permutation of each line (an `i32` tile): element `k` is the index of
    /// the line's `k`-th smallest element (largest with `descending = true`), equal elements in
    /// their original order. With [`Tile::take`] it sorts other tiles by these keys:
    /// `let order = keys.argsort(); let v = values.take(order);`.
    pub fn argsort(self) -> Tile<i32> {
        unreachable!()
    }

    /// The `k` largest elements of each line along `axis` (default: the last), largest first;
    /// `largest = false` gives the `k` smallest, smallest first. `k` is an integer literal from
    /// 1 to the line's length. Ties go to the lower index; order as for [`Tile::sort`].
    pub fn topk(self, k: usize) -> Tile<T> {
        unreachable!()
    }

    /// The indices (`i32`) of the elements [`Tile::topk`] gives.
    pub fn argtopk(self, k: usize) -> Tile<i32> {
        unreachable!()
    }

    /// The absolute value of every element (the same as [`abs`](super::abs)); the identity on
    /// unsigned types. `i32::MIN.abs()` wraps to `i32::MIN`.
    pub fn abs(self) -> Tile<T> {
        unreachable!()
    }
}

impl<T: Element> Tile<T> {
    /// A gather within the tile along `axis` (default: the last), numpy's `take_along_axis`:
    /// element `e` of the result is the tile's element at `e`'s coordinates with the one along
    /// `axis` replaced by `indices[e]`. `indices` is an integer tile of the tile's shape but
    /// along `axis`, where its length is free; an index outside the axis gives 0.
    pub fn take<I: Int>(self, indices: Tile<I>) -> Tile<T> {
        unreachable!()
    }

    /// For each element of an integer or `bool` tile, how many elements before it (row-major)
    /// have the same value, as an `i32` tile: the rank within its key that a stable radix
    /// scatter needs (`offsets[key] + rank`).
    ///
    /// **Cost.** Tiles of 8-bit elements (`u8`, `i8`, `bool`) are ranked by counting: each
    /// warp groups equal values with eight ballots and keeps a count per value, as CUB's
    /// `BlockRadixRankMatch` does (4096 bytes on 256 threads: about 850 SASS instructions a
    /// thread; the device radix sort's passes order their tiles this way: 2^28 `u32` keys took
    /// 7.93-7.95 ms on an H100, 8.05-8.07 ms ordered by an `argsort` of the digits). Wider types
    /// compare each element with every earlier one, `n * n / threads` steps a thread: cheap
    /// for a few hundred elements, slow for thousands (4096 `i32` keys on 256 threads take
    /// about 33,000 comparisons a thread). For wide keys with few distinct values, rank a
    /// narrower code of them; otherwise [`Tile::argsort`] gives the stable order directly.
    ///
    /// **Order.** `x.equal_rank(order = [1, 0])` counts in another order: "before" is in the
    /// row-major order of the coordinates permuted by `order` (the tile's axes, each once,
    /// outermost first), so `[1, 0]` counts a matrix down its columns. A `[J, W, 32]` tile of
    /// 8-bit elements on `32 W` threads counted in order `[1, 0, 2]` is the fastest rank
    /// there is: thread `32 w + l` holds element `(j, w, l)` in its `j`-th register, so each
    /// warp counts its own registers and nothing moves through shared memory. Loaded so that
    /// element `(j, w, l)` is key `32 J w + 32 j + l` of a contiguous run (CUB's warp-striped
    /// arrangement: an index computed from `arange` by shifts, masks, sums and products costs
    /// its arithmetic once a thread and an add an element), the order is the keys' own order;
    /// the device radix sort's keys pass does this (2^28 `u32` keys on an H100: 7.05-7.07 ms
    /// ranked through shared memory, 6.71-6.75 ms so). Other orders stage the elements at their permuted positions (a few index
    /// instructions an element).
    ///
    /// # Example
    ///
    /// Ranks of a `[2, 3]` tile counted along its rows and down its columns.
    ///
    /// ```
    /// use tilus::prelude::*;
    ///
    /// #[tile_kernel(threads = 32)]
    /// fn ranks(x: GlobalTensor<u8>, out: GlobalTensor<i32>) {
    ///     let t = load_global(x.view(0, [2, 3]), offsets = [0, 0], shape = [2, 3]);
    ///     store_global(out.view(0, [2, 3]), t.equal_rank(), offsets = [0, 0]);
    ///     store_global(out.view(6, [2, 3]), t.equal_rank(order = [1, 0]), offsets = [0, 0]);
    /// }
    ///
    /// fn main() -> Result<(), tilus::Error> {
    ///     let dev = tilus::Device::emulator();
    ///     // [[7, 5, 7],
    ///     //  [7, 7, 5]]
    ///     let x = dev.upload(&[7u8, 5, 7, 7, 7, 5])?;
    ///     let out = dev.zeros::<i32>(12)?;
    ///     ranks::launch(&dev, 1, &x, &out)?;
    ///     let got = out.download()?;
    ///     // Along the rows: 7s at (0,0) (0,2) (1,0) (1,1), 5s at (0,1) (1,2).
    ///     assert_eq!(got[..6], [0, 0, 1, 2, 3, 1]);
    ///     // Down the columns: 7s at (0,0) (1,0) (1,1) (0,2), 5s at (0,1) (1,2).
    ///     assert_eq!(got[6..], [0, 0, 3, 1, 2, 1]);
    ///     Ok(())
    /// }
    /// ```
    pub fn equal_rank(self) -> Tile<i32> {
        unreachable!()
    }

    /// Each element's place in a stable counting sort of the tile by value, where the elements
    /// of value `v` start at `starts[v]`: `starts.take(x) + x.equal_rank()` (a value outside
    /// `starts` starts at 0), an `i32` tile of the tile's shape. `starts` is a rank-1 `i32`
    /// tile, usually the exclusive [`Tile::cumsum`] of the tile's [`Tile::histogram`]; the
    /// places then run over `0..n` once each, and a scatter to them orders the tile by value,
    /// stably.
    ///
    /// **Cost.** A `u8` tile with 256 starts or more is counted as [`Tile::equal_rank`] counts
    /// it, its per-warp prefixes begun at the starts: no gather and no add, and no register
    /// holds both terms at once (on an H100 the radix sort's keys, 2^28 `u32` on tiles of
    /// 4096, took 7.71-7.72 ms this way against 7.93-7.95 ms with `starts.take(x) +
    /// x.equal_rank()`). Other tiles cost an equal rank and a `take`. `order = [..]` counts
    /// in another order, as for [`Tile::equal_rank`].
    ///
    /// # Example
    ///
    /// A stable counting sort of 300 (key, value) pairs by a one-byte key: the keys' histogram,
    /// its exclusive prefix sums as the starts, and a scatter of each pair to its place.
    ///
    /// ```
    /// use tilus::prelude::*;
    ///
    /// #[tile_kernel(threads = 64)]
    /// fn counting_sort(
    ///     keys: GlobalTensor<u8>,
    ///     vals: GlobalTensor<i32>,
    ///     keys_out: GlobalTensor<u8>,
    ///     vals_out: GlobalTensor<i32>,
    /// ) {
    ///     let k = load_global(keys, offsets = [0], shape = [300]);
    ///     let v = load_global(vals, offsets = [0], shape = [300]);
    ///     let starts = (k as i32).histogram(256).cumsum(0, exclusive = true);
    ///     let at = k.place(starts);
    ///     store_global_scatter(keys_out, dim = 0, indices = at, values = k);
    ///     store_global_scatter(vals_out, dim = 0, indices = at, values = v);
    /// }
    ///
    /// fn main() -> Result<(), tilus::Error> {
    ///     let dev = tilus::Device::emulator();
    ///     let keys: Vec<u8> = (0..300u32).map(|i| (i * 37 % 11) as u8).collect();
    ///     let vals: Vec<i32> = (0..300).collect();
    ///     let (k, v) = (dev.upload(&keys)?, dev.upload(&vals)?);
    ///     let (ko, vo) = (dev.zeros::<u8>(300)?, dev.zeros::<i32>(300)?);
    ///     counting_sort::launch(&dev, 1, &k, &v, &ko, &vo)?;
    ///     // Stable: equal keys keep their input order (a sort by key, then position).
    ///     let mut want: Vec<(u8, i32)> = keys.iter().copied().zip(vals.iter().copied()).collect();
    ///     want.sort_by_key(|&(key, _)| key);
    ///     let got: Vec<(u8, i32)> = ko.download()?.into_iter().zip(vo.download()?).collect();
    ///     assert_eq!(got, want);
    ///     Ok(())
    /// }
    /// ```
    pub fn place(self, starts: Tile<i32>) -> Tile<i32> {
        unreachable!()
    }

    /// The counts of the values `0..bins` in an integer tile, as an `i32` tile of shape
    /// `[bins]`; values outside are not counted. With [`Tile::equal_rank`] and an exclusive
    /// [`Tile::cumsum`] of the counts it gives each key's place in a stable partition.
    pub fn histogram(self, bins: usize) -> Tile<i32> {
        unreachable!()
    }
}

impl Tile<bool> {
    /// Whether any element is `true`, as a `bool` scalar: the usual way to branch on data
    /// (`if (t < 0).any() { .. }`).
    pub fn any(self) -> bool {
        unreachable!()
    }

    /// Whether every element is `true`, as a `bool` scalar. `t.all(axis)` and `t.any(axis)`
    /// reduce along an axis, as [`Tile::sum`].
    pub fn all(self) -> bool {
        unreachable!()
    }
}

impl<T: Float> Tile<T> {
    /// The square root of every element, correctly rounded (`sqrt.rn`; for `f16`/`bf16` the
    /// `f32` root rounded to the type, which is also correctly rounded). Negative inputs give
    /// NaN. Same as [`sqrt`](super::sqrt).
    pub fn sqrt(self) -> Tile<T> {
        unreachable!()
    }

    /// Rounds every element toward negative infinity, like `f32::floor`.
    pub fn floor(self) -> Tile<T> {
        unreachable!()
    }

    /// Rounds every element toward positive infinity, like `f32::ceil`.
    pub fn ceil(self) -> Tile<T> {
        unreachable!()
    }

    /// Rounds every element toward zero, like `f32::trunc`.
    pub fn trunc(self) -> Tile<T> {
        unreachable!()
    }

    /// Rounds every element to the nearest integer, halfway cases away from zero, like
    /// `f32::round`.
    pub fn round(self) -> Tile<T> {
        unreachable!()
    }

    /// Rounds every element to the nearest integer, halfway cases to even, like
    /// `f32::round_ties_even`.
    pub fn round_ties_even(self) -> Tile<T> {
        unreachable!()
    }

    /// `self * b + c` with a single rounding, like `f32::mul_add` (PTX `fma.rn`), with
    /// broadcasting; the same as [`fma`](super::fma). Unsuffixed literals among `b`, `c` take
    /// the tile's type. For `f16`/`bf16` the fused operation is done in `f32` and its result
    /// rounded to the type.
    pub fn mul_add(self, b: impl Value<T>, c: impl Value<T>) -> Tile<T> {
        unreachable!()
    }

    /// `e^x` of every element, within 2 ulp; the same as [`exp`](super::exp).
    pub fn exp(self) -> Tile<T> {
        unreachable!()
    }

    /// The natural logarithm of every element, within 2 ulp; the same as [`ln`](super::ln)
    /// (also spelled `log`).
    #[doc(alias = "log")]
    pub fn ln(self) -> Tile<T> {
        unreachable!()
    }

    /// The bit pattern of every element, as the unsigned integer type of the same width (`u16`
    /// for `f16`/`bf16`, `u32` for `f32`, `u64` for `f64`), like Rust's `f32::to_bits`. The
    /// inverse is [`f32::from_bits`](super::from_bits). Works on float scalars too.
    pub fn to_bits<U: Int>(self) -> Tile<U> {
        unreachable!()
    }
}

impl<T: Element> GlobalTensor<T> {
    /// The number of elements of a parameter, or the first dim of a view, as an `i64` scalar.
    ///
    /// It is `i64` so that tensors longer than 2^31 elements can be described; a loop
    /// `for start in (block_idx() * 4096..x.len()).step_by(..)` types its context-typed bounds
    /// (`block_idx()`, literals) as `i64` from it. Convert with `as i32` where an `i32` is needed.
    pub fn len(self) -> i64 {
        unreachable!()
    }

    /// The extent of axis `axis` (an integer literal below the rank), as an `i64` scalar.
    pub fn dim(self, axis: usize) -> i64 {
        unreachable!()
    }

    /// A row-major window of rank 1 to 3: element `[i, j]` of `x.view(offset, [rows, cols])` is
    /// element `offset + i * cols + j` of `x`.
    ///
    /// `offset` and the dims are block-uniform integer scalars of any type, computed at run
    /// time. Accesses through a view are bounds-checked against its dims *and* against the whole
    /// tensor, so a view may hang over the end of the tensor. A view of a view starts `offset`
    /// elements after the inner view's first element and is checked against its own dims and
    /// the whole tensor (not the inner view's dims). Views are how global memory gets a rank
    /// above 1, and how a builtin that addresses from the start (`atomic::global_scatter_add`)
    /// is pointed at an offset.
    pub fn view(self, offset: impl Int, dims: Coords) -> GlobalTensor<T> {
        unreachable!()
    }
}
