//! The tile collectives on every backend, against CPU references written here (plain sorts,
//! prefix sums, counts): reductions along an axis (`sum`, `min`, `max`, `argmin`, `argmax`,
//! `any`, `all`, keepdims, negative axes), scans (`cumsum`, `cumprod`, `cummin`, `cummax`,
//! `scan` with the bitwise operators; inclusive, exclusive, reverse), sorts and top-k (with
//! duplicates, `-0.0`/`+0.0`, NaNs and infinities), `take` along either axis with indices out of
//! range, `equal_rank` and `histogram`, on shapes that are not multiples of the block and on
//! 32, 128 and 256 threads, for the integer and float types where the operation is defined.
//!
//! Float sums and products depend on the order of combination: the independent references use
//! inputs whose sums and products are exact in any order (multiples of 1/4, powers of two).
//! Random floats are checked against `tilus::core::collective`, which defines the order both
//! back ends follow. Results are compared bit for bit.

mod common;

use common::{assemble_all, backends, places_from, wrapping_starts, Rng};
use std::cmp::Ordering;
use std::fmt::Debug;
use tilus::core::elem::Elem;
use tilus::prelude::*;
use tilus::Element;

// ---------------------------------------------------------------------------------------------
// Element types as the references see them.

/// An element type of the tests: exact arithmetic for the references (integers wrap, floats are
/// summed in `f64` and rounded once, which is exact for the tests' inputs).
trait T: Element + Elem + Copy + PartialEq + Debug + Default + Send + Sync + 'static {
    const FLOAT: bool;
    fn f(self) -> f64;
    fn of_f(x: f64) -> Self;
    fn i(self) -> i128;
    fn of_i(x: i128) -> Self;
    /// A test value: `v` for integers (wrapped into the type), `v / 4` for floats.
    fn small(v: i32) -> Self {
        if Self::FLOAT {
            Self::of_f(v as f64 * 0.25)
        } else {
            Self::of_i(v as i128)
        }
    }
    fn bits(self) -> u64 {
        Elem::to_bits(self)
    }
    fn is_nan(self) -> bool {
        Self::FLOAT && self.f().is_nan()
    }
    /// The sort order: integers by value, floats by IEEE 754 `totalOrder`.
    fn total(self, o: Self) -> Ordering {
        if Self::FLOAT {
            self.f().total_cmp(&o.f())
        } else {
            self.i().cmp(&o.i())
        }
    }
    /// `<` of the arithmetic (false with a NaN; `-0.0 < +0.0` is false).
    fn less(self, o: Self) -> bool {
        if Self::FLOAT {
            self.f() < o.f()
        } else {
            self.i() < o.i()
        }
    }
    /// The identity of `min` (a canonical NaN for floats) and of `max`.
    fn min_id() -> Self;
    fn max_id() -> Self;
}

macro_rules! int_t {
    ($($t:ty),*) => {$(
        impl T for $t {
            const FLOAT: bool = false;
            fn f(self) -> f64 { self as f64 }
            fn of_f(x: f64) -> Self { x as $t }
            fn i(self) -> i128 { self as i128 }
            fn of_i(x: i128) -> Self { x as $t }
            fn min_id() -> Self { <$t>::MAX }
            fn max_id() -> Self { <$t>::MIN }
        }
    )*};
}
int_t!(i32, u8, i64, u32, i8, i16, u16);

impl T for f32 {
    const FLOAT: bool = true;
    fn f(self) -> f64 {
        self as f64
    }
    fn of_f(x: f64) -> Self {
        x as f32
    }
    fn i(self) -> i128 {
        self as i128
    }
    fn of_i(x: i128) -> Self {
        x as f32
    }
    fn min_id() -> Self {
        f32::from_bits(0x7fff_ffff)
    }
    fn max_id() -> Self {
        f32::from_bits(0x7fff_ffff)
    }
}

macro_rules! half_t {
    ($($t:ty),*) => {$(
        impl T for $t {
            const FLOAT: bool = true;
            fn f(self) -> f64 { self.to_f64() }
            // Through `f32`: exact for the tests' values, then rounded once, as the back ends
            // round a result computed in `f32`.
            fn of_f(x: f64) -> Self { <$t>::from_f32(x as f32) }
            fn i(self) -> i128 { self.to_f64() as i128 }
            fn of_i(x: i128) -> Self { <$t>::from_f32(x as f32) }
            fn min_id() -> Self { <$t>::from_bits(0x7fff) }
            fn max_id() -> Self { <$t>::from_bits(0x7fff) }
        }
    )*};
}
half_t!(f16, bf16);

/// A float result: rounded once to the type, a NaN the canonical one the back ends produce.
fn round<E: T>(x: f64) -> E {
    if x.is_nan() {
        E::min_id()
    } else {
        E::of_f(x)
    }
}

/// The sum of `xs`: wrapping for integers; for floats exact (for the tests' inputs) from `-0.0`,
/// the additive identity (a sum of `-0.0`s is `-0.0`), then rounded once.
fn sum<E: T>(xs: impl Iterator<Item = E>) -> E {
    if E::FLOAT {
        round(xs.fold(-0.0f64, |a, x| a + x.f()))
    } else {
        E::of_i(xs.fold(0i128, |a, x| a.wrapping_add(x.i())))
    }
}

fn prod<E: T>(xs: impl Iterator<Item = E>) -> E {
    if E::FLOAT {
        round(xs.fold(1.0f64, |a, x| a * x.f()))
    } else {
        E::of_i(xs.fold(1i128, |a, x| a.wrapping_mul(x.i())))
    }
}

/// An inclusive (or exclusive, or reverse) scan whose every element is `fold` of its own
/// prefix of the line, computed exactly and rounded once (as the back ends round each result).
fn exact_scan<E: T>(l: Vec<E>, exclusive: bool, reverse: bool, fold: fn(Vec<E>) -> E) -> Vec<E> {
    let n = l.len();
    (0..n)
        .map(|k| {
            let range = match (reverse, exclusive) {
                (false, false) => 0..k + 1,
                (false, true) => 0..k,
                (true, false) => k..n,
                (true, true) => k + 1..n,
            };
            fold(l[range].to_vec())
        })
        .collect()
}

/// A scan's sum: an exclusive scan starts with `0` (`+0.0`), not the identity `-0.0`.
fn sum_of<E: T>(l: Vec<E>) -> E {
    if l.is_empty() {
        E::small(0)
    } else {
        sum(l.into_iter())
    }
}

fn prod_of<E: T>(l: Vec<E>) -> E {
    prod(l.into_iter())
}

/// The minimum (`max = false`) or maximum: NaNs ignored (a canonical NaN when all are), and
/// `-0.0 < +0.0`.
fn best<E: T>(max: bool, xs: impl Iterator<Item = E>) -> E {
    let mut b: Option<E> = None;
    for x in xs.filter(|x| !x.is_nan()) {
        b = Some(match b {
            None => x,
            Some(b) => {
                let o = x.total(b);
                if (max && o == Ordering::Greater) || (!max && o == Ordering::Less) {
                    x
                } else {
                    b
                }
            }
        });
    }
    b.unwrap_or(if max { E::max_id() } else { E::min_id() })
}

/// The index of the first minimum or maximum: NaNs never win (0 when all are NaN), equal values
/// (`-0.0` and `+0.0` too) go to the lowest index.
fn arg_best<E: T>(max: bool, xs: impl Iterator<Item = E>) -> i32 {
    let mut b: Option<(usize, E)> = None;
    for (k, x) in xs.enumerate() {
        if x.is_nan() {
            continue;
        }
        let better = match b {
            None => true,
            Some((_, y)) => {
                if max {
                    y.less(x)
                } else {
                    x.less(y)
                }
            }
        };
        if better {
            b = Some((k, x));
        }
    }
    b.map_or(0, |(k, _)| k as i32)
}

/// A `[r, c]` tile's line `l` along `axis` (rows for 1, columns for 0).
fn line<E: Copy>(x: &[E], r: usize, c: usize, axis: usize, l: usize) -> Vec<E> {
    if axis == 1 {
        x[l * c..(l + 1) * c].to_vec()
    } else {
        (0..r).map(|i| x[i * c + l]).collect()
    }
}

/// The `[r, c]` tile with each line along `axis` replaced by `f(line)` (of the same length).
fn per_line<E: Copy + Default>(
    x: &[E],
    r: usize,
    c: usize,
    axis: usize,
    f: impl Fn(Vec<E>) -> Vec<E>,
) -> Vec<E> {
    let mut out = vec![E::default(); r * c];
    let lines = if axis == 1 { r } else { c };
    for l in 0..lines {
        for (k, y) in f(line(x, r, c, axis, l)).into_iter().enumerate() {
            let at = if axis == 1 { l * c + k } else { k * c + l };
            out[at] = y;
        }
    }
    out
}

/// An inclusive scan with `op`, from the front or (`reverse`) the back; `exclusive` shifts it by
/// one, starting with `first`.
fn scan<E: Copy>(
    xs: Vec<E>,
    op: impl Fn(E, E) -> E,
    exclusive: bool,
    reverse: bool,
    first: E,
) -> Vec<E> {
    let n = xs.len();
    let at = |k: usize| if reverse { n - 1 - k } else { k };
    let mut out = xs.clone();
    let mut acc: Option<E> = None;
    for k in 0..n {
        let x = xs[at(k)];
        out[at(k)] = if exclusive {
            acc.unwrap_or(first)
        } else {
            acc.map_or(x, |a| op(a, x))
        };
        acc = Some(acc.map_or(x, |a| op(a, x)));
    }
    out
}

/// The stable sorting permutation of `xs` (descending keeps equal keys in order too).
fn order<E: T>(xs: &[E], descending: bool) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&a, &b| {
        let o = xs[a].total(xs[b]);
        if descending {
            o.reverse()
        } else {
            o
        }
    });
    idx
}

fn bits<E: T>(xs: &[E]) -> Vec<u64> {
    xs.iter().map(|x| x.bits()).collect()
}

/// Compare bit for bit, naming the first difference.
#[track_caller]
fn same<E: T>(got: &[E], want: &[E], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i].bits() != want[i].bits()) {
        let near = i.saturating_sub(4)..(i + 5).min(got.len());
        panic!(
            "{what}: element {i} is {:?}, expected {:?} (elements {near:?}: got {:?}, expected {:?}; the inputs: replay with the printed TILUS_SEED)",
            got[i],
            want[i],
            &got[near.clone()],
            &want[near.clone()]
        );
    }
}

#[track_caller]
fn same_i32(got: &[i32], want: &[i32], what: &str) {
    same(got, want, what)
}

/// `n` test values from `lo..hi` (`E::small`); `i32::MIN..i32::MAX` means any `i32`.
fn random<E: T>(rng: &mut Rng, n: usize, lo: i32, hi: i32) -> Vec<E> {
    (0..n)
        .map(|_| {
            E::small(if (lo, hi) == (i32::MIN, i32::MAX) {
                rng.next_u64() as i32
            } else {
                rng.range(lo, hi)
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Reductions along an axis.

/// Reductions of a `[r, c]` tile: `v` gets the values (rows' sums, mins, maxes; columns' sums,
/// mins with keepdims, rows' maxes with keepdims, columns' maxes), `ix` the indices (rows'
/// argmin and argmax, columns' argmin and argmax with keepdims, the flat argmax).
macro_rules! reductions {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, v: GlobalTensor<$t>, ix: GlobalTensor<i32>) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            store_global(v, t.sum(1), offsets = [0]);
            store_global(v, t.min(axis = 1), offsets = [$r]);
            store_global(v, t.max(axis = -1), offsets = [2 * $r]);
            store_global(v, t.sum(-2), offsets = [3 * $r]);
            store_global(
                v.view(3 * $r + $c, [1, $c]),
                t.min(axis = 0, keepdims = true),
                offsets = [0, 0],
            );
            store_global(
                v.view(3 * $r + 2 * $c, [$r, 1]),
                t.max(axis = 1, keepdims = true),
                offsets = [0, 0],
            );
            store_global(v, t.max(axis = 0), offsets = [4 * $r + 2 * $c]);
            store_global(ix, t.argmin(axis = 1), offsets = [0]);
            store_global(ix, t.argmax(axis = -1), offsets = [$r]);
            store_global(ix, t.argmin(axis = 0), offsets = [2 * $r]);
            store_global(
                ix.view(2 * $r + $c, [1, $c]),
                t.argmax(axis = 0, keepdims = true),
                offsets = [0, 0],
            );
            store_global(ix, full([1], t.argmax()), offsets = [2 * $r + 2 * $c]);
        }
    };
}

reductions!(red_i32_32, i32, 32, 3, 12);
reductions!(red_i32_128, i32, 128, 5, 7);
reductions!(red_i32_256, i32, 256, 64, 16);
reductions!(red_i32_wide, i32, 128, 16, 64);
reductions!(red_u8, u8, 256, 5, 7);
reductions!(red_i64, i64, 32, 16, 64);
reductions!(red_f32, f32, 128, 64, 16);
reductions!(red_f32_special, f32, 32, 5, 7);
reductions!(red_f16, f16, 32, 3, 12);
reductions!(red_bf16, bf16, 256, 16, 64);

/// The references of [`reductions!`] for input `x` of shape `[r, c]`.
fn reductions_ref<E: T>(x: &[E], r: usize, c: usize) -> (Vec<E>, Vec<i32>) {
    let rows = |f: &dyn Fn(Vec<E>) -> E| (0..r).map(|l| f(line(x, r, c, 1, l))).collect::<Vec<_>>();
    let cols = |f: &dyn Fn(Vec<E>) -> E| (0..c).map(|l| f(line(x, r, c, 0, l))).collect::<Vec<_>>();
    let mut v = Vec::new();
    v.extend(rows(&|l| sum(l.into_iter())));
    v.extend(rows(&|l| best(false, l.into_iter())));
    v.extend(rows(&|l| best(true, l.into_iter())));
    v.extend(cols(&|l| sum(l.into_iter())));
    v.extend(cols(&|l| best(false, l.into_iter())));
    v.extend(rows(&|l| best(true, l.into_iter())));
    v.extend(cols(&|l| best(true, l.into_iter())));
    let rows_i = |max: bool| (0..r).map(move |l| arg_best(max, line(x, r, c, 1, l).into_iter()));
    let cols_i = |max: bool| (0..c).map(move |l| arg_best(max, line(x, r, c, 0, l).into_iter()));
    let mut ix: Vec<i32> = Vec::new();
    ix.extend(rows_i(false));
    ix.extend(rows_i(true));
    ix.extend(cols_i(false));
    ix.extend(cols_i(true));
    ix.push(arg_best(true, x.iter().copied()));
    (v, ix)
}

type Launch3<A, B, C> = fn(&Device, &GlobalTensor<A>, &GlobalTensor<B>, &GlobalTensor<C>);

fn check_reductions<E: T>(name: &str, r: usize, c: usize, x: &[E], launch: Launch3<E, E, i32>) {
    let (want_v, want_i) = reductions_ref(x, r, c);
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let vd = dev.upload(&vec![E::default(); want_v.len()]).unwrap();
        let id = dev.full(want_i.len(), -7i32).unwrap();
        launch(&dev, &xd, &vd, &id);
        let what = format!("{name} on {dev:?}");
        same(&vd.download().unwrap(), &want_v, &what);
        same_i32(&id.download().unwrap(), &want_i, &what);
    }
}

macro_rules! run_reductions {
    ($rng:expr, $k:ident, $t:ty, $r:literal, $c:literal, $lo:expr, $hi:expr) => {{
        assemble_all(stringify!($k), $k::PTX, $k::TARGET);
        let x: Vec<$t> = random($rng, $r * $c, $lo, $hi);
        check_reductions(stringify!($k), $r, $c, &x, |d, a, b, c| {
            $k::launch(d, 1, a, b, c).unwrap()
        });
    }};
}

#[test]
fn reductions_along_rows_and_columns() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        // Few distinct values: ties everywhere.
        run_reductions!(&mut rng, red_i32_32, i32, 3, 12, -5, 5);
        run_reductions!(&mut rng, red_i32_128, i32, 5, 7, -1_000_000, 1_000_000);
        run_reductions!(&mut rng, red_i32_256, i32, 64, 16, i32::MIN, i32::MAX);
        run_reductions!(&mut rng, red_i32_wide, i32, 16, 64, -3, 3);
        run_reductions!(&mut rng, red_u8, u8, 5, 7, 0, 256);
        run_reductions!(&mut rng, red_i64, i64, 16, 64, i32::MIN, i32::MAX);
        // Multiples of 1/4: every sum is exact in any order.
        run_reductions!(&mut rng, red_f32, f32, 64, 16, -4000, 4000);
        run_reductions!(&mut rng, red_f16, f16, 3, 12, -40, 40);
        run_reductions!(&mut rng, red_bf16, bf16, 16, 64, -200, 200);
    }
}

#[test]
fn i64_reductions_see_all_64_bits() {
    let mut rng = Rng::from_env_or_clock();
    assemble_all("red_i64", red_i64::PTX, red_i64::TARGET);
    let x: Vec<i64> = (0..16 * 64).map(|_| rng.next_u64() as i64).collect();
    check_reductions("red_i64", 16, 64, &x, |d, a, b, c| {
        red_i64::launch(d, 1, a, b, c).unwrap()
    });
}

#[test]
fn arg_reductions_with_ties_nans_and_signed_zeros() {
    assemble_all(
        "red_f32_special",
        red_f32_special::PTX,
        red_f32_special::TARGET,
    );
    let mut rng = Rng::from_env_or_clock();
    let specials = [
        f32::NAN,
        -0.0,
        0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    for round in 0..20 {
        let mut x: Vec<f32> = (0..35)
            .map(|_| specials[rng.range(0, specials.len() as i32) as usize])
            .collect();
        if round == 0 {
            // A row of NaNs (argmin/argmax 0, min/max NaN), a row of zeros of both signs.
            x[7..14].fill(f32::NAN);
            x[14..21].copy_from_slice(&[0.0, -0.0, 0.0, -0.0, -0.0, 0.0, 0.0]);
            // A row of `-0.0`s (its sum is `-0.0`, the identity's sign).
            x[21..28].fill(-0.0);
        }
        if round == 1 {
            // A column of `-0.0`s.
            for r in 0..5 {
                x[r * 7 + 2] = -0.0;
            }
        }
        check_reductions("red_f32_special", 5, 7, &x, |d, a, b, c| {
            red_f32_special::launch(d, 1, a, b, c).unwrap()
        });
    }
}

/// `any` and `all` along axes, as integers.
#[tile_kernel(threads = 128)]
fn any_all(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(x.view(0, [5, 7]), offsets = [0, 0], shape = [5, 7]);
    let p = t > 0;
    store_global(out, p.any(1) as i32, offsets = [0]);
    store_global(out, p.all(axis = 1) as i32, offsets = [5]);
    store_global(out, p.any(0) as i32, offsets = [10]);
    store_global(
        out.view(17, [1, 7]),
        p.all(-2, keepdims = true) as i32,
        offsets = [0, 0],
    );
}

#[test]
fn any_and_all_along_axes() {
    assemble_all("any_all", any_all::PTX, any_all::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..10 {
        let x = rng.vec(35, -1, 5);
        let p: Vec<bool> = x.iter().map(|&v| v > 0).collect();
        let mut want = Vec::new();
        want.extend((0..5).map(|l| line(&p, 5, 7, 1, l).iter().any(|&b| b) as i32));
        want.extend((0..5).map(|l| line(&p, 5, 7, 1, l).iter().all(|&b| b) as i32));
        want.extend((0..7).map(|l| line(&p, 5, 7, 0, l).iter().any(|&b| b) as i32));
        want.extend((0..7).map(|l| line(&p, 5, 7, 0, l).iter().all(|&b| b) as i32));
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let out = dev.full(24, -1i32).unwrap();
            any_all::launch(&dev, 1, &xd, &out).unwrap();
            same_i32(&out.download().unwrap(), &want, &format!("{dev:?}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scans.

/// Scans of a `[r, c]` tile, each stored as a `[r, c]` block of `out`.
macro_rules! scans {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, out: GlobalTensor<$t>) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            let n = $r * $c;
            store_global(out.view(0, [$r, $c]), t.cumsum(1), offsets = [0, 0]);
            store_global(
                out.view(n, [$r, $c]),
                t.cumsum(1, exclusive = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(2 * n, [$r, $c]),
                t.cumsum(0, reverse = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(3 * n, [$r, $c]),
                t.cumsum(axis = -2, exclusive = true, reverse = true),
                offsets = [0, 0],
            );
            store_global(out.view(4 * n, [$r, $c]), t.cummin(1), offsets = [0, 0]);
            store_global(
                out.view(5 * n, [$r, $c]),
                t.cummax(0, exclusive = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(6 * n, [$r, $c]),
                t.cummin(axis = 0, reverse = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(7 * n, [$r, $c]),
                t.scan(max, axis = 1, exclusive = true, reverse = true),
                offsets = [0, 0],
            );
        }
    };
}

scans!(scan_i32_32, i32, 32, 3, 12);
scans!(scan_i32_128, i32, 128, 5, 7);
scans!(scan_i32_256, i32, 256, 64, 16);
scans!(scan_i32_wide, i32, 256, 16, 64);
scans!(scan_u8, u8, 128, 16, 64);
scans!(scan_i64, i64, 32, 5, 7);
scans!(scan_f32, f32, 256, 64, 16);
scans!(scan_f32_wide, f32, 32, 16, 64);
scans!(scan_f16, f16, 128, 5, 7);
scans!(scan_bf16, bf16, 32, 3, 12);

fn scans_ref<E: T>(x: &[E], r: usize, c: usize) -> Vec<E> {
    let min = |a: E, b: E| best(false, [a, b].into_iter());
    let max = |a: E, b: E| best(true, [a, b].into_iter());
    let mut out = Vec::new();
    out.extend(per_line(x, r, c, 1, |l| {
        exact_scan(l, false, false, sum_of)
    }));
    out.extend(per_line(x, r, c, 1, |l| exact_scan(l, true, false, sum_of)));
    out.extend(per_line(x, r, c, 0, |l| exact_scan(l, false, true, sum_of)));
    out.extend(per_line(x, r, c, 0, |l| exact_scan(l, true, true, sum_of)));
    out.extend(per_line(x, r, c, 1, |l| {
        scan(l, min, false, false, E::min_id())
    }));
    out.extend(per_line(x, r, c, 0, |l| {
        scan(l, max, true, false, E::max_id())
    }));
    out.extend(per_line(x, r, c, 0, |l| {
        scan(l, min, false, true, E::min_id())
    }));
    out.extend(per_line(x, r, c, 1, |l| {
        scan(l, max, true, true, E::max_id())
    }));
    out
}

type Launch2<A, B> = fn(&Device, &GlobalTensor<A>, &GlobalTensor<B>);

fn check_scans<E: T>(name: &str, r: usize, c: usize, x: &[E], launch: Launch2<E, E>) {
    let want = scans_ref(x, r, c);
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let out = dev.upload(&vec![E::default(); want.len()]).unwrap();
        launch(&dev, &xd, &out);
        let got = out.download().unwrap();
        let what = format!("{name} on {dev:?}");
        for (p, part) in [
            "cumsum(1)",
            "cumsum(1, exclusive)",
            "cumsum(0, reverse)",
            "cumsum(-2, exclusive, reverse)",
            "cummin(1)",
            "cummax(0, exclusive)",
            "cummin(0, reverse)",
            "scan(max, 1, exclusive, reverse)",
        ]
        .iter()
        .enumerate()
        {
            let n = r * c;
            same(
                &got[p * n..(p + 1) * n],
                &want[p * n..(p + 1) * n],
                &format!("{part}: {what}"),
            );
        }
    }
}

macro_rules! run_scans {
    ($rng:expr, $k:ident, $t:ty, $r:literal, $c:literal, $lo:expr, $hi:expr) => {{
        assemble_all(stringify!($k), $k::PTX, $k::TARGET);
        let mut x: Vec<$t> = random($rng, $r * $c, $lo, $hi);
        if <$t as T>::FLOAT {
            // Zeros of both signs: running sums and minima keep the sign rules.
            for v in x.iter_mut() {
                if $rng.range(0, 8) == 0 {
                    *v = <$t as T>::of_f(if $rng.range(0, 2) == 0 { -0.0 } else { 0.0 });
                }
            }
        }
        check_scans(stringify!($k), $r, $c, &x, |d, a, b| {
            $k::launch(d, 1, a, b).unwrap()
        });
    }};
}

#[test]
fn scans_inclusive_exclusive_and_reverse() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        run_scans!(&mut rng, scan_i32_32, i32, 3, 12, -5, 5);
        run_scans!(&mut rng, scan_i32_128, i32, 5, 7, i32::MIN, i32::MAX);
        run_scans!(&mut rng, scan_i32_256, i32, 64, 16, -1000, 1000);
        run_scans!(&mut rng, scan_i32_wide, i32, 16, 64, -1000, 1000);
        run_scans!(&mut rng, scan_u8, u8, 16, 64, 0, 256);
        run_scans!(&mut rng, scan_i64, i64, 5, 7, i32::MIN, i32::MAX);
        run_scans!(&mut rng, scan_f32, f32, 64, 16, -4000, 4000);
        run_scans!(&mut rng, scan_f32_wide, f32, 16, 64, -4000, 4000);
        run_scans!(&mut rng, scan_f16, f16, 5, 7, -40, 40);
        run_scans!(&mut rng, scan_bf16, bf16, 3, 12, -40, 40);
    }
}

/// Products and the bitwise scans.
macro_rules! prod_scans {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, out: GlobalTensor<$t>) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            let n = $r * $c;
            store_global(out.view(0, [$r, $c]), t.cumprod(1), offsets = [0, 0]);
            store_global(
                out.view(n, [$r, $c]),
                t.cumprod(0, exclusive = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(2 * n, [$r, $c]),
                t.cumprod(1, reverse = true),
                offsets = [0, 0],
            );
            store_global(
                out.view(3 * n, [$r, $c]),
                t.scan(mul, axis = 0, exclusive = true, reverse = true),
                offsets = [0, 0],
            );
        }
    };
}

prod_scans!(prod_i32, i32, 128, 5, 7);
prod_scans!(prod_u8, u8, 32, 3, 12);
prod_scans!(prod_f32, f32, 256, 64, 16);
prod_scans!(prod_f32_wide, f32, 128, 16, 64);
prod_scans!(prod_f16, f16, 32, 5, 7);
prod_scans!(prod_bf16, bf16, 128, 3, 12);

fn check_prods<E: T>(name: &str, r: usize, c: usize, x: &[E], launch: Launch2<E, E>) {
    // Each product recomputed from its line (exact in `f64` for these inputs), rounded once.
    let mut want = Vec::new();
    want.extend(per_line(x, r, c, 1, |l| {
        exact_scan(l, false, false, prod_of)
    }));
    want.extend(per_line(x, r, c, 0, |l| {
        exact_scan(l, true, false, prod_of)
    }));
    want.extend(per_line(x, r, c, 1, |l| {
        exact_scan(l, false, true, prod_of)
    }));
    want.extend(per_line(x, r, c, 0, |l| exact_scan(l, true, true, prod_of)));
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let out = dev.upload(&vec![E::default(); want.len()]).unwrap();
        launch(&dev, &xd, &out);
        same(
            &out.download().unwrap(),
            &want,
            &format!("{name} on {dev:?}"),
        );
    }
}

macro_rules! run_prods {
    ($rng:expr, $k:ident, $t:ty, $r:literal, $c:literal) => {{
        assemble_all(stringify!($k), $k::PTX, $k::TARGET);
        let x: Vec<$t> = if <$t as T>::FLOAT {
            // Powers of two of both signs: every product exact in `f32`.
            let p = [0.5f64, 1.0, 2.0, -0.5, -1.0, -2.0];
            (0..$r * $c)
                .map(|_| <$t as T>::of_f(p[$rng.range(0, 6) as usize]))
                .collect()
        } else {
            random($rng, $r * $c, -300, 300)
        };
        check_prods(stringify!($k), $r, $c, &x, |d, a, b| {
            $k::launch(d, 1, a, b).unwrap()
        });
    }};
}

#[test]
fn cumulative_products() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        run_prods!(&mut rng, prod_i32, i32, 5, 7);
        run_prods!(&mut rng, prod_u8, u8, 3, 12);
        run_prods!(&mut rng, prod_f32, f32, 64, 16);
        run_prods!(&mut rng, prod_f32_wide, f32, 16, 64);
        run_prods!(&mut rng, prod_f16, f16, 5, 7);
        run_prods!(&mut rng, prod_bf16, bf16, 3, 12);
    }
}

/// The bitwise scans of integers.
#[tile_kernel(threads = 256)]
fn bit_scans(
    x: GlobalTensor<u8>,
    y: GlobalTensor<i64>,
    out8: GlobalTensor<u8>,
    out64: GlobalTensor<i64>,
) {
    let t = load_global(x.view(0, [5, 7]), offsets = [0, 0], shape = [5, 7]);
    store_global(
        out8.view(0, [5, 7]),
        t.scan(and, axis = 1),
        offsets = [0, 0],
    );
    store_global(
        out8.view(35, [5, 7]),
        t.scan(or, axis = 0, exclusive = true),
        offsets = [0, 0],
    );
    store_global(
        out8.view(70, [5, 7]),
        t.scan("xor", 1, reverse = true),
        offsets = [0, 0],
    );
    let u = load_global(y.view(0, [16, 64]), offsets = [0, 0], shape = [16, 64]);
    store_global(
        out64.view(0, [16, 64]),
        u.scan(xor, axis = 1, exclusive = true),
        offsets = [0, 0],
    );
    store_global(
        out64.view(1024, [16, 64]),
        u.scan(and, axis = 0, exclusive = true, reverse = true),
        offsets = [0, 0],
    );
    store_global(
        out64.view(2048, [16, 64]),
        u.scan(or, axis = 0),
        offsets = [0, 0],
    );
}

#[test]
fn bitwise_scans() {
    assemble_all("bit_scans", bit_scans::PTX, bit_scans::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..5 {
        let x: Vec<u8> = (0..35)
            .map(|_| (rng.next_u64() | rng.next_u64()) as u8)
            .collect();
        let y: Vec<i64> = (0..1024)
            .map(|_| (rng.next_u64() | rng.next_u64() | rng.next_u64()) as i64)
            .collect();
        let mut w8 = Vec::new();
        w8.extend(per_line(&x, 5, 7, 1, |l| {
            scan(l, |a, b| a & b, false, false, 0xff)
        }));
        w8.extend(per_line(&x, 5, 7, 0, |l| {
            scan(l, |a, b| a | b, true, false, 0)
        }));
        w8.extend(per_line(&x, 5, 7, 1, |l| {
            scan(l, |a, b| a ^ b, false, true, 0)
        }));
        let mut w64 = Vec::new();
        w64.extend(per_line(&y, 16, 64, 1, |l| {
            scan(l, |a, b| a ^ b, true, false, 0)
        }));
        w64.extend(per_line(&y, 16, 64, 0, |l| {
            scan(l, |a, b| a & b, true, true, -1)
        }));
        w64.extend(per_line(&y, 16, 64, 0, |l| {
            scan(l, |a, b| a | b, false, false, 0)
        }));
        for dev in backends() {
            let (xd, yd) = (dev.upload(&x).unwrap(), dev.upload(&y).unwrap());
            let (o8, o64) = (
                dev.zeros::<u8>(105).unwrap(),
                dev.zeros::<i64>(3072).unwrap(),
            );
            bit_scans::launch(&dev, 1, &xd, &yd, &o8, &o64).unwrap();
            same(&o8.download().unwrap(), &w8, &format!("u8 on {dev:?}"));
            same(&o64.download().unwrap(), &w64, &format!("i64 on {dev:?}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sorts and top-k.

/// Sorts of a `[r, c]` tile: `v` gets the rows sorted ascending, the columns descending, the
/// rows' top `k` and the columns' bottom `k0`; `ix` the matching permutations and indices.
macro_rules! sorts {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal, $k:literal, $k0:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, v: GlobalTensor<$t>, ix: GlobalTensor<i32>) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            let n = $r * $c;
            store_global(v.view(0, [$r, $c]), t.sort(), offsets = [0, 0]);
            store_global(
                v.view(n, [$r, $c]),
                t.sort(0, descending = true),
                offsets = [0, 0],
            );
            store_global(v.view(2 * n, [$r, $k]), t.topk($k), offsets = [0, 0]);
            store_global(
                v.view(2 * n + $r * $k, [$k0, $c]),
                t.topk($k0, axis = 0, largest = false),
                offsets = [0, 0],
            );
            store_global(
                ix.view(0, [$r, $c]),
                t.argsort(descending = true),
                offsets = [0, 0],
            );
            store_global(ix.view(n, [$r, $c]), t.argsort(axis = -2), offsets = [0, 0]);
            store_global(ix.view(2 * n, [$r, $k]), t.argtopk($k, 1), offsets = [0, 0]);
            store_global(
                ix.view(2 * n + $r * $k, [$k0, $c]),
                t.argtopk($k0, 0, largest = false),
                offsets = [0, 0],
            );
        }
    };
}

sorts!(sort_i32_32, i32, 32, 3, 12, 5, 2);
sorts!(sort_i32_128, i32, 128, 5, 7, 7, 3);
sorts!(sort_i32_256, i32, 256, 64, 16, 4, 64);
sorts!(sort_i32_wide, i32, 128, 16, 64, 64, 1);
sorts!(sort_u8, u8, 256, 5, 7, 1, 5);
sorts!(sort_i64, i64, 32, 16, 64, 10, 3);
sorts!(sort_f32, f32, 128, 5, 7, 3, 4);
sorts!(sort_f32_big, f32, 256, 16, 64, 8, 16);
sorts!(sort_f16, f16, 32, 3, 12, 12, 3);
sorts!(sort_bf16, bf16, 256, 5, 7, 2, 2);

fn sorts_ref<E: T>(x: &[E], r: usize, c: usize, k: usize, k0: usize) -> (Vec<E>, Vec<i32>) {
    let n = r * c;
    let sorted = |axis: usize, desc: bool| {
        per_line(x, r, c, axis, |l| {
            order(&l, desc).into_iter().map(|i| l[i]).collect()
        })
    };
    let perm = |axis: usize, desc: bool| {
        let xi: Vec<usize> = (0..n).collect();
        per_line(&xi, r, c, axis, |l| {
            let vals: Vec<E> = l.iter().map(|&i| x[i]).collect();
            order(&vals, desc)
        })
        .into_iter()
        .map(|i| i as i32)
        .collect::<Vec<i32>>()
    };
    let mut v = Vec::new();
    v.extend(sorted(1, false));
    v.extend(sorted(0, true));
    // Top k of each row: the first k of the descending order.
    let desc_rows = sorted(1, true);
    for row in 0..r {
        v.extend(&desc_rows[row * c..row * c + k]);
    }
    // Bottom k0 of each column: the first k0 rows of the ascending column sort.
    let asc_cols = sorted(0, false);
    v.extend(&asc_cols[..k0 * c]);
    let mut ix = Vec::new();
    ix.extend(perm(1, true));
    ix.extend(perm(0, false));
    let desc_rows_i = perm(1, true);
    for row in 0..r {
        ix.extend(&desc_rows_i[row * c..row * c + k]);
    }
    ix.extend(&perm(0, false)[..k0 * c]);
    (v, ix)
}

#[allow(clippy::too_many_arguments)]
fn check_sorts<E: T>(
    name: &str,
    r: usize,
    c: usize,
    k: usize,
    k0: usize,
    x: &[E],
    launch: Launch3<E, E, i32>,
) {
    let (want_v, want_i) = sorts_ref(x, r, c, k, k0);
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let vd = dev.upload(&vec![E::default(); want_v.len()]).unwrap();
        let id = dev.full(want_i.len(), -7i32).unwrap();
        launch(&dev, &xd, &vd, &id);
        let what = format!("{name} on {dev:?}");
        same(&vd.download().unwrap(), &want_v, &what);
        same_i32(&id.download().unwrap(), &want_i, &what);
    }
}

macro_rules! run_sorts {
    ($k:ident, $x:expr, $r:literal, $c:literal, $kk:literal, $k0:literal) => {{
        assemble_all(stringify!($k), $k::PTX, $k::TARGET);
        check_sorts(stringify!($k), $r, $c, $kk, $k0, &$x, |d, a, b, c| {
            $k::launch(d, 1, a, b, c).unwrap()
        });
    }};
}

#[test]
fn sorts_argsorts_and_topk_with_duplicates() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        run_sorts!(sort_i32_32, random::<i32>(&mut rng, 36, -4, 4), 3, 12, 5, 2);
        run_sorts!(
            sort_i32_128,
            random::<i32>(&mut rng, 35, i32::MIN, i32::MAX),
            5,
            7,
            7,
            3
        );
        run_sorts!(
            sort_i32_256,
            random::<i32>(&mut rng, 1024, -20, 20),
            64,
            16,
            4,
            64
        );
        run_sorts!(
            sort_i32_wide,
            random::<i32>(&mut rng, 1024, -100, 100),
            16,
            64,
            64,
            1
        );
        run_sorts!(sort_u8, random::<u8>(&mut rng, 35, 0, 256), 5, 7, 1, 5);
        let big: Vec<i64> = (0..1024)
            .map(|_| (rng.next_u64() as i64) >> rng.range(0, 63))
            .collect();
        run_sorts!(sort_i64, big, 16, 64, 10, 3);
        run_sorts!(sort_f16, random::<f16>(&mut rng, 36, -8, 8), 3, 12, 12, 3);
        run_sorts!(sort_bf16, random::<bf16>(&mut rng, 35, -8, 8), 5, 7, 2, 2);
    }
}

/// The float values the sort tests mix in: NaNs of both signs, both zeros, infinities, the
/// smallest normal and a subnormal.
const FLOAT_SPECIALS: [f32; 10] = [
    f32::NAN,
    -f32::NAN,
    -0.0,
    0.0,
    1.5,
    -1.5,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::MIN_POSITIVE,
    -1e-45,
];

#[test]
fn float_sorts_follow_total_order() {
    let mut rng = Rng::from_env_or_clock();
    let pick = |rng: &mut Rng, n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| match rng.range(0, 3) {
                0 => rng.range(-3, 3) as f32,
                _ => FLOAT_SPECIALS[rng.range(0, FLOAT_SPECIALS.len() as i32) as usize],
            })
            .collect()
    };
    for _ in 0..10 {
        run_sorts!(sort_f32, pick(&mut rng, 35), 5, 7, 3, 4);
        run_sorts!(sort_f32_big, pick(&mut rng, 1024), 16, 64, 8, 16);
    }
    // The same values sorted as f16 and bf16 (NaNs of both signs, both zeros).
    for _ in 0..5 {
        let h: Vec<f16> = pick(&mut rng, 36).into_iter().map(f16::from_f32).collect();
        run_sorts!(sort_f16, h, 3, 12, 12, 3);
        let b: Vec<bf16> = pick(&mut rng, 35).into_iter().map(bf16::from_f32).collect();
        run_sorts!(sort_bf16, b, 5, 7, 2, 2);
    }
}

/// Sorts of one line (a rank-1 tile of `$n`): the radix path of the PTX (8- to 32-bit keys).
/// `v` gets the sort, the descending sort, the top `$k` and the bottom `$k`; `ix` the argsort,
/// the descending argsort and the arg-top `$k`.
macro_rules! line_sorts {
    ($name:ident, $t:ident, $threads:literal, $n:literal, $k:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, v: GlobalTensor<$t>, ix: GlobalTensor<i32>) {
            let t = load_global(x, offsets = [0], shape = [$n]);
            store_global(v, t.sort(), offsets = [0]);
            store_global(v, t.sort(descending = true), offsets = [$n]);
            store_global(v, t.topk($k), offsets = [2 * $n]);
            store_global(v, t.topk($k, largest = false), offsets = [2 * $n + $k]);
            store_global(ix, t.argsort(), offsets = [0]);
            store_global(ix, t.argsort(descending = true), offsets = [$n]);
            store_global(ix, t.argtopk($k), offsets = [2 * $n]);
        }
    };
}

line_sorts!(line_i32_512, i32, 512, 4096, 16);
line_sorts!(line_i32_32, i32, 32, 37, 5);
line_sorts!(line_i32_long_runs, i32, 32, 1000, 8);
line_sorts!(line_u32_128, u32, 128, 1000, 7);
line_sorts!(line_u8_256, u8, 256, 300, 9);
line_sorts!(line_i8_64, i8, 64, 129, 3);
line_sorts!(line_i16_96, i16, 96, 200, 11);
line_sorts!(line_u16_32, u16, 32, 2, 1);
line_sorts!(line_f32_256, f32, 256, 1000, 16);
line_sorts!(line_f16_128, f16, 128, 333, 4);
line_sorts!(line_bf16_64, bf16, 64, 100, 10);
// 16 places a thread: fifteen counted in the packed register, the sixteenth in the table.
line_sorts!(line_u32_256_sixteen, u32, 256, 4096, 16);
line_sorts!(line_i32_64_sixteen, i32, 64, 1000, 6);
// 8- and 16-bit argsorts keep the index in the key word: 16 places a thread, whole and partial,
// and a line of 12,000 (47 places a thread, counted through the table; no index arrays let it
// fit the radix path's scratch).
line_sorts!(line_u16_256_sixteen, u16, 256, 4096, 16);
line_sorts!(line_i8_64_sixteen, i8, 64, 1000, 5);
line_sorts!(line_u16_256_long, u16, 256, 12000, 9);

fn check_line_sorts<E: T>(name: &str, k: usize, x: &[E], launch: Launch3<E, E, i32>) {
    let n = x.len();
    let (up, down) = (order(x, false), order(x, true));
    let mut want_v: Vec<E> = up.iter().map(|&i| x[i]).collect();
    want_v.extend(down.iter().map(|&i| x[i]));
    want_v.extend(down[..k].iter().map(|&i| x[i]));
    want_v.extend(up[..k].iter().map(|&i| x[i]));
    let mut want_i: Vec<i32> = up.iter().map(|&i| i as i32).collect();
    want_i.extend(down.iter().map(|&i| i as i32));
    want_i.extend(down[..k].iter().map(|&i| i as i32));
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let vd = dev.upload(&vec![E::default(); 2 * n + 2 * k]).unwrap();
        let id = dev.full(2 * n + k, -7i32).unwrap();
        launch(&dev, &xd, &vd, &id);
        let what = format!("{name} on {dev:?}");
        same(&vd.download().unwrap(), &want_v, &what);
        same_i32(&id.download().unwrap(), &want_i, &what);
    }
}

macro_rules! run_line_sorts {
    ($k:ident, $x:expr, $kk:literal) => {{
        check_line_sorts(stringify!($k), $kk, &$x, |d, a, b, c| {
            $k::launch(d, 1, a, b, c).unwrap()
        });
    }};
}

#[test]
fn sorts_of_one_line_in_every_key_width() {
    let mut rng = Rng::from_env_or_clock();
    let floats = |rng: &mut Rng, n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| match rng.range(0, 3) {
                0 => rng.range(-30, 30) as f32 * 0.25,
                // Any bits but a NaN's payload (the references compare through f64, which
                // quiets signalling NaNs); NaNs of both signs come from the specials.
                1 => Some(f32::from_bits(rng.next_u64() as u32))
                    .filter(|v| !v.is_nan())
                    .unwrap_or(f32::NAN),
                _ => FLOAT_SPECIALS[rng.range(0, FLOAT_SPECIALS.len() as i32) as usize],
            })
            .collect()
    };
    macro_rules! assemble {
        ($($k:ident),*) => {$(assemble_all(stringify!($k), $k::PTX, $k::TARGET);)*};
    }
    assemble!(
        line_i32_512,
        line_i32_32,
        line_i32_long_runs,
        line_u32_128,
        line_u8_256,
        line_i8_64,
        line_i16_96,
        line_u16_32,
        line_f32_256,
        line_f16_128,
        line_bf16_64,
        line_u32_256_sixteen,
        line_i32_64_sixteen,
        line_u16_256_sixteen,
        line_i8_64_sixteen,
        line_u16_256_long
    );
    for _ in 0..2 {
        run_line_sorts!(
            line_i32_512,
            random::<i32>(&mut rng, 4096, i32::MIN, i32::MAX),
            16
        );
        run_line_sorts!(line_i32_32, random::<i32>(&mut rng, 37, -3, 3), 5);
        // 32 places a thread: the runs are counted through the table, not a packed register.
        run_line_sorts!(
            line_i32_long_runs,
            random::<i32>(&mut rng, 1000, -500, 500),
            8
        );
        let u: Vec<u32> = (0..1000)
            .map(|_| rng.next_u64() as u32 >> rng.range(0, 31))
            .collect();
        run_line_sorts!(line_u32_128, u, 7);
        run_line_sorts!(line_u8_256, random::<u8>(&mut rng, 300, 0, 256), 9);
        run_line_sorts!(line_i8_64, random::<i8>(&mut rng, 129, -128, 128), 3);
        run_line_sorts!(line_i16_96, random::<i16>(&mut rng, 200, -32768, 32768), 11);
        run_line_sorts!(line_u16_32, random::<u16>(&mut rng, 2, 0, 65536), 1);
        run_line_sorts!(line_f32_256, floats(&mut rng, 1000), 16);
        let h: Vec<f16> = floats(&mut rng, 333)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        run_line_sorts!(line_f16_128, h, 4);
        let b: Vec<bf16> = floats(&mut rng, 100)
            .into_iter()
            .map(bf16::from_f32)
            .collect();
        run_line_sorts!(line_bf16_64, b, 10);
        // Runs of sixteen equal digits (all sixteen keys of a run in one row), whole runs
        // and a partial last run.
        let few: Vec<u32> = (0..4096)
            .map(|_| rng.range(0, 3) as u32 * 0x1111_1111)
            .collect();
        run_line_sorts!(line_u32_256_sixteen, few, 16);
        let u: Vec<u32> = (0..4096).map(|_| rng.next_u64() as u32).collect();
        run_line_sorts!(line_u32_256_sixteen, u, 16);
        run_line_sorts!(line_i32_64_sixteen, random::<i32>(&mut rng, 1000, -2, 2), 6);
        run_line_sorts!(
            line_i32_64_sixteen,
            random::<i32>(&mut rng, 1000, i32::MIN, i32::MAX),
            6
        );
        run_line_sorts!(
            line_u16_256_sixteen,
            random::<u16>(&mut rng, 4096, 0, 65536),
            16
        );
        run_line_sorts!(
            line_u16_256_sixteen,
            random::<u16>(&mut rng, 4096, 0, 3),
            16
        );
        run_line_sorts!(
            line_i8_64_sixteen,
            random::<i8>(&mut rng, 1000, -128, 128),
            5
        );
        run_line_sorts!(
            line_u16_256_long,
            random::<u16>(&mut rng, 12000, 0, 65536),
            9
        );
    }
}

// ---------------------------------------------------------------------------------------------
// `take`.

/// `take` along axis 1 with `[r, c1]` indices (`i32`) and along axis 0 with `[r0, c]` indices
/// (`i64`), and a sort through `argsort` + `take`.
macro_rules! takes {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal, $c1:literal, $r0:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(
            x: GlobalTensor<$t>,
            i1: GlobalTensor<i32>,
            i0: GlobalTensor<i64>,
            out: GlobalTensor<$t>,
        ) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            let a = load_global(i1.view(0, [$r, $c1]), offsets = [0, 0], shape = [$r, $c1]);
            let b = load_global(i0.view(0, [$r0, $c]), offsets = [0, 0], shape = [$r0, $c]);
            store_global(
                out.view(0, [$r, $c1]),
                t.take(a, axis = 1),
                offsets = [0, 0],
            );
            store_global(
                out.view($r * $c1, [$r0, $c]),
                t.take(b, 0),
                offsets = [0, 0],
            );
            let o = t.argsort(axis = 0, descending = true);
            store_global(
                out.view($r * $c1 + $r0 * $c, [$r, $c]),
                t.take(o, axis = 0),
                offsets = [0, 0],
            );
            store_global(
                out.view($r * $c1 + $r0 * $c + $r * $c, [$r, $c]),
                t.take(t.argsort(), -1),
                offsets = [0, 0],
            );
        }
    };
}

takes!(take_i32, i32, 32, 3, 12, 20, 5);
takes!(take_f32, f32, 128, 5, 7, 3, 9);
takes!(take_u8, u8, 256, 64, 16, 16, 64);
takes!(take_bf16, bf16, 128, 16, 64, 40, 2);

type LaunchTake<E> =
    fn(&Device, &GlobalTensor<E>, &GlobalTensor<i32>, &GlobalTensor<i64>, &GlobalTensor<E>);

fn check_takes<E: T>(
    name: &str,
    (r, c, c1, r0): (usize, usize, usize, usize),
    x: &[E],
    rng: &mut Rng,
    launch: LaunchTake<E>,
) {
    // In range mostly; out of range both ways sometimes (those give 0).
    let a: Vec<i32> = (0..r * c1).map(|_| rng.range(-2, c as i32 + 2)).collect();
    let b: Vec<i64> = (0..r0 * c)
        .map(|_| match rng.range(0, 8) {
            0 => i64::MIN + rng.range(0, 5) as i64,
            1 => (1i64 << 32) + rng.range(0, 3) as i64,
            _ => rng.range(-1, r as i32 + 1) as i64,
        })
        .collect();
    let zero = E::of_i(0);
    let mut want = Vec::new();
    for i in 0..r {
        for j in 0..c1 {
            let k = a[i * c1 + j];
            want.push(if (0..c as i32).contains(&k) {
                x[i * c + k as usize]
            } else {
                zero
            });
        }
    }
    for i in 0..r0 {
        for j in 0..c {
            let k = b[i * c + j];
            want.push(if (0..r as i64).contains(&k) {
                x[k as usize * c + j]
            } else {
                zero
            });
        }
    }
    want.extend(per_line(x, r, c, 0, |l| {
        order(&l, true).into_iter().map(|i| l[i]).collect()
    }));
    want.extend(per_line(x, r, c, 1, |l| {
        order(&l, false).into_iter().map(|i| l[i]).collect()
    }));
    for dev in backends() {
        let (xd, ad, bd) = (
            dev.upload(x).unwrap(),
            dev.upload(&a).unwrap(),
            dev.upload(&b).unwrap(),
        );
        let out = dev.upload(&vec![E::small(1); want.len()]).unwrap();
        launch(&dev, &xd, &ad, &bd, &out);
        same(
            &out.download().unwrap(),
            &want,
            &format!("{name} on {dev:?}"),
        );
    }
}

#[test]
fn take_along_both_axes_with_indices_out_of_range() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..5 {
        assemble_all("take_i32", take_i32::PTX, take_i32::TARGET);
        let x = random::<i32>(&mut rng, 36, -50, 50);
        check_takes("take_i32", (3, 12, 20, 5), &x, &mut rng, |d, a, b, c, e| {
            take_i32::launch(d, 1, a, b, c, e).unwrap()
        });
        assemble_all("take_f32", take_f32::PTX, take_f32::TARGET);
        let x = random::<f32>(&mut rng, 35, -50, 50);
        check_takes("take_f32", (5, 7, 3, 9), &x, &mut rng, |d, a, b, c, e| {
            take_f32::launch(d, 1, a, b, c, e).unwrap()
        });
        assemble_all("take_u8", take_u8::PTX, take_u8::TARGET);
        let x = random::<u8>(&mut rng, 1024, 0, 256);
        check_takes(
            "take_u8",
            (64, 16, 16, 64),
            &x,
            &mut rng,
            |d, a, b, c, e| take_u8::launch(d, 1, a, b, c, e).unwrap(),
        );
        assemble_all("take_bf16", take_bf16::PTX, take_bf16::TARGET);
        let x = random::<bf16>(&mut rng, 1024, -50, 50);
        check_takes(
            "take_bf16",
            (16, 64, 40, 2),
            &x,
            &mut rng,
            |d, a, b, c, e| take_bf16::launch(d, 1, a, b, c, e).unwrap(),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Rank-1 and rank-3 tiles; equal ranks and histograms.

/// A `[1000]` tile on 256 threads: arg reductions (scalars), scans, sorts, top-k, take, equal
/// ranks and a histogram.
#[tile_kernel(threads = 256)]
fn flat(x: GlobalTensor<i32>, idx: GlobalTensor<i32>, v: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [1000]);
    store_global(v, full([1], t.argmax()), offsets = [0]);
    store_global(v, full([1], t.argmin(axis = 0)), offsets = [1]);
    store_global(v, full([1], t.argmax(-1)), offsets = [2]);
    store_global(v, t.argmin(0, keepdims = true), offsets = [3]);
    store_global(v, t.cumsum(), offsets = [4]);
    store_global(v, t.cummax(exclusive = true), offsets = [1004]);
    store_global(v, t.sort(descending = true), offsets = [2004]);
    store_global(v, t.argsort(), offsets = [3004]);
    store_global(v, t.topk(10), offsets = [4004]);
    store_global(v, t.argtopk(10, largest = false), offsets = [4014]);
    let i = load_global(idx, offsets = [0], shape = [300]);
    store_global(v, t.take(i), offsets = [4024]);
    store_global(v, t.equal_rank(), offsets = [4324]);
    store_global(v, t.histogram(16), offsets = [5324]);
    store_global(v, full([1], t.sum(0)), offsets = [5340]);
}

#[test]
fn rank_one_tiles() {
    assemble_all("flat", flat::PTX, flat::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..5 {
        let x = rng.vec(1000, -4, 20);
        let idx = rng.vec(300, -3, 1003);
        let mut want: Vec<i32> = vec![
            arg_best(true, x.iter().copied()),
            arg_best(false, x.iter().copied()),
            arg_best(true, x.iter().copied()),
            arg_best(false, x.iter().copied()),
        ];
        want.extend(scan(
            x.clone(),
            |a: i32, b| a.wrapping_add(b),
            false,
            false,
            0,
        ));
        want.extend(scan(x.clone(), |a: i32, b| a.max(b), true, false, i32::MIN));
        let desc = order(&x, true);
        want.extend(desc.iter().map(|&i| x[i]));
        want.extend(order(&x, false).iter().map(|&i| i as i32));
        want.extend(desc[..10].iter().map(|&i| x[i]));
        want.extend(order(&x, false)[..10].iter().map(|&i| i as i32));
        want.extend(idx.iter().map(|&k| {
            if (0..1000).contains(&k) {
                x[k as usize]
            } else {
                0
            }
        }));
        let mut seen = std::collections::HashMap::new();
        want.extend(x.iter().map(|&k| {
            let c = seen.entry(k).or_insert(0);
            *c += 1;
            *c - 1
        }));
        want.extend((0..16).map(|b| x.iter().filter(|&&k| k == b).count() as i32));
        want.push(x.iter().sum());
        for dev in backends() {
            let (xd, id) = (dev.upload(&x).unwrap(), dev.upload(&idx).unwrap());
            let v = dev.full(want.len(), -99i32).unwrap();
            flat::launch(&dev, 1, &xd, &id, &v).unwrap();
            same_i32(&v.download().unwrap(), &want, &format!("{dev:?}"));
        }
    }
}

/// A `[2, 3, 4]` tile on 128 threads: collectives along the middle and outer axes.
#[tile_kernel(threads = 128)]
fn cube(x: GlobalTensor<f32>, v: GlobalTensor<f32>, ix: GlobalTensor<i32>) {
    let t = load_global(x, offsets = [0], shape = [24]).reshape([2, 3, 4]);
    store_global(v, t.sum(1, keepdims = true).reshape([8]), offsets = [0]);
    store_global(v, t.max(axis = 0).reshape([12]), offsets = [8]);
    store_global(v, t.cumsum(1).reshape([24]), offsets = [20]);
    store_global(
        v,
        t.sort(0, descending = true).reshape([24]),
        offsets = [44],
    );
    store_global(
        v,
        t.cummin(axis = -1, reverse = true).reshape([24]),
        offsets = [68],
    );
    store_global(ix, t.argmax(axis = 2).reshape([6]), offsets = [0]);
    store_global(ix, t.argsort(axis = 1).reshape([24]), offsets = [6]);
    store_global(ix, t.argtopk(2, axis = 1).reshape([16]), offsets = [30]);
}

#[test]
fn rank_three_tiles() {
    assemble_all("cube", cube::PTX, cube::TARGET);
    let mut rng = Rng::from_env_or_clock();
    let at = |a: usize, b: usize, c: usize| (a * 3 + b) * 4 + c;
    for _ in 0..10 {
        let x: Vec<f32> = random(&mut rng, 24, -12, 12);
        let mut v: Vec<f32> = Vec::new();
        let mut ix: Vec<i32> = Vec::new();
        for a in 0..2 {
            for c in 0..4 {
                v.push(sum((0..3).map(|b| x[at(a, b, c)])));
            }
        }
        for b in 0..3 {
            for c in 0..4 {
                v.push(best(true, (0..2).map(|a| x[at(a, b, c)])));
            }
        }
        let mut cs = vec![0f32; 24];
        let mut sorted = vec![0f32; 24];
        let mut cm = vec![0f32; 24];
        let mut am = Vec::new();
        let mut asrt = vec![0i32; 24];
        let mut top = vec![0i32; 16];
        for a in 0..2 {
            for c in 0..4 {
                let l: Vec<f32> = (0..3).map(|b| x[at(a, b, c)]).collect();
                let s = exact_scan(l.clone(), false, false, sum_of);
                let o = order(&l, false);
                let d = order(&l, true);
                for b in 0..3 {
                    cs[at(a, b, c)] = s[b];
                    asrt[at(a, b, c)] = o[b] as i32;
                }
                for j in 0..2 {
                    top[(a * 2 + j) * 4 + c] = d[j] as i32;
                }
            }
            for b in 0..3 {
                let l: Vec<f32> = (0..4).map(|c| x[at(a, b, c)]).collect();
                am.push(arg_best(true, l.iter().copied()));
                let m = scan(l, |p, q| best(false, [p, q].into_iter()), false, true, 0.0);
                for c in 0..4 {
                    cm[at(a, b, c)] = m[c];
                }
            }
        }
        for b in 0..3 {
            for c in 0..4 {
                let l: Vec<f32> = (0..2).map(|a| x[at(a, b, c)]).collect();
                for (a, i) in order(&l, true).into_iter().enumerate() {
                    sorted[at(a, b, c)] = l[i];
                }
            }
        }
        v.extend(cs);
        v.extend(sorted);
        v.extend(cm);
        ix.extend(am);
        ix.extend(asrt);
        ix.extend(top);
        for dev in backends() {
            let xd = dev.upload(&x).unwrap();
            let vd = dev.zeros::<f32>(v.len()).unwrap();
            let id = dev.zeros::<i32>(ix.len()).unwrap();
            cube::launch(&dev, 1, &xd, &vd, &id).unwrap();
            same(&vd.download().unwrap(), &v, &format!("{dev:?}"));
            same_i32(&id.download().unwrap(), &ix, &format!("{dev:?}"));
        }
    }
}

/// Equal ranks and histograms of several integer types and shapes.
#[tile_kernel(threads = 32)]
fn ranks(a: GlobalTensor<u8>, b: GlobalTensor<i64>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let x = load_global(a, offsets = [0], shape = [24]).reshape([2, 3, 4]);
    store_global(out, x.equal_rank().reshape([24]), offsets = [0]);
    store_global(out, x.histogram(5), offsets = [24]);
    let y = load_global(b.view(0, [5, 7]), offsets = [0, 0], shape = [5, 7]);
    store_global(out.view(29, [5, 7]), y.equal_rank(), offsets = [0, 0]);
    store_global(out, y.histogram(40), offsets = [64]);
    let z = load_global(c.view(0, [64, 16]), offsets = [0, 0], shape = [64, 16]);
    store_global(out.view(104, [64, 16]), z.equal_rank(), offsets = [0, 0]);
    store_global(out, z.histogram(1), offsets = [1128]);
    store_global(
        out.view(1129, [64, 16]),
        (z > 3).equal_rank(),
        offsets = [0, 0],
    );
}

fn ranks_ref<E: Copy + std::hash::Hash + Eq>(x: &[E]) -> Vec<i32> {
    let mut seen = std::collections::HashMap::new();
    x.iter()
        .map(|&k| {
            let c = seen.entry(k).or_insert(0);
            *c += 1;
            *c - 1
        })
        .collect()
}

fn hist_ref(x: impl Iterator<Item = i128> + Clone, bins: i128) -> Vec<i32> {
    (0..bins)
        .map(|b| x.clone().filter(|&k| k == b).count() as i32)
        .collect()
}

#[test]
fn equal_ranks_and_histograms() {
    assemble_all("ranks", ranks::PTX, ranks::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..10 {
        let a: Vec<u8> = (0..24).map(|_| (rng.range(0, 8) * 37 % 7) as u8).collect();
        let b: Vec<i64> = (0..35)
            .map(|_| match rng.range(0, 6) {
                0 => (1i64 << 40) + rng.range(0, 3) as i64,
                1 => -rng.range(1, 4) as i64,
                _ => rng.range(0, 45) as i64,
            })
            .collect();
        let c = rng.vec(1024, -2, 6);
        let mut want = ranks_ref(&a);
        want.extend(hist_ref(a.iter().map(|&v| v as i128), 5));
        want.extend(ranks_ref(&b));
        want.extend(hist_ref(b.iter().map(|&v| v as i128), 40));
        want.extend(ranks_ref(&c));
        want.extend(hist_ref(c.iter().map(|&v| v as i128), 1));
        let p: Vec<bool> = c.iter().map(|&v| v > 3).collect();
        want.extend(ranks_ref(&p));
        for dev in backends() {
            let (ad, bd, cd) = (
                dev.upload(&a).unwrap(),
                dev.upload(&b).unwrap(),
                dev.upload(&c).unwrap(),
            );
            let out = dev.full(want.len(), -1i32).unwrap();
            ranks::launch(&dev, 1, &ad, &bd, &cd, &out).unwrap();
            same_i32(&out.download().unwrap(), &want, &format!("{dev:?}"));
        }
    }
}

/// Ranks of 8-bit tiles, which are counted per warp (ballots and a shared atomic) rather than
/// compared: a 4096-element `u8` tile of radix digits on 256 threads, an `i8` tile of 37 x 5
/// (not a whole number of warps' rounds) and a `bool` tile of 3 x 7 x 11.
#[tile_kernel(threads = 256)]
fn byte_ranks(a: GlobalTensor<u8>, b: GlobalTensor<i8>, out: GlobalTensor<i32>) {
    let x = load_global(a, offsets = [0], shape = [4096]);
    store_global(out, x.equal_rank(), offsets = [0]);
    let y = load_global(b.view(0, [37, 5]), offsets = [0, 0], shape = [37, 5]);
    store_global(out.view(4096, [37, 5]), y.equal_rank(), offsets = [0, 0]);
    let z = load_global(a, offsets = [0], shape = [231]).reshape([3, 7, 11]) > 128;
    store_global(out, z.equal_rank().reshape([231]), offsets = [4281]);
}

#[test]
fn equal_ranks_of_bytes_are_counted_per_warp() {
    assemble_all("byte_ranks", byte_ranks::PTX, byte_ranks::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for round in 0..6 {
        // Few distinct values (long groups), then all 256.
        let spread = [2, 17, 256][round % 3];
        let a: Vec<u8> = (0..4096).map(|_| rng.range(0, spread) as u8).collect();
        let b: Vec<i8> = (0..185).map(|_| rng.range(-3, 3) as i8).collect();
        let mut want = ranks_ref(&a);
        want.extend(ranks_ref(&b));
        let z: Vec<bool> = a[..231].iter().map(|&v| v > 128).collect();
        want.extend(ranks_ref(&z));
        for dev in backends() {
            let (ad, bd) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
            let out = dev.full(want.len(), -1i32).unwrap();
            byte_ranks::launch(&dev, 1, &ad, &bd, &out).unwrap();
            same_i32(
                &out.download().unwrap(),
                &want,
                &format!("{dev:?}, spread {spread}"),
            );
        }
    }
}

/// `place`: a `u8` tile of 4096 radix digits placed from its own histogram's exclusive
/// prefixes (counted in one go, the places a permutation of `0..4096`) and from arbitrary
/// starts; 300 `u8` elements on 256 threads (a last round part empty) from 300 starts; then the
/// general lowering: an `i8` tile of 37 x 5 from 8 starts (negative values and values past the
/// starts start at 0), an `i32` tile of 200 from 50 starts and a `bool` tile from 2.
#[tile_kernel(threads = 256)]
fn places(
    a: GlobalTensor<u8>,
    b: GlobalTensor<i8>,
    c: GlobalTensor<i32>,
    s: GlobalTensor<i32>,
    out: GlobalTensor<i32>,
) {
    let x = load_global(a, offsets = [0], shape = [4096]);
    let own = (x as i32).histogram(256).cumsum(0, exclusive = true);
    store_global(out, x.place(own), offsets = [0]);
    let given = load_global(s, offsets = [0], shape = [300]);
    store_global(out, x.place(given.reshape([300])), offsets = [4096]);
    let x3 = load_global(a, offsets = [7], shape = [300]);
    store_global(out, x3.place(given), offsets = [8192]);
    let y = load_global(b.view(0, [37, 5]), offsets = [0, 0], shape = [37, 5]);
    let s8 = load_global(s, offsets = [0], shape = [8]);
    store_global(out.view(8492, [37, 5]), y.place(s8), offsets = [0, 0]);
    let z = load_global(c, offsets = [0], shape = [200]);
    store_global(
        out,
        z.place(load_global(s, offsets = [0], shape = [50])),
        offsets = [8677],
    );
    let p = load_global(a, offsets = [0], shape = [231]).reshape([3, 7, 11]) > 128;
    let s2 = load_global(s, offsets = [0], shape = [2]);
    store_global(out, p.place(s2).reshape([231]), offsets = [8877]);
}

/// `starts[x]` (0 outside) plus the rank among equal earlier values, wrapping.
fn places_ref<E: Copy + std::hash::Hash + Eq + Into<i128>>(x: &[E], starts: &[i32]) -> Vec<i32> {
    places_from(x, &ranks_ref(x), starts)
}

#[test]
fn places_of_a_counting_sort() {
    assemble_all("places", places::PTX, places::TARGET);
    let mut rng = Rng::from_env_or_clock();
    for round in 0..6 {
        let spread = [2, 17, 256][round % 3];
        let a: Vec<u8> = (0..4096).map(|_| rng.range(0, spread) as u8).collect();
        let b: Vec<i8> = (0..185).map(|_| rng.range(-3, 12) as i8).collect();
        let c: Vec<i32> = (0..200).map(|_| rng.range(-5, 60)).collect();
        // Large starts, some near `i32::MAX`: the sums wrap.
        let s = wrapping_starts(&mut rng, 300);
        let hist = hist_ref(a.iter().map(|&v| v as i128), 256);
        let own: Vec<i32> = hist
            .iter()
            .scan(0, |acc, &h| {
                let start = *acc;
                *acc += h;
                Some(start)
            })
            .collect();
        let mut want = places_ref(&a, &own);
        let mut sorted = want.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..4096).collect::<Vec<i32>>(),
            "own starts: a permutation"
        );
        want.extend(places_ref(&a, &s));
        want.extend(places_ref(&a[7..307], &s));
        want.extend(places_ref(&b, &s[..8]));
        want.extend(places_ref(&c, &s[..50]));
        let p: Vec<u8> = a[..231].iter().map(|&v| (v > 128) as u8).collect();
        want.extend(places_ref(&p, &s[..2]));
        for dev in backends() {
            let (ad, bd, cd, sd) = (
                dev.upload(&a).unwrap(),
                dev.upload(&b).unwrap(),
                dev.upload(&c).unwrap(),
                dev.upload(&s).unwrap(),
            );
            let out = dev.full(want.len(), -1i32).unwrap();
            places::launch(&dev, 1, &ad, &bd, &cd, &sd, &out).unwrap();
            same_i32(
                &out.download().unwrap(),
                &want,
                &format!("{dev:?}, spread {spread}"),
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random floats: the order of combination `tilus::core::collective` defines.

macro_rules! float_orders {
    ($name:ident, $t:ident, $threads:literal, $r:literal, $c:literal) => {
        #[tile_kernel(threads = $threads)]
        fn $name(x: GlobalTensor<$t>, out: GlobalTensor<$t>) {
            let t = load_global(x.view(0, [$r, $c]), offsets = [0, 0], shape = [$r, $c]);
            let n = $r * $c;
            store_global(out, t.sum(1), offsets = [0]);
            store_global(out, t.sum(0), offsets = [$r]);
            store_global(out.view($r + $c, [$r, $c]), t.cumsum(1), offsets = [0, 0]);
            store_global(
                out.view($r + $c + n, [$r, $c]),
                t.cumsum(0, exclusive = true, reverse = true),
                offsets = [0, 0],
            );
            store_global(
                out.view($r + $c + 2 * n, [$r, $c]),
                t.cumprod(1),
                offsets = [0, 0],
            );
            store_global(
                out.view($r + $c + 3 * n, [$r, $c]),
                t.cumprod(0, reverse = true),
                offsets = [0, 0],
            );
        }
    };
}

float_orders!(fo_f32_32, f32, 32, 3, 12);
float_orders!(fo_f32_128, f32, 128, 5, 7);
float_orders!(fo_f32_256, f32, 256, 64, 16);
float_orders!(fo_f32_wide, f32, 128, 16, 64);
float_orders!(fo_f32_tall, f32, 32, 64, 16);
float_orders!(fo_f16, f16, 256, 16, 64);
float_orders!(fo_bf16, bf16, 128, 64, 16);

/// `[1000]` f32 scans on 256 threads (the whole-tile plan: warps of chunks).
#[tile_kernel(threads = 256)]
fn fo_flat(x: GlobalTensor<f32>, out: GlobalTensor<f32>) {
    let t = load_global(x, offsets = [0], shape = [1000]);
    store_global(out, t.cumsum(), offsets = [0]);
    store_global(
        out,
        t.cumsum(exclusive = true, reverse = true),
        offsets = [1000],
    );
    store_global(out, t.cumprod(), offsets = [2000]);
}

fn check_float_orders<E: T>(
    name: &str,
    ir: &tilus::core::ir::Kernel,
    shape: &[usize],
    x: &[E],
    launch: Launch2<E, E>,
) {
    use tilus::core::collective::{reduce, scan};
    use tilus::core::ir::{AxisReduce, ReduceOp, ScanOp};
    let d = <E as Element>::DTYPE;
    let n: usize = shape.iter().product();
    let layout = tilus::core::layout::Layout::new(
        n,
        ir.threads as usize,
        tilus::core::layout::vector_width(ir),
    );
    let xs = bits(x);
    let mut want: Vec<u64> = Vec::new();
    if shape.len() == 2 {
        let sum = AxisReduce::Fold(ReduceOp::Sum);
        want.extend(reduce::reduce_axis(sum, d, &xs, shape, 1, layout));
        want.extend(reduce::reduce_axis(sum, d, &xs, shape, 0, layout));
        want.extend(scan::scan(
            ScanOp::Add,
            d,
            &xs,
            shape,
            1,
            false,
            false,
            layout,
        ));
        want.extend(scan::scan(
            ScanOp::Add,
            d,
            &xs,
            shape,
            0,
            true,
            true,
            layout,
        ));
        want.extend(scan::scan(
            ScanOp::Mul,
            d,
            &xs,
            shape,
            1,
            false,
            false,
            layout,
        ));
        want.extend(scan::scan(
            ScanOp::Mul,
            d,
            &xs,
            shape,
            0,
            false,
            true,
            layout,
        ));
    } else {
        want.extend(scan::scan(
            ScanOp::Add,
            d,
            &xs,
            shape,
            0,
            false,
            false,
            layout,
        ));
        want.extend(scan::scan(
            ScanOp::Add,
            d,
            &xs,
            shape,
            0,
            true,
            true,
            layout,
        ));
        want.extend(scan::scan(
            ScanOp::Mul,
            d,
            &xs,
            shape,
            0,
            false,
            false,
            layout,
        ));
    }
    for dev in backends() {
        let xd = dev.upload(x).unwrap();
        let out = dev.upload(&vec![E::default(); want.len()]).unwrap();
        launch(&dev, &xd, &out);
        let got = bits(&out.download().unwrap());
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{name} on {dev:?}: element {i} has bits {:#x}, the defined order gives {:#x} (the input: replay with the printed TILUS_SEED)",
                got[i], want[i]
            );
        }
    }
}

/// Random floats of magnitude about 1 (products stay finite): sums and products whose value
/// depends on the order of combination.
fn random_floats<E: T>(rng: &mut Rng, n: usize) -> Vec<E> {
    (0..n)
        .map(|_| {
            let m = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
            let s = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
            E::of_f(s * (0.75 + 0.5 * m) * (1.0 + rng.range(0, 3) as f64 * 1e-3))
        })
        .collect()
}

macro_rules! run_orders {
    ($rng:expr, $k:ident, $t:ty, [$($d:literal),*]) => {{
        assemble_all(stringify!($k), $k::PTX, $k::TARGET);
        let shape = [$($d),*];
        let x: Vec<$t> = random_floats($rng, shape.iter().product());
        let ir = $k::spec().ir().unwrap();
        check_float_orders(stringify!($k), ir, &shape, &x, |d, a, b| $k::launch(d, 1, a, b).unwrap());
    }};
}

#[test]
fn float_sums_and_products_follow_the_defined_order() {
    let mut rng = Rng::from_env_or_clock();
    for _ in 0..3 {
        run_orders!(&mut rng, fo_f32_32, f32, [3, 12]);
        run_orders!(&mut rng, fo_f32_128, f32, [5, 7]);
        run_orders!(&mut rng, fo_f32_256, f32, [64, 16]);
        run_orders!(&mut rng, fo_f32_wide, f32, [16, 64]);
        run_orders!(&mut rng, fo_f32_tall, f32, [64, 16]);
        run_orders!(&mut rng, fo_f16, f16, [16, 64]);
        run_orders!(&mut rng, fo_bf16, bf16, [64, 16]);
        run_orders!(&mut rng, fo_flat, f32, [1000]);
    }
}
