//! Typed values of key/value text: numbers, bool-ish flags and strings in a chosen encoding.
//!
//! Servers pad numbers (`\ping_2\ 152`) and spell booleans as `0`/`1` or `True`/`False`, so
//! decoding is forgiving about those and strict about everything else: a value that is not
//! what its field declares is an error at the offending byte.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};
use crate::text::{Text, TextEncoding};

/// A value decoded from the raw bytes between two delimiters.
pub trait FromValue<'a>: Sized {
    /// Decodes `raw`, whose first byte is at absolute `offset`, as text in `encoding` where
    /// the type is text.
    fn from_value(raw: &'a [u8], offset: usize, encoding: TextEncoding) -> Result<Self>;
}

/// A value encoded as the bytes between two delimiters.
///
/// The bytes are handed to `emit` rather than returned, so numbers are formatted on the stack.
pub trait ToValue {
    /// Encodes the value in `encoding` and passes the bytes to `emit`; `offset` is where the
    /// pair will start, for errors.
    fn to_value<R>(
        &self,
        encoding: TextEncoding,
        offset: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R>;
}

/// `raw` without ASCII white space on either side, and the offset of what is left.
pub fn trim(raw: &[u8], offset: usize) -> (&[u8], usize) {
    let start = raw
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(raw.len());
    let end = raw
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    (&raw[start..end], offset + start)
}

/// Decodes `raw` in `encoding`, trims it and parses it with [`FromStr`]; what
/// `#[kv(parse)]` fields use.
pub fn parse_value<T: FromStr>(raw: &[u8], offset: usize, encoding: TextEncoding) -> Result<T> {
    let (trimmed, at) = trim(raw, offset);
    let text = encoding.decode_at(trimmed, at)?;
    text.parse()
        .map_err(|_| Error::new(ErrorKind::Invalid("value does not parse as its type"), at))
}

/// Formats `value` with [`Display`](fmt::Display), encodes it in `encoding` and passes the
/// bytes to `emit`; what `#[kv(parse)]` fields use.
pub fn display_value<T: fmt::Display + ?Sized, R>(
    value: &T,
    encoding: TextEncoding,
    offset: usize,
    emit: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    let mut stack = StackText::default();
    if fmt::write(&mut stack, format_args!("{value}")).is_ok() {
        let text = stack.as_str();
        let bytes = encoding.encode_at(text, offset)?;
        return emit(&bytes);
    }
    // Longer than the stack buffer (a float's full expansion): format on the heap.
    let text = value.to_string();
    let bytes = encoding.encode_at(&text, offset)?;
    emit(&bytes)
}

/// A small formatting buffer on the stack; writing more than it holds is an `fmt::Error`.
struct StackText {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackText {
    fn default() -> Self {
        StackText {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever copied in, so the bytes are valid UTF-8.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

macro_rules! integer_value {
    ($($t:ty),*) => {$(
        impl<'a> FromValue<'a> for $t {
            /// Surrounding ASCII white space is ignored: servers pad numbers.
            fn from_value(raw: &'a [u8], offset: usize, _: TextEncoding) -> Result<Self> {
                let (digits, at) = trim(raw, offset);
                // Digits are ASCII in every supported encoding, so no decoding is needed.
                let text = std::str::from_utf8(digits)
                    .map_err(|e| Error::new(ErrorKind::Invalid("expected an integer"), at + e.valid_up_to()))?;
                text.parse::<$t>().map_err(|e| {
                    use std::num::IntErrorKind;
                    let reason = match e.kind() {
                        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
                            concat!("integer out of range for ", stringify!($t))
                        }
                        _ => "expected an integer",
                    };
                    Error::new(ErrorKind::Invalid(reason), at)
                })
            }
        }

        impl ToValue for $t {
            fn to_value<R>(
                &self,
                encoding: TextEncoding,
                offset: usize,
                emit: impl FnOnce(&[u8]) -> Result<R>,
            ) -> Result<R> {
                display_value(self, encoding, offset, emit)
            }
        }
    )*};
}

integer_value!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

macro_rules! float_value {
    ($($t:ty),*) => {$(
        impl<'a> FromValue<'a> for $t {
            /// Surrounding ASCII white space is ignored.
            fn from_value(raw: &'a [u8], offset: usize, _: TextEncoding) -> Result<Self> {
                let (digits, at) = trim(raw, offset);
                std::str::from_utf8(digits)
                    .ok()
                    .and_then(|text| text.parse::<$t>().ok())
                    .ok_or_else(|| Error::new(ErrorKind::Invalid("expected a number"), at))
            }
        }

        impl ToValue for $t {
            fn to_value<R>(
                &self,
                encoding: TextEncoding,
                offset: usize,
                emit: impl FnOnce(&[u8]) -> Result<R>,
            ) -> Result<R> {
                display_value(self, encoding, offset, emit)
            }
        }
    )*};
}

float_value!(f32, f64);

impl<'a> FromValue<'a> for bool {
    /// `1`/`0` and `true`/`false` in any case, white space ignored (`\password\False`,
    /// `\password\0`).
    fn from_value(raw: &'a [u8], offset: usize, _: TextEncoding) -> Result<Self> {
        let (word, at) = trim(raw, offset);
        if word == b"1" || word.eq_ignore_ascii_case(b"true") {
            Ok(true)
        } else if word == b"0" || word.eq_ignore_ascii_case(b"false") {
            Ok(false)
        } else {
            Err(Error::new(
                ErrorKind::Invalid("expected 0, 1, true or false"),
                at,
            ))
        }
    }
}

impl ToValue for bool {
    /// `1` or `0`, the spelling every client reads.
    fn to_value<R>(
        &self,
        _: TextEncoding,
        _: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        emit(if *self { b"1" } else { b"0" })
    }
}

impl<'a> FromValue<'a> for Cow<'a, str> {
    /// Borrowed when the bytes are the same in UTF-8 (plain ASCII), owned otherwise.
    fn from_value(raw: &'a [u8], offset: usize, encoding: TextEncoding) -> Result<Self> {
        encoding.decode_at(raw, offset)
    }
}

impl ToValue for Cow<'_, str> {
    fn to_value<R>(
        &self,
        encoding: TextEncoding,
        offset: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        str_value(self, encoding, offset, emit)
    }
}

impl<'a> FromValue<'a> for String {
    fn from_value(raw: &'a [u8], offset: usize, encoding: TextEncoding) -> Result<Self> {
        encoding.decode_at(raw, offset).map(Cow::into_owned)
    }
}

impl ToValue for String {
    fn to_value<R>(
        &self,
        encoding: TextEncoding,
        offset: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        str_value(self, encoding, offset, emit)
    }
}

impl ToValue for str {
    fn to_value<R>(
        &self,
        encoding: TextEncoding,
        offset: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        str_value(self, encoding, offset, emit)
    }
}

/// Text as its bytes in `encoding`: borrowed when they are the same (UTF-8, or ASCII, which
/// every supported single-byte encoding keeps as it is: one pass over the text), else encoded
/// on the stack when short (a value within 255 bytes, as responders cut them), so that writing
/// a reply allocates nothing; longer text is encoded on the heap.
fn str_value<R>(
    text: &str,
    encoding: TextEncoding,
    offset: usize,
    emit: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    const STACK: usize = 256;
    if encoding == TextEncoding::Utf8 || text.is_ascii() {
        return emit(text.as_bytes());
    }
    let len = encoding.encoded_len(text);
    if len <= STACK {
        let mut buf = [0u8; STACK];
        if encoding.encode_into(text, &mut buf[..len]).is_ok() {
            return emit(&buf[..len]);
        }
    }
    let bytes = encoding.encode_at(text, offset)?;
    emit(&bytes)
}

impl<'a> FromValue<'a> for Text<'a> {
    /// The raw bytes, whatever the encoding: the caller decodes them later.
    fn from_value(raw: &'a [u8], _: usize, _: TextEncoding) -> Result<Self> {
        Ok(Text::from_bytes(raw))
    }
}

impl ToValue for Text<'_> {
    fn to_value<R>(
        &self,
        _: TextEncoding,
        _: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        emit(self.as_bytes())
    }
}

impl<'a> FromValue<'a> for &'a [u8] {
    /// The raw bytes, borrowed.
    fn from_value(raw: &'a [u8], _: usize, _: TextEncoding) -> Result<Self> {
        Ok(raw)
    }
}

impl ToValue for &[u8] {
    fn to_value<R>(
        &self,
        _: TextEncoding,
        _: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        emit(self)
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value<R>(
        &self,
        encoding: TextEncoding,
        offset: usize,
        emit: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        (**self).to_value(encoding, offset, emit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const W1252: TextEncoding = TextEncoding::Windows1252;

    fn encoded<T: ToValue>(value: T) -> Vec<u8> {
        value.to_value(W1252, 0, |b| Ok(b.to_vec())).unwrap()
    }

    #[test]
    fn integers_ignore_padding() {
        assert_eq!(u32::from_value(b" 152", 0, W1252).unwrap(), 152);
        assert_eq!(i32::from_value(b"\t-7 ", 0, W1252).unwrap(), -7);
        assert_eq!(encoded(1439u32), b"1439");
        assert_eq!(encoded(-7i32), b"-7");
    }

    #[test]
    fn bad_integers_point_past_the_padding() {
        let err = u16::from_value(b"  12a", 30, W1252).unwrap_err();
        assert_eq!(err.offset(), 32);
        assert_eq!(err.kind(), &ErrorKind::Invalid("expected an integer"));
        let err = u8::from_value(b"300", 0, W1252).unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::Invalid("integer out of range for u8")
        );
        assert!(u32::from_value(b"", 0, W1252).is_err());
        assert!(u32::from_value(b"1\xb1", 0, W1252).is_err());
    }

    #[test]
    fn bool_spellings() {
        for (raw, want) in [
            (&b"1"[..], true),
            (b"True", true),
            (b"TRUE ", true),
            (b"0", false),
            (b"False", false),
            (b"false", false),
        ] {
            assert_eq!(bool::from_value(raw, 0, W1252).unwrap(), want, "{raw:?}");
        }
        assert!(bool::from_value(b"yes please", 0, W1252).is_err());
        assert_eq!(encoded(true), b"1");
    }

    #[test]
    fn text_in_windows_1252() {
        let name = Cow::<str>::from_value(b"Resident\xa0Evil\xb1", 0, W1252).unwrap();
        assert_eq!(name, "Resident\u{a0}Evil\u{b1}");
        assert_eq!(encoded(name), b"Resident\xa0Evil\xb1");
        assert!(matches!(
            Cow::<str>::from_value(b"plain", 0, W1252).unwrap(),
            Cow::Borrowed("plain")
        ));
    }

    #[test]
    fn unmappable_text_is_an_error_at_the_pair() {
        let err = "Ж".to_value(W1252, 17, |_| Ok(())).unwrap_err();
        assert_eq!(err.offset(), 17);
        assert!(matches!(err.kind(), ErrorKind::InvalidText { .. }));
    }

    #[test]
    fn floats_round_trip_even_when_long() {
        assert_eq!(f32::from_value(b" 3.5", 0, W1252).unwrap(), 3.5);
        let big = f64::MAX;
        let bytes = encoded(big);
        assert!(bytes.len() > 64);
        assert_eq!(f64::from_value(&bytes, 0, W1252).unwrap(), big);
    }

    #[test]
    fn parse_and_display_adapters() {
        let v: std::net::Ipv4Addr = parse_value(b" 10.0.0.1", 0, W1252).unwrap();
        assert_eq!(v, std::net::Ipv4Addr::new(10, 0, 0, 1));
        let err = parse_value::<std::net::Ipv4Addr>(b"10.0", 5, W1252).unwrap_err();
        assert_eq!(err.offset(), 5);
        let out = display_value(&v, W1252, 0, |b| Ok(b.to_vec())).unwrap();
        assert_eq!(out, b"10.0.0.1");
    }
}
