//! The full legality/codegen matrix of the tilus atomic instruction group, generated (not listed
//! by hand): every op × space × form (element-wise, 1-D scatter, 2-D scatter on dim 0 / dim 1) ×
//! sem × scope × output used/unused × mask on/off is built as a `KernelDef`, compiled with
//! `tilus::core::compile`, and checked against an oracle written here from the spec:
//!
//! * scatter `exch` / `cas` are rejected; everything else is accepted;
//! * `.cluster` scope raises the target to sm_90 when no target is given, and is rejected with an
//!   explicit `target = 80`;
//! * the PTX holds `red.{sem}.{scope}.{space}.{op}` exactly when the output is unused, the op has
//!   a `red` form (add/sub/min/max) and the sem is relaxed or release; otherwise
//!   `atom.{sem}.{scope}.{space}.{op}`, never both; `sub` prints as `add`;
//! * ptxas assembles the PTX for every architecture among sm_70/80/90 at or above the target.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tilus::core::ast::*;
use tilus::core::ir::Span;
use tilus::core::ptx::assemble::{assemble, AssembleOutcome};

const S: Span = Span(0);

const OPS: [&str; 6] = ["add", "sub", "min", "max", "exch", "cas"];
const SPACES: [&str; 2] = ["shared", "global"];
const SEMS: [&str; 4] = ["relaxed", "acquire", "release", "acq_rel"];
const SCOPES: [&str; 4] = ["cta", "cluster", "gpu", "sys"];

/// Kernels per ptxas run.
const BATCH: usize = 48;

/// One module from several single-kernel modules of one target: the first whole, the others
/// from their `.entry` on (they share the header and the `.extern .shared` window declaration).
fn merge<'a>(modules: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (i, m) in modules.enumerate() {
        if i == 0 {
            out.push_str(m);
        } else {
            let at = m.find(".visible .entry").expect("an entry");
            out.push('\n');
            out.push_str(&m[at..]);
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Elementwise,
    /// 1-D scatter (`dim = 0`).
    Scatter1,
    /// 2-D scatter along `dim`.
    Scatter2(usize),
}

const FORMS: [Form; 4] = [
    Form::Elementwise,
    Form::Scatter1,
    Form::Scatter2(0),
    Form::Scatter2(1),
];

#[derive(Debug, Clone, Copy)]
struct Combo {
    op: &'static str,
    space: &'static str,
    form: Form,
    sem: &'static str,
    scope: &'static str,
    used: bool,
    masked: bool,
}

fn e(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}
fn int(v: i128) -> Expr {
    e(ExprKind::Int {
        value: v,
        suffix: None,
    })
}
fn path(p: &str) -> Expr {
    e(ExprKind::Path(p.split("::").map(str::to_string).collect()))
}
fn arr(items: Vec<Expr>) -> Expr {
    e(ExprKind::Array(items))
}
fn shape(dims: &[usize]) -> Expr {
    arr(dims.iter().map(|&d| int(d as i128)).collect())
}
fn pos(v: Expr) -> Arg {
    Arg {
        name: None,
        value: v,
        span: S,
    }
}
fn kw(name: &str, v: Expr) -> Arg {
    Arg {
        name: Some((name.to_string(), S)),
        value: v,
        span: S,
    }
}
fn call(p: &str, args: Vec<Arg>) -> Expr {
    e(ExprKind::Call {
        path: p.split("::").map(str::to_string).collect(),
        path_span: S,
        generics: vec![],
        args,
    })
}
fn method(recv: Expr, m: &str, args: Vec<Arg>) -> Expr {
    e(ExprKind::Method {
        receiver: Box::new(recv),
        method: m.to_string(),
        method_span: S,
        args,
    })
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    e(ExprKind::Binary {
        op,
        lhs: Box::new(a),
        rhs: Box::new(b),
    })
}
fn let_(name: &str, init: Expr) -> Stmt {
    Stmt::Let {
        name: name.to_string(),
        name_span: S,
        mutable: false,
        init,
        span: S,
    }
}

/// `let v = arange(N) % m;` reshaped to `shape` (i32 tile with many duplicates when used as
/// indices).
fn tile_of(shape_: &[usize], m: i128) -> Expr {
    let n: usize = shape_.iter().product();
    let a = bin(
        BinOp::Rem,
        call("arange", vec![pos(int(n as i128))]),
        int(m),
    );
    if shape_.len() == 1 {
        a
    } else {
        method(a, "reshape", vec![pos(shape(shape_))])
    }
}

/// The kernel for one combination:
/// ```text
/// fn k(x: GlobalTensor<i32>, out: GlobalTensor<i32>) {
///     let dst = shared_tensor(i32, [..]);        // shared only
///     let v = arange(..) % 7 (reshaped);
///     let old = atomic::{space}_[scatter_]{op}(dst-or-x, .., sem = .., scope = .., mask = v != 3);
///     store_global(out, old, offsets = [..]);     // output used only
/// }
/// ```
fn kernel(c: &Combo, target: Option<u32>) -> KernelDef {
    let (tile, dst_shape): (Vec<usize>, Vec<usize>) = match c.form {
        Form::Elementwise | Form::Scatter1 => (vec![96], vec![64]),
        Form::Scatter2(0) => (vec![12, 16], vec![8, 16]),
        Form::Scatter2(_) => (vec![16, 12], vec![16, 8]),
    };
    let dst_shape = if c.form == Form::Elementwise {
        tile.clone()
    } else {
        dst_shape
    };
    let mut body = Vec::new();
    let dst = if c.space == "shared" {
        body.push(let_(
            "dst",
            call(
                "shared_tensor",
                vec![pos(path("i32")), pos(shape(&dst_shape))],
            ),
        ));
        path("dst")
    } else if tile.len() == 2 {
        method(
            path("x"),
            "view",
            vec![
                pos(int(0)),
                pos(arr(dst_shape.iter().map(|&d| int(d as i128)).collect())),
            ],
        )
    } else {
        path("x")
    };
    body.push(let_("v", tile_of(&tile, 11)));
    let scatter = c.form != Form::Elementwise;
    let name = if scatter {
        format!("atomic::{}_scatter_{}", c.space, c.op)
    } else {
        format!("atomic::{}_{}", c.space, c.op)
    };
    let mut args = vec![pos(dst)];
    if scatter {
        let dim = match c.form {
            Form::Scatter2(d) => d,
            _ => 0,
        };
        args.push(kw("dim", int(dim as i128)));
        args.push(kw("indices", path("v")));
        args.push(kw("values", path("v")));
    } else if c.op == "cas" {
        args.push(kw("compare", path("v")));
        args.push(kw("values", bin(BinOp::Add, path("v"), int(1))));
    } else {
        args.push(kw("values", path("v")));
        if c.space == "global" {
            args.push(kw("offsets", arr(tile.iter().map(|_| int(0)).collect())));
        }
    }
    if c.masked {
        args.push(kw("mask", bin(BinOp::Ne, path("v"), int(3))));
    }
    args.push(kw("sem", path(c.sem)));
    args.push(kw("scope", e(ExprKind::Str(c.scope.to_string()))));
    body.push(let_("old", call(&name, args)));
    if c.used {
        let n: usize = tile.iter().product();
        let flat = method(path("old"), "reshape", vec![pos(shape(&[n]))]);
        body.push(Stmt::Expr(call(
            "store_global",
            vec![
                pos(path("out")),
                pos(flat),
                kw("offsets", arr(vec![int(0)])),
            ],
        )));
    }
    let params = ["x", "out"]
        .iter()
        .map(|n| ParamDef {
            name: n.to_string(),
            span: S,
            ty: ParamTy::GlobalTensor { elem: "i32".into() },
            ty_span: S,
        })
        .collect();
    KernelDef {
        name: format!(
            "m_{}_{}_{}_{}_{}_{}{}",
            c.space,
            match c.form {
                Form::Elementwise => "ew".to_string(),
                Form::Scatter1 => "sc1".to_string(),
                Form::Scatter2(d) => format!("sc2d{d}"),
            },
            c.op,
            c.sem,
            c.scope,
            if c.used { "used" } else { "unused" },
            if c.masked { "_mask" } else { "" }
        ),
        name_span: S,
        params,
        body,
        options: KernelOptions {
            threads: 128,
            threads_span: S,
            target,
            target_span: S,
            ..KernelOptions::default()
        },
    }
}

fn all_combos() -> Vec<Combo> {
    let mut v = Vec::new();
    let mut i = 0usize;
    for op in OPS {
        for space in SPACES {
            for form in FORMS {
                for sem in SEMS {
                    for scope in SCOPES {
                        for used in [false, true] {
                            // Masks alternate so both kinds appear in every (op, space, form).
                            v.push(Combo {
                                op,
                                space,
                                form,
                                sem,
                                scope,
                                used,
                                masked: i % 2 == 1,
                            });
                            i += 1;
                        }
                    }
                }
            }
        }
    }
    v
}

/// The oracle: is the combination legal (with no explicit target)?
fn legal(c: &Combo) -> bool {
    !(c.form != Form::Elementwise && matches!(c.op, "exch" | "cas"))
}

/// The oracle: which instruction must appear.
fn expect_red(c: &Combo) -> bool {
    !c.used
        && matches!(c.op, "add" | "sub" | "min" | "max")
        && matches!(c.sem, "relaxed" | "release")
}

fn ptx_op(op: &str) -> &str {
    if op == "sub" {
        "add"
    } else {
        op
    }
}

/// Every RMW instruction in the PTX: the first token of lines that start with `atom.`/`red.`
/// (after an optional `@%p` guard).
fn rmw_instrs(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let mut t = l.trim();
            if t.starts_with('@') {
                t = t
                    .split_once(char::is_whitespace)
                    .map(|(_, r)| r.trim())
                    .unwrap_or("");
            }
            let first = t.split_whitespace().next()?;
            (first.starts_with("atom.") || first.starts_with("red.")).then(|| first.to_string())
        })
        .collect()
}

fn check_instrs(c: &Combo, ptx: &str) -> Result<(), String> {
    let instrs = rmw_instrs(ptx);
    if instrs.is_empty() {
        return Err("no atom./red. instruction in the PTX".into());
    }
    let red = expect_red(c);
    let prefix = format!(
        "{}.{}.{}.{}.{}.",
        if red { "red" } else { "atom" },
        c.sem,
        c.scope,
        c.space,
        ptx_op(c.op)
    );
    let types: &[&str] = match c.op {
        "exch" | "cas" => &["b32"],
        "min" | "max" => &["s32"],
        _ => &["s32", "u32", "b32"],
    };
    for i in &instrs {
        let ok = i
            .strip_prefix(&prefix)
            .is_some_and(|ty| types.contains(&ty));
        if !ok {
            return Err(format!(
                "expected every RMW to be `{prefix}{{{}}}`, found `{i}` (all: {instrs:?})",
                types.join("|")
            ));
        }
    }
    Ok(())
}

#[test]
fn atomic_matrix_legality_red_atom_and_ptxas() {
    let t0 = std::time::Instant::now();
    let combos = all_combos();
    let failures = Mutex::new(Vec::<String>::new());
    let assembled = AtomicUsize::new(0);
    let skipped = AtomicUsize::new(0);
    let accepted = AtomicUsize::new(0);
    let rejected = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    // (combo, target, PTX) of every accepted kernel, assembled in batches below.
    let built = Mutex::new(Vec::<(Combo, u32, String)>::new());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 8);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = combos.get(i) else { break };
                let fail = |msg: String| failures.lock().unwrap().push(format!("{c:?}: {msg}"));
                let def = kernel(c, None);
                match (legal(c), tilus::core::compile(&def)) {
                    (false, Ok(_)) => fail("illegal combination was accepted".into()),
                    (false, Err(_)) => {
                        rejected.fetch_add(1, Ordering::Relaxed);
                    }
                    (true, Err(d)) => fail(format!(
                        "legal combination rejected: {}",
                        d.iter().map(|d| d.render()).collect::<Vec<_>>().join("; ")
                    )),
                    (true, Ok(k)) => {
                        accepted.fetch_add(1, Ordering::Relaxed);
                        if c.scope == "cluster" && k.ir.target.0 < 90 {
                            fail(format!(
                                "cluster scope must raise the target to sm_90, got sm_{}",
                                k.ir.target.0
                            ));
                        }
                        if c.scope != "cluster" && k.ir.target.0 != 70 {
                            fail(format!(
                                "target should stay at the default sm_70, got sm_{}",
                                k.ir.target.0
                            ));
                        }
                        if !k.ptx.contains(&format!(".target sm_{}", k.ir.target.0)) {
                            fail(format!(
                                "PTX does not declare `.target sm_{}`",
                                k.ir.target.0
                            ));
                        }
                        if let Err(m) = check_instrs(c, &k.ptx) {
                            fail(m);
                        }
                        built.lock().unwrap().push((*c, k.ir.target.0, k.ptx));
                    }
                }
                // Cluster with an explicit older target must fail; other scopes accept it.
                if legal(c) {
                    let r80 = tilus::core::compile(&kernel(c, Some(80)));
                    match (c.scope == "cluster", r80) {
                        (true, Ok(_)) => {
                            fail("scope cluster with `target = 80` was accepted".into())
                        }
                        (false, Err(d)) => fail(format!(
                            "`target = 80` rejected: {}",
                            d.iter().map(|d| d.render()).collect::<Vec<_>>().join("; ")
                        )),
                        (false, Ok(k)) if k.ir.target.0 != 80 => {
                            fail(format!("explicit target 80 became sm_{}", k.ir.target.0))
                        }
                        _ => {}
                    }
                }
            });
        }
    });
    let t_compile = t0.elapsed();
    // Assemble: kernels of one target are merged into one module per batch (one ptxas run for
    // BATCH kernels); a batch that fails is re-assembled kernel by kernel to name the culprits.
    let mut built = built.into_inner().unwrap();
    built.sort_by_key(|(_, t, _)| *t);
    let mut jobs = Vec::new(); // (sm, indices into built)
    for target in [70u32, 90] {
        let idx: Vec<usize> = (0..built.len()).filter(|&i| built[i].1 == target).collect();
        for chunk in idx.chunks(BATCH) {
            for sm in [70, 80, 90] {
                if sm >= target {
                    jobs.push((sm, chunk.to_vec()));
                }
            }
        }
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some((sm, chunk)) = jobs.get(j) else {
                    break;
                };
                let module = merge(chunk.iter().map(|&i| built[i].2.as_str()));
                match assemble(&module, *sm) {
                    Ok(AssembleOutcome::Assembled { .. }) => {
                        assembled.fetch_add(chunk.len(), Ordering::Relaxed);
                    }
                    Ok(AssembleOutcome::Skipped) => {
                        skipped.fetch_add(chunk.len(), Ordering::Relaxed);
                    }
                    Err(_) => {
                        for &i in chunk {
                            let (c, _, ptx) = &built[i];
                            if let Err(e) = assemble(ptx, *sm) {
                                failures
                                    .lock()
                                    .unwrap()
                                    .push(format!("{c:?}: ptxas sm_{sm}: {e}\n--- PTX ---\n{ptx}"));
                            }
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "{} combinations: {} accepted, {} rejected; {} kernel×sm assemblies ({} skipped: no ptxas); compile {:.1?}, total {:.1?}",
        combos.len(),
        accepted.load(Ordering::Relaxed),
        rejected.load(Ordering::Relaxed),
        assembled.load(Ordering::Relaxed),
        skipped.load(Ordering::Relaxed),
        t_compile,
        t0.elapsed()
    );
    if !failures.is_empty() {
        let n = failures.len();
        let shown: Vec<_> = failures.into_iter().take(8).collect();
        panic!(
            "{n} failing combinations; first ones:\n{}",
            shown.join("\n\n")
        );
    }
}

/// The generated matrix covers what the issue asks for (guards against the generator shrinking).
#[test]
fn atomic_matrix_is_complete() {
    let combos = all_combos();
    assert_eq!(
        combos.len(),
        OPS.len() * SPACES.len() * FORMS.len() * SEMS.len() * SCOPES.len() * 2
    );
    let legal_n = combos.iter().filter(|c| legal(c)).count();
    // element-wise: 6 ops; scatter (3 forms): 4 ops.
    assert_eq!(
        legal_n,
        (6 + 3 * 4) * SPACES.len() * SEMS.len() * SCOPES.len() * 2
    );
    assert!(combos.iter().any(|c| c.masked) && combos.iter().any(|c| !c.masked));
}

/// A few hand-written diagnostics of illegal combinations: the message names the problem.
#[test]
fn atomic_matrix_error_messages() {
    let c = Combo {
        op: "exch",
        space: "shared",
        form: Form::Scatter1,
        sem: "relaxed",
        scope: "cta",
        used: false,
        masked: false,
    };
    let err = tilus::core::compile(&kernel(&c, None)).unwrap_err();
    let text: String = err.iter().map(|d| d.render()).collect();
    assert!(text.contains("exch"), "{text}");
    let c = Combo {
        op: "add",
        space: "global",
        form: Form::Elementwise,
        sem: "relaxed",
        scope: "cluster",
        used: true,
        masked: false,
    };
    let err = tilus::core::compile(&kernel(&c, Some(80))).unwrap_err();
    let text: String = err.iter().map(|d| d.render()).collect();
    assert!(text.contains("cluster") && text.contains("90"), "{text}");
}
