//! Device-wide algorithms written in tilus itself (no CUDA C), on the GPU and on the emulator:
//! the textbook uses of atomics and of release/acquire between blocks.
//!
//! * [`scan`]: inclusive and exclusive scans in one pass, with decoupled look-back.
//! * [`select`]: order-preserving compaction and partition, in one pass.
//! * [`segmented`]: integer sums of CSR rows (segments), as differences of one scan, and
//!   in-order reductions of rows (`segmented_reduce`: float sums as the sequential loop,
//!   min/max; integer sums as differences of prefixes, a block's rows scanned in chunks).
//! * [`runs`]: `unique` and `run_length_encode` of consecutive equal elements.
//! * [`sort`]: stable LSD radix sorts of keys and of key-value pairs, Onesweep-style.
//! * [`histogram`]: `histogram_even`, counts in equal-width bins, with the kernel chosen by
//!   the number of bins (shared memory, a cluster's distributed shared memory, or global).
//! * [`index_add`](mod@index_add): `out[idx[i]] += vals[i]` for floats (scalars and rows), bit
//!   for bit the sequential loop.
//!
//! ```
//! use tilus::prelude::*;
//!
//! let dev = tilus::Device::emulator();
//! let x: Vec<i32> = (0..10_000).map(|i| (i % 7) - 3).collect();
//! let (input, out) = (dev.upload(&x)?, dev.zeros::<i32>(x.len())?);
//! tilus::algo::inclusive_scan(&dev, &input, &out)?;
//! let want: Vec<i32> = x.iter().scan(0, |s, v| { *s += v; Some(*s) }).collect();
//! assert_eq!(out.download()?, want);
//! # Ok::<(), tilus::Error>(())
//! ```

pub mod histogram;
pub mod index_add;
mod lookback;
pub mod runs;
pub mod scan;
pub mod segmented;
pub mod select;
pub mod sort;

pub use histogram::{histogram_even, histogram_even_on, HistogramCount, HistogramSample};
pub use index_add::{
    index_add, index_add_rows, IndexAddElement, IndexAddRowsStorage, IndexAddStorage,
};
pub use runs::{run_length_encode, unique, RunElement, RunStorage};
pub use scan::{exclusive_scan, inclusive_scan, ScanElement, ScanOp, ScanStorage};
pub use segmented::{
    segmented_reduce, segmented_reduce_on, segmented_sum, SegmentedElement, SegmentedReduceElement,
    SegmentedStorage,
};
pub use select::{select_if, Keep, SelectElement, SelectStorage};
pub use sort::{radix_sort_keys, radix_sort_pairs, SortKey, SortOrder, SortStorage, SortValue};
