//! The typed legality/codegen matrix of every atomic form (issue 8), generated, not listed by
//! hand. Dimensions (`model.rs`): op (`add sub min max exch cas and or xor inc dec`, plus cuTile's
//! `atomic_load` / `atomic_store`) × element type (all 13) × form (tilus element-wise, 1-D
//! scatter, 2-D scatter on dim 0 / dim 1, cuTile indexed `atomic_*`) × space (shared, global) ×
//! `sem` (absent, relaxed, acquire, release, acq_rel) × `scope` (absent, cta, cluster, gpu, sys) ×
//! explicit target (none, 70, 80, 90) × result used / unused; masks (`mask =` / `check_bounds =
//! false`) alternate. Each kernel is a `KernelDef` (`build.rs`) compiled with
//! `tilus::core::compile` and checked against an oracle written from the PTX `atom`/`red` page,
//! the ptxas-verified PTX facts and the language documents (`oracle.rs`, not from
//! `tilus_core::table`, so a wrong table row shows up here).
//!
//! **Exhaustive** (every combination, ~294k kernels): accept/reject; for a rejected one, every
//! diagnostic is about one of the oracle's reasons, points at the token it is about (call, `sem`,
//! `scope`), names the op and type (or the order / scope) and has a `help:` that names an
//! alternative (`diagcheck.rs`); for an accepted one, the declared target (explicit, else raised
//! to the row's minimum and to sm_90 by cluster scope), the instruction (`red` only for an
//! unused result of an op that has one under relaxed/release, else `atom`; ordered `ld`/`st` for
//! atomic loads/stores), its qualifiers in order, and its type suffix (`.noftz.f16`/`.bf16`,
//! `.f32`, `.u64` for 64-bit adds, `.b16` for 16-bit `cas`, float min/max through both halves
//! of the integer-order lowering) (`ptxcheck.rs`).
//!
//! **Sampled, deterministically** (`matrix.rs`, [`matrix::Chosen`]): what goes to ptxas. Every
//! legal (op, type, form, space) cell is assembled once for each of sm_70/80/90 at or above its
//! minimum (through the explicit-target combinations), and every distinct spelling of the
//! atomic instructions is assembled once per target it occurs with: about 5300 kernels in merged
//! batches (`tilus_testkit::ptxas::assemble_many_with` and ptxas `-O0`: the optimiser
//! adds time, not checks).
//!
//! **Emulator and GPU** (`emu.rs`, `backend.rs`): every legal cell with default qualifiers under
//! contention (many elements and blocks on one address) against CPU references written here, on
//! `emu::launch` directly and through the runtime on every backend (the GPU with `--features
//! cuda`).
//!
//! Known compiler bugs are listed in `bugs.rs`; their cells must keep failing until fixed.
//! `ATOMIC_MATRIX_DUMP=<file>` writes every failure of the matrix test there (the panic shows ten).

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

mod backend;
mod bugs;
mod build;
#[path = "../common/mod.rs"]
mod common;
mod diagcheck;
mod emu;
mod matrix;
mod model;
mod oracle;
mod ptxcheck;

use model::*;
use std::collections::BTreeSet;
use tilus::core::dtype::DType;
use tilus_testkit::ptxas::assemble_many_with;

/// The sm_NN among 70/80/90 a kernel of the cell must assemble for.
fn targets_from(min: u32) -> BTreeSet<u32> {
    [70, 80, 90].into_iter().filter(|t| *t >= min).collect()
}

#[test]
fn atomic_matrix() {
    let t0 = std::time::Instant::now();
    let combos = matrix::all_combos();
    let r = matrix::run(&combos);
    let t_compile = t0.elapsed();
    let mut failures = r.failures.clone();
    failures.extend(r.known_fixed.iter().cloned());
    for (b, hits) in bugs::KNOWN_BUGS.iter().zip(&r.known_hits) {
        if *hits == 0 {
            failures.push(format!(
                "known bug `{}` covers no failing cell any more: remove it",
                b.id
            ));
        }
    }
    // Every legal cell was accepted with every target it must support, and no other cell was.
    for (op, dtype, form, space) in cells() {
        let key = format!("{op} {} {} {}", dtype.name(), form.tag(), space.name());
        let probe = Combo {
            op,
            dtype,
            form,
            space,
            sem: None,
            scope: None,
            used: false,
            masked: false,
            target: None,
        };
        let legal = oracle::reasons(&probe).is_empty();
        let want = if legal {
            let min = if is_rmw(op) {
                oracle::min_target(op, dtype)
            } else {
                70
            };
            targets_from(min)
        } else {
            BTreeSet::new()
        };
        let got = r.legal_cells.get(&key).cloned().unwrap_or_default();
        if got != want {
            failures.push(format!(
                "cell {key}: accepted kernels declare targets {got:?}, expected {want:?}"
            ));
        }
    }
    // Assemble the chosen kernels.
    let chosen = r.chosen.kernels();
    let (indices, modules): (Vec<usize>, Vec<&str>) = chosen.iter().map(|(i, p)| (*i, *p)).unzip();
    let t1 = std::time::Instant::now();
    let report = assemble_many_with(&modules, &["-O0"]).expect("ptxas runs");
    for f in &report.failures {
        failures.push(format!(
            "{}: ptxas sm_{}: {}\n--- PTX ---\n{}",
            combos[indices[f.index]].name(),
            f.sm,
            f.log,
            modules[f.index]
        ));
    }
    eprintln!(
        "{} combinations: {} accepted, {} rejected ({} cells with a known bug); {} kernels to ptxas ({} of them variants for newer targets): {} assembled, {} skipped (no ptxas), {} ptxas runs; compile+check {:.1?}, ptxas {:.1?}",
        combos.len(),
        r.accepted,
        r.rejected,
        r.known_hits.iter().sum::<usize>(),
        modules.len(),
        r.chosen.by_key.keys().filter(|k| k.starts_with("variant")).count(),
        report.assembled,
        report.skipped,
        report.runs,
        t_compile,
        t1.elapsed()
    );
    if let Ok(path) = std::env::var("ATOMIC_MATRIX_DUMP") {
        std::fs::write(path, failures.join("\n")).unwrap();
    }
    if !failures.is_empty() {
        let n = failures.len();
        let shown: Vec<_> = failures.into_iter().take(10).collect();
        panic!("{n} failures; first ones:\n{}", shown.join("\n\n"));
    }
}

/// The generator covers what the issue asks for (guards against the product shrinking), and the
/// oracle's legal set has the size the PTX table gives by hand.
#[test]
fn atomic_matrix_is_complete() {
    let combos = matrix::all_combos();
    let per_cell = SEMS.len() * SCOPES.len() * TARGETS.len();
    let rmw_cells = RMW_OPS.len() * DType::ALL.len() * FORMS.len() * SPACES.len();
    let ldst_cells = 2 * DType::ALL.len() * SPACES.len();
    assert_eq!(cells().len(), rmw_cells + ldst_cells);
    // RMWs and loads with used/unused, stores unused only.
    assert_eq!(
        combos.len(),
        (rmw_cells + DType::ALL.len() * SPACES.len()) * per_cell * 2
            + DType::ALL.len() * SPACES.len() * per_cell
    );
    assert_eq!(DType::ALL.len(), 13);
    // Every cell meets every sem, scope, target, used and mask value.
    let seen: BTreeSet<String> = combos
        .iter()
        .map(|c| {
            format!(
                "{} {} {} {}",
                c.op,
                c.dtype.name(),
                c.form.tag(),
                c.space.name()
            )
        })
        .collect();
    assert_eq!(seen.len(), cells().len());
    for (field, n) in [
        ("sem", SEMS.len()),
        ("scope", SCOPES.len()),
        ("target", TARGETS.len()),
        ("used", 2),
        ("masked", 2),
    ] {
        let vals: BTreeSet<String> = combos
            .iter()
            .map(|c| match field {
                "sem" => format!("{:?}", c.sem),
                "scope" => format!("{:?}", c.scope),
                "target" => format!("{:?}", c.target),
                "used" => format!("{}", c.used),
                _ => format!("{}", c.masked),
            })
            .collect();
        assert_eq!(vals.len(), n, "{field}");
    }
    // (op, type) pairs PTX has (REPORT §1.1), with the language's `cas.b16` loops: add/sub 10
    // types each (8 + i16/u16), min/max 10 (4 integer + the two float orders + four 16-bit
    // loops), exch 10 (6 + four loops), cas 10 (16/32/64-bit), and/or/xor 6 (4 + i16/u16),
    // inc/dec 1.
    let pairs = RMW_OPS
        .iter()
        .flat_map(|op| DType::ALL.iter().map(move |d| (*op, *d)))
        .filter(|(op, d)| oracle::lowering(op, *d).is_some())
        .count();
    assert_eq!(pairs, 2 * 10 + 2 * 10 + 10 + 10 + 3 * 6 + 2);
    // Legal cells: every pair element-wise and indexed on both spaces, add/sub/min/max pairs in
    // the three scatter forms, loads and stores of every type.
    let legal = cells()
        .into_iter()
        .filter(|&(op, dtype, form, space)| {
            oracle::reasons(&Combo {
                op,
                dtype,
                form,
                space,
                sem: None,
                scope: None,
                used: false,
                masked: false,
                target: None,
            })
            .is_empty()
        })
        .count();
    assert_eq!(
        legal,
        pairs * 2 * 2 + (2 * 10 + 2 * 10) * 3 * 2 + 2 * 13 * 2
    );
}

fn error_of(c: &Combo) -> String {
    match tilus::core::compile(&build::kernel(c)) {
        Ok(_) => panic!("{} compiled", c.name()),
        Err(ds) => ds.iter().map(|d| d.render()).collect::<Vec<_>>().join("\n"),
    }
}

/// The help of a few rejected combinations says what to write instead, concretely.
#[test]
fn atomic_matrix_help_texts() {
    let base = Combo {
        op: "xor",
        dtype: DType::F32,
        form: Form::Elementwise,
        space: Space::Global,
        sem: None,
        scope: None,
        used: false,
        masked: false,
        target: None,
    };
    // (op, type, words the help must contain)
    let cases: [(&str, DType, &[&str]); 6] = [
        // Bitwise ops on a float: a same-width integer tensor.
        ("xor", DType::F32, &["`u32`"]),
        // Bitwise ops on a 16-bit float: the 16-bit integer tensor.
        ("and", DType::BF16, &["`u16`"]),
        // inc on 64 bits: u32 only.
        ("inc", DType::I64, &["`u32`"]),
        // 8-bit add: a 32-bit accumulator.
        ("add", DType::U8, &["32-bit"]),
        // inc on 16 bits: u32 only (every other 16-bit integer op is a cas loop).
        ("inc", DType::U16, &["`u32`"]),
        // bool: an integer flag tensor.
        ("or", DType::Bool, &["`u32`"]),
    ];
    for (op, dtype, words) in cases {
        let c = Combo { op, dtype, ..base };
        let text = error_of(&c);
        for w in words {
            assert!(
                text.contains("= help:") && text.contains(w),
                "{op} on {}: help should mention {w}:\n{text}",
                dtype.name()
            );
        }
    }
    // bf16 add with an explicit target below sm_90 says which target it needs.
    let c = Combo {
        op: "add",
        dtype: DType::BF16,
        target: Some(80),
        ..base
    };
    let text = error_of(&c);
    assert!(text.contains("sm_90") && text.contains("= help:"), "{text}");
}

#[test]
fn atomic_matrix_emulator_contention() {
    emu::run_all("emulator (emu::launch)", &emu::raw_emulator);
}

/// The same subset through the runtime on every backend: the strict emulator, and the GPU with
/// `--features cuda` (`TILUS_REQUIRE_GPU=1` makes a missing GPU a failure).
#[test]
fn atomic_matrix_backends_contention() {
    for dev in common::backends() {
        let name = dev.name();
        emu::run_all(&name, &|c, k, blocks, inputs| {
            backend::run_on(&dev, c, k, blocks, inputs)
        });
    }
}
