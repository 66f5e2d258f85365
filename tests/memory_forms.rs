//! Every (operation, order, scope, space, target) form of the memory-model vocabulary, built as
//! `tilus::core::ast::KernelDef` values and compiled with `tilus::core::compile`:
//!
//! * illegal forms are `Err`: acquire / acq_rel on an atomic store, release / acq_rel on an
//!   atomic load, a relaxed fence, acquire or release on a cuTile indexed read-modify-write,
//!   cluster scope under an explicit target below 90;
//! * legal forms are `Ok`, spell the expected PTX (`ld.acquire.cta.shared.s32`, an acquire
//!   load of global memory as `ld.relaxed.gpu.global.s32` then `fence.acq_rel.gpu`,
//!   `st.release.cta.shared.s32`, `fence.acq_rel.sys`, `atom.acq_rel.gpu.global.cas.b32`,
//!   `red.relaxed.gpu.global.add.s32` for an unused result, ...), get the expected target
//!   (cluster raises the default to sm_90), and assemble with ptxas for every sm >= the target
//!   among 70/80/90 (batched: one kernel per (target, space, scope) group; a failing batch is
//!   re-assembled form by form to name the culprit);
//! * the keyword aliases (`sem`/`order`/`memory_order`, `scope`/`memory_scope`) and the order and
//!   scope spellings (`MemoryOrder::Acquire`, `"acquire"`, `acquire`, `MemoryScope::Device`,
//!   `gpu`, ...) give identical PTX;
//! * the document's "common mistakes" 2 (scope mismatch) and 3 (RMW with acquire) are errors.

#![allow(clippy::needless_range_loop, clippy::type_complexity)] // test tables and index loops mirror the kernels

use tilus::core::ast::{Arg, Expr, ExprKind, KernelDef, KernelOptions, ParamDef, ParamTy, Stmt};
use tilus::core::ir::{Scope, Sem, Span};

const S: Span = Span(0);

// ---------------------------------------------------------------------------------------------
// AST construction helpers.

fn ex(kind: ExprKind) -> Expr {
    Expr { kind, span: S }
}
fn int(v: i128) -> Expr {
    ex(ExprKind::Int {
        value: v,
        suffix: None,
    })
}
fn path(p: &[&str]) -> Expr {
    ex(ExprKind::Path(p.iter().map(|s| s.to_string()).collect()))
}
fn var(name: &str) -> Expr {
    path(&[name])
}
fn list(items: Vec<Expr>) -> Expr {
    ex(ExprKind::Array(items))
}
fn pos(value: Expr) -> Arg {
    Arg {
        name: None,
        value,
        span: S,
    }
}
fn kw(name: &str, value: Expr) -> Arg {
    Arg {
        name: Some((name.to_string(), S)),
        value,
        span: S,
    }
}
fn call(name: &str, args: Vec<Arg>) -> Expr {
    let path = name.split("::").map(str::to_string).collect();
    ex(ExprKind::Call {
        path,
        path_span: S,
        generics: vec![],
        args,
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
fn stmt(e: Expr) -> Stmt {
    Stmt::Expr(e)
}

fn sem_path(sem: Sem) -> Expr {
    let v = match sem {
        Sem::Relaxed => "Relaxed",
        Sem::Acquire => "Acquire",
        Sem::Release => "Release",
        Sem::AcqRel => "AcqRel",
    };
    path(&["MemoryOrder", v])
}
fn scope_path(scope: Scope) -> Expr {
    let v = match scope {
        Scope::Cta => "Block",
        Scope::Cluster => "Cluster",
        Scope::Gpu => "Device",
        Scope::Sys => "Sys",
    };
    path(&["MemoryScope", v])
}

/// A kernel `(x: GlobalTensor<i32>, out: GlobalTensor<i32>)` whose body starts with
/// `let buf = shared_tensor(i32, [128]);`.
fn kernel(name: &str, target: Option<u32>, mut body: Vec<Stmt>) -> KernelDef {
    body.insert(
        0,
        let_(
            "buf",
            call(
                "shared_tensor",
                vec![pos(var("i32")), pos(list(vec![int(128)]))],
            ),
        ),
    );
    let param = |n: &str| ParamDef {
        name: n.to_string(),
        span: S,
        ty: ParamTy::GlobalTensor { elem: "i32".into() },
        ty_span: S,
    };
    KernelDef {
        name: name.to_string(),
        name_span: S,
        params: vec![param("x"), param("out")],
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

// ---------------------------------------------------------------------------------------------
// The forms.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Global,
    Shared,
    /// Fences address no memory.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Load {
        tile: bool,
    },
    Store {
        tile: bool,
    },
    Fence,
    /// cuTile indexed RMW (`atomic_add(array, indices, update)`), result used or not.
    Indexed {
        op: &'static str,
        used: bool,
    },
    /// tilus element-wise RMW (`atomic::global_add(dst, values)`), result used or not.
    Elementwise {
        op: &'static str,
        used: bool,
    },
    /// tilus scatter RMW (`atomic::shared_scatter_add(dst, dim, indices, values)`).
    Scatter {
        op: &'static str,
    },
}

#[derive(Debug, Clone, Copy)]
struct Form {
    op: Op,
    sem: Sem,
    scope: Scope,
    space: Space,
    target: Option<u32>,
}

const INDEXED_OPS: &[&str] = &[
    "add", "sub", "min", "max", "xchg", "cas", "and", "or", "xor",
];
const TILUS_OPS: &[&str] = &["add", "sub", "min", "max", "exch", "cas"];
const SCATTER_OPS: &[&str] = &["add", "sub", "min", "max"];
const TARGETS: [Option<u32>; 4] = [None, Some(70), Some(80), Some(90)];

fn all_forms() -> Vec<Form> {
    let mut ops = vec![
        Op::Load { tile: true },
        Op::Load { tile: false },
        Op::Store { tile: true },
        Op::Store { tile: false },
    ];
    for &op in INDEXED_OPS {
        ops.push(Op::Indexed { op, used: true });
        ops.push(Op::Indexed { op, used: false });
    }
    for &op in TILUS_OPS {
        ops.push(Op::Elementwise { op, used: true });
        ops.push(Op::Elementwise { op, used: false });
    }
    for &op in SCATTER_OPS {
        ops.push(Op::Scatter { op });
    }
    let mut out = Vec::new();
    for target in TARGETS {
        for sem in Sem::ALL {
            for scope in Scope::ALL {
                out.push(Form {
                    op: Op::Fence,
                    sem,
                    scope,
                    space: Space::None,
                    target,
                });
                for space in [Space::Global, Space::Shared] {
                    for &op in &ops {
                        out.push(Form {
                            op,
                            sem,
                            scope,
                            space,
                            target,
                        });
                    }
                }
            }
        }
    }
    out
}

/// Why the form must be rejected, if it must.
fn expected_illegal(f: &Form) -> Option<&'static str> {
    if f.scope == Scope::Cluster && f.target.is_some_and(|t| t < 90) {
        return Some("cluster scope with an explicit target below 90");
    }
    match f.op {
        Op::Load { .. } if f.sem.has_release() => Some("a load with a release component"),
        Op::Store { .. } if f.sem.has_acquire() => Some("a store with an acquire component"),
        Op::Fence if f.sem == Sem::Relaxed => Some("a relaxed fence"),
        Op::Indexed { .. } if matches!(f.sem, Sem::Acquire | Sem::Release) => {
            Some("a cuTile read-modify-write with acquire or release only")
        }
        _ => None,
    }
}

/// The statements of one form; `k` makes its variable names unique inside a batch.
fn form_stmts(f: &Form, k: usize) -> Vec<Stmt> {
    let mut v = Vec::new();
    let mem = match f.space {
        Space::Shared => "buf".to_string(),
        _ => "x".to_string(),
    };
    let q = |v: &mut Vec<Arg>| {
        v.push(kw("order", sem_path(f.sem)));
        v.push(kw("scope", scope_path(f.scope)));
    };
    let r = format!("r{k}");
    let out_at = |value: Expr| {
        stmt(call(
            "store_global",
            vec![
                pos(var("out")),
                pos(value),
                kw("offsets", list(vec![int(0)])),
            ],
        ))
    };
    let arange = || call("arange", vec![pos(int(128))]);
    match f.op {
        Op::Load { tile } => {
            let idx = if tile { arange() } else { int(3) };
            let mut args = vec![pos(var(&mem)), pos(idx)];
            q(&mut args);
            v.push(let_(&r, call("atomic_load", args)));
            let val = if tile {
                var(&r)
            } else {
                call("full", vec![pos(list(vec![int(1)])), pos(var(&r))])
            };
            v.push(out_at(val));
        }
        Op::Store { tile } => {
            let idx = if tile { arange() } else { int(3) };
            let mut args = vec![pos(var(&mem)), pos(idx), pos(int(7))];
            q(&mut args);
            v.push(stmt(call("atomic_store", args)));
        }
        Op::Fence => {
            v.push(stmt(call(
                "fence",
                vec![kw("sem", sem_path(f.sem)), kw("scope", scope_path(f.scope))],
            )));
        }
        Op::Indexed { op, used } => {
            let mut args = vec![pos(var(&mem)), pos(arange())];
            if op == "cas" {
                args.push(pos(int(0)));
            }
            args.push(pos(int(5)));
            q(&mut args);
            let e = call(&format!("atomic_{op}"), args);
            if used {
                v.push(let_(&r, e));
                v.push(out_at(var(&r)));
            } else {
                v.push(stmt(e));
            }
        }
        Op::Elementwise { op, used } => {
            let sp = if f.space == Space::Shared {
                "shared"
            } else {
                "global"
            };
            let mut args = vec![pos(var(&mem))];
            if op == "cas" {
                args.push(kw(
                    "compare",
                    call("zeros", vec![pos(list(vec![int(128)]))]),
                ));
            }
            args.push(kw(
                "values",
                call("full", vec![pos(list(vec![int(128)])), pos(int(5))]),
            ));
            args.push(kw("sem", sem_path(f.sem)));
            args.push(kw("scope", scope_path(f.scope)));
            let e = call(&format!("atomic::{sp}_{op}"), args);
            if used {
                v.push(let_(&r, e));
                v.push(out_at(var(&r)));
            } else {
                v.push(stmt(e));
            }
        }
        Op::Scatter { op } => {
            let sp = if f.space == Space::Shared {
                "shared"
            } else {
                "global"
            };
            let idx = ex(ExprKind::Binary {
                op: tilus::core::ast::BinOp::Rem,
                lhs: Box::new(arange()),
                rhs: Box::new(int(16)),
            });
            let args = vec![
                pos(var(&mem)),
                kw("dim", int(0)),
                kw("indices", idx),
                kw("values", int(1)),
                kw("sem", sem_path(f.sem)),
                kw("scope", scope_path(f.scope)),
            ];
            v.push(stmt(call(&format!("atomic::{sp}_scatter_{op}"), args)));
        }
    }
    v
}

/// The PTX spellings the form may produce (one of them must appear; ` && ` joins spellings
/// that must all appear). i32 `add` may be printed
/// as `.s32` or `.u32` (the same bits; `.u32` lets ptxas aggregate `+1` across a warp).
fn expected_spellings(f: &Form) -> Vec<String> {
    let sp = match f.space {
        Space::Shared => "shared",
        _ => "global",
    };
    let (sem, scope) = (f.sem.ptx(), f.scope.ptx());
    let rmw = |op: &str, used: bool| {
        let (pop, ty, has_red) = match op {
            "add" | "sub" => ("add", "s32", true),
            "min" | "max" => (op, "s32", true),
            "xchg" | "exch" => ("exch", "b32", false),
            "cas" => ("cas", "b32", false),
            _ => (op, "b32", true),
        };
        let red = !used && has_red && matches!(f.sem, Sem::Relaxed | Sem::Release);
        let instr = if red { "red" } else { "atom" };
        let mut v = vec![format!("{instr}.{sem}.{scope}.{sp}.{pop}.{ty}")];
        if pop == "add" {
            v.push(format!("{instr}.{sem}.{scope}.{sp}.add.u32"));
        }
        v
    };
    match f.op {
        // An acquire load of global memory is a relaxed load and a fence after it (the
        // acquire pattern; ptx/access/mod.rs `acquire_by_fence` says why).
        Op::Load { .. } if sem == "acquire" && sp == "global" => vec![format!(
            "ld.relaxed.{scope}.{sp}.s32 && fence.acq_rel.{scope};"
        )],
        Op::Load { .. } => vec![format!("ld.{sem}.{scope}.{sp}.s32")],
        Op::Store { .. } => vec![format!("st.{sem}.{scope}.{sp}.s32")],
        Op::Fence => vec![format!("fence.acq_rel.{scope};")],
        Op::Indexed { op, used } | Op::Elementwise { op, used } => rmw(op, used),
        Op::Scatter { op } => rmw(op, false),
    }
}

fn form_name(f: &Form) -> String {
    format!(
        "{:?} {} {} {:?} target {:?}",
        f.op,
        f.sem.ptx(),
        f.scope.ptx(),
        f.space,
        f.target
    )
}

fn expected_target(f: &Form) -> u32 {
    let base = f.target.unwrap_or(70);
    if f.scope == Scope::Cluster {
        base.max(90)
    } else {
        base
    }
}

fn assemble_for(ptx: &str, target: u32) -> Result<(), String> {
    for sm in [70, 80, 90] {
        if sm >= target {
            tilus_testkit::ptxas::assemble(ptx, sm).map_err(|e| format!("sm_{sm}: {e}"))?;
        }
    }
    Ok(())
}

#[test]
fn every_form_is_accepted_or_rejected_as_specified_and_legal_ones_assemble() {
    let forms = all_forms();
    let mut legal = Vec::new();
    let mut failures = Vec::new();
    let (mut n_ok, mut n_err) = (0, 0);
    for (k, f) in forms.iter().enumerate() {
        let def = kernel(&format!("form{k}"), f.target, form_stmts(f, 0));
        let res = tilus::core::compile(&def);
        match (expected_illegal(f), res) {
            (Some(why), Ok(_)) => failures.push(format!(
                "{}: accepted, but it is illegal ({why})",
                form_name(f)
            )),
            (Some(_), Err(_)) => n_err += 1,
            (None, Err(d)) => failures.push(format!("{}: rejected: {d:?}", form_name(f))),
            (None, Ok(c)) => {
                n_ok += 1;
                let want = expected_spellings(f);
                // An alternative is one spelling, or several joined by ` && `, all present.
                let has = |w: &String| w.split(" && ").all(|p| c.ptx.contains(p));
                if !want.iter().any(has) {
                    failures.push(format!(
                        "{}: PTX lacks `{}`",
                        form_name(f),
                        want.join("` / `")
                    ));
                }
                if c.ir.target.0 != expected_target(f) {
                    failures.push(format!(
                        "{}: target sm_{} (expected sm_{})",
                        form_name(f),
                        c.ir.target.0,
                        expected_target(f)
                    ));
                }
                if !c.ptx.contains(&format!(".target sm_{}", c.ir.target.0)) {
                    failures.push(format!(
                        "{}: PTX does not say `.target sm_{}`",
                        form_name(f),
                        c.ir.target.0
                    ));
                }
                legal.push(*f);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} wrong forms:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{n_ok} legal forms compiled, {n_err} illegal forms rejected");

    // Assemble the legal forms, batched by (explicit target, space, scope): one scope per batch,
    // since mixing scopes on one tensor is the "scope mismatch" error.
    let mut groups: Vec<((Option<u32>, Space, Scope), Vec<Form>)> = Vec::new();
    for f in legal {
        let key = (f.target, f.space, f.scope);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(f),
            None => groups.push((key, vec![f])),
        }
    }
    for ((target, space, scope), fs) in &groups {
        let body: Vec<Stmt> = fs
            .iter()
            .enumerate()
            .flat_map(|(k, f)| form_stmts(f, k))
            .collect();
        let name =
            format!("batch_{}_{:?}_{}", target.unwrap_or(0), space, scope.ptx()).to_lowercase();
        let c = tilus::core::compile(&kernel(&name, *target, body))
            .unwrap_or_else(|d| panic!("batch {name} rejected: {d:?}"));
        if let Err(e) = assemble_for(&c.ptx, c.ir.target.0) {
            // Find the culprits form by form.
            let mut bad = Vec::new();
            for f in fs {
                let c = tilus::core::compile(&kernel("one", f.target, form_stmts(f, 0))).unwrap();
                if let Err(e) = assemble_for(&c.ptx, c.ir.target.0) {
                    bad.push(format!("{}: {e}\n--- PTX ---\n{}", form_name(f), c.ptx));
                }
            }
            panic!(
                "batch {name} does not assemble: {e}\nforms that fail alone:\n{}",
                bad.join("\n")
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Aliases and spellings.

fn one_load(sem_kw: &str, sem: Expr, scope_kw: &str, scope: Expr) -> String {
    let body = vec![
        let_(
            "r",
            call(
                "atomic_load",
                vec![
                    pos(var("x")),
                    pos(call("arange", vec![pos(int(128))])),
                    kw(sem_kw, sem),
                    kw(scope_kw, scope),
                ],
            ),
        ),
        stmt(call(
            "store_global",
            vec![
                pos(var("out")),
                pos(var("r")),
                kw("offsets", list(vec![int(0)])),
            ],
        )),
    ];
    tilus::core::compile(&kernel("alias", None, body))
        .unwrap_or_else(|d| panic!("{sem_kw}/{scope_kw}: {d:?}"))
        .ptx
}

#[test]
fn keyword_aliases_and_spellings_are_equivalent() {
    let reference = one_load(
        "order",
        path(&["MemoryOrder", "Acquire"]),
        "scope",
        path(&["MemoryScope", "Device"]),
    );
    assert!(
        reference.contains("ld.relaxed.gpu.global.s32") && reference.contains("fence.acq_rel.gpu;"),
        "{reference}"
    );
    let sems = [
        path(&["MemoryOrder", "Acquire"]),
        path(&["MemoryOrder", "ACQUIRE"]),
        path(&["acquire"]),
        ex(ExprKind::Str("acquire".into())),
    ];
    let scopes = [
        path(&["MemoryScope", "Device"]),
        path(&["MemoryScope", "DEVICE"]),
        path(&["gpu"]),
        ex(ExprKind::Str("gpu".into())),
    ];
    for sem_kw in ["sem", "order", "memory_order"] {
        for scope_kw in ["scope", "memory_scope"] {
            for s in &sems {
                for sc in &scopes {
                    assert_eq!(
                        one_load(sem_kw, s.clone(), scope_kw, sc.clone()),
                        reference,
                        "{sem_kw} = {s:?}, {scope_kw} = {sc:?}"
                    );
                }
            }
        }
    }
    // The fence takes the same aliases; acquire and release fences are acq_rel ones.
    for (sem_kw, scope_kw) in [
        ("sem", "scope"),
        ("order", "memory_scope"),
        ("memory_order", "scope"),
    ] {
        for sem in [Sem::Acquire, Sem::Release, Sem::AcqRel] {
            let body = vec![stmt(call(
                "fence",
                vec![
                    kw(sem_kw, sem_path(sem)),
                    kw(scope_kw, scope_path(Scope::Gpu)),
                ],
            ))];
            let c = tilus::core::compile(&kernel("f", None, body)).unwrap();
            assert!(c.ptx.contains("fence.acq_rel.gpu;"), "{}", c.ptx);
        }
    }
    // Defaults: atomic_load acquire, atomic_store release, indexed RMW acq_rel; gpu scope on
    // global memory, cta on shared.
    let body = vec![
        let_("a", call("atomic_load", vec![pos(var("x")), pos(int(0))])),
        stmt(call(
            "atomic_store",
            vec![pos(var("x")), pos(int(1)), pos(var("a"))],
        )),
        let_(
            "b",
            call("atomic_add", vec![pos(var("x")), pos(int(2)), pos(int(1))]),
        ),
        stmt(call(
            "store_global",
            vec![
                pos(var("out")),
                pos(call("full", vec![pos(list(vec![int(1)])), pos(var("b"))])),
                kw("offsets", list(vec![int(0)])),
            ],
        )),
    ];
    let c = tilus::core::compile(&kernel("defaults", None, body)).unwrap();
    for want in [
        "ld.relaxed.gpu.global.s32",
        "fence.acq_rel.gpu;",
        "st.release.gpu.global.s32",
    ] {
        assert!(c.ptx.contains(want), "{want}:\n{}", c.ptx);
    }
    assert!(
        c.ptx.contains("atom.acq_rel.gpu.global.add.s32")
            || c.ptx.contains("atom.acq_rel.gpu.global.add.u32"),
        "{}",
        c.ptx
    );
    assemble_for(&c.ptx, c.ir.target.0).unwrap();
}

// ---------------------------------------------------------------------------------------------
// The document's common mistakes.

#[test]
fn common_mistakes_are_compile_errors() {
    // Mistake 2: release at Device scope, acquire at Block scope on the same flag.
    let body = vec![
        stmt(call(
            "atomic_store",
            vec![
                pos(var("x")),
                pos(int(0)),
                pos(int(1)),
                kw("order", sem_path(Sem::Release)),
                kw("scope", scope_path(Scope::Gpu)),
            ],
        )),
        let_(
            "f",
            call(
                "atomic_load",
                vec![
                    pos(var("x")),
                    pos(int(0)),
                    kw("order", sem_path(Sem::Acquire)),
                    kw("scope", scope_path(Scope::Cta)),
                ],
            ),
        ),
        stmt(call(
            "store_global",
            vec![
                pos(var("out")),
                pos(call("full", vec![pos(list(vec![int(1)])), pos(var("f"))])),
                kw("offsets", list(vec![int(0)])),
            ],
        )),
    ];
    let e = tilus::core::compile(&kernel("mismatch", None, body))
        .expect_err("scope mismatch must be rejected");
    assert!(format!("{e:?}").contains("scope mismatch"), "{e:?}");
    // Mistake 3: a read-modify-write with Acquire (or Release) order.
    for sem in [Sem::Acquire, Sem::Release] {
        let body = vec![stmt(call(
            "atomic_add",
            vec![
                pos(var("x")),
                pos(int(0)),
                pos(int(1)),
                kw("order", sem_path(sem)),
            ],
        ))];
        let e = tilus::core::compile(&kernel("half", None, body))
            .expect_err("RMW with acquire/release must be rejected");
        assert!(format!("{e:?}").contains("AcqRel"), "{e:?}");
    }
    // Unknown names.
    let body = vec![stmt(call(
        "fence",
        vec![
            kw("sem", path(&["MemoryOrder", "SeqCst"])),
            kw("scope", scope_path(Scope::Gpu)),
        ],
    ))];
    assert!(tilus::core::compile(&kernel("bad", None, body)).is_err());
    let body = vec![stmt(call(
        "fence",
        vec![
            kw("sem", sem_path(Sem::AcqRel)),
            kw("scope", path(&["MemoryScope", "Grid"])),
        ],
    ))];
    assert!(tilus::core::compile(&kernel("bad", None, body)).is_err());
}
