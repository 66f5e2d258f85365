//! The whole product, compiled and checked in parallel, and the deterministic choice of the
//! accepted kernels that go to ptxas.

use super::bugs::{known, KNOWN_BUGS};
use super::model::*;
use super::{build, diagcheck, oracle, ptxcheck};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Every combination, in a fixed order: cell × sem × scope × target × used. Masks (the tilus
/// `mask`, or `check_bounds = false` for the indexed forms) alternate in pairs, so both values
/// meet both `used` values in every cell.
pub fn all_combos() -> Vec<Combo> {
    let mut v = Vec::new();
    for (op, dtype, form, space) in cells() {
        for sem in SEMS {
            for scope in SCOPES {
                for target in TARGETS {
                    for used in [false, true] {
                        // A store has no result to use.
                        if op == "store" && used {
                            continue;
                        }
                        let masked = (v.len() / 2) % 2 == 1;
                        v.push(Combo {
                            op,
                            dtype,
                            form,
                            space,
                            sem,
                            scope,
                            used,
                            masked,
                            target,
                        });
                    }
                }
            }
        }
    }
    v
}

/// The kernels chosen for ptxas: for every cell, one per declared target (the oldest
/// combination of the cell with that `.target`: so every legal cell is assembled for every
/// sm_70/80/90 at or above its row's minimum, through the explicit-target combinations), and one
/// per distinct spelling of its atomic instructions per target (every `atom`/`red`/`ld`/`st`
/// qualifier string the matrix produces reaches ptxas at least once on each target it occurs
/// with).
#[derive(Default)]
pub struct Chosen {
    /// key → (combination index, PTX).
    pub by_key: BTreeMap<String, (usize, String)>,
}

impl Chosen {
    fn offer(&mut self, key: String, i: usize, ptx: &str) {
        match self.by_key.get(&key) {
            Some((j, _)) if *j <= i => {}
            _ => {
                self.by_key.insert(key, (i, ptx.to_string()));
            }
        }
    }
    fn merge(&mut self, other: Chosen) {
        for (k, (i, p)) in other.by_key {
            self.offer(k, i, &p);
        }
    }
    /// The chosen kernels, without repeats, by combination index (a combination may give two:
    /// its kernel and an sm_90 variant).
    pub fn kernels(&self) -> Vec<(usize, &str)> {
        let mut v: Vec<(usize, &str)> = self
            .by_key
            .values()
            .map(|(i, p)| (*i, p.as_str()))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[derive(Default)]
pub struct Results {
    pub accepted: usize,
    pub rejected: usize,
    pub failures: Vec<String>,
    /// Per known bug: the cells it covers that still fail.
    pub known_hits: Vec<usize>,
    /// Cells with a known bug that now pass (the entry must go).
    pub known_fixed: Vec<String>,
    /// Legal cells, and the targets their accepted kernels declared.
    pub legal_cells: BTreeMap<String, BTreeSet<u32>>,
    pub chosen: Chosen,
}

fn cell_key(c: &Combo) -> String {
    format!(
        "{} {} {} {}",
        c.op,
        c.dtype.name(),
        c.form.tag(),
        c.space.name()
    )
}

/// Compile `c` and check it against the oracle; `Ok(Some((target, ptx)))` for an accepted one.
/// An accepted combination: its target, its PTX and its variants for newer targets.
type Accepted = (u32, String, Vec<(u32, String)>);

fn check_one(c: &Combo) -> Result<Option<Accepted>, String> {
    let reasons = oracle::reasons(c);
    match (tilus::core::compile(&build::kernel(c)), reasons.is_empty()) {
        (Ok(_), false) => Err(format!("accepted, but the oracle rejects it: {reasons:?}")),
        (Err(ds), true) => Err(format!(
            "rejected, but the oracle accepts it: {}",
            ds.iter()
                .map(|d| d.render().replace('\n', " / "))
                .collect::<Vec<_>>()
                .join("; ")
        )),
        (Err(ds), false) => diagcheck::check(c, &reasons, &ds).map(|()| None),
        (Ok(k), true) => {
            let t = oracle::expected_target(c);
            if k.ir.target.0 != t {
                return Err(format!("target sm_{}, expected sm_{t}", k.ir.target.0));
            }
            ptxcheck::check(c, &k.ptx, t)?;
            Ok(Some((t, k.ptx, k.variants)))
        }
    }
}

/// Compile and check every combination (on all cores).
pub fn run(combos: &[Combo]) -> Results {
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Results {
        known_hits: vec![0; KNOWN_BUGS.len()],
        ..Results::default()
    });
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let mut r = Results {
                    known_hits: vec![0; KNOWN_BUGS.len()],
                    ..Results::default()
                };
                loop {
                    // Chunks keep the shared counter cold.
                    let start = next.fetch_add(64, Ordering::Relaxed);
                    if start >= combos.len() {
                        break;
                    }
                    for (i, c) in combos.iter().enumerate().skip(start).take(64) {
                        let result = check_one(c);
                        let bug = known(c, &oracle::reasons(c));
                        match (result, bug) {
                            (Err(_), Some(b)) => {
                                r.known_hits[b] += 1;
                                r.rejected += 1;
                            }
                            (Ok(_), Some(b)) => r.known_fixed.push(format!(
                                "{}: passes now; remove KNOWN_BUGS entry `{}` ({})",
                                c.name(),
                                KNOWN_BUGS[b].id,
                                KNOWN_BUGS[b].what
                            )),
                            (Err(e), None) => r.failures.push(format!("{}: {e}", c.name())),
                            (Ok(None), None) => r.rejected += 1,
                            (Ok(Some((t, ptx, variants))), None) => {
                                for (vt, v) in &variants {
                                    let spelling = ptxcheck::rmw_instrs(v).join(" ");
                                    r.chosen.offer(format!("variant {spelling} @{vt}"), i, v);
                                }
                                r.accepted += 1;
                                r.legal_cells.entry(cell_key(c)).or_default().insert(t);
                                r.chosen
                                    .offer(format!("cell {} @{t}", cell_key(c)), i, &ptx);
                                let mut spelling: Vec<&str> = ptxcheck::rmw_instrs(&ptx);
                                spelling.extend(ptxcheck::ordered_accesses(&ptx));
                                spelling.sort_unstable();
                                spelling.dedup();
                                r.chosen
                                    .offer(format!("ins {} @{t}", spelling.join(" ")), i, &ptx);
                            }
                        }
                    }
                }
                let mut o = out.lock().unwrap();
                o.accepted += r.accepted;
                o.rejected += r.rejected;
                o.failures.append(&mut r.failures);
                o.known_fixed.append(&mut r.known_fixed);
                for (a, b) in o.known_hits.iter_mut().zip(&r.known_hits) {
                    *a += b;
                }
                for (k, ts) in r.legal_cells {
                    o.legal_cells.entry(k).or_default().extend(ts);
                }
                o.chosen.merge(r.chosen);
            });
        }
    });
    let mut r = out.into_inner().unwrap();
    r.failures.sort();
    r.known_fixed.sort();
    r
}
