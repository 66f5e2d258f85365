//! Integer tiles known as one register of the thread plus a constant a slot: `arange` (the
//! thread's run base plus the slot's offset) and what adds, subtracts, multiplies and shifts
//! it by scalars, and masks, shifts, divides or takes remainders of it where the slots'
//! constants allow. Index arithmetic on `arange` then costs an instruction a thread instead of
//! one an element (ptxas cannot fold `(tid + 256 s) >> 8` to `s`: it does not know `tid <
//! 256`), and a gather at such an index is addressed from the thread's register with the slot's
//! constant as the offset.
//!
//! Each slot's register still receives its value (`base + c`, one `add`), so every other use
//! reads registers as before; ptxas drops the ones nothing reads.

use super::{CodegenResult, Emitter};
use crate::dtype::DType;
use crate::ir::{BinOp, Operand, Ty, VarId};
use crate::layout::Layout;
use crate::ptx::regs::Reg;
use crate::ptx::value::RegOrImm;

/// Slot `s` of the tile holds `base + consts[s]` (32-bit arithmetic; the constants as
/// integers, each an `i32`). Where `range` is known, `base` holds an integer in it.
#[derive(Debug, Clone)]
pub(in crate::ptx) struct Affine {
    pub base: Reg,
    pub range: Option<(i64, i64)>,
    pub consts: Vec<i64>,
}

/// What is known of a thread's register: the integers it holds, where known.
type Range = Option<(i64, i64)>;

/// Whether `v` is an `i32` value.
fn fits_i32(v: i64) -> bool {
    i32::try_from(v).is_ok()
}

/// An affine tile's facts without its register.
struct Affine0<'a> {
    range: Option<(i64, i64)>,
    consts: &'a [i64],
}

impl Affine0<'_> {
    /// The smallest and largest constant.
    fn const_range(&self) -> (i64, i64) {
        let lo = self.consts.iter().copied().min().unwrap_or(0);
        let hi = self.consts.iter().copied().max().unwrap_or(0);
        (lo, hi)
    }

    /// Whether every slot's value `base + c` is in `0..=i32::MAX` (known).
    fn non_negative(&self) -> bool {
        let (clo, chi) = self.const_range();
        matches!(self.range, Some((lo, hi)) if lo + clo >= 0 && hi + chi <= i32::MAX as i64)
    }

    /// Every constant times `k`, where each stays an `i32`.
    fn scaled_consts(&self, k: i64) -> Option<Vec<i64>> {
        let cs: Vec<i64> = self.consts.iter().map(|c| c * k).collect();
        cs.iter().all(|&c| fits_i32(c)).then_some(cs)
    }
}

/// `range` times `k` (a constant), where it stays inside `i32`.
fn scaled_range(range: Option<(i64, i64)>, k: i64) -> Option<(i64, i64)> {
    let (lo, hi) = range?;
    let (a, b) = (lo.checked_mul(k)?, hi.checked_mul(k)?);
    let r = (a.min(b), a.max(b));
    (fits_i32(r.0) && fits_i32(r.1)).then_some(r)
}

/// `range` plus `k`, where it stays inside `i32`.
fn shifted_range(range: Option<(i64, i64)>, k: i64) -> Option<(i64, i64)> {
    let (lo, hi) = range?;
    let r = (lo + k, hi + k);
    (fits_i32(r.0) && fits_i32(r.1)).then_some(r)
}

/// `arange`'s slots: the thread's run base `base` (at most `top`) plus each slot's offset.
pub(in crate::ptx) fn affine_arange(base: Reg, top: usize, layout: &Layout) -> Affine {
    Affine {
        base,
        range: Some((0, top as i64)),
        consts: (0..layout.slots())
            .map(|s| layout.slot_const(s) as i64)
            .collect(),
    }
}

impl Emitter<'_> {
    /// What is known of `o` as a per-thread register plus per-slot constants.
    pub(in crate::ptx) fn affine_of(&self, o: Operand) -> Option<&Affine> {
        match o {
            Operand::Var(v) => self.affine.get(&v),
            Operand::Imm(..) => None,
        }
    }

    /// Gives `d`'s slots the values `base + consts[s]` and records them, where `d` is defined
    /// at one site (so the fact holds wherever it is read).
    pub(in crate::ptx) fn define_affine(&mut self, d: VarId, a: Affine) -> CodegenResult<()> {
        let rs = self.dst_regs(d)?;
        for (r, c) in rs.iter().zip(&a.consts) {
            match *c {
                0 => self.ins(["mov", "b32"], (*r, a.base)),
                c => self.ins(["add", "s32"], (*r, a.base, c as i32)),
            }
        }
        self.note_affine(d, a);
        Ok(())
    }

    /// Records that `d`'s slots hold `a`'s values already (a copy of a known tile).
    pub(in crate::ptx) fn note_affine(&mut self, d: VarId, a: Affine) {
        if self.known().single_site(d) {
            self.affine.insert(d, a);
        }
    }

    /// `d = lhs op rhs` where it folds (see the module docs): `false` where it does not, and
    /// nothing was emitted.
    pub(in crate::ptx) fn affine_binary(
        &mut self,
        d: VarId,
        op: BinOp,
        lhs: Operand,
        rhs: Operand,
    ) -> CodegenResult<bool> {
        let dt = self.dtype_of(lhs)?;
        let int32 = matches!(dt, DType::I32 | DType::U32);
        if !int32 || self.dtype_of(rhs)? != dt || !matches!(self.ty(d)?, Ty::Tile { .. }) {
            return Ok(false);
        }
        let (a, b) = (self.affine_of(lhs).cloned(), self.affine_of(rhs).cloned());
        let folded = match (a, b) {
            (Some(a), Some(b)) => self.affine_pair(op, &a, &b),
            (Some(a), None) => match self.uniform(rhs)? {
                Some(u) => self.affine_with(op, &a, u, false),
                None => None,
            },
            (None, Some(b)) => match self.uniform(lhs)? {
                Some(u) => self.affine_with(op, &b, u, true),
                None => None,
            },
            (None, None) => None,
        };
        match folded {
            Some(f) => {
                self.define_affine(d, f)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// A scalar operand's register or constant (`None` for a tile): an immediate where it is
    /// one or is known to be one (`Known::constant`), so that the folds needing a constant
    /// see it.
    fn uniform(&mut self, o: Operand) -> CodegenResult<Option<RegOrImm>> {
        if self.is_tile(o)? {
            return Ok(None);
        }
        if let Some(c) = self.known().constant(o).and_then(|c| i32::try_from(c).ok()) {
            return Ok(Some(RegOrImm::Imm(c)));
        }
        Ok(Some(self.reg_or_imm(o, 0)?))
    }

    /// `a op b` of two known tiles (sums and differences).
    fn affine_pair(&mut self, op: BinOp, a: &Affine, b: &Affine) -> Option<Affine> {
        let sign = match op {
            BinOp::Add => 1,
            BinOp::Sub => -1,
            _ => return None,
        };
        let (range, consts) = fold_pair(sign, a.range, &a.consts, b.range, &b.consts)?;
        let base = self.r32();
        let name = if sign > 0 { "add" } else { "sub" };
        self.ins([name, "s32"], (base, a.base, b.base));
        Some(Affine {
            base,
            range,
            consts,
        })
    }

    /// `a op u` (or `u op a` where `flipped`) of a known tile and a scalar.
    fn affine_with(&mut self, op: BinOp, a: &Affine, u: RegOrImm, flipped: bool) -> Option<Affine> {
        let imm = u.imm().map(i64::from);
        let f = fold_scalar(op, flipped, imm, a.range, &a.consts)?;
        let base = self.r32();
        match f.op {
            ThreadOp::Add => self.ins(["add", "s32"], (base, a.base, u)),
            ThreadOp::Sub => self.ins(["sub", "s32"], (base, a.base, u)),
            ThreadOp::SubFrom => self.ins(["sub", "s32"], (base, u, a.base)),
            ThreadOp::Mul => self.ins(["mul", "lo", "s32"], (base, a.base, u)),
            ThreadOp::Shl => self.ins(["shl", "b32"], (base, a.base, u)),
            ThreadOp::Shr => self.ins(["shr", "u32"], (base, a.base, u)),
            ThreadOp::And => self.ins(["and", "b32"], (base, a.base, u)),
            ThreadOp::Div => self.ins(["div", "u32"], (base, a.base, u)),
            ThreadOp::Rem => self.ins(["rem", "u32"], (base, a.base, u)),
            ThreadOp::Zero => self.ins(["mov", "b32"], (base, 0)),
            ThreadOp::Keep => self.ins(["mov", "b32"], (base, a.base)),
        }
        Some(Affine {
            base,
            range: f.range,
            consts: f.consts,
        })
    }
}

/// The thread's instruction of a folded operation with scalar `u`: `g + u`, `g - u`, `u - g`,
/// `g * u`, `g << u`, `g >> u` (logical), `g & u`, `g / u` and `g % u` (unsigned: folded only
/// where every value is non-negative, where signed and unsigned agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadOp {
    Add,
    Sub,
    SubFrom,
    Mul,
    Shl,
    Shr,
    And,
    Div,
    Rem,
    /// `0`: a quotient whose dividend is known below the divisor.
    Zero,
    /// `g`: a remainder whose dividend is known below the divisor.
    Keep,
}

/// A folded operation: the thread's instruction, and the result's range and constants.
#[derive(Debug, Clone, PartialEq)]
struct Folded {
    op: ThreadOp,
    range: Option<(i64, i64)>,
    consts: Vec<i64>,
}

/// How `a op u` (`u op a` where `flipped`) folds, for a tile `a` whose slots hold `g +
/// consts[s]` with `g` in `range` (where known) and a scalar `u` (`imm` where a constant): the
/// result's slots hold `op'(g, u) + consts'[s]`. `None` where it does not fold.
fn fold_scalar(
    op: BinOp,
    flipped: bool,
    imm: Option<i64>,
    range: Option<(i64, i64)>,
    consts: &[i64],
) -> Option<Folded> {
    let a = Affine0 { range, consts };
    let (op, range, consts) = match (op, flipped, imm) {
        (BinOp::Add, _, _) => (
            ThreadOp::Add,
            imm.and_then(|k| shifted_range(range, k)),
            consts.to_vec(),
        ),
        (BinOp::Sub, false, _) => (
            ThreadOp::Sub,
            imm.and_then(|k| shifted_range(range, -k)),
            consts.to_vec(),
        ),
        (BinOp::Sub, true, _) => (
            ThreadOp::SubFrom,
            imm.and_then(|k| shifted_range(scaled_range(range, -1), k)),
            a.scaled_consts(-1)?,
        ),
        (BinOp::Mul, _, Some(k)) => (ThreadOp::Mul, scaled_range(range, k), a.scaled_consts(k)?),
        // Constants all zero (a tile the thread holds one value of) times a register.
        (BinOp::Mul, _, None) if consts.iter().all(|&c| c == 0) => {
            (ThreadOp::Mul, None, consts.to_vec())
        }
        (BinOp::Shl, false, Some(k)) if (0..31).contains(&k) => (
            ThreadOp::Shl,
            scaled_range(range, 1 << k),
            a.scaled_consts(1 << k)?,
        ),
        // Exact where the thread's value and every slot's are not negative and do not wrap,
        // and the constants are multiples of `2^k`: `(g + m 2^k) >> k == (g >> k) + m`.
        (BinOp::Shr, false, Some(k)) if (0..32).contains(&k) => {
            let (lo, hi) = range?;
            if lo < 0 || !a.non_negative() || consts.iter().any(|c| c % (1 << k) != 0) {
                return None;
            }
            (
                ThreadOp::Shr,
                Some((lo >> k, hi >> k)),
                consts.iter().map(|c| c >> k).collect(),
            )
        }
        // `(g + c) & (2^k - 1) == g & (2^k - 1)` where `2^k` divides `c` (modular).
        (BinOp::And, _, Some(m)) if m >= 0 && (m + 1).count_ones() == 1 => {
            if consts.iter().any(|c| c % (m + 1) != 0) {
                return None;
            }
            (ThreadOp::And, Some((0, m)), vec![0; consts.len()])
        }
        // Exact where the thread's value and every slot's are not negative and `k` divides
        // every constant: `(g + m k) / k == g / k + m` and `(g + m k) % k == g % k`. Indices
        // of a warp-striped tile on a count of warps that is not a power of two take these
        // (`(f >> 5) % 12` on 384 threads).
        (BinOp::Div | BinOp::Rem, false, Some(k)) if k > 0 => {
            let (lo, hi) = range?;
            if lo < 0 || !a.non_negative() || consts.iter().any(|c| c % k != 0) {
                return None;
            }
            // A thread's value below `k` (the thread's index in a block of `k` threads) has
            // quotient 0 and is its own remainder: no instruction that ptxas, which does not
            // know the bound, would keep.
            match (op, hi < k) {
                (BinOp::Div, below) => (
                    if below { ThreadOp::Zero } else { ThreadOp::Div },
                    Some((lo / k, hi / k)),
                    consts.iter().map(|c| c / k).collect(),
                ),
                (_, true) => (ThreadOp::Keep, Some((lo, hi)), vec![0; consts.len()]),
                (_, false) => (ThreadOp::Rem, Some((0, k - 1)), vec![0; consts.len()]),
            }
        }
        _ => return None,
    };
    Some(Folded { op, range, consts })
}

/// `a + sign * b` of two known tiles: the result's range and constants.
fn fold_pair(
    sign: i64,
    arange: Option<(i64, i64)>,
    aconsts: &[i64],
    brange: Option<(i64, i64)>,
    bconsts: &[i64],
) -> Option<(Range, Vec<i64>)> {
    let consts: Vec<i64> = aconsts
        .iter()
        .zip(bconsts)
        .map(|(x, y)| x + sign * y)
        .collect();
    if !consts.iter().all(|&c| fits_i32(c)) {
        return None;
    }
    let range = match (arange, brange) {
        (Some((alo, ahi)), Some((blo, bhi))) => {
            let r = if sign > 0 {
                (alo + blo, ahi + bhi)
            } else {
                (alo - bhi, ahi - blo)
            };
            (fits_i32(r.0) && fits_i32(r.1)).then_some(r)
        }
        _ => None,
    };
    Some((range, consts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tilus_testkit::Rng;

    /// The thread's instruction on its value `g` and the scalar `u`, as PTX computes it.
    fn thread(op: ThreadOp, g: i32, u: i32) -> i32 {
        match op {
            ThreadOp::Add => g.wrapping_add(u),
            ThreadOp::Sub => g.wrapping_sub(u),
            ThreadOp::SubFrom => u.wrapping_sub(g),
            ThreadOp::Mul => g.wrapping_mul(u),
            ThreadOp::Shl => g.wrapping_shl(u as u32),
            ThreadOp::Shr => ((g as u32) >> u) as i32,
            ThreadOp::And => g & u,
            ThreadOp::Div => ((g as u32) / (u as u32)) as i32,
            ThreadOp::Rem => ((g as u32) % (u as u32)) as i32,
            ThreadOp::Zero => 0,
            ThreadOp::Keep => g,
        }
    }

    /// The element-wise operation on one slot's value `x` (`u op x` where `flipped`), on
    /// `u32` bits where `unsigned` (only the right shift differs).
    fn elementwise(op: BinOp, flipped: bool, x: i32, u: i32, unsigned: bool) -> i32 {
        let (a, b) = if flipped { (u, x) } else { (x, u) };
        match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Shl => a.wrapping_shl(b as u32),
            BinOp::Shr if unsigned => ((a as u32) >> b) as i32,
            BinOp::Shr => a >> b,
            BinOp::And => a & b,
            BinOp::Div if unsigned => ((a as u32) / (b as u32)) as i32,
            BinOp::Div => a / b,
            BinOp::Rem if unsigned => ((a as u32) % (b as u32)) as i32,
            BinOp::Rem => a % b,
            _ => unreachable!("not folded"),
        }
    }

    /// Slot constants as `arange` and the folds make them, and others.
    fn some_consts(rng: &mut Rng) -> Vec<i64> {
        let slots = rng.range(1, 30) as i64;
        let step = [256i64, 32, 1, 4096, 3][rng.below(5) as usize];
        match rng.below(3) {
            0 => (0..slots).map(|s| s * step).collect(),
            1 => (0..slots)
                .map(|_| rng.range(-3000, 3000) as i64 * step)
                .collect(),
            _ => (0..slots)
                .map(|_| (rng.next_u64() as i32) as i64 / 4)
                .collect(),
        }
    }

    fn some_range(rng: &mut Rng) -> Option<(i64, i64)> {
        match rng.below(4) {
            0 => None,
            1 => Some((0, rng.range(0, 1024) as i64)),
            2 => {
                let lo = rng.range(-5000, 5000) as i64;
                Some((lo, lo + rng.range(0, 5000) as i64))
            }
            _ => {
                let lo = rng.range(i32::MIN / 2, i32::MAX / 2) as i64;
                Some((lo, lo + rng.range(0, i32::MAX / 2) as i64))
            }
        }
    }

    /// A scalar: a shift amount, a mask, a small or any constant, or a register (`None`).
    fn some_imm(rng: &mut Rng, op: BinOp) -> Option<i64> {
        match (op, rng.below(5)) {
            (_, 0) => None,
            (BinOp::Shl | BinOp::Shr, _) => Some(rng.range(0, 32) as i64),
            (BinOp::And, 1) => Some((rng.next_u64() as i32) as i64),
            (BinOp::And, _) => Some((1i64 << rng.range(0, 31)) - 1),
            (BinOp::Div | BinOp::Rem, 1) => Some(rng.range(-5, 5000) as i64),
            (BinOp::Div | BinOp::Rem, _) => {
                Some([1i64, 3, 12, 32, 384, 256, 7][rng.below(7) as usize])
            }
            (_, 1) => Some((rng.next_u64() as i32) as i64),
            _ => Some(rng.range(-300, 300) as i64),
        }
    }

    /// Every fold the emitter makes gives each slot the element-wise result, for thread
    /// values in the range it assumes and any scalar.
    #[test]
    fn folds_agree_with_the_elementwise_operation() {
        let mut rng = Rng::from_env_or_clock();
        let ops = [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Shl,
            BinOp::Shr,
            BinOp::And,
            BinOp::Div,
            BinOp::Rem,
        ];
        let mut folded = [0usize; 8];
        for _ in 0..40_000 {
            let k = rng.below(ops.len() as u64) as usize;
            let (op, flipped) = (ops[k], rng.below(2) == 1);
            let (range, consts) = (some_range(&mut rng), some_consts(&mut rng));
            let imm = some_imm(&mut rng, op);
            let Some(f) = fold_scalar(op, flipped, imm, range, &consts) else {
                continue;
            };
            folded[k] += 1;
            assert_eq!(f.consts.len(), consts.len());
            for _ in 0..8 {
                let g = match range {
                    Some((lo, hi)) => lo + rng.below((hi - lo + 1) as u64) as i64,
                    None => (rng.next_u64() as i32) as i64,
                } as i32;
                let u = imm.map_or_else(|| rng.next_u64() as i32, |k| k as i32);
                let t = thread(f.op, g, u);
                if let Some((lo, hi)) = f.range {
                    assert!((lo..=hi).contains(&(t as i64)), "{op:?} {f:?}: {t} outside");
                }
                for (c, c2) in consts.iter().zip(&f.consts) {
                    let x = g.wrapping_add(*c as i32);
                    let got = t.wrapping_add(*c2 as i32);
                    for unsigned in [false, true] {
                        let want = elementwise(op, flipped, x, u, unsigned);
                        assert_eq!(
                            got, want,
                            "{op:?} flipped {flipped}, imm {imm:?}, range {range:?}: g {g}, c {c}, u {u}"
                        );
                    }
                }
            }
        }
        // Each kind of fold was exercised.
        assert!(folded.iter().all(|&n| n > 50), "folds tried: {folded:?}");
    }

    #[test]
    fn sums_of_folded_tiles_agree() {
        let mut rng = Rng::from_env_or_clock();
        for _ in 0..20_000 {
            let (ra, rb) = (some_range(&mut rng), some_range(&mut rng));
            let ca = some_consts(&mut rng);
            let cb: Vec<i64> = ca
                .iter()
                .map(|_| rng.range(-100_000, 100_000) as i64)
                .collect();
            let sign = if rng.below(2) == 0 { 1 } else { -1 };
            let Some((range, consts)) = fold_pair(sign, ra, &ca, rb, &cb) else {
                continue;
            };
            let pick = |rng: &mut Rng, r: Option<(i64, i64)>| match r {
                Some((lo, hi)) => (lo + rng.below((hi - lo + 1) as u64) as i64) as i32,
                None => rng.next_u64() as i32,
            };
            let (ga, gb) = (pick(&mut rng, ra), pick(&mut rng, rb));
            let t = if sign > 0 {
                ga.wrapping_add(gb)
            } else {
                ga.wrapping_sub(gb)
            };
            if let Some((lo, hi)) = range {
                assert!((lo..=hi).contains(&(t as i64)));
            }
            for ((a, b), c) in ca.iter().zip(&cb).zip(&consts) {
                let (x, y) = (ga.wrapping_add(*a as i32), gb.wrapping_add(*b as i32));
                let want = if sign > 0 {
                    x.wrapping_add(y)
                } else {
                    x.wrapping_sub(y)
                };
                assert_eq!(t.wrapping_add(*c as i32), want);
            }
        }
    }
}
