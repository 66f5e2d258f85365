//! Deterministic `index_add`: `for i in 0..n { out[idx[i]] += vals[i] }`, **bit for bit** the
//! sequential loop, whatever the GPU, the grid or the backend (indices outside `0..out.len()`
//! are skipped). Float atomics add in the order blocks happen to run, so their sums change from
//! run to run; this gives the loop's bits instead.
//!
//! **Method.** Float addition is not associative, so the loop's result for an output element
//! is the fold of its values *in input order*, from the element's old value: nothing but that
//! exact sequence of roundings gives the same bits (an exact or a tree sum is closer to the
//! real sum, but not equal to the loop). So the values are grouped by index, keeping their
//! order, and each group is folded in order, all groups at once:
//! 1. each index becomes a sort key (`out.len()` for one outside the range, so that it sorts
//!    after every group and is dropped);
//! 2. a stable radix sort of (key, value) pairs ([`super::sort`]) over just the bytes the
//!    keys need (2 passes for 1024 outputs, 3 for 2^17 to 2^24);
//! 3. each group's start and end are found where the sorted key changes;
//! 4. one lane per output element folds its group, in order, from the old value: the loads of
//!    16 values are issued before their 16 additions, so a long group waits for memory once
//!    every 16 values, and its additions chain at the adder's latency.
//!
//! The cost is a sort, whatever the indices; a group of `g` values takes `g` dependent
//! additions, so many outputs fold in parallel and a single hot output folds at one lane's
//! pace (the price of the promise). Rows ([`index_add_rows`]) sort the rows' positions instead
//! of values (a row whose index is outside keeps position -1 and a key spread over the groups,
//! so every key is below `m` and `m = 2^16` outputs need two passes, not three), and fold each
//! output row on one warp, 128 columns a step, reading its group's rows in order.
//!
//! **Two levels, from 2^18 outputs.** A sort of 2^17 to 2^24 outputs takes three passes, and
//! the grouping needs no more than this: the values of each output together and in order. So
//! from `m = 2^18` up to 256 buckets of [`IndexAddElement::BUCKET_OUTPUTS`] (2^22 outputs of
//! `f32`, `f16` and `bf16`, 2^21 of `f64`):
//! 1. one stable radix pass on the top 8 bits of the index (the index itself is the key; one
//!    outside `0..m` lands in some bucket and is dropped there) puts each bucket's values
//!    together, in input order;
//! 2. a block per bucket holds the bucket's outputs in shared memory and folds its values
//!    in order, chunk after chunk; within a chunk, an output met more than once is folded in
//!    rounds, earliest value first (`fold_buckets_f32` in this file);
//! 3. a hub (an output met more than 12 times in one chunk) would make the rounds long, so
//!    the rest of its values are set aside in order, and one lane per hub folds them after.
//!
//! One pass over the pairs instead of three: 2^28 random `f32` into 2^22 outputs in 7.6 ms
//! instead of 16.6 when the two levels came (H100, 2026-11-27: the digit count 0.3-0.4 ms, the
//! pass 4.0 ms, the fold 3.2 ms), 5.5 ms since (a round a barrier, and loads that no longer
//! wait where they are issued), into 2^20 in 5.9 ms, 2^18 in 8.0 ms (buckets of 1024: a chunk
//! meets an output twice on average, so more rounds); into 2^17 the two levels took 23.9 ms
//! against 16.8 for the sort's three passes, so the sort keeps shapes below 2^18 (not measured
//! again since both got faster). A hub taking an eighth of the values costs what it did with
//! the sort (1390 against 1379 ms into 2^22, before the load change): its one lane's chain of
//! additions is the bound either way.
//!
//! **NaN.** A NaN result is the canonical NaN the GPU's arithmetic produces (`0x7fffffff` for
//! `f32`), on the emulator too; the CPU loop keeps an operand's NaN payload instead. Every other
//! result, infinities and signed zeros included, is the loop's bits.
//!
//! **Speed** (H100, 2^28 f32 scalars, BENCHMARKS.md): 22.4 ms into 1024 outputs and 5.5 ms
//! into 2^22, against torch's deterministic `index_add_` at 92.1 and 65.5 ms, and our float
//! atomics at 22.9 and 3.3 ms; rows `[2^20, 128]` into `[2^16, 128]` in 0.34 ms (f32) and
//! 0.33 ms (bf16), against torch deterministic at 0.85 and 0.70 ms and our atomics at 0.45 and
//! 0.32 ms.

use super::sort::{SortOrder, SortStorage, SortValue};
use crate::prelude::*;
use crate::AsTensor;

/// Sort keys from indices: `idx` where `0 <= idx < m`, else `m`.
#[tile_kernel(threads = 256)]
fn index_keys(idx: GlobalTensor<i32>, keys: GlobalTensor<u32>, m: i32) {
    let n = idx.len() as i32;
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let i = load_global(idx, offsets = [start], shape = [4096]);
        let inside = (i >= 0) & (i < m);
        store_global(keys, select(inside, i, m) as u32, offsets = [start]);
    }
}

/// Sort keys and source positions for rows: `idx` and the position where `0 <= idx < m`; an
/// index outside takes position -1 (the fold skips it) and the key `position % m`, so that such
/// rows spread over every group rather than lengthening one. Every key is below `m`, so the sort
/// needs the bytes of `m - 1` only: two passes for `m = 2^16`, where the key `m` for outside
/// would have needed a third (an H100, 2^20 keys: 114 -> 82 us for the grouping).
#[tile_kernel(threads = 256)]
fn row_keys_and_positions(
    idx: GlobalTensor<i32>,
    keys: GlobalTensor<u32>,
    pos: GlobalTensor<i32>,
    m: i32,
) {
    let n = idx.len() as i32;
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let i = load_global(idx, offsets = [start], shape = [4096]);
        let at = arange(4096) + start;
        let inside = (i >= 0) & (i < m);
        store_global(keys, select(inside, i, at % m) as u32, offsets = [start]);
        store_global(pos, select(inside, at, -1), offsets = [start]);
    }
}

/// Zeroes the groups' bounds.
#[tile_kernel(threads = 256)]
fn clear_bounds(starts: GlobalTensor<i32>, ends: GlobalTensor<i32>) {
    let m = starts.len() as i32;
    for first in (block_idx() * 4096..m).step_by(grid_dim() * 4096) {
        store_global(starts, zeros([4096]), offsets = [first]);
        store_global(ends, zeros([4096]), offsets = [first]);
    }
}

/// Each group's `[start, end)` in the sorted keys: written where the key changes.
#[tile_kernel(threads = 256)]
fn group_bounds(keys: GlobalTensor<u32>, starts: GlobalTensor<i32>, ends: GlobalTensor<i32>) {
    let n = keys.len() as i32;
    let m = starts.len() as u32;
    for first in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let p = arange(4096) + first;
        let inside = p < n;
        let k = load_global(
            keys,
            offsets = [first],
            shape = [4096],
            mask = inside,
            other = m,
        );
        // Neighbours; past either end reads `m`, which differs from every group's key.
        let before = load_global(
            keys,
            offsets = [first - 1],
            shape = [4096],
            mask = inside & (p > 0),
            other = m,
        );
        let after = load_global(
            keys,
            offsets = [first + 1],
            shape = [4096],
            mask = p + 1 < n,
            other = m,
        );
        let real = inside & (k < m);
        store_global_scatter(
            starts,
            dim = 0,
            indices = k,
            values = p,
            mask = real & (before != k),
        );
        store_global_scatter(
            ends,
            dim = 0,
            indices = k,
            values = p + 1,
            mask = real & (after != k),
        );
    }
}

/// The in-order fold of each group into its output element, 16 values a step (see the module
/// docs). `$x`: one name per unrolled value. The same fold as `segmented_reduce`'s, which
/// steps by 8: one shared kernel stepping by 8 took 45.8 ms instead of 36.9 into 1024 outputs
/// (H200), so each keeps its measured step.
macro_rules! fold_kernel {
    ($name:ident, $t:ident, [$(($u:literal, $x:ident))*]) => {
        #[tile_kernel(threads = 256)]
        fn $name(vals: GlobalTensor<$t>, starts: GlobalTensor<i32>, ends: GlobalTensor<i32>, out: GlobalTensor<$t>) {
            let m = out.len() as i32;
            for first in (block_idx() * 256..m).step_by(grid_dim() * 256) {
                let inside = arange(256) + first < m;
                let s = load_global(starts, offsets = [first], shape = [256], mask = inside);
                let len = load_global(ends, offsets = [first], shape = [256], mask = inside) - s;
                let mut acc = load_global(out, offsets = [first], shape = [256], mask = inside);
                let longest = len.max();
                for j in (0..longest).step_by(16) {
                    $(let $x = load_global(vals, offsets = [s + (j + $u)], shape = [256], mask = j + $u < len);)*
                    $(acc = select(j + $u < len, acc + $x, acc);)*
                }
                store_global(out, acc, offsets = [first]);
            }
        }
    };
}

macro_rules! fold_kernels {
    ($($name:ident: $t:ident),*) => {$(
        fold_kernel!($name, $t, [(0, x0) (1, x1) (2, x2) (3, x3) (4, x4) (5, x5) (6, x6) (7, x7)
            (8, x8) (9, x9) (10, x10) (11, x11) (12, x12) (13, x13) (14, x14) (15, x15)]);
    )*};
}

fold_kernels!(fold_f32: f32, fold_f64: f64, fold_f16: f16, fold_bf16: bf16);

/// Rounds a chunk of [`fold_buckets_f32`] and its kind may take before the outputs still
/// pending turn hot. In a random chunk of 2048 values over a bucket of 1024 outputs (the
/// narrowest), an output needs more than 12 with probability about 2 in 10^7 (Poisson, mean
/// 2), over 4096 outputs below 10^-13 (mean 0.5); an output that needs more is a hub (or,
/// that rarely, turns hot anyway: its later values are folded after the rest, to the same
/// bits).
const ROUNDS_BEFORE_HOT: i32 = 12;

/// Tags hold the round count in 21 bits: the claims start again before it passes this. A
/// chunk starting at this round claims up to `ROUNDS_BEFORE_HOT` rounds later, round
/// `2^21 - 2` at most, so no tag reaches a hot output's mark, `u32::MAX` (round `2^21 - 1`,
/// lane 0).
const ROUND_LIMIT: u32 = (1 << 21) - ROUNDS_BEFORE_HOT as u32 - 2;

/// The second level of the two-level method (see the module docs). Block `b` owns outputs
/// `[b << shift, (b + 1) << shift)` (at most `$cap`), holds them in shared memory, and folds
/// its bucket (its values, in input order after the first level) in chunks of 2048, in order,
/// each chunk's values loading while the one before is folded. An output may appear more
/// than once in a chunk, so a chunk is folded in rounds: each pending value claims its output
/// with a shared `max` of a tag (the round in the high bits, `2047 - lane` in the low ones:
/// the earliest pending value of each output wins) and each winner adds its value. Tags of a
/// later round exceed every earlier one, so the claims are never cleared between rounds. Each
/// output has two claim words, odd rounds claiming in the second, so that a round's only
/// barrier is its vote on whether anyone claimed: the next round's claims go to the other
/// words, and the round after that waits for the next vote, past every read of this one. A
/// random chunk needs a few rounds; an output still pending after `rounds_before_hot` turns
/// *hot* (both its words set to `u32::MAX`, which no tag reaches, so it is never claimed
/// again): the rest of its values, in this chunk and the later ones, are appended in order to
/// the bucket's late list (from the bucket's start in `late_keys`/`late_vals`) instead of
/// claiming, and [`late_f32`] folds them afterwards. Its values before are all added here, so
/// the late list continues each hot output's fold. `late[b]` and `late[256 + b]` receive the
/// bucket's late values and hot outputs, listed from `hot[b * $cap]`.
///
/// Measured on an H100 (2^28 random `f32` into 2^22 outputs, the whole `index_add`): 8.02-8.06
/// ms in chunks of 4096, 8.30 ms with the next chunk loading meanwhile (more registers spilled
/// at 1024 threads), 10.03 ms on 512 threads, 7.97-7.99 ms in chunks of 2048 loading ahead
/// (2026-11-27, two barriers a round). Then, on one claim word an output, a round took two
/// barriers (claims visible, then the vote); with two words it takes one, and elements one a
/// thread drop the vector attempts of random gathers: 7526 -> 7019-7076 us. A chunk's last
/// vote (no one left) ending the loop before any reads: 6729 -> 6714-6721 us on an H200 (8%
/// into 2^18 outputs, whose chunks take more rounds). Loads no longer waiting where they are
/// issued (code generation, not this kernel): 7012-7025 -> 5520-5559 us with the pass's.
macro_rules! fold_buckets_kernels {
    ($($name:ident: $t:ident, $cap:literal);*) => {$(
        #[tile_kernel(threads = 1024, vector_width = 1)]
        fn $name(
            keys: GlobalTensor<u32>,
            vals: GlobalTensor<$t>,
            starts: GlobalTensor<i32>,
            out: GlobalTensor<$t>,
            late_keys: GlobalTensor<u32>,
            late_vals: GlobalTensor<$t>,
            late: GlobalTensor<i32>,
            hot: GlobalTensor<i32>,
            shift: i32,
            rounds_before_hot: i32,
            round_limit: u32,
        ) {
            let n = keys.len() as i32;
            let m = out.len() as i32;
            let width = 1 << shift;
            let acc = shared_tensor($t, [$cap]);
            // Two claim words an output: odd rounds claim in `[width, 2 * width)`. A hot
            // output's words hold `u32::MAX`, which no tag reaches.
            let claim = shared_tensor(u32, [2 * $cap]);
            let hot_mark = 4294967295u32;
            let lanes = arange(2048);
            let lasts = (2047 - lanes) as u32;
            let buckets = (m + width - 1) >> shift;
            for b in (block_idx()..buckets).step_by(grid_dim()) {
                let lo = b * width;
                for j in (0..width).step_by(2048) {
                    let o = lanes + j;
                    let here = (o < width) & (o + lo < m);
                    let old = load_global(out, offsets = [lo + j], shape = [2048], mask = here);
                    store_shared_scatter(acc, dim = 0, indices = o, values = old, mask = here);
                }
                for j in (0..2 * width).step_by(2048) {
                    store_shared_scatter(claim, dim = 0, indices = lanes + j, values = zeros([2048], dtype = u32), mask = lanes + j < 2 * width);
                }
                sync();
                let s = load_global(starts, offsets = [b], shape = [1]).item();
                let e = load_global(starts, offsets = [b + 1], shape = [1], mask = arange(1) + b + 1 < 256, other = n).item();
                let mut round = 1u32;
                let mut deferred = 0;
                let mut hot_seen = false;
                // Each chunk's values load while the chunk before is folded.
                let mut next_k = load_global(keys, offsets = [s], shape = [2048], mask = lanes + s < e);
                let mut next_v = load_global(vals, offsets = [s], shape = [2048], mask = lanes + s < e);
                for c in (s..e).step_by(2048) {
                    if round > round_limit {
                        for j in (0..2 * width).step_by(2048) {
                            let o = lanes + j;
                            let words = load_shared(claim, offsets = [j], shape = [2048], mask = o < 2 * width);
                            let kept = select(words == hot_mark, words, 0u32);
                            store_shared_scatter(claim, dim = 0, indices = o, values = kept, mask = o < 2 * width);
                        }
                        sync();
                        round = 1u32;
                    }
                    let inside = lanes + c < e;
                    let k = next_k;
                    let v = next_v;
                    // Past the bucket's end these read the next bucket's values (or nothing,
                    // past the tensor's): `inside` drops them.
                    next_k = load_global(keys, offsets = [c + 2048], shape = [2048]);
                    next_v = load_global(vals, offsets = [c + 2048], shape = [2048]);
                    let valid = inside & (k < m as u32);
                    let local = select(valid, k as i32 - lo, 0);
                    // Until the bucket has a hot output, no value can be late. (A hot output's
                    // mark is read from the words this chunk's first round does not claim.)
                    let mut was_hot = lanes < 0;
                    if hot_seen {
                        let unclaimed = local + select((round & 1u32) == 1u32, 0, width);
                        was_hot = valid & (load_shared(claim, offsets = [unclaimed], shape = [2048], mask = valid) == hot_mark);
                    }
                    let mut pending = valid & !was_hot;
                    // A round: claims, one barrier (the vote on whether anyone claimed), then
                    // the claims read and the winners' additions. The next round claims in the
                    // other words, so a claim read late is not overwritten: a round that claims
                    // the same words again comes after the next vote, which every thread
                    // reaches only after its reads. A vote that finds no one ends the chunk.
                    let mut r = 0;
                    let mut word = local + select((round & 1u32) == 1u32, width, 0);
                    let mut tag = (round << 11) | lasts;
                    atomic::shared_scatter_max(claim, dim = 0, indices = word, values = tag, mask = pending);
                    let mut left = pending.any();
                    while left && (r < rounds_before_hot) {
                        let first = load_shared(claim, offsets = [word], shape = [2048], mask = pending);
                        let win = pending & (first == tag);
                        let a = load_shared(acc, offsets = [local], shape = [2048], mask = win);
                        store_shared_scatter(acc, dim = 0, indices = local, values = a + v, mask = win);
                        pending = pending & !win;
                        round = round + 1u32;
                        r = r + 1;
                        word = local + select((round & 1u32) == 1u32, width, 0);
                        tag = (round << 11) | lasts;
                        atomic::shared_scatter_max(claim, dim = 0, indices = word, values = tag, mask = pending);
                        left = pending.any();
                    }
                    // The last round's claims stay: later tags exceed them.
                    round = round + 1u32;
                    // What is left joins the late list, in input order; its outputs turn hot.
                    if left || hot_seen {
                        let later = was_hot | pending;
                        let at = s + deferred + (later as i32).cumsum(0, exclusive = true);
                        // Past the scan's barriers, every claim of the last round has been
                        // read; the sum's barrier below publishes the marks to the next chunk.
                        atomic::shared_scatter_max(claim, dim = 0, indices = local, values = hot_mark, mask = pending);
                        atomic::shared_scatter_max(claim, dim = 0, indices = local + width, values = hot_mark, mask = pending);
                        store_global_scatter(late_keys, dim = 0, indices = at, values = local as u32, mask = later);
                        store_global_scatter(late_vals, dim = 0, indices = at, values = v, mask = later);
                        deferred = deferred + (later as i32).sum();
                        hot_seen = true;
                    }
                }
                sync();
                // The hot outputs' list, and the sums so far.
                let mut hots = 0;
                for j in (0..width).step_by(2048) {
                    let o = lanes + j;
                    let here = (o < width) & (o + lo < m);
                    let h = here & (load_shared(claim, offsets = [j], shape = [2048], mask = here) == hot_mark);
                    let at = b * $cap + hots + (h as i32).cumsum(0, exclusive = true);
                    store_global_scatter(hot, dim = 0, indices = at, values = o, mask = h);
                    hots = hots + (h as i32).sum();
                    let sum = load_shared(acc, offsets = [j], shape = [2048], mask = here);
                    store_global(out, sum, offsets = [lo + j], mask = here);
                }
                store_global(late, full([1], deferred), offsets = [b]);
                store_global(late, full([1], hots), offsets = [256 + b]);
                sync();
            }
        }
    )*};
}

/// The late lists of [`fold_buckets_f32`] and its kind, folded: a warp per bucket, a lane per
/// hot output (32 at a time), each lane adding the values of its own output, in order. The
/// list goes through shared memory 128 values at a time (the next 128 loading meanwhile), and
/// every lane reads each value there (one address: a broadcast).
macro_rules! late_kernels {
    ($($name:ident: $t:ident, $cap:literal);*) => {$(
        #[tile_kernel(threads = 32)]
        fn $name(
            late_keys: GlobalTensor<u32>,
            late_vals: GlobalTensor<$t>,
            starts: GlobalTensor<i32>,
            late: GlobalTensor<i32>,
            hot: GlobalTensor<i32>,
            out: GlobalTensor<$t>,
            shift: i32,
        ) {
            let m = out.len() as i32;
            let buckets = (m + (1 << shift) - 1) >> shift;
            let staged_keys = shared_tensor(u32, [128]);
            let staged_vals = shared_tensor($t, [128]);
            let none = 4294967295u32;
            for b in (block_idx()..buckets).step_by(grid_dim()) {
                let lo = b << shift;
                let s = load_global(starts, offsets = [b], shape = [1]).item();
                let count = load_global(late, offsets = [b], shape = [1]).item();
                let hots = load_global(late, offsets = [256 + b], shape = [1]).item();
                for g in (0..hots).step_by(32) {
                    let here = arange(32) + g < hots;
                    let mine = load_global(hot, offsets = [b * $cap + g], shape = [32], mask = here, other = -1) as u32;
                    let mut acc = load_global(out, offsets = [lo + mine as i32], shape = [32], mask = here);
                    let mut ks = load_global(late_keys, offsets = [s], shape = [128], mask = arange(128) < count, other = none);
                    let mut xs = load_global(late_vals, offsets = [s], shape = [128], mask = arange(128) < count);
                    for j in (0..count).step_by(128) {
                        sync();
                        store_shared(staged_keys, ks);
                        store_shared(staged_vals, xs);
                        sync();
                        let next = arange(128) + j + 128 < count;
                        ks = load_global(late_keys, offsets = [s + j + 128], shape = [128], mask = next, other = none);
                        xs = load_global(late_vals, offsets = [s + j + 128], shape = [128], mask = next);
                        for u in 0..128 {
                            let at = arange(32) * 0 + u;
                            let k = load_shared(staged_keys, offsets = [at], shape = [32]);
                            let x = load_shared(staged_vals, offsets = [at], shape = [32]);
                            acc = select(mine == k, acc + x, acc);
                        }
                    }
                    store_global_scatter(out, dim = 0, indices = lo + mine as i32, values = acc, mask = here);
                }
            }
        }
    )*};
}

/// The in-order fold of each group of rows into its output row: one warp a row (a block of 32
/// threads), 128 columns a step of the column loop; step `j` reads the group's `j`-th position
/// (a scalar: one load, no broadcast, no barrier) and loads and adds that source row unless
/// the position is -1 (an index outside the output, see [`row_keys_and_positions`]). Each
/// block's loop runs as long as its own group, not the longest of several. On an H100
/// (`[2^20, 128]` f32 rows into `[2^16, 128]`, the fold alone, BENCHMARKS.md): 409 us with 8
/// rows a block of 256 threads (a shared broadcast of the 8 positions each step, and the loop
/// as long as the longest of the 8 groups), 383 us with its mask taken from the broadcast
/// positions, 286-289 us on a warp a row with the positions broadcast, 275 us with scalar
/// positions (the row then loaded at `max(p, 0)` before the branch; inside it, so that a row
/// outside costs no load, the whole `index_add_rows` took 364 us against 354). Tried on a
/// warp a row and slower: the next position read while the row loads (304 us), two steps at a
/// time (308 us), 32 positions staged in shared memory at a time (288 us).
macro_rules! fold_rows_kernels {
    ($($name:ident: $t:ident),*) => {$(
        #[tile_kernel(threads = 32)]
        fn $name(
            src: GlobalTensor<$t>,
            pos: GlobalTensor<i32>,
            starts: GlobalTensor<i32>,
            ends: GlobalTensor<i32>,
            out: GlobalTensor<$t>,
            d: i32,
        ) {
            let m = starts.len() as i32;
            let n = pos.len() as i32;
            let src_rows = src.view(0, [n, d]);
            let out_rows = out.view(0, [m, d]);
            for r in (block_idx()..m).step_by(grid_dim()) {
                let s = load_global(starts, offsets = [r], shape = [1]).item();
                let len = load_global(ends, offsets = [r], shape = [1]).item() - s;
                for c0 in (0..d).step_by(128) {
                    let mut acc = load_global(out_rows, offsets = [r, c0], shape = [1, 128]);
                    for j in 0..len {
                        let p = load_global(pos, offsets = [s + j], shape = [1]).item();
                        // A row whose index is outside (-1) loads nothing: the branch is the
                        // whole warp's.
                        if p >= 0 {
                            acc = acc + load_global(src_rows, offsets = [p, c0], shape = [1, 128]);
                        }
                    }
                    store_global(out_rows, acc, offsets = [r, c0]);
                }
            }
        }
    )*};
}

fold_rows_kernels!(rows_f32: f32, rows_f64: f64, rows_f16: f16, rows_bf16: bf16);

/// Element types of the deterministic [`index_add`]: `f32`, `f64`, `f16`, `bf16` (the 16-bit
/// ones add in `f32` and round, as the kernel language and the `half` crate both do).
pub trait IndexAddElement: SortValue {
    #[doc(hidden)]
    fn launch_fold(
        stream: &Stream<'_>,
        grid: u32,
        vals: &impl AsTensor<Self>,
        starts: &GlobalTensor<i32>,
        ends: &GlobalTensor<i32>,
        out: &impl AsTensor<Self>,
    ) -> Result<(), crate::Error>;
    /// Outputs a bucket of the two-level method holds in shared memory (see the module docs):
    /// 16,384, 8,192 for `f64`.
    #[doc(hidden)]
    const BUCKET_OUTPUTS: usize;
    #[doc(hidden)]
    fn launch_buckets(
        stream: &Stream<'_>,
        grid: u32,
        b: &BucketArgs<'_, Self>,
        out: &impl AsTensor<Self>,
    ) -> Result<(), crate::Error>;
    #[doc(hidden)]
    fn launch_fold_rows(
        stream: &Stream<'_>,
        grid: u32,
        src: &impl AsTensor<Self>,
        pos: &TensorView<'_, i32>,
        bounds: (&TensorView<'_, i32>, &TensorView<'_, i32>),
        out: &impl AsTensor<Self>,
        row_len: i32,
    ) -> Result<(), crate::Error>;
}

/// Each element type's kernels: the sort path's fold, the rows' fold, and the two-level
/// method's kernels with the outputs a bucket holds in shared memory (`$cap`, its
/// [`IndexAddElement::BUCKET_OUTPUTS`]).
macro_rules! index_add_element {
    ($($t:ident => $kernel:ident, $rows:ident, [$buckets:ident, $late:ident, $cap:literal]);*) => {$(
        fold_buckets_kernels!($buckets: $t, $cap);
        late_kernels!($late: $t, $cap);
        impl IndexAddElement for $t {
            fn launch_fold(
                stream: &Stream<'_>,
                grid: u32,
                vals: &impl AsTensor<Self>,
                starts: &GlobalTensor<i32>,
                ends: &GlobalTensor<i32>,
                out: &impl AsTensor<Self>,
            ) -> Result<(), crate::Error> {
                $kernel::launch_on(stream, grid, vals, starts, ends, out)
            }
            const BUCKET_OUTPUTS: usize = $cap;
            fn launch_buckets(
                stream: &Stream<'_>,
                grid: u32,
                b: &BucketArgs<'_, Self>,
                out: &impl AsTensor<Self>,
            ) -> Result<(), crate::Error> {
                $buckets::launch_on(
                    stream, grid, b.keys, b.vals, b.starts, out, b.late_keys, b.late_vals,
                    b.late, b.hot, b.shift, ROUNDS_BEFORE_HOT, b.round_limit,
                )?;
                $late::launch_on(
                    stream, grid, b.late_keys, b.late_vals, b.starts, b.late, b.hot, out, b.shift,
                )
            }
            fn launch_fold_rows(
                stream: &Stream<'_>,
                grid: u32,
                src: &impl AsTensor<Self>,
                pos: &TensorView<'_, i32>,
                (starts, ends): (&TensorView<'_, i32>, &TensorView<'_, i32>),
                out: &impl AsTensor<Self>,
                row_len: i32,
            ) -> Result<(), crate::Error> {
                $rows::launch_on(stream, grid, src, pos, starts, ends, out, row_len)
            }
        }
    )*};
}

index_add_element!(
    f32 => fold_f32, rows_f32, [fold_buckets_f32, late_f32, 16384];
    f64 => fold_f64, rows_f64, [fold_buckets_f64, late_f64, 8192];
    f16 => fold_f16, rows_f16, [fold_buckets_f16, late_f16, 16384];
    bf16 => fold_bf16, rows_bf16, [fold_buckets_bf16, late_bf16, 16384]
);

/// The two-level method's bucket width (`1 << shift` outputs) for `m` outputs of `T`, where it
/// is taken: from [`TWO_LEVELS_FROM`] outputs (a random chunk of 2048 values then meets each
/// output twice or less on average, so rounds are few) up to 256 buckets of
/// [`IndexAddElement::BUCKET_OUTPUTS`].
fn bucket_shift<T: IndexAddElement>(m: usize) -> Option<i32> {
    let bits = usize::BITS - (m.max(1) - 1).leading_zeros();
    (m >= TWO_LEVELS_FROM && m <= 256 * T::BUCKET_OUTPUTS).then(|| bits as i32 - 8)
}

/// The fewest outputs the two-level method takes: H100, 2^28 random `f32` values, 10.2 ms into
/// 2^18 outputs and 23.9 ms into 2^17 (buckets of 512, about 4 values an output a chunk),
/// against 16.8 ms for the sort's three passes (session 37; since then the two levels take
/// 8.0 ms into 2^18, and 2^17 was not measured again).
const TWO_LEVELS_FROM: usize = 1 << 18;

/// The buffers of the two-level method's second level (see [`fold_buckets_f32`]).
#[doc(hidden)]
pub struct BucketArgs<'a, T: IndexAddElement> {
    keys: &'a TensorView<'a, u32>,
    vals: &'a TensorView<'a, T>,
    starts: &'a TensorView<'a, i32>,
    late_keys: &'a TensorView<'a, u32>,
    late_vals: &'a TensorView<'a, T>,
    late: &'a GlobalTensor<i32>,
    hot: &'a GlobalTensor<i32>,
    shift: i32,
    round_limit: u32,
}

/// The two-level method's own storage: the late lists' values (their keys go to
/// [`Groups::keys`]), each bucket's late and hot counts, and the hot outputs' lists.
struct LateStorage<T: IndexAddElement> {
    vals: GlobalTensor<T>,
    counts: GlobalTensor<i32>,
    hot: GlobalTensor<i32>,
}

/// Blocks for a grid-strided pass over `n` elements in tiles of `tile`.
fn grid_for(n: usize, tile: usize) -> u32 {
    n.div_ceil(tile).clamp(1, 65_536) as u32
}

/// Steps 1-3 of the method: values `V` grouped by index, in input order, and each group's
/// bounds.
struct Groups<V: SortValue> {
    sort: SortStorage<u32, V>,
    keys: GlobalTensor<u32>,
    sorted_keys: GlobalTensor<u32>,
    sorted_vals: GlobalTensor<V>,
    starts: GlobalTensor<i32>,
    ends: GlobalTensor<i32>,
}

impl<V: SortValue> Groups<V> {
    fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        let (cap, outs) = (capacity.max(1), outputs.max(1));
        Ok(Groups {
            sort: SortStorage::new(dev, cap)?,
            keys: dev.zeros(cap)?,
            sorted_keys: dev.zeros(cap)?,
            sorted_vals: dev.zeros(cap)?,
            starts: dev.zeros(outs)?,
            ends: dev.zeros(outs)?,
        })
    }

    /// Checks `n` values into `m` outputs against the capacities.
    fn check(&self, n: usize, m: usize) -> Result<(), crate::Error> {
        super::scan::within_capacity(n, self.keys.len())?;
        if m > self.starts.len() {
            return Err(crate::Error::LengthMismatch {
                op: "tilus::algo::index_add (outputs for the storage)",
                expected: self.starts.len(),
                got: m,
            });
        }
        Ok(())
    }

    /// Groups `vals` (as many as `idx`) by index into `m` outputs, on `stream`: afterwards
    /// `sorted_vals[starts[r]..ends[r]]` are output `r`'s values in input order.
    fn group(
        &mut self,
        stream: &Stream<'_>,
        idx: &impl AsTensor<i32>,
        vals: &impl AsTensor<V>,
        m: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        index_keys::launch_on(
            stream,
            grid_for(n, 4096),
            idx,
            &self.keys.view(0..n)?,
            m as i32,
        )?;
        // Keys 0..=m, `m` for an index outside.
        self.sort_and_bound(stream, n, vals, m, m)
    }

    /// Sorts the first `n` keys with `vals` by the bytes that keys up to `largest_key` need, then
    /// finds each of the `m` groups' bounds.
    fn sort_and_bound(
        &mut self,
        stream: &Stream<'_>,
        n: usize,
        vals: &impl AsTensor<V>,
        m: usize,
        largest_key: usize,
    ) -> Result<(), crate::Error> {
        let bits = u32::BITS - (largest_key as u32).leading_zeros();
        // At least one pass: with none the sort would leave its outputs unwritten (keys all
        // 0, for a single output).
        let bytes = (bits.div_ceil(8) as i32).max(1);
        let (keys, sorted_keys) = (self.keys.view(0..n)?, self.sorted_keys.view(0..n)?);
        let sorted_vals = self.sorted_vals.view(0..n)?;
        self.sort.sort_pairs_by_low_bytes(
            stream,
            (&keys, &sorted_keys),
            (vals, &sorted_vals),
            SortOrder::Ascending,
            bytes,
        )?;
        let (starts, ends) = (self.starts.view(0..m)?, self.ends.view(0..m)?);
        clear_bounds::launch_on(stream, grid_for(m, 4096), &starts, &ends)?;
        group_bounds::launch_on(stream, grid_for(n, 4096), &sorted_keys, &starts, &ends)
    }
}

impl Groups<i32> {
    /// Groups the source positions `0..n` of `idx`'s rows by index into `m` outputs, on
    /// `stream`, through `positions` (at least `n` long, overwritten): afterwards
    /// `sorted_vals[starts[r]..ends[r]]` are the positions of output `r`'s rows in input order,
    /// and -1 for rows whose index is outside (see [`row_keys_and_positions`]).
    fn group_positions(
        &mut self,
        stream: &Stream<'_>,
        idx: &impl AsTensor<i32>,
        positions: &GlobalTensor<i32>,
        m: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        let positions = positions.view(0..n)?;
        let keys = self.keys.view(0..n)?;
        row_keys_and_positions::launch_on(
            stream,
            grid_for(n, 4096),
            idx,
            &keys,
            &positions,
            m as i32,
        )?;
        self.sort_and_bound(stream, n, &positions, m, m - 1)
    }
}

/// The temporary storage of deterministic index-adds of up to `capacity` values into up to
/// `outputs` elements: the sort's storage, the keys and values sorted, and each group's bounds;
/// from 2^18 outputs also the two-level method's late lists (another `capacity` values, and
/// 256 × [`IndexAddElement::BUCKET_OUTPUTS`] indices of hubs). Reusable run after run.
pub struct IndexAddStorage<T: IndexAddElement> {
    groups: Groups<T>,
    /// Allocated where the outputs allow the two-level method.
    late: Option<LateStorage<T>>,
    /// Rounds after which [`fold_buckets_f32`] clears its claims.
    round_limit: u32,
}

impl<T: IndexAddElement> IndexAddStorage<T> {
    /// Storage for index-adds of up to `capacity` values into up to `outputs` elements on `dev`.
    pub fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        // Storage for more outputs than the two levels take may still serve fewer (2^23 for
        // 2^22), so it holds the late lists from the smallest count they take.
        let late = if outputs >= TWO_LEVELS_FROM {
            Some(LateStorage {
                vals: dev.zeros(capacity.max(1))?,
                counts: dev.zeros(512)?,
                hot: dev.zeros(256 * T::BUCKET_OUTPUTS)?,
            })
        } else {
            None
        };
        Ok(IndexAddStorage {
            groups: Groups::new(dev, capacity, outputs)?,
            late,
            round_limit: ROUND_LIMIT,
        })
    }

    /// For tests: the two-level method clears its claims after `rounds` rounds of a bucket
    /// (at the first chunk boundary past them) rather than when its tags would overflow.
    #[doc(hidden)]
    pub fn restart_claims_after(mut self, rounds: u32) -> Self {
        self.round_limit = rounds;
        self
    }

    /// `out[idx[i]] += vals[i]` for `i` in `0..n`, in that order, bit for bit (indices outside
    /// `0..out.len()` skipped), on `stream`. `idx` and `vals` have one length `n`, at most the
    /// capacity; `out` at most the storage's outputs. `out` must not overlap `vals`.
    pub fn index_add(
        &mut self,
        stream: &Stream<'_>,
        out: &impl AsTensor<T>,
        idx: &impl AsTensor<i32>,
        vals: &impl AsTensor<T>,
    ) -> Result<(), crate::Error> {
        let (n, m) = (idx.tensor_len(), out.tensor_len());
        super::scan::same_length("index_add (values)", n, vals.tensor_len())?;
        self.groups.check(n, m)?;
        if n == 0 || m == 0 {
            return Ok(());
        }
        let g = &mut self.groups;
        if let (Some(shift), Some(late)) = (bucket_shift::<T>(m), &self.late) {
            let keys = idx.bitcast::<u32>()?;
            let (sorted_keys, sorted_vals) = (g.sorted_keys.view(0..n)?, g.sorted_vals.view(0..n)?);
            let (late_keys, late_vals) = (g.keys.view(0..n)?, late.vals.view(0..n)?);
            let starts = g.sort.partition_pairs_by_byte(
                stream,
                (&keys, &sorted_keys),
                (vals, &sorted_vals),
                shift,
            )?;
            let args = BucketArgs {
                keys: &sorted_keys,
                vals: &sorted_vals,
                starts: &starts,
                late_keys: &late_keys,
                late_vals: &late_vals,
                late: &late.counts,
                hot: &late.hot,
                shift,
                round_limit: self.round_limit,
            };
            return T::launch_buckets(stream, m.div_ceil(1 << shift) as u32, &args, out);
        }
        g.group(stream, idx, vals, m)?;
        T::launch_fold(
            stream,
            grid_for(m, 256),
            &g.sorted_vals,
            &g.starts,
            &g.ends,
            out,
        )
    }
}

/// The temporary storage of deterministic row index-adds ([`index_add_rows`]) of up to
/// `capacity` source rows into up to `outputs` rows: the rows' positions grouped by index.
/// Reusable run after run.
pub struct IndexAddRowsStorage<T: IndexAddElement> {
    groups: Groups<i32>,
    positions: GlobalTensor<i32>,
    _t: std::marker::PhantomData<T>,
}

impl<T: IndexAddElement> IndexAddRowsStorage<T> {
    /// Storage for row index-adds of up to `capacity` rows into up to `outputs` rows on `dev`.
    pub fn new(dev: &Device, capacity: usize, outputs: usize) -> Result<Self, crate::Error> {
        Ok(IndexAddRowsStorage {
            groups: Groups::new(dev, capacity, outputs)?,
            positions: dev.zeros(capacity.max(1))?,
            _t: std::marker::PhantomData,
        })
    }

    /// `out[idx[i], :] += src[i, :]` for `i` in `0..n`, in that order, bit for bit (indices
    /// outside the rows of `out` skipped), on `stream`: `src` holds `n` rows and `out` its rows,
    /// each of `row_len` elements, row after row. `out` must not overlap `src`.
    pub fn index_add_rows(
        &mut self,
        stream: &Stream<'_>,
        out: &impl AsTensor<T>,
        idx: &impl AsTensor<i32>,
        src: &impl AsTensor<T>,
        row_len: usize,
    ) -> Result<(), crate::Error> {
        let n = idx.tensor_len();
        let row_len_error = |len: usize| crate::Error::LengthMismatch {
            op: "tilus::algo::index_add_rows (elements for whole rows)",
            expected: len.div_ceil(row_len.max(1)) * row_len,
            got: len,
        };
        if row_len == 0 || out.tensor_len() % row_len != 0 {
            return Err(row_len_error(out.tensor_len()));
        }
        super::scan::same_length(
            "index_add_rows (source rows)",
            n * row_len,
            src.tensor_len(),
        )?;
        let m = out.tensor_len() / row_len;
        self.groups.check(n, m)?;
        if n == 0 || m == 0 {
            return Ok(());
        }
        let g = &mut self.groups;
        g.group_positions(stream, idx, &self.positions, m)?;
        let (starts, ends) = (g.starts.view(0..m)?, g.ends.view(0..m)?);
        let pos = g.sorted_vals.view(0..n)?;
        T::launch_fold_rows(
            stream,
            grid_for(m, 1),
            src,
            &pos,
            (&starts, &ends),
            out,
            row_len as i32,
        )
    }
}

/// `out[idx[i]] += vals[i]` for `i` in `0..n`, in that order, bit for bit, on `dev`'s default
/// stream, with temporary storage (see [`IndexAddStorage`] to reuse it). Indices outside
/// `0..out.len()` are skipped.
pub fn index_add<T: IndexAddElement>(
    dev: &Device,
    out: &impl AsTensor<T>,
    idx: &impl AsTensor<i32>,
    vals: &impl AsTensor<T>,
) -> Result<(), crate::Error> {
    let mut st = IndexAddStorage::new(dev, idx.tensor_len(), out.tensor_len())?;
    st.index_add(&dev.default_stream(), out, idx, vals)
}

/// `out[idx[i], :] += src[i, :]` for `i` in `0..n`, in that order, bit for bit, for rows of
/// `row_len` elements, on `dev`'s default stream, with temporary storage (see
/// [`IndexAddRowsStorage`] to reuse it). Indices outside the rows of `out` are skipped.
pub fn index_add_rows<T: IndexAddElement>(
    dev: &Device,
    out: &impl AsTensor<T>,
    idx: &impl AsTensor<i32>,
    src: &impl AsTensor<T>,
    row_len: usize,
) -> Result<(), crate::Error> {
    let rows = out.tensor_len() / row_len.max(1);
    let mut st = IndexAddRowsStorage::new(dev, idx.tensor_len(), rows)?;
    st.index_add_rows(&dev.default_stream(), out, idx, src, row_len)
}
