//! Generates `ToKeyValues`: plain fields in declaration order, then the `rest` field, then each
//! indexed group, so that decoding what was written gives back an equal value.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{LitByteStr, LitStr};

use super::ast::{Container, Data, Field, Role, Style, Variant};
use super::names as n;

pub fn expand(cont: &Container<'_>, common: &TokenStream) -> TokenStream {
    let ident = cont.ident;
    let (impl_generics, ty_generics, where_clause) = cont.input.generics.split_for_impl();
    let kv = n::kv();
    let option = n::option();
    let result = n::result();
    let text_encoding = n::text_encoding();
    let (sink, sink_type, index, encoding) = (n::sink(), n::sink_type(), n::index(), n::encoding());

    let (index_fn, body) = match &cont.data {
        Data::Struct(fields) => struct_body(fields),
        Data::Enum(variants) => enum_body(variants),
    };

    quote! {
        #[automatically_derived]
        impl #impl_generics #kv::ToKeyValues for #ident #ty_generics #where_clause {
            #common

            fn index(&self) -> #option<usize> {
                #index_fn
            }

            fn write_pairs<#sink_type: #kv::KvSink + ?::core::marker::Sized>(
                &self,
                #sink: &mut #sink_type,
                #index: #option<usize>,
                #encoding: #text_encoding,
            ) -> #result<()> {
                #body
            }
        }
    }
}

fn byte_lit(key: &str) -> LitByteStr {
    LitByteStr::new(key.as_bytes(), Span::call_site())
}

fn in_field(name: &str) -> TokenStream {
    let e = n::error();
    let name = LitStr::new(name, Span::call_site());
    quote!(.map_err(|#e| #e.in_field(#name)))
}

/// Writes `value` (an expression of type `&T`) under `key` through `ToValue`, or through
/// `Display` for `parse` fields.
fn put_value(key: &str, value: TokenStream, ty: &syn::Type, parse: bool) -> TokenStream {
    let kv = n::kv();
    let (sink, index, encoding, at, bytes) =
        (n::sink(), n::index(), n::encoding(), n::at(), n::bytes());
    let key = byte_lit(key);
    let emit = quote!(|#bytes: &[u8]| #kv::KvSink::put_pair(#sink, #key, #index, #bytes));
    let write = if parse {
        quote_spanned!(ty.span()=> #kv::display_value::<#ty, _>(#value, #encoding, #at, #emit))
    } else {
        quote_spanned!(ty.span()=> <#ty as #kv::ToValue>::to_value(#value, #encoding, #at, #emit))
    };
    quote! {{
        let #at = #kv::KvSink::position(#sink);
        #write
    }}
}

fn struct_body(fields: &[Field<'_>]) -> (TokenStream, TokenStream) {
    let kv = n::kv();
    let (some, none, ok) = (n::some(), n::none(), n::ok());
    let (sink, index, encoding, value) = (n::sink(), n::index(), n::encoding(), n::value());

    let index_fn = match fields.iter().find(|f| f.role() == Role::Index) {
        Some(field) => {
            let member = field.ident;
            quote_spanned!(field.ty.span()=> #some(self.#member))
        }
        None => quote!(#none),
    };

    let mut plain = Vec::new();
    let mut rest = Vec::new();
    let mut groups = Vec::new();
    for field in fields {
        let member = field.ident;
        let into_field = in_field(&field.name());
        let parse = field.attrs.parse.is_some();
        match field.role() {
            Role::Plain => {
                let key = field.key();
                plain.push(match field.option_inner() {
                    Some(inner) => {
                        let put = put_value(&key, quote!(#value), inner, parse);
                        quote! {
                            if let #some(#value) = &self.#member {
                                #put #into_field?;
                            }
                        }
                    }
                    None => {
                        let put = put_value(&key, quote!(&self.#member), field.ty, parse);
                        quote!(#put #into_field?;)
                    }
                });
            }
            Role::Flag => {
                let key = byte_lit(&field.key());
                plain.push(quote! {
                    if self.#member {
                        #kv::KvSink::put_pair(#sink, #key, #index, b"") #into_field?;
                    }
                });
            }
            Role::Rest => {
                let ty = field.ty;
                rest.push(quote_spanned! {ty.span()=>
                    <#ty as #kv::ToRest>::write_rest(&self.#member, #sink, #index, #encoding) #into_field?;
                });
            }
            Role::Indexed => {
                let ty = field.ty;
                groups.push(quote_spanned! {ty.span()=>
                    <#ty as #kv::ToIndexedField>::write_elements(&self.#member, #sink, #encoding) #into_field?;
                });
            }
            Role::Index | Role::Skip => {}
        }
    }
    let body = quote! {
        #(#plain)*
        #(#rest)*
        #(#groups)*
        #ok(())
    };
    (index_fn, body)
}

fn enum_body(variants: &[Variant<'_>]) -> (TokenStream, TokenStream) {
    let kv = n::kv();
    let none = n::none();
    let (sink, index, encoding, at) = (n::sink(), n::index(), n::encoding(), n::at());
    let (key_value, value, bytes) = (n::key_value(), n::value(), n::bytes());

    let arms = variants.iter().map(|v| {
        let ident = v.ident;
        let into_field = in_field(&v.name());
        if v.attrs.other.is_some() {
            let types = v.field_types();
            let (key_ty, value_ty) = (types[0], types[1]);
            return quote! {
                Self::#ident(#key_value, #value) => {
                    let #at = #kv::KvSink::position(#sink);
                    <#key_ty as #kv::ToValue>::to_value(#key_value, #encoding, #at, |#key_value: &[u8]| {
                        <#value_ty as #kv::ToValue>::to_value(#value, #encoding, #at, |#bytes: &[u8]| {
                            #kv::KvSink::put_pair(#sink, #key_value, #index, #bytes)
                        })
                    }) #into_field
                }
            };
        }
        let key = v.key();
        match v.style {
            Style::Tuple(_) => {
                let types = v.field_types();
                let put = put_value(&key, quote!(#value), types[0], false);
                quote!(Self::#ident(#value) => #put #into_field,)
            }
            _ => {
                let key = byte_lit(&key);
                let written = byte_lit(v.attrs.value.as_ref().map_or("", |x| x.value.as_str()));
                quote!(Self::#ident => #kv::KvSink::put_pair(#sink, #key, #index, #written) #into_field,)
            }
        }
    });
    let body = quote! {
        match self {
            #(#arms)*
        }
    };
    (quote!(#none), body)
}
