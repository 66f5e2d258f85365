//! Element types as data.
//!
//! One row per element type in [`ROWS`], indexed by the type: its name in the language, its
//! class, size, the PTX types of a memory access and of arithmetic, the register class that holds
//! it, and how it is computed. The front end, the legality table, the PTX generator, the emulator
//! and the runtime all read these rows; adding a type is adding a row (and its host type in the
//! runtime), not a hunt through `match` arms.
//!
//! How values are kept (the contract between the rows and the back ends):
//! * integers narrower than 32 bits live in 32-bit registers, normalised (sign- or zero-extended
//!   from their width) after every operation, and are computed in 32-bit arithmetic;
//! * `f16`/`bf16` live in 16-bit registers and are computed in `f32`, rounding the result to
//!   nearest even: for `+ - * /` and `sqrt` this is the correctly rounded result (the `f32`
//!   significand is more than twice as wide, so the double rounding is exact);
//! * `bool` lives in predicates, and as one byte (0 or 1) in memory.

use serde::{Deserialize, Serialize};

/// An element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

/// What kind of number a type holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Bool,
    Signed,
    Unsigned,
    Float,
}

/// The PTX register class holding one element (Dr.Jit's `type_name_ptx`/prefix tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegClass {
    /// `%p`: predicates.
    Pred,
    /// `%rs`: 16-bit values (`f16`, `bf16`).
    B16,
    /// `%r`: 32-bit integers (and narrower ones, widened).
    B32,
    /// `%rd`: 64-bit integers and addresses.
    B64,
    /// `%f`: `f32`.
    F32,
    /// `%fd`: `f64`.
    F64,
    /// `%rq`: 128-bit operands of the pair atomics (`atom.cas.b128`); no element type's class.
    B128,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    pub dtype: DType,
    /// The name in the language and in Rust (`i32`, `bf16`).
    pub name: &'static str,
    pub class: Class,
    /// Value bits (1 for `bool`).
    pub bits: u32,
    /// Bytes in memory.
    pub size: usize,
    /// Register class of a value.
    pub reg: RegClass,
    /// PTX type of a load or store of one element (`ld.global.u8`).
    pub mem: &'static str,
    /// PTX bit type of the element's width (`cas`, `exch`, moves).
    pub bit: &'static str,
    /// The type arithmetic on this type is carried out in (`i8` → `i32`, `f16` → `f32`).
    pub compute: DType,
    /// PTX type suffix of arithmetic in `compute` (`s32`, `u64`, `f32`).
    pub arith: &'static str,
}

#[allow(clippy::too_many_arguments)] // one table row, read as columns
const fn row(
    dtype: DType,
    name: &'static str,
    class: Class,
    bits: u32,
    size: usize,
    reg: RegClass,
    mem: &'static str,
    bit: &'static str,
    compute: DType,
    arith: &'static str,
) -> Info {
    Info {
        dtype,
        name,
        class,
        bits,
        size,
        reg,
        mem,
        bit,
        compute,
        arith,
    }
}

use Class::*;
use DType as D;
use RegClass as R;

/// The rows, in the order of [`DType`]'s variants.
#[rustfmt::skip]
pub const ROWS: [Info; 13] = [
    //    dtype    name    class     bits size reg     mem    bit    compute  arith
    row(D::Bool, "bool", Bool,        1, 1, R::Pred, "u8",  "b8",  D::Bool, "pred"),
    row(D::I8,   "i8",   Signed,      8, 1, R::B32,  "s8",  "b8",  D::I32,  "s32"),
    row(D::U8,   "u8",   Unsigned,    8, 1, R::B32,  "u8",  "b8",  D::U32,  "u32"),
    row(D::I16,  "i16",  Signed,     16, 2, R::B32,  "s16", "b16", D::I32,  "s32"),
    row(D::U16,  "u16",  Unsigned,   16, 2, R::B32,  "u16", "b16", D::U32,  "u32"),
    row(D::I32,  "i32",  Signed,     32, 4, R::B32,  "s32", "b32", D::I32,  "s32"),
    row(D::U32,  "u32",  Unsigned,   32, 4, R::B32,  "u32", "b32", D::U32,  "u32"),
    row(D::I64,  "i64",  Signed,     64, 8, R::B64,  "s64", "b64", D::I64,  "s64"),
    row(D::U64,  "u64",  Unsigned,   64, 8, R::B64,  "u64", "b64", D::U64,  "u64"),
    row(D::F16,  "f16",  Float,      16, 2, R::B16,  "b16", "b16", D::F32,  "f32"),
    row(D::BF16, "bf16", Float,      16, 2, R::B16,  "b16", "b16", D::F32,  "f32"),
    row(D::F32,  "f32",  Float,      32, 4, R::F32,  "f32", "b32", D::F32,  "f32"),
    row(D::F64,  "f64",  Float,      64, 8, R::F64,  "f64", "b64", D::F64,  "f64"),
];

impl DType {
    /// Every type, in table order.
    pub const ALL: [DType; 13] = [
        D::Bool,
        D::I8,
        D::U8,
        D::I16,
        D::U16,
        D::I32,
        D::U32,
        D::I64,
        D::U64,
        D::F16,
        D::BF16,
        D::F32,
        D::F64,
    ];

    /// This type's row.
    #[inline]
    pub fn info(self) -> &'static Info {
        &ROWS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.info().name
    }
    /// The type named `name` in the language (`"u8"`), if any.
    pub fn from_name(name: &str) -> Option<DType> {
        ROWS.iter().find(|r| r.name == name).map(|r| r.dtype)
    }
    /// Size in bytes in memory.
    pub fn size_bytes(self) -> usize {
        self.info().size
    }
    pub fn bits(self) -> u32 {
        self.info().bits
    }
    pub fn class(self) -> Class {
        self.info().class
    }
    pub fn is_float(self) -> bool {
        self.class() == Class::Float
    }
    pub fn is_int(self) -> bool {
        matches!(self.class(), Class::Signed | Class::Unsigned)
    }
    pub fn is_signed(self) -> bool {
        self.class() == Class::Signed
    }
    pub fn is_bool(self) -> bool {
        self == D::Bool
    }
    /// Integers and floats (what arithmetic operators apply to).
    pub fn is_numeric(self) -> bool {
        self.is_int() || self.is_float()
    }
    /// Whether every value of this type is exactly a value of `to` (Rust's `From` between
    /// primitive types: `i32` → `i64`, `u8` → `i16`, `u16` → `f32`, `f32` → `f64`,
    /// `bool` → integers), so that `as to` loses nothing.
    pub fn widens_to(self, to: DType) -> bool {
        let (a, b) = (self.info(), to.info());
        match (a.class, b.class) {
            _ if self == to => true,
            (Class::Bool, Class::Signed | Class::Unsigned) => true,
            (Class::Signed, Class::Signed) | (Class::Unsigned, Class::Unsigned) => a.bits < b.bits,
            (Class::Unsigned, Class::Signed) => a.bits < b.bits,
            // Integers whose magnitude fits a float's significand (11 bits for f16, 8 for
            // bf16, 24, 53).
            (Class::Unsigned, Class::Float) => a.bits <= to.significand_bits(),
            (Class::Signed, Class::Float) => a.bits - 1 <= to.significand_bits(),
            // bf16 and f16 widen to f32 and f64, not into each other.
            (Class::Float, Class::Float) => a.bits < b.bits && b.bits > 16,
            _ => false,
        }
    }
    /// Bits of a float's significand, the implicit bit included (0 for other types).
    pub fn significand_bits(self) -> u32 {
        match self {
            D::F16 => 11,
            D::BF16 => 8,
            D::F32 => 24,
            D::F64 => 53,
            _ => 0,
        }
    }
    /// The smallest and the largest value of an integer type (`(0, 1)` for `bool`, `(0, 0)`
    /// for floats, which have no integer range).
    pub fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        match self.class() {
            Class::Signed => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            Class::Unsigned => (0, (1i128 << bits) - 1),
            Class::Bool => (0, 1),
            Class::Float => (0, 0),
        }
    }
    /// The largest value of an integer type, as a `u64` (0 for other types).
    pub fn int_max(self) -> u64 {
        if self.is_int() {
            self.int_range().1 as u64
        } else {
            0
        }
    }
    /// The unsigned integer type of this integer type's width (itself for the others).
    pub fn unsigned(self) -> DType {
        match self {
            D::I8 => D::U8,
            D::I16 => D::U16,
            D::I32 => D::U32,
            D::I64 => D::U64,
            d => d,
        }
    }
    /// The unsigned integer type holding this type's bits (`f32` → `u32`; `bool` → `u8`).
    pub fn bits_type(self) -> DType {
        match self.size_bytes() {
            1 => D::U8,
            2 => D::U16,
            4 => D::U32,
            _ => D::U64,
        }
    }
    /// The sign bit of a signed or float type, as a bit pattern.
    pub fn sign_bit(self) -> u64 {
        1u64 << (self.bits() - 1)
    }
    /// A float computed in a wider one (`f16` and `bf16`, in `f32`): values are widened before
    /// arithmetic and rounded back after it.
    pub fn is_half_float(self) -> bool {
        self.is_float() && self.info().compute != self
    }
    /// The mask of the value bits in a bit pattern of this type.
    pub fn mask(self) -> u64 {
        match self.bits() {
            64 => u64::MAX,
            b => (1u64 << b) - 1,
        }
    }
}

impl Info {
    /// The PTX type of a register-to-register move of a value (`mov.f32`, `mov.b32`).
    pub fn mov_type(&self) -> &'static str {
        match self.reg {
            RegClass::F32 => "f32",
            RegClass::F64 => "f64",
            _ => self.bit_reg(),
        }
    }
    /// The bit type of the register holding a value (`b32` for narrow integers, which are
    /// widened; `pred` for bool).
    pub fn bit_reg(&self) -> &'static str {
        match self.reg {
            RegClass::Pred => "pred",
            RegClass::B16 => "b16",
            RegClass::B32 | RegClass::F32 => "b32",
            RegClass::B64 | RegClass::F64 => "b64",
            RegClass::B128 => "b128",
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_facts_follow_the_rows() {
        use DType::*;
        assert_eq!(I8.int_range(), (-128, 127));
        assert_eq!(U16.int_range(), (0, 65535));
        assert_eq!(I64.int_max(), i64::MAX as u64);
        assert_eq!(U64.int_max(), u64::MAX);
        assert_eq!(F32.int_max(), 0);
        assert_eq!(
            (I32.unsigned(), U8.unsigned(), F32.unsigned()),
            (U32, U8, F32)
        );
        assert_eq!(
            (F32.bits_type(), BF16.bits_type(), Bool.bits_type()),
            (U32, U16, U8)
        );
        assert_eq!(F16.sign_bit(), 0x8000);
        let halves: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| d.is_half_float())
            .collect();
        assert_eq!(halves, [F16, BF16]);
        assert_eq!(
            (
                F32.info().mov_type(),
                F16.info().mov_type(),
                I64.info().mov_type()
            ),
            ("f32", "b16", "b64")
        );
    }

    #[test]
    fn widening_follows_rusts_from() {
        use DType::*;
        let widens = [
            (I32, I64),
            (U32, I64),
            (U32, U64),
            (U8, I16),
            (Bool, I32),
            (I16, F32),
            (U16, F32),
            (I32, F64),
            (F16, F32),
            (BF16, F64),
            (F32, F64),
            (I8, F16),
            (U8, BF16),
        ];
        for (a, b) in widens {
            assert!(a.widens_to(b), "{a} -> {b}");
        }
        let narrows = [
            (I64, I32),
            (I32, U64),
            (U64, I64),
            (I32, F32),
            (F16, BF16),
            (BF16, F16),
            (F64, F32),
            (I16, F16),
            (U16, BF16),
            (F32, I64),
            (I32, Bool),
        ];
        for (a, b) in narrows {
            assert!(!a.widens_to(b), "{a} -> {b}");
        }
    }

    #[test]
    fn rows_are_indexed_by_their_type() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(ROWS[i].dtype, *d);
            assert_eq!(*d as usize, i);
            assert_eq!(DType::from_name(d.name()), Some(*d));
            assert!(d.size_bytes() * 8 >= d.bits() as usize);
        }
    }
}
