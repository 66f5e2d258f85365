//! Per-block and global minimum / maximum: each block reduces its chunk with `.min()` / `.max()`,
//! stores its own result, and folds it into the global `[min, max]` pair with `[1]` global
//! atomics; a column-wise min/max over all blocks uses element-wise `atomic::global_min/max`.
//!
//! cargo run --example block_minmax                    # the CPU emulator
//! cargo run --example block_minmax --features cuda    # an NVIDIA GPU, if present

use tilus::prelude::*;

/// Block `b` covers `x[b*1024 .. b*1024+1024]` (the tail past `len` is ignored).
/// `per_block[2b], per_block[2b+1]` = its min and max; `global = [min, max]` over all of `x`;
/// `cols_min[j]` / `cols_max[j]` = min / max of `x[b*1024 + j]` over blocks.
#[tile_kernel(threads = 256)]
fn block_minmax(
    x: GlobalTensor<i32>,
    per_block: GlobalTensor<i32>,
    global: GlobalTensor<i32>,
    cols_min: GlobalTensor<i32>,
    cols_max: GlobalTensor<i32>,
) {
    let b = block_idx();
    let o = b * 1024;
    let m = arange(1024) + o < x.len();
    let v = load_global(x, offsets = [o], shape = [1024]);
    let lo = select(m, v, 2147483647).min();
    let hi = select(m, v, -2147483647 - 1).max();
    store_global(per_block, full([1], lo), offsets = [2 * b]);
    store_global(per_block, full([1], hi), offsets = [2 * b + 1]);
    atomic::global_min(global, full([1], lo));
    atomic::global_max(global.view(1, [1]), full([1], hi));
    atomic::global_min(cols_min, v, mask = m);
    atomic::global_max(cols_max, v, mask = m);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    println!("device: {}", dev.name());
    let n: usize = 1024 * 300 + 517; // not a multiple of the tile
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        | 1;
    let data: Vec<i32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 16) as i32 // the full i32 range
        })
        .collect();
    let blocks = n.div_ceil(1024);
    let x = dev.upload(&data)?;
    let per_block = dev.zeros::<i32>(2 * blocks)?;
    let global = dev.upload(&[i32::MAX, i32::MIN])?;
    let cols_min = dev.full(1024, i32::MAX)?;
    let cols_max = dev.full(1024, i32::MIN)?;
    let t = std::time::Instant::now();
    block_minmax::launch(
        &dev,
        blocks as u32,
        &x,
        &per_block,
        &global,
        &cols_min,
        &cols_max,
    )?;
    let (pb, g, cmin, cmax) = (
        per_block.download()?,
        global.download()?,
        cols_min.download()?,
        cols_max.download()?,
    );
    let elapsed = t.elapsed();
    let mut want_pb = Vec::new();
    for c in data.chunks(1024) {
        want_pb.push(*c.iter().min().unwrap());
        want_pb.push(*c.iter().max().unwrap());
    }
    let want_g = vec![*data.iter().min().unwrap(), *data.iter().max().unwrap()];
    let mut want_cmin = vec![i32::MAX; 1024];
    let mut want_cmax = vec![i32::MIN; 1024];
    for (i, &v) in data.iter().enumerate() {
        want_cmin[i % 1024] = want_cmin[i % 1024].min(v);
        want_cmax[i % 1024] = want_cmax[i % 1024].max(v);
    }
    let mut ok = true;
    for (what, got, want) in [
        ("per-block", &pb, &want_pb),
        ("global", &g, &want_g),
        ("column min", &cmin, &want_cmin),
        ("column max", &cmax, &want_cmax),
    ] {
        if got != want {
            let bad = got
                .iter()
                .zip(want.iter())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            eprintln!(
                "MISMATCH in {what} at {bad}: got {}, expected {}",
                got[bad], want[bad]
            );
            ok = false;
        }
    }
    if !ok {
        std::process::exit(1);
    }
    println!("{n} values in {blocks} blocks: global min {} max {}; per-block and column results match ({elapsed:.2?})", g[0], g[1]);
    Ok(())
}
