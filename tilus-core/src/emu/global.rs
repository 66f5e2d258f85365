//! Global memory of the emulator: one atomic cell per element, of the element's width.
//!
//! Kernels of many blocks run on several host threads at once, so every access to global memory
//! is atomic (weak loads and stores are `Relaxed`). A tensor has one element type, so all
//! accesses to one cell have one width (no mixed-size atomics).

use super::buf::Word;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The memory of one tensor argument, by element width.
#[derive(Debug, Clone, Copy)]
pub enum GlobalMem<'a> {
    W8(&'a [AtomicU8]),
    W16(&'a [AtomicU16]),
    W32(&'a [AtomicU32]),
    W64(&'a [AtomicU64]),
}

macro_rules! on_cells {
    ($m:expr, $c:ident => $body:expr) => {
        match $m {
            GlobalMem::W8($c) => $body,
            GlobalMem::W16($c) => $body,
            GlobalMem::W32($c) => $body,
            GlobalMem::W64($c) => $body,
        }
    };
}

impl<'a> GlobalMem<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        on_cells!(self, c => c.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes per element.
    pub fn width(&self) -> usize {
        match self {
            GlobalMem::W8(_) => 1,
            GlobalMem::W16(_) => 2,
            GlobalMem::W32(_) => 4,
            GlobalMem::W64(_) => 8,
        }
    }
    /// The host address of element `i` (a name for the location, also across aliasing
    /// arguments).
    pub fn cell_addr(&self, i: usize) -> usize {
        on_cells!(self, c => c.as_ptr() as usize) + i * self.width()
    }
    /// The first byte of the cells, writable through the atomics' interior mutability (for
    /// a copy that has the memory to itself; see [`GlobalMem::copy_from`]).
    fn first_byte(&self) -> *mut u8 {
        on_cells!(self, c => c.as_ptr() as *mut u8)
    }
    /// Whether two arguments are the same memory.
    pub fn same(&self, other: &GlobalMem<'_>) -> bool {
        let addr = |m: &GlobalMem<'_>| on_cells!(m, c => (c.as_ptr() as usize, c.len()));
        self.width() == other.width() && addr(self) == addr(other)
    }

    #[inline(always)]
    pub fn load(&self, i: usize, o: Ordering) -> u64 {
        match self {
            GlobalMem::W8(c) => c[i].load(o) as u64,
            GlobalMem::W16(c) => c[i].load(o) as u64,
            GlobalMem::W32(c) => c[i].load(o) as u64,
            GlobalMem::W64(c) => c[i].load(o),
        }
    }
    #[inline(always)]
    pub fn store(&self, i: usize, v: u64, o: Ordering) {
        match self {
            GlobalMem::W8(c) => c[i].store(v as u8, o),
            GlobalMem::W16(c) => c[i].store(v as u16, o),
            GlobalMem::W32(c) => c[i].store(v as u32, o),
            GlobalMem::W64(c) => c[i].store(v, o),
        }
    }
    /// Wrapping add of the low bits of `v`; returns the old value.
    #[inline(always)]
    pub fn fetch_add(&self, i: usize, v: u64, o: Ordering) -> u64 {
        match self {
            GlobalMem::W8(c) => c[i].fetch_add(v as u8, o) as u64,
            GlobalMem::W16(c) => c[i].fetch_add(v as u16, o) as u64,
            GlobalMem::W32(c) => c[i].fetch_add(v as u32, o) as u64,
            GlobalMem::W64(c) => c[i].fetch_add(v, o),
        }
    }
    #[inline(always)]
    pub fn swap(&self, i: usize, v: u64, o: Ordering) -> u64 {
        match self {
            GlobalMem::W8(c) => c[i].swap(v as u8, o) as u64,
            GlobalMem::W16(c) => c[i].swap(v as u16, o) as u64,
            GlobalMem::W32(c) => c[i].swap(v as u32, o) as u64,
            GlobalMem::W64(c) => c[i].swap(v, o),
        }
    }
    /// Compare-and-swap; returns the old value whether or not it matched.
    #[inline(always)]
    pub fn cas(&self, i: usize, cmp: u64, new: u64, o: Ordering, fail: Ordering) -> u64 {
        match self {
            GlobalMem::W8(c) => c[i]
                .compare_exchange(cmp as u8, new as u8, o, fail)
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W16(c) => c[i]
                .compare_exchange(cmp as u16, new as u16, o, fail)
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W32(c) => c[i]
                .compare_exchange(cmp as u32, new as u32, o, fail)
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W64(c) => c[i]
                .compare_exchange(cmp, new, o, fail)
                .unwrap_or_else(|x| x),
        }
    }
    /// An atomic read-modify-write computing the new value from the old one (a CAS loop, for
    /// operations the host has no instruction for); returns the old value.
    #[inline(always)]
    pub fn update(
        &self,
        i: usize,
        o: Ordering,
        fail: Ordering,
        mut f: impl FnMut(u64) -> u64,
    ) -> u64 {
        match self {
            GlobalMem::W8(c) => c[i]
                .fetch_update(o, fail, |x| Some(f(x as u64) as u8))
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W16(c) => c[i]
                .fetch_update(o, fail, |x| Some(f(x as u64) as u16))
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W32(c) => c[i]
                .fetch_update(o, fail, |x| Some(f(x as u64) as u32))
                .unwrap_or_else(|x| x) as u64,
            GlobalMem::W64(c) => c[i]
                .fetch_update(o, fail, |x| Some(f(x)))
                .unwrap_or_else(|x| x),
        }
    }
}

/// Who may be touching device memory: every launch, upload and download holds it shared for
/// as long as it runs; a device copy that finds nobody holding it takes it exclusively and
/// copies bytes (`memcpy`) instead of one relaxed atomic per element, which the compiler can
/// neither vectorise nor batch (0.55-0.76 of `memcpy` on the project's 2-core VM). Nothing is
/// ever made to wait for the exclusive side (it is only tried), so a kernel that waits on a
/// copy from another host thread still sees it: that copy takes the shared side. Host-mapped
/// memory is outside this rule (the host reaches it through [`GlobalMem::store`] at any time)
/// and is never copied as bytes.
static MEMORY: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Shared access to device memory (see [`MEMORY`]); held by a launch for its whole run.
pub(crate) fn shared_access() -> std::sync::RwLockReadGuard<'static, ()> {
    // A poisoned lock only means a panic elsewhere; the lock protects no data.
    MEMORY
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Exclusive access to device memory, if nobody is using it now (never waits).
fn exclusive_access() -> Option<std::sync::RwLockWriteGuard<'static, ()>> {
    match MEMORY.try_write() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Bulk copies between host values and emulator memory (uploads, downloads, device copies):
/// one loop of relaxed loads or stores over cells of one width, chosen once (the cells are
/// atomics because kernels may run on other host threads at the same time; a relaxed access
/// compiles to a plain one), or a `memcpy` for a device copy with exclusive access.
impl GlobalMem<'_> {
    /// Store the bit patterns (`bits(v)`) of `values` into elements `0..values.len()` (at most
    /// `len()`).
    pub fn store_values<T: Copy>(&self, values: &[T], bits: impl Fn(T) -> u64) {
        let _shared = shared_access();
        fn go<W: CellWord, T: Copy>(cells: &[W::C], values: &[T], bits: impl Fn(T) -> u64) {
            cells
                .iter()
                .zip(values)
                .for_each(|(c, &v)| c.set(W::of(bits(v)), Ordering::Relaxed));
        }
        match self {
            GlobalMem::W8(c) => go::<u8, T>(c, values, bits),
            GlobalMem::W16(c) => go::<u16, T>(c, values, bits),
            GlobalMem::W32(c) => go::<u32, T>(c, values, bits),
            GlobalMem::W64(c) => go::<u64, T>(c, values, bits),
        }
    }

    /// Load elements `0..out.len()` (at most `len()`) into `out`, each through `value(bits)`.
    pub fn load_values<T>(&self, out: &mut [T], value: impl Fn(u64) -> T) {
        let _shared = shared_access();
        fn go<W: CellWord, T>(cells: &[W::C], out: &mut [T], value: impl Fn(u64) -> T) {
            out.iter_mut()
                .zip(cells)
                .for_each(|(v, c)| *v = value(c.get(Ordering::Relaxed).bits()));
        }
        match self {
            GlobalMem::W8(c) => go::<u8, T>(c, out, value),
            GlobalMem::W16(c) => go::<u16, T>(c, out, value),
            GlobalMem::W32(c) => go::<u32, T>(c, out, value),
            GlobalMem::W64(c) => go::<u64, T>(c, out, value),
        }
    }

    /// Exclusive access to device memory for a byte copy of all `bytes` of these cells, when
    /// nobody else uses device memory now and the cells are not host-mapped (see `MEMORY`).
    fn for_bytes(&self, bytes: usize) -> Option<std::sync::RwLockWriteGuard<'static, ()>> {
        let start = self.cell_addr(0);
        if bytes != self.len() * self.width() || super::host::touches_mapped(start, start + bytes) {
            return None;
        }
        exclusive_access()
    }

    /// Copy the cells' bytes (each element's bit pattern, as [`GlobalMem::load_values`] reads
    /// it) into `out`, initialised or not, without atomics, if `out` has exactly
    /// `len() * width()` bytes, device memory is free now and the cells are not host-mapped;
    /// whether it did.
    pub fn try_read_bytes(&self, out: &mut [std::mem::MaybeUninit<u8>]) -> bool {
        let Some(_exclusive) = self.for_bytes(out.len()) else {
            return false;
        };
        // SAFETY: `out.len()` bytes of live cells; with `MEMORY` held exclusively and the
        // cells not host-mapped, nothing writes them meanwhile. `out` is a distinct, exclusive
        // borrow.
        unsafe {
            std::ptr::copy_nonoverlapping(self.first_byte(), out.as_mut_ptr().cast(), out.len())
        };
        true
    }

    /// Overwrite the cells with `data` (each element's bit pattern) without atomics, under the
    /// same conditions as [`GlobalMem::try_read_bytes`]; whether it did.
    pub fn try_write_bytes(&self, data: &[u8]) -> bool {
        let Some(_exclusive) = self.for_bytes(data.len()) else {
            return false;
        };
        // SAFETY: as in `try_read_bytes`: nothing else accesses the cells meanwhile, and `data`
        // is host memory, not cells.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.first_byte(), data.len()) };
        true
    }

    /// Copy `src` into this memory (the first `min(len)` elements; of one width), as `memmove`
    /// does when the two overlap: from the front when this memory starts first, else from the
    /// back, so that every element is read before it is overwritten.
    pub fn copy_from(&self, src: &GlobalMem<'_>) {
        let n = self.len().min(src.len());
        let bytes = n * self.width();
        let mapped =
            |m: &GlobalMem<'_>| super::host::touches_mapped(m.cell_addr(0), m.cell_addr(0) + bytes);
        if self.width() == src.width() && !mapped(self) && !mapped(src) {
            if let Some(_exclusive) = exclusive_access() {
                // SAFETY: both ranges are `bytes` long inside live cell slices of one width;
                // with `MEMORY` held exclusively no launch, upload, download or other copy
                // touches device memory, and neither range is host-mapped, so nothing else
                // accesses these cells while they are copied without atomics. `copy` is
                // `memmove`: an overlap is copied as the element loop below would.
                unsafe {
                    std::ptr::copy(src.first_byte(), self.first_byte(), bytes);
                }
                return;
            }
        }
        let _shared = shared_access();
        fn go<W: CellWord>(dst: &[W::C], src: &[W::C]) {
            let o = Ordering::Relaxed;
            let pairs = dst.iter().zip(src);
            if dst.as_ptr() as usize <= src.as_ptr() as usize {
                pairs.for_each(|(d, s)| d.set(s.get(o), o));
            } else {
                pairs.rev().for_each(|(d, s)| d.set(s.get(o), o));
            }
        }
        match (self, src) {
            (GlobalMem::W8(d), GlobalMem::W8(s)) => go::<u8>(d, s),
            (GlobalMem::W16(d), GlobalMem::W16(s)) => go::<u16>(d, s),
            (GlobalMem::W32(d), GlobalMem::W32(s)) => go::<u32>(d, s),
            (GlobalMem::W64(d), GlobalMem::W64(s)) => go::<u64>(d, s),
            _ => {
                // Different widths: element by element through a snapshot.
                let n = self.len().min(src.len());
                let vals: Vec<u64> = (0..n).map(|i| src.load(i, Ordering::Relaxed)).collect();
                vals.into_iter()
                    .enumerate()
                    .for_each(|(i, v)| self.store(i, v, Ordering::Relaxed));
            }
        }
    }
}

/// Locks serialising the 128-bit atomics of the emulator, striped by 16-byte chunk (the host
/// has no portable 128-bit atomic on two `AtomicU64` cells). Every 128-bit atomic takes the lock
/// of its pair, so they are atomic towards each other; in a kernel that has 128-bit atomics,
/// every 64-bit write to global memory takes the lock of its chunk too
/// ([`GlobalMem::chunk_lock`]), so that no write falls between a pair's read and its write.
static PAIR_LOCKS: [std::sync::Mutex<()>; 64] = [const { std::sync::Mutex::new(()) }; 64];

impl GlobalMem<'_> {
    /// The lock of the 16-byte chunk holding element `i` of 64-bit memory (`None` for other
    /// widths, whose elements no 128-bit atomic touches, or past the end).
    pub fn chunk_lock(&self, i: usize) -> Option<std::sync::MutexGuard<'static, ()>> {
        let GlobalMem::W64(c) = self else {
            return None;
        };
        let stripe = (c.get(i)? as *const AtomicU64 as usize >> 4) % PAIR_LOCKS.len();
        // A poisoned lock only means another block's thread panicked; the cells are intact.
        Some(PAIR_LOCKS[stripe].lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A 128-bit read-modify-write of elements `i` and `i + 1` (64-bit cells, `i` 16-byte
    /// aligned): `new` computes the pair stored from the old one (or `None` to leave it);
    /// returns the old pair.
    pub fn pair_update(
        &self,
        i: usize,
        load: Ordering,
        store: Ordering,
        new: impl FnOnce((u64, u64)) -> Option<(u64, u64)>,
    ) -> (u64, u64) {
        let GlobalMem::W64(c) = self else {
            return (0, 0);
        };
        let (Some(lo), Some(hi)) = (c.get(i), c.get(i + 1)) else {
            return (0, 0);
        };
        let _held = self.chunk_lock(i);
        let old = (lo.load(load), hi.load(load));
        if let Some((l, h)) = new(old) {
            lo.store(l, store);
            hi.store(h, store);
        }
        old
    }
}

/// A host atomic cell of one width, for loops typed by their element width.
pub(crate) trait Cell: Sync {
    type W: Word;
    fn get(&self, o: Ordering) -> Self::W;
    fn set(&self, v: Self::W, o: Ordering);
    /// Wrapping add; returns the old value.
    fn add(&self, v: Self::W, o: Ordering) -> Self::W;
    fn swap(&self, v: Self::W, o: Ordering) -> Self::W;
    /// Compare-and-swap; returns the old value whether or not it matched.
    fn cas(&self, cmp: Self::W, new: Self::W, o: Ordering, fail: Ordering) -> Self::W;
    /// A compare-and-swap loop storing `f(old)`; returns the old value.
    fn update(&self, o: Ordering, fail: Ordering, f: impl FnMut(Self::W) -> Self::W) -> Self::W;
}

/// A word type with its atomic cell, and the cells of a tensor of that width.
pub(crate) trait CellWord: Word {
    type C: Cell<W = Self>;
    /// The cells of `m`, if its elements are of this width.
    fn cells(m: GlobalMem<'_>) -> Option<&[Self::C]>;
}

macro_rules! cell {
    ($a:ty, $w:ty, $v:ident) => {
        impl Cell for $a {
            type W = $w;
            #[inline(always)]
            fn get(&self, o: Ordering) -> $w {
                self.load(o)
            }
            #[inline(always)]
            fn set(&self, v: $w, o: Ordering) {
                self.store(v, o)
            }
            #[inline(always)]
            fn add(&self, v: $w, o: Ordering) -> $w {
                self.fetch_add(v, o)
            }
            #[inline(always)]
            fn swap(&self, v: $w, o: Ordering) -> $w {
                <$a>::swap(self, v, o)
            }
            #[inline(always)]
            fn cas(&self, cmp: $w, new: $w, o: Ordering, fail: Ordering) -> $w {
                self.compare_exchange(cmp, new, o, fail)
                    .unwrap_or_else(|x| x)
            }
            #[inline(always)]
            fn update(&self, o: Ordering, fail: Ordering, mut f: impl FnMut($w) -> $w) -> $w {
                self.fetch_update(o, fail, |x| Some(f(x)))
                    .unwrap_or_else(|x| x)
            }
        }
        impl CellWord for $w {
            type C = $a;
            #[inline]
            fn cells(m: GlobalMem<'_>) -> Option<&[$a]> {
                match m {
                    GlobalMem::$v(c) => Some(c),
                    _ => None,
                }
            }
        }
    };
}

cell!(AtomicU8, u8, W8);
cell!(AtomicU16, u16, W16);
cell!(AtomicU32, u32, W32);
cell!(AtomicU64, u64, W64);

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(xs: &[u32]) -> Vec<AtomicU32> {
        xs.iter().map(|&x| AtomicU32::new(x)).collect()
    }

    fn values(c: &[AtomicU32]) -> Vec<u32> {
        let mut out = vec![0; c.len()];
        GlobalMem::W32(c).load_values(&mut out, |b| b as u32);
        out
    }

    /// Copies between overlapping parts of one buffer move the data as `memmove` does.
    #[test]
    fn overlapping_copies_are_memmoves() {
        let data: Vec<u32> = (0..10).collect();
        for (from, to, len) in [(0, 3, 7), (3, 0, 7), (2, 4, 5), (4, 2, 5), (1, 1, 9)] {
            let c = cells(&data);
            let (src, dst) = (
                GlobalMem::W32(&c[from..from + len]),
                GlobalMem::W32(&c[to..to + len]),
            );
            dst.copy_from(&src);
            let mut want = data.clone();
            want.copy_within(from..from + len, to);
            assert_eq!(values(&c), want, "from {from} to {to}, {len} elements");
        }
    }

    #[test]
    fn values_go_in_and_out_as_bit_patterns() {
        let c = cells(&[0; 4]);
        let m = GlobalMem::W32(&c);
        m.store_values(&[1.5f32, -2.0, 0.0, f32::MAX], |v| v.to_bits() as u64);
        let mut out = [0f32; 4];
        m.load_values(&mut out, |b| f32::from_bits(b as u32));
        assert_eq!(out, [1.5, -2.0, 0.0, f32::MAX]);
    }
}
