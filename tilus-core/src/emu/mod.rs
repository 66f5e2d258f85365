//! CPU emulator: runs the IR of a kernel over host memory with the semantics documented in
//! [`crate::ir`].
//!
//! * A block is one sequential interpreter over whole tiles (`interp.rs`): control flow is
//!   block-uniform and every tile operation completes before the next statement.
//! * Blocks run on a pool of host threads, one per core by default, that take block indices in
//!   increasing order, so several blocks are genuinely in flight at once. A block that spins
//!   (a loop reading global memory atomically) yields its thread to other blocks and resumes
//!   later (`sched.rs`): a block that waits for a flag set by a later block of the same launch
//!   terminates, as on a GPU with all blocks resident.
//! * Global memory is one host atomic per element, of the element's width ([`GlobalMem`]);
//!   memory orders map to Rust orders (`mem.rs`); accesses are resolved to addresses (with
//!   masks and bounds) before memory is touched (`access.rs`). Element values are bit patterns
//!   whose operations are defined once in [`crate::elem`].
//!
//! Where the GPU's behaviour is undefined the emulator reports an error instead of guessing:
//! an out-of-bounds element of an unchecked access ([`EmuError::OutOfBounds`]), duplicate
//! addresses in a weak scatter under [`EmuOptions::strict_scatter`], a runaway loop under
//! [`EmuOptions::max_loop_iterations`], a shared-memory race (a missing `sync()`) or a race of
//! two blocks in global memory (a missing release/acquire) under [`EmuOptions::check_races`]
//! (`race.rs`, `race_global.rs`). Where it is merely unspecified it picks one legal
//! outcome (division by zero gives 0; elements of one operation are performed in row-major
//! order, so the last of several weak stores to one address wins).

mod access;
mod buf;
mod cluster;
mod collectives;
mod compute;
mod elementwise;
mod flow;
mod global;
pub mod host;
mod indexed;
mod interp;
mod mem;
mod mem_checks;
mod ops;
mod race;
mod race_global;
mod rmw;
mod runs;
mod sched;
mod transfer;
mod value;

#[cfg(test)]
mod tests;

use crate::ir::{Grid, Kernel, ParamKind};
use interp::{Ctx, Fault, Interp};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

pub use global::GlobalMem;
pub use interp::SHARED_POISON;

/// A launch argument, in parameter order.
#[derive(Debug, Clone, Copy)]
pub enum EmuArg<'a> {
    /// A `GlobalTensor<T>` (its memory, shared with other blocks and other arguments): cells of
    /// `T`'s width.
    Tensor(GlobalMem<'a>),
    /// A scalar: the bit pattern of a value of the parameter's type (`crate::elem::canon`).
    Scalar(u64),
}

impl EmuArg<'_> {
    /// An `i32` scalar argument.
    pub fn i32(v: i32) -> EmuArg<'static> {
        EmuArg::Scalar(v as u32 as u64)
    }
}

/// The default: lenient scatter, one worker per core, no step limit, shared-memory race
/// checking on (a race is a bug on the GPU whatever the emulator computes).
#[derive(Debug, Clone)]
pub struct EmuOptions {
    /// Report duplicate addresses among the active elements of one non-atomic scatter store as
    /// an error (on in tests).
    pub strict_scatter: bool,
    /// Host threads running blocks (blocks are handed out in increasing order; a block that
    /// spins on an atomic yields its thread to the others, so blocks that wait for one another
    /// complete with any number of workers). 0 = one per core
    /// (`std::thread::available_parallelism`). A kernel with clusters runs each cluster's
    /// blocks on threads of their own; 0 there means up to [`MAX_DEFAULT_WORKERS`] threads.
    pub workers: usize,
    /// Abort with [`EmuError::StepLimit`] after this many loop iterations in one block
    /// (a spin that never ends fails instead of hanging). `None` = unlimited.
    pub max_loop_iterations: Option<u64>,
    /// Check shared memory for races the GPU would have: each tile element is performed by the
    /// thread that owns it in the PTX layout, and two accesses of one shared word by different
    /// threads (at least one a write, not both atomic) with no block-wide barrier between them
    /// are reported as [`EmuError::SharedRace`] (a missing `sync()`). In distributed shared
    /// tensors (`cluster_shared_tensor`) accesses of two blocks of a cluster race unless a
    /// `cluster_sync()` or a release/acquire pair orders them (a missing `cluster_sync()`).
    /// Costs a shadow of the shared window per block in flight (24 bytes per element of the
    /// kernel's narrowest shared type; per running cluster for distributed tensors), a copy of
    /// each shared access's addresses until the next barrier, and a check element by element
    /// only in the barrier intervals that mix kinds of access that can race (a store and a
    /// load, say); BENCHMARKS.md has the measured cost.
    ///
    /// Global memory is checked between the blocks of a launch (grids of more than one block;
    /// `race_global.rs`): two accesses of one element by different blocks (at least one a
    /// write, not both atomic) race unless happens-before orders them, through release/acquire
    /// atomics on global or distributed shared memory (or relaxed ones with fences) or a
    /// `cluster_sync()`; reported as [`EmuError::GlobalRace`] whichever order the host threads
    /// ran them in (the later access sees the earlier one). Atomics of many blocks on one
    /// element are no race; accesses of one block are ordered (different threads of one block
    /// are not checked in global memory). In memory mapped for the host (the runtime's
    /// `MappedTensor`) the host is one more agent, checked even in a grid of one block: a host
    /// write that a block reads, or a block's write that the host reads, races unless a release
    /// and an acquire **at `sys` scope** order them ([`host`]). Costs, per 16 KiB page of
    /// global memory the launch touches, a summary of the runs of elements blocks accessed while
    /// they are disjoint (each block its own tiles), and a shadow word of 8 bytes per element
    /// once two blocks' accesses meet in the page (or scatter); emulator tensors start on
    /// 16 KiB boundaries so that tiles line up with pages. On in tests; BENCHMARKS.md has the measured cost.
    pub check_races: bool,
}

impl Default for EmuOptions {
    fn default() -> Self {
        EmuOptions {
            strict_scatter: false,
            workers: 0,
            max_loop_iterations: None,
            check_races: true,
        }
    }
}

/// Most host threads a launch of a kernel with clusters uses when [`EmuOptions::workers`] is 0.
pub const MAX_DEFAULT_WORKERS: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    #[error("kernel `{kernel}` expects {expected} arguments, got {got}")]
    ArgCount {
        kernel: String,
        expected: usize,
        got: usize,
    },
    #[error(
        "argument {index} (`{name}`) of kernel `{kernel}` has the wrong kind: expected {expected}"
    )]
    ArgKind {
        kernel: String,
        index: usize,
        name: String,
        expected: String,
    },
    #[error("non-atomic scatter store in kernel `{kernel}`, block {block}: {count} active elements write the same address (index {index}); use an atomic or a collision-free index tile")]
    DuplicateScatter {
        kernel: String,
        block: u32,
        index: i64,
        count: usize,
    },
    #[error("kernel `{kernel}`, block {block}: a loop ran more than {limit} iterations (emulator step limit)")]
    StepLimit {
        kernel: String,
        block: u32,
        limit: u64,
    },
    /// An active element of an access with `check_bounds` off is outside its tensor: undefined
    /// behaviour on the GPU, reported (without touching memory) by the emulator.
    #[error("kernel `{kernel}`, block {block}: unchecked {space} access out of bounds at tile element {element}: {detail}")]
    OutOfBounds {
        kernel: String,
        block: u32,
        space: String,
        element: usize,
        detail: String,
    },
    /// Two threads of the block access one shared word with no barrier in between (at least one
    /// writes, not both atomically): correct here only because the emulator runs each tile
    /// operation to completion, a race on the GPU. Reported under [`EmuOptions::check_races`].
    #[error("kernel `{kernel}`, block {block}: {detail}")]
    SharedRace {
        kernel: String,
        block: u32,
        detail: String,
    },
    /// Two blocks access one global element (at least one writes, not both atomically) and no
    /// happens-before relation (release/acquire atomics, fences, `cluster_sync()`) orders the
    /// two accesses: a data race on the GPU, whichever order the emulator ran them in.
    /// Reported under [`EmuOptions::check_races`].
    #[error("kernel `{kernel}`, block {block}: {detail}")]
    GlobalRace {
        kernel: String,
        block: u32,
        detail: String,
    },
    /// A thread-block cluster was used wrongly: a grid that is not a whole number of clusters,
    /// a distributed shared tensor touched before the block's first `cluster_sync()` (its
    /// peers may not have started), or a cluster barrier that some block never reaches (a hang
    /// on the GPU).
    #[error("kernel `{kernel}`, block {block}: {detail}")]
    Cluster {
        kernel: String,
        block: u32,
        detail: String,
    },
    /// The IR breaks an invariant the front end guarantees (a compiler bug, or hand-built IR).
    #[error("kernel `{kernel}`, block {block}: malformed IR: {message}")]
    Malformed {
        kernel: String,
        block: u32,
        message: String,
    },
    /// The emulator itself failed (a bug in the emulator); reported instead of a panic.
    #[error("kernel `{kernel}`, block {block}: emulator internal error: {message}")]
    Internal {
        kernel: String,
        block: u32,
        message: String,
    },
}

/// Check `args` against the kernel's parameters (count and kind).
fn check_args(kernel: &Kernel, args: &[EmuArg<'_>]) -> Result<(), EmuError> {
    if args.len() != kernel.params.len() {
        return Err(EmuError::ArgCount {
            kernel: kernel.name.clone(),
            expected: kernel.params.len(),
            got: args.len(),
        });
    }
    for (index, (p, a)) in kernel.params.iter().zip(args).enumerate() {
        let expected = match (&p.kind, a) {
            (ParamKind::Tensor(d), EmuArg::Tensor(m)) if m.width() == d.size_bytes() => continue,
            (ParamKind::Scalar(_), EmuArg::Scalar(_)) => continue,
            (ParamKind::Tensor(d), _) => format!("a tensor of {}", d.name()),
            (ParamKind::Scalar(d), _) => format!("a scalar {}", d.name()),
        };
        return Err(EmuError::ArgKind {
            kernel: kernel.name.clone(),
            index,
            name: p.name.clone(),
            expected,
        });
    }
    if kernel.vars.len() < kernel.params.len() {
        return Err(EmuError::Malformed {
            kernel: kernel.name.clone(),
            block: 0,
            message: format!(
                "{} parameters but only {} variables",
                kernel.params.len(),
                kernel.vars.len()
            ),
        });
    }
    Ok(())
}

/// Run `kernel` over a grid of `grid` blocks (`u32`, `(x, y)`, `(x, y, z)` or a [`Grid`]).
///
/// Returns the first error any block reported (the other blocks stop at their next loop
/// iteration or block boundary). A grid of 0 blocks does nothing.
/// Whether `kernel` has a 128-bit atomic.
fn has_pair_atomics(kernel: &Kernel) -> bool {
    let mut any = false;
    crate::ir::for_each_inst(&kernel.body, &mut |_, inst, _| {
        any |= matches!(inst, crate::ir::Inst::AtomicRmw { pairs: true, .. });
    });
    any
}

pub fn launch(
    kernel: &Kernel,
    grid: impl Into<Grid>,
    args: &[EmuArg<'_>],
    opts: &EmuOptions,
) -> Result<(), EmuError> {
    check_args(kernel, args)?;
    let grid: Grid = grid.into();
    let blocks = grid.blocks();
    if blocks == 0 {
        return Ok(());
    }
    // No device copy runs without atomics while the kernel runs (`global::MEMORY`).
    let _memory = global::shared_access();
    let abort = AtomicBool::new(false);
    // The host shares mapped memory with the kernel: it is one more agent to race with.
    let shared_with_host = opts.check_races
        && args.iter().any(|a| match a {
            EmuArg::Tensor(m) => host::touches_mapped(m.cell_addr(0), m.cell_addr(m.len())),
            EmuArg::Scalar(_) => false,
        });
    let ctx = Ctx {
        kernel,
        args,
        global_lens: args
            .iter()
            .map(|a| match a {
                EmuArg::Tensor(s) => i64::try_from(s.len()).unwrap_or(i64::MAX),
                EmuArg::Scalar(_) => 0,
            })
            .collect(),
        grid,
        opts,
        abort: &abort,
        chunk_locks: has_pair_atomics(kernel),
        // One block alone has nobody to race with in global memory.
        global_race: (opts.check_races && (blocks > 1 || shared_with_host))
            .then(|| std::sync::Arc::new(race_global::GlobalShadow::new(kernel))),
    };
    let active = ctx
        .global_race
        .as_ref()
        .filter(|_| shared_with_host)
        .map(host::Active::enter);
    let result = run_launch(&ctx, blocks);
    drop(active);
    let host_race = ctx.global_race.as_ref().and_then(|g| {
        let mut h = g.host.lock().unwrap_or_else(|p| p.into_inner());
        h.race.take()
    });
    match (result, host_race) {
        (Ok(()), Some((base, kind, c))) => {
            // The tensor as the kernel names it: the parameter whose memory the host accessed.
            let name = args.iter().zip(&kernel.params).find_map(|(a, p)| match a {
                EmuArg::Tensor(m) if m.cell_addr(0) == base => Some(p.name.as_str()),
                _ => None,
            });
            Err(EmuError::GlobalRace {
                kernel: kernel.name.clone(),
                block: c.block,
                detail: c.describe(kind, host::HOST, name.unwrap_or("(mapped memory)")),
            })
        }
        (result, _) => result,
    }
}

/// Runs the blocks of a launch (in clusters, or on the worker pool).
fn run_launch(ctx: &Ctx<'_, '_>, blocks: u64) -> Result<(), EmuError> {
    let opts = ctx.opts;
    if ctx.kernel.cluster.blocks() > 1 {
        return launch_clusters(ctx);
    }
    let workers = match opts.workers {
        0 => default_workers(),
        w => w,
    }
    .min(blocks.min(usize::MAX as u64) as usize);
    match sched::run_grid(ctx, workers) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The host's cores: the default number of workers.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A panic inside the interpreter, as the error it is.
fn internal(kernel: &Kernel, block: u32, payload: Box<dyn std::any::Any + Send>) -> Fault {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into());
    Fault::Error(EmuError::Internal {
        kernel: kernel.name.clone(),
        block,
        message,
    })
}

/// Record a block's outcome; false when the launch stops (an error here or elsewhere).
fn record(
    result: Result<(), Fault>,
    first_error: &Mutex<Option<EmuError>>,
    abort: &AtomicBool,
) -> bool {
    match result {
        Ok(()) => true,
        Err(Fault::Aborted) => false,
        Err(Fault::Error(e)) => {
            let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(e);
            abort.store(true, Ordering::Relaxed);
            false
        }
    }
}

/// Run `work` on `workers` host threads (the calling thread is one of them).
fn run_workers(workers: usize, work: impl Fn() + Sync) {
    if workers <= 1 {
        work();
    } else {
        std::thread::scope(|s| {
            // The calling thread is one of the workers; a thread the OS refuses to create only
            // lowers the concurrency (blocks still all run).
            for _ in 1..workers {
                if std::thread::Builder::new()
                    .name("tilus-emu".into())
                    .spawn_scoped(s, &work)
                    .is_err()
                {
                    break;
                }
            }
            work();
        });
    }
}

/// A launch of a kernel with clusters: whole clusters are handed out to workers, and the
/// blocks of a cluster run at the same time, one host thread each, over the cluster's shared
/// windows (`cluster.rs`).
fn launch_clusters(ctx: &Ctx<'_, '_>) -> Result<(), EmuError> {
    let (kernel, grid, c) = (ctx.kernel, ctx.grid, ctx.kernel.cluster);
    if grid.x % c.x != 0 || grid.y % c.y != 0 || grid.z % c.z != 0 {
        return Err(EmuError::Cluster {
            kernel: kernel.name.clone(),
            block: 0,
            detail: format!(
                "the grid ({}, {}, {}) is not a whole number of ({}, {}, {})-block clusters",
                grid.x, grid.y, grid.z, c.x, c.y, c.z
            ),
        });
    }
    let clusters = Grid::new(grid.x / c.x, grid.y / c.y, grid.z / c.z);
    let size = c.blocks() as u32;
    let count = clusters.blocks();
    let per_cluster = size as usize;
    let workers = match ctx.opts.workers {
        0 => (MAX_DEFAULT_WORKERS / per_cluster).max(1),
        w => w.div_ceil(per_cluster).max(1),
    }
    .min(count.min(usize::MAX as u64) as usize);
    let next = AtomicU64::new(0);
    let first_error: Mutex<Option<EmuError>> = Mutex::new(None);
    let poison = interp::SHARED_POISON.to_le_bytes();
    let work = || {
        while !ctx.abort.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let cid = clusters.coords(i);
            let race = ctx
                .opts
                .check_races
                .then(|| race::ClusterShadow::new(kernel, size));
            let mem = cluster::ClusterMem::new(size, kernel.shared_bytes, poison, race);
            let run_rank = |rank: u32| {
                let block = cluster::block_of(rank, cid, c, grid) as u32;
                let mut interp = Interp::in_cluster(ctx, &mem);
                let result = catch_unwind(AssertUnwindSafe(|| interp.run_block(block)))
                    .unwrap_or_else(|payload| Err(internal(kernel, block, payload)));
                // Blocks still waiting for this one at a cluster barrier are never released.
                mem.barrier.exit(matches!(result, Err(Fault::Error(_))));
                record(result, &first_error, ctx.abort);
            };
            std::thread::scope(|s| {
                let mut spawned = Vec::new();
                for rank in 1..size {
                    match std::thread::Builder::new()
                        .name("tilus-emu-cluster".into())
                        .spawn_scoped(s, move || run_rank(rank))
                    {
                        Ok(h) => spawned.push(h),
                        Err(e) => {
                            // Without all of its blocks in flight a cluster cannot run.
                            record(
                                Err(Fault::Error(EmuError::Internal {
                                    kernel: kernel.name.clone(),
                                    block: 0,
                                    message: format!(
                                        "cannot start a thread for a cluster block: {e}"
                                    ),
                                })),
                                &first_error,
                                ctx.abort,
                            );
                            mem.barrier.exit(true);
                        }
                    }
                }
                run_rank(0);
            });
        }
    };
    run_workers(workers, work);
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
