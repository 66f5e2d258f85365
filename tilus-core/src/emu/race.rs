//! Shared-memory race checker ([`super::EmuOptions::check_races`]). Three checkers share the
//! access kinds of this module: [`Shadow`] (shared memory within a block, barrier epochs),
//! [`ClusterShadow`] (distributed shared memory between the blocks of a cluster, vector clocks)
//! and `race_global.rs` (global memory between the blocks of a launch, sparse vector clocks
//! FastTrack-style: the release/acquire hand-offs of the decoupled look-back are checked there).
//!
//! The interpreter runs every tile operation to completion for the whole block, so a kernel that
//! forgets a `sync()` between two shared-memory accesses of different threads still gets the
//! right answer here while it races on the GPU. This module replays the GPU's view: each tile
//! element is performed by the thread that owns it in the PTX back end's layout
//! ([`crate::ptx::Layout`]), and *epochs* count the block-wide barriers (`bar.sync`) the
//! back end emits (`Sync`, `Fence`, a replicating `Broadcast`, a `Reduce` over more than one
//! warp, and the barrier before a release / after an acquire atomic). Two accesses to one shared
//! word race when they fall in the same epoch, come from different threads, at least one writes,
//! and they are not both atomic.
//!
//! Shadow state, per element of the window (in units of the kernel's narrowest shared element
//! type, so that every element of every allocation has its own entry): for each of plain
//! write, atomic write, plain read and atomic read, the epoch of the last such access and its
//! thread (or [`MANY`] when several threads did it in that epoch). Epochs only grow, also across the blocks one
//! interpreter runs, so a stale entry never matches the current epoch and nothing is cleared
//! between blocks.

use super::access::INACTIVE;
use crate::ir::{Inst, Kernel, Sem};
use crate::layout::Layout;

/// "Several threads" (or, as the accessor, "every thread": a block-uniform scalar access).
pub(crate) const MANY: u16 = u16::MAX;

/// Indices into [`Word`]'s fields.
const PW: usize = 0;
const AW: usize = 1;
const PR: usize = 2;
const AR: usize = 3;

const WHAT: [&str; 4] = ["wrote", "atomically wrote", "read", "atomically read"];

/// The shadow of one shared word.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    epoch: [u32; 4],
    tid: [u16; 4],
}

/// The kind of one shared-memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Weak load.
    Read,
    /// Atomic load.
    AtomicRead,
    /// Weak store.
    Write,
    /// Atomic store or read-modify-write.
    AtomicWrite,
}

impl Kind {
    fn field(self) -> usize {
        match self {
            Kind::Write => PW,
            Kind::AtomicWrite => AW,
            Kind::Read => PR,
            Kind::AtomicRead => AR,
        }
    }
    /// The earlier accesses (fields) this kind conflicts with, as a bit set.
    fn conflict_bits(self) -> u8 {
        match self {
            Kind::Read => READ_CONFLICTS,
            Kind::AtomicRead => ATOMIC_READ_CONFLICTS,
            Kind::Write => WRITE_CONFLICTS,
            Kind::AtomicWrite => ATOMIC_WRITE_CONFLICTS,
        }
    }
    /// The earlier accesses (fields) this kind conflicts with.
    fn conflicts(self) -> &'static [usize] {
        match self {
            Kind::Read => &[PW, AW],
            Kind::AtomicRead => &[PW],
            Kind::Write => &[PW, AW, PR, AR],
            Kind::AtomicWrite => &[PW, PR],
        }
    }
    fn verb(self) -> &'static str {
        match self {
            Kind::Read => "reads",
            Kind::AtomicRead => "atomically reads",
            Kind::Write => "writes",
            Kind::AtomicWrite => "atomically writes",
        }
    }
    fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::AtomicWrite)
    }
}

/// A detected race (turned into [`super::EmuError::SharedRace`] by the caller).
#[derive(Debug)]
pub(crate) struct Race {
    pub detail: String,
}

/// Where the access goes, for the message.
pub(crate) struct Target<'a> {
    /// Name of the shared tensor variable.
    pub name: &'a str,
    /// Whether that variable is a compiler temporary (its name means nothing to the user).
    pub temp: bool,
    /// Its first byte in the window.
    pub byte: usize,
    /// Bytes per element.
    pub size: usize,
    pub shape: &'a [usize],
}

/// The owning thread of each flat index `0..` of a tile with `layout` (ptx/layout.rs:
/// `f = o * threads * v + t * v + i`), stepped along instead of divided out.
pub(crate) fn owners(layout: Layout) -> Owners {
    Owners {
        v: layout.v.max(1),
        threads: layout.threads.max(1),
        t: 0,
        i: 0,
    }
}

/// The iterator of [`owners`]: thread `t`, position `i` in its run of `v`.
#[derive(Debug, Clone)]
pub(crate) struct Owners {
    v: usize,
    threads: usize,
    t: usize,
    i: usize,
}

impl Iterator for Owners {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let t = self.t;
        self.i += 1;
        if self.i == self.v {
            self.i = 0;
            self.t += 1;
            if self.t == self.threads {
                self.t = 0;
            }
        }
        Some(t)
    }
}

/// The conflicts of the access kinds, as bit sets of [`Word`] fields.
const READ_CONFLICTS: u8 = 1 << PW | 1 << AW;
const ATOMIC_READ_CONFLICTS: u8 = 1 << PW;
const WRITE_CONFLICTS: u8 = 1 << PW | 1 << AW | 1 << PR | 1 << AR;
const ATOMIC_WRITE_CONFLICTS: u8 = 1 << PW | 1 << PR;

/// A conflict found by [`Shadow::scan`]: the element's address, the field of the earlier access
/// and its thread, and the current accessor.
struct Conflict {
    addr: usize,
    field: usize,
    other: u16,
    t: u16,
}

/// Per-block race-checking state (it moves with a suspended block).
///
/// Most barrier intervals hold accesses of kinds that cannot conflict with each other (a
/// histogram's atomic adds between two `sync()`s; loads after stores and a barrier), and then
/// no element needs a check: only the kinds of the interval's accesses ([`Shadow::kinds`])
/// are compared, and the accesses wait in [`Shadow::pending`] to be recorded in the shadow
/// words until an access of a conflicting kind comes (which is then checked element by
/// element against all of them) or the interval ends (and nothing is recorded at all).
pub(crate) struct Shadow {
    words: Vec<Word>,
    /// Bytes per shadow entry: the narrowest shared element type of the kernel.
    gran: usize,
    /// The current epoch (never 0, which marks "never accessed").
    epoch: u32,
    threads: usize,
    vmax: usize,
    /// The kinds of the accesses of the current interval, as a bit set of [`Word`] fields.
    kinds: u8,
    /// Accesses of the current interval not recorded in `words` yet, in order; their
    /// addresses are consecutive in `pending_addrs`.
    pending: Vec<Pending>,
    pending_addrs: Vec<i64>,
}

/// An access waiting to be recorded ([`Shadow`]).
#[derive(Debug, Clone, Copy)]
struct Pending {
    kind: Kind,
    uniform: bool,
    /// Shadow entries per element.
    per: usize,
    len: usize,
}

/// Most addresses waiting to be recorded; more are recorded at once, so that a long interval
/// costs no more memory than this.
const PENDING_MAX: usize = 1 << 18;

/// The narrowest element type of the kernel's shared allocations, in bytes (4 when none).
fn shared_granularity(k: &Kernel) -> usize {
    let mut g = 4;
    crate::ir::for_each_inst(&k.body, &mut |_, inst, _| {
        if let Inst::AllocShared { dtype, .. } = inst {
            g = g.min(dtype.size_bytes());
        }
    });
    g.max(1)
}

impl Shadow {
    pub fn new(kernel: &Kernel) -> Shadow {
        let gran = shared_granularity(kernel);
        Shadow {
            words: vec![Word::default(); kernel.shared_bytes.div_ceil(gran)],
            gran,
            epoch: 0,
            // Thread ids must fit below MANY; the front end caps blocks at 1024 threads.
            threads: (kernel.threads as usize).clamp(1, MANY as usize - 1),
            vmax: crate::layout::vector_width(kernel),
            kinds: 0,
            pending: Vec::new(),
            pending_addrs: Vec::new(),
        }
    }

    /// The current block-barrier epoch.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// A block-wide barrier (also called at the start of every block).
    pub fn barrier(&mut self) {
        if self.epoch == u32::MAX {
            self.words.fill(Word::default());
            self.epoch = 0;
        }
        self.epoch += 1;
        // Accesses of the interval that ended can conflict with nothing any more.
        self.kinds = 0;
        self.pending.clear();
        self.pending_addrs.clear();
    }

    /// Check and record the active elements of one access. `addrs` are the resolved element
    /// addresses in units of `target.size` (row-major over the access shape, [`INACTIVE`] for
    /// inactive elements); `uniform`: every thread performs element 0 (a scalar-destination
    /// load); `distinct`: no two elements have one address (a weak store then cannot race
    /// with itself).
    pub fn access(
        &mut self,
        kind: Kind,
        addrs: &[i64],
        (uniform, distinct): (bool, bool),
        target: &Target<'_>,
    ) -> Result<(), Race> {
        let per = target.size / self.gran;
        let self_conflict = kind == Kind::Write && !distinct;
        if self.kinds & kind.conflict_bits() == 0 && !self_conflict {
            if self.pending_addrs.len() + addrs.len() > PENDING_MAX {
                self.record_pending();
            }
            self.kinds |= 1 << kind.field();
            self.pending.push(Pending {
                kind,
                uniform,
                per,
                len: addrs.len(),
            });
            self.pending_addrs.extend_from_slice(addrs);
            return Ok(());
        }
        self.record_pending();
        self.kinds |= 1 << kind.field();
        self.check(kind, addrs, uniform, per)
            .map_err(|c| self.race(kind, c.t, c.field, c.other, c.addr * target.size, target))
    }

    /// Record the pending accesses in the shadow words (they conflict with nothing).
    fn record_pending(&mut self) {
        let (pending, addrs) = (
            std::mem::take(&mut self.pending),
            std::mem::take(&mut self.pending_addrs),
        );
        let mut at = 0;
        for p in &pending {
            let recorded = self.check(p.kind, &addrs[at..at + p.len], p.uniform, p.per);
            debug_assert!(recorded.is_ok(), "pending accesses do not conflict");
            at += p.len;
        }
        self.pending = pending;
        self.pending.clear();
        self.pending_addrs = addrs;
        self.pending_addrs.clear();
    }

    /// Check one access against the shadow words and record it there (`per` entries per
    /// element).
    fn check(
        &mut self,
        kind: Kind,
        addrs: &[i64],
        uniform: bool,
        per: usize,
    ) -> Result<(), Conflict> {
        let scan = match kind {
            Kind::Read => Shadow::scan::<PR, READ_CONFLICTS>,
            Kind::AtomicRead => Shadow::scan::<AR, ATOMIC_READ_CONFLICTS>,
            Kind::Write => Shadow::scan::<PW, WRITE_CONFLICTS>,
            Kind::AtomicWrite => Shadow::scan::<AW, ATOMIC_WRITE_CONFLICTS>,
        };
        match per {
            1 => scan(self, addrs, uniform, 1),
            per => scan(self, addrs, uniform, per),
        }
    }

    /// [`access`](Self::access) for one kind: recording in field `FIELD`, conflicting with the
    /// fields in `CONFLICTS`; an element at address `p` has shadow entries from `p * per`
    /// (its type is `per` times the shadow's granularity; the first entry stands for all).
    #[inline(always)]
    fn scan<const FIELD: usize, const CONFLICTS: u8>(
        &mut self,
        addrs: &[i64],
        uniform: bool,
        per: usize,
    ) -> Result<(), Conflict> {
        let layout = Layout::new(addrs.len(), self.threads, self.vmax);
        let (epoch, v, threads) = (self.epoch, layout.v.max(1), layout.threads.max(1));
        // Each run of `v` elements belongs to one thread, the threads in turn ([`owners`]).
        let mut owner = 0;
        for run in addrs.chunks(v) {
            let t = if uniform { MANY } else { owner as u16 };
            for &p in run {
                if p == INACTIVE {
                    continue;
                }
                let Some(w) = self.words.get_mut(p as usize * per) else {
                    continue;
                };
                // Accesses of the kinds that conflict, in this barrier interval: most often none,
                // so the threads are compared only then.
                let recent = (0..4).any(|c| CONFLICTS & 1 << c != 0 && w.epoch[c] == epoch);
                if recent {
                    for c in 0..4 {
                        let conflicts = CONFLICTS & 1 << c != 0;
                        if conflicts && w.epoch[c] == epoch && (w.tid[c] != t || t == MANY) {
                            let (addr, field, other) = (p as usize, c, w.tid[c]);
                            return Err(Conflict {
                                addr,
                                field,
                                other,
                                t,
                            });
                        }
                    }
                }
                // Record: this thread, or several when another one did it in this interval.
                let again = w.epoch[FIELD] == epoch && w.tid[FIELD] != t;
                w.tid[FIELD] = if again { MANY } else { t };
                w.epoch[FIELD] = epoch;
            }
            owner += 1;
            if owner == threads {
                owner = 0;
            }
        }
        Ok(())
    }

    fn race(
        &self,
        kind: Kind,
        t: u16,
        earlier: usize,
        other: u16,
        byte: usize,
        target: &Target<'_>,
    ) -> Race {
        let now = if t == MANY {
            let example = if other == 0 || other == MANY { 1 } else { 0 };
            format!("every thread (a block-uniform scalar access; e.g. thread {example})")
        } else {
            format!("thread {t}")
        };
        let then = if other == MANY {
            "several threads".to_string()
        } else {
            format!("thread {other}")
        };
        let rel = byte.saturating_sub(target.byte) / target.size.max(1);
        let place = format!("byte offset {byte} of the window");
        report(
            kind,
            earlier,
            (&now, &then),
            rel,
            &place,
            target,
            "with no barrier in between (same barrier interval); add `sync()` between the two accesses",
        )
    }
}

/// The message of a race: `kind` by `who.0` after `WHAT[earlier]` by `who.1`, at flat element
/// `rel` of `target` (`place` says where in memory), and what orders such accesses.
fn report(
    kind: Kind,
    earlier: usize,
    who: (&str, &str),
    rel: usize,
    place: &str,
    target: &Target<'_>,
    fix: &str,
) -> Race {
    let name = match (kind.writes(), earlier == PW || earlier == AW) {
        (false, true) => "read-after-write",
        (true, true) => "write-after-write",
        _ => "write-after-read",
    };
    let mut coords = Vec::with_capacity(target.shape.len());
    let mut rest = rel;
    for &d in target.shape.iter().rev() {
        let d = d.max(1);
        coords.push(rest % d);
        rest /= d;
    }
    coords.reverse();
    let coords: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
    let dims: Vec<String> = target.shape.iter().map(|d| d.to_string()).collect();
    // Compiler temporaries (`_tN`) are no help to the user: name the allocation by place.
    let alloc = if target.temp {
        format!(
            "the shared tensor of shape [{}] allocated at byte {} of the window",
            dims.join(", "),
            target.byte
        )
    } else {
        format!(
            "shared tensor `{}` (shape [{}], allocated at byte {} of the window)",
            target.name,
            dims.join(", "),
            target.byte
        )
    };
    Race {
        detail: format!(
            "{name} race on {alloc} at element [{}], {place}: {} {} it after {} {} it {fix}",
            coords.join(", "),
            who.0,
            kind.verb(),
            who.1,
            WHAT[earlier],
        ),
    }
}

/// Race checking of distributed shared memory (`cluster_shared_tensor`), shared by the blocks of
/// one running cluster. Two accesses to one word conflict as in [`Shadow`] when they fall in the
/// same *cluster phase* (between two `cluster_sync()`s) and are not ordered: by a block barrier
/// when both are of one block, by happens-before when they are of two blocks.
///
/// Happens-before between blocks is tracked with vector clocks ([`BlockClock`]): every record
/// keeps, per block, the clock of that block's latest access of its kind in the phase, and an
/// earlier access of block `b` is ordered before the current one when the current block's
/// clock has reached it, which it does only by acquiring (an acquire atomic, or a relaxed one
/// followed by an acquire fence) from a location that `b` (or a block that acquired from `b`)
/// released to. Locations (global and distributed-shared elements) keep the join of the
/// clocks released to them, published before the releasing write and read after the acquiring
/// read, so that a block that reads a released value always sees its clock. Clocks only grow at
/// a location (release sequences are never cut), which can miss a race, never report a
/// correctly synchronised kernel. Same-block accesses are checked against the latest record of
/// the word only.
pub(crate) struct ClusterShadow {
    state: std::sync::Mutex<ClusterState>,
    /// Release clocks of the locations atomics have written, by [`SyncKey`].
    released: std::sync::Mutex<std::collections::HashMap<SyncKey, Vec<u32>>>,
    /// Blocks per cluster (the length of every clock).
    blocks: usize,
    gran: usize,
    threads: usize,
    vmax: usize,
}

/// A memory location that atomics synchronise through: a global element (by its host address)
/// or a byte of the cluster's windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SyncKey {
    Global(usize),
    Cluster(usize),
    /// A byte of the windows of the cluster whose rank-0 block is block `.0` of the grid (a key
    /// of the launch-wide global shadow, which outlives one cluster).
    Dsmem(usize, usize),
    /// The cluster barrier of the cluster whose rank-0 block is block `.0` of the grid.
    Barrier(usize),
}

struct ClusterState {
    /// Per shadow word, per access kind: the latest access.
    words: Vec<[Seen; 4]>,
    /// Per shadow word, per access kind, per block: the block's clock at its latest such access
    /// in the record's phase (0: none).
    clocks: Vec<u32>,
}

/// The latest access of one kind to one word: cluster phase + 1 (0: never), the block's rank
/// and thread ([`MANY`]: several), its block-barrier epoch.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    phase: u64,
    rank: u16,
    tid: u16,
    epoch: u32,
}

/// Who performs an access: the block's rank, block epoch, cluster phase and vector clock.
pub(crate) struct Accessor<'c> {
    pub rank: u32,
    pub epoch: u32,
    pub phase: u64,
    pub clock: &'c [u32],
}

/// The vector clock of one block of a cluster: `now[b]` is how far this block knows block
/// `b`'s history (its own entry counts its releases, from 1). Empty outside clusters.
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockClock {
    rank: usize,
    now: Vec<u32>,
    /// `now` at the latest release fence: what a relaxed atomic write after it releases.
    fenced: Vec<u32>,
    /// The clocks relaxed atomic reads saw since: what an acquire fence acquires.
    pending: Vec<u32>,
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, &b) in into.iter_mut().zip(from) {
        *a = (*a).max(b);
    }
}

impl BlockClock {
    /// The clock of block `rank` of a cluster of `blocks`, at the block's start.
    pub fn new(rank: u32, blocks: usize) -> BlockClock {
        let mut now = vec![0; blocks];
        if let Some(own) = now.get_mut(rank as usize) {
            *own = 1;
        }
        BlockClock {
            rank: rank as usize,
            now,
            fenced: vec![0; blocks],
            pending: vec![0; blocks],
        }
    }

    pub fn now(&self) -> &[u32] {
        &self.now
    }

    /// A fence of `sem`: its acquire half takes what relaxed reads saw, its release half marks
    /// what later relaxed writes release.
    pub fn fence(&mut self, sem: Sem) {
        if sem.has_acquire() {
            join(&mut self.now, &self.pending);
        }
        if sem.has_release() {
            self.fenced.clone_from(&self.now);
            self.tick();
        }
    }

    /// After a release: later accesses are not covered by it.
    pub fn tick(&mut self) {
        if let Some(own) = self.now.get_mut(self.rank) {
            *own += 1;
        }
    }
}

impl ClusterShadow {
    /// The shadow of `blocks` windows of `kernel`.
    pub fn new(kernel: &Kernel, blocks: u32) -> ClusterShadow {
        let gran = shared_granularity(kernel);
        let window = kernel.shared_bytes.next_multiple_of(16);
        let words = (window * blocks as usize).div_ceil(gran);
        ClusterShadow {
            state: std::sync::Mutex::new(ClusterState {
                words: vec![[Seen::default(); 4]; words],
                clocks: vec![0; words * 4 * blocks as usize],
            }),
            released: Default::default(),
            blocks: blocks as usize,
            gran,
            threads: (kernel.threads as usize).clamp(1, MANY as usize - 1),
            vmax: crate::layout::vector_width(kernel),
        }
    }

    /// Blocks per cluster.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// An atomic write of `sem` by `clock`'s block to `keys`, before it is performed: the
    /// locations release the block's clock (`sem` has a release) or what its latest release
    /// fence covered.
    pub fn publish(&self, keys: &[SyncKey], sem: Sem, clock: &BlockClock) {
        let from = if sem.has_release() {
            &clock.now
        } else {
            &clock.fenced
        };
        let mut released = self.released.lock().unwrap_or_else(|p| p.into_inner());
        for &k in keys {
            let at = released.entry(k).or_insert_with(|| vec![0; self.blocks]);
            join(at, from);
        }
    }

    /// An atomic read of `sem` from `keys`, after it is performed: an acquire takes the clocks
    /// released there, a relaxed read keeps them for a later acquire fence.
    pub fn observe(&self, keys: &[SyncKey], sem: Sem, clock: &mut BlockClock) {
        let released = self.released.lock().unwrap_or_else(|p| p.into_inner());
        let into = if sem.has_acquire() {
            &mut clock.now
        } else {
            &mut clock.pending
        };
        for k in keys {
            if let Some(at) = released.get(k) {
                join(into, at);
            }
        }
    }

    /// Check and record the active elements of one access; `addrs` in units of `target.size`
    /// from the start of the rank-0 window; `window` bytes per block; `part` elements of the
    /// tensor per block (for the message).
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &self,
        kind: Kind,
        addrs: &[i64],
        uniform: bool,
        who: &Accessor<'_>,
        window: usize,
        part: usize,
        target: &Target<'_>,
    ) -> Result<(), Race> {
        let layout = Layout::new(addrs.len(), self.threads, self.vmax);
        let scale = target.size;
        let phase = who.phase + 1;
        let rank = who.rank.min(MANY as u32 - 1) as u16;
        let blocks = self.blocks;
        let own_clock = who.clock.get(rank as usize).copied().unwrap_or(0);
        let (field, conflicts) = (kind.field(), kind.conflicts());
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let ClusterState { words, clocks } = &mut *st;
        for (&p, owner) in addrs.iter().zip(owners(layout)) {
            if p == INACTIVE {
                continue;
            }
            let t = if uniform { MANY } else { owner as u16 };
            let byte = p as usize * scale;
            let word = byte / self.gran;
            let Some(w) = words.get_mut(word) else {
                continue;
            };
            for &c in conflicts {
                let e = w[c];
                if e.phase != phase {
                    continue;
                }
                let seen = &clocks[(word * 4 + c) * blocks..][..blocks];
                // Same block: ordered by its barriers. Other blocks: by happens-before.
                let other = if e.rank == rank && e.epoch == who.epoch && (e.tid != t || t == MANY) {
                    Some((rank, e.tid))
                } else {
                    (0..blocks)
                        .find(|&b| {
                            b != rank as usize && seen[b] > who.clock.get(b).copied().unwrap_or(0)
                        })
                        .map(|b| {
                            let b = b as u16;
                            (b, if e.rank == b { e.tid } else { MANY })
                        })
                };
                if let Some((b, tid)) = other {
                    let owner_rank = byte / window.max(1);
                    let local = (byte % window.max(1)).saturating_sub(target.byte) / scale.max(1);
                    let rel = owner_rank * part + local;
                    return Err(cluster_race(
                        kind,
                        c,
                        (rank, t),
                        (b, tid),
                        owner_rank,
                        rel,
                        target,
                    ));
                }
            }
            let e = &mut w[field];
            let base = (word * 4 + field) * blocks;
            if e.phase != phase {
                clocks[base..base + blocks].fill(0);
            }
            if e.phase != phase || e.rank != rank || e.epoch != who.epoch {
                *e = Seen {
                    phase,
                    rank,
                    tid: t,
                    epoch: who.epoch,
                };
            } else if e.tid != t {
                e.tid = MANY;
            }
            if let Some(c) = clocks.get_mut(base + rank as usize) {
                *c = (*c).max(own_clock);
            }
        }
        Ok(())
    }
}

/// The message of a race on distributed shared memory: `kind` by thread `now.1` of block
/// `now.0` after `WHAT[earlier]` by `then` at element `rel` (in block `owner_rank`'s part).
fn cluster_race(
    kind: Kind,
    earlier: usize,
    now: (u16, u16),
    then: (u16, u16),
    owner_rank: usize,
    rel: usize,
    target: &Target<'_>,
) -> Race {
    let thread = |tid: u16| {
        if tid == MANY {
            "a thread".to_string()
        } else {
            format!("thread {tid}")
        }
    };
    let now_who = format!("{} of block {} of the cluster", thread(now.1), now.0);
    let then_who = format!("{} of block {} of the cluster", thread(then.1), then.0);
    let place = format!("in the part of block {owner_rank}");
    let fix = if now.0 == then.0 {
        "with no barrier in between (same barrier interval); add `sync()` between the two accesses"
    } else {
        "with no cluster barrier in between; add `cluster_sync()` between the two accesses (or order them with release/acquire atomics of cluster scope)"
    };
    report(
        kind,
        earlier,
        (&now_who, &then_who),
        rel,
        &place,
        target,
        fix,
    )
}
