//! Running `ptxas` on generated PTX, so every test in the workspace can prove that what the
//! generator prints is accepted by NVIDIA's assembler (no GPU needed).
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
        if required() {
            return Err(format!(
                "no ptxas for sm_{sm} (set TILUS_PTXAS / TILUS_PTXAS_SM70 or run scripts/install-ptxas), and CI=true or TILUS_REQUIRE_PTXAS=1 requires one"
            ));
        }
        return Ok(AssembleOutcome::Skipped);
    };
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
    std::fs::write(&input, ptx).map_err(|e| format!("cannot write {}: {e}", input.display()))?;
    let out = Command::new(&ptxas)
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
    if out.status.success() {
        Ok(AssembleOutcome::Assembled { ptxas, log })
    } else {
        Err(format!(
            "ptxas ({}) failed for sm_{sm}:\n{log}",
            ptxas.display()
        ))
    }
}
