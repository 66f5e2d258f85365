//! The language reference states facts that the compiler's tables decide; these tests keep the
//! two equal, so that a row added to `tilus_core::table::RMW_ROWS` fails here until the docs
//! say it too.

use tilus_core::dtype::DType;
use tilus_core::ir::{RmwOp, Target};
use tilus_core::table::{self, RmwHow};

const TYPES_PAGE: &str = include_str!("types.rs");
const INDEXED_PAGE: &str = include_str!("indexed.rs");
const ATOMIC_PAGE: &str = include_str!("atomic.rs");

/// The cell of (op, dtype) in the table of the types page.
fn cell(op: RmwOp, d: DType) -> &'static str {
    match table::rmw_row(op, d) {
        None => "·",
        Some(r) if r.how == RmwHow::FloatMinMax => "bits",
        Some(r) if r.how == RmwHow::CasLoop => "loop",
        Some(r) if r.min_target > Target::DEFAULT => {
            assert_eq!(r.min_target.0, 90, "a new target needs a new cell");
            "sm_90"
        }
        Some(_) => "✓",
    }
}

fn expected_table() -> String {
    let mut s = String::from("| type |");
    for op in RmwOp::ALL {
        s += &format!(" {} |", op.name());
    }
    s += "\n|---|";
    s += &":-:|".repeat(RmwOp::ALL.len());
    s += "\n";
    for d in DType::ALL {
        s += &format!("| `{}` |", d.name());
        for op in RmwOp::ALL {
            s += &format!(" {} |", cell(op, d));
        }
        s += "\n";
    }
    s
}

/// The lines between the markers, without their `//! ` prefix.
fn marked_table(page: &str) -> String {
    let lines: Vec<&str> = page
        .lines()
        .map(|l| l.trim_start_matches("//!").trim())
        .collect();
    let begin = lines
        .iter()
        .position(|l| *l == "<!-- atomics-table:begin -->")
        .expect("begin marker");
    let end = lines
        .iter()
        .position(|l| *l == "<!-- atomics-table:end -->")
        .expect("end marker");
    lines[begin + 1..end]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn types_page_atomics_table_is_the_legality_table() {
    let want = expected_table();
    let got = marked_table(TYPES_PAGE);
    assert_eq!(
        got, want,
        "src/lang/types.rs: the atomics table differs from tilus_core::table::RMW_ROWS; \
         the table should read:\n{want}"
    );
}

#[test]
fn only_order_insensitive_ops_have_scatter_forms() {
    // The types page and the atomic page say: scatter forms for add, sub, min, max only.
    for r in table::RMW_ROWS {
        let order_insensitive = matches!(r.op, RmwOp::Add | RmwOp::Sub | RmwOp::Min | RmwOp::Max);
        assert_eq!(r.scatter, order_insensitive, "{:?} {:?}", r.op, r.dtype);
    }
}

/// For each documented function of `page`, the op it performs and the dtypes its
/// `**Element types:**` line names.
fn element_type_lines(
    page: &str,
    op_of: impl Fn(&str) -> Option<RmwOp>,
) -> Vec<(String, RmwOp, Vec<DType>, String)> {
    let mut out = Vec::new();
    let mut types_line: Option<String> = None;
    for line in page.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("/// **Element types:**") {
            types_line = Some(rest.to_string());
        } else if let Some(sig) = l.strip_prefix("pub fn ") {
            let name: String = sig
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if let Some(op) = op_of(&name) {
                let text = types_line
                    .clone()
                    .unwrap_or_else(|| panic!("`{name}` has no element types line"));
                let named: Vec<DType> = DType::ALL
                    .into_iter()
                    .filter(|d| text.contains(&format!("`{}`", d.name())))
                    .collect();
                out.push((name, op, named, text));
            }
            types_line = None;
        }
    }
    out
}

fn check_page(
    page: &str,
    file: &str,
    count: usize,
    op_of: impl Fn(&str) -> Option<RmwOp>,
    scatter_of: impl Fn(&str) -> bool,
) {
    let items = element_type_lines(page, op_of);
    assert_eq!(items.len(), count, "{file}: expected {count} atomic items");
    for (name, op, named, text) in items {
        let want: Vec<DType> = table::RMW_ROWS
            .iter()
            .filter(|r| r.op == op && (!scatter_of(&name) || r.scatter))
            .map(|r| r.dtype)
            .collect();
        let mut want_sorted = want.clone();
        want_sorted.sort_by_key(|d| *d as usize);
        assert_eq!(
            named, want_sorted,
            "{file}: `{name}` lists the wrong element types: {text}"
        );
        let newer = want
            .iter()
            .any(|d| table::rmw_row(op, *d).unwrap().min_target > Target::DEFAULT);
        assert_eq!(
            newer,
            text.contains("sm_90"),
            "{file}: `{name}` must name sm_90 exactly when a type needs it: {text}"
        );
    }
}

fn op_named(n: &str) -> Option<RmwOp> {
    let n = if n == "xchg" { "exch" } else { n };
    RmwOp::ALL.into_iter().find(|o| o.name() == n)
}

#[test]
fn indexed_items_list_the_legal_element_types() {
    check_page(
        INDEXED_PAGE,
        "src/lang/indexed.rs",
        RmwOp::ALL.len(),
        |name| name.strip_prefix("atomic_").and_then(op_named),
        |_| false,
    );
}

#[test]
fn atomic_items_list_the_legal_element_types() {
    check_page(
        ATOMIC_PAGE,
        "src/lang/atomic.rs",
        // Element-wise: every op on both spaces; scatter: the order-insensitive four.
        2 * RmwOp::ALL.len() + 2 * 4,
        |name| {
            let rest = name
                .strip_prefix("shared_")
                .or_else(|| name.strip_prefix("global_"))?;
            op_named(rest.strip_prefix("scatter_").unwrap_or(rest))
        },
        |name| name.contains("_scatter_"),
    );
}

#[test]
fn pair_items_list_the_pair_types() {
    let items = element_type_lines(ATOMIC_PAGE, |name| {
        let rest = name
            .strip_prefix("shared_")
            .or_else(|| name.strip_prefix("global_"))?;
        op_named(rest.strip_suffix("128")?)
    });
    assert_eq!(items.len(), 4, "src/lang/atomic.rs: the four 128-bit items");
    let indexed = element_type_lines(INDEXED_PAGE, |name| {
        op_named(name.strip_prefix("atomic_")?.strip_suffix("128")?)
    });
    assert_eq!(
        indexed.len(),
        2,
        "src/lang/indexed.rs: the two 128-bit items"
    );
    for (name, op, named, text) in items.into_iter().chain(indexed) {
        let want: Vec<DType> = table::RMW_ROWS
            .iter()
            .filter(|r| r.op == op && r.pairs)
            .map(|r| r.dtype)
            .collect();
        assert_eq!(
            named, want,
            "`{name}` lists the wrong element types: {text}"
        );
    }
}
