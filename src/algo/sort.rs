//! Device-wide LSD radix sorts (`radix_sort_keys`, `radix_sort_pairs`), Onesweep-style
//! (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022):
//! one pass counts every digit of every key, then one pass per 8-bit digit moves each key (and
//! its value) to its place, the tiles' digit counts scanned across tiles by decoupled look-back.
//!
//! **Order.** Keys are sorted through an order-preserving map to unsigned bits: unsigned keys
//! as they are, signed ones with the sign bit flipped, floats by IEEE 754 `totalOrder`
//! (`-NaN < -inf < .. < -0.0 < +0.0 < .. < +inf < +NaN`, as the tile sort), and a descending
//! sort flips every bit. Every pass is stable, so the sort is: equal keys keep their input
//! order, in both directions (a descending sort is not the reverse of an ascending one where
//! keys repeat).
//!
//! **One pass** (one block per tile of keys, 4096 to 6144 by the kernel, tiles taken from a
//! ticket): the block counts its tile's digits and publishes the counts (256 words, one per digit,
//! each a count and a state in one 64-bit word, so a relaxed atomic suffices: the count and its
//! state are read together). It then orders the tile by digit, stably: each key (and its value)
//! goes to shared memory at its place, its digit's start in the tile plus its rank among the tile's
//! equal digits (`(digit as u8).place(starts)`: ballots and a count table per warp, as CUB's
//! Onesweep ranks), to be read back in order after the look-back. The keys pass loads its tile
//! warp-striped, as CUB does, and ranks it in that order (`place(starts, order = [1, 0, 2])`), so
//! each warp counts its own registers; the pair passes load rows and rank through shared memory,
//! which measured faster for them (`pass_kernel!`). Then each of its 256 lanes looks back over the
//! tiles before it for its own digit, two tiles a step, adding aggregates until it meets an
//! inclusive prefix: ordering first, as CUB's Onesweep does, gives the predecessors time to publish
//! their prefixes, so the walks are short. Each key then goes to the start of its digit (the global
//! counts, scanned once per sort by `digit_starts`), plus the count of that digit in earlier tiles,
//! plus its place among the tile's keys of that digit. Keys past the end of the last tile are read
//! as the key whose ordered bits are all ones: they sort after the tile's real keys, land past the
//! end, and the bounded stores drop them, so no key carries a mask. The passes hold runs of one key
//! a thread (`vector_width = 1`), so consecutive lanes write consecutive addresses (6% faster than
//! runs of four on an H100). The keys pass also asks for the tile a block will take about one tile
//! a multiprocessor later (`prefetch_global`), so that its load finds it in the L2.
//!
//! **Speed** (H100, 2^28 random `u32`; BENCHMARKS.md has each step): keys 5.93-6.00 ms, pairs
//! 10.36-10.45 ms, against CUB's 5.54 and 9.41 ms (the same call, 2026-11-28) and torch's
//! `sort` 13.68 and 13.69 ms; on an H200 keys 5.87 ms and pairs 9.37 against CUB's 5.42 and
//! 8.50. The counting pass takes 462 us (CUB's 456), each digit pass about 7% longer than
//! CUB's. A pass is bound by latency, not by memory or its instructions (`ncu`, a keys pass over
//! 2^28 keys, 2026-11-27: 1.42 ms against CUB's 1.24 with 1% more warp instructions, at 24
//! warps an SM against CUB's 35: 80 registers and 34 KB of shared memory a block of 256
//! threads, against CUB's 56 and 31 KB for 384; a quarter of the warps' time in the
//! look-back's loop, waiting for the predecessors' words). At 64 registers (4 blocks an SM) the
//! keys pass spills 156 bytes; tiles of 5120 keys that fit there (the keys reloaded after the
//! rank) were 1.9% slower: more warps did not pay for more tiles' fixed work, and neither did
//! CUB's own arrangement, 16 keys on each of 384 threads (56 registers, 3 blocks an SM; 10%
//! slower, `pass_kernel!`'s `$threads`).
//!
//! Flags carry the pass's epoch (`epoch * 4 + state` in the high word), so the storage is
//! reused without clearing, as in the scan.

/// The shortest tile of a digit pass (whose count of tiles sizes the look-back words).
pub const TILE: usize = 4096;

/// Tiles of look-back words before tile 0's (the pass kernels write the literal 4): never
/// written, they give the walk's loads (two a step) an address past tile 0 without a clamp
/// (their values are never used: tile 0's words are inclusive prefixes, where walks stop).
const LEAD: usize = 4;

use crate::prelude::*;
use crate::AsTensor;

/// Keys a block of the counting pass ([`counts_kernel`]) takes a step: 16 a thread (the kernel
/// writes the literal 8192).
const COUNT_TILE: usize = 8192;

/// Blocks of the counting pass on the emulator, whose workers run a few blocks at a time: the
/// tests' sizes then take several tiles a block, as a GPU's large sizes do.
const COUNT_BLOCKS_EMULATOR: u32 = 8;

/// The counting pass: histograms of `passes` digits of every key (the bytes at bits `low`,
/// `low + 8`, .. of its ordered bits under the masks), added to `counts[p * 256 + digit]`.
/// Grid-strided, as CUB's histogram kernel: a block counts every tile it takes into one table
/// of counters in shared memory (an atomic a key and digit, no barrier between tiles) and adds
/// the table to `counts` once, at the end. Keys past the end read as `fill`, whose ordered bits
/// are all ones: counted as digit 255 of every pass, and taken off once at the end, so that no
/// key carries a mask (a masked atomic is a branch of its own in the SASS). (An H100, 2^28 u32
/// keys, four digits: 767 us with a block a tile, each adding its 1,024 counts with global
/// atomics; 500 us so, masked; CUB's histogram kernel 456 us.)
///
/// The grid is `$blocks` an SM on a GPU, as many as run at once (the registers bounded to
/// them), so that no block waits for a second wave: 4 for 32-bit keys (32 registers), 3 for
/// 64-bit ones (40; at 4 they spill 156 bytes). (An H100, u32 keys: 500 us on 4 blocks of 512
/// threads an SM, 504 us on 8 of 256, with masked keys.)
macro_rules! counts_kernel {
    ($name:ident, $k:ident, $s:ident, $top:literal, $digits:literal, $blocks:literal) => {
        #[tile_kernel(threads = 512, min_blocks_per_sm = $blocks)]
        fn $name(
            keys: GlobalTensor<$k>,
            counts: GlobalTensor<i32>,
            low: i32,
            passes: i32,
            fmask: $k,
            smask: $k,
            dmask: $k,
            fill: $k,
        ) {
            let n = keys.len() as i32;
            let table = shared_tensor(i32, [$digits * 256]);
            let all = arange($digits * 256);
            store_shared_scatter(table, dim = 0, indices = all, values = 0);
            sync();
            for start in (block_idx() * 8192..n).step_by(grid_dim() * 8192) {
                let k = load_global(keys, offsets = [start], shape = [8192], other = fill);
                let u = k ^ ((((k as $s) >> $top) as $k & fmask) | smask) ^ dmask;
                // `p` below the constant `$digits`: every counter's index known in bounds.
                for p in 0..$digits {
                    if p < passes {
                        let d = ((u >> (low + p * 8)) & 255) as i32;
                        atomic::shared_scatter_add(
                            table,
                            dim = 0,
                            indices = p * 256 + d,
                            values = 1,
                        );
                    }
                }
            }
            sync();
            // The block that took the last tile counted its keys past the end as digit 255.
            let last = (n - 1) / 8192;
            let mine = (n > 0) & (block_idx() == last % grid_dim());
            let pad = select(mine, (last + 1) * 8192 - n, 0);
            let c = atomic_load(table, all, sem = relaxed, scope = cta)
                - select((all & 255) == 255, pad, 0);
            atomic::global_scatter_add(
                counts,
                dim = 0,
                indices = all,
                values = c,
                mask = (c != 0) & (all < passes * 256),
            );
        }
    };
}

/// One digit pass from `keys` (and `vals`) to `keys_out` (and `vals_out`), on tiles of `$tile`
/// keys; see the module docs. The pass places each key (and value) in shared memory at its
/// digit's start in the tile plus its rank among the tile's equal digits (`place`) before the
/// look-back, and reads them back in order after it: no second read of the keys from memory, no
/// gathers, and nothing but the look-back's own values live across it. (An H100, 2^28 keys:
/// `(u32, u32)` pairs took 12.27-12.30 ms with an argsort and two gathers after the look-back,
/// 11.47-11.51 ms this way; u32 keys 8.05-8.07 ms ordered by `(digit as u8).argsort()` and a
/// `take`, 7.93-7.95 ms this way once masks no longer took registers from the rank, and
/// 7.71-7.72 ms with `place` in one collective instead of `local.take(d) + equal_rank`, on tiles
/// of 4096; 2026-11-27.)
macro_rules! pass_kernel {
    // Keys alone: loaded warp-striped (CUB's arrangement): lane `l` of warp `w` holds key
    // `start + w * $tile / 8 + 32 j + l` in slot `j`, so that each warp's keys are its own
    // registers in order, which `place` in order `[1, 0, 2]` counts without moving them
    // through shared memory. The index is the thread's register plus the slot's constant: one
    // address a thread, an offset a key. (An H100, 2^28 u32 keys: 7.05-7.07 ms loaded in rows
    // and ranked through shared memory, 6.71-6.75 ms so; 2026-11-27.)
    ($name:ident, $tile:literal, $threads:literal, $blocks:literal, $k:ident, $s:ident, $top:literal) => {
        pass_kernel!(@pass $name, $tile, $threads, $blocks, $k, $s, $top, [ahead: i32,], {
            let f = arange($tile);
            let warps = $threads / 32;
            let from = start + ((f >> 5) % warps) * ($tile / warps) + (f / $threads) * 32 + (f & 31);
            let k = load_global(keys, offsets = [from], shape = [$tile], other = fill);
            // The tile a block takes about one tile a multiprocessor from now (`ahead` tiles
            // on), into the L2 while this one is ranked (an H100, 2^28 u32 keys: 6.69 -> 6.55
            // ms at 66, 132 or 198 tiles ahead with the distance a constant, 6.57-6.60 ms with
            // this one; 6.95 ms at 792, whose lines were evicted before they were read; the
            // pair passes slower with any).
            prefetch_global(keys, offsets = [start + ahead * $tile], shape = [$tile]);
        }, {
            let striped = (d as u8).reshape([$tile / $threads, $threads / 32, 32]);
            let slot = striped.place(local, order = [1, 0, 2]).reshape([$tile]);
        }, {}, {
            // Two tiles' words a step, in flight together, used in order up to the first
            // that is not ready or is an inclusive prefix. (An H100, 2^28 u32 keys: 5.94-5.95
            // ms so, 6.24-6.25 ms a word a step; three, four or eight words cost more
            // instructions than the steps they save; 2026-11-28.)
            let w0 = atomic_load(status, back, sem = relaxed);
            let w1 = atomic_load(status, back - 256, sem = relaxed);
            // 0: an aggregate, 1: an inclusive prefix, anything else: not ready.
            let s0 = ((w0 >> 32) as i32) - (ready + 1);
            let s1 = ((w1 >> 32) as i32) - (ready + 1);
            // `gK`: word K is used; words after an inclusive prefix are not.
            let g0 = live & ((s0 as u32) < 2);
            let g1 = g0 & (s0 == 0) & ((s1 as u32) < 2);
            before = before + select(g0, w0 as i32, 0) + select(g1, w1 as i32, 0);
            back = back - (g0 as i32 + g1 as i32) * 256;
            live = live & !((g0 & (s0 == 1)) | (g1 & (s1 == 1)));
        }, {}, {});
    };
    // Pairs: loaded in rows and ranked through shared memory (warp-striped, the (u32, u32)
    // pass took 12.34-12.46 ms a sort of 2^28 on an H100 against 10.95-11.03 ms so; with the
    // walk warp by warp, 10.67-10.73 ms against 10.40-10.43, 2026-11-28).
    ($name:ident, $tile:literal, $blocks:literal, $k:ident, $s:ident, $top:literal, $v:ident) => {
        pass_kernel!(@pass $name, $tile, 256, $blocks, $k, $s, $top,
            [vals: GlobalTensor<$v>, vals_out: GlobalTensor<$v>,], {
            let k = load_global(keys, offsets = [start], shape = [$tile], other = fill);
        }, {
            let slot = (d as u8).place(local);
        }, {
            let v = load_global(vals, offsets = [start], shape = [$tile]);
            let sv = shared_tensor::<$v>([$tile]);
            store_shared_scatter(sv, dim = 0, indices = slot, values = v);
        }, {
            // A word a step. (An H100, 2^28 (u32, u32) pairs: 10.41-10.45 ms so, 10.92-10.97
            // ms with the keys pass's two; 2026-11-28.)
            let w = atomic_load(status, back, sem = relaxed);
            let s = ((w >> 32) as i32) - (ready + 1);
            let used = live & ((s as u32) < 2);
            before = before + select(used, w as i32, 0);
            back = back - used as i32 * 256;
            live = live & !(used & (s == 1));
        }, {
            let vs = load_shared(sv);
        }, {
            store_global_scatter(vals_out, dim = 0, indices = to, values = vs);
        });
    };
    (@pass $name:ident, $tile:literal, $threads:literal, $blocks:literal, $k:ident, $s:ident, $top:literal, [$($vals:tt)*],
        {$($load:tt)*}, {$($rank:tt)*}, {$($before:tt)*}, {$($step:tt)*}, {$($after:tt)*}, {$($store:tt)*}) => {
        #[tile_kernel(threads = $threads, min_blocks_per_sm = $blocks, vector_width = 1)]
        fn $name(
            keys: GlobalTensor<$k>,
            keys_out: GlobalTensor<$k>,
            $($vals)*
            counts: GlobalTensor<i32>,
            status: GlobalTensor<u64>,
            ticket: GlobalTensor<i32>,
            epoch: i32,
            first: i32,
            pass: i32,
            shift: i32,
            fmask: $k,
            smask: $k,
            dmask: $k,
            fill: $k,
        ) {
            let n = keys.len() as i32;
            // Tickets count on across passes and runs: this pass's start at `first`.
            let tile = atomic::global_add(ticket, ones([1])).item() - first;
            let start = tile * $tile;
            // Keys past the end read as `fill`, whose ordered bits are all ones: digit 255,
            // after every real key of the tile, for any digit. They are counted for the tile's
            // own order but not published, and their places are past the end (the last tile's
            // keys of digit 255 end at `n`), where the bounded stores drop them: no mask a key
            // to load, order or store.
            $($load)*
            // Unsigned keys sorted ascending are their own ordered bits: no map, a uniform
            // branch a tile instead of three instructions a key, here and after the look-back.
            let mapped = (fmask | smask | dmask) != 0;
            let mut u = k;
            if mapped {
                u = k ^ ((((k as $s) >> $top) as $k & fmask) | smask) ^ dmask;
            }
            let d = ((u >> shift) & 255) as i32;
            let here = d.histogram(256);
            let lanes = arange(256);
            let mine = here - select(lanes == 255, max(start + $tile - n, 0), 0);
            let ready = epoch * 4;
            // Tile t's words are at `(t + LEAD) * 256`: the first LEAD tiles of words are never
            // written, and a walk's loads past tile 0 read them (see below).
            let at = (tile + 4) * 256 + lanes;
            // Tile 0's counts are already its inclusive prefix (state 2), the others' aggregates.
            let state = ready + 1 + (tile == 0) as i32;
            atomic_store(status, at, ((state as u64) << 32) | (mine as u64), sem = relaxed);
            // The tile ordered by digit, stably, before the look-back, so that its
            // predecessors have mostly published their inclusive prefixes by then (CUB's
            // Onesweep ranks before it looks back for the same reason): each key goes to its
            // digit's start (`local`) plus its rank among the tile's equal digits.
            let local = here.cumsum(0, exclusive = true);
            $($rank)*
            let sk = shared_tensor::<$k>([$tile]);
            store_shared_scatter(sk, dim = 0, indices = slot, values = k);
            $($before)*
            // Each lane walks back over the tiles before for its digit, on its own, a warp
            // a step (`vote.sync.any`, no block barrier: a done lane's words are a fixed point
            // of the step), up to the first word that is an inclusive prefix. A step is
            // `$step`: the keys pass reads two tiles' words a step, the pair passes one (see
            // the arms above). Tile 0's words are inclusive, so a walk stops there; a step's
            // loads past it read the unwritten words before it, which are never used.
            let mut before = mine * 0;
            let mut back = at - 256;
            let mut live = lanes * 0 + tile > 0;
            while live.any() {
                $($step)*
            }
            if tile > 0 {
                atomic_store(status, at, (((ready + 2) as u64) << 32) | ((before + mine) as u64), sem = relaxed);
            }
            sync();
            let ks = load_shared(sk);
            $($after)*
            let base = load_global(counts, offsets = [pass * 256], shape = [256]);
            let mut us = ks;
            if mapped {
                us = ks ^ ((((ks as $s) >> $top) as $k & fmask) | smask) ^ dmask;
            }
            let ds = ((us >> shift) & 255) as i32;
            let to = (base + before - local).take(ds) + arange($tile);
            store_global_scatter(keys_out, dim = 0, indices = to, values = ks);
            $($store)*
        }
    };
}

/// Turns each pass's digit counts into where each digit's keys start (exclusive prefixes), in
/// place, once for the whole sort: the passes read them as they are.
#[tile_kernel(threads = 256)]
fn digit_starts(counts: GlobalTensor<i32>, passes: i32) {
    for p in 0..passes {
        let c = load_global(counts, offsets = [p * 256], shape = [256]);
        store_global(counts, c.cumsum(0, exclusive = true), offsets = [p * 256]);
    }
}

/// Zeroes the digit counts before a sort.
#[tile_kernel(threads = 256)]
fn clear_counts(counts: GlobalTensor<i32>) {
    store_global(counts, zeros([2048]), offsets = [0]);
}

/// How the bits of a key type map to the sort order.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyClass {
    Unsigned,
    Signed,
    Float,
}

/// Key types of the radix sorts: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
pub trait SortKey: crate::Element + Copy + Default {
    #[doc(hidden)]
    type Bits: KeyBits;
    #[doc(hidden)]
    const CLASS: KeyClass;
}

/// Value types of [`radix_sort_pairs`]: any 16-, 32- or 64-bit element type (`i16`, `u16`,
/// `f16`, `bf16`, `i32`, `u32`, `f32`, `i64`, `u64`, `f64`), moved as bits.
pub trait SortValue: crate::Element + Copy + Default {
    #[doc(hidden)]
    type Bits: ValueBits;
}

/// The launch arguments every digit pass shares.
#[doc(hidden)]
pub struct PassArgs<'a> {
    stream: &'a Stream<'a>,
    tiles: u32,
    counts: &'a GlobalTensor<i32>,
    status: &'a GlobalTensor<u64>,
    ticket: &'a GlobalTensor<i32>,
    epoch: i32,
    first: i32,
    /// The pass's row of the digit counts, and the bit its digit starts at.
    pass: i32,
    shift: i32,
    /// How many tiles ahead the keys pass prefetches: one a multiprocessor.
    ahead: i32,
}

/// The unsigned bits keys are sorted as (`u32`, `u64`), with their kernels.
#[doc(hidden)]
pub trait KeyBits: crate::Element + Copy + Default {
    const ALL: Self;
    const SIGN: Self;
    /// Keys per tile of the keys-only pass, at least [`TILE`] (whose count of tiles sizes the
    /// look-back words).
    const KEYS_TILE: usize;
    /// Keys per tile of the pair pass with values `V`, at least [`TILE`].
    fn pair_tile<V: ValueBits>() -> usize;
    /// Digit passes: the width in bytes.
    const PASSES: i32;
    /// The key whose ordered bits under the masks `m` are all ones (the passes' fill for keys
    /// past the end: digit 255 for any digit).
    fn fill(m: [Self; 3]) -> Self;
    /// Adds the counts of `passes` digits of `keys`, from the byte at bit `low` on, to
    /// `counts[p * 256 + digit]` ([`counts_kernel`]).
    fn counts(
        stream: &Stream<'_>,
        keys: &TensorView<'_, Self>,
        counts: &GlobalTensor<i32>,
        digits: (i32, i32),
        m: [Self; 3],
    ) -> Result<(), crate::Error>;
    fn pass<V: ValueBits>(
        a: &PassArgs<'_>,
        keys: [&TensorView<'_, Self>; 2],
        vals: Option<[&TensorView<'_, V>; 2]>,
        m: [Self; 3],
    ) -> Result<(), crate::Error>;
}

/// The bits values move as (`u32`, `u64`), with the pair kernels of each key width.
#[doc(hidden)]
pub trait ValueBits: crate::Element + Copy + Default {
    /// Keys per tile of the pair passes with 32- and 64-bit keys, at least [`TILE`].
    const TILE_K32: usize;
    const TILE_K64: usize;
    fn pass_k32(
        a: &PassArgs<'_>,
        keys: [&TensorView<'_, u32>; 2],
        vals: [&TensorView<'_, Self>; 2],
        m: [u32; 3],
    ) -> Result<(), crate::Error>;
    fn pass_k64(
        a: &PassArgs<'_>,
        keys: [&TensorView<'_, u64>; 2],
        vals: [&TensorView<'_, Self>; 2],
        m: [u64; 3],
    ) -> Result<(), crate::Error>;
}

macro_rules! key_bits {
    ($b:ident, $s:ident, $top:literal, $passes:literal, $counts:ident [$count_blocks:literal],
        $keys_only:ident [$keys_tile:literal, $keys_threads:literal, $keys_blocks:literal], $pairs:ident,
        $pair_tile:ident) => {
        counts_kernel!($counts, $b, $s, $top, $passes, $count_blocks);
        pass_kernel!(
            $keys_only,
            $keys_tile,
            $keys_threads,
            $keys_blocks,
            $b,
            $s,
            $top
        );
        // The look-back words are sized for tiles of `TILE` keys: no pass may take shorter ones.
        const _: () = assert!($keys_tile >= TILE);
        impl KeyBits for $b {
            const ALL: Self = <$b>::MAX;
            const KEYS_TILE: usize = $keys_tile;
            fn pair_tile<V: ValueBits>() -> usize {
                V::$pair_tile
            }
            const SIGN: Self = 1 << ($passes * 8 - 1);
            const PASSES: i32 = $passes;
            fn fill([f, s, d]: [Self; 3]) -> Self {
                let map = |k: Self| {
                    let sign = if k >> ($passes * 8 - 1) == 1 {
                        Self::ALL
                    } else {
                        0
                    };
                    k ^ ((sign & f) | s) ^ d
                };
                // A key with the sign bit clear maps by `s` and `d` alone; else by `f` too.
                let clear = !d ^ s;
                let fill = if map(clear) == Self::ALL {
                    clear
                } else {
                    !d ^ (f | s)
                };
                debug_assert_eq!(map(fill), Self::ALL);
                fill
            }
            fn counts(
                stream: &Stream<'_>,
                keys: &TensorView<'_, Self>,
                counts: &GlobalTensor<i32>,
                (low, passes): (i32, i32),
                m: [Self; 3],
            ) -> Result<(), crate::Error> {
                let dev = stream.device();
                let blocks = if dev.is_gpu() {
                    dev.multiprocessors() * $count_blocks
                } else {
                    COUNT_BLOCKS_EMULATOR
                };
                let grid = (keys.len().div_ceil(COUNT_TILE) as u32).clamp(1, blocks);
                let fill = Self::fill(m);
                $counts::launch_on(
                    stream, grid, keys, counts, low, passes, m[0], m[1], m[2], fill,
                )
            }
            fn pass<V: ValueBits>(
                a: &PassArgs<'_>,
                keys: [&TensorView<'_, Self>; 2],
                vals: Option<[&TensorView<'_, V>; 2]>,
                m: [Self; 3],
            ) -> Result<(), crate::Error> {
                match vals {
                    None => $keys_only::launch_on(
                        a.stream,
                        a.tiles,
                        keys[0],
                        keys[1],
                        a.ahead,
                        a.counts,
                        a.status,
                        a.ticket,
                        a.epoch,
                        a.first,
                        a.pass,
                        a.shift,
                        m[0],
                        m[1],
                        m[2],
                        Self::fill(m),
                    ),
                    Some(vals) => V::$pairs(a, keys, vals, m),
                }
            }
        }
    };
}

macro_rules! value_bits {
    ($b:ident, $k32:ident [$t32:literal, $b32:literal], $k64:ident [$t64:literal, $b64:literal]) => {
        pass_kernel!($k32, $t32, $b32, u32, i32, 31, $b);
        pass_kernel!($k64, $t64, $b64, u64, i64, 63, $b);
        const _: () = assert!($t32 >= TILE && $t64 >= TILE);
        impl ValueBits for $b {
            const TILE_K32: usize = $t32;
            const TILE_K64: usize = $t64;
            value_bits!(@pass pass_k32, u32, $k32);
            value_bits!(@pass pass_k64, u64, $k64);
        }
    };
    (@pass $method:ident, $kb:ty, $kernel:ident) => {
        fn $method(
            a: &PassArgs<'_>,
            keys: [&TensorView<'_, $kb>; 2],
            vals: [&TensorView<'_, Self>; 2],
            m: [$kb; 3],
        ) -> Result<(), crate::Error> {
            $kernel::launch_on(
                a.stream, a.tiles, keys[0], keys[1], vals[0], vals[1], a.counts, a.status,
                a.ticket, a.epoch, a.first, a.pass, a.shift, m[0], m[1], m[2], KeyBits::fill(m),
            )
        }
    };
}

// Each pass kernel's tile (keys a block) and the blocks an SM its registers are bounded to.
// Longer tiles spread a block's fixed work (its histogram and scan, the rank's tables, the
// look-back) over more keys a thread, as far as registers allow without spilling at 3 blocks an
// SM (fewer blocks were slower) and the shared arrays fit (about 10.5 bytes a key for keys,
// 14.5 for (u32, u32) pairs). Measured on an H100, 2^28 random keys, 2026-11-27: u32 keys
// 7.93-7.95 ms on tiles of 4096 at 4 blocks (64 registers), 7.28-7.29 ms on 6144 at 3 (80
// registers, none spilled), 7.38-7.41 ms on 7168 at 3, 8.01-8.02 ms on 8192 at 2; (u32, u32)
// pairs 11.50-11.58 ms on 4096 at 3, 10.92-10.98 ms on 5120 at 3 (80 registers, none spilled).
// More threads with fewer keys each were slower (u32 keys 7.56-7.73 ms on 384 or 320 threads);
// warp-striped too (2026-11-28, against 6.51-6.56 ms): 6144 keys on 384 threads at 3 blocks
// (56 registers, CUB's arrangement but 16 keys a thread) 7.13-7.14 ms, 5376 on 384 at 3
// 7.37-7.38, 6912 on 384 at 3 (60 bytes spilled) 7.20-7.22, 6144 on 512 at 2 7.76, 7680 on 512
// at 2 7.20-7.23.
// The rank's step 3 knows an element's warp where a segment is whole chunks of 256 keys: u32
// keys 7.06-7.07 ms on 6144 (5120's segments of 640 divide instead). Loaded warp-striped and
// ranked in registers (`pass_kernel!`), u32 keys took 6.71-6.75 ms on 6144 (20 bytes spilled)
// and 6.88-6.89 ms on 5632 (none spilled), 2026-11-27.
// The other kinds keep the bounds of earlier measurements (BENCHMARKS.md) on tiles of 4096.
key_bits!(u32, i32, 31, 4, counts_k32 [4], pass_k32 [6144, 256, 3], pass_k32, TILE_K32);
key_bits!(u64, i64, 63, 8, counts_k64 [3], pass_k64 [4096, 256, 3], pass_k64, TILE_K64);
value_bits!(u32, pass_k32_v32 [5120, 3], pass_k64_v32 [4096, 2]);
value_bits!(u64, pass_k32_v64 [4096, 2], pass_k64_v64 [4096, 2]);
value_bits!(u16, pass_k32_v16 [4096, 3], pass_k64_v16 [4096, 2]);

macro_rules! sort_types {
    (keys { $($k:ty => $b:ty, $class:ident;)* } values { $($v:ty => $vb:ty;)* }) => {
        $(impl SortKey for $k {
            type Bits = $b;
            const CLASS: KeyClass = KeyClass::$class;
        })*
        $(impl SortValue for $v {
            type Bits = $vb;
        })*
    };
}

sort_types! {
    keys {
        u32 => u32, Unsigned;
        i32 => u32, Signed;
        f32 => u32, Float;
        u64 => u64, Unsigned;
        i64 => u64, Signed;
        f64 => u64, Float;
    }
    values {
        u16 => u16;
        i16 => u16;
        crate::f16 => u16;
        crate::bf16 => u16;
        u32 => u32;
        i32 => u32;
        f32 => u32;
        u64 => u64;
        i64 => u64;
        f64 => u64;
    }
}

/// The masks of the map from keys of class `class` to ordered bits: `k ^ ((sra(k) & f) | s) ^ d`.
fn order_masks<B: KeyBits>(class: KeyClass, descending: bool) -> [B; 3] {
    let pick = |on: bool, m: B| if on { m } else { B::default() };
    [
        pick(class == KeyClass::Float, B::ALL),
        pick(class != KeyClass::Unsigned, B::SIGN),
        pick(descending, B::ALL),
    ]
}

/// The direction of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortOrder {
    /// Smallest first.
    #[default]
    Ascending,
    /// Largest first (equal keys still in their input order).
    Descending,
}

/// The temporary storage of radix sorts of up to `capacity` keys `K` (with values `V` for
/// [`SortStorage::sort_pairs`]): a second buffer of keys (and values, allocated by the first
/// sort of pairs), the digit counts, the look-back's words and its ticket. Reusable without
/// clearing: keep one and sort run after run.
pub struct SortStorage<K: SortKey, V: SortValue = u32> {
    keys: GlobalTensor<K>,
    vals: Option<GlobalTensor<V>>,
    counts: GlobalTensor<i32>,
    look: LookbackWords,
}

/// The passes' look-back words (256 a tile), their ticket counter and the epochs.
struct LookbackWords {
    status: GlobalTensor<u64>,
    ticket: GlobalTensor<i32>,
    tiles: usize,
    /// The current pass's epoch (0 before the first).
    epoch: i32,
    /// Tickets drawn since the counter was last zeroed.
    drawn: i64,
}

impl LookbackWords {
    /// Starts a pass of `tiles` tiles: the next epoch, and the first of its tickets. When the
    /// ticket counter would pass `i32::MAX` (or the flags' `epoch * 4 + state`), the words and
    /// the counter are zeroed first.
    fn next_pass(&mut self, stream: &Stream<'_>, tiles: u32) -> Result<i32, crate::Error> {
        if self.drawn + tiles as i64 > i32::MAX as i64 || self.epoch >= i32::MAX / 4 - 1 {
            let dev = stream.device();
            self.status = dev.zeros((self.tiles + LEAD) * 256)?;
            self.ticket = dev.zeros(1)?;
            (self.drawn, self.epoch) = (0, 0);
        }
        self.epoch += 1;
        let first = self.drawn as i32;
        self.drawn += tiles as i64;
        Ok(first)
    }

    /// [`LookbackWords::next_pass`], and the arguments every pass kernel shares: the pass's row
    /// of `counts` and the bit its digit starts at.
    fn start_pass<'a>(
        &'a mut self,
        stream: &'a Stream<'a>,
        tiles: u32,
        counts: &'a GlobalTensor<i32>,
        (pass, shift): (i32, i32),
    ) -> Result<PassArgs<'a>, crate::Error> {
        let first = self.next_pass(stream, tiles)?;
        Ok(PassArgs {
            stream,
            tiles,
            counts,
            status: &self.status,
            ticket: &self.ticket,
            epoch: self.epoch,
            first,
            pass,
            shift,
            ahead: stream.device().multiprocessors() as i32,
        })
    }
}

impl<K: SortKey, V: SortValue> SortStorage<K, V> {
    /// Storage for sorts of up to `capacity` keys on `dev`.
    pub fn new(dev: &Device, capacity: usize) -> Result<Self, crate::Error> {
        let tiles = capacity.div_ceil(TILE).max(1);
        Ok(SortStorage {
            keys: dev.zeros(capacity.max(1))?,
            vals: None,
            counts: dev.zeros(2048)?,
            look: LookbackWords {
                status: dev.zeros((tiles + LEAD) * 256)?,
                ticket: dev.zeros(1)?,
                tiles,
                epoch: 0,
                drawn: 0,
            },
        })
    }

    /// Sorts `keys` into `out` (the same length, at most the capacity; they may be the same
    /// tensor) on `stream`, stably.
    pub fn sort_keys(
        &mut self,
        stream: &Stream<'_>,
        keys: &impl AsTensor<K>,
        out: &impl AsTensor<K>,
        order: SortOrder,
    ) -> Result<(), crate::Error> {
        self.run::<V::Bits>(
            stream,
            [&keys.bitcast()?, &out.bitcast()?],
            None,
            order,
            K::Bits::PASSES,
        )
    }

    /// Sorts `keys` into `keys_out` and moves `vals` along into `vals_out`, stably, on
    /// `stream`: `vals_out[i]` is the value that came with `keys_out[i]`. All four have one
    /// length, at most the capacity; inputs and outputs may be the same tensors.
    pub fn sort_pairs(
        &mut self,
        stream: &Stream<'_>,
        keys: &impl AsTensor<K>,
        vals: &impl AsTensor<V>,
        keys_out: &impl AsTensor<K>,
        vals_out: &impl AsTensor<V>,
        order: SortOrder,
    ) -> Result<(), crate::Error> {
        self.sort_pairs_by_low_bytes(
            stream,
            (keys, keys_out),
            (vals, vals_out),
            order,
            K::Bits::PASSES,
        )
    }

    /// [`SortStorage::sort_pairs`] by the low `bytes` bytes of the keys' ordered bits only (all
    /// keys must agree on the others): `bytes` digit passes instead of the key's width.
    pub(crate) fn sort_pairs_by_low_bytes(
        &mut self,
        stream: &Stream<'_>,
        (keys, keys_out): (&impl AsTensor<K>, &impl AsTensor<K>),
        (vals, vals_out): (&impl AsTensor<V>, &impl AsTensor<V>),
        order: SortOrder,
        bytes: i32,
    ) -> Result<(), crate::Error> {
        let n = keys.tensor_len();
        super::scan::same_length("radix_sort_pairs (values)", n, vals.tensor_len())?;
        super::scan::same_length("radix_sort_pairs (values out)", n, vals_out.tensor_len())?;
        let tmp_vals = match self.vals.take() {
            Some(t) => t,
            None => stream.device().zeros(self.keys.len())?,
        };
        let mut sort = || {
            // As long as the keys: the passes' bounded stores drop what lies past the end.
            let tmp = tmp_vals.bitcast::<V::Bits>()?;
            let tmp = tmp.view(0..n)?;
            let vals = [&vals.bitcast()?, &tmp, &vals_out.bitcast()?];
            self.run(
                stream,
                [&keys.bitcast()?, &keys_out.bitcast()?],
                Some(vals),
                order,
                bytes,
            )
        };
        let done = sort();
        self.vals = Some(tmp_vals);
        done
    }

    /// One stable pass over (key, value) pairs by the byte of the keys' ordered bits that starts
    /// at bit `low`: `keys_out` receives the keys whose byte is 0, in input order, then those
    /// whose byte is 1, and so on, and `vals_out` their values. Returns where each byte's keys
    /// start in the output (256 words on the device, overwritten by the storage's next use).
    pub(crate) fn partition_pairs_by_byte(
        &mut self,
        stream: &Stream<'_>,
        (keys, keys_out): (&impl AsTensor<K>, &impl AsTensor<K>),
        (vals, vals_out): (&impl AsTensor<V>, &impl AsTensor<V>),
        low: i32,
    ) -> Result<TensorView<'_, i32>, crate::Error> {
        let n = keys.tensor_len();
        super::scan::same_length("partition (keys out)", n, keys_out.tensor_len())?;
        super::scan::same_length("partition (values)", n, vals.tensor_len())?;
        super::scan::same_length("partition (values out)", n, vals_out.tensor_len())?;
        super::scan::within_capacity(n, self.keys.len())?;
        let m = order_masks::<K::Bits>(K::CLASS, false);
        clear_counts::launch_on(stream, 1, &self.counts)?;
        if n > 0 {
            let pass_tiles = n.div_ceil(K::Bits::pair_tile::<V::Bits>()) as u32;
            let (keys, keys_out) = (keys.bitcast()?, keys_out.bitcast()?);
            let (vals, vals_out) = (vals.bitcast::<V::Bits>()?, vals_out.bitcast()?);
            K::Bits::counts(stream, &keys, &self.counts, (low, 1), m)?;
            digit_starts::launch_on(stream, 1, &self.counts, 1)?;
            let args = self
                .look
                .start_pass(stream, pass_tiles, &self.counts, (0, low))?;
            K::Bits::pass(&args, [&keys, &keys_out], Some([&vals, &vals_out]), m)?;
        }
        self.counts.view(0..256)
    }

    fn run<VB: ValueBits>(
        &mut self,
        stream: &Stream<'_>,
        keys: [&TensorView<'_, K::Bits>; 2],
        vals: Option<[&TensorView<'_, VB>; 3]>,
        order: SortOrder,
        passes: i32,
    ) -> Result<(), crate::Error> {
        let n = keys[0].len();
        // The capacity is the second key buffer's length (the tiles cover it).
        super::scan::same_length("radix_sort", n, keys[1].len())?;
        super::scan::within_capacity(n, self.keys.len())?;
        if n == 0 {
            return Ok(());
        }
        let tmp = self.keys.bitcast::<K::Bits>()?;
        let m = order_masks::<K::Bits>(K::CLASS, order == SortOrder::Descending);
        let pass_tile = match vals {
            Some(_) => K::Bits::pair_tile::<VB>(),
            None => K::Bits::KEYS_TILE,
        };
        let pass_tiles = n.div_ceil(pass_tile) as u32;
        clear_counts::launch_on(stream, 1, &self.counts)?;
        K::Bits::counts(stream, keys[0], &self.counts, (0, passes), m)?;
        digit_starts::launch_on(stream, 1, &self.counts, passes)?;
        // An even number of passes ends in `out`, an odd one in `tmp`, copied to `out` after
        // ([`route`]).
        let tmp = tmp.view(0..n)?;
        for pass in 0..passes {
            let args = self
                .look
                .start_pass(stream, pass_tiles, &self.counts, (pass, pass * 8))?;
            let v = vals.map(|v| route(pass, v));
            K::Bits::pass::<VB>(&args, route(pass, [keys[0], &tmp, keys[1]]), v, m)?;
        }
        if passes % 2 == 1 {
            stream.copy(&tmp, keys[1])?;
            if let Some(v) = vals {
                stream.copy(&v[1].view(0..n)?, v[2])?;
            }
        }
        Ok(())
    }
}

/// The source and destination of digit pass `pass` among the input, the temporary buffer and
/// the output: in -> tmp -> out -> tmp -> .. (the input may be the output, so the first pass
/// cannot write there).
fn route<T: Copy>(pass: i32, [input, tmp, out]: [T; 3]) -> [T; 2] {
    match pass {
        0 => [input, tmp],
        p if p % 2 == 1 => [tmp, out],
        _ => [out, tmp],
    }
}

/// Sorts `keys` into `out` (ascending, stable) on `dev`'s default stream, with temporary
/// storage. See [`SortStorage`] to reuse the storage, sort on a stream or descending.
pub fn radix_sort_keys<K: SortKey>(
    dev: &Device,
    keys: &impl AsTensor<K>,
    out: &impl AsTensor<K>,
) -> Result<(), crate::Error> {
    let mut st = SortStorage::<K>::new(dev, keys.tensor_len())?;
    st.sort_keys(&dev.default_stream(), keys, out, SortOrder::Ascending)
}

/// Sorts `keys` into `keys_out` (ascending, stable) and moves `vals` along into `vals_out`, on
/// `dev`'s default stream, with temporary storage.
pub fn radix_sort_pairs<K: SortKey, V: SortValue>(
    dev: &Device,
    keys: &impl AsTensor<K>,
    vals: &impl AsTensor<V>,
    keys_out: &impl AsTensor<K>,
    vals_out: &impl AsTensor<V>,
) -> Result<(), crate::Error> {
    let mut st = SortStorage::<K, V>::new(dev, keys.tensor_len())?;
    st.sort_pairs(
        &dev.default_stream(),
        keys,
        vals,
        keys_out,
        vals_out,
        SortOrder::Ascending,
    )
}
