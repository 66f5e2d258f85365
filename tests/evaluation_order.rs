//! The evaluation rule, one test per argument position: every argument of a call, operand of
//! an operator, condition and loop bound is evaluated exactly once, left to right as written
//! (keyword arguments in the order they are written), whatever the mask, `other`, bounds or
//! branch make of its value. So an effect nested anywhere (here an atomic increment of a
//! counter `c`, whose old value says when it ran) happens exactly once, in source order.
//!
//! Each kernel runs on one block; the test checks the counter (how many effects ran) and the
//! values the effects returned (in which order they ran), on every backend.

mod common;

use common::backends;
use tilus::prelude::*;

/// Launch `kernel` on one block of every backend with `x = [0, 1, .., 63]`, a zeroed counter
/// and a poisoned `out`; check the counter and the first `expect.len()` elements of `out`.
macro_rules! check {
    ($kernel:ident, counter = $count:expr, out = $expect:expr) => {{
        let expect: Vec<i32> = $expect;
        for dev in backends() {
            let x = dev.upload(&(0..64).collect::<Vec<i32>>()).unwrap();
            let c = dev.zeros::<i32>(1).unwrap();
            let out = dev.upload(&[-7; 16]).unwrap();
            $kernel::launch(&dev, 1, &x, &c, &out).unwrap();
            assert_eq!(c.download().unwrap(), vec![$count], "{dev:?}: effects run");
            let got = out.download().unwrap();
            assert_eq!(&got[..expect.len()], &expect[..], "{dev:?}: values seen");
        }
    }};
}

#[tile_kernel(threads = 32)]
fn other_of_a_masked_load(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // Every element is masked off: `other` is what they all read, and it is evaluated once.
    let t = load_global(
        x,
        offsets = [0],
        shape = [4],
        mask = full([4], false),
        other = atomic_add(c, 0, 1) + 10,
    );
    store_global(out, t, offsets = [0]);
}

#[test]
fn an_effect_in_other_of_a_masked_load_runs_once() {
    check!(other_of_a_masked_load, counter = 1, out = vec![10; 4]);
}

#[tile_kernel(threads = 32)]
fn other_never_read(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // No element is masked or out of bounds: `other` is never read, and still evaluated.
    let t = load_global(x, offsets = [4], shape = [4], other = atomic_add(c, 0, 1));
    store_global(out, t, offsets = [0]);
}

#[test]
fn an_effect_in_an_unneeded_other_still_runs() {
    check!(other_never_read, counter = 1, out = vec![4, 5, 6, 7]);
}

#[tile_kernel(threads = 32)]
fn keyword_order(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // Keyword arguments are evaluated in the order written: offsets (sees 0), mask (sees 1:
    // false everywhere), other (sees 2).
    let t = load_global(
        x,
        offsets = [atomic_add(c, 0, 1)],
        shape = [4],
        mask = full([4], atomic_add(c, 0, 1) == 0),
        other = atomic_add(c, 0, 1) * 100,
    );
    store_global(out, t, offsets = [0]);
}

#[test]
fn keyword_arguments_run_in_the_order_written() {
    check!(keyword_order, counter = 3, out = vec![200; 4]);
}

#[tile_kernel(threads = 32)]
fn load_offsets_and_mask(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    let t = load_global(
        x,
        offsets = [atomic_add(c, 0, 1) + 8],
        shape = [4],
        mask = arange(4) < full([4], atomic_add(c, 0, 1) + 2),
        other = -1,
    );
    store_global(out, t, offsets = [0]);
}

#[test]
fn effects_in_load_offsets_and_mask_run_once() {
    // offsets sees 0 (start 8), the mask sees 1 (first 3 elements).
    check!(load_offsets_and_mask, counter = 2, out = vec![8, 9, 10, -1]);
}

#[tile_kernel(threads = 32)]
fn view_arguments(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // The view's offset sees 0 and its length sees 1 (2 elements long); the load reads past it.
    let v = x.view(atomic_add(c, 0, 1) + 20, [atomic_add(c, 0, 1) + 1]);
    let t = load_global(v, offsets = [0], shape = [4], other = -1);
    store_global(out, t, offsets = [0]);
}

#[test]
fn effects_in_view_arguments_run_once() {
    check!(view_arguments, counter = 2, out = vec![20, 21, -1, -1]);
}

#[tile_kernel(threads = 32)]
fn store_arguments(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // value (sees 0), offsets (sees 1), mask (sees 2: element 3 masked off).
    store_global(
        out,
        full([4], atomic_add(c, 0, 1) + x.len() as i32),
        offsets = [atomic_add(c, 0, 1)],
        mask = arange(4) < full([4], atomic_add(c, 0, 1) + 1),
    );
}

#[test]
fn effects_in_store_arguments_run_once_in_order() {
    check!(store_arguments, counter = 3, out = vec![-7, 64, 64, 64, -7]);
}

#[tile_kernel(threads = 32)]
fn atomic_arguments(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // An element-wise atomic whose values, offsets and mask each hold an effect.
    atomic::global_add(
        out,
        values = full([4], atomic_add(c, 0, 1) + 8),
        offsets = [atomic_add(c, 0, 1) * 4],
        mask = arange(4) != full([4], atomic_add(c, 0, 1)),
    );
    // An indexed atomic: indices, then update.
    let old = atomic_xchg(
        out,
        atomic_add(c, 0, 1) + 5,
        atomic_add(c, 0, 1) + x.len() as i32,
    );
    store_global(out, full([1], old), offsets = [0]);
}

#[test]
fn effects_in_atomic_arguments_run_once_in_order() {
    // values = 0 + 8 (then out[4..8] = -7 + 8 = 1, but element 2 masked off); offsets = 1 * 4;
    // mask sees 2. Then out[3 + 5 = 8] is exchanged with 4 + 64 = 68, its old -7 stored at 0.
    check!(
        atomic_arguments,
        counter = 5,
        out = vec![-7, -7, -7, -7, 1, 1, -7, 1, 68]
    );
}

#[tile_kernel(threads = 32)]
fn cas_arguments(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // indices (sees 0), expected (sees 1: out[0] is -7, so -8 + 1 = -7 matches), desired (2).
    let old = atomic_cas(
        out,
        atomic_add(c, 0, 1),
        atomic_add(c, 0, 1) - 8,
        atomic_add(c, 0, 1) + x.len() as i32,
    );
    store_global(out, full([1], old), offsets = [1]);
    // An element-wise compare-and-swap: compare, then values.
    atomic::global_cas(
        out.view(2, [2]),
        compare = full([2], atomic_add(c, 0, 1) - 10),
        values = full([2], atomic_add(c, 0, 1)),
    );
}

#[test]
fn effects_in_compare_and_swap_arguments_run_once_in_order() {
    check!(cas_arguments, counter = 5, out = vec![66, -7, 4, 4]);
}

#[tile_kernel(threads = 32)]
fn control_flow(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // An `if` condition runs once.
    if atomic_add(c, 0, 1) == 0 {
        store_global(out, full([1], 1), offsets = [0]);
    }
    // A `while` condition runs once per test: 3 passes and the failing test.
    let mut n = 0;
    while atomic_add(c, 0, 1) < 4 {
        n += 1;
    }
    store_global(out, full([1], n), offsets = [1]);
    // Loop bounds run once each, before the first iteration.
    let mut m = 0;
    for i in (atomic_add(c, 0, 1)..atomic_add(c, 0, 1) + 2).step_by(atomic_add(c, 0, 1) - 6) {
        m += i;
    }
    store_global(out, full([1], m + x.len() as i32 * 0), offsets = [2]);
}

#[test]
fn effects_in_conditions_and_loop_bounds_run_once_per_evaluation() {
    // if: sees 0; while: 4 tests (see 1..=4, the last fails); for: start sees 5, end 6 + 2,
    // step 7 - 6: i = 5, 6, 7.
    check!(control_flow, counter = 8, out = vec![1, 3, 18]);
}

#[tile_kernel(threads = 32)]
fn value_if_condition(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // A value-`if` used directly.
    store_global(
        out,
        full([1], if atomic_add(c, 0, 1) == 0 { 5 } else { 6 }),
        offsets = [0],
    );
    // Bound by a `let` that is never used: the condition still runs, once.
    let _unused = if atomic_add(c, 0, 1) == 1 { 1 } else { 2 };
    // Bound by a `let` and used in a loop: the condition ran once, at the `let`.
    let t = full([1], if atomic_add(c, 0, 1) == 2 { 7 } else { 8 });
    for i in 0..3 {
        store_global(out, t + i, offsets = [1 + i]);
    }
    // Bound, then another effect, then used: the condition ran first.
    let first = if atomic_add(c, 0, 1) == 3 { 10 } else { 20 };
    let second = atomic_add(c, 0, 1);
    store_global(
        out,
        full([1], first + second + x.len() as i32 * 0),
        offsets = [4],
    );
}

#[test]
fn an_effect_in_a_value_if_condition_runs_once_where_it_stands() {
    check!(value_if_condition, counter = 5, out = vec![5, 7, 8, 9, 14]);
}

#[tile_kernel(threads = 32)]
fn operands(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // Operands left to right, also when the left one's type comes from the right one.
    let a = (if atomic_add(c, 0, 1) == 0 { 1 } else { 2 }) + atomic_add(c, 0, 1) * 10;
    // `select` evaluates its condition and both arms, in order.
    let s = select(
        atomic_add(c, 0, 1) == 2,
        atomic_add(c, 0, 1),
        atomic_add(c, 0, 1),
    );
    // `min` and `fma`-like methods: receiver, then arguments.
    let m = min(atomic_add(c, 0, 1), atomic_add(c, 0, 1) - 10);
    let r = atomic_add(c, 0, 1).max(atomic_add(c, 0, 1) - 20);
    store_global(out, full([1], a), offsets = [0]);
    store_global(out, full([1], s), offsets = [1]);
    store_global(out, full([1], m), offsets = [2]);
    store_global(out, full([1], r + x.len() as i32 * 0), offsets = [3]);
}

#[test]
fn operands_run_once_left_to_right() {
    // a = 1 + 1 * 10; select(2 == 2, 3, 4) = 3; min(5, 6 - 10) = -4; max(7, 8 - 20) = 7.
    check!(operands, counter = 9, out = vec![11, 3, -4, 7]);
}

#[tile_kernel(threads = 32)]
fn unused_results(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // Results nobody reads: dead-code elimination keeps every effect.
    let _a = atomic_add(c, 0, 1);
    let _t = load_global(x, offsets = [0], shape = [4], other = atomic_add(c, 0, 1));
    let _s = (full([4], atomic_add(c, 0, 1)) + load_global(x, offsets = [0], shape = [4])).sum();
    let _r = atomic::global_add(out, full([2], atomic_add(c, 0, 1)), offsets = [0]).max();
}

#[test]
fn effects_whose_results_are_unused_still_run() {
    // The last atomic adds 3 to out[0] and out[1].
    check!(unused_results, counter = 4, out = vec![-4, -4, -7]);
}

#[tile_kernel(threads = 64)]
fn range_masked(x: GlobalTensor<i32>, c: GlobalTensor<i32>, out: GlobalTensor<i32>) {
    // The bounds mask `arange(T) + start < n` is computed in 32 bits and its accesses unswitched
    // on whole tiles: the effect in `start` and the masked atomic still run once.
    let start = atomic_add(c, 0, 3);
    let n = out.len() as i32;
    atomic::global_add(
        out,
        values = full([16], atomic_add(c, 0, 1)),
        offsets = [start],
        mask = arange(16) + start < full([16], n - x.len() as i32 * 0 - 2),
    );
}

#[test]
fn effects_around_a_range_mask_run_once() {
    // start = 0; the values see 3; elements 0..14 of 16 are in the mask.
    let mut expect = vec![-4; 14];
    expect.extend([-7, -7]);
    check!(range_masked, counter = 4, out = expect);
}
