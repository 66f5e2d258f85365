//! Benchmark (not a test): the tile collectives applied tile by tile to 2^28 32-bit values,
//! the tasks of `../shared/bench/cub_block.cu` (CUB's block primitives) so the two can be run
//! side by side, each against a tile copy measured in the same run:
//!
//! * row sums of `[2^21, 128]` i32 (`t.sum(1)` on `[32, 128]` tiles: the rows plan, a row per
//!   32 lanes, 4 elements each, no shared memory but for the results);
//! * inclusive prefix sum within each tile of 4096 (`t.cumsum(0)`: the whole-tile plan);
//! * sort of each tile of 4096 u32 keys (`t.sort()`);
//! * sort of each tile of (u32 key, u32 value) pairs (`argsort`, then `take` of both);
//! * top-16 of each tile (`t.topk(16)`).
//!
//! The sorts take blocks of 256 threads, 16 keys a thread (CUB's `cub_block.cu` takes 512
//! threads of 8), with their registers bounded so that three blocks (two for the pair sort,
//! whose index arrays double the scratch) share an SM. One H100 call, 2^28 keys, each at its
//! best grid: sort 3829 us on 256 threads unbounded (123 registers, two blocks an SM), 3698
//! with three blocks an SM, 4693 on 512 threads, 7661 on 1024; top-16 3683 / 3454 / 4630 /
//! 7515; pairs 6622 unbounded (153 registers, one block), 5084 with two blocks, 7276 on 512.
//!
//! cargo run --release --example bench_collectives --features cuda [-- LOG2_N]
//!
//! One line per task: median time, GB/s of input read, ratio to the tile copy. Every result is
//! checked against a CPU reference (the whole output for the copy, sums and scans; a sample of
//! tiles for the sorts, which are slower to check).

use tilus::prelude::*;

const TILE: usize = 4096;

#[tile_kernel(threads = 512)]
fn copy_tiles(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    for start in (block_idx() * 4096..x.len()).step_by(grid_dim() * 4096) {
        let t = load_global(x, offsets = [start], shape = [4096]);
        store_global(out, t, offsets = [start]);
    }
}

#[tile_kernel(threads = 512)]
fn row_sums(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let rows = out.len();
    let m = x.view(0, [rows, 128]);
    for start in (block_idx() * 32..rows).step_by(grid_dim() * 32) {
        let t = load_global(m, offsets = [start, 0], shape = [32, 128]);
        store_global(out, t.sum(1), offsets = [start]);
    }
}

#[tile_kernel(threads = 512)]
fn scan_tiles(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    for start in (block_idx() * 4096..x.len()).step_by(grid_dim() * 4096) {
        let t = load_global(x, offsets = [start], shape = [4096]);
        store_global(out, t.cumsum(0), offsets = [start]);
    }
}

#[tile_kernel(threads = 256, min_blocks_per_sm = 3)]
fn sort_tiles(x: GlobalTensor<u32>, out: GlobalTensor<u32>) {
    for start in (block_idx() * 4096..x.len()).step_by(grid_dim() * 4096) {
        let t = load_global(x, offsets = [start], shape = [4096]);
        store_global(out, t.sort(), offsets = [start]);
    }
}

#[tile_kernel(threads = 256, min_blocks_per_sm = 2)]
fn sort_pair_tiles(
    k: GlobalTensor<u32>,
    v: GlobalTensor<u32>,
    ko: GlobalTensor<u32>,
    vo: GlobalTensor<u32>,
) {
    for start in (block_idx() * 4096..k.len()).step_by(grid_dim() * 4096) {
        let keys = load_global(k, offsets = [start], shape = [4096]);
        let values = load_global(v, offsets = [start], shape = [4096]);
        let order = keys.argsort();
        store_global(ko, keys.take(order, axis = 0), offsets = [start]);
        store_global(vo, values.take(order, axis = 0), offsets = [start]);
    }
}

#[tile_kernel(threads = 256, min_blocks_per_sm = 3)]
fn top16_tiles(x: GlobalTensor<u32>, out: GlobalTensor<u32>) {
    for tile in (block_idx()..x.len() / 4096).step_by(grid_dim()) {
        let t = load_global(x, offsets = [tile * 4096], shape = [4096]);
        store_global(out, t.topk(16), offsets = [tile * 16]);
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn fail(task: &str) -> ! {
    eprintln!("{task}: WRONG RESULT");
    std::process::exit(1);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let default_log2 = if dev.is_gpu() { 28 } else { 16 };
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_log2);
    let n = 1usize << log2.max(12);
    let reps = if dev.is_gpu() { 30 } else { 2 };
    let grid = if dev.is_gpu() { 132 * 4 } else { 8 };
    // Each task is timed at 4, 8 and 16 blocks an SM and reported at its best, as the CUB
    // figures are (row sums, for one, take 491 us at 4 blocks an SM and 426 us at 16).
    let grids: Vec<u32> = if dev.is_gpu() {
        vec![132 * 4, 132 * 8, 132 * 16]
    } else {
        vec![grid]
    };
    let best = |launch: &mut dyn FnMut(u32) -> tilus::Result<()>| -> tilus::Result<(f64, u32)> {
        let mut fastest = (f64::INFINITY, 0);
        for &g in &grids {
            let ms = median(dev.time_ms(reps, || launch(g))?);
            if ms < fastest.0 {
                fastest = (ms, g);
            }
        }
        Ok(fastest)
    };
    println!(
        "# device: {}, n = 2^{log2} 32-bit values, tiles of {TILE}, median of {reps} runs at the best grid",
        dev.name()
    );
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let keys: Vec<u32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 32) as u32
        })
        .collect();
    let ints: Vec<i32> = keys.iter().map(|k| (k % 2001) as i32 - 1000).collect();
    let gbs = |ms: f64| (n * 4) as f64 / (ms * 1e-3) / 1e9;
    let line = |task: &str, (ms, grid): (f64, u32), base: f64| {
        println!(
            "{task:<28} {:>10.1} us {:>9.1} GB/s  ratio to copy {:.3}  grid {grid}",
            ms * 1e3,
            gbs(ms),
            base / ms
        );
    };

    let x = dev.upload(&ints)?;
    let out = dev.zeros::<i32>(n)?;
    copy_tiles::launch(&dev, grid, &x, &out)?;
    if out.download()? != ints {
        fail("copy");
    }
    let copy = best(&mut |g| copy_tiles::launch(&dev, g, &x, &out))?;
    let copy_ms = copy.0;
    line("tile copy", copy, copy_ms);

    let sums = dev.zeros::<i32>(n / 128)?;
    row_sums::launch(&dev, grid, &x, &sums)?;
    let want: Vec<i32> = ints.chunks(128).map(|r| r.iter().sum()).collect();
    if sums.download()? != want {
        fail("row sums");
    }
    let ms = best(&mut |g| row_sums::launch(&dev, g, &x, &sums))?;
    line("row sums [*, 128] i32", ms, copy_ms);

    scan_tiles::launch(&dev, grid, &x, &out)?;
    let want: Vec<i32> = ints
        .chunks(TILE)
        .flat_map(|t| {
            t.iter().scan(0i32, |acc, v| {
                *acc = acc.wrapping_add(*v);
                Some(*acc)
            })
        })
        .collect();
    if out.download()? != want {
        fail("scan");
    }
    let ms = best(&mut |g| scan_tiles::launch(&dev, g, &x, &out))?;
    line("inclusive scan, 4096", ms, copy_ms);

    let k = dev.upload(&keys)?;
    let sorted = dev.zeros::<u32>(n)?;
    sort_tiles::launch(&dev, grid, &k, &sorted)?;
    let got = sorted.download()?;
    for t in (0..n / TILE).step_by((n / TILE / 16).max(1)) {
        let mut want = keys[t * TILE..(t + 1) * TILE].to_vec();
        want.sort_unstable();
        if got[t * TILE..(t + 1) * TILE] != want[..] {
            fail("sort");
        }
    }
    let ms = best(&mut |g| sort_tiles::launch(&dev, g, &k, &sorted))?;
    line("sort u32, 4096", ms, copy_ms);

    let values: Vec<u32> = (0..n as u32).collect();
    let v = dev.upload(&values)?;
    let (ko, vo) = (dev.zeros::<u32>(n)?, dev.zeros::<u32>(n)?);
    sort_pair_tiles::launch(&dev, grid, &k, &v, &ko, &vo)?;
    let (got_k, got_v) = (ko.download()?, vo.download()?);
    for t in (0..n / TILE).step_by((n / TILE / 16).max(1)) {
        let range = t * TILE..(t + 1) * TILE;
        let mut want: Vec<(u32, u32)> = range.clone().map(|i| (keys[i], values[i])).collect();
        want.sort_by_key(|&(key, _)| key); // stable: equal keys keep their order
        let got: Vec<(u32, u32)> = range.map(|i| (got_k[i], got_v[i])).collect();
        if got != want {
            fail("pair sort");
        }
    }
    let ms = best(&mut |g| sort_pair_tiles::launch(&dev, g, &k, &v, &ko, &vo))?;
    line("sort (u32, u32) pairs, 4096", ms, copy_ms);

    let top = dev.zeros::<u32>(n / TILE * 16)?;
    top16_tiles::launch(&dev, grid, &k, &top)?;
    let got = top.download()?;
    for t in (0..n / TILE).step_by((n / TILE / 16).max(1)) {
        let mut want = keys[t * TILE..(t + 1) * TILE].to_vec();
        want.sort_unstable_by(|a, b| b.cmp(a));
        if got[t * 16..(t + 1) * 16] != want[..16] {
            fail("top-16");
        }
    }
    let ms = best(&mut |g| top16_tiles::launch(&dev, g, &k, &top))?;
    line("top-16 u32, 4096", ms, copy_ms);
    Ok(())
}
