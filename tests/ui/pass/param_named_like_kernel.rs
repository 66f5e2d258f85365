use tilus::prelude::*;

// A parameter may have its kernel's name: the launchers name it apart from the kernel's unit
// struct.
#[tile_kernel(threads = 32)]
fn hist(values: GlobalTensor<i32>, hist: GlobalTensor<u32>) {
    let v = load_global(values, offsets = [0], shape = [32]);
    atomic::global_scatter_add(hist, dim = 0, indices = v, values = 1);
}

fn main() {
    let dev = tilus::Device::emulator();
    let values = dev
        .upload(&(0..32).map(|i| i % 4).collect::<Vec<i32>>())
        .unwrap();
    let counts = dev.zeros::<u32>(4).unwrap();
    hist::launch(&dev, 1, &values, &counts).unwrap();
    assert_eq!(counts.download().unwrap(), vec![8, 8, 8, 8]);
}
