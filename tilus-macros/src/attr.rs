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
