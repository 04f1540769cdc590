//! The typed model of a `#[derive(Wire)]` input: what each field is on the wire, built from
//! its Rust type and its attributes. Code generation reads only this model.
//!
//! Building reports only what leaves a field without a wire description (an `Option` without
//! `when` or `trailing`, a `Vec` without a count, `str` on a type that is not a string); the
//! rules across attributes are `check`'s, which runs on the finished model. Building goes on
//! after an error, so that all mistakes of a declaration are reported together.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned as _;
use syn::{DeriveInput, Expr, Generics, Ident, Index, Lifetime, Member, Pat, Type};

use super::attr::{
    self, ChecksumSpan, ContainerAttrs, CtxBinding, Encoding, Endian, FieldAttrs, IntFraming,
    Prefix, RepeatAttr, Spanned, Surplus, TagType, TextAttr, VariantAttrs,
};
use super::names;
use super::scope::{self, Reach, Scoped};
use super::types::{self, BytesKind, Shape, StrKind};
use crate::errors::Errors;

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
    /// The attributes as written, for `check`.
    pub attrs: ContainerAttrs,
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
    /// The attributes as written, for `check`.
    pub attrs: FieldAttrs,
}

impl Field {
    /// The field's wire description, unless it is not on the wire.
    pub fn wire(&self) -> Option<&Wire> {
        match &self.kind {
            FieldKind::Wire(wire) => Some(wire),
            FieldKind::Default => None,
        }
    }

    /// Whether the field is written from an expression or a checksum rather than from its
    /// value (so a view leaves it out).
    pub fn is_computed(&self) -> bool {
        self.wire()
            .is_some_and(|w| w.computed.is_some() || w.checksum.is_some())
    }

    /// Whether the field is computed and checked against its expression after decoding
    /// (a `flags` field is computed but needs no check).
    pub fn is_checked(&self) -> bool {
        self.wire()
            .is_some_and(|w| w.computed.is_some() && !w.flag_bits)
    }

    /// The type of the value on the wire: the `Some` content of an `Option`.
    pub fn value_ty(&self) -> &Type {
        match types::shape(&self.ty) {
            Shape::Option(inner) => inner,
            _ => &self.ty,
        }
    }
}

pub enum FieldKind {
    /// `default`: not on the wire.
    Default,
    Wire(Box<Wire>),
}

/// How a field is read and written.
pub struct Wire {
    /// On an `Option`, what decides whether it is there; the rest describes the `Some`
    /// content.
    pub presence: Option<Presence>,
    /// `len(..)`: a length prefix around the value.
    pub len: Option<Len>,
    pub body: Body,
    /// `computed = ..`: the value written, and checked after decoding.
    pub computed: Option<Scoped>,
    /// `view`: in the view, any type (for a repeat, any elements) that encodes like this one.
    pub view: bool,
    /// `flags`: `computed` holds the bits of the `flag(..)` fields that are present; decoding
    /// keeps the bits as sent and needs no check (each field was read by its bit).
    pub flag_bits: bool,
    /// `range`: generate `<FIELD>_RANGE`.
    pub range: bool,
    /// `crc32(..)`: a checksum of other bytes, verified on decode and computed on encode.
    pub checksum: Option<Checksum>,
}

/// A CRC32 the field holds: of the bytes after it to the end of the input, or of its
/// container's bytes before it.
#[derive(Clone, Copy)]
pub struct Checksum {
    pub span: ChecksumSpan,
    pub endian: Endian,
}

/// Whether an `Option` field is on the wire.
pub enum Presence {
    /// `when = ..`: when the condition on earlier fields or the context holds.
    When(Scoped),
    /// `trailing`: when input is left (it is the last field).
    Trailing,
    /// `if_next = ..`: when the input's next bytes are the given byte or byte string, which
    /// the value then reads (a block that starts with a marker some senders put there).
    Next(Expr),
}

impl Presence {
    /// The condition's expression, for `when`.
    pub fn condition(&self) -> Option<&Scoped> {
        match self {
            Presence::When(condition) => Some(condition),
            Presence::Trailing | Presence::Next(_) => None,
        }
    }
}

/// A length prefix written after the fact and bounding the decode.
#[derive(Clone)]
pub struct Len {
    pub prefix: Prefix,
    pub endian: Endian,
    pub surplus: Surplus,
    /// `includes = N`: bytes the length counts besides the value.
    pub includes: Option<Expr>,
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
    /// `varint`: LEB128 groups of a `u32`/`u64`, or a VarInt/VarLong `i32`/`i64`;
    /// `packed_int`: Teeworlds' packed `i32` (or never-negative `u32`).
    VarInt {
        ty: Type,
        framing: IntFraming,
    },
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
    /// `dec(...)`: an integer as decimal text.
    Dec {
        ty: Type,
        framing: Box<Framing>,
    },
    Repeat(Box<Repeat>),
    /// `bit_width = N`: `width` bits of an unsigned integer shared with the neighbouring bit
    /// fields (`group`), the first field in the highest bits.
    BitField {
        ty: Type,
        /// A `bool` of one bit rather than an integer.
        is_bool: bool,
        width: u32,
        /// The field's place in `group.members`.
        position: usize,
        group: Box<BitGroup>,
    },
    /// Through the type's own `Decode` / `Encode`.
    Nested {
        ty: Type,
        ctx: NestedCtx,
    },
}

/// Consecutive bit fields that fill one unsigned integer of `size` bytes together.
#[derive(Clone)]
pub struct BitGroup {
    /// Numbers the groups of one struct or variant, for the generated local.
    pub id: usize,
    pub size: usize,
    pub endian: Endian,
    pub members: Vec<BitMember>,
}

/// One field of a [`BitGroup`].
#[derive(Clone)]
pub struct BitMember {
    pub local: Ident,
    /// Its lowest bit's place in the integer.
    pub shift: u32,
    /// The field's error path segment.
    pub path: Option<String>,
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
    /// Ended by a NUL byte, which is not part of the value.
    Nul {
        max: Option<Expr>,
    },
    /// `until = b' '` or `until = b"\r\n"`: ended by the given byte or byte string, which
    /// is not part of the value; with `or_end`, the end of the input ends it too. `before = ..`
    /// is the same except that the terminator stays for the next field.
    Until {
        end: Expr,
        or_end: bool,
        max: Option<Expr>,
        /// False for `before = ..`: the terminator is left for the next field, and not
        /// written with the value.
        consume: bool,
    },
    /// `quoted`: between two `"`, which are not part of the value.
    Quoted {
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
    Prefix {
        prefix: Prefix,
        endian: Endian,
    },
    Expr(Scoped),
    UntilEnd,
    /// Elements until a NUL byte (consumed, and written after them); with `or_end`, the end
    /// of the input ends the list too.
    UntilNul {
        or_end: bool,
    },
    /// `until = ..` (`consume`) or `before = ..`: elements until the terminator, a byte or a
    /// byte string; `until` reads it and writes it after the elements, `before` leaves it for
    /// the next field. With `or_end`, the end of the input ends the list too.
    Until {
        end: Expr,
        or_end: bool,
        consume: bool,
    },
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
    /// False for an `external` tag and for variants chosen by their magic.
    pub tag_on_wire: bool,
    /// The variants declare `magic` instead of a tag: the first whose magic starts the input
    /// is decoded.
    pub by_magic: bool,
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
    /// The attributes as written, for `check`.
    pub attrs: VariantAttrs,
}

pub enum VariantTag {
    /// `#[wire(tag = ..)]` or the discriminant.
    Value(Expr),
    /// `#[wire(magic = ..)]`: the bytes that start the variant and select it.
    Magic(Expr),
    /// `#[wire(other)]`: the tag and the raw body are its two fields.
    Other {
        tag: Member,
        body: Member,
        body_kind: BytesKind,
    },
}

/// Builds the model, recording in `errors` what leaves a part without a description. `None`
/// only when the input is not something the derive can describe at all (a union).
pub fn build(input: &DeriveInput, errors: &mut Errors) -> Option<Container> {
    let attrs = attr::container(&input.attrs, errors);
    let endian = attrs.endian.as_ref().map_or(Endian::Big, |e| e.value);
    let lifetime = input
        .generics
        .lifetimes()
        .next()
        .map(|l| l.lifetime.clone());
    let bindings = attrs.ctx.as_ref().map(|c| &c.value[..]).unwrap_or(&[]);
    let env = Env { endian };

    let data = match &input.data {
        syn::Data::Struct(data) => Data::Struct(fields(&data.fields, &env, errors)),
        syn::Data::Enum(data) => Data::Enum(enumeration(data, &attrs, &env, errors)),
        syn::Data::Union(union) => {
            errors.at(
                union.union_token.span,
                "`Wire` can be derived for structs and enums, not unions",
            );
            return None;
        }
    };

    let ctx = match (&attrs.external, &attrs.tag) {
        (Some(_), Some(tag)) => ContainerCtx::ExternalTag(tag.value),
        _ if attrs.ctx.is_some() => ContainerCtx::Bindings(bindings.to_vec()),
        _ => ContainerCtx::Unit,
    };

    Some(Container {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        view: attrs.view.as_ref().map(|v| v.value.clone()),
        generics: input.generics.clone(),
        lifetime,
        magic: attrs.magic.as_ref().map(|m| m.value.clone()),
        ctx,
        data,
        attrs,
    })
}

/// What every field of the container shares.
struct Env {
    endian: Endian,
}

fn enumeration(
    data: &syn::DataEnum,
    attrs: &ContainerAttrs,
    env: &Env,
    errors: &mut Errors,
) -> Enum {
    // A missing tag type is `check`'s to report; u8 lets the variants be built meanwhile.
    let tag_ty = attrs.tag.as_ref().map_or(TagType::U8, |tag| tag.value);
    let len = attrs.len.as_ref().map(|len| Len {
        prefix: len.value,
        endian: env.endian,
        surplus: attrs.surplus.as_ref().map_or(Surplus::Error, |s| s.value),
        includes: None,
    });

    let parsed: Vec<VariantAttrs> = data
        .variants
        .iter()
        .map(|variant| attr::variant(&variant.attrs, errors))
        .collect();
    // A variant without `magic` in such an enum is `check`'s to report.
    let by_magic = parsed.iter().any(|vattrs| vattrs.magic.is_some());

    let mut variants = Vec::new();
    for (variant, vattrs) in data.variants.iter().zip(parsed) {
        let (tag, fields) = if let Some(magic) = &vattrs.magic {
            (
                VariantTag::Magic(magic.value.clone()),
                fields(&variant.fields, env, errors),
            )
        } else if by_magic {
            // Reported by `check`; the fields are still built for their own errors.
            let placeholder: Expr = syn::parse_quote!(b"");
            (
                VariantTag::Magic(placeholder),
                fields(&variant.fields, env, errors),
            )
        } else if vattrs.other.is_some() {
            let Some(tag) = other_variant(variant, errors) else {
                continue;
            };
            (tag, Vec::new())
        } else {
            let tag = match (&vattrs.tag, &variant.discriminant) {
                (Some(tag), _) => tag.value.clone(),
                (None, Some((_, discriminant))) if variant.fields.is_empty() => {
                    discriminant.clone()
                }
                (None, _) => {
                    errors.at(
                        variant.ident.span(),
                        format!(
                            "variant `{}` needs `#[wire(tag = ..)]`: the tag value that selects \
                             it",
                            variant.ident
                        ),
                    );
                    continue;
                }
            };
            (VariantTag::Value(tag), fields(&variant.fields, env, errors))
        };
        variants.push(Variant {
            ident: variant.ident.clone(),
            tag,
            fields,
            declared: without_wire_attrs(&variant.fields),
            docs: docs(&variant.attrs),
            attrs: vattrs,
        });
    }

    Enum {
        tag_ty,
        endian: env.endian,
        tag_on_wire: attrs.external.is_none() && !by_magic,
        by_magic,
        len,
        variants,
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
    let computed: Vec<bool> = attrs
        .iter()
        .map(|a| a.computed.is_some() || a.flags.is_some())
        .collect();
    let flagged = flagged_fields(&names, &attrs, errors);
    let mut built: Vec<Field> = fields
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
            let local_name = match &field.ident {
                Some(ident) => ident.unraw().to_string(),
                None => index.to_string(),
            };
            let scope = Scope {
                names: &names,
                current: index,
                computed: &computed,
                flagged: &flagged,
            };
            let kind = field_kind(field, &attrs, env, &scope, errors);
            Field {
                member: member(field, index),
                local: names::field(&local_name),
                binding,
                path,
                ty: field.ty.clone(),
                vis: field.vis.clone(),
                docs: docs(&field.attrs),
                kind,
                attrs,
            }
        })
        .collect();
    group_bit_fields(&mut built, errors);
    built
}

/// For each field, the `flag(..)` fields that name it: their index and mask. A name that is
/// no field, or a field without `flags`, is reported at the name.
fn flagged_fields(
    names: &[String],
    attrs: &[FieldAttrs],
    errors: &mut Errors,
) -> Vec<Vec<(usize, Expr)>> {
    let mut flagged: Vec<Vec<(usize, Expr)>> = names.iter().map(|_| Vec::new()).collect();
    for (index, field) in attrs.iter().enumerate() {
        let Some(flag) = &field.flag else {
            continue;
        };
        let name = flag.value.field.unraw().to_string();
        match names.iter().position(|n| *n == name) {
            Some(at) if at < index && attrs[at].flags.is_some() => {
                flagged[at].push((index, flag.value.mask.clone()));
            }
            Some(at) if at < index => errors.at(
                flag.value.field.span(),
                format!(
                    "`{name}` is not a flag field: mark it `#[wire(flags)]`, so that it is \
                     written from the fields it announces"
                ),
            ),
            Some(_) => errors.at(
                flag.value.field.span(),
                format!(
                    "`{name}` must come before this field: it is read first, and says whether \
                     this one follows"
                ),
            ),
            None => errors.at(
                flag.value.field.span(),
                format!("no field named `{name}` in this struct or variant"),
            ),
        }
    }
    for (index, field) in attrs.iter().enumerate() {
        if let (Some(flags), true) = (&field.flags, flagged[index].is_empty()) {
            errors.at(
                flags.span,
                format!(
                    "no field names `{}` with `flag({}, MASK)`: a flag field announces at least \
                     one optional field",
                    names[index], names[index]
                ),
            );
        }
    }
    flagged
}

/// Assembles consecutive bit fields into groups, each filling one integer of 1, 2, 4 or 8
/// bytes, the first field in the highest bits. A group closes at the first byte boundary.
fn group_bit_fields(fields: &mut [Field], errors: &mut Errors) {
    let mut index = 0;
    let mut id = 0;
    while index < fields.len() {
        if !is_bit_field(&fields[index]) {
            index += 1;
            continue;
        }
        let start = index;
        let mut total = 0u32;
        while index < fields.len() && is_bit_field(&fields[index]) {
            total += bit_width(&fields[index]);
            index += 1;
            if total.is_multiple_of(8) {
                break;
            }
        }
        let span = fields[start]
            .attrs
            .bit_width
            .as_ref()
            .map_or_else(Span::call_site, |b| b.span);
        if !matches!(total, 8 | 16 | 32 | 64) {
            errors.at(
                span,
                format!(
                    "these consecutive bit fields take {total} bits: a run of bit fields fills \
                     a whole u8, u16, u32 or u64 (8, 16, 32 or 64 bits)"
                ),
            );
            continue;
        }
        let mut members = Vec::new();
        let mut used = 0;
        for field in &fields[start..index] {
            let width = bit_width(field);
            used += width;
            members.push(BitMember {
                local: field.local.clone(),
                shift: total - used,
                path: field.path.clone(),
            });
        }
        let endian = match fields[start].wire().map(|w| &w.body) {
            Some(Body::BitField { group, .. }) => group.endian,
            _ => Endian::Big,
        };
        let group = BitGroup {
            id,
            size: (total / 8) as usize,
            endian,
            members,
        };
        id += 1;
        for (position, field) in fields[start..index].iter_mut().enumerate() {
            if let FieldKind::Wire(wire) = &mut field.kind {
                if let Body::BitField {
                    group: slot,
                    position: at,
                    ..
                } = &mut wire.body
                {
                    **slot = group.clone();
                    *at = position;
                }
            }
        }
    }
}

fn is_bit_field(field: &Field) -> bool {
    matches!(field.wire().map(|w| &w.body), Some(Body::BitField { .. }))
}

fn bit_width(field: &Field) -> u32 {
    match field.wire().map(|w| &w.body) {
        Some(Body::BitField { width, .. }) => *width,
        _ => 0,
    }
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

/// The fields an expression on field `current` may name.
struct Scope<'n> {
    names: &'n [String],
    current: usize,
    /// Which fields are computed.
    computed: &'n [bool],
    /// For each field, the `flag(..)` fields that name it, with their masks.
    flagged: &'n [Vec<(usize, Expr)>],
}

impl Scope<'_> {
    /// A `when`, `count`, `ctx` or `each_ctx` expression: it sees the earlier fields.
    fn expr(&self, expr: &Expr, errors: &mut Errors) -> Scoped {
        scope::scoped(expr, self.names, self.current, Reach::Earlier, &[], errors)
    }

    /// The presence of a `flag(flags, MASK)` field: `flags`' `MASK` bits are set. `None` when
    /// the flag field is not one (reported by `flagged_fields`).
    fn flag_presence(&self, attrs: &FieldAttrs) -> Option<Scoped> {
        let flag = &attrs.flag.as_ref()?.value;
        let name = flag.field.unraw().to_string();
        let at = self.names.iter().position(|n| *n == name)?;
        if at >= self.current || !self.flagged[at].iter().any(|(i, _)| *i == self.current) {
            return None;
        }
        let (field, mask) = (&flag.field, &flag.mask);
        Some(Scoped {
            expr: quote::quote!((*#field & (#mask)) != 0),
            uses: vec![at],
        })
    }

    /// The value of a `flags` field: the masks of the `flag(..)` fields that are present.
    fn flag_bits(&self) -> Scoped {
        let flagged = &self.flagged[self.current];
        let terms = flagged.iter().map(|(index, mask)| {
            let name = Ident::new(&self.names[*index], Span::call_site());
            quote::quote!((if ::core::option::Option::is_some(#name) { #mask } else { 0 }))
        });
        Scoped {
            expr: quote::quote!(0 #(| #terms)*),
            uses: flagged.iter().map(|(index, _)| *index).collect(),
        }
    }

    /// A `computed` expression: it sees every field that is not computed.
    fn computed(&self, expr: &Expr, errors: &mut Errors) -> Scoped {
        let reach = Reach::NotComputed(self.computed);
        scope::scoped(expr, self.names, self.current, reach, &[], errors)
    }
}

fn field_kind(
    field: &syn::Field,
    attrs: &FieldAttrs,
    env: &Env,
    scope: &Scope<'_>,
    errors: &mut Errors,
) -> FieldKind {
    if attrs.default.is_some() {
        return FieldKind::Default;
    }
    let endian = attrs.endian.as_ref().map_or(env.endian, |e| e.value);

    let (presence, value_ty) = match (types::shape(&field.ty), &attrs.when, &attrs.trailing) {
        (Shape::Option(inner), _, _) if attrs.flag.is_some() => {
            (scope.flag_presence(attrs).map(Presence::When), inner)
        }
        (Shape::Option(inner), Some(when), _) => {
            (Some(Presence::When(scope.expr(&when.value, errors))), inner)
        }
        (Shape::Option(inner), None, Some(_)) => (Some(Presence::Trailing), inner),
        (Shape::Option(inner), None, None) if attrs.if_next.is_some() => {
            let marker = attrs.if_next.as_ref().map(|m| m.value.clone());
            (marker.map(Presence::Next), inner)
        }
        (Shape::Option(_), None, None) => {
            errors.spanning(
                &field.ty,
                "an `Option` field needs `#[wire(when = <condition>)]`, read only when the \
                 condition on earlier fields or the context holds, `#[wire(trailing)]`, \
                 read when input is left, or `#[wire(if_next = b\"..\")]`, read when the \
                 input's next bytes are these",
            );
            return FieldKind::Default;
        }
        (_, _, _) => (None, &field.ty),
    };

    let len = attrs.len.as_ref().map(|len| Len {
        prefix: len.value.prefix.value,
        endian,
        surplus: len.value.surplus,
        includes: len.value.includes.as_ref().map(|i| i.value.clone()),
    });
    let body = value_body(value_ty, attrs, endian, scope, errors);
    let computed = match &attrs.computed {
        Some(computed) => Some(scope.computed(&computed.value, errors)),
        None if attrs.flags.is_some() => Some(scope.flag_bits()),
        None => None,
    };
    let checksum = attrs.crc32.as_ref().map(|crc| Checksum {
        span: crc.value,
        endian,
    });
    FieldKind::Wire(Box::new(Wire {
        presence,
        len,
        body,
        computed,
        view: attrs.view.is_some(),
        flag_bits: attrs.flags.is_some() && attrs.computed.is_none(),
        range: attrs.range.is_some(),
        checksum,
    }))
}

/// Whether a field of type `ty` (the `Some` content for an `Option`) is a repeat: a `Vec`,
/// unless it is a `Vec<u8>` described with `bytes` and no count.
pub fn is_repeat(ty: &Type, attrs: &FieldAttrs) -> bool {
    matches!(types::shape(ty), Shape::Vec(_)) && (attrs.bytes.is_none() || attrs.repeat.is_some())
}

/// The body of a field's value (the `Some` content for an `Option`).
fn value_body(
    ty: &Type,
    attrs: &FieldAttrs,
    endian: Endian,
    scope: &Scope<'_>,
    errors: &mut Errors,
) -> Body {
    let element_ty = match types::shape(ty) {
        Shape::Vec(element) if is_repeat(ty, attrs) => element,
        _ => {
            let ctx = match &attrs.ctx {
                Some(ctx) => NestedCtx::Expr(scope.expr(&ctx.value, errors)),
                None => NestedCtx::Unit,
            };
            return single_body(ty, attrs, endian, ctx, errors);
        }
    };

    let Some(repeat) = &attrs.repeat else {
        errors.spanning(
            ty,
            "a `Vec` field needs its length: `count(prefix = u8|u16|u32|u64)`, \
             `count = <expression>`, `until_end`, `until_nul`, `until = ..` or `before = ..`",
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
        RepeatAttr::UntilNul { or_end } => Count::UntilNul { or_end: *or_end },
        RepeatAttr::Until {
            end,
            or_end,
            consume,
        } => Count::Until {
            end: end.clone(),
            or_end: *or_end,
            consume: *consume,
        },
    };
    let ctx = match (&attrs.ctx, &attrs.each_ctx) {
        // Both given is `check`'s to report.
        (Some(_), Some(_)) => NestedCtx::Unit,
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
    let element = match types::shape(element_ty) {
        Shape::Vec(_) | Shape::Option(_) => {
            errors.spanning(
                element_ty,
                "elements of a repeat cannot be `Vec` or `Option`: declare a type for the \
                 element",
            );
            Body::Bool
        }
        _ => single_body(element_ty, attrs, endian, ctx, errors),
    };
    Body::Repeat(Box::new(Repeat {
        vec_ty: ty.clone(),
        count,
        min_count: attrs.min_count.as_ref().map(|m| m.value.clone()),
        max_count: attrs.max_count.as_ref().map(|m| m.value.clone()),
        element,
    }))
}

/// A value that is not a repeat (or one element of a repeat).
fn single_body(
    ty: &Type,
    attrs: &FieldAttrs,
    endian: Endian,
    ctx: NestedCtx,
    errors: &mut Errors,
) -> Body {
    let shown = types::show(ty);
    if let Some(text) = &attrs.str_ {
        let Some(kind) = types::str_kind(ty) else {
            errors.at(
                text.span,
                format!(
                    "`str` applies to `&'a str`, `String`, `Cow<'a, str>` and `Text<'a>`, not \
                     `{shown}`"
                ),
            );
            return Body::Bool;
        };
        return Body::Str {
            kind,
            framing: Box::new(framing(&text.value, endian)),
            encoding: text
                .value
                .encoding
                .as_ref()
                .map_or(Encoding::Utf8, |e| e.value),
        };
    }
    if let Some(bytes) = &attrs.bytes {
        let Some(kind) = types::bytes_kind(ty) else {
            errors.at(
                bytes.span,
                format!(
                    "`bytes` applies to `&'a [u8]`, `Vec<u8>` and `Cow<'a, [u8]>`, not `{shown}`"
                ),
            );
            return Body::Bool;
        };
        return Body::Bytes {
            kind,
            framing: Box::new(framing(&bytes.value, endian)),
        };
    }
    if let Some(dec) = &attrs.dec {
        if !matches!(types::shape(ty), Shape::Number(_)) || types::is_float(ty) {
            errors.at(
                dec.span,
                format!("`dec` applies to integer fields, not `{shown}`"),
            );
            return Body::Bool;
        }
        return Body::Dec {
            ty: ty.clone(),
            framing: Box::new(framing(&dec.value, endian)),
        };
    }
    if let Some(bit_width) = &attrs.bit_width {
        let bits = match types::shape(ty) {
            Shape::Bool => Some(1),
            Shape::Number(size) if types::is_unsigned(ty) => Some(size * 8),
            _ => None,
        };
        let Some(bits) = bits else {
            errors.at(
                bit_width.span,
                format!("`bit_width` applies to unsigned integers and `bool`, not `{shown}`"),
            );
            return Body::Bool;
        };
        let width = match bit_width.value.base10_parse::<u32>() {
            Ok(width) if (1..=bits).contains(&(width as usize)) => width,
            _ => {
                errors.spanning(
                    &bit_width.value,
                    format!("a `{shown}` bit field is 1 to {bits} bits wide"),
                );
                return Body::Bool;
            }
        };
        return Body::BitField {
            ty: ty.clone(),
            is_bool: matches!(types::shape(ty), Shape::Bool),
            width,
            position: 0,
            group: Box::new(BitGroup {
                id: 0,
                size: 0,
                endian,
                members: Vec::new(),
            }),
        };
    }
    if let Some(Spanned {
        value: IntFraming::Packed,
        span,
    }) = &attrs.varint
    {
        if !types::is_packed_int_type(ty) {
            errors.at(
                *span,
                format!(
                    "`packed_int` applies to `i32` and to `u32` (never negative), not `{shown}`"
                ),
            );
            return Body::Bool;
        }
        return Body::VarInt {
            ty: ty.clone(),
            framing: IntFraming::Packed,
        };
    }
    if let Some(varint) = &attrs.varint {
        if !types::is_varint_type(ty) {
            errors.at(
                varint.span,
                format!(
                    "`varint` applies to `u32` and `u64` (LEB128) and to `i32` and `i64` \
                     (VarInt, VarLong), not `{shown}`"
                ),
            );
            return Body::Bool;
        }
        return Body::VarInt {
            ty: ty.clone(),
            framing: IntFraming::Leb128,
        };
    }
    if attrs.bits.is_some() {
        return Body::Bits {
            ty: ty.clone(),
            endian,
        };
    }
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
}

fn framing(text: &TextAttr, endian: Endian) -> Framing {
    let max = text.max.as_ref().map(|m| m.value.clone());
    match &text.prefix {
        Some(prefix) => Framing::Prefix {
            prefix: prefix.value,
            endian,
            max,
        },
        None if text.nul.is_some() => Framing::Nul { max },
        None if text.quoted.is_some() => Framing::Quoted { max },
        None if text.until.is_some() || text.before.is_some() => Framing::Until {
            end: text
                .until
                .as_ref()
                .or(text.before.as_ref())
                .map(|u| u.value.clone())
                .expect("checked"),
            or_end: text.or_end.is_some(),
            max,
            consume: text.until.is_some(),
        },
        None => Framing::Rest { max },
    }
}
