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

#![cfg_attr(docsrs, feature(doc_cfg))]

pub use tilus_macros::tile_kernel;
pub use tilus_runtime::*;

/// The compiler library (IR, passes, PTX codegen, emulator), for tools and tests.
pub use tilus_core as core;

/// The 16-bit float element types, from the `half` crate: `GlobalTensor<f16>`,
/// `dev.upload(&[bf16::from_f32(1.5)])`.
pub use half::{bf16, f16};

pub mod lang;

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
