//! Where fields sit: `Encode::FIXED_LEN` for a struct whose fields all have fixed widths, and
//! the `<FIELD>_RANGE` constants that `#[wire(range)]` asks for, both evaluated by the
//! compiler from the same widths the encoder writes.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::size;
use crate::wire::ast::{Body, Container, Data, Field, FieldKind, VariantTag};
use crate::wire::names;

/// `Some(n)` when every value of the container encodes to `n` bytes, as an expression of type
/// `Option<usize>` the compiler evaluates. An enum has one when every variant has the same
/// (the tag included, a TLV's length prefix and an `other` variant excluded).
pub fn fixed_len(container: &Container) -> TokenStream {
    let fixed_len = names::private("fixed_len");
    let some = quote!(::core::option::Option::Some);
    let fields = match &container.data {
        Data::Struct(fields) => fields,
        Data::Enum(data) => {
            let other = data
                .variants
                .iter()
                .any(|v| matches!(v.tag, VariantTag::Other { .. }));
            if data.len.is_some() || other {
                return names::none();
            }
            let variants = data.variants.iter().map(|variant| {
                // A variant chosen by its magic starts with it.
                let magic = match &variant.tag {
                    VariantTag::Magic(magic) => {
                        let magic = super::decode::magic_bytes(magic);
                        Some(quote!(#some(#magic.len())))
                    }
                    _ => None,
                };
                let parts = magic.into_iter().chain(variant.fields.iter().map(width));
                quote!(#fixed_len(&[#(#parts),*]))
            });
            let fixed_same = names::private("fixed_same");
            // A variable-width (VarInt) tag has no fixed width, so neither has the enum.
            let tag = match (data.tag_on_wire, data.tag_ty.size()) {
                (false, _) => size(0),
                (true, Some(tag)) => size(tag),
                (true, None) => return names::none(),
            };
            let parts = magic_part(container)
                .into_iter()
                .chain([quote!(#some(#tag)), quote!(#fixed_same(&[#(#variants),*]))]);
            return quote!(#fixed_len(&[#(#parts),*]));
        }
    };
    let parts = magic_part(container)
        .into_iter()
        .chain(fields.iter().map(width));
    quote!(#fixed_len(&[#(#parts),*]))
}

/// `TAG_RANGE` for an enum whose tag is on the wire: after the magic, before the fields.
pub fn tag_range(container: &Container) -> TokenStream {
    let Data::Enum(data) = &container.data else {
        return TokenStream::new();
    };
    if !data.tag_on_wire {
        return TokenStream::new();
    }
    let fixed_range = names::private("fixed_range");
    let magic = magic_part(container).into_iter();
    // A variable-width (VarInt) tag has no fixed place for what follows it.
    let Some(tag) = data.tag_ty.size() else {
        return TokenStream::new();
    };
    let tag = size(tag);
    quote! {
        /// Where the tag sits in every encoding of this type (derived from the declaration).
        pub const TAG_RANGE: ::core::ops::Range<::core::primitive::usize> =
            #fixed_range(&[#(#magic),*], ::core::option::Option::Some(#tag));
    }
}

/// The inherent constants `#[wire(range)]` asks for.
pub fn ranges(container: &Container) -> TokenStream {
    let Data::Struct(fields) = &container.data else {
        return TokenStream::new();
    };
    let ident = &container.ident;
    let (impl_generics, ty_generics, where_clause) = container.generics.split_for_impl();
    let magic = magic_part(container);
    let fixed_range = names::private("fixed_range");
    let consts: Vec<TokenStream> = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| field.wire().is_some_and(|w| w.range))
        .map(|(index, field)| {
            // A bit field's bytes are those of the integer its group shares.
            let (start, own) = match field.wire().map(|w| &w.body) {
                Some(Body::BitField {
                    position, group, ..
                }) => {
                    let n = size(group.size);
                    (index - position, quote!(::core::option::Option::Some(#n)))
                }
                _ => (index, width(field)),
            };
            let before = magic
                .iter()
                .cloned()
                .chain(fields[..start].iter().map(width));
            let name = range_name(field);
            let doc = format!(
                "Where `{}` sits in every encoding of this type: its bytes, from the start of \
                 the packet (derived from the declaration).",
                field.binding
            );
            quote! {
                #[doc = #doc]
                pub const #name: ::core::ops::Range<::core::primitive::usize> =
                    #fixed_range(&[#(#before),*], #own);
            }
        })
        .collect();
    if consts.is_empty() {
        return TokenStream::new();
    }
    // Evaluated here, so that a field of variable width before one is reported where the type
    // is declared rather than where the constant is first used (not possible with type
    // parameters, which the constant's value may depend on).
    let evaluated = container.generics.type_params().next().is_none().then(|| {
        let names = fields
            .iter()
            .filter(|field| field.wire().is_some_and(|w| w.range))
            .map(range_name);
        quote!(#(const _: ::core::ops::Range<::core::primitive::usize> = #ident::#names;)*)
    });
    quote! {
        #[automatically_derived]
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#consts)*
        }
        #evaluated
    }
}

fn range_name(field: &Field) -> proc_macro2::Ident {
    format_ident!(
        "{}_RANGE",
        field
            .binding
            .to_string()
            .trim_start_matches("r#")
            .to_uppercase()
    )
}

/// A compile-time check that the masks of the `flag(..)` fields naming each flag field are
/// not zero and do not overlap: each bit announces one field.
pub fn flag_masks(container: &Container) -> TokenStream {
    let lists: Vec<&[Field]> = match &container.data {
        Data::Struct(fields) => vec![fields],
        Data::Enum(data) => data.variants.iter().map(|v| &v.fields[..]).collect(),
    };
    let mut checks = Vec::new();
    for fields in lists {
        let flag_fields = fields.iter().filter(|f| f.attrs.flags.is_some());
        for flag_field in flag_fields {
            let masks: Vec<&syn::Expr> = fields
                .iter()
                .filter_map(|f| f.attrs.flag.as_ref())
                .filter(|flag| flag.value.field == flag_field.binding)
                .map(|flag| &flag.value.mask)
                .collect();
            let nonzero = masks.iter().map(|m| quote!((#m) != 0));
            let disjoint = masks.iter().enumerate().flat_map(|(i, a)| {
                masks[i + 1..]
                    .iter()
                    .map(move |b| quote!(((#a) & (#b)) == 0))
            });
            let message = format!(
                "the masks of the fields `{}` announces must be non-zero and share no bit",
                flag_field.binding
            );
            checks.push(quote! {
                const _: () = ::core::assert!(true #(&& #nonzero)* #(&& #disjoint)*, #message);
            });
        }
    }
    quote!(#(#checks)*)
}

fn magic_part(container: &Container) -> Option<TokenStream> {
    container
        .magic
        .as_ref()
        .map(|magic| quote!(::core::option::Option::Some(#magic.len())))
}

/// A field's width when it is the same for every value, as an `Option<usize>` expression.
fn width(field: &Field) -> TokenStream {
    let (some, none) = (quote!(::core::option::Option::Some), names::none());
    let FieldKind::Wire(wire) = &field.kind else {
        return quote!(#some(0));
    };
    if wire.presence.is_some() || wire.len.is_some() {
        return none;
    }
    match &wire.body {
        Body::Number { size: n, .. } => {
            let n = size(*n);
            quote!(#some(#n))
        }
        Body::Bool => quote!(#some(1)),
        Body::Uuid { .. } => quote!(#some(16)),
        Body::ByteArray => {
            let ty = &field.ty;
            quote!(#some(::core::mem::size_of::<#ty>()))
        }
        Body::Bits { ty, .. } => {
            let flags = names::flags_trait();
            quote!(#some(::core::mem::size_of::<<#ty as #flags>::Bits>()))
        }
        Body::BitField {
            position, group, ..
        } => {
            let n = size(if *position == 0 { group.size } else { 0 });
            quote!(#some(#n))
        }
        Body::Nested { ty, .. } => {
            let encode = names::encode_trait();
            quote!(<#ty as #encode>::FIXED_LEN)
        }
        Body::Str { .. }
        | Body::Bytes { .. }
        | Body::Dec { .. }
        | Body::Repeat(_)
        | Body::VarInt { .. } => none,
    }
}
