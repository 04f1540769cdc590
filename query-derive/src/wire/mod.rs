//! `#[derive(Wire)]`: parse the attributes into a typed model (`attr`, `types`, `scope`,
//! `model`), report every error together (`errors`), then generate (`codegen`, with every
//! generated name in `names`).
//!
//! The vocabulary is documented on the `query-wire` crate.

mod attr;
mod codegen;
mod errors;
mod model;
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
    let mut errors = errors::Errors::default();
    let container = model::build(input, &mut errors);
    errors.finish()?;
    Ok(container.map(|c| codegen::expand(&c)).unwrap_or_default())
}
