//! `#[kv(...)]` attributes parsed into typed values, one keyword at a time.
//!
//! Parsing only records what was written (and rejects unknown keywords and malformed values);
//! whether the keywords make sense together is decided in `check`.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr, Token};

use super::names::*;
use crate::errors::Errors;

/// A string argument with the span it was written at.
#[derive(Clone)]
pub struct StrArg {
    pub value: String,
    pub span: Span,
}

impl StrArg {
    fn from_lit(lit: &LitStr) -> Self {
        StrArg {
            value: lit.value(),
            span: lit.span(),
        }
    }
}

/// A text encoding a container can declare as its default.
#[derive(Clone, Copy)]
pub enum Encoding {
    Utf8,
    Latin1,
    Windows1252,
    Windows1251,
}

impl Encoding {
    fn parse(name: &str) -> Option<Self> {
        let key: String = name
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match key.as_str() {
            "utf8" => Some(Encoding::Utf8),
            "latin1" | "iso88591" => Some(Encoding::Latin1),
            "windows1252" | "cp1252" => Some(Encoding::Windows1252),
            "windows1251" | "cp1251" => Some(Encoding::Windows1251),
            _ => None,
        }
    }

    /// The `TextEncoding` variant's name.
    pub fn variant(self) -> &'static str {
        match self {
            Encoding::Utf8 => "Utf8",
            Encoding::Latin1 => "Latin1",
            Encoding::Windows1252 => "Windows1252",
            Encoding::Windows1251 => "Windows1251",
        }
    }
}

/// How a container's pairs are framed as whole bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Backslash,
    Nul,
    ServerQuery,
}

impl Format {
    /// The `KvFormat` variant's name.
    pub fn variant(self) -> &'static str {
        match self {
            Format::Backslash => "Backslash",
            Format::Nul => "Nul",
            Format::ServerQuery => "ServerQuery",
        }
    }
}

/// A keyword that was present, remembered by where it was written.
pub type Flag = Option<Span>;

/// `#[kv(...)]` on a struct or enum.
#[derive(Default)]
pub struct Container {
    pub encoding: Option<Encoding>,
    pub unknown_prefix: Option<StrArg>,
    pub format: Option<(Format, Span)>,
}

/// `#[kv(...)]` on a named field.
#[derive(Default)]
pub struct Field {
    pub key: Option<StrArg>,
    pub aliases: Vec<StrArg>,
    pub default: Flag,
    pub flag: Flag,
    pub parse: Flag,
    pub indexed: Flag,
    pub index: Flag,
    pub rest: Flag,
    pub skip: Flag,
}

/// `#[kv(...)]` on an enum variant.
#[derive(Default)]
pub struct Variant {
    pub key: Option<StrArg>,
    pub value: Option<StrArg>,
    pub other: Flag,
}

/// Calls `each` for every keyword in every `#[kv(...)]` among `attrs`; errors are recorded,
/// not returned, so one bad keyword does not hide the next.
fn for_each_keyword(
    errors: &mut Errors,
    attrs: &[Attribute],
    mut each: impl FnMut(&ParseNestedMeta<'_>) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident(KV)) {
        let mut found = Vec::new();
        let parsed = attr.parse_nested_meta(|meta| {
            if let Err(e) = each(&meta) {
                found.push(e);
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
        for e in found {
            errors.push(e);
        }
    }
}

/// Consumes `= value` after a keyword that was rejected, so parsing can go on.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    let input = meta.input;
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
    }
    if input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in input);
    } else if !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<syn::Expr>()?;
    }
    Ok(())
}

fn string(meta: &ParseNestedMeta<'_>) -> syn::Result<StrArg> {
    let lit: LitStr = meta.value()?.parse()?;
    Ok(StrArg::from_lit(&lit))
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &ParseNestedMeta<'_>,
    name: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{name}`")));
    }
    *slot = Some(value);
    Ok(())
}

fn word(meta: &ParseNestedMeta<'_>) -> syn::Result<Span> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let name = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        return Err(meta.error(format!("`{name}` takes no value")));
    }
    Ok(meta.path.span())
}

fn unknown(meta: &ParseNestedMeta<'_>, expected: &str) -> syn::Error {
    meta.error(format!(
        "unknown `kv` attribute: expected one of {expected}"
    ))
}

impl Container {
    pub fn from_attrs(errors: &mut Errors, attrs: &[Attribute]) -> Self {
        let mut out = Container::default();
        for_each_keyword(errors, attrs, |meta| {
            if meta.path.is_ident(ENCODING) {
                let name = string(meta)?;
                let encoding = Encoding::parse(&name.value).ok_or_else(|| {
                    syn::Error::new(
                        name.span,
                        format!(
                            "unknown encoding {:?}: expected one of \"utf-8\", \"latin-1\", \
                             \"windows-1252\", \"windows-1251\"",
                            name.value
                        ),
                    )
                })?;
                set_once(&mut out.encoding, encoding, meta, ENCODING)
            } else if meta.path.is_ident(UNKNOWN_PREFIX) {
                let prefix = string(meta)?;
                set_once(&mut out.unknown_prefix, prefix, meta, UNKNOWN_PREFIX)
            } else if meta.path.is_ident(FORMAT) {
                let name = string(meta)?;
                let format = match name.value.as_str() {
                    "nul" => Format::Nul,
                    "backslash" => Format::Backslash,
                    "serverquery" => Format::ServerQuery,
                    other => {
                        return Err(syn::Error::new(
                            name.span,
                            format!(
                                "unknown format {other:?}: expected \"backslash\", \"nul\" or \
                                 \"serverquery\""
                            ),
                        ))
                    }
                };
                set_once(&mut out.format, (format, name.span), meta, FORMAT)
            } else {
                Err(unknown(meta, "`encoding`, `unknown_prefix`, `format`"))
            }
        });
        out
    }
}

impl Field {
    pub fn from_attrs(errors: &mut Errors, attrs: &[Attribute]) -> Self {
        let mut out = Field::default();
        for_each_keyword(errors, attrs, |meta| {
            let path = &meta.path;
            if path.is_ident(KEY) {
                let key = string(meta)?;
                set_once(&mut out.key, key, meta, KEY)
            } else if path.is_ident(ALIAS) {
                out.aliases.push(string(meta)?);
                Ok(())
            } else {
                let slot = if path.is_ident(DEFAULT) {
                    (&mut out.default, DEFAULT)
                } else if path.is_ident(FLAG) {
                    (&mut out.flag, FLAG)
                } else if path.is_ident(PARSE) {
                    (&mut out.parse, PARSE)
                } else if path.is_ident(INDEXED) {
                    (&mut out.indexed, INDEXED)
                } else if path.is_ident(INDEX) {
                    (&mut out.index, INDEX)
                } else if path.is_ident(REST) {
                    (&mut out.rest, REST)
                } else if path.is_ident(SKIP) {
                    (&mut out.skip, SKIP)
                } else {
                    return Err(unknown(
                        meta,
                        "`key`, `alias`, `default`, `flag`, `parse`, `indexed`, `index`, `rest`, \
                         `skip`",
                    ));
                };
                let span = word(meta)?;
                set_once(slot.0, span, meta, slot.1)
            }
        });
        out
    }
}

impl Variant {
    pub fn from_attrs(errors: &mut Errors, attrs: &[Attribute]) -> Self {
        let mut out = Variant::default();
        for_each_keyword(errors, attrs, |meta| {
            if meta.path.is_ident(KEY) {
                let key = string(meta)?;
                set_once(&mut out.key, key, meta, KEY)
            } else if meta.path.is_ident(VALUE) {
                let value = string(meta)?;
                set_once(&mut out.value, value, meta, VALUE)
            } else if meta.path.is_ident(OTHER) {
                let span = word(meta)?;
                set_once(&mut out.other, span, meta, OTHER)
            } else {
                Err(unknown(meta, "`key`, `value`, `other`"))
            }
        });
        out
    }
}
