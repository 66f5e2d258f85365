//! The exact collectives: sorts, top-k, `take`, equal-key ranks and histograms (see
//! `crate::collective::order` for their meaning; no order of combination is involved).
//!
//! Sorts of one line of 8- to 32-bit keys are radix sorts (`radix.rs`). Other sorts are
//! bitonic networks over (key, axis index) pairs, each line padded to a power of
//! two with pads that sort last: comparing the index where keys are equal makes every pair
//! distinct, so the network's result is the stable order in both directions. Keys compare as
//! integers: integers by value, floats by IEEE 754 `totalOrder`, whose key is the bits as a
//! signed integer with the magnitude flipped where the sign is set. A sort, its permutation
//! and its first `k` are the same network; what is written differs.

use super::super::code::Guard;
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::regs::{Class, Reg};
use super::super::value::{Predicate, RegOrConst, RegOrImm};
use super::radix::{entry_bytes, radix_fits, radix_sizes, RadixJob, RadixScratch};
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
    /// Sort (`k = None`) or top-`k` of each line of `x` along `axis`: a radix sort where
    /// `radix::radix_fits`, else a bitonic sort of
    /// (key, axis index) pairs per line, padded to a power of two, then the first `k` places
    /// written (the element, read back by its index, or the index).
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
        let staged = d.size_bytes() * layout.n;
        if radix_fits(d, view.lines(), view.len, staged, self.threads(), placed) {
            return self.radix_sort_line(dst, x, &layout, view, descending, placed, kept, out_d);
        }
        let p2 = view.len.next_power_of_two();
        let slots = view.lines() * p2;
        let ksize = if key_type(d).ends_with("64") { 8 } else { 4 };
        let offs = parts(self, &[d.size_bytes() * layout.n, ksize * slots, 4 * slots]);
        let job = SortJob {
            d,
            view,
            p2,
            descending,
            src: offs[0],
            keys: offs[1],
            idx: offs[2],
            ksize,
        };
        self.stage(x, d, &layout, job.src)?;
        self.barrier();
        let tid = self.tid();
        let threads = self.threads() as u32;
        // Every line's places: the key and index of each element, pads (index >= len) after.
        self.counted_loop(tid.into(), (slots as i32).into(), threads, |e, q| {
            e.sort_fill(&job, q)
        })?;
        self.barrier();
        let mut size = 2;
        while size <= p2 {
            let mut j = size / 2;
            while j >= 1 {
                let pairs = (slots / 2) as i32;
                self.counted_loop(tid.into(), pairs.into(), threads, |e, q| {
                    e.sort_exchange(&job, q, size, j)
                })?;
                self.barrier();
                j /= 2;
            }
            size *= 2;
        }
        // The results take the keys' place: no key is read once the network is done, and no
        // result is wider than its key (keys are 4 or 8 bytes, `kept <= len <= p2`).
        let out = offs[1];
        let total = (view.lines() * kept) as i32;
        self.counted_loop(tid.into(), total.into(), threads, |e, q| {
            e.sort_place(&job, q, kept, placed, out)
        })?;
        self.barrier();
        self.unstage(dst, out_d, out)?;
        self.barrier();
        Ok(())
    }

    /// [`Emitter::sort_line`] of one line of 8- to 32-bit keys: a radix sort (`radix.rs`),
    /// which writes the first `kept` places itself.
    #[allow(clippy::too_many_arguments)]
    fn radix_sort_line(
        &mut self,
        dst: VarId,
        x: VarId,
        layout: &crate::layout::Layout,
        view: AxisView,
        descending: bool,
        placed: Placed,
        kept: usize,
        out_d: DType,
    ) -> CodegenResult<()> {
        let Ty::Tile { dtype: d, .. } = self.ty(x)?.clone() else {
            return internal("sort of a scalar");
        };
        let staged = d.size_bytes() * layout.n;
        let sizes = radix_sizes(d, view.len, staged, self.threads(), placed);
        let offs = parts(self, &sizes);
        let job = RadixJob {
            d,
            len: view.len,
            descending,
            signed: key_type(d).starts_with('s'),
            placed,
            kept,
            s: RadixScratch {
                src: offs[1],
                keys: [offs[0], offs[1]],
                idx: [offs[2], offs[3]],
                counts: offs[4],
                entry: entry_bytes(view.len),
                warp_totals: offs[5],
            },
        };
        self.radix_fill(&job, x, layout)?;
        let out = self.radix_sort(&job)?;
        self.unstage(dst, out_d, out)?;
        self.barrier();
        Ok(())
    }

    /// Place `q` (line `q / p2`, position `q % p2`): its key and index, or a pad.
    fn sort_fill(&mut self, job: &SortJob, q: Reg) -> CodegenResult<()> {
        let (line, pos) = (self.r32(), self.r32());
        self.ins(["shr", "u32"], (line, q, job.p2.trailing_zeros()));
        self.ins(["and", "b32"], (pos, q, job.p2 as u32 - 1));
        let real = self.pred_u32("lt", pos, (job.view.len as i32).into());
        let base = self.line_base(&job.view, line);
        let i = self.along(base, pos, job.view.inner);
        // Pads read element 0 of their line's first place: a valid address, an ignored key.
        self.ins(["selp", "b32"], (i, i, 0, real));
        let at = self.elem_at(job.src, job.d.size_bytes(), i.into());
        let key = self.sort_key(job.d, at);
        let kat = self.elem_at(job.keys, job.ksize, q.into());
        self.ins(["st", "shared", key_bits(job.ksize)], (kat, key));
        let iat = self.elem_at(job.idx, 4, q.into());
        self.ins(["st", "shared", "u32"], (iat, pos));
        Ok(())
    }

    /// Compare-exchange pair `q` of the bitonic stage (`size`, `j`): places `i` and `i | j`
    /// of a line, `i` with bit `j` clear, in ascending order where bit `size` of `i` is clear.
    fn sort_exchange(&mut self, job: &SortJob, q: Reg, size: usize, j: usize) -> CodegenResult<()> {
        let half = job.p2 / 2;
        let (line, r, i) = (self.r32(), self.r32(), self.r32());
        self.ins(["shr", "u32"], (line, q, half.trailing_zeros()));
        self.ins(["and", "b32"], (r, q, half as u32 - 1));
        // i = (r with a 0 inserted at bit log2(j)).
        let lj = j.trailing_zeros();
        self.ins(["shr", "u32"], (i, r, lj));
        self.ins(["shl", "b32"], (i, i, lj + 1));
        let low = self.r32();
        self.ins(["and", "b32"], (low, r, j as u32 - 1));
        self.ins(["or", "b32"], (i, i, low));
        let (a, b) = (self.r32(), self.r32());
        self.ins(["mad", "lo", "s32"], (a, line, job.p2, i));
        self.ins(["add", "s32"], (b, a, j));
        let kt = key_type(job.d);
        let kb_ = key_bits(job.ksize);
        let (ka_at, kb_at) = (
            self.elem_at(job.keys, job.ksize, a.into()),
            self.elem_at(job.keys, job.ksize, b.into()),
        );
        let (ia_at, ib_at) = (
            self.elem_at(job.idx, 4, a.into()),
            self.elem_at(job.idx, 4, b.into()),
        );
        let (ka, kb) = if job.ksize == 8 {
            (self.r64(), self.r64())
        } else {
            (self.r32(), self.r32())
        };
        let (ia, ib) = (self.r32(), self.r32());
        self.ins(["ld", "shared", kb_], (ka, ka_at.clone()));
        self.ins(["ld", "shared", kb_], (kb, kb_at.clone()));
        self.ins(["ld", "shared", "u32"], (ia, ia_at.clone()));
        self.ins(["ld", "shared", "u32"], (ib, ib_at.clone()));
        // a after b: a pad after a real element; else by key, equal keys by index.
        let len = job.view.len as u32;
        let (pa, pb, diff, t, after) = (
            self.new_pred(),
            self.new_pred(),
            self.new_pred(),
            self.new_pred(),
            self.new_pred(),
        );
        self.ins(["setp", "ge", "u32"], (pa, ia, len));
        self.ins(["setp", "ge", "u32"], (pb, ib, len));
        self.ins(["xor", "pred"], (diff, pa, pb));
        self.ins(["setp", "gt", "u32"], (t, ia, ib));
        self.ins(["setp", "eq", "and", kt], (t, ka, kb, t));
        let cmp = if job.descending { "lt" } else { "gt" };
        self.ins(["setp", cmp, "or", kt], (t, ka, kb, t));
        // after = diff ? pa : t
        let (x, y) = (self.new_pred(), self.new_pred());
        self.ins(["and", "pred"], (x, diff, pa));
        self.ins(["not", "pred"], (y, diff));
        self.ins(["and", "pred"], (y, y, t));
        self.ins(["or", "pred"], (after, x, y));
        // Descending half-sequences swap the other way.
        if size < job.p2 {
            let dseg = self.r32();
            self.ins(["and", "b32"], (dseg, i, size as u32));
            let dp = self.pred_u32("ne", dseg, 0.into());
            self.ins(["xor", "pred"], (after, after, dp));
        }
        let g = Guard::If(after);
        self.ins_if(g, ["st", "shared", kb_], (ka_at, kb));
        self.ins_if(g, ["st", "shared", kb_], (kb_at, ka));
        self.ins_if(g, ["st", "shared", "u32"], (ia_at, ib));
        self.ins_if(g, ["st", "shared", "u32"], (ib_at, ia));
        Ok(())
    }

    /// Result place `q` (line `q / kept`, position `q % kept`): the element the sort put there,
    /// or its index.
    fn sort_place(
        &mut self,
        job: &SortJob,
        q: Reg,
        kept: usize,
        placed: Placed,
        out: usize,
    ) -> CodegenResult<()> {
        let line = self.div_u32(q.into(), kept);
        let line = self.in_reg32(line);
        let pos = self.rem_u32(q.into(), kept);
        let pos = self.in_reg32(pos);
        let slot = self.r32();
        self.ins(["mad", "lo", "s32"], (slot, line, job.p2, pos));
        let iat = self.elem_at(job.idx, 4, slot.into());
        let src_k = self.r32();
        self.ins(["ld", "shared", "u32"], (src_k, iat));
        // The result's row-major place: (a * kept + pos) * inner + b for line = a * inner + b.
        let out_view = AxisView {
            outer: job.view.outer,
            len: kept,
            inner: job.view.inner,
        };
        let obase = self.line_base(&out_view, line);
        let to = self.along(obase, pos, job.view.inner);
        match placed {
            Placed::Index => {
                let at = self.elem_at(out, 4, to.into());
                self.ins(["st", "shared", "s32"], (at, src_k));
            }
            Placed::Value => {
                let base = self.line_base(&job.view, line);
                let from = self.along(base, src_k, job.view.inner);
                let size = job.d.size_bytes();
                let at = self.elem_at(job.src, size, from.into());
                let mem = job.d.info().mem;
                let v = match size {
                    8 => self.r64(),
                    2 => self.new_reg(Class::B16),
                    _ => self.r32(),
                };
                self.ins(["ld", "shared", mem], (v, at));
                let at = self.elem_at(out, size, to.into());
                self.ins(["st", "shared", mem], (at, v));
            }
        }
        Ok(())
    }

    /// The sort key of the element of type `d` at `addr`, in a register compared by
    /// [`key_type`].
    pub(super) fn sort_key(&mut self, d: DType, addr: super::super::code::Address) -> Reg {
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
        self.order_float_bits(r, m, wide, bits);
        r
    }

    /// A float's `bits`-bit pattern, sign-extended in the `wide`-bit register `r`, made an
    /// integer that orders as `totalOrder`: the magnitude's bits flipped where the sign is set
    /// (`m`, a scratch register of `r`'s width, gets their mask).
    pub(super) fn order_float_bits(&mut self, r: Reg, m: Reg, wide: u32, bits: u32) {
        let (s, u, b) = if wide == 64 {
            ("s64", "u64", "b64")
        } else {
            ("s32", "u32", "b32")
        };
        self.ins(["shr", s], (m, r, wide - 1));
        self.ins(["shr", u], (m, m, wide - bits + 1));
        self.ins(["xor", b], (r, r, m));
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
        let known = self.known_below(indices, view.len);
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&out_layout, s / out_layout.v);
            if ex == Predicate::False {
                continue;
            }
            self.copy_elem(d, *r, RegOrConst::Const(0, d))?;
            let f = self.flat_index(&out_layout, s);
            let f = self.in_reg32(f);
            // `f` is below the result's size, `outer * out_len * inner`: with one line group
            // (`outer` 1) `a` is 0.
            let b = self.rem_u32(f.into(), view.inner);
            let a = if view.outer == 1 {
                RegOrImm::Imm(0)
            } else {
                self.div_u32(f.into(), view.inner * out_len)
            };
            // The index, checked below the axis length (negative ones wrap past it).
            let iv = self.reg_or_const(Operand::Var(indices), s)?;
            let iv = self.in_reg(iv);
            let (ok, idx) = self.index_below(id, iv, view.len, ex, known);
            let g = ok.guard();
            let row = self.mul32(a, RegOrImm::Imm(view.len as i32));
            let i = self.add32(row, idx.into());
            let i = self.mul32(i, RegOrImm::Imm(view.inner as i32));
            let i = self.add32(i, b);
            let addr = self.r32();
            self.ins(["mad", "lo", "s32"], (addr, i, d.size_bytes(), smem));
            self.ld_scratch(g, d, *r, addr, src);
        }
        self.barrier();
        Ok(())
    }

    /// Whether integer `v` (of type `d`, in its register) is in `0..bound`, compared unsigned
    /// at its own width so negative values fail and 64-bit ones are not truncated first, and'd
    /// with `exists`; and `v` as a 32-bit index (meaningful where the predicate holds). With
    /// `known_below` (every value of `v` is known to be in `0..bound`) there is no compare.
    fn index_below(
        &mut self,
        d: DType,
        v: Reg,
        bound: usize,
        exists: Predicate,
        known_below: bool,
    ) -> (Predicate, Reg) {
        if known_below {
            let idx = if d.bits() == 64 {
                let t = self.r32();
                self.ins(["cvt", "u32", "u64"], (t, v));
                t
            } else {
                v
            };
            return (exists, idx);
        }
        let ok = self.new_pred();
        let idx = if d.bits() == 64 {
            self.ins(["setp", "lt", "u64"], (ok, v, bound as u64));
            let t = self.r32();
            self.ins(["cvt", "u32", "u64"], (t, v));
            t
        } else {
            self.ins(["setp", "lt", "u32"], (ok, v, bound as u32));
            v
        };
        if let Predicate::Reg(p) = exists {
            self.ins(["and", "pred"], (ok, ok, p));
        }
        (Predicate::Reg(ok), idx)
    }

    /// Whether every value of integer tile `x` is known to be below `bound` (and never
    /// negative): its index tests can go.
    fn known_below(&self, x: VarId, bound: usize) -> bool {
        self.known()
            .upper_bound(Operand::Var(x))
            .is_some_and(|b| b < bound as u64)
    }

    /// For each element, the number of equal elements before it in row-major order (or in
    /// `order`, see `count_order.rs`): each element compared with every earlier one.
    pub fn equal_rank(
        &mut self,
        dst: VarId,
        x: VarId,
        order: Option<&[usize]>,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("equal_rank of a scalar");
        };
        if super::rank::counted_rank_fits(d, self.threads()) {
            return self.equal_rank_bytes(dst, x, &shape, d, None, order);
        }
        let layout = self.layout_of(&shape);
        let src = parts(self, &[d.size_bytes() * layout.n])[0];
        self.stage_in_order(x, d, &layout, src, &shape, order)?;
        self.barrier();
        let rs = self.dst_regs(dst)?;
        let acc_t = acc_type(d);
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            self.ins(["mov", "u32"], (*r, 0));
            let f = self.count_pos(&layout, &shape, order, s);
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

    /// Each element's place in a stable counting sort by value (`Inst::Place`). A `u8` tile
    /// with 256 starts or more is counted in one go: the per-warp prefixes of the rank's count
    /// table begin at the starts (`rank.rs`), which saves the gather and the add, and the
    /// registers that would hold both terms at once. Other tiles add a gather of the starts
    /// to their equal rank.
    pub fn place(
        &mut self,
        dst: VarId,
        x: VarId,
        starts: VarId,
        order: Option<&[usize]>,
    ) -> CodegenResult<()> {
        let Ty::Tile { shape, dtype: d } = self.ty(x)?.clone() else {
            return internal("place of a scalar");
        };
        let Ty::Tile { shape: sshape, .. } = self.ty(starts)?.clone() else {
            return internal("place from scalar starts");
        };
        let m: usize = sshape.iter().product();
        if d == DType::U8 && m >= 256 && super::rank::counted_rank_fits(d, self.threads()) {
            return self.equal_rank_bytes(dst, x, &shape, d, Some(starts), order);
        }
        if !d.is_int() {
            return internal(format!("place of `{}` values", d.name()));
        }
        // Ends with a barrier: the scratch is free again.
        self.equal_rank(dst, x, order)?;
        let starts_layout = self.layout_of(&sshape);
        let src = parts(self, &[4 * starts_layout.n])[0];
        self.stage(starts, DType::I32, &starts_layout, src)?;
        self.barrier();
        let layout = self.layout_of(&shape);
        let rs = self.dst_regs(dst)?;
        let smem = self.smem_base();
        let known = self.known_below(x, m);
        for (s, r) in rs.iter().enumerate() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let v = self.reg_or_const(Operand::Var(x), s)?;
            let v = self.in_reg(v);
            // Values outside the starts start at 0 (`take`'s rule).
            let (ok, idx) = self.index_below(d, v, m, ex, known);
            let start = self.r32();
            self.ins(["mov", "u32"], (start, 0));
            let addr = self.r32();
            self.ins(["mad", "lo", "s32"], (addr, idx, 4, smem));
            self.ld_scratch(ok.guard(), DType::I32, start, addr, src);
            self.ins(["add", "s32"], (*r, *r, start));
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
        let known = self.known_below(x, bins);
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(&layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let v = self.reg_or_const(Operand::Var(x), s)?;
            let v = self.in_reg(v);
            // Values outside 0..bins (negative ones wrap past it) are not counted.
            let (ok, i) = self.index_below(d, v, bins, ex, known);
            let at = self.elem_at(off, 4, i.into());
            self.ins_if(ok.guard(), ["red", "shared", "add", "u32"], (at, 1));
        }
        self.barrier();
        self.unstage(dst, DType::I32, off)?;
        self.barrier();
        Ok(())
    }
}

/// What the phases of a sort share: the element type, the lines, their padded length, the
/// direction and the scratch arrays (staged tile, keys, indices).
struct SortJob {
    d: DType,
    view: AxisView,
    p2: usize,
    descending: bool,
    src: usize,
    keys: usize,
    idx: usize,
    ksize: usize,
}

/// The bit type moving a key of `size` bytes.
fn key_bits(size: usize) -> &'static str {
    if size == 8 {
        "b64"
    } else {
        "b32"
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
