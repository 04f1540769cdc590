//! The encode-side view of a container (`#[wire(view = Name)]`): the same fields without the
//! computed ones and those not on the wire, where every repeat is any [`Items`] source and
//! every field marked `view` any type that encodes like it. Its `Encode` impl is the
//! container's own body: both bind their fields by name and reach lists only through `Items`.
//!
//! [`Items`]: https://docs.rs/query-wire/latest/query_wire/items/trait.Items.html

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::{GenericParam, Lifetime, Member, Type, WherePredicate};

use crate::wire::ast::{Body, Container, Data, Field, Variant, VariantTag};
use crate::wire::names;
use crate::wire::types::{self, Shape};

/// What the view holds in place of one field.
struct ViewField<'f> {
    field: &'f Field,
    ty: TokenStream,
}

/// The view's type definition, and its `Encode` impl (to go inside the derive's `const _`
/// block). Both empty without `view = Name`.
pub fn expand(
    container: &Container,
    view: &Ident,
    ctx_type: &TokenStream,
    ctx_param: &TokenStream,
    encode_body: &TokenStream,
    len_body: &TokenStream,
) -> (TokenStream, TokenStream) {
    let mut params = Params::new(container);
    let vis = &container.vis;
    let generics = Ident::new(GENERICS, Span::call_site());
    let body = match &container.data {
        Data::Struct(fields) => {
            let tuple = fields
                .iter()
                .any(|f| matches!(f.member, Member::Unnamed(_)));
            let fields = view_fields(fields, None, &mut params);
            if tuple {
                let types = fields.iter().map(tuple_field_decl);
                quote!(struct #view #generics (#(#types),*);)
            } else {
                let named = fields.iter().map(field_decl);
                quote!(struct #view #generics { #(#named,)* })
            }
        }
        Data::Enum(data) => {
            let variants = data
                .variants
                .iter()
                .map(|variant| variant_decl(variant, &mut params));
            let variants: Vec<TokenStream> = variants.collect();
            quote!(enum #view #generics { #(#variants,)* })
        }
    };

    // The view keeps the container's lifetime only where a field still borrows through it;
    // otherwise the lifetime appears only in the impl's bounds.
    let lifetime = container.lifetime.as_ref();
    let keeps_lifetime = lifetime.is_some_and(|l| mentions(&body, l));
    let own_generics = container
        .generics
        .params
        .iter()
        .filter(|param| keeps_lifetime || !matches!(param, GenericParam::Lifetime(_)));
    let struct_params: Vec<TokenStream> = own_generics
        .map(ToTokens::to_token_stream)
        .chain(params.idents.iter().map(|p| quote!(#p)))
        .collect();
    let struct_generics = if struct_params.is_empty() {
        TokenStream::new()
    } else {
        quote!(<#(#struct_params),*>)
    };
    let definition = substitute_generics(body, &struct_generics);
    let type_args: Vec<TokenStream> = struct_params.iter().map(param_name).collect();
    let type_args = if type_args.is_empty() {
        TokenStream::new()
    } else {
        quote!(<#(#type_args),*>)
    };
    let impl_params: Vec<TokenStream> = container
        .generics
        .params
        .iter()
        .filter(|param| !keeps_lifetime || !matches!(param, GenericParam::Lifetime(_)))
        .map(ToTokens::to_token_stream)
        .chain(struct_params.iter().cloned())
        .collect();
    let mut predicates: Vec<TokenStream> = container
        .generics
        .where_clause
        .iter()
        .flat_map(|w| w.predicates.iter().map(WherePredicate::to_token_stream))
        .collect();
    predicates.extend(params.bounds);

    let original = &container.ident;
    let doc = format!(
        " Encodes like [`{original}`] from what a sender holds: each list is any \
         `query_wire::Items` source (a slice, `items::map`, `items::from_fn`) and computed \
         fields are left out, since encoding computes them."
    );
    let definition = quote! {
        #[doc = #doc]
        #vis #definition
    };

    let (encode_trait, writer, writer_type) =
        (names::encode_trait(), names::writer(), names::writer_type());
    let (result, usize) = (names::result_type(), names::usize());
    let encode_impl = quote! {
        #[automatically_derived]
        #[allow(unused_variables, clippy::identity_op, clippy::match_single_binding)]
        impl<#(#impl_params),*> #encode_trait for #view #type_args where #(#predicates,)* {
            type Ctx = #ctx_type;

            #[inline]
            fn encoded_len(&self, #ctx_param) -> #usize {
                #len_body
            }

            #[inline]
            fn encode(&self, #writer: &mut #writer_type<'_>, #ctx_param) -> #result<()> {
                #encode_body
            }
        }
    };
    (definition, encode_impl)
}

/// A placeholder the definition's generics are put in once every parameter is known.
const GENERICS: &str = "__view_generics";

/// Replaces the placeholder ident with `generics`.
fn substitute_generics(tokens: TokenStream, generics: &TokenStream) -> TokenStream {
    tokens
        .into_iter()
        .flat_map(|tree| match tree {
            TokenTree::Ident(ident) if ident == GENERICS => generics.clone(),
            TokenTree::Group(group) => {
                let inner = substitute_generics(group.stream(), generics);
                let mut replaced = proc_macro2::Group::new(group.delimiter(), inner);
                replaced.set_span(group.span());
                TokenTree::Group(replaced).into_token_stream()
            }
            other => other.into_token_stream(),
        })
        .collect()
}

/// Whether `tokens` name `lifetime`.
fn mentions(tokens: &TokenStream, lifetime: &Lifetime) -> bool {
    let mut previous_was_quote = false;
    tokens.clone().into_iter().any(|tree| {
        let hit = match &tree {
            TokenTree::Ident(ident) => previous_was_quote && *ident == lifetime.ident,
            TokenTree::Group(group) => mentions(&group.stream(), lifetime),
            TokenTree::Punct(_) | TokenTree::Literal(_) => false,
        };
        previous_was_quote = matches!(&tree, TokenTree::Punct(p) if p.as_char() == '\'');
        hit
    })
}

/// `'a` for `'a: 'b`, `T` for `T: Bound`, as a type argument.
fn param_name(param: &TokenStream) -> TokenStream {
    match syn::parse2::<GenericParam>(param.clone()) {
        Ok(GenericParam::Lifetime(l)) => l.lifetime.to_token_stream(),
        Ok(GenericParam::Type(t)) => t.ident.to_token_stream(),
        Ok(GenericParam::Const(c)) => c.ident.to_token_stream(),
        Err(_) => param.clone(),
    }
}

/// The view's own type parameters and their bounds.
struct Params {
    /// Names already taken (the container's parameters, and those made so far).
    taken: Vec<String>,
    idents: Vec<Ident>,
    bounds: Vec<TokenStream>,
}

impl Params {
    fn new(container: &Container) -> Self {
        let mut taken: Vec<String> = container
            .generics
            .params
            .iter()
            .map(|p| param_name(&p.to_token_stream()).to_string())
            .collect();
        // A parameter may not shadow a type the bounds name (`chunks: Chunks<'a>`).
        let fields: Vec<&Field> = match &container.data {
            Data::Struct(fields) => fields.iter().collect(),
            Data::Enum(data) => data.variants.iter().flat_map(|v| &v.fields).collect(),
        };
        for field in fields {
            idents(field.ty.to_token_stream(), &mut taken);
        }
        Params {
            taken,
            idents: Vec::new(),
            bounds: Vec::new(),
        }
    }

    /// A new parameter named after `words` (`server_rules` → `ServerRules`).
    fn add(&mut self, words: &[String]) -> Ident {
        let mut name: String = words.iter().map(|w| camel(w)).collect();
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            name.insert(0, 'T');
        }
        while self.taken.contains(&name) {
            name.push('T');
        }
        self.taken.push(name.clone());
        let ident = Ident::new(&name, Span::call_site());
        self.idents.push(ident.clone());
        ident
    }
}

/// Every identifier in `tokens`.
fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(ident) => out.push(ident.to_string()),
            TokenTree::Group(group) => idents(group.stream(), out),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

fn camel(word: &str) -> String {
    word.trim_start_matches("r#")
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect()
}

fn variant_decl(variant: &Variant, params: &mut Params) -> TokenStream {
    let ident = &variant.ident;
    let docs = &variant.docs;
    if matches!(variant.tag, VariantTag::Other { .. }) {
        let declared = &variant.declared;
        return quote!(#(#docs)* #ident #declared);
    }
    let fields = view_fields(&variant.fields, Some(ident), params);
    let tuple = variant
        .fields
        .iter()
        .any(|f| matches!(f.member, Member::Unnamed(_)));
    if tuple {
        let types = fields.iter().map(tuple_field_decl);
        quote!(#(#docs)* #ident(#(#types),*))
    } else if fields.is_empty() && variant.fields.is_empty() {
        quote!(#(#docs)* #ident)
    } else {
        let named = fields.iter().map(field_decl);
        quote!(#(#docs)* #ident { #(#named,)* })
    }
}

fn tuple_field_decl(field: &ViewField<'_>) -> TokenStream {
    let (docs, vis, ty) = (&field.field.docs, &field.field.vis, &field.ty);
    quote!(#(#docs)* #vis #ty)
}

fn field_decl(field: &ViewField<'_>) -> TokenStream {
    let (docs, vis, member, ty) = (
        &field.field.docs,
        &field.field.vis,
        &field.field.member,
        &field.ty,
    );
    quote!(#(#docs)* #vis #member: #ty)
}

/// The fields a view keeps, with their types there.
fn view_fields<'f>(
    fields: &'f [Field],
    variant: Option<&Ident>,
    params: &mut Params,
) -> Vec<ViewField<'f>> {
    let items = names::items_trait();
    let encode = names::encode_trait();
    fields
        .iter()
        .filter_map(|field| {
            let wire = field.wire()?;
            if field.is_computed() {
                return None;
            }
            let generic = match &wire.body {
                Body::Repeat(_) => true,
                Body::Nested { .. } => wire.view,
                _ => false,
            };
            if !generic {
                let ty = &field.ty;
                return Some(ViewField {
                    field,
                    ty: quote!(#ty),
                });
            }
            let mut words: Vec<String> = variant.iter().map(|v| v.to_string()).collect();
            if variant.is_none() || fields.len() > 1 {
                words.push(field.binding.to_string().trim_start_matches('_').to_owned());
            }
            let param = params.add(&words);
            let bound = match &wire.body {
                Body::Repeat(repeat) => match (&repeat.element, wire.view) {
                    (Body::Nested { ty, .. }, true) => quote! {
                        #param: #items,
                        <#param as #items>::Item: #encode<Ctx = <#ty as #encode>::Ctx>
                    },
                    _ => {
                        let element = element_type(&repeat.vec_ty);
                        quote!(#param: #items<Item = #element>)
                    }
                },
                Body::Nested { ty, .. } => quote!(#param: #encode<Ctx = <#ty as #encode>::Ctx>),
                _ => unreachable!("only repeats and nested fields are generic"),
            };
            params.bounds.push(bound);
            let ty = if wire.presence.is_some() {
                let option = quote!(::core::option::Option);
                quote!(#option<#param>)
            } else {
                quote!(#param)
            };
            Some(ViewField { field, ty })
        })
        .collect()
}

/// `T` of `Vec<T>`.
fn element_type(vec_ty: &Type) -> TokenStream {
    match types::shape(vec_ty) {
        Shape::Vec(element) => element.to_token_stream(),
        _ => vec_ty.to_token_stream(),
    }
}
