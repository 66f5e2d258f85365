//! Checks of the PTX text of an accepted combination against the oracle: which instruction
//! (`atom` or `red`), its qualifiers in PTX's order (`{sem}.{scope}.{space}.{op}{.noftz}.{type}`),
//! the type suffix, and the declared target.

use super::model::{is_rmw, Combo};
use super::oracle::{access_types, expect_red, lowering, scope_of, sem_of, Lowering};

const ORDERS: [&str; 4] = ["relaxed", "acquire", "release", "acq_rel"];

/// The first token of every instruction line (after an optional `@%p` / `@!%p` guard).
fn instrs(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter_map(|l| {
        let mut t = l.trim();
        if t.starts_with('@') {
            t = t.split_once(char::is_whitespace)?.1.trim();
        }
        t.split_whitespace().next()
    })
}

/// `atom.*` / `red.*` instructions.
pub fn rmw_instrs(ptx: &str) -> Vec<&str> {
    instrs(ptx)
        .filter(|i| i.starts_with("atom.") || i.starts_with("red."))
        .collect()
}

/// `ld`/`st` with a memory order (`ld.acquire.gpu.global.u32`); plain accesses are not listed.
pub fn ordered_accesses(ptx: &str) -> Vec<&str> {
    instrs(ptx)
        .filter(|i| {
            let mut parts = i.split('.');
            matches!(parts.next(), Some("ld" | "st"))
                && parts.next().is_some_and(|q| ORDERS.contains(&q))
        })
        .collect()
}

pub fn check(c: &Combo, ptx: &str, target: u32) -> Result<(), String> {
    if !ptx.contains(&format!(".target sm_{target}")) {
        return Err(format!("PTX does not declare `.target sm_{target}`"));
    }
    let (sem, scope, space) = (sem_of(c), scope_of(c), c.space.name());
    let rmw = rmw_instrs(ptx);
    let ordered = ordered_accesses(ptx);
    if !is_rmw(c.op) {
        if !rmw.is_empty() {
            return Err(format!("an atomic {} printed RMWs: {rmw:?}", c.op));
        }
        let (mnemonic, may_vanish) = if c.op == "load" {
            // An unused relaxed load has no effect and may be removed; an acquire one orders
            // the block's later accesses and must stay.
            ("ld", !c.used && sem == "relaxed")
        } else {
            ("st", false)
        };
        // An acquire load of global memory is relaxed loads and a `fence.acq_rel` of its
        // scope after them (the acquire pattern; ptx/access/mod.rs `acquire_by_fence`).
        let by_fence = c.op == "load" && sem == "acquire" && space == "global";
        let sem = if by_fence { "relaxed" } else { sem };
        if by_fence && !ptx.contains(&format!("fence.acq_rel.{scope};")) {
            return Err(format!(
                "an acquire load of global memory without `fence.acq_rel.{scope}`"
            ));
        }
        if ordered.is_empty() && !may_vanish {
            return Err(format!("no `{mnemonic}.{sem}.{scope}` in the PTX"));
        }
        let prefix = format!("{mnemonic}.{sem}.{scope}.{space}.");
        for i in &ordered {
            let ok = i
                .strip_prefix(&prefix)
                .is_some_and(|ty| access_types(c.dtype).contains(&ty));
            if !ok {
                return Err(format!(
                    "expected every ordered access to be `{prefix}{{{}}}`, found `{i}` (all: {ordered:?})",
                    access_types(c.dtype).join("|")
                ));
            }
        }
        return Ok(());
    }
    if !ordered.is_empty() {
        return Err(format!("an RMW printed ordered loads/stores: {ordered:?}"));
    }
    if rmw.is_empty() {
        return Err("no atom./red. instruction in the PTX".into());
    }
    let red = expect_red(c);
    let prefix = format!(
        "{}.{sem}.{scope}.{space}.",
        if red { "red" } else { "atom" }
    );
    let allowed: Vec<String> = match lowering(c.op, c.dtype).expect("accepted") {
        Lowering::Direct { ptx_op, types } => {
            types.iter().map(|t| format!("{ptx_op}.{t}")).collect()
        }
        Lowering::FloatOrder { pos, neg } => vec![pos.to_string(), neg.to_string()],
        Lowering::CasLoop => vec!["cas.b16".to_string()],
    };
    for i in &rmw {
        let ok = i
            .strip_prefix(&prefix)
            .is_some_and(|rest| allowed.iter().any(|a| a == rest));
        if !ok {
            return Err(format!(
                "expected every RMW to be `{prefix}{{{}}}`, found `{i}` (all: {rmw:?})",
                allowed.join("|")
            ));
        }
    }
    if let Lowering::FloatOrder { pos, neg } = lowering(c.op, c.dtype).expect("accepted") {
        // Both halves of the integer-order lowering must be there (one per operand sign).
        for half in [pos, neg] {
            if !rmw.iter().any(|i| i.ends_with(half)) {
                return Err(format!(
                    "float {} must use both `{pos}` and `{neg}`, missing `{half}` (all: {rmw:?})",
                    c.op
                ));
            }
        }
    }
    Ok(())
}
