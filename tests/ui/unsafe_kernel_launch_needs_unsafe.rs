use tilus::prelude::*;

/// Callers promise that `m` has at least 256 elements.
#[tile_kernel(threads = 128)]
unsafe fn k(m: GlobalTensor<i32>) {
    atomic_add(m, arange(256), 1, check_bounds = false);
}

fn main() {
    let dev = tilus::Device::emulator();
    let m = dev.zeros::<i32>(256).unwrap();
    // The launcher of an `unsafe fn` kernel is `unsafe`: its caller makes the kernel's promise.
    k::launch(&dev, 1, &m).unwrap();
    // So is its spec, which `Device::launch` would otherwise take from safe code.
    let _ = k::spec();
}
