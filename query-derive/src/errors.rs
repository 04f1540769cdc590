//! Collects every error of one derive so they are reported together, each at its own span.

use proc_macro2::Span;
use quote::ToTokens;
use std::fmt::Display;

/// The errors found so far. Parsing and checking go on after an error, so that one build shows
/// every mistake in a declaration instead of one per attempt.
#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error at `span`.
    pub fn at(&mut self, span: Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records an error spanning all of `tokens` (a type, an expression).
    pub fn spanning(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error syn already built.
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// All errors combined into one, or `Ok` when there were none.
    pub fn finish(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                for error in errors {
                    first.combine(error);
                }
                Err(first)
            }
        }
    }
}
