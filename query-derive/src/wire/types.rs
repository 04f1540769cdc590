//! What a field's type is, as far as the derive can tell from its spelling: the types it
//! encodes natively, the containers it looks inside (`Option`, `Vec`), and everything else
//! (encoded through its own `Decode` / `Encode`).

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type};

/// The fixed-width numbers `Reader::number` / `Writer::put_number` move.
pub const NUMBERS: &[(&str, usize)] = &[
    ("u8", 1),
    ("u16", 2),
    ("u32", 4),
    ("u64", 8),
    ("i8", 1),
    ("i16", 2),
    ("i32", 4),
    ("i64", 8),
    ("f32", 4),
    ("f64", 8),
];

/// A string type `str(...)` accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StrKind {
    /// `&'a str`: borrowed, so UTF-8 only.
    Borrowed,
    /// `String` or `Cow<'a, str>`: converted from the decoded text with `From`.
    Converted,
    /// `Text<'a>`: the raw bytes.
    Raw,
}

/// A byte-string type `bytes(...)` accepts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BytesKind {
    /// `&'a [u8]`.
    Borrowed,
    /// `Vec<u8>` or `Cow<'a, [u8]>`: converted from the borrowed bytes with `From`.
    Converted,
}

/// A field type as the derive sees it.
pub enum Shape<'t> {
    /// `u8` .. `f64`, with the width in bytes.
    Number(usize),
    Bool,
    /// `[u8; N]`.
    ByteArray,
    /// `Uuid`.
    Uuid,
    /// `Option<T>`.
    Option(&'t Type),
    /// `Vec<T>`.
    Vec(&'t Type),
    /// Anything else: through its own `Decode` / `Encode`.
    Other,
}

/// Whether `ty` is one of the types `varint` applies to: `u32`, `u64`, `i32`, `i64`.
pub fn is_varint_type(ty: &Type) -> bool {
    ["u32", "u64", "i32", "i64"]
        .iter()
        .any(|name| is_named(ty, name))
}

/// Whether `ty` is one of the types `packed_int` applies to: `i32`, `u32`.
pub fn is_packed_int_type(ty: &Type) -> bool {
    is_named(ty, "i32") || is_named(ty, "u32")
}

/// Whether `ty` is `f32` or `f64`.
pub fn is_float(ty: &Type) -> bool {
    matches!(peel(ty), Type::Path(path) if path.path.is_ident("f32") || path.path.is_ident("f64"))
}

/// Whether `ty` is one of `u8`, `u16`, `u32`, `u64`.
pub fn is_unsigned(ty: &Type) -> bool {
    matches!(peel(ty), Type::Path(path)
        if ["u8", "u16", "u32", "u64"].iter().any(|name| path.path.is_ident(name)))
}

/// Strips the invisible groups and parentheses that macros wrap types in.
pub fn peel(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => peel(&group.elem),
        Type::Paren(paren) => peel(&paren.elem),
        other => other,
    }
}

pub fn shape(ty: &Type) -> Shape<'_> {
    match peel(ty) {
        Type::Path(path) if path.qself.is_none() => {
            if let Some(ident) = path.path.get_ident() {
                let name = ident.to_string();
                if let Some((_, size)) = NUMBERS.iter().find(|(n, _)| *n == name) {
                    return Shape::Number(*size);
                }
                if name == "bool" {
                    return Shape::Bool;
                }
            }
            let Some(last) = path.path.segments.last() else {
                return Shape::Other;
            };
            match last.ident.to_string().as_str() {
                "Uuid" if last.arguments.is_none() => Shape::Uuid,
                "Option" => single_type_arg(&last.arguments).map_or(Shape::Other, Shape::Option),
                "Vec" => single_type_arg(&last.arguments).map_or(Shape::Other, Shape::Vec),
                _ => Shape::Other,
            }
        }
        Type::Array(array) if is_u8(&array.elem) => Shape::ByteArray,
        _ => Shape::Other,
    }
}

/// Which string type this is, if any.
pub fn str_kind(ty: &Type) -> Option<StrKind> {
    match peel(ty) {
        Type::Reference(reference) if reference.mutability.is_none() => {
            is_named(&reference.elem, "str").then_some(StrKind::Borrowed)
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            match last.ident.to_string().as_str() {
                "String" if last.arguments.is_none() => Some(StrKind::Converted),
                "Cow" => {
                    cow_of(&last.arguments, |t| is_named(t, "str")).then_some(StrKind::Converted)
                }
                "Text" => Some(StrKind::Raw),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Which byte-string type this is, if any.
pub fn bytes_kind(ty: &Type) -> Option<BytesKind> {
    match peel(ty) {
        Type::Reference(reference) if reference.mutability.is_none() => {
            is_u8_slice(&reference.elem).then_some(BytesKind::Borrowed)
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            match last.ident.to_string().as_str() {
                "Vec" => single_type_arg(&last.arguments)
                    .filter(|t| is_u8(t))
                    .map(|_| BytesKind::Converted),
                "Cow" => cow_of(&last.arguments, is_u8_slice).then_some(BytesKind::Converted),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The type as a user wrote it, for messages (`&'a [u8]`, not `& 'a [u8]`).
pub fn show(ty: &Type) -> String {
    let mut out = ty.to_token_stream().to_string();
    for (from, to) in [
        ("& '", "&'"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" ;", ";"),
        (" :: ", "::"),
        (":: ", "::"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// True when the type borrows: a reference, or a lifetime other than `'static`.
pub fn borrows(ty: &Type) -> bool {
    fn scan(tokens: TokenStream) -> bool {
        let mut trees = tokens.into_iter().peekable();
        while let Some(tree) = trees.next() {
            match tree {
                TokenTree::Punct(p) if p.as_char() == '&' => return true,
                TokenTree::Punct(p)
                    if p.as_char() == '\''
                        && !matches!(trees.peek(), Some(TokenTree::Ident(i)) if i == "static") =>
                {
                    return true;
                }
                TokenTree::Group(g) if scan(g.stream()) => return true,
                _ => {}
            }
        }
        false
    }
    scan(ty.to_token_stream())
}

fn single_type_arg(args: &PathArguments) -> Option<&Type> {
    let PathArguments::AngleBracketed(args) = args else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

fn cow_of(args: &PathArguments, inner: impl Fn(&Type) -> bool) -> bool {
    single_type_arg(args).is_some_and(inner)
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(peel(ty), Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

fn is_u8(ty: &Type) -> bool {
    is_named(ty, "u8")
}

fn is_u8_slice(ty: &Type) -> bool {
    matches!(peel(ty), Type::Slice(slice) if is_u8(&slice.elem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(src: &str) -> Type {
        syn::parse_str(src).unwrap()
    }

    #[test]
    fn strings_and_bytes_are_recognised_by_spelling() {
        assert_eq!(str_kind(&ty("&'a str")), Some(StrKind::Borrowed));
        assert_eq!(str_kind(&ty("String")), Some(StrKind::Converted));
        assert_eq!(
            str_kind(&ty("std::borrow::Cow<'a, str>")),
            Some(StrKind::Converted)
        );
        assert_eq!(str_kind(&ty("Text<'a>")), Some(StrKind::Raw));
        assert_eq!(str_kind(&ty("u32")), None);
        assert_eq!(bytes_kind(&ty("&'a [u8]")), Some(BytesKind::Borrowed));
        assert_eq!(bytes_kind(&ty("Vec<u8>")), Some(BytesKind::Converted));
        assert_eq!(bytes_kind(&ty("Cow<'a, [u8]>")), Some(BytesKind::Converted));
        assert_eq!(bytes_kind(&ty("Vec<u16>")), None);
    }

    #[test]
    fn shapes() {
        assert!(matches!(shape(&ty("u16")), Shape::Number(2)));
        assert!(matches!(shape(&ty("[u8; 4]")), Shape::ByteArray));
        assert!(matches!(shape(&ty("Option<Vec<u8>>")), Shape::Option(_)));
        assert!(matches!(shape(&ty("query_wire::Uuid")), Shape::Uuid));
        assert!(matches!(shape(&ty("Header")), Shape::Other));
    }

    #[test]
    fn types_show_as_written() {
        assert_eq!(show(&ty("&'a [u8]")), "&'a [u8]");
        assert_eq!(
            show(&ty("std::borrow::Cow<'a, [u8; 4]>")),
            "std::borrow::Cow<'a, [u8; 4]>"
        );
        assert_eq!(show(&ty("Vec<Rule<'a>>")), "Vec<Rule<'a>>");
    }

    #[test]
    fn borrowing_is_a_reference_or_a_non_static_lifetime() {
        assert!(borrows(&ty("&'a str")));
        assert!(borrows(&ty("Vec<Rule<'a>>")));
        assert!(!borrows(&ty("Cow<'static, str>")));
        assert!(!borrows(&ty("Header")));
    }
}
