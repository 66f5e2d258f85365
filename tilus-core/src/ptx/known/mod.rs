//! What is known about the kernel's values at compile time, for instruction choice to consult:
//! where each variable is defined (`crate::facts::Defs`), and for variables defined at one
//! site, two facts of every value that site produces:
//!
//! * trailing zero bits of integers (the value is a multiple of `2^n`; for a global view, of its
//!   offset), which prove vector accesses aligned;
//! * upper bounds of integers that are never negative (`bounds`), which prove index tests true.
//!
//! The emitter records the facts of each definition as it generates it, in program order, so a
//! fact is known from its definition on. A variable defined at one site keeps its facts
//! wherever it is read: every value it holds came from that site.

mod bounds;

use crate::facts::Defs;
use crate::ir::{BinOp, Inst, Kernel, Operand, Ty, UnOp, VarId};

/// Trailing zero bits of a constant (0 is divisible by everything).
pub(super) fn trailing_zeros_of_imm(c: i64) -> u32 {
    if c == 0 {
        64
    } else {
        c.trailing_zeros()
    }
}

pub(super) struct Known<'k> {
    kernel: &'k Kernel,
    defs: Defs,
    /// Known trailing zero bits of each single-site variable (0: nothing known).
    trailing_zeros: Vec<u32>,
    /// Known upper bounds of single-site integers that are never negative.
    upper_bounds: Vec<Option<u64>>,
}

impl<'k> Known<'k> {
    /// Nothing known yet of `kernel`'s values but where they are defined.
    pub fn new(kernel: &'k Kernel) -> Known<'k> {
        let n = kernel.vars.len();
        Known {
            kernel,
            defs: Defs::of(kernel),
            trailing_zeros: vec![0; n],
            upper_bounds: vec![None; n],
        }
    }

    /// Whether one place defines `v` (so its facts hold wherever it is read).
    pub fn single_site(&self, v: VarId) -> bool {
        self.defs.single_site(v)
    }

    /// The value of an integer scalar operand of at most 32 bits where it is a constant: an
    /// immediate, or a variable assigned once by a move or an arithmetic of constants
    /// (`let warps = 384 / 32;` then `f % warps`), as the instruction computes it. Lowering
    /// gives such expressions registers; the folds that need a constant divisor or shift ask
    /// this instead.
    pub fn constant(&self, o: Operand) -> Option<i64> {
        self.constant_at(o, 8)
    }

    /// [`constant`](Self::constant), through at most `depth` definitions.
    fn constant_at(&self, o: Operand, depth: u32) -> Option<i64> {
        let d = self.dtype(o)?;
        if !d.is_int() || d.bits() > 32 {
            return None;
        }
        let bits = match o {
            Operand::Imm(c, _) => c,
            Operand::Var(v) => {
                if depth == 0 || !matches!(self.ty(v)?, Ty::Scalar(_)) {
                    return None;
                }
                let c = |o: &Operand| self.constant_at(*o, depth - 1).map(|c| c as u64);
                match self.defs.def_of(v)? {
                    Inst::Mov(x) => c(x)?,
                    Inst::Binary { op, lhs, rhs } if !op.is_comparison() => {
                        if self.dtype(*lhs)? != d || self.dtype(*rhs)? != d {
                            return None;
                        }
                        crate::elem::binary(*op, d, c(lhs)?, c(rhs)?)
                    }
                    _ => return None,
                }
            }
        };
        i64::try_from(crate::elem::as_i128(d, crate::elem::canon(d, bits))).ok()
    }

    /// The type of `v` (`None` for a variable out of range, which the emitter reports).
    fn ty(&self, v: VarId) -> Option<&'k Ty> {
        self.kernel.vars.get(v as usize).map(|var| &var.ty)
    }

    /// Known trailing zero bits of an integer scalar operand.
    pub fn trailing_zeros(&self, o: Operand) -> u32 {
        match o {
            Operand::Imm(c, d) if d.is_int() => {
                trailing_zeros_of_imm(crate::elem::as_i128(d, c) as i64)
            }
            Operand::Imm(..) => 0,
            Operand::Var(v) if self.single_site(v) => self.trailing_zeros[v as usize],
            Operand::Var(_) => 0,
        }
    }

    fn set_trailing_zeros(&mut self, v: VarId, n: u32) {
        if self.single_site(v) {
            self.trailing_zeros[v as usize] = n.min(64);
        }
    }

    /// A tensor parameter: its offset (0) is a multiple of everything.
    pub fn record_tensor_param(&mut self, v: VarId) {
        self.set_trailing_zeros(v, 64);
    }

    /// A `for` loop's variable, `start` plus multiples of `step`, below `end` in the body (the
    /// loop tests `var < end` before each iteration, without wrapping: `control.rs`). From a
    /// start known non-negative, it is at most `end`'s bound less one: `for p in 0..4` then
    /// `p * 256 + byte` indexes 1,024 counters with no test. (The bound also covers `start`
    /// itself, which the variable keeps where the loop never runs, so that it holds even for a
    /// read after the loop, which Rust's scoping does not allow the macro's kernels.)
    pub fn record_loop_var(&mut self, var: VarId, start: Operand, end: Operand, step: Operand) {
        let n = self.trailing_zeros(start).min(self.trailing_zeros(step));
        self.set_trailing_zeros(var, n);
        if self.single_site(var) {
            let bound = match (self.upper_bound(start), self.upper_bound(end)) {
                (Some(s), Some(e)) => Some(s.max(e.saturating_sub(1))),
                _ => None,
            };
            self.set_upper_bound(var, bound);
        }
    }

    /// Records what follows for `d` from its definition by `inst`, just generated.
    pub fn record(&mut self, d: VarId, inst: &Inst) {
        if !self.single_site(d) {
            return;
        }
        if let Some(n) = self.inst_trailing_zeros(d, inst) {
            self.set_trailing_zeros(d, n);
        }
        self.record_bound(d, inst);
    }

    /// The trailing zeros of `d` defined by `inst`, where it says something.
    fn inst_trailing_zeros(&self, d: VarId, inst: &Inst) -> Option<u32> {
        let zeros = |o: &Operand| self.trailing_zeros(*o);
        let dtype = |o: &Operand| self.dtype(*o);
        match inst {
            // A shared tensor has no offset to know.
            Inst::Mov(_) if matches!(self.ty(d), Some(Ty::Shared { .. })) => None,
            Inst::Mov(o) => Some(zeros(o)),
            Inst::View { src, offset, .. } => Some(zeros(&Operand::Var(*src)).min(zeros(offset))),
            Inst::Binary { op, lhs, rhs } => {
                let dt = dtype(lhs)?;
                if dt == crate::dtype::DType::Bool || op.is_comparison() {
                    return None;
                }
                Some(
                    binary_trailing_zeros(*op, dt.is_int(), zeros(lhs), zeros(rhs), *rhs)
                        .min(dt.bits()),
                )
            }
            Inst::Unary { op: UnOp::Neg, x } if dtype(x)?.is_int() => Some(zeros(x)),
            Inst::Select { a, b, .. } if dtype(a)?.is_int() => Some(zeros(a).min(zeros(b))),
            _ => None,
        }
    }

    /// The element type of `o`.
    pub fn dtype(&self, o: Operand) -> Option<crate::dtype::DType> {
        match o {
            Operand::Var(v) => Some(self.ty(v)?.dtype()),
            Operand::Imm(_, d) => Some(d),
        }
    }
}

/// The trailing zeros of `a op b` for operands with `ta` and `tb` of them (`rhs`: the shift
/// amount of a shift), where the operation is an integer one.
fn binary_trailing_zeros(op: BinOp, int: bool, ta: u32, tb: u32, rhs: Operand) -> u32 {
    match (op, rhs) {
        _ if !int => 0,
        (BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Min | BinOp::Max, _) => {
            ta.min(tb)
        }
        (BinOp::Mul, _) => ta + tb,
        (BinOp::And, _) => ta.max(tb),
        (BinOp::Shl, Operand::Imm(..)) => match rhs.imm_int() {
            Some(k) if (0..64).contains(&k) => ta + k as u32,
            _ => 0,
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, ForLoop, Span, Stmt};
    use crate::passes::{scalar_test_kernel as kernel, test_def as inst};

    fn binary(op: BinOp, lhs: Operand, rhs: Operand) -> Inst {
        Inst::Binary { op, lhs, rhs }
    }

    /// Constants through `let`s and arithmetic, as the instruction computes them; nothing
    /// where a parameter, a second assignment or a loop enters.
    #[test]
    fn constants_are_followed_through_assignments() {
        let (v, n) = (Operand::Var, Operand::i32);
        let body = vec![
            inst(1, binary(BinOp::Div, n(384), n(32))),
            inst(2, binary(BinOp::Div, n(6144), v(1))),
            inst(3, binary(BinOp::Rem, n(-7), v(1))),
            inst(4, binary(BinOp::Add, v(0), v(1))),
            inst(5, Inst::Mov(n(1))),
            inst(5, Inst::Mov(n(2))),
            inst(6, binary(BinOp::Div, n(1), n(0))),
            Stmt::For(ForLoop {
                var: 7,
                start: n(0),
                end: n(4),
                step: n(1),
                body: vec![],
                span: Span::NONE,
            }),
        ];
        let k = kernel(8, body);
        let known = Known::new(&k);
        let c = |i: VarId| known.constant(Operand::Var(i));
        assert_eq!((c(1), c(2), c(3)), (Some(12), Some(512), Some(-7)));
        // A parameter, a variable assigned twice, a loop's variable: not constants.
        assert_eq!((c(0), c(4), c(5), c(7)), (None, None, None, None));
        // Division by zero is 0 in the language, as in the instruction.
        assert_eq!(c(6), Some(0));
        assert_eq!(
            known.constant(Operand::Imm(300, DType::I64)),
            None,
            "64 bits"
        );
        // A constant bounds itself; a negative one is no unsigned bound.
        let b = |i: VarId| known.upper_bound(Operand::Var(i));
        assert_eq!((b(1), b(2), b(3)), (Some(12), Some(512), None));
    }

    /// The bound of a loop's variable covers its start (kept where the loop never runs) and
    /// its end less one; nothing where either is unknown or may be negative.
    #[test]
    fn loop_variables_are_bounded_by_start_and_end() {
        let n = Operand::i32;
        let cases = [
            ((n(0), n(4)), Some(3)),
            ((n(5), n(3)), Some(5)),
            ((n(2), n(1000)), Some(999)),
            ((n(-1), n(4)), None),
            ((n(0), Operand::Var(0)), None),
            ((Operand::Var(0), n(4)), None),
        ];
        for ((start, end), want) in cases {
            let body = vec![Stmt::For(ForLoop {
                var: 1,
                start,
                end,
                step: n(1),
                body: vec![],
                span: Span::NONE,
            })];
            let k = kernel(2, body);
            let mut known = Known::new(&k);
            known.record_loop_var(1, start, end, n(1));
            assert_eq!(
                known.upper_bound(Operand::Var(1)),
                want,
                "{start:?}..{end:?}"
            );
        }
    }
}
