//! `#[derive(Wire)]`, built like the `kv` derive beside it: `attr` parses each `#[wire(...)]`
//! key, `ast` assembles the typed model (with `types` for the Rust types and `scope` for the
//! names expressions use), `check` applies the rules across attributes, and only then
//! `codegen` generates, with every generated name in `names`. Every error is collected with
//! its span and all are reported together.
//!
//! The vocabulary is documented on the `query-wire` crate.

mod ast;
mod attr;
mod check;
mod codegen;
mod names;
mod scope;
mod types;

#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;

/// The derive's entry point: the impls, or the errors as `compile_error!`s.
pub fn derive(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => expand(&input).unwrap_or_else(syn::Error::into_compile_error),
        Err(error) => error.into_compile_error(),
    }
}

/// Builds and checks the model, then generates. Nothing is generated when any error was found.
pub fn expand(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = crate::errors::Errors::default();
    let container = ast::build(input, &mut errors);
    if let Some(container) = &container {
        check::check(container, &mut errors);
    }
    errors.finish()?;
    Ok(container.map(|c| codegen::expand(&c)).unwrap_or_default())
}
