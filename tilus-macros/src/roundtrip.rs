//! The AST printer (`Display` of `tilus_core::ast`) against the macro's own front end: a printed
//! kernel is Rust that `#[tile_kernel]` parses back to the same tree, up to spans.
//!
//! This lives here because the front end (`expand::front`, over `syn`) is private to this
//! proc-macro crate: no integration test can reach it. The kernels come from three places:
//! a hand-written kernel with every statement and expression form; every kernel of the
//! workspace's tests and examples that the front end accepts; and the random kernels of the
//! differential test (`tests/differential`: its generator, and the renamed and hoisted
//! rewrites of each kernel, included here by path). `TILUS_DIFF_KERNEL_SEED=<seed>` checks one
//! generated kernel, as the differential test replays it; `TILUS_ROUNDTRIP_KERNELS=<n>`
//! changes how many are checked.

use crate::expand::{self, Front};
use proc_macro2::TokenStream;
use syn::visit::Visit;
use tilus_core::ast::{self, ExprKind, KernelDef, Stmt};

// The differential test's generator, as its own crate declares it (`super::ast`, `super::ir`).
use tilus_core::ir;
#[allow(dead_code)]
#[path = "../../tests/differential/gen.rs"]
mod gen;
#[allow(dead_code)]
#[path = "../../tests/differential/hoist.rs"]
mod hoist;
#[allow(dead_code)]
#[path = "../../tests/differential/krng.rs"]
mod krng;
#[allow(dead_code)]
#[path = "../../tests/differential/rename.rs"]
mod rename;
#[allow(dead_code)]
#[path = "../../tests/differential/syntax.rs"]
mod syntax;

/// Generated kernels checked by default (each with its two rewrites; well under a second each).
const DEFAULT_KERNELS: u64 = 200;

/// Kernel source text (`#[tile_kernel(..)] fn ..`) through the macro's front end.
fn parse(text: &str) -> Result<KernelDef, String> {
    let mut func: syn::ItemFn = syn::parse_str(text).map_err(|e| format!("not Rust: {e}"))?;
    let attr = tile_kernel_attr(&mut func).ok_or("no #[tile_kernel] attribute")?;
    match expand::front(attr, &func) {
        Front::Def(_, def) => Ok(def),
        Front::Errors(errors) => Err(errors
            .iter()
            .map(|e| format!("front end: {e}"))
            .collect::<Vec<_>>()
            .join("\n")),
    }
}

/// Remove the function's `#[tile_kernel(..)]` (or `#[tilus::tile_kernel]`, ..) attribute and
/// return its arguments, as the compiler hands them to the macro.
fn tile_kernel_attr(func: &mut syn::ItemFn) -> Option<TokenStream> {
    let at = func.attrs.iter().position(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "tile_kernel")
    })?;
    let attr = func.attrs.remove(at);
    Some(match attr.meta {
        syn::Meta::List(l) => l.tokens,
        _ => TokenStream::new(),
    })
}

/// The tree with every span set to `Span::NONE`: two parses of different text number their
/// spans differently, and generated trees have none.
fn unspanned(def: &KernelDef) -> KernelDef {
    fn block(b: &mut [Stmt]) {
        b.iter_mut().for_each(stmt);
    }
    fn stmt(s: &mut Stmt) {
        match s {
            Stmt::Let {
                name_span,
                init: e,
                span,
                ..
            }
            | Stmt::Assign {
                name_span,
                value: e,
                span,
                ..
            } => {
                (*name_span, *span) = (NONE, NONE);
                expr(e);
            }
            Stmt::Expr(e) => expr(e),
            Stmt::For {
                var_span,
                range,
                body,
                span,
                ..
            } => {
                (*var_span, *span, range.span) = (NONE, NONE, NONE);
                expr(&mut range.start);
                expr(&mut range.end);
                range.step.iter_mut().for_each(expr);
                block(body);
            }
            Stmt::While { cond, body, span } => {
                *span = NONE;
                expr(cond);
                block(body);
            }
            Stmt::Loop { body, span } => {
                *span = NONE;
                block(body);
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                *span = NONE;
                expr(cond);
                block(then);
                els.iter_mut().for_each(|b| block(b));
            }
            Stmt::Break { span } => *span = NONE,
            Stmt::Unsafe { body, span } => {
                *span = NONE;
                block(body);
            }
        }
    }
    fn args(a: &mut [ast::Arg]) {
        for a in a {
            a.span = NONE;
            if let Some((_, s)) = &mut a.name {
                *s = NONE;
            }
            expr(&mut a.value);
        }
    }
    fn expr(e: &mut ast::Expr) {
        e.span = NONE;
        match &mut e.kind {
            ExprKind::Int { .. }
            | ExprKind::Float { .. }
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Path(_) => {}
            ExprKind::Array(v) | ExprKind::Tuple(v) => v.iter_mut().for_each(expr),
            ExprKind::Binary { lhs, rhs, .. } => {
                expr(lhs);
                expr(rhs);
            }
            ExprKind::Unary { x, .. } | ExprKind::Unsafe(x) => expr(x),
            ExprKind::Call {
                path_span,
                generics,
                args: a,
                ..
            } => {
                *path_span = NONE;
                for g in generics {
                    match g {
                        ast::GenericArg::Type(_, s) => *s = NONE,
                        ast::GenericArg::Const(e) => expr(e),
                    }
                }
                args(a);
            }
            ExprKind::Method {
                receiver,
                method_span,
                args: a,
                ..
            } => {
                *method_span = NONE;
                expr(receiver);
                args(a);
            }
            ExprKind::IfElse { cond, then, els } => {
                expr(cond);
                expr(then);
                expr(els);
            }
            ExprKind::Cast { x, ty_span, .. } => {
                *ty_span = NONE;
                expr(x);
            }
        }
    }
    const NONE: ir::Span = ir::Span::NONE;
    let mut d = def.clone();
    d.name_span = NONE;
    let o = &mut d.options;
    (o.threads_span, o.target_span, o.cluster_span) = (NONE, NONE, NONE);
    (o.min_blocks_span, o.vector_width_span) = (NONE, NONE);
    for p in &mut d.params {
        (p.span, p.ty_span) = (NONE, NONE);
    }
    block(&mut d.body);
    d
}

/// Print `def`, parse it back, and compare; print the result again, which must give the same
/// text. `what` names the kernel in a failure.
fn check_roundtrip(def: &KernelDef, what: &str) {
    let text = def.to_string();
    assert_eq!(
        text,
        def.to_string(),
        "{what}: printing is not deterministic"
    );
    let back = parse(&text)
        .unwrap_or_else(|e| panic!("{what}: the printed kernel does not parse:\n{e}\n{text}"));
    let (want, got) = (unspanned(def), unspanned(&back));
    if want != got {
        // Where they differ, in the (long) `Debug` forms.
        let (want, got) = (format!("{want:#?}"), format!("{got:#?}"));
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(got.lines().count()));
        let context = |s: &str| {
            s.lines()
                .skip(line.saturating_sub(12))
                .take(16)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{what}: the printed kernel parses to a different tree\n--- printed ---\n{text}\n\
             --- tree (from line {line} of its Debug form) ---\n{}\n--- parsed back ---\n{}",
            context(&want),
            context(&got)
        );
    }
    assert_eq!(
        back.to_string(),
        text,
        "{what}: the parsed-back kernel prints differently"
    );
}

/// Every statement and expression form of the AST, and every operator.
const EVERY_FORM: &str = r#"
#[tile_kernel(threads = 96, target = 90, cluster = [2, 1, 1])]
fn every_form(x: GlobalTensor<i32>, out: GlobalTensor<f32>, k: i32, r#type: u64) {
    let b = block_idx(1);
    let mut t = load_global(x, offsets = [b * 16], shape = [4, 16], other = -1);
    let s = shared_tensor::<i32>([4, 16]);
    let c = shared_tensor::<i32, 8>([8]);
    t += (t * 3 - 1) / 2 % 7 & 15 | 1 ^ 2 << 1 >> 1;
    t -= -t;
    t *= !(t < 0) as i32;
    t /= 3;
    t %= 9;
    t &= 7;
    t |= 1;
    t ^= 2;
    t <<= 1;
    t >>= 1;
    t = t - (t - 1) + (k - (1 + k)) * (k / (k * 2));
    t = t.max(0).min(i32::MAX);
    let bits = (t & 1 == 0) && !(t != 2) || t <= 3 && t >= 4 || t > 5;
    let f = 1.5f32 + 2e-3 * (k as f32) - (-0.5);
    let v = if k > 0 { 7u64 } else { r#type };
    let w = if bits.any() { 1 } else if k == 2 { 2 } else { 3 };
    for i in 0..k {
        store_shared(s, t, offsets = [0, 0]);
        if i == 3 {
            break;
        }
    }
    for _ in (k & 3..(k | 4) * 2).step_by(2) {
        sync();
    }
    while t.sum() < 100 {
        t = t + 1;
    }
    loop {
        if k < 0 {
            break;
        } else if k == 0 {
            sync();
        } else {
            fence(MemoryOrder::Release, scope = "gpu");
        }
        break;
    }
    if k == 1 {
    }
    unsafe {
        atomic_add(x, (b, 1), 2, check_bounds = false, sem = "relaxed");
    }
    let _v = unsafe { atomic_load(x, (b, 0), check_bounds = false) };
    atomic_cas(x, (b,), 2, 3);
    (k + 1);
    store_global(out, f.broadcast_to([4, 16]) * (w as f32) + (v as f32), offsets = [0]);
    let a = [1, 2, 3];
    let _u = (1).max(2) + (-3).min(4) + true as i32 + a.len();
    let _h = "str \" with escapes \n";
}
"#;

/// Every `Stmt` and `ExprKind` variant name found in `body`.
fn forms(body: &[Stmt], out: &mut std::collections::BTreeSet<&'static str>) {
    fn expr(e: &ast::Expr, out: &mut std::collections::BTreeSet<&'static str>) {
        let (name, kids): (&'static str, Vec<&ast::Expr>) = match &e.kind {
            ExprKind::Int { .. } => ("Int", vec![]),
            ExprKind::Float { .. } => ("Float", vec![]),
            ExprKind::Bool(_) => ("Bool", vec![]),
            ExprKind::Str(_) => ("Str", vec![]),
            ExprKind::Path(_) => ("Path", vec![]),
            ExprKind::Array(v) => ("Array", v.iter().collect()),
            ExprKind::Tuple(v) => ("Tuple", v.iter().collect()),
            ExprKind::Binary { lhs, rhs, .. } => ("Binary", vec![&**lhs, &**rhs]),
            ExprKind::Unary { x, .. } => ("Unary", vec![&**x]),
            ExprKind::Call { args, generics, .. } => {
                for g in generics {
                    out.insert(match g {
                        ast::GenericArg::Type(..) => "GenericArg::Type",
                        ast::GenericArg::Const(_) => "GenericArg::Const",
                    });
                }
                ("Call", args.iter().map(|a| &a.value).collect())
            }
            ExprKind::Method { receiver, args, .. } => (
                "Method",
                std::iter::once(&**receiver)
                    .chain(args.iter().map(|a| &a.value))
                    .collect(),
            ),
            ExprKind::IfElse { cond, then, els } => ("IfElse", vec![&**cond, &**then, &**els]),
            ExprKind::Cast { x, .. } => ("Cast", vec![&**x]),
            ExprKind::Unsafe(x) => ("UnsafeExpr", vec![&**x]),
        };
        out.insert(name);
        kids.into_iter().for_each(|k| expr(k, out));
    }
    for s in body {
        let (name, exprs, blocks): (&'static str, Vec<&ast::Expr>, Vec<&[Stmt]>) = match s {
            Stmt::Let { init, .. } => ("Let", vec![init], vec![]),
            Stmt::Assign { value, .. } => ("Assign", vec![value], vec![]),
            Stmt::Expr(e) => ("Expr", vec![e], vec![]),
            Stmt::For { range, body, .. } => (
                "For",
                [&range.start, &range.end]
                    .into_iter()
                    .chain(range.step.as_ref())
                    .collect(),
                vec![body],
            ),
            Stmt::While { cond, body, .. } => ("While", vec![cond], vec![body]),
            Stmt::Loop { body, .. } => ("Loop", vec![], vec![body]),
            Stmt::If {
                cond, then, els, ..
            } => (
                "If",
                vec![cond],
                std::iter::once(&then[..]).chain(els.as_deref()).collect(),
            ),
            Stmt::Break { .. } => ("Break", vec![], vec![]),
            Stmt::Unsafe { body, .. } => ("Unsafe", vec![], vec![body]),
        };
        out.insert(name);
        exprs.into_iter().for_each(|e| expr(e, out));
        blocks.into_iter().for_each(|b| forms(b, out));
    }
}

#[test]
fn every_form_round_trips() {
    let def = parse(EVERY_FORM).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = std::collections::BTreeSet::new();
    forms(&def.body, &mut seen);
    for want in [
        "Let",
        "Assign",
        "Expr",
        "For",
        "While",
        "Loop",
        "If",
        "Break",
        "Int",
        "Float",
        "Bool",
        "Str",
        "Path",
        "Array",
        "Tuple",
        "Binary",
        "Unary",
        "Call",
        "Method",
        "IfElse",
        "Cast",
        "Unsafe",
        "UnsafeExpr",
        "GenericArg::Type",
        "GenericArg::Const",
    ] {
        assert!(seen.contains(want), "the kernel has no `{want}`: {seen:?}");
    }
    assert_eq!(def.options.cluster, Some([2, 1, 1]));
    check_roundtrip(&def, "every_form");
    // The text itself is stable: printing the parsed source gives the canonical form, and that
    // form is a fixed point (checked inside `check_roundtrip`); spot-check a few lines of it.
    let text = def.to_string();
    for line in [
        "#[tile_kernel(threads = 96, target = 90, cluster = 2)]",
        "fn every_form(x: GlobalTensor<i32>, out: GlobalTensor<f32>, k: i32, r#type: u64) {",
        "    let w = if bits.any() { 1 } else { if k == 2 { 2 } else { 3 } };",
        "    for _ in (k & 3..(k | 4) * 2).step_by(2) {",
        "        } else if k == 0 {",
        "    (k + 1);",
        "    atomic_cas(x, (b,), 2, 3);",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line `{line}` in\n{text}"
        );
    }
}

/// Every `#[tile_kernel]` function in `src` (at any depth: kernels are often declared inside
/// test functions).
fn kernels_in(src: &str) -> Vec<syn::ItemFn> {
    struct Finder(Vec<syn::ItemFn>);
    impl<'a> Visit<'a> for Finder {
        fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
            if f.attrs.iter().any(|a| {
                a.path()
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "tile_kernel")
            }) {
                self.0.push(f.clone());
            }
            syn::visit::visit_item_fn(self, f);
        }
    }
    let Ok(file) = syn::parse_file(src) else {
        return Vec::new();
    };
    let mut finder = Finder(Vec::new());
    finder.visit_file(&file);
    finder.0
}

/// Names that are Rust keywords: the kernel's own name (which the front end stores without its
/// `r#`, as the PTX entry point) and the others (stored with it).
#[test]
fn raw_names_round_trip() {
    let def = parse("#[tile_kernel] fn r#loop(r#in: i32) { let r#as = r#in; }")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(def.name, "loop");
    check_roundtrip(&def, "r#loop");
    assert!(def.to_string().contains("fn r#loop(r#in: i32)"), "{def}");
}

#[test]
fn workspace_kernels_round_trip() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["tests", "examples", "tests/ui/pass"] {
        for e in std::fs::read_dir(root.join(dir))
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "rs") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for path in &files {
        let src = std::fs::read_to_string(path).expect("a readable source file");
        for mut func in kernels_in(&src) {
            let attr = tile_kernel_attr(&mut func).expect("found by its attribute");
            // Kernels the front end rejects (compile-fail cases) have no tree to print.
            let Front::Def(_, def) = expand::front(attr, &func) else {
                continue;
            };
            check_roundtrip(&def, &format!("{}: {}", path.display(), def.name));
            checked += 1;
        }
    }
    // Not vacuous: the workspace has dozens of kernels (70 when this was written).
    assert!(checked >= 50, "only {checked} kernels found in {files:?}");
}

#[test]
fn generated_kernels_round_trip() {
    let env = |name: &str| std::env::var(name).ok().and_then(|s| s.parse::<u64>().ok());
    let seeds: Vec<u64> = match env("TILUS_DIFF_KERNEL_SEED") {
        Some(seed) => vec![seed],
        None => {
            // Fresh kernels every run (the seed is printed on failure), as in the differential
            // test itself.
            let base = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            let mut rng = krng::KRng::new(base);
            (0..env("TILUS_ROUNDTRIP_KERNELS").unwrap_or(DEFAULT_KERNELS))
                .map(|_| rng.next())
                .collect()
        }
    };
    for seed in seeds {
        let (def, _) = gen::gen_kernel(seed, "roundtrip");
        let replay = format!("generated kernel, replay with TILUS_DIFF_KERNEL_SEED={seed}");
        check_roundtrip(&def, &replay);
        check_roundtrip(
            &rename::rename_locals(&def),
            &format!("{replay} (variables renamed)"),
        );
        check_roundtrip(
            &hoist::hoist_effects(&def),
            &format!("{replay} (effects hoisted)"),
        );
    }
}
