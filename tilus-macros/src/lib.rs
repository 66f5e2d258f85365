use proc_macro::TokenStream; #[proc_macro_attribute] pub fn tile_kernel(_a: TokenStream, i: TokenStream) -> TokenStream { i }
