//! The bodies of `Decode::decode` and `Decode::decode_whole` (which `decode_exact` calls).

use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;
use syn::{Expr, Lifetime};

use super::{bind, needs_origin, optional, prefix_type, size, tag_type, ErrorPath, Mode};
use crate::wire::ast::{
    Body, Container, Count, Data, Enum, Field, FieldKind, Framing, Len, NestedCtx, Presence,
    Repeat, VariantTag,
};
use crate::wire::attr::{ChecksumSpan, Endian, IntFraming, Surplus};
use crate::wire::names;
use crate::wire::types::{BytesKind, StrKind};

/// Whether the generated function is `decode` or `decode_whole`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// `decode`: the value may end anywhere.
    Value,
    /// `decode_whole`: the reader must be empty after the value. The check comes after the
    /// last field is read and before the value is assembled (see [`construct`]).
    End,
}

pub fn container(container: &Container, lifetime: &Lifetime, until: Until) -> TokenStream {
    let reader = names::reader();
    let ok = names::ok();
    let origin = needs_origin(&container.data).then(|| {
        let (origin, origin_at) = (names::origin(), names::origin_at());
        quote! {
            let #origin: &#lifetime [::core::primitive::u8] = #reader.peek_rest();
            let #origin_at: ::core::primitive::usize = #reader.offset();
        }
    });
    let magic = container
        .magic
        .as_ref()
        .map(|magic| quote!(#origin #reader.magic(#magic)?;))
        .or(origin);
    match &container.data {
        Data::Struct(fields) => {
            let must_end = must_end(until, &reader);
            let (lets, value) = construct(quote!(Self), fields, &reader, lifetime, &must_end);
            quote! {
                #magic
                #(#lets)*
                #ok(#value)
            }
        }
        Data::Enum(data) => {
            let body = enumeration(data, &reader, lifetime, until);
            quote! {
                #magic
                #body
            }
        }
    }
}

/// The reader that must be empty after the fields: the input in `decode_whole`.
fn must_end(until: Until, reader: &Ident) -> Vec<Ident> {
    match until {
        Until::Value => Vec::new(),
        Until::End => vec![reader.clone()],
    }
}

fn enumeration(data: &Enum, reader: &Ident, lifetime: &Lifetime, until: Until) -> TokenStream {
    if data.by_magic {
        return by_magic(data, reader, lifetime, until);
    }
    let tag = names::tag();
    let tag_ty = tag_type(data.tag_ty);
    let tag_offset = names::tag_offset();
    let endian = names::endian(data.endian);
    let has_other = data
        .variants
        .iter()
        .any(|v| matches!(v.tag, VariantTag::Other { .. }));

    let read_tag = if data.tag_on_wire {
        let offset = (!has_other).then(|| quote!(let #tag_offset = #reader.offset();));
        let read = match data.tag_ty.size() {
            Some(_) => quote!(#reader.number::<#tag_ty>(#endian)?),
            None => quote!(#reader.varint::<#tag_ty>()?),
        };
        quote! {
            #offset
            let #tag: #tag_ty = #read;
        }
    } else {
        // An external tag is the context parameter; an unknown one is reported where the
        // body would start.
        let offset = (!has_other).then(|| quote!(let #tag_offset = #reader.offset();));
        quote!(#offset)
    };

    let (frame, body_reader, surplus) = match &data.len {
        Some(len) => {
            let (frame, body_reader) =
                sub_reader(len, reader, &ErrorPath::none(), names::variant_body());
            let sub = names::sub_reader();
            let surplus = (len.surplus == Surplus::Error).then_some(sub);
            (frame, body_reader, surplus)
        }
        None => (TokenStream::new(), reader.clone(), None),
    };

    // Every arm returns its own `Ok(..)`, so the value is built where the caller wants it
    // instead of being moved out of a temporary.
    let must_end: Vec<Ident> = surplus.into_iter().chain(must_end(until, reader)).collect();
    let ok = names::ok();
    let mut arms = Vec::new();
    let mut other_arm = None;
    for variant in &data.variants {
        let ident = &variant.ident;
        match &variant.tag {
            VariantTag::Value(value) => {
                let (lets, constructed) = construct(
                    quote!(Self::#ident),
                    &variant.fields,
                    &body_reader,
                    lifetime,
                    &must_end,
                );
                let pattern = tag_pattern(value, &tag);
                arms.push(quote! {
                    #pattern => {
                        #(#lets)*
                        #ok(#constructed)
                    }
                });
            }
            VariantTag::Magic(_) => {
                unreachable!("an enum chosen by magic is decoded by `by_magic`")
            }
            VariantTag::Other {
                tag: tag_member,
                body: body_member,
                body_kind,
            } => {
                // The body runs to the end of its frame, so nothing is left for a surplus.
                let rest = match body_kind {
                    BytesKind::Borrowed => quote!(#body_reader.rest()),
                    BytesKind::Converted => {
                        let from = names::from();
                        quote!(#from(#body_reader.rest()))
                    }
                };
                let arm = if must_end.is_empty() {
                    quote!(#ok(Self::#ident { #tag_member: #tag, #body_member: #rest }))
                } else {
                    let value = names::value();
                    let constructed =
                        quote!(Self::#ident { #tag_member: #tag, #body_member: #value });
                    let checks = end_checks(&must_end, &constructed);
                    quote!({
                        let #value = #rest;
                        #checks
                        #ok(#constructed)
                    })
                };
                other_arm = Some(quote!(_ => #arm));
            }
        }
    }
    let fallback = other_arm.unwrap_or_else(|| {
        let err = names::err();
        let unknown = names::private("unknown_tag");
        quote!(_ => #err(#unknown(#tag, #tag_offset)))
    });
    quote! {
        #read_tag
        #frame
        match #tag {
            #(#arms)*
            #fallback
        }
    }
}

/// An enum whose variants are chosen by their magic: the first variant whose magic starts
/// the rest of the input is selected (and its magic consumed) by one runtime call, which
/// reports input that starts no variant at the first byte none accepts; then that variant's
/// fields are read.
fn by_magic(data: &Enum, reader: &Ident, lifetime: &Lifetime, until: Until) -> TokenStream {
    let index = names::tag();
    let select = names::private("select_magic");
    let magics = data.variants.iter().map(|variant| match &variant.tag {
        VariantTag::Magic(magic) => magic_bytes(magic),
        _ => unreachable!("every variant of an enum chosen by magic has one (`check`)"),
    });
    let must_end = must_end(until, reader);
    let ok = names::ok();
    let last = data.variants.len().saturating_sub(1);
    let arms = data.variants.iter().enumerate().map(|(i, variant)| {
        let ident = &variant.ident;
        let (lets, constructed) = construct(
            quote!(Self::#ident),
            &variant.fields,
            reader,
            lifetime,
            &must_end,
        );
        // The last variant is the only index left, so the match needs no unreachable arm.
        let pattern = if i == last {
            quote!(_)
        } else {
            let i = Literal::usize_unsuffixed(i);
            quote!(#i)
        };
        quote! {
            #pattern => {
                #(#lets)*
                #ok(#constructed)
            }
        }
    });
    quote! {
        let #index: ::core::primitive::usize = #select(#reader, &[#(#magics),*])?;
        match #index {
            #(#arms)*
        }
    }
}

/// A magic (a byte string literal or a constant of `&[u8]` or `&[u8; N]`) as `&'static [u8]`.
pub fn magic_bytes(magic: &Expr) -> TokenStream {
    let as_bytes = names::private("magic_bytes");
    quote!(#as_bytes(#magic))
}

/// A literal tag as a pattern; anything else (a constant, an expression) as a guard.
fn tag_pattern(value: &Expr, tag: &Ident) -> TokenStream {
    let literal = match value {
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Int(_)),
        Expr::Unary(unary) => {
            matches!(unary.op, syn::UnOp::Neg(_))
                && matches!(&*unary.expr, Expr::Lit(lit) if matches!(lit.lit, syn::Lit::Int(_)))
        }
        _ => false,
    };
    if literal {
        quote!(#value)
    } else {
        quote!(_ if #tag == #value)
    }
}

/// Decodes the fields and builds the value: `let` statements for the fields that expressions
/// refer to (and those before them, to keep the wire order), then the constructor with the
/// remaining fields decoded in place. Decoding in place lets the compiler build large nested
/// values where they end up instead of moving them out of locals.
///
/// With readers that must be empty after the last field (`must_end`: a TLV frame, the input of
/// `decode_exact`), every field is read into a local, the readers are checked, and only then
/// is the value assembled; see [`end_checks`].
fn construct(
    path: TokenStream,
    fields: &[Field],
    reader: &Ident,
    lifetime: &Lifetime,
    must_end: &[Ident],
) -> (Vec<TokenStream>, TokenStream) {
    let has_computed = fields.iter().any(Field::is_checked);
    let first_in_place = if must_end.is_empty() && !has_computed {
        fields
            .iter()
            .flat_map(used_fields)
            .max()
            .map_or(0, |last_used| last_used + 1)
    } else {
        fields.len()
    };
    let runs = fixed_runs(fields);
    let value_of = |index: usize| {
        let value = field_value(&fields[index], fields, reader, lifetime);
        match &runs[index] {
            Some(slot) => slot.read(reader, value),
            None => value,
        }
    };
    let mut lets: Vec<TokenStream> = runs
        .iter()
        .flatten()
        .filter(|slot| slot.at == 0)
        .map(RunSlot::declare)
        .collect();
    lets.extend(bit_groups(fields));
    lets.extend(
        fields[..first_in_place]
            .iter()
            .enumerate()
            .map(|(index, field)| {
                let (local, ty) = (&field.local, &field.ty);
                let value = value_of(index);
                let offset = field.is_checked().then(|| {
                    let at = names::computed_at(&local.to_string());
                    quote!(let #at = #reader.offset();)
                });
                quote!(#offset let #local: #ty = #value;)
            }),
    );
    lets.extend(computed_checks(fields));
    // The fields decoded in place come first in the constructor: they are evaluated before
    // the locals are moved into it, so their expressions can still borrow them.
    let in_place = (first_in_place..fields.len()).map(|index| {
        let member = &fields[index].member;
        let value = value_of(index);
        quote!(#member: #value)
    });
    let from_locals = fields[..first_in_place].iter().map(|field| {
        let (member, local) = (&field.member, &field.local);
        quote!(#member: #local)
    });
    let inits = in_place.chain(from_locals);
    let constructed = quote!(#path { #(#inits),* });
    if !must_end.is_empty() {
        lets.push(end_checks(must_end, &constructed));
    }
    (lets, constructed)
}

/// A field's place in a run of fixed-width numbers: two or more in a row, outside any frame
/// or condition, read with one bounds check. The run's first field takes all its bytes
/// (`Reader::fixed`), and each field converts its own from a constant offset; when they are
/// not all there, nothing was taken and each field is read on its own as usual, so the error
/// names the field that is missing, at its offset.
struct RunSlot {
    /// The run's bytes, or `None` when they were not all there.
    bytes: Ident,
    /// The run's length and the field's offset and width in it.
    total: usize,
    at: usize,
    width: usize,
    ty: syn::Type,
    endian: Endian,
}

impl RunSlot {
    /// Whether the run is read where it lies in the input rather than copied. A run that fits
    /// a register is copied, and loaded at once; a longer one copied is loaded as a word and
    /// a remainder that the compiler splits with shifts (A2S INFO's nine bytes from the app id
    /// to the VAC byte took 8 instructions more that way), where in place each field is one
    /// load.
    fn in_place(&self) -> bool {
        self.total > 8
    }

    /// `let __run_N: Option<[u8; TOTAL]>;` (`Option<&[u8; TOTAL]>` in place), before the first
    /// field is read.
    fn declare(&self) -> TokenStream {
        let (bytes, total) = (&self.bytes, size(self.total));
        let borrow = self.in_place().then(|| quote!(&));
        quote!(let #bytes: ::core::option::Option<#borrow [::core::primitive::u8; #total]>;)
    }

    /// The field's value from the run's bytes, or `one_by_one` without them.
    fn read(&self, reader: &Ident, one_by_one: TokenStream) -> TokenStream {
        let (bytes, ty) = (&self.bytes, &self.ty);
        let (total, at, width) = (size(self.total), size(self.at), size(self.width));
        let endian = names::endian(self.endian);
        let run_bytes = names::private("run_bytes");
        let (some, none) = (names::some(), names::none());
        let taken = names::local_bytes();
        let (fixed, borrow) = match self.in_place() {
            true => (quote!(fixed_ref), None),
            false => (quote!(fixed), Some(quote!(&))),
        };
        let take = (self.at == 0).then(|| quote!(#bytes = #reader.#fixed::<#total>();));
        quote!({
            #take
            match #bytes {
                #some(#taken) => <#ty as ::query_wire::Number>::from_bytes(
                    #run_bytes::<#at, #width, #total>(#borrow #taken),
                    #endian,
                ),
                #none => #one_by_one,
            }
        })
    }
}

/// Each field's place in a run of fixed-width numbers, if it is in one.
fn fixed_runs(fields: &[Field]) -> Vec<Option<RunSlot>> {
    let width = |field: &Field| {
        let wire = field.wire()?;
        if wire.presence.is_some()
            || wire.len.is_some()
            || wire.computed.is_some()
            || wire.checksum.is_some()
        {
            return None;
        }
        match &wire.body {
            Body::Number { ty, endian, size } => Some((*size, ty.clone(), *endian)),
            _ => None,
        }
    };
    let mut slots: Vec<Option<RunSlot>> = fields.iter().map(|_| None).collect();
    let runs = super::runs(fields, |field| width(field).is_some());
    for (count, run) in runs.into_iter().enumerate() {
        let total = fields[run.clone()]
            .iter()
            .filter_map(|field| width(field).map(|(size, ..)| size))
            .sum();
        let bytes = names::run_bytes(count);
        let mut at = 0;
        for index in run {
            if let Some((size, ty, endian)) = width(&fields[index]) {
                slots[index] = Some(RunSlot {
                    bytes: bytes.clone(),
                    total,
                    at,
                    width: size,
                    ty,
                    endian,
                });
                at += size;
            }
        }
    }
    slots
}

/// The low `width` bits set, as an unsuffixed literal that takes the group's integer type.
pub(super) fn bit_mask(width: u32) -> proc_macro2::Literal {
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    proc_macro2::Literal::u64_unsuffixed(mask)
}

/// `let __bits_N: uM;` for each group of bit fields, assigned when its first field is read.
fn bit_groups(fields: &[Field]) -> impl Iterator<Item = TokenStream> + '_ {
    fields
        .iter()
        .filter_map(|field| match field.wire().map(|w| &w.body) {
            Some(Body::BitField {
                position: 0, group, ..
            }) => {
                let (bits, storage) = (names::bit_group(group.id), names::bit_storage(group.size));
                Some(quote!(let #bits: #storage;))
            }
            _ => None,
        })
}

/// For each computed field: its value must be what its expression makes of the other fields,
/// else the error is at the field's offset.
fn computed_checks(fields: &[Field]) -> impl Iterator<Item = TokenStream> + '_ {
    fields.iter().filter_map(move |field| {
        if !field.is_checked() {
            return None;
        }
        let scoped = field.wire()?.computed.as_ref()?;
        let (local, ty) = (&field.local, &field.ty);
        let at = names::computed_at(&local.to_string());
        let expr = bind(scoped, fields, Mode::Decode);
        let into_wide = quote!(::query_wire::__private::IntoComputed::into_wide);
        let computed = names::private("computed");
        let mismatch = names::private("computed_mismatch");
        let fail = ErrorPath::of(field).fail(quote!(#mismatch(#at)));
        let some = names::some();
        Some(quote! {
            if #computed::<#ty>(#into_wide(#expr)) != #some(#local) {
                #fail;
            }
        })
    })
}

/// For each reader that must be empty: `if` it is not, return `TrailingBytes`, handing the
/// fields read so far (assembled by `constructed`, which moves them out of their locals) to
/// a cold function that drops them.
///
/// Dropping them there rather than where they lie keeps the hot path free of calls that take
/// their address: the locals stay in registers and the value is built straight into its
/// place, as if the check were not there.
fn end_checks(must_end: &[Ident], constructed: &TokenStream) -> TokenStream {
    let err = names::err();
    let trailing = names::private("trailing_bytes");
    let checks = must_end.iter().map(|reader| {
        quote! {
            if !#reader.is_empty() {
                return #err(#trailing(&#reader, #constructed));
            }
        }
    });
    quote!(#(#checks)*)
}

/// The indices of the fields a field's expressions use.
fn used_fields(field: &Field) -> Vec<usize> {
    let FieldKind::Wire(wire) = &field.kind else {
        return Vec::new();
    };
    let mut used = Vec::new();
    if let Some(when) = wire.presence.as_ref().and_then(|p| p.condition()) {
        used.extend(&when.uses);
    }
    let mut body = &wire.body;
    if let Body::Repeat(repeat) = body {
        if let Count::Expr(count) = &repeat.count {
            used.extend(&count.uses);
        }
        body = &repeat.element;
    }
    match body {
        Body::Nested {
            ctx: NestedCtx::Expr(ctx),
            ..
        } => used.extend(&ctx.uses),
        Body::Nested {
            ctx: NestedCtx::Each { body, cycle, .. },
            ..
        } => {
            used.extend(&body.uses);
            if let Some(cycle) = cycle {
                used.extend(&cycle.uses);
            }
        }
        _ => {}
    }
    used
}

/// The expression that decodes one field.
fn field_value(
    field: &Field,
    fields: &[Field],
    reader: &Ident,
    lifetime: &Lifetime,
) -> TokenStream {
    let FieldKind::Wire(wire) = &field.kind else {
        return names::default();
    };
    let path = ErrorPath::of(field);
    let value = framed(
        wire.len.as_ref(),
        &wire.body,
        reader,
        &path,
        fields,
        lifetime,
    );
    if let Some(checksum) = wire.checksum {
        return verified(checksum.span, value, reader, &path);
    }
    let present = names::present();
    let bool = names::bool();
    let condition = match &wire.presence {
        None => return value,
        Some(Presence::When(when)) => bind(when, fields, Mode::Decode),
        Some(Presence::Trailing) => quote!(!#reader.is_empty()),
        Some(Presence::Next(marker)) => {
            let next_is = names::private("next_is");
            quote!(#next_is(&#reader, #marker))
        }
    };
    let (some, none) = (names::some(), names::none());
    quote!({
        let #present: #bool = #condition;
        if #present { #some(#value) } else { #none }
    })
}

/// A `crc32` field's value (`read`), checked against the CRC32 of the bytes it covers: the
/// unread input after it, or its container's bytes before it. A mismatch is an error at the
/// field.
fn verified(
    span: ChecksumSpan,
    read: TokenStream,
    reader: &Ident,
    path: &ErrorPath,
) -> TokenStream {
    let (at, declared, covered) = (names::value(), names::inner(), names::local_bytes());
    let crc32 = names::private("crc32");
    let mismatch = names::private("checksum_mismatch");
    let computed = names::checksum_computed();
    let fail = path.fail(quote!(#mismatch(#at, #declared, #computed)));
    let (before, after) = match span {
        ChecksumSpan::Before => {
            let (origin, origin_at) = (names::origin(), names::origin_at());
            (
                Some(quote!(let #covered = &#origin[..#reader.offset() - #origin_at];)),
                None,
            )
        }
        ChecksumSpan::After => (None, Some(quote!(let #covered = #reader.peek_rest();))),
    };
    quote!({
        let #at = #reader.offset();
        #before
        let #declared: ::core::primitive::u32 = #read;
        #after
        let #computed = #crc32(#covered);
        if #declared != #computed {
            #fail;
        }
        #declared
    })
}

/// A reader bounded by a length prefix: the statements that make it, and its name.
fn sub_reader(len: &Len, reader: &Ident, path: &ErrorPath, name: Ident) -> (TokenStream, Ident) {
    let length = names::length();
    let sub = names::sub_reader();
    let prefix = prefix_type(len.prefix);
    let endian = names::endian(len.endian);
    let none = names::none();
    let read_length = match &len.includes {
        Some(includes) => {
            path.try_(quote!(#reader.length_including::<#prefix>(#endian, #includes)))
        }
        None => path.try_(quote!(#reader.length::<#prefix>(#endian, #none))),
    };
    let take = path.try_(quote!(#reader.sub(#length)));
    let frame = quote! {
        let #length = #read_length;
        let mut #sub = #take;
        let #name = &mut #sub;
    };
    (frame, name)
}

/// The value, inside its `len(...)` frame if it has one.
fn framed(
    len: Option<&Len>,
    body: &Body,
    reader: &Ident,
    path: &ErrorPath,
    fields: &[Field],
    lifetime: &Lifetime,
) -> TokenStream {
    let Some(len) = len else {
        return value(body, reader, path, fields, lifetime);
    };
    let (frame, body_reader) = sub_reader(len, reader, path, names::field_body());
    let inner = value(body, &body_reader, path, fields, lifetime);
    let sub = names::sub_reader();
    let result = names::value();
    if len.surplus == Surplus::Skip {
        return quote!({
            #frame
            #inner
        });
    }
    if let Body::Nested { ty, ctx } = body {
        // `decode_exact` checks the surplus before it assembles the value, so the value is
        // built in its place in the outer value instead of being moved there after the check.
        let call = nested_call(ty, ctx, &body_reader, fields, lifetime, Until::End);
        let value = path.try_(call);
        return quote!({
            #frame
            #value
        });
    }
    let check = path.try_(quote!(#sub.expect_end()));
    quote!({
        #frame
        let #result = #inner;
        #check;
        #result
    })
}

/// `<T as Decode>::decode(r, ctx)` (or `decode_exact`), a `Result`.
fn nested_call(
    ty: &syn::Type,
    ctx: &NestedCtx,
    r: &Ident,
    fields: &[Field],
    lifetime: &Lifetime,
    until: Until,
) -> TokenStream {
    let decode = names::decode_trait();
    let ctx = match ctx {
        NestedCtx::Unit => quote!(()),
        NestedCtx::Expr(scoped) => bind(scoped, fields, Mode::Decode),
        // Only elements of a repeat have a per-element context; `repeat` passes it.
        NestedCtx::Each { .. } => quote!(()),
    };
    let method = match until {
        Until::Value => quote!(decode),
        Until::End => quote!(decode_exact),
    };
    quote!(<#ty as #decode<#lifetime>>::#method(#r, #ctx))
}

fn value(
    body: &Body,
    r: &Ident,
    path: &ErrorPath,
    fields: &[Field],
    lifetime: &Lifetime,
) -> TokenStream {
    match body {
        Body::Number { ty, endian, .. } => {
            let endian = names::endian(*endian);
            path.try_(quote!(#r.number::<#ty>(#endian)))
        }
        Body::Dec { ty, framing } => {
            let offset = names::private("parse_decimal");
            let at = quote!(#r.offset());
            let bytes = bytes(framing, r, path);
            let parsed = path.try_(quote!(#offset::<#ty>(__digits, __at)));
            quote!({
                let __at = #at;
                let __digits = #bytes;
                #parsed
            })
        }
        Body::Bool => path.try_(quote!(#r.bool())),
        Body::BitField {
            ty,
            is_bool,
            width,
            position,
            group,
        } => {
            let (bits, storage) = (names::bit_group(group.id), names::bit_storage(group.size));
            let read = (*position == 0).then(|| {
                let endian = names::endian(group.endian);
                let read = path.try_(quote!(#r.number::<#storage>(#endian)));
                quote!(#bits = #read;)
            });
            let shift = group.members[*position].shift;
            let mask = bit_mask(*width);
            let part = quote!(((#bits >> #shift) & #mask));
            let value = if *is_bool {
                quote!(#part != 0)
            } else {
                quote!(#part as #ty)
            };
            quote!({ #read #value })
        }
        Body::VarInt {
            ty,
            framing: IntFraming::Leb128,
        } => path.try_(quote!(#r.varint::<#ty>())),
        Body::VarInt {
            ty,
            framing: IntFraming::Packed,
        } => path.try_(quote!(#r.packed_int::<#ty>())),
        Body::ByteArray => path.try_(quote!(#r.array())),
        Body::Uuid { endian } => {
            let endian = names::endian(*endian);
            path.try_(quote!(#r.uuid(#endian)))
        }
        Body::Bits { ty, endian } => {
            let flags = names::flags_trait();
            let endian = names::endian(*endian);
            let bits = path.try_(quote!(#r.number::<<#ty as #flags>::Bits>(#endian)));
            quote!(<#ty as #flags>::from_bits_retain(#bits))
        }
        Body::Str {
            kind,
            framing,
            encoding,
        } => {
            let encoding = names::encoding(*encoding);
            match (kind, &**framing) {
                (
                    StrKind::Borrowed,
                    Framing::Prefix {
                        prefix,
                        endian,
                        max,
                    },
                ) => {
                    let (prefix, endian, max) = prefix_args(*prefix, *endian, max.as_ref());
                    path.try_(quote!(#r.prefixed_str::<#prefix>(#endian, #max)))
                }
                (StrKind::Borrowed, Framing::Rest { max }) => {
                    let max = optional(max.as_ref());
                    path.try_(quote!(#r.rest_str(#max)))
                }
                (StrKind::Borrowed, Framing::Nul { max }) => {
                    let max = optional(max.as_ref());
                    path.try_(quote!(#r.nul_str(#max)))
                }
                (
                    StrKind::Borrowed,
                    Framing::Until {
                        end,
                        or_end,
                        max,
                        consume,
                    },
                ) => {
                    let max = optional(max.as_ref());
                    let read = until_method("str", *or_end, *consume);
                    path.try_(quote!(#r.#read(#end, #max)))
                }
                (StrKind::Borrowed, Framing::Quoted { max }) => {
                    let max = optional(max.as_ref());
                    path.try_(quote!(#r.quoted_str(#max)))
                }
                (
                    StrKind::Converted,
                    Framing::Prefix {
                        prefix,
                        endian,
                        max,
                    },
                ) => {
                    let (prefix, endian, max) = prefix_args(*prefix, *endian, max.as_ref());
                    let from = names::from();
                    let text =
                        path.try_(quote!(#r.prefixed_text::<#prefix>(#endian, #max, #encoding)));
                    quote!(#from(#text))
                }
                (StrKind::Converted, Framing::Rest { max }) => {
                    let max = optional(max.as_ref());
                    let from = names::from();
                    let text = path.try_(quote!(#r.rest_text(#max, #encoding)));
                    quote!(#from(#text))
                }
                (StrKind::Converted, Framing::Nul { max }) => {
                    let max = optional(max.as_ref());
                    let from = names::from();
                    let text = path.try_(quote!(#r.nul_text(#max, #encoding)));
                    quote!(#from(#text))
                }
                (
                    StrKind::Converted,
                    Framing::Until {
                        end,
                        or_end,
                        max,
                        consume,
                    },
                ) => {
                    let max = optional(max.as_ref());
                    let from = names::from();
                    let read = until_method("text", *or_end, *consume);
                    let text = path.try_(quote!(#r.#read(#end, #max, #encoding)));
                    quote!(#from(#text))
                }
                (StrKind::Converted, Framing::Quoted { max }) => {
                    let max = optional(max.as_ref());
                    let from = names::from();
                    let text = path.try_(quote!(#r.quoted_text(#max, #encoding)));
                    quote!(#from(#text))
                }
                (StrKind::Raw, framing) => {
                    let text = names::text_from_bytes();
                    let bytes = bytes(framing, r, path);
                    quote!(#text(#bytes))
                }
            }
        }
        Body::Bytes { kind, framing } => {
            let bytes = bytes(framing, r, path);
            match kind {
                BytesKind::Borrowed => bytes,
                BytesKind::Converted => {
                    let from = names::from();
                    quote!(#from(#bytes))
                }
            }
        }
        Body::Nested { ty, ctx } => {
            path.try_(nested_call(ty, ctx, r, fields, lifetime, Until::Value))
        }
        Body::Repeat(repeat) => self::repeat(repeat, r, path, fields, lifetime),
    }
}

fn prefix_args(
    prefix: crate::wire::attr::Prefix,
    endian: crate::wire::attr::Endian,
    max: Option<&Expr>,
) -> (TokenStream, TokenStream, TokenStream) {
    (prefix_type(prefix), names::endian(endian), optional(max))
}

/// Borrowed bytes framed by a prefix or running to the end.
fn bytes(framing: &Framing, r: &Ident, path: &ErrorPath) -> TokenStream {
    match framing {
        Framing::Prefix {
            prefix,
            endian,
            max,
        } => {
            let (prefix, endian, max) = prefix_args(*prefix, *endian, max.as_ref());
            path.try_(quote!(#r.prefixed_bytes::<#prefix>(#endian, #max)))
        }
        Framing::Rest { max } => {
            let max = optional(max.as_ref());
            path.try_(quote!(#r.rest_bytes(#max)))
        }
        Framing::Nul { max } => {
            let max = optional(max.as_ref());
            path.try_(quote!(#r.nul_bytes(#max)))
        }
        Framing::Until {
            end,
            or_end,
            max,
            consume,
        } => {
            let max = optional(max.as_ref());
            let read = until_method("bytes", *or_end, *consume);
            path.try_(quote!(#r.#read(#end, #max)))
        }
        Framing::Quoted { max } => {
            let max = optional(max.as_ref());
            path.try_(quote!(#r.quoted_bytes(#max)))
        }
    }
}

/// The `Reader` method of an `until` framing: `until_bytes`, or `until_or_end_bytes` when
/// the end of the input may end the value; `before_bytes` and `before_or_end_bytes` for a
/// `before` framing, which leaves the terminator.
fn until_method(what: &str, or_end: bool, consume: bool) -> Ident {
    let word = if consume { "until" } else { "before" };
    let name = if or_end {
        format!("{word}_or_end_{what}")
    } else {
        format!("{word}_{what}")
    };
    Ident::new(&name, proc_macro2::Span::call_site())
}

fn repeat(
    repeat: &Repeat,
    r: &Ident,
    path: &ErrorPath,
    fields: &[Field],
    lifetime: &Lifetime,
) -> TokenStream {
    let vec_ty = &repeat.vec_ty;
    let (count, index, elements, element) = (
        names::count(),
        names::index(),
        names::elements(),
        names::element(),
    );
    let element_path = path.element();
    let (element_ctx_let, element_body) = element_with_ctx(&repeat.element, fields);
    let decode_element = value(&element_body, r, &element_path, fields, lifetime);
    let max = optional(repeat.max_count.as_ref());
    let min = names::min();
    let usize = names::usize();
    // `min_count`: the count checked where it was read (at the prefix's first byte), or where
    // an `until_end` repeat stopped.
    let too_few = |offset: TokenStream, len: &Ident| {
        repeat.min_count.as_ref().map(|least| {
            let too_few = names::private("too_few_on_decode");
            let fail = path.fail(quote!(#too_few(#offset, #len, #least)));
            quote!(if #len < #least { #fail; })
        })
    };

    match &repeat.count {
        Count::Prefix {
            prefix: prefix_kind,
            endian,
        } => {
            let prefix = prefix_type(*prefix_kind);
            let endian = names::endian(*endian);
            let read_count = path.try_(quote!(#r.length::<#prefix>(#endian, #max)));
            let (count_at_let, count_at) = match prefix_kind.size() {
                Some(width) => {
                    let width = size(width);
                    (None, quote!(#r.offset() - #width))
                }
                None if repeat.min_count.is_some() => {
                    let at = names::count_at();
                    (Some(quote!(let #at = #r.offset();)), quote!(#at))
                }
                None => (None, quote!(0)),
            };
            let check_min = too_few(count_at, &count);
            quote!({
                #count_at_let
                let #count: #usize = #read_count;
                #check_min
                let mut #elements = <#vec_ty>::with_capacity(#min(#count, #r.remaining()));
                #element_ctx_let
                for #index in 0..#count {
                    let #element = #decode_element;
                    #elements.push(#element);
                }
                #elements
            })
        }
        Count::Expr(scoped) => {
            let into_count = names::into_count();
            let expr = bind(scoped, fields, Mode::Decode);
            let computed = quote!(#into_count(#expr));
            let checked = match &repeat.max_count {
                Some(_) => path.try_(quote!(#r.check_count(#computed, #max))),
                None => computed,
            };
            let check_min = too_few(quote!(#r.offset()), &count);
            quote!({
                let #count: #usize = #checked;
                #check_min
                let mut #elements = <#vec_ty>::with_capacity(#min(#count, #r.remaining()));
                #element_ctx_let
                for #index in 0..#count {
                    let #element = #decode_element;
                    #elements.push(#element);
                }
                #elements
            })
        }
        Count::UntilEnd => {
            let limit = repeat.max_count.as_ref().map(|max| {
                let too_many = names::private("too_many_on_decode");
                let fail = path.fail(quote!(#too_many(#r, #index + 1, #max)));
                quote!(if #index == #max { #fail; })
            });
            let start = names::element_start();
            let check = may_be_empty(&repeat.element).then(|| {
                let empty = names::private("empty_element");
                let fail = element_path.fail(quote!(#empty(#r)));
                quote!(if #r.offset() == #start { #fail; })
            });
            let zero = Literal::usize_suffixed(0);
            let check_min = too_few(quote!(#r.offset()), &index);
            let like_first = names::private("vec_like_first");
            quote!({
                let mut #elements = <#vec_ty>::new();
                #element_ctx_let
                let mut #index = #zero;
                while !#r.is_empty() {
                    #limit
                    let #start = #r.offset();
                    let #element = #decode_element;
                    #check
                    if #index == #zero {
                        // One allocation: room for the rest, were they the size of the first.
                        #elements = #like_first(#r.offset() - #start, #r.remaining());
                    }
                    #elements.push(#element);
                    #index += 1;
                }
                #check_min
                #elements
            })
        }
        Count::UntilNul { or_end } => {
            let element = UntilNulElement {
                ctx_let: element_ctx_let,
                decode: decode_element,
            };
            let ends = names::private("nul_ends_list");
            let ended = path.try_(quote!(#ends(#r, #or_end)));
            until_nul(repeat, r, path, ended, element, too_few)
        }
        Count::Until {
            end,
            or_end,
            consume,
        } => {
            let element = UntilNulElement {
                ctx_let: element_ctx_let,
                decode: decode_element,
            };
            let ends = names::private(if *consume {
                "until_ends_list"
            } else {
                "before_ends_list"
            });
            let ended = path.try_(quote!(#ends(#r, #end, #or_end)));
            until_nul(repeat, r, path, ended, element, too_few)
        }
    }
}

/// The code of one `until_nul` element: its shared context, computed once, and its decode.
struct UntilNulElement {
    ctx_let: Option<TokenStream>,
    decode: TokenStream,
}

/// `until_nul`, `until` and `before`: elements until `ended` (the expression that checks
/// for the terminator, and consumes it for `until_nul` and `until`) is true. An element that
/// reads nothing would be read again forever, so it is an error.
fn until_nul(
    repeat: &Repeat,
    r: &Ident,
    path: &ErrorPath,
    ended: TokenStream,
    element_code: UntilNulElement,
    too_few: impl Fn(TokenStream, &Ident) -> Option<TokenStream>,
) -> TokenStream {
    let UntilNulElement {
        ctx_let: element_ctx_let,
        decode: decode_element,
    } = element_code;
    let vec_ty = &repeat.vec_ty;
    let (index, elements, element) = (names::index(), names::elements(), names::element());
    let element_path = path.element();
    let limit = repeat.max_count.as_ref().map(|max| {
        let too_many = names::private("too_many_on_decode");
        let fail = path.fail(quote!(#too_many(#r, #index + 1, #max)));
        quote!(if #index == #max { #fail; })
    });
    let start = names::element_start();
    let check = may_be_empty(&repeat.element).then(|| {
        let empty = names::private("empty_element");
        let fail = element_path.fail(quote!(#empty(#r)));
        quote!(if #r.offset() == #start { #fail; })
    });
    let zero = Literal::usize_suffixed(0);
    let check_min = too_few(quote!(#r.offset()), &index);
    quote!({
        let mut #elements = <#vec_ty>::new();
        #element_ctx_let
        let mut #index = #zero;
        while !#ended {
            #limit
            let #start = #r.offset();
            let #element = #decode_element;
            #check
            #elements.push(#element);
            #index += 1;
        }
        #check_min
        #elements
    })
}

/// True when an element might read no bytes, which would make `until_end` spin.
fn may_be_empty(body: &Body) -> bool {
    matches!(body, Body::Nested { .. } | Body::ByteArray)
}

/// For a repeat of nested elements: the statement computing a shared element context, and the
/// element body with its context rewritten to what each iteration passes.
pub(super) fn element_with_ctx(element: &Body, fields: &[Field]) -> (Option<TokenStream>, Body) {
    element_with_ctx_in(element, fields, Mode::Decode)
}

pub(super) fn element_with_ctx_in(
    element: &Body,
    fields: &[Field],
    mode: Mode,
) -> (Option<TokenStream>, Body) {
    let Body::Nested { ty, ctx } = element else {
        return (None, element.clone());
    };
    let element_ctx = names::element_ctx();
    let index = names::index();
    let (stmt, expr) = match ctx {
        NestedCtx::Unit => (None, quote!(())),
        NestedCtx::Expr(scoped) => {
            let value = bind(scoped, fields, mode);
            (
                Some(quote!(let #element_ctx = #value;)),
                quote!(#element_ctx),
            )
        }
        NestedCtx::Each {
            index: pat,
            body,
            cycle: None,
        } => {
            let value = bind(body, fields, mode);
            let usize = names::usize();
            (None, quote!({ let #pat: #usize = #index; #value }))
        }
        NestedCtx::Each {
            index: pat,
            body,
            cycle: Some(cycle),
        } => {
            // The index modulo the cycle, kept by counting rather than dividing per element.
            let value = bind(body, fields, mode);
            let length = bind(cycle, fields, mode);
            let (usize, into_count) = (names::usize(), names::into_count());
            let (cycle, column) = (names::cycle(), names::column());
            (
                Some(quote! {
                    let #cycle: #usize = #into_count(#length);
                    let mut #column: #usize = 0;
                }),
                quote!({
                    let #pat: #usize = #column;
                    #column += 1;
                    if #column == #cycle {
                        #column = 0;
                    }
                    #value
                }),
            )
        }
    };
    let rewritten = Body::Nested {
        ty: ty.clone(),
        ctx: NestedCtx::Expr(crate::wire::scope::Scoped {
            expr,
            uses: Vec::new(),
        }),
    };
    (stmt, rewritten)
}
