//! Runtime values of IR variables, and borrowed views of operands.
//!
//! Scalars are bit patterns (`u64`, the type's bits in the low end, `crate::elem`); tiles keep
//! theirs in buffers of the element type's width (`buf.rs`). The IR's declared types say how
//! to read them.

use super::buf::{Buf, Word, Words};
use crate::elem::canon;
use crate::ir::{DType, Operand};

/// The value held by an IR variable in one block.
#[derive(Debug, Clone, Default)]
pub(crate) enum Value {
    /// Not assigned yet in this block (reading it is an IR error, reported, never a panic).
    #[default]
    Undef,
    /// A block-uniform scalar.
    Scalar(u64),
    /// A register tile, row-major.
    Tile(Tile),
    /// A global tensor or a view of one.
    Global(GlobalView),
    /// A shared-memory tensor of the block.
    Shared(SharedView),
}

#[derive(Debug, Clone)]
pub(crate) struct Tile {
    pub shape: Vec<usize>,
    pub data: Buf,
}

/// A global view: parameter `param`'s memory, starting `offset` elements into it, with runtime
/// row-major `dims`.
#[derive(Debug, Clone)]
pub(crate) struct GlobalView {
    pub param: usize,
    pub offset: i64,
    pub dims: Vec<i64>,
}

/// A shared tensor: its first byte in the block's shared window, shape and element type.
#[derive(Debug, Clone)]
pub(crate) struct SharedView {
    pub byte: usize,
    pub shape: Vec<usize>,
    pub dtype: DType,
    /// A distributed (cluster) tensor: elements per block, block `r` holding flat elements
    /// `r * part .. (r + 1) * part` at `byte` of its own window.
    pub part: Option<usize>,
}

/// A borrowed element source: an operand that is either a scalar (broadcast to every element)
/// or a tile's data.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Elems<'a> {
    Scalar(u64),
    Tile(&'a [usize], Words<'a>),
}

/// A typed element source: one word for every element, or one word each.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src<'a, W> {
    One(W),
    Each(&'a [W]),
}

impl<W: Word> Src<'_, W> {
    /// Element `e` (the one word for every `e`; a tile's length is checked by the caller).
    #[inline(always)]
    pub fn at(&self, e: usize) -> W {
        match self {
            Src::One(w) => *w,
            Src::Each(s) => s[e],
        }
    }
}

impl<'a> Elems<'a> {
    /// Element `e`'s bits (the scalar for every `e`; element by element, for rare operations).
    pub fn at(&self, e: usize) -> u64 {
        match self {
            Elems::Scalar(v) => *v,
            Elems::Tile(_, d) => d.at(e),
        }
    }
    pub fn shape(&self) -> Option<&'a [usize]> {
        match self {
            Elems::Scalar(_) => None,
            Elems::Tile(s, _) => Some(s),
        }
    }
    /// Number of elements of a tile; `None` for a scalar.
    pub fn len(&self) -> Option<usize> {
        match self {
            Elems::Scalar(_) => None,
            Elems::Tile(_, d) => Some(d.len()),
        }
    }
    /// The elements as words of type `W`; `None` when a tile's words have another width (an
    /// IR type error).
    #[inline]
    pub fn src<W: Word>(&self) -> Option<Src<'a, W>> {
        match *self {
            Elems::Scalar(v) => Some(Src::One(W::of(v))),
            Elems::Tile(_, d) => W::slice(d).map(Src::Each),
        }
    }
}

/// Row-major strides of `dims` (negative dims count as 0 so no address is ever valid).
pub(crate) fn strides_i64(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1].saturating_mul(dims[k + 1].max(0));
    }
    s
}

/// Number of elements of a compile-time shape, saturating (a shape that large is an IR error
/// that the caller reports).
pub(crate) fn numel_checked(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// Advance a row-major position counter over `shape` (the last axis varies fastest).
#[inline(always)]
pub(crate) fn next_pos(pos: &mut [usize], shape: &[usize]) {
    for k in (0..pos.len()).rev() {
        pos[k] += 1;
        if pos[k] < shape[k] {
            return;
        }
        pos[k] = 0;
    }
}

/// The elements of an operand: an immediate or a scalar variable broadcasts, a tile variable
/// is borrowed. Immediates are normalised to their type's canonical bits. `Err` names what was
/// wrong (an IR error).
pub(crate) fn operand(vars: &[Value], op: Operand) -> Result<Elems<'_>, String> {
    match op {
        Operand::Imm(v, d) => Ok(Elems::Scalar(canon(d, v))),
        Operand::Var(id) => match vars.get(id as usize) {
            Some(Value::Scalar(v)) => Ok(Elems::Scalar(*v)),
            Some(Value::Tile(t)) => Ok(Elems::Tile(&t.shape, t.data.words())),
            Some(Value::Undef) => Err(format!("variable {id} is read before it is assigned")),
            Some(_) => Err(format!(
                "variable {id} is a memory reference where a value is expected"
            )),
            None => Err(format!("variable {id} does not exist")),
        },
    }
}

/// A scalar operand (a tile here is an IR error).
pub(crate) fn scalar(vars: &[Value], op: Operand) -> Result<u64, String> {
    match operand(vars, op)? {
        Elems::Scalar(v) => Ok(v),
        Elems::Tile(..) => Err(format!(
            "operand {op:?} is a tile where a scalar is expected"
        )),
    }
}
