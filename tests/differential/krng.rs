//! A small seedable generator per kernel (the master `common::Rng` hands out the seeds).

pub struct KRng(tilus_testkit::Rng);

impl KRng {
    pub fn new(seed: u64) -> KRng {
        // Mixed this way since the differential test began: recorded seeds keep their kernels.
        KRng(tilus_testkit::Rng::from_state(
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
        ))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo + 1) as u64)) as i64
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    /// An interesting i32: small, edge, or anything.
    pub fn value(&mut self) -> i32 {
        match self.below(10) {
            0..=5 => self.int(-1000, 1000) as i32,
            6 | 7 => self.next() as i32,
            _ => self.pick(&[
                i32::MIN,
                i32::MIN + 1,
                i32::MAX,
                i32::MAX - 1,
                -1,
                0,
                1,
                31,
                32,
                33,
            ]),
        }
    }
}
