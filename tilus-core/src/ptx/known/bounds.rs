//! Known upper bounds of integer values that are never negative, so that an index test the
//! values cannot fail is not emitted.
//!
//! The motivating case is a shared histogram spread over per-lane copies: the index
//! `pixels as i32 * 32 + lane_ids([n])` is at most `255 * 32 + 31`, so a tensor of 8,192
//! counters needs no per-element bounds compare (one `setp` and one predicate `and` per byte
//! otherwise, in a loop that does nothing else but the atomic).
//!
//! A bound is a property of a variable's every element. It is recorded only for variables
//! defined at one site (`Known::single_site`), so the bound holds wherever the variable is
//! read. Each rule keeps the exact mathematical value inside the
//! result type: a result that could exceed the type's largest non-negative value (and so wrap
//! or turn negative) has no bound.

use super::Known;
use crate::dtype::DType;
use crate::ir::{BinOp, Inst, Operand, ReduceOp, ScanOp, VarId};

/// `x` if it is a value of type `d` (non-negative by construction).
fn within(d: DType, x: Option<u64>) -> Option<u64> {
    x.filter(|&x| d.is_int() && x <= d.int_max())
}

impl Known<'_> {
    /// The largest value `o` can hold, when it is known never to be negative.
    pub(in crate::ptx) fn upper_bound(&self, o: Operand) -> Option<u64> {
        match o {
            Operand::Imm(c, d) if d.is_int() => u64::try_from(crate::elem::as_i128(d, c)).ok(),
            Operand::Imm(..) => None,
            Operand::Var(v) => {
                // A constant scalar (`let last = 2048 - 1;`) bounds itself.
                if let Some(c) = self.constant(o) {
                    return u64::try_from(c).ok();
                }
                let d = self.dtype(o)?;
                let known = match self.single_site(v) {
                    true => self.upper_bounds[v as usize],
                    false => None,
                };
                // An unsigned type bounds its values by itself (a `bool` is 0 or 1).
                let by_type = match d {
                    _ if d.is_bool() => Some(1),
                    _ => (d.is_int() && !d.is_signed()).then(|| d.int_max()),
                };
                match (known, by_type) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// Records the bound of `d` (defined at one site) just defined by `inst`, when one follows
    /// from its operands.
    pub(super) fn record_bound(&mut self, d: VarId, inst: &Inst) {
        let Some(dt) = self.dtype(Operand::Var(d)) else {
            return;
        };
        self.upper_bounds[d as usize] = within(dt, self.bound_of(dt, inst));
    }

    /// Records `bound` (where it fits `d`'s type) for `d`, defined at one site by something
    /// other than an instruction (a loop's head).
    pub(super) fn set_upper_bound(&mut self, d: VarId, bound: Option<u64>) {
        if let Some(dt) = self.dtype(Operand::Var(d)) {
            self.upper_bounds[d as usize] = within(dt, bound);
        }
    }

    fn bound_of(&self, dt: DType, inst: &Inst) -> Option<u64> {
        let b = |o: &Operand| self.upper_bound(*o);
        match inst {
            Inst::Mov(o) | Inst::Full { value: o, .. } => b(o),
            Inst::Arange { n, .. } => Some(*n as u64 - 1),
            Inst::LaneIds { .. } => Some(31),
            Inst::Reshape { x, .. } | Inst::Broadcast { x, .. } => b(&Operand::Var(*x)),
            // A non-negative value that fits the new integer type keeps its value.
            Inst::Cast { x, .. } => b(x),
            Inst::Select { a, b: other, .. } => Some(b(a)?.max(b(other)?)),
            Inst::Binary { op, lhs, rhs } => self.binary_bound(dt, *op, *lhs, *rhs),
            // A running sum of a line of `len` non-negative values: at most `len` of them (one
            // fewer before each, exclusive), in either direction.
            Inst::Scan {
                op: ScanOp::Add,
                x,
                axis,
                exclusive,
                ..
            } => {
                let len = self.ty(*x)?.tile_shape()?.get(*axis).copied()? as u64;
                b(&Operand::Var(*x))?.checked_mul(len.saturating_sub(*exclusive as u64))
            }
            // The sum of a tile of values at most `b`: at most `numel * b`; its largest and
            // smallest element: at most `b`.
            Inst::Reduce { op, x } => {
                let each = b(&Operand::Var(*x))?;
                match op {
                    ReduceOp::Sum => {
                        each.checked_mul(crate::ir::numel(self.ty(*x)?.tile_shape()?) as u64)
                    }
                    ReduceOp::Max | ReduceOp::Min => Some(each),
                    _ => None,
                }
            }
            // Each bin counts some of the tile's elements.
            Inst::Histogram { x, .. } => Some(crate::ir::numel(self.ty(*x)?.tile_shape()?) as u64),
            // Places along the sorted axis, and counts of earlier elements of the tile.
            Inst::ArgSort { x, axis, .. }
            | Inst::TopK {
                x,
                axis,
                indices: true,
                ..
            } => (self.ty(*x)?.tile_shape()?.get(*axis).copied()? as u64).checked_sub(1),
            Inst::EqualRank { x, .. } => {
                (crate::ir::numel(self.ty(*x)?.tile_shape()?) as u64).checked_sub(1)
            }
            Inst::Place { x, starts, .. } => self.counting_sort_places(*x, *starts),
            _ => None,
        }
    }

    /// The places of a counting sort of a tile by its own histogram are below its element
    /// count: where `starts` is the running sum (exclusive, either direction) of a histogram
    /// of the values `x` holds, every one of them counted (below the bins), the elements of
    /// value `v` take `starts[v] ..starts[v] + count[v]`, inside `0..numel`. (The radix sort's
    /// passes store each key at its place in a shared tile of that many: no test a key.)
    fn counting_sort_places(&self, x: VarId, starts: VarId) -> Option<u64> {
        let Some(Inst::Scan {
            op: ScanOp::Add,
            x: counts,
            exclusive: true,
            ..
        }) = self.defs.def_of(starts)
        else {
            return None;
        };
        let Some(Inst::Histogram { x: counted, bins }) = self.defs.def_of(*counts) else {
            return None;
        };
        let all_counted = self.upper_bound(Operand::Var(*counted))? < *bins as u64;
        // One definition of the source: the values counted are the values placed (a source
        // assigned again could change between the histogram and the place).
        let source = self.value_source(*counted);
        let same_values = self.value_source(x) == source && self.defs.assigned_once(source);
        let numel = crate::ir::numel(self.ty(x)?.tile_shape()?) as u64;
        (all_counted && same_values).then(|| numel.checked_sub(1))?
    }

    /// The variable whose values `v` holds, element for element in some shape: followed back
    /// through reshapes, copies and casts that keep every value (the source's bound fits the
    /// new integer type).
    fn value_source(&self, mut v: VarId) -> VarId {
        loop {
            v = match self.defs.def_of(v) {
                Some(Inst::Reshape { x, .. } | Inst::Mov(Operand::Var(x))) => *x,
                Some(Inst::Cast {
                    x: Operand::Var(x),
                    dtype,
                }) if dtype.is_int()
                    && self
                        .upper_bound(Operand::Var(*x))
                        .is_some_and(|b| b <= dtype.int_max()) =>
                {
                    *x
                }
                _ => return v,
            }
        }
    }

    fn binary_bound(&self, dt: DType, op: BinOp, lhs: Operand, rhs: Operand) -> Option<u64> {
        let (a, c) = (self.upper_bound(lhs), self.upper_bound(rhs));
        match op {
            BinOp::Add => a?.checked_add(c?),
            BinOp::Mul => a?.checked_mul(c?),
            BinOp::Shl => {
                let (a, k) = (a?, c.filter(|&k| k < dt.bits() as u64)? as u32);
                a.checked_shl(k).filter(|&x| x >> k == a)
            }
            // Shifting a non-negative value right never makes it larger; by a constant, exactly
            // that much smaller.
            BinOp::Shr => match rhs {
                Operand::Imm(..) => Some(a?.checked_shr(c? as u32).unwrap_or(0)),
                _ => a,
            },
            // Integer division by zero gives 0 (`crate::elem`): a quotient never exceeds a
            // non-negative dividend.
            BinOp::Div => match rhs {
                Operand::Imm(..) if c? > 0 => Some(a? / c?),
                _ => c.and(a),
            },
            // The remainder of a non-negative dividend by a positive constant is below both.
            BinOp::Rem => match rhs {
                Operand::Imm(..) if c? > 0 => Some(a?.min(c? - 1)),
                _ => None,
            },
            // `x & m` with `m >= 0` clears the sign bit: it is at most `m`, whatever `x` is.
            BinOp::And => match (a, c) {
                (Some(a), Some(c)) => Some(a.min(c)),
                (x, y) => x.or(y),
            },
            // No more bits than the wider operand.
            BinOp::Or | BinOp::Xor => Some(
                u64::MAX
                    .checked_shr(a?.max(c?).leading_zeros())
                    .unwrap_or(0),
            ),
            BinOp::Min => match (a, c) {
                (Some(a), Some(c)) => Some(a.min(c)),
                _ => None,
            },
            BinOp::Max => Some(a?.max(c?)),
            _ => None,
        }
    }
}
