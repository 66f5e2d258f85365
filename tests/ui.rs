//! Compile-fail suite: each `tests/ui/*.rs` must be rejected with the diagnostic recorded in its
//! `.stderr` (message and the token it points at); `tests/ui/pass/*.rs` must compile.
//!
//! Regenerate the expectations with `TRYBUILD=overwrite cargo test --test ui`, then read them.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
