//! Every name the derive reads or writes: attribute keywords, the runtime's absolute paths and
//! the identifiers of generated locals. Generated code refers to nothing else, so it compiles
//! under `#![no_implicit_prelude]` and next to any user names.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

pub const KV: &str = "kv";

pub const ENCODING: &str = "encoding";
pub const UNKNOWN_PREFIX: &str = "unknown_prefix";
pub const FORMAT: &str = "format";

pub const KEY: &str = "key";
pub const ALIAS: &str = "alias";
pub const DEFAULT: &str = "default";
pub const FLAG: &str = "flag";
pub const PARSE: &str = "parse";
pub const INDEXED: &str = "indexed";
pub const INDEX: &str = "index";
pub const REST: &str = "rest";
pub const SKIP: &str = "skip";

pub const VALUE: &str = "value";
pub const OTHER: &str = "other";

/// `::query_wire::kv`, the runtime module.
pub fn kv() -> TokenStream {
    quote!(::query_wire::kv)
}

/// `::query_wire::TextEncoding`.
pub fn text_encoding() -> TokenStream {
    quote!(::query_wire::TextEncoding)
}

/// `::query_wire::Result`.
pub fn result() -> TokenStream {
    quote!(::query_wire::Result)
}

pub fn option() -> TokenStream {
    quote!(::core::option::Option)
}

pub fn some() -> TokenStream {
    quote!(::core::option::Option::Some)
}

pub fn none() -> TokenStream {
    quote!(::core::option::Option::None)
}

pub fn ok() -> TokenStream {
    quote!(::core::result::Result::Ok)
}

pub fn err() -> TokenStream {
    quote!(::core::result::Result::Err)
}

pub fn default() -> TokenStream {
    quote!(::core::default::Default::default())
}

/// The lifetime of the decoded input when the type declares none.
pub fn input_lifetime() -> syn::Lifetime {
    syn::Lifetime::new("'__kv", proc_macro2::Span::call_site())
}

/// Parameters and locals of generated functions.
pub fn pairs() -> Ident {
    format_ident!("__pairs")
}
pub fn pair() -> Ident {
    format_ident!("__pair")
}
pub fn index() -> Ident {
    format_ident!("__index")
}
pub fn encoding() -> Ident {
    format_ident!("__encoding")
}
pub fn sink() -> Ident {
    format_ident!("__sink")
}
pub fn sink_type() -> Ident {
    format_ident!("__S")
}
pub fn at() -> Ident {
    format_ident!("__at")
}
pub fn bytes() -> Ident {
    format_ident!("__bytes")
}
pub fn base() -> Ident {
    format_ident!("__base")
}
pub fn number() -> Ident {
    format_ident!("__n")
}
pub fn error() -> Ident {
    format_ident!("__e")
}
pub fn value() -> Ident {
    format_ident!("__value")
}
pub fn key_value() -> Ident {
    format_ident!("__key")
}
pub fn claimed() -> Ident {
    format_ident!("__claimed")
}
pub fn rest() -> Ident {
    format_ident!("__rest")
}

/// The slot that collects field number `i` while decoding.
pub fn slot(i: usize) -> Ident {
    format_ident!("__field{}", i)
}
