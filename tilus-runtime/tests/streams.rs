//! Streams, events and asynchronous copies through the typed launchers (`k::launch_on`), on
//! the emulator and (built with `cuda`) on GPU 0; GPU-only: copies overlapping a kernel on two
//! streams, and kernels on a user's cust stream.

mod common;

use rand::Rng;
use tilus::prelude::*;
use tilus::Error;

/// `y = x + 3 * iters`, one add at a time (a kernel whose run time `iters` sets).
#[tile_kernel(threads = 128)]
fn add3(x: GlobalTensor<i32>, y: GlobalTensor<i32>, iters: i32) {
    for start in (block_idx() * 512..x.len()).step_by(grid_dim() * 512) {
        let mut a = load_global(x, offsets = [start], shape = [512]);
        for _i in 0..iters {
            a = a + 3;
        }
        store_global(y, a, offsets = [start]);
    }
}

fn random(n: usize) -> Vec<i32> {
    let mut rng = rand::thread_rng();
    (0..n)
        .map(|_| rng.gen_range(-1_000_000..1_000_000))
        .collect()
}

#[test]
fn one_stream_runs_copies_and_kernels_in_order() {
    for dev in common::devices() {
        let s = dev.stream().unwrap();
        let n = 5_000 + rand::thread_rng().gen_range(0..300); // not a multiple of 512
        let data = random(n);
        let (x, y) = (dev.full(n, -7).unwrap(), dev.full(n, -7).unwrap());
        // Upload from a pinned buffer, run, download into another: all queued on `s`.
        let up = s.upload(dev.host_buffer_from(&data).unwrap(), &x).unwrap();
        add3::launch_on(&s, 3, &x, &y, 5).unwrap();
        let down = s.download(&y, dev.host_buffer::<i32>(n).unwrap()).unwrap();
        let out = down.wait().unwrap();
        let want: Vec<i32> = data.iter().map(|v| v + 15).collect();
        assert_eq!(&out[..], &want[..], "{}", dev.name());
        assert_eq!(&up.wait().unwrap()[..], &data[..]);
        // A `Vec` works as host memory too, in both directions.
        let back = s.download(&x, vec![0i32; n]).unwrap().wait().unwrap();
        assert_eq!(back, data);
    }
}

#[test]
fn scoped_copies_borrow_host_slices() {
    for dev in common::devices() {
        let s = dev.stream().unwrap();
        let n = 3_001;
        let data = random(n);
        let mut out = vec![0i32; n];
        let (x, y) = (dev.zeros(n).unwrap(), dev.zeros(n).unwrap());
        s.scope(|sc| {
            sc.upload(&data, &x)?;
            add3::launch_on(sc.stream(), 2, &x, &y, 1)?;
            sc.download(&y, &mut out)
        })
        .unwrap();
        let want: Vec<i32> = data.iter().map(|v| v + 3).collect();
        assert_eq!(out, want, "{}", dev.name());
    }
}

#[test]
fn events_order_two_streams() {
    for dev in common::devices() {
        let (s1, s2) = (dev.stream().unwrap(), dev.stream().unwrap());
        let n = 40_000;
        let data = random(n);
        let (x, y, z) = (
            dev.zeros(n).unwrap(),
            dev.full(n, -1).unwrap(),
            dev.full(n, -1).unwrap(),
        );
        let ready = dev.event().unwrap();
        // s1: upload then a long kernel; s2 waits for it before a kernel reading its output.
        let up = s1.upload(data.clone(), &x).unwrap();
        add3::launch_on(&s1, 8, &x, &y, 2_000).unwrap();
        ready.record(&s1).unwrap();
        s2.wait_event(&ready).unwrap();
        add3::launch_on(&s2, 8, &y, &z, 1).unwrap();
        let out = s2.download(&z, vec![0; n]).unwrap().wait().unwrap();
        let want: Vec<i32> = data.iter().map(|v| v + 6_003).collect();
        assert_eq!(out, want, "{}", dev.name());
        assert!(ready.is_complete().unwrap());
        drop(up);
    }
}

#[test]
fn event_timing_and_misuse() {
    for dev in common::devices() {
        let s = dev.stream().unwrap();
        let (start, end) = (dev.event().unwrap(), dev.event().unwrap());
        // Never recorded: a typed error, not a hang or a meaningless number.
        assert!(matches!(
            start.elapsed_ms(&end),
            Err(Error::EventNotRecorded { .. })
        ));
        assert!(matches!(
            s.wait_event(&start),
            Err(Error::EventNotRecorded { .. })
        ));
        let n = 1 << 16;
        let (x, y) = (dev.zeros::<i32>(n).unwrap(), dev.zeros::<i32>(n).unwrap());
        start.record(&s).unwrap();
        add3::launch_on(&s, 16, &x, &y, 50).unwrap();
        end.record(&s).unwrap();
        let ms = start.elapsed_ms(&end).unwrap();
        assert!(ms > 0.0 && ms < 60_000.0, "{ms} ms on {}", dev.name());
        assert!(end.is_complete().unwrap());
        assert_eq!(y.download().unwrap(), vec![150; n]);
        // Objects of another device are refused.
        let other = Device::emulator();
        let foreign = other.event().unwrap();
        assert!(matches!(
            foreign.record(&s),
            Err(Error::DeviceMismatch { .. })
        ));
        let t = other.zeros::<i32>(n).unwrap();
        assert!(matches!(
            s.upload(vec![0; n], &t),
            Err(Error::DeviceMismatch { .. })
        ));
        assert!(matches!(
            add3::launch_on(&s, 1, &t, &y, 1),
            Err(Error::WrongDevice { .. })
        ));
        // Wrong host length: refused before anything is issued.
        assert!(matches!(
            s.download(&y, vec![0; n - 1]),
            Err(Error::LengthMismatch { .. })
        ));
    }
}

#[test]
fn the_default_stream_is_a_stream() {
    for dev in common::devices() {
        let s = dev.default_stream();
        let data = random(1000);
        let x = dev.upload(&data).unwrap();
        let y = dev.zeros(1000).unwrap();
        add3::launch_on(&s, 1, &x, &y, 4).unwrap();
        s.synchronize().unwrap();
        let want: Vec<i32> = data.iter().map(|v| v + 12).collect();
        assert_eq!(y.download().unwrap(), want);
    }
}

/// Milliseconds of `f`'s device work on `s`, timed by events.
fn timed(dev: &Device, s: &tilus::Stream<'_>, f: impl FnOnce()) -> f32 {
    let (a, b) = (dev.event().unwrap(), dev.event().unwrap());
    a.record(s).unwrap();
    f();
    b.record(s).unwrap();
    a.elapsed_ms(&b).unwrap()
}

#[test]
fn a_copy_overlaps_a_kernel_on_two_streams() {
    let Some(dev) = common::gpu() else { return };
    let (s1, s2) = (dev.stream().unwrap(), dev.stream().unwrap());
    let copy_n = 64 << 20; // 256 MiB of i32: tens of milliseconds over PCIe
    let host = dev.host_buffer_from(&vec![5i32; copy_n]).unwrap();
    assert!(host.is_pinned());
    let dst = dev.zeros::<i32>(copy_n).unwrap();
    let kn = 1 << 20;
    let (x, y) = (dev.zeros::<i32>(kn).unwrap(), dev.zeros::<i32>(kn).unwrap());
    // Each part alone (after a warm-up that loads the module).
    add3::launch_on(&s2, 132, &x, &y, 1).unwrap();
    s2.synchronize().unwrap();
    let mut host = Some(host);
    let copy_ms = timed(&dev, &s1, || {
        let p = s1.upload(host.take().unwrap(), &dst).unwrap();
        host = Some(p.wait().unwrap());
    });
    // Calibrate the kernel to take about as long as the copy.
    let mut iters = 1_000;
    let mut kernel_ms = timed(&dev, &s2, || {
        add3::launch_on(&s2, 132, &x, &y, iters).unwrap()
    });
    for _ in 0..4 {
        if (kernel_ms - copy_ms).abs() < copy_ms * 0.3 {
            break;
        }
        iters = ((iters as f32 * copy_ms / kernel_ms.max(0.01)) as i32).clamp(1, 10_000_000);
        kernel_ms = timed(&dev, &s2, || {
            add3::launch_on(&s2, 132, &x, &y, iters).unwrap()
        });
    }
    // Both at once, on two streams, timed on a third event pair around both.
    dev.synchronize().unwrap();
    let (start, k_done, c_done) = (
        dev.event().unwrap(),
        dev.event().unwrap(),
        dev.event().unwrap(),
    );
    start.record(&s1).unwrap();
    s2.wait_event(&start).unwrap();
    let p = s1.upload(host.take().unwrap(), &dst).unwrap();
    c_done.record(&s1).unwrap();
    add3::launch_on(&s2, 132, &x, &y, iters).unwrap();
    k_done.record(&s2).unwrap();
    let host = p.wait().unwrap();
    let total = start
        .elapsed_ms(&c_done)
        .unwrap()
        .max(start.elapsed_ms(&k_done).unwrap());
    eprintln!(
        "copy {copy_ms:.2} ms, kernel {kernel_ms:.2} ms ({iters} iterations), both {total:.2} ms"
    );
    assert!(
        total < (copy_ms + kernel_ms) * 0.9,
        "no overlap: copy {copy_ms} ms + kernel {kernel_ms} ms, both {total} ms"
    );
    assert_eq!(y.download().unwrap(), vec![3 * iters; kn]);
    assert!(dst.download().unwrap().iter().all(|&v| v == 5));
    assert_eq!(host.len(), copy_n);
}

#[cfg(feature = "cuda")]
#[test]
fn kernels_run_on_a_users_cust_stream() {
    use tilus::cust::memory::{CopyDestination, DeviceBuffer};
    use tilus::cust::stream::{Stream as CustStream, StreamFlags};
    let Some(dev) = common::gpu() else { return };
    // cust calls on this thread need the device's context current (see `Device::cuda_context`).
    tilus::cust::context::CurrentContext::set_current(dev.cuda_context().unwrap()).unwrap();
    let theirs = CustStream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let s = tilus::Stream::borrow_cust(&dev, &theirs).unwrap();
    let data = random(10_000);
    let x = dev.upload(&data).unwrap();
    let buf = DeviceBuffer::<i32>::zeroed(10_000).unwrap();
    // SAFETY: `buf` is freed (synchronously) at the end of the test, after `theirs`, the one
    // stream with work on it, is synchronised.
    let y = unsafe { tilus::TensorView::from_cust(&dev, &buf) }.unwrap();
    add3::launch_on(&s, 4, &x, &y, 2_000).unwrap();
    // Ordered on their stream: their synchronize is enough before reading their buffer.
    theirs.synchronize().unwrap();
    let mut out = vec![0; 10_000];
    buf.copy_to(&mut out[..]).unwrap();
    let want: Vec<i32> = data.iter().map(|v| v + 6_000).collect();
    assert_eq!(out, want);
    assert_eq!(s.as_raw(), Some(theirs.as_inner()));
}
