//! Runs of equal consecutive elements: `unique` (the first element of each run, as
//! `std::vec::Vec::dedup` keeps) and `run_length_encode` (each run's value and length), built on
//! the order-preserving compaction ([`super::select`]): a pass flags each run's first element
//! (`i == 0` or `x[i] != x[i - 1]`), then one compaction keeps the flagged values and, for the
//! lengths, another keeps the flagged positions, whose differences are the runs' lengths.
//!
//! Equality is the kernel language's `==`: for floats IEEE equality, so `-0.0` and `0.0` are
//! one run and every NaN starts a run of its own (as CUB's `DeviceRunLengthEncode` with
//! `operator==`).

use super::select::{SelectElement, SelectStorage};
use crate::prelude::*;
use crate::AsTensor;

/// Flags each run's first element.
macro_rules! run_flags {
    ($($name:ident: $t:ident),*) => {$(
        #[tile_kernel(threads = 256)]
        fn $name(x: GlobalTensor<$t>, flags: GlobalTensor<u8>) {
            let n = x.len() as i32;
            for start in (block_idx() * 4096..n).step_by(grid_dim() * 4096) {
                let i = arange(4096) + start;
                let here = load_global(x, offsets = [start], shape = [4096]);
                let before = load_global(x, offsets = [start - 1], shape = [4096], mask = i > 0);
                store_global(flags, ((i == 0) | (here != before)) as u8, offsets = [start]);
            }
        }
    )*};
}

run_flags!(flags_i32: i32, flags_u32: u32, flags_i64: i64, flags_u64: u64, flags_f32: f32, flags_f64: f64);

/// Each run's length from the runs' first positions: the next run's start (or `n`) minus its
/// own. `runs` holds the number of runs (the compaction's count).
#[tile_kernel(threads = 256)]
fn run_lengths(
    starts: GlobalTensor<i32>,
    runs: GlobalTensor<i32>,
    lengths: GlobalTensor<i32>,
    n: i32,
) {
    let count = atomic_load(runs, 0, sem = relaxed);
    for first in (block_idx() * 4096..count).step_by(grid_dim() * 4096) {
        let r = arange(4096) + first;
        let at = load_global(starts, offsets = [first], shape = [4096], mask = r < count);
        let next = load_global(
            starts,
            offsets = [first + 1],
            shape = [4096],
            mask = r + 1 < count,
            other = n,
        );
        store_global(lengths, next - at, offsets = [first], mask = r < count);
    }
}

/// Element types of [`unique`] and [`run_length_encode`]: `i32`, `u32`, `i64`, `u64`, `f32`,
/// `f64`.
pub trait RunElement: SelectElement {
    #[doc(hidden)]
    fn launch_flags(
        stream: &Stream<'_>,
        grid: u32,
        x: &impl AsTensor<Self>,
        flags: &TensorView<'_, u8>,
    ) -> Result<(), crate::Error>;
}

macro_rules! run_element {
    ($($t:ty => $kernel:ident),*) => {$(
        impl RunElement for $t {
            fn launch_flags(
                stream: &Stream<'_>,
                grid: u32,
                x: &impl AsTensor<Self>,
                flags: &TensorView<'_, u8>,
            ) -> Result<(), crate::Error> {
                $kernel::launch_on(stream, grid, x, flags)
            }
        }
    )*};
}

run_element!(i32 => flags_i32, u32 => flags_u32, i64 => flags_i64, u64 => flags_u64, f32 => flags_f32, f64 => flags_f64);

/// The temporary storage of `unique` and `run_length_encode` over up to `capacity` elements:
/// the compaction's storage, the run flags, the positions and the runs' starts. Reusable.
pub struct RunStorage {
    select: SelectStorage,
    flags: GlobalTensor<u8>,
    positions: GlobalTensor<i32>,
    starts: GlobalTensor<i32>,
}

impl RunStorage {
    /// Storage for runs of up to `capacity` elements on `dev`.
    pub fn new(dev: &Device, capacity: usize) -> Result<Self, crate::Error> {
        let cap = capacity.max(1);
        Ok(RunStorage {
            select: SelectStorage::new(dev, cap)?,
            flags: dev.zeros(cap)?,
            positions: dev.upload(&(0..cap as i32).collect::<Vec<_>>())?,
            starts: dev.zeros(cap)?,
        })
    }

    /// The number of runs the last call found, on the device (ordered on its stream).
    pub fn num_runs(&self) -> &GlobalTensor<i32> {
        self.select.num_selected()
    }

    /// The first element of each run of equal elements of `x`, in order, at the start of `out`
    /// (the rest of `out` is left as it was); [`RunStorage::num_runs`] counts them. `out` has
    /// `x`'s length, at most the capacity.
    pub fn unique<T: RunElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl AsTensor<T>,
        out: &impl AsTensor<T>,
    ) -> Result<(), crate::Error> {
        let n = x.tensor_len();
        super::scan::within_capacity(n, self.flags.len())?;
        let flags = self.flags.view(0..n)?;
        if n > 0 {
            let grid = n.div_ceil(4096).min(65_536) as u32;
            T::launch_flags(stream, grid, x, &flags)?;
        }
        self.select.select_flagged(stream, x, &flags, out)
    }

    /// Each run of equal elements of `x` as its value (at the start of `values`) and its length
    /// (at the start of `lengths`), in order; [`RunStorage::num_runs`] counts the runs. `values`
    /// and `lengths` have `x`'s length, at most the capacity.
    pub fn run_length_encode<T: RunElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl AsTensor<T>,
        values: &impl AsTensor<T>,
        lengths: &impl AsTensor<i32>,
    ) -> Result<(), crate::Error> {
        let n = x.tensor_len();
        super::scan::same_length("run_length_encode (lengths)", n, lengths.tensor_len())?;
        self.unique(stream, x, values)?;
        if n == 0 {
            return Ok(());
        }
        let (flags, positions) = (self.flags.view(0..n)?, self.positions.view(0..n)?);
        let starts = self.starts.view(0..n)?;
        self.select
            .select_flagged(stream, &positions, &flags, &starts)?;
        let grid = n.div_ceil(4096).min(65_536) as u32;
        run_lengths::launch_on(
            stream,
            grid,
            &starts,
            self.select.num_selected(),
            lengths,
            n as i32,
        )
    }
}

/// The first element of each run of equal consecutive elements of `x`, as a new tensor, on
/// `dev`'s default stream, with temporary storage.
pub fn unique<T: RunElement>(
    dev: &Device,
    x: &impl AsTensor<T>,
) -> Result<GlobalTensor<T>, crate::Error> {
    let n = x.tensor_len();
    let mut st = RunStorage::new(dev, n)?;
    let out = dev.zeros::<T>(n.max(1))?;
    st.unique(&dev.default_stream(), x, &out.view(0..n)?)?;
    let runs = st.num_runs().download()?[0] as usize;
    let result = dev.zeros::<T>(runs)?;
    if runs > 0 {
        dev.copy(&out.view(0..runs)?, &result)?;
    }
    Ok(result)
}

/// Each run of equal consecutive elements of `x` as (value, length), as two new tensors, on
/// `dev`'s default stream, with temporary storage.
pub fn run_length_encode<T: RunElement>(
    dev: &Device,
    x: &impl AsTensor<T>,
) -> Result<(GlobalTensor<T>, GlobalTensor<i32>), crate::Error> {
    let n = x.tensor_len();
    let mut st = RunStorage::new(dev, n)?;
    let (vals, lens) = (dev.zeros::<T>(n.max(1))?, dev.zeros::<i32>(n.max(1))?);
    st.run_length_encode(
        &dev.default_stream(),
        x,
        &vals.view(0..n)?,
        &lens.view(0..n)?,
    )?;
    let runs = st.num_runs().download()?[0] as usize;
    let (v, l) = (dev.zeros::<T>(runs)?, dev.zeros::<i32>(runs)?);
    if runs > 0 {
        dev.copy(&vals.view(0..runs)?, &v)?;
        dev.copy(&lens.view(0..runs)?, &l)?;
    }
    Ok((v, l))
}
