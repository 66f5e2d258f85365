//! The seed corpus: every `#[tile_kernel(..)] fn` of the workspace's tests, examples, trybuild
//! cases and documentation, read at test time; and the pools of expressions and statements the
//! AST mutations take from.

use super::tok::{self, Kernel, Tok};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

pub struct Seed {
    /// `file` or `file (doc)`, and the kernel's name.
    pub origin: String,
    pub kernel: Kernel,
}

pub struct Corpus {
    pub seeds: Vec<Seed>,
    /// Every expression of every seed's body (crossover material), as token text (syn's trees
    /// cannot cross threads).
    pub exprs: Vec<String>,
    /// Expressions with an effect (atomics, stores, barriers).
    pub effects: Vec<String>,
    /// Every statement of every seed's body, at any depth.
    pub stmts: Vec<String>,
    /// Files read, and how many were not Rust that syn parses.
    pub files: usize,
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files the seeds come from, relative to the workspace root, sorted (the corpus, and so
/// every generated body, depends only on their contents).
fn seed_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "tests",
        "examples",
        "tests/ui",
        "tests/ui/pass",
        "src",
        "src/lang",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.push(root.join("README.md"));
    files.sort();
    files
}

pub fn load() -> Corpus {
    let root = workspace_root();
    let mut seeds = Vec::new();
    let mut seen = HashSet::new();
    let files = seed_files(&root);
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let mut found = Vec::new();
        if path.extension().is_some_and(|x| x == "md") {
            for block in code_blocks(text.lines()) {
                kernels_in_source(&block, &mut found);
            }
        } else {
            kernels_in_source(&text, &mut found);
            let docs = text.lines().filter_map(|l| {
                let t = l.trim_start();
                t.strip_prefix("//!")
                    .or_else(|| t.strip_prefix("///"))
                    .map(|r| r.strip_prefix(' ').unwrap_or(r))
            });
            let mut in_docs = Vec::new();
            for block in code_blocks(docs) {
                kernels_in_source(&block, &mut in_docs);
            }
            found.extend(in_docs.into_iter().map(|(n, k)| (format!("{n} (doc)"), k)));
        }
        for (name, kernel) in found {
            if seen.insert(kernel.clone()) {
                seeds.push(Seed {
                    origin: format!("{rel}: {name}"),
                    kernel,
                });
            }
        }
    }

    let mut pools = Pools::default();
    for s in &seeds {
        if let Ok(ts) = s.kernel.item_tokens() {
            if let Ok(f) = syn::parse2::<syn::ItemFn>(ts) {
                pools.visit_block(&f.block);
            }
        }
    }
    let text = |t: &dyn quote::ToTokens| tok::print(&tok::from_tokens(t));
    let effects = pools
        .exprs
        .iter()
        .filter(|e| is_effect(e))
        .map(|e| text(e))
        .collect();
    Corpus {
        seeds,
        exprs: pools.exprs.iter().map(|e| text(e)).collect(),
        effects,
        stmts: pools.stmts.iter().map(|s| text(s)).collect(),
        files: files.len(),
    }
}

/// Whether `e` is a call with a side effect (an atomic, a store, a barrier, a fence).
pub fn is_effect(e: &syn::Expr) -> bool {
    let name = match e {
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) => p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::"),
            _ => return false,
        },
        _ => return false,
    };
    name.starts_with("atomic") || name.starts_with("store_") || name == "sync" || name == "fence"
}

#[derive(Default)]
struct Pools {
    exprs: Vec<syn::Expr>,
    stmts: Vec<syn::Stmt>,
}

impl<'ast> Visit<'ast> for Pools {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        self.exprs.push(e.clone());
        syn::visit::visit_expr(self, e);
    }
    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        self.stmts.push(s.clone());
        syn::visit::visit_stmt(self, s);
    }
}

/// The Rust code blocks of markdown (or of doc comments with their `///` removed): fenced
/// blocks that are not `text`, with rustdoc's hidden-line `# ` markers removed.
fn code_blocks<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    enum State {
        Outside,
        Rust(String),
        Other,
    }
    let mut out = Vec::new();
    let mut state = State::Outside;
    for l in lines {
        let t = l.trim();
        if let Some(info) = t.strip_prefix("```") {
            state = match std::mem::replace(&mut state, State::Outside) {
                State::Outside => {
                    let rust = info.trim().is_empty()
                        || info.split(',').all(|w| {
                            let w = w.trim();
                            matches!(
                                w,
                                "rust" | "compile_fail" | "no_run" | "ignore" | "should_panic"
                            ) || w.starts_with("edition")
                        });
                    if rust {
                        State::Rust(String::new())
                    } else {
                        State::Other
                    }
                }
                State::Rust(block) => {
                    out.push(block);
                    State::Outside
                }
                State::Other => State::Outside,
            };
            continue;
        }
        if let State::Rust(block) = &mut state {
            let line = if t == "#" {
                ""
            } else if let Some(rest) = l.trim_start().strip_prefix("# ") {
                rest
            } else {
                l
            };
            block.push_str(line);
            block.push('\n');
        }
    }
    out
}

/// Kernels in Rust source text: `#[tile_kernel]` functions at any depth, including those
/// written inside `macro_rules!` templates (expanded for each invocation in the file).
pub fn kernels_in_source(src: &str, out: &mut Vec<(String, Kernel)>) {
    let Ok(file) = syn::parse_file(src) else {
        return;
    };
    let mut v = Finder {
        out,
        macros: HashMap::new(),
    };
    // Two passes: macro definitions first, so invocations above a definition are expanded too.
    for item in &file.items {
        if let syn::Item::Macro(m) = item {
            v.define(m);
        }
    }
    v.visit_file(&file);
}

struct Finder<'o> {
    out: &'o mut Vec<(String, Kernel)>,
    /// `macro_rules!` name -> (matcher, transcriber) of its first rule.
    macros: HashMap<String, (Vec<Tok>, Vec<Tok>)>,
}

impl Finder<'_> {
    fn define(&mut self, m: &syn::ItemMacro) {
        if !m.mac.path.is_ident("macro_rules") {
            return;
        }
        let Some(name) = &m.ident else { return };
        let rules = tok::from_stream(m.mac.tokens.clone());
        // `(matcher) => { transcriber }` (only the first rule).
        if let [Tok::Group(_, matcher), Tok::Punct('=', true), Tok::Punct('>', false), Tok::Group(_, body), ..] =
            rules.as_slice()
        {
            self.macros
                .insert(name.to_string(), (matcher.clone(), body.clone()));
        }
    }

    fn invoke(&mut self, path: &syn::Path, tokens: &proc_macro2::TokenStream) {
        let Some(name) = path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        let Some((matcher, body)) = self.macros.get(&name).cloned() else {
            return;
        };
        let input = tok::from_stream(tokens.clone());
        let Some(bindings) = match_rule(&matcher, &input) else {
            return;
        };
        let expanded = substitute(&body, &bindings);
        let Ok(file) = syn::parse_str::<syn::File>(&tok::print(&expanded)) else {
            return;
        };
        self.visit_file(&file);
    }
}

impl<'ast> Visit<'ast> for Finder<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if let Some(k) = seed_kernel(f) {
            self.out.push((f.sig.ident.to_string(), k));
        }
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        if m.mac.path.is_ident("macro_rules") {
            self.define(m);
        } else {
            self.invoke(&m.mac.path, &m.mac.tokens);
        }
    }
    fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
        self.invoke(&m.mac.path, &m.mac.tokens);
    }
}

/// A `#[tile_kernel(..)]` function as a seed: the attribute's arguments, and the function with
/// that attribute and its doc comments removed.
fn seed_kernel(f: &syn::ItemFn) -> Option<Kernel> {
    let at = f.attrs.iter().position(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "tile_kernel")
    })?;
    let attr = match &f.attrs[at].meta {
        syn::Meta::List(l) => tok::from_stream(l.tokens.clone()),
        _ => Vec::new(),
    };
    let mut item = f.clone();
    item.attrs.retain(|a| {
        let tile_kernel = a
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "tile_kernel");
        !(a.path().is_ident("doc") || tile_kernel)
    });
    Some(Kernel {
        attr,
        item: tok::from_tokens(&item),
    })
}

/// Match a single `macro_rules!` matcher without repetitions: `$x:frag` binds one token tree
/// (`ident`, `literal`, `tt`, ...) or, for `expr`/`ty`, the tokens up to the next literal token
/// of the matcher; other tokens must be equal.
fn match_rule(matcher: &[Tok], input: &[Tok]) -> Option<HashMap<String, Vec<Tok>>> {
    let mut b = HashMap::new();
    let (mut i, mut j) = (0, 0);
    while i < matcher.len() {
        match (
            &matcher[i],
            matcher.get(i + 1),
            matcher.get(i + 2),
            matcher.get(i + 3),
        ) {
            (
                Tok::Punct('$', _),
                Some(Tok::Ident(name)),
                Some(Tok::Punct(':', _)),
                Some(Tok::Ident(frag)),
            ) => {
                let stop = matcher.get(i + 4);
                let mut taken = Vec::new();
                if matches!(frag.as_str(), "expr" | "ty" | "path") {
                    while j < input.len() && Some(&input[j]) != stop {
                        taken.push(input[j].clone());
                        j += 1;
                    }
                } else {
                    taken.push(input.get(j)?.clone());
                    j += 1;
                }
                b.insert(name.clone(), taken);
                i += 4;
            }
            (t, ..) => {
                if !same(input.get(j)?, t) {
                    return None;
                }
                i += 1;
                j += 1;
            }
        }
    }
    // A trailing comma in the invocation is allowed.
    if input[j..].iter().all(|t| *t == Tok::Punct(',', false)) {
        Some(b)
    } else {
        None
    }
}

/// Token equality ignoring spacing.
fn same(a: &Tok, b: &Tok) -> bool {
    match (a, b) {
        (Tok::Punct(x, _), Tok::Punct(y, _)) => x == y,
        _ => a == b,
    }
}

fn substitute(body: &[Tok], b: &HashMap<String, Vec<Tok>>) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        match (&body[i], body.get(i + 1)) {
            (Tok::Punct('$', _), Some(Tok::Ident(name))) if b.contains_key(name) => {
                out.extend(b[name].iter().cloned());
                i += 2;
                continue;
            }
            (Tok::Group(d, inner), _) => out.push(Tok::Group(*d, substitute(inner, b))),
            (t, _) => out.push(t.clone()),
        }
        i += 1;
    }
    out
}
