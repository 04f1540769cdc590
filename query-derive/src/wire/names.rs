//! Every identifier the generated code introduces and every path it names, in one place.
//!
//! Paths are absolute (`::query_wire::...`, `::core::...`) so the code compiles under
//! `#![no_implicit_prelude]` and whatever the user imported. Locals are created with
//! [`Span::mixed_site`], so they can neither capture nor be captured by the names in the
//! user's expressions: an expression sees exactly the earlier fields and the context bindings
//! that the generator binds for it.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::attr::{Encoding, Endian};

fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The `&mut Reader` parameter of `decode`.
pub fn reader() -> Ident {
    local("__r")
}

/// The array a run of fixed-width fields is written into.
pub fn fixed_run() -> Ident {
    local("__run")
}

/// The bytes of the `n`th run of fixed-width fields a decoder reads at once.
pub fn run_bytes(n: usize) -> Ident {
    format_ident!("__run_{}", n, span = Span::mixed_site())
}

/// The integer the `n`th group of bit fields shares.
pub fn bit_group(n: usize) -> Ident {
    format_ident!("__bits_{}", n, span = Span::mixed_site())
}

/// The unsigned integer type of `size` bytes, which a group of bit fields fills.
pub fn bit_storage(size: usize) -> TokenStream {
    let ty = primitive(match size {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        _ => "u64",
    });
    quote!(::core::primitive::#ty)
}

/// The bytes a run's match arm binds.
pub fn local_bytes() -> Ident {
    local("__bytes")
}

/// The reader `decode_whole` owns; `__r` borrows it.
pub fn owned_reader() -> Ident {
    local("__whole")
}

/// The context parameter of `decode_exact`, handed on to `decode_whole` as it came.
pub fn ctx_arg() -> Ident {
    local("__ctx")
}

/// The `&mut Writer` parameter of `encode`.
pub fn writer() -> Ident {
    local("__w")
}

/// The local holding a field's value (decode) or a reference to it (encode).
pub fn field(name: &str) -> Ident {
    format_ident!("__field_{}", name, span = Span::mixed_site())
}

/// The reader bounded by a field's `len(...)` prefix.
pub fn field_body() -> Ident {
    local("__field_body")
}

/// The reader bounded by a TLV enum's length prefix.
pub fn variant_body() -> Ident {
    local("__body")
}

/// The sub-reader value behind [`field_body`] / [`variant_body`].
pub fn sub_reader() -> Ident {
    local("__sub")
}

/// A reserved length prefix on encode.
pub fn length_slot() -> Ident {
    local("__slot")
}

/// The length read from a prefix.
pub fn length() -> Ident {
    local("__len")
}

/// An enum's tag as read, or as given by the context for an `external` tag.
pub fn tag() -> Ident {
    local("__tag")
}

/// Where an enum's tag starts, for an unknown-tag error.
pub fn tag_offset() -> Ident {
    local("__tag_offset")
}

/// The decoded value before a TLV body's surplus check, or before `decode_exact` empties its
/// reader.
pub fn value() -> Ident {
    local("__value")
}

/// Whether a `when` condition holds.
pub fn present() -> Ident {
    local("__present")
}

/// The `Some` content of an `Option` field.
pub fn inner() -> Ident {
    local("__inner")
}

/// The number of elements of a repeat.
pub fn count() -> Ident {
    local("__count")
}

/// The length of an `each_ctx` cycle.
pub fn cycle() -> Ident {
    local("__cycle")
}

/// The index within the current `each_ctx` cycle.
pub fn column() -> Ident {
    local("__column")
}

/// How many elements a repeat encodes.
pub fn element_count() -> Ident {
    local("__element_count")
}

/// The elements decoded so far.
pub fn elements() -> Ident {
    local("__elements")
}

/// One element of a repeat.
pub fn element() -> Ident {
    local("__element")
}

/// The index of the element being decoded or encoded.
pub fn index() -> Ident {
    local("__index")
}

/// The context every element of a repeat gets (`ctx = ..` on a `Vec`), computed once.
pub fn element_ctx() -> Ident {
    local("__element_ctx")
}

/// Where an element started: to catch elements that read nothing, and to size a list by its
/// first element.
pub fn element_start() -> Ident {
    local("__element_start")
}

/// A running byte count in `encoded_len`.
pub fn total() -> Ident {
    local("__total")
}

/// The error in `map_err` closures.
pub fn error() -> Ident {
    local("__e")
}

/// The lifetime of the input when the type declares none.
pub fn default_lifetime() -> syn::Lifetime {
    syn::Lifetime::new("'__de", Span::call_site())
}

pub fn decode_trait() -> TokenStream {
    quote!(::query_wire::Decode)
}

pub fn encode_trait() -> TokenStream {
    quote!(::query_wire::Encode)
}

pub fn reader_type() -> TokenStream {
    quote!(::query_wire::Reader)
}

pub fn writer_type() -> TokenStream {
    quote!(::query_wire::Writer)
}

pub fn result_type() -> TokenStream {
    quote!(::query_wire::Result)
}

pub fn ok() -> TokenStream {
    quote!(::core::result::Result::Ok)
}

pub fn err() -> TokenStream {
    quote!(::core::result::Result::Err)
}

pub fn some() -> TokenStream {
    quote!(::core::option::Option::Some)
}

pub fn none() -> TokenStream {
    quote!(::core::option::Option::None)
}

pub fn from() -> TokenStream {
    quote!(::core::convert::From::from)
}

pub fn default() -> TokenStream {
    quote!(::core::default::Default::default())
}

pub fn min() -> TokenStream {
    quote!(::core::cmp::min)
}

pub fn text_from_bytes() -> TokenStream {
    quote!(::query_wire::Text::from_bytes)
}

pub fn flags_trait() -> TokenStream {
    quote!(::query_wire::reexport::bitflags::Flags)
}

pub fn items_trait() -> TokenStream {
    quote!(::query_wire::Items)
}

/// The widened value of a `computed` expression.
pub fn wide() -> Ident {
    local("__wide")
}

/// The offset where a computed field was read.
pub fn computed_at(name: &str) -> Ident {
    format_ident!("__at_{}", name, span = Span::mixed_site())
}

pub fn into_count() -> TokenStream {
    quote!(::query_wire::__private::IntoCount::into_count)
}

/// A cold error constructor in `query_wire::__private`.
pub fn private(name: &str) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote!(::query_wire::__private::#name)
}

pub fn endian(endian: Endian) -> TokenStream {
    match endian {
        Endian::Big => quote!(::query_wire::Endian::Big),
        Endian::Little => quote!(::query_wire::Endian::Little),
    }
}

pub fn encoding(encoding: Encoding) -> TokenStream {
    match encoding {
        Encoding::Utf8 => quote!(::query_wire::TextEncoding::Utf8),
        Encoding::Latin1 => quote!(::query_wire::TextEncoding::Latin1),
        Encoding::Windows1252 => quote!(::query_wire::TextEncoding::Windows1252),
        Encoding::Windows1251 => quote!(::query_wire::TextEncoding::Windows1251),
    }
}

/// `usize`, by a path no local item can shadow.
pub fn usize() -> TokenStream {
    quote!(::core::primitive::usize)
}

/// `bool`, by a path no local item can shadow.
pub fn bool() -> TokenStream {
    quote!(::core::primitive::bool)
}

/// `str`, by a path no local item can shadow.
pub fn str() -> TokenStream {
    quote!(::core::primitive::str)
}

/// A primitive type name (`u16`) as a type token.
pub fn primitive(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Where a count prefix of variable width starts, for a `min_count` error.
pub fn count_at() -> Ident {
    local("__count_at")
}

/// The unread input where a container began, and its offset, for `crc32(before)`.
pub fn origin() -> Ident {
    local("__origin")
}

/// The offset of [`origin`].
pub fn origin_at() -> Ident {
    local("__origin_at")
}

/// Where a `crc32(after)` field was reserved on encode, to be filled in at the end.
pub fn checksum_at(name: &str) -> Ident {
    format_ident!("__checksum_at_{}", name, span = Span::mixed_site())
}

/// The length a variable-width `len` prefix counts, computed before the value is written.
pub fn body_len() -> Ident {
    local("__body_len")
}

/// A checksum computed over the bytes a `crc32` field covers.
pub fn checksum_computed() -> Ident {
    local("__checksum")
}
