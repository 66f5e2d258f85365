//! Order-preserving compaction (`select_if`, `select_flagged`) and `partition`, in one pass:
//! each tile counts what it keeps, the counts are scanned across tiles by decoupled look-back
//! (`src/algo/lookback.rs`), and every kept element is scattered to its place, the tile's
//! prefix plus its rank among the tile's kept elements (an exclusive scan of the keep flags).
//! `partition` also places the rejected ones, from the end backwards (as CUB does). The last
//! tile writes the number kept.

use super::lookback::{with_packed_lookback, Lookback};
use super::scan::check_lengths;

/// Elements per tile of the compaction kernels.
pub const TILE: usize = 4096;
use crate::prelude::*;

/// A compaction kernel for element type `$t`, given the look-back tokens (an `i32` sum of the
/// tiles' counts). It keeps `x[i]` where `keep[i] != 0` when `flagged != 0`, else where the
/// comparison holds (`by_value`: the closed range `lo..=hi`, or outside it, as
/// [`SelectElement::range`] gives it), and with `partition != 0` places the rest after. On
/// 128 threads, as the comparison kernel: with the one-warp look-back, 512 threads were slower
/// (an H100, 2^28 `i32`, `unique` / `run_length_encode` over this kernel: 2013-2021 / 3485-3494
/// us on 512 threads, 1824-1826 / 3105-3107 on 128). In halves, as the comparison kernel, and
/// (32-bit elements) bounded to 4 blocks an SM: 128 registers, where a partition's ranks and
/// values held across the look-back took 150-157 and 3 blocks. One H100 call (2026-11-27):
/// `unique` / `run_length_encode` 1668-1681 / 2817-2818 us for the whole tile (3 blocks), in
/// halves 1742 / 2968-2978 unbounded, **1593 / 2666-2668** at 4 blocks, 1617-1626 / 2718-2728
/// at 5 (148 bytes spilled).
macro_rules! select_kernel {
    ($name:ident, $t:ident, [$($attr:tt)*], [$($publish:tt)*] [$($lookback:tt)*]) => {
        #[tile_kernel(threads = 128 $($attr)*)]
        fn $name(
            x: GlobalTensor<$t>,
            keep: GlobalTensor<u8>,
            out: GlobalTensor<$t>,
            num: GlobalTensor<i32>,
            agg: GlobalTensor<i32>,
            inc: GlobalTensor<i32>,
            flags: GlobalTensor<i32>,
            status: GlobalTensor<u64>,
            ticket: GlobalTensor<i32>,
            epoch: i32,
            flagged: i32,
            lo: $t,
            hi: $t,
            outside: i32,
            partition: i32,
        ) {
            let n = x.len() as i32;
            let tiles = flags.len() as i32;
            let tile = atomic::global_add(ticket, ones([1])).item() - (epoch - 1) * tiles;
            let start = tile * 4096;
            // In halves, as the comparison kernel (see `select_cmp_kernel!`).
            let at1 = arange(2048) + start;
            let at2 = at1 + 2048;
            let in1 = at1 < n;
            let in2 = at2 < n;
            let v1 = load_global(x, offsets = [start], shape = [2048]);
            let v2 = load_global(x, offsets = [start + 2048], shape = [2048]);
            let k1 = load_global(keep, offsets = [start], shape = [2048], mask = in1 & (flagged != 0));
            let k2 = load_global(keep, offsets = [start + 2048], shape = [2048], mask = in2 & (flagged != 0));
            let sel1 = in1 & select(flagged != 0, k1 != 0, ((v1 >= lo) & (v1 <= hi)) != (outside != 0));
            let sel2 = in2 & select(flagged != 0, k2 != 0, ((v2 >= lo) & (v2 <= hi)) != (outside != 0));
            let first = (sel1 as i32).sum();
            let total = first + (sel2 as i32).sum();
            $($publish)*
            // The ranks, and for a compaction the kept elements staged in shared memory,
            // between publishing the count and looking back, as in `select_cmp_kernel!`.
            let local1 = (sel1 as i32).cumsum(0, exclusive = true);
            let local2 = first + (sel2 as i32).cumsum(0, exclusive = true);
            let stage = shared_tensor::<$t>([4096]);
            if partition == 0 {
                store_shared_scatter(stage, dim = 0, indices = local1, values = v1, mask = sel1);
                store_shared_scatter(stage, dim = 0, indices = local2, values = v2, mask = sel2);
            }
            $($lookback)*
            if partition == 0 {
                // The staged run stored in pieces of 512, as many as hold kept elements (see
                // `select_cmp_kernel!`).
                sync();
                for j in 0..(total + 511) / 512 {
                    let at = j * 512;
                    let kept = load_shared(stage, offsets = [at], shape = [512]);
                    store_global(out, kept, offsets = [prefix + at], mask = arange(512) + at < total);
                }
            } else {
                // Rejected elements go to the end, backwards: the j-th rejected one to n - 1 - j.
                let pos1 = local1 + prefix;
                let place1 = select(sel1, pos1, n - 1 - (at1 - pos1));
                store_global_scatter(out, dim = 0, indices = place1, values = v1, mask = in1);
                let pos2 = local2 + prefix;
                let place2 = select(sel2, pos2, n - 1 - (at2 - pos2));
                store_global_scatter(out, dim = 0, indices = place2, values = v2, mask = in2);
            }
            if tile == (n - 1) / 4096 {
                store_global(num, full([1], prefix + total), offsets = [0]);
            }
        }
    };
}

/// The compaction most calls make, `select_if` with a comparison, as a kernel of its own: no
/// flags to load, no partition (fewer registers than the general kernel). It keeps `x[i]` where
/// `lo <= x[i] <= hi`, or outside that range when `outside != 0` (`SelectElement::range`).
/// Measured on an H100 (2^28 `i32`, `x > 0`), with the block-wide look-back: this kernel 1579
/// us on 256 threads; the general kernel 2251 us on 512 threads and 2954 us on 256. With the
/// one-warp look-back, a throwaway kernel keeping only `x > 0` took 990 us in tiles of 4096 on
/// 128 threads, 1103 on 256, 1065 in 2048 on 128, 1169 in 8192 on 256. Later (one H100
/// call, throwaway copies, 1008-1017 us as the library's kernel was): without any look-back
/// (wrong prefixes, for the time) 665-672 us; the compaction staged before the look-back
/// instead of after it 937-942 us (a block then waits holding no values); 6144 on 384 or 192
/// threads, 2048 on 64, 3072 on 96, 8192 on 256 1058-1089, 1020-1029, 993-1000, 983-990;
/// bounded to 8 blocks an SM 992-995; with the sleep before the look-back (below) 895-911.
/// Session 39 (one H100 call, copies of the 881 us kernel): the kept run stored in pieces of
/// 512 up to the last kept one 797-806 us (of 128, each a scalar a thread, 1012: more
/// instructions; of 1024, 793 at 6 blocks; the whole tile with its masks, 881); the tile
/// versioned so that a full one computes no `inside` mask 857 (more registers, not kept); no
/// look-back at all 656. With the scan packed and the scatter's bound known (`scan_regs.rs`,
/// `known/bounds.rs`) and the bound and sleep below: 737-739 us. Then (one call) the tile in
/// halves, 7 / 8 / 9 / 10 blocks an SM: 689-691 / **686-687** / 716 / 1107-1118 us (10 spills
/// 312 bytes); at 8 blocks, sleeps of 1200 / 2000 / 2500 ns 687 / 686-689 / 699-702 us; tiles
/// of 2048 on 128 threads (9 to 12 blocks an SM) 850-873, of 4096 on 256 threads 1025, of
/// 2048 on 64 810; the kept run shifted to store aligned 16-byte vectors 744-746 (the whole
/// tile 741); no look-back 614. A third call: quarters of 1024 at 8 / 9 blocks 677-682 /
/// 682-690 us against the halves' 686-694 (within 1%, not kept); two halves' counts summed in
/// one reduction (`k1 + (k2 << 16)`) 687-692; halves with no look-back 579-582. CUB's
/// `DeviceSelect::If` took 687-692 us in the same session. Session 42 (one call, CUB 686.3
/// us): 686.5-688.6 us before; the masked scatters element by element 677.1-679.5; and the
/// elements past the end read as `fill` (no position mask) 669.4-670.9.
macro_rules! select_cmp_kernel {
    ($name:ident, $t:ident, [$($attr:tt)*], [$($publish:tt)*] [$($lookback:tt)*]) => {
        #[tile_kernel(threads = 128 $($attr)*)]
        fn $name(
            x: GlobalTensor<$t>,
            out: GlobalTensor<$t>,
            num: GlobalTensor<i32>,
            status: GlobalTensor<u64>,
            ticket: GlobalTensor<i32>,
            epoch: i32,
            lo: $t,
            hi: $t,
            outside: i32,
            fill: $t,
            ahead: i32,
        ) {
            let n = x.len() as i32;
            let tiles = status.len() as i32;
            let tile = atomic::global_add(ticket, ones([1])).item() - (epoch - 1) * tiles;
            let start = tile * 4096;
            // The tile in two halves: both loaded and counted (the count published), then each
            // ranked and staged in turn, so a half's ranks (not the whole tile's) live beside
            // the values: 72 registers with no spill at 7 blocks an SM where the whole tile
            // spilled 64 bytes, 64 at 8 blocks (28 bytes spilled).
            // Elements past the end read as `fill`, a value the test rejects: no mask an element.
            let v1 = load_global(x, offsets = [start], shape = [2048], other = fill);
            let v2 = load_global(x, offsets = [start + 2048], shape = [2048], other = fill);
            // The tile taken `ahead` tiles on (three a multiprocessor), into the L2 meanwhile.
            // (2^28 `i32`, `x > 0`: an H100 674.6 / 677.7 / 672.9 -> 619.1 / 621.1 / 617.2 us,
            // 646.4-683.6 at six a multiprocessor; an H200 566.8-571.1 -> 534.6-535.1, 548.2-
            // 554.7 at one; 2026-11-27. The scan, nearer a copy's rate, lost 9% on the H100.)
            prefetch_global(x, offsets = [start + ahead * 4096], shape = [4096]);
            let kept1 = ((v1 >= lo) & (v1 <= hi)) != (outside != 0);
            let kept2 = ((v2 >= lo) & (v2 <= hi)) != (outside != 0);
            let first = (kept1 as i32).sum();
            let total = first + (kept2 as i32).sum();
            $($publish)*
            // The kept elements compacted in shared memory between publishing the count and
            // looking back (the predecessors publish meanwhile, and the values are dead
            // during the wait).
            let stage = shared_tensor::<$t>([4096]);
            let at1 = (kept1 as i32).cumsum(0, exclusive = true);
            store_shared_scatter(stage, dim = 0, indices = at1, values = v1, mask = kept1);
            let at2 = first + (kept2 as i32).cumsum(0, exclusive = true);
            store_shared_scatter(stage, dim = 0, indices = at2, values = v2, mask = kept2);
            $($lookback)*
            // The staged run stored in pieces of 512 (four elements a thread), only as many as
            // hold kept elements: half the tile's store instructions when half is kept.
            sync();
            for j in 0..(total + 511) / 512 {
                let at = j * 512;
                let kept = load_shared(stage, offsets = [at], shape = [512]);
                store_global(out, kept, offsets = [prefix + at], mask = arange(512) + at < total);
            }
            if tile == (n - 1) / 4096 {
                store_global(num, full([1], prefix + total), offsets = [0]);
            }
        }
    };
}

/// Both compaction kernels of one element type. Each keeps by the closed range `lo..=hi`,
/// inside it or (`!=`) outside, two compares an element (see `SelectElement::range`): six
/// compares and five selects, one for each operator, cost 7% of `select_if`'s time (H100);
/// three compares and a truth table of the operator's code, 3%.
macro_rules! lookback_select {
    ($name:ident, $cmp_name:ident, $t:ident) => {
        lookback_select!(@kernel select_kernel, $name, $t, [], 700);
        lookback_select!(@kernel select_cmp_kernel, $cmp_name, $t, [], 700);
    };
    (
        $name:ident, $cmp_name:ident, $t:ident,
        general_blocks = $general:literal, cmp_blocks = $blocks:literal, cmp_delay = $ns:literal
    ) => {
        lookback_select!(@kernel select_kernel, $name, $t, [, min_blocks_per_sm = $general], 700);
        lookback_select!(@kernel select_cmp_kernel, $cmp_name, $t, [, min_blocks_per_sm = $blocks], $ns);
    };
    // One kernel with the look-back over the tiles' kept counts (an `i32` sum, packed).
    (@kernel $kernel:ident, $name:ident, $t:ident, [$($attr:tt)*], $ns:literal) => {
        with_packed_lookback!(
            $kernel,
            [$name, $t, [$($attr)*],],
            0,
            sum,
            [] [+],
            [(value as u32) as u64] [(word as u32) as i32],
            delay = $ns
        );
    };
}

// How long a kernel sleeps before the look-back's first read, and how many blocks share an SM.
// The 32-bit comparison kernels: 7 blocks an SM (72 registers, no spill) and 1500 ns. Measured
// on an H100 (2^28 `i32`, `x > 0`, builds differing in one setting, alternately in one call,
// 2026-11-27). With the prefetch (two calls): 8 blocks (28 bytes spilled) 612.7-626.1 us, **7
// blocks 605.2-611.6**, 6 blocks 672-679; at 7 blocks, sleeps of 2000 / 2500 / 3500 ns
// 605.7-607.1 / 618.1-619.5 / 617.6-619.6; at 8 blocks, 1000 / 2500 / 3500 ns 628.8-637.0 /
// 611.5-617.5 / 610.7-616.0; the prefetch 2 or 5 tiles an SM on instead of 3, 618.5-626.9.
// Before the prefetch, the whole tile at once: 4 blocks (unbounded, 100 registers) 856 us (700
// ns); 5 blocks 778; 6 blocks 778 (700 ns), 758-762 (1200, 1500, 2000 ns); 7 blocks 765 (900
// ns), 740-742 (1200), 737-739 (1500), 740-747 (2000), 754 (3000); 8 blocks (132 bytes
// spilled) 919; in halves, 8 blocks best (see `select_cmp_kernel!`). More blocks an SM hide
// more of one block's wait; a longer sleep lets its predecessors publish first. Earlier, at 4
// blocks (session 36): no sleep 938-942 us, 300 ns 904-911, 600 895, 800 896-904, 1500 905,
// 2500 1037. The general kernel (flags, partition) keeps 700 ns; its 32-bit forms are bounded
// to 4 blocks an SM (see `select_kernel!`). The 64-bit kernels keep 700 ns and no bound (not
// measured again).
lookback_select!(
    select_i32,
    select_cmp_i32,
    i32,
    general_blocks = 4,
    cmp_blocks = 7,
    cmp_delay = 1500
);
lookback_select!(
    select_u32,
    select_cmp_u32,
    u32,
    general_blocks = 4,
    cmp_blocks = 7,
    cmp_delay = 1500
);
lookback_select!(select_i64, select_cmp_i64, i64);
lookback_select!(select_u64, select_cmp_u64, u64);
lookback_select!(
    select_f32,
    select_cmp_f32,
    f32,
    general_blocks = 4,
    cmp_blocks = 7,
    cmp_delay = 1500
);
lookback_select!(select_f64, select_cmp_f64, f64);

/// Which elements a compaction keeps, compared with a threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keep<T> {
    Greater(T),
    GreaterEq(T),
    Less(T),
    LessEq(T),
    Equal(T),
    NotEqual(T),
}

impl<T: Copy + Default> Keep<T> {
    /// The value compared with.
    fn threshold(self) -> T {
        match self {
            Keep::Greater(t)
            | Keep::GreaterEq(t)
            | Keep::Less(t)
            | Keep::LessEq(t)
            | Keep::Equal(t)
            | Keep::NotEqual(t) => t,
        }
    }
}

/// Element types compaction takes: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
pub trait SelectElement: crate::Element + Copy + Default {
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_select(
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<Self>,
        keep: &impl crate::AsTensor<u8>,
        out: &impl crate::AsTensor<Self>,
        num: &GlobalTensor<i32>,
        st: &Lookback<i32>,
        predicate: Option<Keep<Self>>,
        partition: bool,
    ) -> Result<(), crate::Error>;

    /// `keep` as a closed range and a side: `x` is kept iff `lo <= x && x <= hi`, or iff not
    /// when `outside` (`NotEqual`). An empty range is `lo > hi`. For floats a NaN is in no
    /// range (it compares false), so it is kept by `NotEqual` alone, as by Rust's operators.
    #[doc(hidden)]
    fn range(keep: Keep<Self>) -> (Self, Self, bool);
    /// A value the range test of `(lo, hi, outside)` rejects (the comparison kernel's fill past
    /// the end), `None` when it keeps every value.
    #[doc(hidden)]
    fn reject(lo: Self, hi: Self, outside: bool) -> Option<Self>;
}

/// [`SelectElement::range`] for integers: open ends moved by one, empty past the type's ends.
macro_rules! int_range {
    ($t:ident) => {
        fn range(keep: Keep<$t>) -> ($t, $t, bool) {
            let empty = (1, 0, false);
            match keep {
                Keep::Greater(t) => t.checked_add(1).map_or(empty, |lo| (lo, $t::MAX, false)),
                Keep::GreaterEq(t) => (t, $t::MAX, false),
                Keep::Less(t) => t.checked_sub(1).map_or(empty, |hi| ($t::MIN, hi, false)),
                Keep::LessEq(t) => ($t::MIN, t, false),
                Keep::Equal(t) => (t, t, false),
                Keep::NotEqual(t) => (t, t, true),
            }
        }

        fn reject(lo: $t, hi: $t, outside: bool) -> Option<$t> {
            match (outside, lo <= hi) {
                // Outside a range is kept: a value inside it is not (an empty one keeps all).
                (true, nonempty) => nonempty.then_some(lo),
                // An empty range keeps nothing.
                (false, false) => Some(lo),
                // A range is kept: the value below or above it, where the type has one.
                (false, true) => lo.checked_sub(1).or_else(|| hi.checked_add(1)),
            }
        }
    };
}

/// [`SelectElement::range`] for floats: open ends moved to the next float (`-0.0 < x` is
/// `x >= the least positive subnormal`, as `0.0 < x`), empty for a NaN threshold and past the
/// infinities.
macro_rules! float_range {
    ($t:ident) => {
        fn range(keep: Keep<$t>) -> ($t, $t, bool) {
            let empty = (1.0, 0.0, false);
            let (inf, t) = ($t::INFINITY, keep.threshold());
            if t.is_nan() {
                return (empty.0, empty.1, matches!(keep, Keep::NotEqual(_)));
            }
            match keep {
                Keep::Greater(t) if t == inf => empty,
                Keep::Greater(t) => (t.next_up(), inf, false),
                Keep::GreaterEq(t) => (t, inf, false),
                Keep::Less(t) if t == -inf => empty,
                Keep::Less(t) => (-inf, t.next_down(), false),
                Keep::LessEq(t) => (-inf, t, false),
                Keep::Equal(t) => (t, t, false),
                Keep::NotEqual(t) => (t, t, true),
            }
        }

        fn reject(lo: $t, hi: $t, outside: bool) -> Option<$t> {
            // NaN fails both compares: never inside a range.
            if outside {
                (lo <= hi).then_some(lo)
            } else {
                Some($t::NAN)
            }
        }
    };
}

macro_rules! select_element {
    ($t:ident, $kernel:ident, $cmp_kernel:ident, $range:ident) => {
        impl SelectElement for $t {
            $range!($t);

            fn launch_select(
                stream: &Stream<'_>,
                x: &impl crate::AsTensor<Self>,
                keep: &impl crate::AsTensor<u8>,
                out: &impl crate::AsTensor<Self>,
                num: &GlobalTensor<i32>,
                st: &Lookback<i32>,
                predicate: Option<Keep<Self>>,
                partition: bool,
            ) -> Result<(), crate::Error> {
                let range = predicate.map(Self::range);
                let fill = range.and_then(|(lo, hi, outside)| Self::reject(lo, hi, outside));
                if let (Some((lo, hi, outside)), Some(fill), false) = (range, fill, partition) {
                    return $cmp_kernel::launch_on(
                        stream,
                        st.tiles as u32,
                        x,
                        out,
                        num,
                        &st.status,
                        &st.ticket,
                        st.epoch,
                        lo,
                        hi,
                        outside as i32,
                        fill,
                        3 * stream.device().multiprocessors() as i32,
                    );
                }
                // The general kernel: flags (no predicate), the partition, or a comparison that
                // keeps every value.
                let (lo, hi, outside) =
                    predicate.map_or((Self::default(), Self::default(), false), Self::range);
                $kernel::launch_on(
                    stream,
                    st.tiles as u32,
                    x,
                    keep,
                    out,
                    num,
                    &st.agg,
                    &st.inc,
                    &st.flags,
                    &st.status,
                    &st.ticket,
                    st.epoch,
                    predicate.is_none() as i32,
                    lo,
                    hi,
                    outside as i32,
                    partition as i32,
                )
            }
        }
    };
}

select_element!(i32, select_i32, select_cmp_i32, int_range);
select_element!(u32, select_u32, select_cmp_u32, int_range);
select_element!(i64, select_i64, select_cmp_i64, int_range);
select_element!(u64, select_u64, select_cmp_u64, int_range);
select_element!(f32, select_f32, select_cmp_f32, float_range);
select_element!(f64, select_f64, select_cmp_f64, float_range);

/// The temporary storage of compactions of up to `capacity` elements, reusable without
/// clearing, and the device count of the last run's kept elements.
pub struct SelectStorage {
    lb: Lookback<i32>,
    no_flags: GlobalTensor<u8>,
    num: GlobalTensor<i32>,
}

impl SelectStorage {
    pub fn new(dev: &Device, capacity: usize) -> Result<Self, crate::Error> {
        Ok(SelectStorage {
            lb: Lookback::new(dev, capacity.div_ceil(TILE))?,
            no_flags: dev.zeros(1)?,
            num: dev.zeros(1)?,
        })
    }

    /// The number of elements the last run kept, on the device (ordered on the run's stream).
    pub fn num_selected(&self) -> &GlobalTensor<i32> {
        &self.num
    }

    /// Checks the lengths (`x`, `out` and, for flags, `flags`: `n` each, within the capacity)
    /// and starts a run; `false` when there is nothing to launch (`n == 0`, the count is 0).
    fn start(
        &mut self,
        stream: &Stream<'_>,
        op: &'static str,
        n: usize,
        others: &[usize],
    ) -> Result<bool, crate::Error> {
        for &len in others {
            check_lengths(op, n, len, (self.lb.tiles, TILE))?;
        }
        if n == 0 {
            self.num = stream.device().zeros(1)?;
            return Ok(false);
        }
        self.lb.next_run(stream)?;
        Ok(true)
    }

    fn run<T: SelectElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<T>,
        out: &impl crate::AsTensor<T>,
        keep: Keep<T>,
        partition: bool,
    ) -> Result<(), crate::Error> {
        if !self.start(stream, "select", x.tensor_len(), &[out.tensor_len()])? {
            return Ok(());
        }
        T::launch_select(
            stream,
            x,
            &self.no_flags,
            out,
            &self.num,
            &self.lb,
            Some(keep),
            partition,
        )
    }

    /// The elements of `x` that `keep` holds for, in order, at the start of `out` (the rest of
    /// `out` is left as it was); [`SelectStorage::num_selected`] counts them.
    pub fn select_if<T: SelectElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<T>,
        keep: Keep<T>,
        out: &impl crate::AsTensor<T>,
    ) -> Result<(), crate::Error> {
        self.run(stream, x, out, keep, false)
    }

    /// [`SelectStorage::select_if`], and the rejected elements after them in reverse order:
    /// all of `out` is written.
    pub fn partition<T: SelectElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<T>,
        keep: Keep<T>,
        out: &impl crate::AsTensor<T>,
    ) -> Result<(), crate::Error> {
        self.run(stream, x, out, keep, true)
    }

    /// The elements of `x` whose `flags` are not 0, in order, at the start of `out`.
    pub fn select_flagged<T: SelectElement>(
        &mut self,
        stream: &Stream<'_>,
        x: &impl crate::AsTensor<T>,
        flags: &impl crate::AsTensor<u8>,
        out: &impl crate::AsTensor<T>,
    ) -> Result<(), crate::Error> {
        let lens = [out.tensor_len(), flags.tensor_len()];
        if !self.start(stream, "select_flagged", x.tensor_len(), &lens)? {
            return Ok(());
        }
        T::launch_select(stream, x, flags, out, &self.num, &self.lb, None, false)
    }
}

/// The elements of `x` that `keep` holds for, in order: a new tensor of just those, on `dev`'s
/// default stream, with temporary storage.
pub fn select_if<T: SelectElement>(
    dev: &Device,
    x: &impl crate::AsTensor<T>,
    keep: Keep<T>,
) -> Result<GlobalTensor<T>, crate::Error> {
    let n = x.tensor_len();
    let mut st = SelectStorage::new(dev, n)?;
    let out = dev.zeros::<T>(n)?;
    st.select_if(&dev.default_stream(), x, keep, &out)?;
    let kept = st.num_selected().download()?[0] as usize;
    let result = dev.zeros::<T>(kept)?;
    if kept > 0 {
        dev.copy(&out.view(0..kept)?, &result)?;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::{Keep, SelectElement};

    /// What the kernels test: `lo <= v <= hi`, negated when `outside`.
    fn kept_by<T: PartialOrd>((lo, hi, outside): (T, T, bool), v: T) -> bool {
        (v >= lo && v <= hi) != outside
    }

    /// Every predicate over `thresholds`: the comparison kernel's fill is rejected, and there is
    /// none only when every one of `values` is kept.
    fn check<T: SelectElement + PartialOrd + std::fmt::Debug>(thresholds: &[T], values: &[T]) {
        for &t in thresholds {
            for keep in [
                Keep::Greater(t),
                Keep::GreaterEq(t),
                Keep::Less(t),
                Keep::LessEq(t),
                Keep::Equal(t),
                Keep::NotEqual(t),
            ] {
                let r = T::range(keep);
                match T::reject(r.0, r.1, r.2) {
                    Some(fill) => assert!(!kept_by(r, fill), "{keep:?}: {fill:?} is kept"),
                    None => assert!(
                        values.iter().all(|&v| kept_by(r, v)),
                        "{keep:?}: no fill, yet not every value is kept"
                    ),
                }
            }
        }
    }

    #[test]
    fn fills_are_rejected_and_missing_only_where_all_is_kept() {
        check(
            &[i32::MIN, -1, 0, 7, i32::MAX],
            &[i32::MIN, -1, 0, 1, i32::MAX],
        );
        check(&[0, 1, u32::MAX], &[0, 1, u32::MAX - 1, u32::MAX]);
        check(&[i64::MIN, 0, i64::MAX], &[i64::MIN, 0, i64::MAX]);
        check(&[0, u64::MAX], &[0, 1, u64::MAX]);
        let f = [f32::NEG_INFINITY, -0.0, 0.0, 1.5, f32::INFINITY, f32::NAN];
        check(&f, &f);
        let d = [
            f64::NEG_INFINITY,
            -1.0,
            0.0,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NAN,
        ];
        check(&d, &d);
    }
}
