//! 1-, 2- and 3-D grids and thread-block clusters through the typed launchers, on the emulator
//! and (built with `cuda`) on GPU 0: every block runs once with the right coordinates, and the
//! launches both backends must refuse are typed errors.

mod common;

use rand::Rng;
use tilus::prelude::*;
use tilus::{Error, KernelSpec};

/// Block `(x, y, z)` writes its coordinates and the grid's shape at its linear index.
#[tile_kernel(threads = 32)]
fn grid_ids(ids: GlobalTensor<i32>, dims: GlobalTensor<i32>) {
    let linear = (block_idx(2) * grid_dim(1) + block_idx(1)) * grid_dim(0) + block_idx(0);
    let id = block_idx(0) + 1000 * block_idx(1) + 1000000 * block_idx(2);
    let dim = grid_dim(0) + 1000 * grid_dim(1) + 1000000 * grid_dim(2);
    store_global(ids, full([1], id), offsets = [linear]);
    store_global(dims, full([1], dim), offsets = [linear]);
}

/// Run `grid_ids` over `grid` on `dev` and check each block's output against the CPU's
/// enumeration of the grid (outputs poisoned first, so a block that did not run shows).
fn check_grid_ids(dev: &Device, grid: Grid) {
    let n = (grid.x * grid.y * grid.z) as usize;
    let ids = dev.full(n, -1i32).unwrap();
    let dims = dev.full(n, -1i32).unwrap();
    grid_ids::launch(dev, grid, &ids, &dims).unwrap();
    let mut want_ids = Vec::with_capacity(n);
    for z in 0..grid.z {
        for y in 0..grid.y {
            for x in 0..grid.x {
                want_ids.push((x + 1000 * y + 1_000_000 * z) as i32);
            }
        }
    }
    let dim = (grid.x + 1000 * grid.y + 1_000_000 * grid.z) as i32;
    assert_eq!(
        ids.download().unwrap(),
        want_ids,
        "{grid:?} on {}",
        dev.name()
    );
    assert_eq!(
        dims.download().unwrap(),
        vec![dim; n],
        "{grid:?} on {}",
        dev.name()
    );
}

#[test]
fn every_block_of_1d_2d_3d_grids_runs_once() {
    let mut rng = rand::thread_rng();
    for dev in common::devices() {
        // Every way of writing a grid, then random shapes.
        check_grid_ids(&dev, 7.into());
        check_grid_ids(&dev, (5, 3).into());
        check_grid_ids(&dev, (2, 3, 4).into());
        check_grid_ids(&dev, [1, 1, 9].into());
        check_grid_ids(&dev, Grid::new(1, 6, 1));
        for _ in 0..4 {
            let g = Grid::new(
                rng.gen_range(1..9),
                rng.gen_range(1..7),
                rng.gen_range(1..5),
            );
            check_grid_ids(&dev, g);
        }
    }
}

#[test]
fn the_generated_launcher_takes_a_u32_and_tuples() {
    // The launcher's grid is `impl Into<Grid>`: the 1-D call sites written before grids had
    // more dimensions keep compiling, and mean the same.
    let dev = Device::emulator();
    let (ids, dims) = (dev.full(4, -1).unwrap(), dev.full(4, -1).unwrap());
    let blocks: u32 = 4;
    grid_ids::launch(&dev, blocks, &ids, &dims).unwrap();
    assert_eq!(ids.download().unwrap(), vec![0, 1, 2, 3]);
    grid_ids::launch(&dev, (2u32, 2u32), &ids, &dims).unwrap();
    assert_eq!(ids.download().unwrap(), vec![0, 1, 1000, 1001]);
}

#[test]
fn grids_outside_the_device_limits_are_refused() {
    for dev in common::devices() {
        let limit = dev.max_grid();
        assert!(limit.x >= (1 << 31) - 1 && limit.y >= 65_535 && limit.z >= 65_535);
        let t = dev.zeros::<i32>(1).unwrap();
        for bad in [
            Grid::new(0, 1, 1),
            Grid::new(1, 0, 1),
            Grid::new(1, 1, 0),
            Grid::new(limit.x + 1, 1, 1),
            Grid::new(1, limit.y + 1, 1),
            Grid::new(1, 1, limit.z + 1),
        ] {
            match grid_ids::launch(&dev, bad, &t, &t) {
                Err(Error::InvalidGrid { grid, limit: l, .. }) => {
                    assert_eq!((grid, l), (bad, limit))
                }
                other => panic!("{bad:?} on {}: {other:?}", dev.name()),
            }
        }
    }
}

/// Block `(x, y, z)` of a cluster kernel writes its linear index + 1.
#[tile_kernel(threads = 32, cluster = 2)]
fn cluster2(out: GlobalTensor<i32>) {
    let linear = (block_idx(2) * grid_dim(1) + block_idx(1)) * grid_dim(0) + block_idx(0);
    store_global(out, full([1], linear + 1), offsets = [linear]);
}

#[tile_kernel(threads = 32, cluster = [2, 2, 1])]
fn cluster2x2(out: GlobalTensor<i32>) {
    let linear = (block_idx(2) * grid_dim(1) + block_idx(1)) * grid_dim(0) + block_idx(0);
    store_global(out, full([1], linear + 1), offsets = [linear]);
}

#[tile_kernel(threads = 32, cluster = 16)]
fn cluster16(out: GlobalTensor<i32>) {
    let linear = (block_idx(2) * grid_dim(1) + block_idx(1)) * grid_dim(0) + block_idx(0);
    store_global(out, full([1], linear + 1), offsets = [linear]);
}

type Launcher = fn(&Device, Grid, &GlobalTensor<i32>) -> Result<(), Error>;

/// Launch a cluster kernel and check every block ran; on a GPU that cannot run clusters the
/// typed refusal is the expected outcome instead.
fn run_cluster(dev: &Device, launch: Launcher, grid: Grid) {
    let n = (grid.x * grid.y * grid.z) as usize;
    let out = dev.full(n, -1i32).unwrap();
    match launch(dev, grid, &out) {
        Ok(()) => {
            let want: Vec<i32> = (1..=n as i32).collect();
            assert_eq!(out.download().unwrap(), want, "{grid:?} on {}", dev.name());
        }
        Err(Error::ClusterUnsupported { reason, .. }) if !dev.supports_clusters() => {
            eprintln!("{}: no clusters ({reason})", dev.name())
        }
        // Size 16 needs the non-portable opt-in, which the driver may refuse for a kernel: a
        // clear error, not a failed launch.
        Err(e @ Error::ClusterTooLarge { blocks: 16, .. }) if dev.is_gpu() => {
            eprintln!("{}: {e}", dev.name())
        }
        Err(e) => panic!("{grid:?} on {}: {e}", dev.name()),
    }
}

#[test]
fn cluster_kernels_run_every_block() {
    for dev in common::devices() {
        run_cluster(&dev, cluster2::launch, Grid::new(8, 1, 1));
        run_cluster(&dev, cluster2::launch, Grid::new(6, 3, 2));
        run_cluster(&dev, cluster2x2::launch, Grid::new(4, 6, 1));
        run_cluster(&dev, cluster16::launch, Grid::new(32, 1, 1));
        run_cluster(&dev, cluster16::launch, Grid::new(16, 2, 3));
    }
}

#[test]
fn grids_that_are_not_whole_clusters_are_refused_on_both_backends() {
    for dev in common::devices() {
        let out = dev.zeros::<i32>(64).unwrap();
        let cases: [(Launcher, Grid, [u32; 3]); 5] = [
            (cluster2::launch, Grid::new(7, 1, 1), [2, 1, 1]),
            (cluster2::launch, Grid::new(1, 4, 1), [2, 1, 1]),
            (cluster2x2::launch, Grid::new(4, 3, 1), [2, 2, 1]),
            (cluster2x2::launch, Grid::new(2, 1, 1), [2, 2, 1]),
            (cluster16::launch, Grid::new(24, 1, 1), [16, 1, 1]),
        ];
        for (launch, grid, shape) in cases {
            match launch(&dev, grid, &out) {
                Err(Error::ClusterShape {
                    grid: g, cluster, ..
                }) => {
                    assert_eq!((g, cluster), (grid, shape))
                }
                other => panic!("{grid:?} on {}: {other:?}", dev.name()),
            }
        }
        // Nothing ran.
        assert_eq!(out.download().unwrap(), vec![0; 64]);
    }
}

/// `spec` with another cluster shape and PTX (hand-made: the macro refuses such kernels).
fn respec(spec: &'static KernelSpec, cluster: [u32; 3], ptx: &'static str) -> &'static KernelSpec {
    // SAFETY: the tests only launch these specs where validation refuses them before anything
    // runs, or on the emulator, which runs the (unchanged, checked) IR.
    Box::leak(Box::new(unsafe {
        KernelSpec::new_clustered(
            spec.name(),
            ptx,
            spec.ir_bytes(),
            spec.threads(),
            spec.shared_bytes(),
            spec.params(),
            cluster,
        )
    }))
}

#[test]
fn clusters_larger_than_the_device_allows_are_refused() {
    for dev in common::devices() {
        let spec = respec(cluster16::spec(), [17, 1, 1], cluster16::PTX);
        let out = dev.zeros::<i32>(34).unwrap();
        match dev.launch(spec, 34, &[tilus::KernelArg::tensor(&out)]) {
            Err(Error::ClusterTooLarge {
                blocks: 17, limit, ..
            }) => assert!(limit < 17),
            Err(Error::ClusterUnsupported { .. }) if !dev.supports_clusters() => {}
            other => panic!("{}: {other:?}", dev.name()),
        }
        assert_eq!(out.download().unwrap(), vec![0; 34]);
    }
}

#[test]
fn kernels_for_a_newer_gpu_are_refused() {
    let Some(dev) = common::gpu() else { return };
    let (major, minor) = dev.compute_capability().unwrap();
    // The same kernel, its PTX claiming a target one generation past the GPU's.
    let newer = major * 10 + minor + 10;
    let ptx = grid_ids::PTX.replacen(
        &format!(".target sm_{}", grid_ids::TARGET),
        &format!(".target sm_{newer}"),
        1,
    );
    assert_ne!(ptx, grid_ids::PTX);
    let spec = respec(grid_ids::spec(), [1, 1, 1], Box::leak(ptx.into_boxed_str()));
    let t = dev.zeros::<i32>(1).unwrap();
    let args = [tilus::KernelArg::tensor(&t), tilus::KernelArg::tensor(&t)];
    match dev.launch(spec, 1, &args) {
        Err(Error::TargetUnsupported {
            target,
            compute_capability,
            ..
        }) => assert_eq!((target, compute_capability), (newer, (major, minor))),
        other => panic!("{other:?}"),
    }
    // A cluster kernel on a GPU without clusters: refused as such (sm_90 and later run it).
    let out = dev.zeros::<i32>(2).unwrap();
    match cluster2::launch(&dev, 2, &out) {
        Ok(()) => assert!(dev.supports_clusters()),
        Err(Error::ClusterUnsupported { .. }) => assert!(major < 9 || !dev.supports_clusters()),
        Err(e) => panic!("{e}"),
    }
}
