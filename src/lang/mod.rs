//! The kernel language (reference).
//!
//! A `#[tile_kernel]` body is block-level code: every statement is executed by the whole block of
//! `threads` threads, on *tiles*: register arrays with compile-time shapes whose elements are
//! spread over the block's threads (each element owned by exactly one thread). Scalars are
//! block-uniform, and so is all control flow. Elements are of any of 13 types, from `bool` to
//! `f64` (see [`types`]).
//!
//! The body of a kernel looks like Rust but is never compiled as Rust: the
//! [`#[tile_kernel]`](crate::tile_kernel) attribute parses it, checks it, and compiles it to PTX
//! (and to an IR that the CPU emulator runs) while your crate builds. This module and its
//! children are therefore documentation only: nothing here can be called from host code. The
//! pages are:
//!
//! * this page: the execution model, statements, operators, and every builtin as an item of its
//!   own ([`load_global`], [`atomic_add`], ...), with the documentation-only types their
//!   signatures use ([`Tile`], [`SharedTensor`], ...);
//! * [`types`]: the element types, literal typing, `as` conversions, `f16`/`bf16` arithmetic and
//!   the atomics each type has;
//! * [`atomic`]: the tile-level atomic instruction group ([`atomic::shared_add`], ...,
//!   [`atomic::global_scatter_max`]), one item per instruction;
//! * [`memory_model`]: memory orders and scopes, [`atomic_load`] / [`atomic_store`] / [`fence`],
//!   the indexed atomics, and the usual patterns.
//!
//! # A kernel and its launcher
//!
//! ```text
//! #[tile_kernel(threads = 256, target = 80)]
//! fn name(x: GlobalTensor<i32>, y: GlobalTensor<i32>, n: i32) { body }
//! ```
//!
//! * `threads`: threads per block, a multiple of 32 from 32 to 1024 (default 128).
//! * `target`: the oldest GPU the PTX must run on, as `70`, `80`, `90` or `"sm_90"`. Without it
//!   the kernel targets `sm_70`, raised to `sm_90` if it uses `cluster` scope. Naming a target
//!   makes features that need a newer one compile errors.
//! * `cluster`: blocks per thread-block cluster, see [Clusters](#clusters).
//! * `min_blocks_per_sm`: how many blocks of this kernel should fit on one SM at once (CUDA's
//!   `__launch_bounds__` minimum, PTX `.minnctapersm`). The PTX assembler then keeps registers
//!   per thread within `65536 / (threads * n)`. Useful where shared memory lets several blocks
//!   share an SM and registers would otherwise become the limit; a compile error when the
//!   block's threads or shared memory cannot allow `n`.
//! * `vector_width`: the longest run of consecutive elements a thread holds of a tile (1, 2,
//!   4, 8 or 16). By default a thread holds runs of 16 bytes of the kernel's narrowest element
//!   type (4 elements in an all-`i32` kernel), so that loads and stores move 16 bytes a
//!   thread. `vector_width = 1` deals elements out one a thread, round-robin: every access is
//!   scalar, but neighbouring lanes hold neighbouring elements, which suits a scatter of a
//!   tile whose neighbours go to neighbouring addresses (the radix sort's passes: 6% faster on
//!   an H100). It can also cost: the compaction kernels ran twice as slow with it (their tile
//!   scans want a thread's elements contiguous). Results are the same either way; measure.
//! * Parameters are `GlobalTensor<T>` (a device buffer: pointer and length) or a scalar `T`
//!   (block-uniform), for any element type `T` (see [`types`]). There is no return value;
//!   results are written to tensors.
//!
//! The attribute replaces the function by a unit struct of the same name with:
//!
//! * `name::launch(&dev, grid, &x, &y, n)`: run `grid` blocks on a [`Device`](crate::Device),
//!   tensors by reference, scalars by value; arguments are checked before anything runs;
//! * `name::PTX` (the PTX module text), `name::NAME` (its entry point), `name::THREADS`,
//!   `name::SHARED_BYTES` (shared memory per block) and `name::TARGET` (e.g. `70`);
//! * `name::spec()`, the [`KernelSpec`](crate::KernelSpec) the runtime launches.
//!
//! # Execution model
//!
//! A launch runs a grid of blocks of up to three dimensions; [`block_idx(axis)`](block_idx) is
//! the block's index along an axis and [`grid_dim(axis)`](grid_dim) the number of blocks along
//! it (axis 0 when omitted). Within a block, there are no per-thread
//! statements: each statement is one *tile operation* performed by the block as a whole. How the
//! elements of a tile are laid out over the threads (its *layout*) is the compiler's choice:
//! contiguous runs of elements per thread, so that global loads and stores become vector
//! accesses. A tile may be smaller than the block (`[1]`, `[40]`): then some threads own no
//! element, and nothing is replicated, so a store or an atomic on a tile touches each of its
//! elements exactly once.
//!
//! The threads of a block are not in lockstep: one thread may be a statement ahead of another.
//! Register values need no care (the compiler moves data between threads where an operation
//! needs it, e.g. for reductions), but when one statement writes memory that a later statement
//! reads from other threads (a shared tensor filled and then loaded), put `sync()` between them.
//! Atomics with an `acquire` or `release` order include such a barrier (see
//! [`memory_model`](memory_model#the-tile-level-ordering-rule)).
//!
//! Blocks run concurrently and in no particular order. Values in registers are private to the
//! block; shared tensors are private to the block too; global tensors are seen by every block
//! of the launch (and by later launches). How accesses of different blocks are ordered is the
//! subject of [`memory_model`].
//!
//! # Values
//!
//! | kind | what it is | written as |
//! |---|---|---|
//! | scalar | one block-uniform value of an element type | literals, parameters, [`block_idx()`](block_idx), [`x.len()`](GlobalTensor::len), reductions |
//! | [tile](Tile) | register array of an element type, rank 1 to 3, at most 65 536 elements and at most 256 in each thread (a 32-thread block holds tiles of up to 8 192 elements) | [`arange`], [`zeros`], [`load_global`], arithmetic on tiles |
//! | [global tensor](GlobalTensor) | a `GlobalTensor<T>` parameter or a `.view(..)` of one: runtime dims, row-major | parameters |
//! | [shared tensor](SharedTensor) | block-local memory with a compile-time shape (at most 227 KiB per block) | [`shared_tensor(f32, [64, 64])`](shared_tensor) or `shared_tensor::<f32>([..])` |
//!
//! The element types are `bool`, `i8 u8 i16 u16 i32 u32 i64 u64`, `f16 bf16 f32 f64`; the
//! [`types`] page says how literals are typed, what `as` does and which atomics each type has.
//! Types are inferred; `let` takes no annotation. Nothing converts implicitly: mixing two types
//! is a compile error that says which `as` to write. Tensors cannot be used in arithmetic: load
//! them into a tile first.
//!
//! ## Shapes are literals
//!
//! A tile's shape is part of its type and decides every thread's registers, so it is written as a
//! list of compile-time integers wherever one is asked for: `shape = [16, 32]`, `zeros([256])`,
//! `arange(128)`, `.reshape([4, 32])`, `dim = 0`. Arithmetic of literals counts
//! (`[4 * 1024]`, handy when a `macro_rules!` parameter gives the size); a value computed at
//! run time there is a compile error.
//! Offsets, loop bounds, view dims and indices on the other hand are ordinary runtime values of
//! any integer type.
//!
//! ## Broadcasting
//!
//! Binary operators, `select`, `min` and `max` follow numpy's rule: shapes are aligned on the
//! right and each pair of dimensions must be equal or contain a 1; a scalar combines with any
//! tile. So `arange(16).reshape([16, 1]) * 100 + arange(32).reshape([1, 32])` is a `[16, 32]`
//! tile.
//!
//! ## Scalars and uniform control flow
//!
//! Scalars hold the same value in every thread. Conditions of `if` and `while` must be `bool`
//! *scalars* and loop bounds integer scalars, so every thread of a block takes the same path and
//! block-wide operations (barriers, shared memory, atomics with ordering) are always legal inside
//! them. To branch on data held in a tile, reduce it first (`(t > 0).any()`, `t.sum()`,
//! `t.item()`) or select element-wise with `select(cond, a, b)`.
//!
//! A reduction to a scalar costs the block two barriers when it has more than one warp (the
//! warps' partials meet in shared memory). A loop whose tiles all have at most 32 elements,
//! and whose statements are element-wise arithmetic, reductions, relaxed or weak accesses to
//! global memory and acquire loads, runs on the first warp alone instead: its reductions stay
//! within the warp, and the other warps wait once, after the loop, for the scalars it
//! assigned. Spin loops over a window of 32 flags (a decoupled look-back: `tilus::algo`'s scans
//! and compactions) are written this way; the results are the same either way.
//!
//! # Statements
//!
//! * `let x = expr;`, `let mut x = expr;`, `x = expr;` (same type as before), and the compound
//!   assignments `+= -= *= /= %= &= |= ^= <<= >>=`; `let _ = expr;` evaluates and discards;
//! * `for i in start..end { .. }` and `for i in (start..end).step_by(step) { .. }` with scalar
//!   bounds of one integer type (the end is exclusive; a non-positive runtime step runs no
//!   iteration);
//! * `while cond { .. }`, `loop { .. }`, `break` (innermost loop, no labels);
//! * `if cond { .. } else if cond { .. } else { .. }`;
//! * a call standing alone, such as `store_global(..);` or `sync();`.
//!
//! Not part of the language: `return`, labels, `if let`/`while let`/`let else`, inclusive ranges,
//! closures, macros, nested items, references and type annotations.
//!
//! # Expressions and operators
//!
//! * Literals: integers with an optional type suffix (`7`, `1u8`, `7u64`), floats (`1.0`,
//!   `2.5f64`, `1e-3f32`), `true`, `false`; unsuffixed ones take the type their context needs
//!   ([details](types#literals-and-context)). Constants: `T::MIN`, `T::MAX` of the numeric
//!   types, `T::BITS` of the integer ones, and `INFINITY`, `NEG_INFINITY`, `NAN`, `EPSILON`,
//!   `MIN_POSITIVE` of the float ones (`f32::INFINITY`).
//! * Arithmetic `+ - * / %` on numbers of one type: integers wrap, `/` truncates and `%` takes
//!   the sign of the dividend (as in Rust; division by zero gives an unspecified value, 0 on the
//!   emulator, never a trap); floats are IEEE with round-to-nearest-even and no flush to zero. `<< >>` on integers (`>>` is
//!   arithmetic on signed types), unary `-`.
//! * Bitwise `& | ^` on integers, logical on `bool`; `!` is bitwise not on integers, logical
//!   not on `bool`; `&&` and `||` on `bool` (both sides are evaluated, so an operand with an
//!   effect, such as an atomic, is a compile error).
//! * Comparisons `== != < <= > >=` give `bool` of the operands' shape.
//! * Casts `x as T` between any two element types, as Rust's `as` (float to integer truncates
//!   and saturates, NaN gives 0; `x as bool` is `x != 0`): see [`types`](types#conversions-with-as).
//! * `if c { a } else { b }` as an *expression* is an element-wise select: both arms are
//!   evaluated, so an arm with an effect (an atomic, a store, a barrier) is a compile error; use an
//!   `if` statement for conditional effects.
//! * Methods on global tensors: [`.len()`](GlobalTensor::len) and
//!   [`.dim(axis)`](GlobalTensor::dim) (`i64`), [`.view(offset, [d0, ..])`](GlobalTensor::view).
//! * Methods on tiles: [`.reshape`](Tile::reshape), [`.broadcast_to`](Tile::broadcast_to), the
//!   reductions [`.sum()`](Tile::sum), [`.min()`](Tile::min), [`.max()`](Tile::max),
//!   [`.any()`](Tile::any), [`.all()`](Tile::all), [`.item()`](Tile::item); element-wise
//!   [`.abs()`](Tile::abs), `.min(x)`, `.max(x)`, [`.to_bits()`](Tile::to_bits) and on floats
//!   [`.sqrt()`](Tile::sqrt), [`.floor()`](Tile::floor), [`.ceil()`](Tile::ceil),
//!   [`.trunc()`](Tile::trunc), [`.round()`](Tile::round),
//!   [`.round_ties_even()`](Tile::round_ties_even), [`.mul_add(b, c)`](Tile::mul_add),
//!   [`.exp()`](Tile::exp), [`.ln()`](Tile::ln).
//! * The element-wise methods work on scalars too (`s.min(t)`, `x.sqrt()`).
//! * Methods take arguments like builtins (positional, then `name = value`); a keyword no form
//!   of the method has is a compile error, never ignored (`t.max(bogus = 2)`).
//!
//! ## Evaluation order
//!
//! As in Rust, every argument of a call, operand of an operator, receiver of a method,
//! condition and loop bound is evaluated **exactly once, left to right as written** (keyword
//! arguments in the order they are written, wherever their parameter stands in the signature),
//! before the operation that uses it. Nothing an operation does with a value changes that: an
//! `other` that no element needs, a `mask` that is all false, a load whose every element is out
//! of bounds, a result nobody reads, a loop that runs no iteration after its bounds are known,
//! all still evaluate their arguments once. So an effect nested in an argument (an atomic used
//! as a value) happens exactly once, where it is written:
//!
//! * a `let` runs its initialiser where it stands, even when the value is typed later by its
//!   uses (`let t = if atomic_add(c, 0, 1) == 0 { 1 } else { 2 };` increments `c` once, before
//!   the next statement, however often `t` is used);
//! * `if`/`while` conditions run once per test, `for` bounds and steps once, before the first
//!   iteration.
//!
//! Two forms evaluate operands that Rust would evaluate conditionally, and so take only
//! operands without effects (a compile error otherwise): the arms of a value-`if`
//! (`if c { a } else { b }` selects per element, both arms are computed) and the operands of
//! `&&` / `||` (no short circuit). Use an `if` statement for a conditional effect.
//! `tests/evaluation_order.rs` holds one test per argument position.
//!
//! # Builtins
//!
//! Builtins take positional arguments first, then `name = value` keywords; optional ones can
//! only be given as keywords in practice. The path may be written with a `tilus::` prefix. Each
//! has its own page here, with its arguments, element types, target and an example; rustdoc's
//! search finds them by name.
//!
//! The signatures on those pages are real Rust over documentation-only types ([`Tile<T>`],
//! [`SharedTensor<T>`], [`GlobalTensor<T>`], [`Value<T>`] for "a tile or a scalar", [`Shape`]
//! for a list of literals, [`Coords`] for runtime coordinates): they show the required
//! arguments in order, and the table under each lists every argument, keywords included. None
//! of these items exists outside the documentation, so host code cannot call them by mistake.
//!
//! | group | builtins |
//! |---|---|
//! | grid | [`block_idx`], [`grid_dim`] |
//! | making tiles | [`arange`], [`zeros`], [`ones`], [`full`], [`lane_ids`] |
//! | element-wise | [`select`], [`min`], [`max`], [`abs`], [`sqrt`], [`fma`], [`exp`], [`ln`] (also `log`), [`f32::from_bits`](from_bits) |
//! | global memory | [`load_global`], [`store_global`], [`store_global_scatter`], [`prefetch_global`] (a hint for the L2 cache) |
//! | shared memory | [`shared_tensor`], [`load_shared`], [`store_shared`], [`store_shared_scatter`] |
//! | ordering | [`sync`], [`fence`] (see [`memory_model`]), [`nanosleep`] (a back-off for spin loops) |
//! | tilus atomics | `atomic::{shared,global}_{add,sub,min,max,exch,cas,and,or,xor,inc,dec}`, `atomic::{shared,global}_scatter_{add,sub,min,max}`: see [`atomic`] |
//! | indexed atomics | [`atomic_load`], [`atomic_store`], [`atomic_add`], [`atomic_sub`], [`atomic_min`], [`atomic_max`], [`atomic_and`], [`atomic_or`], [`atomic_xor`], [`atomic_xchg`], [`atomic_cas`], [`atomic_inc`], [`atomic_dec`] |
//! | clusters | [`cluster_rank`], [`cluster_size`], [`cluster_idx`], [`cluster_sync`], [`cluster_shared_tensor`] (see [below](#clusters)) |
//!
//! A `mask` is a `bool` tile of exactly the operation's shape (masks are not broadcast: use
//! `.broadcast_to([..])`) or a `bool` scalar; elements where it is false do nothing. A shared
//! tensor must be written before it is read by other threads: separate the two with `sync()`.
//!
//! # Clusters
//!
//! `#[tile_kernel(cluster = N)]` (or `cluster = [x, y, z]`) groups blocks into thread-block
//! clusters of 1 to 16 blocks, which needs sm_90: the kernel's target is raised to it, and an
//! explicit older `target` is a compile error.
//!
//! Inside one, [`cluster_rank`] and [`cluster_size`] say where a block is, [`cluster_idx`]
//! which cluster it is in, [`cluster_sync`] is a barrier for the whole cluster, and
//! [`cluster_shared_tensor`] is distributed shared memory: one tensor spread over the shared
//! memory of the cluster's blocks, which every block of the cluster can read, write and update
//! atomically (a 65,536-bin histogram that no single block could hold: see
//! `examples/histogram_cluster.rs`). The launch grid must be a whole number of clusters
//! (checked at launch on every backend). The emulator runs the blocks of a cluster at the
//! same time and reports the mistakes the GPU would hang or read garbage on: touching another
//! block's part before the first `cluster_sync()`, and a `cluster_sync()` some block skips.
//!
//! # Example: tiles, views, broadcasting, shared memory
//!
//! A `[8, 16]` block of a row-major matrix with runtime dims, read through a view, passed through
//! shared memory, and combined with row and column terms built by broadcasting:
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn decorate(m: GlobalTensor<i32>, out: GlobalTensor<i32>, rows: i32, cols: i32) {
//!     let mv = m.view(0, [rows, cols]);
//!     let ov = out.view(0, [rows, cols]);
//!     let r0 = block_idx() * 8;
//!     // Rows past `rows` read 0 and are not stored: the view bounds-checks both axes.
//!     let t = load_global(mv, offsets = [r0, 0], shape = [8, 16]);
//!     let s = shared_tensor(i32, [8, 16]);
//!     store_shared(s, t);
//!     sync();
//!     let back = load_shared(s);
//!     let row = (arange(8) + r0).reshape([8, 1]) * 1000;
//!     let col = arange(16).reshape([1, 16]);
//!     store_global(ov, back + row + col, offsets = [r0, 0]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let (rows, cols) = (12usize, 16usize);
//!     let m = dev.upload(&vec![5; rows * cols])?;
//!     let out = dev.zeros::<i32>(rows * cols)?;
//!     decorate::launch(&dev, 2, &m, &out, rows as i32, cols as i32)?;
//!     let got = out.download()?;
//!     for r in 0..rows {
//!         for c in 0..cols {
//!             assert_eq!(got[r * cols + c], 5 + 1000 * r as i32 + c as i32);
//!         }
//!     }
//!     // What the build produced.
//!     assert!(decorate::PTX.contains(".visible .entry tk_decorate("));
//!     assert_eq!(decorate::ENTRY, "tk_decorate");
//!     assert_eq!(decorate::NAME, "decorate");
//!     assert_eq!(decorate::THREADS, 128);
//!     assert_eq!(decorate::TARGET, 70);
//!     assert!(decorate::SHARED_BYTES >= 8 * 16 * 4);
//!     Ok(())
//! }
//! ```
//!
//! # Example: scalars, reductions and control flow
//!
//! A grid-stride loop over the input in tiles of 256; per block, the sum of the positive values,
//! the largest value and a flag, written as one-element tiles:
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn stats(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
//!     let n = x.len();
//!     let mut pos = 0;
//!     let mut hi = i32::MIN;
//!     let mut tiles = 0;
//!     for start in (block_idx() * 256..n).step_by(grid_dim() * 256) {
//!         let t = load_global(x, offsets = [start], shape = [256]);
//!         pos += select(t > 0, t, 0).sum();
//!         // Lanes past the end read `other`, which cannot win a maximum.
//!         let u = load_global(x, offsets = [start], shape = [256], other = i32::MIN);
//!         hi = max(hi, u.max());
//!         tiles += 1;
//!     }
//!     let mut flag = 0;
//!     if tiles == 0 {
//!         flag = -1;
//!     } else if pos > 1000 {
//!         flag = 1;
//!     }
//!     // `loop` and `break`: the smallest power of two >= the tile count.
//!     let mut p = 1;
//!     loop {
//!         if p >= tiles {
//!             break;
//!         }
//!         p = p << 1;
//!     }
//!     let lane = arange(4);
//!     let res = select(lane == 0, pos, select(lane == 1, hi, select(lane == 2, flag, p)));
//!     store_global(out, res, offsets = [block_idx() * 4]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::emulator();
//!     let data: Vec<i32> = (0..1000).map(|i| (i % 7) - 3).collect();
//!     let x = dev.upload(&data)?;
//!     let out = dev.zeros::<i32>(8)?;
//!     stats::launch(&dev, 2, &x, &out)?;
//!     let got = out.download()?;
//!     for b in 0..2 {
//!         // Block b handles tiles b, b + 2, ...: elements [256 k, 256 k + 256) for k = b mod 2.
//!         let mine: Vec<i32> = data.iter().enumerate().filter(|(i, _)| (i / 256) % 2 == b).map(|(_, &v)| v).collect();
//!         let pos: i32 = mine.iter().filter(|&&v| v > 0).sum();
//!         let hi = *mine.iter().max().unwrap();
//!         let tiles = (mine.len() as i32 + 255) / 256;
//!         let flag = if pos > 1000 { 1 } else { 0 };
//!         assert_eq!(&got[b * 4..b * 4 + 4], &[pos, hi, flag, (tiles as u32).next_power_of_two() as i32]);
//!     }
//!     Ok(())
//! }
//! ```
//!
//! # Errors at compile time
//!
//! Every check the compiler makes happens while your crate builds: unknown names, wrong argument
//! counts or keywords, type and shape mismatches, non-literal shapes, conditions on tiles,
//! illegal order/scope combinations, shared memory over the limit. Each is reported as an
//! ordinary `rustc` error pointing at the offending tokens of the kernel, usually with a note or a
//! hint, and the crate does not build. For example, branching on a tile is rejected:
//!
//! ```compile_fail
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn k(x: GlobalTensor<i32>) {
//!     let t = load_global(x, offsets = [0], shape = [128]);
//!     if t > 0 {
//!         // error: the condition must be a `bool` scalar; reduce the tile (`.any()`, `.all()`)
//!         store_global(x, t, offsets = [0]);
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! Errors that depend on runtime values cannot be caught at build time: the launcher checks the
//! arguments (kinds, devices, grid size) and returns an [`Error`](crate::Error); the emulator
//! additionally reports out-of-bounds accesses that were promised to be in bounds
//! (`check_bounds = false`) and, in strict mode, colliding non-atomic scatters.
//!
//! # Getting the PTX
//!
//! The PTX of a kernel is a string constant, `name::PTX`: print it, write it to a file, or feed it
//! to `ptxas` to see the machine code. To get the files of every kernel of a crate instead, set
//! `TILUS_DUMP_PTX` to a directory while building: each kernel is written there as
//! `<name>.ptx`. (The files are written when the macro runs, so touch the source or
//! `cargo clean -p` your crate if it is already built.)
//!
//! ```text
//! TILUS_DUMP_PTX=/tmp/ptx cargo build --release
//! ptxas -arch=sm_90 /tmp/ptx/histogram.ptx -o /dev/null -v
//! ```
//!
//! Each instruction of the compiled kernel is preceded in the PTX by a comment that names it with
//! the kernel's own variable names (such as `// counts = ...`), so the code of a given load or
//! atomic is easy to find.

pub mod memory_model;
pub mod types;

// The builtins and the types their signatures use exist only in the documentation (and for the
// doctests on them): a kernel body is not Rust, and host code must not be able to call them.
#[cfg(any(doc, doctest))]
pub mod atomic;
#[cfg(any(doc, doctest))]
mod builtins;
#[cfg(any(doc, doctest))]
mod indexed;
#[cfg(any(doc, doctest))]
mod values;
#[cfg(any(doc, doctest))]
pub use builtins::*;
#[cfg(any(doc, doctest))]
pub use indexed::*;
#[cfg(any(doc, doctest))]
pub use values::*;

#[cfg(test)]
mod doc_tables;
