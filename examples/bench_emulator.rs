//! Benchmark (not a test): throughput of the CPU emulator against a plain Rust loop doing the
//! same work on the host, for a histogram (the README's kernel), an element-wise kernel, a
//! scatter-add, `tilus::algo`'s scan and radix sort, and device copies. Every kernel result is
//! checked against the host loop's.
//!
//! cargo run --release --example bench_emulator -- 22     # 2^22 elements (BENCHMARKS.md)
//! TILUS_BENCH_LOG2=22 cargo run --release --example bench_emulator
//!
//! Without a size it runs 2^14 elements once per configuration (CI runs it in a debug build as
//! a correctness check). `TILUS_BENCH_ONLY=histogram` (any part of a row's name and
//! configuration, `scan`, `sort` or `copies`) runs only the matching rows, e.g. under a profiler. Times are the median of the runs; ratios are emulator throughput over
//! host-loop throughput measured in the same process, so machine noise mostly cancels. The
//! host loops run on one thread; the emulator uses as many workers as there are cores unless
//! a row says otherwise.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Instant;
use tilus::prelude::*;
use tilus::EmuOptions;

/// The README's histogram: shared-memory counts by scatter atomics, then one global add per bin
/// (the kernel of `examples/histogram.rs`).
#[path = "histogram.rs"]
#[allow(dead_code)] // the example's `main`
mod readme_example;
use readme_example::histogram;

/// Element-wise `z = a * x + y` (f32).
#[tile_kernel(threads = 256)]
fn axpy(x: GlobalTensor<f32>, y: GlobalTensor<f32>, z: GlobalTensor<f32>, a: f32) {
    let n = x.len();
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let xs = load_global(x, offsets = [start], shape = [4096]);
        let ys = load_global(y, offsets = [start], shape = [4096]);
        store_global(z, xs * a + ys, offsets = [start]);
    }
}

/// Scatter-add `out[index[i]] += values[i]` (i32, global atomics).
#[tile_kernel(threads = 256)]
fn scatter_add(index: GlobalTensor<i32>, values: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let n = index.len();
    for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
        let idx = load_global(index, offsets = [start], shape = [4096], other = -1);
        let vals = load_global(values, offsets = [start], shape = [4096]);
        atomic::global_scatter_add(out, dim = 0, indices = idx, values = vals);
    }
}

const GRID: u32 = 64;
const SCATTER_BINS: usize = 1 << 16;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median seconds of `reps` runs of `host` and of `emu`, interleaved (host, emulator, host,
/// ...) so that a change in the machine's load affects both alike.
fn time2(reps: usize, mut host: impl FnMut(), mut emu: impl FnMut()) -> (f64, f64) {
    let secs = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let (mut h, mut e) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        h.push(secs(&mut host));
        e.push(secs(&mut emu));
    }
    (median(h), median(e))
}

/// The inputs, shared by every configuration.
struct Inputs {
    n: usize,
    bins: Vec<i32>,
    x: Vec<f32>,
    y: Vec<f32>,
    index: Vec<i32>,
    values: Vec<i32>,
}

impl Inputs {
    fn new(n: usize) -> Inputs {
        let mut rng = StdRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
        let mut small = |m: u64| rng.gen_range(0..m);
        let bins = (0..n).map(|_| small(256) as i32).collect();
        let x = (0..n).map(|_| small(1 << 20) as f32 / 1024.0).collect();
        let y = (0..n).map(|_| small(1 << 20) as f32 / 4096.0).collect();
        let index = (0..n).map(|_| small(SCATTER_BINS as u64) as i32).collect();
        let values = (0..n).map(|_| small(1000) as i32 - 500).collect();
        Inputs {
            n,
            bins,
            x,
            y,
            index,
            values,
        }
    }
}

fn host_histogram(values: &[i32], h: &mut [i32]) {
    h.fill(0);
    for &v in values {
        if let Some(c) = h.get_mut(v as usize) {
            *c += 1;
        }
    }
}

fn host_axpy(x: &[f32], y: &[f32], z: &mut [f32], a: f32) {
    for ((z, &x), &y) in z.iter_mut().zip(x).zip(y) {
        *z = a * x + y;
    }
}

fn host_scatter_add(index: &[i32], values: &[i32], out: &mut [i32]) {
    out.fill(0);
    for (&i, &v) in index.iter().zip(values) {
        if let Some(o) = out.get_mut(i as usize) {
            *o = o.wrapping_add(v);
        }
    }
}

/// One result row: elements per second of the emulator and of the host loop.
fn row(what: &str, config: &str, n: usize, emu_s: f64, host_s: f64) {
    let (emu, host) = (n as f64 / emu_s / 1e6, n as f64 / host_s / 1e6);
    println!(
        "{what:<12} {config:<26} emulator {emu:>9.1} M/s   host loop {host:>9.1} M/s   ratio {:.3}",
        emu / host
    );
}

fn fail(what: &str) -> ! {
    eprintln!("{what}: the emulator's result differs from the host loop's");
    std::process::exit(1);
}

/// A workload: runs its kernel on a device against its host loop and prints a row.
type Workload = fn(&Device, &str, &Inputs, usize) -> Result<(), tilus::Error>;

fn bench_histogram(
    dev: &Device,
    config: &str,
    inp: &Inputs,
    reps: usize,
) -> Result<(), tilus::Error> {
    let values = dev.upload(&inp.bins)?;
    let hist = dev.zeros::<i32>(256)?;
    let mut want = vec![0i32; 256];
    let (host_s, emu_s) = time2(
        reps,
        || host_histogram(black_box(&inp.bins), &mut want),
        || {
            hist.copy_from_host(&[0; 256]).unwrap();
            histogram::launch(dev, GRID, &values, &hist).unwrap();
        },
    );
    if hist.download()? != want {
        fail("histogram");
    }
    row("histogram", config, inp.n, emu_s, host_s);
    Ok(())
}

fn bench_axpy(dev: &Device, config: &str, inp: &Inputs, reps: usize) -> Result<(), tilus::Error> {
    let a = 1.5f32;
    let (x, y, z) = (
        dev.upload(&inp.x)?,
        dev.upload(&inp.y)?,
        dev.zeros::<f32>(inp.n)?,
    );
    let mut want = vec![0f32; inp.n];
    let (host_s, emu_s) = time2(
        reps,
        || host_axpy(black_box(&inp.x), &inp.y, &mut want, a),
        || axpy::launch(dev, GRID, &x, &y, &z, a).unwrap(),
    );
    if z.download()? != want {
        fail("axpy");
    }
    row("axpy f32", config, inp.n, emu_s, host_s);
    Ok(())
}

fn bench_scatter_add(
    dev: &Device,
    config: &str,
    inp: &Inputs,
    reps: usize,
) -> Result<(), tilus::Error> {
    let (index, vals) = (dev.upload(&inp.index)?, dev.upload(&inp.values)?);
    let out = dev.zeros::<i32>(SCATTER_BINS)?;
    let mut want = vec![0i32; SCATTER_BINS];
    let zeros = vec![0i32; SCATTER_BINS];
    let (host_s, emu_s) = time2(
        reps,
        || host_scatter_add(black_box(&inp.index), &inp.values, &mut want),
        || {
            out.copy_from_host(&zeros).unwrap();
            scatter_add::launch(dev, GRID, &index, &vals, &out).unwrap();
        },
    );
    if out.download()? != want {
        fail("scatter-add");
    }
    row("scatter-add", config, inp.n, emu_s, host_s);
    Ok(())
}

/// Whether `what` is measured: `TILUS_BENCH_ONLY` (a substring of the row, e.g. `histogram` or
/// `race checks off`), when set, selects rows.
fn wanted(what: &str) -> bool {
    std::env::var("TILUS_BENCH_ONLY").map_or(true, |only| what.contains(&only))
}

/// `tilus::algo`'s inclusive scan of `n` i32 against a host prefix-sum loop, and its radix sort
/// of `n` u32 keys against `sort_unstable` (one thread each; the emulator on every core).
fn algos(dev: &Device, inp: &Inputs, reps: usize) -> Result<(), tilus::Error> {
    use tilus::algo::{ScanOp, ScanStorage, SortOrder, SortStorage};
    let n = inp.n;
    let stream = dev.default_stream();
    let line = |what: &str, host: &str, s: f64, base_s: f64| {
        let rate = |s: f64| n as f64 / s / 1e6;
        println!(
            "{what:<12} {:<26} emulator {:>9.1} M/s   {host:<10} {:>9.1} M/s   ratio {:.3}",
            "",
            rate(s),
            rate(base_s),
            base_s / s
        );
    };
    if wanted("scan") {
        let x = dev.upload(&inp.values)?;
        let out = dev.zeros::<i32>(n)?;
        let mut st = ScanStorage::<i32>::new(dev, n)?;
        let mut host = vec![0i32; n];
        let prefix = |h: &mut [i32]| {
            let mut acc = 0i32;
            for (o, &v) in h.iter_mut().zip(black_box(&inp.values)) {
                acc = acc.wrapping_add(v);
                *o = acc;
            }
        };
        let (host_s, emu_s) = time2(
            reps,
            || prefix(&mut host),
            || st.scan(&stream, ScanOp::Sum, &x, &out, false).unwrap(),
        );
        if out.download()? != host {
            fail("scan");
        }
        line("scan i32", "host loop", emu_s, host_s);
    }
    if wanted("sort") {
        let keys: Vec<u32> = inp
            .index
            .iter()
            .zip(&inp.values)
            .map(|(&i, &v)| (i as u32) << 10 ^ v as u32)
            .collect();
        let k = dev.upload(&keys)?;
        let out = dev.zeros::<u32>(n)?;
        let mut st = SortStorage::<u32>::new(dev, n)?;
        let mut host = Vec::new();
        let (host_s, emu_s) = time2(
            reps,
            || {
                host = black_box(&keys).clone();
                host.sort_unstable();
            },
            || {
                st.sort_keys(&stream, &k, &out, SortOrder::Ascending)
                    .unwrap()
            },
        );
        if out.download()? != host {
            fail("sort");
        }
        line("sort u32", "sort_unstable", emu_s, host_s);
    }
    Ok(())
}

/// Device copy, upload and download of `n` i32 against `memcpy` (`copy_from_slice`).
fn copies(dev: &Device, inp: &Inputs, reps: usize) -> Result<(), tilus::Error> {
    let n = inp.n;
    let src = dev.upload(&inp.values)?;
    let dst = dev.zeros::<i32>(n)?;
    let mut host = vec![0i32; n];
    let mut down = Vec::new();
    let memcpy = || host.copy_from_slice(black_box(&inp.values));
    let (memcpy_s, copy_s) = time2(reps, memcpy, || dev.copy(&src, &dst).unwrap());
    let memcpy = || host.copy_from_slice(black_box(&inp.values));
    let upload = || dst.copy_from_host(black_box(&inp.values)).unwrap();
    let (memcpy2_s, upload_s) = time2(reps, memcpy, upload);
    let mut copied = Vec::new();
    let (to_vec_s, download_s) = time2(
        reps,
        || copied = black_box(&inp.values).to_vec(),
        || down = dst.download().unwrap(),
    );
    if dst.download()? != inp.values || down != inp.values || copied != inp.values {
        fail("copies");
    }
    let gbs = |s: f64| 2.0 * (n * 4) as f64 / s / 1e9; // bytes read + written
    for (what, s, base_s, base) in [
        ("device copy", copy_s, memcpy_s, "memcpy"),
        ("upload", upload_s, memcpy2_s, "memcpy"),
        ("download", download_s, to_vec_s, "to_vec"),
    ] {
        println!(
            "{what:<12} {:>9.2} GB/s   {base:<6} {:>9.2} GB/s   ratio {:.3}",
            gbs(s),
            gbs(base_s),
            base_s / s
        );
    }
    Ok(())
}

fn main() -> Result<(), tilus::Error> {
    let log2: Option<u32> = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("TILUS_BENCH_LOG2").ok())
        .and_then(|s| s.parse().ok());
    let (log2, reps) = match log2 {
        Some(l) => (l.min(28), 7),
        None => (14, 1),
    };
    let n = 1usize << log2;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!("# n = 2^{log2} elements, grid {GRID}, {cores} cores, median of {reps} runs");
    let inp = Inputs::new(n);
    let configs = [
        ("default (race checks on)", EmuOptions::default()),
        (
            "race checks off",
            EmuOptions {
                check_races: false,
                ..EmuOptions::default()
            },
        ),
        (
            "1 worker, race checks on",
            EmuOptions {
                workers: 1,
                ..EmuOptions::default()
            },
        ),
    ];
    let workloads: [(&str, Workload); 3] = [
        ("histogram", bench_histogram),
        ("axpy", bench_axpy),
        ("scatter-add", bench_scatter_add),
    ];
    for (config, opts) in configs {
        let dev = Device::emulator_with(opts);
        for (name, run) in workloads {
            if wanted(&format!("{name} {config}")) {
                run(&dev, config, &inp, reps)?;
            }
        }
    }
    algos(&Device::emulator(), &inp, reps)?;
    if wanted("copies") {
        copies(&Device::emulator(), &inp, reps)?;
    }
    Ok(())
}
