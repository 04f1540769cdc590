//! The typed model of a `#[derive(Wire)]` input: what each field is on the wire, checked
//! against its Rust type and the other attributes. Code generation reads only this model.
//!
//! Every rule that can fail records an error at the offending token and building goes on, so
//! that all mistakes of a declaration are reported together.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned as _;
use syn::{DeriveInput, Expr, Generics, Ident, Index, Lifetime, Member, Pat, Type};

use super::attr::{
    self, ContainerAttrs, CtxBinding, Encoding, Endian, FieldAttrs, Prefix, RepeatAttr, Surplus,
    TagType, TextAttr,
};
use super::errors::Errors;
use super::names;
use super::scope::{self, Reach, Scoped};
use super::types::{self, BytesKind, Shape, StrKind};

/// A struct or enum to derive for.
pub struct Container {
    pub ident: Ident,
    pub vis: syn::Visibility,
    /// `view = Name`: the encode-side type to generate beside this one.
    pub view: Option<Ident>,
    pub generics: Generics,
    /// The type's own lifetime parameter, which is the input's lifetime.
    pub lifetime: Option<Lifetime>,
    pub magic: Option<Expr>,
    pub ctx: ContainerCtx,
    pub data: Data,
}

/// What the outer packet passes in (`type Ctx`).
pub enum ContainerCtx {
    /// `type Ctx = ()`.
    Unit,
    /// `ctx(name: Type, ...)`: one type, or a tuple of several.
    Bindings(Vec<CtxBinding>),
    /// `external`: the enum's tag is the context.
    ExternalTag(TagType),
}

pub enum Data {
    Struct(Vec<Field>),
    Enum(Enum),
}

/// A struct field or a variant field.
pub struct Field {
    /// How the field is named in `Self { .. }` (a name or a tuple index).
    pub member: Member,
    /// The generated local holding its value.
    pub local: Ident,
    /// The name attribute expressions use for it (`count`, or `_0` in a tuple).
    pub binding: Ident,
    /// The path segment errors inside it get; `None` for the only field of a tuple.
    pub path: Option<String>,
    pub ty: Type,
    pub vis: syn::Visibility,
    /// The field's doc comments, repeated on the view's field.
    pub docs: Vec<syn::Attribute>,
    pub kind: FieldKind,
}

impl Field {
    /// The field's wire description, unless it is not on the wire.
    pub fn wire(&self) -> Option<&Wire> {
        match &self.kind {
            FieldKind::Wire(wire) => Some(wire),
            FieldKind::Default => None,
        }
    }

    /// Whether the field is written from an expression rather than from its value.
    pub fn is_computed(&self) -> bool {
        self.wire().is_some_and(|w| w.computed.is_some())
    }
}

pub enum FieldKind {
    /// `default`: not on the wire.
    Default,
    Wire(Box<Wire>),
}

/// How a field is read and written.
pub struct Wire {
    /// `when = ..` on an `Option`: the rest describes the `Some` content.
    pub when: Option<Scoped>,
    /// `len(..)`: a length prefix around the value.
    pub len: Option<Len>,
    pub body: Body,
    /// `computed = ..`: the value written, and checked after decoding.
    pub computed: Option<Scoped>,
    /// `view`: in the view, any type (for a repeat, any elements) that encodes like this one.
    pub view: bool,
}

/// A length prefix written after the fact and bounding the decode.
#[derive(Clone, Copy)]
pub struct Len {
    pub prefix: Prefix,
    pub endian: Endian,
    pub surplus: Surplus,
}

// Built once per field at compile time: the size of the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum Body {
    /// A fixed-width number of `size` bytes.
    Number {
        ty: Type,
        endian: Endian,
        size: usize,
    },
    Bool,
    ByteArray,
    Uuid {
        endian: Endian,
    },
    /// A `bitflags` type as its bits.
    Bits {
        ty: Type,
        endian: Endian,
    },
    Str {
        kind: StrKind,
        framing: Box<Framing>,
        encoding: Encoding,
    },
    Bytes {
        kind: BytesKind,
        framing: Box<Framing>,
    },
    Repeat(Box<Repeat>),
    /// Through the type's own `Decode` / `Encode`.
    Nested {
        ty: Type,
        ctx: NestedCtx,
    },
}

/// Where a string or byte string ends.
#[derive(Clone)]
pub enum Framing {
    Prefix {
        prefix: Prefix,
        endian: Endian,
        max: Option<Expr>,
    },
    Rest {
        max: Option<Expr>,
    },
}

/// A `Vec` field.
#[derive(Clone)]
pub struct Repeat {
    pub vec_ty: Type,
    pub count: Count,
    pub min_count: Option<Expr>,
    pub max_count: Option<Expr>,
    pub element: Body,
}

#[derive(Clone)]
pub enum Count {
    Prefix { prefix: Prefix, endian: Endian },
    Expr(Scoped),
    UntilEnd,
}

/// The context a nested type gets.
// Built once per field at compile time: the size of the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum NestedCtx {
    Unit,
    /// `ctx = ..`: for a `Vec`, the same for every element.
    Expr(Scoped),
    /// `each_ctx = |i| ..`, with `cycle = n` the index modulo `n`.
    Each {
        index: Pat,
        body: Scoped,
        cycle: Option<Scoped>,
    },
}

pub struct Enum {
    pub tag_ty: TagType,
    pub endian: Endian,
    /// False for an `external` tag.
    pub tag_on_wire: bool,
    /// TLV: a length prefix after the tag.
    pub len: Option<Len>,
    pub variants: Vec<Variant>,
}

pub struct Variant {
    pub ident: Ident,
    pub tag: VariantTag,
    pub fields: Vec<Field>,
    /// The variant's fields as declared, which a view repeats for an `other` variant.
    pub declared: syn::Fields,
    /// The variant's doc comments, repeated on the view's variant.
    pub docs: Vec<syn::Attribute>,
}

pub enum VariantTag {
    /// `#[wire(tag = ..)]` or the discriminant.
    Value(Expr),
    /// `#[wire(other)]`: the tag and the raw body are its two fields.
    Other {
        tag: Member,
        body: Member,
        body_kind: BytesKind,
    },
}

/// Builds the model, recording every problem in `errors`. `None` only when the input is not
/// something the derive can describe at all (a union).
pub fn build(input: &DeriveInput, errors: &mut Errors) -> Option<Container> {
    let attrs = attr::container(&input.attrs, errors);
    let endian = attrs.endian.as_ref().map_or(Endian::Big, |e| e.value);

    let mut lifetimes = input.generics.lifetimes();
    let lifetime = lifetimes.next().map(|l| l.lifetime.clone());
    for extra in lifetimes {
        errors.spanning(
            &extra.lifetime,
            "a Wire type borrows from one input, so it declares at most one lifetime",
        );
    }

    let bindings = attrs.ctx.as_ref().map(|c| &c.value[..]).unwrap_or(&[]);
    check_binding_names(bindings, errors);
    let env = Env {
        endian,
        ctx_names: bindings.iter().map(|b| b.name.to_string()).collect(),
        has_lifetime: lifetime.is_some(),
        type_name: input.ident.to_string(),
        has_view: attrs.view.is_some(),
    };

    let data = match &input.data {
        syn::Data::Struct(data) => {
            for (key, span) in enum_only_keys(&attrs) {
                errors.at(span, format!("`{key}` applies to enums only"));
            }
            Data::Struct(fields(&data.fields, &env, errors))
        }
        syn::Data::Enum(data) => Data::Enum(enumeration(input, data, &attrs, &env, errors)),
        syn::Data::Union(union) => {
            errors.at(
                union.union_token.span,
                "`Wire` can be derived for structs and enums, not unions",
            );
            return None;
        }
    };

    let ctx = match (&attrs.external, &attrs.tag, attrs.ctx) {
        (Some(external), Some(tag), ctx) => {
            if let Some(ctx) = ctx {
                errors.at(
                    ctx.span,
                    "an `external` tag is the enum's context, so it takes no `ctx(...)`",
                );
            }
            let _ = external;
            ContainerCtx::ExternalTag(tag.value)
        }
        (_, _, Some(ctx)) => ContainerCtx::Bindings(ctx.value),
        _ => ContainerCtx::Unit,
    };

    if let Some(view) = &attrs.view {
        check_view_keeps_positions(&data, view.span, errors);
    }
    let view = attrs.view.map(|v| v.value);

    Some(Container {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        view,
        generics: input.generics.clone(),
        lifetime,
        magic: attrs.magic.map(|m| m.value),
        ctx,
        data,
    })
}

/// What every field of the container shares.
struct Env {
    endian: Endian,
    ctx_names: Vec<String>,
    has_lifetime: bool,
    type_name: String,
    /// Whether the container declares `view = Name`.
    has_view: bool,
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

fn check_binding_names(bindings: &[CtxBinding], errors: &mut Errors) {
    for (i, binding) in bindings.iter().enumerate() {
        if bindings[..i].iter().any(|b| b.name == binding.name) {
            errors.at(
                binding.name.span(),
                format!("duplicate context binding `{}`", binding.name),
            );
        }
    }
}

fn enumeration(
    input: &DeriveInput,
    data: &syn::DataEnum,
    attrs: &ContainerAttrs,
    env: &Env,
    errors: &mut Errors,
) -> Enum {
    let tag_ty = match &attrs.tag {
        Some(tag) => tag.value,
        None => {
            errors.at(
                input.ident.span(),
                "an enum needs `#[wire(tag = u8)]` (or another integer type): the type of the \
                 tag that selects the variant",
            );
            TagType::U8
        }
    };
    if let (Some(surplus), None) = (&attrs.surplus, &attrs.len) {
        errors.at(
            surplus.span,
            "`surplus` applies to a TLV enum's body: add `len = u16` (or another prefix type)",
        );
    }
    let len = attrs.len.as_ref().map(|len| Len {
        prefix: len.value,
        endian: env.endian,
        surplus: attrs.surplus.as_ref().map_or(Surplus::Error, |s| s.value),
    });

    let mut variants = Vec::new();
    let mut other_seen: Option<Ident> = None;
    let mut literal_tags: Vec<(i128, Ident)> = Vec::new();
    for variant in &data.variants {
        let vattrs = attr::variant(&variant.attrs, errors);
        if let Some(other) = &vattrs.other {
            if let Some(tag) = &vattrs.tag {
                errors.at(
                    tag.span,
                    "an `other` variant catches every unknown tag, so it takes no `tag`",
                );
            }
            if let Some(first) = &other_seen {
                errors.at(
                    other.span,
                    format!("a second `other` variant: unknown tags already go to `{first}`"),
                );
            }
            other_seen = Some(variant.ident.clone());
            if let Some(tag) = other_variant(variant, errors) {
                variants.push(Variant {
                    ident: variant.ident.clone(),
                    tag,
                    fields: Vec::new(),
                    declared: without_wire_attrs(&variant.fields),
                    docs: docs(&variant.attrs),
                });
            }
            continue;
        }
        let tag = match (vattrs.tag, &variant.discriminant) {
            (Some(tag), _) => tag.value,
            (None, Some((_, discriminant))) if variant.fields.is_empty() => discriminant.clone(),
            (None, _) => {
                errors.at(
                    variant.ident.span(),
                    format!(
                        "variant `{}` needs `#[wire(tag = ..)]`: the tag value that selects it",
                        variant.ident
                    ),
                );
                continue;
            }
        };
        if let Some(value) = literal_value(&tag) {
            if let Some((_, first)) = literal_tags.iter().find(|(v, _)| *v == value) {
                errors.spanning(
                    &tag,
                    format!("tag {value} is already used by variant `{first}`"),
                );
            } else {
                literal_tags.push((value, variant.ident.clone()));
            }
        }
        variants.push(Variant {
            ident: variant.ident.clone(),
            tag: VariantTag::Value(tag),
            fields: fields(&variant.fields, env, errors),
            declared: without_wire_attrs(&variant.fields),
            docs: docs(&variant.attrs),
        });
    }

    Enum {
        tag_ty,
        endian: env.endian,
        tag_on_wire: attrs.external.is_none(),
        len,
        variants,
    }
}

/// The integer value of a literal tag (`1`, `0x10`, `-1`), to catch duplicates.
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

fn other_variant(variant: &syn::Variant, errors: &mut Errors) -> Option<VariantTag> {
    const SHAPE: &str = "an `other` variant holds the tag, then the raw body: \
                         `Unknown(u8, &'a [u8])` (or `Vec<u8>`, `Cow<'a, [u8]>`)";
    let fields: Vec<&syn::Field> = variant.fields.iter().collect();
    for field in &fields {
        let attrs = attr::field(&field.attrs, errors);
        if !attrs.is_empty() || attrs.default.is_some() {
            errors.spanning(
                field,
                "the fields of an `other` variant take no wire attributes",
            );
        }
    }
    let [tag, body] = fields[..] else {
        errors.spanning(&variant.fields, SHAPE);
        if variant.fields.is_empty() {
            errors.at(variant.ident.span(), SHAPE);
        }
        return None;
    };
    let Some(body_kind) = types::bytes_kind(&body.ty) else {
        errors.spanning(&body.ty, SHAPE);
        return None;
    };
    Some(VariantTag::Other {
        tag: member(tag, 0),
        body: member(body, 1),
        body_kind,
    })
}

fn member(field: &syn::Field, index: usize) -> Member {
    match &field.ident {
        Some(ident) => Member::Named(ident.clone()),
        None => Member::Unnamed(Index {
            index: u32::try_from(index).unwrap_or(u32::MAX),
            span: field.ty.span(),
        }),
    }
}

fn fields(fields: &syn::Fields, env: &Env, errors: &mut Errors) -> Vec<Field> {
    let several = fields.len() > 1;
    let names: Vec<String> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| match &f.ident {
            Some(ident) => ident.to_string(),
            None => format!("_{i}"),
        })
        .collect();
    let attrs: Vec<FieldAttrs> = fields
        .iter()
        .map(|field| attr::field(&field.attrs, errors))
        .collect();
    let computed: Vec<bool> = attrs.iter().map(|a| a.computed.is_some()).collect();
    fields
        .iter()
        .zip(attrs)
        .enumerate()
        .map(|(index, (field, attrs))| {
            let (binding, path) = match &field.ident {
                Some(ident) => (ident.clone(), Some(ident.unraw().to_string())),
                None => (
                    Ident::new(&format!("_{index}"), Span::call_site()),
                    several.then(|| index.to_string()),
                ),
            };
            if env.ctx_names.contains(&names[index]) {
                errors.at(
                    binding.span(),
                    format!(
                        "field `{binding}` has the same name as a context binding; rename one, \
                         expressions could not tell them apart"
                    ),
                );
            }
            let local_name = match &field.ident {
                Some(ident) => ident.unraw().to_string(),
                None => index.to_string(),
            };
            let scope = Scope {
                names: &names,
                current: index,
                computed: &computed,
            };
            let kind = field_kind(field, attrs, env, &scope, errors);
            Field {
                member: member(field, index),
                local: names::field(&local_name),
                binding,
                path,
                ty: field.ty.clone(),
                vis: field.vis.clone(),
                docs: docs(&field.attrs),
                kind,
            }
        })
        .collect()
}

/// The doc comments among `attrs`.
fn docs(attrs: &[syn::Attribute]) -> Vec<syn::Attribute> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .cloned()
        .collect()
}

/// `fields` with only their doc comments left among their attributes.
fn without_wire_attrs(fields: &syn::Fields) -> syn::Fields {
    let mut fields = fields.clone();
    for field in fields.iter_mut() {
        field.attrs = docs(&field.attrs);
    }
    fields
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

/// The fields an expression on field `current` may name.
struct Scope<'n> {
    names: &'n [String],
    current: usize,
    /// Which fields are computed.
    computed: &'n [bool],
}

impl Scope<'_> {
    /// A `when`, `count`, `ctx` or `each_ctx` expression: it sees the earlier fields.
    fn expr(&self, expr: &Expr, errors: &mut Errors) -> Scoped {
        scope::scoped(expr, self.names, self.current, Reach::Earlier, &[], errors)
    }

    /// A `computed` expression: it sees every field that is not computed.
    fn computed(&self, expr: &Expr, errors: &mut Errors) -> Scoped {
        let reach = Reach::NotComputed(self.computed);
        scope::scoped(expr, self.names, self.current, reach, &[], errors)
    }
}

fn field_kind(
    field: &syn::Field,
    attrs: FieldAttrs,
    env: &Env,
    scope: &Scope<'_>,
    errors: &mut Errors,
) -> FieldKind {
    if let Some(default) = &attrs.default {
        if !attrs.is_empty() {
            errors.at(
                default.span,
                "a `default` field is not on the wire, so it takes no other wire attribute",
            );
        }
        return FieldKind::Default;
    }
    if !env.has_lifetime && types::borrows(&field.ty) {
        errors.spanning(
            &field.ty,
            format!(
                "this field borrows from the input, so `{}` needs a lifetime parameter: \
                 declare `{}<'a>` and use `'a` here",
                env.type_name, env.type_name
            ),
        );
    }
    let endian = attrs.endian.as_ref().map_or(env.endian, |e| e.value);

    let (when, value_ty) = match (types::shape(&field.ty), &attrs.when) {
        (Shape::Option(inner), Some(when)) => (Some(scope.expr(&when.value, errors)), inner),
        (Shape::Option(_), None) => {
            errors.spanning(
                &field.ty,
                "an `Option` field needs `#[wire(when = <condition>)]`: it is read only when \
                 the condition on earlier fields or the context holds",
            );
            return FieldKind::Default;
        }
        (_, Some(when)) => {
            errors.at(
                when.span,
                "`when` applies to `Option` fields: the field is present only when the \
                 condition holds",
            );
            (None, &field.ty)
        }
        (_, None) => (None, &field.ty),
    };

    let len = attrs.len.as_ref().map(|len| Len {
        prefix: len.value.prefix,
        endian,
        surplus: len.value.surplus,
    });
    let body = value_body(value_ty, &attrs, endian, scope, errors);
    let computed = attrs.computed.as_ref().map(|computed| {
        let misplaced = if !matches!(body, Body::Number { .. }) || types::is_float(value_ty) {
            Some(format!(
                "`computed` applies to integer fields, and `{}` is not one",
                types::show(&field.ty)
            ))
        } else if when.is_some() || len.is_some() {
            Some("a computed field is always written: it takes no `when` or `len`".to_owned())
        } else {
            None
        };
        if let Some(message) = misplaced {
            errors.at(computed.span, message);
        }
        scope.computed(&computed.value, errors)
    });
    if let (Some(view), false) = (&attrs.view, env.has_view) {
        errors.at(
            view.span,
            "`view` describes a field of the container's view: declare one with \
             `#[wire(view = Name)]` on the container",
        );
    }
    if let Some(view) = &attrs.view {
        if !matches!(body, Body::Nested { .. } | Body::Repeat(_)) {
            errors.at(
                view.span,
                format!(
                    "`view` lets the view take any type that encodes like this field's; it \
                     applies to nested types and repeats, and `{}` is read natively",
                    types::show(value_ty)
                ),
            );
        }
    }
    FieldKind::Wire(Box::new(Wire {
        when,
        len,
        body,
        computed,
        view: attrs.view.is_some(),
    }))
}

/// The body of a field's value (the `Some` content for an `Option`).
fn value_body(
    ty: &Type,
    attrs: &FieldAttrs,
    endian: Endian,
    scope: &Scope<'_>,
    errors: &mut Errors,
) -> Body {
    let vec_element = match types::shape(ty) {
        Shape::Vec(element) if attrs.bytes.is_none() || attrs.repeat.is_some() => Some(element),
        _ => None,
    };
    let Some(element_ty) = vec_element else {
        for (key, span) in [
            ("count", attrs.repeat.as_ref().map(|r| r.span)),
            ("min_count", attrs.min_count.as_ref().map(|m| m.span)),
            ("max_count", attrs.max_count.as_ref().map(|m| m.span)),
            ("each_ctx", attrs.each_ctx.as_ref().map(|e| e.span)),
            ("cycle", attrs.cycle.as_ref().map(|c| c.span)),
        ] {
            if let Some(span) = span {
                let key = match (key, attrs.repeat.as_ref().map(|r| &r.value)) {
                    ("count", Some(RepeatAttr::UntilEnd)) => "until_end",
                    _ => key,
                };
                errors.at(
                    span,
                    format!(
                        "`{key}` applies to `Vec` fields, and `{}` is not one",
                        types::show(ty)
                    ),
                );
            }
        }
        let ctx = match &attrs.ctx {
            Some(ctx) => NestedCtx::Expr(scope.expr(&ctx.value, errors)),
            None => NestedCtx::Unit,
        };
        return single_body(
            ty,
            attrs,
            endian,
            ctx,
            attrs.ctx.as_ref().map(|c| c.span),
            errors,
        );
    };

    let Some(repeat) = &attrs.repeat else {
        errors.spanning(
            ty,
            "a `Vec` field needs its length: `count(prefix = u8|u16|u32|u64)`, \
             `count = <expression>` or `until_end`",
        );
        return Body::Bool;
    };
    let count = match &repeat.value {
        RepeatAttr::Prefix(prefix) => Count::Prefix {
            prefix: *prefix,
            endian,
        },
        RepeatAttr::Expr(expr) => Count::Expr(scope.expr(expr, errors)),
        RepeatAttr::UntilEnd => Count::UntilEnd,
    };
    check_count_bounds(attrs, errors);
    if let (Some(cycle), None) = (&attrs.cycle, &attrs.each_ctx) {
        errors.at(
            cycle.span,
            "`cycle` restarts the index `each_ctx` receives: add `each_ctx = |i| ..`",
        );
    }
    let ctx = match (&attrs.ctx, &attrs.each_ctx) {
        (Some(_), Some(each)) => {
            errors.at(
                each.span,
                "`ctx` and `each_ctx` both set the elements' context: keep one",
            );
            NestedCtx::Unit
        }
        (Some(ctx), None) => NestedCtx::Expr(scope.expr(&ctx.value, errors)),
        (None, Some(each)) => {
            let params = scope::pattern_names(&each.value.index);
            NestedCtx::Each {
                index: each.value.index.clone(),
                body: scope::scoped(
                    &each.value.body,
                    scope.names,
                    scope.current,
                    Reach::Earlier,
                    &params,
                    errors,
                ),
                cycle: attrs.cycle.as_ref().map(|c| scope.expr(&c.value, errors)),
            }
        }
        (None, None) => NestedCtx::Unit,
    };
    let ctx_span = attrs
        .ctx
        .as_ref()
        .map(|c| c.span)
        .or(attrs.each_ctx.as_ref().map(|e| e.span));
    let element = match types::shape(element_ty) {
        Shape::Vec(_) | Shape::Option(_) => {
            errors.spanning(
                element_ty,
                "elements of a repeat cannot be `Vec` or `Option`: declare a type for the \
                 element",
            );
            Body::Bool
        }
        _ => single_body(element_ty, attrs, endian, ctx, ctx_span, errors),
    };
    Body::Repeat(Box::new(Repeat {
        vec_ty: ty.clone(),
        count,
        min_count: attrs.min_count.as_ref().map(|m| m.value.clone()),
        max_count: attrs.max_count.as_ref().map(|m| m.value.clone()),
        element,
    }))
}

/// `min_count` and `max_count` given as literals must leave some count possible.
fn check_count_bounds(attrs: &FieldAttrs, errors: &mut Errors) {
    let (Some(min), Some(max)) = (&attrs.min_count, &attrs.max_count) else {
        return;
    };
    if let (Some(low), Some(high)) = (literal_value(&min.value), literal_value(&max.value)) {
        if low > high {
            errors.at(
                min.span,
                format!(
                    "`min_count = {low}` exceeds `max_count = {high}`: no count satisfies both"
                ),
            );
        }
    }
}

/// A value that is not a repeat (or one element of a repeat).
fn single_body(
    ty: &Type,
    attrs: &FieldAttrs,
    endian: Endian,
    ctx: NestedCtx,
    ctx_span: Option<Span>,
    errors: &mut Errors,
) -> Body {
    let shown = types::show(ty);
    let body = if let Some(text) = &attrs.str_ {
        if let Some(bytes) = &attrs.bytes {
            errors.at(
                bytes.span,
                "`str` and `bytes` cannot both describe one field",
            );
        }
        match types::str_kind(ty) {
            Some(kind) => {
                let encoding = text
                    .value
                    .encoding
                    .as_ref()
                    .map_or(Encoding::Utf8, |e| e.value);
                if let (StrKind::Borrowed, Some(given)) = (kind, &text.value.encoding) {
                    if given.value != Encoding::Utf8 {
                        errors.at(
                            given.span,
                            "a `&str` field borrows the input, so it must be UTF-8: use \
                             `String`, `Cow<'a, str>` or `Text<'a>` for other encodings",
                        );
                    }
                }
                Body::Str {
                    kind,
                    framing: Box::new(framing(&text.value, endian)),
                    encoding,
                }
            }
            None => {
                errors.at(
                    text.span,
                    format!(
                        "`str` applies to `&'a str`, `String`, `Cow<'a, str>` and `Text<'a>`, \
                         not `{shown}`"
                    ),
                );
                Body::Bool
            }
        }
    } else if let Some(bytes) = &attrs.bytes {
        match types::bytes_kind(ty) {
            Some(kind) => Body::Bytes {
                kind,
                framing: Box::new(framing(&bytes.value, endian)),
            },
            None => {
                errors.at(
                    bytes.span,
                    format!(
                        "`bytes` applies to `&'a [u8]`, `Vec<u8>` and `Cow<'a, [u8]>`, not \
                         `{shown}`"
                    ),
                );
                Body::Bool
            }
        }
    } else if attrs.bits.is_some() {
        Body::Bits {
            ty: ty.clone(),
            endian,
        }
    } else {
        match types::shape(ty) {
            Shape::Number(size) => Body::Number {
                ty: ty.clone(),
                endian,
                size,
            },
            Shape::Bool => Body::Bool,
            Shape::ByteArray => Body::ByteArray,
            Shape::Uuid => Body::Uuid { endian },
            Shape::Option(_) => {
                errors.spanning(ty, "an `Option` cannot hold another `Option`");
                Body::Bool
            }
            Shape::Vec(_) | Shape::Other => Body::Nested {
                ty: ty.clone(),
                ctx,
            },
        }
    };
    if let (Some(span), false) = (ctx_span, matches!(body, Body::Nested { .. })) {
        errors.at(
            span,
            format!(
                "`ctx` passes context to a type with its own `Decode` / `Encode`; `{shown}` is \
                 read natively"
            ),
        );
    }
    body
}

fn framing(text: &TextAttr, endian: Endian) -> Framing {
    let max = text.max.as_ref().map(|m| m.value.clone());
    match &text.prefix {
        Some(prefix) => Framing::Prefix {
            prefix: prefix.value,
            endian,
            max,
        },
        None => Framing::Rest { max },
    }
}
