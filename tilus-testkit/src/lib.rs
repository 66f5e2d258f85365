//! Helpers the tests of the tilus-rs workspace share, kept out of the crates users depend on.
//!
//! * [`ptxas`]: running NVIDIA's assembler on generated PTX, so that every test can prove that
//!   what the generator prints is accepted (no GPU needed).
//! * [`Rng`]: the one seedable random generator of the tests, examples and benchmarks.
//!
//! A dev-dependency only (`publish = false`). It depends on no workspace crate, so that
//! `tilus-core`'s own tests can use it without a second copy of `tilus-core` in their build.

pub mod ptxas;
mod rng;

pub use rng::Rng;
