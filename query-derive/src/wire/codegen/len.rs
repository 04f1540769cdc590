//! The body of `Encode::encoded_len`: the exact byte count `encode` writes.

use proc_macro2::TokenStream;
use quote::quote;

use super::decode::element_with_ctx_in;
use super::{bind, computed_locals, encoded_pattern, prefix_width, size, Mode};
use crate::wire::ast::{
    Body, Container, Count, Data, Field, FieldKind, Framing, NestedCtx, Repeat, VariantTag,
};
use crate::wire::attr::{Encoding, IntFraming};
use crate::wire::names;
use crate::wire::types::StrKind;

pub fn container(container: &Container) -> TokenStream {
    let magic = container.magic.as_ref().map(|magic| quote!(#magic.len()));
    match &container.data {
        Data::Struct(fields) => {
            let pattern = encoded_pattern(quote!(Self), fields);
            let computed = computed_locals(fields, None);
            let parts = magic.into_iter().chain(fields_parts(fields));
            let sum = sum(parts);
            quote! {
                let #pattern = self;
                #computed
                #sum
            }
        }
        Data::Enum(data) => {
            // A VarInt tag's width depends on its value; a TLV length is fixed-width (`check`).
            let tag_size = |value: TokenStream| {
                data.tag_on_wire.then(|| match data.tag_ty.size() {
                    Some(n) => {
                        let n = size(n);
                        quote!(#n)
                    }
                    None => quote!(::query_wire::VarIntValue::varint_len(#value)),
                })
            };
            let len_size = data.len.as_ref().map(|len| {
                let n = size(len.prefix.size().unwrap_or(0));
                quote!(#n)
            });
            let arms = data.variants.iter().map(|variant| {
                let ident = &variant.ident;
                match &variant.tag {
                    VariantTag::Magic(magic) => {
                        let head = super::decode::magic_bytes(magic);
                        let pattern = encoded_pattern(quote!(Self::#ident), &variant.fields);
                        let computed = computed_locals(&variant.fields, None);
                        let sum = sum([quote!(#head.len())]
                            .into_iter()
                            .chain(fields_parts(&variant.fields)));
                        quote!(#pattern => { #computed #sum },)
                    }
                    VariantTag::Value(value) => {
                        let tag_ty = super::tag_type(data.tag_ty);
                        let tag = names::tag();
                        let head = tag_size(quote!({ let #tag: #tag_ty = #value; #tag }))
                            .into_iter()
                            .chain(len_size.clone());
                        let pattern = encoded_pattern(quote!(Self::#ident), &variant.fields);
                        let computed = computed_locals(&variant.fields, None);
                        let sum = sum(head.chain(fields_parts(&variant.fields)));
                        quote!(#pattern => { #computed #sum },)
                    }
                    VariantTag::Other { tag, body, .. } => {
                        let kept = names::field("body");
                        let kept_tag = names::field("tag");
                        let head = tag_size(quote!(*#kept_tag))
                            .into_iter()
                            .chain(len_size.clone());
                        let sum = sum(head.chain([quote!(#kept.len())]));
                        // Only a VarInt tag's width needs the kept tag.
                        let tag_binding = data
                            .tag_ty
                            .size()
                            .is_none()
                            .then(|| quote!(#tag: #kept_tag,));
                        quote!(Self::#ident { #tag_binding #body: #kept, .. } => #sum,)
                    }
                }
            });
            let body = quote!(match self { #(#arms)* });
            match magic {
                Some(magic) => quote!(#magic + #body),
                None => body,
            }
        }
    }
}

fn sum(parts: impl Iterator<Item = TokenStream>) -> TokenStream {
    let mut parts: Vec<TokenStream> = parts.collect();
    if parts.is_empty() {
        return quote!(0);
    }
    // A tail expression that starts with `match` or a block would be read as a statement.
    if parts.len() > 1 && starts_statement_like(&parts[0]) {
        let first = &parts[0];
        parts[0] = quote!((#first));
    }
    quote!(#(#parts)+*)
}

fn starts_statement_like(tokens: &TokenStream) -> bool {
    match tokens.clone().into_iter().next() {
        Some(proc_macro2::TokenTree::Ident(ident)) => ident == "match",
        Some(proc_macro2::TokenTree::Group(group)) => {
            group.delimiter() == proc_macro2::Delimiter::Brace
        }
        _ => false,
    }
}

fn fields_parts(fields: &[Field]) -> impl Iterator<Item = TokenStream> + '_ {
    fields.iter().filter_map(move |field| {
        let FieldKind::Wire(wire) = &field.kind else {
            return None;
        };
        let local = &field.local;
        let framed = |value: TokenStream| {
            let inner = self::value(&wire.body, &value, fields);
            match &wire.len {
                Some(len) => {
                    let includes = len.includes.as_ref().map(|n| quote!(+ (#n)));
                    match len.prefix.size() {
                        Some(n) => {
                            let n = size(n);
                            quote!(#n + #inner)
                        }
                        None => {
                            let body_len = names::body_len();
                            let width =
                                prefix_width(len.prefix, &quote!(#body_len #includes));
                            quote!({ let #body_len: ::core::primitive::usize = #inner; #width + #body_len })
                        }
                    }
                }
                None => inner,
            }
        };
        Some(match &wire.presence {
            None => framed(quote!(#local)),
            Some(_) => {
                let inner = names::inner();
                let (some, none) = (names::some(), names::none());
                let present = framed(quote!(#inner));
                quote!(match #local { #some(#inner) => #present, #none => 0 })
            }
        })
    })
}

/// The byte count of `v` (an expression of type `&T`).
pub(super) fn value(body: &Body, v: &TokenStream, fields: &[Field]) -> TokenStream {
    if let Some(n) = fixed_size(body) {
        return n;
    }
    match body {
        Body::ByteArray => quote!(#v.len()),
        Body::Str {
            kind: StrKind::Raw,
            framing,
            ..
        } => framed_len(framing, quote!(#v.as_bytes().len())),
        Body::Str {
            framing, encoding, ..
        } => {
            let len = if *encoding == Encoding::Utf8 {
                quote!(#v.len())
            } else {
                let encoding = names::encoding(*encoding);
                quote!(#encoding.encoded_len(#v))
            };
            framed_len(framing, len)
        }
        Body::Bytes { framing, .. } => framed_len(framing, quote!(#v.len())),
        Body::Dec { framing, .. } => {
            let decimal_len = names::private("decimal_len");
            framed_len(framing, quote!(#decimal_len(#v)))
        }
        Body::Nested { ctx, .. } => {
            let encode = names::encode_trait();
            let ctx = match ctx {
                NestedCtx::Unit | NestedCtx::Each { .. } => quote!(()),
                NestedCtx::Expr(scoped) => bind(scoped, fields, Mode::Encode),
            };
            quote!(#encode::encoded_len(#v, #ctx))
        }
        Body::Repeat(repeat) => self::repeat(repeat, v, fields),
        Body::VarInt {
            framing: IntFraming::Leb128,
            ..
        } => quote!(::query_wire::VarIntValue::varint_len(*#v)),
        Body::VarInt {
            framing: IntFraming::Packed,
            ..
        } => quote!(::query_wire::PackedIntValue::packed_len(*#v)),
        Body::Number { .. }
        | Body::Bool
        | Body::Uuid { .. }
        | Body::Bits { .. }
        | Body::BitField { .. } => {
            unreachable!("fixed-size bodies are handled above")
        }
    }
}

/// The size of a body that is the same for every value.
fn fixed_size(body: &Body) -> Option<TokenStream> {
    match body {
        Body::Number { size: n, .. } => {
            let n = size(*n);
            Some(quote!(#n))
        }
        Body::Bool => Some(quote!(1)),
        Body::Uuid { .. } => Some(quote!(16)),
        // The group's integer is counted once, with its first field.
        Body::BitField {
            position, group, ..
        } => {
            let n = size(if *position == 0 { group.size } else { 0 });
            Some(quote!(#n))
        }
        Body::Bits { ty, .. } => {
            let flags = names::flags_trait();
            Some(quote!(::core::mem::size_of::<<#ty as #flags>::Bits>()))
        }
        _ => None,
    }
}

fn framed_len(framing: &Framing, content: TokenStream) -> TokenStream {
    match framing {
        Framing::Prefix { prefix, .. } => match prefix.size() {
            Some(n) => {
                let n = size(n);
                quote!(#n + #content)
            }
            None => {
                let body_len = names::body_len();
                let width = prefix_width(*prefix, &quote!(#body_len));
                quote!({ let #body_len: ::core::primitive::usize = #content; #width + #body_len })
            }
        },
        Framing::Rest { .. } => content,
        Framing::Nul { .. } => quote!(1 + #content),
        Framing::Until {
            end, consume: true, ..
        } => {
            quote!(::query_wire::Terminator::end_len(&#end) + #content)
        }
        Framing::Until { consume: false, .. } => content,
        Framing::Quoted { .. } => quote!(2 + #content),
    }
}

fn repeat(repeat: &Repeat, v: &TokenStream, fields: &[Field]) -> TokenStream {
    let prefix = match &repeat.count {
        Count::Prefix { prefix, .. } => {
            let items = names::items_trait();
            let n = prefix_width(*prefix, &quote!(#items::count(#v)));
            Some(quote!(#n +))
        }
        Count::Expr(_) | Count::UntilEnd => None,
        // The closing NUL.
        Count::UntilNul { .. } => Some(quote!(1 +)),
        Count::Until {
            end, consume: true, ..
        } => Some(quote!(::query_wire::Terminator::end_len(&#end) +)),
        Count::Until { consume: false, .. } => None,
    };
    let items = names::items_trait();
    if let Some(each) = fixed_size(&repeat.element) {
        return quote!(#prefix #items::count(#v) * #each);
    }
    let (total, index, element) = (names::total(), names::index(), names::element());
    let (element_ctx_let, element_body) =
        element_with_ctx_in(&repeat.element, fields, Mode::Encode);
    let each = value(&element_body, &quote!(#element), fields);
    let usize = names::usize();
    quote!(#prefix {
        let mut #total: #usize = 0;
        #element_ctx_let
        #items::for_each(#v, |#index: #usize, #element| {
            #total += #each;
        });
        #total
    })
}
