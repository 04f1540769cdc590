//! The body of `Encode::encode`, and the enums' `tag()` method.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::decode::element_with_ctx_in;
use super::{
    bind, computed_locals, encoded_pattern, needs_origin, optional, prefix_type, tag_type,
    ErrorPath, Mode,
};
use crate::wire::ast::{
    BitGroup, Body, Container, Count, Data, Enum, Field, FieldKind, Framing, Len, NestedCtx,
    Presence, Repeat, VariantTag,
};
use crate::wire::attr::{ChecksumSpan, Encoding, IntFraming};
use crate::wire::names;
use crate::wire::types::StrKind;

pub fn container(container: &Container) -> TokenStream {
    let writer = names::writer();
    let ok = names::ok();
    let origin = needs_origin(&container.data).then(|| {
        let origin = names::origin();
        quote!(let #origin: ::core::primitive::usize = #writer.position();)
    });
    let magic = container
        .magic
        .as_ref()
        .map(|magic| quote!(#origin #writer.put_bytes(#magic)?;))
        .or(origin);
    let body = match &container.data {
        Data::Struct(fields) => {
            let pattern = encoded_pattern(quote!(Self), fields);
            let computed = computed_locals(fields, Some(&writer));
            let statements = fields_statements(fields, &writer);
            let checksums = checksums_after(fields, &writer);
            quote! {
                let #pattern = self;
                #computed
                #magic
                #(#statements)*
                #checksums
            }
        }
        Data::Enum(data) => {
            let arms = enum_arms(data, &writer);
            quote! {
                #magic
                match self {
                    #(#arms)*
                }
            }
        }
    };
    quote! {
        #body
        #ok(())
    }
}

fn enum_arms(data: &Enum, w: &Ident) -> Vec<TokenStream> {
    let tag = names::tag();
    let slot = names::length_slot();
    let (begin, end) = match &data.len {
        Some(len) => {
            let prefix = prefix_type(len.prefix);
            let endian = names::endian(len.endian);
            (
                Some(quote!(let #slot = #w.begin_length::<#prefix>(#endian)?;)),
                Some(quote!(#w.end_length(#slot)?;)),
            )
        }
        None => (None, None),
    };
    let err = names::err();
    let mismatch = names::private("variant_mismatch");

    data.variants
        .iter()
        .map(|variant| {
            let ident = &variant.ident;
            match &variant.tag {
                VariantTag::Magic(magic) => {
                    let pattern = encoded_pattern(quote!(Self::#ident), &variant.fields);
                    let computed = computed_locals(&variant.fields, Some(w));
                    let statements = fields_statements(&variant.fields, w);
                    let checksums = checksums_after(&variant.fields, w);
                    quote! {
                        #pattern => {
                            #computed
                            #w.put_bytes(#magic)?;
                            #(#statements)*
                            #checksums
                        }
                    }
                }
                VariantTag::Value(value) => {
                    let head = if data.tag_on_wire {
                        put_tag(data, w, &quote!(#value))
                    } else {
                        quote! {
                            if #tag != #value {
                                return #err(#mismatch(#w));
                            }
                        }
                    };
                    let pattern = encoded_pattern(quote!(Self::#ident), &variant.fields);
                    let computed = computed_locals(&variant.fields, Some(w));
                    let statements = fields_statements(&variant.fields, w);
                    let checksums = checksums_after(&variant.fields, w);
                    quote! {
                        #pattern => {
                            #computed
                            #head
                            #begin
                            #(#statements)*
                            #checksums
                            #end
                        }
                    }
                }
                VariantTag::Other {
                    tag: tag_member,
                    body: body_member,
                    ..
                } => {
                    let kept_tag = names::field("tag");
                    let kept_body = names::field("body");
                    let head = if data.tag_on_wire {
                        put_tag(data, w, &quote!(*#kept_tag))
                    } else {
                        quote! {
                            if #tag != *#kept_tag {
                                return #err(#mismatch(#w));
                            }
                        }
                    };
                    quote! {
                        Self::#ident { #tag_member: #kept_tag, #body_member: #kept_body } => {
                            #head
                            #begin
                            #w.put_bytes(#kept_body)?;
                            #end
                        }
                    }
                }
            }
        })
        .collect()
}

/// Writes an enum's tag on the wire: fixed-width, or a VarInt.
fn put_tag(data: &Enum, w: &Ident, value: &TokenStream) -> TokenStream {
    let tag_ty = tag_type(data.tag_ty);
    match data.tag_ty.size() {
        Some(_) => {
            let endian = names::endian(data.endian);
            quote!(#w.put_number::<#tag_ty>(#value, #endian)?;)
        }
        None => quote!(#w.put_varint::<#tag_ty>(#value)?;),
    }
}

/// The body of the generated `tag()` method, or for an enum chosen by magic of `magic()`.
pub fn tag_method(data: &Enum) -> TokenStream {
    let arms = data.variants.iter().map(|variant| {
        let ident = &variant.ident;
        match &variant.tag {
            VariantTag::Value(value) => quote!(Self::#ident { .. } => #value,),
            VariantTag::Magic(magic) => {
                let magic = super::decode::magic_bytes(magic);
                quote!(Self::#ident { .. } => #magic,)
            }
            VariantTag::Other { tag, .. } => {
                let kept = names::field("tag");
                quote!(Self::#ident { #tag: #kept, .. } => *#kept,)
            }
        }
    });
    quote! {
        match self {
            #(#arms)*
        }
    }
}

/// One block of statements per field, except that consecutive fixed-width fields (numbers and
/// bools, outside any frame or condition) are written together: one bounds check for the run
/// (`Writer::fixed`), each field at a constant offset in it. When the run does not fit, the
/// fields are written one by one as usual, so the error still names the field that did not.
fn fields_statements(fields: &[Field], w: &Ident) -> Vec<TokenStream> {
    let one_by_one = |range: std::ops::Range<usize>| {
        fields[range]
            .iter()
            .filter_map(|field| field_statements(field, w, fields))
    };
    let mut out = Vec::new();
    let mut at = 0;
    for run in super::runs(fields, |field| fixed_width(field).is_some()) {
        out.extend(one_by_one(at..run.start));
        out.push(fixed_run(&fields[run.clone()], w, fields));
        at = run.end;
    }
    out.extend(one_by_one(at..fields.len()));
    out
}

/// The width on the wire of a field written as a plain fixed-width number or bool.
fn fixed_width(field: &Field) -> Option<usize> {
    let wire = field.wire()?;
    if wire.presence.is_some() || wire.len.is_some() || wire.checksum.is_some() {
        return None;
    }
    match &wire.body {
        Body::Number { size, .. } => Some(*size),
        Body::Bool => Some(1),
        _ => None,
    }
}

/// Fixed-width fields written into one claimed array, or one by one when it does not fit.
fn fixed_run(run: &[Field], w: &Ident, fields: &[Field]) -> TokenStream {
    let total = super::size(run.iter().filter_map(fixed_width).sum());
    let bytes = names::fixed_run();
    let mut offset = 0;
    let writes = run.iter().map(|field| {
        let width = fixed_width(field).unwrap_or(0);
        let (start, end) = (super::size(offset), super::size(offset + width));
        offset += width;
        let local = &field.local;
        match field.wire().map(|wire| &wire.body) {
            Some(Body::Number { ty, endian, .. }) => {
                let endian = names::endian(*endian);
                quote! {
                    #bytes[#start..#end].copy_from_slice(
                        ::core::convert::AsRef::<[::core::primitive::u8]>::as_ref(
                            &<#ty as ::query_wire::Number>::to_bytes(*#local, #endian),
                        ),
                    );
                }
            }
            _ => {
                let from = names::from();
                quote!(#bytes[#start] = #from(*#local);)
            }
        }
    });
    let one_by_one = run
        .iter()
        .filter_map(|field| field_statements(field, w, fields));
    let (some, none) = (names::some(), names::none());
    quote! {
        match #w.fixed::<#total>() {
            #some(#bytes) => {
                #(#writes)*
            }
            #none => {
                #(#one_by_one)*
            }
        }
    }
}

/// The statements writing one field.
fn field_statements(field: &Field, w: &Ident, fields: &[Field]) -> Option<TokenStream> {
    let FieldKind::Wire(wire) = &field.kind else {
        return None;
    };
    let path = ErrorPath::of(field);
    let local = &field.local;
    if let Some(checksum) = wire.checksum {
        return Some(checksum_field(
            field,
            checksum.span,
            checksum.endian,
            w,
            &path,
        ));
    }
    let Some(presence) = &wire.presence else {
        return Some(framed(
            wire.len.as_ref(),
            &wire.body,
            &quote!(#local),
            w,
            &path,
            fields,
        ));
    };
    let present = names::present();
    let bool = names::bool();
    let inner = names::inner();
    let write = framed(
        wire.len.as_ref(),
        &wire.body,
        &quote!(#inner),
        w,
        &path,
        fields,
    );
    let (some, none) = (names::some(), names::none());
    let Presence::When(when) = presence else {
        // `trailing` (the last field) and `if_next`: written when there is one, as a decoder
        // reads it when bytes are left or when they start with the marker the value writes.
        return Some(quote! {
            if let #some(#inner) = #local {
                #write
            }
        });
    };
    let condition = bind(when, fields, Mode::Encode);
    let mismatch = names::private("presence_mismatch");
    let fail = path.fail(quote!(#mismatch(#w)));
    Some(quote! {
        let #present: #bool = #condition;
        match #local {
            #some(#inner) if #present => {
                #write
            }
            #none if !#present => {}
            _ => #fail,
        }
    })
}

/// A `crc32` field: the checksum of the container's bytes so far (`before`), or zeros that
/// [`checksums_after`] fills in once the bytes after the field are written (`after`).
fn checksum_field(
    field: &Field,
    span: ChecksumSpan,
    endian: crate::wire::attr::Endian,
    w: &Ident,
    path: &ErrorPath,
) -> TokenStream {
    let endian = names::endian(endian);
    match span {
        ChecksumSpan::Before => {
            let (crc32, written_since) = (names::private("crc32"), names::private("written_since"));
            let origin = names::origin();
            let put = path.try_(quote!(#w.put_number::<::core::primitive::u32>(
                #crc32(#written_since(#w, #origin)),
                #endian,
            )));
            quote!(#put;)
        }
        ChecksumSpan::After => {
            let at = names::checksum_at(&field.local.to_string());
            let put = path.try_(quote!(#w.put_number::<::core::primitive::u32>(0, #endian)));
            quote! {
                let #at: ::core::primitive::usize = #w.position();
                #put;
            }
        }
    }
}

/// After the last field: each `crc32(after)` field's checksum of the bytes written after it.
fn checksums_after(fields: &[Field], w: &Ident) -> TokenStream {
    let (crc32, written_since) = (names::private("crc32"), names::private("written_since"));
    let patches = fields.iter().filter_map(|field| {
        let checksum = field.wire()?.checksum?;
        if checksum.span != ChecksumSpan::After {
            return None;
        }
        let at = names::checksum_at(&field.local.to_string());
        let endian = names::endian(checksum.endian);
        let path = ErrorPath::of(field);
        let put = path.try_(quote!(#w.put_number_at::<::core::primitive::u32>(
            #at,
            #crc32(#written_since(#w, #at + 4)),
            #endian,
        )));
        Some(quote!(#put;))
    });
    quote!(#(#patches)*)
}

/// Statements writing `value` (an expression of type `&T`), inside its `len(...)` frame.
fn framed(
    len: Option<&Len>,
    body: &Body,
    value: &TokenStream,
    w: &Ident,
    path: &ErrorPath,
    fields: &[Field],
) -> TokenStream {
    let write = self::write(body, value, w, path, fields);
    let Some(len) = len else {
        return write;
    };
    let prefix = prefix_type(len.prefix);
    let endian = names::endian(len.endian);
    let includes = len.includes.as_ref();
    if len.prefix.size().is_none() {
        // A variable-width prefix is written before the value, from its exact encoded
        // length.
        let body_len = names::body_len();
        let counted = super::len::value(body, value, fields);
        let plus = includes.map(|n| quote!(.saturating_add(#n)));
        let none = names::none();
        let put = path.try_(quote!(#w.put_length::<#prefix>(#body_len #plus, #endian, #none)));
        let start = names::element_start();
        let disagrees = names::private("encoded_len_disagrees");
        let fail = path.fail(quote!(#disagrees(#w)));
        return quote! {
            let #body_len: ::core::primitive::usize = #counted;
            #put;
            let #start = #w.position();
            #write
            if #w.position() - #start != #body_len {
                #fail;
            }
        };
    }
    let slot = names::length_slot();
    let begin = path.try_(quote!(#w.begin_length::<#prefix>(#endian)));
    let end = match includes {
        Some(n) => path.try_(quote!(#w.end_length_including(#slot, #n))),
        None => path.try_(quote!(#w.end_length(#slot))),
    };
    quote! {
        let #slot = #begin;
        #write
        #end;
    }
}

/// A bit field: refused when its value does not fit its bits; the group's last field writes
/// the integer the group shares, from every member's local.
#[allow(clippy::too_many_arguments)]
fn bit_field(
    ty: &syn::Type,
    is_bool: bool,
    width: u32,
    position: usize,
    group: &BitGroup,
    v: &TokenStream,
    w: &Ident,
    path: &ErrorPath,
) -> TokenStream {
    let fits = (!is_bool && width < type_bits(ty)).then(|| {
        let out_of_range = names::private("bits_out_of_range");
        let fail = path.fail(quote!(#out_of_range(#w, *#v as ::core::primitive::u64)));
        quote! {
            if (*#v >> #width) != 0 {
                #fail;
            }
        }
    });
    if position + 1 < group.members.len() {
        return quote!(#fits);
    }
    let storage = names::bit_storage(group.size);
    let parts = group.members.iter().map(|member| {
        let (local, shift) = (&member.local, member.shift);
        quote!(((*#local as #storage) << #shift))
    });
    let endian = names::endian(group.endian);
    // A buffer too small for the integer is reported at the group's first field.
    let path = ErrorPath {
        field: group.members[0].path.clone(),
        element: path.element,
    };
    let put = path.try_(quote!(#w.put_number::<#storage>(0 #(| #parts)*, #endian)));
    quote! {
        #fits
        #put;
    }
}

/// The width in bits of an unsigned integer type.
fn type_bits(ty: &syn::Type) -> u32 {
    match crate::wire::types::shape(ty) {
        crate::wire::types::Shape::Number(size) => (size * 8) as u32,
        _ => 1,
    }
}

fn write(
    body: &Body,
    v: &TokenStream,
    w: &Ident,
    path: &ErrorPath,
    fields: &[Field],
) -> TokenStream {
    let call = match body {
        Body::Number { ty, endian, .. } => {
            let endian = names::endian(*endian);
            quote!(#w.put_number::<#ty>(*#v, #endian))
        }
        Body::Bool => {
            let from = names::from();
            quote!(#w.put_u8(#from(*#v)))
        }
        Body::BitField {
            ty,
            is_bool,
            width,
            position,
            group,
        } => return bit_field(ty, *is_bool, *width, *position, group, v, w, path),
        Body::VarInt {
            ty,
            framing: IntFraming::Leb128,
        } => quote!(#w.put_varint::<#ty>(*#v)),
        Body::VarInt {
            ty,
            framing: IntFraming::Packed,
        } => quote!(#w.put_packed_int::<#ty>(*#v)),
        Body::ByteArray => quote!(#w.put_bytes(#v)),
        Body::Uuid { endian } => {
            let endian = names::endian(*endian);
            quote!(#w.put_uuid(#v, #endian))
        }
        Body::Bits { ty, endian } => {
            let flags = names::flags_trait();
            let endian = names::endian(*endian);
            quote!(#w.put_number::<<#ty as #flags>::Bits>(<#ty as #flags>::bits(#v), #endian))
        }
        Body::Str {
            kind: StrKind::Raw,
            framing,
            ..
        } => bytes(framing, &quote!(#v.as_bytes()), w),
        Body::Str {
            framing, encoding, ..
        } => {
            let encoding_path = names::encoding(*encoding);
            match &**framing {
                Framing::Prefix {
                    prefix,
                    endian,
                    max,
                } if *encoding == Encoding::Utf8 => {
                    let prefix = prefix_type(*prefix);
                    let endian = names::endian(*endian);
                    let max = optional(max.as_ref());
                    quote!(#w.put_prefixed_bytes::<#prefix>(#v.as_bytes(), #endian, #max))
                }
                Framing::Prefix {
                    prefix,
                    endian,
                    max,
                } => {
                    let prefix = prefix_type(*prefix);
                    let endian = names::endian(*endian);
                    let max = optional(max.as_ref());
                    quote!(#w.put_prefixed_text::<#prefix>(#v, #endian, #max, #encoding_path))
                }
                Framing::Rest { max } => {
                    let max = optional(max.as_ref());
                    quote!(#w.put_rest_text(#v, #max, #encoding_path))
                }
                Framing::Nul { max } => {
                    let max = optional(max.as_ref());
                    quote!(#w.put_nul_text(#v, #max, #encoding_path))
                }
                Framing::Until {
                    end, max, consume, ..
                } => {
                    let max = optional(max.as_ref());
                    let put = put_until_method("text", *consume);
                    quote!(#w.#put(#v, #end, #max, #encoding_path))
                }
                Framing::Quoted { max } => {
                    let max = optional(max.as_ref());
                    quote!(#w.put_quoted_text(#v, #max, #encoding_path))
                }
            }
        }
        Body::Bytes { framing, .. } => bytes(framing, v, w),
        Body::Dec { framing, .. } => {
            let buf = names::private("DecimalBuf");
            let text = bytes(framing, &quote!(#buf::new(#v).as_bytes()), w);
            quote!(#text)
        }
        Body::Nested { ctx, .. } => {
            let encode = names::encode_trait();
            let ctx = match ctx {
                NestedCtx::Unit | NestedCtx::Each { .. } => quote!(()),
                NestedCtx::Expr(scoped) => bind(scoped, fields, Mode::Encode),
            };
            quote!(#encode::encode(#v, #w, #ctx))
        }
        Body::Repeat(repeat) => return self::repeat(repeat, v, w, path, fields),
    };
    let statement = path.try_(call);
    quote!(#statement;)
}

/// The `Writer` method of an `until` framing (`put_until_bytes`, which writes the terminator)
/// or a `before` one (`put_before_bytes`, which leaves it to the next field).
fn put_until_method(what: &str, consume: bool) -> Ident {
    let word = if consume { "until" } else { "before" };
    Ident::new(
        &format!("put_{word}_{what}"),
        proc_macro2::Span::call_site(),
    )
}

/// A byte slice expression framed by a prefix or running to the end.
fn bytes(framing: &Framing, slice: &TokenStream, w: &Ident) -> TokenStream {
    match framing {
        Framing::Prefix {
            prefix,
            endian,
            max,
        } => {
            let prefix = prefix_type(*prefix);
            let endian = names::endian(*endian);
            let max = optional(max.as_ref());
            quote!(#w.put_prefixed_bytes::<#prefix>(#slice, #endian, #max))
        }
        Framing::Rest { max } => {
            let max = optional(max.as_ref());
            quote!(#w.put_rest_bytes(#slice, #max))
        }
        Framing::Nul { max } => {
            let max = optional(max.as_ref());
            quote!(#w.put_nul_bytes(#slice, #max))
        }
        Framing::Until {
            end, max, consume, ..
        } => {
            let max = optional(max.as_ref());
            let put = put_until_method("bytes", *consume);
            quote!(#w.#put(#slice, #end, #max))
        }
        Framing::Quoted { max } => {
            let max = optional(max.as_ref());
            quote!(#w.put_quoted_bytes(#slice, #max))
        }
    }
}

fn repeat(
    repeat: &Repeat,
    v: &TokenStream,
    w: &Ident,
    path: &ErrorPath,
    fields: &[Field],
) -> TokenStream {
    let (count, index, element) = (names::count(), names::index(), names::element());
    let (items, usize) = (names::items_trait(), names::usize());
    let len = names::element_count();
    let max = optional(repeat.max_count.as_ref());
    let too_many = names::private("too_many_on_encode");
    let check_max = repeat.max_count.as_ref().map(|max| {
        let fail = path.fail(quote!(#too_many(#w, #len, #max)));
        quote!(if #len > #max { #fail; })
    });
    let check_min = repeat.min_count.as_ref().map(|least| {
        let too_few = names::private("too_few_on_encode");
        let fail = path.fail(quote!(#too_few(#w, #len, #least)));
        quote!(if #len < #least { #fail; })
    });
    let head = match &repeat.count {
        Count::Prefix { prefix, endian } => {
            let prefix = prefix_type(*prefix);
            let endian = names::endian(*endian);
            let put = path.try_(quote!(#w.put_length::<#prefix>(#len, #endian, #max)));
            quote!(#put;)
        }
        Count::Expr(scoped) => {
            let into_count = names::into_count();
            let expr = bind(scoped, fields, Mode::Encode);
            let mismatch = names::private("count_mismatch");
            let fail = path.fail(quote!(#mismatch(#w, #count, #len)));
            quote! {
                let #count: #usize = #into_count(#expr);
                if #len != #count { #fail; }
                #check_max
            }
        }
        Count::UntilEnd | Count::UntilNul { .. } | Count::Until { .. } => quote!(#check_max),
    };
    let (element_ctx_let, element_body) =
        element_with_ctx_in(&repeat.element, fields, Mode::Encode);
    let write_element = write(&element_body, &quote!(#element), w, &path.element(), fields);
    let (ok, result) = (names::ok(), names::result_type());
    let (write_element, tail) = match &repeat.count {
        Count::UntilNul { .. } => until_nul_parts(w, path, write_element),
        Count::Until { end, consume, .. } => until_parts(w, path, write_element, end, *consume),
        _ => (write_element, None),
    };
    quote! {
        let #len: #usize = #items::count(#v);
        #check_min
        #head
        #element_ctx_let
        #items::try_for_each(#v, |#index: #usize, #element| -> #result<()> {
            #write_element
            #ok(())
        })?;
        #tail
    }
}

/// `until_nul`: each element checked not to begin with the NUL that would end the list on
/// decode, and the NUL written after the last.
fn until_nul_parts(
    w: &Ident,
    path: &ErrorPath,
    write_element: TokenStream,
) -> (TokenStream, Option<TokenStream>) {
    let start = names::element_start();
    let check = names::private("check_nul_element");
    let checked = path.element().try_(quote!(#check(#w, #start)));
    let element = quote! {
        let #start = #w.position();
        #write_element
        #checked;
    };
    let put = path.try_(quote!(#w.put_u8(0)));
    (element, Some(quote!(#put;)))
}

/// `until` and `before`: each element checked not to begin with the terminator that would
/// end the list on decode; for `until`, the terminator written after the last.
fn until_parts(
    w: &Ident,
    path: &ErrorPath,
    write_element: TokenStream,
    end: &syn::Expr,
    consume: bool,
) -> (TokenStream, Option<TokenStream>) {
    let start = names::element_start();
    let check = names::private("check_until_element");
    let checked = path.element().try_(quote!(#check(#w, #start, #end)));
    let element = quote! {
        let #start = #w.position();
        #write_element
        #checked;
    };
    let tail = consume.then(|| {
        let terminator = quote!(::query_wire::Terminator::end_bytes(&#end));
        let put = path.try_(quote!(#w.put_bytes(#terminator)));
        quote!(#put;)
    });
    (element, tail)
}
