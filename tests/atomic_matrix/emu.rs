//! Emulator cross-checks of the matrix: every legal cell (op × type × form × space) with the
//! default `sem`/`scope`, its result used and masks alternating by cell, run on
//! `tilus::core::emu::launch` under contention (global forms: 6 blocks on one window; scatter and
//! indexed forms: 96 elements on 40 addresses, or 5 rows) and compared with CPU references
//! written here:
//!
//! * add/sub/min/max/and/or/xor/inc/dec: the final memory is the fold of every active update
//!   (the same in every order: integer adds wrap, float adds use small integers, exact in every
//!   type, inc/dec use one bound, `(old >= b) ? 0 : old + 1` / `(old == 0 || old > b) ? b :
//!   old - 1`); float min/max order by IEEE totalOrder (`-NaN < -inf < .. < -0.0 < +0.0 < .. <
//!   +inf < +NaN`), with NaNs, infinities and signed zeros in the data; an address updated once
//!   returns the initial value;
//! * exch: the returned values plus the final one are the initial value plus the written ones
//!   (a chain of swaps), as multisets;
//! * cas: with `compare` equal to the initial value, exactly one update per address wins (its
//!   value is final, the others return it); with a different `compare` nothing changes;
//! * atomic_load returns memory; atomic_store leaves one of the stored values.
//!
//! Shared forms run one block (each block writes its whole shared window back to global memory,
//! so several would race); the inputs are fresh random values (the seed is printed on failure and
//! can be replayed with `ATOMIC_MATRIX_SEED`).

use super::build::{self, numel, shapes};
use super::model::*;
use super::oracle;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use tilus::core::dtype::DType;
use tilus::core::emu::{launch, EmuArg, EmuOptions, GlobalMem};
use tilus::core::Compiled;
use tilus::{bf16, f16};

/// Host memory of one tensor argument, by element width.
enum Buf {
    W8(Vec<AtomicU8>),
    W16(Vec<AtomicU16>),
    W32(Vec<AtomicU32>),
    W64(Vec<AtomicU64>),
}

impl Buf {
    fn new(d: DType, bits: &[u64]) -> Buf {
        match d.size_bytes() {
            1 => Buf::W8(bits.iter().map(|b| AtomicU8::new(*b as u8)).collect()),
            2 => Buf::W16(bits.iter().map(|b| AtomicU16::new(*b as u16)).collect()),
            4 => Buf::W32(bits.iter().map(|b| AtomicU32::new(*b as u32)).collect()),
            _ => Buf::W64(bits.iter().map(|b| AtomicU64::new(*b)).collect()),
        }
    }
    fn mem(&self) -> GlobalMem<'_> {
        match self {
            Buf::W8(v) => GlobalMem::W8(v),
            Buf::W16(v) => GlobalMem::W16(v),
            Buf::W32(v) => GlobalMem::W32(v),
            Buf::W64(v) => GlobalMem::W64(v),
        }
    }
    fn bits(&self) -> Vec<u64> {
        let o = Ordering::Relaxed;
        match self {
            Buf::W8(v) => v.iter().map(|a| a.load(o) as u64).collect(),
            Buf::W16(v) => v.iter().map(|a| a.load(o) as u64).collect(),
            Buf::W32(v) => v.iter().map(|a| a.load(o) as u64).collect(),
            Buf::W64(v) => v.iter().map(|a| a.load(o)).collect(),
        }
    }
}

fn width_mask(d: DType) -> u64 {
    match d.size_bytes() {
        8 => u64::MAX,
        n => (1u64 << (8 * n)) - 1,
    }
}

fn sign_extend(d: DType, b: u64) -> i64 {
    let shift = 64 - 8 * d.size_bytes() as u32;
    ((b << shift) as i64) >> shift
}

/// The bits of the float `x` in `d`.
fn float_bits(d: DType, x: f64) -> u64 {
    match d {
        DType::F16 => f16::from_f64(x).to_bits() as u64,
        DType::BF16 => bf16::from_f64(x).to_bits() as u64,
        DType::F32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

fn float_value(d: DType, b: u64) -> f64 {
    match d {
        DType::F16 => f16::from_bits(b as u16).to_f64(),
        DType::BF16 => bf16::from_bits(b as u16).to_f64(),
        DType::F32 => f32::from_bits(b as u32) as f64,
        _ => f64::from_bits(b),
    }
}

/// IEEE totalOrder as an unsigned key: negative patterns reversed below positive ones.
fn total_order(d: DType, b: u64) -> u64 {
    let sign = 1u64 << (8 * d.size_bytes() - 1);
    if b & sign != 0 {
        !b & width_mask(d)
    } else {
        b | sign
    }
}

/// The new memory value of the CPU reference.
fn reference(op: &str, d: DType, old: u64, v: u64) -> u64 {
    let m = width_mask(d);
    let pick_min = |take_v_if_less: bool| {
        let less = if d.is_float() {
            total_order(d, v) < total_order(d, old)
        } else if d.is_signed() {
            sign_extend(d, v) < sign_extend(d, old)
        } else {
            v < old
        };
        let greater = if d.is_float() {
            total_order(d, v) > total_order(d, old)
        } else if d.is_signed() {
            sign_extend(d, v) > sign_extend(d, old)
        } else {
            v > old
        };
        if (take_v_if_less && less) || (!take_v_if_less && greater) {
            v
        } else {
            old
        }
    };
    match op {
        "add" | "sub" if d.is_float() => {
            let (a, b) = (float_value(d, old), float_value(d, v));
            float_bits(d, if op == "add" { a + b } else { a - b })
        }
        "add" => old.wrapping_add(v) & m,
        "sub" => old.wrapping_sub(v) & m,
        "min" => pick_min(true),
        "max" => pick_min(false),
        "and" => old & v,
        "or" => old | v,
        "xor" => old ^ v,
        "inc" => {
            if old >= v {
                0
            } else {
                old + 1
            }
        }
        "dec" => {
            if old == 0 || old > v {
                v
            } else {
                old - 1
            }
        }
        _ => unreachable!("{op} has no fold"),
    }
}

/// Special float values for min/max: NaNs of both signs, infinities, zeros of both signs.
fn special(d: DType, rng: &mut StdRng) -> u64 {
    let x = match rng.gen_range(0..9) {
        0 => f64::NAN,
        1 => -f64::NAN,
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => 0.0,
        5 => -0.0,
        _ => rng.gen_range(-1e3..1e3),
    };
    let b = float_bits(d, x);
    // `as f32` and the half conversions keep the NaN sign; make sure the negative NaN is one.
    if x.is_nan() && x.is_sign_negative() {
        b | (1u64 << (8 * d.size_bytes() - 1))
    } else {
        b
    }
}

/// One random element of `d` for the operand role of `op`.
fn value(op: &str, d: DType, rng: &mut StdRng) -> u64 {
    match op {
        // Small integers: every partial sum is exact in every float type (checked below).
        "add" | "sub" if d.is_float() => float_bits(d, rng.gen_range(-4i32..=4) as f64),
        "min" | "max" if d.is_float() => special(d, rng),
        "cas" | "exch" | "store" if d.is_float() => float_bits(d, rng.gen_range(-1e4..1e4)),
        "inc" | "dec" => rng.gen_range(0..16),
        _ if d == DType::Bool => rng.gen_range(0..2),
        _ => rng.gen::<u64>() & width_mask(d),
    }
}

struct Run {
    c: Combo,
    blocks: usize,
    /// The destination's element count, the tile's, and the index range.
    dst_n: usize,
    n: usize,
}

impl Run {
    /// The destination element tile element `e` of block `b` updates.
    fn addr(&self, idx: &[u64], b: usize, e: usize) -> usize {
        let i = idx.get(b * self.n + e).copied().unwrap_or(0) as usize;
        match self.c.form {
            Form::Elementwise => e,
            Form::Scatter1 | Form::Indexed => i,
            Form::Scatter2(0) => i * 8 + e % 8,
            Form::Scatter2(_) => (e / 12) * 5 + i,
        }
    }
    fn active(&self, e: usize) -> bool {
        // The tilus mask turns every fifth element off; the indexed forms' switch is the bounds
        // check, which in-range indices never trip.
        !(self.c.masked && self.c.form != Form::Indexed && e % 5 == 3)
    }
}

/// Run one combination on the emulator and compare with the reference; `Err` says how it
/// differs.
/// Runs a compiled kernel over a grid of blocks with the given tensors (element type and bits,
/// in parameter order) and returns every tensor's bits afterwards.
pub type Exec<'a> =
    dyn Fn(&Combo, &Compiled, u32, &[(DType, Vec<u64>)]) -> Result<Vec<Vec<u64>>, String> + 'a;

/// The executor on `tilus::core::emu::launch` directly (host atomics per element).
pub fn raw_emulator(
    _: &Combo,
    k: &Compiled,
    blocks: u32,
    inputs: &[(DType, Vec<u64>)],
) -> Result<Vec<Vec<u64>>, String> {
    let bufs: Vec<Buf> = inputs.iter().map(|(d, b)| Buf::new(*d, b)).collect();
    let args: Vec<EmuArg<'_>> = bufs.iter().map(|b| EmuArg::Tensor(b.mem())).collect();
    launch(&k.ir, blocks, &args, &EmuOptions::default())
        .map_err(|e| format!("emulator error: {e}"))?;
    Ok(bufs.iter().map(Buf::bits).collect())
}

fn check(c: Combo, rng: &mut StdRng, exec: &Exec<'_>) -> Result<(), String> {
    let k = tilus::core::compile(&build::kernel(&c))
        .map_err(|ds| format!("does not compile: {}", ds[0].render()))?;
    let sh = shapes(c.form);
    let run = Run {
        c,
        blocks: if c.space == Space::Shared { 1 } else { 6 },
        dst_n: numel(&sh.dst),
        n: numel(&sh.tile),
    };
    let d = c.dtype;
    let total = run.blocks * run.n;
    let idx_range = match c.form {
        Form::Scatter2(_) => 5,
        _ => run.dst_n,
    };
    let idx: Vec<u64> = if c.form == Form::Elementwise {
        Vec::new()
    } else {
        (0..total)
            .map(|_| rng.gen_range(0..idx_range) as u64)
            .collect()
    };
    let x0: Vec<u64> = (0..run.dst_n)
        .map(|_| match c.op {
            // Around the bound, so both wrap rules fire.
            "inc" | "dec" => rng.gen_range(0..20),
            _ => value(c.op, d, rng),
        })
        .collect();
    let mut vals: Vec<u64> = (0..total).map(|_| value(c.op, d, rng)).collect();
    if matches!(c.op, "inc" | "dec") {
        // One bound for every update: the fold is then the same in every order.
        let bound = rng.gen_range(4..16);
        vals.iter_mut().for_each(|v| *v = bound);
    }
    // Updates per address, in (block, element) order: (flat position, value).
    let mut updates: Vec<Vec<(usize, u64)>> = vec![Vec::new(); run.dst_n];
    for b in 0..run.blocks {
        for e in 0..run.n {
            if run.active(e) {
                updates[run.addr(&idx, b, e)].push((b * run.n + e, vals[b * run.n + e]));
            }
        }
    }
    if c.op == "cas" {
        // Distinct new values, none equal to the initial one: exactly one winner per address.
        let mut seen = std::collections::HashSet::new();
        for (a, ups) in updates.iter().enumerate() {
            seen.insert(x0[a]);
            for &(p, _) in ups {
                let mut v = vals[p];
                while !seen.insert(v) {
                    v = (v.wrapping_add(1)) & width_mask(d);
                }
                vals[p] = v;
            }
        }
        for ups in updates.iter_mut() {
            for u in ups.iter_mut() {
                u.1 = vals[u.0];
            }
        }
    }
    if d.is_float() && matches!(c.op, "add" | "sub") {
        // Float partial sums stay below 2^8 (exact even in bf16).
        let worst = updates.iter().map(|u| u.len()).max().unwrap_or(0);
        assert!(
            4 * (worst + 1) < 256,
            "too many updates on one address: {worst}"
        );
    }
    // `cas` compares with the initial value, except on every seventh address.
    let cmp: Vec<u64> = (0..total)
        .map(|p| {
            let a = run.addr(&idx, p / run.n, p % run.n);
            if a.is_multiple_of(7) {
                x0[a] ^ 1
            } else {
                x0[a]
            }
        })
        .collect();
    const POISON: u64 = 0x5a5a_5a5a_5a5a_5a5a;
    let poison = POISON & width_mask(d) & if d == DType::Bool { 1 } else { u64::MAX };
    let inputs: Vec<(DType, Vec<u64>)> = build::param_names(&c)
        .into_iter()
        .map(|p| match p {
            "x" => (d, x0.clone()),
            "vals" => (d, vals.clone()),
            "cmp" => (d, cmp.clone()),
            "idx" => (DType::I32, idx.clone()),
            _ => (d, vec![poison; total]),
        })
        .collect();
    let after = exec(&c, &k, run.blocks as u32, &inputs)?;
    let x = after[0].clone();
    let out = c.used.then(|| after.last().unwrap().clone());
    let hex = |v: u64| format!("{v:#x}");
    for (a, ups) in updates.iter().enumerate() {
        let olds: Vec<u64> = out
            .as_ref()
            .map(|o| ups.iter().map(|(p, _)| o[*p]).collect())
            .unwrap_or_default();
        let fail = |what: String| {
            Err(format!(
                "address {a}: {what} (initial {}, updates {:?}, returned {:?})",
                hex(x0[a]),
                ups.iter().map(|u| hex(u.1)).collect::<Vec<_>>(),
                olds.iter().map(|v| hex(*v)).collect::<Vec<_>>()
            ))
        };
        match c.op {
            "load" => {
                if x[a] != x0[a] {
                    return fail(format!("a load changed memory to {}", hex(x[a])));
                }
                if olds.iter().any(|o| *o != x0[a]) {
                    return fail("a load returned something else than memory".into());
                }
            }
            "store" | "exch" => {
                if !ups.is_empty() && !ups.iter().any(|u| u.1 == x[a]) {
                    return fail(format!("final {} is none of the stored values", hex(x[a])));
                }
                if ups.is_empty() && x[a] != x0[a] {
                    return fail(format!("untouched address became {}", hex(x[a])));
                }
                if c.op == "exch" && c.used {
                    let mut lhs = olds.clone();
                    lhs.push(x[a]);
                    let mut rhs: Vec<u64> = ups.iter().map(|u| u.1).collect();
                    rhs.push(x0[a]);
                    lhs.sort_unstable();
                    rhs.sort_unstable();
                    if lhs != rhs {
                        return fail(format!(
                            "returned + final {} is not initial + written",
                            hex(x[a])
                        ));
                    }
                }
            }
            "cas" => {
                let matches = cmp_of(&cmp, ups).iter().all(|w| *w == x0[a]);
                if !matches || ups.is_empty() {
                    if x[a] != x0[a] {
                        return fail(format!("cas with a different compare stored {}", hex(x[a])));
                    }
                    if olds.iter().any(|o| *o != x0[a]) {
                        return fail("a failed cas returned something else than memory".into());
                    }
                } else {
                    if !ups.iter().any(|u| u.1 == x[a]) {
                        return fail(format!("final {} is none of the new values", hex(x[a])));
                    }
                    if c.used {
                        let winners = olds.iter().filter(|o| **o == x0[a]).count();
                        let losers_ok = olds.iter().all(|o| *o == x0[a] || *o == x[a]);
                        if winners != 1 || !losers_ok {
                            return fail(format!(
                                "{winners} updates saw the initial value (want 1), the others must see the winner {}",
                                hex(x[a])
                            ));
                        }
                    }
                }
            }
            op => {
                let want = ups
                    .iter()
                    .fold(x0[a], |acc, (_, v)| reference(op, d, acc, *v));
                if x[a] != want {
                    return fail(format!("final {}, expected {}", hex(x[a]), hex(want)));
                }
                if ups.len() == 1 && c.used && olds[0] != x0[a] {
                    return fail("a single update did not return the initial value".into());
                }
            }
        }
    }
    Ok(())
}

fn cmp_of(cmp: &[u64], ups: &[(usize, u64)]) -> Vec<u64> {
    ups.iter().map(|(p, _)| cmp[*p]).collect()
}

/// Every legal cell, default qualifiers, result used (stores: none), masks alternating by cell.
pub fn subset() -> Vec<Combo> {
    cells()
        .into_iter()
        .enumerate()
        .map(|(i, (op, dtype, form, space))| Combo {
            op,
            dtype,
            form,
            space,
            sem: None,
            scope: None,
            used: op != "store",
            masked: i % 2 == 1,
            target: None,
        })
        .filter(|c| oracle::reasons(c).is_empty())
        .collect()
}

/// Run the subset with `exec` (named `backend` in the failure message).
pub fn run_all(backend: &str, exec: &Exec<'_>) {
    let seed = std::env::var("ATOMIC_MATRIX_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let mut rng = StdRng::seed_from_u64(seed);
    let combos = subset();
    let mut failures = Vec::new();
    for c in &combos {
        if let Err(e) = check(*c, &mut rng, exec) {
            failures.push(format!("{}: {e}", c.name()));
        }
    }
    assert!(
        failures.is_empty(),
        "{backend}, seed {seed} (ATOMIC_MATRIX_SEED={seed} replays it): {} of {} runs differ from the reference:\n{}",
        failures.len(),
        combos.len(),
        failures.join("\n")
    );
}
