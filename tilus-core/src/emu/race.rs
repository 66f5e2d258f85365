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
use crate::ir::{Inst, Kernel, Stmt};
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
    fn walk(b: &[Stmt], g: &mut usize) {
        for s in b {
            match s {
                Stmt::Inst {
                    inst: Inst::AllocShared { dtype, .. },
                    ..
                } => *g = (*g).min(dtype.size_bytes()),
                Stmt::Inst { .. } | Stmt::Break { .. } => {}
                Stmt::For { body, .. } => walk(body, g),
                Stmt::While {
                    cond_block, body, ..
                } => {
                    walk(cond_block, g);
                    walk(body, g);
                }
                Stmt::If { then, els, .. } => {
                    walk(then, g);
                    walk(els, g);
                }
            }
        }
    }
    let mut g = 4;
    walk(&k.body, &mut g);
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
        let name = match (kind.writes(), earlier == PW || earlier == AW) {
            (false, true) => "read-after-write",
            (true, true) => "write-after-write",
            _ => "write-after-read",
        };
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
                "{name} race on {alloc} at element [{}], byte offset {} of the window: {now} {} \
                 it after {then} {} it with no barrier in between (same barrier interval); add \
                 `sync()` between the two accesses",
                coords.join(", "),
                byte,
                kind.verb(),
                WHAT[earlier],
            ),
        }
    }
}
