//! Generates `FromKeyValues`: one pass over the pairs fills a slot per field, routes indexed
//! keys to their groups and keeps the rest, in the order the rules in `query_wire::kv` state.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{LitByteStr, LitStr};

use super::ast::{Container, Data, Field, Role, Style, Variant};
use super::names as n;

pub fn expand(cont: &Container<'_>, common: &TokenStream) -> TokenStream {
    let ident = cont.ident;
    let (impl_generics, lifetime) = super::de_generics(cont.input);
    let (_, ty_generics, where_clause) = cont.input.generics.split_for_impl();
    let kv = n::kv();
    let option = n::option();
    let result = n::result();
    let text_encoding = n::text_encoding();
    let (pairs, index, encoding) = (n::pairs(), n::index(), n::encoding());

    let (consts, body) = match &cont.data {
        Data::Struct(fields) => struct_body(cont, fields, &lifetime),
        Data::Enum(variants) => enum_body(variants, &lifetime),
    };

    quote! {
        #[automatically_derived]
        impl #impl_generics #kv::FromKeyValues<#lifetime> for #ident #ty_generics #where_clause {
            #common
            #consts

            fn from_pairs(
                #pairs: &[#kv::Pair<#lifetime>],
                #index: #option<usize>,
                #encoding: #text_encoding,
            ) -> #result<Self> {
                #body
            }
        }
    }
}

fn byte_lit(key: &str, span: Span) -> LitByteStr {
    LitByteStr::new(key.as_bytes(), span)
}

/// `::core::matches!(key, b"a" | b"b")`, or `false` for no keys.
fn matches_any(subject: &TokenStream, keys: &[String]) -> TokenStream {
    if keys.is_empty() {
        return quote!(false);
    }
    let lits = keys.iter().map(|k| byte_lit(k, Span::call_site()));
    quote!(::core::matches!(#subject, #(#lits)|*))
}

/// `.map_err(|e| e.in_field("name"))`.
fn in_field(name: &str) -> TokenStream {
    let e = n::error();
    let name = LitStr::new(name, Span::call_site());
    quote!(.map_err(|#e| #e.in_field(#name)))
}

fn struct_body(
    cont: &Container<'_>,
    fields: &[Field<'_>],
    lifetime: &syn::Lifetime,
) -> (TokenStream, TokenStream) {
    let kv = n::kv();
    let (some, none, ok, err, default) = (n::some(), n::none(), n::ok(), n::err(), n::default());
    let (pairs, pair, index, encoding) = (n::pairs(), n::pair(), n::index(), n::encoding());
    let (base, number, claimed, rest) = (n::base(), n::number(), n::claimed(), n::rest());

    let declared: Vec<String> = fields
        .iter()
        .filter(|f| matches!(f.role(), Role::Plain | Role::Flag))
        .flat_map(Field::accepted_keys)
        .collect();
    let declares = matches_any(&quote!(key), &declared);
    let rest_field = fields.iter().find(|f| f.role() == Role::Rest);
    let keeps_unknown = rest_field.is_some();
    let unknown_prefix = match &cont.attrs.unknown_prefix {
        Some(prefix) => {
            let lit = byte_lit(&prefix.value, prefix.span);
            quote!(#some(#lit))
        }
        None => quote!(#none),
    };
    let consts = quote! {
        const KEEPS_UNKNOWN: bool = #keeps_unknown;
        const UNKNOWN_PREFIX: ::core::option::Option<&'static [u8]> = #unknown_prefix;

        fn declares_key(key: &[u8]) -> bool {
            #declares
        }
    };

    // One slot per field that collects a value.
    let mut slots = Vec::new();
    // Match arms of the second pass, for plain keys and flags.
    let mut arms = Vec::new();
    // Indexed groups: (slot, element type path).
    let mut groups = Vec::new();
    // Struct literal entries.
    let mut build = Vec::new();

    for (i, field) in fields.iter().enumerate() {
        let slot = n::slot(i);
        let member = field.ident;
        let ty = field.ty;
        let span = ty.span();
        let name = field.name();
        let name_lit = LitStr::new(&name, Span::call_site());
        let into_field = in_field(&name);
        match field.role() {
            Role::Plain => {
                let value_ty = field.option_inner().unwrap_or(ty);
                slots.push(quote!(let mut #slot: ::core::option::Option<#value_ty> = #none;));
                let decode = if field.attrs.parse.is_some() {
                    quote_spanned!(span=> #kv::parse_value::<#value_ty>(#pair.value, #pair.value_offset, #encoding))
                } else {
                    quote_spanned!(span=> <#value_ty as #kv::FromValue<#lifetime>>::from_value(#pair.value, #pair.value_offset, #encoding))
                };
                let keys = field.accepted_keys();
                let lits = keys.iter().map(|k| byte_lit(k, Span::call_site()));
                arms.push(quote! {
                    #(#lits)|* => if #slot.is_none() {
                        #slot = #some(#decode #into_field?);
                        true
                    } else {
                        false
                    },
                });
                let value = if field.option_inner().is_some() {
                    quote!(#slot)
                } else if field.attrs.default.is_some() {
                    quote!(match #slot { #some(v) => v, #none => #default })
                } else {
                    quote!(match #slot {
                        #some(v) => v,
                        #none => return #err(#kv::missing_key(#pairs).in_field(#name_lit)),
                    })
                };
                build.push(quote!(#member: #value,));
            }
            Role::Flag => {
                slots.push(quote!(let mut #slot: bool = false;));
                let keys = field.accepted_keys();
                let lits = keys.iter().map(|k| byte_lit(k, Span::call_site()));
                arms.push(quote! {
                    #(#lits)|* => if #slot {
                        false
                    } else {
                        #slot = true;
                        true
                    },
                });
                build.push(quote!(#member: #slot,));
            }
            Role::Indexed => {
                slots.push(quote!(let mut #slot = #kv::IndexedGroup::<#lifetime>::new();));
                let element = quote_spanned!(span=>
                    <<#ty as #kv::IndexedField<#lifetime>>::Element as #kv::FromKeyValues<#lifetime>>
                );
                groups.push((slot.clone(), element));
                build.push(quote! {
                    #member: #slot.decode::<#ty>(#encoding) #into_field?,
                });
            }
            Role::Index => {
                let value = quote_spanned!(span=> match #index { #some(n) => n, #none => 0 });
                build.push(quote!(#member: #value,));
            }
            Role::Rest => {
                slots.push(quote_spanned!(span=> let mut #rest: #ty = #default;));
                build.push(quote!(#member: #rest,));
            }
            Role::Skip => {
                build.push(quote!(#member: #default,));
            }
        }
    }

    // Pass 1: which element numbers exist in each group, from the keys their types declare.
    let mark = groups.iter().map(|(slot, element)| {
        quote!(if #element::declares_key(#base) { #slot.mark(#number); continue; })
    });
    let first_pass = if groups.is_empty() {
        quote!()
    } else {
        quote! {
            for #pair in #pairs {
                if Self::declares_key(#pair.key) {
                    continue;
                }
                if let #some((#base, #number)) = #kv::split_index(#pair.key) {
                    #(#mark)*
                }
            }
        }
    };

    // Pass 2 routing of an indexed key, rules 2 and 3.
    let by_declared = groups.iter().map(|(slot, element)| {
        quote!(if #element::declares_key(#base) {
            #slot.push(#number, #pair.with_key(#base));
            break '__route true;
        })
    });
    let by_prefix = groups.iter().map(|(slot, element)| {
        quote!(if let #some(prefix) = #element::UNKNOWN_PREFIX {
            if #base.starts_with(prefix) {
                #slot.push(#number, #pair.with_key(#base));
                break '__route true;
            }
        })
    });
    let by_number = groups.iter().map(|(slot, element)| {
        quote!(if #element::KEEPS_UNKNOWN && #element::UNKNOWN_PREFIX.is_none() && #slot.contains(#number) {
            #slot.push(#number, #pair.with_key(#base));
            break '__route true;
        })
    });
    let route_indexed = if groups.is_empty() {
        quote!(false)
    } else {
        quote! {
            '__route: {
                let #some((#base, #number)) = #kv::split_index(#pair.key) else {
                    break '__route false;
                };
                #(#by_declared)*
                #(#by_prefix)*
                #(#by_number)*
                false
            }
        }
    };

    let unclaimed = match rest_field {
        Some(field) => {
            let into_field = in_field(&field.name());
            let ty = field.ty;
            let push = quote_spanned!(ty.span()=>
                <#ty as #kv::FromRest<#lifetime>>::push_pair(&mut #rest, *#pair, #encoding)
            );
            quote!(#push #into_field?;)
        }
        None => quote!(),
    };

    let claim = if arms.is_empty() {
        route_indexed
    } else {
        quote! {
            match #pair.key {
                #(#arms)*
                _ => #route_indexed,
            }
        }
    };
    let body = quote! {
        #(#slots)*
        #first_pass
        for #pair in #pairs {
            let #claimed: bool = #claim;
            if !#claimed {
                #unclaimed
            }
        }
        #ok(Self { #(#build)* })
    };
    (consts, body)
}

fn enum_body(variants: &[Variant<'_>], lifetime: &syn::Lifetime) -> (TokenStream, TokenStream) {
    let kv = n::kv();
    let (none, ok, err) = (n::none(), n::ok(), n::err());
    let (pairs, pair, encoding) = (n::pairs(), n::pair(), n::encoding());

    let declared: Vec<String> = variants
        .iter()
        .filter(|v| v.attrs.other.is_none())
        .map(Variant::key)
        .collect();
    let declares = matches_any(&quote!(key), &declared);
    let other = variants.iter().find(|v| v.attrs.other.is_some());
    let keeps_unknown = other.is_some();
    let consts = quote! {
        const KEEPS_UNKNOWN: bool = #keeps_unknown;
        const UNKNOWN_PREFIX: ::core::option::Option<&'static [u8]> = #none;

        fn declares_key(key: &[u8]) -> bool {
            #declares
        }
    };

    let decode_value = |ty: &syn::Type, raw: TokenStream, offset: TokenStream, name: &str| {
        let into_field = in_field(name);
        quote_spanned!(ty.span()=>
            <#ty as #kv::FromValue<#lifetime>>::from_value(#raw, #offset, #encoding) #into_field?
        )
    };

    // Unit variants with an exact value are tried first.
    let exact = variants
        .iter()
        .filter(|v| v.attrs.other.is_none())
        .filter_map(|v| {
            let value = v.attrs.value.as_ref()?;
            let ident = v.ident;
            let key = byte_lit(&v.key(), Span::call_site());
            let value = byte_lit(&value.value, value.span);
            Some(quote!((#key, #value) => return #ok(Self::#ident),))
        });
    let by_key = variants
        .iter()
        .filter(|v| v.attrs.other.is_none() && v.attrs.value.is_none())
        .map(|v| {
            let ident = v.ident;
            let key = byte_lit(&v.key(), Span::call_site());
            match v.style {
                Style::Tuple(_) => {
                    let types = v.field_types();
                    let value = decode_value(
                        types[0],
                        quote!(#pair.value),
                        quote!(#pair.value_offset),
                        &v.name(),
                    );
                    quote!(#key => #ok(Self::#ident(#value)),)
                }
                _ => quote!(#key => #ok(Self::#ident),),
            }
        });
    let fallback = match other {
        Some(v) => {
            let ident = v.ident;
            let types = v.field_types();
            let key = decode_value(
                types[0],
                quote!(#pair.key),
                quote!(#pair.key_offset),
                &v.name(),
            );
            let value = decode_value(
                types[1],
                quote!(#pair.value),
                quote!(#pair.value_offset),
                &v.name(),
            );
            quote!(_ => #ok(Self::#ident(#key, #value)),)
        }
        None => quote!(_ => #err(#kv::unknown_key(#pair)),),
    };

    let exact: Vec<_> = exact.collect();
    let exact = if exact.is_empty() {
        quote!()
    } else {
        quote! {
            match (#pair.key, #pair.value) {
                #(#exact)*
                _ => {}
            }
        }
    };
    let body = quote! {
        let #pair = match #pairs {
            [#pair] => #pair,
            _ => return #err(#kv::not_one_pair(#pairs)),
        };
        #exact
        match #pair.key {
            #(#by_key)*
            #fallback
        }
    };
    (consts, body)
}
