//! The derive input as a typed model: a struct of fields or an enum of variants, each with its
//! parsed `#[kv]` attributes.

use syn::{Data as SynData, DeriveInput, Fields, Ident, Type};

use super::attr;
use crate::errors::Errors;

pub struct Container<'a> {
    pub ident: &'a Ident,
    pub attrs: attr::Container,
    pub data: Data<'a>,
    pub input: &'a DeriveInput,
}

pub enum Data<'a> {
    Struct(Vec<Field<'a>>),
    Enum(Vec<Variant<'a>>),
}

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    pub attrs: attr::Field,
}

/// What a field is on the wire, decided by its attributes (`check` makes sure at most one
/// applies).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// One key, one typed value.
    Plain,
    /// A key whose presence is the value.
    Flag,
    /// A group of elements under `base_N` keys.
    Indexed,
    /// The element number of an indexed element.
    Index,
    /// Every unclaimed pair.
    Rest,
    /// Not on the wire.
    Skip,
}

pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub attrs: attr::Variant,
    pub style: Style,
    pub original: &'a syn::Variant,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Unit,
    Tuple(usize),
    Struct,
}

impl<'a> Container<'a> {
    /// The model, or `None` (with an error recorded) for shapes the derive does not support.
    pub fn from_ast(errors: &mut Errors, input: &'a DeriveInput) -> Option<Self> {
        let attrs = attr::Container::from_attrs(errors, &input.attrs);
        let data = match &input.data {
            SynData::Struct(data) => match &data.fields {
                Fields::Named(named) => Data::Struct(
                    named
                        .named
                        .iter()
                        .map(|field| Field::from_ast(errors, field))
                        .collect(),
                ),
                _ => {
                    errors.spanning(
                        &input.ident,
                        "`KeyValues` needs a struct with named fields (each field is a key) or an enum",
                    );
                    return None;
                }
            },
            SynData::Enum(data) => Data::Enum(
                data.variants
                    .iter()
                    .map(|variant| Variant::from_ast(errors, variant))
                    .collect(),
            ),
            SynData::Union(_) => {
                errors.spanning(&input.ident, "`KeyValues` cannot be derived for a union");
                return None;
            }
        };
        Some(Container {
            ident: &input.ident,
            attrs,
            data,
            input,
        })
    }

    /// The type's name as errors show it.
    pub fn name(&self) -> String {
        unraw(self.ident)
    }
}

impl<'a> Field<'a> {
    fn from_ast(errors: &mut Errors, field: &'a syn::Field) -> Self {
        Field {
            ident: field.ident.as_ref().expect("named fields have identifiers"),
            ty: &field.ty,
            attrs: attr::Field::from_attrs(errors, &field.attrs),
        }
    }

    /// The field's name as error paths show it.
    pub fn name(&self) -> String {
        unraw(self.ident)
    }

    /// The key on the wire: `#[kv(key = "...")]` or the field's name.
    pub fn key(&self) -> String {
        self.attrs
            .key
            .as_ref()
            .map_or_else(|| self.name(), |k| k.value.clone())
    }

    /// Every key decoding accepts: the key, then the aliases.
    pub fn accepted_keys(&self) -> Vec<String> {
        let mut keys = vec![self.key()];
        keys.extend(self.attrs.aliases.iter().map(|a| a.value.clone()));
        keys
    }

    pub fn role(&self) -> Role {
        let a = &self.attrs;
        if a.indexed.is_some() {
            Role::Indexed
        } else if a.rest.is_some() {
            Role::Rest
        } else if a.index.is_some() {
            Role::Index
        } else if a.flag.is_some() {
            Role::Flag
        } else if a.skip.is_some() {
            Role::Skip
        } else {
            Role::Plain
        }
    }

    /// `T` when the field is `Option<T>`.
    pub fn option_inner(&self) -> Option<&'a Type> {
        option_inner(self.ty)
    }
}

impl<'a> Variant<'a> {
    fn from_ast(errors: &mut Errors, variant: &'a syn::Variant) -> Self {
        let style = match &variant.fields {
            Fields::Unit => Style::Unit,
            Fields::Unnamed(fields) => Style::Tuple(fields.unnamed.len()),
            Fields::Named(_) => Style::Struct,
        };
        Variant {
            ident: &variant.ident,
            attrs: attr::Variant::from_attrs(errors, &variant.attrs),
            style,
            original: variant,
        }
    }

    /// The variant's name as error paths show it.
    pub fn name(&self) -> String {
        unraw(self.ident)
    }

    /// The key on the wire: `#[kv(key = "...")]` or the variant's name in lower case.
    pub fn key(&self) -> String {
        self.attrs
            .key
            .as_ref()
            .map_or_else(|| self.name().to_lowercase(), |k| k.value.clone())
    }

    /// The tuple fields' types.
    pub fn field_types(&self) -> Vec<&'a Type> {
        self.original.fields.iter().map(|f| &f.ty).collect()
    }
}

fn unraw(ident: &Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map_or(s.clone(), str::to_owned)
}

/// `T` when `ty` is spelled `Option<T>` (or a path ending in it).
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// Whether `ty` is spelled `bool`.
pub fn is_bool(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("bool"))
}

/// Whether `ty` is spelled `usize`.
pub fn is_usize(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("usize"))
}
