//! One small seedable random generator for every test, example and benchmark of the workspace.
//!
//! xorshift64* (Marsaglia's xorshift with a multiplicative output scramble): fast, no
//! dependencies, and good enough for test inputs. It is not for cryptography.

/// A seedable xorshift64* generator.
///
/// Every seed gives its own stream: the seed is mixed by a bijection (SplitMix64's finaliser)
/// before it becomes the state, so neighbouring seeds (`2k`, `2k + 1`) do not share a generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn with_seed(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The state must not be zero (xorshift stays at zero); one seed in 2^64 maps there.
        Rng(if z == 0 { 0x2545_f491_4f6c_dd1d } else { z })
    }

    /// The generator whose state is `state` (which must not be zero): for generators that
    /// mix their seeds their own way and must keep the streams they gave.
    pub fn from_state(state: u64) -> Rng {
        assert_ne!(state, 0, "xorshift's state must not be zero");
        Rng(state)
    }

    /// A generator seeded from `TILUS_SEED` if it is set, else from the clock; the seed is
    /// printed to standard error, so that a failure can be replayed with `TILUS_SEED=...`.
    pub fn from_env_or_clock() -> Rng {
        let seed = std::env::var("TILUS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(clock_seed);
        eprintln!("random seed: TILUS_SEED={seed}");
        Rng::with_seed(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`), without the bias of `%` (multiply-shift on 32 bits).
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= u32::MAX as u64 {
            ((self.next_u64() >> 32) * n) >> 32
        } else {
            self.next_u64() % n
        }
    }

    /// Uniform in `lo..hi` (`lo < hi`).
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi as i64 - lo as i64) as u64) as i32
    }

    /// `n` values uniform in `lo..hi`.
    pub fn vec(&mut self, n: usize, lo: i32, hi: i32) -> Vec<i32> {
        (0..n).map(|_| self.range(lo, hi)).collect()
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
}

#[cfg(test)]
mod tests {
    use super::Rng;

    /// The seeds the GPU runs used (`2k`) and their neighbours (`2k + 1`) give different streams.
    #[test]
    fn neighbouring_seeds_give_different_generators() {
        for seed in [0, 1_795_700_000_000_000_000, u64::MAX - 1] {
            let (mut a, mut b) = (Rng::with_seed(seed), Rng::with_seed(seed + 1));
            assert_ne!(a.next_u64(), b.next_u64(), "seed {seed}");
        }
    }

    #[test]
    fn draws_stay_in_their_ranges() {
        let mut r = Rng::with_seed(3);
        let mut seen = [false; 7];
        for _ in 0..10_000 {
            let v = r.range(-3, 4);
            assert!((-3..4).contains(&v));
            seen[(v + 3) as usize] = true;
            assert!(r.below(1 << 40) < 1 << 40);
        }
        assert!(
            seen.iter().all(|&s| s),
            "every value of -3..4 drawn: {seen:?}"
        );
    }
}
