//! Types that together use every part of the `#[derive(Wire)]` vocabulary, shared by the
//! derive's behaviour tests and property tests.

#![allow(dead_code)]

use std::borrow::Cow;

use query_wire::{bitflags, Padding, Reserved, Text, Uuid, Wire};

bitflags! {
    /// Flags that select optional fields, and a `bits` field of its own.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Flags: u16 {
        const NAME = 0x0001;
        const SCORES = 0x0002;
        const EXTRA = 0x0100;
    }
}

/// Every fixed-width type, both byte orders, magic, reserved and padding.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", magic = b"FIX")]
pub struct Scalars {
    pub a: u8,
    pub b: u16,
    pub c: u32,
    pub d: u64,
    pub e: i8,
    pub f: i16,
    pub g: i32,
    pub h: i64,
    pub x: f32,
    pub y: f64,
    pub on: bool,
    #[wire(endian = "little")]
    pub little: u32,
    pub raw: [u8; 3],
    pub id: Uuid,
    #[wire(endian = "little")]
    pub id_little: Uuid,
    #[wire(bits)]
    pub flags: Flags,
    #[wire(bits, endian = "little")]
    pub flags_little: Flags,
    pub reserved: Reserved<2>,
    pub padding: Padding<1>,
}

/// Every string and byte-string type, prefixes of every width, encodings and maximums.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
pub struct Strings<'a> {
    #[wire(str(prefix = u8))]
    pub borrowed: &'a str,
    #[wire(str(prefix = u16, max = 12))]
    pub bounded: &'a str,
    #[wire(str(prefix = u32, encoding = "latin1"))]
    pub latin1: String,
    #[wire(str(prefix = u8, encoding = "windows1251"))]
    pub cyrillic: Cow<'a, str>,
    #[wire(str(prefix = u16, encoding = "windows1252"))]
    pub western: String,
    #[wire(str(prefix = u64))]
    pub owned: String,
    #[wire(str(prefix = u8))]
    pub raw: Text<'a>,
    #[wire(endian = "big", str(prefix = u16))]
    pub big_prefix: Cow<'a, str>,
    #[wire(bytes(prefix = u8))]
    pub bytes: &'a [u8],
    #[wire(bytes(prefix = u16, max = 6))]
    pub owned_bytes: Vec<u8>,
    #[wire(bytes(prefix = u32))]
    pub cow_bytes: Cow<'a, [u8]>,
}

/// Fields that run to the end of their body, kept inside length frames so that a truncated
/// packet is always detectable.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
pub struct Tails<'a> {
    #[wire(len(prefix = u8), ctx = ())]
    pub text: RestText<'a>,
    #[wire(len(prefix = u16))]
    pub bytes: RestBytes<'a>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
pub struct RestText<'a> {
    #[wire(str(prefix = u8))]
    pub head: &'a str,
    #[wire(str(rest, encoding = "latin1", max = 20))]
    pub tail: String,
}

#[derive(Debug, Clone, PartialEq, Wire)]
pub struct RestBytes<'a> {
    pub kind: u8,
    #[wire(bytes(rest))]
    pub tail: &'a [u8],
}

/// A tuple struct: its fields are `_0`, `_1` in expressions and `0`, `1` in error paths.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
pub struct Pair(pub u16, #[wire(count = *_0)] pub Vec<u8>);

/// Context from the outer packet selects optional parts; `len` frames them.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", ctx(requested: Flags, scale: u8))]
pub struct Chunks<'a> {
    #[wire(
        when = requested.contains(Flags::NAME),
        len(prefix = u32, surplus = "skip")
    )]
    pub name: Option<Named<'a>>,
    #[wire(
        when = requested.contains(Flags::SCORES),
        len(prefix = u16),
        until_end,
        ctx = scale
    )]
    pub scores: Option<Vec<Score>>,
    #[wire(when = requested.contains(Flags::EXTRA) && scores.is_some())]
    pub extra: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
pub struct Named<'a> {
    #[wire(str(prefix = u8))]
    pub map: &'a str,
    pub port: u16,
}

/// A value whose encoding depends on the context: stored as `points * scale`.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", ctx(scale: u8))]
pub struct Score {
    #[wire(ctx = scale)]
    pub points: Scaled,
}

/// A nested type with a context of its own.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", ctx(scale: u8))]
pub struct Scaled {
    pub raw: u16,
    #[wire(count = scale, ctx = *raw)]
    pub checks: Vec<Check>,
}

/// Carries a byte only when its context (the scaled value) is not zero.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(ctx(raw: u16))]
pub struct Check {
    #[wire(when = raw != 0)]
    pub byte: Option<u8>,
}

/// A header that says how many and which elements follow.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
pub struct Repeats<'a> {
    #[wire(count(prefix = u8))]
    pub numbers: Vec<u16>,
    #[wire(endian = "little", count(prefix = u16), max_count = 3, str(prefix = u8))]
    pub names: Vec<&'a str>,
    pub n: u8,
    #[wire(count = *n, each_ctx = |i| i as u8)]
    pub indexed: Vec<Indexed>,
    #[wire(len(prefix = u16), until_end, max_count = 4)]
    pub pairs: Vec<Pair>,
    #[wire(count(prefix = u8), bits)]
    pub flag_sets: Vec<Flags>,
    #[wire(count(prefix = u8))]
    pub ids: Vec<Uuid>,
}

/// Repeats with a minimum number of elements, in each form.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
pub struct AtLeast {
    pub rows: u8,
    /// Present only when there are rows, and then never empty.
    #[wire(when = *rows > 0, count(prefix = u16), min_count = 1)]
    pub columns: Option<Vec<u8>>,
    pub n: u8,
    #[wire(count = *n, min_count = 2)]
    pub pair: Vec<u8>,
    #[wire(len(prefix = u8), until_end, min_count = 1, max_count = 2)]
    pub tail: Vec<u16>,
}

/// Element `i` of a repeat holds `i` bytes, so the element context is visible on the wire.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(ctx(index: u8))]
pub struct Indexed {
    #[wire(count = index)]
    pub values: Vec<u8>,
}

/// Fields the wire does not carry.
#[derive(Debug, Clone, PartialEq, Wire)]
pub struct WithDefault {
    pub kept: u8,
    #[wire(default)]
    pub local: Vec<String>,
}

/// A tagged enum with unit, tuple and struct variants, literal and constant tags.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", tag = u8, magic = b"\xfe")]
pub enum Message<'a> {
    #[wire(tag = 0)]
    Ping,
    #[wire(tag = 1)]
    Number(u32),
    #[wire(tag = 0x02)]
    Pair(u8, #[wire(str(prefix = u8))] &'a str),
    #[wire(tag = MESSAGE_NAMED)]
    Named {
        #[wire(str(prefix = u16))]
        name: &'a str,
        #[wire(count(prefix = u8))]
        values: Vec<i16>,
    },
}

pub const MESSAGE_NAMED: u8 = 0x10;

/// A TLV enum: unknown tags are kept, bytes after a known body are skipped.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", tag = u16, len = u16, surplus = "skip", ctx(flags: Flags))]
pub enum Entry<'a> {
    #[wire(tag = 1)]
    Name(#[wire(str(prefix = u8))] &'a str),
    #[wire(tag = 2)]
    Sizes {
        #[wire(until_end)]
        sizes: Vec<u32>,
    },
    #[wire(tag = 3)]
    Flagged(#[wire(when = flags.contains(Flags::EXTRA))] Option<u8>),
    #[wire(other)]
    Unknown(u16, &'a [u8]),
}

/// A TLV enum whose known bodies must be used exactly, with a signed tag and no catch-all.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", tag = i8, len = u8)]
pub enum Strict {
    #[wire(tag = -1)]
    Minus(u16),
    #[wire(tag = 1)]
    Plus { value: u32 },
}

/// A packet whose body's variant is chosen by an earlier field.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
pub struct Typed<'a> {
    pub kind: u8,
    #[wire(ctx = *kind)]
    pub value: Value<'a>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", tag = u8, external)]
pub enum Value<'a> {
    #[wire(tag = 0)]
    Byte(u8),
    #[wire(tag = 1)]
    Text(#[wire(str(prefix = u8))] &'a str),
    #[wire(tag = 2)]
    Empty,
    #[wire(other)]
    Other { kind: u8, raw: Vec<u8> },
}

/// A fieldless enum whose discriminants are its tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire)]
#[wire(tag = u16, endian = "little")]
pub enum Kind {
    Alpha = 1,
    Beta = 0x200,
}

/// A unit struct that is only magic.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(magic = MAGIC_PING)]
pub struct Ping;

pub const MAGIC_PING: &[u8] = b"\xff\xff\xff\xffping";

/// A type that takes no bytes, which an `until_end` repeat must refuse rather than spin on.
#[derive(Debug, Clone, PartialEq, Wire)]
pub struct Nothing;

#[derive(Debug, Clone, PartialEq, Wire)]
pub struct Spinner {
    #[wire(until_end)]
    pub items: Vec<Nothing>,
}

/// A fixed body behind a length (the `len = u8` shorthand): bytes left over are an error.
#[derive(Debug, Clone, PartialEq, Wire)]
pub struct Framed<'a> {
    #[wire(len = u8)]
    pub named: Named<'a>,
}

/// A generic packet: type parameters are passed through, with the bounds the user writes.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
pub struct Envelope<T, const N: usize>
where
    T: for<'x> query_wire::Decode<'x, Ctx = ()> + query_wire::Encode<Ctx = ()>,
{
    pub stamp: [u8; N],
    #[wire(len = u16)]
    pub body: T,
}
