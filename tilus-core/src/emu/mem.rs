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

use super::access::{self, AccessFault, Plan, Region, Resolved, INACTIVE};
use super::buf::{with_word, Buf, Word};
use super::cluster::ClusterMem;
use super::global::{CellWord, GlobalMem};
use super::interp::{Fault, Interp, R};
use super::race::Kind;
use super::rmw::{self, Rmw};
use super::transfer::{self, read_word, write_word};
use super::value::{operand, Elems, Value};
use super::{EmuArg, EmuError};
use crate::ir::{Access, DType, InactiveResult, Operand, RmwOp, Sem, VarId};
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

/// The elements of a value operand of an `n`-element access (a free function, so that the
/// borrow covers only the variables and the shared window stays writable).
fn elems(vars: &[Value], op: Operand, n: usize) -> Result<Elems<'_>, String> {
    let e = operand(vars, op)?;
    match e.len() {
        Some(l) if l != n => Err(format!("operand of {l} elements for an access of {n}")),
        _ => Ok(e),
    }
}

fn width_error() -> String {
    "a memory operand whose elements have another width than the memory".into()
}

impl<'c, 'k, 'a> Interp<'c, 'k, 'a> {
    /// Resolve an access into `self.runs` or `self.addrs`.
    fn resolve(&mut self, a: &Access) -> R<Resolved> {
        let out = access::Out {
            addrs: &mut self.addrs,
            runs: &mut self.runs,
        };
        let window = self.cluster.map_or(self.shared.len(), |c| c.window);
        let r = access::resolve(
            a,
            self.ctx.kernel,
            &self.vars,
            &self.ctx.global_lens,
            window,
            out,
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
        })?;
        let Some(c) = self.cluster else { return Ok(r) };
        if r.region != Region::Cluster || self.cluster_phase > 0 {
            return Ok(r);
        }
        // Before the first cluster barrier only the block's own part may be touched.
        let per_window = (c.window / self.mem_dtype(a).size_bytes()) as i64;
        let own = self.rank as i64;
        if self.plan(&r).any_active(|p| p / per_window != own) {
            return Err(self.cluster_error(
                "a cluster shared tensor is accessed before this block's first `cluster_sync()`: the other blocks of the cluster may not have started (their shared memory does not exist yet) or initialised their part".into(),
            ));
        }
        Ok(r)
    }

    /// Where the addresses of a resolved access are.
    fn plan(&self, r: &Resolved) -> Plan<'_> {
        if r.runs {
            Plan::Runs(&self.runs)
        } else {
            Plan::Addrs(&self.addrs)
        }
    }

    /// The memory of tensor parameter `param`.
    pub(crate) fn global(&self, param: usize) -> R<GlobalMem<'a>> {
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

    /// The elements of a resolved access, read with order `o` (global memory); inactive
    /// elements are `other`'s.
    fn gather(&mut self, a: &Access, r: &Resolved, other: Elems<'_>, o: Ordering) -> R<Buf> {
        let width = self.mem_dtype(a).size_bytes();
        let mem = match r.region {
            Region::Global { param } => Some(self.global(param)?),
            _ => None,
        };
        let plan = if r.runs {
            Plan::Runs(&self.runs)
        } else {
            Plan::Addrs(&self.addrs)
        };
        let gathered = with_word!(width, W => {
            let mut out = self.pool.take::<W>();
            let other = other.src::<W>();
            match (mem, other) {
                (Some(mem), Some(other)) => W::cells(mem).map(|cells| {
                    transfer::gather_global(cells, plan, r.n, other, o, &mut out)
                }),
                (None, Some(other)) => {
                    let (sh, base) = open_window(&mut self.shared, self.cluster, self.rank, r.region, W::WIDTH);
                    transfer::gather_shared(&sh, base, plan, r.n, other, &mut out);
                    Some(())
                }
                (_, None) => None,
            }
            .map(|()| W::wrap(out))
        });
        gathered.ok_or_else(|| self.malformed(width_error()))
    }

    pub(crate) fn load(&mut self, dst: VarId, a: &Access, other: Operand) -> R<()> {
        let mut r = self.resolve(a)?;
        let uniform = self.uniform(Some(dst), r.n);
        self.check_race(a, &mut r, Kind::Read, uniform)?;
        let vars = std::mem::take(&mut self.vars);
        let got = elems(&vars, other, r.n)
            .map_err(|m| self.malformed(m))
            .and_then(|other| self.gather(a, &r, other, Ordering::Relaxed));
        self.vars = vars;
        self.set_tile(dst, a.shape.clone(), got?)
    }

    pub(crate) fn atomic_load(&mut self, dst: Option<VarId>, a: &Access, sem: Sem) -> R<()> {
        let mut r = self.resolve(a)?;
        self.note_atomic_read(&r);
        let uniform = self.uniform(dst, r.n);
        self.check_atomic_race(a, &mut r, Kind::AtomicRead, sem, uniform)?;
        let size = self.mem_dtype(a).size_bytes();
        // An atomic load has no `other`: inactive elements read 0.
        let buf = self.gather(a, &r, Elems::Scalar(0), load_order(sem))?;
        self.sync_after_access(&mut r, sem, size, true);
        match dst {
            Some(d) => self.set_tile(d, a.shape.clone(), buf),
            None => {
                self.pool.give(buf);
                Ok(())
            }
        }
    }

    pub(crate) fn store(&mut self, a: &Access, value: Operand) -> R<()> {
        let mut r = self.resolve(a)?;
        if self.ctx.opts.strict_scatter {
            self.check_duplicates(&mut r)?;
        }
        self.check_race(a, &mut r, Kind::Write, false)?;
        self.write(a, &r, value, Ordering::Relaxed)
    }

    pub(crate) fn atomic_store(&mut self, a: &Access, value: Operand, sem: Sem) -> R<()> {
        let mut r = self.resolve(a)?;
        self.check_atomic_race(a, &mut r, Kind::AtomicWrite, sem, false)?;
        let size = self.mem_dtype(a).size_bytes();
        self.sync_before_write(&mut r, sem, size);
        self.write(a, &r, value, store_order(sem))?;
        self.sync_after_access(&mut r, sem, size, false);
        Ok(())
    }

    /// Store `value` at the resolved addresses, in row-major element order (so the last of
    /// several elements with one address wins).
    fn write(&mut self, a: &Access, r: &Resolved, value: Operand, order: Ordering) -> R<()> {
        let width = self.mem_dtype(a).size_bytes();
        let v = elems(&self.vars, value, r.n).map_err(|m| self.malformed(m))?;
        let mem = match r.region {
            Region::Global { param } => Some(self.global(param)?),
            _ => None,
        };
        let locks = self.ctx.chunk_locks;
        let plan = if r.runs {
            Plan::Runs(&self.runs)
        } else {
            Plan::Addrs(&self.addrs)
        };
        let done = with_word!(width, W => match (mem, v.src::<W>()) {
            (Some(mem), Some(v)) => W::cells(mem).map(|cells| {
                transfer::scatter_global(cells, plan, v, order, locks.then_some(mem))
            }),
            (None, Some(v)) => {
                let (mut sh, base) = open_window(&mut self.shared, self.cluster, self.rank, r.region, W::WIDTH);
                transfer::scatter_shared(&mut sh, base, plan, v);
                Some(())
            }
            (_, None) => None,
        });
        done.ok_or_else(|| self.malformed(width_error()))
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
        let mut r = self.resolve(a)?;
        self.note_atomic_read(&r);
        if op == RmwOp::Cas && compare.is_none() {
            return Err(self.malformed("`cas` without a compare operand".into()));
        }
        let uniform = self.uniform(dst, r.n);
        self.check_atomic_race(a, &mut r, Kind::AtomicWrite, sem, uniform)?;
        let d = self.mem_dtype(a);
        let size = d.size_bytes();
        self.sync_before_write(&mut r, sem, size);
        let vars = std::mem::take(&mut self.vars);
        let args = elems(&vars, values, r.n).and_then(|values| {
            let compare = match compare {
                Some(c) => elems(&vars, c, r.n)?,
                None => Elems::Scalar(0),
            };
            Ok(Rmw {
                op,
                d,
                values,
                compare,
                inactive,
                n: r.n,
                want: dst.is_some(),
            })
        });
        let old = match args {
            Ok(args) if pairs => self.rmw_pairs(&mut r, &args, sem),
            Ok(args) => self.rmw_elements(&r, &args, sem),
            Err(m) => Err(self.malformed(m)),
        };
        self.vars = vars;
        let old = old?;
        self.sync_after_access(&mut r, sem, size, true);
        match dst {
            Some(d) => self.set_tile(d, a.shape.clone(), old),
            None => {
                self.pool.give(old);
                Ok(())
            }
        }
    }

    /// The read-modify-writes of the elements of a resolved access; the old values.
    fn rmw_elements(&mut self, r: &Resolved, args: &Rmw<'_>, sem: Sem) -> R<Buf> {
        let mem = match r.region {
            Region::Global { param } => Some(self.global(param)?),
            _ => None,
        };
        let plan = if r.runs {
            Plan::Runs(&self.runs)
        } else {
            Plan::Addrs(&self.addrs)
        };
        let old = match mem {
            Some(mem) => {
                let orders = (rmw_order(sem), cas_failure_order(sem));
                rmw::global(
                    mem,
                    plan,
                    args,
                    orders,
                    self.ctx.chunk_locks,
                    &mut self.pool,
                )
            }
            None => {
                let size = args.d.size_bytes();
                let (mut sh, base) =
                    open_window(&mut self.shared, self.cluster, self.rank, r.region, size);
                rmw::shared(&mut sh, base, plan, args, &mut self.pool)
            }
        };
        old.map_err(|m| self.malformed(m))
    }

    /// 128-bit RMWs on the pairs `2k, 2k + 1`: performed when both elements are active, the
    /// second is the memory element after the first, and the first is 16-byte aligned (an even
    /// element: allocations are 16-byte aligned on both backends); skipped pairs give what
    /// `inactive` says, as on the GPU. The old values.
    fn rmw_pairs(&mut self, r: &mut Resolved, args: &Rmw<'_>, sem: Sem) -> R<Buf> {
        if args.d.size_bytes() != 8 || !r.n.is_multiple_of(2) {
            return Err(self.malformed("a 128-bit atomic needs pairs of 64-bit elements".into()));
        }
        self.need_addrs(r);
        let (v, c, op) = (args.values, args.compare, args.op);
        let dead = |e: usize| match args.inactive {
            InactiveResult::Zero => 0,
            InactiveResult::Compare => c.at(e),
        };
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
        let mut out = self.pool.take::<u64>();
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
                    open_window(&mut self.shared, self.cluster, self.rank, r.region, 8);
                for e in (0..r.n).step_by(2) {
                    let (p, q) = (self.addrs[e], self.addrs[e + 1]);
                    let at = base.wrapping_add(p as usize);
                    let old = if p == INACTIVE || q != p.wrapping_add(1) || at % 2 != 0 {
                        (dead(e), dead(e + 1))
                    } else {
                        let old: (u64, u64) = (read_word(&sh, at), read_word(&sh, at + 1));
                        if let Some((l, h)) = new(e, old) {
                            write_word(&mut sh, at, l);
                            write_word(&mut sh, at + 1, h);
                        }
                        old
                    };
                    out.extend([old.0, old.1]);
                }
            }
        }
        Ok(Buf::W64(out))
    }
}
