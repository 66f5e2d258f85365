//! The [`ScanPlan::Whole`](crate::collective::ScanPlan) plan of a forward scan of 32- or 64-bit
//! integers (or an inclusive one of `f32`/`f64`), in registers: no staging of the tile. The segments and blocks are the plan's (a
//! thread's run of `v` elements in each chunk; the warps of each chunk, in order), but only
//! the blocks' totals go through shared memory:
//!
//! 1. each thread folds each of its runs; the warp scans the run totals with shuffles
//!    (Kogge-Stone) into exclusive lane prefixes, and lane 31 writes the warp's total of the
//!    chunk;
//! 2. after one barrier, every thread folds the blocks' totals in block order, as the staged
//!    lowering's thread 0 does, keeping the prefixes of its own blocks (at most
//!    [`MOST_BLOCKS`] totals);
//! 3. each thread scans its runs again from those prefixes, in registers.
//!
//! Every combination is the staged lowering's, in its order and association, so float results
//! are its bits and the emulator's (`crate::collective::scan`); integers, equal in any order,
//! also take a cheaper running fold in step 3.

use super::super::code::{Guard, Opcode};
use super::super::emit::{CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::Predicate;
use super::scratch_at;
use super::staging::{acc_opcode, parts};
use crate::collective::scan::identity;
use crate::dtype::DType;
use crate::ir::{Operand, ScanOp, VarId};
use crate::layout::Layout;

/// Block totals a thread folds in step 2; more blocks take the staged lowering.
const MOST_BLOCKS: usize = 64;

/// The fields of a packed warp scan of an add-scan of `d` whose elements are known to lie in
/// `0..=bound`, laid out as `layout`: `(bits, fields)`, each chunk's run totals in `bits` bits
/// of a 32-bit word, `fields` chunks a word (at least two), so one warp scan serves several
/// chunks. A chunk's prefixes over a warp are at most `32 * v * bound`, which the field holds.
/// (An exclusive scan of 4096 flags on 128 threads: 8 chunks in two words, 2 warp scans
/// instead of 8.) `None`: no bound, not a 32-bit add, or fields too wide to share a word.
fn packed_fields(
    bound: Option<u64>,
    d: DType,
    op: ScanOp,
    layout: &Layout,
) -> Option<(usize, usize)> {
    let int32 = matches!(d, DType::I32 | DType::U32);
    if !int32 || op != ScanOp::Add || layout.outer < 2 {
        return None;
    }
    let most = bound?.checked_mul(32 * layout.v as u64)?;
    let bits = (64 - most.leading_zeros()).max(1) as usize;
    let fields = 32 / bits;
    (fields >= 2).then_some((bits, fields))
}

/// Whether [`Emitter::scan_in_registers`] lowers a forward scan of `d` laid out as `layout`
/// (whose plan is `Whole`) on `threads` threads: 32- and 64-bit integers, and inclusive scans
/// of `f32` and `f64` (an exclusive float scan's first element of each run is the previous
/// run's last result, which lives in another thread: those stay staged).
pub(super) fn registers_fit(d: DType, layout: &Layout, threads: usize, exclusive: bool) -> bool {
    let int = matches!(d, DType::I32 | DType::U32 | DType::I64 | DType::U64);
    let float = matches!(d, DType::F32 | DType::F64) && !exclusive;
    (int || float) && threads.is_multiple_of(32) && layout.outer * (threads / 32) <= MOST_BLOCKS
}

/// What the three steps of a scan in registers share.
struct RegScan {
    /// The operator's accumulate instruction.
    ins: Opcode,
    d: DType,
    layout: Layout,
    warps: usize,
    /// The identity's bits.
    id_bits: u64,
    /// The scratch offset of the blocks' totals (`layout.outer * warps` of them).
    totals: usize,
    lane: Reg,
    warp: Reg,
    smem: Reg,
}

impl Emitter<'_> {
    /// A forward scan (`op`, inclusive or `exclusive`) of the integer tile `x` of type `d`
    /// laid out as `layout`, into `dst` (see the module docs). Ends with a barrier.
    pub(super) fn scan_in_registers(
        &mut self,
        dst: VarId,
        x: VarId,
        (d, layout): (DType, Layout),
        op: ScanOp,
        exclusive: bool,
    ) -> CodegenResult<()> {
        let warps = self.threads() / 32;
        let totals = parts(self, &[d.size_bytes() * layout.outer * warps])[0];
        let tid = self.tid();
        let (lane, warp) = (self.r32(), self.r32());
        self.ins(["and", "b32"], (lane, tid, 31));
        self.ins(["shr", "u32"], (warp, tid, 5));
        let sc = RegScan {
            ins: acc_opcode(op.binop(), d)?,
            d,
            layout,
            warps,
            id_bits: identity(op, d),
            totals,
            lane,
            warp,
            smem: self.smem_base(),
        };
        let fields = packed_fields(self.known().upper_bound(Operand::Var(x)), d, op, &layout);
        let runs = self.scan_run_totals(&sc, x, fields)?;
        self.barrier();
        let prefixes = self.scan_block_prefixes(&sc)?;
        self.scan_runs_from(&sc, dst, x, runs, &prefixes, exclusive)?;
        // The next collective may reuse the totals' scratch.
        self.barrier();
        Ok(())
    }

    /// Step 1: each run's total and its exclusive prefix in the warp; lane 31 writes the
    /// warp's total of the chunk. Slots that do not exist count as the identity. Runs whose
    /// warp totals fit a few bits scan several chunks in one word (`fields`, from
    /// [`packed_fields`]). Returns, per run, whether it exists and its prefix in the warp.
    fn scan_run_totals(
        &mut self,
        sc: &RegScan,
        x: VarId,
        fields: Option<(usize, usize)>,
    ) -> CodegenResult<Vec<(Predicate, Reg)>> {
        let (d, layout, ins) = (sc.d, &sc.layout, &sc.ins);
        let size = d.size_bytes();
        let per_word = fields.map_or(1, |(_, n)| n);
        let mut runs = Vec::with_capacity(layout.outer);
        let chunks: Vec<usize> = (0..layout.outer).collect();
        for group in chunks.chunks(per_word) {
            let mut totals_of = Vec::with_capacity(group.len());
            for &o in group {
                let exists = self.chunk_exists(layout, o);
                let t = self.acc_const(d, sc.id_bits)?;
                if exists != Predicate::False {
                    for i in 0..layout.v {
                        let v = self.reg_or_const(Operand::Var(x), o * layout.v + i)?;
                        let v = self.in_reg(v);
                        self.ins_if(exists.guard(), ins.clone(), (t, t, v));
                    }
                }
                totals_of.push((o, exists, t));
            }
            let st = ["st", "shared", d.info().mem];
            let Some((bits, _)) = fields.filter(|_| group.len() > 1) else {
                for (o, exists, t) in totals_of {
                    let id_bits = sc.id_bits;
                    let e =
                        self.group_scan(ins, (t, d), (sc.lane, 32), |em| em.acc_const(d, id_bits))?;
                    let last = self.pred_u32("eq", sc.lane, 31.into());
                    let at = self.r32();
                    self.ins(["mad", "lo", "s32"], (at, sc.warp, size, sc.smem));
                    let off = sc.totals + size * o * sc.warps;
                    self.ins_if(Guard::If(last), st, (scratch_at(at, off), t));
                    runs.push((exists, e));
                }
                continue;
            };
            // Field `k` of the word holds chunk `group[k]`'s values: no field carries into the
            // next, since every prefix of a chunk over the warp fits its bits.
            let word = self.acc_const(d, 0)?;
            for (k, &(_, _, t)) in totals_of.iter().enumerate() {
                let scale = 1i64 << (bits * k);
                self.ins(["mad", "lo", "s32"], (word, t, scale, word));
            }
            let e = self.group_scan(ins, (word, d), (sc.lane, 32), |em| em.acc_const(d, 0))?;
            let last = self.pred_u32("eq", sc.lane, 31.into());
            let at = self.r32();
            self.ins(["mad", "lo", "s32"], (at, sc.warp, size, sc.smem));
            for (k, (o, exists, _)) in totals_of.into_iter().enumerate() {
                let (t, e_o) = (self.reg_of(d), self.reg_of(d));
                let field = ["bfe", "u32"];
                self.ins(field, (t, word, (bits * k) as i64, bits as i64));
                self.ins(field, (e_o, e, (bits * k) as i64, bits as i64));
                let off = sc.totals + size * o * sc.warps;
                self.ins_if(Guard::If(last), st, (scratch_at(at, off), t));
                runs.push((exists, e_o));
            }
        }
        Ok(runs)
    }

    /// Step 2 (after the barrier): the prefix of each of this thread's blocks, folded in block
    /// order from the identity as the staged lowering's thread 0 folds them: block
    /// `o * warps + w` (this thread's warp `w`) takes the fold of the blocks before it.
    fn scan_block_prefixes(&mut self, sc: &RegScan) -> CodegenResult<Vec<Reg>> {
        let (d, warps) = (sc.d, sc.warps);
        let size = d.size_bytes();
        let blocks = sc.layout.outer * warps;
        let prefixes: Vec<_> = (0..sc.layout.outer)
            .map(|_| self.acc_const(d, sc.id_bits))
            .collect::<CodegenResult<_>>()?;
        let mine: Vec<_> = (0..warps)
            .map(|w| self.pred_u32("eq", sc.warp, (w as i32).into()))
            .collect();
        let p = self.acc_const(d, sc.id_bits)?;
        for b in 0..blocks {
            let (o, w) = (b / warps, b % warps);
            self.ins_if(
                Guard::If(mine[w]),
                ["mov", d.info().bit_reg()],
                (prefixes[o], p),
            );
            if b + 1 < blocks {
                let total = self.reg_of(d);
                let at = scratch_at(sc.smem, sc.totals + size * b);
                self.ins(["ld", "shared", d.info().mem], (total, at));
                self.ins(sc.ins.clone(), (p, p, total));
            }
        }
        Ok(prefixes)
    }

    /// Step 3: the runs again, from their prefixes: `base = P op e`, then each element's
    /// `base op (id op x0 op .. op xi)` (floats: this association is the emulator's; integers
    /// take the cheaper running fold, equal in any order).
    fn scan_runs_from(
        &mut self,
        sc: &RegScan,
        dst: VarId,
        x: VarId,
        runs: Vec<(Predicate, Reg)>,
        prefixes: &[Reg],
        exclusive: bool,
    ) -> CodegenResult<()> {
        let (d, v, ins) = (sc.d, sc.layout.v, &sc.ins);
        let rs = self.dst_regs(dst)?;
        for (o, (exists, e)) in runs.into_iter().enumerate() {
            if exists == Predicate::False {
                continue;
            }
            let g = exists.guard();
            let base = self.reg_of(d);
            self.ins(ins.clone(), (base, prefixes[o], e));
            let local = self.acc_const(d, sc.id_bits)?;
            let running = base;
            for i in 0..v {
                let out = rs[o * v + i];
                let x = self.reg_or_const(Operand::Var(x), o * v + i)?;
                let x = self.in_reg(x);
                if d.is_float() {
                    self.ins_if(g, ins.clone(), (local, local, x));
                    self.ins_if(g, ins.clone(), (out, base, local));
                } else if exclusive {
                    self.ins_if(g, ["mov", d.info().bit_reg()], (out, running));
                    self.ins_if(g, ins.clone(), (running, running, x));
                } else {
                    self.ins_if(g, ins.clone(), (running, running, x));
                    self.ins_if(g, ["mov", d.info().bit_reg()], (out, running));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::packed_fields;
    use crate::dtype::DType;
    use crate::ir::ScanOp;
    use crate::layout::Layout;

    #[test]
    fn fields_hold_a_warps_prefixes() {
        let flags = Layout::new(4096, 128, 4);
        // 32 lanes of 4 flags: at most 128, 8 bits, four chunks a word.
        assert_eq!(
            packed_fields(Some(1), DType::I32, ScanOp::Add, &flags),
            Some((8, 4))
        );
        // Values up to 3: at most 384, 9 bits, three a word.
        assert_eq!(
            packed_fields(Some(3), DType::U32, ScanOp::Add, &flags),
            Some((9, 3))
        );
        // Bytes in runs of 16: at most 130,560, 17 bits, one a word: no packing.
        let bytes = Layout::new(8192, 128, 16);
        assert_eq!(
            packed_fields(Some(255), DType::I32, ScanOp::Add, &bytes),
            None
        );
        // Zero is a bound (a tile of zeros): one bit a field.
        assert_eq!(
            packed_fields(Some(0), DType::I32, ScanOp::Add, &flags),
            Some((1, 32))
        );
        // No bound, another operator, 64-bit elements, or one chunk: no packing.
        assert_eq!(packed_fields(None, DType::I32, ScanOp::Add, &flags), None);
        assert_eq!(
            packed_fields(Some(1), DType::I32, ScanOp::Max, &flags),
            None
        );
        assert_eq!(
            packed_fields(Some(1), DType::I64, ScanOp::Add, &flags),
            None
        );
        let one_chunk = Layout::new(512, 128, 4);
        assert_eq!(
            packed_fields(Some(1), DType::I32, ScanOp::Add, &one_chunk),
            None
        );
    }
}
