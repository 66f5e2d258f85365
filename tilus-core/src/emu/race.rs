//! Shared-memory race checker ([`super::EmuOptions::check_races`]).
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
use crate::ir::{Inst, Kernel};
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
pub(crate) fn owners(layout: Layout) -> impl Iterator<Item = usize> {
    let (v, threads) = (layout.v.max(1), layout.threads.max(1));
    // (thread, position in its run of v)
    std::iter::successors(Some((0usize, 0usize)), move |&(t, i)| {
        Some(if i + 1 < v {
            (t, i + 1)
        } else if t + 1 < threads {
            (t + 1, 0)
        } else {
            (0, 0)
        })
    })
    .map(|(t, _)| t)
}

/// Per-interpreter race-checking state.
pub(crate) struct Shadow {
    words: Vec<Word>,
    /// Bytes per shadow entry: the narrowest shared element type of the kernel.
    gran: usize,
    /// The current epoch (never 0, which marks "never accessed").
    epoch: u32,
    threads: usize,
    vmax: usize,
}

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
    }

    /// Check and record the active elements of one access. `addrs` are the resolved element
    /// addresses in units of `target.size` (row-major over the access shape, [`INACTIVE`] for
    /// inactive elements); `uniform`: every thread performs element 0 (a scalar-destination
    /// load).
    pub fn access(
        &mut self,
        kind: Kind,
        addrs: &[i64],
        uniform: bool,
        target: &Target<'_>,
    ) -> Result<(), Race> {
        let layout = Layout::new(addrs.len(), self.threads, self.vmax);
        let scale = target.size;
        let epoch = self.epoch;
        let (field, conflicts) = (kind.field(), kind.conflicts());
        for (&p, owner) in addrs.iter().zip(owners(layout)) {
            if p == INACTIVE {
                continue;
            }
            let t = if uniform { MANY } else { owner as u16 };
            let entry = p as usize * scale / self.gran;
            let Some(w) = self.words.get_mut(entry) else {
                continue;
            };
            for &c in conflicts {
                if w.epoch[c] == epoch && (w.tid[c] != t || t == MANY) {
                    let other = w.tid[c];
                    return Err(self.race(kind, t, c, other, p as usize * scale, target));
                }
            }
            if w.epoch[field] != epoch {
                w.epoch[field] = epoch;
                w.tid[field] = t;
            } else if w.tid[field] != t {
                w.tid[field] = MANY;
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
/// when both are of one block, by a release/acquire pair when they are of two blocks. The
/// release/acquire order is approximated: an access of another block recorded before any
/// release (atomic or fence with a release component) that precedes this block's latest acquire
/// counts as ordered. That can miss a race (the release was another block's), never reports a
/// correctly synchronised kernel.
pub(crate) struct ClusterShadow {
    state: std::sync::Mutex<ClusterState>,
    /// Releases performed so far by any block of the cluster.
    releases: std::sync::atomic::AtomicU64,
    gran: usize,
    threads: usize,
    vmax: usize,
}

struct ClusterState {
    /// Per shadow word, per access kind: the latest record.
    words: Vec<[Seen; 4]>,
}

/// One record: cluster phase + 1 (0: never), the block's rank and thread ([`MANY`]: several),
/// its block-barrier epoch, and the release count when it was recorded.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    phase: u64,
    rank: u16,
    tid: u16,
    epoch: u32,
    releases: u64,
}

/// Who performs an access: the block's rank, block epoch, cluster phase and the release count
/// its latest acquire saw.
pub(crate) struct Accessor {
    pub rank: u32,
    pub epoch: u32,
    pub phase: u64,
    pub acquired: u64,
}

impl ClusterShadow {
    /// The shadow of `blocks` windows of `kernel`.
    pub fn new(kernel: &Kernel, blocks: u32) -> ClusterShadow {
        let gran = shared_granularity(kernel);
        let window = kernel.shared_bytes.next_multiple_of(16);
        ClusterShadow {
            state: std::sync::Mutex::new(ClusterState {
                words: vec![[Seen::default(); 4]; (window * blocks as usize).div_ceil(gran)],
            }),
            releases: std::sync::atomic::AtomicU64::new(0),
            gran,
            threads: (kernel.threads as usize).clamp(1, MANY as usize - 1),
            vmax: crate::layout::vector_width(kernel),
        }
    }

    /// A release by some block (before its releasing access).
    pub fn release(&self) {
        self.releases
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The release count an acquire (after its acquiring access) has seen.
    pub fn releases(&self) -> u64 {
        self.releases.load(std::sync::atomic::Ordering::SeqCst)
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
        who: &Accessor,
        window: usize,
        part: usize,
        target: &Target<'_>,
    ) -> Result<(), Race> {
        let layout = Layout::new(addrs.len(), self.threads, self.vmax);
        let scale = target.size;
        let phase = who.phase + 1;
        let rank = who.rank.min(MANY as u32 - 1) as u16;
        let now_releases = self.releases();
        let (field, conflicts) = (kind.field(), kind.conflicts());
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        for (&p, owner) in addrs.iter().zip(owners(layout)) {
            if p == INACTIVE {
                continue;
            }
            let t = if uniform { MANY } else { owner as u16 };
            let byte = p as usize * scale;
            let Some(w) = st.words.get_mut(byte / self.gran) else {
                continue;
            };
            for &c in conflicts {
                let e = w[c];
                if e.phase != phase {
                    continue;
                }
                let racing = if e.rank == rank {
                    e.epoch == who.epoch && (e.tid != t || t == MANY)
                } else {
                    e.releases >= who.acquired
                };
                if racing {
                    let block = |r: u16| {
                        if r == MANY {
                            "several blocks".to_string()
                        } else {
                            format!("block {r} of the cluster")
                        }
                    };
                    let thread = |tid: u16| {
                        if tid == MANY {
                            "several threads".to_string()
                        } else {
                            format!("thread {tid}")
                        }
                    };
                    let now = format!("{} of block {rank} of the cluster", thread(t));
                    let then = if e.rank == MANY {
                        block(e.rank)
                    } else {
                        format!("{} of {}", thread(e.tid), block(e.rank))
                    };
                    let owner_rank = byte / window.max(1);
                    let local = (byte % window.max(1)).saturating_sub(target.byte) / scale.max(1);
                    let rel = owner_rank * part + local;
                    let place = format!("in the part of block {owner_rank}");
                    let fix = if e.rank == rank {
                        "with no barrier in between (same barrier interval); add `sync()` between the two accesses"
                    } else {
                        "with no cluster barrier in between; add `cluster_sync()` between the two accesses (or order them with release/acquire atomics of cluster scope)"
                    };
                    return Err(report(kind, c, (&now, &then), rel, &place, target, fix));
                }
            }
            let e = &mut w[field];
            if e.phase != phase {
                *e = Seen {
                    phase,
                    rank,
                    tid: t,
                    epoch: who.epoch,
                    releases: now_releases,
                };
            } else if e.rank != rank {
                e.rank = MANY;
                e.releases = now_releases;
            } else if e.epoch != who.epoch {
                e.epoch = who.epoch;
                e.tid = t;
                e.releases = now_releases;
            } else if e.tid != t {
                e.tid = MANY;
            }
        }
        Ok(())
    }
}
