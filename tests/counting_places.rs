//! The places of a counting sort by the tile's own histogram are known to lie inside the
//! tile: `x.place(h.cumsum(0, exclusive = true))` with `h` a histogram of `x`'s values, every
//! value counted, is below `x`'s element count, so a scatter of `numel` elements at those
//! places tests no index (`ptx/known/bounds.rs`). Where the values placed are not the values
//! counted, or not all of them are counted, the test stays. The sorted tiles must match a
//! stable sort on every backend.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// A kernel that places the 1,024 `i32` of `x` at `slot` in a shared tile (the body's tokens
/// compute `slot` from the loaded values `v`), then copies the tile to `out`.
macro_rules! placing_kernel {
    ($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) { $($slot:tt)* }) => {
        $(#[$doc])*
        #[tile_kernel(threads = 128)]
        fn $name(x: GlobalTensor<i32>, out: GlobalTensor<i32> $(, $arg: $ty)*) {
            let v = load_global(x, offsets = [0], shape = [1024]);
            $($slot)*
            let s = shared_tensor::<i32>([1024]);
            store_shared_scatter(s, dim = 0, indices = slot, values = v);
            sync();
            store_global(out, load_shared(s), offsets = [0]);
        }
    };
}

placing_kernel! {
    /// A stable counting sort by the low byte.
    by_low_byte() {
        let d = v & 255;
        let starts = d.histogram(256).cumsum(0, exclusive = true);
        let slot = (d as u8).reshape([8, 128]).place(starts).reshape([1024]);
    }
}

placing_kernel! {
    /// The same, counted from the end (a reverse running sum): places still inside the tile.
    by_low_byte_reversed() {
        let d = v & 255;
        let starts = d.histogram(256).cumsum(0, exclusive = true, reverse = true);
        let slot = d.place(starts);
    }
}

placing_kernel! {
    /// Values of 0..=255 counted in 128 bins: the larger ones are not counted, so their places
    /// are not known to be inside (the test stays).
    fewer_bins() {
        let d = v & 255;
        let starts = d.histogram(128).cumsum(0, exclusive = true);
        let slot = d.place(starts);
    }
}

placing_kernel! {
    /// One tile's values counted, another's placed: the test stays.
    other_values() {
        let d = v & 255;
        let e = (v >> 8) & 255;
        let starts = d.histogram(256).cumsum(0, exclusive = true);
        let slot = e.place(starts);
    }
}

placing_kernel! {
    /// The values counted, then changed before they are placed (one variable, two
    /// definitions): the test stays.
    changed_between(k: i32) {
        let mut d = v & 255;
        let starts = d.histogram(256).cumsum(0, exclusive = true);
        if k > 0 {
            d = (v >> 8) & 255;
        }
        let slot = d.place(starts);
    }
}

/// Bound tests against 1,024 in the shared scatter.
fn scatter_bound_tests(ptx: &str) -> usize {
    let scatter = |l: &str| l.contains("// _ = store") && l.contains("[index(");
    common::bound_tests_at(ptx, scatter, 1024)
}

#[test]
fn places_of_a_counting_sort_by_its_own_histogram_need_no_test() {
    let kernels = [
        ("by_low_byte", by_low_byte::PTX, by_low_byte::TARGET, true),
        (
            "by_low_byte_reversed",
            by_low_byte_reversed::PTX,
            by_low_byte_reversed::TARGET,
            true,
        ),
        ("fewer_bins", fewer_bins::PTX, fewer_bins::TARGET, false),
        (
            "other_values",
            other_values::PTX,
            other_values::TARGET,
            false,
        ),
        (
            "changed_between",
            changed_between::PTX,
            changed_between::TARGET,
            false,
        ),
    ];
    for (name, ptx, target, known_inside) in kernels {
        assemble_all(name, ptx, target);
        let tests = scatter_bound_tests(ptx);
        match known_inside {
            true => assert_eq!(tests, 0, "{name}: a bound test is left\n{ptx}"),
            false => assert!(tests > 0, "{name}: the bound test was dropped\n{ptx}"),
        }
    }
    let mut rng = Rng::from_env_or_clock();
    for round in 0..4 {
        let x: Vec<i32> = match round {
            // All in one byte value; every byte value; random.
            0 => vec![0x1234_5677; 1024],
            1 => (0..1024).map(|i: i32| i * 37).collect(),
            _ => (0..1024).map(|_| rng.next_u64() as i32).collect(),
        };
        let mut ascending = x.clone();
        ascending.sort_by_key(|v| v & 255);
        let mut descending = x.clone();
        descending.sort_by_key(|v| std::cmp::Reverse(v & 255));
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(1024, -1).unwrap();
            by_low_byte::launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(out.download().unwrap(), ascending, "{dev:?}, round {round}");
            by_low_byte_reversed::launch(&dev, 1, &xd, &out).unwrap();
            assert_eq!(
                out.download().unwrap(),
                descending,
                "{dev:?}, round {round}"
            );
        }
    }
}
