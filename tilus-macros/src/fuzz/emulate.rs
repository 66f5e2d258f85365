//! The fuzzer's only contact with the emulator's API: small random arguments for a compiled
//! kernel, one bounded launch, and the outcome sorted into "fine" and "a bug". When the
//! emulator's argument types change (element types), this file is the one to adapt.

use super::rng::Rng;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};
use tilus_core::dtype::{Class, DType};
use tilus_core::elem;
use tilus_core::emu::{self, EmuArg, EmuError, EmuOptions, GlobalMem};
use tilus_core::ir::{Kernel, ParamKind};

/// What one emulator run gave.
pub enum EmuOutcome {
    /// The kernel has a parameter the fuzzer cannot make an argument for.
    Skipped,
    /// Ran to the end, or stopped with an error the GPU would have too (undefined behaviour the
    /// emulator reports, a runaway loop): `None`, or the error's kind.
    Ran(Option<String>),
    /// A panic, an `EmuError::Internal` or `EmuError::Malformed`, or arguments the emulator
    /// says do not fit the kernel: a bug in the compiler, the emulator or this file.
    Bug(String),
}

/// Loop iterations per block before the emulator stops a kernel (`EmuError::StepLimit`).
pub const MAX_LOOP_ITERATIONS: u64 = 300;

/// A random value of `d`, as its canonical bit pattern: mostly small numbers, sometimes edge
/// values, sometimes any bit pattern (NaNs and infinities for floats).
fn value(d: DType, rng: &mut Rng) -> u64 {
    let small = match rng.below(10) {
        0 => *rng.pick(&[
            i32::MIN as i64,
            i32::MAX as i64,
            i64::MIN,
            i64::MAX,
            -1,
            65536,
        ]),
        1 => return elem::canon(d, rng.next_u64()),
        2 => rng.range(-40, 40),
        _ => rng.range(-2, 300),
    };
    let bits = match d.info().class {
        Class::Float => elem::float_const(d, &format!("{small}.5")),
        _ => elem::int_const(d, small as i128),
    };
    // Out of the type's range: the value wrapped into it.
    elem::canon(d, bits.unwrap_or(small as u64))
}

/// Run `kernel` on a grid of 1 to 3 blocks with random tensors (lengths rarely a multiple of a
/// tile) and scalars. `safe`: the kernel has no `unsafe`, so the undefined behaviour only
/// unsafe code can cause (an unchecked access out of bounds, distributed shared memory touched
/// before the whole cluster runs, a cluster barrier some block never reaches) is a bug.
pub fn run(kernel: &Kernel, safe: bool, rng: &mut Rng) -> EmuOutcome {
    // Storage first, then the arguments borrowing it.
    enum A {
        W8(Vec<AtomicU8>),
        W16(Vec<AtomicU16>),
        W32(Vec<AtomicU32>),
        W64(Vec<AtomicU64>),
        Scalar(u64),
    }
    let mut storage = Vec::new();
    for p in &kernel.params {
        match p.kind {
            ParamKind::Tensor(d) => {
                let len = *rng.pick(&[
                    0usize, 1, 5, 31, 33, 100, 127, 255, 257, 600, 1000, 1025, 4099,
                ]);
                let bits: Vec<u64> = (0..len).map(|_| value(d, rng)).collect();
                storage.push(match d.size_bytes() {
                    1 => A::W8(bits.iter().map(|&b| AtomicU8::new(b as u8)).collect()),
                    2 => A::W16(bits.iter().map(|&b| AtomicU16::new(b as u16)).collect()),
                    4 => A::W32(bits.iter().map(|&b| AtomicU32::new(b as u32)).collect()),
                    8 => A::W64(bits.iter().map(|&b| AtomicU64::new(b)).collect()),
                    _ => return EmuOutcome::Skipped,
                });
            }
            ParamKind::Scalar(d) => storage.push(A::Scalar(value(d, rng))),
        }
    }
    let args: Vec<EmuArg<'_>> = storage
        .iter()
        .map(|a| match a {
            A::W8(v) => EmuArg::Tensor(GlobalMem::W8(v)),
            A::W16(v) => EmuArg::Tensor(GlobalMem::W16(v)),
            A::W32(v) => EmuArg::Tensor(GlobalMem::W32(v)),
            A::W64(v) => EmuArg::Tensor(GlobalMem::W64(v)),
            A::Scalar(b) => EmuArg::Scalar(*b),
        })
        .collect();
    let grid = 1 + rng.below(3) as u32;
    let opts = EmuOptions {
        strict_scatter: rng.chance(1, 2),
        workers: 1 + rng.below(2),
        max_loop_iterations: Some(MAX_LOOP_ITERATIONS),
        check_races: rng.chance(3, 4),
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        emu::launch(kernel, grid, &args, &opts)
    }));
    match r {
        Err(payload) => EmuOutcome::Bug(format!(
            "the emulator panicked: {}",
            super::panic_message(&*payload)
        )),
        Ok(Ok(())) => EmuOutcome::Ran(None),
        Ok(Err(e)) => match e {
            EmuError::Internal { .. } | EmuError::Malformed { .. } => {
                let m = format!("emulator: {e}");
                let at = super::panic_location_of(&m).unwrap_or_default();
                EmuOutcome::Bug(format!("{m}{at}"))
            }
            EmuError::ArgCount { .. } | EmuError::ArgKind { .. } => {
                EmuOutcome::Bug(format!("fuzzer arguments rejected: {e}"))
            }
            EmuError::OutOfBounds { .. } if safe => EmuOutcome::Bug(format!(
                "a kernel without `unsafe` made an unchecked access out of bounds: {e}"
            )),
            EmuError::Cluster { ref detail, .. }
                if safe
                    && (detail.contains("before this block's first")
                        || detail.contains("already exited")) =>
            {
                EmuOutcome::Bug(format!(
                    "a kernel without `unsafe` broke the cluster rules: {e}"
                ))
            }
            // OutOfBounds, SharedRace, StepLimit, DuplicateScatter (and any later kind): the
            // kernel's own fault, which the emulator is right to report.
            other => {
                let debug = format!("{other:?}");
                let kind = debug
                    .split([' ', '{', '('])
                    .next()
                    .unwrap_or("")
                    .to_string();
                EmuOutcome::Ran(Some(kind))
            }
        },
    }
}
