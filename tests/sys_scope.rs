//! Mapped host memory and peer devices: what `scope = sys` synchronises with. (The host
//! protocols, progress, work queue and mailbox, are examples that check themselves:
//! `examples/progress.rs`, `work_queue.rs`, `mailbox.rs`.)

mod common;

use common::backends;
use std::sync::atomic::Ordering;
use tilus::prelude::*;
use tilus::Error;

/// Reads `input` (host memory the host wrote) and writes `output` (host memory the host reads).
#[tile_kernel(threads = 64)]
fn through_host(input: GlobalTensor<i64>, output: GlobalTensor<i64>) {
    let v = load_global(input, offsets = [0], shape = [256]);
    store_global(output, v * 2 - 1, offsets = [0]);
    fence(sem = acq_rel, scope = sys);
}

#[test]
fn kernels_read_and_write_mapped_host_memory() {
    for dev in backends() {
        let input = dev.mapped::<i64>(300).unwrap();
        for i in 0..300 {
            input.store(i, i as i64 * 1_000_000_007, Ordering::Relaxed);
        }
        let output = dev.mapped_from(&vec![-5i64; 300]).unwrap();
        through_host::launch(&dev, 1, &input, &output).unwrap();
        dev.synchronize().unwrap();
        for (i, got) in output.to_vec().into_iter().enumerate() {
            let want = if i < 256 {
                i as i64 * 2_000_000_014 - 1
            } else {
                -5
            };
            assert_eq!(got, want, "{dev:?} element {i}");
        }
        output.free().unwrap();
    }
}

#[test]
fn a_device_is_not_its_own_peer() {
    for dev in backends() {
        match dev.enable_peer_access(&dev) {
            Err(Error::PeerAccessUnsupported { reason, .. }) => {
                assert!(reason.contains("own peer"), "{reason}")
            }
            other => panic!("{dev:?}: {other:?}"),
        }
    }
}

/// Emulator devices all keep tensors in host memory: a launch on one may use another's
/// tensors once peer access is enabled, and not before.
#[test]
fn peer_tensors_are_accepted_once_enabled() {
    let (a, b) = (common::emulator(), common::emulator());
    let input = b.mapped_from(&vec![3i64; 256]).unwrap();
    let output = b.zeros::<i64>(256).unwrap();
    assert!(!a.is_peer(&b));
    match through_host::launch(&a, 1, &input, &output) {
        Err(Error::WrongDevice { param, .. }) => assert_eq!(param, "input"),
        other => panic!("{other:?}"),
    }
    a.enable_peer_access(&b).unwrap();
    assert!(a.is_peer(&b) && !b.is_peer(&a));
    through_host::launch(&a, 1, &input, &output).unwrap();
    assert_eq!(output.download().unwrap(), vec![5; 256]);
}
