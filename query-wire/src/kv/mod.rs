//! Backslash-delimited key/value text (`\key\value\key\value`), the format of GameSpy v1, and
//! the runtime behind `#[derive(KeyValues)]`.
//!
//! - [`pairs`] splits text into [`Pair`]s that borrow from the input, with absolute offsets;
//!   a [`PairSpan`] keeps where a pair lies, so text held for later is split only once.
//! - [`KvSink`] writes pairs into a caller's buffer ([`Writer`]), a `Vec<u8>`,
//!   or only counts them ([`LenCounter`]); a key or value with a backslash is refused, since the
//!   format has no escape.
//! - [`FromValue`] / [`ToValue`] turn values into numbers (padding ignored), bool-ish flags and
//!   text in a chosen [`TextEncoding`].
//! - [`FromKeyValues`] / [`ToKeyValues`] are what the derive implements.
//!
//! # The derive
//!
//! ```
//! use std::borrow::Cow;
//! use query_wire::kv::{FromKeyValues, ToKeyValues};
//! use query_wire::KeyValues;
//!
//! #[derive(Debug, PartialEq, KeyValues)]
//! #[kv(encoding = "windows-1252")]
//! struct Status<'a> {
//!     hostname: Option<Cow<'a, str>>,
//!     #[kv(key = "numplayers")]
//!     players_online: Option<u32>,
//!     #[kv(indexed)]
//!     players: Vec<Player<'a>>,
//!     #[kv(rest)]
//!     rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
//! }
//!
//! #[derive(Debug, PartialEq, KeyValues)]
//! struct Player<'a> {
//!     #[kv(index)]
//!     index: usize,
//!     #[kv(key = "player", alias = "playername")]
//!     name: Option<Cow<'a, str>>,
//!     ping: Option<u32>,
//!     #[kv(rest)]
//!     extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
//! }
//!
//! let text = b"\\hostname\\Caf\xe9\\numplayers\\1\\timelimit\\15\\player_0\\Ann\\ping_0\\ 52\\mesh_0\\Male";
//! let status = Status::from_bytes(text)?;
//! assert_eq!(status.hostname.as_deref(), Some("Café"));
//! assert_eq!(status.players[0].ping, Some(52));
//! assert_eq!(status.players[0].extra, [("mesh".into(), "Male".into())]);
//! assert_eq!(status.rules, [("timelimit".into(), "15".into())]);
//! assert_eq!(Status::from_bytes(&status.to_vec()?)?, status);
//! # Ok::<(), query_wire::Error>(())
//! ```
//!
//! Container attributes, `#[kv(...)]` on the struct or enum:
//!
//! | attribute | meaning |
//! |---|---|
//! | `encoding = "windows-1252"` | text encoding of `from_bytes` / `to_vec` (default UTF-8); `utf-8`, `latin-1`, `windows-1252`, `windows-1251` |
//! | `unknown_prefix = "team"` | as an indexed element: unknown `base_N` keys whose base starts with this belong here (needs a `rest` field) |
//! | `format = "nul"` | `from_bytes` / `to_vec` / `encode_into` / `encoded_len` frame the pairs as `key\0value\0...\0`, ended by an empty key (GameSpy 2, 3, 4); `"backslash"` (the default) is `\key\value`. Inside a `#[derive(Wire)]` packet the field is a [`KvBlock<T>`](KvBlock) |
//!
//! Column tables (GameSpy 2 and 3 players and teams) need no key of their own: a row type is a
//! plain derived struct whose keys are the column names (`#[kv(key = "player_")]`), with a
//! `rest` field for columns it does not declare; [`RowTable`] (GameSpy 2, row by row) carries
//! the layout as a `#[derive(Wire)]` field.
//!
//! Field attributes, on the fields of a struct:
//!
//! | attribute | meaning |
//! |---|---|
//! | *(none)* | the key is the field's name; the type implements [`FromValue`] / [`ToValue`] |
//! | `key = "numplayers"` | the key on the wire |
//! | `alias = "playername"` | another key accepted on decode (repeatable); encode writes `key` |
//! | `Option<T>` type | the key may be absent; `None` is not written |
//! | `default` | an absent key gives `Default::default()` |
//! | `flag` | a `bool` that is the key's presence, written as `\key\` when true (`\final\`) |
//! | `parse` | the value goes through [`FromStr`](std::str::FromStr) and [`Display`](std::fmt::Display) |
//! | `indexed` | a `Vec<T>`, `T: KeyValues`: keys `base_N` whose base `T` declares make element `N` |
//! | `index` | in an element: a `usize` that receives `N` and is written as `N` |
//! | `rest` | every pair nothing else claims, in order, e.g. `Vec<(Cow<str>, Cow<str>)>` |
//! | `skip` | not on the wire; `Default::default()` on decode |
//!
//! Variant attributes, on the variants of an enum (an enum is one pair, e.g. a request):
//!
//! | attribute | meaning |
//! |---|---|
//! | *(none)* | the key is the variant's name in lower case; a unit variant ignores the value and writes an empty one, a one-field tuple variant holds the value |
//! | `key = "status"` | the key on the wire |
//! | `value = "xserverquery"` | a unit variant that needs exactly this value; tried before variants without |
//! | `other` | a `(key, value)` tuple variant that takes any key no other variant declares |
//!
//! # Decoding rules
//!
//! 1. A key a plain field declares (its `key` or an `alias`) fills that field the first time;
//!    a repeat goes to the `rest` field, so nothing is lost and a re-encode keeps it.
//! 2. An indexed key `base_N` (see [`split_index`]) whose base an `indexed` field's element type
//!    declares goes to element `N` of the first such field.
//! 3. Other indexed keys go to the first `indexed` field whose element has an
//!    `unknown_prefix` the base starts with, or else to the first whose element has a `rest`
//!    field and already has element `N` by rule 2 (`mesh_3` joins player 3).
//! 4. Everything else goes to the container's `rest` field, or is ignored without one.
//!
//! Encoding writes plain fields in declaration order, then the `rest` field, then each indexed
//! group element by element, so decode → encode → decode gives back an equal value.

mod group;
mod line;
mod nul;
mod pairs;
mod query;
mod sink;
mod table;
mod value;

pub use group::{split_index, FromRest, IndexedField, IndexedGroup, ToIndexedField, ToRest};
pub use line::KvLine;
pub use nul::{nul_pair_len, read_nul_pairs, write_nul_document, KvBlock, KvFormat, Nul};
pub use pairs::{pair_capacity, pairs, split_pairs, Pair, PairSpan, Pairs, DELIMITER};
pub use query::{
    decode_rows, encode_rows, escape, split_query_pairs, split_rows, unescape,
    write_query_document, QueryText, Spaced, FIELD_SEPARATOR, ROW_SEPARATOR,
};
pub use sink::{check_pair, pair_len, KvSink, LenCounter};
pub use table::{row_columns, RowTable};
pub use value::{display_value, parse_value, trim, FromValue, ToValue};

use crate::error::{Error, ErrorKind, Result};
use crate::text::TextEncoding;
use crate::writer::Writer;

/// A value decoded from key/value pairs; `#[derive(KeyValues)]` implements it.
pub trait FromKeyValues<'a>: Sized {
    /// The type's name, the first segment of an error's path.
    const NAME: &'static str;
    /// The text encoding [`from_bytes`](FromKeyValues::from_bytes) uses.
    const DEFAULT_ENCODING: TextEncoding;
    /// Whether pairs nobody declares are kept (the type has a `#[kv(rest)]` field).
    const KEEPS_UNKNOWN: bool;
    /// As an indexed element: the prefix of unknown bases that belong to it.
    const UNKNOWN_PREFIX: Option<&'static [u8]>;
    /// How [`from_bytes`](FromKeyValues::from_bytes) frames the pairs (`#[kv(format = "nul")]`).
    const FORMAT: KvFormat = KvFormat::Backslash;

    /// Whether `key` is one the type declares (a field's key or alias), used to route
    /// indexed keys to the right group.
    fn declares_key(key: &[u8]) -> bool;

    /// Decodes from pairs; `index` is the element number when the value is one element of an
    /// indexed group (its keys then arrive without the `_N` suffix).
    fn from_pairs(pairs: &[Pair<'a>], index: Option<usize>, encoding: TextEncoding)
        -> Result<Self>;

    /// Decodes `\key\value` text in the type's default encoding.
    fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        Self::from_bytes_with(bytes, Self::DEFAULT_ENCODING)
    }

    /// Decodes `\key\value` text in `encoding`. Errors carry the type name as the first
    /// segment of their path.
    fn from_bytes_with(bytes: &'a [u8], encoding: TextEncoding) -> Result<Self> {
        let pairs = match Self::FORMAT {
            KvFormat::Backslash => split_pairs(bytes),
            KvFormat::Nul => {
                let mut r = crate::Reader::new(bytes);
                read_nul_pairs(&mut r).and_then(|p| r.expect_end().map(|()| p))
            }
            KvFormat::ServerQuery => split_query_pairs(bytes, 0),
        }
        .map_err(|e| e.in_field(Self::NAME))?;
        Self::from_pairs(&pairs, None, encoding).map_err(|e| e.in_field(Self::NAME))
    }
}

/// A value encoded as key/value pairs; `#[derive(KeyValues)]` implements it.
pub trait ToKeyValues {
    /// The type's name, the first segment of an error's path.
    const NAME: &'static str;
    /// The text encoding [`to_vec`](ToKeyValues::to_vec) uses.
    const DEFAULT_ENCODING: TextEncoding;
    /// How [`to_vec`](ToKeyValues::to_vec) and the other whole-value encoders frame the pairs.
    const FORMAT: KvFormat = KvFormat::Backslash;

    /// The element number held in a `#[kv(index)]` field, if the type has one.
    fn index(&self) -> Option<usize>;

    /// Writes the pairs, each key suffixed with `_N` when `index` is `Some(N)`.
    fn write_pairs<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        index: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()>;

    /// Writes the whole value in [`FORMAT`](ToKeyValues::FORMAT): the pairs, and for
    /// [`KvFormat::Nul`] the empty key that ends them; [`KvFormat::ServerQuery`] separates
    /// them with spaces.
    fn write_document<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        encoding: TextEncoding,
    ) -> Result<()> {
        match Self::FORMAT {
            KvFormat::Backslash => self.write_pairs(sink, None, encoding),
            KvFormat::Nul => write_nul_document(self, &mut &mut *sink, encoding),
            KvFormat::ServerQuery => write_query_document(self, &mut &mut *sink, encoding),
        }
    }

    /// The exact encoded size in the default encoding.
    fn encoded_len(&self) -> Result<usize> {
        self.encoded_len_with(Self::DEFAULT_ENCODING)
    }

    /// The exact encoded size in `encoding`.
    fn encoded_len_with(&self, encoding: TextEncoding) -> Result<usize> {
        let mut counter = LenCounter::default();
        self.write_document(&mut counter, encoding)
            .map_err(|e| e.in_field(Self::NAME))?;
        Ok(counter.0)
    }

    /// Encodes into the start of `buf` in the default encoding; returns the bytes written.
    fn encode_into(&self, buf: &mut [u8]) -> Result<usize> {
        self.encode_into_with(buf, Self::DEFAULT_ENCODING)
    }

    /// Encodes into the start of `buf` in `encoding`; returns the bytes written.
    fn encode_into_with(&self, buf: &mut [u8], encoding: TextEncoding) -> Result<usize> {
        let mut w = Writer::new(buf);
        self.write_document(&mut w, encoding)
            .map_err(|e| e.in_field(Self::NAME))?;
        Ok(w.position())
    }

    /// Encodes into a new `Vec` in the default encoding.
    fn to_vec(&self) -> Result<Vec<u8>> {
        self.to_vec_with(Self::DEFAULT_ENCODING)
    }

    /// Encodes into a new `Vec` in `encoding`.
    fn to_vec_with(&self, encoding: TextEncoding) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_document(&mut out, encoding)
            .map_err(|e| e.in_field(Self::NAME))?;
        Ok(out)
    }
}

/// Decodes every pair of `bytes` as one `T` (a one-pair type such as a request enum):
/// `\info\\rules\` → two values. An error's path names the pair's position.
pub fn decode_each<'a, T: FromKeyValues<'a>>(
    bytes: &'a [u8],
    encoding: TextEncoding,
) -> Result<Vec<T>> {
    let pairs = split_pairs(bytes).map_err(|e| e.in_field(T::NAME))?;
    pairs
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            T::from_pairs(std::slice::from_ref(pair), None, encoding)
                .map_err(|e| e.at_index(i).in_field(T::NAME))
        })
        .collect()
}

/// Encodes `values` one after the other, the inverse of [`decode_each`].
pub fn encode_each<T: ToKeyValues>(values: &[T], encoding: TextEncoding) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, value) in values.iter().enumerate() {
        value
            .write_pairs(&mut out, None, encoding)
            .map_err(|e| e.at_index(i).in_field(T::NAME))?;
    }
    Ok(out)
}

/// The error for a required key that never arrived: at the end of the pairs searched.
#[cold]
pub fn missing_key(pairs: &[Pair<'_>]) -> Error {
    let end = pairs.last().map_or(0, Pair::end_offset);
    Error::new(ErrorKind::Invalid("required key is missing"), end)
}

/// The error for a one-pair type (an enum) given no pair or more than one.
#[cold]
pub fn not_one_pair(pairs: &[Pair<'_>]) -> Error {
    let at = pairs.get(1).map_or(0, |p| p.key_offset.saturating_sub(1));
    Error::new(
        ErrorKind::Invalid("expected exactly one key/value pair"),
        at,
    )
}

/// The error for a key no variant of a one-pair type declares.
#[cold]
pub fn unknown_key(pair: &Pair<'_>) -> Error {
    Error::new(ErrorKind::Invalid("unknown key"), pair.key_offset)
}
