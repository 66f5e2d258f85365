//! The range path of a rank-1 access at `offset + pos`: element `f` is active iff
//! `lo <= f <= hi` for two uniform limits, its address one per-thread base plus a constant;
//! and the test of whether a thread's whole run can go as vector instructions.

use super::{Addr, DistRange, Mem, Plan, Range};
use crate::dtype::DType;
use crate::ir::{BinOp, Coord, Operand};
use crate::ptx::emit::{CodegenResult, Emitter, GlobalView};
use crate::ptx::known::trailing_zeros_of_imm;
use crate::ptx::regs::Reg;
use crate::ptx::value::{Predicate, RegOrConst, RegOrImm};

impl Emitter<'_> {
    /// The range plans of a rank-1 access at coordinate `offset + pos` (`n` elements per
    /// thread): `plan.range`, when it is complete (`true`); for a distributed tensor,
    /// `plan.dist_range` for the vector path, the general plan still to follow (`false`).
    pub(super) fn range_plan(
        &mut self,
        plan: &mut Plan,
        offset: Operand,
        n: i64,
    ) -> CodegenResult<bool> {
        let (uniform, size) = (plan.uniform, plan.size);
        let f0 = self.flat_base(plan);
        match &plan.mem {
            Mem::Global(g) => {
                let g = g.clone();
                let r = self.global_range(&g, offset, n, plan.access.check_bounds, f0, size)?;
                plan.range = Some(r);
                return Ok(true);
            }
            // A scalar access to a distributed tensor has no run to vectorise.
            Mem::Shared { rows: Some(_), .. } if uniform => {}
            Mem::Shared { shape, rows, .. } => {
                let (len, rows) = (shape[0], *rows);
                let off0 = self.coord32(offset, 0)?;
                let (lo, hi) = if plan.access.check_bounds {
                    let lo = self.sub32(RegOrImm::Imm(0), off0);
                    let h = self.sub32(RegOrImm::Imm(len as i32), off0);
                    let h = self.min_max32(false, h, RegOrImm::Imm(n as i32));
                    (Some(lo), Some(self.sub32(h, RegOrImm::Imm(1))))
                } else {
                    (None, None)
                };
                let m0 = self.add32(off0, f0);
                match rows {
                    None => {
                        let first = self.shared_address(plan, m0);
                        let window = self.range_window(f0, lo, hi);
                        plan.range = Some(Range {
                            lo,
                            hi,
                            window,
                            first,
                        });
                        return Ok(true);
                    }
                    // A distributed tensor: the range serves the vector path; the
                    // per-element fallback takes the general path (`general_plan`).
                    Some(rows) => {
                        plan.dist_range = Some(DistRange { lo, hi, m0, rows });
                    }
                }
            }
        }
        Ok(false)
    }

    /// The range plan of a rank-1 global access at `offset`: with `c0 = view offset + offset`
    /// (exact, 64-bit), element `f` is in bounds iff `0 <= offset + f < dim` and
    /// `0 <= c0 + f < len`; the limits are clamped to the tile (`-1..=n`) so that the
    /// per-element tests are 32-bit.
    fn global_range(
        &mut self,
        g: &GlobalView,
        offset: Operand,
        n: i64,
        check: bool,
        f0: RegOrImm,
        size: usize,
    ) -> CodegenResult<Range> {
        let off = self.wide_int(offset)?;
        // c0 = g.off + offset (the whole-tensor case needs no add).
        let c0 = if g.whole {
            off
        } else if off == RegOrConst::Const(0, DType::I64) {
            RegOrConst::Reg(g.off)
        } else {
            let t = self.r64();
            self.ins(["add", "s64"], (t, g.off, off));
            RegOrConst::Reg(t)
        };
        let (lo, hi) = if check {
            let lo = match (off, c0) {
                (RegOrConst::Const(a, _), RegOrConst::Const(..)) => {
                    // Only the whole tensor has a constant c0 (== off).
                    RegOrImm::Imm(clamp_tile((a as i64).saturating_neg(), n))
                }
                _ => {
                    // lo = max(-offset, -c0), clamped to [-1, n].
                    let t = self.r64();
                    let u = self.r64();
                    let o = self.in_reg64(off);
                    self.ins(["neg", "s64"], (t, o));
                    if !g.whole {
                        let c = self.in_reg64(c0);
                        self.ins(["neg", "s64"], (u, c));
                        self.ins(["max", "s64"], (t, t, u));
                    }
                    self.clamp64(t, n)
                }
            };
            // hi = min(dim - offset, len - c0, n) - 1.
            let t = self.r64();
            let od = self.in_reg64(off);
            self.ins(["sub", "s64"], (t, g.dims[0], od));
            if !g.whole {
                let u = self.r64();
                let c = self.in_reg64(c0);
                self.ins(["sub", "s64"], (u, g.len, c));
                self.ins(["min", "s64"], (t, t, u));
            }
            self.ins(["add", "s64"], (t, t, -1));
            // At most the tile's last element: a thread whose first element lies past the end
            // of a tile shorter than the block must fail the test (clamping to `n` let one such
            // thread through, which ran [1]-tile RMWs twice on the GPU).
            let hi = self.clamp64(t, n - 1);
            (Some(lo), Some(hi))
        } else {
            (None, None)
        };
        // first = ptr + size * (c0 + tid * v), wrapping like the address arithmetic it stands for
        // (an offset near the ends of i64 is out of bounds, never accessed, but still printed).
        let first = match (c0, f0) {
            (RegOrConst::Const(c, _), RegOrImm::Imm(f)) => Addr {
                base: g.ptr,
                imm: (c as i64).wrapping_add(f as i64).wrapping_mul(size as i64),
            },
            (RegOrConst::Const(c, _), RegOrImm::Reg(fr)) => {
                let a = self.r64();
                self.ins(["mul", "wide", "u32"], (a, fr, size));
                self.ins(["add", "s64"], (a, a, g.ptr));
                Addr {
                    base: a,
                    imm: (c as i64).wrapping_mul(size as i64),
                }
            }
            (RegOrConst::Reg(cr), f) => {
                let m = self.r64();
                match f {
                    RegOrImm::Imm(0) => self.ins(["mov", "b64"], (m, cr)),
                    RegOrImm::Imm(fi) => self.ins(["add", "s64"], (m, cr, fi)),
                    RegOrImm::Reg(fr) => {
                        let w = self.r64();
                        self.ins(["cvt", "u64", "u32"], (w, fr));
                        self.ins(["add", "s64"], (m, cr, w));
                    }
                }
                let a = self.r64();
                self.ins(["mad", "lo", "s64"], (a, m, size, g.ptr));
                Addr { base: a, imm: 0 }
            }
        };
        let window = self.range_window(f0, lo, hi);
        Ok(Range {
            lo,
            hi,
            window,
            first,
        })
    }

    /// Whether every slot of this thread passes the window test of `plan`'s range (`None`: it
    /// has none), tested at the first slot and the last, whose constants are the smallest and
    /// the largest. Where the unsigned test `rel + c < span` passes at both ends it passes for
    /// every constant between: the first end's sum is below `span`, itself below `2^31` (a
    /// tile's or a shared tensor's length), and a thread's constants differ by less than
    /// `2^31`, so no sum between wraps. Where it holds, the slots need no test each.
    pub(super) fn range_all_inside(
        &mut self,
        plan: &Plan,
        slots: usize,
    ) -> CodegenResult<Option<Predicate>> {
        let window = plan.range.as_ref().and_then(|r| r.window);
        let (Some((rel, span)), false, Some(last)) = (window, plan.uniform, slots.checked_sub(1))
        else {
            return Ok(None);
        };
        let Ok(c) = i32::try_from(plan.layout.slot_const(last)) else {
            return Ok(None);
        };
        let end = self.add32(rel, RegOrImm::Imm(c));
        let first_in = self.setp32(BinOp::Lt, "u32", rel, span);
        let last_in = self.setp32(BinOp::Lt, "u32", end, span);
        Ok(Some(self.and_pred(first_in, last_in)))
    }

    /// [`Range::window`]: `(f_first - lo, max(hi + 1 - lo, 0))` for the thread's first element
    /// index `f0`, in wrapping 32-bit arithmetic. A global range's limits are clamped to the
    /// tile, so nothing wraps. A shared one's are not (`lo = -offset`): where `len - offset`
    /// wraps (an offset below `len - 2^31`) the span wraps back to `len` and `f - lo` is
    /// negative, and where `offset + n` wraps the span is `len` and `f - lo` is the offset or
    /// more, or wraps negative: all fail the unsigned test, as those elements are outside.
    fn range_window(
        &mut self,
        f0: RegOrImm,
        lo: Option<RegOrImm>,
        hi: Option<RegOrImm>,
    ) -> Option<(RegOrImm, RegOrImm)> {
        let (lo, hi) = (lo?, hi?);
        let rel = self.sub32(f0, lo);
        let end = self.add32(hi, RegOrImm::Imm(1));
        let span = self.sub32(end, lo);
        let span = self.min_max32(true, span, RegOrImm::Imm(0));
        Some((rel, span))
    }

    /// A 64-bit limit clamped to `[-1, n]` as a 32-bit value.
    fn clamp64(&mut self, t: Reg, n: i64) -> RegOrImm {
        let r = self.r32();
        self.ins(["max", "s64"], (t, t, -1));
        self.ins(["min", "s64"], (t, t, n));
        self.ins(["cvt", "u32", "u64"], (r, t));
        RegOrImm::Reg(r)
    }

    /// Whether the whole thread's tile can use vector accesses: all slots active, aligned, and a
    /// run of at least 4 bytes. Returns the (per-thread) predicate and the first address, or
    /// `None` without a range plan.
    pub(super) fn vector_check(
        &mut self,
        plan: &Plan,
    ) -> CodegenResult<Option<(Predicate, Option<Addr>)>> {
        let layout = plan.layout;
        let v = layout.v;
        let (lo, hi, first) = match (&plan.range, &plan.dist_range) {
            (Some(r), _) => (r.lo, r.hi, Some(r.first)),
            // An aligned run of `v` stays in one block when `v` divides the rows per block.
            (None, Some(d)) if d.rows.is_multiple_of(v) => (d.lo, d.hi, None),
            _ => return Ok(None),
        };
        if v * plan.size < 4 {
            return Ok(None);
        }
        let vbits = v.trailing_zeros();
        // Alignment of the element index of the thread's first element (tid * v is aligned).
        let (offset, view_zeros) = match (&plan.mem, &plan.access.coords[0]) {
            (Mem::Global(_), Coord::Pos { offset, .. }) => (
                *offset,
                self.known().trailing_zeros(Operand::Var(plan.access.mem)),
            ),
            (Mem::Shared { .. }, Coord::Pos { offset, .. }) => (*offset, 64),
            _ => return Ok(None),
        };
        // Statically misaligned (aligned view, constant offset not a multiple of v): no vector path.
        if let Some(c) = offset.imm_int() {
            if view_zeros >= vbits && trailing_zeros_of_imm(c as i64) < vbits {
                return Ok(None);
            }
        }
        let mut full = if self.known().trailing_zeros(offset).min(view_zeros) >= vbits {
            Predicate::True
        } else {
            // One uniform test of the first element index's alignment.
            let c0 = match &plan.mem {
                Mem::Global(g) => {
                    let g = g.clone();
                    let o = self.wide_int(offset)?;
                    let t = self.r64();
                    self.ins(["add", "s64"], (t, g.off, o));
                    let w = self.r32();
                    self.ins(["cvt", "u32", "u64"], (w, t));
                    RegOrImm::Reg(w)
                }
                Mem::Shared { .. } => self.coord32(offset, 0)?,
            };
            let c0 = self.in_reg32(c0);
            let t = self.r32();
            self.ins(["and", "b32"], (t, c0, v - 1));
            self.setp32(BinOp::Eq, "s32", RegOrImm::Reg(t), RegOrImm::Imm(0))
        };
        let base = RegOrImm::Reg(self.tid_times(v));
        let last = layout.slot_const(layout.slots() - 1) as i32;
        let in_range = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let a = self.setp32(BinOp::Ge, "s32", base, lo);
                let end = self.add32(base, RegOrImm::Imm(last));
                let b = self.setp32(BinOp::Le, "s32", end, hi);
                self.and_pred(a, b)
            }
            _ => {
                let layout = plan.layout;
                self.chunk_exists(&layout, layout.outer - 1)
            }
        };
        full = self.and_pred(full, in_range);
        for s in 0..layout.slots() {
            let m = self.mask(plan, s)?;
            full = self.and_pred(full, m);
        }
        if full == Predicate::False {
            return Ok(None);
        }
        Ok(Some((full, first)))
    }
}

/// `-x` clamped to the tile range `[-1, n]`.
fn clamp_tile(x: i64, n: i64) -> i32 {
    x.clamp(-1, n) as i32
}
