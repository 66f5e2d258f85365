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
//! Global memory is shadowed by pages of 16 KiB ([`GlobalShadow`]; keyed by host address and
//! element width, so that aliasing arguments share them). While the blocks accessing a page
//! touch disjoint runs of it, the page keeps a summary of those runs (per block, kind and
//! clock: a block's own tiles cost next to nothing); after that each element has a shadow
//! word. While one
//! block alone has accessed the element, the word holds that block and its clock at its latest
//! access of each kind (plain write, atomic write, plain read, atomic read): the common case,
//! checked and updated in place. Once a second block comes, the word points to a full record:
//! per kind, the *epochs* (block, clock) of the accesses not known to be ordered before a later
//! one of the kind (at most [`SET_CAP`]; FastTrack's read-shared state, for every kind). An
//! access conflicts with an earlier one of another block when at least one writes, they are not
//! both atomic, and the earlier one's clock is not covered by the accessor's entry for its
//! block. A plain write ordered after everything recorded replaces it all. Since each word is
//! checked and updated under its page's lock, the second of two unordered accesses sees the
//! first whichever way the host threads interleave them, so a racy hand-off is reported on
//! every run, not only on unlucky ones.
//!
//! Accesses of one block are ordered by its program order and barriers (the shared-memory
//! checker's business; global accesses of two threads of one block with no barrier in between
//! are not checked). In mapped memory the host is one more agent (`host.rs`): its loads and
//! stores are recorded as atomic accesses of the agent `HOST`, and release/acquire between the
//! host and a block synchronises only at `sys` scope.
//! Known misses (never false reports): an element's epoch set drops its oldest entry beyond
//! [`SET_CAP`]; views of one memory with different element widths have separate shadows.

use super::host::{HostAgent, HOST};
use super::race::{Kind, SyncKey};
use crate::ir::Sem;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// Bytes of memory per shadow page (emulator tensors start on such a boundary).
const PAGE: usize = 16384;
/// Most epochs one field of a shadow word keeps (the oldest is dropped beyond it).
pub(crate) const SET_CAP: usize = 4;

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
    /// Whether that fence was at `sys` scope (so what it covers reaches the host).
    fenced_sys: bool,
    /// The clocks relaxed atomic reads saw since: what an acquire fence acquires.
    pending: VClock,
    /// The same, of releases by the host: what only an acquire fence at `sys` scope acquires.
    pending_host: VClock,
    /// Per location and reach (`sys` scope or narrower), the version of its released clock
    /// already joined into `known`.
    seen: HashMap<(SyncKey, bool), u64>,
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

    /// A fence of `sem` (see [`super::race::BlockClock::fence`]), at `sys` scope or a
    /// narrower one (which does not reach the host's history).
    pub fn fence(&mut self, sem: Sem, sys: bool) {
        if sem.has_acquire() {
            let pending = std::mem::take(&mut self.pending);
            let pending_host = std::mem::take(&mut self.pending_host);
            self.known.join(&pending);
            if sys {
                self.known.join(&pending_host);
            }
        }
        if sem.has_release() {
            self.fenced = self.now();
            self.fenced_sys = sys;
            self.tick();
        }
    }
}

/// The clocks released at one location, and how many times they have grown: by blocks (`clock`;
/// the history they carry may include the host's, acquired properly), by blocks at `sys` scope
/// (`sys`: what the host's acquire takes), and by the host itself (`host`: what only a block's
/// acquire at `sys` scope takes).
#[derive(Debug, Default)]
struct Released {
    clock: VClock,
    sys: VClock,
    host: VClock,
    version: u64,
}

/// The shadow of one page of global memory: per element a [`u64`] word, either 0 (never
/// accessed), *exclusive* (every access so far was by one block: the block + 1 in the top 24
/// bits, then the block's clock at its latest access of each kind in 10 bits each, 0: none), or
/// [`FULL`] in the top 24 bits (the accesses are in `full`, at the index in the low bits).
///
/// A page starts as a [`Summary`] instead, without words, and keeps it while the blocks that
/// access it touch disjoint runs of elements (each block its own tiles, the common case):
/// per block, kind and clock, the runs accessed. The words are made from it when two blocks'
/// runs meet or the runs get too many (scattered accesses). The summary lives in the page
/// itself: a launch creates a page for every 16 KiB it touches, and the cost of a page is the
/// memory it touches.
struct Page {
    /// `None` once the words hold the accesses.
    summary: Option<Summary>,
    words: Box<[u64]>,
    full: Vec<Full>,
    /// Entries of `full` no word uses.
    free: Vec<u32>,
    /// Elements of the page.
    elements: usize,
}

/// Most runs a summary keeps.
const RUNS: usize = 8;

/// The accesses of one page while its blocks' runs are disjoint: runs of elements `lo..hi`
/// accessed by one block (`block + 1`, as in an exclusive word), one kind, at one clock, in the
/// order they were first made.
#[derive(Clone, Copy, Default)]
struct Run {
    block1: u32,
    kind: u8,
    clock: u32,
    lo: u32,
    hi: u32,
}

#[derive(Default)]
struct Summary {
    runs: [Run; RUNS],
    len: usize,
}

impl Page {
    fn new(elements: usize) -> Page {
        Page {
            summary: Some(Summary::default()),
            words: Box::default(),
            full: Vec::new(),
            free: Vec::new(),
            elements,
        }
    }

    /// Records an access of kind `f` by block `block1 - 1` at `clock` to `slots` (runs
    /// `(first, len)`) in the summary if it can take it: no other block's run meets them, and
    /// there is room. `false` leaves the runs recorded so far in the summary (recording them
    /// again in words is harmless: the same block, kind and clock).
    fn summarise(
        &mut self,
        f: usize,
        (block1, clock): (u32, u32),
        slots: impl Iterator<Item = (usize, usize)>,
    ) -> bool {
        let Some(s) = &mut self.summary else {
            return false;
        };
        'slots: for (first, n) in slots {
            let (lo, hi) = (first as u32, (first + n) as u32);
            for r in &mut s.runs[..s.len] {
                if r.block1 != block1 {
                    if lo < r.hi && r.lo < hi {
                        return false;
                    }
                } else if r.kind as usize == f && r.clock == clock && lo <= r.hi && r.lo <= hi {
                    (r.lo, r.hi) = (r.lo.min(lo), r.hi.max(hi));
                    continue 'slots;
                }
            }
            if s.len == RUNS {
                return false;
            }
            s.runs[s.len] = Run {
                block1,
                kind: f as u8,
                clock,
                lo,
                hi,
            };
            s.len += 1;
        }
        true
    }

    /// The words, from the summary if the page still has one (runs in the order made, so a
    /// kind's field ends with its latest clock).
    fn materialise(&mut self) {
        let Some(s) = self.summary.take() else {
            return;
        };
        let mut words = vec![0u64; self.elements].into_boxed_slice();
        for r in &s.runs[..s.len] {
            let f = r.kind as usize;
            let keep = !((CLOCK_MAX as u64) << shift(f));
            let set = (r.block1 as u64) << 40 | (r.clock as u64) << shift(f);
            for w in &mut words[r.lo as usize..r.hi as usize] {
                *w = (*w & keep) | set;
            }
        }
        self.words = words;
    }
}

/// The accesses to one element of several blocks: per kind, the epochs not known to be ordered
/// before a later one of the kind (at most [`SET_CAP`]).
#[derive(Default)]
struct Full([Epochs; 4]);

/// At most [`SET_CAP`] epochs, in the order they were added, stored inline: a record is one
/// contiguous block, where a `Vec` per kind cost an allocation and a pointer to chase for each
/// access of a contended element (a scatter-add into bins that every block hits).
#[derive(Default, Clone, Copy)]
struct Epochs {
    len: u8,
    at: [u64; SET_CAP],
}

impl Epochs {
    fn as_slice(&self) -> &[u64] {
        &self.at[..self.len as usize]
    }
    fn clear(&mut self) {
        self.len = 0;
    }
    fn last(&self) -> Option<&u64> {
        self.as_slice().last()
    }
    /// Adds `e`, dropping the oldest epoch when full (a known miss, never a false report).
    fn push(&mut self, e: u64) {
        if self.len as usize == SET_CAP {
            self.at.copy_within(1.., 0);
            self.len -= 1;
        }
        self.at[self.len as usize] = e;
        self.len += 1;
    }
    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let mut n = 0;
        for i in 0..self.len as usize {
            let e = self.at[i];
            if keep(e) {
                self.at[n] = e;
                n += 1;
            }
        }
        self.len = n as u8;
    }
}

/// The top-24-bit tag of a word whose accesses are in [`Page::full`].
const FULL: u64 = (1 << 24) - 1;
/// The clock bits of an exclusive word.
const LOW: u64 = (1 << 40) - 1;
/// Largest clock an exclusive word holds.
const CLOCK_MAX: u32 = (1 << 10) - 1;

#[inline(always)]
fn shift(f: usize) -> u32 {
    30 - 10 * f as u32
}

const SHARDS: usize = 64;

/// A page's key: its first host address and the element width.
type PageKey = (usize, usize);
/// One shard of a launch's pages.
type PageMap = HashMap<PageKey, Arc<Mutex<Page>>, BuildPageHasher>;

/// A hash of page keys (page addresses and widths) by one multiplication: they are looked up
/// several times per tile access, where SipHash's cost showed (and no input is adversarial).
#[derive(Default)]
struct PageHasher(u64);

impl std::hash::Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(b as u64));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type BuildPageHasher = std::hash::BuildHasherDefault<PageHasher>;

/// The pages a worker has looked up in this launch (so that a scatter over many pages does not
/// take a shard's lock per element; a worker's interpreter lives for one launch).
#[derive(Default)]
pub(crate) struct PageCache {
    pages: PageMap,
    /// Scratch: the element indices of an access, sorted.
    order: Vec<usize>,
}

/// The global-memory shadow and the released clocks of one launch.
pub(crate) struct GlobalShadow {
    pages: Box<[RwLock<PageMap>]>,
    released: Box<[Mutex<HashMap<SyncKey, Released>>]>,
    /// The kernel has fences: relaxed atomics may then release or acquire (through them).
    pub fences: bool,
    /// The host's side, when the launch touches mapped memory (`host.rs`).
    pub host: Mutex<HostAgent>,
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
        let writes = matches!(kind, Kind::Write | Kind::AtomicWrite);
        let name = match (writes, self.earlier == PW || self.earlier == AW) {
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
        let agent = |b: u32| match b {
            HOST => "the host".to_string(),
            b => format!("block {b}"),
        };
        let hint = if me == HOST || self.block == HOST {
            "publish with a release at `scope = sys` and read after an acquire at `scope = sys` of the value it wrote (on the host: `Ordering::Release`, `Ordering::Acquire`); `gpu`, `cluster` and `cta` scopes do not include the host"
        } else {
            "publish with a release atomic, or a relaxed one after a release fence, and read after an acquire of the value it wrote"
        };
        format!(
            "{name} race on global tensor `{tensor}` at element {}: {} {verb} it after {} {} it, and nothing orders the two accesses ({hint})",
            self.element,
            agent(me),
            agent(self.block),
            WHAT[self.earlier],
        )
    }
}

fn shard_of(x: usize) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) % SHARDS
}

/// The elements of one access: runs of consecutive elements `(first, len)`, or one index per
/// element (`None`: inactive).
pub(crate) enum Elements<'e> {
    Runs(&'e mut dyn Iterator<Item = (usize, usize)>),
    Each(&'e [i64]),
}

impl GlobalShadow {
    pub fn new(kernel: &crate::ir::Kernel) -> GlobalShadow {
        let mut fences = false;
        crate::ir::for_each_inst(&kernel.body, &mut |_, inst, _| {
            fences |= matches!(inst, crate::ir::Inst::Fence { .. });
        });
        GlobalShadow::with_fences(fences)
    }

    fn with_fences(fences: bool) -> GlobalShadow {
        GlobalShadow {
            pages: (0..SHARDS).map(|_| RwLock::default()).collect(),
            released: (0..SHARDS).map(|_| Mutex::default()).collect(),
            fences,
            host: Mutex::default(),
        }
    }

    fn page<'p>(&self, key: PageKey, cache: &'p mut PageCache) -> &'p Mutex<Page> {
        cache.pages.entry(key).or_insert_with(|| {
            let shard = &self.pages[shard_of(key.0 >> 12)];
            let found = shard
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&key)
                .cloned();
            found.unwrap_or_else(|| {
                let mut map = shard.write().unwrap_or_else(|p| p.into_inner());
                map.entry(key)
                    .or_insert_with(|| Arc::new(Mutex::new(Page::new(PAGE / key.1))))
                    .clone()
            })
        })
    }

    /// Check and record one access of `kind` by `who`'s block to `elements` (indices into a
    /// tensor whose element `i` is at host address `base + i * width`).
    pub fn access(
        &self,
        kind: Kind,
        at: (usize, usize),
        elements: Elements<'_>,
        who: &GridClock,
        cache: &mut PageCache,
    ) -> Result<(), GlobalConflict> {
        let rec = Recorder::new(kind, who);
        match elements {
            Elements::Runs(runs) => self.access_runs(&rec, at, runs, cache),
            Elements::Each(addrs) => self.access_each(&rec, at, addrs, cache),
        }
    }

    /// [`access`](Self::access) of runs `(first, len)` of consecutive elements, a page at a
    /// time.
    fn access_runs(
        &self,
        rec: &Recorder<'_>,
        (base, width): (usize, usize),
        runs: &mut dyn Iterator<Item = (usize, usize)>,
        cache: &mut PageCache,
    ) -> Result<(), GlobalConflict> {
        for (first, len) in runs {
            let mut i = first;
            let end = first + len;
            while i < end {
                let key = (page_of(base + i * width), width);
                let mut g = self
                    .page(key, cache)
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                let slot0 = (base + i * width - key.0) / width;
                let n = (PAGE / width - slot0).min(end - i);
                if rec.compact.is_some() {
                    let once = std::iter::once((slot0, n));
                    if g.summarise(rec.f, (rec.me1 as u32, rec.who.own), once) {
                        i += n;
                        continue;
                    }
                }
                g.materialise();
                let words = &mut g.words[slot0..slot0 + n];
                match rec.compact {
                    // Every word untouched or this block's alone (the common case): updated in
                    // two branch-free passes.
                    Some((tag, bits, keep)) if words.iter().all(|&w| w == 0 || w & !LOW == tag) => {
                        for w in words.iter_mut() {
                            *w = (*w & keep) | tag | bits;
                        }
                    }
                    _ => {
                        for k in 0..n {
                            rec.one(&mut g, slot0 + k, i + k)?;
                        }
                    }
                }
                i += n;
            }
        }
        Ok(())
    }

    /// [`access`](Self::access) of elements at any indices (`INACTIVE` skipped), sorted by
    /// page so that each page is locked once.
    fn access_each(
        &self,
        rec: &Recorder<'_>,
        (base, width): (usize, usize),
        addrs: &[i64],
        cache: &mut PageCache,
    ) -> Result<(), GlobalConflict> {
        let page_at = |i: usize| page_of(base + i * width);
        let mut order = std::mem::take(&mut cache.order);
        order.clear();
        order.extend(
            addrs
                .iter()
                .filter(|&&p| p != super::access::INACTIVE)
                .map(|&p| p as usize),
        );
        order.sort_unstable();
        let mut at = 0;
        let mut found = Ok(());
        while at < order.len() && found.is_ok() {
            let key = (page_at(order[at]), width);
            let mut g = self
                .page(key, cache)
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let group = order[at..]
                .iter()
                .take_while(|&&i| page_at(i) == key.0)
                .count();
            if rec.compact.is_some() {
                let slots = order[at..at + group]
                    .iter()
                    .map(|&i| ((base + i * width - key.0) / width, 1));
                if g.summarise(rec.f, (rec.me1 as u32, rec.who.own), slots) {
                    at += group;
                    continue;
                }
            }
            g.materialise();
            while at < order.len() && page_at(order[at]) == key.0 {
                let i = order[at];
                at += 1;
                if let Err(e) = rec.one(&mut g, (base + i * width - key.0) / width, i) {
                    found = Err(e);
                    break;
                }
            }
        }
        cache.order = order;
        found
    }

    /// An atomic write of `sem` by `clock`'s agent to `keys`, before it is performed: the
    /// locations release the agent's clock (`sem` has a release) or what its latest release
    /// fence covered; to the host too when the write (and that fence) is at `sys` scope.
    pub fn publish(&self, keys: &[SyncKey], sem: Sem, clock: &GridClock, sys: bool) {
        let now;
        let (from, sys) = if sem.has_release() {
            now = clock.now();
            (&now, sys)
        } else {
            (&clock.fenced, sys && clock.fenced_sys)
        };
        if from.is_empty() {
            return;
        }
        for &k in keys {
            let mut map = self.released[shard_of(key_hash(k))]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let at = map.entry(k).or_default();
            let grew = if clock.block == HOST {
                at.host.join(from)
            } else {
                let grew = at.clock.join(from);
                (sys && at.sys.join(from)) || grew
            };
            if grew {
                at.version += 1;
            }
        }
    }

    /// An atomic read of `sem` from `keys`, after it is performed: an acquire takes the clocks
    /// released there, a relaxed read keeps them for a later acquire fence.
    /// At `sys` scope (`sys`) a block takes everything released there; at a narrower scope,
    /// not what the host released (the host is outside it). The host takes what blocks
    /// released at `sys` scope.
    pub fn observe(&self, keys: &[SyncKey], sem: Sem, clock: &mut GridClock, sys: bool) {
        let host = clock.block == HOST;
        for &k in keys {
            let map = self.released[shard_of(key_hash(k))]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let Some(at) = map.get(&k) else { continue };
            if sem.has_acquire() {
                let seen = clock.seen.entry((k, sys)).or_insert(0);
                if *seen != at.version {
                    *seen = at.version;
                    if host {
                        clock.known.join(&at.sys);
                    } else {
                        clock.known.join(&at.clock);
                        if sys {
                            clock.known.join(&at.host);
                        }
                    }
                }
            } else if !host {
                clock.pending.join(&at.clock);
                clock.pending_host.join(&at.host);
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

/// The page (its first host address) holding host address `addr`.
fn page_of(addr: usize) -> usize {
    addr & !(PAGE - 1)
}

/// One access's recording of each element in its shadow word: the field of its kind, the
/// block, and the exclusive word of this access alone when the block and clock fit in one
/// (`(tag, bits, keep)`: the block's tag, the clock in the kind's field, the mask that keeps
/// the other fields).
struct Recorder<'a> {
    kind: Kind,
    f: usize,
    me1: u64,
    compact: Option<(u64, u64, u64)>,
    who: &'a GridClock,
}

impl<'a> Recorder<'a> {
    fn new(kind: Kind, who: &'a GridClock) -> Recorder<'a> {
        let f = field(kind);
        let me1 = who.block as u64 + 1;
        let compact = (me1 < FULL && who.own <= CLOCK_MAX).then(|| {
            (
                me1 << 40,
                (who.own as u64) << shift(f),
                !((CLOCK_MAX as u64) << shift(f)),
            )
        });
        Recorder {
            kind,
            f,
            me1,
            compact,
            who,
        }
    }

    /// Checks and records element `i`, at `slot` of `page`.
    #[inline]
    fn one(&self, page: &mut Page, slot: usize, i: usize) -> Result<(), GlobalConflict> {
        let w = page.words[slot];
        if let Some((tag, bits, keep)) = self.compact {
            if w == 0 {
                page.words[slot] = tag | bits;
                return Ok(());
            }
            if w & !LOW == tag {
                page.words[slot] = (w & keep) | bits;
                return Ok(());
            }
        }
        let own = self.compact.map(|c| c.0 | c.1);
        slow(page, slot, w, self.kind, self.who, own).map_err(|(earlier, block)| GlobalConflict {
            element: i,
            earlier,
            block,
        })
    }
}

/// An access that the exclusive word cannot take: another block's, or one that does not fit.
/// `mine`: this access's exclusive word, if it fits one. `Err((field, block))`: the earlier
/// conflicting access.
#[cold]
fn slow(
    page: &mut Page,
    slot: usize,
    w: u64,
    kind: Kind,
    who: &GridClock,
    mine: Option<u64>,
) -> Result<(), (usize, u32)> {
    let me = who.block;
    let index = if w >> 40 == FULL {
        (w & u32::MAX as u64) as usize
    } else {
        let index = match page.free.pop() {
            Some(i) => i as usize,
            None => {
                page.full.push(Full::default());
                page.full.len() - 1
            }
        };
        let rec = &mut page.full[index];
        for (f, set) in rec.0.iter_mut().enumerate() {
            set.clear();
            // An exclusive word: its block's latest access of each kind.
            let c = ((w >> shift(f)) & CLOCK_MAX as u64) as u32;
            if w != 0 && c != 0 {
                set.push(epoch((w >> 40) as u32 - 1, c));
            }
        }
        page.words[slot] = FULL << 40 | index as u64;
        index
    };
    let rec = &mut page.full[index];
    let unordered = |e: u64| {
        let b = epoch_block(e);
        b != me && who.get(b) < e as u32
    };
    for &c in conflicts(kind) {
        if let Some(&e) = rec.0[c].as_slice().iter().find(|&&e| unordered(e)) {
            return Err((c, epoch_block(e)));
        }
    }
    let f = field(kind);
    if kind == Kind::Write {
        // Ordered after everything recorded: it stands for all of it.
        match mine {
            Some(word) => {
                page.free.push(index as u32);
                page.words[slot] = word;
            }
            None => {
                rec.0.iter_mut().for_each(Epochs::clear);
                rec.0[f].push(epoch(me, who.own));
            }
        }
        return Ok(());
    }
    let set = &mut rec.0[f];
    let mine = epoch(me, who.own);
    // Epochs ordered before this access are covered by it.
    if set.last() == Some(&mine) {
        return Ok(());
    }
    set.retain(unordered);
    set.push(mine);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_sets_keep_the_newest_in_order() {
        let mut set = Epochs::default();
        for e in 1..=SET_CAP as u64 + 2 {
            set.push(e);
        }
        // The two oldest dropped, the rest in the order they came.
        let want: Vec<u64> = (3..=SET_CAP as u64 + 2).collect();
        assert_eq!(set.as_slice(), &want[..]);
        set.retain(|e| e % 2 == 0);
        let want: Vec<u64> = want.into_iter().filter(|e| e % 2 == 0).collect();
        assert_eq!(set.as_slice(), &want[..]);
        assert_eq!(set.last(), want.last());
        set.clear();
        assert!(set.as_slice().is_empty());
        assert_eq!(set.last(), None);
    }

    /// Block `b`'s access of `kind` to the runs `runs` of a tensor of 4-byte elements at `base`.
    fn access(
        g: &GlobalShadow,
        (b, base): (u32, usize),
        kind: Kind,
        runs: &[(usize, usize)],
    ) -> Result<(), GlobalConflict> {
        let mut it = runs.iter().copied();
        let who = GridClock::new(b);
        g.access(
            kind,
            (base, 4),
            Elements::Runs(&mut it),
            &who,
            &mut PageCache::default(),
        )
    }

    /// A page summarised as one run, then as bits (a second, separate run), then made into
    /// words when another block comes: the other block conflicts exactly with the elements the
    /// first one accessed, whichever form the summary had.
    #[test]
    fn summaries_keep_exactly_the_elements_accessed() {
        let base = 1 << 20; // a page boundary: element i of the tensor is slot i of a page
        for spill in [false, true] {
            let g = GlobalShadow::with_fences(false);
            access(&g, (3, base), Kind::Write, &[(10, 20)]).unwrap();
            access(&g, (3, base), Kind::Write, &[(30, 5)]).unwrap(); // adjacent: one run
            if spill {
                access(&g, (3, base), Kind::Write, &[(100, 2)]).unwrap(); // separate: bits
            }
            access(&g, (3, base), Kind::Read, &[(500, 24)]).unwrap();
            // Block 4 reads around them: only the written elements conflict.
            for (i, written) in [
                (9, false),
                (10, true),
                (34, true),
                (35, false),
                (101, spill),
            ] {
                let r = access(&g, (4, base), Kind::Read, &[(i, 1)]);
                assert_eq!(r.is_err(), written, "spill {spill}, element {i}: {r:?}");
                if let Err(c) = r {
                    assert_eq!((c.element, c.earlier, c.block), (i, PW, 3));
                }
            }
            // Reads of both blocks do not conflict; block 4's write after block 3's read does.
            access(&g, (4, base), Kind::Read, &[(510, 1)]).unwrap();
            let c = access(&g, (4, base), Kind::Write, &[(523, 1)]).unwrap_err();
            assert_eq!((c.element, c.earlier, c.block), (523, PR, 3));
            access(&g, (4, base), Kind::Write, &[(524, 1)]).unwrap();
        }
    }

    /// More separate runs than a summary keeps: the words take over, and still hold exactly
    /// the elements accessed (the first runs and the last).
    #[test]
    fn scattered_runs_become_words() {
        let base = 1 << 20;
        let g = GlobalShadow::with_fences(false);
        let runs: Vec<(usize, usize)> = (0..3 * RUNS).map(|k| (1000 + 3 * k, 1)).collect();
        access(&g, (5, base), Kind::Write, &runs).unwrap();
        for k in [0, RUNS - 1, RUNS, 3 * RUNS - 1] {
            let c = access(&g, (6, base), Kind::Read, &[(1000 + 3 * k, 1)]).unwrap_err();
            assert_eq!((c.element, c.block), (1000 + 3 * k, 5));
            access(&g, (6, base), Kind::Read, &[(1001 + 3 * k, 2)]).unwrap();
        }
    }
}
