//! `any` and `all` of a block's `bool` tile, which the PTX folds in the barrier itself
//! (`bar.red.or.pred` / `bar.red.and.pred`, one predicate a thread; a one-warp block keeps its
//! butterfly): tiles shorter than the
//! block (threads with no element), tiles giving a thread several elements and a partial last
//! chunk; a lone `true` (or `false`) at the first, the last or a random place; and a `while`
//! loop whose condition is such a vote. Every backend, against CPU references.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// `out = [any(x != 0), all(x != 0), trips]`, where `trips` counts the rounds of halving every
/// element until all are zero (a loop on a block-wide vote).
macro_rules! votes {
    ($name:ident, $threads:literal, $n:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
            let t = load_global(x, offsets = [0], shape = [$n]);
            let any = (t != 0).any();
            let all = (t != 0).all();
            let mut v = t;
            let mut trips = 0;
            while (v != 0).any() {
                v = v / 2;
                trips = trips + 1;
            }
            store_global(out, full([1], any as i32), offsets = [0]);
            store_global(out, full([1], all as i32), offsets = [1]);
            store_global(out, full([1], trips), offsets = [2]);
        }
    };
}

votes!(votes_32_of_40, 32, 40);
votes!(votes_64_of_50, 64, 50);
votes!(votes_96_of_1000, 96, 1000);
votes!(votes_256_of_4100, 256, 4100);
votes!(votes_1024_of_1024, 1024, 1024);

type Launch = fn(&Device, &GlobalTensor<i32>, &GlobalTensor<i32>);

fn expected(x: &[i32]) -> Vec<i32> {
    let any = x.iter().any(|&v| v != 0);
    let all = x.iter().all(|&v| v != 0);
    let trips = x
        .iter()
        .map(|&v| 32 - v.unsigned_abs().leading_zeros())
        .max()
        .unwrap_or(0);
    vec![any as i32, all as i32, trips as i32]
}

/// The inputs of one size: all zero, all nonzero, a lone nonzero and a lone zero at the first,
/// the last and a random place, and random sparse values.
fn patterns(rng: &mut Rng, n: usize) -> Vec<Vec<i32>> {
    let mut out = vec![vec![0; n], rng.vec(n, 1, 1 << 20)];
    for at in [0, n - 1, rng.below(n as u64) as usize] {
        let mut lone = vec![0; n];
        lone[at] = rng.next_u64() as i32 | 1;
        out.push(lone);
        let mut hole = rng.vec(n, 1, 100);
        hole[at] = 0;
        out.push(hole);
    }
    out.push(
        (0..n)
            .map(|_| {
                if rng.below(8) == 0 {
                    rng.range(-1000, 1000)
                } else {
                    0
                }
            })
            .collect(),
    );
    out
}

#[test]
fn block_votes_in_the_barrier() {
    // Name, length, launch, PTX, target of each kernel, and whether its block has several
    // warps (a vote folded by `bar.red`; one warp's is its butterfly, with no barrier).
    macro_rules! kernel {
        ($k:ident, $n:literal, $warps:literal) => {
            (
                stringify!($k),
                $n,
                (|d, x, o| $k::launch(d, 1, x, o).unwrap()) as Launch,
                $k::PTX,
                $k::TARGET,
                $warps > 1,
            )
        };
    }
    let kernels = [
        kernel!(votes_32_of_40, 40, 1),
        kernel!(votes_64_of_50, 50, 2),
        kernel!(votes_96_of_1000, 1000, 3),
        kernel!(votes_256_of_4100, 4100, 8),
        kernel!(votes_1024_of_1024, 1024, 32),
    ];
    let mut rng = Rng::from_env_or_clock();
    for (name, n, launch, ptx, target, several_warps) in kernels {
        assemble_all(name, ptx, target);
        let folded = ptx.contains("bar.red.or.pred") && ptx.contains("bar.red.and.pred");
        assert_eq!(folded, several_warps, "{name}");
        for x in patterns(&mut rng, n) {
            let want = expected(&x);
            for dev in backends() {
                let xd = dev.upload(&x).unwrap();
                let out = dev.full(3, -7i32).unwrap();
                launch(&dev, &xd, &out);
                assert_eq!(
                    out.download().unwrap(),
                    want,
                    "{name} on {dev:?}, x = {x:?}"
                );
            }
        }
    }
}
