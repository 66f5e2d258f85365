//! Every builtin and method the compiler knows has its page in `tilus::lang` (the rustdoc
//! reference), and every page there names something the compiler knows: the compiler's tables
//! (`tilus::core::lower::builtin_names`, `method_names`) against the pages' `pub fn` items.

use std::collections::BTreeSet;

/// The names of the `pub fn` items in `src`, at module level (`top`) or inside `impl` blocks.
fn items(src: &str, top: bool) -> BTreeSet<String> {
    let prefix = if top { "pub fn " } else { "    pub fn " };
    src.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_builtin_and_method_has_a_page_and_every_page_a_builtin() {
    let free_pages: BTreeSet<String> = [
        include_str!("../src/lang/builtins.rs"),
        include_str!("../src/lang/indexed.rs"),
    ]
    .iter()
    .flat_map(|s| items(s, true))
    .collect();
    let atomic_pages = items(include_str!("../src/lang/atomic.rs"), true);
    let method_pages = items(include_str!("../src/lang/values.rs"), false);

    let mut free = BTreeSet::new();
    let mut atomic = BTreeSet::new();
    for name in tilus::core::lower::builtin_names() {
        match name.split("::").collect::<Vec<_>>().as_slice() {
            ["atomic", op] => atomic.insert(op.to_string()),
            [_ty, "from_bits"] => free.insert("from_bits".to_string()),
            // `log` is `ln`'s other name, documented on `ln`'s page.
            ["log"] => true,
            [f] => free.insert(f.to_string()),
            other => panic!("unexpected builtin path {other:?}"),
        };
    }
    let methods: BTreeSet<String> = tilus::core::lower::method_names()
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        free, free_pages,
        "free functions (left: compiler, right: pages)"
    );
    assert_eq!(
        atomic, atomic_pages,
        "`atomic::` (left: compiler, right: pages)"
    );
    // Every method has a page; the pages may document `view` and the tensor methods there too.
    let missing: Vec<&String> = methods.difference(&method_pages).collect();
    assert!(missing.is_empty(), "methods without a page: {missing:?}");
    let unknown: Vec<&String> = method_pages.difference(&methods).collect();
    assert!(
        unknown.is_empty(),
        "method pages the compiler does not know: {unknown:?}"
    );
    assert!(include_str!("../src/lang/builtins.rs").contains("#[doc(alias = \"log\")]"));
}
