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

pub fn parse(attr: TokenStream) -> darling::Result<(KernelAttr, Span)> {
    let span = Span::call_site();
    let items = darling::ast::NestedMeta::parse_meta_list(attr)?;
    Ok((KernelAttr::from_list(&items)?, span))
}
