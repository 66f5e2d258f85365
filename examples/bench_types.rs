//! Benchmark (not a test): the typed atomic workloads of issue 8, the same as
//! `shared/bench/peers_types.py` measures for torch and hand-written CUDA, printed in the same
//! units and with the same task names so that ratios can be taken line by line from one run:
//!
//! * `read-limit`: a pure read of the byte buffer with 16-byte loads (the roofline of the u8
//!   histogram), and `copy-limit`: a device-to-device copy (bytes read + written);
//! * `u8 hist256`: a 256-bin histogram of 2^30 bytes, privatised in shared memory (GB/s of input);
//! * `f32 index_add scalars`: `out[idx[k]] += v[k]` for 2^28 (i32 index, f32 value) pairs into
//!   M = 1024 (counted in shared memory, then added to global) and M = 2^22 (global atomics);
//!   GB/s of index + value bytes (8 per pair, the CUDA peer's unit; torch's line counts its
//!   int64 index, 12 per pair: compare times, or rescale);
//! * `f32`/`bf16 index_add rows`: `out[idx[r], :] += src[r, :]` of `[2^20, 128]` into
//!   `[2^16, 128]`; GB/s of `src` bytes.
//!
//! Every kernel comes in several variants (tile size, threads) and runs over several grids; the
//! result of every (variant, grid) is checked against a CPU reference before it is timed.
//!
//! ```text
//! cargo run --release --example bench_types --features cuda [-- KEY=VALUE ...]
//!   bytes=30 scalars=28 rows=20   log2 sizes (bytes of the u8 buffer, index_add pairs, rows)
//!   reps=30                       timed launches per line (the median is printed)
//!   grids=264,528,1056,2112       grid sizes to try
//!   only=read,copy,hist,scalars,rows   which workloads to run
//! ```
//!
//! For ratios, run the peers in the same session on the same GPU:
//! `python3 ../shared/bench/peers_types.py` (torch, CuPy and Triton's `do_bench`).
//!
//! On the CPU emulator (no `cuda` feature, or no GPU) the defaults are tiny so that CI can run
//! it; the numbers then mean nothing.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use tilus::prelude::*;
use tilus::{bf16, f16, Device, Error};

// ---------------------------------------------------------------------------------------------
// Kernels. Kernels take literal shapes, so each variant is an instance of a `macro_rules!`
// template.

/// The read limit: sum a `u32` buffer (the bytes of the u8 image, four at a time) with tiles of
/// `$tile` elements, `$tile / $threads` per thread, i.e. `$tile / (4 $threads)` 16-byte loads
/// per thread in flight. One atomic per block publishes the block's sum, so nothing is dead and
/// the result can be checked.
macro_rules! read_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<u32>, sink: GlobalTensor<u32>) {
            let n = x.len();
            let mut acc = full([$tile], 0u32);
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                acc = acc + load_global(x, offsets = [start], shape = [$tile]);
            }
            atomic_add(sink, 0, acc.sum(), order = MemoryOrder::Relaxed);
        }
    };
}
read_kernel!(read_w512_t2048, threads = 512, tile = 2048);
read_kernel!(read_w512_t8192, threads = 512, tile = 8192);
read_kernel!(read_w256_t4096, threads = 256, tile = 4096);

/// The u8 histogram of `examples/histogram_u8.rs`: `$tile / $threads` bytes per thread
/// (16 = one 16-byte load), counted in a private shared copy of the 256 bins.
macro_rules! hist_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(image: GlobalTensor<u8>, hist: GlobalTensor<u32>) {
            let counts = shared_tensor(u32, [256]);
            store_shared(counts, zeros([256]));
            sync();
            let n = image.len();
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                let pixels = load_global(image, offsets = [start], shape = [$tile]);
                let inside = arange($tile) + start < n;
                atomic::shared_scatter_add(
                    counts,
                    dim = 0,
                    indices = pixels,
                    values = 1,
                    mask = inside,
                );
            }
            sync();
            let c = load_shared(counts);
            atomic::global_add(hist, c, mask = c != 0);
        }
    };
}
/// The same with the tail split off: whole tiles need no mask (`arange + start < n` costs a
/// 64-bit add and compare per byte), and only the last, partial tile is masked.
macro_rules! hist_split_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(image: GlobalTensor<u8>, hist: GlobalTensor<u32>) {
            let counts = shared_tensor(u32, [256]);
            store_shared(counts, zeros([256]));
            sync();
            let n = image.len();
            let whole = n - n % $tile;
            for start in (block_idx() * $tile..whole).step_by(grid_dim() * $tile) {
                let pixels = load_global(image, offsets = [start], shape = [$tile]);
                atomic::shared_scatter_add(counts, dim = 0, indices = pixels, values = 1);
            }
            if block_idx() == 0 && whole < n {
                let pixels = load_global(image, offsets = [whole], shape = [$tile]);
                let inside = arange($tile) + whole < n;
                atomic::shared_scatter_add(
                    counts,
                    dim = 0,
                    indices = pixels,
                    values = 1,
                    mask = inside,
                );
            }
            sync();
            let c = load_shared(counts);
            atomic::global_add(hist, c, mask = c != 0);
        }
    };
}
/// The same with one copy of each bin per warp lane (`bin * $copies + lane % $copies`): the
/// lanes of a warp count in different shared-memory banks, so the atomics do not replay on bank
/// conflicts. The copies are summed once at the end (rotated so that the 256 loads of one
/// round hit different banks). `split`: whole tiles unmasked, as in `hist_split_kernel`.
macro_rules! hist_lanes_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal, copies = $copies:literal $(, $opt:ident = $v:literal)*) => {
        hist_lanes_kernel!(@ $name, [threads = $threads $(, $opt = $v)*], $tile, $copies, |start, n| {
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                let pixels = load_global(image, offsets = [start], shape = [$tile]);
                let inside = arange($tile) + start < n;
                let at = pixels as i32 * $copies + lane_ids([$tile]) % $copies;
                atomic::shared_scatter_add(counts, dim = 0, indices = at, values = 1, mask = inside);
            }
        });
    };
    ($name:ident, threads = $threads:literal, tile = $tile:literal, copies = $copies:literal, split) => {
        hist_lanes_kernel!(@ $name, [threads = $threads], $tile, $copies, |start, n| {
            let whole = n - n % $tile;
            for start in (block_idx() * $tile..whole).step_by(grid_dim() * $tile) {
                let pixels = load_global(image, offsets = [start], shape = [$tile]);
                let at = pixels as i32 * $copies + lane_ids([$tile]) % $copies;
                atomic::shared_scatter_add(counts, dim = 0, indices = at, values = 1);
            }
            if block_idx() == 0 && whole < n {
                let pixels = load_global(image, offsets = [whole], shape = [$tile]);
                let inside = arange($tile) + whole < n;
                let at = pixels as i32 * $copies + lane_ids([$tile]) % $copies;
                atomic::shared_scatter_add(counts, dim = 0, indices = at, values = 1, mask = inside);
            }
        });
    };
    (@ $name:ident, [$($attr:tt)*], $tile:literal, $copies:literal, |$start:ident, $n:ident| { $($count:tt)* }) => {
        #[tile_kernel($($attr)*)]
        fn $name(image: GlobalTensor<u8>, hist: GlobalTensor<u32>) {
            let counts = shared_tensor(u32, [256 * $copies]);
            store_shared(counts, zeros([256 * $copies]));
            sync();
            let $n = image.len();
            $($count)*
            sync();
            let mut c = zeros([256]);
            for k in 0..$copies {
                c += atomic_load(counts, arange(256) * $copies + (arange(256) + k) % $copies);
            }
            atomic::global_add(hist, c, mask = c != 0);
        }
    };
}
hist_lanes_kernel!(
    hist_lanes32_w256_t4096,
    threads = 256,
    tile = 4096,
    copies = 32
);
hist_lanes_kernel!(
    hist_lanes32_w512_t16384,
    threads = 512,
    tile = 16384,
    copies = 32
);
hist_lanes_kernel!(
    hist_lanes16_w512_t16384,
    threads = 512,
    tile = 16384,
    copies = 16
);
hist_lanes_kernel!(
    hist_lanes32_w512_t16384_mb2,
    threads = 512,
    tile = 16384,
    copies = 32,
    min_blocks_per_sm = 2
);
hist_lanes_kernel!(
    hist_lanes16_split_w512_t8192,
    threads = 512,
    tile = 8192,
    copies = 16,
    split
);
hist_lanes_kernel!(
    hist_lanes32_split_w512_t16384,
    threads = 512,
    tile = 16384,
    copies = 32,
    split
);
hist_lanes_kernel!(
    hist_lanes16_split_w512_t16384,
    threads = 512,
    tile = 16384,
    copies = 16,
    split
);
hist_split_kernel!(hist_split_w512_t16384, threads = 512, tile = 16384);
hist_split_kernel!(hist_split_w512_t8192, threads = 512, tile = 8192);
hist_kernel!(hist_w256_t4096, threads = 256, tile = 4096);
hist_kernel!(hist_w512_t8192, threads = 512, tile = 8192);
hist_kernel!(hist_w512_t16384, threads = 512, tile = 16384);
hist_kernel!(hist_w256_t16384, threads = 256, tile = 16384);

/// index_add of scalars into an output small enough for shared memory (M = 1024 f32 = 4 KB):
/// each block adds into its own copy, then adds the copy to `out` (1024 global atomics per block
/// instead of one per pair).
macro_rules! scalars_shared_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(index: GlobalTensor<i32>, values: GlobalTensor<f32>, out: GlobalTensor<f32>) {
            let acc = shared_tensor(f32, [1024]);
            store_shared(acc, zeros([1024]));
            sync();
            let n = index.len();
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                // Lanes past the end read index -1, outside `acc`: the scatter skips them.
                let i = load_global(index, offsets = [start], shape = [$tile], other = -1);
                let v = load_global(values, offsets = [start], shape = [$tile]);
                atomic::shared_scatter_add(acc, dim = 0, indices = i, values = v);
            }
            sync();
            let a = load_shared(acc);
            atomic::global_add(out, a, mask = a != 0.0);
        }
    };
}
scalars_shared_kernel!(scal_shared_w256_t2048, threads = 256, tile = 2048);
scalars_shared_kernel!(scal_shared_w512_t4096, threads = 512, tile = 4096);
scalars_shared_kernel!(scal_shared_w512_t8192, threads = 512, tile = 8192);

/// index_add of scalars into a large output (M = 2^22): one global atomic per pair, the
/// cuTile indexed form. Relaxed: the sums are the result, nothing is published through them
/// (the indexed atomics default to acq_rel).
macro_rules! scalars_global_kernel {
    ($name:ident, threads = $threads:literal, tile = $tile:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(index: GlobalTensor<i32>, values: GlobalTensor<f32>, out: GlobalTensor<f32>) {
            let n = index.len();
            for start in (block_idx() * $tile..n).step_by(grid_dim() * $tile) {
                let i = load_global(index, offsets = [start], shape = [$tile], other = -1);
                let v = load_global(values, offsets = [start], shape = [$tile]);
                atomic_add(out, i, v, order = MemoryOrder::Relaxed);
            }
        }
    };
}
scalars_global_kernel!(scal_global_w256_t1024, threads = 256, tile = 1024);
scalars_global_kernel!(scal_global_w256_t2048, threads = 256, tile = 2048);
scalars_global_kernel!(scal_global_w512_t4096, threads = 512, tile = 4096);

/// index_add of rows of 128 (`$t` = f32 or bf16): `$rows` rows per step, written as in
/// `examples/index_add.rs` with the row length known (128), so a thread holds contiguous
/// elements of a row: the loads are 16-byte accesses, and the compiler may use vector atomics.
macro_rules! rows_kernel {
    ($name:ident, $t:ident, threads = $threads:literal, rows = $rows:literal) => {
        rows_kernel!($name, $t, threads = $threads, rows = $rows, attrs = ());
    };
    // `attrs = (target = 80)`: a target of the user's (no sm_90 variant, so on an H100 the
    // kernel runs without vector atomics: packed `f16x2` ones for `f16`).
    ($name:ident, $t:ident, threads = $threads:literal, rows = $rows:literal, attrs = ($($attr:tt)*)) => {
        #[tile_kernel(threads = $threads, $($attr)*)]
        fn $name(src: GlobalTensor<$t>, index: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let n = index.len();
            let src_rows = src.view(0, [n, 128]);
            let out_rows = out.view(0, [out.len() / 128, 128]);
            let cols = arange(128).reshape([1, 128]);
            for r0 in (block_idx() * $rows..n).step_by(grid_dim() * $rows) {
                // Past the last row the index reads -1, outside `out`: the atomic skips it.
                let rows = load_global(index, offsets = [r0], shape = [$rows], other = -1);
                let vals = load_global(src_rows, offsets = [r0, 0], shape = [$rows, 128]);
                atomic_add(
                    out_rows,
                    (rows.reshape([$rows, 1]), cols),
                    vals,
                    order = MemoryOrder::Relaxed,
                );
            }
        }
    };
}
/// The same with the rows loaded as one flat run of `$rows * 128` elements, reshaped: a trick
/// for today's compiler, which gives loads through a 2-D view one bounds check and one scalar
/// access per element, but 1-D loads 16-byte vector accesses.
macro_rules! rows_flat_kernel {
    ($name:ident, $t:ident, threads = $threads:literal, rows = $rows:literal, flat = $flat:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(src: GlobalTensor<$t>, index: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let n = index.len();
            let out_rows = out.view(0, [out.len() / 128, 128]);
            let cols = arange(128).reshape([1, 128]);
            for r0 in (block_idx() * $rows..n).step_by(grid_dim() * $rows) {
                let rows = load_global(index, offsets = [r0], shape = [$rows], other = -1);
                let vals =
                    load_global(src, offsets = [r0 * 128], shape = [$flat]).reshape([$rows, 128]);
                atomic_add(
                    out_rows,
                    (rows.reshape([$rows, 1]), cols),
                    vals,
                    order = MemoryOrder::Relaxed,
                );
            }
        }
    };
}
rows_flat_kernel!(
    rows_flat_f32_w128_r16,
    f32,
    threads = 128,
    rows = 16,
    flat = 2048
);
rows_flat_kernel!(
    rows_flat_f32_w256_r32,
    f32,
    threads = 256,
    rows = 32,
    flat = 4096
);
rows_flat_kernel!(
    rows_flat_bf16_w128_r16,
    bf16,
    threads = 128,
    rows = 16,
    flat = 2048
);
rows_flat_kernel!(
    rows_flat_bf16_w256_r32,
    bf16,
    threads = 256,
    rows = 32,
    flat = 4096
);

rows_kernel!(rows_f32_w128_r8, f32, threads = 128, rows = 8);
rows_kernel!(rows_f32_w128_r16, f32, threads = 128, rows = 16);
rows_kernel!(rows_f32_w256_r32, f32, threads = 256, rows = 32);
rows_kernel!(rows_bf16_w128_r16, bf16, threads = 128, rows = 16);
rows_kernel!(rows_bf16_w256_r32, bf16, threads = 256, rows = 32);
rows_kernel!(rows_bf16_w128_r32, bf16, threads = 128, rows = 32);
rows_kernel!(rows_f16_w128_r16, f16, threads = 128, rows = 16);
rows_kernel!(
    rows_f16_w128_r16_sm80,
    f16,
    threads = 128,
    rows = 16,
    attrs = (target = 80)
);

// ---------------------------------------------------------------------------------------------
// Host side.

/// A launch of one kernel variant over a given grid, with its arguments bound.
type Variant<'a> = (&'static str, Box<dyn Fn(u32) -> Result<(), Error> + 'a>);

/// Binds the row-kernel variants of one element type to (src, index, out).
type RowVariants<T> = for<'a> fn(
    &'a Device,
    &'a GlobalTensor<T>,
    &'a GlobalTensor<i32>,
    &'a GlobalTensor<T>,
) -> Vec<Variant<'a>>;

struct Opts {
    bytes: u32,
    scalars: u32,
    rows: u32,
    reps: usize,
    grids: Vec<u32>,
    only: Vec<String>,
}

impl Opts {
    fn parse(gpu: bool) -> Opts {
        let args: HashMap<String, String> = std::env::args()
            .skip(1)
            .filter_map(|a| {
                a.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect();
        let num = |k: &str, gpu_default: u32, emu_default: u32| {
            args.get(k).and_then(|v| v.parse().ok()).unwrap_or(if gpu {
                gpu_default
            } else {
                emu_default
            })
        };
        let list = |k: &str, default: &str| -> Vec<String> {
            args.get(k)
                .map(String::as_str)
                .unwrap_or(default)
                .split(',')
                .map(str::to_string)
                .collect()
        };
        // Multiples of the 132 SMs of an H100/H200 (2, 4, 8 and 16 blocks per SM).
        let grid_default = if gpu { "264,528,1056,2112" } else { "24" };
        Opts {
            bytes: num("bytes", 30, 18),
            scalars: num("scalars", 28, 15),
            // At least 2^4 rows: the output has 1/16 as many.
            rows: num("rows", 20, 9).max(4),
            reps: num("reps", 30, 2) as usize,
            grids: list("grids", grid_default)
                .iter()
                .filter_map(|g| g.parse().ok())
                .collect(),
            only: list("only", "read,copy,hist,scalars,rows"),
        }
    }
    fn runs(&self, what: &str) -> bool {
        self.only.iter().any(|w| w == what)
    }
}

/// A small xorshift generator: the benchmark needs no dependencies.
/// An integer in `-a..=a`. The index_add inputs are small integers so that every partial sum is
/// exact (see `check_exact`): the results do not depend on the order of the atomic adds, and the
/// check is equality. The speed of an add does not depend on the values.
fn small(rng: &mut StdRng, a: u64) -> f32 {
    rng.gen_range(0..=2 * a) as f32 - a as f32
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One line in peers_types.py's format: task, implementation, median time, GB/s.
fn row(task: &str, who: &str, ms: f64, nbytes: usize, note: &str) -> f64 {
    let gbs = nbytes as f64 / (ms * 1e-3) / 1e9;
    println!(
        "{task:34} {who:40} {:10.1} us {gbs:9.1} GB/s {note}",
        ms * 1e3
    );
    gbs
}

fn pow2(log2: u32) -> String {
    match log2 {
        30 => "1 GiB".to_string(),
        _ => format!("2^{log2} B"),
    }
}

/// Runs every variant over every grid: resets the output (`reset`), launches once, checks the
/// result (`check` returns a description of the first mismatch), then times `reps` launches.
/// Prints one line each and returns the best GB/s.
fn sweep(
    dev: &Device,
    o: &Opts,
    task: &str,
    nbytes: usize,
    variants: &[Variant],
    reset: &dyn Fn() -> Result<(), Error>,
    check: &dyn Fn() -> Result<Option<String>, Error>,
) -> Result<f64, Error> {
    let mut best = 0.0f64;
    for (name, launch) in variants {
        for &grid in &o.grids {
            reset()?;
            launch(grid)?;
            if let Some(bad) = check()? {
                eprintln!("{task} {name} grid {grid}: WRONG RESULT: {bad}");
                std::process::exit(1);
            }
            let ms = median(dev.time_ms(o.reps, || launch(grid))?);
            let who = format!("tilus {name}, grid {grid}");
            best = best.max(row(task, &who, ms, nbytes, "ok"));
        }
    }
    Ok(best)
}

/// The first element where `got` differs from the exact `want`, if any.
fn first_diff<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T]) -> Option<String> {
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!(
        "element {i}: got {:?}, expected {:?}",
        got[i], want[i]
    ))
}

/// The exactness argument of the index_add checks: with integer inputs of magnitude at most
/// `amp` and at most `kmax` adds into one element, every partial sum is an integer of magnitude
/// at most `amp * kmax`, exact in a float with `bits` significant bits when that is at most
/// 2^bits. Then every order of the adds gives the exact sum.
fn check_exact(amp: u64, kmax: u64, bits: u32) -> Result<(), Error> {
    if amp * kmax > 1 << bits {
        eprintln!(
            "sizes too large for an exact check: {kmax} adds of up to {amp} exceed 2^{bits}; \
             choose smaller sizes"
        );
        std::process::exit(2);
    }
    Ok(())
}

fn bench_bytes(dev: &Device, o: &Opts, rng: &mut StdRng) -> Result<(), Error> {
    let n = 1usize << o.bytes;
    let words: Vec<u32> = (0..n / 4).map(|_| rng.gen::<u32>()).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut read_gbs = None;

    if o.runs("read") {
        let x = dev.upload(&words)?;
        let sink = dev.zeros::<u32>(1)?;
        let want = words.iter().fold(0u32, |a, &w| a.wrapping_add(w));
        let variants: Vec<Variant> = vec![
            (
                "read w512 t2048",
                Box::new(|g| read_w512_t2048::launch(dev, g, &x, &sink)),
            ),
            (
                "read w512 t8192",
                Box::new(|g| read_w512_t8192::launch(dev, g, &x, &sink)),
            ),
            (
                "read w256 t4096",
                Box::new(|g| read_w256_t4096::launch(dev, g, &x, &sink)),
            ),
        ];
        let task = format!("read-limit ({})", pow2(o.bytes));
        let best = sweep(
            dev,
            o,
            &task,
            n,
            &variants,
            &|| sink.copy_from_host(&[0]),
            &|| Ok(first_diff(&sink.download()?, &[want])),
        )?;
        read_gbs = Some(best);
    }

    if o.runs("copy") {
        let src = dev.upload(&bytes)?;
        let dst = dev.full(n, 0xa5u8)?;
        dev.copy(&src, &dst)?;
        if let Some(bad) = first_diff(&dst.download()?, &bytes) {
            eprintln!("device copy: WRONG RESULT: {bad}");
            std::process::exit(1);
        }
        let ms = median(dev.time_ms(o.reps, || dev.copy(&src, &dst))?);
        row(
            &format!("copy-limit ({}, r+w)", pow2(o.bytes)),
            "Device::copy",
            ms,
            2 * n,
            "ok",
        );
    }

    if o.runs("hist") {
        // 7 bytes short of the power of two, so that every variant's tail (the mask, or the
        // split kernels' last partial tile) is checked too.
        let m = n - 7;
        let image = dev.upload(&bytes[..m])?;
        let hist = dev.zeros::<u32>(256)?;
        let mut want = vec![0u32; 256];
        for &b in &bytes[..m] {
            want[b as usize] += 1;
        }
        let variants: Vec<Variant> = vec![
            (
                "hist256 w256 t4096",
                Box::new(|g| hist_w256_t4096::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 w512 t8192",
                Box::new(|g| hist_w512_t8192::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 w512 t16384",
                Box::new(|g| hist_w512_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 w256 t16384",
                Box::new(|g| hist_w256_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 split w512 t16384",
                Box::new(|g| hist_split_w512_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 split w512 t8192",
                Box::new(|g| hist_split_w512_t8192::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes32 w256 t4096",
                Box::new(|g| hist_lanes32_w256_t4096::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes32 w512 t16384",
                Box::new(|g| hist_lanes32_w512_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes32 w512 t16384 min_blocks 2",
                Box::new(|g| hist_lanes32_w512_t16384_mb2::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes16 w512 t16384",
                Box::new(|g| hist_lanes16_w512_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes16 split w512 t8192",
                Box::new(|g| hist_lanes16_split_w512_t8192::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes32 split w512 t16384",
                Box::new(|g| hist_lanes32_split_w512_t16384::launch(dev, g, &image, &hist)),
            ),
            (
                "hist256 lanes16 split w512 t16384",
                Box::new(|g| hist_lanes16_split_w512_t16384::launch(dev, g, &image, &hist)),
            ),
        ];
        let task = format!("u8 hist256 2^{}", o.bytes);
        let best = sweep(
            dev,
            o,
            &task,
            m,
            &variants,
            &|| hist.copy_from_host(&[0; 256]),
            &|| Ok(first_diff(&hist.download()?, &want)),
        )?;
        match read_gbs {
            Some(r) => println!(
                "# {task}: best {best:.1} GB/s = {:.3} of the read limit {r:.1} GB/s",
                best / r
            ),
            None => {
                println!("# {task}: best {best:.1} GB/s (run with only=read,hist for the ratio)")
            }
        }
    }
    Ok(())
}

fn bench_scalars(dev: &Device, o: &Opts, rng: &mut StdRng) -> Result<(), Error> {
    let n = 1usize << o.scalars;
    let values: Vec<f32> = (0..n).map(|_| small(rng, 4)).collect();
    let t_values = dev.upload(&values)?;
    // M = 1024 as in the peers; the global case has M = N / 64 (2^22 for N = 2^28).
    for (m, shared) in [(1024usize, true), (n >> 6, false)] {
        let index: Vec<i32> = (0..n).map(|_| rng.gen_range(0..m as u64) as i32).collect();
        let mut want = vec![0f32; m];
        let mut count = vec![0u64; m];
        for (&i, &v) in index.iter().zip(&values) {
            want[i as usize] += v;
            count[i as usize] += 1;
        }
        check_exact(4, count.iter().copied().max().unwrap_or(0), 24)?;
        let t_index = dev.upload(&index)?;
        let out = dev.zeros::<f32>(m)?;
        let zero = vec![0f32; m];
        let (ti, tv, to) = (&t_index, &t_values, &out);
        let variants: Vec<Variant> = if shared {
            vec![
                (
                    "shared w256 t2048",
                    Box::new(move |g| scal_shared_w256_t2048::launch(dev, g, ti, tv, to)),
                ),
                (
                    "shared w512 t4096",
                    Box::new(move |g| scal_shared_w512_t4096::launch(dev, g, ti, tv, to)),
                ),
                (
                    "shared w512 t8192",
                    Box::new(move |g| scal_shared_w512_t8192::launch(dev, g, ti, tv, to)),
                ),
            ]
        } else {
            vec![
                (
                    "global w256 t1024",
                    Box::new(move |g| scal_global_w256_t1024::launch(dev, g, ti, tv, to)),
                ),
                (
                    "global w256 t2048",
                    Box::new(move |g| scal_global_w256_t2048::launch(dev, g, ti, tv, to)),
                ),
                (
                    "global w512 t4096",
                    Box::new(move |g| scal_global_w512_t4096::launch(dev, g, ti, tv, to)),
                ),
            ]
        };
        sweep(
            dev,
            o,
            &format!("f32 index_add scalars M={m}"),
            n * 8,
            &variants,
            &|| out.copy_from_host(&zero),
            &|| Ok(first_diff(&out.download()?, &want)),
        )?;
    }
    Ok(())
}

/// The row workload for one element type `T` (f32 or bf16): `from_f32` converts the host
/// reference, `amp` and `bits` are the input magnitude and the type's significant bits for the
/// exactness argument, `variants` binds the kernel variants of `T` to the tensors.
fn bench_rows<T: tilus::Element + PartialEq + std::fmt::Debug>(
    dev: &Device,
    o: &Opts,
    rng: &mut StdRng,
    name: &str,
    (amp, bits): (u64, u32),
    from_f32: fn(f32) -> T,
    variants: RowVariants<T>,
) -> Result<(), Error> {
    const D: usize = 128;
    let r = 1usize << o.rows;
    let m = r >> 4; // [2^20, 128] into [2^16, 128] by default
    let src: Vec<f32> = (0..r * D).map(|_| small(rng, amp)).collect();
    let index: Vec<i32> = (0..r).map(|_| rng.gen_range(0..m as u64) as i32).collect();
    let mut want = vec![0f32; m * D];
    let mut count = vec![0u64; m];
    for (k, &i) in index.iter().enumerate() {
        let i = i as usize;
        count[i] += 1;
        for c in 0..D {
            want[i * D + c] += src[k * D + c];
        }
    }
    check_exact(amp, count.iter().copied().max().unwrap_or(0), bits)?;
    let want: Vec<T> = want.into_iter().map(from_f32).collect();
    let src: Vec<T> = src.into_iter().map(from_f32).collect();
    let (t_src, t_index) = (dev.upload(&src)?, dev.upload(&index)?);
    let out = dev.zeros::<T>(m * D)?;
    let zero = vec![from_f32(0.0); m * D];
    sweep(
        dev,
        o,
        &format!(
            "{name} index_add rows [2^{},128]->[2^{},128]",
            o.rows,
            o.rows - 4
        ),
        r * D * std::mem::size_of::<T>(),
        &variants(dev, &t_src, &t_index, &out),
        &|| out.copy_from_host(&zero),
        &|| Ok(first_diff(&out.download()?, &want)),
    )?;
    Ok(())
}

fn rows_f32_variants<'a>(
    dev: &'a Device,
    src: &'a GlobalTensor<f32>,
    index: &'a GlobalTensor<i32>,
    out: &'a GlobalTensor<f32>,
) -> Vec<Variant<'a>> {
    vec![
        (
            "rows w128 r8",
            Box::new(move |g| rows_f32_w128_r8::launch(dev, g, src, index, out)),
        ),
        (
            "rows w128 r16",
            Box::new(move |g| rows_f32_w128_r16::launch(dev, g, src, index, out)),
        ),
        (
            "rows w256 r32",
            Box::new(move |g| rows_f32_w256_r32::launch(dev, g, src, index, out)),
        ),
        (
            "rows flat w128 r16",
            Box::new(move |g| rows_flat_f32_w128_r16::launch(dev, g, src, index, out)),
        ),
        (
            "rows flat w256 r32",
            Box::new(move |g| rows_flat_f32_w256_r32::launch(dev, g, src, index, out)),
        ),
    ]
}

fn rows_bf16_variants<'a>(
    dev: &'a Device,
    src: &'a GlobalTensor<bf16>,
    index: &'a GlobalTensor<i32>,
    out: &'a GlobalTensor<bf16>,
) -> Vec<Variant<'a>> {
    vec![
        (
            "rows w128 r16",
            Box::new(move |g| rows_bf16_w128_r16::launch(dev, g, src, index, out)),
        ),
        (
            "rows w256 r32",
            Box::new(move |g| rows_bf16_w256_r32::launch(dev, g, src, index, out)),
        ),
        (
            "rows w128 r32",
            Box::new(move |g| rows_bf16_w128_r32::launch(dev, g, src, index, out)),
        ),
        (
            "rows flat w128 r16",
            Box::new(move |g| rows_flat_bf16_w128_r16::launch(dev, g, src, index, out)),
        ),
        (
            "rows flat w256 r32",
            Box::new(move |g| rows_flat_bf16_w256_r32::launch(dev, g, src, index, out)),
        ),
    ]
}

/// `f16` rows: the sm_90 vector form (`.v8.f16`) against the packed form of an sm_80 kernel
/// (`.f16x2`, two elements per instruction), on the same GPU.
fn rows_f16_variants<'a>(
    dev: &'a Device,
    src: &'a GlobalTensor<f16>,
    index: &'a GlobalTensor<i32>,
    out: &'a GlobalTensor<f16>,
) -> Vec<Variant<'a>> {
    vec![
        (
            "rows w128 r16 (v8.f16 on sm_90)",
            Box::new(move |g| rows_f16_w128_r16::launch(dev, g, src, index, out)),
        ),
        (
            "rows w128 r16 target 80 (f16x2)",
            Box::new(move |g| rows_f16_w128_r16_sm80::launch(dev, g, src, index, out)),
        ),
    ]
}

fn main() -> Result<(), Error> {
    let dev = Device::default()?;
    let o = Opts::parse(dev.is_gpu());
    println!(
        "# {}, tilus bench_types, median of {} launches, grids {:?}",
        dev.name(),
        o.reps,
        o.grids
    );
    let mut rng = StdRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
    if o.runs("read") || o.runs("copy") || o.runs("hist") {
        bench_bytes(&dev, &o, &mut rng)?;
    }
    if o.runs("scalars") {
        bench_scalars(&dev, &o, &mut rng)?;
    }
    if o.runs("rows") {
        // Exact checks (see `check_exact`): f32 inputs up to 4 (24 significant bits), bf16
        // inputs up to 2 (8 bits: integer sums up to 256 are exact), for about 16 rows per
        // output row and a few dozen in the hottest.
        bench_rows(&dev, &o, &mut rng, "f32", (4, 24), |x| x, rows_f32_variants)?;
        bench_rows(
            &dev,
            &o,
            &mut rng,
            "bf16",
            (2, 8),
            bf16::from_f32,
            rows_bf16_variants,
        )?;
        // f16: 11 significant bits, inputs up to 2 like bf16.
        bench_rows(
            &dev,
            &o,
            &mut rng,
            "f16",
            (2, 11),
            f16::from_f32,
            rows_f16_variants,
        )?;
    }
    Ok(())
}
