//! Numbers written as decimal text (`#[wire(dec(...))]`): the Quake 3 family writes a
//! player's score and ping as `12 48 "name"`.

use std::fmt::{self, Display, Write as _};
use std::str::FromStr;

use crate::{Error, ErrorKind, Result};

/// The most bytes a decimal integer takes: `-170141183460469231731687303715884105728`.
pub const MAX_DECIMAL: usize = 40;

/// A number formatted as decimal text on the stack, so that encoding allocates nothing.
#[derive(Debug)]
pub struct DecimalBuf {
    buf: [u8; MAX_DECIMAL],
    len: usize,
}

impl DecimalBuf {
    /// Formats `value`; a value whose text would exceed [`MAX_DECIMAL`] bytes is cut there
    /// (integers never are).
    #[inline]
    pub fn new<T: Display>(value: &T) -> Self {
        let mut out = DecimalBuf {
            buf: [0; MAX_DECIMAL],
            len: 0,
        };
        // Writing into the buffer only fails when it is full, which an integer never fills.
        let _ = write!(out, "{value}");
        out
    }

    /// The text's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for DecimalBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > MAX_DECIMAL {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// How many bytes `value` takes as decimal text.
#[inline]
pub fn decimal_len<T: Display>(value: &T) -> usize {
    DecimalBuf::new(value).len
}

/// Parses decimal text read at `offset`. Strict: no sign other than a leading `-` (and `+`
/// as Rust's `FromStr` allows), no spaces, no empty text; anything else is
/// [`ErrorKind::Invalid`] at `offset`.
#[inline]
pub fn parse_decimal<T: FromStr>(bytes: &[u8], offset: usize) -> Result<T> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| Error::new(ErrorKind::Invalid(NOT_DECIMAL), offset))
}

const NOT_DECIMAL: &str = "not a decimal number that fits the field";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_the_extremes() {
        assert_eq!(
            DecimalBuf::new(&i128::MIN).as_bytes(),
            i128::MIN.to_string().as_bytes()
        );
        assert_eq!(decimal_len(&-12i32), 3);
        assert_eq!(parse_decimal::<i32>(b"-12", 0).unwrap(), -12);
        let err = parse_decimal::<u8>(b"256", 7).unwrap_err();
        assert_eq!(err.offset(), 7);
        assert!(parse_decimal::<u8>(b"", 0).is_err());
        assert!(parse_decimal::<u8>(b" 1", 0).is_err());
    }
}
