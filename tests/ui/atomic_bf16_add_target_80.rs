use tilus::prelude::*;

// `atom.add.noftz.bf16` needs sm_90: an explicit older target is an error at the call.
#[tile_kernel(threads = 128, target = 80)]
fn k(x: GlobalTensor<bf16>) {
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::global_add(x, values = v);
}

fn main() {}
