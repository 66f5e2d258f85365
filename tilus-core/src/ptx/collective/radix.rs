//! Sorts of one line of 8-, 16- or 32-bit keys, as a stable LSD radix sort in shared memory,
//! four bits a pass (other sorts keep the bitonic network of `order.rs`).
//!
//! Each key is first made *unsigned*: the sort key of `order.rs` (integers by value, floats by
//! `totalOrder`) with its sign bit flipped, and all its bits flipped for a descending sort, so
//! that a stable ascending sort of the unsigned keys is the sort asked for, equal keys by
//! index. A pass then moves every key (and, for an argsort, its index) by one digit, in three
//! phases:
//! 1. *count*: thread `t` takes the `t`-th run of `per_thread` places and counts the digits of
//!    its keys in its own column of a `[16][threads]` table;
//! 2. *scan*: an exclusive prefix sum of the table read row by row, digit-major, so that the
//!    entry of (digit, thread) is the place of that thread's first key with that digit;
//! 3. *scatter*: each thread walks its run again, in order, and moves each key to the place
//!    its entry gives plus its rank among the run's earlier keys of that digit.
//!
//! Runs taken in order and walked in order make each pass stable, hence the sort. Runs of up to
//! 16 places are read once into registers and counted in one 64-bit register, four bits a
//! digit (the first fifteen keys: a field holds 15; the sixteenth is added to the table after);
//! longer runs count through the table. An argsort of keys narrow enough that key and index
//! share a 32-bit word (8- and 16-bit keys, [`index_bits`]) moves that one word, the index in
//! its low bits, instead of a key array and an index array. The last pass writes the first
//! `kept` places of the result: the element (decoded from its key, which holds all its bits)
//! or its index. The
//! key arrays are padded by one word every 32 (`i + i / 32`), so that the runs of a warp's
//! threads start in different banks; the table holds 16-bit entries when the line is shorter
//! than 2^16. Integer and `f32` lines fill the first key array straight from registers;
//! 16-bit float lines are staged first, in the second key array (read once, before the first
//! pass writes there).

use super::super::code::{Address, Arg, Guard};
use super::super::emit::{CodegenResult, Emitter};
use super::super::regs::Reg;
use super::super::value::{Predicate, RegOrImm};
use super::order::Placed;
use super::scratch_at;
use crate::dtype::DType;
use crate::ir::{Operand, VarId};
use crate::layout::Layout;

/// Bits of the key that one pass sorts by.
const DIGIT_BITS: u32 = 4;
/// Digits: the rows of the count table.
const DIGITS: usize = 1 << DIGIT_BITS;
/// The longest run a thread counts in a packed register (four bits a digit): fifteen keys
/// fill a field at most, and a sixteenth is counted in the table instead (its rank, the
/// count of the fifteen before it, still fits).
const PACKED_MAX: usize = 16;
/// The largest count a four-bit field of the packed count holds.
const FIELD_MAX: usize = 15;
/// The most scratch a radix sort takes; a longer line is sorted by the bitonic network.
const RADIX_MAX_BYTES: usize = 128 * 1024;

/// A radix sort: the element type, the line, the direction, what is written and the scratch.
pub(super) struct RadixJob {
    pub d: DType,
    pub len: usize,
    pub descending: bool,
    /// Whether the sort key compares signed (`order::key_type`).
    pub signed: bool,
    pub placed: Placed,
    /// Places of the result written (all, or the first `k` of a top-k).
    pub kept: usize,
    pub s: RadixScratch,
}

/// Scratch offsets of a radix sort.
pub(super) struct RadixScratch {
    /// The staged tile (inside `keys[1]`).
    pub src: usize,
    pub keys: [usize; 2],
    /// Index arrays (argsorts only).
    pub idx: [usize; 2],
    pub counts: usize,
    /// Bytes of a count-table entry: 2 or 4.
    pub entry: usize,
    pub warp_totals: usize,
}

/// The byte sizes of a radix sort's arrays, in the order of [`RadixScratch`] (without `src`):
/// two padded key arrays (the second also holding the staged tile of `staged` bytes), two
/// index arrays (none for a sort of values), the count table and the warp totals.
pub(super) fn radix_sizes(
    d: DType,
    len: usize,
    staged: usize,
    threads: usize,
    placed: Placed,
) -> [usize; 6] {
    let pair = 4 * (len + len / 32 + 1);
    let idx = if placed == Placed::Index && index_bits(d, len).is_none() {
        pair
    } else {
        0
    };
    [
        pair,
        pair.max(staged),
        idx,
        idx,
        entry_bytes(len) * DIGITS * threads,
        4 * (threads / 32),
    ]
}

/// The low bits of an argsort's key words that hold the place's index, when a `d` key and an
/// index below `len` fit in 32 bits together (an argsort of 8- or 16-bit keys): the index then
/// moves with its key in one word, with no index arrays (half the scratch, and one shared
/// store a place a pass instead of two).
pub(super) fn index_bits(d: DType, len: usize) -> Option<u32> {
    let bits = usize::BITS - len.saturating_sub(1).max(1).leading_zeros();
    (d.bits() + bits <= 32).then_some(bits)
}

/// The byte size of a count-table entry for a line of `len`: 16 bits hold every count and
/// place below 2^16.
pub(super) fn entry_bytes(len: usize) -> usize {
    if len < 1 << 16 {
        2
    } else {
        4
    }
}

/// Whether a sort of `lines` lines of `len` elements of `d` takes the radix path: one line of
/// 8- to 32-bit keys, on whole warps, in at most [`RADIX_MAX_BYTES`] of scratch.
pub(super) fn radix_fits(
    d: DType,
    lines: usize,
    len: usize,
    staged: usize,
    threads: usize,
    placed: Placed,
) -> bool {
    let bytes: usize = radix_sizes(d, len, staged, threads, placed).iter().sum();
    lines == 1
        && (8..=32).contains(&d.bits())
        && len >= 2
        && threads.is_multiple_of(32)
        && bytes <= RADIX_MAX_BYTES
}

impl RadixJob {
    /// What the encoding xors into a key: its sign bit (signed keys), all bits (descending).
    fn flip(&self) -> u32 {
        let sign = if self.signed {
            1u32 << (self.d.bits() - 1)
        } else {
            0
        };
        sign ^ if self.descending { self.mask() } else { 0 }
    }
    fn mask(&self) -> u32 {
        u32::MAX >> (32 - self.d.bits())
    }
    /// Whether indices move in arrays of their own (an argsort whose indices are not in the
    /// key words, [`index_bits`]).
    fn args(&self) -> bool {
        self.placed == Placed::Index && self.packed_index().is_none()
    }
    /// The index bits in the key words of an argsort, if they are there ([`index_bits`]).
    fn packed_index(&self) -> Option<u32> {
        if self.placed == Placed::Index {
            index_bits(self.d, self.len)
        } else {
            None
        }
    }
    /// Where the digits of the key start in a key word: above a packed index.
    fn key_shift(&self) -> u32 {
        self.packed_index().unwrap_or(0)
    }
    /// Where the last of `passes` passes writes the result: the key array it does not read.
    fn out(&self, passes: u32) -> usize {
        self.s.keys[(passes % 2) as usize]
    }
}

/// This thread's run of places in a pass, `[first, first + len)` with at most `per_thread`,
/// and the address of its column of the count table.
struct Run {
    first: Reg,
    len: Reg,
    column: Reg,
    per_thread: usize,
}

impl Emitter<'_> {
    /// Runs the radix sort of `job`, its first key array filled ([`Emitter::radix_fill`]);
    /// returns the scratch offset where the first `kept` places of the result are (elements
    /// of `d`, or `i32` indices), after a barrier.
    pub(super) fn radix_sort(&mut self, job: &RadixJob) -> CodegenResult<usize> {
        let tid = self.tid();
        let threads = self.threads();
        let passes = job.d.bits() / DIGIT_BITS;
        let per_thread = job.len.div_ceil(threads);
        let (first, len) = (self.r32(), self.r32());
        self.ins(["mul", "lo", "s32"], (first, tid, per_thread));
        self.ins(["sub", "s32"], (len, job.len, first));
        self.ins(["min", "s32"], (len, len, per_thread));
        self.ins(["max", "s32"], (len, len, 0));
        let column = self.r32();
        let smem = self.smem_base();
        self.ins(["mad", "lo", "s32"], (column, tid, job.s.entry, smem));
        let run = Run {
            first,
            len,
            column,
            per_thread,
        };
        let fixed = |pass: u32, from: usize| Step {
            shift: RegOrImm::Imm((pass * DIGIT_BITS + job.key_shift()) as i32),
            from: Arrays::at(job, from),
            to: Arrays::at(job, 1 - from),
            last: pass + 1 == passes,
        };
        if per_thread <= PACKED_MAX && passes > 2 {
            // The passes but the last as a loop (its body one pass, the key arrays swapped
            // between trips): unrolled, ptxas kept values of every pass live at once (200
            // registers for a 32-bit sort, spilled at 512 threads), and the code was 8 passes.
            self.radix_pass_loop(job, &run, passes - 1)?;
            let last = passes - 1;
            self.radix_pass_packed(job, &run, &fixed(last, (last % 2) as usize))?;
        } else {
            for pass in 0..passes {
                let step = fixed(pass, (pass % 2) as usize);
                if per_thread <= PACKED_MAX {
                    self.radix_pass_packed(job, &run, &step)?;
                } else {
                    self.radix_pass_looped(job, &run, &step)?;
                }
            }
        }
        Ok(job.out(passes))
    }

    /// The first `trips` passes (not the last) as one loop: the digit's shift and the arrays
    /// read and written in registers, swapped after each trip.
    fn radix_pass_loop(&mut self, job: &RadixJob, run: &Run, trips: u32) -> CodegenResult<()> {
        let smem = self.smem_base();
        let reg_at = |e: &mut Self, off: usize| {
            let r = e.r32();
            e.ins(["add", "s32"], (r, smem, off as i32));
            r
        };
        let from = Arrays {
            keys: Arr::In(reg_at(self, job.s.keys[0])),
            idx: job.args().then(|| Arr::In(reg_at(self, job.s.idx[0]))),
        };
        let to = Arrays {
            keys: Arr::In(reg_at(self, job.s.keys[1])),
            idx: job.args().then(|| Arr::In(reg_at(self, job.s.idx[1]))),
        };
        let shift = self.r32();
        self.ins(["mov", "u32"], (shift, job.key_shift()));
        let top = self.new_label("radix_pass");
        self.label(top);
        let step = Step {
            shift: RegOrImm::Reg(shift),
            from,
            to,
            last: false,
        };
        self.radix_pass_packed(job, run, &step)?;
        let t = self.r32();
        let swap = |e: &mut Self, a: Option<Arr>, b: Option<Arr>| {
            if let (Some(Arr::In(a)), Some(Arr::In(b))) = (a, b) {
                e.ins(["mov", "u32"], (t, a));
                e.ins(["mov", "u32"], (a, b));
                e.ins(["mov", "u32"], (b, t));
            }
        };
        swap(self, Some(from.keys), Some(to.keys));
        swap(self, from.idx, to.idx);
        self.ins(["add", "s32"], (shift, shift, DIGIT_BITS as i32));
        let more = self.new_pred();
        self.ins(
            ["setp", "lt", "s32"],
            (more, shift, (trips * DIGIT_BITS + job.key_shift()) as i32),
        );
        self.branch_uniform(Guard::If(more), top);
        Ok(())
    }

    /// A pass where runs are counted through the table: a loop over the run to count, the scan,
    /// a loop over the run to scatter. Ends with a barrier.
    fn radix_pass_looped(&mut self, job: &RadixJob, run: &Run, step: &Step) -> CodegenResult<()> {
        let (ety, threads) = (entry_type(job), self.threads());
        for row in 0..DIGITS {
            let at = scratch_at(run.column, job.s.counts + job.s.entry * row * threads);
            self.ins(["st", "shared", ety], (at, 0));
        }
        self.counted_loop(RegOrImm::Imm(0), run.len.into(), 1, |e, j| {
            let i = e.r32();
            e.ins(["add", "s32"], (i, run.first, j));
            let key = e.padded_load(step.from.keys, i);
            let at = e.count_entry(job, run.column, key, step.shift);
            let c = e.r32();
            e.ins(["ld", "shared", ety], (c, at.clone()));
            e.ins(["add", "s32"], (c, c, 1));
            e.ins(["st", "shared", ety], (at, c));
            Ok(())
        })?;
        self.barrier();
        self.radix_scan(job)?;
        self.counted_loop(RegOrImm::Imm(0), run.len.into(), 1, |e, j| {
            let i = e.r32();
            e.ins(["add", "s32"], (i, run.first, j));
            let key = e.padded_load(step.from.keys, i);
            let index = step.from.idx.map(|a| e.padded_load(a, i));
            let at = e.count_entry(job, run.column, key, step.shift);
            let place = e.r32();
            e.ins(["ld", "shared", ety], (place, at.clone()));
            let next = e.r32();
            e.ins(["add", "s32"], (next, place, 1));
            e.ins(["st", "shared", ety], (at, next));
            e.radix_move(job, step, Guard::Always, place, key, index);
            Ok(())
        })?;
        self.barrier();
        Ok(())
    }

    /// A pass where each run has at most [`PACKED_MAX`] places: the run is read once into
    /// registers (unrolled; places past its end guarded off unless every run is whole), and
    /// the thread's count of each digit lives in one 64-bit register, four bits a digit, both
    /// for the count and for each key's rank among the run's earlier keys of its digit (a
    /// sixteenth key is added to the table instead, [`FIELD_MAX`]). Ends with a barrier.
    fn radix_pass_packed(&mut self, job: &RadixJob, run: &Run, step: &Step) -> CodegenResult<()> {
        let (ety, threads) = (entry_type(job), self.threads());
        // Runs that never cross a multiple of 32 (`per_thread` divides 32) are contiguous in
        // the padded arrays: one address, then immediate offsets.
        let contiguous = 32 % run.per_thread == 0;
        let base = if contiguous {
            Some(self.padded_base(run.first))
        } else {
            None
        };
        let mut items = Vec::with_capacity(run.per_thread);
        let nib = self.nibble_at(job, step.shift);
        let counts = self.r64();
        self.ins(["mov", "u64"], (counts, 0));
        // Every run is whole when the line fills the threads' runs exactly.
        let whole = job.len == run.per_thread * threads;
        for j in 0..run.per_thread {
            let g = if whole {
                Guard::Always
            } else {
                let here = self.new_pred();
                self.ins(["setp", "gt", "s32"], (here, run.len, j as i32));
                Guard::If(here)
            };
            let at = |e: &mut Self, arr: Arr| match (base, arr) {
                (Some(b), Arr::At(off)) => scratch_at(b, off + 4 * j),
                (Some(b), Arr::In(a)) => {
                    // `b` is smem + 4 * padded(first): the array's own base added instead.
                    let r = e.r32();
                    e.ins(["add", "s32"], (r, b, a));
                    let smem = e.smem_base();
                    e.ins(["sub", "s32"], (r, r, smem));
                    scratch_at(r, 4 * j)
                }
                (None, arr) => {
                    let i = e.r32();
                    e.ins(["add", "s32"], (i, run.first, j as i32));
                    e.padded_at(arr, i)
                }
            };
            let key = self.r32();
            let key_at = at(self, step.from.keys);
            self.ins_if(g, ["ld", "shared", "b32"], (key, key_at));
            let index = step.from.idx.map(|arr| {
                let index = self.r32();
                let idx_at = at(self, arr);
                self.ins_if(g, ["ld", "shared", "u32"], (index, idx_at));
                index
            });
            if j < FIELD_MAX {
                let (_, one) = self.digit_nibble(key, nib);
                self.ins_if(g, ["add", "s64"], (counts, counts, one));
            }
            items.push(Item { g, key, index });
        }
        let (lo, hi) = (self.r32(), self.r32());
        self.ins(["mov", "b64"], (Arg::Vector(vec![lo, hi]), counts));
        for row in 0..DIGITS {
            let half = if row < 8 { lo } else { hi };
            let c = self.r32();
            self.ins(["bfe", "u32"], (c, half, 4 * (row % 8) as u32, 4));
            let at = scratch_at(run.column, job.s.counts + job.s.entry * row * threads);
            self.ins(["st", "shared", ety], (at, c));
        }
        if let Some(it) = items.get(FIELD_MAX) {
            // The sixteenth key, left out of the packed count: one more in its digit's row
            // of this thread's own column.
            let (sh, _) = self.digit_nibble(it.key, nib);
            let at = self.nibble_entry(job, run.column, sh);
            let c = self.r32();
            self.ins_if(it.g, ["ld", "shared", ety], (c, at.clone()));
            self.ins(["add", "s32"], (c, c, 1));
            self.ins_if(it.g, ["st", "shared", ety], (at, c));
        }
        self.barrier();
        self.radix_scan(job)?;
        let seen = self.r64();
        self.ins(["mov", "u64"], (seen, 0));
        let count = items.len();
        for (i, it) in items.into_iter().enumerate() {
            // Recomputed from the key (a few instructions) rather than kept in each item.
            let (sh, one) = self.digit_nibble(it.key, nib);
            let at = self.nibble_entry(job, run.column, sh);
            let place = self.r32();
            self.ins_if(it.g, ["ld", "shared", ety], (place, at));
            // Plus its rank among the run's earlier keys of its digit.
            let before = self.r64();
            self.ins(["bfe", "u64"], (before, seen, sh, 4));
            let b32 = self.r32();
            self.ins(["cvt", "u32", "u64"], (b32, before));
            self.ins(["add", "s32"], (place, place, b32));
            if i + 1 < count {
                // Counted for the keys after it; the last key has none.
                self.ins_if(it.g, ["add", "s64"], (seen, seen, one));
            }
            self.radix_move(job, step, it.g, place, it.key, it.index);
        }
        self.barrier();
        Ok(())
    }

    /// Moves a key (and its index) to `place`: into the next arrays, or, in the last pass, the
    /// element or index into the result if `place < kept`.
    fn radix_move(
        &mut self,
        job: &RadixJob,
        step: &Step,
        g: Guard,
        place: Reg,
        key: Reg,
        index: Option<Reg>,
    ) {
        if !step.last {
            let at = self.padded_at(step.to.keys, place);
            self.ins_if(g, ["st", "shared", "b32"], (at, key));
            if let (Some(index), Some(arr)) = (index, step.to.idx) {
                let at = self.padded_at(arr, place);
                self.ins_if(g, ["st", "shared", "u32"], (at, index));
            }
            return;
        }
        let g = if job.kept < job.len {
            self.and_guard(g, place, job.kept)
        } else {
            g
        };
        let Arr::At(out) = step.to.keys else {
            unreachable!("the last pass writes a fixed array");
        };
        let index = index.or_else(|| {
            job.packed_index().map(|bits| {
                let i = self.r32();
                self.ins(["and", "b32"], (i, key, (1u32 << bits) - 1));
                i
            })
        });
        match index {
            Some(index) => {
                let at = self.elem_at(out, 4, place.into());
                self.ins_if(g, ["st", "shared", "u32"], (at, index));
            }
            None => {
                let v = self.radix_decode(job, key);
                let size = job.d.size_bytes();
                let at = self.elem_at(out, size, place.into());
                let bits = ["b8", "b16", "", "b32"][size - 1];
                self.ins_if(g, ["st", "shared", bits], (at, v));
            }
        }
    }

    /// `g`, and `place < kept`.
    fn and_guard(&mut self, g: Guard, place: Reg, kept: usize) -> Guard {
        let p = self.new_pred();
        self.ins(["setp", "lt", "s32"], (p, place, kept as i32));
        if let Guard::If(q) = g {
            self.ins(["and", "pred"], (p, p, q));
        }
        Guard::If(p)
    }

    /// The element's bits back from its unsigned key (the encoding undone; for floats, the
    /// `totalOrder` key's flip of the magnitude where the sign is set undone too).
    fn radix_decode(&mut self, job: &RadixJob, key: Reg) -> Reg {
        let v = self.r32();
        self.ins(["xor", "b32"], (v, key, job.flip()));
        if job.d.is_float() {
            let bits = job.d.bits();
            let sign = self.r32();
            self.ins(["bfe", "u32"], (sign, v, bits - 1, 1));
            self.ins(["neg", "s32"], (sign, sign));
            self.ins(["and", "b32"], (sign, sign, (1u32 << (bits - 1)) - 1));
            self.ins(["xor", "b32"], (v, v, sign));
        }
        v
    }

    /// Fills the first key array (and index array) with line `x` (layout `layout`), then a
    /// barrier: integer and `f32` keys straight from the thread's registers, other floats
    /// (16-bit: their registers hold no sign-extended bits) staged in shared memory first.
    pub(super) fn radix_fill(
        &mut self,
        job: &RadixJob,
        x: VarId,
        layout: &Layout,
    ) -> CodegenResult<()> {
        if job.d.is_float() && job.d != DType::F32 {
            self.radix_fill_staged(job, x, layout)?;
        } else {
            self.radix_fill_regs(job, x, layout)?;
        }
        self.barrier();
        Ok(())
    }

    /// [`Emitter::radix_fill`] through the staged tile, read back by place.
    fn radix_fill_staged(
        &mut self,
        job: &RadixJob,
        x: VarId,
        layout: &Layout,
    ) -> CodegenResult<()> {
        self.stage(x, job.d, layout, job.s.src)?;
        self.barrier();
        let (tid, threads) = (self.tid(), self.threads() as u32);
        let len = (job.len as i32).into();
        self.counted_loop(tid.into(), len, threads, |e, i| {
            let at = e.elem_at(job.s.src, job.d.size_bytes(), i.into());
            let key = e.sort_key(job.d, at);
            e.radix_put(job, Guard::Always, key, i);
            Ok(())
        })
    }

    /// [`Emitter::radix_fill`] from the registers of an integer or `f32` line. The line is the
    /// whole tile (one line), so a slot's place is its flat index.
    fn radix_fill_regs(&mut self, job: &RadixJob, x: VarId, layout: &Layout) -> CodegenResult<()> {
        let base = self.tid_times(layout.v);
        for s in 0..layout.slots() {
            let ex = self.chunk_exists(layout, s / layout.v);
            if ex == Predicate::False {
                continue;
            }
            let i = self.r32();
            self.ins(["add", "s32"], (i, base, layout.slot_const(s) as i32));
            let v = self.reg_or_const(Operand::Var(x), s)?;
            let key = self.r32();
            // Integers sit normalized (sign- or zero-extended) in 32 bits, as the staged path's
            // loads extend them; an `f32`'s bits take `sort_key`'s flip.
            self.ins(["mov", "b32"], (key, v));
            if job.d == DType::F32 {
                let m = self.r32();
                self.order_float_bits(key, m, 32, 32);
            }
            self.radix_put(job, ex.guard(), key, i);
        }
        Ok(())
    }

    /// Place `i` of the first arrays: `key` (a sort key, `sort_key`) made unsigned, its index
    /// beside it (argsorts).
    fn radix_put(&mut self, job: &RadixJob, g: Guard, key: Reg, i: Reg) {
        if job.flip() != 0 {
            self.ins(["xor", "b32"], (key, key, job.flip()));
        }
        if job.d.bits() < 32 {
            self.ins(["and", "b32"], (key, key, job.mask()));
        }
        if let Some(bits) = job.packed_index() {
            self.ins(["shl", "b32"], (key, key, bits));
            self.ins(["or", "b32"], (key, key, i));
        }
        let at = self.padded_at(Arr::At(job.s.keys[0]), i);
        self.ins_if(g, ["st", "shared", "b32"], (at, key));
        if job.args() {
            let at = self.padded_at(Arr::At(job.s.idx[0]), i);
            self.ins_if(g, ["st", "shared", "u32"], (at, i));
        }
    }

    /// The count-table entry of a digit in this thread's column, from the digit's shift in
    /// the packed counts (`4 * digit`, [`Emitter::digit_nibble`]).
    fn nibble_entry(&mut self, job: &RadixJob, column: Reg, sh: Reg) -> Address {
        let at = self.r32();
        let row = job.s.entry * self.threads() / 4;
        self.ins(["mad", "lo", "s32"], (at, sh, row, column));
        scratch_at(at, job.s.counts)
    }

    /// The count-table entry of `key`'s digit at `shift` in this thread's column.
    fn count_entry(&mut self, job: &RadixJob, column: Reg, key: Reg, shift: RegOrImm) -> Address {
        let digit = self.r32();
        self.ins(["bfe", "u32"], (digit, key, shift, DIGIT_BITS));
        let at = self.r32();
        let row = job.s.entry * self.threads();
        self.ins(["mad", "lo", "s32"], (at, digit, row, column));
        scratch_at(at, job.s.counts)
    }

    /// Phase 2 of a pass: the count table, read digit-major, replaced by its exclusive prefix
    /// sums. Thread `t` sums the 16 entries `[16 t, 16 t + 16)`; a warp scan and the totals of
    /// the warps before give the sum of everything before them. Ends with a barrier.
    ///
    /// With 16-bit entries a thread's 16 are 32 aligned bytes: read and written as two
    /// `v4.b32` (8 shared accesses fewer each way), summed as packed pairs (no carry crosses
    /// the halves: a sum is at most the line's length, below 2^16). The warps' totals are
    /// scanned with shuffles by every warp (one load a lane, not one a warp per thread).
    fn radix_scan(&mut self, job: &RadixJob) -> CodegenResult<()> {
        let (tid, smem, ety, entry) = (self.tid(), self.smem_base(), entry_type(job), job.s.entry);
        let mine = self.r32();
        self.ins(["mad", "lo", "s32"], (mine, tid, entry * DIGITS, smem));
        let packed = entry == 2 && job.s.counts.is_multiple_of(16);
        let mut entries = Vec::with_capacity(DIGITS);
        let sum = self.r32();
        if packed {
            let words: Vec<Reg> = (0..DIGITS / 2).map(|_| self.r32()).collect();
            for (half, regs) in words.chunks(4).enumerate() {
                let at = scratch_at(mine, job.s.counts + 16 * half);
                self.ins(
                    ["ld", "shared", "v4", "b32"],
                    (Arg::Vector(regs.to_vec()), at),
                );
            }
            let pairs = self.r32();
            self.ins(["mov", "u32"], (pairs, 0));
            for &w in &words {
                self.ins(["add", "s32"], (pairs, pairs, w));
            }
            // Kept packed (8 registers, not 16) until the write-back.
            entries = words;
            let top = self.r32();
            self.ins(["shr", "u32"], (top, pairs, 16));
            self.ins(["and", "b32"], (sum, pairs, 0xffff));
            self.ins(["add", "s32"], (sum, sum, top));
        } else {
            self.ins(["mov", "u32"], (sum, 0));
            for k in 0..DIGITS {
                let v = self.r32();
                let at = scratch_at(mine, job.s.counts + entry * k);
                self.ins(["ld", "shared", ety], (v, at));
                self.ins(["add", "s32"], (sum, sum, v));
                entries.push(v);
            }
        }
        let lane = self.r32();
        self.ins(["and", "b32"], (lane, tid, 31));
        let inclusive = self.warp_inclusive_sum(lane, sum, 32);
        let warp = self.r32();
        self.ins(["shr", "u32"], (warp, tid, 5));
        let last_lane = self.pred_u32("eq", lane, RegOrImm::Imm(31));
        let total_at = self.elem_at(job.s.warp_totals, 4, warp.into());
        self.ins_if(
            Guard::If(last_lane),
            ["st", "shared", "u32"],
            (total_at, inclusive),
        );
        self.barrier();
        // Before this thread: the lanes before it in its warp, then the warps before it (lane
        // `w` of every warp reads warp `w`'s total; their exclusive scan, at lane `warp`).
        let running = self.r32();
        self.ins(["sub", "s32"], (running, inclusive, sum));
        let warps = self.threads() / 32;
        if warps > 1 {
            let total = self.r32();
            self.ins(["mov", "u32"], (total, 0));
            let has = self.pred_u32("lt", lane, RegOrImm::Imm(warps as i32));
            let at = self.elem_at(job.s.warp_totals, 4, lane.into());
            self.ins_if(Guard::If(has), ["ld", "shared", "u32"], (total, at));
            let upto = self.warp_inclusive_sum(lane, total, warps);
            let before = self.r32();
            self.ins(["sub", "s32"], (before, upto, total));
            let mine_before = self.shfl("idx", before, RegOrImm::Reg(warp), 31);
            self.ins(["add", "s32"], (running, running, mine_before));
        }
        if packed {
            let mut words = Vec::with_capacity(DIGITS / 2);
            for &pair in &entries {
                // Exclusive places of the pair's two digits, packed: low, then high.
                let low = self.r32();
                self.ins(["and", "b32"], (low, pair, 0xffff));
                let w = self.r32();
                self.ins(["add", "s32"], (w, running, low));
                self.ins(["shl", "b32"], (w, w, 16));
                self.ins(["or", "b32"], (w, w, running));
                // running + low + high: the pair's halves summed as one word, then folded.
                let both = self.r32();
                self.ins(["shr", "u32"], (both, pair, 16));
                self.ins(["add", "s32"], (both, both, low));
                self.ins(["add", "s32"], (running, running, both));
                words.push(w);
            }
            for (half, regs) in words.chunks(4).enumerate() {
                let at = scratch_at(mine, job.s.counts + 16 * half);
                self.ins(
                    ["st", "shared", "v4", "b32"],
                    (at, Arg::Vector(regs.to_vec())),
                );
            }
        } else {
            for (k, v) in entries.into_iter().enumerate() {
                let at = scratch_at(mine, job.s.counts + entry * k);
                self.ins(["st", "shared", ety], (at, running));
                self.ins(["add", "s32"], (running, running, v));
            }
        }
        self.barrier();
        Ok(())
    }

    /// How a pass finds `4 * digit` in a key word ([`Emitter::digit_nibble`]): the digit's
    /// shift less 2 known (a constant, or a register set once a pass) lets one shift and one
    /// mask do it, where `bfe` then `shl` take three SASS instructions.
    fn nibble_at(&mut self, job: &RadixJob, shift: RegOrImm) -> NibbleAt {
        match shift {
            RegOrImm::Imm(s) if s >= NIBBLE_UP => NibbleAt::Moved {
                up: false,
                by: RegOrImm::Imm(s - NIBBLE_UP),
            },
            RegOrImm::Imm(s) => NibbleAt::Moved {
                up: true,
                by: RegOrImm::Imm(NIBBLE_UP - s),
            },
            RegOrImm::Reg(r) if job.key_shift() >= NIBBLE_UP as u32 => {
                // Every trip's shift is at least the first, `key_shift`.
                let t = self.r32();
                self.ins(["sub", "s32"], (t, r, NIBBLE_UP));
                NibbleAt::Moved {
                    up: false,
                    by: RegOrImm::Reg(t),
                }
            }
            RegOrImm::Reg(r) => NibbleAt::Field(r),
        }
    }

    /// The nibble of `key`'s digit in the packed counts: its shift there (`4 * digit`) and one
    /// at that shift (64 bits).
    fn digit_nibble(&mut self, key: Reg, at: NibbleAt) -> (Reg, Reg) {
        let sh = self.r32();
        match at {
            NibbleAt::Moved { up, by } => {
                self.ins([if up { "shl" } else { "shr" }, "b32"], (sh, key, by));
                self.ins(["and", "b32"], (sh, sh, NIBBLE_MASK));
            }
            NibbleAt::Field(shift) => {
                self.ins(["bfe", "u32"], (sh, key, shift, DIGIT_BITS));
                self.ins(["shl", "b32"], (sh, sh, NIBBLE_UP));
            }
        }
        let one = self.r64();
        self.ins(["mov", "u64"], (one, 1));
        self.ins(["shl", "b64"], (one, one, sh));
        (sh, one)
    }

    /// The inclusive sum of `v` over lanes `0..=lane` of each warp's first `width` lanes (any
    /// width up to 32; lanes past it must hold 0), in a fresh register.
    fn warp_inclusive_sum(&mut self, lane: Reg, v: Reg, width: usize) -> Reg {
        let inclusive = self.r32();
        self.ins(["mov", "u32"], (inclusive, v));
        self.group_inclusive(&["add", "s32"].into(), inclusive, (lane, width));
        inclusive
    }

    /// The address of word `i` of the padded array `arr`.
    fn padded_at(&mut self, arr: Arr, i: Reg) -> Address {
        let p = self.r32();
        self.ins(["shr", "u32"], (p, i, 5));
        self.ins(["add", "s32"], (p, p, i));
        match arr {
            Arr::At(off) => self.elem_at(off, 4, p.into()),
            Arr::In(base) => {
                let a = self.r32();
                self.ins(["mad", "lo", "s32"], (a, p, 4, base));
                scratch_at(a, 0)
            }
        }
    }

    /// `smem + 4 * (i + i / 32)`: with an array's offset, the address of its word `i`.
    fn padded_base(&mut self, i: Reg) -> Reg {
        let p = self.r32();
        self.ins(["shr", "u32"], (p, i, 5));
        self.ins(["add", "s32"], (p, p, i));
        let smem = self.smem_base();
        let a = self.r32();
        self.ins(["mad", "lo", "s32"], (a, p, 4, smem));
        a
    }

    /// Word `i` of the padded array `arr`.
    fn padded_load(&mut self, arr: Arr, i: Reg) -> Reg {
        let at = self.padded_at(arr, i);
        let r = self.r32();
        self.ins(["ld", "shared", "b32"], (r, at));
        r
    }
}

/// A key of a run read into registers: the guard of its place, the key and its index
/// (argsorts).
struct Item {
    g: Guard,
    key: Reg,
    index: Option<Reg>,
}

/// `4 * digit`, a digit's place in the packed counts, is the digit moved up `NIBBLE_UP` bits and
/// masked to `NIBBLE_MASK` (`0b111100`).
const NIBBLE_UP: i32 = 2;
const NIBBLE_MASK: i32 = ((DIGITS as i32) - 1) << NIBBLE_UP;

/// How [`Emitter::digit_nibble`] finds `4 * digit` in a key word, chosen once a pass.
#[derive(Clone, Copy)]
enum NibbleAt {
    /// The key moved `by` bits (up or down) puts the digit at bit `NIBBLE_UP`; a mask then.
    Moved { up: bool, by: RegOrImm },
    /// The digit at a shift in a register that may be below `NIBBLE_UP`: `bfe`, then `shl`.
    Field(Reg),
}

/// One pass: the digit's shift, the arrays it reads and those it writes (the result, in the
/// last pass), and whether it is the last.
struct Step {
    shift: RegOrImm,
    from: Arrays,
    to: Arrays,
    last: bool,
}

/// A padded array of the sort: at a scratch offset, or at the shared address in a register
/// (in the loop of passes, where the arrays swap).
#[derive(Clone, Copy)]
enum Arr {
    At(usize),
    In(Reg),
}

/// The key array and (argsorts) the index array of one side.
#[derive(Clone, Copy)]
struct Arrays {
    keys: Arr,
    idx: Option<Arr>,
}

impl Arrays {
    /// Side `k` (0 or 1) of `job`'s arrays, at their scratch offsets.
    fn at(job: &RadixJob, k: usize) -> Arrays {
        Arrays {
            keys: Arr::At(job.s.keys[k]),
            idx: job.args().then(|| Arr::At(job.s.idx[k])),
        }
    }
}

/// The PTX type of a count-table entry.
fn entry_type(job: &RadixJob) -> &'static str {
    if job.s.entry == 2 {
        "u16"
    } else {
        "u32"
    }
}
