//! Decoupled look-back (Merrill & Garland 2016), the protocol every single-pass algorithm of
//! [`super`] shares, as kernel-body tokens: the scan and the compaction kernels splice it in
//! through [`with_lookback!`] (folds of 64-bit values: flags with release/acquire, described
//! below) or [`with_packed_lookback!`] (32-bit values: state and value in one word, relaxed;
//! on an H100 it took a 2^28 `i32` scan from 0.53 to 0.67 of CUB's speed), so each is written
//! once.
//!
//! Each block draws a ticket (`atomic::global_add`) which is its tile: tiles are handed out in
//! the order blocks start, so a block only waits for tiles whose blocks are already running,
//! and no co-residency is assumed. One tile a block, not persistent blocks looping over
//! tiles: a block that draws its next ticket before its current tile has looked back publishes
//! that tile's fold late and every later tile waits on it (an H200, 2^28 `i32`: `select_if`
//! 19-35% and the scan 10-40% slower; with the next tile counted and published before the
//! look-back, from a second stage buffer, `select_if` 2% faster at 6 blocks an SM, not
//! measured on an H100, and the radix sort's keys pass 12% slower; BENCHMARKS.md, session 51).
//!
//! The block publishes its tile's fold `total` as an *aggregate* (flag 1) with a release store,
//! then looks back over windows of 32 predecessors with acquire loads of their flags: while one
//! of them has published nothing it reads the window again; otherwise it folds the window's
//! values from the last *inclusive prefix* (flag 2) on and stops there, or moves one window
//! back. It then publishes its own inclusive prefix (flag 2). The values are written before
//! their flags and read after them, which is what the release and the acquire order (the race
//! checker reports either order broken).
//!
//! Flags carry the run's epoch (`epoch * 4 + state`), so storage is reused without clearing:
//! a flag left by an earlier run reads as "nothing yet". Tickets keep counting across runs; a
//! run (epochs count from 1) subtracts the `(epoch - 1) * tiles` tickets of the runs before.

/// Calls `$cb! { $($args)* [publish tokens] [look-back tokens] }`: the first publish the
/// tile's fold, the second look back and publish its inclusive prefix, so a kernel may do work
/// of its own between the two (its predecessors publish meanwhile). The tokens expect, in the
/// kernel: tensors `agg`, `inc` (values) and `flags` (`i32`), scalars `epoch` and `tile`, the
/// tile's fold `total`; the second group defines `prefix`, the fold of all earlier tiles (and
/// `ready`, from the first, must stay in scope). The operator is given by its
/// identity, its whole-tile fold (`sum`) and `[f] [sep]`, spelling `f(a sep b)` (`[] [+]` is
/// `(a + b)`, `[min] [,]` is `min(a, b)`: the body is the kernel language's, not Rust's).
macro_rules! with_lookback {
    ($cb:ident, [$($args:tt)*], $id:expr, $fold:ident, [$($f:tt)*] [$sep:tt]) => {
        $cb! { $($args)* [
            let ready = epoch * 4;
            if tile == 0 {
                store_global(inc, full([1], total), offsets = [0]);
                atomic_store(flags, 0, ready + 2, order = release, scope = gpu);
            } else {
                store_global(agg, full([1], total), offsets = [tile]);
                atomic_store(flags, tile, ready + 1, order = release, scope = gpu);
            }
        ] [
            let mut prefix = $id;
            let mut end = tile;
            // Windows of 32 predecessors: every tile of the loop fits one warp, so warp 0 runs
            // it alone (the acquire's barrier is the warp's) and a spin has no block barrier.
            let lanes = arange(32);
            while end > 0 {
                let at = lanes + (end - 32);
                let inside = at >= 0;
                let place = select(inside, at, 0);
                let f = atomic_load(flags, place, order = acquire, scope = gpu);
                // Places before tile 0 act as published prefixes of the identity.
                let state = select(inside, f - ready, 2);
                // One reduction: 64 while a place has published nothing yet, else the last
                // place holding an inclusive prefix (-1: none in this window).
                let seen = select((state < 1) | (state > 2), 64, select(state == 2, lanes, -1)).max();
                if seen < 64 {
                    let used = inside & (lanes >= seen);
                    let a = load_global(agg, offsets = [place], shape = [32], mask = used & (state == 1), other = $id);
                    let p = load_global(inc, offsets = [place], shape = [32], mask = used & (state == 2), other = $id);
                    let window = select(state == 2, p, a).$fold();
                    prefix = $($f)* (window $sep prefix);
                    if seen >= 0 {
                        end = 0;
                    } else {
                        end = end - 32;
                    }
                }
            }
            if tile > 0 {
                store_global(inc, full([1], $($f)* (prefix $sep total)), offsets = [tile]);
                atomic_store(flags, tile, ready + 2, order = release, scope = gpu);
            }
        ] }
    };
}
pub(crate) use with_lookback;

/// The look-back for folds of 32-bit values (`i32`, `u32`, `f32`), as CUB writes it: a tile's
/// state and value share one 64-bit word of `status` (`(epoch * 4 + state) << 32 | bits`), so
/// one relaxed atomic store publishes both and one relaxed load reads both; no fence and no
/// second load of the values are needed (nothing is communicated outside the word). Windows
/// of 32 predecessors, as CUB's: a loop whose tiles fit in one warp runs on warp 0 alone (see
/// the language's "Scalars and uniform control flow"), so a spin is one load and two warp
/// butterflies, with no block barrier. On an H100 (2^28 `i32`, one call) that took the scan
/// from 1077 to 903-910 us, with tiles of 8192 on 128 threads (the block-wide windows of 128
/// were best at 2048; windows of 32 loaded four at a time by one warp, 937 us, were slower
/// than one). Extra arguments: how a value becomes the word's low bits (`[$to]`, an
/// expression of `value`: `[(value as u32) as u64]`) and back (`[$from]`, of `word`:
/// `[(word as u32) as i32]`), and optionally `delay = NS`, a sleep of `NS` nanoseconds before
/// the first read, for tiles from 512 on. The tokens expect `status` (`u64`) in place of
/// `agg`, `inc` and `flags`; like [`with_lookback!`]'s they come as two groups, publish and
/// look back.
macro_rules! with_packed_lookback {
    ($cb:ident, [$($args:tt)*], $id:expr, $fold:ident, [$($f:tt)*] [$sep:tt], [$($to:tt)*] [$($from:tt)*] $(, delay = $ns:literal)?) => {
        $cb! { $($args)* [
            let ready = epoch * 4;
            let value = total;
            // Tile 0's fold is already its inclusive prefix (state 2), the others' aggregates.
            let published = ready + 1 + (tile == 0) as i32;
            atomic_store(status, tile, ((published as u64) << 32) | ($($to)*), sem = relaxed);
        ] [
            let mut prefix = $id;
            let mut end = tile;
            let lanes = arange(32);
            // The delay (measured faster, not profiled): predecessors publish meanwhile, so the
            // first read of a window likely finds them, and fewer reads poll the same few
            // status words. Only from tile 512 on: there hundreds of tiles are in flight (the
            // steady state the delay is measured in); the first tiles of a small problem keep
            // their latency.
            $(if tile >= 512 {
                nanosleep($ns);
            })?
            while end > 0 {
                let at = lanes + (end - 32);
                let inside = at >= 0;
                let word = atomic_load(status, select(inside, at, 0), sem = relaxed);
                // Places before tile 0 act as published prefixes of the identity.
                let state = select(inside, ((word >> 32) as i32) - ready, 2);
                let seen = select((state < 1) | (state > 2), 64, select(state == 2, lanes, -1)).max();
                if seen < 64 {
                    let window = select(inside & (lanes >= seen), $($from)*, $id).$fold();
                    prefix = $($f)* (window $sep prefix);
                    if seen >= 0 {
                        end = 0;
                    } else {
                        end = end - 32;
                    }
                }
            }
            if tile > 0 {
                let value = $($f)* (prefix $sep total);
                atomic_store(status, tile, (((ready + 2) as u64) << 32) | ($($to)*), sem = relaxed);
            }
        ] }
    };
}
pub(crate) use with_packed_lookback;

use crate::{Device, Element, GlobalTensor, Stream};

/// The look-back's storage for tiles whose folds are `V`s: each tile's aggregate and inclusive
/// prefix and its flag (folds of 64-bit values), its packed status word (32-bit values), and
/// the ticket counter.
#[doc(hidden)]
pub struct Lookback<V: Element> {
    pub(crate) agg: GlobalTensor<V>,
    pub(crate) inc: GlobalTensor<V>,
    pub(crate) flags: GlobalTensor<i32>,
    pub(crate) status: GlobalTensor<u64>,
    pub(crate) ticket: GlobalTensor<i32>,
    /// Tiles (the kernels launch one block per tile, all of them every run).
    pub(crate) tiles: usize,
    /// The current run's epoch (0 before the first).
    pub(crate) epoch: i32,
}

impl<V: Element + Copy + Default> Lookback<V> {
    pub fn new(dev: &Device, tiles: usize) -> Result<Self, crate::Error> {
        let tiles = tiles.max(1);
        Ok(Lookback {
            agg: dev.zeros(tiles)?,
            inc: dev.zeros(tiles)?,
            flags: dev.zeros(tiles)?,
            status: dev.zeros(tiles)?,
            ticket: dev.zeros(1)?,
            tiles,
            epoch: 0,
        })
    }

    /// Starts a run: the next epoch. Every run draws `tiles` tickets; when the counter would
    /// pass `i32::MAX`, the flags and the counter start again from zero.
    pub fn next_run(&mut self, stream: &Stream<'_>) -> Result<(), crate::Error> {
        let next = (self.epoch as i64 + 2) * self.tiles as i64;
        if next >= i32::MAX as i64 || self.epoch >= i32::MAX / 4 - 1 {
            let dev = stream.device();
            self.flags = dev.zeros(self.tiles)?;
            self.status = dev.zeros(self.tiles)?;
            self.ticket = dev.zeros(1)?;
            self.epoch = 0;
        }
        self.epoch += 1;
        Ok(())
    }
}
