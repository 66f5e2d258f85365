//! 128-bit atomics on pairs of 64-bit elements (`atomic::{global,shared}_{cas,exch}128`, PTX
//! `atom.cas.b128` / `atom.exch.b128`, sm_90): elements `2k` and `2k + 1` along the last axis
//! are compared and swapped as one unit.
//!
//! The tests make a torn pair visible: every pair written carries the same identity in both
//! halves (`(x, -x - 1)`, `(me, me * 1000 + slot)`), so a pair assembled from two different
//! writers fails the check. Each kernel exists for a thread count at which a thread holds both
//! elements of a pair and for twice that, at which they live in neighbouring threads, which
//! exchange them with `shfl`. Checked on every backend against a CPU reference, and assembled by ptxas.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

const SLOTS: usize = 32;
const ROUNDS: usize = 16;
const BLOCKS: usize = 8;

/// Every block exchanges `ROUNDS` pairs into each of `SLOTS` pair slots and keeps what it got
/// back: per slot, the pairs given back and the final one are the initial pair and every pair
/// written, each exactly once.
macro_rules! exch_chain_kernel {
    ($name:ident, $threads:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(last: GlobalTensor<i64>, prev: GlobalTensor<i64>) {
            let slots = last.view(0, [32, 2]);
            let got = prev.view(0, [8 * 16 * 32, 2]);
            let slot = arange(32i64).reshape([32, 1]);
            let half = arange(2i64).reshape([1, 2]);
            for r in 0..16 {
                let x = ((block_idx() * 16 + r) * 100) as i64 + slot;
                let mine = x + half * (-2 * x - 1);
                let p = atomic::global_exch128(slots, values = mine);
                store_global(got, p, offsets = [(block_idx() * 16 + r) * 32, 0]);
            }
        }
    };
}

exch_chain_kernel!(exch_chain_32, 32);
exch_chain_kernel!(exch_chain_64, 64);

/// Blocks race to claim the pair slots with `cas` from `(0, 0)`: each slot is won by exactly
/// one block, whose pair `(me, me * 1000 + slot)` it then holds whole.
macro_rules! claim_kernel {
    ($name:ident, $threads:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(owner: GlobalTensor<u64>, wins: GlobalTensor<i32>) {
            let me = (block_idx() + 1) as u64;
            let slot = arange(64u64).reshape([64, 1]);
            let half = arange(2u64).reshape([1, 2]);
            let mine = me + half * (me * 999 + slot);
            let old = atomic::global_cas128(owner.view(0, [64, 2]), compare = 0, values = mine);
            // A won pair gives back (0, 0): two zero elements.
            store_global(
                wins,
                full([1], ((old == 0) as i32).sum()),
                offsets = [block_idx()],
            );
        }
    };
}

claim_kernel!(claim_64, 64);
claim_kernel!(claim_128, 128);

/// `cas` on a block's shared pairs of `f64` with a mask that leaves half a pair out (which
/// skips the whole pair): compares bit patterns, so `-0.0` does not match `0.0`.
macro_rules! shared_cas_kernel {
    ($name:ident, $threads:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(
            init: GlobalTensor<f64>,
            cmp: GlobalTensor<f64>,
            new: GlobalTensor<f64>,
            out: GlobalTensor<f64>,
            old: GlobalTensor<f64>,
        ) {
            let s = shared_tensor(f64, [32, 2]);
            store_shared(
                s,
                load_global(init.view(0, [32, 2]), offsets = [0, 0], shape = [32, 2]),
            );
            sync();
            let c = load_global(cmp.view(0, [32, 2]), offsets = [0, 0], shape = [32, 2]);
            let v = load_global(new.view(0, [32, 2]), offsets = [0, 0], shape = [32, 2]);
            let slot = arange(32).reshape([32, 1]);
            let half = arange(2).reshape([1, 2]);
            let keep = (slot % 5 != 3) | (half == 0);
            let o = atomic::shared_cas128(s, compare = c, values = v, mask = keep);
            sync();
            store_global(out.view(0, [32, 2]), load_shared(s), offsets = [0, 0]);
            store_global(old.view(0, [32, 2]), o, offsets = [0, 0]);
        }
    };
}

/// `exch` of a 1-D window starting at element `start`, result unused: pairs that start on an
/// odd element are not 16-byte aligned and are skipped.
#[tile_kernel(threads = 64)]
fn span_exch(x: GlobalTensor<u64>, out: GlobalTensor<u64>, start: i32) {
    let v = load_global(x, offsets = [0], shape = [256]);
    atomic::global_exch128(out.view(start, [256]), values = v);
}

/// The indexed form: `atomic_xchg128(table, (slot, col), values)` on a `[64, 2]` view that
/// starts at element `start`; a pair is performed only where its two indices address one
/// aligned pair of memory (`col` = (0, 1), in bounds, even `start`).
macro_rules! indexed_xchg_kernel {
    ($name:ident, $threads:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(
            table: GlobalTensor<u64>,
            slots: GlobalTensor<i32>,
            cols: GlobalTensor<i32>,
            old: GlobalTensor<u64>,
            start: i32,
        ) {
            let s = load_global(slots, offsets = [0], shape = [32]).reshape([32, 1]);
            let c = load_global(cols.view(0, [32, 2]), offsets = [0, 0], shape = [32, 2]);
            let half = arange(2u64).reshape([1, 2]);
            let values = (s as u64) * 10 + half + 1000;
            let o = atomic_xchg128(table.view(start, [64, 2]), (s, c), values);
            store_global(old.view(0, [32, 2]), o, offsets = [0, 0]);
        }
    };
}

indexed_xchg_kernel!(indexed_xchg_32, 32);
indexed_xchg_kernel!(indexed_xchg_64, 64);

#[test]
fn indexed_pairs_need_one_aligned_memory_pair() {
    let mut r = Rng::from_env_or_clock();
    for dev in backends() {
        for (kernel, start) in [(0, 0usize), (1, 0), (0, 2), (1, 2), (0, 1), (1, 1)] {
            // Distinct slots (some past the end), and per pair the columns (0, 1) or not.
            let mut pool: Vec<i32> = (0..70).collect();
            for k in (1..pool.len()).rev() {
                pool.swap(k, r.range(0, k as i32 + 1) as usize);
            }
            let slots = pool[..32].to_vec();
            let mut cols = Vec::new();
            for _ in 0..32 {
                cols.extend(match r.range(0, 6) {
                    0 => [1, 0],
                    1 => [0, 0],
                    _ => [0, 1],
                });
            }
            let init: Vec<u64> = (0..140).map(|x| x + 1).collect();
            let table = dev.upload(&init).unwrap();
            let (s, c) = (dev.upload(&slots).unwrap(), dev.upload(&cols).unwrap());
            let old = dev.full(64, u64::MAX).unwrap();
            match kernel {
                0 => indexed_xchg_32::launch(&dev, 1, &table, &s, &c, &old, start as i32),
                _ => indexed_xchg_64::launch(&dev, 1, &table, &s, &c, &old, start as i32),
            }
            .unwrap();
            let mut want = init.clone();
            let mut want_old = vec![0u64; 64];
            for j in 0..32 {
                let slot = slots[j] as usize;
                let ok = slot < 64 && cols[2 * j..2 * j + 2] == [0, 1] && start % 2 == 0;
                if ok {
                    let at = start + 2 * slot;
                    want_old[2 * j..2 * j + 2].copy_from_slice(&init[at..at + 2]);
                    want[at] = slot as u64 * 10 + 1000;
                    want[at + 1] = slot as u64 * 10 + 1001;
                }
            }
            let what = format!("{dev:?} kernel {kernel} start {start}");
            assert_eq!(table.download().unwrap(), want, "{what}");
            assert_eq!(old.download().unwrap(), want_old, "{what}");
        }
    }
}

#[test]
fn exch_under_contention_never_tears_a_pair() {
    for dev in backends() {
        for kernel in [0, 1] {
            let last = dev.full::<i64>(SLOTS * 2, -1).unwrap();
            let prev = dev.full::<i64>(BLOCKS * ROUNDS * SLOTS * 2, 7).unwrap();
            match kernel {
                0 => exch_chain_32::launch(&dev, BLOCKS as u32, &last, &prev).unwrap(),
                _ => exch_chain_64::launch(&dev, BLOCKS as u32, &last, &prev).unwrap(),
            }
            let (last, prev) = (last.download().unwrap(), prev.download().unwrap());
            for j in 0..SLOTS {
                let mut seen: Vec<(i64, i64)> = (0..BLOCKS * ROUNDS)
                    .map(|k| (prev[(k * SLOTS + j) * 2], prev[(k * SLOTS + j) * 2 + 1]))
                    .collect();
                seen.push((last[2 * j], last[2 * j + 1]));
                seen.sort();
                let mut want: Vec<(i64, i64)> = (0..BLOCKS * ROUNDS)
                    .map(|k| {
                        let x = (k * 100 + j) as i64;
                        (x, -x - 1)
                    })
                    .collect();
                want.push((-1, -1));
                want.sort();
                assert_eq!(seen, want, "{dev:?} kernel {kernel} slot {j}");
            }
        }
    }
}

#[test]
fn cas_claims_each_pair_once() {
    for dev in backends() {
        for kernel in [0, 1] {
            let owner = dev.zeros::<u64>(128).unwrap();
            let wins = dev.full::<i32>(BLOCKS, -1).unwrap();
            match kernel {
                0 => claim_64::launch(&dev, BLOCKS as u32, &owner, &wins).unwrap(),
                _ => claim_128::launch(&dev, BLOCKS as u32, &owner, &wins).unwrap(),
            }
            let (owner, wins) = (owner.download().unwrap(), wins.download().unwrap());
            let mut won = vec![0; BLOCKS];
            for slot in 0..64 {
                let (me, tag) = (owner[2 * slot], owner[2 * slot + 1]);
                assert!(
                    (1..=BLOCKS as u64).contains(&me),
                    "{dev:?} slot {slot}: {me}"
                );
                assert_eq!(tag, me * 1000 + slot as u64, "{dev:?} slot {slot} torn");
                won[me as usize - 1] += 2;
            }
            assert_eq!(wins, won, "{dev:?} kernel {kernel}");
        }
    }
}

shared_cas_kernel!(shared_cas_32, 32);
shared_cas_kernel!(shared_cas_64, 64);

#[test]
fn shared_cas_compares_both_halves_by_bits() {
    let mut r = Rng::from_env_or_clock();
    let init: Vec<f64> = (0..64).map(|_| r.range(-9, 10) as f64 * 0.5).collect();
    let new: Vec<f64> = (0..64).map(|_| r.range(100, 200) as f64).collect();
    // Per pair: equal, one half different, or a zero against a negative zero.
    let mut init = init;
    let mut cmp = init.clone();
    for j in 0..32 {
        match r.range(0, 4) {
            0 => cmp[2 * j + (j % 2)] += 1.0,
            1 => {
                init[2 * j + 1] = 0.0;
                cmp[2 * j + 1] = -0.0;
            }
            _ => {}
        }
    }
    let mut want_out = init.clone();
    let mut want_old = vec![0.0; 64];
    for j in 0..32 {
        if j % 5 == 3 {
            continue; // half the pair masked out: skipped
        }
        want_old[2 * j..2 * j + 2].copy_from_slice(&init[2 * j..2 * j + 2]);
        let same = (0..2).all(|k| init[2 * j + k].to_bits() == cmp[2 * j + k].to_bits());
        if same {
            want_out[2 * j..2 * j + 2].copy_from_slice(&new[2 * j..2 * j + 2]);
        }
    }
    let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
    for dev in backends() {
        for kernel in [0, 1] {
            let (i, c, n) = (
                dev.upload(&init).unwrap(),
                dev.upload(&cmp).unwrap(),
                dev.upload(&new).unwrap(),
            );
            let (out, old) = (
                dev.full(64, f64::NAN).unwrap(),
                dev.full(64, f64::NAN).unwrap(),
            );
            match kernel {
                0 => shared_cas_32::launch(&dev, 1, &i, &c, &n, &out, &old).unwrap(),
                _ => shared_cas_64::launch(&dev, 1, &i, &c, &n, &out, &old).unwrap(),
            }
            assert_eq!(
                bits(out.download().unwrap()),
                bits(want_out.clone()),
                "{dev:?} {kernel} out"
            );
            assert_eq!(
                bits(old.download().unwrap()),
                bits(want_old.clone()),
                "{dev:?} {kernel} old"
            );
        }
    }
}

#[test]
fn misaligned_pairs_are_skipped() {
    let x: Vec<u64> = (0..256).map(|k| 1000 + k).collect();
    for dev in backends() {
        for start in [0usize, 2, 1, 3] {
            let init: Vec<u64> = (0..260).collect();
            let (xs, out) = (dev.upload(&x).unwrap(), dev.upload(&init).unwrap());
            span_exch::launch(&dev, 1, &xs, &out, start as i32).unwrap();
            let mut want = init.clone();
            if start % 2 == 0 {
                want[start..start + 256].copy_from_slice(&x);
            }
            assert_eq!(out.download().unwrap(), want, "{dev:?} start {start}");
        }
    }
}

/// 128-bit `cas` next to 64-bit atomics on the same elements: even blocks add 1 to both halves
/// of every pair (two 64-bit `red.add`s), odd blocks read a pair and `cas` it to itself plus
/// one, keeping what they read and got back. A 128-bit operation is atomic towards 64-bit ones
/// on the GPU, so each half ends at (even blocks x rounds) + (successful `cas`es): an add that
/// slipped in between the `cas`'s read and write would be lost.
macro_rules! mixed_width_kernel {
    ($name:ident, $threads:literal) => {
        #[tile_kernel(threads = $threads, target = 90)]
        fn $name(cells: GlobalTensor<u64>, seen: GlobalTensor<u64>, got: GlobalTensor<u64>) {
            let pairs = cells.view(0, [16, 2]);
            let me = block_idx() / 2;
            for r in 0..64 {
                if block_idx() % 2 == 0 {
                    atomic::global_add(pairs, values = ones([16, 2]));
                } else {
                    let now = atomic_load(cells, arange(32), sem = relaxed).reshape([16, 2]);
                    let old = atomic::global_cas128(pairs, compare = now, values = now + 1);
                    store_global(
                        seen.view(0, [8 * 64 * 16, 2]),
                        now,
                        offsets = [(me * 64 + r) * 16, 0],
                    );
                    store_global(
                        got.view(0, [8 * 64 * 16, 2]),
                        old,
                        offsets = [(me * 64 + r) * 16, 0],
                    );
                }
            }
        }
    };
}

mixed_width_kernel!(mixed_width_32, 32);
mixed_width_kernel!(mixed_width_64, 64);

#[test]
fn pair_cas_is_atomic_towards_64_bit_atomics() {
    const ROUNDS: usize = 64;
    for dev in backends() {
        for kernel in [0, 1] {
            for _attempt in 0..4 {
                let cells = dev.zeros::<u64>(32).unwrap();
                let seen = dev.full(8 * ROUNDS * 32, u64::MAX).unwrap();
                let got = dev.full(8 * ROUNDS * 32, u64::MAX).unwrap();
                match kernel {
                    0 => mixed_width_32::launch(&dev, 16, &cells, &seen, &got).unwrap(),
                    _ => mixed_width_64::launch(&dev, 16, &cells, &seen, &got).unwrap(),
                }
                let (seen, got) = (seen.download().unwrap(), got.download().unwrap());
                let mut wins = [0u64; 16];
                for (k, (s, g)) in seen.chunks(2).zip(got.chunks(2)).enumerate() {
                    // Both halves read and got back as one: the cas wrote `seen + 1`.
                    assert_ne!(s[0], u64::MAX, "{dev:?} record {k} not written");
                    if s == g {
                        wins[k % 16] += 1;
                    }
                }
                let cells = cells.download().unwrap();
                for (slot, pair) in cells.chunks(2).enumerate() {
                    let want = (8 * ROUNDS) as u64 + wins[slot];
                    assert_eq!(pair, [want, want], "{dev:?} kernel {kernel} slot {slot}");
                }
            }
        }
    }
}

#[test]
fn ptx_has_the_128_bit_forms_and_assembles() {
    let cases: [(&str, &str, &str); 11] = [
        (
            "mixed_width_32",
            mixed_width_32::PTX,
            "atom.relaxed.gpu.global.cas.b128",
        ),
        (
            "mixed_width_64",
            mixed_width_64::PTX,
            "atom.relaxed.gpu.global.cas.b128",
        ),
        (
            "exch_chain_32",
            exch_chain_32::PTX,
            "atom.relaxed.gpu.global.exch.b128",
        ),
        (
            "exch_chain_64",
            exch_chain_64::PTX,
            "atom.relaxed.gpu.global.exch.b128",
        ),
        (
            "claim_64",
            claim_64::PTX,
            "atom.relaxed.gpu.global.cas.b128",
        ),
        (
            "claim_128",
            claim_128::PTX,
            "atom.relaxed.gpu.global.cas.b128",
        ),
        (
            "shared_cas_32",
            shared_cas_32::PTX,
            "atom.relaxed.cta.shared.cas.b128",
        ),
        (
            "shared_cas_64",
            shared_cas_64::PTX,
            "atom.relaxed.cta.shared.cas.b128",
        ),
        (
            "span_exch",
            span_exch::PTX,
            "atom.relaxed.gpu.global.exch.b128",
        ),
        (
            "indexed_xchg_32",
            indexed_xchg_32::PTX,
            "atom.acq_rel.gpu.global.exch.b128",
        ),
        (
            "indexed_xchg_64",
            indexed_xchg_64::PTX,
            "atom.acq_rel.gpu.global.exch.b128",
        ),
    ];
    for (name, ptx, form) in cases {
        assert!(ptx.contains(form), "{name}: no `{form}` in\n{ptx}");
        assert!(
            ptx.contains(".target sm_90") && ptx.contains(".version 8.3"),
            "{name}"
        );
        assemble_all(name, ptx, 90);
    }
    // With one element per thread run, neighbouring threads hold the two halves and trade them
    // by `shfl`; with runs of two a thread holds both (kernels without reductions, which
    // shuffle too).
    for (name, ptx, shuffled) in [
        ("exch_chain_32", exch_chain_32::PTX, false),
        ("exch_chain_64", exch_chain_64::PTX, true),
        ("shared_cas_32", shared_cas_32::PTX, false),
        ("shared_cas_64", shared_cas_64::PTX, true),
        ("indexed_xchg_32", indexed_xchg_32::PTX, false),
        ("indexed_xchg_64", indexed_xchg_64::PTX, true),
    ] {
        assert_eq!(ptx.contains("shfl.sync.bfly"), shuffled, "{name}");
    }
}
