//! `equal_rank` of tiles of 8-bit elements (`u8`, `i8`, `bool`): at most 256 distinct bytes,
//! so ranks are counted, not compared (the general lowering in `order.rs` compares each element
//! with every earlier one). This is the rank a stable radix scatter needs, for its digits
//! (`(digit as u8).equal_rank()`), as CUB's `BlockRadixRankMatch` computes it:
//! 1. each warp takes a contiguous segment of the tile, 32 elements a round in order, and in
//!    each round groups the lanes holding the same byte by eight ballots, one a bit (CUB's
//!    `MatchAny`: `match.any.sync` issues far slower, and a device radix sort ranked by it
//!    took 12.60 ms on an H100 against 8.42 with these ballots, 2026-11-27). The group's highest
//!    lane adds the group's size to the warp's count of its byte (a `[warps][256]` table in
//!    shared memory), and hands the old count to the group by a shuffle: an element's rank in
//!    its warp is that count plus its group's lanes below it. A warp barrier after each round
//!    orders the next round's accesses to the table after this one's in every lane's view. Up
//!    to 32 rounds are written out one after another rather than as a loop;
//! 2. each byte's counts are turned into exclusive prefixes over the warps (thread `b` walks
//!    the table's column `b`), from `starts[b]` for a `place`;
//! 3. every thread reads back the ranks of the elements it holds and adds the prefix of the
//!    element's warp for its byte (the warp known when the PTX is written where segments are
//!    whole chunks of the layout).
//!
//! Elements are taken in row-major order, segment after segment, so ranks count the earlier
//! elements in row-major order, as the general lowering does; in another order (`order =
//! [..]`), each element is staged at its position in that order (`count_order.rs`).
//!
//! A warp-striped tile (`count_order::warp_striped`: each warp's segment of the order is its
//! own registers, round `j` its lanes' `j`-th) stages nothing: a round takes its bytes from
//! the registers, and its ranks stay there, each with its byte above it (`Round::Held`), so
//! step 3 finds the table entry from the rank's own register, and step 2's prefixes take the
//! byte off again. A tile of 6144 bytes on 256 threads saves its 30 KB of staging and five
//! shared accesses an element (the rank's static SASS 1152 -> 1039 instructions a thread).
//! The count table starts each byte's entries at `(byte << 24) - 1` there, so the count a
//! round reads back is the rank's high part already: the rank is one add, and ptxas, which
//! leaves the rounds' last adds until step 3, keeps two registers a round waiting rather than
//! three (the keys pass's spill 20 -> 12 bytes, 24 instructions a thread fewer).

use super::super::code::Guard;
use super::super::emit::{internal, CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::{Predicate, RegOrImm};
use super::count_order::warp_striped;
use super::scratch_at;
use super::staging::{parts, vector_of};
use crate::dtype::DType;
use crate::ir::{Operand, Ty, VarId};
use crate::layout::Layout;

/// Distinct values of an 8-bit element.
const BYTES: usize = 256;

/// Rounds a warp writes out one after another; longer segments run as a loop.
const UNROLLED_ROUNDS: usize = 32;

/// Whether [`Emitter::equal_rank_bytes`] lowers an `equal_rank` of `d` on `threads` threads.
pub(super) fn counted_rank_fits(d: DType, threads: usize) -> bool {
    d.size_bytes() == 1 && threads.is_multiple_of(32) && threads > 0
}

/// Where a round's bytes come from.
enum Round {
    /// From the staged bytes, elements `first + r ..` of the warp's segment.
    Staged(RegOrImm),
    /// From this lane's register `byte` (`0..256`); the rank goes to `out`, with the byte
    /// above it (`byte << HELD_RANK_BITS`), so that the byte's register is free after the
    /// round and step 3 still finds its table entry.
    Held { byte: Reg, out: Reg },
}

/// Where a round's rank goes.
enum RankTo {
    Scratch(super::super::code::Address),
    Reg(Reg),
}

/// Where a held rank's byte begins: the rank is below `2^22` (a warp's segment is no longer),
/// so that the bits from 22 on are the byte's offset in a table row (`byte * 4`).
const HELD_RANK_BITS: i32 = 24;

/// What every round of a warp shares: the scratch arrays, this lane's first element and the
/// addresses derived from it.
struct Warp {
    /// Scratch offsets of the staged bytes, the ranks and the count table.
    src: usize,
    ranks: usize,
    table: usize,
    /// The warp's row of the count table (a shared address).
    row: Reg,
    /// `smem + first` and `smem + 4 * first`: the round's byte and rank sit at fixed offsets.
    src_at: Reg,
    rank_at: Reg,
    first: Reg,
    /// Lanes up to this one, and above it.
    upto_me: Reg,
    above_me: Reg,
    /// Elements in the tile, and in each warp's segment (whole rounds of 32).
    n: usize,
    seg: usize,
    /// Whether every round of every warp lies inside the tile.
    full: bool,
}

impl Emitter<'_> {
    /// `equal_rank` of tile `x` of 8-bit type `d` and shape `shape` into `dst` (see the module
    /// docs); with `starts` (an `i32` tile of 256 elements or more, `x` of type `u8`), each
    /// element's place instead (`Inst::Place`): byte `b`'s prefixes over the warps begin at
    /// `starts[b]` rather than 0. Starts after and ends with a barrier.
    pub(super) fn equal_rank_bytes(
        &mut self,
        dst: VarId,
        x: VarId,
        shape: &[usize],
        d: DType,
        starts: Option<VarId>,
        order: Option<&[usize]>,
    ) -> CodegenResult<()> {
        let layout = self.layout_of(shape);
        let n: usize = shape.iter().product();
        let warps = self.threads() / 32;
        // Each warp's rounds are its own registers: nothing is staged (`count_order.rs`).
        let held = warp_striped(shape, order, &layout, self.threads());
        // Elements per warp, in whole rounds of 32.
        let seg = n.div_ceil(warps * 32) * 32;
        let starts = match starts {
            Some(s) => {
                let Ty::Tile { shape, .. } = self.ty(s)?.clone() else {
                    return internal("place from scalar starts");
                };
                Some((s, self.layout_of(&shape)))
            }
            None => None,
        };
        let starts_bytes = starts.as_ref().map_or(0, |(_, l)| 4 * l.n);
        let (staged, staged_ranks) = if held { (0, 0) } else { (n, 4 * n) };
        let offs = parts(
            self,
            &[staged, staged_ranks, 4 * BYTES * warps, starts_bytes],
        );
        let (src, ranks, table, first_of) = (offs[0], offs[1], offs[2], offs[3]);
        self.clear_table(table, warps, held)?;
        if !held {
            self.stage_in_order(x, d, &layout, src, shape, order)?;
        }
        if let Some((s, starts_layout)) = &starts {
            self.stage(*s, DType::I32, starts_layout, first_of)?;
        }
        self.barrier();
        let w = self.rank_warp(src, ranks, table, seg, n);
        // 1. Ranks within the warp, round by round (every lane of a warp runs every round).
        let rounds = seg / 32;
        let rs = self.dst_regs(dst)?;
        if held {
            for (r, out) in rs.iter().enumerate() {
                let byte = self.byte_of(x, d, r)?;
                self.rank_round(&w, Round::Held { byte, out: *out })?;
            }
        } else if rounds <= UNROLLED_ROUNDS {
            for r in 0..rounds {
                self.rank_round(&w, Round::Staged(RegOrImm::Imm(32 * r as i32)))?;
            }
        } else {
            self.counted_loop(0.into(), (seg as i32).into(), 32, |e, r| {
                e.rank_round(&w, Round::Staged(RegOrImm::Reg(r)))
            })?;
        }
        self.barrier();
        // 2. Each byte's counts over the warps, as exclusive prefixes (from the byte's start).
        let first_of = starts.is_some().then_some(first_of);
        self.column_prefixes(table, warps, first_of, held)?;
        self.barrier();
        // 3. Each thread's own elements: the rank in the warp plus the warp's prefix of the
        // element's byte.
        if held {
            self.held_ranks_out(&rs, &w);
        } else {
            self.staged_ranks_out(&rs, &w, &layout, shape, order)?;
        }
        self.barrier();
        Ok(())
    }

    /// Starts the `[warps][256]` count table at scratch offset `table`: zeroes, or for held
    /// ranks each byte's [`bias`](Self::table_bias), so that the count a round reads back plus
    /// the lane's place in its group is its rank with the byte above it, in one add.
    fn clear_table(&mut self, table: usize, warps: usize, held: bool) -> CodegenResult<()> {
        let tid = self.tid();
        let threads = self.threads();
        // A whole number of rows a pass: every entry a thread clears is of its own byte.
        let own_bias = if !held {
            Some(RegOrImm::Imm(0))
        } else if threads.is_multiple_of(BYTES) {
            let byte = self.r32();
            self.ins(["and", "b32"], (byte, tid, (BYTES - 1) as i32));
            Some(self.table_bias(byte, held))
        } else {
            None
        };
        self.counted_loop(
            tid.into(),
            ((BYTES * warps) as i32).into(),
            threads as u32,
            |e, k| {
                let at = e.elem_at(table, 4, k.into());
                let bias = match own_bias {
                    Some(bias) => bias,
                    None => {
                        let byte = e.r32();
                        e.ins(["and", "b32"], (byte, k, (BYTES - 1) as i32));
                        e.table_bias(byte, held)
                    }
                };
                e.ins(["st", "shared", "u32"], (at, bias));
                Ok(())
            },
        )
    }

    /// Where byte `b`'s count starts: 0, or for held ranks `(b << HELD_RANK_BITS) - 1`, the
    /// byte above the rank and the `- 1` of the rank (no register holds the byte for it after
    /// the round's ballots). Staged ranks keep 0: ptxas folds their `- 1` into the add.
    fn table_bias(&mut self, byte: Reg, held: bool) -> RegOrImm {
        if !held {
            return RegOrImm::Imm(0);
        }
        let bias = self.r32();
        self.ins(["shl", "b32"], (bias, byte, HELD_RANK_BITS));
        self.ins(["sub", "s32"], (bias, bias, 1));
        RegOrImm::Reg(bias)
    }

    /// This lane's part of the rounds: its masks, its warp's row of the table and its first
    /// element of the warp's segment (`seg` elements a warp, `n` in the tile).
    fn rank_warp(&mut self, src: usize, ranks: usize, table: usize, seg: usize, n: usize) -> Warp {
        let tid = self.tid();
        let warps = self.threads() / 32;
        let (lane, warp, upto_me, above_me) = (self.r32(), self.r32(), self.r32(), self.r32());
        self.ins(["and", "b32"], (lane, tid, 31));
        self.ins(["shr", "u32"], (warp, tid, 5));
        // `(2 << lane) - 1` (for lane 31, 2 << 31 wraps to 0, and 0 - 1 is every lane).
        self.ins(["mov", "u32"], (upto_me, 2));
        self.ins(["shl", "b32"], (upto_me, upto_me, lane));
        self.ins(["sub", "s32"], (upto_me, upto_me, 1));
        self.ins(["not", "b32"], (above_me, upto_me));
        // This warp's row of the table, and its first element.
        let smem = self.smem_base();
        let row = self.r32();
        self.ins(["mad", "lo", "s32"], (row, warp, (4 * BYTES) as i32, smem));
        let first = self.r32();
        self.ins(["mad", "lo", "s32"], (first, warp, seg as i32, lane));
        let (src_at, rank_at) = (self.r32(), self.r32());
        self.ins(["add", "s32"], (src_at, first, smem));
        self.ins(["mad", "lo", "s32"], (rank_at, first, 4, smem));
        Warp {
            src,
            ranks,
            table,
            row,
            src_at,
            rank_at,
            first,
            upto_me,
            above_me,
            n,
            seg,
            full: seg * warps == n,
        }
    }

    /// Step 2: thread `b` turns column `b` of the count table (byte `b`'s count in each warp)
    /// into exclusive prefixes, from `starts[b]` (staged at `first_of`) where given. Held ranks
    /// carry their byte above them (`Round::Held`): their prefixes take it off again.
    fn column_prefixes(
        &mut self,
        table: usize,
        warps: usize,
        first_of: Option<usize>,
        held: bool,
    ) -> CodegenResult<()> {
        let tid = self.tid();
        self.counted_loop(
            tid.into(),
            (BYTES as i32).into(),
            self.threads() as u32,
            |e, b| {
                let col = e.r32();
                let smem = e.smem_base();
                e.ins(["mad", "lo", "s32"], (col, b, 4, smem));
                let running = e.r32();
                match first_of {
                    Some(off) => e.ins(["ld", "shared", "u32"], (running, scratch_at(col, off))),
                    None => e.ins(["mov", "u32"], (running, 0)),
                }
                // Held: each entry is the warp's count plus the byte's bias, and the ranks carry
                // the byte above them (the bias plus one), which the prefix takes off.
                let bias = match e.table_bias(b, held) {
                    RegOrImm::Reg(bias) => Some(bias),
                    RegOrImm::Imm(_) => None,
                };
                if let Some(bias) = bias {
                    e.ins(["sub", "s32"], (running, running, bias));
                    e.ins(["sub", "s32"], (running, running, 1));
                }
                for w in 0..warps {
                    let at = scratch_at(col, table + 4 * BYTES * w);
                    let c = e.r32();
                    e.ins(["ld", "shared", "u32"], (c, at.clone()));
                    e.ins(["st", "shared", "u32"], (at, running));
                    e.ins(["add", "s32"], (running, running, c));
                    if let Some(bias) = bias {
                        e.ins(["sub", "s32"], (running, running, bias));
                    }
                }
                Ok(())
            },
        )
    }

    /// Step 3 of held ranks (`rs`, each with its byte above it): the rank and the byte share
    /// the register, the prefix takes the byte off, and the table's row is this warp's: the
    /// entry's offset is the bits above the rank (`byte * 4`, the rank being below
    /// `2^(HELD_RANK_BITS - 2)`).
    fn held_ranks_out(&mut self, rs: &[Reg], w: &Warp) {
        for out in rs {
            let (offset, before) = (self.r32(), self.r32());
            self.ins(["shr", "u32"], (offset, *out, HELD_RANK_BITS - 2));
            let at = self.r32();
            self.ins(["add", "s32"], (at, offset, w.row));
            self.ins(["ld", "shared", "u32"], (before, scratch_at(at, w.table)));
            self.ins(["add", "s32"], (*out, *out, before));
        }
    }

    /// Step 3 of staged ranks: each of this thread's elements (of a tile of `shape` laid out
    /// as `layout`, counted in `order`) reads its rank and byte back from their staged
    /// position, and adds its warp's prefix of the byte into `rs`.
    fn staged_ranks_out(
        &mut self,
        rs: &[Reg],
        w: &Warp,
        layout: &Layout,
        shape: &[usize],
        order: Option<&[usize]>,
    ) -> CodegenResult<()> {
        let (src, ranks, table, seg) = (w.src, w.ranks, w.table, w.seg);
        let base = self.tid_times(layout.v);
        // A run of `g` elements at a time: its ranks in one vector load, its bytes in one load
        // (in a permuted order, an element at a time: a run's positions are not consecutive).
        let g = [4usize, 2, 1]
            .into_iter()
            .find(|&g| layout.v.is_multiple_of(g) && (order.is_none() || g == 1))
            .unwrap_or(1);
        // When a warp's segment is a whole number of the layout's chunks (`threads * v`
        // elements), an element's warp is its slot's chunk offset over the segment, known here:
        // a thread's part of the index (below `threads * v`) never crosses into the next.
        let chunk = self.threads() * layout.v;
        let owner_known = order.is_none() && seg.is_multiple_of(chunk);
        for (s, run) in rs.chunks(g).enumerate().map(|(k, r)| (k * g, r)) {
            let guard = match self.chunk_exists(layout, s / layout.v) {
                Predicate::False => continue,
                p => p.guard(),
            };
            let i = match order {
                None => {
                    let i = self.r32();
                    self.ins(["add", "s32"], (i, base, layout.slot_const(s) as i32));
                    i
                }
                Some(_) => {
                    let p = self.count_pos(layout, shape, order, s);
                    self.in_reg32(p)
                }
            };
            let (row, table_at) = if owner_known {
                let owner = layout.slot_const(s) / seg;
                (RegOrImm::Imm(0), table + 4 * BYTES * owner)
            } else {
                let owner = self.div_u32(i.into(), seg);
                (RegOrImm::Reg(self.in_reg32(owner)), table)
            };
            // The bytes are reloaded rather than read from `x`'s registers, which would then
            // stay live through the rounds (a keys pass of 24 keys a thread spilled 40 bytes).
            let bytes = self.r32();
            let at = self.elem_at(src, 1, i.into());
            let width = ["u8", "u16", "", "u32"][g - 1];
            self.ins_if(guard, ["ld", "shared", width], (bytes, at));
            let at = self.elem_at(ranks, 4, i.into());
            if g == 1 {
                self.ins_if(guard, ["ld", "shared", "u32"], (run[0], at));
            } else {
                let vec = vector_of(g)?;
                self.ins_if(guard, ["ld", "shared", vec, "u32"], (run.to_vec(), at));
            }
            // Element `k`'s warp holds it (a run never straddles two warps' segments, whose
            // lengths are multiples of 32).
            for (k, out) in run.iter().enumerate() {
                let v = self.r32();
                self.ins(["bfe", "u32"], (v, bytes, 8 * k as i32, 8));
                let slot = self.r32();
                match row {
                    RegOrImm::Reg(owner) => {
                        self.ins(["mad", "lo", "s32"], (slot, owner, BYTES as i32, v))
                    }
                    RegOrImm::Imm(_) => self.ins(["mov", "b32"], (slot, v)),
                }
                let before = self.r32();
                let at = self.elem_at(table_at, 4, slot.into());
                self.ins_if(guard, ["ld", "shared", "u32"], (before, at));
                self.ins_if(guard, ["add", "s32"], (*out, *out, before));
            }
        }
        Ok(())
    }

    /// Byte `x[s]` of this thread (an 8-bit tile of type `d`) as a value in `0..256`.
    fn byte_of(&mut self, x: VarId, d: DType, s: usize) -> CodegenResult<Reg> {
        let v = self.reg_or_const(Operand::Var(x), s)?;
        let v = self.in_reg(v);
        // Integers narrower than 32 bits are held extended (`normalize`): `u8` is its byte.
        let byte = match d {
            DType::U8 => return Ok(v),
            _ => self.r32(),
        };
        match d {
            DType::Bool => self.ins(["selp", "u32"], (byte, 1, 0, v)),
            _ => self.ins(["and", "b32"], (byte, v, 255)),
        }
        Ok(byte)
    }

    /// One round of step 1: the 32 elements of the warp from `first + r` on, or the lanes'
    /// registers (see the module docs). Every lane runs it: the shuffle needs the whole warp.
    fn rank_round(&mut self, w: &Warp, round: Round) -> CodegenResult<()> {
        // Where the lane's byte and rank are, and whether its element is inside the tile.
        let (v, rank_to, inside) = match round {
            Round::Held { byte, out } => (byte, RankTo::Reg(out), Predicate::True),
            Round::Staged(r) => {
                let (byte_at, rank_at, inside) = match r {
                    RegOrImm::Imm(k) => {
                        let inside = self.round_inside(w, w.first, k);
                        (
                            scratch_at(w.src_at, w.src + k as usize),
                            scratch_at(w.rank_at, w.ranks + 4 * k as usize),
                            inside,
                        )
                    }
                    RegOrImm::Reg(k) => {
                        let i = self.r32();
                        self.ins(["add", "s32"], (i, w.first, k));
                        let inside = self.round_inside(w, i, 0);
                        (
                            self.elem_at(w.src, 1, i.into()),
                            self.elem_at(w.ranks, 4, i.into()),
                            inside,
                        )
                    }
                };
                // Lanes past the tile hold 256, a value no element has; they update nothing.
                let v = self.r32();
                self.ins(["mov", "u32"], (v, BYTES as i32));
                self.ins_if(inside.guard(), ["ld", "shared", "u8"], (v, byte_at));
                (v, RankTo::Scratch(rank_at), inside)
            }
        };
        let peers = self.peers_of_byte(v, inside);
        // `upto`: the group's lanes up to this one (the group's size in its highest lane).
        let (upto, above) = (self.r32(), self.r32());
        self.ins(["and", "b32"], (upto, peers, w.upto_me));
        self.ins(["popc", "b32"], (upto, upto));
        self.ins(["and", "b32"], (above, peers, w.above_me));
        let slot = self.r32();
        self.ins(["mad", "lo", "s32"], (slot, v, 4, w.row));
        // The group's highest lane moves the count on and hands the old count to the group.
        // Plain predicated accesses, not an atomic: a round's leaders hold distinct bytes, and
        // the warp barrier after the round orders them before the next round's (an atomic
        // under a predicate became a branch and its reconvergence, 2 more instructions).
        // Other lanes' `seen` and `moved` are never used: the shuffle takes the leader's.
        let leader = self.new_pred();
        self.ins(["setp", "eq", "u32"], (leader, above, 0));
        if let Predicate::Reg(p) = inside {
            self.ins(["and", "pred"], (leader, leader, p));
        }
        let (seen, moved) = (self.r32(), self.r32());
        let count_at = scratch_at(slot, w.table);
        self.ins_if(
            Guard::If(leader),
            ["ld", "shared", "u32"],
            (seen, count_at.clone()),
        );
        self.ins(["add", "s32"], (moved, seen, upto));
        self.ins_if(
            Guard::If(leader),
            ["st", "shared", "u32"],
            (count_at, moved),
        );
        let from = self.r32();
        self.ins(["bfind", "u32"], (from, peers));
        let got = self.shfl("idx", seen, from.into(), 31);
        match rank_to {
            RankTo::Scratch(at) => {
                let rank = self.r32();
                self.ins(["add", "s32"], (rank, got, upto));
                self.ins(["sub", "s32"], (rank, rank, 1));
                self.ins_if(inside.guard(), ["st", "shared", "u32"], (at, rank))
            }
            // The count came with its byte's bias (`table_bias`): the rank is one add.
            RankTo::Reg(out) => self.ins(["add", "s32"], (out, got, upto)),
        }
        // The next round's atomics come after this round's in every lane's view.
        self.ins(["bar", "warp", "sync"], (-1,));
        Ok(())
    }

    /// The lanes of the warp whose byte `v` equals this lane's, among the lanes `inside`: one
    /// ballot a bit (CUB's `MatchAny`), where `match.any.sync` issues far slower.
    fn peers_of_byte(&mut self, v: Reg, inside: Predicate) -> Reg {
        let peers = self.r32();
        for bit in 0..8 {
            let (set, on, votes) = (self.r32(), self.new_pred(), self.r32());
            self.ins(["and", "b32"], (set, v, 1 << bit));
            self.ins(["setp", "ne", "u32"], (on, set, 0));
            self.ins(["vote", "sync", "ballot", "b32"], (votes, on, -1));
            // Lanes that agree with this lane on the bit.
            self.ins_if(Guard::Unless(on), ["not", "b32"], (votes, votes));
            if bit == 0 {
                self.ins(["mov", "b32"], (peers, votes));
            } else {
                self.ins(["and", "b32"], (peers, peers, votes));
            }
        }
        if let Predicate::Reg(p) = inside {
            let lanes_inside = self.r32();
            self.ins(["vote", "sync", "ballot", "b32"], (lanes_inside, p, -1));
            self.ins(["and", "b32"], (peers, peers, lanes_inside));
        }
        peers
    }

    /// Whether element `i + k` of a round is inside the tile (known when every round is).
    fn round_inside(&mut self, w: &Warp, i: Reg, k: i32) -> Predicate {
        if w.full {
            return Predicate::True;
        }
        let p = self.new_pred();
        self.ins(["setp", "lt", "s32"], (p, i, w.n as i32 - k));
        Predicate::Reg(p)
    }
}
