//! Launch shape checks shared by both backends: grid limits and thread-block cluster shapes.
//!
//! Both backends apply the same rules before anything runs, so that a launch the emulator
//! accepts is one an H100 accepts too (the emulator mirrors its limits); the GPU backend then
//! adds what only the driver knows for a given function (its largest cluster).

use crate::error::{Error, Result};
use tilus_core::ir::Grid;

/// The largest grid the emulator accepts, per dimension: CUDA's limits on every GPU since
/// compute capability 3.0 (`2^31 - 1` blocks in x, 65,535 in y and z).
pub const EMULATOR_MAX_GRID: Grid = Grid::new(i32::MAX as u32, 65_535, 65_535);

/// Blocks per cluster every cluster-capable GPU runs (CUDA's "portable" cluster size); larger
/// clusters need the function's opt-in and a GPU that can co-schedule them.
pub const PORTABLE_CLUSTER_BLOCKS: u32 = 8;

/// The largest cluster the emulator accepts: an H100's non-portable maximum (also the most
/// `#[tile_kernel(cluster = ..)]` accepts).
pub const EMULATOR_MAX_CLUSTER_BLOCKS: u32 = 16;

/// `x×y×z` for messages, or `x` for a 1-D shape.
pub(crate) fn fmt_dims(x: u32, y: u32, z: u32) -> String {
    if y == 1 && z == 1 {
        format!("{x}")
    } else {
        format!("{x}×{y}×{z}")
    }
}

/// The grid rule: every dimension in `1..=limit`.
pub(crate) fn check_grid(kernel: &str, grid: Grid, limit: Grid, device: &str) -> Result<()> {
    let dims = [(grid.x, limit.x), (grid.y, limit.y), (grid.z, limit.z)];
    if dims.iter().all(|&(g, l)| (1..=l).contains(&g)) {
        return Ok(());
    }
    Err(Error::InvalidGrid {
        kernel: kernel.to_string(),
        grid,
        limit,
        device: device.to_string(),
    })
}

/// Blocks per cluster of a cluster shape (saturating; only meaningful once each dimension is
/// checked to be at least 1).
pub(crate) fn cluster_blocks(cluster: [u32; 3]) -> u32 {
    cluster.iter().fold(1u32, |a, &d| a.saturating_mul(d))
}

/// The cluster rules that need no device: a non-zero shape that divides the grid in each
/// dimension. Returns the number of blocks per cluster (1: no cluster).
pub(crate) fn check_cluster_shape(kernel: &str, grid: Grid, cluster: [u32; 3]) -> Result<u32> {
    let grid_dims = [grid.x, grid.y, grid.z];
    let divides = cluster
        .iter()
        .zip(grid_dims)
        .all(|(&c, g)| c >= 1 && g % c == 0);
    if !divides {
        return Err(Error::ClusterShape {
            kernel: kernel.to_string(),
            grid,
            cluster,
        });
    }
    Ok(cluster_blocks(cluster))
}

/// The size rule: at most `limit` blocks per cluster.
pub(crate) fn check_cluster_size(
    kernel: &str,
    blocks: u32,
    limit: u32,
    device: &str,
    detail: String,
) -> Result<()> {
    if blocks <= limit {
        return Ok(());
    }
    Err(Error::ClusterTooLarge {
        kernel: kernel.to_string(),
        blocks,
        limit,
        device: device.to_string(),
        detail,
    })
}

/// The PTX target of a module, as a compute capability (`.target sm_90a` is 90), from its
/// `.target` directive; `None` if it has none (hand-written specs in tests).
pub(crate) fn ptx_target(ptx: &str) -> Option<u32> {
    ptx.lines().find_map(|l| {
        let rest = l
            .trim()
            .strip_prefix(".target")?
            .trim()
            .strip_prefix("sm_")?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_limits_per_dimension() {
        let ok = |g: Grid| check_grid("k", g, EMULATOR_MAX_GRID, "d").is_ok();
        assert!(ok(Grid::new(1, 1, 1)));
        assert!(ok(Grid::new(i32::MAX as u32, 65_535, 65_535)));
        assert!(!ok(Grid::new(0, 1, 1)));
        assert!(!ok(Grid::new(1, 0, 1)));
        assert!(!ok(Grid::new(1, 1, 0)));
        assert!(!ok(Grid::new(1 << 31, 1, 1)));
        assert!(!ok(Grid::new(1, 65_536, 1)));
        assert!(!ok(Grid::new(1, 1, 65_536)));
    }

    #[test]
    fn cluster_shapes() {
        let g = Grid::new(8, 6, 4);
        assert_eq!(check_cluster_shape("k", g, [1, 1, 1]).unwrap(), 1);
        assert_eq!(check_cluster_shape("k", g, [4, 1, 1]).unwrap(), 4);
        assert_eq!(check_cluster_shape("k", g, [2, 3, 2]).unwrap(), 12);
        for bad in [[3, 1, 1], [1, 4, 1], [1, 1, 3], [0, 1, 1], [8, 6, 8]] {
            assert!(
                matches!(
                    check_cluster_shape("k", g, bad),
                    Err(Error::ClusterShape { cluster, .. }) if cluster == bad
                ),
                "{bad:?}"
            );
        }
        assert_eq!(cluster_blocks([u32::MAX, 2, 1]), u32::MAX);
        assert!(check_cluster_size("k", 16, 16, "d", String::new()).is_ok());
        assert!(matches!(
            check_cluster_size("k", 17, 16, "d", String::new()),
            Err(Error::ClusterTooLarge {
                blocks: 17,
                limit: 16,
                ..
            })
        ));
    }

    #[test]
    fn targets_from_ptx() {
        assert_eq!(
            ptx_target(".version 7.8\n.target sm_90\n.address_size 64"),
            Some(90)
        );
        assert_eq!(ptx_target("  .target sm_90a, debug\n"), Some(90));
        assert_eq!(ptx_target(".target sm_70"), Some(70));
        assert_eq!(ptx_target("// no target"), None);
        assert_eq!(ptx_target(""), None);
    }

    #[test]
    fn dims_in_messages() {
        assert_eq!(fmt_dims(7, 1, 1), "7");
        assert_eq!(fmt_dims(7, 2, 1), "7×2×1");
    }
}
