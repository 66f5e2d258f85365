//! `#[tile_kernel(threads = 256, target = 90)]` arguments.

use darling::FromMeta;
use proc_macro2::{Span, TokenStream};

#[derive(Debug, FromMeta)]
pub struct KernelAttr {
    /// Threads per block (default 128).
    #[darling(default)]
    pub threads: Option<darling::util::SpannedValue<u32>>,
    /// PTX target as a compute capability (`70`, `80`, `90`) or `"sm_90"`.
    #[darling(default)]
    pub target: Option<darling::util::SpannedValue<TargetArg>>,
    /// Blocks per thread-block cluster: `cluster = 4` or `cluster = [2, 2, 1]` (sm_90).
    #[darling(default)]
    pub cluster: Option<darling::util::SpannedValue<ClusterArg>>,
    /// Blocks that should fit on one SM at once (CUDA's `__launch_bounds__` minimum): a
    /// register budget for the PTX assembler.
    #[darling(default)]
    pub min_blocks_per_sm: Option<darling::util::SpannedValue<u32>>,
    /// The longest run of consecutive elements a thread holds of a tile (1, 2, 4, 8 or 16).
    #[darling(default)]
    pub vector_width: Option<darling::util::SpannedValue<u32>>,
}

/// A cluster shape: a block count along x, or `[x, y, z]`.
#[derive(Debug, Clone, Copy)]
pub struct ClusterArg(pub [u32; 3]);

impl FromMeta for ClusterArg {
    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Int(i) => Ok(ClusterArg([
                i.base10_parse().map_err(darling::Error::from)?,
                1,
                1,
            ])),
            _ => Err(darling::Error::unexpected_lit_type(value)),
        }
    }
    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        match expr {
            syn::Expr::Lit(l) => Self::from_value(&l.lit),
            // A value passed in by `macro_rules!` (`cluster = $c`) arrives in an invisible group.
            syn::Expr::Group(g) => Self::from_expr(&g.expr),
            syn::Expr::Array(a) if (1..=3).contains(&a.elems.len()) => {
                let mut dims = [1u32; 3];
                for (k, e) in a.elems.iter().enumerate() {
                    match e {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(i),
                            ..
                        }) => dims[k] = i.base10_parse().map_err(darling::Error::from)?,
                        other => {
                            return Err(
                                darling::Error::custom("expected an integer").with_span(other)
                            )
                        }
                    }
                }
                Ok(ClusterArg(dims))
            }
            other => Err(
                darling::Error::custom("expected a cluster size like `4` or `[2, 2, 1]`")
                    .with_span(other),
            ),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct TargetArg(pub u32);

impl FromMeta for TargetArg {
    fn from_value(value: &syn::Lit) -> darling::Result<Self> {
        match value {
            syn::Lit::Int(i) => Ok(TargetArg(i.base10_parse().map_err(darling::Error::from)?)),
            syn::Lit::Str(s) => {
                let v = s.value();
                v.strip_prefix("sm_")
                    .and_then(|n| n.parse().ok())
                    .map(TargetArg)
                    .ok_or_else(|| {
                        darling::Error::custom("expected a target like \"sm_90\" or 90")
                            .with_span(s)
                    })
            }
            _ => Err(darling::Error::unexpected_lit_type(value)),
        }
    }
}

/// The options `#[tile_kernel(..)]` takes, as written.
const OPTIONS: &[&str] = &[
    "threads",
    "target",
    "cluster",
    "min_blocks_per_sm",
    "vector_width",
];

pub fn parse(attr: TokenStream) -> darling::Result<(KernelAttr, Span)> {
    let span = Span::call_site();
    let items = darling::ast::NestedMeta::parse_meta_list(attr)?;
    unknown_options(&items)?;
    Ok((KernelAttr::from_list(&items)?, span))
}

/// An unknown option, in the words and layout of the compiler's own errors (darling's "Unknown
/// field" has another style), with a close name as help or else the list of options.
fn unknown_options(items: &[darling::ast::NestedMeta]) -> darling::Result<()> {
    let mut errors = darling::Error::accumulator();
    for item in items {
        let darling::ast::NestedMeta::Meta(m) = item else {
            continue;
        };
        let name = m
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_else(|| quote::ToTokens::to_token_stream(m.path()).to_string());
        if OPTIONS.contains(&name.as_str()) {
            continue;
        }
        let line = match tilus_core::lower::suggest::similar(
            "an option",
            &name,
            OPTIONS.iter().copied(),
        ) {
            Some(h) => format!("help: {h}"),
            None => format!("note: the options are {}", list(OPTIONS)),
        };
        errors.push(
            darling::Error::custom(format!(
                "unknown `#[tile_kernel]` option `{name}`\n= {line}"
            ))
            .with_span(m.path()),
        );
    }
    errors.finish()
}

fn list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    q.join(", ")
}
