//! Two compile-time facts the code generator derives, each checked in the PTX and in the
//! results on every backend:
//!
//! * A `for` loop's variable is below the loop's end, from a start known non-negative
//!   (`ptx/known`): `for p in 0..4` then `table[p * 256 + byte]` indexes a table of 1,024 with
//!   no bound test. Where the start may be negative or the end is unknown, the test stays.
//! * Quotients and remainders of `arange` by constants fold to one register a thread
//!   (`ptx/emit/affine.rs`), the constant also when a `let` names it: the warp-striped index of
//!   a block of 12 warps, `((f >> 5) % 12) * 512 + (f / 384) * 32 + (f & 31)`, is one address a
//!   thread and an offset a slot, as the power-of-two forms are.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// A kernel that counts four bytes of each of 1,024 `u32` into a shared table of 1,024
/// counters, `table[p * 256 + byte p]`, over a loop whose bounds the tokens give, then copies
/// the table to `out`. (The range comes from an `$range:expr` fragment, which rustc wraps in
/// an invisible group: the macro's parser once rejected such a loop.)
macro_rules! counting_kernel {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*), $range:expr) => {
        $(#[$doc])*
        #[tile_kernel(threads = 128)]
        fn $name(x: GlobalTensor<u32>, out: GlobalTensor<i32> $(, $arg: $ty)*) {
            let v = load_global(x, offsets = [0], shape = [1024]);
            let all = arange(1024);
            let table = shared_tensor(i32, [1024]);
            store_shared_scatter(table, dim = 0, indices = all, values = 0);
            sync();
            for p in $range {
                let d = ((v >> (p * 8)) & 255) as i32;
                atomic::shared_scatter_add(table, dim = 0, indices = p * 256 + d, values = 1);
            }
            sync();
            store_global(out, atomic_load(table, all, sem = relaxed, scope = cta), offsets = [0]);
        }
    };
}

counting_kernel! {
    /// From 0 to a constant: every index known below 1,024.
    constant_bounds(), 0..4
}

counting_kernel! {
    /// From a parameter that may be negative: the index may be too, and is tested.
    any_start(lo: i32), lo..4
}

counting_kernel! {
    /// To a parameter: the index is unbounded, and tested.
    any_end(hi: i32), 0..hi
}

/// Bound tests against 1,024 in the loop's shared atomic.
fn atomic_bound_tests(ptx: &str) -> usize {
    common::bound_tests_at(ptx, |l| l.contains("= atomic_add"), 1024)
}

/// `counts[p * 256 + b]`: how many of `x` have byte `p` equal to `b`, for `p` in `passes`.
fn byte_counts(x: &[u32], passes: std::ops::Range<i32>) -> Vec<i32> {
    let mut c = vec![0; 1024];
    for &v in x {
        for p in passes.clone() {
            c[p as usize * 256 + ((v >> (p * 8)) & 255) as usize] += 1;
        }
    }
    c
}

#[test]
fn a_loop_variable_is_below_the_loop_end() {
    let kernels = common::kernels![constant_bounds, any_start, any_end];
    for ((name, ptx, target), known) in kernels.into_iter().zip([true, false, false]) {
        assemble_all(name, ptx, target);
        let tests = atomic_bound_tests(ptx);
        match known {
            true => assert_eq!(tests, 0, "{name}: a bound test is left\n{ptx}"),
            false => assert!(tests > 0, "{name}: the bound test was dropped\n{ptx}"),
        }
    }
    let mut rng = Rng::from_env_or_clock();
    for round in 0..3 {
        let x: Vec<u32> = match round {
            // Every key equal (all counts in one counter a byte), then random.
            0 => vec![0x8040_2010; 1024],
            _ => (0..1024).map(|_| rng.next_u64() as u32).collect(),
        };
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(1024, -1).unwrap();
            constant_bounds::launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(out.download().unwrap(), byte_counts(&x, 0..4), "{dev:?}");
            any_start::launch(&dev, 1, &xd, &out, 2).unwrap();
            assert_eq!(out.download().unwrap(), byte_counts(&x, 2..4), "{dev:?}");
            any_end::launch(&dev, 1, &xd, &out, 3).unwrap();
            assert_eq!(out.download().unwrap(), byte_counts(&x, 0..3), "{dev:?}");
        }
    }
}

/// Loads 6,144 elements warp-striped over 12 warps (lane `l` of warp `w` holds element
/// `512 w + 32 j + l` in slot `j`) and stores them back in the block's order: `out[f] =
/// x[from(f)]`.
#[tile_kernel(threads = 384, vector_width = 1)]
fn striped_12_warps(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let f = arange(6144);
    let from = ((f >> 5) % 12) * 512 + (f / 384) * 32 + (f & 31);
    store_global(
        out,
        load_global(x, offsets = [from], shape = [6144]),
        offsets = [0],
    );
}

/// The same, with the count of warps and the segment named by `let`s.
#[tile_kernel(threads = 384, vector_width = 1)]
fn striped_named_constants(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let warps = 384 / 32;
    let segment = 6144 / warps;
    let f = arange(6144);
    let from = ((f >> 5) % warps) * segment + (f / 384) * 32 + (f & 31);
    store_global(
        out,
        load_global(x, offsets = [from], shape = [6144]),
        offsets = [0],
    );
}

/// Element `f` from `x[(f % 12) * 512 + f / 12]` (a permutation of 6,144): the thread's own
/// index, up to 383, is not below 12, so the thread divides once, and each slot adds its
/// constant (`384 s / 12`) to the quotient.
#[tile_kernel(threads = 384, vector_width = 1)]
fn by_twelve(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let f = arange(6144);
    let from = (f % 12) * 512 + f / 12;
    store_global(
        out,
        load_global(x, offsets = [from], shape = [6144]),
        offsets = [0],
    );
}

/// Divisions and remainders in the PTX of a kernel (the thread's own, if any, included).
fn divisions(ptx: &str) -> usize {
    ptx.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("div.") || t.starts_with("rem.")
        })
        .count()
}

#[test]
fn striped_indices_by_constants_fold_to_a_register_a_thread() {
    for (name, ptx, target) in common::kernels![striped_12_warps, striped_named_constants] {
        assemble_all(name, ptx, target);
        // The 16 slots' quotients and remainders are constants: nothing divides per slot, and
        // the thread's own ones are known (its index is below 384).
        assert_eq!(divisions(ptx), 0, "{name}\n{ptx}");
    }
    // One quotient and one remainder a thread, not one a slot (16 each).
    assemble_all("by_twelve", by_twelve::PTX, by_twelve::TARGET);
    assert_eq!(divisions(by_twelve::PTX), 2, "{}", by_twelve::PTX);
    let x: Vec<i32> = (0..6144).map(|i| i * 7 + 1).collect();
    let want: Vec<i32> = (0..6144)
        .map(|f: usize| x[((f >> 5) % 12) * 512 + (f / 384) * 32 + (f & 31)])
        .collect();
    for dev in backends() {
        let xd = dev.upload(&x).unwrap();
        for launch in [striped_12_warps::launch, striped_named_constants::launch] {
            let out = dev.full(6144, -1).unwrap();
            launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(out.download().unwrap(), want, "{dev:?}");
        }
        let out = dev.full(6144, -1).unwrap();
        by_twelve::launch(&dev, 1, &xd, &out).unwrap();
        let want: Vec<i32> = (0..6144)
            .map(|f: usize| x[(f % 12) * 512 + f / 12])
            .collect();
        assert_eq!(out.download().unwrap(), want, "{dev:?}");
    }
}
