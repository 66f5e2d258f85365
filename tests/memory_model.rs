//! The patterns of the cuTile memory-model document, as runnable tile kernels, on every backend
//! of `common::backends()` (the strict emulator, and the GPU with `--features cuda`):
//!
//! * producer/consumer through a flag across blocks of ONE launch (release store / acquire
//!   spin), consumers waiting for producers of higher and of lower block index; a tile-indexed
//!   acquire load waiting on many flags at once; the same with explicit fences and relaxed
//!   accesses;
//! * an atomic counter handing out unique slots (scalar `atomic_add(counter, 0, 1)`), with the
//!   document's "read the previous slot's data" chain, and a relaxed tile counter;
//! * a spinlock (exchange or CAS to acquire, release store to free) protecting a non-atomic
//!   read-modify-write of global data;
//! * double buffering across launches (switch flag read with acquire, flipped with release);
//! * block-scope release/acquire on shared memory; a system-scope release store; the "last
//!   block" pattern of the device-scope counter.
//!
//! Spins are bounded: a consumer that gives up records it, so a broken ordering fails the test
//! instead of hanging it. Grids are small (at most 64 blocks) so every block is resident.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

fn assemble<const N: usize>(kernels: [(&str, &str, u32); N]) {
    for (name, ptx, target) in kernels {
        assemble_all(name, ptx, target);
    }
}

// ---------------------------------------------------------------------------------------------
// Producer / consumer in one launch.

/// Even blocks produce 1024 values (after 32 rounds of overwritten scratch values), then publish
/// with a release store of `flag[b]`. Odd block `b` consumes the data of producer `g - 1 - b`
/// (block 1 waits for the highest producer, block g - 1 for block 0): bounded acquire spin,
/// then a plain load that must see the complete data.
#[tile_kernel(threads = 256)]
fn pc_one_launch(
    data: GlobalTensor<i32>,
    flag: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    seen: GlobalTensor<i32>,
) {
    let b = block_idx();
    let g = grid_dim();
    if b % 2 == 0 {
        for k in 0..32 {
            store_global(data, full([1024], -k), offsets = [b * 1024]);
        }
        store_global(data, arange(1024) + b * 10000, offsets = [b * 1024]);
        atomic_store(
            flag,
            b,
            1,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
    } else {
        let p = g - 1 - b;
        let mut f = atomic_load(
            flag,
            p,
            order = MemoryOrder::Acquire,
            scope = MemoryScope::Device,
        );
        let mut spins = 0;
        while f == 0 && spins < 4000000 {
            f = atomic_load(
                flag,
                p,
                order = MemoryOrder::Acquire,
                scope = MemoryScope::Device,
            );
            spins += 1;
        }
        let d = load_global(data, offsets = [p * 1024], shape = [1024]);
        store_global(out, d, offsets = [b * 1024]);
        store_global(seen, full([1], f), offsets = [b]);
    }
}

#[test]
fn producer_consumer_one_launch_both_directions() {
    assemble([(
        pc_one_launch::NAME,
        pc_one_launch::PTX,
        pc_one_launch::TARGET,
    )]);
    for dev in backends() {
        for g in [2usize, 8, 32, 64] {
            for _rep in 0..3 {
                let data = dev.full::<i32>(g * 1024, -1).unwrap();
                let flag = dev.zeros::<i32>(g).unwrap();
                let out = dev.full::<i32>(g * 1024, -2).unwrap();
                let seen = dev.zeros::<i32>(g).unwrap();
                pc_one_launch::launch(&dev, g as u32, &data, &flag, &out, &seen).unwrap();
                let out = out.download().unwrap();
                let seen = seen.download().unwrap();
                for b in (1..g).step_by(2) {
                    let p = g - 1 - b;
                    assert_eq!(
                        seen[b],
                        1,
                        "consumer {b} never saw producer {p}'s flag ({} blocks, {})",
                        g,
                        dev.name()
                    );
                    for j in 0..1024 {
                        assert_eq!(
                            out[b * 1024 + j],
                            (p * 10000 + j) as i32,
                            "consumer {b} read stale data of producer {p} at {j} ({g} blocks, {})",
                            dev.name()
                        );
                    }
                }
            }
        }
    }
}

/// Block 0 waits for all 16 producers (blocks 1..=16) with ONE tile-indexed acquire load of their
/// flags, then sums their data. Each producer writes 256 values then release-stores `flag[b-1]`.
#[tile_kernel(threads = 128)]
fn pc_gather(data: GlobalTensor<i32>, flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let b = block_idx();
    if b == 0 {
        let mut ready = atomic_load(
            flag,
            arange(16),
            order = MemoryOrder::Acquire,
            scope = MemoryScope::Device,
        )
        .sum();
        let mut spins = 0;
        while ready < 16 && spins < 4000000 {
            ready = atomic_load(
                flag,
                arange(16),
                order = MemoryOrder::Acquire,
                scope = MemoryScope::Device,
            )
            .sum();
            spins += 1;
        }
        let mut total = zeros([256]);
        for p in 0..16 {
            total = total + load_global(data, offsets = [p * 256], shape = [256]);
        }
        store_global(out, total, offsets = [0]);
        store_global(out, full([1], ready), offsets = [256]);
    } else {
        store_global(data, arange(256) * b, offsets = [(b - 1) * 256]);
        atomic_store(
            flag,
            b - 1,
            1,
            memory_order = MemoryOrder::Release,
            memory_scope = MemoryScope::Device,
        );
    }
}

#[test]
fn consumer_waits_on_many_flags_with_a_tile_acquire_load() {
    assemble([(pc_gather::NAME, pc_gather::PTX, pc_gather::TARGET)]);
    for dev in backends() {
        for _ in 0..5 {
            let data = dev.full::<i32>(16 * 256, -1000).unwrap();
            let flag = dev.zeros::<i32>(16).unwrap();
            let out = dev.zeros::<i32>(257).unwrap();
            pc_gather::launch(&dev, 17, &data, &flag, &out).unwrap();
            let out = out.download().unwrap();
            assert_eq!(out[256], 16, "not every flag was seen on {}", dev.name());
            let want: Vec<i32> = (0..256).map(|j| j * (1..=16).sum::<i32>()).collect();
            assert_eq!(&out[..256], &want[..], "stale data on {}", dev.name());
        }
    }
}

/// The same handshake with fences: data; sync; release fence; relaxed flag store / relaxed spin;
/// acquire fence; sync; data. (A fence is per thread: the barriers make it cover the block.)
#[tile_kernel(threads = 256)]
fn pc_fences(
    data: GlobalTensor<i32>,
    flag: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    seen: GlobalTensor<i32>,
) {
    let b = block_idx();
    let g = grid_dim();
    if b % 2 == 1 {
        store_global(data, arange(1024) - b * 7, offsets = [b * 1024]);
        sync();
        fence(sem = MemoryOrder::Release, scope = MemoryScope::Device);
        atomic_store(
            flag,
            b,
            1,
            order = MemoryOrder::Relaxed,
            scope = MemoryScope::Device,
        );
    } else {
        let p = g - 1 - b;
        let mut f = 0;
        let mut spins = 0;
        while f == 0 && spins < 4000000 {
            f = atomic_load(
                flag,
                p,
                order = MemoryOrder::Relaxed,
                scope = MemoryScope::Device,
            );
            spins += 1;
        }
        fence(order = MemoryOrder::Acquire, scope = MemoryScope::Device);
        sync();
        store_global(
            out,
            load_global(data, offsets = [p * 1024], shape = [1024]),
            offsets = [b * 1024],
        );
        store_global(seen, full([1], f), offsets = [b]);
    }
}

#[test]
fn producer_consumer_with_fences() {
    assemble([(pc_fences::NAME, pc_fences::PTX, pc_fences::TARGET)]);
    assert!(
        pc_fences::PTX.contains("fence.acq_rel.gpu"),
        "{}",
        pc_fences::PTX
    );
    for dev in backends() {
        for g in [2usize, 16, 64] {
            let data = dev.full::<i32>(g * 1024, -1).unwrap();
            let flag = dev.zeros::<i32>(g).unwrap();
            let out = dev.full::<i32>(g * 1024, -2).unwrap();
            let seen = dev.zeros::<i32>(g).unwrap();
            pc_fences::launch(&dev, g as u32, &data, &flag, &out, &seen).unwrap();
            let out = out.download().unwrap();
            let seen = seen.download().unwrap();
            for b in (0..g).step_by(2) {
                let p = g - 1 - b;
                assert_eq!(
                    seen[b],
                    1,
                    "consumer {b} never saw producer {p} on {}",
                    dev.name()
                );
                let want: Vec<i32> = (0..1024).map(|j| j - p as i32 * 7).collect();
                assert_eq!(
                    &out[b * 1024..(b + 1) * 1024],
                    &want[..],
                    "consumer {b} on {}",
                    dev.name()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Atomic counters.

/// Each block takes `rounds` slots one at a time (`atomic_add(counter, 0, 1)`: a scalar), writes
/// its 8 values at the slot, publishes them with a release store of `ready[slot]`, then (the
/// document's example 2) waits for slot - 1 to be published and combines it with its own.
#[tile_kernel(threads = 128)]
fn slot_chain(
    counter: GlobalTensor<i32>,
    owner: GlobalTensor<i32>,
    data: GlobalTensor<i32>,
    ready: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    rounds: i32,
) {
    for k in 0..rounds {
        let slot = atomic_add(counter, 0, 1);
        let tag = block_idx() * 1000 + k;
        store_global(owner, full([1], tag), offsets = [slot]);
        let mine = full([8], tag * 8) + arange(8);
        store_global(data, mine, offsets = [slot * 8]);
        atomic_store(
            ready,
            slot,
            1,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
        if slot > 0 {
            let mut r = 0;
            let mut spins = 0;
            while r == 0 && spins < 4000000 {
                r = atomic_load(
                    ready,
                    slot - 1,
                    order = MemoryOrder::Acquire,
                    scope = MemoryScope::Device,
                );
                spins += 1;
            }
            let prev = load_global(data, offsets = [(slot - 1) * 8], shape = [8]);
            store_global(out, mine + prev, offsets = [slot * 8]);
        }
    }
}

#[test]
fn counter_hands_out_unique_slots() {
    assemble([(slot_chain::NAME, slot_chain::PTX, slot_chain::TARGET)]);
    for dev in backends() {
        let (g, rounds) = (48usize, 20usize);
        let n = g * rounds;
        let counter = dev.zeros::<i32>(1).unwrap();
        let owner = dev.full::<i32>(n, -1).unwrap();
        let data = dev.full::<i32>(n * 8, -1).unwrap();
        let ready = dev.zeros::<i32>(n).unwrap();
        let out = dev.full::<i32>(n * 8, -1).unwrap();
        slot_chain::launch(
            &dev,
            g as u32,
            &counter,
            &owner,
            &data,
            &ready,
            &out,
            rounds as i32,
        )
        .unwrap();
        assert_eq!(
            counter.download().unwrap(),
            vec![n as i32],
            "{}",
            dev.name()
        );
        let owner = owner.download().unwrap();
        let mut tags = owner.clone();
        tags.sort();
        let mut want: Vec<i32> = (0..g)
            .flat_map(|b| (0..rounds).map(move |k| (b * 1000 + k) as i32))
            .collect();
        want.sort();
        assert_eq!(
            tags,
            want,
            "every (block, round) got exactly one slot on {}",
            dev.name()
        );
        // A block's own slots increase with its rounds.
        for b in 0..g {
            let slots: Vec<usize> = (0..rounds)
                .map(|k| {
                    owner
                        .iter()
                        .position(|&t| t == (b * 1000 + k) as i32)
                        .unwrap()
                })
                .collect();
            assert!(
                slots.windows(2).all(|w| w[0] < w[1]),
                "block {b}'s slots {slots:?} on {}",
                dev.name()
            );
        }
        assert_eq!(ready.download().unwrap(), vec![1; n], "{}", dev.name());
        let out = out.download().unwrap();
        for s in 1..n {
            for j in 0..8 {
                let want = owner[s] * 8 + j as i32 + owner[s - 1] * 8 + j as i32;
                assert_eq!(
                    out[s * 8 + j],
                    want,
                    "slot {s} combined stale data of slot {} on {}",
                    s - 1,
                    dev.name()
                );
            }
        }
    }
}

/// A relaxed counter incremented by a whole tile at once: 256 tickets per block, all distinct.
#[tile_kernel(threads = 128)]
fn tile_tickets(counter: GlobalTensor<i32>, tickets: GlobalTensor<i32>) {
    let t = atomic_add(counter, zeros([256]), 1, order = MemoryOrder::Relaxed);
    store_global(tickets, t, offsets = [block_idx() * 256]);
}

#[test]
fn relaxed_counter_gives_distinct_tickets() {
    assemble([(tile_tickets::NAME, tile_tickets::PTX, tile_tickets::TARGET)]);
    for dev in backends() {
        let g = 40usize;
        let counter = dev.zeros::<i32>(1).unwrap();
        let tickets = dev.full::<i32>(g * 256, -1).unwrap();
        tile_tickets::launch(&dev, g as u32, &counter, &tickets).unwrap();
        assert_eq!(counter.download().unwrap(), vec![(g * 256) as i32]);
        let mut t = tickets.download().unwrap();
        t.sort();
        assert_eq!(
            t,
            (0..(g * 256) as i32).collect::<Vec<_>>(),
            "{}",
            dev.name()
        );
    }
}

/// The "last block" pattern (the document's device-scope counter, completed): every block writes
/// its partial result, then an acq_rel `atomic_add` on the counter; the block that sees
/// `grid_dim() - 1` is the last, and (acquire) sees every other block's partial result.
#[tile_kernel(threads = 128)]
fn last_block(
    partial: GlobalTensor<i32>,
    counter: GlobalTensor<i32>,
    total: GlobalTensor<i32>,
    x: GlobalTensor<i32>,
) {
    let b = block_idx();
    let v = load_global(x, offsets = [b * 512], shape = [512]);
    store_global(partial, full([1], v.sum()), offsets = [b]);
    let arrived = atomic_add(
        counter,
        0,
        1,
        order = MemoryOrder::AcqRel,
        scope = MemoryScope::Device,
    );
    if arrived == grid_dim() - 1 {
        let p = load_global(
            partial,
            offsets = [0],
            shape = [64],
            mask = arange(64) < grid_dim(),
        );
        store_global(total, full([1], p.sum()), offsets = [0]);
    }
}

#[test]
fn last_block_sees_every_partial_result() {
    assemble([(last_block::NAME, last_block::PTX, last_block::TARGET)]);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for g in [1usize, 7, 64] {
            let xs = rng.vec(g * 512, -1000, 1000);
            let x = dev.upload(&xs).unwrap();
            let partial = dev.zeros::<i32>(64).unwrap();
            let counter = dev.zeros::<i32>(1).unwrap();
            let total = dev.full::<i32>(1, -1).unwrap();
            last_block::launch(&dev, g as u32, &partial, &counter, &total, &x).unwrap();
            assert_eq!(
                total.download().unwrap(),
                vec![xs.iter().sum::<i32>()],
                "{g} blocks on {}",
                dev.name()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Spinlock.

/// `rounds` times per block: take the lock (exchange, or CAS when `use_cas`), do a plain
/// load/+1/store of 512 values, release the lock with a release store. A block that fails to get
/// the lock in 2^22 tries counts a failure instead of hanging.
#[tile_kernel(threads = 128)]
fn spinlock(
    lock: GlobalTensor<i32>,
    data: GlobalTensor<i32>,
    fails: GlobalTensor<i32>,
    rounds: i32,
    use_cas: i32,
) {
    for k in 0..rounds {
        let mut got = 0;
        let mut tries = 0;
        loop {
            let mut old = 1;
            if use_cas == 1 {
                old = atomic_cas(
                    lock,
                    0,
                    0,
                    1,
                    order = MemoryOrder::AcqRel,
                    scope = MemoryScope::Device,
                );
            } else {
                old = atomic_xchg(lock, 0, 1);
            }
            if old == 0 {
                got = 1;
                break;
            }
            tries += 1;
            if tries >= 4194304 {
                break;
            }
        }
        if got == 1 {
            let v = load_global(data, offsets = [0], shape = [512]);
            store_global(data, v + 1, offsets = [0]);
            atomic_store(
                lock,
                0,
                0,
                order = MemoryOrder::Release,
                scope = MemoryScope::Device,
            );
        } else {
            atomic_add(fails, 0, 1, order = MemoryOrder::Relaxed);
        }
    }
}

#[test]
fn spinlock_protects_a_plain_read_modify_write() {
    assemble([(spinlock::NAME, spinlock::PTX, spinlock::TARGET)]);
    for dev in backends() {
        for use_cas in [0, 1] {
            let (g, rounds) = (32usize, 25usize);
            let lock = dev.zeros::<i32>(1).unwrap();
            let data = dev.zeros::<i32>(512).unwrap();
            let fails = dev.zeros::<i32>(1).unwrap();
            spinlock::launch(&dev, g as u32, &lock, &data, &fails, rounds as i32, use_cas).unwrap();
            assert_eq!(
                fails.download().unwrap(),
                vec![0],
                "use_cas={use_cas} on {}",
                dev.name()
            );
            assert_eq!(
                lock.download().unwrap(),
                vec![0],
                "lock left taken (use_cas={use_cas}) on {}",
                dev.name()
            );
            assert_eq!(
                data.download().unwrap(),
                vec![(g * rounds) as i32; 512],
                "lost updates (use_cas={use_cas}) on {}",
                dev.name()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Double buffering across launches.

/// Read the switch (acquire); compute from the current buffer into the other one (and `out`);
/// the LAST block to finish (acq_rel counter) resets the counter and flips the switch with a
/// release store. (Flipping from block 0 as soon as it is done, as the document's sketch does,
/// would let a slower block of the same launch read the new value and go the wrong way.)
#[tile_kernel(threads = 128)]
fn double_buffer(
    a: GlobalTensor<i32>,
    b: GlobalTensor<i32>,
    switch: GlobalTensor<i32>,
    done: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    iteration: i32,
) {
    let cur = atomic_load(
        switch,
        0,
        order = MemoryOrder::Acquire,
        scope = MemoryScope::Device,
    );
    let off = block_idx() * 256;
    if cur == 0 {
        let r = load_global(a, offsets = [off], shape = [256]) * 2 + iteration;
        store_global(b, r, offsets = [off]);
        store_global(out, r, offsets = [off]);
    } else {
        let r = load_global(b, offsets = [off], shape = [256]) * 2 + iteration;
        store_global(a, r, offsets = [off]);
        store_global(out, r, offsets = [off]);
    }
    let finished = atomic_add(done, 0, 1);
    if finished == grid_dim() - 1 {
        atomic_store(
            done,
            0,
            0,
            order = MemoryOrder::Relaxed,
            scope = MemoryScope::Device,
        );
        atomic_store(
            switch,
            0,
            1 - cur,
            order = MemoryOrder::Release,
            scope = MemoryScope::Device,
        );
    }
}

#[test]
fn double_buffering_across_launches() {
    assemble([(
        double_buffer::NAME,
        double_buffer::PTX,
        double_buffer::TARGET,
    )]);
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        let g = 16usize;
        let n = g * 256;
        let init = rng.vec(n, -1000, 1000);
        let a = dev.upload(&init).unwrap();
        let b = dev.zeros::<i32>(n).unwrap();
        let switch = dev.zeros::<i32>(1).unwrap();
        let done = dev.zeros::<i32>(1).unwrap();
        let out = dev.zeros::<i32>(n).unwrap();
        let (mut ha, mut hb, mut flag) = (init.clone(), vec![0; n], 0);
        let launches = 11;
        for it in 0..launches {
            double_buffer::launch(&dev, g as u32, &a, &b, &switch, &done, &out, it).unwrap();
            let (src, dst) = if flag == 0 {
                (&ha, &mut hb)
            } else {
                (&hb, &mut ha)
            };
            for i in 0..n {
                dst[i] = src[i].wrapping_mul(2).wrapping_add(it);
            }
            flag = 1 - flag;
            let want_out = if flag == 1 { hb.clone() } else { ha.clone() };
            assert_eq!(
                out.download().unwrap(),
                want_out,
                "launch {it} on {}",
                dev.name()
            );
        }
        assert_eq!(a.download().unwrap(), ha, "{}", dev.name());
        assert_eq!(b.download().unwrap(), hb, "{}", dev.name());
        assert_eq!(
            switch.download().unwrap(),
            vec![launches % 2],
            "{}",
            dev.name()
        );
        assert_eq!(done.download().unwrap(), vec![0], "{}", dev.name());
    }
}

// ---------------------------------------------------------------------------------------------
// Block scope (shared memory) and system scope.

/// The document's BLOCK-scope example: fill a shared buffer, release-store a flag into it,
/// acquire-load the flag, and read the buffer if it is set. Then tile-indexed shared atomic
/// stores and loads.
#[tile_kernel(threads = 64)]
fn block_scope(out: GlobalTensor<i32>) {
    let buf = shared_tensor(i32, [64]);
    store_shared(buf, arange(64) * 3 + block_idx());
    atomic_store(
        buf,
        32,
        1,
        order = MemoryOrder::Release,
        scope = MemoryScope::Block,
    );
    let flag = atomic_load(
        buf,
        32,
        order = MemoryOrder::Acquire,
        scope = MemoryScope::Block,
    );
    if flag == 1 {
        store_global(out, load_shared(buf), offsets = [block_idx() * 64]);
    }
    atomic_store(
        buf,
        arange(16) * 4 + 1,
        arange(16) + 500,
        order = MemoryOrder::Release,
        scope = MemoryScope::Block,
    );
    let w = atomic_load(
        buf,
        arange(16) * 4 + 1,
        order = MemoryOrder::Acquire,
        scope = MemoryScope::Block,
    );
    store_global(out, w, offsets = [grid_dim() * 64 + block_idx() * 16]);
}

#[test]
fn block_scope_on_shared_memory() {
    assemble([(block_scope::NAME, block_scope::PTX, block_scope::TARGET)]);
    assert!(
        block_scope::PTX.contains("st.release.cta.shared"),
        "{}",
        block_scope::PTX
    );
    assert!(
        block_scope::PTX.contains("ld.acquire.cta.shared"),
        "{}",
        block_scope::PTX
    );
    for dev in backends() {
        let g = 5usize;
        let out = dev.full::<i32>(g * 80, -1).unwrap();
        block_scope::launch(&dev, g as u32, &out).unwrap();
        let out = out.download().unwrap();
        for b in 0..g {
            let want: Vec<i32> = (0..64)
                .map(|i| if i == 32 { 1 } else { i * 3 + b as i32 })
                .collect();
            assert_eq!(
                &out[b * 64..(b + 1) * 64],
                &want[..],
                "block {b} on {}",
                dev.name()
            );
            let want: Vec<i32> = (0..16).map(|i| i + 500).collect();
            assert_eq!(
                &out[g * 64 + b * 16..g * 64 + (b + 1) * 16],
                &want[..],
                "block {b} on {}",
                dev.name()
            );
        }
    }
}

/// The SYS-scope example: every block writes its data and release-stores its flag at system
/// scope; block 0 acquire-waits on all flags at system scope.
#[tile_kernel(threads = 128)]
fn sys_scope(data: GlobalTensor<i32>, flag: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let b = block_idx();
    store_global(data, full([16], b), offsets = [b * 16]);
    atomic_store(
        flag,
        b,
        1,
        order = MemoryOrder::Release,
        scope = MemoryScope::Sys,
    );
    if b == 0 {
        let mut n = 0;
        let mut spins = 0;
        while n < grid_dim() && spins < 4000000 {
            n = atomic_load(
                flag,
                arange(8),
                order = MemoryOrder::Acquire,
                scope = MemoryScope::Sys,
            )
            .sum();
            spins += 1;
        }
        store_global(
            out,
            load_global(data, offsets = [0], shape = [128]),
            offsets = [0],
        );
    }
}

#[test]
fn system_scope_release_acquire() {
    assemble([(sys_scope::NAME, sys_scope::PTX, sys_scope::TARGET)]);
    assert!(
        sys_scope::PTX.contains("st.release.sys.global"),
        "{}",
        sys_scope::PTX
    );
    assert!(
        sys_scope::PTX.contains("ld.relaxed.sys.global.s32")
            && sys_scope::PTX.contains("fence.acq_rel.sys;"),
        "{}",
        sys_scope::PTX
    );
    for dev in backends() {
        let data = dev.full::<i32>(128, -1).unwrap();
        let flag = dev.zeros::<i32>(8).unwrap();
        let out = dev.zeros::<i32>(128).unwrap();
        sys_scope::launch(&dev, 8, &data, &flag, &out).unwrap();
        let want: Vec<i32> = (0..128).map(|i| i / 16).collect();
        assert_eq!(out.download().unwrap(), want, "{}", dev.name());
        assert_eq!(flag.download().unwrap(), vec![1; 8]);
    }
}
