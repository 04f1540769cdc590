//! `#[wire(...)]` attributes parsed into typed values: one keyword type per position (container,
//! variant, field, and the options inside `str(...)`, `bytes(...)`, `len(...)`, `count(...)`),
//! one value type per choice (byte order, prefix type, encoding, surplus policy).
//!
//! Nothing here knows about field types or other attributes; `check` checks how they combine.
//! A malformed directive is reported at its own span and parsing goes on with the next one.

use proc_macro2::{Span, TokenTree};
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, LitStr, Pat, Token, Type};

use crate::errors::Errors;

/// A parsed value and the span of the key that introduced it, for errors about the directive
/// as a whole (duplicates, misplaced keys).
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// A closed set of words with the message for a word outside it.
pub trait Choice: Copy + Sized + 'static {
    /// Every accepted word and its value, in the order error messages list them.
    const ALL: &'static [(&'static str, Self)];

    /// The message for `found`, which is not one of [`ALL`](Choice::ALL).
    fn unknown(found: &str) -> String;

    /// The value of `word`, if it is one of the set.
    fn lookup(word: &str) -> Option<Self> {
        Self::ALL.iter().find(|(w, _)| *w == word).map(|(_, v)| *v)
    }

    /// `a, b, c` for messages.
    fn listed() -> String {
        Self::ALL
            .iter()
            .map(|(w, _)| *w)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `"a", "b", "c"` for messages about string values.
    fn quoted() -> String {
        Self::ALL
            .iter()
            .map(|(w, _)| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

macro_rules! choice {
    (
        $(#[$doc:meta])*
        $name:ident { $($variant:ident = $word:literal),* $(,)? }
        |$found:ident| $message:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum $name { $($variant),* }

        impl Choice for $name {
            const ALL: &'static [(&'static str, Self)] = &[$(($word, Self::$variant)),*];
            fn unknown($found: &str) -> String {
                $message
            }
        }
    };
}

choice! {
    /// A directive of `#[wire(...)]` on a struct or enum.
    ContainerKey {
        Endian = "endian", Magic = "magic", Ctx = "ctx", Tag = "tag", Len = "len",
        Surplus = "surplus", External = "external", View = "view",
    }
    |found| format!("unknown wire attribute `{found}`, expected one of: {}", ContainerKey::listed())
}

choice! {
    /// A directive of `#[wire(...)]` on an enum variant.
    VariantKey { Tag = "tag", Magic = "magic", Other = "other" }
    |found| format!(
        "unknown wire attribute `{found}` on a variant, expected one of: {}",
        VariantKey::listed()
    )
}

choice! {
    /// A directive of `#[wire(...)]` on a field.
    FieldKey {
        Endian = "endian", Str = "str", Bytes = "bytes", Dec = "dec", Len = "len", Count = "count",
        UntilEnd = "until_end", UntilNul = "until_nul", Until = "until", Before = "before",
        MinCount = "min_count", MaxCount = "max_count", Ctx = "ctx",
        EachCtx = "each_ctx", Cycle = "cycle",
        When = "when", Trailing = "trailing", IfNext = "if_next", Bits = "bits", BitWidth = "bit_width", Flags = "flags",
        Flag = "flag", Range = "range", Default = "default", Computed = "computed", View = "view",
        Varint = "varint", PackedInt = "packed_int", Crc32 = "crc32",
    }
    |found| format!(
        "unknown wire attribute `{found}` on a field, expected one of: {}",
        FieldKey::listed()
    )
}

choice! {
    /// An option inside `str(...)` or `bytes(...)`.
    TextKey {
        Prefix = "prefix", Max = "max", Encoding = "encoding", Rest = "rest", Nul = "nul",
        Until = "until", Before = "before", Quoted = "quoted", OrEnd = "or_end",
    }
    |found| format!("unknown option `{found}`, expected one of: {}", TextKey::listed())
}

choice! {
    /// An option inside `len(...)`.
    LenKey { Prefix = "prefix", Surplus = "surplus", Includes = "includes" }
    |found| format!("unknown `len` option `{found}`, expected one of: {}", LenKey::listed())
}

choice! {
    /// Byte order of numbers, prefixes and UUIDs.
    Endian { Big = "big", Little = "little" }
    |found| format!("unknown byte order \"{found}\", expected one of: {}", Endian::quoted())
}

choice! {
    /// The integer type of a length or count prefix.
    Prefix { U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64", VarInt = "varint", Leb128 = "leb128" }
    |found| format!("prefix must be one of {}, found `{found}`", Prefix::listed())
}

choice! {
    /// The integer type of an enum's tag.
    TagType {
        U8 = "u8", U16 = "u16", U32 = "u32", U64 = "u64",
        I8 = "i8", I16 = "i16", I32 = "i32", I64 = "i64", VarInt = "varint",
    }
    |found| format!("tag type must be one of {}, found `{found}`", TagType::listed())
}

choice! {
    /// The text encoding of a `str` field.
    Encoding {
        Utf8 = "utf8", Latin1 = "latin1", Windows1252 = "windows1252", Windows1251 = "windows1251",
    }
    |found| format!("unknown encoding \"{found}\", expected one of: {}", Encoding::quoted())
}

choice! {
    /// The bytes a `crc32(...)` field covers.
    ChecksumSpan { After = "after", Before = "before" }
    |found| format!("unknown checksum span `{found}`, expected one of: {}", ChecksumSpan::listed())
}

choice! {
    /// What to do with bytes a length-bounded body leaves unread.
    Surplus { Skip = "skip", Error = "error" }
    |found| format!("unknown surplus policy \"{found}\", expected one of: {}", Surplus::quoted())
}

impl Prefix {
    /// Width on the wire in bytes, for the fixed-width prefixes; `None` for variable-length
    /// ones.
    pub fn size(self) -> Option<usize> {
        match self {
            Prefix::U8 => Some(1),
            Prefix::U16 => Some(2),
            Prefix::U32 => Some(4),
            Prefix::U64 => Some(8),
            Prefix::VarInt | Prefix::Leb128 => None,
        }
    }

    /// The Rust type name of a fixed-width prefix, for generated code.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("u8", |(w, _)| w)
    }
}

impl TagType {
    /// Width on the wire in bytes; `None` for a VarInt tag.
    pub fn size(self) -> Option<usize> {
        match self {
            TagType::U8 | TagType::I8 => Some(1),
            TagType::U16 | TagType::I16 => Some(2),
            TagType::U32 | TagType::I32 => Some(4),
            TagType::U64 | TagType::I64 => Some(8),
            TagType::VarInt => None,
        }
    }

    /// The Rust type of the tag's value, for generated code (`i32` for a VarInt tag).
    pub fn name(self) -> &'static str {
        if self == TagType::VarInt {
            return "i32";
        }
        Self::ALL
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("u8", |(w, _)| w)
    }
}

/// `name: Type` inside a container's `ctx(...)`.
#[derive(Clone)]
pub struct CtxBinding {
    pub name: Ident,
    pub ty: Type,
}

/// `#[wire(...)]` on a struct or enum.
#[derive(Default)]
pub struct ContainerAttrs {
    pub endian: Option<Spanned<Endian>>,
    pub magic: Option<Spanned<Expr>>,
    pub ctx: Option<Spanned<Vec<CtxBinding>>>,
    pub tag: Option<Spanned<TagType>>,
    pub len: Option<Spanned<Prefix>>,
    pub surplus: Option<Spanned<Surplus>>,
    pub external: Option<Spanned<()>>,
    /// `view = Name`: the encode-side type to generate.
    pub view: Option<Spanned<Ident>>,
}

/// `#[wire(...)]` on an enum variant.
#[derive(Default)]
pub struct VariantAttrs {
    pub tag: Option<Spanned<Expr>>,
    /// `magic = b"..."`: the bytes that select the variant, instead of a tag.
    pub magic: Option<Spanned<Expr>>,
    pub other: Option<Spanned<()>>,
}

/// The options of `str(...)` or `bytes(...)`: how the bytes are framed, their maximum and,
/// for `str`, their encoding.
#[derive(Default)]
pub struct TextAttr {
    pub prefix: Option<Spanned<Prefix>>,
    pub rest: Option<Spanned<()>>,
    /// `nul`: the text ends at a NUL byte.
    pub nul: Option<Spanned<()>>,
    /// `until = b' '`: the text ends at the given byte.
    pub until: Option<Spanned<Expr>>,
    /// `before = b"\\x"`: the text ends where the given bytes start, which are left for the
    /// next field.
    pub before: Option<Spanned<Expr>>,
    /// `quoted`: the text is between two `"`.
    pub quoted: Option<Spanned<()>>,
    /// `or_end` with `until` or `before`: the end of the input ends the text too.
    pub or_end: Option<Spanned<()>>,
    pub max: Option<Spanned<Expr>>,
    pub encoding: Option<Spanned<Encoding>>,
}

/// The options of `len(...)`.
pub struct LenAttr {
    pub prefix: Spanned<Prefix>,
    pub surplus: Surplus,
    /// `includes = N`: the length also counts `N` bytes besides the value (the prefix itself,
    /// a header before it).
    pub includes: Option<Spanned<Expr>>,
}

/// How many elements a `Vec` holds.
pub enum RepeatAttr {
    /// `count(prefix = u16)`: a count prefix before the elements.
    Prefix(Prefix),
    /// `count = <expr>`: computed from earlier fields or the context.
    Expr(Expr),
    /// `until_end`: as many as the reader holds.
    UntilEnd,
    /// `until_nul`, `until_nul(or_end)`: elements until a NUL byte, which ends the list.
    UntilNul { or_end: bool },
    /// `until = b'\n'`, `until(b"\r\n", or_end)`: elements until the terminator, which is
    /// consumed; `before = b'"'`: elements until the input starts with the bytes, which are
    /// left for the next field.
    Until {
        end: Expr,
        or_end: bool,
        consume: bool,
    },
}

impl RepeatAttr {
    /// The directive as written, for messages.
    pub fn keyword(&self) -> &'static str {
        match self {
            RepeatAttr::Prefix(_) | RepeatAttr::Expr(_) => "count",
            RepeatAttr::UntilEnd => "until_end",
            RepeatAttr::UntilNul { .. } => "until_nul",
            RepeatAttr::Until { consume: true, .. } => "until",
            RepeatAttr::Until { consume: false, .. } => "before",
        }
    }
}

/// `flag(flags, MASK)`: the flag field's name and the bits that announce this field.
pub struct FlagAttr {
    pub field: Ident,
    pub mask: Expr,
}

/// `each_ctx = |i| <expr>`, taken apart so the body can be inlined into the loop.
pub struct EachCtx {
    pub index: Pat,
    pub body: Expr,
}

/// `#[wire(...)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    pub endian: Option<Spanned<Endian>>,
    pub str_: Option<Spanned<TextAttr>>,
    pub bytes: Option<Spanned<TextAttr>>,
    /// `dec(...)`: an integer as decimal text, framed like `bytes(...)`.
    pub dec: Option<Spanned<TextAttr>>,
    pub len: Option<Spanned<LenAttr>>,
    pub repeat: Option<Spanned<RepeatAttr>>,
    pub min_count: Option<Spanned<Expr>>,
    pub max_count: Option<Spanned<Expr>>,
    pub ctx: Option<Spanned<Expr>>,
    pub each_ctx: Option<Spanned<EachCtx>>,
    /// `cycle = <expr>`: the index `each_ctx` gets restarts after this many elements.
    pub cycle: Option<Spanned<Expr>>,
    pub when: Option<Spanned<Expr>>,
    /// `trailing`: an `Option` present when input is left.
    pub trailing: Option<Spanned<()>>,
    /// `if_next = b"\x01"`: an `Option` present when the input's next bytes are these.
    pub if_next: Option<Spanned<Expr>>,
    pub bits: Option<Spanned<()>>,
    /// `bit_width = N`: the field is `N` bits of an integer it shares with its neighbours.
    pub bit_width: Option<Spanned<syn::LitInt>>,
    /// `flags`: an integer whose bits say which `flag(..)` fields follow, computed from them.
    pub flags: Option<Spanned<()>>,
    /// `flag(field, MASK)`: an `Option` present when `field`'s `MASK` bits are set.
    pub flag: Option<Spanned<FlagAttr>>,
    /// `range`: generate `<FIELD>_RANGE`, the bytes the field occupies.
    pub range: Option<Spanned<()>>,
    pub default: Option<Spanned<()>>,
    /// `computed = <expr>`: written from the expression, checked against it on decode.
    pub computed: Option<Spanned<Expr>>,
    /// `view`: in the container's view, any type (or elements) that encodes like this one.
    pub view: Option<Spanned<()>>,
    /// `varint` (LEB128 groups; VarInt / VarLong for signed types) or `packed_int`
    /// (Teeworlds' sign-and-magnitude groups): the integer's variable-length framing.
    pub varint: Option<Spanned<IntFraming>>,
    /// `crc32(after)` / `crc32(before)`: a CRC32 of the bytes after or before the field.
    pub crc32: Option<Spanned<ChecksumSpan>>,
}

impl FieldAttrs {
    /// True when the field carries no directive at all.
    pub fn is_empty(&self) -> bool {
        self.endian.is_none()
            && self.str_.is_none()
            && self.bytes.is_none()
            && self.len.is_none()
            && self.repeat.is_none()
            && self.min_count.is_none()
            && self.max_count.is_none()
            && self.ctx.is_none()
            && self.each_ctx.is_none()
            && self.cycle.is_none()
            && self.when.is_none()
            && self.trailing.is_none()
            && self.if_next.is_none()
            && self.bits.is_none()
            && self.bit_width.is_none()
            && self.flags.is_none()
            && self.flag.is_none()
            && self.range.is_none()
            && self.computed.is_none()
            && self.view.is_none()
            && self.varint.is_none()
            && self.crc32.is_none()
    }
}

/// Parses the container attributes among `attrs`.
pub fn container(attrs: &[Attribute], errors: &mut Errors) -> ContainerAttrs {
    let mut out = ContainerAttrs::default();
    for_each_directive(attrs, errors, |key, input, errors| {
        match lookup::<ContainerKey>(key)? {
            ContainerKey::Endian => {
                let value = eq_str_choice(input, errors)?;
                set(&mut out.endian, key, value, errors);
            }
            ContainerKey::Magic => {
                let value = eq_magic(input, errors)?;
                set(&mut out.magic, key, value, errors);
            }
            ContainerKey::Ctx => {
                if input.peek(Token![=]) {
                    return Err(syn::Error::new(
                        key.span(),
                        "a container declares its context as `ctx(name: Type, ...)`; \
                         `ctx = <expression>` passes context to a field",
                    ));
                }
                let value = ctx_bindings(input, key, errors)?;
                set(&mut out.ctx, key, value, errors);
            }
            ContainerKey::Tag => {
                let value = eq_type_choice::<TagType>(input, errors)?;
                set(&mut out.tag, key, value, errors);
            }
            ContainerKey::Len => {
                let value = eq_type_choice::<Prefix>(input, errors)?;
                set(&mut out.len, key, value, errors);
            }
            ContainerKey::Surplus => {
                let value = eq_str_choice(input, errors)?;
                set(&mut out.surplus, key, value, errors);
            }
            ContainerKey::External => {
                flag(input, key)?;
                set(&mut out.external, key, (), errors);
            }
            ContainerKey::View => {
                input.parse::<Token![=]>()?;
                let value: Ident = input.parse().map_err(|e| {
                    syn::Error::new(e.span(), "expected the view's name: `view = PacketView`")
                })?;
                set(&mut out.view, key, value, errors);
            }
        }
        Ok(())
    });
    out
}

/// Parses the variant attributes among `attrs`.
pub fn variant(attrs: &[Attribute], errors: &mut Errors) -> VariantAttrs {
    let mut out = VariantAttrs::default();
    for_each_directive(attrs, errors, |key, input, errors| {
        match lookup::<VariantKey>(key)? {
            VariantKey::Tag => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.tag, key, value, errors);
            }
            VariantKey::Magic => {
                let value = eq_magic(input, errors)?;
                set(&mut out.magic, key, value, errors);
            }
            VariantKey::Other => {
                flag(input, key)?;
                set(&mut out.other, key, (), errors);
            }
        }
        Ok(())
    });
    out
}

/// Parses the field attributes among `attrs`.
pub fn field(attrs: &[Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs::default();
    for_each_directive(attrs, errors, |key, input, errors| {
        match lookup::<FieldKey>(key)? {
            FieldKey::Endian => {
                let value = eq_str_choice(input, errors)?;
                set(&mut out.endian, key, value, errors);
            }
            FieldKey::Str => {
                let value = text_options(input, key, true, errors)?;
                set(&mut out.str_, key, value, errors);
            }
            FieldKey::Bytes => {
                let value = text_options(input, key, false, errors)?;
                set(&mut out.bytes, key, value, errors);
            }
            FieldKey::Dec => {
                let value = text_options(input, key, false, errors)?;
                set(&mut out.dec, key, value, errors);
            }
            FieldKey::Len => {
                let value = len_options(input, errors)?;
                set(&mut out.len, key, value, errors);
            }
            FieldKey::Count => {
                let value = if input.peek(Token![=]) {
                    input.parse::<Token![=]>()?;
                    RepeatAttr::Expr(input.parse()?)
                } else if input.peek(syn::token::Paren) {
                    RepeatAttr::Prefix(count_prefix(input, errors)?)
                } else {
                    return Err(syn::Error::new(
                        key.span(),
                        "expected `count(prefix = u8|u16|u32|u64)` or `count = <expression>`",
                    ));
                };
                set_repeat(&mut out.repeat, key, value, errors);
            }
            FieldKey::UntilEnd => {
                flag(input, key)?;
                set_repeat(&mut out.repeat, key, RepeatAttr::UntilEnd, errors);
            }
            FieldKey::UntilNul => {
                let or_end = until_nul_options(input, key)?;
                set_repeat(
                    &mut out.repeat,
                    key,
                    RepeatAttr::UntilNul { or_end },
                    errors,
                );
            }
            FieldKey::Until | FieldKey::Before => {
                let (end, or_end) = end_options(input, key)?;
                let end = terminator(end, errors);
                let consume = key == "until";
                set_repeat(
                    &mut out.repeat,
                    key,
                    RepeatAttr::Until {
                        end,
                        or_end,
                        consume,
                    },
                    errors,
                );
            }
            FieldKey::MinCount => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.min_count, key, value, errors);
            }
            FieldKey::MaxCount => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.max_count, key, value, errors);
            }
            FieldKey::Ctx => {
                if input.peek(syn::token::Paren) {
                    return Err(syn::Error::new(
                        key.span(),
                        "a field passes context as `ctx = <expression>`; \
                         `ctx(name: Type)` declares a container's context",
                    ));
                }
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.ctx, key, value, errors);
            }
            FieldKey::EachCtx => {
                input.parse::<Token![=]>()?;
                let value = each_ctx(input)?;
                set(&mut out.each_ctx, key, value, errors);
            }
            FieldKey::Cycle => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.cycle, key, value, errors);
            }
            FieldKey::When => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.when, key, value, errors);
            }
            FieldKey::Trailing => {
                flag(input, key)?;
                set(&mut out.trailing, key, (), errors);
            }
            FieldKey::IfNext => {
                input.parse::<Token![=]>()?;
                let value = terminator(input.parse()?, errors);
                set(&mut out.if_next, key, value, errors);
            }
            FieldKey::Bits => {
                flag(input, key)?;
                set(&mut out.bits, key, (), errors);
            }
            FieldKey::BitWidth => {
                input.parse::<Token![=]>()?;
                let value: syn::LitInt = input.parse().map_err(|e| {
                    syn::Error::new(e.span(), "expected a number of bits: `bit_width = 4`")
                })?;
                set(&mut out.bit_width, key, value, errors);
            }
            FieldKey::Flags => {
                flag(input, key)?;
                set(&mut out.flags, key, (), errors);
            }
            FieldKey::Flag => {
                let value = flag_options(input, key)?;
                set(&mut out.flag, key, value, errors);
            }
            FieldKey::Range => {
                flag(input, key)?;
                set(&mut out.range, key, (), errors);
            }
            FieldKey::Default => {
                flag(input, key)?;
                set(&mut out.default, key, (), errors);
            }
            FieldKey::Computed => {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set(&mut out.computed, key, value, errors);
            }
            FieldKey::View => {
                flag(input, key)?;
                set(&mut out.view, key, (), errors);
            }
            FieldKey::Varint => {
                flag(input, key)?;
                set_framing(&mut out.varint, key, IntFraming::Leb128, errors);
            }
            FieldKey::PackedInt => {
                flag(input, key)?;
                set_framing(&mut out.varint, key, IntFraming::Packed, errors);
            }
            FieldKey::Crc32 => {
                let value = checksum_span(input, key, errors)?;
                set(&mut out.crc32, key, value, errors);
            }
        }
        Ok(())
    });
    out
}

/// Runs `directive` on every `key ...` of every `#[wire(...)]` in `attrs`. An error inside a
/// directive is recorded and parsing resumes after the next top-level comma.
fn for_each_directive(
    attrs: &[Attribute],
    errors: &mut Errors,
    mut directive: impl FnMut(&Ident, ParseStream<'_>, &mut Errors) -> syn::Result<()>,
) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("wire")) {
        let result = attr.parse_args_with(|input: ParseStream<'_>| {
            while !input.is_empty() {
                let key = input.call(Ident::parse_any)?;
                if let Err(error) = directive(&key, input, errors) {
                    errors.push(error);
                    while !input.is_empty() && !input.peek(Token![,]) {
                        input.parse::<TokenTree>()?;
                    }
                }
                if input.is_empty() {
                    break;
                }
                input.parse::<Token![,]>()?;
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
}

fn lookup<K: Choice>(key: &Ident) -> syn::Result<K> {
    let word = key.unraw().to_string();
    K::lookup(&word).ok_or_else(|| syn::Error::new(key.span(), K::unknown(&word)))
}

/// The variable-length framing of an integer field: `varint` or `packed_int`, not both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum IntFraming {
    /// `varint`: LEB128 groups (VarInt / VarLong for signed types).
    Leb128,
    /// `packed_int`: Teeworlds' packed integer, a sign bit and 6 bits, then 7-bit groups.
    Packed,
}

impl IntFraming {
    /// The attribute that asks for it.
    pub fn word(self) -> &'static str {
        match self {
            IntFraming::Leb128 => "varint",
            IntFraming::Packed => "packed_int",
        }
    }
}

fn set_framing(
    slot: &mut Option<Spanned<IntFraming>>,
    key: &Ident,
    value: IntFraming,
    errors: &mut Errors,
) {
    match slot {
        Some(given) if given.value != value => errors.at(
            key.span(),
            format!(
                "`{}` and `{}` are two framings of one integer: keep one",
                given.value.word(),
                value.word()
            ),
        ),
        _ => set(slot, key, value, errors),
    }
}

fn set<T>(slot: &mut Option<Spanned<T>>, key: &Ident, value: T, errors: &mut Errors) {
    if slot.is_some() {
        errors.at(key.span(), format!("duplicate wire attribute `{key}`"));
    } else {
        *slot = Some(Spanned {
            value,
            span: key.span(),
        });
    }
}

fn set_repeat(
    slot: &mut Option<Spanned<RepeatAttr>>,
    key: &Ident,
    value: RepeatAttr,
    errors: &mut Errors,
) {
    if slot.is_some() {
        errors.at(
            key.span(),
            format!(
                "`{key}` is a second repeat form: a Vec takes exactly one of \
                 `count(prefix = ..)`, `count = ..`, `until_end`, `until_nul`, `until = ..` and \
                 `before = ..`"
            ),
        );
    } else {
        *slot = Some(Spanned {
            value,
            span: key.span(),
        });
    }
}

/// The terminator of `until` / `before` on a list: `= <byte or byte string>`, or
/// `(<byte or byte string>, or_end)` to let the end of the input end the list too.
fn end_options(input: ParseStream<'_>, key: &Ident) -> syn::Result<(Expr, bool)> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        return Ok((input.parse()?, false));
    }
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            format!(
                "`{key}` needs the bytes that end the list: `{key} = b'\\n'`, or \
                 `{key}(b\"\\r\\n\", or_end)` to let the end of the input end it too"
            ),
        ));
    }
    let content;
    syn::parenthesized!(content in input);
    let end: Expr = content.parse()?;
    if content.is_empty() {
        return Ok((end, false));
    }
    content.parse::<Token![,]>()?;
    let option: Ident = content.parse()?;
    if option != "or_end" {
        return Err(syn::Error::new(
            option.span(),
            format!("unknown option `{option}` of `{key}`, expected `or_end`"),
        ));
    }
    if !content.is_empty() {
        return Err(content.error(format!("`{key}` takes one option, `or_end`")));
    }
    Ok((end, true))
}

/// A terminator as written: a byte, a byte string or a constant, kept; or a list of byte
/// strings (`[b"\n", b"\n\0", b"\0"]`), any of which ends the value, made into an
/// `AnyOf` that writes the first.
fn terminator(expr: Expr, errors: &mut Errors) -> Expr {
    let Expr::Array(list) = &expr else {
        return expr;
    };
    if list.elems.len() < 2 {
        errors.spanning(
            &expr,
            "a list of terminators takes two or more, any of which ends the value: \
             `[b\"\\n\", b\"\\0\"]`; a single one is written without brackets",
        );
    }
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut alternatives = Vec::new();
    for element in &list.elems {
        let literal = match element {
            Expr::Lit(lit) => match &lit.lit {
                syn::Lit::ByteStr(bytes) => Some(bytes.clone()),
                syn::Lit::Byte(byte) => Some(syn::LitByteStr::new(&[byte.value()], byte.span())),
                _ => None,
            },
            _ => None,
        };
        match &literal {
            Some(bytes) if bytes.value().is_empty() => errors.spanning(
                element,
                "an empty terminator would end the value before its first byte",
            ),
            Some(bytes) if seen.contains(&bytes.value()) => {
                errors.spanning(element, "this terminator is already in the list")
            }
            Some(bytes) => seen.push(bytes.value()),
            None if matches!(element, Expr::Path(_)) => {}
            None => errors.spanning(
                element,
                "a terminator in a list is a byte (`b'\\n'`), a byte string (`b\"\\r\\n\"`) \
                 or the path of a `&[u8]` constant",
            ),
        }
        alternatives.push(match literal {
            Some(bytes) => quote::quote!(#bytes as &[u8]),
            None => quote::quote!(#element as &[u8]),
        });
    }
    syn::parse_quote!(::query_wire::AnyOf([#(#alternatives),*]))
}

/// A directive that is a bare word.
/// The options of `until_nul`: none, or `(or_end)`, which lets the end of the input end the
/// list as the NUL would.
fn until_nul_options(input: ParseStream<'_>, key: &Ident) -> syn::Result<bool> {
    if !input.peek(syn::token::Paren) {
        if input.is_empty() || input.peek(Token![,]) {
            return Ok(false);
        }
        return Err(syn::Error::new(
            key.span(),
            "`until_nul` takes no value: `until_nul`, or `until_nul(or_end)` to let the end \
             of the input end the list too",
        ));
    }
    let content;
    syn::parenthesized!(content in input);
    let option: Ident = content.parse()?;
    if option != "or_end" {
        return Err(syn::Error::new(
            option.span(),
            format!("unknown option `{option}` of `until_nul`, expected `or_end`"),
        ));
    }
    if !content.is_empty() {
        return Err(content.error("`until_nul` takes one option, `or_end`"));
    }
    Ok(true)
}

fn flag(input: ParseStream<'_>, key: &Ident) -> syn::Result<()> {
    if input.is_empty() || input.peek(Token![,]) {
        Ok(())
    } else {
        Err(syn::Error::new(
            key.span(),
            format!("`{key}` takes no value"),
        ))
    }
}

/// `= "word"` for a [`Choice`] of strings. An unknown word is recorded; the first choice stands
/// in for it so that checking can go on.
fn eq_str_choice<C: Choice>(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<C> {
    input.parse::<Token![=]>()?;
    let lit = input.parse::<LitStr>().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("expected a string, one of: {}", C::quoted()),
        )
    })?;
    Ok(str_choice(&lit, errors))
}

fn str_choice<C: Choice>(lit: &LitStr, errors: &mut Errors) -> C {
    let word = lit.value();
    C::lookup(&word).unwrap_or_else(|| {
        errors.at(lit.span(), C::unknown(&word));
        C::ALL[0].1
    })
}

/// `= u16` for a [`Choice`] of type names.
fn eq_type_choice<C: Choice>(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<C> {
    input.parse::<Token![=]>()?;
    type_choice(input, errors)
}

fn type_choice<C: Choice>(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<C> {
    let token: TokenTree = input.parse()?;
    let word = match &token {
        TokenTree::Ident(ident) => ident.to_string(),
        other => other.to_string(),
    };
    Ok(C::lookup(&word).unwrap_or_else(|| {
        errors.at(token.span(), C::unknown(&word));
        C::ALL[0].1
    }))
}

/// `= b"MAGIC"` or `= SOME_CONSTANT`.
fn eq_magic(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<Expr> {
    input.parse::<Token![=]>()?;
    let expr: Expr = input.parse()?;
    let fine = match &expr {
        Expr::Lit(lit) => matches!(lit.lit, syn::Lit::ByteStr(_)),
        Expr::Path(_) => true,
        _ => false,
    };
    if !fine {
        errors.spanning(
            &expr,
            "magic must be a byte string such as b\"SAMP\", or the path of a constant",
        );
    }
    Ok(expr)
}

/// `(name: Type, other: Type2)`.
fn ctx_bindings(
    input: ParseStream<'_>,
    key: &Ident,
    errors: &mut Errors,
) -> syn::Result<Vec<CtxBinding>> {
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            "expected `ctx(name: Type, ...)`",
        ));
    }
    let content;
    syn::parenthesized!(content in input);
    let bindings = Punctuated::<CtxBindingSyntax, Token![,]>::parse_terminated(&content)?;
    if bindings.is_empty() {
        errors.at(
            key.span(),
            "`ctx(...)` needs at least one `name: Type` binding",
        );
    }
    Ok(bindings
        .into_iter()
        .map(|CtxBindingSyntax(name, ty)| CtxBinding { name, ty })
        .collect())
}

struct CtxBindingSyntax(Ident, Type);

impl syn::parse::Parse for CtxBindingSyntax {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        const SHAPE: &str = "a context binding is `name: Type`, e.g. `ctx(requested: ChunkSet)`";
        let start = input.span();
        let name: Ident = input.parse().map_err(|_| syn::Error::new(start, SHAPE))?;
        if !input.peek(Token![:]) || input.peek(Token![::]) {
            return Err(syn::Error::new(name.span(), SHAPE));
        }
        input.parse::<Token![:]>()?;
        let ty: Type = input.parse()?;
        Ok(CtxBindingSyntax(name, ty))
    }
}

/// `(prefix = u8, max = 255, encoding = "latin1")` or `(rest)` after `str` / `bytes`.
fn text_options(
    input: ParseStream<'_>,
    key: &Ident,
    is_str: bool,
    errors: &mut Errors,
) -> syn::Result<TextAttr> {
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            key.span(),
            format!("expected `{key}(prefix = u8|u16|u32|u64)` or `{key}(rest)`"),
        ));
    }
    let content;
    syn::parenthesized!(content in input);
    let mut out = TextAttr::default();
    while !content.is_empty() {
        let option = content.call(Ident::parse_any)?;
        match lookup::<TextKey>(&option)? {
            TextKey::Prefix => {
                let value = eq_type_choice(&content, errors)?;
                set(&mut out.prefix, &option, value, errors);
            }
            TextKey::Max => {
                content.parse::<Token![=]>()?;
                let value: Expr = content.parse()?;
                set(&mut out.max, &option, value, errors);
            }
            TextKey::Encoding if is_str => {
                let value = eq_str_choice(&content, errors)?;
                set(&mut out.encoding, &option, value, errors);
            }
            TextKey::Encoding => {
                return Err(syn::Error::new(
                    option.span(),
                    "`encoding` applies to `str`; `bytes` are raw",
                ));
            }
            TextKey::Rest => {
                flag(&content, &option)?;
                set(&mut out.rest, &option, (), errors);
            }
            TextKey::Nul => {
                flag(&content, &option)?;
                set(&mut out.nul, &option, (), errors);
            }
            TextKey::Until => {
                content.parse::<Token![=]>()?;
                let value = terminator(content.parse()?, errors);
                set(&mut out.until, &option, value, errors);
            }
            TextKey::Before => {
                content.parse::<Token![=]>()?;
                let value = terminator(content.parse()?, errors);
                set(&mut out.before, &option, value, errors);
            }
            TextKey::Quoted => {
                flag(&content, &option)?;
                set(&mut out.quoted, &option, (), errors);
            }
            TextKey::OrEnd => {
                flag(&content, &option)?;
                set(&mut out.or_end, &option, (), errors);
            }
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    let ends: Vec<Span> = [
        out.prefix.as_ref().map(|p| p.span),
        out.rest.as_ref().map(|r| r.span),
        out.nul.as_ref().map(|n| n.span),
        out.until.as_ref().map(|u| u.span),
        out.before.as_ref().map(|b| b.span),
        out.quoted.as_ref().map(|q| q.span),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let (Some(or_end), None, None) = (&out.or_end, &out.until, &out.before) {
        errors.at(
            or_end.span,
            "`or_end` applies to `until = ..` and `before = ..`: the text ends at its terminator \
             or at the end of the input",
        );
    }
    match ends[..] {
        [] => errors.at(
            key.span(),
            format!("`{key}` needs `prefix = u8|u16|u32|u64`, `rest`, `nul`, `until = b'..'`, `before = b'..'` or `quoted`"),
        ),
        [_] => {}
        [_, second, ..] => errors.at(
            second,
            format!("`{key}` takes one of `prefix = ..`, `rest`, `nul`, `until = ..`, `before = ..` and `quoted`"),
        ),
    }
    Ok(out)
}

/// `(after)` or `(before)` after `crc32`.
fn checksum_span(
    input: ParseStream<'_>,
    key: &Ident,
    errors: &mut Errors,
) -> syn::Result<ChecksumSpan> {
    const SHAPE: &str = "expected `crc32(after)` (the bytes after the field, to the end of the \
                         input) or `crc32(before)` (the container's bytes before the field)";
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(key.span(), SHAPE));
    }
    let content;
    syn::parenthesized!(content in input);
    let span: Ident = content
        .call(Ident::parse_any)
        .map_err(|e| syn::Error::new(e.span(), SHAPE))?;
    if !content.is_empty() {
        return Err(content.error(SHAPE));
    }
    let word = span.unraw().to_string();
    Ok(ChecksumSpan::lookup(&word).unwrap_or_else(|| {
        errors.at(span.span(), ChecksumSpan::unknown(&word));
        ChecksumSpan::After
    }))
}

/// `(prefix = u16, surplus = "skip", includes = 1)`, or the shorthand `= u16`.
fn len_options(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<LenAttr> {
    if input.peek(Token![=]) {
        let span = input.span();
        let prefix = eq_type_choice(input, errors)?;
        return Ok(LenAttr {
            prefix: Spanned {
                value: prefix,
                span,
            },
            surplus: Surplus::Error,
            includes: None,
        });
    }
    let content;
    syn::parenthesized!(content in input);
    let mut prefix: Option<Spanned<Prefix>> = None;
    let mut surplus: Option<Spanned<Surplus>> = None;
    let mut includes: Option<Spanned<Expr>> = None;
    while !content.is_empty() {
        let option = content.call(Ident::parse_any)?;
        match lookup::<LenKey>(&option)? {
            LenKey::Prefix => {
                let value = eq_type_choice(&content, errors)?;
                set(&mut prefix, &option, value, errors);
            }
            LenKey::Surplus => {
                let value = eq_str_choice(&content, errors)?;
                set(&mut surplus, &option, value, errors);
            }
            LenKey::Includes => {
                content.parse::<Token![=]>()?;
                let value: Expr = content.parse()?;
                let count = match &value {
                    Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Int(_)),
                    Expr::Path(_) => true,
                    _ => false,
                };
                if !count {
                    errors.spanning(
                        &value,
                        "`includes` is the number of bytes the length counts besides the \
                         value: an integer such as `1`, or a `usize` constant",
                    );
                }
                set(&mut includes, &option, value, errors);
            }
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    let Some(prefix) = prefix else {
        return Err(content.error("`len` needs `prefix = u8|u16|u32|u64`"));
    };
    Ok(LenAttr {
        prefix,
        surplus: surplus.map_or(Surplus::Error, |s| s.value),
        includes,
    })
}

/// `(prefix = u16)` after `count`.
fn count_prefix(input: ParseStream<'_>, errors: &mut Errors) -> syn::Result<Prefix> {
    let content;
    syn::parenthesized!(content in input);
    let option = content.call(Ident::parse_any)?;
    if option != "prefix" {
        return Err(syn::Error::new(
            option.span(),
            format!("unknown `count` option `{option}`, expected: prefix"),
        ));
    }
    let prefix = eq_type_choice(&content, errors)?;
    if !content.is_empty() {
        return Err(content.error("`count(...)` takes only `prefix = ..`"));
    }
    Ok(prefix)
}

/// `|i| <expr>`.
/// `flag(flags, MASK)`.
fn flag_options(input: ParseStream<'_>, key: &Ident) -> syn::Result<FlagAttr> {
    const SHAPE: &str = "expected `flag(<flag field>, <mask>)`, as in `flag(flags, EDF_PORT)`";
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(key.span(), SHAPE));
    }
    let content;
    syn::parenthesized!(content in input);
    let field: Ident = content
        .parse()
        .map_err(|e| syn::Error::new(e.span(), SHAPE))?;
    content
        .parse::<Token![,]>()
        .map_err(|e| syn::Error::new(e.span(), SHAPE))?;
    let mask: Expr = content.parse()?;
    if !content.is_empty() {
        return Err(content.error(SHAPE));
    }
    Ok(FlagAttr { field, mask })
}

fn each_ctx(input: ParseStream<'_>) -> syn::Result<EachCtx> {
    let expr: Expr = input.parse()?;
    match expr {
        Expr::Closure(closure) if closure.inputs.len() == 1 => {
            let index = closure.inputs.into_iter().next().expect("one input");
            Ok(EachCtx {
                index,
                body: *closure.body,
            })
        }
        other => Err(syn::Error::new_spanned(
            other,
            "`each_ctx` takes a closure over the element index: `each_ctx = |i| <expression>`",
        )),
    }
}
