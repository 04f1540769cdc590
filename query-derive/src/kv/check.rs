//! Rules across attributes: which keywords go together, which keys collide, which shapes the
//! generated code can handle. Every violation is recorded at the span that caused it.

use std::collections::HashMap;

use syn::GenericParam;

use super::ast::{is_bool, is_usize, Container, Data, Field, Role, Style, Variant};
use super::attr::StrArg;
use super::names::*;
use crate::errors::Errors;

pub fn check(errors: &mut Errors, cont: &Container<'_>) {
    check_generics(errors, cont);
    match &cont.data {
        Data::Struct(fields) => check_struct(errors, cont, fields),
        Data::Enum(variants) => check_enum(errors, cont, variants),
    }
}

fn check_generics(errors: &mut Errors, cont: &Container<'_>) {
    for param in &cont.input.generics.params {
        match param {
            GenericParam::Lifetime(_) => {}
            GenericParam::Type(ty) => errors.spanning(
                ty,
                "`KeyValues` does not support type parameters: declare the concrete types",
            ),
            GenericParam::Const(c) => {
                errors.spanning(c, "`KeyValues` does not support const parameters")
            }
        }
    }
}

/// A key must be writable: not empty and free of the delimiter.
fn check_key_text(errors: &mut Errors, arg: &StrArg, what: &str) {
    if arg.value.contains('\0') {
        errors.at(
            arg.span,
            format!(
                "{what} cannot contain a NUL: it separates keys and values in `format = \"nul\"`"
            ),
        );
    } else if arg.value.is_empty() {
        errors.at(arg.span, format!("{what} cannot be empty"));
    } else if arg.value.contains('\\') {
        errors.at(
            arg.span,
            format!("{what} cannot contain a backslash: it separates keys and values"),
        );
    }
}

fn check_struct(errors: &mut Errors, cont: &Container<'_>, fields: &[Field<'_>]) {
    let mut rest: Option<&Field<'_>> = None;
    let mut index: Option<&Field<'_>> = None;
    // Key → the field that claimed it first.
    let mut keys: HashMap<String, String> = HashMap::new();

    for field in fields {
        check_role_conflicts(errors, field);
        check_keywords_fit_role(errors, field);
        match field.role() {
            Role::Rest => {
                if let Some(first) = rest {
                    errors.spanning(
                        field.ident,
                        format!(
                            "only one `rest` field is allowed; `{}` is one already",
                            first.name()
                        ),
                    );
                } else {
                    rest = Some(field);
                }
            }
            Role::Index => {
                if let Some(first) = index {
                    errors.spanning(
                        field.ident,
                        format!(
                            "only one `index` field is allowed; `{}` is one already",
                            first.name()
                        ),
                    );
                } else {
                    index = Some(field);
                }
                if !is_usize(field.ty) {
                    errors.spanning(field.ty, "an `index` field must be a `usize`");
                }
            }
            Role::Flag => {
                if !is_bool(field.ty) {
                    errors.spanning(field.ty, "a `flag` field must be a `bool`");
                }
            }
            Role::Plain | Role::Indexed | Role::Skip => {}
        }
        if matches!(field.role(), Role::Plain | Role::Flag) {
            if let Some(key) = &field.attrs.key {
                check_key_text(errors, key, "a key");
            }
            for alias in &field.attrs.aliases {
                check_key_text(errors, alias, "an alias");
            }
            let spans = std::iter::once(
                field
                    .attrs
                    .key
                    .as_ref()
                    .map_or(field.ident.span(), |k| k.span),
            )
            .chain(field.attrs.aliases.iter().map(|a| a.span));
            for (key, span) in field.accepted_keys().into_iter().zip(spans) {
                match keys.get(&key) {
                    Some(owner) => errors.at(
                        span,
                        format!("key `{key}` is already used by field `{owner}`"),
                    ),
                    None => {
                        keys.insert(key, field.name());
                    }
                }
            }
        }
    }

    if let Some(prefix) = &cont.attrs.unknown_prefix {
        check_key_text(errors, prefix, "`unknown_prefix`");
        if rest.is_none() {
            errors.at(
                prefix.span,
                "`unknown_prefix` needs a `#[kv(rest)]` field to keep the keys it claims",
            );
        }
    }
}

/// The role keywords exclude each other.
fn check_role_conflicts(errors: &mut Errors, field: &Field<'_>) {
    let a = &field.attrs;
    let roles = [
        (INDEXED, a.indexed),
        (REST, a.rest),
        (INDEX, a.index),
        (FLAG, a.flag),
        (SKIP, a.skip),
    ];
    let present: Vec<_> = roles
        .iter()
        .filter_map(|(name, span)| span.map(|s| (*name, s)))
        .collect();
    if let Some(((first, _), others)) = present.split_first() {
        for (name, span) in others {
            errors.at(*span, format!("`{name}` cannot be combined with `{first}`"));
        }
    }
}

/// `key`, `alias`, `default` and `parse` only make sense on some roles.
fn check_keywords_fit_role(errors: &mut Errors, field: &Field<'_>) {
    let a = &field.attrs;
    let role = field.role();
    let role_name = match role {
        Role::Plain | Role::Flag => None,
        Role::Indexed => Some(INDEXED),
        Role::Rest => Some(REST),
        Role::Index => Some(INDEX),
        Role::Skip => Some(SKIP),
    };
    if let Some(role_name) = role_name {
        if let Some(key) = &a.key {
            let why = if role == Role::Indexed {
                "the element type's fields name the keys"
            } else {
                "it has no key of its own"
            };
            errors.at(
                key.span,
                format!("`key` does not apply to `{role_name}` fields: {why}"),
            );
        }
        for alias in &a.aliases {
            errors.at(
                alias.span,
                format!("`alias` does not apply to `{role_name}` fields"),
            );
        }
    }
    if role != Role::Plain {
        let role_name = role_name.unwrap_or(FLAG);
        if let Some(span) = a.default {
            errors.at(
                span,
                format!("`default` does not apply to `{role_name}` fields"),
            );
        }
        if let Some(span) = a.parse {
            errors.at(
                span,
                format!("`parse` does not apply to `{role_name}` fields"),
            );
        }
    } else if let (Some(span), Some(_)) = (a.default, field.option_inner()) {
        errors.at(
            span,
            "`default` is redundant on an `Option` field: an absent key is `None`",
        );
    }
}

fn check_enum(errors: &mut Errors, cont: &Container<'_>, variants: &[Variant<'_>]) {
    if variants.is_empty() {
        errors.spanning(cont.ident, "an enum needs at least one variant to be a key");
    }
    if let Some(prefix) = &cont.attrs.unknown_prefix {
        errors.at(
            prefix.span,
            "`unknown_prefix` applies to structs (indexed elements), not enums",
        );
    }
    let mut other: Option<&Variant<'_>> = None;
    // (key, exact value or None for any value) → the variant that matches it first.
    let mut matchers: HashMap<(String, Option<String>), String> = HashMap::new();

    for variant in variants {
        for field in &variant.original.fields {
            if field.attrs.iter().any(|a| a.path().is_ident(KV)) {
                errors.spanning(
                    field,
                    "`#[kv]` is not supported on a variant's fields; put it on the variant",
                );
            }
        }
        let a = &variant.attrs;
        if let Some(key) = &a.key {
            check_key_text(errors, key, "a key");
        }
        match variant.style {
            Style::Struct => {
                errors.spanning(
                    variant.original,
                    "a variant is one pair: use a unit variant (key only) or a tuple variant with one field (the value)",
                );
                continue;
            }
            Style::Unit => {
                if let Some(span) = a.other {
                    errors.at(
                        span,
                        "`other` needs a tuple variant with two fields: `Other(key, value)`",
                    );
                }
            }
            Style::Tuple(n) => {
                if let Some(value) = &a.value {
                    errors.at(
                        value.span,
                        "`value` applies to unit variants only: this variant holds the value",
                    );
                }
                match (n, a.other) {
                    (1, None) | (2, Some(_)) => {}
                    (_, Some(span)) => errors.at(
                        span,
                        "`other` needs a tuple variant with two fields: `Other(key, value)`",
                    ),
                    (_, None) => errors.spanning(
                        variant.original,
                        "a tuple variant holds one field, the value (or two with `#[kv(other)]`)",
                    ),
                }
            }
        }
        if let Some(span) = a.other {
            if let Some(key) = &a.key {
                errors.at(
                    key.span,
                    "an `other` variant takes every undeclared key; it has no `key`",
                );
            }
            if let Some(first) = other {
                errors.at(
                    span,
                    format!(
                        "only one `other` variant is allowed; `{}` is one already",
                        first.name()
                    ),
                );
            } else {
                other = Some(variant);
            }
            continue;
        }
        let matcher = (variant.key(), a.value.as_ref().map(|v| v.value.clone()));
        let span = a
            .value
            .as_ref()
            .map(|v| v.span)
            .or(a.key.as_ref().map(|k| k.span))
            .unwrap_or(variant.ident.span());
        match matchers.get(&matcher) {
            Some(owner) => errors.at(
                span,
                format!(
                    "variant `{owner}` already matches key `{}` with this value",
                    matcher.0
                ),
            ),
            None => {
                matchers.insert(matcher, variant.name());
            }
        }
    }
}
