//! `#[derive(KeyValues)]`: backslash-delimited key/value text (GameSpy v1).
//!
//! Built like serde_derive: `attr` parses each `#[kv(...)]` keyword, `ast` assembles the typed
//! model, `check` applies the rules across attributes, and only then `de` and `ser` generate
//! `FromKeyValues` and `ToKeyValues`. Every error is collected with its span (the crate's
//! `errors`, shared with `wire`) and all are reported together. `names` holds every path and
//! identifier the generated code uses.
//!
//! The vocabulary is documented on `query_wire::kv`.

mod ast;
mod attr;
mod check;
mod de;
mod names;
mod ser;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Lifetime, LifetimeParam};

use crate::errors::Errors;
use ast::Container;

/// The derive's entry point: the impls, or the errors as `compile_error!`s.
pub fn derive(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input) {
        Ok(input) => expand(&input).unwrap_or_else(syn::Error::into_compile_error),
        Err(error) => error.into_compile_error(),
    }
}

/// Builds and checks the model, then generates. Nothing is generated when any error was found.
fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let container = Container::from_ast(&mut errors, input);
    if let Some(container) = &container {
        check::check(&mut errors, container);
    }
    errors.finish()?;
    let Some(cont) = container else {
        return Ok(TokenStream::new());
    };

    let common = common_consts(&cont);
    let de = de::expand(&cont, &common);
    let ser = ser::expand(&cont, &common);
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, unused_qualifications, clippy::needless_lifetimes)]
        const _: () = {
            #de
            #ser
        };
    })
}

/// `NAME` and `DEFAULT_ENCODING`, shared by both traits.
fn common_consts(cont: &Container<'_>) -> TokenStream {
    let name = cont.name();
    let text_encoding = names::text_encoding();
    let variant = syn::Ident::new(
        cont.attrs.encoding.map_or("Utf8", attr::Encoding::variant),
        proc_macro2::Span::call_site(),
    );
    let format = match cont.attrs.format {
        Some((format, _)) if format != attr::Format::Backslash => {
            let kv = names::kv();
            let variant = syn::Ident::new(format.variant(), proc_macro2::Span::call_site());
            quote!(const FORMAT: #kv::KvFormat = #kv::KvFormat::#variant;)
        }
        _ => quote!(),
    };
    quote! {
        const NAME: &'static str = #name;
        const DEFAULT_ENCODING: #text_encoding = #text_encoding::#variant;
        #format
    }
}

/// The impl generics for `FromKeyValues<'x>` and the input lifetime `'x`: the type's first
/// lifetime, or a fresh one when it has none.
fn de_generics(input: &DeriveInput) -> (TokenStream, Lifetime) {
    if let Some(first) = input.generics.lifetimes().next() {
        let (impl_generics, _, _) = input.generics.split_for_impl();
        return (quote!(#impl_generics), first.lifetime.clone());
    }
    let lifetime = names::input_lifetime();
    let mut generics = input.generics.clone();
    generics.params.insert(
        0,
        syn::GenericParam::Lifetime(LifetimeParam::new(lifetime.clone())),
    );
    let (impl_generics, _, _) = generics.split_for_impl();
    (quote!(#impl_generics), lifetime)
}

#[cfg(test)]
mod tests {
    use super::derive;
    use proc_macro2::TokenStream;
    use quote::quote;

    fn compile_errors(tokens: &TokenStream) -> usize {
        tokens.to_string().matches("compile_error").count()
    }

    #[test]
    fn every_misuse_is_reported_at_once() {
        let out = derive(quote! {
            struct Reply {
                #[kv(nope)]
                a: u32,
                #[kv(rest)]
                b: Vec<(String, String)>,
                #[kv(rest)]
                c: Vec<(String, String)>,
                #[kv(flag)]
                d: u8,
            }
        });
        assert_eq!(compile_errors(&out), 3, "{out}");
        assert!(!out.to_string().contains("impl"), "no impl next to errors");
    }

    #[test]
    fn valid_input_expands_inside_an_anonymous_const() {
        let out = derive(quote! {
            struct Reply<'a> {
                hostname: Option<std::borrow::Cow<'a, str>>,
            }
        })
        .to_string();
        assert_eq!(compile_errors(&out.parse().unwrap()), 0, "{out}");
        assert!(out.starts_with("# [doc (hidden)]"), "{out}");
        assert!(out.contains("const _ : () ="));
        assert!(out.contains(":: query_wire :: kv :: FromKeyValues < 'a > for Reply < 'a >"));
        assert!(out.contains(":: query_wire :: kv :: ToKeyValues for Reply < 'a >"));
    }

    fn pretty(tokens: TokenStream) -> String {
        let file: syn::File = syn::parse2(tokens).expect("the expansion parses as items");
        prettyplease::unparse(&file)
    }

    #[test]
    fn nul_format_sets_the_format_of_both_traits() {
        let out = derive(quote! {
            #[kv(format = "nul", encoding = "latin-1")]
            struct Info<'a> {
                hostname: Option<std::borrow::Cow<'a, str>>,
                #[kv(rest)]
                rules: Vec<(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
            }
        });
        let text = out.to_string();
        assert_eq!(text.matches("const FORMAT").count(), 2, "{text}");
        insta::assert_snapshot!(pretty(out));
    }

    #[test]
    fn table_row_keys_are_column_names() {
        let out = derive(quote! {
            struct PlayerRow<'a> {
                #[kv(key = "player_")]
                name: Option<std::borrow::Cow<'a, str>>,
                #[kv(key = "score_")]
                score: Option<i32>,
                #[kv(rest)]
                extra: Vec<(std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
            }
        });
        assert!(!out.to_string().contains("const FORMAT"));
        insta::assert_snapshot!(pretty(out));
    }

    #[test]
    fn misused_format_is_reported() {
        let out = derive(quote! {
            #[kv(format = "json", format = "nul")]
            struct Info {
                #[kv(key = "a\0b")]
                a: Option<u32>,
            }
        });
        assert_eq!(compile_errors(&out), 2, "{out}");
    }

    #[test]
    fn input_that_is_not_an_item_is_a_syntax_error() {
        let out = derive(quote!(
            fn f() {}
        ));
        assert_eq!(compile_errors(&out), 1);
    }
}
