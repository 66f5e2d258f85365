//! A kernel touching most of the language; it must compile (and its launcher type-check).
use tilus::prelude::*;

#[tile_kernel(threads = 256)]
fn many(values: GlobalTensor<i32>, out: GlobalTensor<i32>, flag: GlobalTensor<i32>, n: i32) {
    let counts = shared_tensor(i32, [256]);
    store_shared(counts, zeros([256]));
    sync();
    let len = values.len();
    let mut total = 0;
    for start in (block_idx() * 1024..len).step_by(grid_dim() * 1024) {
        let v = load_global(values, offsets = [start], shape = [1024], other = -1);
        let ok = (v >= 0) & (v < 256);
        atomic::shared_scatter_add(counts, dim = 0, indices = v, values = 1, mask = ok);
        total += select(ok, 1, 0).sum();
        if total > n {
            break;
        }
    }
    sync();
    let c = load_shared(counts);
    let biased = max(c - 1, 0) + min(c, 3) * 2;
    atomic::global_add(out, biased, mask = c != 0);
    let m = out.view(0, [16, 16]);
    let rows = arange(16);
    let old = atomic_cas(m, (rows, 0), 0, 1, order = MemoryOrder::Relaxed);
    atomic_add(m, (rows, 1), old, order = MemoryOrder::AcqRel, scope = MemoryScope::Device);
    fence(sem = acq_rel, scope = gpu);
    atomic_store(flag, 0, total, order = MemoryOrder::Release, scope = MemoryScope::Device);
    let f = atomic_load(flag, 0, order = MemoryOrder::Acquire, scope = MemoryScope::Device);
    let mut i = 0;
    while i < 2 {
        i += 1;
    }
    store_global(out, full([256], f + i), offsets = [256]);
}

fn main() {
    // The launcher's grid and tensor parameters are generic (`impl Into<Grid>`,
    // `&impl AsTensor<i32>`): name an instantiation, and type-check a call on a stream.
    type Launch = fn(&Device, u32, &GlobalTensor<i32>, &GlobalTensor<i32>, &GlobalTensor<i32>, i32)
        -> Result<(), tilus::Error>;
    let _: Launch = many::launch;
    let _ = |s: &tilus::Stream<'_>, v: &TensorView<'_, i32>, t: &GlobalTensor<i32>| {
        many::launch_on(s, (2, 2), v, t, t, 1)
    };
}
