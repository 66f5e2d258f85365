//! # tilus-rs
//!
//! Tile-level GPU kernels in Rust. A kernel is an ordinary-looking Rust function under
//! [`#[tile_kernel]`](tile_kernel); at `cargo build` time it is parsed, checked (errors point at
//! your tokens), optimised and compiled to PTX, which is embedded in your binary. At run time a
//! [`Device`] launches it on an NVIDIA GPU (feature `cuda`, through `cust`) or, on a machine
//! without one, on a CPU emulator that gives the same results.
//!
//! ```
//! use tilus::prelude::*;
//!
//! #[tile_kernel(threads = 128)]
//! fn add_one(x: GlobalTensor<i32>, y: GlobalTensor<i32>) {
//!     let offset = block_idx() * 512;
//!     let a = load_global(x, offsets = [offset], shape = [512]);
//!     store_global(y, a + 1, offsets = [offset]);
//! }
//!
//! fn main() -> Result<(), tilus::Error> {
//!     let dev = tilus::Device::default()?;
//!     let data: Vec<i32> = (0..1000).collect();
//!     let x = dev.upload(&data)?;
//!     let y = dev.zeros::<i32>(1000)?;
//!     add_one::launch(&dev, 2, &x, &y)?;
//!     assert_eq!(y.download()?, (1..1001).collect::<Vec<i32>>());
//!     Ok(())
//! }
//! ```
//!
//! The kernel language is described in [`lang`]; the atomic instruction group in
//! [`lang::atomic`]; orders and scopes in [`lang::memory_model`].
//!
//! # Soundness
//!
//! Safe code cannot cause undefined behaviour, on the host or on the GPU, whatever the
//! arguments of a launch. What the compiler and the runtime check instead of trusting:
//!
//! * **Bounds.** Every access of a kernel is bounds-checked against the runtime length (or
//!   proven in bounds at compile time); out-of-bounds elements are skipped. An access without
//!   the check (`check_bounds = false`) is a promise, so it is only accepted in an unsafe
//!   context: an `unsafe { .. }` block of the kernel (its author vouches that the indices are in
//!   bounds for every launch, e.g. under an `if` that compares them with the lengths) or an
//!   `unsafe fn` kernel, whose `launch`, `launch_on` and `spec` are then `unsafe fn` with a
//!   `# Safety` section, and whose callers vouch for it.
//! * **Clusters.** `cluster_sync()` may only stand where every block of the cluster reaches it
//!   the same number of times (conditions and loop bounds that do not depend on
//!   `block_idx()`, `cluster_rank()` or memory); distributed shared memory is only touched once
//!   the whole cluster runs (the compiler adds a barrier at the start when a path could touch
//!   it earlier); no block exits while a peer may still use its shared memory.
//! * **Launches.** Arguments, grid, cluster shape, shared memory, alignment and devices are
//!   checked before anything runs: a bad launch is an `Err`, never a fault. Copies between
//!   overlapping views are refused ([`Error::OverlappingCopy`]); fills are complete before the
//!   tensor is returned, for work on any stream.
//! * **Borrowed memory.** A borrow of another library's memory ends only when the work that
//!   used it has finished (`TensorView::with_cust`, `Device::cudarc_scope`); the constructors
//!   that cannot know (`TensorView::from_cust`, `from_raw`, `Stream::from_raw`) are `unsafe`
//!   with their contracts spelled out.
//!
//! What safe code may still do is race: two blocks writing one element without atomics, a
//! flag published with the wrong order or scope. A race gives unspecified values (the emulator
//! reports the races it sees: shared memory, distributed shared memory, release/acquire between
//! blocks), never memory unsafety. Mixed-size atomics on the same bytes, a 128-bit pair atomic
//! (`atomic_cas128`) and a 64-bit atomic on one of its halves, are such a case: each is atomic
//! by itself, but PTX's memory model relates only operations of one size, so it does not
//! promise that they are atomic towards each other. H100s perform them as one
//! (`tests/pair_atomics.rs`), and so does the emulator; code that must be portable uses the
//! pair form for every atomic access of a pair.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use tilus_macros::tile_kernel;
pub use tilus_runtime::*;

/// The compiler library (IR, passes, PTX codegen, emulator), for tools and tests.
pub use tilus_core as core;

/// The 16-bit float element types, from the `half` crate: `GlobalTensor<f16>`,
/// `dev.upload(&[bf16::from_f32(1.5)])`.
pub use half::{bf16, f16};

pub mod algo;
pub mod lang;

// The algorithms' kernels are written with `#[tile_kernel]`, whose expansion names `::tilus`.
extern crate self as tilus;

/// The README's Rust example, compiled and run as a doctest so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `use tilus::prelude::*;` brings the attribute and the host-side types kernels are declared
/// and launched with.
pub mod prelude {
    pub use crate::tile_kernel;
    pub use half::{bf16, f16};
    pub use tilus_runtime::{Device, GlobalTensor, Grid, Stream, TensorView};
}
