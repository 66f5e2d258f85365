//! Tile element storage: each element's canonical bit pattern (`crate::elem`) in a buffer of
//! the element type's width (`u8` for `bool`, `i8` and `u8`; `u32` for `i32`, `u32` and
//! `f32`; ...), so that element loops run over contiguous slices of machine words that the
//! compiler vectorises, with the element type chosen once per tile operation.

use super::global::CellWord;
use crate::elem::Elem;
use half::{bf16, f16};

/// An element buffer, by width.
#[derive(Debug, Clone)]
pub(crate) enum Buf {
    W8(Vec<u8>),
    W16(Vec<u16>),
    W32(Vec<u32>),
    W64(Vec<u64>),
}

/// A borrowed element buffer, by width.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Words<'a> {
    W8(&'a [u8]),
    W16(&'a [u16]),
    W32(&'a [u32]),
    W64(&'a [u64]),
}

/// A machine word holding one element's bit pattern in its low bits.
pub(crate) trait Word: Copy + Default + PartialEq + Ord + Send + Sync + 'static {
    /// Bytes per element.
    const WIDTH: usize;
    /// The bits, zero-extended.
    fn bits(self) -> u64;
    /// The low bits of `bits`.
    fn of(bits: u64) -> Self;
    /// The word in `b` (`Self::WIDTH` bytes), little endian.
    fn read_le(b: &[u8]) -> Self;
    /// Write the word into `b` (`Self::WIDTH` bytes), little endian.
    fn write_le(self, b: &mut [u8]);
    fn wrap(v: Vec<Self>) -> Buf;
    /// The slice, if `w` holds words of this width.
    fn slice(w: Words<'_>) -> Option<&[Self]>;
    /// This width's spare buffers.
    fn spares(p: &mut Pool) -> &mut Vec<Vec<Self>>;
}

macro_rules! word {
    ($t:ty, $v:ident, $spares:ident) => {
        impl Word for $t {
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn bits(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn of(bits: u64) -> Self {
                bits as $t
            }
            #[inline(always)]
            fn read_le(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_le_bytes(a)
            }
            #[inline(always)]
            fn write_le(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
            fn wrap(v: Vec<Self>) -> Buf {
                Buf::$v(v)
            }
            #[inline]
            fn slice(w: Words<'_>) -> Option<&[Self]> {
                match w {
                    Words::$v(s) => Some(s),
                    _ => None,
                }
            }
            fn spares(p: &mut Pool) -> &mut Vec<Vec<Self>> {
                &mut p.$spares
            }
        }
    };
}

word!(u8, W8, w8);
word!(u16, W16, w16);
word!(u32, W32, w32);
word!(u64, W64, w64);

/// Calls `$body` with `$W` bound to the word type of `$width` bytes (1, 2, 4, else 8).
macro_rules! with_word {
    ($width:expr, $W:ident => $body:expr) => {
        match $width {
            1 => {
                type $W = u8;
                $body
            }
            2 => {
                type $W = u16;
                $body
            }
            4 => {
                type $W = u32;
                $body
            }
            _ => {
                type $W = u64;
                $body
            }
        }
    };
}
pub(crate) use with_word;

/// Calls `$body` with `$T` bound to the Rust type of any element type `$d` (`bool` included):
/// `elem`'s numeric dispatch, with the `bool` arm binding `$T` too.
macro_rules! with_elem_type {
    ($d:expr, $T:ident => $body:expr) => {
        $crate::with_num_type!($d, $T => $body, bool => {
            type $T = bool;
            $body
        })
    };
}
pub(crate) use with_elem_type;

/// An element type with the word that stores it.
pub(crate) trait Stored: Elem {
    type W: CellWord;
}

macro_rules! stored {
    ($($t:ty => $w:ty),*) => {$(impl Stored for $t { type W = $w; })*};
}
stored!(bool => u8, i8 => u8, u8 => u8, i16 => u16, u16 => u16, f16 => u16, bf16 => u16,
    i32 => u32, u32 => u32, f32 => u32, i64 => u64, u64 => u64, f64 => u64);

/// The element a word holds.
#[inline(always)]
pub(crate) fn get<T: Stored>(w: T::W) -> T {
    T::from_bits(w.bits())
}

/// The word holding an element.
#[inline(always)]
pub(crate) fn put<T: Stored>(x: T) -> T::W {
    T::W::of(x.to_bits())
}

/// Spare buffers of every width, reused for new tiles.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    w8: Vec<Vec<u8>>,
    w16: Vec<Vec<u16>>,
    w32: Vec<Vec<u32>>,
    w64: Vec<Vec<u64>>,
}

/// Spare buffers kept per width; more are dropped.
const POOL_MAX: usize = 16;

impl Pool {
    /// An empty buffer, with a spare's capacity where there is one.
    pub fn take<W: Word>(&mut self) -> Vec<W> {
        let mut v = W::spares(self).pop().unwrap_or_default();
        v.clear();
        v
    }

    /// Keep a buffer that is no longer needed.
    pub fn give(&mut self, b: Buf) {
        match b {
            Buf::W8(v) => keep(&mut self.w8, v),
            Buf::W16(v) => keep(&mut self.w16, v),
            Buf::W32(v) => keep(&mut self.w32, v),
            Buf::W64(v) => keep(&mut self.w64, v),
        }
    }
}

fn keep<W>(spares: &mut Vec<Vec<W>>, v: Vec<W>) {
    if spares.len() < POOL_MAX && v.capacity() > 0 {
        spares.push(v);
    }
}

impl Buf {
    pub fn len(&self) -> usize {
        match self {
            Buf::W8(v) => v.len(),
            Buf::W16(v) => v.len(),
            Buf::W32(v) => v.len(),
            Buf::W64(v) => v.len(),
        }
    }

    pub fn words(&self) -> Words<'_> {
        match self {
            Buf::W8(v) => Words::W8(v),
            Buf::W16(v) => Words::W16(v),
            Buf::W32(v) => Words::W32(v),
            Buf::W64(v) => Words::W64(v),
        }
    }

    /// `n` copies of `bits` in `width`-byte words.
    pub fn filled(width: usize, n: usize, bits: u64, pool: &mut Pool) -> Buf {
        with_word!(width, W => {
            let mut v = pool.take::<W>();
            v.resize(n, W::of(bits));
            W::wrap(v)
        })
    }
}

impl<'a> Words<'a> {
    pub fn len(&self) -> usize {
        match self {
            Words::W8(s) => s.len(),
            Words::W16(s) => s.len(),
            Words::W32(s) => s.len(),
            Words::W64(s) => s.len(),
        }
    }

    /// Element `e`'s bits (element by element: for rare operations and messages only).
    pub fn at(&self, e: usize) -> u64 {
        let bits = match self {
            Words::W8(s) => s.get(e).map(|w| w.bits()),
            Words::W16(s) => s.get(e).map(|w| w.bits()),
            Words::W32(s) => s.get(e).map(|w| w.bits()),
            Words::W64(s) => s.get(e).map(|w| w.bits()),
        };
        bits.unwrap_or(0)
    }

    /// A copy into a buffer of the same width.
    pub fn to_buf(self, pool: &mut Pool) -> Buf {
        match self {
            Words::W8(s) => copy(s, pool),
            Words::W16(s) => copy(s, pool),
            Words::W32(s) => copy(s, pool),
            Words::W64(s) => copy(s, pool),
        }
    }
}

fn copy<W: Word>(s: &[W], pool: &mut Pool) -> Buf {
    let mut v = pool.take::<W>();
    v.extend_from_slice(s);
    W::wrap(v)
}
