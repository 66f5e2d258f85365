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

/// xorshift64*: small, seedable, no dependencies. The seed comes from `TILUS_SEED` or the clock.
pub struct Rng(u64);

impl Rng {
    pub fn new() -> Rng {
        let seed = std::env::var("TILUS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(7)
            });
        eprintln!("random seed: TILUS_SEED={seed}");
        Rng::with_seed(seed)
    }
    /// The generator `TILUS_SEED=seed` gives. (Open: `seed | 1` makes `2k` and `2k + 1` the
    /// same generator; see `neighbouring_seeds_give_different_generators` in
    /// tests/differential/main.rs.)
    pub fn with_seed(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..hi`.
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + (self.next_u64() % (hi as i64 - lo as i64) as u64) as i32
    }
    pub fn vec(&mut self, n: usize, lo: i32, hi: i32) -> Vec<i32> {
        (0..n).map(|_| self.range(lo, hi)).collect()
    }
}
