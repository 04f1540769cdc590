//! Writing `\key\value` pairs: into a caller's buffer, onto a `Vec`, or only counting bytes.
//!
//! The format has no escape: a key or value that contains the delimiter cannot be written, so
//! every sink refuses it with an error at the offending byte instead of producing text that
//! would decode differently.

use crate::error::{Error, ErrorKind, Result};
use crate::writer::Writer;

use super::pairs::DELIMITER;

/// Where encoded pairs go. Implemented for [`Writer`] (a caller's `&mut [u8]`), `Vec<u8>` and
/// [`LenCounter`].
pub trait KvSink {
    /// How many bytes have been written so far (errors report offsets from it).
    fn position(&self) -> usize;

    /// Writes `\key\value`, or `\key_N\value` when `index` is `Some(N)`.
    ///
    /// Fails without writing anything when the key or value contains a backslash.
    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()>;

    /// Writes bytes as they are: the framing of other formats ([`Nul`](super::Nul), the
    /// column tables) goes through it.
    fn put_raw(&mut self, bytes: &[u8]) -> Result<()>;
}

/// The encoded size of one pair, `\key\value` or `\key_N\value`.
pub fn pair_len(key: &[u8], index: Option<usize>, value: &[u8]) -> usize {
    2 + key.len() + index.map_or(0, |n| 1 + IndexDigits::new(n).as_bytes().len()) + value.len()
}

/// Checks that neither half of a pair contains the delimiter; `at` is where the pair would start.
pub fn check_pair(key: &[u8], index: Option<usize>, value: &[u8], at: usize) -> Result<()> {
    if let Some(i) = key.iter().position(|&b| b == DELIMITER) {
        return Err(Error::new(
            ErrorKind::Invalid("a key cannot contain a backslash"),
            at + 1 + i,
        ));
    }
    if let Some(i) = value.iter().position(|&b| b == DELIMITER) {
        let value_at = pair_len(key, index, b"") + i;
        return Err(Error::new(
            ErrorKind::Invalid("a value cannot contain a backslash"),
            at + value_at,
        ));
    }
    Ok(())
}

/// The decimal digits of an index, without allocating.
pub(crate) struct IndexDigits {
    buf: [u8; 20],
    start: usize,
}

impl IndexDigits {
    pub(crate) fn new(mut n: usize) -> Self {
        let mut buf = [0u8; 20];
        let mut start = buf.len();
        loop {
            start -= 1;
            buf[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        IndexDigits { buf, start }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

/// Calls `put` with each piece of the encoded pair, in order.
fn pieces(
    key: &[u8],
    index: Option<usize>,
    value: &[u8],
    mut put: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    put(&[DELIMITER])?;
    put(key)?;
    if let Some(n) = index {
        put(b"_")?;
        put(IndexDigits::new(n).as_bytes())?;
    }
    put(&[DELIMITER])?;
    put(value)
}

impl KvSink for Writer<'_> {
    fn position(&self) -> usize {
        Writer::position(self)
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        let at = Writer::position(self);
        check_pair(key, index, value, at)?;
        pieces(key, index, value, |bytes| self.put_bytes(bytes))
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.put_bytes(bytes)
    }
}

impl KvSink for Vec<u8> {
    fn position(&self) -> usize {
        self.len()
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        check_pair(key, index, value, self.len())?;
        self.reserve(pair_len(key, index, value));
        pieces(key, index, value, |bytes| {
            self.extend_from_slice(bytes);
            Ok(())
        })
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// A sink that only counts: the exact size an encoding will take, with the same checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LenCounter(pub usize);

impl KvSink for LenCounter {
    fn position(&self) -> usize {
        self.0
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        check_pair(key, index, value, self.0)?;
        self.0 += pair_len(key, index, value);
        Ok(())
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.0 += bytes.len();
        Ok(())
    }
}

impl<S: KvSink + ?Sized> KvSink for &mut S {
    fn position(&self) -> usize {
        (**self).position()
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        (**self).put_pair(key, index, value)
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        (**self).put_raw(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec_writer_and_counter_agree() {
        let mut out = Vec::new();
        let mut count = LenCounter::default();
        for sink in [&mut out as &mut dyn KvSink, &mut count] {
            sink.put_pair(b"hostname", None, b"A B").unwrap();
            sink.put_pair(b"ping", Some(12), b" 52").unwrap();
            sink.put_pair(b"final", None, b"").unwrap();
        }
        assert_eq!(out, b"\\hostname\\A B\\ping_12\\ 52\\final\\");
        assert_eq!(count.0, out.len());

        let mut buf = [0u8; 64];
        let mut w = Writer::new(&mut buf);
        w.put_pair(b"ping", Some(0), b"7").unwrap();
        assert_eq!(w.written(), b"\\ping_0\\7");
    }

    #[test]
    fn backslash_is_refused_with_its_offset() {
        let mut out = b"\\a\\b".to_vec();
        let err = out.put_pair(b"ke\\y", None, b"v").unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::Invalid("a key cannot contain a backslash")
        );
        assert_eq!(err.offset(), 4 + 1 + 2);
        let err = out.put_pair(b"k", Some(3), b"va\\l").unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::Invalid("a value cannot contain a backslash")
        );
        // \k_3\ is 5 bytes, then "va".
        assert_eq!(err.offset(), 4 + 5 + 2);
        assert_eq!(out, b"\\a\\b", "nothing written on error");
    }

    #[test]
    fn small_buffer_is_an_error_not_a_panic() {
        let mut buf = [0u8; 5];
        let mut w = Writer::new(&mut buf);
        let err = w.put_pair(b"key", None, b"value").unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::BufferTooSmall { need: 5, have: 0 });
        assert_eq!(err.offset(), 5);
    }

    #[test]
    fn index_digits() {
        assert_eq!(IndexDigits::new(0).as_bytes(), b"0");
        assert_eq!(IndexDigits::new(1439).as_bytes(), b"1439");
        assert_eq!(
            IndexDigits::new(usize::MAX).as_bytes(),
            usize::MAX.to_string().as_bytes()
        );
        assert_eq!(pair_len(b"player", Some(10), b"x"), "\\player_10\\x".len());
    }
}
