//! AST-level mutations over `syn` (crossover of expressions and statements between kernels,
//! effects nested in arguments, argument and keyword edits, shapes, wrappers, control flow) and
//! the renamings that need to know what is a variable (done on tokens).

use super::corpus::Corpus;
use super::rng::Rng;
use super::tok::{self, Kernel, Tok};
use super::vocab;
use quote::ToTokens;
use std::collections::HashMap;
use syn::punctuated::Punctuated;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;

pub const AST_MUTATIONS: &[(&str, u32)] = &[
    ("ast-crossover", 8),
    ("ast-nest-effect", 6),
    ("ast-args", 6),
    ("ast-kwarg", 4),
    ("ast-shape", 5),
    ("ast-wrap", 5),
    ("ast-insert-stmt", 5),
    ("ast-stmts", 4),
    ("ast-control", 4),
    ("ast-rename-var", 4),
    ("ast-rename-kernel", 2),
    ("ast-param", 2),
    ("ast-retype", 5),
];

/// Apply AST mutation `which` (an index into [`AST_MUTATIONS`]). Returns false when the kernel
/// does not parse as a function or has nothing the mutation applies to.
pub fn mutate(k: &mut Kernel, which: usize, corpus: &Corpus, rng: &mut Rng) -> bool {
    let name = AST_MUTATIONS[which].0;
    match name {
        "ast-rename-var" => return rename_var(k, rng),
        "ast-rename-kernel" => return rename_kernel(k, rng),
        "ast-retype" => return retype(k, rng),
        _ => {}
    }
    let Ok(ts) = k.item_tokens() else {
        return false;
    };
    let Ok(mut f) = syn::parse2::<syn::ItemFn>(ts) else {
        return false;
    };
    let names = Names::of(&f);
    let done = match name {
        "ast-crossover" => {
            let donor = parse_expr(rng.pick(&corpus.exprs).as_str());
            let new = adapt(&donor, &names, rng);
            on_random_expr(&mut f, rng, &|_| true, &mut |e| *e = new.clone())
        }
        "ast-nest-effect" => {
            let effect = effect(corpus, &names, rng);
            let mut r = Rng::new(rng.next_u64());
            let hit = on_random_expr(&mut f, rng, &has_args, &mut |e| {
                let args = call_args_mut(e).expect("a call");
                let i = r.below(args.len());
                match &mut args[i] {
                    syn::Expr::Assign(a) => *a.right = effect.clone(),
                    other => *other = effect.clone(),
                }
            });
            hit
        }
        "ast-args" => {
            let mut r = Rng::new(rng.next_u64());
            on_random_expr(
                &mut f,
                rng,
                &|e| matches!(e, syn::Expr::Call(_) | syn::Expr::MethodCall(_)),
                &mut |e| edit_args(call_args_mut(e).expect("a call"), &mut r),
            )
        }
        "ast-kwarg" => {
            let kw = rng.word(vocab::kwargs());
            let new = syn::Ident::new(kw, proc_macro2::Span::call_site());
            on_random_expr(
                &mut f,
                rng,
                &|e| matches!(e, syn::Expr::Assign(a) if matches!(&*a.left, syn::Expr::Path(_))),
                &mut |e| {
                    if let syn::Expr::Assign(a) = e {
                        *a.left = syn::parse_quote!(#new);
                    }
                },
            )
        }
        "ast-shape" => {
            let mut r = Rng::new(rng.next_u64());
            on_random_expr(
                &mut f,
                rng,
                &|e| matches!(e, syn::Expr::Array(_)),
                &mut |e| edit_shape(e, &mut r),
            )
        }
        "ast-wrap" => {
            let mut r = Rng::new(rng.next_u64());
            on_random_expr(&mut f, rng, &|_| true, &mut |e| wrap(e, &mut r))
        }
        "ast-insert-stmt" => {
            let Ok(b) = syn::parse_str::<syn::Block>(&format!("{{ {} }}", rng.pick(&corpus.stmts)))
            else {
                return false;
            };
            let Some(s) = b.stmts.first() else {
                return false;
            };
            let s = adapt_stmt(s, &names, rng);
            let mut r = Rng::new(rng.next_u64());
            on_random_block(&mut f, rng, &mut |b| {
                let at = r.below(b.stmts.len() + 1);
                b.stmts.insert(at, s.clone());
                terminate(&mut b.stmts);
            })
        }
        "ast-stmts" => {
            let mut r = Rng::new(rng.next_u64());
            on_random_block(&mut f, rng, &mut |b| edit_stmts(&mut b.stmts, &mut r))
        }
        "ast-control" => {
            let mut r = Rng::new(rng.next_u64());
            on_random_block(&mut f, rng, &mut |b| wrap_stmts(&mut b.stmts, &mut r))
        }
        "ast-param" => edit_params(&mut f, rng),
        other => unreachable!("unknown AST mutation {other}"),
    };
    if done {
        k.item = tok::from_tokens(&f);
    }
    done
}

/// The kernel's own names: tensor and scalar parameters, and every `let`/`for` binding.
#[derive(Default)]
struct Names {
    tensors: Vec<String>,
    scalars: Vec<String>,
    locals: Vec<String>,
}

impl Names {
    fn of(f: &syn::ItemFn) -> Names {
        let mut n = Names::default();
        for input in &f.sig.inputs {
            if let syn::FnArg::Typed(pt) = input {
                if let syn::Pat::Ident(pi) = &*pt.pat {
                    let ty = pt.ty.to_token_stream().to_string();
                    if ty.contains("GlobalTensor") {
                        n.tensors.push(pi.ident.to_string());
                    } else {
                        n.scalars.push(pi.ident.to_string());
                    }
                }
            }
        }
        n.visit_block(&f.block);
        n
    }

    fn all(&self) -> Vec<String> {
        self.tensors
            .iter()
            .chain(&self.scalars)
            .chain(&self.locals)
            .cloned()
            .collect()
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.locals.push(p.ident.to_string());
    }
}

// ---------------------------------------------------------------------------------------------
// Finding the n-th expression or block.

struct Count<'p> {
    pred: &'p dyn Fn(&syn::Expr) -> bool,
    n: usize,
}

impl<'ast> Visit<'ast> for Count<'_> {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        if (self.pred)(e) {
            self.n += 1;
        }
        syn::visit::visit_expr(self, e);
    }
}

struct Nth<'p, 'o> {
    pred: &'p dyn Fn(&syn::Expr) -> bool,
    target: usize,
    seen: usize,
    op: Option<&'o mut dyn FnMut(&mut syn::Expr)>,
}

impl VisitMut for Nth<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if self.op.is_none() {
            return;
        }
        if (self.pred)(e) {
            if self.seen == self.target {
                let op = self.op.take().expect("checked");
                op(e);
                return;
            }
            self.seen += 1;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// Apply `op` to a random expression of the body satisfying `pred`.
fn on_random_expr(
    f: &mut syn::ItemFn,
    rng: &mut Rng,
    pred: &dyn Fn(&syn::Expr) -> bool,
    op: &mut dyn FnMut(&mut syn::Expr),
) -> bool {
    let mut c = Count { pred, n: 0 };
    c.visit_block(&f.block);
    if c.n == 0 {
        return false;
    }
    let mut v = Nth {
        pred,
        target: rng.below(c.n),
        seen: 0,
        op: Some(op),
    };
    v.visit_block_mut(&mut f.block);
    true
}

struct CountBlocks(usize);

impl<'ast> Visit<'ast> for CountBlocks {
    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.0 += 1;
        syn::visit::visit_block(self, b);
    }
}

struct NthBlock<'o> {
    target: usize,
    seen: usize,
    op: Option<&'o mut dyn FnMut(&mut syn::Block)>,
}

impl VisitMut for NthBlock<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        if self.op.is_none() {
            return;
        }
        if self.seen == self.target {
            let op = self.op.take().expect("checked");
            op(b);
            return;
        }
        self.seen += 1;
        syn::visit_mut::visit_block_mut(self, b);
    }
}

/// Apply `op` to a random block of the body (the body itself included).
fn on_random_block(
    f: &mut syn::ItemFn,
    rng: &mut Rng,
    op: &mut dyn FnMut(&mut syn::Block),
) -> bool {
    let mut c = CountBlocks(0);
    c.visit_block(&f.block);
    let mut v = NthBlock {
        target: rng.below(c.0.max(1)),
        seen: 0,
        op: Some(op),
    };
    v.visit_block_mut(&mut f.block);
    true
}

fn has_args(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Call(c) => !c.args.is_empty(),
        syn::Expr::MethodCall(m) => !m.args.is_empty(),
        _ => false,
    }
}

fn call_args_mut(e: &mut syn::Expr) -> Option<&mut Punctuated<syn::Expr, syn::Token![,]>> {
    match e {
        syn::Expr::Call(c) => Some(&mut c.args),
        syn::Expr::MethodCall(m) => Some(&mut m.args),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The mutations.

fn parse_expr(s: &str) -> syn::Expr {
    syn::parse_str(s).unwrap_or_else(|e| panic!("fuzzer template `{s}` does not parse: {e}"))
}

/// An expression with an effect on the kernel's own tensors (or one from the corpus).
fn effect(corpus: &Corpus, names: &Names, rng: &mut Rng) -> syn::Expr {
    if (names.tensors.is_empty() || rng.chance(1, 3)) && !corpus.effects.is_empty() {
        let e = parse_expr(rng.pick(&corpus.effects).as_str());
        return adapt(&e, names, rng);
    }
    let t = names
        .tensors
        .first()
        .map(|_| rng.pick(&names.tensors).clone())
        .unwrap_or_else(|| "x".into());
    let templates = [
        "atomic::global_add(T, ones([1]))",
        "atomic::global_add(T, arange(32), offsets = [1])",
        "atomic::global_exch(T, full([64], 7))",
        "atomic::global_cas(T, compare = zeros([32]), values = ones([32]))",
        "atomic::global_max(T, arange(128), mask = arange(128) % 2 == 0, sem = acquire)",
        "atomic_add(T, 0, 1)",
        "atomic_add(T, arange(8), ones([8]), order = MemoryOrder::AcqRel)",
        "atomic_cas(T, 0, 0, 1)",
        "atomic_xchg(T, arange(4), 9)",
        "atomic_load(T, 0, order = MemoryOrder::Acquire)",
        "atomic_load(T, arange(16))",
        "load_global(T, offsets = [0], shape = [32])",
        "load_global(T, offsets = [block_idx()], shape = [33], other = -1)",
        "atomic::global_scatter_add(T, dim = 0, indices = arange(32), values = 1)",
        "atomic::global_add(T, atomic::global_add(T, ones([1])))",
        "atomic_add(T, atomic_load(T, 0), atomic_add(T, 0, 1))",
        "T.len()",
    ];
    parse_expr(&rng.pick(&templates).replace('T', &t))
}

/// Swap, duplicate, drop, reverse or add arguments.
fn edit_args(args: &mut Punctuated<syn::Expr, syn::Token![,]>, rng: &mut Rng) {
    let mut v: Vec<syn::Expr> = std::mem::take(args).into_iter().collect();
    match rng.below(6) {
        0 if v.len() >= 2 => {
            let (i, j) = (rng.below(v.len()), rng.below(v.len()));
            v.swap(i, j);
        }
        1 if !v.is_empty() => {
            let i = rng.below(v.len());
            let d = v[i].clone();
            v.insert(rng.below(v.len() + 1), d);
        }
        2 if !v.is_empty() => {
            v.remove(rng.below(v.len()));
        }
        3 => v.reverse(),
        _ => {
            let kw = rng.pick(vocab::kwargs());
            let value = match rng.below(6) {
                0 => rng.pick(vocab::QUALIFIERS).to_string(),
                1 => format!("[{}]", rng.pick(vocab::SHAPE_SIZES)),
                2 => rng.pick(&["true", "false", "arange(32) < 5"]).to_string(),
                3 => rng.pick(vocab::LITERALS).to_string(),
                _ => format!("[{}, {}]", rng.below(3), rng.pick(vocab::SHAPE_SIZES)),
            };
            if let Ok(e) = syn::parse_str::<syn::Expr>(&format!("{kw} = {value}")) {
                let at = rng.below(v.len() + 1);
                v.insert(at, e);
            }
        }
    }
    args.extend(v);
}

/// Change, add or drop a dimension of an array literal, or replace it.
fn edit_shape(e: &mut syn::Expr, rng: &mut Rng) {
    let syn::Expr::Array(a) = e else { return };
    let size = rng.word(vocab::SHAPE_SIZES);
    let size = parse_expr(size);
    match rng.below(5) {
        0 | 1 if !a.elems.is_empty() => {
            let i = rng.below(a.elems.len());
            a.elems[i] = size;
        }
        2 => a.elems.push(size),
        3 if !a.elems.is_empty() => {
            let v: Vec<syn::Expr> = std::mem::take(&mut a.elems).into_iter().collect();
            let keep = v.len() - 1;
            a.elems.extend(v.into_iter().take(keep));
        }
        _ => {
            let rank = 1 + rng.below(4);
            let dims: Vec<&str> = (0..rank).map(|_| *rng.pick(vocab::SHAPE_SIZES)).collect();
            *e = parse_expr(&format!("[{}]", dims.join(", ")));
        }
    }
}

/// Wrap an expression in a unary op, a cast, a method, a call or a binary op with an edge value.
fn wrap(e: &mut syn::Expr, rng: &mut Rng) {
    let inner = e.to_token_stream().to_string();
    let x = format!("({inner})");
    let lit = rng.pick(&["0", "1", "-1", "31", "32", "2147483647", "(-2147483648)"]);
    let s = match rng.below(14) {
        0 => format!("-{x}"),
        1 => format!("!{x}"),
        2 => format!("{x} as {}", rng.pick(vocab::TYPES)),
        3 => format!(
            "{x}.{}()",
            rng.pick(&[
                "sum", "item", "any", "all", "min", "max", "len", "abs", "sqrt", "floor", "round"
            ])
        ),
        4 => format!("{x}.broadcast_to([{}])", rng.pick(vocab::SHAPE_SIZES)),
        5 => format!(
            "{x}.reshape([{}, {}])",
            rng.pick(vocab::SHAPE_SIZES),
            rng.pick(vocab::SHAPE_SIZES)
        ),
        6 => format!("select({x}, {x}, {lit})"),
        7 => format!("min({x}, {lit})"),
        8 => format!("max({x}, {x})"),
        9 => format!("if {x} {{ {x} }} else {{ {lit} }}"),
        10 => format!("({x}, {lit})"),
        _ => format!(
            "{x} {} {lit}",
            rng.pick(&["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "<", "&&"])
        ),
    };
    if let Ok(w) = syn::parse_str::<syn::Expr>(&s) {
        *e = w;
    }
}

/// Give every expression statement but the last its `;`, so inserted statements stay Rust.
fn terminate(stmts: &mut [syn::Stmt]) {
    let n = stmts.len();
    for s in stmts.iter_mut().take(n.saturating_sub(1)) {
        if let syn::Stmt::Expr(e, semi @ None) = s {
            if !matches!(
                e,
                syn::Expr::If(_)
                    | syn::Expr::ForLoop(_)
                    | syn::Expr::While(_)
                    | syn::Expr::Loop(_)
                    | syn::Expr::Block(_)
            ) {
                *semi = Some(Default::default());
            }
        }
    }
}

/// Delete, duplicate, swap or move statements of a block.
fn edit_stmts(stmts: &mut Vec<syn::Stmt>, rng: &mut Rng) {
    if stmts.is_empty() {
        return;
    }
    let i = rng.below(stmts.len());
    match rng.below(4) {
        0 => {
            stmts.remove(i);
        }
        1 => {
            let s = stmts[i].clone();
            stmts.insert(rng.below(stmts.len() + 1), s);
        }
        2 => {
            let j = rng.below(stmts.len());
            stmts.swap(i, j);
        }
        _ => {
            let s = stmts.remove(i);
            let at = rng.below(stmts.len() + 1);
            stmts.insert(at, s);
        }
    }
    terminate(stmts);
}

/// Put a run of statements of a block inside a loop or a conditional.
fn wrap_stmts(stmts: &mut Vec<syn::Stmt>, rng: &mut Rng) {
    if stmts.is_empty() {
        return;
    }
    terminate(stmts);
    let i = rng.below(stmts.len());
    let n = 1 + rng.below((stmts.len() - i).min(3));
    let inner: Vec<syn::Stmt> = stmts.drain(i..i + n).collect();
    let body = inner
        .iter()
        .map(|s| s.to_token_stream().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let s = match rng.below(7) {
        0 => format!("for _i in 0..3 {{ {body} }}"),
        1 => format!("for j in (block_idx()..40).step_by(7) {{ {body} }}"),
        2 => format!("if block_idx() == 0 {{ {body} }}"),
        3 => format!("if grid_dim() > 1 {{ {body} }} else {{ {body} }}"),
        4 => format!("loop {{ {body} break; }}"),
        5 => format!("let mut w = 0; while w < 2 {{ w += 1; {body} }}"),
        _ => format!("while false {{ {body} }}"),
    };
    match syn::parse_str::<syn::Block>(&format!("{{ {s} }}")) {
        Ok(b) => {
            for (k, st) in b.stmts.into_iter().enumerate() {
                stmts.insert(i + k, st);
            }
        }
        Err(_) => {
            for (k, st) in inner.into_iter().enumerate() {
                stmts.insert(i + k, st);
            }
        }
    }
    terminate(stmts);
}

/// Add, drop, duplicate or retype a parameter.
fn edit_params(f: &mut syn::ItemFn, rng: &mut Rng) -> bool {
    let inputs = &mut f.sig.inputs;
    match rng.below(4) {
        0 if !inputs.is_empty() => {
            let v: Vec<syn::FnArg> = std::mem::take(inputs).into_iter().collect();
            let drop = rng.below(v.len());
            inputs.extend(
                v.into_iter()
                    .enumerate()
                    .filter(|(i, _)| *i != drop)
                    .map(|(_, a)| a),
            );
        }
        1 if !inputs.is_empty() => {
            let i = rng.below(inputs.len());
            if let syn::FnArg::Typed(pt) = &mut inputs[i] {
                let elem = rng.pick(vocab::TYPES);
                let ty = match rng.below(8) {
                    0 => elem.to_string(),
                    1 => "tilus::GlobalTensor<i32>".to_string(),
                    2 => "GlobalTensor<i32, i32>".to_string(),
                    3 => "&GlobalTensor<i32>".to_string(),
                    4 => "GlobalTensor<usize>".to_string(),
                    _ => format!("GlobalTensor<{elem}>"),
                };
                if let Ok(t) = syn::parse_str(&ty) {
                    *pt.ty = t;
                }
            }
        }
        _ => {
            let name = vocab::new_name(rng, &[]);
            let elem = rng.pick(vocab::TYPES);
            let ty = if rng.chance(1, 2) {
                format!("GlobalTensor<{elem}>")
            } else {
                elem.to_string()
            };
            let many = if rng.chance(1, 8) {
                40 + rng.below(300)
            } else {
                1
            };
            for j in 0..many {
                let n = if many == 1 {
                    name.clone()
                } else {
                    format!("p{j}")
                };
                if let Ok(a) = syn::parse_str::<syn::FnArg>(&format!("{n}: {ty}")) {
                    let at = rng.below(inputs.len() + 1);
                    inputs.insert(at, a);
                }
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Adapting foreign code to the kernel's own names.

/// Map the free variables of `e` (from another kernel) to names of this kernel, consistently.
fn adapt(e: &syn::Expr, names: &Names, rng: &mut Rng) -> syn::Expr {
    let mut ts = tok::from_tokens(e);
    if rng.chance(3, 4) {
        map_names(&mut ts, names, rng, &mut HashMap::new(), false);
    }
    syn::parse_str(&tok::print(&ts)).unwrap_or_else(|_| e.clone())
}

fn adapt_stmt(s: &syn::Stmt, names: &Names, rng: &mut Rng) -> syn::Stmt {
    let mut ts = tok::from_tokens(s);
    if rng.chance(3, 4) {
        map_names(&mut ts, names, rng, &mut HashMap::new(), false);
    }
    // A statement without its `;` (the tail of a block) gets one.
    let mut text = tok::print(&ts);
    if !text.trim_end().ends_with(';') && !text.trim_end().ends_with('}') {
        text.push(';');
    }
    syn::parse_str::<syn::Block>(&format!("{{ {text} }}"))
        .ok()
        .and_then(|b| b.stmts.into_iter().next())
        .unwrap_or_else(|| s.clone())
}

fn is_language_word(w: &str) -> bool {
    vocab::builtins().iter().any(|b| b == w)
        || vocab::kwargs().contains(&w)
        || vocab::QUALIFIERS.contains(&w)
        || matches!(
            w,
            "let" | "mut" | "for" | "in" | "if" | "else" | "while" | "loop" | "break" | "as"
        )
}

fn map_names(
    ts: &mut [Tok],
    names: &Names,
    rng: &mut Rng,
    map: &mut HashMap<String, String>,
    in_parens: bool,
) {
    let all = names.all();
    if all.is_empty() {
        return;
    }
    for i in 0..ts.len() {
        let prev = i.checked_sub(1).map(|p| ts[p].clone());
        let next = ts.get(i + 1).cloned();
        match &mut ts[i] {
            Tok::Group(d, inner) => {
                let parens = *d == tok::Delim::Paren;
                map_names(inner, names, rng, map, parens);
            }
            Tok::Ident(x) => {
                let binding =
                    matches!(&prev, Some(Tok::Ident(p)) if p == "let" || p == "mut" || p == "for");
                let path = matches!(&prev, Some(Tok::Punct('.' | ':', _)))
                    || matches!(
                        &next,
                        Some(Tok::Punct(':' | '!', _)) | Some(Tok::Group(tok::Delim::Paren, _))
                    );
                let kwarg = in_parens && matches!(&next, Some(Tok::Punct('=', false)));
                if binding || path || kwarg || is_language_word(x) {
                    continue;
                }
                let to = map
                    .entry(x.clone())
                    .or_insert_with(|| rng.pick(&all).clone())
                    .clone();
                *x = to;
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Renamings (on tokens: every occurrence of a name).

/// Rename a parameter or local everywhere (or only at its binding) to a PTX word, a
/// temporary-like name, a builtin or another variable.
fn rename_var(k: &mut Kernel, rng: &mut Rng) -> bool {
    let Ok(ts) = k.item_tokens() else {
        return false;
    };
    let Ok(f) = syn::parse2::<syn::ItemFn>(ts) else {
        return false;
    };
    let names = Names::of(&f).all();
    if names.is_empty() {
        return false;
    }
    let from = rng.pick(&names).clone();
    let to = vocab::new_name(rng, &names);
    if rng.chance(7, 8) {
        tok::rename(&mut k.item, &from, &to);
    } else {
        // Only the first occurrence (its binding or the parameter).
        let mut first = true;
        rename_first(&mut k.item, &from, &to, &mut first);
    }
    true
}

fn rename_first(ts: &mut [Tok], from: &str, to: &str, first: &mut bool) {
    for t in ts {
        if !*first {
            return;
        }
        match t {
            Tok::Ident(x) if x == from => {
                *x = to.to_string();
                *first = false;
            }
            Tok::Group(_, inner) => rename_first(inner, from, to, first),
            _ => {}
        }
    }
}

/// Rename the kernel (the identifier after `fn`) to a PTX reserved word or symbol-like name.
fn rename_kernel(k: &mut Kernel, rng: &mut Rng) -> bool {
    let Some(at) = k
        .item
        .iter()
        .position(|t| matches!(t, Tok::Ident(x) if x == "fn"))
    else {
        return false;
    };
    let Some(Tok::Ident(name)) = k.item.get_mut(at + 1) else {
        return false;
    };
    let new = match rng.below(4) {
        0 => format!(
            "{name}_{}",
            rng.pick(vocab::PTX_WORDS).trim_start_matches('$')
        ),
        _ => vocab::new_name(rng, &[]),
    };
    *name = new;
    true
}

/// Change the kernel's element type: every `i32` (parameters, casts, `shared_tensor(i32, ..)`,
/// `i32::MAX`) becomes another type, so that whole kernels run on the other types.
fn retype(k: &mut Kernel, rng: &mut Rng) -> bool {
    let mut ids = Vec::new();
    tok::idents(&k.item, &mut ids);
    if !ids.iter().any(|x| x == "i32") {
        return false;
    }
    let to = *rng.pick(&vocab::TYPES[..13]);
    tok::rename(&mut k.item, "i32", to);
    true
}
