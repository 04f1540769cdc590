//! Collects every misuse found while parsing and checking, so the user sees them all at once,
//! each at the span of the attribute or field that caused it.

use std::fmt::Display;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    /// Records an error spanning `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error that `syn` produced.
    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// `Ok` when nothing went wrong, otherwise every error as `compile_error!` invocations.
    pub fn check(self) -> Result<(), TokenStream> {
        if self.errors.is_empty() {
            return Ok(());
        }
        Err(self
            .errors
            .into_iter()
            .map(|e| e.to_compile_error())
            .collect())
    }
}
