//! The `vector_width` kernel option: the same kernel body with the default runs (8 elements a
//! thread here, from the `u8` parameter), runs of 2 and runs of 1 gives the same results, on
//! every backend, for loads and stores under a mask, a scan, an 8-bit equal rank, axis sums,
//! a sort, a histogram and a scatter, against CPU references.

mod common;

use common::{assemble_all, backends, Rng};
use tilus::prelude::*;

/// One kernel per option: `$opt` is the attribute's tail.
macro_rules! widths {
    ($($name:ident [$($opt:tt)*];)*) => {$(
        #[tile_kernel(threads = 128 $($opt)*)]
        fn $name(x: GlobalTensor<i32>, b: GlobalTensor<u8>, out: GlobalTensor<i32>, n: i32) {
            let inside = arange(1000) < n;
            let t = load_global(x, offsets = [0], shape = [1000], mask = inside, other = 0);
            let d = load_global(b, offsets = [0], shape = [1000], mask = inside, other = 0);
            store_global(out, t.cumsum(), offsets = [0]);
            store_global(out, d.equal_rank(), offsets = [1000]);
            store_global(out, t.reshape([40, 25]).sum(1), offsets = [2000]);
            store_global(out, t.sort(), offsets = [2040]);
            store_global(out, (d as i32).histogram(256), offsets = [3040]);
            // The tile reversed into [3296, 4296), masked.
            store_global_scatter(out, dim = 0, indices = 4295 - arange(1000), values = t * 3, mask = inside);
        }
    )*};
}

widths! {
    runs_default [];
    runs_of_two [, vector_width = 2];
    runs_of_one [, vector_width = 1];
}

/// What every kernel writes, from the CPU.
fn reference(x: &[i32], b: &[u8], n: usize) -> Vec<i32> {
    let t: Vec<i32> = (0..1000).map(|i| if i < n { x[i] } else { 0 }).collect();
    let d: Vec<u8> = (0..1000).map(|i| if i < n { b[i] } else { 0 }).collect();
    let mut want = Vec::with_capacity(4296);
    want.extend(t.iter().scan(0i32, |s, &v| {
        *s = s.wrapping_add(v);
        Some(*s)
    }));
    let mut seen = [0i32; 256];
    want.extend(d.iter().map(|&v| {
        seen[v as usize] += 1;
        seen[v as usize] - 1
    }));
    want.extend(t.chunks(25).map(|row| row.iter().sum::<i32>()));
    let mut sorted = t.clone();
    sorted.sort();
    want.extend(sorted);
    want.extend((0..256).map(|k| d.iter().filter(|&&v| v as i32 == k).count() as i32));
    // Outputs the masked scatter does not reach keep their poison.
    want.extend((0..1000).map(|j| {
        let i = 999 - j;
        if i < n {
            t[i] * 3
        } else {
            -99
        }
    }));
    want
}

#[test]
fn every_vector_width_gives_the_same_results() {
    for (name, ptx, target) in common::kernels![runs_default, runs_of_two, runs_of_one] {
        assemble_all(name, ptx, target);
    }
    let mut rng = Rng::from_env_or_clock();
    for dev in backends() {
        for _ in 0..3 {
            let n = rng.range(990, 1001) as usize;
            let x = rng.vec(1000, -50, 50);
            // Few distinct bytes, so ranks count long runs of equals.
            let b: Vec<u8> = (0..1000).map(|_| rng.range(0, 12) as u8 * 21).collect();
            let want = reference(&x, &b, n);
            let (xd, bd) = (dev.upload(&x).unwrap(), dev.upload(&b).unwrap());
            for (which, launch) in [
                (
                    "default",
                    runs_default::launch as fn(&_, _, &_, &_, &_, _) -> _,
                ),
                ("2", runs_of_two::launch),
                ("1", runs_of_one::launch),
            ] {
                let out = dev.full(4296, -99i32).unwrap();
                launch(&dev, 1, &xd, &bd, &out, n as i32).unwrap();
                let got = out.download().unwrap();
                if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                    panic!(
                        "{dev:?}, vector_width {which}, n = {n}: element {i} is {}, not {}",
                        got[i], want[i]
                    );
                }
            }
        }
    }
}
