use tilus::prelude::*;

#[tile_kernel(threads = 128)]
fn scale(x: GlobalTensor<i32>, n: i32) {
    let a = load_global(x, offsets = [0], shape = [128], mask = arange(128) < n);
    store_global(x, a * 2, offsets = [0]);
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::default()?;
    let x = dev.zeros::<i32>(128)?;
    scale::launch(&dev, 1, &x, &x)?;
    Ok(())
}
