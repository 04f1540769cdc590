//! Derive macros for `query-wire`: `#[derive(Wire)]` for binary packets and
//! `#[derive(KeyValues)]` for backslash-delimited key/value text (GameSpy v1).
//!
//! The vocabulary is documented on the `query-wire` crate, which re-exports both derives.

use proc_macro::TokenStream;

mod errors;
mod kv;
mod wire;

/// Derives `query_wire::Decode` and `query_wire::Encode` for a binary packet.
#[proc_macro_derive(Wire, attributes(wire))]
pub fn derive_wire(input: TokenStream) -> TokenStream {
    wire::derive(input.into()).into()
}

/// Derives `query_wire::kv::FromKeyValues` and `query_wire::kv::ToKeyValues` for a key/value
/// text packet.
#[proc_macro_derive(KeyValues, attributes(kv))]
pub fn derive_key_values(input: TokenStream) -> TokenStream {
    kv::derive(input.into()).into()
}
