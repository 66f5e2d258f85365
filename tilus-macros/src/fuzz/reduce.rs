//! A delta-debugging reducer over token trees: remove statements and arguments (the pieces of
//! a list between `;` or `,`), then runs of token trees (halving the run length down to single
//! trees) at every depth, and replace groups by their contents, while the failure persists.

use super::tok::{self, Kernel, Tok};
use std::time::{Duration, Instant};

/// The smallest kernel found for which `fails` holds (`k` itself must fail). Stops at a fixed
/// point, after `max_tests` candidates, or after `budget`.
pub fn reduce(
    k: &Kernel,
    fails: &mut dyn FnMut(&Kernel) -> bool,
    max_tests: usize,
    budget: Duration,
) -> Kernel {
    let start = Instant::now();
    let mut best = k.clone();
    let mut tests = 0;
    let out_of_budget = |tests: &mut usize| {
        *tests += 1;
        *tests > max_tests || start.elapsed() > budget
    };
    loop {
        let mut progress = false;
        // The attribute: drop arguments, then single tokens.
        for r in segments(&best.attr)
            .into_iter()
            .rev()
            .chain((0..best.attr.len()).rev().map(|i| i..i + 1))
        {
            if r.end > best.attr.len() {
                continue;
            }
            if out_of_budget(&mut tests) {
                return best;
            }
            let mut c = best.clone();
            c.attr.drain(r);
            if fails(&c) {
                best = c;
                progress = true;
            }
        }
        // Statements and arguments, outermost first.
        let mut at = 0;
        loop {
            let pos = tok::positions(&best.item);
            let mut lists: Vec<Vec<usize>> = vec![Vec::new()];
            lists.extend(
                pos.iter()
                    .filter(|(p, i)| matches!(tok::list_ref(&best.item, p)[*i], Tok::Group(..)))
                    .map(|(p, i)| {
                        let mut q = p.clone();
                        q.push(*i);
                        q
                    }),
            );
            let Some(path) = lists.get(at).cloned() else {
                break;
            };
            let mut removed = false;
            let pieces = segments(tok::list_ref(&best.item, &path));
            for r in pieces.into_iter().rev() {
                if out_of_budget(&mut tests) {
                    return best;
                }
                let mut c = best.clone();
                tok::list_mut(&mut c.item, &path).drain(r);
                if fails(&c) {
                    best = c;
                    progress = true;
                    removed = true;
                }
            }
            if !removed {
                at += 1;
            }
        }
        for run in [16, 8, 4, 2, 1] {
            let mut at = 0;
            loop {
                let pos = tok::positions(&best.item);
                let Some((path, i)) = pos.get(at).cloned() else {
                    break;
                };
                let list_len = tok::list_ref(&best.item, &path).len();
                // Runs start at multiples of `run` within their list.
                if i % run != 0 || (run > 1 && list_len < run) {
                    at += 1;
                    continue;
                }
                if out_of_budget(&mut tests) {
                    return best;
                }
                let mut c = best.clone();
                let list = tok::list_mut(&mut c.item, &path);
                let n = run.min(list_len - i);
                list.drain(i..i + n);
                if fails(&c) {
                    best = c;
                    progress = true;
                } else {
                    at += 1;
                }
            }
        }
        // Groups replaced by their contents (`(a + b)` → `a + b`, `{ s }` → `s`).
        let mut at = 0;
        loop {
            let pos = tok::positions(&best.item);
            let Some((path, i)) = pos.get(at).cloned() else {
                break;
            };
            let mut c = best.clone();
            let list = tok::list_mut(&mut c.item, &path);
            let Tok::Group(_, inner) = list[i].clone() else {
                at += 1;
                continue;
            };
            if out_of_budget(&mut tests) {
                return best;
            }
            list.splice(i..i + 1, inner);
            if fails(&c) {
                best = c;
                progress = true;
            } else {
                at += 1;
            }
        }
        if !progress {
            return best;
        }
    }
}

/// The pieces of a list: up to and including each `;` or `,`, and after a `{ .. }` block that
/// ends a statement (`if c { .. } let x = ..`).
fn segments(ts: &[Tok]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, t) in ts.iter().enumerate() {
        let end = match t {
            Tok::Punct(';' | ',', _) => true,
            Tok::Group(tok::Delim::Brace, _) => match ts.get(i + 1) {
                Some(Tok::Ident(x)) => x != "else",
                _ => false,
            },
            _ => false,
        };
        if end {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < ts.len() {
        out.push(start..ts.len());
    }
    // A list of one piece is left to the other passes (removing it all is rarely useful).
    if out.len() < 2 {
        out.clear();
    }
    out
}
