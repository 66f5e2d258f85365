use tilus::prelude::*;

// A legal type with an illegal order: cuTile's indexed RMWs are Relaxed or AcqRel, not Release
// (half a synchronisation), whatever the element type.
#[tile_kernel(threads = 128)]
fn k(x: GlobalTensor<f32>, idx: GlobalTensor<i32>) {
    let i = load_global(idx, offsets = [0], shape = [128]);
    atomic_add(x, i, 1.5f32, order = MemoryOrder::Release);
}

fn main() {}
