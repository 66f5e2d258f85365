//! Code generation for `#[tile_kernel]`: the embedded kernel and its typed launcher, or, after
//! errors, the same items with a stub body so the rest of the crate still type-checks.

use crate::attr;
use crate::parse::Parser;
use crate::timing::Stages;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use tilus_core::ast;
use tilus_core::ir::{DType, ParamKind};

/// The expansion, and the kernel's name (for `TILUS_MACRO_TIMES`, [`crate::timing`]).
pub fn tile_kernel(
    attr_tokens: TokenStream,
    item: TokenStream,
    stages: &mut Option<Stages>,
) -> (String, TokenStream) {
    let func: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return ("(unparsed)".into(), e.to_compile_error()),
    };
    Stages::mark(stages, "parse");
    let name = func.sig.ident.to_string();
    let (p, def) = match front(attr_tokens, &func) {
        Front::Def(p, def) => (p, def),
        Front::Errors(errors) => return (name, emit(&func, None, errors)),
    };
    Stages::mark(stages, "front");
    let compiled = compile_caught(&def);
    Stages::mark(stages, "compile");
    let out = expand_compiled(&func, p, &def, compiled);
    Stages::mark(stages, "emit");
    (name, out)
}

/// The items of a compiled kernel, or its errors and the stub.
fn expand_compiled(
    func: &syn::ItemFn,
    p: Parser,
    def: &ast::KernelDef,
    compiled: Result<tilus_core::Compiled, Vec<tilus_core::diag::Diagnostic>>,
) -> TokenStream {
    match compiled {
        Ok(compiled) => {
            dump_ptx(&def.name, &compiled.ptx);
            for (target, ptx) in &compiled.variants {
                dump_ptx(&format!("{}.sm_{target}", def.name), ptx);
            }
            emit(func, Some(&compiled), Vec::new())
        }
        Err(diags) => {
            // With rustc's unstable diagnostics (nightly, `--cfg tilus_nightly_diagnostics`) the
            // errors are emitted directly, and the stub carries no `compile_error!`.
            #[cfg(tilus_nightly_diagnostics)]
            {
                crate::report::emit_nightly(&p, func.sig.ident.span(), &diags);
                return emit(func, None, Vec::new());
            }
            #[cfg(not(tilus_nightly_diagnostics))]
            {
                let errors = diagnostics_to_errors(&p, func, diags);
                emit(func, None, errors)
            }
        }
    }
}

/// What the syntactic front end makes of a kernel: its AST (with the parser that holds the span
/// table the AST's spans index), or the errors at the user's tokens.
pub(crate) enum Front {
    Def(Parser, ast::KernelDef),
    Errors(Vec<syn::Error>),
}

/// The attribute's tokens and the parsed function to a [`ast::KernelDef`]: the step between
/// `syn` and `tilus_core::compile`, shared by the macro and the fuzzer (`crate::fuzz`).
pub(crate) fn front(attr_tokens: TokenStream, func: &syn::ItemFn) -> Front {
    let mut errors: Vec<syn::Error> = Vec::new();
    let options = match attr::parse(attr_tokens) {
        Ok((a, _)) => Some(a),
        Err(e) => {
            errors.push(e.into());
            None
        }
    };
    check_signature(&func.sig, &mut errors);

    let mut p = Parser::new();
    let name_span = p.sp(func.sig.ident.span());
    let params = p.params(&func.sig);
    let body = p.block(&func.block);
    errors.append(&mut p.errors);

    let mut kopts = ast::KernelOptions {
        unsafe_fn: func.sig.unsafety.is_some(),
        ..ast::KernelOptions::default()
    };
    if let Some(a) = &options {
        if let Some(t) = &a.threads {
            kopts.threads = **t;
            kopts.threads_span = p.sp(t.span());
        }
        if let Some(c) = &a.cluster {
            kopts.cluster = Some(c.0);
            kopts.cluster_span = p.sp(c.span());
        }
        if let Some(t) = &a.target {
            kopts.target = Some(t.0);
            kopts.target_span = p.sp(t.span());
        }
        if let Some(m) = &a.min_blocks_per_sm {
            kopts.min_blocks_per_sm = Some(**m);
            kopts.min_blocks_span = p.sp(m.span());
        }
        if let Some(v) = &a.vector_width {
            kopts.vector_width = Some(**v);
            kopts.vector_width_span = p.sp(v.span());
        }
    }

    // The PTX entry point: `r#loop` is entry `loop`; PTX identifiers are ASCII.
    let entry = func.sig.ident.unraw().to_string();
    if !entry.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        errors.push(syn::Error::new(
            func.sig.ident.span(),
            "a tile kernel's name must be ASCII letters, digits and `_`: it becomes the PTX entry point",
        ));
    }
    if !errors.is_empty() {
        return Front::Errors(errors);
    }
    let def = ast::KernelDef {
        name: entry,
        name_span,
        params,
        body,
        options: kopts,
    };
    Front::Def(p, def)
}

/// `tilus_core::compile`, with a panic in the compiler (a bug) reported as an internal compiler
/// error at the kernel, never as a crash of the macro (which rustc would print as an unhelpful
/// "proc macro panicked").
pub(crate) fn compile_caught(
    def: &ast::KernelDef,
) -> Result<tilus_core::Compiled, Vec<tilus_core::diag::Diagnostic>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tilus_core::compile(def)))
        .unwrap_or_else(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(vec![tilus_core::diag::Diagnostic::internal(
                def.name_span,
                &format!("the compiler panicked: {what}"),
            )])
        })
}

/// The compiler's diagnostics as errors at the user's tokens (at the kernel's name where a
/// diagnostic's span is unknown), each followed by its labels (see [`crate::report`]).
/// (Unused by the macro itself with `--cfg tilus_nightly_diagnostics`; the fuzzer uses it.)
#[cfg_attr(tilus_nightly_diagnostics, allow(dead_code))]
pub(crate) fn diagnostics_to_errors(
    p: &Parser,
    func: &syn::ItemFn,
    diags: Vec<tilus_core::diag::Diagnostic>,
) -> Vec<syn::Error> {
    let name = func.sig.ident.span();
    diags
        .iter()
        .flat_map(|d| crate::report::to_errors(p, name, d))
        .collect()
}

fn check_signature(sig: &syn::Signature, errors: &mut Vec<syn::Error>) {
    let mut bad = |t: &dyn quote::ToTokens, m: &str| errors.push(syn::Error::new_spanned(t, m));
    if let Some(c) = &sig.constness {
        bad(c, "a tile kernel cannot be `const`");
    }
    if let Some(a) = &sig.asyncness {
        bad(a, "a tile kernel cannot be `async`");
    }
    if !sig.generics.params.is_empty() {
        bad(&sig.generics, "tile kernels cannot be generic");
    }
    if let syn::ReturnType::Type(_, t) = &sig.output {
        bad(
            t,
            "a tile kernel returns nothing: write results to global tensors",
        );
    }
}

/// Write the PTX to `$TILUS_DUMP_PTX/<crate>/<name>.ptx` when that variable is set at build
/// time (a variant for a newer target to `<name>.sm_<target>.ptx`). A folder a crate (Cargo's
/// `CARGO_CRATE_NAME` for the crate being compiled): kernels of one name in two crates (two
/// examples' `axpy`) would otherwise overwrite each other.
fn dump_ptx(name: &str, ptx: &str) {
    if let Some(dir) = std::env::var_os("TILUS_DUMP_PTX") {
        let mut dir = std::path::PathBuf::from(dir);
        if let Ok(krate) = std::env::var("CARGO_CRATE_NAME") {
            dir.push(krate);
        }
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("{name}.ptx")), ptx);
    }
}

/// A string literal of `s` (a PTX module, up to hundreds of KB), raw
/// (`r#"..."#`) where it can hold `s` (no `\r`), which costs the least to build wherever the
/// macro runs. Under rustc, rustc's lexer reads it directly (`proc_macro::Literal`):
/// proc-macro2's `parse` would first lex it again with its own fallback lexer to validate it,
/// in code built at the macro's optimisation level (unoptimised under Cargo's default
/// profiles), and an escaped literal (`Literal::string`) is escaped character by character. The
/// literal is well formed by construction (its `#`s outnumber any in `s` after a quote). A crate
/// of the library's kernels and the generated seeds (135 kernels), 2-core VM, `bash
/// scripts/compile-times`, this form and proc-macro2's `parse` alternately, two runs each,
/// 2026-11-28: with Cargo's defaults (macro unoptimised) mean 5.77-5.88 -> 5.07-5.42 ms a
/// kernel, the largest seed's emit 9.1 -> 6.0-6.2 ms; with the macro optimised 1.92-2.00 ->
/// 1.88-1.91 ms (within the runs' spread). Escaped literals (earlier runs, not alternated) were
/// no faster unoptimised and slower optimised (the largest seed's emit 5.1 ms). On
/// proc-macro2's fallback tokens (the macro's unit tests, `compile_time.rs`) proc-macro2 lexes
/// it (390 KB of PTX: 2 ms raw, 12 ms escaped).
fn str_lit(s: &str) -> TokenStream {
    if !s.contains('\r') {
        let mut hashes = String::from("#");
        while s.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        let raw = format!("r{hashes}\"{s}\"{hashes}");
        if proc_macro::is_available() {
            if let Ok(lit) = raw.parse::<proc_macro::Literal>() {
                return proc_macro::TokenStream::from(proc_macro::TokenTree::Literal(lit)).into();
            }
        } else if let Ok(lit) = raw.parse::<proc_macro2::Literal>() {
            return lit.into_token_stream();
        }
    }
    proc_macro2::Literal::string(s).into_token_stream()
}

/// The struct, its consts and its launcher. `compiled = None` emits the stub (after errors).
pub(crate) fn emit(
    func: &syn::ItemFn,
    compiled: Option<&tilus_core::Compiled>,
    errors: Vec<syn::Error>,
) -> TokenStream {
    let vis = &func.vis;
    let name = &func.sig.ident;
    let docs: Vec<&syn::Attribute> = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let errors = errors.iter().map(syn::Error::to_compile_error);
    let p = launcher_params(func, compiled);
    let launch_params = &p.params;
    let is_unsafe = func.sig.unsafety.is_some();
    let unsafety = if is_unsafe {
        quote! { unsafe }
    } else {
        quote! {}
    };
    let safety_doc = safety_doc(is_unsafe);
    let (consts, launch_body, launch_on_body) = items_and_bodies(func, compiled, &p, &safety_doc);
    let span = Span::call_site();
    quote_spanned! {span=>
        #(#errors)*
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        #vis struct #name;

        #[allow(dead_code, clippy::too_many_arguments)]
        impl #name {
            #consts
            /// Launch the kernel on `dev`'s default stream over `grid` (a block count, or a
            /// 2-D/3-D `tilus::Grid`: `(x, y)`, `(x, y, z)`). Tensor arguments are
            /// `GlobalTensor`s or `TensorView`s. Arguments, grid and cluster shape are validated
            /// (kind, dtype, device, sizes, limits, shared memory) before anything runs.
            #safety_doc
            pub #unsafety fn launch(dev: &::tilus::Device, grid: impl ::core::convert::Into<::tilus::Grid>, #(#launch_params),*) -> ::core::result::Result<(), ::tilus::Error> {
                #launch_body
            }
            /// Launch the kernel on `stream` (asynchronous on a GPU: ordered after the
            /// stream's earlier work), validated as by `launch`.
            #safety_doc
            pub #unsafety fn launch_on(stream: &::tilus::Stream<'_>, grid: impl ::core::convert::Into<::tilus::Grid>, #(#launch_params),*) -> ::core::result::Result<(), ::tilus::Error> {
                #launch_on_body
            }
        }
    }
}

/// The launchers' parameters and what each becomes: the declared type's tokens, the
/// `KernelArg` built from it, its name, and its `ParamSpec`.
struct LauncherParams {
    params: Vec<TokenStream>,
    args: Vec<TokenStream>,
    idents: Vec<syn::Ident>,
    specs: Vec<TokenStream>,
}

/// Launcher parameters: tensors by reference, scalars by value, in the user's own type tokens
/// (so a wrong argument is a type error at the call, naming the declared type).
fn launcher_params(func: &syn::ItemFn, compiled: Option<&tilus_core::Compiled>) -> LauncherParams {
    let name = &func.sig.ident;
    let mut launch_params = Vec::new();
    let mut launch_args = Vec::new();
    let mut idents = Vec::new();
    let mut specs = Vec::new();
    for (i, input) in func.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else {
            continue;
        };
        let ident = match &*pt.pat {
            syn::Pat::Ident(pi) => pi.ident.clone(),
            _ => format_ident!("arg{}", i),
        };
        let pname = ident.unraw().to_string();
        // A parameter named like its kernel (`fn hist(.., hist: GlobalTensor<u32>)`) would be a
        // pattern matching the kernel's unit struct in the launchers: they name it apart.
        // A parameter declared twice (reported by the compiler) is named apart too, so that
        // rustc does not report it again (E0415) in the stub launchers.
        let ident = if ident.unraw() == name.unraw() {
            format_ident!("{}_arg", pname)
        } else if idents
            .iter()
            .any(|seen: &syn::Ident| seen.unraw() == ident.unraw())
        {
            format_ident!("{}_{}", pname, i)
        } else {
            ident
        };
        let ty = &pt.ty;
        let is_tensor = matches!(crate::parse::unwrapped(ty), syn::Type::Path(tp) if tp.path.segments.last().is_some_and(|s| s.ident == "GlobalTensor"));
        // The element type: from the compiled IR, or (after an error, for the stub) from the
        // declared name, `i32` when it names none, so that a rejected element type is not
        // reported a second time by rustc.
        let dtype = match compiled {
            Some(c) => match c.ir.params.get(launch_args.len()).map(|p| &p.kind) {
                Some(ParamKind::Tensor(d) | ParamKind::Scalar(d)) => *d,
                None => DType::I32,
            },
            None => declared_dtype(ty).unwrap_or(DType::I32),
        };
        // Host types by their canonical paths (`f16`/`bf16` are the `half` crate's, re-exported
        // by tilus), spanned at the declared type so a wrong argument points at it.
        let host = host_type(dtype, ty.span());
        let dt = dtype_tokens(dtype);
        if is_tensor {
            // Any device memory of the element type: a `GlobalTensor` or a borrowed `TensorView`.
            launch_params
                .push(quote_spanned! {ty.span()=> #ident: &impl ::tilus::AsTensor<#host> });
            launch_args.push(quote! { ::tilus::KernelArg::tensor(#ident) });
            specs.push(quote! { ::tilus::ParamSpec::tensor(#pname, #dt) });
        } else {
            launch_params.push(quote_spanned! {ty.span()=> #ident: #host });
            launch_args.push(quote! { ::tilus::KernelArg::from(#ident) });
            specs.push(quote! { ::tilus::ParamSpec::scalar(#pname, #dt) });
        }
        if compiled.is_none() {
            specs.pop();
        }
        idents.push(ident);
    }

    LauncherParams {
        params: launch_params,
        args: launch_args,
        idents,
        specs,
    }
}

/// The `# Safety` section of an `unsafe fn` kernel's launchers (nothing for a safe kernel).
fn safety_doc(is_unsafe: bool) -> TokenStream {
    if is_unsafe {
        quote! {
            ///
            /// # Safety
            ///
            /// The kernel is declared `unsafe fn`: its body has accesses without bounds checks
            /// (`check_bounds = false`). The caller promises that, for these arguments and this
            /// grid, every such access is within its tensor; otherwise the kernel may read or
            /// write memory it does not own.
        }
    } else {
        quote! {}
    }
}

/// The kernel's consts and spec, and the bodies of `launch` and `launch_on` (stubs that never
/// run after a compile error).
fn items_and_bodies(
    func: &syn::ItemFn,
    compiled: Option<&tilus_core::Compiled>,
    p: &LauncherParams,
    safety_doc: &TokenStream,
) -> (TokenStream, TokenStream, TokenStream) {
    let name = &func.sig.ident;
    let name_str = name.unraw().to_string();
    let is_unsafe = func.sig.unsafety.is_some();
    let unsafety = if is_unsafe {
        quote! { unsafe }
    } else {
        quote! {}
    };
    let (launch_args, idents, specs) = (&p.args, &p.idents, &p.specs);
    match compiled {
        Some(c) => {
            let ptx = str_lit(&c.ptx);
            let variant_targets = c.variants.iter().map(|(t, _)| *t);
            let variant_ptx = c.variants.iter().map(|(_, p)| str_lit(p));
            // A byte string (escaped by `proc_macro`, in the compiler's optimised code).
            let ir = proc_macro2::Literal::byte_string(&c.ir.to_bytes());
            let threads = c.ir.threads;
            let shared = c.shared_bytes;
            let target = c.ir.target.0;
            let (cx, cy, cz) = (c.ir.cluster.x, c.ir.cluster.y, c.ir.cluster.z);
            let entry = tilus_core::ptx::entry_name(&c.ir.name);
            let consts = quote! {
                /// The kernel's name.
                pub const NAME: &'static str = #name_str;
                /// The PTX entry point (the name behind a prefix that keeps it clear of PTX's
                /// reserved words).
                pub const ENTRY: &'static str = #entry;
                /// The PTX module, generated at build time.
                pub const PTX: &'static str = #ptx;
                /// The kernel generated again for newer targets where the compiler has better
                /// instructions there (`(compute capability, PTX)`: vector atomics on sm_90);
                /// a GPU runs the newest it can. Empty when the kernel names its `target`.
                pub const PTX_VARIANTS: &'static [(u32, &'static str)] = &[#((#variant_targets, #variant_ptx)),*];
                /// Threads per block.
                pub const THREADS: u32 = #threads;
                /// Dynamic shared memory requested per block, in bytes.
                pub const SHARED_BYTES: usize = #shared;
                /// The PTX target, as a compute capability (70 = `sm_70`).
                pub const TARGET: u32 = #target;
                /// Blocks per thread-block cluster (`[1, 1, 1]`: no cluster).
                pub const CLUSTER: [u32; 3] = [#cx, #cy, #cz];
                /// Everything the runtime needs to launch the kernel on either backend.
                #safety_doc
                pub #unsafety fn spec() -> &'static ::tilus::KernelSpec {
                    // The PTX by the kernel's path, not repeated (a nested static cannot name
                    // `Self`): the macro's output stays one copy of each module.
                    static SPEC: ::tilus::KernelSpec =
                        // SAFETY: PTX, IR and parameter list are all generated from one
                        // checked IR; every access in the PTX is bounds-checked, proven, or
                        // inside an `unsafe` block whose author promised it in bounds (of an
                        // `unsafe fn` kernel, whose launchers pass the promise to the caller).
                        unsafe { ::tilus::KernelSpec::new_with_variants(#name_str, #name::PTX, #name::PTX_VARIANTS, #ir, #threads, #shared, &[#(#specs),*], [#cx, #cy, #cz]) };
                    &SPEC
                }
            };
            let spec = if is_unsafe {
                // SAFETY: the launchers are `unsafe fn` with `spec`'s contract.
                quote! { unsafe { Self::spec() } }
            } else {
                quote! { Self::spec() }
            };
            let body = quote! { dev.launch(#spec, grid, &[#(#launch_args),*]) };
            let body_on = quote! { stream.launch(#spec, grid, &[#(#launch_args),*]) };
            (consts, body, body_on)
        }
        None => (
            quote! {},
            quote! { let _ = (dev, #(#idents),*); let _: ::tilus::Grid = grid.into(); ::core::unimplemented!("the kernel failed to compile") },
            quote! { let _ = (stream, #(#idents),*); let _: ::tilus::Grid = grid.into(); ::core::unimplemented!("the kernel failed to compile") },
        ),
    }
}

/// The element type a parameter type names (`GlobalTensor<u8>` or `u8`), if any.
fn declared_dtype(ty: &syn::Type) -> Option<DType> {
    let syn::Type::Path(tp) = crate::parse::unwrapped(ty) else {
        return None;
    };
    let last = tp.path.segments.last()?;
    let name = match &last.arguments {
        syn::PathArguments::AngleBracketed(ab) => match ab.args.first()? {
            syn::GenericArgument::Type(t) => match crate::parse::unwrapped(t) {
                syn::Type::Path(p) => p.path.get_ident()?.to_string(),
                _ => return None,
            },
            _ => return None,
        },
        _ => last.ident.to_string(),
    };
    DType::from_name(&name)
}

/// The host type of element type `d`: the primitive, or tilus's re-export of the `half` crate's
/// 16-bit floats.
fn host_type(d: DType, span: Span) -> TokenStream {
    match d {
        DType::F16 => quote_spanned! {span=> ::tilus::f16 },
        DType::BF16 => quote_spanned! {span=> ::tilus::bf16 },
        d => {
            let id = syn::Ident::new(d.name(), span);
            quote! { #id }
        }
    }
}

/// `::tilus::DType::<Variant>` for `d`.
fn dtype_tokens(d: DType) -> TokenStream {
    let variant = format_ident!("{}", format!("{d:?}"));
    quote! { ::tilus::DType::#variant }
}

#[cfg(test)]
mod tests {
    use super::str_lit;

    /// Each literal reads back as the string it was made from: quotes followed by `#`s (the
    /// raw literal takes one `#` more than the longest run), a `\r` (escaped), PTX-like text.
    /// (Outside rustc: under it, every kernel's PTX constants take the same path through
    /// rustc's lexer, and every test of the workspace reads them.)
    #[test]
    fn string_literals_read_back() {
        for s in [
            "",
            "plain",
            ".visible .entry k(\n\t.param .u64 p\n)\n{\n\tret;\n}\n",
            "a \"quote\" and a \"# hash",
            "\"## and \"### and \"#",
            "a\r\nline",
            "\\ backslashes \\n are \\\" kept",
        ] {
            let tokens = str_lit(s);
            // Raw wherever a raw literal can hold `s`.
            assert_eq!(
                tokens.to_string().starts_with('r'),
                !s.contains('\r'),
                "{tokens}"
            );
            let lit: syn::LitStr = syn::parse2(tokens).expect("one string literal");
            assert_eq!(lit.value(), s);
        }
    }
}
