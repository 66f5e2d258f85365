//! Shared helpers of the integration tests: the backends to run on, PTX assembly checks, and a
//! seeded random generator (fresh seed per run, printed so a failure can be replayed).
#![allow(dead_code)]

use tilus::core::emu::EmuOptions;
use tilus::Device;

/// The strict emulator used by tests: duplicate indices in a non-atomic scatter are errors,
/// shared-memory races (a missing `sync()`) are errors, and a spin that never ends fails (after
/// 2^24 loop iterations) instead of hanging.
pub fn emulator() -> Device {
    Device::emulator_with(EmuOptions {
        strict_scatter: true,
        check_races: true,
        max_loop_iterations: Some(1 << 24),
        ..EmuOptions::default()
    })
}

/// The GPU, when built with `--features cuda` and one is present. With `TILUS_REQUIRE_GPU=1`
/// (set by the GPU runner) a missing GPU is a test failure, not a skip.
pub fn gpu() -> Option<Device> {
    let required = std::env::var("TILUS_REQUIRE_GPU").is_ok_and(|v| v == "1");
    #[cfg(feature = "cuda")]
    {
        match Device::cuda(0) {
            Ok(d) => return Some(d),
            Err(e) if required => panic!("TILUS_REQUIRE_GPU=1 but no GPU: {e}"),
            Err(_) => return None,
        }
    }
    #[allow(unreachable_code)]
    {
        assert!(
            !required,
            "TILUS_REQUIRE_GPU=1 but this test binary was built without `--features cuda`"
        );
        None
    }
}

/// Every backend a test should agree on: the strict emulator, then the GPU if there is one.
pub fn backends() -> Vec<Device> {
    let mut v = vec![emulator()];
    v.extend(gpu());
    v
}

/// Assemble `ptx` with ptxas for every architecture from the kernel's target up among sm_70,
/// sm_80 and sm_90. A missing ptxas is a failure under `CI=true` or `TILUS_REQUIRE_PTXAS=1`.
pub fn assemble_all(name: &str, ptx: &str, target: u32) {
    for sm in [70, 80, 90] {
        if sm < target {
            continue;
        }
        match tilus_testkit::ptxas::assemble(ptx, sm) {
            Ok(_) => {}
            Err(e) => {
                panic!("ptxas rejected kernel `{name}` for sm_{sm}:\n{e}\n--- PTX ---\n{ptx}")
            }
        }
    }
}

/// `kernels![a, b]`: each `#[tile_kernel]`'s name, PTX and target, `[("a", a::PTX,
/// a::TARGET), ..]`, for the checks that go over every kernel of a test.
#[allow(unused_macros)] // not every test binary lists its kernels
macro_rules! kernels {
    ($($k:ident),* $(,)?) => {
        [$((stringify!($k), $k::PTX, $k::TARGET)),*]
    };
}
#[allow(unused_imports)] // not every test binary lists its kernels
pub(crate) use kernels;

#[allow(unused_imports)] // not every test binary draws random numbers
pub use tilus_testkit::Rng;

/// Whether a PTX line compares a register with the constant `len` (`setp.lt.u32 %p, %r, len;`):
/// the bounds test of an index into a tensor of `len` elements.
pub fn is_bound_test(line: &str, len: usize) -> bool {
    line.contains("setp.lt.u32") && line.trim_end().ends_with(&format!(", {len};"))
}

/// Bound tests against `len` in one instruction of `ptx`: from the first comment line `at`
/// accepts (the emitter writes one before each instruction) to the next comment.
pub fn bound_tests_at(ptx: &str, at: impl Fn(&str) -> bool, len: usize) -> usize {
    let mut lines = ptx.lines().skip_while(|l| !at(l));
    assert!(lines.next().is_some(), "no such instruction in\n{ptx}");
    lines
        .take_while(|l| !l.trim_start().starts_with("//"))
        .filter(|l| is_bound_test(l, len))
        .count()
}

/// The places of a stable counting sort (`Tile::place`): `starts[v]` (0 where `v` is outside
/// them) plus each element's rank among the equal ones counted before it, wrapping as `i32`.
pub fn places_from<E: Copy + Into<i128>>(x: &[E], ranks: &[i32], starts: &[i32]) -> Vec<i32> {
    x.iter()
        .zip(ranks)
        .map(|(&v, &r)| {
            let s = usize::try_from(v.into())
                .ok()
                .and_then(|i| starts.get(i))
                .copied()
                .unwrap_or(0);
            s.wrapping_add(r)
        })
        .collect()
}

/// `n` counting-sort starts, large and every fifth near `i32::MAX`, so that places wrap.
pub fn wrapping_starts(rng: &mut Rng, n: usize) -> Vec<i32> {
    (0..n)
        .map(|i| match i % 5 {
            0 => i32::MAX - rng.range(0, 100),
            _ => rng.range(-1_000_000, 1_000_000),
        })
        .collect()
}
