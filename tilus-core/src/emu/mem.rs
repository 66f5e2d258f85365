//! Memory instructions: loads, stores, atomics and fences over the resolved addresses of an
//! access.
//!
//! Global memory is shared with other blocks (other host threads), so every access to it is an
//! atomic operation: weak loads and stores are `Relaxed` (no Rust data race, and no ordering
//! beyond what the IR promises), atomics use their requested order or the next stronger one
//! Rust accepts. The scope is ignored: host threads are ordered at least as strongly as any
//! scope asks. Shared memory belongs to the block alone (one host thread), so it is a plain
//! `Vec<i32>` and its atomics are plain read-modify-writes. The elements of one tile operation
//! are performed in row-major order, which is one of the orders the GPU may choose.

use super::access::{self, AccessFault, Region, Resolved, INACTIVE};
use super::interp::{Fault, Interp, R};
use super::race::{Kind, Target};
use super::value::{operand, Elems, Value};
use super::{EmuArg, EmuError};
use crate::ir::{Access, InactiveResult, Operand, RmwOp, Sem, VarId};
use std::sync::atomic::{fence as atomic_fence, AtomicI32, Ordering};

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

/// The new value of a shared-memory cell after `op` (the block is the only thread on it).
#[inline(always)]
fn apply(op: RmwOp, old: i32, v: i32, cmp: i32) -> i32 {
    match op {
        RmwOp::Add => old.wrapping_add(v),
        RmwOp::Sub => old.wrapping_add(v.wrapping_neg()),
        RmwOp::Min => old.min(v),
        RmwOp::Max => old.max(v),
        RmwOp::Exch => v,
        RmwOp::Cas => {
            if old == cmp {
                v
            } else {
                old
            }
        }
        RmwOp::And => old & v,
        RmwOp::Or => old | v,
        RmwOp::Xor => old ^ v,
    }
}

/// An atomic RMW on a global cell; returns the old value.
#[inline(always)]
fn apply_atomic(cell: &AtomicI32, op: RmwOp, v: i32, cmp: i32, sem: Sem) -> i32 {
    let o = rmw_order(sem);
    match op {
        RmwOp::Add => cell.fetch_add(v, o),
        // PTX has no atom.sub: both back ends add the wrapping negation.
        RmwOp::Sub => cell.fetch_add(v.wrapping_neg(), o),
        RmwOp::Min => cell.fetch_min(v, o),
        RmwOp::Max => cell.fetch_max(v, o),
        RmwOp::Exch => cell.swap(v, o),
        // The old value whether or not it matched.
        RmwOp::Cas => cell
            .compare_exchange(cmp, v, o, cas_failure_order(sem))
            .unwrap_or_else(|x| x),
        RmwOp::And => cell.fetch_and(v, o),
        RmwOp::Or => cell.fetch_or(v, o),
        RmwOp::Xor => cell.fetch_xor(v, o),
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
            &self.vars,
            &self.ctx.global_lens,
            self.shared.len(),
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
    }

    /// Race checking (under `check_races`): check and record the active elements of a resolved
    /// shared access. `uniform`: a scalar destination, so every thread performs the access.
    fn check_race(&mut self, a: &Access, r: &Resolved, kind: Kind, uniform: bool) -> R<()> {
        if r.region != Region::Shared {
            return Ok(());
        }
        let Some(shadow) = self.race.as_mut() else {
            return Ok(());
        };
        let Some(Value::Shared(view)) = self.vars.get(a.mem as usize) else {
            return Ok(());
        };
        let kernel = self.ctx.kernel;
        let var = kernel.vars.get(a.mem as usize);
        let target = Target {
            name: var.map_or("?", |v| v.name.as_str()),
            temp: var.is_none_or(|v| v.temp),
            word: view.word,
            shape: &view.shape,
        };
        shadow
            .access(kind, &self.addrs, uniform, &target)
            .map_err(|race| {
                Fault::Error(EmuError::SharedRace {
                    kernel: kernel.name.clone(),
                    block: self.block,
                    detail: race.detail,
                })
            })
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

    /// The memory of tensor parameter `param`.
    fn global(&self, param: usize) -> R<&'a [AtomicI32]> {
        match self.ctx.args.get(param) {
            Some(EmuArg::Tensor(s)) => Ok(s),
            _ => Err(self.malformed(format!("parameter {param} is not a tensor"))),
        }
    }

    pub(crate) fn load(&mut self, dst: VarId, a: &Access, other: Operand) -> R<()> {
        let r = self.resolve(a)?;
        if self.race.is_some() {
            let uniform = self.uniform(Some(dst), r.n);
            self.check_race(a, &r, Kind::Read, uniform)?;
        }
        let mut out = self.take_buf();
        let other = elems(&self.vars, other, r.n).map_err(|m| self.malformed(m))?;
        match r.region {
            Region::Global { param } => {
                let mem = self.global(param)?;
                out.extend(self.addrs.iter().enumerate().map(|(e, &p)| {
                    if p == INACTIVE {
                        other.at(e)
                    } else {
                        mem[p as usize].load(Ordering::Relaxed)
                    }
                }));
            }
            Region::Shared => {
                let sh = &self.shared;
                out.extend(self.addrs.iter().enumerate().map(|(e, &p)| {
                    if p == INACTIVE {
                        other.at(e)
                    } else {
                        sh[p as usize]
                    }
                }));
            }
        }
        self.set_tile(dst, a.shape.clone(), out)
    }

    pub(crate) fn atomic_load(&mut self, dst: Option<VarId>, a: &Access, sem: Sem) -> R<()> {
        let r = self.resolve(a)?;
        if self.race.is_some() {
            self.before(sem);
            let uniform = self.uniform(dst, r.n);
            self.check_race(a, &r, Kind::AtomicRead, uniform)?;
            self.after(sem);
        }
        let mut out = self.take_buf();
        // An atomic load has no `other`: inactive elements read 0.
        match r.region {
            Region::Global { param } => {
                let (mem, o) = (self.global(param)?, load_order(sem));
                out.extend(self.addrs.iter().map(|&p| {
                    if p == INACTIVE {
                        0
                    } else {
                        mem[p as usize].load(o)
                    }
                }));
            }
            Region::Shared => {
                let sh = &self.shared;
                out.extend(
                    self.addrs
                        .iter()
                        .map(|&p| if p == INACTIVE { 0 } else { sh[p as usize] }),
                );
            }
        }
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
        self.write(&r, value, Ordering::Relaxed)
    }

    pub(crate) fn atomic_store(&mut self, a: &Access, value: Operand, sem: Sem) -> R<()> {
        let r = self.resolve(a)?;
        if self.race.is_some() {
            self.before(sem);
            self.check_race(a, &r, Kind::AtomicWrite, false)?;
            self.after(sem);
        }
        self.write(&r, value, store_order(sem))
    }

    /// Store `value` at the resolved addresses, in row-major element order (so the last of
    /// several elements with one address wins).
    fn write(&mut self, r: &Resolved, value: Operand, order: Ordering) -> R<()> {
        let v = elems(&self.vars, value, r.n).map_err(|m| self.malformed(m))?;
        match r.region {
            Region::Global { param } => {
                let mem = self.global(param)?;
                for (e, &p) in self.addrs.iter().enumerate() {
                    if p != INACTIVE {
                        mem[p as usize].store(v.at(e), order);
                    }
                }
            }
            Region::Shared => {
                for (e, &p) in self.addrs.iter().enumerate() {
                    if p != INACTIVE {
                        self.shared[p as usize] = v.at(e);
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
    ) -> R<()> {
        let r = self.resolve(a)?;
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
        match r.region {
            Region::Global { param } => {
                let mem = self.global(param)?;
                for (e, &p) in self.addrs.iter().enumerate() {
                    let old = if p == INACTIVE {
                        dead(e)
                    } else {
                        apply_atomic(&mem[p as usize], op, v.at(e), c.at(e), sem)
                    };
                    if want {
                        out.push(old);
                    }
                }
            }
            Region::Shared => {
                for (e, &p) in self.addrs.iter().enumerate() {
                    let old = if p == INACTIVE {
                        dead(e)
                    } else {
                        let cell = &mut self.shared[p as usize];
                        let old = *cell;
                        *cell = apply(op, old, v.at(e), c.at(e));
                        old
                    };
                    if want {
                        out.push(old);
                    }
                }
            }
        }
        match dst {
            Some(d) => self.set_tile(d, a.shape.clone(), out),
            None => Ok(()),
        }
    }
}
