//! The distribution of a tile's elements over the block's threads: the contract between the PTX
//! back end (which places elements in threads' registers) and the emulator (whose race checker
//! and float reductions follow the same placement).
//!
//! A kernel has one *vector width* `vmax` ([`vector_width`]): 16 bytes of its narrowest element
//! type in memory (4 for an all-`i32` kernel, 16 when it reads `u8`), so that every memory access
//! can move 16 bytes per thread. A tile of `n` elements on `threads` threads uses run length
//! `v`, the largest power of two up to `vmax` dividing `n` with `n >= v * threads` (else 1). Thread `t` owns the flat (row-major) indices
//! `o * threads * v + t * v + i` for `i in 0..v`, `o in 0..outer`, `outer = ceil(n / (threads * v))`;
//! slot `s = o * v + i` of the thread holds that element. Slots whose index is `>= n` do not exist
//! (only the last chunk `o = outer - 1` can be partial, and then for whole chunks of `v` at once
//! because `v` divides `n`). Nothing is replicated, so a memory operation touches each element
//! once, and the layout depends only on `n`: reshapes reinterpret registers.
//!
//! Why this layout: consecutive threads own consecutive `v`-element runs, so a warp's chunk is one
//! contiguous `32 * 4 * v`-byte span (fully coalesced), and each thread's run is one vector access.

use crate::ir::{Kernel, ParamKind};

/// The layout of one tile shape (only its element count matters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub n: usize,
    pub threads: usize,
    pub v: usize,
    pub outer: usize,
}

/// Elements per thread run in kernel `k`: 16 bytes of its narrowest element type in memory
/// (parameters and shared allocations), 4 when it has no memory of its own, at most the
/// kernel's `vector_width` option.
pub fn vector_width(k: &Kernel) -> usize {
    let natural = natural_vector_width(k);
    match k.vector_width {
        Some(v) => natural.min(v as usize),
        None => natural,
    }
}

/// [`vector_width`] without the kernel's option.
fn natural_vector_width(k: &Kernel) -> usize {
    let mut min = usize::MAX;
    for p in &k.params {
        if let ParamKind::Tensor(d) = p.kind {
            min = min.min(d.size_bytes());
        }
    }
    crate::ir::for_each_inst(&k.body, &mut |_, inst, _| {
        if let crate::ir::Inst::AllocShared { dtype, .. } = inst {
            min = min.min(dtype.size_bytes());
        }
    });
    if min == usize::MAX {
        4
    } else {
        (16 / min.max(1)).clamp(1, 16)
    }
}

impl Layout {
    /// The layout of an `n`-element tile on `threads` threads, with runs of at most `vmax`.
    pub fn new(n: usize, threads: usize, vmax: usize) -> Layout {
        let v = [16usize, 8, 4, 2, 1]
            .into_iter()
            .filter(|&v| v <= vmax.max(1))
            .find(|&v| n.checked_rem(v) == Some(0) && n >= v * threads)
            .unwrap_or(1);
        let outer = n.div_ceil(threads * v).max(1);
        Layout {
            n,
            threads,
            v,
            outer,
        }
    }

    /// Registers (slots) per thread.
    pub fn slots(&self) -> usize {
        self.v * self.outer
    }

    /// Elements covered by one chunk `o` over the whole block.
    pub fn chunk(&self) -> usize {
        self.threads * self.v
    }

    /// Flat index of slot `s` minus `tid * v` (a compile-time constant).
    pub fn slot_const(&self, s: usize) -> usize {
        (s / self.v) * self.chunk() + s % self.v
    }

    /// Whether chunk `o` exists for every thread.
    pub fn chunk_full(&self, o: usize) -> bool {
        (o + 1) * self.chunk() <= self.n
    }

    /// How many threads own chunk `o` (for a partial chunk: the existence test is `tid < this`).
    pub fn chunk_owners(&self, o: usize) -> usize {
        (self.n - o * self.chunk()).div_ceil(self.v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_each_element_once() {
        for n in [1usize, 2, 3, 16, 100, 256, 257, 1024, 4096, 4100, 6] {
            for (threads, vmax) in [(32usize, 4), (64, 16), (256, 4), (256, 16), (128, 2)] {
                let l = Layout::new(n, threads, vmax);
                let mut seen = vec![0u32; n];
                for t in 0..threads {
                    for s in 0..l.slots() {
                        let f = t * l.v + l.slot_const(s);
                        let o = s / l.v;
                        let exists = l.chunk_full(o) || t < l.chunk_owners(o);
                        assert_eq!(exists, f < n, "n={n} T={threads} v={vmax} t={t} s={s}");
                        if exists {
                            seen[f] += 1;
                        }
                    }
                }
                assert!(seen.iter().all(|&c| c == 1), "n={n} T={threads} v={vmax}");
            }
        }
        assert_eq!(
            Layout::new(4096, 256, 4),
            Layout {
                n: 4096,
                threads: 256,
                v: 4,
                outer: 4
            }
        );
        assert_eq!(Layout::new(4096, 256, 16).v, 16);
        assert_eq!(Layout::new(1, 256, 4).slots(), 1);
    }
}
