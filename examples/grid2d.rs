//! A 2-D grid: block `(bx, by)` sums the 16 × 32 tile at rows `16·by..`, columns `32·bx..` of a
//! matrix whose sides are not multiples of the tile (the loads are masked at the edges), and
//! writes the sum at `[by, bx]` of a `grid_dim(1) × grid_dim(0)` result.
//!
//! cargo run --release --example grid2d                    # the CPU emulator
//! cargo run --release --example grid2d --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

const TILE_ROWS: usize = 16;
const TILE_COLS: usize = 32;

#[tile_kernel(threads = 128)]
fn tile_sums(m: GlobalTensor<i32>, sums: GlobalTensor<i32>, rows: i32, cols: i32) {
    let a = m.view(0, [rows, cols]);
    let bx = block_idx(0);
    let by = block_idx(1);
    let t = load_global(a, offsets = [by * 16, bx * 32], shape = [16, 32], other = 0);
    let s = t.sum();
    store_global(sums, full([1], s), offsets = [by * grid_dim(0) + bx]);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let (rows, cols) = (203usize, 555usize); // neither a multiple of the tile
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let data: Vec<i32> = (0..rows * cols)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 2001) as i32 - 1000
        })
        .collect();
    let grid = Grid::new(
        cols.div_ceil(TILE_COLS) as u32,
        rows.div_ceil(TILE_ROWS) as u32,
        1,
    );
    let (gx, gy) = (grid.x as usize, grid.y as usize);
    let m = dev.upload(&data)?;
    let sums = dev.full(gx * gy, i32::MIN)?; // poisoned: a block that did not run shows
    tile_sums::launch(&dev, grid, &m, &sums, rows as i32, cols as i32)?;

    let mut want = vec![0i32; gx * gy];
    for r in 0..rows {
        for c in 0..cols {
            want[(r / TILE_ROWS) * gx + c / TILE_COLS] += data[r * cols + c];
        }
    }
    let got = sums.download()?;
    assert_eq!(got, want, "tile sums differ from the CPU's");
    println!(
        "{rows} × {cols} matrix, {gx} × {gy} grid of {TILE_ROWS} × {TILE_COLS} tiles: sums match the CPU (corner tile {})",
        got[gx * gy - 1]
    );
    Ok(())
}
