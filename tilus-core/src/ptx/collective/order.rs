//! The exact collectives: sorts, top-k, `take`, equal-key ranks and histograms (see
//! `crate::collective::order` for their meaning; no order of combination is involved).
//!
//! Sorts rank each element in its line: its place is the number of elements with a smaller
//! key (larger when descending), plus the equal keys before it, which makes the sort stable.
//! Keys compare as signed integers: integers by value (unsigned ones unsigned), floats by
//! IEEE 754 `totalOrder`, whose key is the bits with the magnitude flipped where the sign is
//! set. Every element is written once to its place, so a sort, its permutation and its first
//! `k` are the same pass. Ranking costs each thread `len` steps per element it holds; it is
//! the simple exact form, not yet a radix sort.

use super::super::code::Guard;
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::{Predicate, RegOrConst};
use super::staging::{acc_type, parts};
use crate::collective::AxisView;
use crate::dtype::DType;
use crate::ir::{Operand, Ty, VarId};

/// What a ranking pass writes at each element's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// The element (sort, top-k values).
    Value,
    /// Its axis index, `i32` (argsort, top-k indices).
    Index,
}

impl Emitter<'_> {
    /// Sort (`k = None`) or top-`k` of each line of `x` along `axis`.
    pub fn sort_line(
        &mut self,
        dst: VarId,
        x: VarId,
        axis: usize,
        descending: bool,
        placed: Placed,
        k: Option<usize>,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("sort of a scalar");
        };
        let layout = self.layout_of(&shape);
        let view = AxisView::new(&shape, axis);
        let kept = k.unwrap_or(view.len);
        let out_d = match placed {
            Placed::Value => d,
            Placed::Index => DType::I32,
        };
        let offs = parts(
            self,
            &[
                d.size_bytes() * layout.n,
                out_d.size_bytes() * view.lines() * kept,
            ],
        );
        let (src, out) = (offs[0], offs[1]);
        self.stage(x, d, &layout, src)?;
        self.barrier();
        let size = d.size_bytes();
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let skip = self.new_label("ranked");
            if let Predicate::Reg(p) = ex {
                self.branch(Guard::Unless(p), skip);
            }
            let f = self.flat_index(&layout, s);
            let f = self.in_reg32(f);
            // The element's line, axis index and line base.
            let (a, b, kk) = (self.r32(), self.r32(), self.r32());
            self.ins(["rem", "u32"], (b, f, view.inner));
            self.ins(["div", "u32"], (a, f, view.inner));
            self.ins(["rem", "u32"], (kk, a, view.len));
            self.ins(["div", "u32"], (a, a, view.len));
            let base = self.r32();
            self.ins(["mad", "lo", "s32"], (base, a, view.len * view.inner, b));
            let at = self.elem_at(src, size, f.into());
            let key = self.sort_key(d, at);
            let rank = self.r32();
            self.ins(["mov", "u32"], (rank, 0));
            let inner = view.inner;
            self.counted_loop(0.into(), (view.len as i32).into(), 1, |e, j| {
                let i = e.along(base, j, inner);
                let at = e.elem_at(src, size, i.into());
                let other = e.sort_key(d, at);
                let ty = key_type(d);
                let (before, earlier) = (e.new_pred(), e.new_pred());
                e.ins(["setp", "lt", "u32"], (earlier, j, kk));
                e.ins(["setp", "eq", "and", ty], (earlier, other, key, earlier));
                let cmp = if descending { "gt" } else { "lt" };
                e.ins(["setp", cmp, "or", ty], (before, other, key, earlier));
                let one = e.r32();
                e.ins(["selp", "u32"], (one, 1, 0, before));
                e.ins(["add", "s32"], (rank, rank, one));
                Ok(())
            })?;
            // The place: (a * kept + rank) * inner + b, if rank < kept.
            let place = self.r32();
            self.ins(["mad", "lo", "s32"], (place, a, kept, rank));
            self.ins(["mad", "lo", "s32"], (place, place, inner, b));
            let keep = self.pred_u32("lt", rank, (kept as i32).into());
            let to = self.elem_at(out, out_d.size_bytes(), place.into());
            match placed {
                Placed::Value => {
                    let v = self.reg_or_const(Operand::Var(x), s)?;
                    let v = self.in_reg(v);
                    self.ins_if(Guard::If(keep), ["st", "shared", d.info().mem], (to, v));
                }
                Placed::Index => {
                    self.ins_if(Guard::If(keep), ["st", "shared", "s32"], (to, kk));
                }
            }
            self.label(skip);
        }
        self.barrier();
        self.unstage(dst, out_d, out)?;
        self.barrier();
        Ok(())
    }

    /// The sort key of the element of type `d` at `addr`, in a register compared by
    /// [`key_type`].
    fn sort_key(&mut self, d: DType, addr: super::super::code::Address) -> Reg {
        if !d.is_float() {
            let r = self.reg_of(acc_type(d));
            self.ins(["ld", "shared", d.info().mem], (r, addr));
            return r;
        }
        // Bits as a signed integer, sign-extended to the register; the magnitude flipped where
        // the sign is set: (x >> (R - 1)) >>> (R - bits + 1) is those bits' mask.
        let bits = d.bits();
        let (r, m, wide) = if bits == 64 {
            (self.r64(), self.r64(), 64)
        } else {
            (self.r32(), self.r32(), 32)
        };
        let ld = match bits {
            16 => "s16",
            32 => "s32",
            _ => "s64",
        };
        self.ins(["ld", "shared", ld], (r, addr));
        let (s, u, b) = if wide == 64 {
            ("s64", "u64", "b64")
        } else {
            ("s32", "u32", "b32")
        };
        self.ins(["shr", s], (m, r, wide - 1));
        self.ins(["shr", u], (m, m, wide - bits + 1));
        self.ins(["xor", b], (r, r, m));
        r
    }

    /// `take` along `axis`: every thread reads its result elements from the staged tile.
    pub fn take(&mut self, dst: VarId, x: VarId, indices: VarId, axis: usize) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("take from a scalar");
        };
        let Ty::Tile {
            shape: out_shape,
            dtype: id,
        } = self.ty(indices)?.clone()
        else {
            return internal("take with scalar indices");
        };
        let layout = self.layout_of(&shape);
        let src = parts(self, &[d.size_bytes() * layout.n])[0];
        self.stage(x, d, &layout, src)?;
        self.barrier();
        let view = AxisView::new(&shape, axis);
        let out_len = out_shape[axis];
        let out_layout = self.layout_of(&out_shape);
        let rs = self.dst_regs(dst)?;
        let smem = self.smem_base();
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&out_layout, s / out_layout.v);
            if ex == Predicate::False {
                continue;
            }
            self.copy_elem(d, *r, RegOrConst::Const(0, d))?;
            let f = self.flat_index(&out_layout, s);
            let f = self.in_reg32(f);
            let (a, b) = (self.r32(), self.r32());
            self.ins(["rem", "u32"], (b, f, view.inner));
            self.ins(["div", "u32"], (a, f, view.inner * out_len));
            // The index, checked below the axis length (negative ones wrap past it).
            let iv = self.reg_or_const(Operand::Var(indices), s)?;
            let iv = self.in_reg(iv);
            let ok = self.new_pred();
            let idx = if id.bits() == 64 {
                self.ins(["setp", "lt", "u64"], (ok, iv, view.len as u64));
                let t = self.r32();
                self.ins(["cvt", "u32", "u64"], (t, iv));
                t
            } else {
                self.ins(["setp", "lt", "u32"], (ok, iv, view.len as u32));
                iv
            };
            let g = match ex {
                Predicate::Reg(p) => {
                    self.ins(["and", "pred"], (ok, ok, p));
                    Guard::If(ok)
                }
                _ => Guard::If(ok),
            };
            let i = self.r32();
            self.ins(["mad", "lo", "s32"], (i, a, view.len, idx));
            self.ins(["mad", "lo", "s32"], (i, i, view.inner, b));
            let addr = self.r32();
            self.ins(["mad", "lo", "s32"], (addr, i, d.size_bytes(), smem));
            self.ld_scratch(g, d, *r, addr, src);
        }
        self.barrier();
        Ok(())
    }

    /// For each element, the number of equal elements before it in row-major order.
    pub fn equal_rank(&mut self, dst: VarId, x: VarId) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("equal_rank of a scalar");
        };
        let layout = self.layout_of(&shape);
        let src = parts(self, &[d.size_bytes() * layout.n])[0];
        self.stage(x, d, &layout, src)?;
        self.barrier();
        let rs = self.dst_regs(dst)?;
        let acc_t = acc_type(d);
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            self.ins(["mov", "u32"], (*r, 0));
            let f = self.flat_index(&layout, s);
            let f = self.in_reg32(f);
            // Threads past the tile's end count nothing (their f is beyond it).
            let end = self.r32();
            self.ins(["mov", "u32"], (end, f));
            if let Predicate::Reg(p) = ex {
                self.ins(["selp", "b32"], (end, end, 0, p));
            }
            let at = self.elem_at(src, d.size_bytes(), end.into());
            let me = self.ld_acc(d, at);
            let r = *r;
            self.counted_loop(0.into(), end.into(), 1, |e, k| {
                let at = e.elem_at(src, d.size_bytes(), k.into());
                let v = e.ld_acc(d, at);
                let eq = e.new_pred();
                e.ins(["setp", "eq", acc_t.info().bit_reg()], (eq, v, me));
                let one = e.r32();
                e.ins(["selp", "u32"], (one, 1, 0, eq));
                e.ins(["add", "s32"], (r, r, one));
                Ok(())
            })?;
        }
        self.barrier();
        Ok(())
    }

    /// Counts of the values `0..bins`: shared-memory atomics into zeroed bins.
    pub fn histogram(&mut self, dst: VarId, x: VarId, bins: usize) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("histogram of a scalar");
        };
        let layout = self.layout_of(&shape);
        let off = parts(self, &[4 * bins])[0];
        let tid = self.tid();
        let threads = self.threads() as u32;
        self.counted_loop(tid.into(), (bins as i32).into(), threads, |e, i| {
            let at = e.elem_at(off, 4, i.into());
            e.ins(["st", "shared", "u32"], (at, 0));
            Ok(())
        })?;
        self.barrier();
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let v = self.reg_or_const(Operand::Var(x), s)?;
            let v = self.in_reg(v);
            // Values outside 0..bins (negative ones wrap past it) are not counted.
            let ok = self.new_pred();
            let i = if d.bits() == 64 {
                self.ins(["setp", "lt", "u64"], (ok, v, bins as u64));
                let t = self.r32();
                self.ins(["cvt", "u32", "u64"], (t, v));
                t
            } else {
                self.ins(["setp", "lt", "u32"], (ok, v, bins as u32));
                v
            };
            if let Predicate::Reg(p) = ex {
                self.ins(["and", "pred"], (ok, ok, p));
            }
            let at = self.elem_at(off, 4, i.into());
            self.ins_if(Guard::If(ok), ["red", "shared", "add", "u32"], (at, 1));
        }
        self.barrier();
        self.unstage(dst, DType::I32, off)?;
        self.barrier();
        Ok(())
    }
}

/// The PTX type sort keys of `d` compare as.
fn key_type(d: DType) -> &'static str {
    match (d.is_float(), d.bits()) {
        (true, 64) => "s64",
        (true, _) => "s32",
        (false, _) => acc_type(d).info().arith,
    }
}
