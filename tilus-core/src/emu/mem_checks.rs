//! What memory instructions check and record besides the access itself: shared-memory race
//! checking (`race.rs`), the happens-before of the blocks of a cluster, strict scatter, and
//! the atomic reads that mark a block as possibly spinning (`flow.rs`).

use super::access::{expand_runs, Region, Resolved, INACTIVE};
use super::interp::{Fault, Interp, R};
use super::race::{ClusterShadow, Kind, Race, SyncKey, Target};
use super::race_global::{Elements, GlobalShadow};
use super::value::Value;
use super::EmuError;
use crate::ir::{Access, Kernel, Sem, VarId};

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

impl<'c> Interp<'c, '_, '_> {
    /// Give a resolved access one address per element in the address buffer (expanding its
    /// runs), for the checks that go element by element.
    pub(crate) fn need_addrs(&mut self, r: &mut Resolved) {
        if r.runs {
            expand_runs(&self.runs, r.n, &mut self.addrs);
            r.runs = false;
        }
    }

    /// Race checking (under `check_races`): check and record the active elements of a resolved
    /// shared access. `uniform`: a scalar destination, so every thread performs the access.
    pub(crate) fn check_race(
        &mut self,
        a: &Access,
        r: &mut Resolved,
        kind: Kind,
        uniform: bool,
    ) -> R<()> {
        if self.race.is_none() {
            return Ok(());
        }
        if let Region::Global { param } = r.region {
            return self.check_global_race(param, r, kind);
        }
        // One span of consecutive addresses: no two elements share one.
        let distinct = r.runs && self.runs.len() <= 1;
        self.need_addrs(r);
        let found = match r.region {
            Region::Cluster => self.check_cluster_race(a, kind, uniform),
            _ => {
                let (Some(shadow), Some((target, _))) = (
                    self.race.as_mut(),
                    race_target(self.ctx.kernel, &self.vars, a),
                ) else {
                    return Ok(());
                };
                shadow.access(kind, &self.addrs, (uniform, distinct), &target)
            }
        };
        found.map_err(|race| {
            Fault::Error(EmuError::SharedRace {
                kernel: self.ctx.kernel.name.clone(),
                block: self.block,
                detail: race.detail,
            })
        })
    }

    /// [`check_race`](Self::check_race) for global memory: against the other blocks of the grid
    /// (`race_global.rs`).
    fn check_global_race(&mut self, param: usize, r: &Resolved, kind: Kind) -> R<()> {
        let Some(shadow) = &self.ctx.global_race else {
            return Ok(());
        };
        let mem = self.global(param)?;
        let at = (mem.cell_addr(0), mem.width());
        let found = if r.runs {
            let mut runs = self.runs.iter().map(|run| (run.addr as usize, run.len));
            let elements = Elements::Runs(&mut runs);
            shadow.access(kind, at, elements, &self.gclock, &mut self.gpages)
        } else {
            let elements = Elements::Each(&self.addrs);
            shadow.access(kind, at, elements, &self.gclock, &mut self.gpages)
        };
        found.map_err(|c| {
            let name = self
                .ctx
                .kernel
                .params
                .get(param)
                .map_or("?", |p| p.name.as_str());
            Fault::Error(EmuError::GlobalRace {
                kernel: self.ctx.kernel.name.clone(),
                block: self.block,
                detail: c.describe(kind, self.block, name),
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
    pub(crate) fn uniform(&self, dst: Option<VarId>, n: usize) -> bool {
        n == 1
            && dst.is_some_and(
                |d| matches!(self.ctx.kernel.vars.get(d as usize), Some(v) if v.ty.is_scalar()),
            )
    }

    /// Race checking of an atomic access of `sem`, between the barrier the PTX places before a
    /// release and the one after an acquire.
    pub(crate) fn check_atomic_race(
        &mut self,
        a: &Access,
        r: &mut Resolved,
        kind: Kind,
        sem: Sem,
        uniform: bool,
    ) -> R<()> {
        if self.race.is_none() {
            return Ok(());
        }
        if sem.has_release() {
            self.barrier();
        }
        self.check_race(a, r, kind, uniform)?;
        if sem.has_acquire() {
            self.barrier();
        }
        Ok(())
    }

    /// The locations of the active elements of a resolved access that blocks of a cluster can
    /// synchronise through (global and distributed shared memory), or `None` when there is no
    /// cluster race checking.
    fn sync_keys(
        &mut self,
        r: &mut Resolved,
        size: usize,
    ) -> Option<(&'c ClusterShadow, Vec<SyncKey>)> {
        let shadow = self.cluster?.race.as_ref()?;
        self.need_addrs(r);
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

    /// The locations of the active elements of a resolved atomic access of `sem` that blocks of
    /// the grid synchronise through in the global-memory race checking (`race_global.rs`), or
    /// `None` when the access can neither release nor acquire there.
    fn grid_sync_keys(
        &mut self,
        r: &mut Resolved,
        sem: Sem,
        size: usize,
    ) -> Option<(&'c GlobalShadow, Vec<SyncKey>)> {
        let shadow = self.ctx.global_race.as_ref()?;
        if sem == Sem::Relaxed && !shadow.fences {
            return None;
        }
        let keys = match r.region {
            Region::Global { param } => {
                let mem = self.global(param).ok()?;
                let k = |i: usize| SyncKey::Global(mem.cell_addr(i));
                if r.runs {
                    self.runs
                        .iter()
                        .flat_map(|run| run.addr as usize..run.addr as usize + run.len)
                        .map(k)
                        .collect()
                } else {
                    self.addrs
                        .iter()
                        .filter(|&&p| p != INACTIVE)
                        .map(|&p| k(p as usize))
                        .collect()
                }
            }
            Region::Cluster => {
                self.cluster?;
                let c = self.cluster_key();
                self.need_addrs(r);
                self.addrs
                    .iter()
                    .filter(|&&p| p != INACTIVE)
                    .map(|&p| SyncKey::Dsmem(c, p as usize * size))
                    .collect()
            }
            Region::Shared => return None,
        };
        Some((shadow, keys))
    }

    /// Before an atomic write of `sem` is performed: what it releases, for the race checking of
    /// distributed shared memory and of global memory.
    pub(crate) fn sync_before_write(&mut self, r: &mut Resolved, sem: Sem, size: usize) {
        if let Some((shadow, keys)) = self.sync_keys(r, size) {
            shadow.publish(&keys, sem, &self.clock);
        }
        if let Some((shadow, keys)) = self.grid_sync_keys(r, sem, size) {
            shadow.publish(&keys, sem, &self.gclock, self.sys_scope);
        }
    }

    /// After an atomic access of `sem` is performed: what its read acquired (`reads`), and the
    /// end of what its release covered.
    pub(crate) fn sync_after_access(
        &mut self,
        r: &mut Resolved,
        sem: Sem,
        size: usize,
        reads: bool,
    ) {
        if let Some((shadow, keys)) = self.grid_sync_keys(r, sem, size) {
            if reads {
                shadow.observe(&keys, sem, &mut self.gclock, self.sys_scope);
            }
            if sem.has_release() {
                self.gclock.tick();
            }
        }
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
    pub(crate) fn note_atomic_read(&mut self, r: &Resolved) {
        if matches!(r.region, Region::Global { .. }) {
            self.read_atomically = true;
        }
    }

    /// Strict scatter: two active elements of one weak store must not share an address.
    pub(crate) fn check_duplicates(&mut self, r: &mut Resolved) -> R<()> {
        if r.runs && self.runs.len() <= 1 {
            return Ok(()); // one span of consecutive addresses
        }
        self.need_addrs(r);
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
}
