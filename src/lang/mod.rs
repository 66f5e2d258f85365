//! The kernel language (reference).
//!
//! A `#[tile_kernel]` body is block-level code: every statement is executed by the whole block of
//! `threads` threads, on *tiles*: register arrays with compile-time shapes whose elements are
//! spread over the block's threads (each element owned by exactly one thread). Scalars (`i32`,
//! `bool`) are block-uniform, and so is all control flow.
//!
//! The body of a kernel looks like Rust but is never compiled as Rust: the
//! [`#[tile_kernel]`](crate::tile_kernel) attribute parses it, checks it, and compiles it to PTX
//! (and to an IR that the CPU emulator runs) while your crate builds. This module and its
//! children are therefore documentation only: nothing here can be called from host code. The
//! pages are:
//!
//! * this page: the execution model, types, statements, operators and the list of builtins;
//! * [`atomic`]: the tile-level atomic instruction group (`atomic::shared_add`, ...,
//!   `atomic::global_scatter_max`) and the non-atomic scatter stores, one page per instruction;
//! * [`memory_model`]: memory orders and scopes, `atomic_load` / `atomic_store` / `fence`, the
//!   indexed atomics (`atomic_add(array, indices, ..)` and friends), and the usual patterns.
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
//! * Parameters are `GlobalTensor<i32>` (a device buffer: pointer and length) or `i32` (a
//!   block-uniform scalar). There is no return value; results are written to tensors.
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
//! A launch runs a one-dimensional grid of blocks; [`block_idx()`](#builtins) is the block's
//! index and `grid_dim()` the number of blocks. Within a block, there are no per-thread
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
//! # Types
//!
//! | type | what it is | written as |
//! |---|---|---|
//! | `i32`, `bool` scalar | one block-uniform value | literals, parameters, `block_idx()`, reductions |
//! | tile | register array of `i32` or `bool`, rank 1 to 3, at most 65 536 elements | `arange`, `zeros`, `load_global`, arithmetic on tiles |
//! | global tensor | a `GlobalTensor` parameter or a `.view(..)` of one: runtime dims, row-major | parameters |
//! | shared tensor | block-local memory with a compile-time shape (at most 227 KiB per block) | `shared_tensor(i32, [64, 64])` or `shared_tensor::<i32>([..])` |
//!
//! Types are inferred; `let` takes no annotation. Tensors cannot be used in arithmetic: load them
//! into a tile first.
//!
//! ## Shapes are literals
//!
//! A tile's shape is part of its type and decides every thread's registers, so it is written as a
//! list of integer literals wherever one is asked for: `shape = [16, 32]`, `zeros([256])`,
//! `arange(128)`, `.reshape([4, 32])`, `dim = 0`. A computed value there is a compile error.
//! Offsets, loop bounds, view dims and indices on the other hand are ordinary runtime values.
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
//! *scalars* and loop bounds `i32` scalars, so every thread of a block takes the same path and
//! block-wide operations (barriers, shared memory, atomics with ordering) are always legal inside
//! them. To branch on data held in a tile, reduce it first (`(t > 0).any()`, `t.sum()`,
//! `t.item()`) or select element-wise with `select(cond, a, b)`.
//!
//! # Statements
//!
//! * `let x = expr;`, `let mut x = expr;`, `x = expr;` (same type as before), and the compound
//!   assignments `+= -= *= /= %= &= |= ^= <<= >>=`;
//! * `for i in start..end { .. }` and `for i in (start..end).step_by(step) { .. }` with scalar
//!   `i32` bounds (the end is exclusive; a non-positive runtime step runs no iteration);
//! * `while cond { .. }`, `loop { .. }`, `break` (innermost loop, no labels);
//! * `if cond { .. } else if cond { .. } else { .. }`;
//! * a call standing alone, such as `store_global(..);` or `sync();`.
//!
//! Not part of the language: `return`, labels, `if let`/`while let`/`let else`, inclusive ranges,
//! closures, macros, nested items, references and type annotations.
//!
//! # Expressions and operators
//!
//! * Literals: integers (fitting in `i32`, suffix none or `i32`), `true`, `false`, and the
//!   constants `i32::MIN`, `i32::MAX`.
//! * Arithmetic on `i32`: `+ - * / %` (wrapping; `/` truncates and `%` takes the sign of the
//!   dividend, as in Rust; division by zero gives an unspecified value, never a trap), `<< >>`
//!   (arithmetic shift right), unary `-`.
//! * Bitwise `& | ^` on `i32`, logical on `bool`; `!` is bitwise not on `i32`, logical not on
//!   `bool`; `&&` and `||` on `bool` (both sides are evaluated, so an operand with an effect, such
//!   as an atomic, is a compile error).
//! * Comparisons `== != < <= > >=` give `bool` of the operands' shape.
//! * Casts: `x as i32` (`true` is 1) and `x as bool` (non-zero is `true`).
//! * `if c { a } else { b }` as an *expression* is an element-wise select: both arms are
//!   evaluated, so an arm with an effect (an atomic, a store, a barrier) is a compile error; use an
//!   `if` statement for conditional effects.
//! * Methods on global tensors: `x.len()` (element count of a parameter, the first dim of a
//!   view), `x.dim(axis)`, `x.view(offset, [d0, d1, ..])` (a row-major window starting `offset`
//!   elements in, with runtime dims; accesses through it are bounds-checked against its dims and
//!   against the whole tensor).
//! * Methods on tiles: `.reshape([..])` (same element count, row-major), `.broadcast_to([..])`,
//!   the reductions `.sum()`, `.min()`, `.max()` (`i32`) and `.any()`, `.all()` (`bool`), which
//!   give a scalar, and `.item()` for a one-element tile.
//! * Methods on scalars: `a.min(b)`, `a.max(b)`.
//!
//! # Builtins
//!
//! Builtins take positional arguments first, then `name = value` keywords; optional ones can
//! only be given as keywords in practice. The path may be written with a `tilus::` prefix.
//!
//! | builtin | what it does |
//! |---|---|
//! | `block_idx()` | index of this block in the grid (`i32` scalar) |
//! | `grid_dim()` | number of blocks in the grid |
//! | `arange(n)` | the tile `[0, 1, .., n-1]` |
//! | `zeros(shape)`, `ones(shape)` | `i32` tiles of zeros or ones |
//! | `full(shape, value)` | a tile filled with a scalar |
//! | `select(cond, a, b)` | element-wise `cond ? a : b`, broadcasting |
//! | `min(a, b)`, `max(a, b)` | element-wise minimum / maximum of `i32` values |
//! | `load_global(src, offsets, shape, other = 0, mask = ..)` | load the tile of `shape` whose first element is at `offsets` (one scalar per dim); out-of-bounds and masked-off elements read `other` |
//! | `store_global(dst, value, offsets, mask = ..)` | store a tile at `offsets`; out-of-bounds and masked-off elements are skipped |
//! | `shared_tensor(dtype, shape)` | allocate a block-local shared tensor (contents undefined until written) |
//! | `load_shared(src)`, `store_shared(dst, value)` | whole-tensor load / store of a shared tensor (`value` may be a scalar) |
//! | `sync()` | block barrier: every thread arrives, and the block's earlier memory accesses are visible to its later ones |
//! | `fence(sem, scope)` | a memory fence, see [`memory_model`] |
//! | `atomic::{shared,global}_{add,sub,min,max,exch,cas}(..)` | element-wise atomics, see [`atomic`] |
//! | `atomic::{shared,global}_scatter_{add,sub,min,max}(..)` | scatter atomics, see [`atomic`] |
//! | `store_shared_scatter(..)`, `store_global_scatter(..)` | non-atomic scatter stores, see [`atomic`] |
//! | `atomic_load(..)`, `atomic_store(..)` | atomic accesses with an order, see [`memory_model`] |
//! | `atomic_{add,sub,min,max,and,or,xor,xchg,cas}(array, indices, ..)` | indexed atomics, see [`memory_model`] |
//!
//! A `mask` is a `bool` tile of exactly the operation's shape (masks are not broadcast: use
//! `.broadcast_to([..])`) or a `bool` scalar; elements where it is false do nothing. A shared tensor must be written before it is read by other threads:
//! separate the two with `sync()`.
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

pub mod atomic;
pub mod memory_model;
