//! `equal_rank` of tiles of 8-bit elements (`u8`, `i8`, `bool`): at most 256 distinct bytes,
//! so ranks are counted, not compared (the general lowering in `order.rs` compares each element
//! with every earlier one). This is the rank a stable radix scatter needs, for its digits
//! (`(digit as u8).equal_rank()`), as CUB's `BlockRadixRankMatch` computes it:
//! 1. each warp takes a contiguous segment of the tile, 32 elements a round in order, and in
//!    each round `match.any` groups the lanes holding the same byte: an element's rank in its
//!    warp is the warp's count of its byte so far (a `[warps][256]` table in shared memory)
//!    plus its group's lanes below it; the group's lowest lane then adds the group to the
//!    count;
//! 2. each byte's counts are turned into exclusive prefixes over the warps (thread `b` walks
//!    the table's column `b`);
//! 3. every element adds its warp's prefix of its byte.
//!
//! Elements are taken in row-major order, segment after segment, so ranks count the earlier
//! elements in row-major order, as the general lowering does.

use super::super::code::Guard;
use super::super::emit::{CodegenResult, Emitter};
use super::super::regs::Reg;
use super::scratch_at;
use super::staging::parts;
use crate::dtype::DType;
use crate::ir::VarId;

/// Distinct values of an 8-bit element.
const BYTES: usize = 256;

/// Whether [`Emitter::equal_rank_bytes`] lowers an `equal_rank` of `d` on `threads` threads.
pub(super) fn counted_rank_fits(d: DType, threads: usize) -> bool {
    d.size_bytes() == 1 && threads.is_multiple_of(32) && threads > 0
}

/// The registers of a round: the element's index and whether it is inside the tile.
struct Round {
    i: Reg,
    inside: Reg,
}

impl Emitter<'_> {
    /// `equal_rank` of tile `x` of 8-bit type `d` and shape `shape` into `dst` (see the module
    /// docs). Starts after and ends with a barrier.
    pub(super) fn equal_rank_bytes(
        &mut self,
        dst: VarId,
        x: VarId,
        shape: &[usize],
        d: DType,
    ) -> CodegenResult<()> {
        let layout = self.layout_of(shape);
        let n: usize = shape.iter().product();
        let warps = self.threads() / 32;
        // Elements per warp, in whole rounds of 32.
        let seg = n.div_ceil(warps * 32) * 32;
        let offs = parts(self, &[n, 4 * n, 4 * BYTES * warps]);
        let (src, ranks, table) = (offs[0], offs[1], offs[2]);
        let tid = self.tid();
        self.counted_loop(
            tid.into(),
            ((BYTES * warps) as i32).into(),
            self.threads() as u32,
            |e, k| {
                let at = e.elem_at(table, 4, k.into());
                e.ins(["st", "shared", "u32"], (at, 0));
                Ok(())
            },
        )?;
        self.stage(x, d, &layout, src)?;
        self.barrier();
        let (lane, warp, below_me) = (self.r32(), self.r32(), self.r32());
        self.ins(["and", "b32"], (lane, tid, 31));
        self.ins(["shr", "u32"], (warp, tid, 5));
        let one = self.r32();
        self.ins(["mov", "u32"], (one, 1));
        self.ins(["shl", "b32"], (below_me, one, lane));
        self.ins(["sub", "s32"], (below_me, below_me, 1));
        // This warp's row of the table, and its first element.
        let smem = self.smem_base();
        let row = self.r32();
        self.ins(["mad", "lo", "s32"], (row, warp, (4 * BYTES) as i32, smem));
        let first = self.r32();
        self.ins(["mad", "lo", "s32"], (first, warp, seg as i32, lane));
        // 1. Ranks within the warp, round by round (every lane of a warp runs every round).
        self.counted_loop(0.into(), (seg as i32).into(), 32, |e, r| {
            let Round { i, inside } = e.round(first, r, n);
            // Lanes past the tile hold 256, a value no element has; they update nothing.
            let v = e.r32();
            e.ins(["mov", "u32"], (v, BYTES as i32));
            let at = e.elem_at(src, 1, i.into());
            e.ins_if(Guard::If(inside), ["ld", "shared", "u8"], (v, at));
            let peers = e.r32();
            e.ins(["match", "any", "sync", "b32"], (peers, v, -1));
            let (below, lower, count) = (e.r32(), e.r32(), e.r32());
            e.ins(["and", "b32"], (below, peers, below_me));
            e.ins(["popc", "b32"], (lower, below));
            e.ins(["popc", "b32"], (count, peers));
            let slot = e.r32();
            e.ins(["mad", "lo", "s32"], (slot, v, 4, row));
            let seen = e.r32();
            e.ins(["mov", "u32"], (seen, 0));
            e.ins_if(
                Guard::If(inside),
                ["ld", "shared", "u32"],
                (seen, scratch_at(slot, table)),
            );
            // Every lane has read the count before the group's lowest lane moves it on.
            e.ins(["bar", "warp", "sync"], (-1,));
            let leader = e.new_pred();
            e.ins(["setp", "eq", "u32"], (leader, below, 0));
            e.ins(["and", "pred"], (leader, leader, inside));
            let next = e.r32();
            e.ins(["add", "s32"], (next, seen, count));
            e.ins_if(
                Guard::If(leader),
                ["st", "shared", "u32"],
                (scratch_at(slot, table), next),
            );
            e.ins(["bar", "warp", "sync"], (-1,));
            let rank = e.r32();
            e.ins(["add", "s32"], (rank, seen, lower));
            let out = e.elem_at(ranks, 4, i.into());
            e.ins_if(Guard::If(inside), ["st", "shared", "u32"], (out, rank));
            Ok(())
        })?;
        self.barrier();
        // 2. Each byte's counts over the warps, as exclusive prefixes.
        self.counted_loop(
            tid.into(),
            (BYTES as i32).into(),
            self.threads() as u32,
            |e, b| {
                let col = e.r32();
                let smem = e.smem_base();
                e.ins(["mad", "lo", "s32"], (col, b, 4, smem));
                let running = e.r32();
                e.ins(["mov", "u32"], (running, 0));
                for w in 0..warps {
                    let at = scratch_at(col, table + 4 * BYTES * w);
                    let c = e.r32();
                    e.ins(["ld", "shared", "u32"], (c, at.clone()));
                    e.ins(["st", "shared", "u32"], (at, running));
                    e.ins(["add", "s32"], (running, running, c));
                }
                Ok(())
            },
        )?;
        self.barrier();
        // 3. Plus the warp's prefix of the element's byte.
        self.counted_loop(0.into(), (seg as i32).into(), 32, |e, r| {
            let Round { i, inside } = e.round(first, r, n);
            let g = Guard::If(inside);
            let v = e.r32();
            let at = e.elem_at(src, 1, i.into());
            e.ins_if(g, ["ld", "shared", "u8"], (v, at));
            let slot = e.r32();
            e.ins(["mad", "lo", "s32"], (slot, v, 4, row));
            let (before, rank) = (e.r32(), e.r32());
            e.ins_if(
                g,
                ["ld", "shared", "u32"],
                (before, scratch_at(slot, table)),
            );
            let out = e.elem_at(ranks, 4, i.into());
            e.ins_if(g, ["ld", "shared", "u32"], (rank, out.clone()));
            e.ins(["add", "s32"], (rank, rank, before));
            e.ins_if(g, ["st", "shared", "u32"], (out, rank));
            Ok(())
        })?;
        self.barrier();
        self.unstage(dst, DType::I32, ranks)?;
        self.barrier();
        Ok(())
    }

    /// Round `r` of a warp whose first element is `first`: element `first + r`, and whether it
    /// is inside the tile of `n`.
    fn round(&mut self, first: Reg, r: Reg, n: usize) -> Round {
        let i = self.r32();
        self.ins(["add", "s32"], (i, first, r));
        let inside = self.new_pred();
        self.ins(["setp", "lt", "s32"], (inside, i, n as i32));
        Round { i, inside }
    }
}
