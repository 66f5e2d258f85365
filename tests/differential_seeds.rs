//! Kernels that the differential test (`tests/differential`) once found disagreeing, kept as
//! source: a generator seed stops naming the same kernel as soon as the generator changes, so
//! the kernel itself is what stays. Each runs next to its effects-hoisted form (every nested
//! effect moved into a `let` of its own, which must not change any result) on fresh random
//! inputs of the sizes it failed with, on every backend; all runs must leave identical tensors.

#![allow(unused_variables, unused_mut, clippy::all)] // generated kernels, printed as generated

mod common;

use common::{backends, Rng};
use tilus::prelude::*;

// Found by `TILUS_SEED=1795454837173388581 cargo test --test differential` (kernel #98,
// generator of 2026-11-23): `pb[2]` was -1763856429 on the emulator and 0 with effects hoisted.
// The condition of the value-`if` in `t1` holds an `atomic::global_max`; `t1` is a
// context-typed `let`, which was lowered again at each use, so the atomic ran once per use
// (here: once per loop iteration, `b & 3` times) instead of once where the `let` stands.
#[tile_kernel(threads = 64)]
fn seed_11396887527015049647(
    x: GlobalTensor<i32>,
    y: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    acc: GlobalTensor<i32>,
    accm: GlobalTensor<i32>,
    accb: GlobalTensor<i32>,
    pb: GlobalTensor<i32>,
    k: i32,
    m: i32,
) {
    let b = block_idx();
    sync();
    let t1 = full(
        [2, 25],
        if (y.len() as i32)
            != (full([4, 2, 2], grid_dim())
                / ((full(
                    [4, 2, 2],
                    k * load_global(
                        y.view(((b - i32::MAX) & 1023) - 17, [(k & 15) + 3, 6]),
                        offsets = [3, 0],
                        shape = [1, 1],
                        other = atomic::global_max(
                            pb.view((b * 12 + 0) * 134, [2, 25]),
                            values = ones([2, 25])
                                >> (load_global(
                                    y.view(b * 113, [6, 1]),
                                    offsets = [0, 0],
                                    shape = [2, 1],
                                ) * load_global(
                                    x.view(-2147483648, [3, 5]),
                                    offsets = [3, (k & 7) - 1],
                                    shape = [2, 25],
                                    other = -333791761,
                                )),
                            offsets = [0, 2],
                        )
                        .min(),
                        mask = load_global(
                            x.view(b * 36 + 491, [(m & 15) + 3, 3]),
                            offsets = [2, 0],
                            shape = [1, 1],
                        ) <= full([1, 1], 14),
                    )
                    .item(),
                ) | 1)
                    & 1023))
                .min()
        {
            grid_dim()
        } else {
            -2147483647
        },
    );
    sync();
    let mut w2 = 0;
    loop {
        if w2 >= (b & 3) {
            break;
        }
        let mut warpid = k;
        warpid ^= (m >= k) as i32;
        sync();
        let n4 = atomic::global_sub(
            pb.view((b * 12 + 1) * 134, [1, 27]),
            values = -t1,
            offsets = [0, 0],
            sem = release,
            memory_scope = cta,
        ) & (load_global(
            x.view(b * 92, [8, 17]),
            offsets = [0, b % 3],
            shape = [2, 25],
        ) + t1);
        sync();
        let t1 = t1
            + (835565359
                << (load_global(
                    y.view(b * 175 + 179, [7, 26]),
                    offsets = [b % 3, 13],
                    shape = [2, 25],
                ) & 31));
        w2 += 1;
    }
    let t5 = (load_global(
        x.view(b * 164 + 228, [10, (k & 15) + 0, 7]),
        offsets = [2, 0, b % 4],
        shape = [4, 1, 2],
        other = (-695) | (-1790127565),
    )
    .broadcast_to([4, 2, 2])
    .min()
        * (full([2, 25], (grid_dim() != k) as i32)
            & load_global(
                x.view(b * 13 + 177, [2, 30]),
                offsets = [-2, b % 2],
                shape = [2, 25],
            ))) as i32;
    let entry = shared_tensor(i32, [4, 2, 2]);
    sync();
    store_shared(
        entry,
        load_global(
            y.view(393, [6, 8, 1]),
            offsets = [2, b % 2, (k & 7) - 1],
            shape = [4, 2, 2],
            other = grid_dim(2),
        ) ^ load_global(
            x.view(b * 77 + 831, [10, 3, 2]),
            offsets = [b % 1, 0, 0],
            shape = [4, 2, 2],
            mask = load_global(
                y.view(((-k) & 1023) - 48, [0, 5, 8]),
                offsets = [3, -2, -1],
                shape = [4, 2, 2],
            ) == load_global(
                x.view(2147483647, [(m & 15) + 0, 6, 8]),
                offsets = [4, 0, -2],
                shape = [4, 2, 2],
            ),
        ),
    );
    sync();
    store_global(
        out.view((b * 12 + 0) * 134, [1, 0, 1]),
        load_global(
            x.view(0, [0, (m & 15) + 1, 3]),
            offsets = [(k & 7) - 2, 3, (k & 7) - 3],
            shape = [4, 2, 2],
        ),
        offsets = [0, 0, 2],
        mask = select(
            true,
            (arange(2) - 9).reshape([1, 2]).broadcast_to([4, 2, 2]) as bool,
            (atomic::shared_max(
                entry,
                values = (load_global(
                    y.view(b * 188 + 550, [3]),
                    offsets = [17],
                    shape = [50],
                    other = -15,
                )
                .max()
                    >= 31) as i32,
            ) as bool)
                == (load_global(
                    y.view(0, [3, 8, 1]),
                    offsets = [(k & 7) - 1, b % 3, 4],
                    shape = [4, 2, 2],
                    other = min(b, grid_dim(2)),
                ) != full([1, 2, 1], k)
                    - load_global(
                        y.view(b * 176, [1, 4, (k & 15) + 0]),
                        offsets = [(k & 7) - 2, (k & 7) - 3, (k & 7) - 0],
                        shape = [4, 2, 2],
                    )),
        ),
    );
    sync();
}

#[tile_kernel(threads = 64)]
fn seed_11396887527015049647_hoisted(
    x: GlobalTensor<i32>,
    y: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
    acc: GlobalTensor<i32>,
    accm: GlobalTensor<i32>,
    accb: GlobalTensor<i32>,
    pb: GlobalTensor<i32>,
    k: i32,
    m: i32,
) {
    let b = block_idx();
    sync();
    let hz1_ = atomic::global_max(
        pb.view((b * 12 + 0) * 134, [2, 25]),
        values = ones([2, 25])
            >> (load_global(y.view(b * 113, [6, 1]), offsets = [0, 0], shape = [2, 1])
                * load_global(
                    x.view(-2147483648, [3, 5]),
                    offsets = [3, (k & 7) - 1],
                    shape = [2, 25],
                    other = -333791761,
                )),
        offsets = [0, 2],
    );
    let t1 = full(
        [2, 25],
        if (y.len() as i32)
            != (full([4, 2, 2], grid_dim())
                / ((full(
                    [4, 2, 2],
                    k * load_global(
                        y.view(((b - i32::MAX) & 1023) - 17, [(k & 15) + 3, 6]),
                        offsets = [3, 0],
                        shape = [1, 1],
                        other = hz1_.min(),
                        mask = load_global(
                            x.view(b * 36 + 491, [(m & 15) + 3, 3]),
                            offsets = [2, 0],
                            shape = [1, 1],
                        ) <= full([1, 1], 14),
                    )
                    .item(),
                ) | 1)
                    & 1023))
                .min()
        {
            grid_dim()
        } else {
            -2147483647
        },
    );
    sync();
    let mut w2 = 0;
    loop {
        if w2 >= (b & 3) {
            break;
        }
        let mut warpid = k;
        warpid ^= (m >= k) as i32;
        sync();
        let hz2_ = atomic::global_sub(
            pb.view((b * 12 + 1) * 134, [1, 27]),
            values = -t1,
            offsets = [0, 0],
            sem = release,
            memory_scope = cta,
        );
        let n4 = hz2_
            & (load_global(
                x.view(b * 92, [8, 17]),
                offsets = [0, b % 3],
                shape = [2, 25],
            ) + t1);
        sync();
        let t1 = t1
            + (835565359
                << (load_global(
                    y.view(b * 175 + 179, [7, 26]),
                    offsets = [b % 3, 13],
                    shape = [2, 25],
                ) & 31));
        w2 += 1;
    }
    let t5 = (load_global(
        x.view(b * 164 + 228, [10, (k & 15) + 0, 7]),
        offsets = [2, 0, b % 4],
        shape = [4, 1, 2],
        other = (-695) | (-1790127565),
    )
    .broadcast_to([4, 2, 2])
    .min()
        * (full([2, 25], (grid_dim() != k) as i32)
            & load_global(
                x.view(b * 13 + 177, [2, 30]),
                offsets = [-2, b % 2],
                shape = [2, 25],
            ))) as i32;
    let entry = shared_tensor(i32, [4, 2, 2]);
    sync();
    store_shared(
        entry,
        load_global(
            y.view(393, [6, 8, 1]),
            offsets = [2, b % 2, (k & 7) - 1],
            shape = [4, 2, 2],
            other = grid_dim(2),
        ) ^ load_global(
            x.view(b * 77 + 831, [10, 3, 2]),
            offsets = [b % 1, 0, 0],
            shape = [4, 2, 2],
            mask = load_global(
                y.view(((-k) & 1023) - 48, [0, 5, 8]),
                offsets = [3, -2, -1],
                shape = [4, 2, 2],
            ) == load_global(
                x.view(2147483647, [(m & 15) + 0, 6, 8]),
                offsets = [4, 0, -2],
                shape = [4, 2, 2],
            ),
        ),
    );
    sync();
    let hz3_ = atomic::shared_max(
        entry,
        values = (load_global(
            y.view(b * 188 + 550, [3]),
            offsets = [17],
            shape = [50],
            other = -15,
        )
        .max()
            >= 31) as i32,
    );
    store_global(
        out.view((b * 12 + 0) * 134, [1, 0, 1]),
        load_global(
            x.view(0, [0, (m & 15) + 1, 3]),
            offsets = [(k & 7) - 2, 3, (k & 7) - 3],
            shape = [4, 2, 2],
        ),
        offsets = [0, 0, 2],
        mask = select(
            true,
            (arange(2) - 9).reshape([1, 2]).broadcast_to([4, 2, 2]) as bool,
            (hz3_ as bool)
                == (load_global(
                    y.view(0, [3, 8, 1]),
                    offsets = [(k & 7) - 1, b % 3, 4],
                    shape = [4, 2, 2],
                    other = min(b, grid_dim(2)),
                ) != full([1, 2, 1], k)
                    - load_global(
                        y.view(b * 176, [1, 4, (k & 15) + 0]),
                        offsets = [(k & 7) - 2, (k & 7) - 3, (k & 7) - 0],
                        shape = [4, 2, 2],
                    )),
        ),
    );
    sync();
}

/// Random values with the generator's edges (`i32::MIN`, `-1`, `0`, `31`, ...).
fn values(rng: &mut Rng, n: usize) -> Vec<i32> {
    const EDGES: [i32; 8] = [i32::MIN, i32::MIN + 1, i32::MAX, -1, 0, 1, 31, 32];
    (0..n)
        .map(|_| match rng.next_u64() % 10 {
            0..=5 => rng.range(-1000, 1000),
            6 | 7 => rng.next_u64() as i32,
            _ => EDGES[(rng.next_u64() % 8) as usize],
        })
        .collect()
}

#[test]
fn seed_11396887527015049647_agrees_with_its_hoisted_form() {
    let mut rng = Rng::new();
    let (grid, k, m) = (4, 151, -353);
    let x = values(&mut rng, 684);
    let y = values(&mut rng, 1087);
    let acc = values(&mut rng, 37);
    let accm = values(&mut rng, 74);
    let accb = values(&mut rng, 179);
    let pb = values(&mut rng, 6384);
    let mut results = Vec::new();
    for dev in backends() {
        for hoisted in [false, true] {
            let up = |v: &[i32]| dev.upload(v).unwrap();
            let (dx, dy, dacc, daccm, daccb, dpb) =
                (up(&x), up(&y), up(&acc), up(&accm), up(&accb), up(&pb));
            let out = dev.upload(&vec![-0x5a5a5a5b; 6388]).unwrap();
            let launch = if hoisted {
                seed_11396887527015049647_hoisted::launch
            } else {
                seed_11396887527015049647::launch
            };
            launch(
                &dev, grid, &dx, &dy, &out, &dacc, &daccm, &daccb, &dpb, k, m,
            )
            .unwrap();
            let got: Vec<Vec<i32>> = [&out, &dacc, &daccm, &daccb, &dpb]
                .iter()
                .map(|t| t.download().unwrap())
                .collect();
            results.push((format!("{dev:?}, hoisted: {hoisted}"), got));
        }
    }
    let (first, want) = &results[0];
    for (name, got) in &results[1..] {
        for (i, tensor) in ["out", "acc", "accm", "accb", "pb"].iter().enumerate() {
            assert_eq!(
                got[i], want[i],
                "`{tensor}` differs: {name} against {first}"
            );
        }
    }
}
