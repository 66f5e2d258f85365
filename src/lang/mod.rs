//! The kernel language (reference).
//!
//! A `#[tile_kernel]` body is block-level code: every statement is executed by the whole block of
//! `threads` threads, on *tiles*: register arrays with compile-time shapes whose elements are
//! spread over the block's threads (each element owned by exactly one thread). Scalars (`i32`,
//! `bool`) are block-uniform, and so is all control flow.
