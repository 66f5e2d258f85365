//! Memory instructions: loads, stores, atomics and fences over the resolved addresses of an
//! access.
//!
//! Global memory is shared with other blocks (other host threads), so every access to it is an
//! atomic operation: weak loads and stores are `Relaxed` (no Rust data race, and no ordering
//! beyond what the IR promises), atomics use their requested order or the next stronger one
//! Rust accepts; read-modify-writes the host has no instruction for (float adds, signed or float
//! min/max, `inc`/`dec`) are compare-and-swap loops, so they are as atomic as on the GPU. The
//! scope is ignored: host threads are ordered at least as strongly as any scope asks. Shared
//! memory belongs to the block alone (one host thread), so it is a plain byte window and its
//! atomics are plain read-modify-writes. The new value of every read-modify-write is
//! [`crate::elem::rmw_new`]. The elements of one tile operation are performed in row-major order,
//! which is one of the orders the GPU may choose.

use super::access::{self, AccessFault, Region, Resolved, INACTIVE};
use super::cluster::ClusterMem;
use super::global::GlobalMem;
use super::interp::{Fault, Interp, R};
use super::race::{ClusterShadow, Kind, Race, SyncKey, Target};
use super::value::{operand, Elems, Value};
use super::{EmuArg, EmuError};
use crate::elem::rmw_new;
use crate::ir::{Access, DType, InactiveResult, Kernel, Operand, RmwOp, Sem, VarId};
use std::sync::atomic::{fence as atomic_fence, Ordering};

/// `ld.{sem}`: a load cannot release, so an (illegal) release order is strengthened to SeqCst.
fn load_order(sem: Sem) -> Ordering {
    match sem {
        Sem::Relaxed => Ordering::Relaxed,
        Sem::Acquire => Ordering::Acquire,
        Sem::Release | Sem::AcqRel => Ordering::SeqCst,
    }
}

/// `st.{sem}`: a store cannot acquire, so an (illegal) acquire order is strengthened to SeqCst.
fn store_order(sem: Sem) -> Ordering {
    match sem {
        Sem::Relaxed => Ordering::Relaxed,
        Sem::Release => Ordering::Release,
        Sem::Acquire | Sem::AcqRel => Ordering::SeqCst,
    }
}

fn rmw_order(sem: Sem) -> Ordering {
    match sem {
        Sem::Relaxed => Ordering::Relaxed,
        Sem::Acquire => Ordering::Acquire,
        Sem::Release => Ordering::Release,
        Sem::AcqRel => Ordering::AcqRel,
    }
}

/// The order of a failed compare-exchange (a load: the release part is dropped, as in PTX).
fn cas_failure_order(sem: Sem) -> Ordering {
    if sem.has_acquire() {
        Ordering::Acquire
    } else {
        Ordering::Relaxed
    }
}

/// `fence.acq_rel`: acquire and release fences are emitted as acq_rel ones, so they are one here
/// too. A relaxed fence is illegal IR and orders nothing (Rust's `fence(Relaxed)` would panic).
pub(crate) fn fence(sem: Sem) {
    if sem != Sem::Relaxed {
        atomic_fence(Ordering::AcqRel);
    }
}

/// What a race message says about the shared tensor `a` accesses, and its elements per block
/// (of a distributed tensor; 0 otherwise). `None` when `a.mem` is not a shared tensor.
fn race_target<'v>(
    kernel: &'v Kernel,
    vars: &'v [Value],
    a: &Access,
) -> Option<(Target<'v>, usize)> {
    let Some(Value::Shared(view)) = vars.get(a.mem as usize) else {
        return None;
    };
    let var = kernel.vars.get(a.mem as usize);
    let target = Target {
        name: var.map_or("?", |v| v.name.as_str()),
        temp: var.is_none_or(|v| v.temp),
        byte: view.byte,
        size: view.dtype.size_bytes(),
        shape: &view.shape,
    };
    Some((target, view.part.unwrap_or(0)))
}

/// An atomic RMW on global cell `i` of type `d`; returns the old value.
#[inline(always)]
fn global_rmw(
    mem: GlobalMem<'_>,
    i: usize,
    d: DType,
    op: RmwOp,
    v: u64,
    cmp: u64,
    sem: Sem,
) -> u64 {
    let (o, fail) = (rmw_order(sem), cas_failure_order(sem));
    match op {
        // Integer forms the host has: wrapping add of the operand (negated for sub, as PTX has
        // no atom.sub), exchange, compare-and-swap, bitwise ops.
        RmwOp::Add if d.is_int() => mem.fetch_add(i, v, o),
        RmwOp::Sub if d.is_int() => mem.fetch_add(i, v.wrapping_neg(), o),
        RmwOp::Exch => mem.swap(i, v, o),
        RmwOp::Cas => mem.cas(i, cmp, v, o, fail),
        _ => mem.update(i, o, fail, |old| rmw_new(op, d, old, v, cmp, true)),
    }
}

/// The bytes a shared access indexes: the block's own window, or (in a cluster) the
/// cluster's windows, locked for the operation.
enum Window<'w> {
    Own(&'w mut Vec<u8>),
    Cluster(std::sync::MutexGuard<'w, Vec<u8>>),
}

impl std::ops::Deref for Window<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Window::Own(w) => w,
            Window::Cluster(g) => g,
        }
    }
}

impl std::ops::DerefMut for Window<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Window::Own(w) => w,
            Window::Cluster(g) => g,
        }
    }
}

/// The window of a resolved shared access of `size`-byte elements, and the element index its
/// address 0 has there (a cluster block's own window starts at `rank * window`).
fn open_window<'w>(
    own: &'w mut Vec<u8>,
    cluster: Option<&'w ClusterMem>,
    rank: u32,
    region: Region,
    size: usize,
) -> (Window<'w>, usize) {
    match cluster {
        None => (Window::Own(own), 0),
        Some(c) => {
            let base = match region {
                Region::Cluster => 0,
                _ => rank as usize * c.window / size,
            };
            (Window::Cluster(c.lock()), base)
        }
    }
}

/// Element `i` (of `size` bytes) of the shared window, little endian.
#[inline(always)]
fn read_shared(window: &[u8], i: usize, size: usize) -> u64 {
    let at = i * size;
    let mut b = [0u8; 8];
    if let Some(src) = window.get(at..at + size) {
        b[..size].copy_from_slice(src);
    }
    u64::from_le_bytes(b)
}

#[inline(always)]
fn write_shared(window: &mut [u8], i: usize, size: usize, v: u64) {
    let at = i * size;
    if let Some(dst) = window.get_mut(at..at + size) {
        dst.copy_from_slice(&v.to_le_bytes()[..size]);
    }
}

/// The elements of a value operand of an `n`-element access (a free function, so that the
/// borrow covers only the variables and the shared window stays writable).
fn elems(vars: &[Value], op: Operand, n: usize) -> Result<Elems<'_>, String> {
    let e = operand(vars, op)?;
    match e.len() {
        Some(l) if l != n => Err(format!("operand of {l} elements for an access of {n}")),
        _ => Ok(e),
    }
}

impl<'c, 'k, 'a> Interp<'c, 'k, 'a> {
    /// Resolve an access into `self.addrs`.
    fn resolve(&mut self, a: &Access) -> R<Resolved> {
        access::resolve(
            a,
            self.ctx.kernel,
            &self.vars,
            &self.ctx.global_lens,
            self.cluster.map_or(self.shared.len(), |c| c.window),
            &mut self.addrs,
        )
        .map_err(|f| match f {
            AccessFault::Malformed(m) => self.malformed(m),
            AccessFault::OutOfBounds {
                space,
                element,
                detail,
            } => Fault::Error(EmuError::OutOfBounds {
                kernel: self.ctx.kernel.name.clone(),
                block: self.block,
                space: space.to_string(),
                element,
                detail,
            }),
        })
        .and_then(|r| {
            let Some(c) = self.cluster else { return Ok(r) };
            if r.region != Region::Cluster || self.cluster_phase > 0 {
                return Ok(r);
            }
            // Before the first cluster barrier only the block's own part may be touched.
            let per_window = (c.window / self.mem_dtype(a).size_bytes()) as i64;
            let own = self.rank as i64;
            if self
                .addrs
                .iter()
                .any(|&p| p != INACTIVE && p / per_window != own)
            {
                return Err(self.cluster_error(
                    "a cluster shared tensor is accessed before this block's first `cluster_sync()`: the other blocks of the cluster may not have started (their shared memory does not exist yet) or initialised their part".into(),
                ));
            }
            Ok(r)
        })
    }

    /// Race checking (under `check_races`): check and record the active elements of a resolved
    /// shared access. `uniform`: a scalar destination, so every thread performs the access.
    fn check_race(&mut self, a: &Access, r: &Resolved, kind: Kind, uniform: bool) -> R<()> {
        let found = match r.region {
            Region::Cluster => self.check_cluster_race(a, kind, uniform),
            Region::Shared => {
                let (Some(shadow), Some((target, _))) = (
                    self.race.as_mut(),
                    race_target(self.ctx.kernel, &self.vars, a),
                ) else {
                    return Ok(());
                };
                shadow.access(kind, &self.addrs, uniform, &target)
            }
            Region::Global { .. } => Ok(()),
        };
        found.map_err(|race| {
            Fault::Error(EmuError::SharedRace {
                kernel: self.ctx.kernel.name.clone(),
                block: self.block,
                detail: race.detail,
            })
        })
    }

    /// [`check_race`](Self::check_race) for a distributed shared tensor: against every block of
    /// the cluster.
    fn check_cluster_race(&self, a: &Access, kind: Kind, uniform: bool) -> Result<(), Race> {
        let (Some((cluster, shadow)), Some((target, part))) = (
            self.cluster.and_then(|c| Some((c, c.race.as_ref()?))),
            race_target(self.ctx.kernel, &self.vars, a),
        ) else {
            return Ok(());
        };
        let who = super::race::Accessor {
            rank: self.rank,
            epoch: self.race.as_ref().map_or(0, |r| r.epoch()),
            phase: self.cluster_phase,
            clock: self.clock.now(),
        };
        let window = cluster.window;
        shadow.access(kind, &self.addrs, uniform, &who, window, part, &target)
    }

    /// Whether a one-element result goes to a variable declared scalar, which every thread
    /// computes (the PTX's uniform access).
    fn uniform(&self, dst: Option<VarId>, n: usize) -> bool {
        n == 1
            && dst.is_some_and(
                |d| matches!(self.ctx.kernel.vars.get(d as usize), Some(v) if v.ty.is_scalar()),
            )
    }

    /// The barrier the PTX places before a release atomic.
    fn before(&mut self, sem: Sem) {
        if sem.has_release() {
            self.barrier();
        }
    }

    /// The barrier the PTX places after an acquire atomic.
    fn after(&mut self, sem: Sem) {
        if sem.has_acquire() {
            self.barrier();
        }
    }

    /// The locations of the active elements of a resolved access that blocks of a cluster can
    /// synchronise through (global and distributed shared memory), or `None` when there is no
    /// cluster race checking.
    fn sync_keys(&self, r: &Resolved, size: usize) -> Option<(&'c ClusterShadow, Vec<SyncKey>)> {
        let shadow = self.cluster?.race.as_ref()?;
        let active = self
            .addrs
            .iter()
            .filter(|&&p| p != INACTIVE)
            .map(|&p| p as usize);
        let keys = match r.region {
            Region::Global { param } => {
                let mem = self.global(param).ok()?;
                active.map(|i| SyncKey::Global(mem.cell_addr(i))).collect()
            }
            Region::Cluster => active.map(|i| SyncKey::Cluster(i * size)).collect(),
            Region::Shared => return None,
        };
        Some((shadow, keys))
    }

    /// Before an atomic write of `sem` is performed: what it releases, for the race checking of
    /// distributed shared memory.
    fn sync_before_write(&self, r: &Resolved, sem: Sem, size: usize) {
        if let Some((shadow, keys)) = self.sync_keys(r, size) {
            shadow.publish(&keys, sem, &self.clock);
        }
    }

    /// After an atomic access of `sem` is performed: what its read acquired (`reads`), and the
    /// end of what its release covered.
    fn sync_after_access(&mut self, r: &Resolved, sem: Sem, size: usize, reads: bool) {
        let Some((shadow, keys)) = self.sync_keys(r, size) else {
            return;
        };
        if reads {
            shadow.observe(&keys, sem, &mut self.clock);
        }
        if sem.has_release() {
            self.clock.tick();
        }
    }

    /// An atomic read of global memory: a loop doing it may be waiting for another block
    /// (`flow.rs` yields such a block now and then).
    fn note_atomic_read(&mut self, r: &Resolved) {
        if matches!(r.region, Region::Global { .. }) {
            self.read_atomically = true;
        }
    }

    /// The memory of tensor parameter `param`.
    fn global(&self, param: usize) -> R<GlobalMem<'a>> {
        match self.ctx.args.get(param) {
            Some(EmuArg::Tensor(s)) => Ok(*s),
            _ => Err(self.malformed(format!("parameter {param} is not a tensor"))),
        }
    }

    /// The element type and size of the memory an access goes to.
    fn mem_dtype(&self, a: &Access) -> DType {
        self.ctx
            .kernel
            .vars
            .get(a.mem as usize)
            .map_or(DType::I32, |v| v.ty.dtype())
    }

    pub(crate) fn load(&mut self, dst: VarId, a: &Access, other: Operand) -> R<()> {
        let r = self.resolve(a)?;
        if self.race.is_some() {
            let uniform = self.uniform(Some(dst), r.n);
            self.check_race(a, &r, Kind::Read, uniform)?;
        }
        let mut out = self.take_buf();
        let size = self.mem_dtype(a).size_bytes();
        let other = elems(&self.vars, other, r.n).map_err(|m| self.malformed(m))?;
        match r.region {
            Region::Global { param } => {
                let mem = self.global(param)?;
                out.extend(self.addrs.iter().enumerate().map(|(e, &p)| {
                    if p == INACTIVE {
                        other.at(e)
                    } else {
                        mem.load(p as usize, Ordering::Relaxed)
                    }
                }));
            }
            Region::Shared | Region::Cluster => {
                let (sh, base) =
                    open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                out.extend(self.addrs.iter().enumerate().map(|(e, &p)| {
                    if p == INACTIVE {
                        other.at(e)
                    } else {
                        read_shared(&sh, base + p as usize, size)
                    }
                }));
            }
        }
        self.set_tile(dst, a.shape.clone(), out)
    }

    pub(crate) fn atomic_load(&mut self, dst: Option<VarId>, a: &Access, sem: Sem) -> R<()> {
        let r = self.resolve(a)?;
        self.note_atomic_read(&r);
        if self.race.is_some() {
            self.before(sem);
            let uniform = self.uniform(dst, r.n);
            self.check_race(a, &r, Kind::AtomicRead, uniform)?;
            self.after(sem);
        }
        let mut out = self.take_buf();
        let size = self.mem_dtype(a).size_bytes();
        // An atomic load has no `other`: inactive elements read 0.
        match r.region {
            Region::Global { param } => {
                let (mem, o) = (self.global(param)?, load_order(sem));
                out.extend(self.addrs.iter().map(|&p| {
                    if p == INACTIVE {
                        0
                    } else {
                        mem.load(p as usize, o)
                    }
                }));
            }
            Region::Shared | Region::Cluster => {
                let (sh, base) =
                    open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                out.extend(self.addrs.iter().map(|&p| {
                    if p == INACTIVE {
                        0
                    } else {
                        read_shared(&sh, base + p as usize, size)
                    }
                }));
            }
        }
        self.sync_after_access(&r, sem, size, true);
        match dst {
            Some(d) => self.set_tile(d, a.shape.clone(), out),
            None => Ok(()),
        }
    }

    pub(crate) fn store(&mut self, a: &Access, value: Operand) -> R<()> {
        let r = self.resolve(a)?;
        if self.ctx.opts.strict_scatter {
            self.check_duplicates(&r)?;
        }
        if self.race.is_some() {
            self.check_race(a, &r, Kind::Write, false)?;
        }
        self.write(a, &r, value, Ordering::Relaxed)
    }

    pub(crate) fn atomic_store(&mut self, a: &Access, value: Operand, sem: Sem) -> R<()> {
        let r = self.resolve(a)?;
        if self.race.is_some() {
            self.before(sem);
            self.check_race(a, &r, Kind::AtomicWrite, false)?;
            self.after(sem);
        }
        let size = self.mem_dtype(a).size_bytes();
        self.sync_before_write(&r, sem, size);
        self.write(a, &r, value, store_order(sem))?;
        self.sync_after_access(&r, sem, size, false);
        Ok(())
    }

    /// Store `value` at the resolved addresses, in row-major element order (so the last of
    /// several elements with one address wins).
    fn write(&mut self, a: &Access, r: &Resolved, value: Operand, order: Ordering) -> R<()> {
        let size = self.mem_dtype(a).size_bytes();
        let v = elems(&self.vars, value, r.n).map_err(|m| self.malformed(m))?;
        match r.region {
            Region::Global { param } => {
                let mem = self.global(param)?;
                let locks = self.ctx.chunk_locks;
                for (e, &p) in self.addrs.iter().enumerate() {
                    if p != INACTIVE {
                        let _held = locks.then(|| mem.chunk_lock(p as usize));
                        mem.store(p as usize, v.at(e), order);
                    }
                }
            }
            Region::Shared | Region::Cluster => {
                let (mut sh, base) =
                    open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                for (e, &p) in self.addrs.iter().enumerate() {
                    if p != INACTIVE {
                        write_shared(&mut sh, base + p as usize, size, v.at(e));
                    }
                }
            }
        }
        Ok(())
    }

    /// Strict scatter: two active elements of one weak store must not share an address.
    fn check_duplicates(&mut self, r: &Resolved) -> R<()> {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        s.extend(self.addrs.iter().copied().filter(|&p| p != INACTIVE));
        s.sort_unstable();
        let dup = s.windows(2).position(|w| w[0] == w[1]).map(|i| {
            let addr = s[i];
            (addr, s[i..].iter().take_while(|&&p| p == addr).count())
        });
        self.scratch = s;
        match dup {
            None => Ok(()),
            Some((addr, count)) => Err(Fault::Error(EmuError::DuplicateScatter {
                kernel: self.ctx.kernel.name.clone(),
                block: self.block,
                index: addr - r.lo,
                count,
            })),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rmw(
        &mut self,
        dst: Option<VarId>,
        op: RmwOp,
        a: &Access,
        values: Operand,
        compare: Option<Operand>,
        sem: Sem,
        inactive: InactiveResult,
        pairs: bool,
    ) -> R<()> {
        let r = self.resolve(a)?;
        self.note_atomic_read(&r);
        if op == RmwOp::Cas && compare.is_none() {
            return Err(self.malformed("`cas` without a compare operand".into()));
        }
        if self.race.is_some() {
            self.before(sem);
            let uniform = self.uniform(dst, r.n);
            self.check_race(a, &r, Kind::AtomicWrite, uniform)?;
            self.after(sem);
        }
        let mut out = self.take_buf();
        let v = elems(&self.vars, values, r.n).map_err(|m| self.malformed(m))?;
        let c = match compare {
            Some(c) => elems(&self.vars, c, r.n).map_err(|m| self.malformed(m))?,
            None => Elems::Scalar(0),
        };
        let want = dst.is_some();
        let dead = |e: usize| match inactive {
            InactiveResult::Zero => 0,
            InactiveResult::Compare => c.at(e),
        };
        let d = self.mem_dtype(a);
        let size = d.size_bytes();
        self.sync_before_write(&r, sem, size);
        if pairs {
            // 128-bit RMWs on the pairs `2k, 2k + 1`: performed when both elements are active,
            // the second is the memory element after the first, and the first is 16-byte
            // aligned (an even element: allocations are 16-byte aligned on both backends);
            // skipped pairs give what `inactive` says, as on the GPU.
            if size != 8 || r.n % 2 != 0 {
                return Err(
                    self.malformed("a 128-bit atomic needs pairs of 64-bit elements".into())
                );
            }
            let new = |e: usize, old: (u64, u64)| match op {
                RmwOp::Exch => Some((v.at(e), v.at(e + 1))),
                RmwOp::Cas => (old == (c.at(e), c.at(e + 1))).then(|| (v.at(e), v.at(e + 1))),
                _ => None,
            };
            let load = match sem.has_acquire() {
                true => Ordering::Acquire,
                false => Ordering::Relaxed,
            };
            let store = match sem.has_release() {
                true => Ordering::Release,
                false => Ordering::Relaxed,
            };
            match r.region {
                Region::Global { param } => {
                    let mem = self.global(param)?;
                    for e in (0..r.n).step_by(2) {
                        let (p, q) = (self.addrs[e], self.addrs[e + 1]);
                        let old = if p == INACTIVE || q != p.wrapping_add(1) || p % 2 != 0 {
                            (dead(e), dead(e + 1))
                        } else {
                            mem.pair_update(p as usize, load, store, |old| new(e, old))
                        };
                        out.extend([old.0, old.1]);
                    }
                }
                Region::Shared | Region::Cluster => {
                    let (mut sh, base) =
                        open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                    for e in (0..r.n).step_by(2) {
                        let (p, q) = (self.addrs[e], self.addrs[e + 1]);
                        let at = base.wrapping_add(p as usize);
                        let old = if p == INACTIVE || q != p.wrapping_add(1) || at % 2 != 0 {
                            (dead(e), dead(e + 1))
                        } else {
                            let old = (read_shared(&sh, at, 8), read_shared(&sh, at + 1, 8));
                            if let Some((l, h)) = new(e, old) {
                                write_shared(&mut sh, at, 8, l);
                                write_shared(&mut sh, at + 1, 8, h);
                            }
                            old
                        };
                        out.extend([old.0, old.1]);
                    }
                }
            }
        } else {
            match r.region {
                Region::Global { param } => {
                    let mem = self.global(param)?;
                    let locks = self.ctx.chunk_locks;
                    for (e, &p) in self.addrs.iter().enumerate() {
                        let old = if p == INACTIVE {
                            dead(e)
                        } else {
                            let _held = locks.then(|| mem.chunk_lock(p as usize));
                            global_rmw(mem, p as usize, d, op, v.at(e), c.at(e), sem)
                        };
                        if want {
                            out.push(old);
                        }
                    }
                }
                Region::Shared | Region::Cluster => {
                    let (mut sh, base) =
                        open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                    for (e, &p) in self.addrs.iter().enumerate() {
                        let old = if p == INACTIVE {
                            dead(e)
                        } else {
                            let at = base + p as usize;
                            let old = read_shared(&sh, at, size);
                            let new = rmw_new(op, d, old, v.at(e), c.at(e), false);
                            write_shared(&mut sh, at, size, new);
                            old
                        };
                        if want {
                            out.push(old);
                        }
                    }
                }
            }
        }
        self.sync_after_access(&r, sem, size, true);
        match dst {
            Some(d) => self.set_tile(d, a.shape.clone(), out),
            None => Ok(()),
        }
    }
}
