//! Running `ptxas` on generated PTX, so every test in the workspace can prove that what the
//! generator (`tilus_core::ptx`) prints is accepted by NVIDIA's assembler (no GPU needed).
//!
//! Which assembler: `TILUS_PTXAS_SM70` for `sm_70` (CUDA 13 dropped Volta, so that one is CUDA
//! 12.8), `TILUS_PTXAS` otherwise; without the variables, the copies `scripts/install-ptxas`
//! puts under `<workspace>/.tools/`. Without any, the outcome is `Skipped`, unless `CI=true` or
//! `TILUS_REQUIRE_PTXAS=1` make a missing assembler an error.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

/// What happened to one assembly request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssembleOutcome {
    /// ptxas accepted the text; `log` is its (possibly empty) diagnostic output.
    Assembled { ptxas: PathBuf, log: String },
    /// No assembler was found (and none is required).
    Skipped,
}

impl AssembleOutcome {
    pub fn is_assembled(&self) -> bool {
        matches!(self, AssembleOutcome::Assembled { .. })
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The ptxas to use for `sm`, if any.
pub fn find_ptxas(sm: u32) -> Option<PathBuf> {
    let root = workspace_root();
    let cu13 = root.join(".tools/cu13/nvidia/cu13/bin/ptxas");
    let cu12 = root.join(".tools/cu12/nvidia/cuda_nvcc/bin/ptxas");
    let (var, defaults) = if sm < 75 {
        ("TILUS_PTXAS_SM70", vec![cu12])
    } else {
        ("TILUS_PTXAS", vec![cu13, cu12])
    };
    if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    defaults.into_iter().find(|p| p.is_file())
}

fn required() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
        || std::env::var("TILUS_REQUIRE_PTXAS")
            .map(|v| v == "1")
            .unwrap_or(false)
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Removes the temporary files however `assemble` returns.
struct TempFiles(Vec<PathBuf>);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Assemble `ptx` for `sm_{sm}`. `Err` carries ptxas's diagnostics (or why it could not run).
pub fn assemble(ptx: &str, sm: u32) -> Result<AssembleOutcome, String> {
    let Some(ptxas) = find_ptxas(sm) else {
        return missing(sm);
    };
    match run_ptxas(&ptxas, ptx, sm, &[])? {
        Ok(log) => Ok(AssembleOutcome::Assembled { ptxas, log }),
        Err(log) => Err(format!(
            "ptxas ({}) failed for sm_{sm}:\n{log}",
            ptxas.display()
        )),
    }
}

/// Registers per thread ptxas gives the kernel of `ptx` for `sm_{sm}` (`ptxas -v`), and the
/// bytes it spills; `Ok(None)` without an assembler (where none is required).
pub fn registers(ptx: &str, sm: u32) -> Result<Option<(u32, u32)>, String> {
    let Some(ptxas) = find_ptxas(sm) else {
        return missing(sm).map(|_| None);
    };
    let log = run_ptxas(&ptxas, ptx, sm, &["-v"])?
        .map_err(|log| format!("ptxas ({}) failed for sm_{sm}:\n{log}", ptxas.display()))?;
    // `ptxas info : Used 40 registers, ...` and `0 bytes stack frame, 0 bytes spill stores, ..`
    let number_before = |text: &str, what: &str| -> Option<u32> {
        let head = &text[..text.find(what)?];
        head.split_whitespace().last()?.parse().ok()
    };
    let regs = number_before(&log, " registers")
        .ok_or_else(|| format!("no register count in ptxas's output:\n{log}"))?;
    let spills = number_before(&log, " bytes spill stores").unwrap_or(0);
    Ok(Some((regs, spills)))
}

/// No assembler for `sm`: skipped, or an error where one is required.
fn missing(sm: u32) -> Result<AssembleOutcome, String> {
    if required() {
        return Err(format!(
            "no ptxas for sm_{sm} (set TILUS_PTXAS / TILUS_PTXAS_SM70 or run scripts/install-ptxas), and CI=true or TILUS_REQUIRE_PTXAS=1 requires one"
        ));
    }
    Ok(AssembleOutcome::Skipped)
}

/// Run `ptxas` (with `args` before the usual ones) on `text` for `sm_{sm}`: `Ok(Ok(log))` when
/// it accepts the text, `Ok(Err(log))` when it rejects it, `Err` when it cannot be run.
fn run_ptxas(
    ptxas: &Path,
    text: &str,
    sm: u32,
    args: &[&str],
) -> Result<Result<String, String>, String> {
    // Unique per process, call and time, so parallel tests never share a file.
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let stem = format!("tilus-ptx-{}-{n}-{nanos}", std::process::id());
    let dir = std::env::temp_dir();
    let input = dir.join(format!("{stem}.ptx"));
    let output = dir.join(format!("{stem}.cubin"));
    let _cleanup = TempFiles(vec![input.clone(), output.clone()]);
    std::fs::write(&input, text).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let out = Command::new(ptxas)
        .args(args)
        .arg(format!("-arch=sm_{sm}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(if out.status.success() {
        Ok(log)
    } else {
        Err(log)
    })
}

// ---------------------------------------------------------------------------------------------
// Many modules in few ptxas runs.

/// Modules merged into one ptxas run at most (and bytes of PTX, whichever comes first).
pub const BATCH_MODULES: usize = 64;
pub const BATCH_BYTES: usize = 2 << 20;

/// A module [`assemble_many`] could not assemble.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchFailure {
    /// Its index in the slice given to [`assemble_many`].
    pub index: usize,
    pub sm: u32,
    /// ptxas's diagnostics for the module alone (or why the module could not be merged).
    pub log: String,
}

/// What [`assemble_many`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchReport {
    /// Modules ptxas accepted.
    pub assembled: usize,
    /// Modules not assembled because no assembler was found (and none is required).
    pub skipped: usize,
    /// ptxas processes started (merged runs, and the runs that bisect a rejected batch).
    pub runs: usize,
    /// The rejected modules, by index.
    pub failures: Vec<BatchFailure>,
}

/// A module split into its header (`.version`, `.target`, `.address_size`), which must be equal
/// for modules to be merged, its declarations of external shared memory (the generator's shared
/// window, which every module declares alike and a merged module declares once) and its body
/// (everything else).
struct Parts<'a> {
    header: Vec<&'a str>,
    sm: u32,
    shared: Vec<&'a str>,
    body: String,
    entry: Option<String>,
}

fn split_module(ptx: &str) -> Result<Parts<'_>, String> {
    let mut header = Vec::new();
    let mut shared = Vec::new();
    let mut body = String::new();
    let mut sm = None;
    let mut entry = None;
    for line in ptx.lines() {
        let t = line.trim();
        if t.starts_with(".version") || t.starts_with(".address_size") {
            header.push(t);
        } else if let Some(target) = t.strip_prefix(".target") {
            header.push(t);
            let digits: String = target
                .trim()
                .trim_start_matches("sm_")
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            sm = digits.parse().ok();
        } else if t.starts_with(".extern .shared") {
            shared.push(t);
        } else {
            if entry.is_none() {
                if let Some(at) = t.find(".entry ") {
                    let name: String = t[at + 7..]
                        .trim_start()
                        .chars()
                        .take_while(|&c| is_ident_char(c))
                        .collect();
                    entry = Some(name);
                }
            }
            body.push_str(line);
            body.push('\n');
        }
    }
    let sm = sm.ok_or("no `.target sm_NN` line")?;
    Ok(Parts {
        header,
        sm,
        shared,
        body,
        entry,
    })
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%')
}

/// `body` with the entry `entry` and the names derived from it (`{entry}$...`, its parameters)
/// renamed to `to`.
fn rename_entry(body: &str, entry: &str, to: &str) -> String {
    let mut out = String::with_capacity(body.len() + 64);
    let mut rest = body;
    while let Some(start) = rest.find(|c: char| is_ident_char(c)) {
        out.push_str(&rest[..start]);
        let len = rest[start..]
            .find(|c: char| !is_ident_char(c))
            .unwrap_or(rest.len() - start);
        let word = &rest[start..start + len];
        match word.strip_prefix(entry) {
            Some(suffix) if suffix.is_empty() || suffix.starts_with('$') => {
                out.push_str(to);
                out.push_str(suffix);
            }
            _ => out.push_str(word),
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// Assemble many single-entry modules (as `tilus_core::ptx::generate` prints them), each for the
/// `sm_NN` of its own `.target`, in few ptxas runs: modules with the same header are merged
/// into one file (one header, each distinct `.extern .shared` declaration once (the shared
/// window), all entries; an entry whose name is already in the file is renamed, with its
/// parameters, to `{name}$b{k}`), at most [`BATCH_MODULES`] modules or [`BATCH_BYTES`] bytes
/// per run. When
/// ptxas rejects a merged file, it is bisected down to the modules it rejects, each reported
/// with ptxas's diagnostics for that module assembled alone.
///
/// Modules must declare nothing at module scope besides external shared memory (declared alike
/// wherever two modules use one name) and their entry.
/// Without an assembler every module is `skipped`, unless one is required (`CI=true`,
/// `TILUS_REQUIRE_PTXAS=1`), which is an `Err`, as is a ptxas that cannot be started.
pub fn assemble_many(modules: &[&str]) -> Result<BatchReport, String> {
    assemble_many_with(modules, &[])
}

/// [`assemble_many`] with extra ptxas arguments (e.g. `-O0`: ptxas's optimiser takes minutes on
/// some very large kernels, while the checks of the PTX itself are the same).
pub fn assemble_many_with(modules: &[&str], args: &[&str]) -> Result<BatchReport, String> {
    let mut report = BatchReport::default();
    // Group by header, keeping the order of first appearance (deterministic batches).
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (index, m) in modules.iter().enumerate() {
        let parts = match split_module(m) {
            Ok(p) => p,
            Err(why) => {
                report.failures.push(BatchFailure {
                    index,
                    sm: 0,
                    log: format!("not a module assemble_many can merge: {why}"),
                });
                continue;
            }
        };
        match groups.iter_mut().find(|g| g.header == parts.header) {
            Some(g) => g.members.push((index, parts)),
            None => groups.push(Group {
                header: parts.header.clone(),
                sm: parts.sm,
                members: vec![(index, parts)],
            }),
        }
    }
    for Group {
        header,
        sm,
        members,
    } in &groups
    {
        let Some(ptxas) = find_ptxas(*sm) else {
            missing(*sm)?;
            report.skipped += members.len();
            continue;
        };
        let mut chunk: Vec<&(usize, Parts<'_>)> = Vec::new();
        let mut bytes = 0;
        for m in members {
            if !chunk.is_empty()
                && (chunk.len() >= BATCH_MODULES || bytes + m.1.body.len() > BATCH_BYTES)
            {
                assemble_chunk(&ptxas, header, *sm, &chunk, modules, args, &mut report)?;
                chunk.clear();
                bytes = 0;
            }
            bytes += m.1.body.len();
            chunk.push(m);
        }
        if !chunk.is_empty() {
            assemble_chunk(&ptxas, header, *sm, &chunk, modules, args, &mut report)?;
        }
    }
    report.failures.sort_by_key(|f| f.index);
    Ok(report)
}

/// Modules with one header (`.version`, `.target`, `.address_size`), as `(index, parts)`.
struct Group<'a> {
    header: Vec<&'a str>,
    sm: u32,
    members: Vec<(usize, Parts<'a>)>,
}

fn merge(header: &[&str], chunk: &[&(usize, Parts<'_>)]) -> String {
    let mut text = String::new();
    for h in header {
        text.push_str(h);
        text.push('\n');
    }
    // Each distinct declaration of external shared memory once, in order of appearance.
    text.push('\n');
    let mut declared = std::collections::HashSet::new();
    for (_, p) in chunk {
        for d in &p.shared {
            if declared.insert(*d) {
                text.push_str(d);
                text.push('\n');
            }
        }
    }
    let mut names = std::collections::HashSet::new();
    for (k, (_, p)) in chunk.iter().enumerate() {
        text.push('\n');
        match &p.entry {
            Some(e) if !names.insert(e.clone()) => {
                text.push_str(&rename_entry(&p.body, e, &format!("{e}$b{k}")))
            }
            _ => text.push_str(&p.body),
        }
    }
    text
}

/// Assemble `chunk` merged; on rejection bisect it.
fn assemble_chunk(
    ptxas: &Path,
    header: &[&str],
    sm: u32,
    chunk: &[&(usize, Parts<'_>)],
    modules: &[&str],
    args: &[&str],
    report: &mut BatchReport,
) -> Result<(), String> {
    report.runs += 1;
    let merged_log = match run_ptxas(ptxas, &merge(header, chunk), sm, args)? {
        Ok(_) => {
            report.assembled += chunk.len();
            return Ok(());
        }
        Err(log) => log,
    };
    if chunk.len() == 1 {
        // The module alone, as generated (not renamed), for a faithful log.
        let index = chunk[0].0;
        report.runs += 1;
        let log = match run_ptxas(ptxas, modules[index], sm, args)? {
            Err(log) => log,
            Ok(_) => {
                format!(
                    "assembles alone but not after merging (an assemble_many bug?):\n{merged_log}"
                )
            }
        };
        report.failures.push(BatchFailure { index, sm, log });
        return Ok(());
    }
    let before = report.failures.len();
    let (a, b) = chunk.split_at(chunk.len() / 2);
    assemble_chunk(ptxas, header, sm, a, modules, args, report)?;
    assemble_chunk(ptxas, header, sm, b, modules, args, report)?;
    if report.failures.len() == before {
        // Both halves assemble: the modules conflict with each other (module-scope names).
        report.assembled -= chunk.len();
        for (index, _) in chunk {
            report.failures.push(BatchFailure {
                index: *index,
                sm,
                log: format!(
                    "rejected only together with the other modules of its batch:\n{merged_log}"
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module shaped like `generate`'s, with entry `tk_{name}` and `body` as its code.
    fn module(name: &str, sm: u32, body: &str) -> String {
        let e = format!("tk_{name}");
        format!(
            "//\n// test\n//\n\n.version 7.8\n.target sm_{sm}\n.address_size 64\n\n\
             .extern .shared .align 16 .b8 tilus$smem[];\n\n\
             .visible .entry {e}(\n\t.param .u32 {e}$p0\n)\n.maxntid 32, 1, 1\n{{\n\
             \t.reg .b32 %r<3>;\n\tld.param.u32 %r1, [{e}$p0];\n{body}\tret;\n}}\n"
        )
    }

    #[test]
    fn renaming_touches_only_the_entry_and_its_names() {
        let m = module("k", 70, "\tmov.u32 %r2, %r1; // tk_kk tk_k$x\n");
        let p = split_module(&m).unwrap();
        assert_eq!(p.entry.as_deref(), Some("tk_k"));
        assert_eq!(p.sm, 70);
        assert!(!p.body.contains("tilus$smem"));
        assert_eq!(p.shared, [".extern .shared .align 16 .b8 tilus$smem[];"]);
        let r = rename_entry(&p.body, "tk_k", "tk_k$b1");
        assert!(r.contains(".entry tk_k$b1("));
        assert!(r.contains("[tk_k$b1$p0]"));
        assert!(r.contains("tk_kk "), "a longer name is left alone: {r}");
        assert!(r.contains("tk_k$b1$x"));
    }

    #[test]
    fn many_modules_in_few_runs_and_the_bad_ones_named() {
        let good = "\tadd.s32 %r2, %r1, 1;\n";
        let bad = "\tnot.an.instruction %r2;\n";
        let mut ms: Vec<String> = Vec::new();
        for i in 0..40 {
            // Repeated names (renamed when merged), two targets, two bad modules.
            let name = format!("k{}", i % 3);
            let sm = if i % 2 == 0 { 70 } else { 80 };
            ms.push(module(
                &name,
                sm,
                if i == 7 || i == 30 { bad } else { good },
            ));
        }
        let refs: Vec<&str> = ms.iter().map(String::as_str).collect();
        let r = assemble_many(&refs).unwrap();
        if r.skipped == ms.len() {
            eprintln!("no ptxas: skipped");
            return;
        }
        let bad: Vec<usize> = r.failures.iter().map(|f| f.index).collect();
        assert_eq!(bad, vec![7, 30], "{r:?}");
        assert!(r.failures[0].log.contains("not.an.instruction") || !r.failures[0].log.is_empty());
        assert_eq!(r.assembled, 38);
        // Two merged runs, then the bisection of each rejected batch of 20: two runs per level
        // of halving (20, 10, 5, 3, 2), and the culprit alone for its log.
        assert!(r.runs <= 24, "{} runs", r.runs);
    }
}
