//! A kernel as plain token trees (easy to mutate, print and reduce), and the token-level
//! mutations.

use super::rng::Rng;
use super::vocab;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Delim {
    Paren,
    Bracket,
    Brace,
    /// An invisible group (from `quote` of a syn node): printed as its contents.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tok {
    Group(Delim, Vec<Tok>),
    Ident(String),
    /// A punctuation character; `true` when it is joined to the next one (`<<=`, `::`).
    Punct(char, bool),
    Lit(String),
}

/// One fuzz input: the attribute's arguments and the `fn` item (without the attribute).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Kernel {
    pub attr: Vec<Tok>,
    pub item: Vec<Tok>,
}

impl Kernel {
    /// The kernel as Rust source, as a user would write it (one line per statement).
    pub fn source(&self) -> String {
        format!(
            "#[tile_kernel({})]\n{}",
            print(&self.attr),
            pretty(&self.item)
        )
    }

    pub fn attr_tokens(&self) -> Result<TokenStream, String> {
        TokenStream::from_str(&print(&self.attr)).map_err(|e| e.to_string())
    }

    pub fn item_tokens(&self) -> Result<TokenStream, String> {
        TokenStream::from_str(&print(&self.item)).map_err(|e| e.to_string())
    }

    /// Token trees in all, at every depth (a measure of size for the reducer).
    pub fn size(&self) -> usize {
        count(&self.attr) + count(&self.item)
    }
}

pub fn count(ts: &[Tok]) -> usize {
    ts.iter()
        .map(|t| match t {
            Tok::Group(_, inner) => 1 + count(inner),
            _ => 1,
        })
        .sum()
}

pub fn from_stream(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let d = match g.delimiter() {
                    Delimiter::Parenthesis => Delim::Paren,
                    Delimiter::Bracket => Delim::Bracket,
                    Delimiter::Brace => Delim::Brace,
                    Delimiter::None => Delim::None,
                };
                Tok::Group(d, from_stream(g.stream()))
            }
            TokenTree::Ident(i) => Tok::Ident(i.to_string()),
            TokenTree::Punct(p) => Tok::Punct(p.as_char(), p.spacing() == Spacing::Joint),
            TokenTree::Literal(l) => Tok::Lit(l.to_string()),
        })
        .collect()
}

pub fn from_tokens(t: &dyn quote::ToTokens) -> Vec<Tok> {
    from_stream(t.to_token_stream())
}

/// Tokens separated by spaces (never joining what the lexer would read as a comment).
pub fn print(ts: &[Tok]) -> String {
    let mut s = String::new();
    print_into(ts, &mut s);
    s
}

fn print_into(ts: &[Tok], s: &mut String) {
    for (i, t) in ts.iter().enumerate() {
        match t {
            Tok::Group(d, inner) => {
                let (o, c) = delims(*d);
                s.push_str(o);
                print_into(inner, s);
                s.push_str(c);
            }
            Tok::Ident(x) | Tok::Lit(x) => s.push_str(x),
            Tok::Punct(c, _) => {
                s.push(*c);
                if glued(ts, i) {
                    continue;
                }
            }
        }
        if i + 1 < ts.len() {
            s.push(' ');
        }
    }
}

/// Whether punct `ts[i]` is printed joined to the next token: a joined punct before another
/// (`<<=`, `::`) or a lifetime's quote, but never what the lexer would read as a comment.
fn glued(ts: &[Tok], i: usize) -> bool {
    let Tok::Punct(c, true) = ts[i] else {
        return false;
    };
    match ts.get(i + 1) {
        Some(Tok::Punct(n, _)) => !(c == '/' && (*n == '/' || *n == '*')),
        Some(Tok::Ident(_)) => c == '\'',
        _ => false,
    }
}

fn delims(d: Delim) -> (&'static str, &'static str) {
    match d {
        Delim::Paren => ("(", ")"),
        Delim::Bracket => ("[", "]"),
        Delim::Brace => ("{ ", " }"),
        Delim::None => ("", ""),
    }
}

/// Like [`print`], with a line per statement and indented blocks (for reports).
pub fn pretty(ts: &[Tok]) -> String {
    let mut s = String::new();
    pretty_into(ts, 0, &mut s);
    s
}

fn pretty_into(ts: &[Tok], depth: usize, s: &mut String) {
    let indent = |s: &mut String, d: usize| {
        for _ in 0..d {
            s.push_str("    ");
        }
    };
    for (i, t) in ts.iter().enumerate() {
        match t {
            Tok::Group(Delim::Brace, inner) if inner.is_empty() => s.push_str("{}"),
            Tok::Group(Delim::Brace, inner) => {
                s.push_str("{\n");
                indent(s, depth + 1);
                pretty_into(inner, depth + 1, s);
                while s.ends_with(' ') {
                    s.pop();
                }
                s.push('\n');
                indent(s, depth);
                s.push('}');
                if i + 1 < ts.len() && !matches!(ts.get(i + 1), Some(Tok::Punct(..))) {
                    s.push('\n');
                    indent(s, depth);
                    continue;
                }
            }
            Tok::Group(d, inner) => {
                let (o, c) = delims(*d);
                s.push_str(o);
                s.push_str(&print(inner));
                s.push_str(c);
            }
            Tok::Punct(';', _) if i + 1 < ts.len() => {
                s.push_str(";\n");
                indent(s, depth);
                continue;
            }
            other => {
                s.push_str(&print(std::slice::from_ref(other)));
                if glued(ts, i) {
                    continue;
                }
            }
        }
        if i + 1 < ts.len() {
            s.push(' ');
        }
    }
}

/// Where a token tree is: the indices of the groups leading to its list, and its index there.
pub type Pos = (Vec<usize>, usize);

pub fn positions(ts: &[Tok]) -> Vec<Pos> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    collect_positions(ts, &mut path, &mut out);
    out
}

fn collect_positions(ts: &[Tok], path: &mut Vec<usize>, out: &mut Vec<Pos>) {
    for (i, t) in ts.iter().enumerate() {
        out.push((path.clone(), i));
        if let Tok::Group(_, inner) = t {
            path.push(i);
            collect_positions(inner, path, out);
            path.pop();
        }
    }
}

pub fn list_mut<'a>(ts: &'a mut Vec<Tok>, path: &[usize]) -> &'a mut Vec<Tok> {
    let mut cur = ts;
    for &i in path {
        cur = match &mut cur[i] {
            Tok::Group(_, inner) => inner,
            _ => unreachable!("a path leads through groups"),
        };
    }
    cur
}

pub fn list_ref<'a>(ts: &'a [Tok], path: &[usize]) -> &'a [Tok] {
    let mut cur = ts;
    for &i in path {
        cur = match &cur[i] {
            Tok::Group(_, inner) => inner,
            _ => unreachable!("a path leads through groups"),
        };
    }
    cur
}

/// Every identifier in `ts`, at any depth.
pub fn idents(ts: &[Tok], out: &mut Vec<String>) {
    for t in ts {
        match t {
            Tok::Ident(x) => out.push(x.clone()),
            Tok::Group(_, inner) => idents(inner, out),
            _ => {}
        }
    }
}

/// Replace every identifier `from` by `to`, at any depth.
pub fn rename(ts: &mut [Tok], from: &str, to: &str) {
    for t in ts {
        match t {
            Tok::Ident(x) if x == from => *x = to.to_string(),
            Tok::Group(_, inner) => rename(inner, from, to),
            _ => {}
        }
    }
}

/// Tokens of an operator or a literal written as text (`<<=`, `-1`, `1 << 20`).
pub fn lex(s: &str) -> Vec<Tok> {
    from_stream(TokenStream::from_str(s).expect("the fuzzer's own token text lexes"))
}

// ---------------------------------------------------------------------------------------------
// Token-level mutations.

pub const TOKEN_MUTATIONS: &[(&str, u32)] = &[
    ("tok-delete", 3),
    ("tok-duplicate", 3),
    ("tok-swap", 3),
    ("tok-ident", 8),
    ("tok-literal", 8),
    ("tok-operator", 5),
    ("tok-splice", 3),
    ("tok-delimiter", 1),
    ("attr", 3),
];

/// Apply token mutation `which` (an index into [`TOKEN_MUTATIONS`]) to `k`, with `donor` a
/// kernel to take tokens from. Returns false when it found nothing to mutate.
pub fn mutate(k: &mut Kernel, which: usize, donor: &Kernel, rng: &mut Rng) -> bool {
    let pos = positions(&k.item);
    if pos.is_empty() {
        return false;
    }
    match TOKEN_MUTATIONS[which].0 {
        "tok-delete" => {
            let (path, i) = rng.pick(&pos).clone();
            let list = list_mut(&mut k.item, &path);
            let n = 1 + rng.below(3).min(list.len() - i - 1);
            list.drain(i..i + n);
            true
        }
        "tok-duplicate" => {
            let (path, i) = rng.pick(&pos).clone();
            let list = list_mut(&mut k.item, &path);
            let n = 1 + rng.below(6).min(list.len() - i - 1);
            let run: Vec<Tok> = list[i..i + n].to_vec();
            let at = rng.below(list.len() + 1);
            list.splice(at..at, run);
            true
        }
        "tok-swap" => {
            let (path, i) = rng.pick(&pos).clone();
            let list = list_mut(&mut k.item, &path);
            let j = rng.below(list.len());
            list.swap(i, j);
            true
        }
        "tok-ident" => {
            let ids: Vec<Pos> = pos
                .iter()
                .filter(|(p, i)| matches!(list_ref(&k.item, p)[*i], Tok::Ident(_)))
                .cloned()
                .collect();
            if ids.is_empty() {
                return false;
            }
            let mut own = Vec::new();
            idents(&k.item, &mut own);
            let word = vocab::ident(rng, &own);
            let (path, i) = rng.pick(&ids).clone();
            list_mut(&mut k.item, &path)[i] = Tok::Ident(word);
            true
        }
        "tok-literal" => {
            let lits: Vec<Pos> = pos
                .iter()
                .filter(|(p, i)| matches!(list_ref(&k.item, p)[*i], Tok::Lit(_)))
                .cloned()
                .collect();
            let (path, i) = match lits.is_empty() {
                false => rng.pick(&lits).clone(),
                true => rng.pick(&pos).clone(),
            };
            let new = lex(vocab::literal(rng));
            list_mut(&mut k.item, &path).splice(i..i + 1, new);
            true
        }
        "tok-operator" => {
            // The first punct of each run of joined puncts.
            let ops: Vec<Pos> = pos
                .iter()
                .filter(|(p, i)| {
                    let l = list_ref(&k.item, p);
                    matches!(l[*i], Tok::Punct(c, _) if c != ';' && c != ',' && c != '#')
                        && !(*i > 0 && matches!(l[*i - 1], Tok::Punct(_, true)))
                })
                .cloned()
                .collect();
            if ops.is_empty() {
                return false;
            }
            let (path, i) = rng.pick(&ops).clone();
            let list = list_mut(&mut k.item, &path);
            let mut end = i;
            while end + 1 < list.len() && matches!(list[end], Tok::Punct(_, true)) {
                end += 1;
            }
            let op = rng.word(vocab::OPERATORS);
            let new = lex(op);
            list.splice(i..end + 1, new);
            true
        }
        "tok-splice" => {
            let dpos = positions(&donor.item);
            let (dpath, di) = rng.pick(&dpos).clone();
            let dlist = list_ref(&donor.item, &dpath);
            let n = 1 + rng.below(8).min(dlist.len() - di - 1);
            let run = dlist[di..di + n].to_vec();
            let (path, i) = rng.pick(&pos).clone();
            list_mut(&mut k.item, &path).splice(i..i, run);
            true
        }
        "tok-delimiter" => {
            let groups: Vec<Pos> = pos
                .iter()
                .filter(|(p, i)| matches!(list_ref(&k.item, p)[*i], Tok::Group(..)))
                .cloned()
                .collect();
            if groups.is_empty() {
                return false;
            }
            let (path, i) = rng.pick(&groups).clone();
            if let Tok::Group(d, _) = &mut list_mut(&mut k.item, &path)[i] {
                *d = *rng.pick(&[Delim::Paren, Delim::Bracket, Delim::Brace]);
            }
            true
        }
        "attr" => {
            mutate_attr(&mut k.attr, rng);
            true
        }
        other => unreachable!("unknown token mutation {other}"),
    }
}

/// Change, add or drop `threads = ..` / `target = ..`, or add junk.
fn mutate_attr(attr: &mut Vec<Tok>, rng: &mut Rng) {
    // Split into `key = value` entries at top-level commas.
    let mut entries: Vec<Vec<Tok>> = vec![Vec::new()];
    for t in attr.drain(..) {
        if t == Tok::Punct(',', false) {
            entries.push(Vec::new());
        } else {
            entries.last_mut().expect("one").push(t);
        }
    }
    entries.retain(|e| !e.is_empty());
    let key_of = |e: &Vec<Tok>| match e.first() {
        Some(Tok::Ident(x)) => x.clone(),
        _ => String::new(),
    };
    match rng.below(5) {
        0 | 1 => {
            let key = if rng.chance(1, 2) {
                "threads"
            } else {
                "target"
            };
            let value = if key == "threads" {
                *rng.pick(vocab::THREADS)
            } else {
                *rng.pick(vocab::TARGETS)
            };
            let entry = lex(&format!("{key} = {value}"));
            match entries.iter().position(|e| key_of(e) == key) {
                Some(at) => entries[at] = entry,
                None => entries.push(entry),
            }
        }
        2 => {
            if !entries.is_empty() {
                let at = rng.below(entries.len());
                entries.remove(at);
            }
        }
        3 => {
            if !entries.is_empty() {
                let at = rng.below(entries.len());
                let dup = entries[at].clone();
                entries.push(dup);
            }
        }
        _ => {
            let junk = *rng.pick(&[
                "threads",
                "threads = \"128\"",
                "threads = -32",
                "threads = 1.5",
                "target = \"sm_\"",
                "target = \"sm_90a\"",
                "target = sm_90",
                "blocks = 4",
                "threads(128)",
                "target = 9_0",
                "threads = 0x80",
                "threads = 128u32",
                "threads = 128i64",
                "cluster = [2, 1, 1]",
                "cluster = 2",
                "cluster = [0]",
            ]);
            entries.push(lex(junk));
        }
    }
    for (i, e) in entries.into_iter().enumerate() {
        if i > 0 {
            attr.push(Tok::Punct(',', false));
        }
        attr.extend(e);
    }
}
