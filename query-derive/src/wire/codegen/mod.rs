//! Generates the `Decode`, `Encode` and (for enums) `tag()` impls from a checked [`Container`].
//!
//! The code is straight-line: one `Reader` / `Writer` call per wire item (on encode, a run of
//! consecutive fixed-width fields shares one), errors mapped to the field path with `map_err`
//! on the (cold) error value only, no closures or allocation on the happy path except the
//! `Vec` of a repeat.

mod decode;
mod encode;
mod fixed;
mod len;
mod view;

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::{Expr, GenericParam, LifetimeParam};

use super::ast::{Container, ContainerCtx, Data, Field};
use super::attr::{Prefix, TagType};
use super::names;
use super::scope::Scoped;

/// The whole expansion: `const _: () = { impls };`.
pub fn expand(container: &Container) -> TokenStream {
    let ident = &container.ident;
    let name = ident.to_string();
    let (impl_generics, ty_generics, where_clause) = container.generics.split_for_impl();

    let lifetime = container
        .lifetime
        .clone()
        .unwrap_or_else(names::default_lifetime);
    let mut decode_generics = container.generics.clone();
    if container.lifetime.is_none() {
        decode_generics.params.insert(
            0,
            GenericParam::Lifetime(LifetimeParam::new(lifetime.clone())),
        );
    }
    let (decode_impl_generics, _, _) = decode_generics.split_for_impl();

    let ctx_type = ctx_type(&container.ctx);
    let ctx_param = ctx_param(&container.ctx);
    let decode_trait = names::decode_trait();
    let encode_trait = names::encode_trait();
    let reader = names::reader();
    let whole = names::owned_reader();
    let ctx_arg = names::ctx_arg();
    let value = names::value();
    let reader_type = names::reader_type();
    let writer = names::writer();
    let writer_type = names::writer_type();
    let result = names::result_type();
    let (usize, str) = (names::usize(), names::str());

    let decode_body = decode::container(container, &lifetime, decode::Until::Value);
    let decode_exact_body = decode::container(container, &lifetime, decode::Until::End);
    let encode_body = encode::container(container);
    let len_body = len::container(container);
    let fixed_len = fixed::fixed_len(container);
    let ranges = fixed::ranges(container);
    let flag_masks = fixed::flag_masks(container);
    let tag_range = fixed::tag_range(container);
    let tag_impl = match &container.data {
        Data::Enum(data) if data.by_magic => {
            let body = encode::tag_method(data);
            let magic_bytes = names::private("magic_bytes");
            let starts = names::private("starts_with_magic");
            let outer = match &container.magic {
                Some(magic) => quote!(::core::option::Option::Some(#magic_bytes(#magic))),
                None => names::none(),
            };
            let magics = data
                .variants
                .iter()
                .filter_map(|variant| match &variant.tag {
                    super::ast::VariantTag::Magic(magic) => Some(decode::magic_bytes(magic)),
                    _ => None,
                });
            quote! {
                #[automatically_derived]
                impl #impl_generics #ident #ty_generics #where_clause {
                    /// The magic that selects this variant on the wire (after the enum's own).
                    #[inline]
                    pub fn magic(&self) -> &'static [::core::primitive::u8] {
                        #body
                    }

                    /// Whether `bytes` start with the enum's magic, if it has one, and then
                    /// with one of its variants' magics: the bytes that decide whether a
                    /// packet is this type's, checked without decoding it.
                    #[inline]
                    pub fn matches_magic(bytes: &[::core::primitive::u8]) -> ::core::primitive::bool {
                        #starts(bytes, #outer, &[#(#magics),*])
                    }
                }
            }
        }
        Data::Enum(data) => {
            let tag_ty = tag_type(data.tag_ty);
            let body = encode::tag_method(data);
            quote! {
                #[automatically_derived]
                impl #impl_generics #ident #ty_generics #where_clause {
                    #tag_range

                    /// The tag that selects this variant on the wire.
                    #[inline]
                    pub fn tag(&self) -> #tag_ty {
                        #body
                    }
                }
            }
        }
        Data::Struct(_) => TokenStream::new(),
    };
    let (view_definition, view_impl) = match &container.view {
        Some(view) => view::expand(
            container,
            view,
            &ctx_type,
            &ctx_param,
            &encode_body,
            &len_body,
        ),
        None => (TokenStream::new(), TokenStream::new()),
    };
    // An enum's decode is always inlined: out of line, its value comes back through a
    // temporary that the caller copies, and copying an enum whose variants write different
    // bytes stalls the processor on loads that span a narrower store (an SQP table of typed
    // values decoded 2.2 times slower than by hand). Inlined, each arm writes where the value
    // is kept.
    let decode_inline = match &container.data {
        Data::Enum(_) => quote!(#[inline(always)]),
        Data::Struct(_) => quote!(#[inline]),
    };
    // Expressions reach lists through `Items`, whether they hold a `Vec` or a view's source.
    let items = names::items_trait();

    quote! {
        #view_definition

        const _: () = {
            #[allow(unused_imports)]
            use #items as _;

            #view_impl

            #[automatically_derived]
            #[allow(unused_variables, clippy::identity_op, clippy::match_single_binding)]
            impl #decode_impl_generics #decode_trait<#lifetime> for #ident #ty_generics #where_clause {
                type Ctx = #ctx_type;
                const NAME: &'static #str = #name;

                #decode_inline
                fn decode(#reader: &mut #reader_type<#lifetime>, #ctx_param) -> #result<Self> {
                    #decode_body
                }

                #[inline]
                fn decode_exact(#reader: &mut #reader_type<#lifetime>, #ctx_arg: Self::Ctx) -> #result<Self> {
                    let #value = Self::decode_whole(::core::clone::Clone::clone(#reader), #ctx_arg)?;
                    #reader.rest();
                    ::core::result::Result::Ok(#value)
                }

                #[inline]
                fn decode_whole(#whole: #reader_type<#lifetime>, #ctx_param) -> #result<Self> {
                    // A local of its own: passed by value, the reader is still memory the
                    // caller made, and stores to it are not the decoder's to drop.
                    let mut #whole = ::core::clone::Clone::clone(&#whole);
                    let #reader = &mut #whole;
                    #decode_exact_body
                }
            }

            #[automatically_derived]
            #[allow(unused_variables, clippy::identity_op, clippy::match_single_binding)]
            impl #impl_generics #encode_trait for #ident #ty_generics #where_clause {
                type Ctx = #ctx_type;

                const FIXED_LEN: ::core::option::Option<#usize> = #fixed_len;

                #[inline]
                fn encoded_len(&self, #ctx_param) -> #usize {
                    #len_body
                }

                #[inline]
                fn encode(&self, #writer: &mut #writer_type<'_>, #ctx_param) -> #result<()> {
                    #encode_body
                }
            }

            #tag_impl

            #ranges
            #flag_masks
        };
    }
}

fn ctx_type(ctx: &ContainerCtx) -> TokenStream {
    match ctx {
        ContainerCtx::Unit => quote!(()),
        ContainerCtx::Bindings(bindings) if bindings.len() == 1 => {
            let ty = &bindings[0].ty;
            quote!(#ty)
        }
        ContainerCtx::Bindings(bindings) => {
            let tys = bindings.iter().map(|b| &b.ty);
            quote!((#(#tys),*))
        }
        ContainerCtx::ExternalTag(tag) => tag_type(*tag),
    }
}

/// The context parameter: destructured into the bindings expressions use.
fn ctx_param(ctx: &ContainerCtx) -> TokenStream {
    match ctx {
        ContainerCtx::Unit => quote!(_: ()),
        ContainerCtx::Bindings(bindings) if bindings.len() == 1 => {
            let (name, ty) = (&bindings[0].name, &bindings[0].ty);
            quote!(#name: #ty)
        }
        ContainerCtx::Bindings(bindings) => {
            let names = bindings.iter().map(|b| &b.name);
            let tys = bindings.iter().map(|b| &b.ty);
            quote!((#(#names),*): (#(#tys),*))
        }
        ContainerCtx::ExternalTag(tag) => {
            let tag_ident = names::tag();
            let ty = tag_type(*tag);
            quote!(#tag_ident: #ty)
        }
    }
}

fn prefix_type(prefix: Prefix) -> TokenStream {
    match prefix {
        Prefix::VarInt => quote!(::query_wire::varint::VarInt),
        Prefix::Leb128 => quote!(::query_wire::varint::Leb128),
        _ => {
            let ty = names::primitive(prefix.name());
            quote!(::core::primitive::#ty)
        }
    }
}

/// The width of a prefix holding `len` (a `usize` expression): a constant for a fixed-width
/// prefix, computed for a variable-length one.
fn prefix_width(prefix: Prefix, len: &TokenStream) -> TokenStream {
    match prefix.size() {
        Some(n) => {
            let n = size(n);
            quote!(#n)
        }
        None => {
            let ty = prefix_type(prefix);
            quote!(::query_wire::varint::prefix_width::<#ty>(#len))
        }
    }
}

/// Whether any field of the container (of any variant) declares `crc32(before)`, which
/// needs where the container began.
fn needs_origin(data: &Data) -> bool {
    let before = |fields: &[Field]| {
        fields.iter().any(|f| {
            f.wire()
                .and_then(|w| w.checksum)
                .is_some_and(|c| c.span == super::attr::ChecksumSpan::Before)
        })
    };
    match data {
        Data::Struct(fields) => before(fields),
        Data::Enum(data) => data.variants.iter().any(|v| before(&v.fields)),
    }
}

fn tag_type(tag: TagType) -> TokenStream {
    let ty = names::primitive(tag.name());
    quote!(::core::primitive::#ty)
}

/// The longest runs of two or more consecutive fields that `in_run` accepts, in order.
fn runs(fields: &[Field], in_run: impl Fn(&Field) -> bool) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    while start < fields.len() {
        let end = start
            + fields[start..]
                .iter()
                .take_while(|field| in_run(field))
                .count();
        if end - start >= 2 {
            runs.push(start..end);
        }
        // The field at `end` is not in a run (or there is none).
        start = end + 1;
    }
    runs
}

fn size(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// `Some(max)` / `None` for an optional maximum.
fn optional(max: Option<&Expr>) -> TokenStream {
    match max {
        Some(max) => {
            let some = names::some();
            quote!(#some(#max))
        }
        None => names::none(),
    }
}

/// Where an error inside a field goes in the path: the field's name, and the element index
/// inside a repeat.
#[derive(Clone)]
struct ErrorPath {
    field: Option<String>,
    element: bool,
}

impl ErrorPath {
    fn of(field: &Field) -> Self {
        ErrorPath {
            field: field.path.clone(),
            element: false,
        }
    }

    fn none() -> Self {
        ErrorPath {
            field: None,
            element: false,
        }
    }

    fn element(&self) -> Self {
        ErrorPath {
            field: self.field.clone(),
            element: true,
        }
    }

    /// The error value `e` with this path pushed onto it.
    fn apply(&self, e: TokenStream) -> TokenStream {
        let index = names::index();
        let mut out = e;
        if self.element {
            out = quote!(#out.at_index(#index));
        }
        if let Some(field) = &self.field {
            out = quote!(#out.in_field(#field));
        }
        out
    }

    fn is_empty(&self) -> bool {
        self.field.is_none() && !self.element
    }

    /// `call?`, with the path pushed onto the error.
    fn try_(&self, call: TokenStream) -> TokenStream {
        if self.is_empty() {
            return quote!(#call?);
        }
        let e = names::error();
        let mapped = self.apply(quote!(#e));
        quote!(#call.map_err(|#e| #mapped)?)
    }

    /// `return Err(error)`, with the path pushed onto the error.
    fn fail(&self, error: TokenStream) -> TokenStream {
        let err = names::err();
        let mapped = self.apply(error);
        quote!(return #err(#mapped))
    }
}

/// How an expression sees an earlier field: decode holds values, encode holds references.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Decode,
    Encode,
}

/// The expression with the earlier fields it names bound by reference.
fn bind(scoped: &Scoped, fields: &[Field], mode: Mode) -> TokenStream {
    let expr = &scoped.expr;
    if scoped.uses.is_empty() {
        return expr.clone();
    }
    let lets = scoped.uses.iter().map(|&i| {
        let field = &fields[i];
        let (binding, local) = (&field.binding, &field.local);
        match mode {
            Mode::Decode => quote!(let #binding = &#local;),
            Mode::Encode => quote!(let #binding = #local;),
        }
    });
    quote!({ #(#lets)* #expr })
}

/// `Self { a: __field_a, .. }`: the fields `encode` writes from their values, as a pattern.
/// Computed fields and fields that are not on the wire are left out, so the same pattern
/// matches the type and its view.
fn encoded_pattern(path: TokenStream, fields: &[Field]) -> TokenStream {
    let written = fields
        .iter()
        .filter(|f| f.wire().is_some() && !f.is_computed());
    let members = written.clone().map(|f| &f.member);
    let locals = written.map(|f| &f.local);
    quote!(#path { #(#members: #locals,)* .. })
}

/// Statements binding each computed field's local to a reference to its value: the
/// expression converted to the field's type. With `w`, a value that does not fit is an error;
/// without (in `encoded_len`, which cannot fail), it counts as 0 and `encode` reports it.
fn computed_locals(fields: &[Field], w: Option<&proc_macro2::Ident>) -> TokenStream {
    let wide = names::wide();
    let into_wide = quote!(::query_wire::__private::IntoComputed::into_wide);
    let computed = names::private("computed");
    let lets = fields.iter().filter_map(|field| {
        let scoped = field.wire()?.computed.as_ref()?;
        let (local, ty) = (&field.local, &field.ty);
        let expr = bind(scoped, fields, Mode::Encode);
        let converted = quote!(#computed::<#ty>(#wide));
        let value = match w {
            Some(w) => {
                let out_of_range = names::private("computed_out_of_range");
                let fail = ErrorPath::of(field).fail(quote!(#out_of_range(#w, #wide)));
                let (some, value) = (names::some(), names::value());
                quote!(match #converted { #some(#value) => #value, _ => #fail })
            }
            None => quote!(::core::option::Option::unwrap_or_default(#converted)),
        };
        Some(quote! {
            let #local: &#ty = {
                let #wide: ::core::primitive::i128 = #into_wide(#expr);
                &#value
            };
        })
    });
    quote!(#(#lets)*)
}
