//! A mutation fuzzer for `#[tile_kernel]`, run as unit tests of this crate so that it goes
//! through the macro's own path (`expand::front`, `expand::compile_caught`, `expand::emit`).
//!
//! Seeds are every `#[tile_kernel(..)] fn` in the workspace's tests, examples, trybuild cases
//! and documentation (`corpus`), read at test time. Each body is a seed with 1 to 8 mutations,
//! token-level (`tok`: delete, duplicate, swap, splice token trees; identifiers, literals and
//! operators from `vocab`; the attribute's `threads`/`target`) and AST-level (`astmut`:
//! crossover of expressions and statements between kernels, effects nested in arguments,
//! argument and keyword edits, shapes, wrappers, control flow, renamings to PTX words and
//! temporaries). The properties (`check`, `emulate`, and ptxas here): no panic, no hang, no
//! internal compiler error or diagnostic without a span, byte-identical PTX when compiled twice,
//! every accepted kernel's PTX assembles (batched: `tilus_testkit::ptxas::assemble_many`), and a
//! sample of accepted kernels runs on the emulator without a panic or an internal error.
//!
//! Why a custom seeded mutator and not proptest: the inputs are mutations of real kernels,
//! which proptest's generate-from-strategies model does not express (a strategy over "a syn
//! tree edited by N random visitors" has no useful value tree to shrink), and the ptxas check
//! needs thousands of bodies in flight at once to batch them, where proptest runs one case at a
//! time. Instead each body is a pure function of `(run seed, body index)`, so any failure is
//! replayed alone with `TILUS_FUZZ_SEED=.. TILUS_FUZZ_BODY=..`, and a delta-debugging reducer
//! over token trees (`reduce`) shrinks the kernel text itself, which is what a bug report needs;
//! no dependency is added.
//!
//! Environment: `TILUS_FUZZ_SEED` (default: the clock, printed), `TILUS_FUZZ_BODIES` (default
//! [`DEFAULT_BODIES`]; 1000000 for a release check), `TILUS_FUZZ_BODY` (replay one body and
//! print it), `TILUS_FUZZ_FILE` (check the kernels of one file, e.g. a bug's repro),
//! `TILUS_FUZZ_DUMP` (a folder for the PTX of a replayed kernel), `TILUS_FUZZ_THREADS` and
//! `TILUS_FUZZ_PTXAS_THREADS`, `TILUS_FUZZ_EMU_EVERY` (1 in N accepted kernels is emulated,
//! default 4), `TILUS_FUZZ_HANG_SECS` (per body, default 30), `TILUS_FUZZ_REDUCE_SECS` (per bug,
//! default 20), `TILUS_FUZZ_IGNORE_KNOWN=1` (known bugs fail the run too),
//! `TILUS_FUZZ_SHOW_KNOWN=1` (and are minimised and printed).

mod astmut;
mod check;
pub(crate) mod corpus;
mod emulate;
mod reduce;
mod rng;
mod tok;
mod vocab;

use check::{Class, Failure, Stage};
use corpus::Corpus;
use rng::Rng;
use std::collections::{BTreeMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tilus_testkit::ptxas;
use tok::Kernel;

/// Bodies of the default run (CI: about two minutes on two cores in the test profile).
pub const DEFAULT_BODIES: u64 = 30_000;

/// PTX modules larger than this (long unrolled bodies; tiles themselves are limited to
/// `MAX_ELEMENTS_PER_THREAD` elements per thread) are assembled alone and with `-O0`: ptxas's
/// optimiser can take minutes on them, while its checks of the PTX are the same.
const BIG_PTX: usize = 256 << 10;

fn ptxas_args(modules: &[&str]) -> &'static [&'static str] {
    if modules.iter().any(|m| m.len() > BIG_PTX) {
        &["-O0"]
    } else {
        &[]
    }
}

/// Salt of the emulator's generator (its inputs for body `i` are replayable on their own).
const EMU_SALT: u64 = 0x5EED_E1A7_0000_0001;

// ---------------------------------------------------------------------------------------------
// Panics: caught per body; the hook stays quiet on fuzzer threads and remembers where.

thread_local! {
    static PANIC_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().unwrap_or("").to_string();
            if name.starts_with("tilus-fuzz") || name == "tilus-emu" {
                let at = info
                    .location()
                    .map(|l| format!(" (at {}:{})", l.file(), l.line()))
                    .unwrap_or_default();
                let msg = panic_message(info.payload());
                PANIC_AT.with(|p| *p.borrow_mut() = Some(at.clone()));
                // The emulator catches panics of its blocks and reports their message: where
                // they happened is looked up here by message.
                let mut recent = EMU_PANICS.lock().unwrap_or_else(|p| p.into_inner());
                if recent.len() > 64 {
                    recent.remove(0);
                }
                recent.push((msg, at));
            } else {
                previous(info);
            }
        }));
    });
}

/// Recent panics on fuzzer and emulator threads: (message, location).
static EMU_PANICS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Where a recent panic with a message contained in `text` happened.
fn panic_location_of(text: &str) -> Option<String> {
    let recent = EMU_PANICS.lock().unwrap_or_else(|p| p.into_inner());
    recent
        .iter()
        .rev()
        .find(|(m, _)| !m.is_empty() && text.contains(m.as_str()))
        .map(|(_, at)| at.clone())
}

fn take_panic_location() -> Option<String> {
    PANIC_AT.with(|p| p.borrow_mut().take())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

// ---------------------------------------------------------------------------------------------
// Bodies.

pub struct Body {
    pub kernel: Kernel,
    pub seed: usize,
    pub mutations: Vec<&'static str>,
}

/// Body `index` of the run with seed `seed`: the seeds themselves first, then mutants.
pub fn generate(corpus: &Corpus, seed: u64, index: u64) -> Body {
    let seeds = &corpus.seeds;
    if (index as usize) < seeds.len() {
        return Body {
            kernel: seeds[index as usize].kernel.clone(),
            seed: index as usize,
            mutations: Vec::new(),
        };
    }
    let mut rng = Rng::for_body(seed, index);
    let s = rng.below(seeds.len());
    let mut k = seeds[s].kernel.clone();
    let mut count = 1;
    while count < 8 && rng.chance(1, 2) {
        count += 1;
    }
    let token_weights: Vec<u32> = tok::TOKEN_MUTATIONS.iter().map(|m| m.1).collect();
    let ast_weights: Vec<u32> = astmut::AST_MUTATIONS.iter().map(|m| m.1).collect();
    let mut mutations = Vec::new();
    for _ in 0..count {
        if k.size() > 4000 {
            break;
        }
        for _attempt in 0..4 {
            let donor = &seeds[rng.below(seeds.len())].kernel;
            let (name, done) = if rng.chance(11, 20) {
                let w = rng.weighted(&ast_weights);
                (
                    astmut::AST_MUTATIONS[w].0,
                    astmut::mutate(&mut k, w, corpus, &mut rng),
                )
            } else {
                let w = rng.weighted(&token_weights);
                (
                    tok::TOKEN_MUTATIONS[w].0,
                    tok::mutate(&mut k, w, donor, &mut rng),
                )
            };
            if done {
                mutations.push(name);
                break;
            }
        }
    }
    Body {
        kernel: k,
        seed: s,
        mutations,
    }
}

// ---------------------------------------------------------------------------------------------
// The run.

struct Config {
    seed: u64,
    bodies: u64,
    threads: usize,
    emu_every: usize,
    hang: Duration,
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

impl Config {
    fn from_env() -> Config {
        let seed = env("TILUS_FUZZ_SEED").unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Config {
            seed,
            bodies: env("TILUS_FUZZ_BODIES").unwrap_or(DEFAULT_BODIES),
            threads: env("TILUS_FUZZ_THREADS").unwrap_or(cores).max(1),
            emu_every: env("TILUS_FUZZ_EMU_EVERY").unwrap_or(4).max(1),
            hang: Duration::from_secs(env("TILUS_FUZZ_HANG_SECS").unwrap_or(30)),
        }
    }
}

#[derive(Default)]
struct Stats {
    tried: AtomicU64,
    tokens: AtomicU64,
    parsed: AtomicU64,
    front: AtomicU64,
    accepted: AtomicU64,
    distinct_ptx: AtomicU64,
    big_ptx: AtomicU64,
    assembled: AtomicU64,
    ptxas_skipped: AtomicU64,
    ptxas_runs: AtomicU64,
    emulated: AtomicU64,
    emu_skipped: AtomicU64,
    emu_outcomes: Mutex<BTreeMap<String, u64>>,
    /// Per mutation: (bodies with it, accepted bodies with it).
    mutations: Mutex<BTreeMap<&'static str, (u64, u64)>>,
    /// Every failure: (body index, failure).
    failures: Mutex<Vec<(u64, Failure)>>,
    fatal: Mutex<Option<String>>,
}

impl Stats {
    fn fail(&self, index: u64, f: Failure) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((index, f));
    }
}

/// What a thread is doing, for the watchdog.
struct Slot {
    phase: AtomicU8,
    body: AtomicU64,
    since_ms: AtomicU64,
}

const IDLE: u8 = 0;
const COMPILE: u8 = 1;
const EMULATE: u8 = 2;
const PTXAS: u8 = 3;

impl Slot {
    fn new() -> Slot {
        Slot {
            phase: AtomicU8::new(IDLE),
            body: AtomicU64::new(0),
            since_ms: AtomicU64::new(0),
        }
    }
    fn enter(&self, phase: u8, body: u64, t0: Instant) {
        self.body.store(body, Ordering::Relaxed);
        self.since_ms
            .store(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.phase.store(phase, Ordering::Release);
    }
    fn idle(&self) {
        self.phase.store(IDLE, Ordering::Release);
    }
}

/// Modules waiting for ptxas, per target, until a batch is full.
type Pending = Mutex<BTreeMap<u32, Vec<(u64, String)>>>;

struct Shared {
    cfg: Config,
    corpus: Corpus,
    stats: Stats,
    stop: AtomicBool,
    seen_ptx: Mutex<HashSet<u64>>,
    pending: Pending,
    t0: Instant,
}

fn hash_of(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// One body: generate, check, queue its PTX, maybe emulate it.
fn run_body(sh: &Shared, i: u64, slot: &Slot, batches: &std::sync::mpsc::SyncSender<Batch>) {
    slot.enter(COMPILE, i, sh.t0);
    let st = &sh.stats;
    st.tried.fetch_add(1, Ordering::Relaxed);
    let body = generate(&sh.corpus, sh.cfg.seed, i);
    let checked = check::check(&body.kernel);
    if checked.stage > Stage::NotTokens {
        st.tokens.fetch_add(1, Ordering::Relaxed);
    }
    if checked.stage > Stage::NotRust {
        st.parsed.fetch_add(1, Ordering::Relaxed);
    }
    if checked.stage > Stage::FrontEnd {
        st.front.fetch_add(1, Ordering::Relaxed);
    }
    let accepted = checked.stage == Stage::Accepted;
    {
        let mut m = st.mutations.lock().unwrap_or_else(|p| p.into_inner());
        let mut seen = HashSet::new();
        for name in &body.mutations {
            if seen.insert(*name) {
                let e = m.entry(name).or_default();
                e.0 += 1;
                e.1 += accepted as u64;
            }
        }
    }
    if let Some(f) = checked.failure {
        st.fail(i, f);
    }
    let Some(c) = checked.compiled else {
        slot.idle();
        return;
    };
    st.accepted.fetch_add(1, Ordering::Relaxed);
    let mut emu_rng = Rng::for_body(sh.cfg.seed ^ EMU_SALT, i);
    if emu_rng.below(sh.cfg.emu_every) == 0 {
        slot.enter(EMULATE, i, sh.t0);
        match emulate::run(&c.ir, checked.safe, &mut emu_rng) {
            emulate::EmuOutcome::Skipped => {
                st.emu_skipped.fetch_add(1, Ordering::Relaxed);
            }
            emulate::EmuOutcome::Ran(kind) => {
                st.emulated.fetch_add(1, Ordering::Relaxed);
                *st.emu_outcomes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(kind.unwrap_or_else(|| "ok".into()))
                    .or_default() += 1;
            }
            emulate::EmuOutcome::Bug(m) => {
                st.emulated.fetch_add(1, Ordering::Relaxed);
                st.fail(i, Failure::new(Class::Emulator, m));
            }
        }
    }
    slot.idle();
    // The kernel and its variants for newer targets (vector atomics on sm_90) all assemble.
    let modules = std::iter::once((c.ir.target.0, c.ptx)).chain(c.variants);
    for (target, ptx) in modules {
        let fresh = sh
            .seen_ptx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(hash_of(&ptx));
        if !fresh {
            continue;
        }
        st.distinct_ptx.fetch_add(1, Ordering::Relaxed);
        if ptx.len() > BIG_PTX {
            st.big_ptx.fetch_add(1, Ordering::Relaxed);
            let _ = batches.send(vec![(i, ptx)]);
            continue;
        }
        let full = {
            let mut p = sh.pending.lock().unwrap_or_else(|p| p.into_inner());
            let q = p.entry(target).or_default();
            q.push((i, ptx));
            (q.len() >= ptxas::BATCH_MODULES).then(|| std::mem::take(q))
        };
        if let Some(b) = full {
            // Blocks while ptxas is behind (back-pressure; the watchdog sees an idle slot).
            let _ = batches.send(b);
        }
    }
}

type Batch = Vec<(u64, String)>;

/// Assemble one batch; failures are recorded per body.
fn assemble_batch(sh: &Shared, batch: &Batch) {
    let refs: Vec<&str> = batch.iter().map(|(_, p)| p.as_str()).collect();
    let st = &sh.stats;
    match ptxas::assemble_many_with(&refs, ptxas_args(&refs)) {
        Ok(r) => {
            st.assembled
                .fetch_add(r.assembled as u64, Ordering::Relaxed);
            st.ptxas_skipped
                .fetch_add(r.skipped as u64, Ordering::Relaxed);
            st.ptxas_runs.fetch_add(r.runs as u64, Ordering::Relaxed);
            for f in r.failures {
                st.fail(batch[f.index].0, ptxas_failure(f.sm, &f.log));
            }
        }
        Err(e) => {
            *st.fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            sh.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// A ptxas log as a failure: the first error line (without the file name) first.
fn ptxas_failure(sm: u32, log: &str) -> Failure {
    let first = log
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| log.lines().next())
        .unwrap_or("");
    let first = match first.find("error") {
        Some(at) => &first[at..],
        None => first,
    };
    Failure::new(Class::Ptxas, format!("sm_{sm}: {first}\n{log}"))
}

fn count(a: &AtomicU64) -> u64 {
    a.load(Ordering::Relaxed)
}

/// The figures a run is judged by.
struct Summary {
    tried: u64,
    parsed: u64,
    accepted: u64,
    assembled: u64,
    ptxas_found: bool,
    emulated: u64,
    /// No failure outside [`check::KNOWN_BUGS`], nothing fatal.
    passed: bool,
}

/// The whole run; returns the report's text and its figures.
fn fuzz(cfg: Config) -> (String, Summary) {
    install_panic_hook();
    let corpus = corpus::load();
    let n_threads = cfg.threads;
    let ptxas_threads = env("TILUS_FUZZ_PTXAS_THREADS")
        .unwrap_or(n_threads / 2)
        .max(1);
    let sh = Arc::new(Shared {
        cfg,
        corpus,
        stats: Stats::default(),
        stop: AtomicBool::new(false),
        seen_ptx: Mutex::new(HashSet::new()),
        pending: Mutex::new(BTreeMap::new()),
        t0: Instant::now(),
    });
    eprintln!(
        "fuzz: seed TILUS_FUZZ_SEED={} ({} bodies, {} seed kernels from {} files, {} worker threads, {} ptxas threads)",
        sh.cfg.seed,
        sh.cfg.bodies,
        sh.corpus.seeds.len(),
        sh.corpus.files,
        n_threads,
        ptxas_threads
    );
    let next = Arc::new(AtomicU64::new(0));
    let slots: Arc<Vec<Slot>> = Arc::new(
        (0..n_threads + ptxas_threads)
            .map(|_| Slot::new())
            .collect(),
    );
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(8 * ptxas_threads);
    let rx = Arc::new(Mutex::new(rx));
    let mut workers = Vec::new();
    for w in 0..n_threads {
        let (sh, next, slots, tx) = (sh.clone(), next.clone(), slots.clone(), tx.clone());
        workers.push(
            std::thread::Builder::new()
                .name(format!("tilus-fuzz-{w}"))
                .stack_size(64 << 20)
                .spawn(move || loop {
                    if sh.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= sh.cfg.bodies {
                        break;
                    }
                    // `check` catches the macro's and the compiler's panics; one here is the
                    // fuzzer's own (generating the body, or the emulator's arguments).
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_body(&sh, i, &slots[w], &tx)
                    }));
                    if let Err(payload) = r {
                        slots[w].idle();
                        let at = take_panic_location().unwrap_or_default();
                        sh.stats.fail(
                            i,
                            Failure::new(
                                Class::Panic,
                                format!("the fuzzer panicked: {}{at}", panic_message(&*payload)),
                            ),
                        );
                    }
                })
                .expect("a fuzzer thread"),
        );
    }
    drop(tx);
    let mut assemblers = Vec::new();
    for a in 0..ptxas_threads {
        let (sh, slots, rx) = (sh.clone(), slots.clone(), rx.clone());
        let slot_index = n_threads + a;
        assemblers.push(
            std::thread::Builder::new()
                .name(format!("tilus-fuzz-ptxas-{a}"))
                .spawn(move || loop {
                    let batch = match rx.lock().unwrap_or_else(|p| p.into_inner()).recv() {
                        Ok(b) => b,
                        Err(_) => break,
                    };
                    if sh.stop.load(Ordering::Relaxed) {
                        continue;
                    }
                    slots[slot_index].enter(PTXAS, batch[0].0, sh.t0);
                    assemble_batch(&sh, &batch);
                    slots[slot_index].idle();
                })
                .expect("a ptxas thread"),
        );
    }

    // The watchdog (this thread): a body over its time budget is a hang.
    let mut hang: Option<(u64, u8)> = None;
    let mut last_progress = Instant::now();
    let all_done = |ws: &Vec<std::thread::JoinHandle<()>>| ws.iter().all(|w| w.is_finished());
    while !all_done(&workers) {
        std::thread::sleep(Duration::from_millis(100));
        let now = sh.t0.elapsed().as_millis() as u64;
        for s in slots.iter() {
            let phase = s.phase.load(Ordering::Acquire);
            let limit = match phase {
                IDLE => continue,
                PTXAS => sh.cfg.hang.as_millis() as u64 * 10,
                _ => sh.cfg.hang.as_millis() as u64,
            };
            if now.saturating_sub(s.since_ms.load(Ordering::Relaxed)) > limit {
                hang = Some((s.body.load(Ordering::Relaxed), phase));
            }
        }
        if hang.is_some() {
            sh.stop.store(true, Ordering::Relaxed);
            break;
        }
        if last_progress.elapsed() > Duration::from_secs(15) {
            last_progress = Instant::now();
            eprintln!(
                "fuzz: {:>5.0} s: {} bodies, {} accepted, {} assembled, {} emulated",
                sh.t0.elapsed().as_secs_f64(),
                count(&sh.stats.tried),
                count(&sh.stats.accepted),
                count(&sh.stats.assembled),
                count(&sh.stats.emulated)
            );
        }
    }
    if hang.is_none() {
        for w in workers {
            let _ = w.join();
        }
        // The last partial batches.
        let rest: Vec<Batch> =
            std::mem::take(&mut *sh.pending.lock().unwrap_or_else(|p| p.into_inner()))
                .into_values()
                .filter(|b| !b.is_empty())
                .collect();
        std::thread::scope(|s| {
            for b in &rest {
                let sh = &sh;
                s.spawn(move || assemble_batch(sh, b));
            }
        });
        for a in assemblers {
            let _ = a.join();
        }
    }
    let elapsed = sh.t0.elapsed();
    report(&sh, hang, elapsed)
}

fn report(sh: &Shared, hang: Option<(u64, u8)>, elapsed: Duration) -> (String, Summary) {
    let st = &sh.stats;
    let mut failures = std::mem::take(&mut *st.failures.lock().unwrap_or_else(|p| p.into_inner()));
    if let Some((i, phase)) = hang {
        let what = match phase {
            EMULATE => "the emulator",
            PTXAS => "ptxas (on the batch with this body)",
            _ => "parse and compile",
        };
        failures.push((
            i,
            Failure::new(
                Class::Hang,
                format!("{what} did not finish within {:?}", sh.cfg.hang),
            ),
        ));
    }
    failures.sort_by_key(|(i, _)| *i);
    // Distinct bugs by signature: (first body, failure, bodies).
    let mut distinct: BTreeMap<String, (u64, Failure, u64)> = BTreeMap::new();
    for (i, f) in failures {
        distinct
            .entry(f.signature())
            .and_modify(|e| e.2 += 1)
            .or_insert((i, f, 1));
    }
    let by_class = |c: Class, known: bool| -> u64 {
        distinct
            .values()
            .filter(|(_, f, _)| f.class == c && f.known() == known)
            .map(|e| e.2)
            .sum()
    };
    let mut out = String::new();
    use std::fmt::Write;
    let tried = count(&st.tried);
    let pct = |n: u64| 100.0 * n as f64 / tried.max(1) as f64;
    let _ = writeln!(
        out,
        "fuzz report (TILUS_FUZZ_SEED={}, {:.1} s, {} threads)",
        sh.cfg.seed,
        elapsed.as_secs_f64(),
        sh.cfg.threads
    );
    let line = |out: &mut String, what: &str, n: u64, extra: String| {
        let _ = writeln!(out, "  {what:<26}{n:>9}  {extra}");
    };
    line(
        &mut out,
        "bodies tried",
        tried,
        format!("({} seeds)", sh.corpus.seeds.len()),
    );
    line(
        &mut out,
        "lexed",
        count(&st.tokens),
        format!("{:.1}%", pct(count(&st.tokens))),
    );
    line(
        &mut out,
        "syn-parsed",
        count(&st.parsed),
        format!("{:.1}%", pct(count(&st.parsed))),
    );
    line(
        &mut out,
        "past the macro front end",
        count(&st.front),
        format!("{:.1}%", pct(count(&st.front))),
    );
    line(
        &mut out,
        "accepted by the compiler",
        count(&st.accepted),
        format!("{:.1}%", pct(count(&st.accepted))),
    );
    line(
        &mut out,
        "distinct PTX modules",
        count(&st.distinct_ptx),
        format!(
            "({} over {} KiB: assembled alone, -O0)",
            count(&st.big_ptx),
            BIG_PTX >> 10
        ),
    );
    line(
        &mut out,
        "ptxas-assembled",
        count(&st.assembled),
        format!(
            "({} ptxas runs{})",
            count(&st.ptxas_runs),
            match count(&st.ptxas_skipped) {
                0 => String::new(),
                n => format!(", {n} SKIPPED: no ptxas"),
            }
        ),
    );
    let outcomes = st
        .emu_outcomes
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    line(
        &mut out,
        "emulator-run",
        count(&st.emulated),
        format!(
            "({}{})",
            outcomes
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            match count(&st.emu_skipped) {
                0 => String::new(),
                n => format!("; {n} skipped: parameter types without arguments"),
            }
        ),
    );
    let mut all_zero = true;
    for (name, class) in [
        ("panics", Class::Panic),
        ("internal compiler errors", Class::Internal),
        ("diagnostics without span", Class::Unspanned),
        ("nondeterministic PTX", Class::Nondeterminism),
        ("IR bytes round trips", Class::Roundtrip),
        ("ptxas failures", Class::Ptxas),
        ("emulator bugs", Class::Emulator),
        ("hangs", Class::Hang),
    ] {
        let new = by_class(class, false);
        let known = by_class(class, true);
        all_zero &= new == 0;
        line(
            &mut out,
            name,
            new,
            if known > 0 {
                format!("(+ {known} of known bugs, KNOWN_BUGS)")
            } else {
                String::new()
            },
        );
    }
    let muts = st
        .mutations
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let _ = writeln!(
        out,
        "  mutations (bodies, accepted): {}",
        muts.iter()
            .map(|(k, (n, a))| format!("{k} {n}/{a}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(e) = st.fatal.lock().unwrap_or_else(|p| p.into_inner()).clone() {
        let _ = writeln!(out, "FATAL: {e}");
        all_zero = false;
    }

    // Each distinct bug: minimised, with how to replay it.
    let reduce_budget = Duration::from_secs(env("TILUS_FUZZ_REDUCE_SECS").unwrap_or(20));
    let mut reported = 0;
    for (sig, (i, f, n)) in &distinct {
        let known = f.known();
        if known && !std::env::var("TILUS_FUZZ_SHOW_KNOWN").is_ok_and(|v| v == "1") {
            let _ = writeln!(out, "\nknown bug ({n} bodies): {sig}");
            continue;
        }
        reported += 1;
        if reported > 12 {
            let _ = writeln!(out, "\n... and more: {sig} ({n} bodies)");
            continue;
        }
        let body = generate(&sh.corpus, sh.cfg.seed, *i);
        let small = if f.class == Class::Hang {
            body.kernel.clone()
        } else {
            minimise(&body.kernel, f, sh.cfg.seed, *i, reduce_budget)
        };
        let _ = writeln!(
            out,
            "\n{}BUG ({n} bodies): {sig}\n  replay: TILUS_FUZZ_SEED={} TILUS_FUZZ_BODY={i} (seed kernel {}, mutations {:?})\n  message: {}\n--- minimised ({} token trees) ---\n{}\n--- original ---\n{}",
            if known { "known " } else { "" },
            sh.cfg.seed,
            sh.corpus.seeds[body.seed].origin,
            body.mutations,
            f.message.lines().take(12).collect::<Vec<_>>().join("\n    "),
            small.size(),
            small.source(),
            body.kernel.source(),
        );
    }
    let summary = Summary {
        tried,
        parsed: count(&st.parsed),
        accepted: count(&st.accepted),
        assembled: count(&st.assembled),
        ptxas_found: count(&st.ptxas_skipped) == 0,
        emulated: count(&st.emulated),
        passed: all_zero,
    };
    (out, summary)
}

/// The smallest kernel that still fails the same way (on a thread whose panics stay quiet).
fn minimise(k: &Kernel, f: &Failure, seed: u64, index: u64, budget: Duration) -> Kernel {
    let (original, f) = (k.clone(), f.clone());
    let k = k.clone();
    std::thread::Builder::new()
        .name("tilus-fuzz-reduce".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let sig = f.signature();
            let mut fails = |c: &Kernel| {
                reproduce(c, f.class, seed, index).is_some_and(|g| g.signature() == sig)
            };
            let max_tests = 50_000;
            reduce::reduce(&k, &mut fails, max_tests, budget)
        })
        .expect("a reducer thread")
        .join()
        // A panic in the reducer (a fuzzer bug) leaves the kernel as it was.
        .unwrap_or(original)
}

/// Check `k` for failures of `class` (with the emulator inputs of body `index`).
fn reproduce(k: &Kernel, class: Class, seed: u64, index: u64) -> Option<Failure> {
    let checked = check::check(k);
    match class {
        Class::Ptxas => {
            let c = checked.compiled?;
            let mut modules = vec![c.ptx.as_str()];
            modules.extend(c.variants.iter().map(|(_, p)| p.as_str()));
            let r = ptxas::assemble_many_with(&modules, ptxas_args(&modules)).ok()?;
            r.failures.first().map(|f| ptxas_failure(f.sm, &f.log))
        }
        Class::Emulator => {
            let safe = checked.safe;
            let c = checked.compiled?;
            let mut emu_rng = Rng::for_body(seed ^ EMU_SALT, index);
            emu_rng.below(1);
            match emulate::run(&c.ir, safe, &mut emu_rng) {
                emulate::EmuOutcome::Bug(m) => Some(Failure::new(Class::Emulator, m)),
                _ => None,
            }
        }
        _ => checked.failure,
    }
}

// ---------------------------------------------------------------------------------------------
// Tests.

#[test]
fn fuzz_kernels() {
    let cfg = Config::from_env();
    if let Some(i) = env::<u64>("TILUS_FUZZ_BODY") {
        replay(&cfg, i);
        return;
    }
    if let Ok(path) = std::env::var("TILUS_FUZZ_FILE") {
        check_file(&path);
        return;
    }
    let bodies = cfg.bodies;
    let (report, s) = fuzz(cfg);
    eprintln!("{report}");
    assert!(s.passed, "the fuzzer found bugs (see the report above)");
    // The run must have exercised something.
    assert_eq!(s.tried, bodies);
    if bodies >= 2000 {
        assert!(s.parsed > bodies / 3, "too few bodies parse");
        assert!(s.accepted > bodies / 20, "too few bodies compile");
        assert!(s.emulated > bodies / 200, "too few emulator runs");
        if s.ptxas_found {
            assert!(s.assembled > bodies / 40, "too few kernels assembled");
        }
    }
}

/// `TILUS_FUZZ_BODY=i`: body `i` of the run alone, printed with what happened to it.
fn replay(cfg: &Config, i: u64) {
    install_panic_hook();
    let corpus = corpus::load();
    let body = generate(&corpus, cfg.seed, i);
    eprintln!(
        "body {i} of TILUS_FUZZ_SEED={} (seed kernel {}, mutations {:?}):\n{}",
        cfg.seed,
        corpus.seeds[body.seed].origin,
        body.mutations,
        body.kernel.source()
    );
    let found = check_all(body.kernel, format!("body{i}"), vec![(cfg.seed, i)]);
    assert!(found.is_empty(), "body {i} fails");
}

/// `TILUS_FUZZ_FILE=path.rs`: every `#[tile_kernel]` of a file through every check, with 32
/// emulator runs each (to confirm a bug's repro, or its fix).
fn check_file(path: &str) {
    install_panic_hook();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut kernels = Vec::new();
    corpus::kernels_in_source(&text, &mut kernels);
    assert!(!kernels.is_empty(), "no #[tile_kernel] fn in {path}");
    let mut failed = 0;
    for (name, k) in kernels {
        eprintln!("--- {name}");
        let runs = (0..32).map(|j| (0x5EED, j)).collect();
        failed += !check_all(k, name, runs).is_empty() as usize;
    }
    assert_eq!(failed, 0, "{failed} kernels of {path} fail");
}

/// Every property of one kernel, with the emulator inputs of each `(seed, body)` in `emu`;
/// prints the stage and the failures (`TILUS_FUZZ_DUMP=dir` also writes the PTX there).
fn check_all(k: Kernel, label: String, emu: Vec<(u64, u64)>) -> Vec<Failure> {
    std::thread::Builder::new()
        .name("tilus-fuzz-replay".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let c = check::check(&k);
            eprintln!("stage: {:?}", c.stage);
            if let Some(why) = &c.rejection {
                eprintln!("rejected: {why}");
            }
            if let (Some(dir), Some(c)) = (std::env::var_os("TILUS_FUZZ_DUMP"), &c.compiled) {
                let path = std::path::Path::new(&dir).join(format!("{label}.ptx"));
                std::fs::write(&path, &c.ptx).expect("TILUS_FUZZ_DUMP is writable");
                eprintln!("PTX written to {}", path.display());
            }
            let mut found: Vec<Failure> = c.failure.into_iter().collect();
            found.extend(reproduce(&k, Class::Ptxas, 0, 0));
            for (seed, i) in emu {
                if let Some(f) = reproduce(&k, Class::Emulator, seed, i) {
                    found.push(f);
                    break;
                }
            }
            for f in &found {
                eprintln!("failure: {}\n{}", f.signature(), f.message);
            }
            found
        })
        .expect("a thread")
        .join()
        .expect("no panic escapes the checks")
}

#[test]
fn fuzz_corpus_has_every_kind_of_seed() {
    let c = corpus::load();
    let origins: Vec<&str> = c.seeds.iter().map(|s| s.origin.as_str()).collect();
    assert!(
        c.seeds.len() >= 80,
        "only {} seeds: {origins:?}",
        c.seeds.len()
    );
    for part in [
        "tests/ui/",
        "examples/",
        "(doc)",
        "README.md",
        "gew_add",
        "hist_t4096",
    ] {
        assert!(
            origins.iter().any(|o| o.contains(part)),
            "no seed from {part}: {origins:?}"
        );
    }
    assert!(c.exprs.len() > 1000 && c.stmts.len() > 300 && c.effects.len() > 50);
    // Every seed prints to tokens that parse back as a function.
    for s in &c.seeds {
        let ts = s.kernel.item_tokens().expect("lexes");
        syn::parse2::<syn::ItemFn>(ts).unwrap_or_else(|e| panic!("{}: {e}", s.origin));
    }
}

#[test]
fn fuzz_bodies_are_replayable() {
    let c = corpus::load();
    for i in [0, 1, 500, 501, 12345] {
        let a = generate(&c, 42, i);
        let b = generate(&c, 42, i);
        assert_eq!(a.kernel, b.kernel);
        assert_eq!(a.mutations, b.mutations);
    }
    // Mutants differ from their seeds (mostly).
    let changed = (1000..1100)
        .filter(|&i| {
            let b = generate(&c, 7, i);
            b.kernel != c.seeds[b.seed].kernel
        })
        .count();
    assert!(changed > 90, "{changed}");
}

#[test]
fn fuzz_reducer_finds_the_culprit() {
    let k = Kernel {
        attr: tok::lex("threads = 128"),
        item: tok::lex(
            "fn k(x: GlobalTensor<i32>) { let a = arange(32); let b = a + 1; atomic::global_add(x, b); sync(); }",
        ),
    };
    let mut fails = |c: &Kernel| {
        let t = tok::print(&c.item);
        t.contains("global_add") && syn::parse_str::<syn::ItemFn>(&t).is_ok()
    };
    let small = reduce::reduce(&k, &mut fails, 10_000, Duration::from_secs(30));
    let text = tok::print(&small.item);
    assert!(small.size() < 15, "{text}");
    assert!(small.attr.is_empty());
}
