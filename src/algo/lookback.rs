//! Decoupled look-back (Merrill & Garland 2016), the protocol every single-pass algorithm of
//! [`super`] shares, as kernel-body tokens: the scan and the compaction kernels splice it in
//! through [`with_lookback!`], so it is written once.
//!
//! Each block draws a ticket (`atomic::global_add`) which is its tile: tiles are handed out in
//! the order blocks start, so a block only waits for tiles whose blocks are already running,
//! and no co-residency is assumed. The block publishes its tile's fold `total` as an
//! *aggregate* (flag 1) with a release store, then looks back over windows of 256 predecessors
//! with acquire loads of their flags: while one of them has published nothing it reads the
//! window again; otherwise it folds the window's values from the last *inclusive prefix*
//! (flag 2) on and stops there, or moves one window back. It then publishes its own inclusive
//! prefix (flag 2). The values are written before their flags and read after them, which is
//! what the release and the acquire order (the race checker reports either order broken).
//!
//! Flags carry the run's epoch (`epoch * 4 + state`), so storage is reused without clearing:
//! a flag left by an earlier run reads as "nothing yet". Tickets keep counting across runs; a
//! run (epochs count from 1) subtracts the `(epoch - 1) * tiles` tickets of the runs before.

/// Calls `$cb! { $($args)* [look-back tokens] }`. The tokens expect, in the kernel: tensors
/// `agg`, `inc` (values) and `flags` (`i32`), scalars `epoch` and `tile`, the tile's fold
/// `total`; they define `prefix`, the fold of all earlier tiles. The operator is given by its
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
            let mut prefix = $id;
            let mut end = tile;
            // Windows of 256 predecessors: the whole block looks back, so a wide window costs
            // about what a narrow one does, and the walk to an inclusive prefix is 8 times shorter.
            let lanes = arange(256);
            while end > 0 {
                let at = lanes + (end - 256);
                let inside = at >= 0;
                let place = select(inside, at, 0);
                let f = atomic_load(flags, place, order = acquire, scope = gpu);
                // Places before tile 0 act as published prefixes of the identity.
                let state = select(inside, f - ready, 2);
                // One reduction: 512 while a place has published nothing yet, else the last
                // place holding an inclusive prefix (-1: none in this window).
                let seen = select((state < 1) | (state > 2), 512, select(state == 2, lanes, -1)).max();
                if seen < 512 {
                    let used = inside & (lanes >= seen);
                    let a = load_global(agg, offsets = [place], shape = [256], mask = used & (state == 1), other = $id);
                    let p = load_global(inc, offsets = [place], shape = [256], mask = used & (state == 2), other = $id);
                    let window = select(state == 2, p, a).$fold();
                    prefix = $($f)* (window $sep prefix);
                    if seen >= 0 {
                        end = 0;
                    } else {
                        end = end - 256;
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

use crate::{Device, Element, GlobalTensor, Stream};

/// The look-back's storage for tiles whose folds are `V`s: each tile's aggregate and inclusive
/// prefix, its flag, and the ticket counter.
#[doc(hidden)]
pub struct Lookback<V: Element> {
    pub(crate) agg: GlobalTensor<V>,
    pub(crate) inc: GlobalTensor<V>,
    pub(crate) flags: GlobalTensor<i32>,
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
            self.ticket = dev.zeros(1)?;
            self.epoch = 0;
        }
        self.epoch += 1;
        Ok(())
    }
}
