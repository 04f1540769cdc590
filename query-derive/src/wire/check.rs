//! The rules across attributes, applied to the finished model: keys that do not fit the
//! container, the field's type or each other. Each records an error at the attribute that
//! breaks it; code generation runs only when none did.

use proc_macro2::Span;
use syn::{Expr, Member};

use super::ast::{self, Body, Container, Data, Field, FieldKind, Variant, VariantTag};
use super::attr::{ContainerAttrs, Encoding, FieldAttrs, IntFraming};
use super::types::{self, Shape, StrKind};
use crate::errors::Errors;

/// Checks `container` as a whole.
pub fn check(container: &Container, errors: &mut Errors) {
    let attrs = &container.attrs;
    for extra in container.generics.lifetimes().skip(1) {
        errors.spanning(
            &extra.lifetime,
            "a Wire type borrows from one input, so it declares at most one lifetime",
        );
    }
    check_binding_names(attrs, errors);
    match &container.data {
        Data::Struct(fields) => {
            for (key, span) in enum_only_keys(attrs) {
                errors.at(span, format!("`{key}` applies to enums only"));
            }
            check_fields(container, fields, errors);
        }
        Data::Enum(data) => {
            check_enum_keys(container, errors);
            if data.by_magic {
                check_magic_variants(container, &data.variants, errors);
            } else {
                check_variants(&data.variants, errors);
            }
            for variant in &data.variants {
                check_fields(container, &variant.fields, errors);
            }
        }
    }
    if let Some(view) = &attrs.view {
        check_view_keeps_positions(&container.data, view.span, errors);
    }
}

fn check_binding_names(attrs: &ContainerAttrs, errors: &mut Errors) {
    let bindings = attrs.ctx.as_ref().map(|c| &c.value[..]).unwrap_or(&[]);
    for (i, binding) in bindings.iter().enumerate() {
        if bindings[..i].iter().any(|b| b.name == binding.name) {
            errors.at(
                binding.name.span(),
                format!("duplicate context binding `{}`", binding.name),
            );
        }
    }
}

fn enum_only_keys(attrs: &ContainerAttrs) -> Vec<(&'static str, Span)> {
    let mut keys = Vec::new();
    if let Some(tag) = &attrs.tag {
        keys.push(("tag", tag.span));
    }
    if let Some(len) = &attrs.len {
        keys.push(("len", len.span));
    }
    if let Some(surplus) = &attrs.surplus {
        keys.push(("surplus", surplus.span));
    }
    if let Some(external) = &attrs.external {
        keys.push(("external", external.span));
    }
    keys
}

fn check_enum_keys(container: &Container, errors: &mut Errors) {
    let attrs = &container.attrs;
    let by_magic = matches!(&container.data, Data::Enum(data) if data.by_magic);
    if by_magic {
        for (key, span) in enum_only_keys(attrs) {
            errors.at(
                span,
                format!(
                    "`{key}` does not apply to an enum whose variants are chosen by their \
                     `magic`"
                ),
            );
        }
        return;
    }
    if attrs.tag.is_none() {
        errors.at(
            container.ident.span(),
            "an enum needs `#[wire(tag = u8)]` (or another integer type): the type of the tag \
             that selects the variant",
        );
    }
    if let (Some(surplus), None) = (&attrs.surplus, &attrs.len) {
        errors.at(
            surplus.span,
            "`surplus` applies to a TLV enum's body: add `len = u16` (or another prefix type)",
        );
    }
    if let Some(len) = &attrs.len {
        if len.value.size().is_none() {
            errors.at(
                len.span,
                "a TLV enum's length is filled in after its body is written, so it must be \
                 fixed-width (`len = u8|u16|u32|u64`); a field's `len(prefix = varint)` can \
                 frame the enum instead",
            );
        }
    }
    if let (Some(_), Some(ctx)) = (&attrs.external, &attrs.ctx) {
        errors.at(
            ctx.span,
            "an `external` tag is the enum's context, so it takes no `ctx(...)`",
        );
    }
}

/// One `other` variant at most, without a tag; no literal tag used twice.
fn check_variants(variants: &[Variant], errors: &mut Errors) {
    let mut other_seen: Option<&Variant> = None;
    let mut literal_tags: Vec<(i128, &Variant)> = Vec::new();
    for variant in variants {
        if let Some(other) = &variant.attrs.other {
            if let Some(tag) = &variant.attrs.tag {
                errors.at(
                    tag.span,
                    "an `other` variant catches every unknown tag, so it takes no `tag`",
                );
            }
            if let Some(first) = other_seen {
                errors.at(
                    other.span,
                    format!(
                        "a second `other` variant: unknown tags already go to `{}`",
                        first.ident
                    ),
                );
            }
            other_seen = Some(variant);
        }
        let VariantTag::Value(tag) = &variant.tag else {
            continue;
        };
        let Some(value) = literal_value(tag) else {
            continue;
        };
        match literal_tags.iter().find(|(v, _)| *v == value) {
            Some((_, first)) => errors.spanning(
                tag,
                format!("tag {value} is already used by variant `{}`", first.ident),
            ),
            None => literal_tags.push((value, variant)),
        }
    }
}

/// In an enum whose variants are chosen by their magic: every variant declares one, none
/// declares a tag or is a catch-all, and no literal magic starts with an earlier one (the
/// variants are tried in order, so the later one could never be chosen).
fn check_magic_variants(container: &Container, variants: &[Variant], errors: &mut Errors) {
    let mut literal_magics: Vec<(Vec<u8>, &Variant)> = Vec::new();
    for variant in variants {
        let Some(magic) = &variant.attrs.magic else {
            errors.at(
                variant.ident.span(),
                format!(
                    "variant `{}` needs `#[wire(magic = ..)]`: the variants of `{}` are chosen \
                     by the bytes they start with",
                    variant.ident, container.ident
                ),
            );
            continue;
        };
        if let Some(tag) = &variant.attrs.tag {
            errors.at(tag.span, "a variant chosen by its `magic` takes no `tag`");
        }
        if let Some(other) = &variant.attrs.other {
            errors.at(
                other.span,
                "an enum whose variants are chosen by their `magic` has no `other` variant: \
                 input that starts with no variant's magic is an error",
            );
        }
        let Some(bytes) = literal_bytes(&magic.value) else {
            continue;
        };
        match literal_magics
            .iter()
            .find(|(earlier, _)| bytes.starts_with(earlier))
        {
            Some((_, first)) => errors.at(
                magic.span,
                format!(
                    "unreachable: variant `{}` is tried first and its magic starts this one",
                    first.ident
                ),
            ),
            None => literal_magics.push((bytes, variant)),
        }
    }
}

/// The bytes of a byte string literal.
fn literal_bytes(expr: &Expr) -> Option<Vec<u8>> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::ByteStr(bytes),
            ..
        }) => Some(bytes.value()),
        Expr::Group(group) => literal_bytes(&group.expr),
        _ => None,
    }
}

/// The integer value of a literal (`1`, `0x10`, `-1`), to compare tags and count bounds.
fn literal_value(expr: &Expr) -> Option<i128> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) => int.base10_parse().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => literal_value(expr).map(|v| -v),
        Expr::Paren(paren) => literal_value(&paren.expr),
        Expr::Group(group) => literal_value(&group.expr),
        _ => None,
    }
}

/// A view of a tuple struct or variant keeps every field in its place, so it cannot leave
/// out the computed ones or those not on the wire.
fn check_view_keeps_positions(data: &Data, span: Span, errors: &mut Errors) {
    let lists: Vec<&[Field]> = match data {
        Data::Struct(fields) => vec![fields],
        Data::Enum(data) => data.variants.iter().map(|v| &v.fields[..]).collect(),
    };
    for fields in lists {
        let tuple = fields
            .iter()
            .any(|f| matches!(f.member, Member::Unnamed(_)));
        let left_out = fields.iter().any(|f| f.wire().is_none() || f.is_computed());
        if tuple && left_out {
            errors.at(
                span,
                "a view leaves out computed fields and fields not on the wire, which a tuple \
                 struct or variant cannot do: name its fields",
            );
        }
    }
}

fn check_fields(container: &Container, fields: &[Field], errors: &mut Errors) {
    let bindings = container.attrs.ctx.as_ref().map(|c| &c.value[..]);
    for field in fields {
        if bindings
            .unwrap_or(&[])
            .iter()
            .any(|b| b.name == field.binding)
        {
            errors.at(
                field.binding.span(),
                format!(
                    "field `{}` has the same name as a context binding; rename one, \
                     expressions could not tell them apart",
                    field.binding
                ),
            );
        }
        check_field(container, field, errors);
        check_bit_keys(container, field, errors);
    }
    // A trailing field is read when input is left, so nothing can come after it.
    let last_on_wire = fields.iter().rposition(|f| f.wire().is_some());
    for (index, field) in fields.iter().enumerate() {
        let option = matches!(types::shape(&field.ty), Shape::Option(_));
        let misplaced = Some(index) != last_on_wire && option;
        if let (Some(trailing), true) = (&field.attrs.trailing, misplaced) {
            errors.at(
                trailing.span,
                "a `trailing` field is read when input is left, so it must be the last field \
                 on the wire",
            );
        }
    }
}

fn check_field(container: &Container, field: &Field, errors: &mut Errors) {
    let attrs = &field.attrs;
    if let Some(default) = &attrs.default {
        if !attrs.is_empty() {
            errors.at(
                default.span,
                "a `default` field is not on the wire, so it takes no other wire attribute",
            );
        }
        return;
    }
    if container.lifetime.is_none() && types::borrows(&field.ty) {
        let name = &container.ident;
        errors.spanning(
            &field.ty,
            format!(
                "this field borrows from the input, so `{name}` needs a lifetime parameter: \
                 declare `{name}<'a>` and use `'a` here"
            ),
        );
    }
    if let (Some(when), false) = (
        &attrs.when,
        matches!(types::shape(&field.ty), Shape::Option(_)),
    ) {
        errors.at(
            when.span,
            "`when` applies to `Option` fields: the field is present only when the condition \
             holds",
        );
    }
    if let Some(if_next) = &attrs.if_next {
        if !matches!(types::shape(&field.ty), Shape::Option(_)) {
            errors.at(
                if_next.span,
                "`if_next` applies to `Option` fields: the field is present when the input's \
                 next bytes are the given ones",
            );
        } else if attrs.when.is_some() || attrs.trailing.is_some() {
            errors.at(
                if_next.span,
                "`if_next` and `when` or `trailing` both decide whether the field is there: \
                 keep one",
            );
        }
    }
    if let Some(trailing) = &attrs.trailing {
        if !matches!(types::shape(&field.ty), Shape::Option(_)) {
            errors.at(
                trailing.span,
                "`trailing` applies to `Option` fields: the field is present when input is left",
            );
        } else if attrs.when.is_some() {
            errors.at(
                trailing.span,
                "`when` and `trailing` both decide whether the field is there: keep one",
            );
        }
    }
    let repeat = ast::is_repeat(field.value_ty(), attrs);
    if !repeat {
        check_repeat_keys_absent(field, errors);
    } else if attrs.repeat.is_some() {
        check_repeat_keys(attrs, errors);
    }
    check_text_keys(attrs, errors);
    check_new_words(field, errors);
    let FieldKind::Wire(wire) = &field.kind else {
        return;
    };
    // A repeat's element is what `ctx`, `str` and the rest describe.
    let described = match &wire.body {
        Body::Repeat(repeat) => &repeat.element,
        body => body,
    };
    let mut ctx_span = attrs.ctx.as_ref().map(|c| c.span);
    if repeat {
        ctx_span = ctx_span.or(attrs.each_ctx.as_ref().map(|e| e.span));
    }
    if let (Some(span), false) = (ctx_span, matches!(described, Body::Nested { .. })) {
        errors.at(
            span,
            format!(
                "`ctx` passes context to a type with its own `Decode` / `Encode`; `{}` is read \
                 natively",
                types::show(field.value_ty())
            ),
        );
    }
    if let (Some(given), Body::Str { kind, .. }) = (
        attrs.str_.as_ref().and_then(|s| s.value.encoding.as_ref()),
        described,
    ) {
        if *kind == StrKind::Borrowed && given.value != Encoding::Utf8 {
            errors.at(
                given.span,
                "a `&str` field borrows the input, so it must be UTF-8: use `String`, \
                 `Cow<'a, str>` or `Text<'a>` for other encodings",
            );
        }
    }
    if let Some(computed) = &attrs.computed {
        let message = if !matches!(wire.body, Body::Number { .. } | Body::VarInt { .. })
            || types::is_float(field.value_ty())
        {
            Some(format!(
                "`computed` applies to integer fields, and `{}` is not one",
                types::show(&field.ty)
            ))
        } else if wire.presence.is_some() || wire.len.is_some() {
            Some("a computed field is always written: it takes no `when` or `len`".to_owned())
        } else {
            None
        };
        if let Some(message) = message {
            errors.at(computed.span, message);
        }
    }
    if let Some(view) = &attrs.view {
        if container.view.is_none() {
            errors.at(
                view.span,
                "`view` describes a field of the container's view: declare one with \
                 `#[wire(view = Name)]` on the container",
            );
        }
        if !matches!(wire.body, Body::Nested { .. } | Body::Repeat(_)) {
            errors.at(
                view.span,
                format!(
                    "`view` lets the view take any type that encodes like this field's; it \
                     applies to nested types and repeats, and `{}` is read natively",
                    types::show(field.value_ty())
                ),
            );
        }
    }
}

/// `bit_width`, `flags`, `flag(..)` and `range`: what each applies to, and what it cannot be
/// combined with.
fn check_bit_keys(container: &Container, field: &Field, errors: &mut Errors) {
    let attrs = &field.attrs;
    let shown = types::show(&field.ty);
    let framing = [
        ("when", attrs.when.as_ref().map(|a| a.span)),
        ("trailing", attrs.trailing.as_ref().map(|a| a.span)),
        ("if_next", attrs.if_next.as_ref().map(|a| a.span)),
        ("len", attrs.len.as_ref().map(|a| a.span)),
        ("computed", attrs.computed.as_ref().map(|a| a.span)),
        ("str", attrs.str_.as_ref().map(|a| a.span)),
        ("bytes", attrs.bytes.as_ref().map(|a| a.span)),
        ("dec", attrs.dec.as_ref().map(|a| a.span)),
        ("bits", attrs.bits.as_ref().map(|a| a.span)),
        ("count", attrs.repeat.as_ref().map(|a| a.span)),
    ];
    if attrs.bit_width.is_some() {
        for (key, span) in framing.iter().filter_map(|(k, s)| Some((k, (*s)?))) {
            errors.at(
                span,
                format!(
                    "`{key}` cannot describe a bit field: it is always there, and shares an \
                     integer with its neighbours"
                ),
            );
        }
        if let Some(flags) = &attrs.flags {
            errors.at(
                flags.span,
                "a flag field is a whole integer, not a bit field",
            );
        }
    }
    if let Some(flags) = &attrs.flags {
        let integer = matches!(field.wire().map(|w| &w.body), Some(Body::Number { .. }))
            && types::is_unsigned(&field.ty);
        if !integer {
            errors.at(
                flags.span,
                format!("`flags` applies to unsigned integer fields, not `{shown}`"),
            );
        }
        for (key, span) in framing[..5].iter().filter_map(|(k, s)| Some((k, (*s)?))) {
            errors.at(
                span,
                format!(
                    "a flag field is always written, from the fields it announces: it takes \
                     no `{key}`"
                ),
            );
        }
    }
    if let Some(flag) = &attrs.flag {
        if !matches!(types::shape(&field.ty), Shape::Option(_)) {
            errors.at(
                flag.span,
                format!(
                    "`flag` applies to `Option` fields, present when their bits are set; \
                     `{shown}` is not one"
                ),
            );
        }
        for (key, span) in framing[..3].iter().filter_map(|(k, s)| Some((k, (*s)?))) {
            errors.at(
                span,
                format!("`flag` already decides whether the field is there: drop `{key}`"),
            );
        }
    }
    if let Some(range) = &attrs.range {
        let in_enum = matches!(container.data, Data::Enum(_));
        let unnamed = matches!(field.member, Member::Unnamed(_));
        let fixed = field.wire().is_some_and(|wire| {
            wire.presence.is_none()
                && wire.len.is_none()
                && !matches!(
                    wire.body,
                    Body::Str { .. } | Body::Bytes { .. } | Body::Dec { .. } | Body::Repeat(_)
                )
        });
        let message = if in_enum {
            Some("`range` names where a struct's field sits; a variant's fields move with its tag")
        } else if unnamed {
            Some("`range` names its constant after the field: give the field a name")
        } else if !fixed {
            Some(
                "`range` applies to fields of fixed width, always present (numbers, bit fields, \
                 arrays, nested types of fixed width)",
            )
        } else {
            None
        };
        if let Some(message) = message {
            errors.at(range.span, message);
        }
    }
}

/// The keys of a repeat on a field that is not one.
fn check_repeat_keys_absent(field: &Field, errors: &mut Errors) {
    let attrs = &field.attrs;
    for (key, span) in [
        ("count", attrs.repeat.as_ref().map(|r| r.span)),
        ("min_count", attrs.min_count.as_ref().map(|m| m.span)),
        ("max_count", attrs.max_count.as_ref().map(|m| m.span)),
        ("each_ctx", attrs.each_ctx.as_ref().map(|e| e.span)),
        ("cycle", attrs.cycle.as_ref().map(|c| c.span)),
    ] {
        let Some(span) = span else {
            continue;
        };
        let key = match (key, attrs.repeat.as_ref().map(|r| &r.value)) {
            ("count", Some(repeat)) => repeat.keyword(),
            _ => key,
        };
        errors.at(
            span,
            format!(
                "`{key}` applies to `Vec` fields, and `{}` is not one",
                types::show(field.value_ty())
            ),
        );
    }
}

/// On a repeat: `min_count` not above `max_count`; `cycle` with `each_ctx`, which not with
/// `ctx`.
fn check_repeat_keys(attrs: &FieldAttrs, errors: &mut Errors) {
    if let (Some(min), Some(max)) = (&attrs.min_count, &attrs.max_count) {
        if let (Some(low), Some(high)) = (literal_value(&min.value), literal_value(&max.value)) {
            if low > high {
                errors.at(
                    min.span,
                    format!(
                        "`min_count = {low}` exceeds `max_count = {high}`: no count satisfies \
                         both"
                    ),
                );
            }
        }
    }
    if let (Some(cycle), None) = (&attrs.cycle, &attrs.each_ctx) {
        errors.at(
            cycle.span,
            "`cycle` restarts the index `each_ctx` receives: add `each_ctx = |i| ..`",
        );
    }
    if let (Some(_), Some(each)) = (&attrs.ctx, &attrs.each_ctx) {
        errors.at(
            each.span,
            "`ctx` and `each_ctx` both set the elements' context: keep one",
        );
    }
}

/// `varint` is a framing of its own; `crc32` is a `u32` field written from other bytes;
/// `includes` belongs to `len(...)`.
fn check_new_words(field: &Field, errors: &mut Errors) {
    let attrs = &field.attrs;
    if let Some(varint) = &attrs.varint {
        let word = varint.value.word();
        let groups = match varint.value {
            IntFraming::Leb128 => "7-bit groups, low first",
            IntFraming::Packed => "a sign bit and 6 bits, then 7-bit groups",
        };
        for (other, present) in [
            ("str", attrs.str_.is_some()),
            ("bytes", attrs.bytes.is_some()),
            ("dec", attrs.dec.is_some()),
            ("bits", attrs.bits.is_some()),
            ("endian", attrs.endian.is_some()),
        ] {
            if present {
                errors.at(
                    varint.span,
                    format!(
                        "`{word}` is the integer's whole framing ({groups}): it cannot be \
                         combined with `{other}`"
                    ),
                );
            }
        }
    }
    let Some(crc) = &attrs.crc32 else {
        return;
    };
    let plain_u32 = matches!(
        field.wire().map(|w| &w.body),
        Some(Body::Number { ty, .. }) if types::show(ty) == "u32"
    );
    if !plain_u32 || !matches!(types::shape(&field.ty), Shape::Number(4)) {
        errors.at(
            crc.span,
            format!(
                "`crc32` holds a CRC32 as a `u32` field, not `{}`",
                types::show(&field.ty)
            ),
        );
    }
    for (other, present) in [
        ("computed", attrs.computed.is_some()),
        ("when", attrs.when.is_some()),
        ("trailing", attrs.trailing.is_some()),
        ("if_next", attrs.if_next.is_some()),
        ("len", attrs.len.is_some()),
        (
            attrs.varint.as_ref().map_or("varint", |v| v.value.word()),
            attrs.varint.is_some(),
        ),
    ] {
        if present {
            errors.at(
                crc.span,
                format!(
                    "a `crc32` field is always there and written from the bytes it covers: \
                     it takes no `{other}`"
                ),
            );
        }
    }
}

fn check_text_keys(attrs: &FieldAttrs, errors: &mut Errors) {
    if let (Some(_), Some(bytes)) = (&attrs.str_, &attrs.bytes) {
        errors.at(
            bytes.span,
            "`str` and `bytes` cannot both describe one field",
        );
    }
    if let (true, Some(dec)) = (attrs.str_.is_some() || attrs.bytes.is_some(), &attrs.dec) {
        errors.at(
            dec.span,
            "`dec` is a number as text: it cannot be combined with `str` or `bytes`",
        );
    }
}
