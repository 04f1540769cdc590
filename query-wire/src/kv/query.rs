//! `key=value` fields separated by spaces, rows separated by `|`, values escaped: the text of
//! TeamSpeak 3's ServerQuery (`#[kv(format = "serverquery")]`).
//!
//! A field is `key=value`, or a key alone for an empty value (`virtualserver_ip`). Values
//! escape what would end them: `\s` space, `\p` pipe, `\/` slash, `\\` backslash, `\n`, `\r`,
//! `\t`, `\v`, `\f`, `\a`, `\b`. [`QueryText`] undoes the escapes on decode and writes them on
//! encode; the pairs themselves keep the escaped bytes, so numbers read as they are.
//!
//! ```
//! use query_wire::kv::{decode_rows, encode_rows, FromKeyValues, QueryText, ToKeyValues};
//! use query_wire::KeyValues;
//!
//! #[derive(Debug, PartialEq, KeyValues)]
//! #[kv(format = "serverquery")]
//! struct Client<'a> {
//!     clid: u32,
//!     client_nickname: QueryText<'a>,
//!     #[kv(rest)]
//!     extra: Vec<(QueryText<'a>, QueryText<'a>)>,
//! }
//!
//! let line = b"clid=2 client_nickname=Waking\\sUp|clid=43 client_nickname=a\\/b client_away";
//! let clients: Vec<Client> = decode_rows(line)?;
//! assert_eq!(clients[0].client_nickname.as_str(), "Waking Up");
//! assert_eq!(clients[1].client_nickname.as_str(), "a/b");
//! assert_eq!(clients[1].extra[0].0.as_str(), "client_away");
//! assert_eq!(encode_rows(&clients)?, line);
//! # Ok::<(), query_wire::Error>(())
//! ```

use std::borrow::Cow;
use std::fmt;

use super::pairs::Pair;
use super::sink::{IndexDigits, KvSink};
use super::value::{FromValue, ToValue};
use super::{FromKeyValues, ToKeyValues};
use crate::error::{Error, ErrorKind, Result};
use crate::text::TextEncoding;

/// The byte between fields.
pub const FIELD_SEPARATOR: u8 = b' ';
/// The byte between rows.
pub const ROW_SEPARATOR: u8 = b'|';

/// The escape of each byte that has one, as ServerQuery writes them.
const ESCAPES: [(u8, u8); 11] = [
    (b'\\', b'\\'),
    (b'/', b'/'),
    (b' ', b's'),
    (b'|', b'p'),
    (0x07, b'a'),
    (0x08, b'b'),
    (0x0c, b'f'),
    (b'\n', b'n'),
    (b'\r', b'r'),
    (b'\t', b't'),
    (0x0b, b'v'),
];

/// Splits one row (no `|`) into its fields; offsets are absolute, the row's first byte at
/// `origin`. Runs of spaces separate as one (lenient: servers send single spaces); a field
/// with an empty key (`=x`) is an error at its first byte.
pub fn split_query_pairs(row: &[u8], origin: usize) -> Result<Vec<Pair<'_>>> {
    let mut out = Vec::with_capacity(row.iter().filter(|&&b| b == FIELD_SEPARATOR).count() + 1);
    let mut start = 0;
    for token in row.split(|&b| b == FIELD_SEPARATOR) {
        let at = origin + start;
        start += token.len() + 1;
        if token.is_empty() {
            continue;
        }
        let (key, value, value_offset) = match token.iter().position(|&b| b == b'=') {
            Some(0) => {
                return Err(Error::new(ErrorKind::Invalid("a field with no key"), at));
            }
            Some(eq) => (&token[..eq], &token[eq + 1..], at + eq + 1),
            None => (token, &token[token.len()..], at + token.len()),
        };
        out.push(Pair {
            key,
            value,
            key_offset: at,
            value_offset,
        });
    }
    Ok(out)
}

/// The rows of a line (no line ending) and the offset of each.
pub fn split_rows(line: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut offset = 0;
    line.split(|&b| b == ROW_SEPARATOR).map(move |row| {
        let at = offset;
        offset += row.len() + 1;
        (at, row)
    })
}

/// Decodes every row of `line` as a `T`; an error's path names the row.
pub fn decode_rows<'a, T: FromKeyValues<'a>>(line: &'a [u8]) -> Result<Vec<T>> {
    split_rows(line)
        .map(|(at, row)| {
            let pairs = split_query_pairs(row, at)?;
            T::from_pairs(&pairs, None, T::DEFAULT_ENCODING)
        })
        .enumerate()
        .map(|(i, row)| row.map_err(|e| e.at_index(i).in_field(T::NAME)))
        .collect()
}

/// Encodes `rows` as one line, separated by `|` (no line ending).
pub fn encode_rows<T: ToKeyValues>(rows: &[T]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(ROW_SEPARATOR);
        }
        write_query_document(row, &mut out, T::DEFAULT_ENCODING)
            .map_err(|e| e.at_index(i).in_field(T::NAME))?;
    }
    Ok(out)
}

/// A [`KvSink`] adapter that writes `key=value` fields separated by spaces (a key alone for an
/// empty value) to the sink it wraps. Values must come escaped (as [`QueryText`] writes
/// them): a key or value holding a space, `|`, `\n` or `\r`, or a key holding `=`, or an empty
/// key, is refused with an error at the offending byte and nothing is written.
#[derive(Debug)]
pub struct Spaced<S> {
    sink: S,
    first: bool,
}

impl<S: KvSink> Spaced<S> {
    /// Fields written to `sink`, the first without a space before it.
    pub fn new(sink: S) -> Self {
        Spaced { sink, first: true }
    }
}

fn ends_a_field(b: u8) -> bool {
    matches!(b, FIELD_SEPARATOR | ROW_SEPARATOR | b'\n' | b'\r')
}

impl<S: KvSink> KvSink for Spaced<S> {
    fn position(&self) -> usize {
        self.sink.position()
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.sink.put_raw(bytes)
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        let at = self.sink.position() + usize::from(!self.first);
        if key.is_empty() {
            return Err(Error::new(ErrorKind::Invalid("a field with no key"), at));
        }
        if let Some(i) = key.iter().position(|&b| ends_a_field(b) || b == b'=') {
            return Err(Error::new(
                ErrorKind::Invalid("a key cannot contain a space, `|`, `=` or a line end"),
                at + i,
            ));
        }
        let digits = index.map(IndexDigits::new);
        let key_len = key.len() + digits.as_ref().map_or(0, |d| 1 + d.as_bytes().len());
        if let Some(i) = value.iter().position(|&b| ends_a_field(b)) {
            return Err(Error::new(
                ErrorKind::Invalid("a value must be escaped: it holds a space, `|` or a line end"),
                at + key_len + 1 + i,
            ));
        }
        if !self.first {
            self.sink.put_raw(&[FIELD_SEPARATOR])?;
        }
        self.first = false;
        self.sink.put_raw(key)?;
        if let Some(digits) = &digits {
            self.sink.put_raw(b"_")?;
            self.sink.put_raw(digits.as_bytes())?;
        }
        if !value.is_empty() {
            self.sink.put_raw(b"=")?;
            self.sink.put_raw(value)?;
        }
        Ok(())
    }
}

/// Writes `value`'s fields as one ServerQuery row.
pub fn write_query_document<T: ToKeyValues + ?Sized, S: KvSink>(
    value: &T,
    sink: &mut S,
    encoding: TextEncoding,
) -> Result<()> {
    value.write_pairs(&mut Spaced::new(&mut *sink), None, encoding)
}

/// Undoes ServerQuery's escapes in `raw`, whose first byte is at `offset`: borrowed when there
/// are none. Text that is not UTF-8, a backslash at the end and an unknown escape are errors
/// at their byte: ServerQuery writes neither.
pub fn unescape(raw: &[u8], offset: usize) -> Result<Cow<'_, str>> {
    let decoded: Cow<'_, [u8]> = if raw.contains(&b'\\') {
        let mut out = Vec::with_capacity(raw.len());
        let mut bytes = raw.iter().enumerate();
        while let Some((i, &b)) = bytes.next() {
            if b != b'\\' {
                out.push(b);
                continue;
            }
            let Some((_, &code)) = bytes.next() else {
                return Err(Error::new(
                    ErrorKind::Invalid("a backslash that escapes nothing"),
                    offset + i,
                ));
            };
            match ESCAPES.iter().find(|(_, c)| *c == code) {
                Some((plain, _)) => out.push(*plain),
                None => {
                    return Err(Error::new(
                        ErrorKind::Invalid("an unknown escape"),
                        offset + i,
                    ))
                }
            }
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(raw)
    };
    match decoded {
        Cow::Borrowed(bytes) => TextEncoding::Utf8.decode_at(bytes, offset),
        Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(|e| {
            Error::new(
                ErrorKind::Invalid("text that is not UTF-8"),
                offset + e.utf8_error().valid_up_to(),
            )
        }),
    }
}

/// `text` with ServerQuery's escapes written: borrowed when nothing needs one.
pub fn escape(text: &str) -> Cow<'_, str> {
    let needs = |b: u8| ESCAPES.iter().any(|(plain, _)| *plain == b);
    if !text.bytes().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match u8::try_from(c)
            .ok()
            .and_then(|b| ESCAPES.iter().find(|(plain, _)| *plain == b))
        {
            Some((_, code)) => {
                out.push('\\');
                out.push(char::from(*code));
            }
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// ServerQuery text: read with its escapes undone, written with them (UTF-8 always).
#[derive(Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct QueryText<'a>(pub Cow<'a, str>);

impl<'a> QueryText<'a> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, owned.
    pub fn into_owned(self) -> QueryText<'static> {
        QueryText(Cow::Owned(self.0.into_owned()))
    }
}

impl<'a> From<&'a str> for QueryText<'a> {
    fn from(text: &'a str) -> Self {
        QueryText(Cow::Borrowed(text))
    }
}

impl From<String> for QueryText<'static> {
    fn from(text: String) -> Self {
        QueryText(Cow::Owned(text))
    }
}

impl std::ops::Deref for QueryText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for QueryText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for QueryText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for QueryText<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'a> FromValue<'a> for QueryText<'a> {
    fn from_value(raw: &'a [u8], offset: usize, _: TextEncoding) -> Result<Self> {
        unescape(raw, offset).map(QueryText)
    }
}

impl ToValue for QueryText<'_> {
    fn to_value<R>(
        &self,
        _: TextEncoding,
        _: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        emit(escape(&self.0).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_escape_round_trips() {
        let plain = "a b|c/d\\e\nf\rg\th\x0bi\x0cj\x07k\x08";
        let escaped = escape(plain);
        assert_eq!(escaped, "a\\sb\\pc\\/d\\\\e\\nf\\rg\\th\\vi\\fj\\ak\\b");
        assert_eq!(unescape(escaped.as_bytes(), 0).unwrap(), plain);
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert!(matches!(unescape(b"plain", 0).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn bad_escapes_are_errors_at_their_byte() {
        let err = unescape(b"ab\\q", 10).unwrap_err();
        assert_eq!(err.offset(), 12);
        assert_eq!(err.kind(), &ErrorKind::Invalid("an unknown escape"));
        let err = unescape(b"ab\\", 0).unwrap_err();
        assert_eq!(err.offset(), 2);
        let err = unescape(b"a\\s\xff", 5).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::Invalid("text that is not UTF-8"));
    }

    #[test]
    fn fields_split_with_absolute_offsets_and_bare_keys() {
        let pairs = split_query_pairs(b"a=1 bare  c=x=y", 100).unwrap();
        let got: Vec<_> = pairs
            .iter()
            .map(|p| (p.key, p.value, p.key_offset, p.value_offset))
            .collect();
        assert_eq!(
            got,
            [
                (&b"a"[..], &b"1"[..], 100, 102),
                (b"bare", b"", 104, 108),
                (b"c", b"x=y", 110, 112)
            ]
        );
        let err = split_query_pairs(b"a=1 =2", 0).unwrap_err();
        assert_eq!(err.offset(), 4);
    }

    #[test]
    fn the_sink_refuses_unescaped_values() {
        let mut out = Vec::new();
        let mut sink = Spaced::new(&mut out);
        sink.put_pair(b"a", None, b"1").unwrap();
        sink.put_pair(b"empty", None, b"").unwrap();
        let err = sink.put_pair(b"b", None, b"x y").unwrap_err();
        assert_eq!(err.offset(), 13);
        assert!(sink.put_pair(b"k=", None, b"v").is_err());
        assert!(sink.put_pair(b"", None, b"v").is_err());
        sink.put_pair(b"n", Some(3), b"v").unwrap();
        assert_eq!(out, b"a=1 empty n_3=v");
    }
}
