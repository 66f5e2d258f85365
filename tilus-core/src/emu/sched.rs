//! Cooperative scheduling of the blocks of a launch (without clusters) on a pool of workers.
//!
//! Workers (host threads, one per core by default) take blocks in increasing order. A block
//! that spins — loop iterations that read global memory atomically, which may be waiting for
//! another block (`flow.rs`) — yields at a loop's back edge when there is another block to
//! run: its state is parked here, and it resumes later on whichever worker is free. So blocks
//! that wait for one another (a flag set by a later block, a chain of look-backs, a lock)
//! complete on any number of workers, as on a GPU with every block resident, without a host
//! thread per block.
//!
//! Which block a worker runs next: after a block yields, a block not started yet (as the GPU
//! would make a new block resident), else the parked block that yielded longest ago; after a
//! block finishes, the parked block that yielded longest ago (it may now get what it waited
//! for), else a new one. At most [`MAX_IN_FLIGHT`] blocks are started and unfinished at once.

use super::flow::{Frame, Stop};
use super::interp::{Ctx, Interp, R};
use super::race::{BlockClock, Shadow};
use super::race_global::GridClock;
use super::value::Value;
use super::{internal, record, EmuError};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Most blocks started and not finished at once (running or parked), about what a large GPU
/// holds resident; a kernel that needs more blocks at once to make progress would not finish
/// on a GPU either.
pub const MAX_IN_FLIGHT: usize = 4096;

/// The state of a suspended block: everything of [`Interp`] that belongs to the block.
pub(crate) struct Parked<'k> {
    vars: Vec<Value>,
    shared: Vec<u8>,
    block: u32,
    iterations: u64,
    race: Option<Shadow>,
    rank: u32,
    cluster_phase: u64,
    clock: BlockClock,
    gclock: GridClock,
    frames: Vec<Frame<'k>>,
    spins: u64,
}

impl<'k> Interp<'_, 'k, '_> {
    /// Move the running block's state out (it has yielded).
    pub(crate) fn suspend(&mut self) -> Parked<'k> {
        Parked {
            vars: std::mem::take(&mut self.vars),
            shared: std::mem::take(&mut self.shared),
            block: self.block,
            iterations: self.iterations,
            race: self.race.take(),
            rank: self.rank,
            cluster_phase: self.cluster_phase,
            clock: std::mem::take(&mut self.clock),
            gclock: std::mem::take(&mut self.gclock),
            frames: std::mem::take(&mut self.frames),
            spins: self.spins,
        }
    }

    /// Make a suspended block the running one again (the previous block's buffers are kept as
    /// spares).
    pub(crate) fn resume(&mut self, p: Box<Parked<'k>>) {
        let p = *p;
        let window = std::mem::replace(&mut self.shared, p.shared);
        if !window.is_empty() {
            self.spare.windows.push(window);
        }
        if let Some(shadow) = std::mem::replace(&mut self.race, p.race) {
            self.spare.shadows.push(shadow);
        }
        self.vars = p.vars;
        self.block = p.block;
        self.iterations = p.iterations;
        self.rank = p.rank;
        self.cluster_phase = p.cluster_phase;
        self.clock = p.clock;
        self.gclock = p.gclock;
        self.frames = p.frames;
        self.spins = p.spins;
        self.read_atomically = false;
    }
}

/// What a worker runs next.
enum Work<'k> {
    New(u32),
    Resume(Box<Parked<'k>>),
}

struct Queue<'k> {
    /// The next block not started yet.
    next: u64,
    /// Suspended blocks, in the order they yielded.
    parked: VecDeque<Box<Parked<'k>>>,
    /// Blocks on a worker now.
    running: usize,
}

/// The blocks of one launch and the workers' shared queue.
pub(crate) struct Sched<'k> {
    blocks: u64,
    queue: Mutex<Queue<'k>>,
    /// Signalled when a block is parked or the last running block finishes.
    wake: Condvar,
}

impl<'k> Sched<'k> {
    fn new(blocks: u64) -> Sched<'k> {
        Sched {
            blocks,
            queue: Mutex::new(Queue {
                next: 0,
                parked: VecDeque::new(),
                running: 0,
            }),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue<'k>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a spinning block yielding now would let another block run.
    pub(crate) fn has_other_work(&self) -> bool {
        let q = self.lock();
        q.next < self.blocks || !q.parked.is_empty()
    }

    fn start_new(&self, q: &mut Queue<'k>) -> Option<Work<'k>> {
        let in_flight = q.running + q.parked.len();
        if q.next >= self.blocks || in_flight >= MAX_IN_FLIGHT {
            return None;
        }
        q.next += 1;
        q.running += 1;
        Some(Work::New((q.next - 1) as u32))
    }

    /// Work for a free worker: a parked block first, then a new one; waits while other
    /// workers still run blocks that may yield. `None` when the launch is over (or aborted).
    fn take(&self, abort: &std::sync::atomic::AtomicBool) -> Option<Work<'k>> {
        let mut q = self.lock();
        loop {
            if abort.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(p) = q.parked.pop_front() {
                q.running += 1;
                return Some(Work::Resume(p));
            }
            if let Some(w) = self.start_new(&mut q) {
                return Some(w);
            }
            if q.running == 0 {
                return None;
            }
            // A timeout, so that an abort (set without this lock) is noticed.
            q = self
                .wake
                .wait_timeout(q, Duration::from_millis(20))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A block finished (or failed): the worker is free.
    fn finished(&self) {
        let mut q = self.lock();
        q.running -= 1;
        if q.running == 0 {
            self.wake.notify_all();
        }
    }

    /// A block yielded: park it and pick the worker's next block (possibly the same one).
    fn yielded(&self, p: Box<Parked<'k>>) -> Work<'k> {
        let mut q = self.lock();
        q.running -= 1;
        q.parked.push_back(p);
        self.wake.notify_one();
        if let Some(w) = self.start_new(&mut q) {
            return w;
        }
        q.running += 1;
        match q.parked.pop_front() {
            Some(p) => Work::Resume(p),
            None => unreachable!("the block just parked is there"),
        }
    }
}

/// Run every block of the launch on `workers` host threads; the first error any block reported.
pub(crate) fn run_grid(ctx: &Ctx<'_, '_>, workers: usize) -> Option<EmuError> {
    let sched = Sched::new(ctx.grid.blocks());
    let first_error = Mutex::new(None);
    let work = || {
        let mut interp = Interp::new(ctx, Some(&sched));
        let mut next = sched.take(ctx.abort);
        while let Some(w) = next.take() {
            let (block, fresh) = match w {
                Work::New(b) => (b, true),
                Work::Resume(p) => {
                    interp.resume(p);
                    (interp.block, false)
                }
            };
            let ran = catch_unwind(AssertUnwindSafe(|| -> R<Stop> {
                if fresh {
                    interp.start(block)?;
                }
                interp.run()
            }));
            let result = match ran {
                Ok(Ok(Stop::Yielded)) => {
                    next = Some(sched.yielded(Box::new(interp.suspend())));
                    continue;
                }
                Ok(r) => r.map(|_| ()),
                Err(payload) => {
                    // The interpreter's state is suspect after a panic: start afresh.
                    interp = Interp::new(ctx, Some(&sched));
                    Err(internal(ctx.kernel, block, payload))
                }
            };
            sched.finished();
            if !record(result, &first_error, ctx.abort) {
                sched.wake.notify_all();
                break;
            }
            next = sched.take(ctx.abort);
        }
    };
    super::run_workers(workers, work);
    first_error.into_inner().unwrap_or_else(|p| p.into_inner())
}
