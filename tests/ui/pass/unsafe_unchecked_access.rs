use tilus::prelude::*;

/// Callers promise that `m` has at least 256 elements.
#[tile_kernel(threads = 128)]
unsafe fn add_unchecked(m: GlobalTensor<i32>) {
    atomic_add(m, arange(256), 1, check_bounds = false);
}

// A safe kernel whose `unsafe` blocks are sound: the branch checks the length they need.
#[tile_kernel(threads = 128)]
fn add_guarded(m: GlobalTensor<i32>) {
    if m.len() >= 256 {
        unsafe {
            atomic_add(m, arange(256), 1, check_bounds = false);
        }
        let v = unsafe { atomic_load(m, arange(128), check_bounds = false) };
        store_global(m, v + 1, offsets = [0]);
    }
}

fn main() -> Result<(), tilus::Error> {
    let dev = tilus::Device::emulator();
    let m = dev.zeros::<i32>(256)?;
    // SAFETY: `m` has 256 elements.
    unsafe { add_unchecked::launch(&dev, 1, &m)? };
    add_guarded::launch(&dev, 1, &m)?;
    let got = m.download()?;
    assert!(got[..128].iter().all(|&v| v == 3) && got[128..].iter().all(|&v| v == 2));
    // A tensor too short: the guarded kernel does nothing.
    let short = dev.zeros::<i32>(100)?;
    add_guarded::launch(&dev, 1, &short)?;
    assert!(short.download()?.iter().all(|&v| v == 0));
    Ok(())
}
