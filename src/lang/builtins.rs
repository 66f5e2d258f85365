//! The free builtins of the kernel language, as documentation-only functions.
//!
//! Each function here documents the builtin of the same name that a `#[tile_kernel]` body may
//! call. The signatures are real Rust, over the documentation-only types of `values.rs`: the
//! required arguments in order; optional arguments are listed in each item's table and are
//! given as `name = value` keywords (or positionally after the required ones, in the order of
//! the table). The indexed atomics are in `indexed.rs`, the tilus atomic group in `atomic.rs`.

use super::values::{
    Coords, ElementType, Float, GlobalTensor, Int, MemoryOrder, MemoryScope, Num, Shape,
    SharedTensor, Tile, Value,
};
use crate::Element;

/// The index of this block in the grid, along axis 0 (x) or, with an argument, along axis
/// `axis` of a 2-D or 3-D grid.
///
/// ```text
/// block_idx() -> integer scalar
/// block_idx(axis) -> integer scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `axis` | integer literal, optional (default `0`) | `0` (x), `1` (y) or `2` (z); anything else is a compile error |
///
/// The value is a block-uniform scalar from `0` to `grid_dim(axis) - 1`. It is *context-typed*
/// like an integer literal: it takes the integer type its use needs (`block_idx() * 4096..n`
/// with `n = x.len()` is an `i64` range) and is an `i32` otherwise. Along an axis the launch
/// does not use (axes 1 and 2 of a 1-D grid) it is `0`. The block order is x fastest, then y,
/// then z.
///
/// **Target:** any (PTX `%ctaid.x`, `.y`, `.z`).
///
/// # Example
///
/// Every block writes its index, the grid size and its index along y (0: the launch is 1-D):
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn ids(out: GlobalTensor<i32>) {
///     let lane = arange(3);
///     let v = select(lane == 0, block_idx(), select(lane == 1, grid_dim(), block_idx(1)));
///     store_global(out, v, offsets = [block_idx() * 3]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.full(15, -1)?;
///     ids::launch(&dev, 5, &out)?;
///     let want: Vec<i32> = (0..5).flat_map(|b| [b, 5, 0]).collect();
///     assert_eq!(out.download()?, want);
///     Ok(())
/// }
/// ```
///
/// A 3-D grid, launched with a [`Grid`](crate::Grid): every block writes its coordinates at
/// its linear position (x fastest):
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn coords(out: GlobalTensor<i32>) {
///     let x = block_idx(0);
///     let y = block_idx(1);
///     let z = block_idx(2);
///     let linear = (z * grid_dim(1) + y) * grid_dim(0) + x;
///     let lane = arange(3);
///     store_global(out, select(lane == 0, x, select(lane == 1, y, z)), offsets = [linear * 3]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.full(4 * 3 * 2 * 3, -1)?;
///     coords::launch(&dev, Grid::new(4, 3, 2), &out)?;
///     let want: Vec<i32> = (0..2)
///         .flat_map(|z| (0..3).flat_map(move |y| (0..4).flat_map(move |x| [x, y, z])))
///         .collect();
///     assert_eq!(out.download()?, want);
///     Ok(())
/// }
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(out: GlobalTensor<i32>) {
///     // error: grid axis 3 does not exist: grids have axes 0 (x), 1 (y) and 2 (z)
///     store_global(out, full([1], block_idx(3)), offsets = [0]);
/// }
/// # fn main() {}
/// ```
pub fn block_idx<I: Int>() -> I {
    unreachable!()
}

/// The number of blocks in the grid along axis 0 (x) or, with an argument, along `axis`.
///
/// ```text
/// grid_dim() -> integer scalar
/// grid_dim(axis) -> integer scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `axis` | integer literal, optional (default `0`) | `0` (x), `1` (y) or `2` (z) |
///
/// Context-typed like [`block_idx`] (an `i32` unless its use needs another integer type); `1`
/// along an axis the launch does not use. The usual grid-stride loop is
/// `for start in (block_idx() * T..n).step_by(grid_dim() * T)`.
///
/// **Target:** any (PTX `%nctaid.x`, `.y`, `.z`).
///
/// # Example
///
/// A grid-stride copy that works for any grid size, with the `i64` length of the tensor typing
/// the loop:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn copy(x: GlobalTensor<u16>, y: GlobalTensor<u16>) {
///     for start in (block_idx() * 256..x.len()).step_by(grid_dim() * 256) {
///         let t = load_global(x, offsets = [start], shape = [256]);
///         store_global(y, t, offsets = [start]);
///     }
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<u16> = (0..1500).map(|i| (i * 7919 % 65536) as u16).collect();
///     let x = dev.upload(&data)?;
///     for blocks in [1, 3] {
///         let y = dev.zeros::<u16>(1500)?;
///         copy::launch(&dev, blocks, &x, &y)?;
///         assert_eq!(y.download()?, data);
///     }
///     Ok(())
/// }
/// ```
pub fn grid_dim<I: Int>() -> I {
    unreachable!()
}

/// Each element's warp lane: the lane (`0..32`, `thread index % 32`) of the thread that holds the
/// element in the tile's layout.
///
/// ```text
/// lane_ids(shape) -> Tile<integer>
/// lane_ids(shape, dtype) -> Tile<T>
/// lane_ids::<T>(shape) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `shape` | [`Shape`], required | the tile's shape, integer literals |
/// | `dtype` | [`ElementType`], optional | an integer type (`lane_ids([4096], u32)`) |
///
/// The element type is the one named, else the integer type the context needs, else `i32`. The
/// values depend on the layout the compiler chooses for a tile of this many elements (see the
/// [execution model](super#execution-model)), which is the same on the GPU and on the emulator;
/// the element at a given position has the same lane in every tile of that element count.
///
/// What it is for: shared memory has 32 banks, and an atomic on a small shared histogram (256
/// bins) from a warp whose 32 lanes hit random bins is replayed once per bank conflict. With
/// one copy of each bin per lane, `counts[bin * 32 + lane]`, every lane of a warp works in its own
/// bank and the atomics never conflict; the copies are summed once at the end. This takes a
/// 256-bin histogram of bytes from 0.73 of the memory read rate to 0.91 on an H100
/// (`examples/histogram_u8.rs`, BENCHMARKS.md). The program's results never depend on the
/// values, only its speed: any index into the copies is as correct as any other.
///
/// The compiler knows the values are at most 31, so an index such as `bins * 32 + lanes` into a
/// shared tensor of `256 * 32` elements, with `bins` a `u8` tile converted to `i32`, needs no bounds
/// test.
///
/// **Target:** any. PTX: `%tid.x & 31`, one register for all of a thread's elements.
///
/// # Example
///
/// A histogram of 0..16 with one copy of each bin per lane:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn spread(x: GlobalTensor<u8>, hist: GlobalTensor<u32>, lanes: GlobalTensor<i32>) {
///     let copies = shared_tensor(u32, [16 * 32]);
///     store_shared(copies, zeros([16 * 32]));
///     sync();
///     let v = load_global(x, offsets = [0], shape = [256]);
///     let bins = (v & 15) as i32;
///     atomic::shared_scatter_add(copies, dim = 0, indices = bins * 32 + lane_ids([256]), values = 1);
///     sync();
///     // Bin b's copies are b * 32 + 0..32; the rotation by b reads them without bank conflicts.
///     let mut total = zeros([16]);
///     for c in 0..32 {
///         total += atomic_load(copies, arange(16) * 32 + ((arange(16) + c) & 31));
///     }
///     store_global(hist, total, offsets = [0]);
///     store_global(lanes, lane_ids([256]), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<u8> = (0..256u32).map(|i| (i * 7 % 251) as u8).collect();
///     let x = dev.upload(&data)?;
///     let hist = dev.zeros::<u32>(16)?;
///     let lanes = dev.zeros::<i32>(256)?;
///     spread::launch(&dev, 1, &x, &hist, &lanes)?;
///     let mut want = vec![0u32; 16];
///     for v in &data {
///         want[(v & 15) as usize] += 1;
///     }
///     assert_eq!(hist.download()?, want);
///     assert!(lanes.download()?.iter().all(|l| (0..32).contains(l)));
///     Ok(())
/// }
/// ```
pub fn lane_ids<T: Int>(shape: Shape) -> Tile<T> {
    unreachable!()
}

/// The tile `[0, 1, .., n - 1]`.
///
/// ```text
/// arange(n) -> Tile<integer>
/// arange::<T>(n) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `n` | integer literal, required | the length, 1 to 65 536 |
///
/// The element type is the one named by the generic argument (`arange::<u64>(8)`) or by the
/// length's suffix (`arange(8u64)`, as Rust types `0..8u64`), else the integer type the context
/// needs (`arange(8) + x` with `x: u64`), else `i32`. `n - 1` must fit in it: `arange(300)` as `u8`
/// is a compile error. To count from a runtime start, add it: `arange(256) + start`.
///
/// **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn iota(out: GlobalTensor<i64>, low: GlobalTensor<u8>) {
///     let base = block_idx() * 256;
///     // `i64` from `out`; the elements past `out.len()` are not stored.
///     store_global(out, arange(256) + base, offsets = [base]);
///     // `u8` from `low`: 0..=255 fits.
///     store_global(low, arange(256), offsets = [base]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.full(600, -1i64)?;
///     let low = dev.zeros::<u8>(600)?;
///     iota::launch(&dev, 3, &out, &low)?;
///     assert_eq!(out.download()?, (0..600).collect::<Vec<i64>>());
///     assert_eq!(low.download()?, (0..600).map(|i| (i % 256) as u8).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
pub fn arange<T: Int>(n: usize) -> Tile<T> {
    unreachable!()
}

/// A tile of zeros.
///
/// ```text
/// zeros(shape) -> Tile<T>
/// zeros(shape, dtype) -> Tile<T>
/// zeros::<T>(shape) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `shape` | [`Shape`], required | the tile's shape, integer literals |
/// | `dtype` | [`ElementType`], optional | the element type (`zeros([4], f32)`) |
///
/// Without `dtype` or a generic argument the element type is the numeric type the context needs
/// (`store_shared(counts, zeros([256]))` into a `u32` tensor makes `u32` zeros), else `i32`. A
/// `let mut acc = zeros([8]);` keeps its type open until its first use decides it (see
/// [`types`](super::types#literals-and-context)).
///
/// **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn fills(f: GlobalTensor<f32>, c: GlobalTensor<u16>, h: GlobalTensor<i64>) {
///     store_global(f, zeros([8]), offsets = [0]); // f32 zeros, from `f`
///     let mut acc = zeros([8]); // open: the first use below makes it u16
///     acc += load_global(c, offsets = [0], shape = [8]);
///     store_global(c, acc * 2, offsets = [0]);
///     store_global(h, zeros([8], i64) - ones::<i64>([8]), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let f = dev.full(8, f32::NAN)?;
///     let c = dev.upload(&[1u16, 2, 3, 4, 5, 6, 7, 40000])?;
///     let h = dev.zeros::<i64>(8)?;
///     fills::launch(&dev, 1, &f, &c, &h)?;
///     assert_eq!(f.download()?, vec![0.0; 8]);
///     assert_eq!(c.download()?, vec![2, 4, 6, 8, 10, 12, 14, 14464]); // u16 wraps
///     assert_eq!(h.download()?, vec![-1; 8]);
///     Ok(())
/// }
/// ```
pub fn zeros<T: Num>(shape: Shape) -> Tile<T> {
    unreachable!()
}

/// A tile of ones.
///
/// ```text
/// ones(shape) -> Tile<T>
/// ones(shape, dtype) -> Tile<T>
/// ones::<T>(shape) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `shape` | [`Shape`], required | the tile's shape, integer literals |
/// | `dtype` | [`ElementType`], optional | the element type (`ones([4], f16)`) |
///
/// The element type is chosen as for [`zeros`]: the `dtype`, the generic argument, the type the
/// context needs, or `i32`.
///
/// **Target:** any.
///
/// # Example
///
/// `ones` as the counting values of an atomic (the tensor's `u32` type reaches the `ones`):
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn count(n: GlobalTensor<u32>) {
///     atomic::global_add(n, ones([4]));
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let n = dev.zeros::<u32>(4)?;
///     count::launch(&dev, 6, &n)?;
///     assert_eq!(n.download()?, vec![6; 4]);
///     Ok(())
/// }
/// ```
pub fn ones<T: Num>(shape: Shape) -> Tile<T> {
    unreachable!()
}

/// A tile filled with one scalar value.
///
/// ```text
/// full(shape, value) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `shape` | [`Shape`], required | the tile's shape, integer literals |
/// | `value` | scalar `T`, required | the fill value, of any element type (a runtime value is fine) |
///
/// The tile has the type of `value`; an unsuffixed literal takes the type the context needs
/// (`full([4], 1.5)` stored into an `f16` tensor is an `f16` tile). `full([1], s)` is the way
/// to store a scalar `s`: stores and atomics on global memory take tiles.
///
/// **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn fill(x: GlobalTensor<f16>, flags: GlobalTensor<bool>, sums: GlobalTensor<i64>) {
///     store_global(x, full([4], 1.5), offsets = [0]);
///     store_global(flags, full([4], block_idx() == 0), offsets = [0]);
///     let n = x.len(); // an i64 scalar
///     store_global(sums, full([1], n * 10), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let x = dev.zeros::<f16>(4)?;
///     let flags = dev.zeros::<bool>(4)?;
///     let sums = dev.zeros::<i64>(1)?;
///     fill::launch(&dev, 1, &x, &flags, &sums)?;
///     assert_eq!(x.download()?, vec![f16::from_f32(1.5); 4]);
///     assert_eq!(flags.download()?, vec![true; 4]);
///     assert_eq!(sums.download()?, vec![40]);
///     Ok(())
/// }
/// ```
pub fn full<T: Element>(shape: Shape, value: T) -> Tile<T> {
    unreachable!()
}

/// Element-wise choice: `cond ? a : b`, with broadcasting.
///
/// ```text
/// select(cond, a, b) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `cond` | `bool` [`Value`], required | where it is `true` the result takes `a`, else `b` |
/// | `a`, `b` | [`Value<T>`], required | the two choices, of one element type |
///
/// The three operands broadcast to one shape (numpy's rule); the result is a scalar when all
/// three are scalars. `a` and `b` must have the same element type (an unsuffixed literal takes
/// the other's). Both are evaluated: `select` chooses between values, not between effects. The
/// value-`if` expression `if c { a } else { b }` is the same operation.
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn relu(x: GlobalTensor<f32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [64]);
///     store_global(y, select(t > 0.0, t, 0.0), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f32> = (0..50).map(|i| (i as f32 - 25.0) * 0.75).collect();
///     let (x, y) = (dev.upload(&data)?, dev.full(50, f32::NAN)?);
///     relu::launch(&dev, 1, &x, &y)?;
///     assert_eq!(y.download()?, data.iter().map(|v| v.max(0.0)).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
pub fn select<T: Element>(
    cond: impl Value<bool>,
    a: impl Value<T>,
    b: impl Value<T>,
) -> impl Value<T> {
    unreachable!()
}

/// Element-wise minimum of two numbers, with broadcasting. Also `a.min(b)`.
///
/// ```text
/// min(a, b) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `a`, `b` | numeric [`Value<T>`], required | of one element type (an unsuffixed literal takes the other's) |
///
/// Integers compare by their signedness. Floats follow IEEE 754 `minNum`, like Rust's
/// `f32::min`: a NaN operand is ignored (the result is NaN only when both are), and `-0.0` is
/// smaller than `+0.0`. Without arguments, `t.min()` is instead the reduction
/// [`Tile::min`](super::Tile::min).
///
/// **Element types:** every numeric type ([`Num`]). **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn clamp(x: GlobalTensor<i16>, y: GlobalTensor<i16>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     store_global(y, max(min(t, 100), -100), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i16> = (0..32).map(|i| (i - 16) * 13).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<i16>(32)?);
///     clamp::launch(&dev, 1, &x, &y)?;
///     assert_eq!(y.download()?, data.iter().map(|&v| v.clamp(-100, 100)).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
pub fn min<T: Num>(a: impl Value<T>, b: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Element-wise maximum of two numbers, with broadcasting. Also `a.max(b)`.
///
/// ```text
/// max(a, b) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `a`, `b` | numeric [`Value<T>`], required | of one element type |
///
/// As [`min`], the other way round: floats follow IEEE 754 `maxNum` (a NaN operand is ignored;
/// `+0.0` is larger than `-0.0`). Without arguments, `t.max()` is the reduction
/// [`Tile::max`](super::Tile::max).
///
/// **Element types:** every numeric type ([`Num`]). **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn top(x: GlobalTensor<f64>, y: GlobalTensor<f64>) {
///     let t = load_global(x, offsets = [0], shape = [8]);
///     store_global(y, max(t, f64::NAN) + t.max(0.5), offsets = [0]); // NaN is ignored
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data = [-2.0, -0.25, 0.0, 0.25, 0.75, 1.0, 3.0, -7.5];
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<f64>(8)?);
///     top::launch(&dev, 1, &x, &y)?;
///     assert_eq!(y.download()?, data.iter().map(|v| v + v.max(0.5)).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
pub fn max<T: Num>(a: impl Value<T>, b: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Element-wise absolute value. Also `x.abs()`.
///
/// ```text
/// abs(x) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `x` | numeric [`Value<T>`], required | |
///
/// Signed integers wrap like Rust's `wrapping_abs` (`abs(i32::MIN)` is `i32::MIN`); unsigned
/// integers are returned unchanged; floats lose their sign bit (`abs(-0.0)` is `+0.0`).
///
/// **Element types:** every numeric type ([`Num`]). **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn magnitudes(x: GlobalTensor<i8>, y: GlobalTensor<i8>) {
///     store_global(y, abs(load_global(x, offsets = [0], shape = [4])), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (x, y) = (dev.upload(&[-5i8, 7, -128, 0])?, dev.zeros::<i8>(4)?);
///     magnitudes::launch(&dev, 1, &x, &y)?;
///     assert_eq!(y.download()?, vec![5, 7, -128, 0]);
///     Ok(())
/// }
/// ```
pub fn abs<T: Num>(x: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Element-wise square root of floats, correctly rounded. Also `x.sqrt()`.
///
/// ```text
/// sqrt(x) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `x` | float [`Value<T>`], required | an unsuffixed literal is an `f64` here unless the context says otherwise |
///
/// PTX `sqrt.rn` (no approximation, no flush to zero); `f16`/`bf16` take the `f32` root and
/// round it, which is also correctly rounded. Negative inputs give NaN. An integer argument is
/// a compile error that suggests a conversion.
///
/// **Element types:** [`Float`] (`f16`, `bf16`, `f32`, `f64`). **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn norms(x: GlobalTensor<f32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     store_global(y, sqrt(t * t + 1.0), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f32> = (0..32).map(|i| i as f32 * 0.37).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<f32>(32)?);
///     norms::launch(&dev, 1, &x, &y)?;
///     assert_eq!(y.download()?, data.iter().map(|v| (v * v + 1.0).sqrt()).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(x: GlobalTensor<i32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     // error: `sqrt` takes floats, found an `i32` tile (help: `(x as f32).sqrt()`)
///     store_global(y, sqrt(t), offsets = [0]);
/// }
/// # fn main() {}
/// ```
pub fn sqrt<T: Float>(x: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Fused multiply-add, `a * b + c` with one rounding, with broadcasting. Also
/// `a.mul_add(b, c)`.
///
/// ```text
/// fma(a, b, c) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `a`, `b`, `c` | float [`Value<T>`], required | of one float type (unsuffixed literals take it) |
///
/// PTX `fma.rn`: the same value as Rust's `f32::mul_add`. For `f16`/`bf16` the fused operation
/// is done in `f32` and rounded to the type.
///
/// **Element types:** [`Float`]. **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn axpy(x: GlobalTensor<f64>, y: GlobalTensor<f64>, a: f64) {
///     let t = load_global(x, offsets = [0], shape = [16]);
///     let u = load_global(y, offsets = [0], shape = [16]);
///     store_global(y, fma(a, t, u), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let xs: Vec<f64> = (0..16).map(|i| 0.1 * i as f64).collect();
///     let (x, y) = (dev.upload(&xs)?, dev.full(16, 1.0 / 3.0)?);
///     axpy::launch(&dev, 1, &x, &y, 2.5)?;
///     let want: Vec<f64> = xs.iter().map(|v| 2.5f64.mul_add(*v, 1.0 / 3.0)).collect();
///     assert_eq!(y.download()?, want);
///     Ok(())
/// }
/// ```
pub fn fma<T: Float>(a: impl Value<T>, b: impl Value<T>, c: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Element-wise exponential `e^x` of floats. Also `x.exp()`.
///
/// ```text
/// exp(x) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `x` | float [`Value<T>`], required | |
///
/// PTX has only an approximate `ex2.approx`, which the emulator could not reproduce bit for bit,
/// so `exp` is compiled to a short sequence of correctly rounded operations (a Cody-Waite
/// reduction by `ln 2` and a polynomial) that both back ends evaluate identically. The result
/// is within 2 ulp of the exact value over the whole range, with the IEEE special cases:
/// `exp(-inf) = 0`, `exp(+inf) = inf`, overflow to `inf`, gradual underflow into the
/// subnormals, NaN for NaN. `f16`/`bf16` are computed in `f32` and rounded once more.
///
/// **Element types:** [`Float`]. **Target:** any.
///
/// # Example
///
/// A numerically stable softmax of one row (the largest element is subtracted first):
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn softmax(x: GlobalTensor<f32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [64], other = f32::NEG_INFINITY);
///     let e = exp(t - t.max()); // padding lanes give exp(-inf) = 0
///     store_global(y, e / e.sum(), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f32> = (0..50).map(|i| ((i * 37) % 23) as f32 * 0.4 - 3.0).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<f32>(50)?);
///     softmax::launch(&dev, 1, &x, &y)?;
///     let m = data.iter().cloned().fold(f32::MIN, f32::max) as f64;
///     let z: f64 = data.iter().map(|&v| (v as f64 - m).exp()).sum();
///     for (g, &v) in y.download()?.iter().zip(&data) {
///         let want = (v as f64 - m).exp() / z;
///         assert!((*g as f64 - want).abs() <= 1e-6 * want, "{g} vs {want}");
///     }
///     Ok(())
/// }
/// ```
pub fn exp<T: Float>(x: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// Element-wise natural logarithm of floats. Also written `log(x)` (as in numpy, Triton and
/// CUDA) and `x.ln()`.
///
/// ```text
/// ln(x) -> tile or scalar
/// log(x) -> tile or scalar
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `x` | float [`Value<T>`], required | |
///
/// Compiled, like [`exp`], to correctly rounded operations that both back ends evaluate
/// identically (the mantissa and exponent are read from the bits, `ln m = 2 atanh(s)` by its
/// series); within 2 ulp over the whole range, subnormal inputs included, with `ln(0) = -inf`,
/// `ln(inf) = inf` and NaN for negative inputs and NaN. `f16`/`bf16` are computed in `f32` and
/// rounded once more.
///
/// **Element types:** [`Float`]. **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn logs(x: GlobalTensor<f64>, y: GlobalTensor<f64>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     store_global(y, ln(t) + log(t) - t.ln(), offsets = [0]); // three spellings of one function
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f64> = (0..32).map(|i| 1.7f64.powi(i - 10)).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<f64>(32)?);
///     logs::launch(&dev, 1, &x, &y)?;
///     for (g, v) in y.download()?.iter().zip(&data) {
///         assert!((g - v.ln()).abs() <= 4.0 * f64::EPSILON * v.ln().abs().max(1.0), "ln {v}");
///     }
///     Ok(())
/// }
/// ```
#[doc(alias = "log")]
pub fn ln<T: Float>(x: impl Value<T>) -> impl Value<T> {
    unreachable!()
}

/// The float whose bit pattern is `x`: written `f32::from_bits(x)`, `f64::from_bits(x)`,
/// `f16::from_bits(x)` or `bf16::from_bits(x)`. The inverse of [`Tile::to_bits`].
///
/// ```text
/// f32::from_bits(x) -> tile or scalar of f32
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `x` | [`Value<U>`], required | `U` is the unsigned integer type of the float's width: `u16` for `f16`/`bf16`, `u32` for `f32`, `u64` for `f64` |
///
/// A reinterpretation, like Rust's `f32::from_bits`: no bits change, so NaN payloads and
/// signed zeros come through. Another integer type is a compile error (convert it with `as`
/// first). It lets a kernel build floats from bits and, with [`to_bits`](Tile::to_bits),
/// compare or sort floats as integers.
///
/// **Element types:** `U` as above. **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn halve(x: GlobalTensor<f32>, bits: GlobalTensor<u32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [16]);
///     store_global(bits, t.to_bits(), offsets = [0]);
///     // Halving a normal float: one less in the exponent field.
///     store_global(y, f32::from_bits(t.to_bits() - (1u32 << 23)), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f32> = (0..16).map(|i| (i as f32 - 7.5) * 1.25e3).collect();
///     let x = dev.upload(&data)?;
///     let (bits, y) = (dev.zeros::<u32>(16)?, dev.zeros::<f32>(16)?);
///     halve::launch(&dev, 1, &x, &bits, &y)?;
///     assert_eq!(bits.download()?, data.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
///     assert_eq!(y.download()?, data.iter().map(|v| v / 2.0).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(x: GlobalTensor<i32>, y: GlobalTensor<f32>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     // error: `f32::from_bits` takes a `u32`, found an `i32` tile
///     store_global(y, f32::from_bits(t), offsets = [0]);
/// }
/// # fn main() {}
/// ```
pub fn from_bits<F: Float, U: Int>(x: impl Value<U>) -> impl Value<F> {
    unreachable!()
}

/// Loads a tile from global memory, bounds-checked, optionally masked.
///
/// ```text
/// load_global(src, offsets = [o0, ..], shape = [d0, ..], other = 0, mask = m) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `src` | [`GlobalTensor<T>`], required | a parameter or a view |
/// | `offsets` | [`Coords`], required | the coordinates of the tile's first element, one integer scalar per dimension of `src` |
/// | `shape` | [`Shape`], required | the tile's shape; its rank must be `src`'s |
/// | `other` | scalar `T`, optional (default zero, `false`) | the value of elements outside `src` or masked off |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of exactly `shape` (not broadcast) or a `bool` scalar; where it is `false` nothing is read |
///
/// Element `[i, j]` of the result is `src[o0 + i, o1 + j]` when that lies inside `src` (and
/// the mask is true there), else `other`. So a tile may run past the end of a tensor or view:
/// the last tile of a loop needs no special case, and no mask that only repeats the bounds
/// (`arange(n) + start < len`): choose an `other` the rest of the kernel ignores instead (zero
/// for a sum, the largest key for a sort, a value a filter rejects). Such a mask costs a compare
/// an element, and its predicates, kept live to be used again later, cost registers and the
/// instructions that pack them (the radix sort's and the compaction's kernels lost 16-26% of
/// their static instructions this way). Loads of contiguous elements become 16-byte
/// vector loads where the layout allows (16 × `u8`, 8 × `bf16`, 4 × `f32` per access).
/// These are plain (weak) loads: to read what another block wrote, see
/// [the memory model](super::memory_model).
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// A `[4, 32]` tile of a row-major matrix through a view, with a mask and an `other`:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn rows(m: GlobalTensor<f32>, out: GlobalTensor<f32>, cols: i32) {
///     let r0 = block_idx() * 4;
///     let mv = m.view(0, [m.len() / cols as i64, cols]);
///     let keep = (arange(32) % 2 == 0).reshape([1, 32]).broadcast_to([4, 32]);
///     let t = load_global(mv, offsets = [r0, 0], shape = [4, 32], other = -1.0, mask = keep);
///     store_global(out.view(0, [m.len() / cols as i64, 32]), t, offsets = [r0, 0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (r, c) = (10usize, 20usize); // 20 columns: the tile's last 12 columns are outside
///     let data: Vec<f32> = (0..r * c).map(|i| i as f32).collect();
///     let m = dev.upload(&data)?;
///     let out = dev.zeros::<f32>(r * 32)?;
///     rows::launch(&dev, 3, &m, &out, c as i32)?;
///     let got = out.download()?;
///     for i in 0..r {
///         for j in 0..32 {
///             let want = if j < c && j % 2 == 0 { data[i * c + j] } else { -1.0 };
///             assert_eq!(got[i * 32 + j], want, "[{i}, {j}]");
///         }
///     }
///     Ok(())
/// }
/// ```
pub fn load_global<T: Element>(src: GlobalTensor<T>, offsets: Coords, shape: Shape) -> Tile<T> {
    unreachable!()
}

/// Asks the GPU to bring a region of a 1-D global tensor into its L2 cache, ahead of a load.
///
/// ```text
/// prefetch_global(src, offsets = [o], shape = [n])
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `src` | [`GlobalTensor<T>`], required | a 1-D parameter or view (a row of a larger tensor is a 1-D `.view(..)`) |
/// | `offsets` | [`Coords`], required | the region's first element, one integer scalar |
/// | `shape` | [`Shape`], required | the region's length, `[n]` |
///
/// A hint: it reads nothing into the kernel, writes nothing, and orders nothing. Elements
/// `o .. o + n` that lie inside `src` are requested (PTX `prefetch.global.L2`, one instruction
/// a 128-byte line, spread over the block's threads); the rest of the region is skipped, so a
/// region past either end is harmless. The emulator does nothing. It pays where a block knows
/// which data a block after it will read: the radix sort's keys pass prefetches the tile it
/// expects to be taken one tile a multiprocessor later (an H100, 2^28 `u32` keys: 1.7% faster;
/// its pair passes, and prefetches further ahead, measured slower: the L2 is shared, and lines
/// brought in too early are evicted before they are read).
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn copy_ahead(x: GlobalTensor<f32>, y: GlobalTensor<f32>) {
///     let start = block_idx() * 512;
///     // The tile the block `grid_dim()` later reads (past the end: nothing requested).
///     prefetch_global(x, offsets = [start + grid_dim() * 512], shape = [512]);
///     let t = load_global(x, offsets = [start], shape = [512]);
///     store_global(y, t, offsets = [start]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<f32> = (0..2000).map(|i| i as f32).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<f32>(2000)?);
///     copy_ahead::launch(&dev, 4, &x, &y)?;
///     assert_eq!(y.download()?, data);
///     Ok(())
/// }
/// ```
pub fn prefetch_global<T: Element>(src: GlobalTensor<T>, offsets: Coords, shape: Shape) {
    unreachable!()
}

/// Stores a tile into global memory, bounds-checked, optionally masked.
///
/// ```text
/// store_global(dst, value, offsets = [o0, ..], mask = m)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view |
/// | `value` | [`Tile<T>`], required | a tile (not a scalar: its shape is the shape of the window written) of `dst`'s rank and element type |
/// | `offsets` | [`Coords`], required | the coordinates of the window's first element |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the value's shape or a `bool` scalar; where it is `false` nothing is written |
///
/// Element `[i, j]` of `value` is written to `dst[o0 + i, o1 + j]` when that lies inside `dst`;
/// elements outside are skipped. A value of another element type is a compile error that says
/// which `as` to write; to store a scalar, store `full([1], s)`. Stores of contiguous elements
/// become 16-byte vector stores where the layout allows. These are plain (weak) stores: other
/// blocks see them in no particular order, see [the memory model](super::memory_model).
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// A bool result next to the data it describes, stored through masks:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn flags(x: GlobalTensor<i32>, big: GlobalTensor<bool>, y: GlobalTensor<i32>) {
///     let s = block_idx() * 128;
///     let t = load_global(x, offsets = [s], shape = [128]);
///     store_global(big, t > 50, offsets = [s]);
///     store_global(y, t, offsets = [s], mask = t > 50); // other elements keep their value
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..300).map(|i| (i * 37) % 101).collect();
///     let x = dev.upload(&data)?;
///     let (big, y) = (dev.zeros::<bool>(300)?, dev.full(300, -9)?);
///     flags::launch(&dev, 3, &x, &big, &y)?;
///     assert_eq!(big.download()?, data.iter().map(|&v| v > 50).collect::<Vec<_>>());
///     assert_eq!(y.download()?, data.iter().map(|&v| if v > 50 { v } else { -9 }).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
///
/// ```compile_fail
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn k(x: GlobalTensor<f32>, y: GlobalTensor<i32>) {
///     let t = load_global(x, offsets = [0], shape = [32]);
///     // error: mismatched types: storing `f32` into a tensor of `i32` (help: `as i32`)
///     store_global(y, t, offsets = [0]);
/// }
/// # fn main() {}
/// ```
pub fn store_global<T: Element>(dst: GlobalTensor<T>, value: Tile<T>, offsets: Coords) {
    unreachable!()
}

/// Allocates a block-local shared-memory tensor.
///
/// ```text
/// shared_tensor(dtype, shape) -> SharedTensor<T>
/// shared_tensor::<T>(shape) -> SharedTensor<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dtype` | [`ElementType<T>`], required unless given as a generic argument | the element type |
/// | `shape` | [`Shape`], required | the tensor's shape, integer literals |
///
/// Allocations are made at compile time, each on a 16-byte boundary; together (with the
/// compiler's scratch space for broadcasts and reductions) they may take at most 227 KiB per
/// block, and more is a compile error at the allocation. The kernel's total is
/// `name::SHARED_BYTES`. The contents are undefined until written.
///
/// **Element types:** any (`bool` takes one byte per element). **Target:** any.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 64)]
/// fn reverse(x: GlobalTensor<bf16>, y: GlobalTensor<bf16>) {
///     let s = shared_tensor(bf16, [64]);
///     let w = shared_tensor::<u8>([64]);
///     store_shared(s, load_global(x, offsets = [0], shape = [64]));
///     store_shared(w, 7);
///     sync();
///     let t = load_shared(s);
///     sync(); // every thread has read `s` before any overwrites it
///     store_shared_scatter(s, dim = 0, indices = 63 - arange(64), values = t);
///     sync();
///     store_global(y, load_shared(s) * (load_shared(w) as bf16), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<bf16> = (0..64).map(|i| bf16::from_f32(i as f32 * 0.5)).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<bf16>(64)?);
///     reverse::launch(&dev, 1, &x, &y)?;
///     let want: Vec<bf16> = (0..64).map(|i| bf16::from_f32(data[63 - i].to_f32() * 7.0)).collect();
///     assert_eq!(y.download()?, want);
///     assert!(reverse::SHARED_BYTES >= 64 * 2 + 64);
///     Ok(())
/// }
/// ```
pub fn shared_tensor<T: Element>(dtype: ElementType<T>, shape: Shape) -> SharedTensor<T> {
    unreachable!()
}

/// Loads a whole shared tensor into a tile of its shape.
///
/// ```text
/// load_shared(src) -> Tile<T>
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `src` | [`SharedTensor<T>`], required | |
///
/// Elements written by other threads are seen only after a [`sync`] between the writes and this
/// load (the emulator reports a missing one as a race).
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// See [`shared_tensor`], which fills, reads back and rewrites a shared tensor; in short:
///
/// ```text
/// store_shared(s, t);
/// sync();
/// let back = load_shared(s);
/// ```
pub fn load_shared<T: Element>(src: SharedTensor<T>) -> Tile<T> {
    unreachable!()
}

/// Stores a tile (or a scalar, into every element) into a whole shared tensor.
///
/// ```text
/// store_shared(dst, value)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | |
/// | `value` | [`Value<T>`], required | a tile of exactly `dst`'s shape, or a scalar to fill it with |
///
/// Other threads see the stored elements after the next [`sync`].
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// See [`shared_tensor`]; the usual initialisation of a shared accumulator is
///
/// ```text
/// let counts = shared_tensor(u32, [256]);
/// store_shared(counts, 0); // or zeros([256])
/// sync();
/// ```
pub fn store_shared<T: Element>(dst: SharedTensor<T>, value: impl Value<T>) {
    unreachable!()
}

/// Block barrier: waits for every thread of the block, and makes the block's earlier memory
/// accesses (shared and global) visible to its later ones.
///
/// ```text
/// sync()
/// ```
///
/// Threads of a block are not in lockstep, so a statement that reads memory other threads of
/// the block wrote (a shared tensor filled, then loaded) needs a `sync()` between the two. Register
/// values need none. The emulator checks this for shared memory: a missing `sync()` is reported
/// as a race. `sync()` orders nothing between blocks: for that see
/// [the memory model](super::memory_model). Control flow is block-uniform, so `sync()` is legal
/// anywhere in a kernel, loops and branches included.
///
/// **Target:** any (PTX `bar.sync 0`).
///
/// # Example
///
/// Rotating a tile through shared memory needs the barrier, since every element is written by
/// one thread and read by another:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 128)]
/// fn rotate(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
///     let s = shared_tensor(i32, [128]);
///     store_shared_scatter(s, dim = 0, indices = (arange(128) + 1) % 128,
///                          values = load_global(x, offsets = [0], shape = [128]));
///     sync();
///     store_global(y, load_shared(s), offsets = [0]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..128).map(|i| i * i).collect();
///     let (x, y) = (dev.upload(&data)?, dev.zeros::<i32>(128)?);
///     rotate::launch(&dev, 1, &x, &y)?;
///     let got = y.download()?;
///     assert!((0..128).all(|i| got[(i + 1) % 128] == data[i]));
///     Ok(())
/// }
/// ```
pub fn sync() {
    unreachable!()
}

/// Sleep about `ns` nanoseconds: a back-off for spin loops.
///
/// ```text
/// nanosleep(ns)
/// ```
///
/// `ns` is a scalar `u32` (an integer literal is one) or `i32`. Every thread of the block
/// sleeps; the GPU may sleep anywhere from 0 to twice `ns` (at most 1 ms). A block that waits
/// for another one, spinning on an atomic load, takes issue slots from the blocks doing the work
/// it waits for: a short sleep in the loop gives them back. `nanosleep` orders no memory
/// access. The emulator skips it.
///
/// **Target:** sm_70 (PTX `nanosleep.u32`).
///
/// # Example
///
/// Waiting for a flag another block sets, with a growing back-off:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn wait_then_copy(flag: GlobalTensor<i32>, x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
///     if block_idx() == 0 {
///         store_global(x, arange(32) * 2, offsets = [0]);
///         atomic_store(flag, 0, 1, order = release, scope = gpu);
///     } else {
///         let mut pause = 32u32;
///         while atomic_load(flag, 0, order = acquire, scope = gpu) == 0 {
///             nanosleep(pause);
///             pause = min(pause * 2, 1024u32);
///         }
///         store_global(y, load_global(x, offsets = [0], shape = [32]), offsets = [0]);
///     }
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let (flag, x, y) = (dev.zeros::<i32>(1)?, dev.zeros::<i32>(32)?, dev.zeros::<i32>(32)?);
///     wait_then_copy::launch(&dev, 2, &flag, &x, &y)?;
///     assert_eq!(y.download()?, (0..32).map(|i| i * 2).collect::<Vec<i32>>());
///     Ok(())
/// }
/// ```
pub fn nanosleep(ns: u32) {
    let _ = ns;
    unreachable!()
}

/// A memory fence at a scope, for ordering accesses between blocks.
///
/// ```text
/// fence(sem = acq_rel, scope = gpu)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `sem` (also `order`, `memory_order`) | [`MemoryOrder`], required | `acquire`, `release` or `acq_rel`; `relaxed` is a compile error |
/// | `scope` (also `memory_scope`) | [`MemoryScope`], required | `cta`, `cluster`, `gpu` or `sys` |
///
/// A release fence before a relaxed flag store makes it work as a release store; an acquire
/// fence after a relaxed flag load makes it work as an acquire load. PTX has only `fence.acq_rel`
/// (and `fence.sc`), so every fence is printed as `fence.acq_rel.{scope}`. Like every ordered
/// operation it is a tile operation: the block synchronises before and after it, so it orders
/// every thread's accesses. See [the memory model](super::memory_model#the-tile-level-ordering-rule).
///
/// **Target:** any; `cluster` scope needs sm_90 (the kernel's target is raised to it, and an
/// explicit older `target` is a compile error).
///
/// # Example
///
/// See the second kernel of
/// [the producer/consumer pattern](super::memory_model#pattern-producer-and-consumer-across-blocks):
///
/// ```text
/// store_global(data, values, offsets = [at]);
/// fence(sem = release, scope = gpu);
/// atomic_store(flag, slot, 1, order = relaxed, scope = gpu);
/// ```
pub fn fence(sem: MemoryOrder, scope: MemoryScope) {
    unreachable!()
}

/// Non-atomic scatter store into shared memory: `dst[.., indices[p], ..] = values[p]`.
///
/// ```text
/// store_shared_scatter(dst, dim, indices, values, mask = m)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`SharedTensor<T>`], required | |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank; on every axis but `dim` its extent must equal `dst`'s; any integer type |
/// | `values` | [`Value<T>`], required | a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar |
///
/// For every active element at position `p` of `indices`, `dst[a] = values[p]`, where `a` is
/// `p` with its coordinate on axis `dim` replaced by `indices[p]`; elements whose `a` is
/// outside `dst` are skipped. These are plain stores: when two active elements address the same
/// location, one of their values remains and which one is unspecified (the emulator in strict
/// mode reports the collision). Use them for collision-free patterns (permutations, compaction
/// into distinct slots) and the atomic scatters ([`atomic::shared_scatter_add`],
/// ...) otherwise. Other threads see the result after a [`sync`].
///
/// [`atomic::shared_scatter_add`]: super::atomic::shared_scatter_add
///
/// **Element types:** any. **Target:** any.
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
pub fn store_shared_scatter<T: Element, I: Int>(
    dst: SharedTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) {
    unreachable!()
}

/// Non-atomic scatter store into global memory: `dst[.., indices[p], ..] = values[p]`.
///
/// ```text
/// store_global_scatter(dst, dim, indices, values, mask = m)
/// ```
///
/// | argument | kind | meaning |
/// |---|---|---|
/// | `dst` | [`GlobalTensor<T>`], required | a parameter or a view (use a view to scatter into a matrix or at an offset) |
/// | `dim` | integer literal, required | the axis of `dst` that `indices` chooses |
/// | `indices` | integer [`Tile`], required | of `dst`'s rank; any integer type |
/// | `values` | [`Value<T>`], required | a tile of the shape of `indices`, or a scalar |
/// | `mask` | `bool` [`Value`], optional | a `bool` tile of the shape of `indices` or a scalar |
///
/// As [`store_shared_scatter`], on global memory: elements whose address lies outside `dst`
/// are skipped, colliding elements leave one unspecified value (and an error in the strict
/// emulator).
///
/// **Element types:** any. **Target:** any.
///
/// # Example
///
/// Compaction: each element that passes a test goes to its slot, counted by an exclusive
/// prefix computed in the host here for brevity:
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32)]
/// fn compact(x: GlobalTensor<u64>, slot: GlobalTensor<i32>, out: GlobalTensor<u64>) {
///     let v = load_global(x, offsets = [0], shape = [64]);
///     let at = load_global(slot, offsets = [0], shape = [64]);
///     store_global_scatter(out, dim = 0, indices = at, values = v, mask = v % 3 == 0);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<u64> = (0..64).map(|i| i * 7 + 2).collect();
///     let mut slots = Vec::new();
///     let mut n = 0;
///     for &v in &data {
///         slots.push(n);
///         n += (v % 3 == 0) as i32;
///     }
///     let (x, s) = (dev.upload(&data)?, dev.upload(&slots)?);
///     let out = dev.zeros::<u64>(n as usize)?;
///     compact::launch(&dev, 1, &x, &s, &out)?;
///     assert_eq!(out.download()?, data.iter().copied().filter(|v| v % 3 == 0).collect::<Vec<_>>());
///     Ok(())
/// }
/// ```
pub fn store_global_scatter<T: Element, I: Int>(
    dst: GlobalTensor<T>,
    dim: usize,
    indices: Tile<I>,
    values: impl Value<T>,
) {
    unreachable!()
}

// ==== Clusters ===============================================================================

/// This block's rank in its thread-block cluster, `0..cluster_size()`.
///
/// ```text
/// cluster_rank() -> integer scalar
/// ```
///
/// Ranks count the blocks of a cluster with x fastest: in a `cluster = [cx, cy, cz]` kernel the
/// block at grid position `(x, y, z)` has rank `x % cx + cx * (y % cy) + cx * cy * (z % cz)`.
/// Rank `r` owns rows `r * rows .. (r + 1) * rows` of every [`cluster_shared_tensor`].
/// Typed like [`block_idx`]: `i32` unless the context asks for another integer type.
///
/// **Target:** sm_90 (PTX `%cluster_ctarank`); only in kernels that declare a cluster.
///
/// # Example
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 32, cluster = [2, 2, 1])]
/// fn ranks(out: GlobalTensor<i32>) {
///     let b = block_idx(0) + grid_dim(0) * block_idx(1);
///     store_global(out, zeros([1]) + cluster_rank() * 10 + cluster_idx(1), offsets = [b]);
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let out = dev.zeros::<i32>(8)?;
///     ranks::launch(&dev, (2, 4), &out)?; // clusters of 2x2 blocks
///     assert_eq!(out.download()?, [0, 10, 20, 30, 1, 11, 21, 31]);
///     Ok(())
/// }
/// ```
pub fn cluster_rank<I: Int>() -> I {
    unreachable!()
}

/// The number of blocks in a cluster (the product of the kernel's `cluster = ..` shape).
///
/// ```text
/// cluster_size() -> integer scalar
/// ```
///
/// **Target:** sm_90 (PTX `%cluster_nctarank`); only in kernels that declare a cluster.
pub fn cluster_size<I: Int>() -> I {
    unreachable!()
}

/// The index of this block's cluster in the grid of clusters, along axis 0 (x) or `axis`.
///
/// ```text
/// cluster_idx() -> integer scalar
/// cluster_idx(axis) -> integer scalar
/// ```
///
/// The grid of clusters is the launch grid divided by the cluster shape, axis by axis.
///
/// **Target:** sm_90 (PTX `%clusterid.{x,y,z}`); only in kernels that declare a cluster.
pub fn cluster_idx<I: Int>() -> I {
    unreachable!()
}

/// A barrier for every thread of every block of the cluster.
///
/// ```text
/// cluster_sync()
/// ```
///
/// Every block of the cluster arrives (with release semantics) and waits for all the others
/// (acquire), so memory writes before the barrier, in any block of the cluster, are visible
/// to reads after it in any block. It is also a block barrier like [`sync`]. Every block of
/// the cluster must reach the same `cluster_sync()` calls: a block that skips one leaves the
/// others waiting forever on the GPU (the emulator reports it as an error instead).
///
/// A kernel that uses a [`cluster_shared_tensor`] needs one before it touches another block's
/// part (that block may not have started yet), and gets one more implicitly at its end (a block
/// must not exit while others may still use its shared memory).
///
/// **Target:** sm_90 (PTX `barrier.cluster.arrive.release` + `barrier.cluster.wait.acquire`,
/// ISA 8.0); only in kernels that declare a cluster.
pub fn cluster_sync() {
    unreachable!()
}

/// A shared tensor of the whole cluster (distributed shared memory): axis 0 is split evenly
/// over the cluster's blocks, and every block can load, store and atomically update every
/// element.
///
/// ```text
/// cluster_shared_tensor(dtype, shape) -> shared tensor
/// cluster_shared_tensor::<T>(shape) -> shared tensor
/// ```
///
/// With `C` blocks per cluster, block rank `r` holds rows `r * shape[0] / C ..` in its own
/// shared memory (so `shape[0]` must be a multiple of `C`, and each block allocates only its
/// share: a 65,536-bin `i32` histogram over a cluster of 4 costs each block 64 KiB). The tensor
/// is used like any shared tensor: [`store_shared_scatter`], the `atomic::shared_*` group, the
/// indexed atomics, [`atomic_load`](super::atomic_load)... An element owned by another block is
/// reached through `mapa` and the `.shared::cluster` state space, an element of the block's own
/// part (by atomics) through its own window. Atomics on it default to `cluster` scope (a
/// `cta`-scoped one is a compile error: other blocks update the same elements).
///
/// Rules (the emulator checks the first three): touch another block's rows only after a
/// [`cluster_sync`] (its part of the tensor may not exist before); every block reaches the same
/// cluster barriers; two blocks' accesses to one element, one of them a plain write (or a plain
/// read against a write), are separated by a [`cluster_sync`] or ordered by a cluster-scope
/// release/acquire pair (else a race, reported like a missing [`sync`]); the kernel ends with
/// an implicit cluster barrier.
///
/// **Target:** sm_90; only in kernels that declare a cluster.
///
/// # Example
///
/// A 4096-bin histogram spread over clusters of 4 blocks (1024 bins each):
///
/// ```
/// use tilus::prelude::*;
///
/// #[tile_kernel(threads = 256, cluster = 4)]
/// fn hist4096(values: GlobalTensor<i32>, hist: GlobalTensor<i32>) {
///     let counts = cluster_shared_tensor(i32, [4096]);
///     let mine = cluster_rank() * 1024 + arange(1024);
///     store_shared_scatter(counts, dim = 0, indices = mine, values = 0);
///     cluster_sync();
///     let n = values.len();
///     for start in (block_idx() * 1024..n).step_by(grid_dim() * 1024) {
///         let bins = load_global(values, offsets = [start], shape = [1024], other = -1);
///         atomic::shared_scatter_add(counts, dim = 0, indices = bins, values = 1);
///     }
///     cluster_sync();
///     atomic_add(hist, mine, atomic_load(counts, mine));
/// }
///
/// fn main() -> Result<(), tilus::Error> {
///     let dev = tilus::Device::emulator();
///     let data: Vec<i32> = (0..50_000).map(|i| (i * 7919) % 4096).collect();
///     let (values, hist) = (dev.upload(&data)?, dev.zeros::<i32>(4096)?);
///     hist4096::launch(&dev, 8, &values, &hist)?;
///     let mut want = vec![0; 4096];
///     data.iter().for_each(|&v| want[v as usize] += 1);
///     assert_eq!(hist.download()?, want);
///     Ok(())
/// }
/// ```
pub fn cluster_shared_tensor<T: Element>(dtype: ElementType<T>, shape: Shape) -> SharedTensor<T> {
    unreachable!()
}
