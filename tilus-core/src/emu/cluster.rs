//! Thread-block clusters in the emulator: the blocks of one cluster run at the same time (one
//! host thread each), share their shared-memory windows (distributed shared memory) and meet
//! at cluster barriers.
//!
//! * The windows of a cluster live in one buffer, block `r`'s at byte `r * window`. Every
//!   shared-memory tile operation of a block of the cluster (its own window or a peer's) holds
//!   the buffer's lock for its duration, so operations of different blocks are performed one
//!   after another: one legal schedule of the GPU's, with every atomic atomic.
//! * [`ClusterBarrier`] is `barrier.cluster`: all blocks arrive, then all go on. A block that
//!   exits (or fails) while others wait breaks it — on the GPU the waiting blocks would hang —
//!   and the waiters report [`super::EmuError::Cluster`] instead of hanging.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// What the blocks of one running cluster share.
pub(crate) struct ClusterMem {
    /// All windows, `window` bytes each, in rank order.
    bytes: Mutex<Vec<u8>>,
    /// Bytes per window (a multiple of 16, so every element type's index scales exactly).
    pub window: usize,
    pub barrier: ClusterBarrier,
    /// Race checking of the distributed shared tensors (under `check_races`).
    pub race: Option<super::race::ClusterShadow>,
}

impl ClusterMem {
    pub fn new(
        blocks: u32,
        shared_bytes: usize,
        poison: [u8; 4],
        race: Option<super::race::ClusterShadow>,
    ) -> ClusterMem {
        let window = shared_bytes.next_multiple_of(16);
        let bytes = (0..window * blocks as usize)
            .map(|i| poison[i % 4])
            .collect();
        ClusterMem {
            bytes: Mutex::new(bytes),
            window,
            barrier: ClusterBarrier::new(blocks),
            race,
        }
    }

    /// The cluster's windows, locked for one tile operation.
    pub fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        self.bytes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Default)]
struct BarrierState {
    /// Blocks waiting in the current phase.
    arrived: u32,
    /// Blocks that have finished (successfully or not).
    exited: u32,
    /// Completed phases.
    generation: u64,
    /// A block exited while others waited: nobody will ever release them.
    broken: bool,
    /// A block exited with an error: the waiters' own failure is only a consequence.
    failed: bool,
}

/// `barrier.cluster.arrive` + `wait` for the blocks of one cluster.
pub(crate) struct ClusterBarrier {
    blocks: u32,
    state: Mutex<BarrierState>,
    wake: Condvar,
}

/// Why a block could not pass a cluster barrier.
pub(crate) enum BarrierError {
    /// Another block of the cluster exited while this one waited (a hang on the GPU).
    Broken,
    /// The launch is being aborted (another block failed).
    Aborted,
}

impl ClusterBarrier {
    fn new(blocks: u32) -> ClusterBarrier {
        ClusterBarrier {
            blocks,
            state: Mutex::new(BarrierState::default()),
            wake: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, BarrierState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Arrive and wait until every block of the cluster has arrived.
    pub fn wait(&self, abort: &AtomicBool) -> Result<(), BarrierError> {
        let mut s = self.state();
        s.arrived += 1;
        if s.arrived == self.blocks {
            s.arrived = 0;
            s.generation += 1;
            self.wake.notify_all();
            return Ok(());
        }
        if s.failed {
            return Err(BarrierError::Aborted);
        }
        if s.exited > 0 {
            s.broken = true;
            self.wake.notify_all();
            return Err(BarrierError::Broken);
        }
        let generation = s.generation;
        loop {
            // A timeout, so that an abort (set without this lock) is noticed.
            s = self
                .wake
                .wait_timeout(s, Duration::from_millis(20))
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if s.generation != generation {
                return Ok(());
            }
            if s.failed {
                return Err(BarrierError::Aborted);
            }
            if s.broken {
                return Err(BarrierError::Broken);
            }
            if abort.load(Ordering::Relaxed) {
                return Err(BarrierError::Aborted);
            }
        }
    }

    /// A block has finished (`failed`: with an error): blocks still waiting for it are never
    /// released; after a failure they stop without an error of their own, so that the error
    /// reported is the cause (a race, a fault) and not the hang it leads to.
    pub fn exit(&self, failed: bool) {
        let mut s = self.state();
        s.exited += 1;
        if failed {
            s.failed = true;
            self.wake.notify_all();
        }
        if s.arrived > 0 {
            s.broken = true;
            self.wake.notify_all();
        }
    }
}

/// Rank of the block at `coords` (grid coordinates) in its cluster of shape `cluster`, and the
/// cluster's coordinates in the grid of clusters (`%cluster_ctarank`, `%clusterid`).
pub(crate) fn rank_of(coords: [u32; 3], cluster: crate::ir::Grid) -> (u32, [u32; 3]) {
    let c = [cluster.x.max(1), cluster.y.max(1), cluster.z.max(1)];
    let local = [coords[0] % c[0], coords[1] % c[1], coords[2] % c[2]];
    let rank = local[0] + local[1] * c[0] + local[2] * c[0] * c[1];
    (rank, [coords[0] / c[0], coords[1] / c[1], coords[2] / c[2]])
}

/// The linear index of the block of rank `rank` in cluster `cid` (inverse of [`rank_of`]).
pub(crate) fn block_of(
    rank: u32,
    cid: [u32; 3],
    cluster: crate::ir::Grid,
    grid: crate::ir::Grid,
) -> u64 {
    let c = [cluster.x.max(1), cluster.y.max(1), cluster.z.max(1)];
    let local = [rank % c[0], (rank / c[0]) % c[1], rank / (c[0] * c[1])];
    let x = (cid[0] * c[0] + local[0]) as u64;
    let y = (cid[1] * c[1] + local[1]) as u64;
    let z = (cid[2] * c[2] + local[2]) as u64;
    x + y * grid.x as u64 + z * grid.x as u64 * grid.y as u64
}
