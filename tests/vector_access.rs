//! Vector loads and stores where an access has no rank-1 range (2-D views, rank-2 shared
//! tensors): each run of a thread's consecutive elements goes as one vector instruction where,
//! at run time, it is all in bounds, consecutive in memory and aligned, and element by element
//! elsewhere. The cases copy tiles through 2-D views whose rows are padded (so rows start at
//! any alignment), at column offsets that are aligned or not, past the last row and column
//! (masked by the bounds), and through a 2-D shared tensor; for 1-, 2-, 4- and 8-byte elements.
//! Outputs are poisoned first, so an element written that should not be shows.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;
use tilus::{bf16, Device};

/// `dst[r0 + i, c0 + j] = src[r0 + i, c0 + j]` for the `[8, 64]` tile of block `b` (rows
/// `8b..8b+8`), through views of `cols` columns; also through a 2-D shared tensor.
macro_rules! copy_kernel {
    ($name:ident, $t:ident) => {
        #[tile_kernel(threads = 64)]
        fn $name(src: GlobalTensor<$t>, dst: GlobalTensor<$t>, cols: i32, c0: i32) {
            let rows = src.len() as i32 / cols;
            let s = src.view(0, [rows, cols]);
            let d = dst.view(0, [rows, cols]);
            let r0 = block_idx() * 8;
            let tile = load_global(s, offsets = [r0, c0], shape = [8, 64]);
            let staged = shared_tensor($t, [8, 64]);
            store_shared(staged, tile);
            sync();
            store_global(d, load_shared(staged), offsets = [r0, c0]);
        }
    };
}

copy_kernel!(copy_u8, u8);
copy_kernel!(copy_bf16, bf16);
copy_kernel!(copy_f32, f32);
copy_kernel!(copy_i64, i64);

/// The CPU reference: `dst` = poison except the copied window.
fn reference<T: Copy>(src: &[T], poison: T, rows: usize, cols: usize, c0: usize) -> Vec<T> {
    let mut want = vec![poison; src.len()];
    for r in 0..rows {
        for c in c0..(c0 + 64).min(cols) {
            want[r * cols + c] = src[r * cols + c];
        }
    }
    want
}

/// Every (cols, c0) case: padded rows (cols not a multiple of the vector), aligned and
/// misaligned column offsets, and windows that run past the last column.
const CASES: [(usize, usize); 6] = [(64, 0), (80, 16), (70, 0), (70, 3), (67, 8), (96, 40)];

fn run<T>(
    dev: &Device,
    name: &str,
    launch: impl Fn(&tilus::GlobalTensor<T>, &tilus::GlobalTensor<T>, i32, i32, u32),
    make: impl Fn(i32) -> T,
    poison: T,
    r: &mut Rng,
) where
    T: tilus::Element + PartialEq + std::fmt::Debug + Copy,
{
    for (cols, c0) in CASES {
        let rows = 8 * 3 + 5; // a partial last block
        let src: Vec<T> = (0..rows * cols).map(|_| make(r.range(-100, 100))).collect();
        let s = dev.upload(&src).unwrap();
        let d = dev.full(rows * cols, poison).unwrap();
        launch(&s, &d, cols as i32, c0 as i32, rows.div_ceil(8) as u32);
        let want = reference(&src, poison, rows, cols, c0);
        assert_eq!(
            d.download().unwrap(),
            want,
            "{dev:?} {name} cols {cols} c0 {c0}"
        );
    }
}

#[test]
fn two_d_copies_match_on_every_alignment() {
    let mut r = Rng::from_env_or_clock();
    for dev in backends() {
        run(
            &dev,
            "u8",
            |s, d, cols, c0, g| copy_u8::launch(&dev, g, s, d, cols, c0).unwrap(),
            |x| x as u8,
            0xEE,
            &mut r,
        );
        run(
            &dev,
            "bf16",
            |s, d, cols, c0, g| copy_bf16::launch(&dev, g, s, d, cols, c0).unwrap(),
            |x| bf16::from_f32(x as f32),
            bf16::from_f32(-7777.0),
            &mut r,
        );
        run(
            &dev,
            "f32",
            |s, d, cols, c0, g| copy_f32::launch(&dev, g, s, d, cols, c0).unwrap(),
            |x| x as f32 * 0.5,
            f32::MAX,
            &mut r,
        );
        run(
            &dev,
            "i64",
            |s, d, cols, c0, g| copy_i64::launch(&dev, g, s, d, cols, c0).unwrap(),
            |x| x as i64 * 1_000_000_007,
            i64::MIN,
            &mut r,
        );
    }
}

#[test]
fn two_d_accesses_are_vectors_with_a_scalar_fallback() {
    for (name, ptx, vector) in [
        ("copy_u8", copy_u8::PTX, "ld.global.v2.b32"),
        ("copy_bf16", copy_bf16::PTX, "ld.global.v4.b32"),
        ("copy_f32", copy_f32::PTX, "ld.global.v4.f32"),
        ("copy_i64", copy_i64::PTX, "ld.global.v2.s64"),
    ] {
        assert!(ptx.contains(vector), "{name}: no `{vector}`");
        assert!(ptx.contains("ld.shared.v"), "{name}: no vector shared load");
        assert!(
            ptx.contains("st.global.v"),
            "{name}: no vector global store"
        );
        assemble_all(name, ptx, 70);
    }
}

/// A masked 2-D copy whose masks differ inside a thread's run: `dst[r, c] = keep[r, c] ?
/// src[r, c] : -1` where `put[r, c]`, through views of `cols` columns at column `c0`. A run goes
/// as one vector only when all of its elements are active, so every mask pattern must reach
/// the per-element fallback with the right elements.
#[tile_kernel(threads = 64)]
fn masked_copy(
    src: GlobalTensor<f32>,
    keep: GlobalTensor<u8>,
    put: GlobalTensor<u8>,
    dst: GlobalTensor<f32>,
    cols: i32,
    c0: i32,
) {
    let rows = src.len() as i32 / cols;
    let r0 = block_idx() * 8;
    let k = load_global(
        keep.view(0, [rows, cols]),
        offsets = [r0, c0],
        shape = [8, 64],
    ) != 0;
    let p = load_global(
        put.view(0, [rows, cols]),
        offsets = [r0, c0],
        shape = [8, 64],
    ) != 0;
    let tile = load_global(
        src.view(0, [rows, cols]),
        offsets = [r0, c0],
        shape = [8, 64],
        mask = k,
        other = -1.0,
    );
    store_global(
        dst.view(0, [rows, cols]),
        tile,
        offsets = [r0, c0],
        mask = p,
    );
}

/// Rows gathered by an index tile (`x[idx[i], :]`, runs along the row) and stored in order:
/// index rows out of bounds read 0.
#[tile_kernel(threads = 64)]
fn gather_rows(x: GlobalTensor<f32>, idx: GlobalTensor<i32>, out: GlobalTensor<f32>, cols: i32) {
    let rows = x.len() as i32 / cols;
    let i = load_global(idx, offsets = [block_idx() * 16], shape = [16]);
    let r = load_global(x.view(0, [rows, cols]), offsets = [i, 0], shape = [16, 32]);
    store_global(
        out.view(0, [idx.len() as i32, 32]),
        r,
        offsets = [block_idx() * 16, 0],
    );
}

#[test]
fn masked_two_d_runs_fall_back_element_by_element() {
    let mut r = Rng::from_env_or_clock();
    let rows = 8 * 3 + 5;
    for dev in backends() {
        // Mask densities: all set (every run a vector), mostly set, half.
        for (cols, c0, keep_pct, put_pct) in [
            (64, 0, 100, 100),
            (80, 16, 90, 100),
            (70, 3, 100, 85),
            (67, 8, 50, 50),
        ] {
            let n = rows * cols;
            let src: Vec<f32> = (0..n).map(|_| r.range(-1000, 1000) as f32 * 0.25).collect();
            let keep: Vec<u8> = (0..n).map(|_| (r.range(0, 100) < keep_pct) as u8).collect();
            let put: Vec<u8> = (0..n).map(|_| (r.range(0, 100) < put_pct) as u8).collect();
            let (s, k, p) = (
                dev.upload(&src).unwrap(),
                dev.upload(&keep).unwrap(),
                dev.upload(&put).unwrap(),
            );
            let d = dev.full(n, f32::MAX).unwrap();
            masked_copy::launch(
                &dev,
                rows.div_ceil(8) as u32,
                &s,
                &k,
                &p,
                &d,
                cols as i32,
                c0 as i32,
            )
            .unwrap();
            let mut want = vec![f32::MAX; n];
            for row in 0..rows {
                for c in c0..(c0 + 64).min(cols) {
                    let e = row * cols + c;
                    if put[e] != 0 {
                        want[e] = if keep[e] != 0 { src[e] } else { -1.0 };
                    }
                }
            }
            assert_eq!(
                d.download().unwrap(),
                want,
                "{dev:?} cols {cols} c0 {c0} keep {keep_pct}% put {put_pct}%"
            );
        }
        for cols in [32, 35, 96] {
            let (nx, ni) = (40, 16 * 3);
            let x: Vec<f32> = (0..nx * cols)
                .map(|_| r.range(-1000, 1000) as f32)
                .collect();
            let idx: Vec<i32> = (0..ni).map(|_| r.range(-3, nx as i32 + 3)).collect();
            let (xs, is) = (dev.upload(&x).unwrap(), dev.upload(&idx).unwrap());
            let out = dev.full(ni * 32, f32::MAX).unwrap();
            gather_rows::launch(&dev, 3, &xs, &is, &out, cols as i32).unwrap();
            let want: Vec<f32> = idx
                .iter()
                .flat_map(|&i| {
                    let x = &x;
                    (0..32).map(move |c| match usize::try_from(i) {
                        Ok(i) if i < nx && c < cols => x[i * cols + c],
                        _ => 0.0,
                    })
                })
                .collect();
            assert_eq!(out.download().unwrap(), want, "{dev:?} gather, cols {cols}");
        }
    }
    for (name, ptx) in [
        ("masked_copy", masked_copy::PTX),
        ("gather_rows", gather_rows::PTX),
    ] {
        assert!(ptx.contains("ld.global.v4.f32"), "{name}: no vector load");
        assemble_all(name, ptx, 70);
    }
}

/// A byte histogram: a `u8` index into 256 bins is in bounds by its type, so the scatter has no
/// bounds test (registers hold narrow integers zero-extended and wrapped, so this holds for
/// computed bytes too).
#[tile_kernel(threads = 64)]
fn byte_hist(image: GlobalTensor<u8>, hist: GlobalTensor<u32>) {
    let counts = shared_tensor(u32, [256]);
    store_shared(counts, zeros([256]));
    sync();
    let n = image.len();
    for start in (block_idx() * 1024..n).step_by(grid_dim() * 1024) {
        let pixels = load_global(image, offsets = [start], shape = [1024]);
        let inside = arange(1024) + start < n;
        let shifted = pixels * 3u8 + 7u8; // wraps: still a byte
        atomic::shared_scatter_add(counts, dim = 0, indices = pixels, values = 1, mask = inside);
        atomic::shared_scatter_add(
            counts,
            dim = 0,
            indices = shifted,
            values = 2,
            mask = inside,
        );
    }
    sync();
    atomic::global_add(hist, load_shared(counts));
}

#[test]
fn byte_indices_need_no_bounds_test() {
    assert!(
        !byte_hist::PTX.contains(", 256;"),
        "a compare against 256 is left:\n{}",
        byte_hist::PTX
    );
    let mut r = Rng::from_env_or_clock();
    let n = 10_007;
    let image: Vec<u8> = (0..n).map(|_| r.range(0, 256) as u8).collect();
    let mut want = vec![0u32; 256];
    for &p in &image {
        want[p as usize] += 1;
        want[p.wrapping_mul(3).wrapping_add(7) as usize] += 2;
    }
    for dev in backends() {
        let img = dev.upload(&image).unwrap();
        let hist = dev.zeros::<u32>(256).unwrap();
        byte_hist::launch(&dev, 7, &img, &hist).unwrap();
        assert_eq!(hist.download().unwrap(), want, "{dev:?}");
    }
    assemble_all("byte_hist", byte_hist::PTX, 70);
}

// ---------------------------------------------------------------------------------------------
// Index tiles that are `start + arange(n)` (the `affine_index` pass): a scatter or an indexed
// atomic load through them is planned as the range it is, with vector accesses; a `start` that
// changes between the sum and the access keeps the index tile.

/// Block `b` writes `src` into a shared tensor at `start + arange(256)` (elements outside it
/// skipped), reads the whole tensor back at `at + arange(512)`, and stores it at row `b`. A
/// second tile `moved` is computed from `shift` before `shift` is reassigned: it must keep the
/// old value.
#[tile_kernel(threads = 64)]
fn ranges(src: GlobalTensor<i32>, out: GlobalTensor<i32>, start: i32, at: i32) {
    let t = shared_tensor(i32, [512]);
    store_shared(t, -7);
    sync();
    let v = load_global(src, offsets = [0], shape = [256]);
    store_shared_scatter(t, dim = 0, indices = start + arange(256), values = v);
    sync();
    let mut shift = 0;
    let moved = shift + arange(8);
    shift = 300;
    store_shared_scatter(t, dim = 0, indices = moved, values = shift);
    sync();
    let got = atomic_load(t, at + arange(512), sem = relaxed, scope = cta);
    store_global(out, got, offsets = [block_idx() * 512]);
}

#[test]
fn contiguous_index_tiles_are_ranges_with_vectors() {
    let mut rng = Rng::from_env_or_clock();
    let src: Vec<i32> = (0..256).map(|_| rng.range(0, 1000)).collect();
    let cases = [
        (0, 0),
        (4, 0),
        (3, 1),
        (-5, -7),
        (300, 100),
        (rng.range(-300, 600), rng.range(-600, 600)),
    ];
    for dev in backends() {
        let s = dev.upload(&src).unwrap();
        for (start, at) in cases {
            let out = dev.full(2 * 512, 99).unwrap();
            ranges::launch(&dev, 2, &s, &out, start, at).unwrap();
            let mut t = [-7i32; 512];
            for (i, v) in src.iter().enumerate() {
                if let Ok(k) = usize::try_from(start + i as i32) {
                    if k < 512 {
                        t[k] = *v;
                    }
                }
            }
            // `moved` is `0 + arange(8)`, however `shift` changed after it.
            t[..8].fill(300);
            let got = out.download().unwrap();
            for b in 0..2 {
                for f in 0..512 {
                    let want = usize::try_from(at + f as i32)
                        .ok()
                        .filter(|&k| k < 512)
                        .map_or(0, |k| t[k]);
                    assert_eq!(
                        got[b * 512 + f],
                        want,
                        "{dev:?}: start {start}, at {at}, block {b}, element {f}"
                    );
                }
            }
        }
    }
    let p = ranges::PTX;
    assert!(p.contains("st.shared.v4.s32"), "{p}");
    assert!(p.contains("ld.relaxed.cta.shared.v4.s32"), "{p}");
    assemble_all("ranges", p, ranges::TARGET);
}
