//! Race checking of global memory between the blocks of one launch
//! ([`super::EmuOptions::check_races`]), FastTrack-style (Flanagan & Freund 2009).
//!
//! Every block has a sparse vector clock ([`GridClock`]): its own entry counts its releases
//! (from 1), the others say how far it has seen other blocks' histories, which it learns only
//! by acquiring: an acquire atomic (or a relaxed one followed by an acquire fence) on a global
//! element or a distributed-shared word that another block released to, or a `cluster_sync()`
//! (which orders the blocks of a cluster, global memory included). A location released to keeps
//! the join of the clocks released there (published before the releasing write, joined after
//! the acquiring read, so that a block that reads a released value always sees its clock; clocks
//! only grow at a location, release sequences are never cut, which can miss a race but never
//! reports a correctly synchronised kernel).
//!
//! Each global element touched has a shadow word ([`GlobalShadow`], pages of 4 KiB of memory
//! keyed by host address and element width, so that aliasing arguments share it) with, for each
//! of plain write, atomic write, plain read and atomic read, the *epochs* (block, clock) of the
//! accesses of that kind not known to be ordered before a later one of the kind: one epoch, or
//! up to [`SET_CAP`] of them (several blocks read one element unordered). An access conflicts
//! with an earlier one of another block when at least one writes, they are not both atomic, and
//! the earlier one's clock is not covered by the accessor's entry for its block. Since each
//! word is checked and updated under its page's lock, the second of two unordered accesses
//! sees the first whichever way the host threads interleave them, so a racy hand-off is
//! reported on every run, not only on unlucky ones.
//!
//! Accesses of one block are ordered by its program order and barriers (the shared-memory
//! checker's business; global accesses of two threads of one block with no barrier in between
//! are not checked). The host's accesses to mapped memory are no block's and are not seen.
//! Known misses (never false reports): an element's epoch set drops its oldest entry beyond
//! [`SET_CAP`]; views of one memory with different element widths have separate shadows.

use super::race::{Kind, SyncKey};
use crate::ir::Sem;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// Bytes of memory per shadow page.
const PAGE: usize = 4096;
/// Most epochs one field of a shadow word keeps (the oldest is dropped beyond it).
pub(crate) const SET_CAP: usize = 16;
/// A field whose epochs are in the page's `sets`.
const SET: u64 = u64::MAX;

const PW: usize = 0;
const AW: usize = 1;
const PR: usize = 2;
const AR: usize = 3;
const WHAT: [&str; 4] = ["wrote", "atomically wrote", "read", "atomically read"];

fn field(kind: Kind) -> usize {
    match kind {
        Kind::Write => PW,
        Kind::AtomicWrite => AW,
        Kind::Read => PR,
        Kind::AtomicRead => AR,
    }
}

fn conflicts(kind: Kind) -> &'static [usize] {
    match kind {
        Kind::Read => &[PW, AW],
        Kind::AtomicRead => &[PW],
        Kind::Write => &[PW, AW, PR, AR],
        Kind::AtomicWrite => &[PW, PR],
    }
}

/// An epoch: block `b`'s access at its clock `c`, as `(b + 1) << 32 | c` (0: none).
fn epoch(b: u32, c: u32) -> u64 {
    ((b as u64 + 1) << 32) | c as u64
}

fn epoch_block(e: u64) -> u32 {
    ((e >> 32) - 1) as u32
}

/// A sparse vector clock: `(block, clock)` sorted by block; a block not there is at 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VClock(Vec<(u32, u32)>);

impl VClock {
    pub fn get(&self, b: u32) -> u32 {
        match self.0.binary_search_by_key(&b, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Raise block `b`'s entry to `c`.
    pub fn raise(&mut self, b: u32, c: u32) {
        match self.0.binary_search_by_key(&b, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(c),
            Err(i) => self.0.insert(i, (b, c)),
        }
    }

    /// `self = self ⊔ other` (no allocation when `other` adds nothing); whether it grew.
    pub fn join(&mut self, other: &VClock) -> bool {
        if other.0.is_empty() {
            return false;
        }
        let covered = other.0.iter().all(|&(b, c)| self.get(b) >= c);
        if covered {
            return false;
        }
        let (a, b) = (&self.0, &other.0);
        let mut out = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => {
                    out.push(a[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    out.push(b[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    out.push((a[i].0, a[i].1.max(b[j].1)));
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&a[i..]);
        out.extend_from_slice(&b[j..]);
        self.0 = out;
        true
    }
}

/// The vector clock of one block of the grid (global-memory race checking).
#[derive(Debug, Clone, Default)]
pub(crate) struct GridClock {
    block: u32,
    /// This block's own entry (from 1; it ticks after every release).
    own: u32,
    /// Entries of the other blocks (and possibly a stale own entry, which `own` exceeds).
    known: VClock,
    /// The whole clock at the latest release fence (what a relaxed atomic write releases).
    fenced: VClock,
    /// The clocks relaxed atomic reads saw since: what an acquire fence acquires.
    pending: VClock,
    /// Per location, the version of its released clock already joined into `known`.
    seen: HashMap<SyncKey, u64>,
}

impl GridClock {
    /// The clock of block `block` at its start.
    pub fn new(block: u32) -> GridClock {
        GridClock {
            block,
            own: 1,
            ..GridClock::default()
        }
    }

    /// How far this block has seen block `b`'s history.
    #[inline]
    fn get(&self, b: u32) -> u32 {
        if b == self.block {
            self.own
        } else {
            self.known.get(b)
        }
    }

    /// The whole clock (own entry included).
    fn now(&self) -> VClock {
        let mut c = self.known.clone();
        c.raise(self.block, self.own);
        c
    }

    /// After a release: later accesses are not covered by it.
    pub fn tick(&mut self) {
        self.own = self.own.saturating_add(1);
    }

    /// A fence of `sem` (see [`super::race::BlockClock::fence`]).
    pub fn fence(&mut self, sem: Sem) {
        if sem.has_acquire() {
            let pending = std::mem::take(&mut self.pending);
            self.known.join(&pending);
        }
        if sem.has_release() {
            self.fenced = self.now();
            self.tick();
        }
    }
}

/// A released clock at one location, and how many times it has grown.
#[derive(Debug, Default)]
struct Released {
    clock: VClock,
    version: u64,
}

/// The shadow of one page of global memory: per element, per access kind, an epoch or [`SET`].
struct Page {
    words: Box<[[u64; 4]]>,
    /// The epochs of the fields marked [`SET`], by `slot * 4 + field`.
    sets: HashMap<u32, Vec<u64>>,
}

const SHARDS: usize = 64;

/// A page's key: its first host address and the element width.
type PageKey = (usize, usize);

/// The global-memory shadow and the released clocks of one launch.
pub(crate) struct GlobalShadow {
    pages: Box<[RwLock<HashMap<PageKey, Arc<Mutex<Page>>>>]>,
    released: Box<[Mutex<HashMap<SyncKey, Released>>]>,
    /// The kernel has fences: relaxed atomics may then release or acquire (through them).
    pub fences: bool,
}

/// A conflict found by [`GlobalShadow::access`]: the element (index in its tensor), the earlier
/// access's kind (field) and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GlobalConflict {
    pub element: usize,
    pub earlier: usize,
    pub block: u32,
}

impl GlobalConflict {
    /// What the message says: "`now` (block `me`) ... it after block `other` `WHAT` it".
    pub fn describe(&self, kind: Kind, me: u32, tensor: &str) -> String {
        let name = match (
            matches!(kind, Kind::Write | Kind::AtomicWrite),
            self.earlier == PW || self.earlier == AW,
        ) {
            (false, true) => "read-after-write",
            (true, true) => "write-after-write",
            _ => "write-after-read",
        };
        let verb = match kind {
            Kind::Read => "reads",
            Kind::AtomicRead => "atomically reads",
            Kind::Write => "writes",
            Kind::AtomicWrite => "atomically writes",
        };
        format!(
            "{name} race on global tensor `{tensor}` at element {}: block {me} {verb} it after block {} {} it, and nothing orders the two accesses (publish with a release atomic, or a relaxed one after a release fence, and read after an acquire of the value it wrote)",
            self.element, self.block, WHAT[self.earlier],
        )
    }
}

fn shard_of(x: usize) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) % SHARDS
}

impl GlobalShadow {
    pub fn new(kernel: &crate::ir::Kernel) -> GlobalShadow {
        let mut fences = false;
        crate::ir::for_each_inst(&kernel.body, &mut |_, inst, _| {
            fences |= matches!(inst, crate::ir::Inst::Fence { .. });
        });
        GlobalShadow {
            pages: (0..SHARDS).map(|_| RwLock::default()).collect(),
            released: (0..SHARDS).map(|_| Mutex::default()).collect(),
            fences,
        }
    }

    fn page(&self, key: PageKey) -> Arc<Mutex<Page>> {
        let shard = &self.pages[shard_of(key.0 >> 12)];
        if let Some(p) = shard.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return p.clone();
        }
        let mut map = shard.write().unwrap_or_else(|p| p.into_inner());
        map.entry(key)
            .or_insert_with(|| {
                Arc::new(Mutex::new(Page {
                    words: vec![[0u64; 4]; PAGE / key.1].into_boxed_slice(),
                    sets: HashMap::new(),
                }))
            })
            .clone()
    }

    /// Check and record one access of `kind` by `who`'s block to the elements `elements`
    /// (indices into a tensor whose element `i` is at host address `base + i * width`).
    pub fn access(
        &self,
        kind: Kind,
        base: usize,
        width: usize,
        elements: impl Iterator<Item = usize>,
        who: &GridClock,
    ) -> Result<(), GlobalConflict> {
        let me = who.block;
        let mine = epoch(me, who.own);
        let (f, confl) = (field(kind), conflicts(kind));
        let addr = |i: usize| base + i * width;
        let mut it = elements.peekable();
        while let Some(&first) = it.peek() {
            let key = (addr(first) & !(PAGE - 1), width);
            let page = self.page(key);
            let mut g = page.lock().unwrap_or_else(|p| p.into_inner());
            let Page { words, sets } = &mut *g;
            while let Some(&i) = it.peek() {
                let a = addr(i);
                if a & !(PAGE - 1) != key.0 {
                    break;
                }
                it.next();
                let slot = (a - key.0) / width;
                let w = &mut words[slot];
                // Unordered earlier accesses of a conflicting kind.
                let unordered = |e: u64| {
                    let b = epoch_block(e);
                    b != me && who.get(b) < e as u32
                };
                for &c in confl {
                    let v = w[c];
                    let bad = match v {
                        0 => None,
                        SET => sets
                            .get(&(slot as u32 * 4 + c as u32))
                            .and_then(|s| s.iter().copied().find(|&e| unordered(e))),
                        e => unordered(e).then_some(e),
                    };
                    if let Some(e) = bad {
                        return Err(GlobalConflict {
                            element: i,
                            earlier: c,
                            block: epoch_block(e),
                        });
                    }
                }
                if kind == Kind::Write {
                    // Ordered after everything recorded: it stands for all of it.
                    for c in 0..4 {
                        if w[c] == SET {
                            sets.remove(&(slot as u32 * 4 + c as u32));
                        }
                    }
                    *w = [mine, 0, 0, 0];
                    continue;
                }
                let covered = |e: u64| {
                    let b = epoch_block(e);
                    b == me || who.get(b) >= e as u32
                };
                match w[f] {
                    0 => w[f] = mine,
                    SET => {
                        let s = sets.entry(slot as u32 * 4 + f as u32).or_default();
                        s.retain(|&e| !covered(e));
                        s.push(mine);
                        if s.len() > SET_CAP {
                            s.remove(0);
                        }
                    }
                    e if covered(e) => w[f] = mine,
                    e => {
                        w[f] = SET;
                        sets.insert(slot as u32 * 4 + f as u32, vec![e, mine]);
                    }
                }
            }
        }
        Ok(())
    }

    /// An atomic write of `sem` by `clock`'s block to `keys`, before it is performed: the
    /// locations release the block's clock (`sem` has a release) or what its latest release
    /// fence covered.
    pub fn publish(&self, keys: &[SyncKey], sem: Sem, clock: &GridClock) {
        let now;
        let from = if sem.has_release() {
            now = clock.now();
            &now
        } else {
            &clock.fenced
        };
        if from.is_empty() {
            return;
        }
        for &k in keys {
            let mut map = self.released[shard_of(key_hash(k))]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let at = map.entry(k).or_default();
            if at.clock.join(from) {
                at.version += 1;
            }
        }
    }

    /// An atomic read of `sem` from `keys`, after it is performed: an acquire takes the clocks
    /// released there, a relaxed read keeps them for a later acquire fence.
    pub fn observe(&self, keys: &[SyncKey], sem: Sem, clock: &mut GridClock) {
        for &k in keys {
            let map = self.released[shard_of(key_hash(k))]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let Some(at) = map.get(&k) else { continue };
            if sem.has_acquire() {
                let seen = clock.seen.entry(k).or_insert(0);
                if *seen != at.version {
                    *seen = at.version;
                    clock.known.join(&at.clock);
                }
            } else {
                clock.pending.join(&at.clock);
            }
        }
    }
}

fn key_hash(k: SyncKey) -> usize {
    match k {
        SyncKey::Global(a) => a,
        SyncKey::Cluster(b) => b.wrapping_mul(31),
        SyncKey::Dsmem(c, b) => c ^ b.wrapping_mul(17),
        SyncKey::Barrier(c) => c.wrapping_mul(7),
    }
}
