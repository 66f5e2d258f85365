//! `take` along an axis, whose lowering splits each result element's flat index into its line
//! and its place along the axis by constant divisors: a shift and a mask where the divisor is a
//! power of two (ptxas 13.0 expands `div.u32` / `rem.u32` by an immediate power of two into its
//! general reciprocal sequence, about ten instructions an element: the radix sort's pass spent
//! a tenth of its instructions there), nothing where the quotient is known to be 0 (one line
//! group) or the divisor is 1, and `div` / `rem` otherwise. Every backend, against a CPU
//! reference: a permutation of a `[4096]` line (one element a run, as the sort's pass holds
//! it), columns of a `[8, 128]` tile (power-of-two rows) and of a `[6, 100]` tile (not).
//!
//! And indices known in range need no test: an `argsort`'s places taken from its own line, a
//! byte's value (`& 255`) indexing a 256-entry tile or counted into 256 bins (the radix sort's
//! pass does all three), while indices not known so keep theirs.

mod common;

use common::{assemble_all, backends, is_bound_test, Rng};
use tilus::prelude::*;

#[tile_kernel(threads = 256, vector_width = 1)]
fn line_4096(x: GlobalTensor<u32>, perm: GlobalTensor<i32>, out: GlobalTensor<u32>) {
    let t = load_global(x, offsets = [0], shape = [4096]);
    let p = load_global(perm, offsets = [0], shape = [4096]);
    store_global(out, t.take(p, axis = 0), offsets = [0]);
}

#[tile_kernel(threads = 128)]
fn columns_8x128(x: GlobalTensor<i32>, cols: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(x.view(0, [8, 128]), offsets = [0, 0], shape = [8, 128]);
    let c = load_global(cols.view(0, [8, 128]), offsets = [0, 0], shape = [8, 128]);
    store_global(out.view(0, [8, 128]), t.take(c, axis = 1), offsets = [0, 0]);
}

#[tile_kernel(threads = 64)]
fn columns_6x100(x: GlobalTensor<i32>, cols: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(x.view(0, [6, 100]), offsets = [0, 0], shape = [6, 100]);
    let c = load_global(cols.view(0, [6, 100]), offsets = [0, 0], shape = [6, 100]);
    store_global(out.view(0, [6, 100]), t.take(c, axis = 1), offsets = [0, 0]);
}

/// A line ordered by its low bytes (argsort, then `take`), the places its second bytes have
/// among 256 (a table indexed by the byte), and the histogram of its second bytes; then the
/// same by indices whose bound is not known (`idx`, read from memory).
#[tile_kernel(threads = 128, vector_width = 1)]
fn known_places(x: GlobalTensor<u32>, out: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [1024]);
    let order = ((t & 255) as u8).argsort();
    store_global(out, t.take(order, axis = 0) as i32, offsets = [0]);
    let b = ((t >> 8) & 255) as i32;
    let h = b.histogram(256);
    store_global(out, h, offsets = [1024]);
    let starts = h.cumsum(0, exclusive = true);
    store_global(out, starts.take(b, axis = 0), offsets = [1280]);
}

#[tile_kernel(threads = 128, vector_width = 1)]
fn unknown_places(x: GlobalTensor<u32>, idx: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [1024]);
    let i = load_global(idx, offsets = [0], shape = [1024]);
    store_global(out, t.take(i, axis = 0) as i32, offsets = [0]);
    store_global(out, i.histogram(256), offsets = [1024]);
}

/// Lines of the PTX that divide or take a remainder by the immediate `divisor`.
fn divisions_by(ptx: &str, divisor: u32) -> usize {
    ptx.lines()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with("div.u32") || l.starts_with("rem.u32"))
                && l.trim_end_matches(';').ends_with(&format!(", {divisor}"))
        })
        .count()
}

/// Every `div.u32` and `rem.u32` in the PTX.
fn divisions(ptx: &str) -> usize {
    ptx.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("div.u32") || l.starts_with("rem.u32"))
        .count()
}

#[test]
fn takes_by_powers_of_two_shift_and_mask() {
    assert_eq!(divisions(line_4096::PTX), 0, "{}", line_4096::PTX);
    assert_eq!(divisions(columns_8x128::PTX), 0, "{}", columns_8x128::PTX);
    // Rows of 100: the place along the row is a remainder by 100, the row a quotient.
    assert!(
        divisions_by(columns_6x100::PTX, 100) > 0,
        "{}",
        columns_6x100::PTX
    );
    assert_eq!(divisions_by(columns_6x100::PTX, 1), 0);
    assemble_all(line_4096::NAME, line_4096::PTX, line_4096::TARGET);
    assemble_all(
        columns_8x128::NAME,
        columns_8x128::PTX,
        columns_8x128::TARGET,
    );
    assemble_all(
        columns_6x100::NAME,
        columns_6x100::PTX,
        columns_6x100::TARGET,
    );
}

#[test]
fn a_line_is_permuted() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let x: Vec<u32> = (0..4096).map(|_| rng.range(0, i32::MAX) as u32).collect();
        // A random permutation, then a few repeated places.
        let mut perm: Vec<i32> = (0..4096).collect();
        for i in (1..perm.len()).rev() {
            perm.swap(i, rng.range(0, i as i32 + 1) as usize);
        }
        perm[17] = perm[4000];
        perm[4095] = 0;
        let (xd, pd) = (dev.upload(&x).unwrap(), dev.upload(&perm).unwrap());
        let out = dev.full(4096, u32::MAX).unwrap();
        line_4096::launch(&dev, 1, &xd, &pd, &out).unwrap();
        let want: Vec<u32> = perm.iter().map(|&p| x[p as usize]).collect();
        assert_eq!(out.download().unwrap(), want, "{}", dev.name());
    }
}

#[test]
fn columns_are_taken_in_every_row() {
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for (rows, width) in [(8usize, 128usize), (6, 100)] {
            let n = rows * width;
            let x: Vec<i32> = (0..n).map(|_| rng.range(-1_000_000, 1_000_000)).collect();
            let cols: Vec<i32> = (0..n).map(|_| rng.range(0, width as i32)).collect();
            let (xd, cd) = (dev.upload(&x).unwrap(), dev.upload(&cols).unwrap());
            let out = dev.full(n, i32::MIN).unwrap();
            if width == 128 {
                columns_8x128::launch(&dev, 1, &xd, &cd, &out).unwrap();
            } else {
                columns_6x100::launch(&dev, 1, &xd, &cd, &out).unwrap();
            }
            let want: Vec<i32> = (0..n)
                .map(|e| x[e / width * width + cols[e] as usize])
                .collect();
            assert_eq!(
                out.download().unwrap(),
                want,
                "{} [{rows}, {width}]",
                dev.name()
            );
        }
    }
}

#[test]
fn indices_known_in_range_are_not_tested() {
    let tests = |ptx: &str, len| ptx.lines().filter(|l| is_bound_test(l, len)).count();
    // The load's `inside` tests compare with the tensor's length, not with these constants.
    assert_eq!(tests(known_places::PTX, 1024), 0, "{}", known_places::PTX);
    assert_eq!(tests(known_places::PTX, 256), 0, "{}", known_places::PTX);
    // One test a thread's element (8 of 1024 on 128 threads) where the bound is not known.
    assert_eq!(
        tests(unknown_places::PTX, 1024),
        8,
        "{}",
        unknown_places::PTX
    );
    assert_eq!(
        tests(unknown_places::PTX, 256),
        8,
        "{}",
        unknown_places::PTX
    );
    assemble_all(known_places::NAME, known_places::PTX, known_places::TARGET);
    assemble_all(
        unknown_places::NAME,
        unknown_places::PTX,
        unknown_places::TARGET,
    );
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let x: Vec<u32> = (0..1024).map(|_| rng.range(0, i32::MAX) as u32).collect();
        // In range, negative and past the end.
        let idx: Vec<i32> = (0..1024).map(|_| rng.range(-300, 1300)).collect();
        let (xd, id) = (dev.upload(&x).unwrap(), dev.upload(&idx).unwrap());
        let out = dev.full(1280 + 1024, -7).unwrap();
        known_places::launch(&dev, 1, &xd, &out).unwrap();
        let got = out.download().unwrap();
        let mut by_low: Vec<u32> = x.clone();
        by_low.sort_by_key(|v| v & 255);
        let want: Vec<i32> = by_low.iter().map(|&v| v as i32).collect();
        assert_eq!(
            &got[..1024],
            &want[..],
            "{} sorted by the low byte",
            dev.name()
        );
        let second = |v: u32| ((v >> 8) & 255) as usize;
        let mut hist = vec![0i32; 256];
        x.iter().for_each(|&v| hist[second(v)] += 1);
        assert_eq!(&got[1024..1280], &hist[..], "{} histogram", dev.name());
        let starts: Vec<i32> = hist
            .iter()
            .scan(0, |acc, &c| {
                let s = *acc;
                *acc += c;
                Some(s)
            })
            .collect();
        let want: Vec<i32> = x.iter().map(|&v| starts[second(v)]).collect();
        assert_eq!(
            &got[1280..],
            &want[..],
            "{} starts by the second byte",
            dev.name()
        );

        let out = dev.full(1280, -7).unwrap();
        unknown_places::launch(&dev, 1, &xd, &id, &out).unwrap();
        let got = out.download().unwrap();
        let want: Vec<i32> = idx
            .iter()
            .map(|&i| {
                if (0..1024).contains(&i) {
                    x[i as usize] as i32
                } else {
                    0
                }
            })
            .collect();
        assert_eq!(
            &got[..1024],
            &want[..],
            "{} take out of range gives 0",
            dev.name()
        );
        let mut hist = vec![0i32; 256];
        idx.iter()
            .filter(|&&i| (0..256).contains(&i))
            .for_each(|&i| hist[i as usize] += 1);
        assert_eq!(
            &got[1024..],
            &hist[..],
            "{} values outside the bins are not counted",
            dev.name()
        );
    }
}
