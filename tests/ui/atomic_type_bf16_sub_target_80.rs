use tilus::prelude::*;

// A bf16 `sub` is a `.noftz.bf16` add of the negated operand, which needs sm_90: an explicit
// older target is an error, for the scatter form too.
#[tile_kernel(threads = 128, target = 80)]
fn k(x: GlobalTensor<bf16>, idx: GlobalTensor<i32>) {
    let s = shared_tensor(bf16, [64]);
    let i = load_global(idx, offsets = [0], shape = [128]);
    let v = load_global(x, offsets = [0], shape = [128]);
    atomic::shared_scatter_sub(s, dim = 0, indices = i, values = v);
}

fn main() {}
