//! The host as one more agent of the global-memory race checker (`race_global.rs`), for memory
//! that the host and running kernels share (the runtime's mapped tensors).
//!
//! The runtime registers each mapped buffer's host addresses ([`map`]). A launch checked for
//! races whose arguments touch such memory is *active* while it runs: its shadow is listed
//! here, even for a grid of one block (the host is the other party). Every host load and store
//! of mapped memory ([`access`]) is then checked and recorded in each active launch's shadow as
//! an atomic access by the agent `HOST`, with a vector clock of its own:
//! * a host store with `Release` (or `SeqCst`) publishes the host's clock at the element, a host
//!   load with `Acquire` takes what kernels released there **at `sys` scope** only;
//! * a kernel's acquire at a narrower scope (`gpu`, `cta`, `cluster`, or a relaxed read then a
//!   fence of such scope) takes the blocks' clocks released there but not the host's: the host
//!   is outside those scopes (the memory model's "scope mismatch").
//!
//! So a host write that a block reads with no release/acquire pair at `sys` scope between them
//! is a race, and so is a kernel write the host reads without one. A race the kernel's access
//! finds fails it at once; one the host's access finds is kept and fails the launch when it
//! returns (the host's load or store itself goes on: it has no error to return). Host accesses
//! before a launch starts are not recorded (they are ordered before the kernel by the launch);
//! host threads are one agent, and races between them are not checked.

use super::race::{Kind, SyncKey};
use super::race_global::{Elements, GlobalConflict, GlobalShadow, GridClock, PageCache};
use crate::ir::Sem;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

/// The host's agent number in the shadow. The scheduler numbers blocks as `u32` (`sched.rs`),
/// so only a grid of more than 2^32 - 2 blocks could give a block this number, a grid far
/// beyond what the emulator can run; such a grid's block numbers wrap already.
pub(crate) const HOST: u32 = u32::MAX - 1;

/// Host address ranges `[start, end)` of the live mapped buffers.
static MAPPED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
/// The shadows of the running launches that touch mapped memory.
static ACTIVE: Mutex<Vec<Weak<GlobalShadow>>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The host's side of one launch's shadow: its clock, page cache, and the first race one of its
/// accesses found.
pub(crate) struct HostAgent {
    clock: GridClock,
    pages: PageCache,
    /// The first race a host access found: the accessed memory's first address, the kind of
    /// access, and the conflict.
    pub race: Option<(usize, Kind, GlobalConflict)>,
}

impl Default for HostAgent {
    fn default() -> Self {
        HostAgent {
            clock: GridClock::new(HOST),
            pages: PageCache::default(),
            race: None,
        }
    }
}

/// Registers `bytes` bytes of mapped memory at host address `start` (until [`unmap`]).
pub fn map(start: usize, bytes: usize) {
    lock(&MAPPED).push((start, start + bytes));
}

/// Forgets the mapped memory registered at `start`.
pub fn unmap(start: usize) {
    let mut m = lock(&MAPPED);
    if let Some(i) = m.iter().position(|r| r.0 == start) {
        m.swap_remove(i);
    }
}

/// Whether `[start, end)` overlaps mapped memory.
pub(crate) fn touches_mapped(start: usize, end: usize) -> bool {
    lock(&MAPPED).iter().any(|&(s, e)| start < e && s < end)
}

/// A running launch whose shadow the host's accesses reach; unlisted when dropped.
pub(crate) struct Active(Arc<GlobalShadow>);

impl Active {
    pub fn enter(shadow: &Arc<GlobalShadow>) -> Active {
        let mut a = lock(&ACTIVE);
        a.retain(|w| w.strong_count() > 0);
        a.push(Arc::downgrade(shadow));
        Active(shadow.clone())
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        lock(&ACTIVE).retain(|w| !std::ptr::eq(w.as_ptr(), Arc::as_ptr(&self.0)));
    }
}

/// A host load (`store == false`) or store of element `i` of `cells` with `order`, performed by
/// `op` between what it releases and what it acquires, and checked against every active
/// launch. Returns `op`'s result.
pub fn access<T>(
    cells: &super::GlobalMem<'_>,
    i: usize,
    store: bool,
    order: Ordering,
    op: impl FnOnce() -> T,
) -> T {
    let shadows: Vec<Arc<GlobalShadow>> = {
        let a = lock(&ACTIVE);
        if a.is_empty() {
            drop(a);
            return op();
        }
        a.iter().filter_map(Weak::upgrade).collect()
    };
    let sem = match order {
        Ordering::Relaxed => Sem::Relaxed,
        Ordering::Acquire => Sem::Acquire,
        Ordering::Release => Sem::Release,
        _ => Sem::AcqRel,
    };
    let key = [SyncKey::Global(cells.cell_addr(i))];
    let at = (cells.cell_addr(0), cells.width());
    let kind = if store {
        Kind::AtomicWrite
    } else {
        Kind::AtomicRead
    };
    for s in &shadows {
        let mut h = lock(&s.host);
        let h = &mut *h;
        if store {
            s.publish(&key, sem, &h.clock, true);
        }
        let mut one = std::iter::once((i, 1));
        let found = s.access(kind, at, Elements::Runs(&mut one), &h.clock, &mut h.pages);
        if let (Err(c), None) = (found, &h.race) {
            h.race = Some((at.0, kind, c));
        }
    }
    let out = op();
    for s in &shadows {
        let mut h = lock(&s.host);
        if !store {
            s.observe(&key, sem, &mut h.clock, true);
        }
        if sem.has_release() {
            h.clock.tick();
        }
    }
    out
}
