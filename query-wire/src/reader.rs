//! A zero-copy cursor over a received datagram.

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Result};
use crate::int::{Endian, Number};
use crate::packed_int::PackedIntValue;
use crate::terminator::Terminator;
use crate::text::TextEncoding;
use crate::varint::{LengthPrefix, VarIntValue};

/// Reads fields from a borrowed byte slice, tracking the absolute offset for error messages.
///
/// Everything it returns borrows from the input: `bytes` and `str_utf8` never copy.
/// A [`sub`](Reader::sub)-reader bounds a nested read to a declared length and still reports
/// offsets relative to the start of the whole datagram.
///
/// ```
/// use query_wire::{Endian, Reader};
///
/// let mut r = Reader::new(&[0x00, 0x10, 3, b'a', b'b', b'c']);
/// assert_eq!(r.number::<u16>(Endian::Big)?, 16);
/// assert_eq!(r.prefixed_str::<u8>(Endian::Big, None)?, "abc");
/// assert!(r.is_empty());
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    /// The unread bytes.
    rest: &'a [u8],
    /// Absolute offset just past the last byte of `rest` in the outermost input. Reads take
    /// bytes from the front, so it stays put: the next byte's offset is `end - rest.len()`,
    /// and no read has a counter to update.
    end: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `data`.
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Reader {
            rest: data,
            end: data.len(),
        }
    }

    /// The absolute offset of the next byte to read.
    #[inline]
    pub fn offset(&self) -> usize {
        self.end - self.rest.len()
    }

    /// How many bytes are left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The unread bytes, without consuming them.
    #[inline]
    pub fn peek_rest(&self) -> &'a [u8] {
        self.rest
    }

    /// An error of `kind` at the current offset.
    #[cold]
    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.offset())
    }

    #[cold]
    fn unexpected_end(&self, need: usize) -> Error {
        self.error(ErrorKind::UnexpectedEnd {
            need,
            have: self.remaining(),
        })
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        match self.rest.split_at_checked(n) {
            Some((head, tail)) => {
                self.rest = tail;
                Ok(head)
            }
            None => Err(self.unexpected_end(n)),
        }
    }

    /// Takes every byte that is left.
    #[inline]
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }

    /// Takes the next `N` bytes as an array.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        match self.rest.split_first_chunk::<N>() {
            Some((head, tail)) => {
                self.rest = tail;
                Ok(*head)
            }
            None => Err(self.unexpected_end(N)),
        }
    }

    /// Takes the next `N` bytes as an array if there are that many; else nothing moves. The
    /// derived decoders read a run of fixed-width fields with it, one bounds check for the
    /// run, and read them one by one (for the error) only when it fails.
    #[inline(always)]
    pub fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>()?;
        self.rest = tail;
        Some(*head)
    }

    /// [`fixed`](Reader::fixed) without the copy: the next `N` bytes where they lie, for runs
    /// longer than a register, whose fields are each best loaded from the input.
    #[inline(always)]
    pub fn fixed_ref<const N: usize>(&mut self) -> Option<&'a [u8; N]> {
        let (head, tail) = self.rest.split_first_chunk::<N>()?;
        self.rest = tail;
        Some(head)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.bytes(n).map(|_| ())
    }

    /// Reads a fixed-width number in the given byte order.
    #[inline(always)]
    pub fn number<T: Number>(&mut self, endian: Endian) -> Result<T> {
        match T::split_from(self.rest, endian) {
            Some((value, tail)) => {
                self.rest = tail;
                Ok(value)
            }
            None => Err(self.unexpected_end(T::SIZE)),
        }
    }

    /// Reads one byte.
    #[inline(always)]
    pub fn u8(&mut self) -> Result<u8> {
        match self.rest.split_first() {
            Some((&b, tail)) => {
                self.rest = tail;
                Ok(b)
            }
            None => Err(self.unexpected_end(1)),
        }
    }

    /// Reads a `bool` byte: 0 is false, anything else true (servers are not strict about 1).
    #[inline]
    pub fn bool(&mut self) -> Result<bool> {
        self.u8().map(|b| b != 0)
    }

    /// Checks that the next bytes equal `expected`.
    #[inline]
    pub fn magic(&mut self, expected: &'static [u8]) -> Result<()> {
        let start = self.offset();
        let found = self.bytes(expected.len())?;
        if found == expected {
            Ok(())
        } else {
            Err(Error::new(
                ErrorKind::BadMagic {
                    expected,
                    found: found.to_vec(),
                },
                start,
            ))
        }
    }

    /// Reads a length or count prefix (an integer, [`VarInt`](crate::varint::VarInt) or
    /// [`Leb128`](crate::varint::Leb128)), checking it against `max` when one is declared.
    #[inline]
    pub fn length<P: LengthPrefix>(&mut self, endian: Endian, max: Option<usize>) -> Result<usize> {
        let start = self.offset();
        let raw = P::read_length(self, endian)?;
        let len = usize::try_from(raw).unwrap_or(usize::MAX);
        match max {
            Some(max) if len > max => Err(Error::new(ErrorKind::TooLong { len, max }, start)),
            _ => Ok(len),
        }
    }

    /// Reads a length prefix whose value also counts `includes` bytes besides the body that
    /// follows (the prefix itself, a header before it), and returns the body's length. A value
    /// below `includes` is [`ErrorKind::LengthBelowIncluded`] at the prefix.
    #[inline]
    pub fn length_including<P: LengthPrefix>(
        &mut self,
        endian: Endian,
        includes: usize,
    ) -> Result<usize> {
        let start = self.offset();
        let len = self.length::<P>(endian, None)?;
        match len.checked_sub(includes) {
            Some(body) => Ok(body),
            None => Err(Error::new(
                ErrorKind::LengthBelowIncluded { len, includes },
                start,
            )),
        }
    }

    /// Reads a variable-length integer (`u32`/`u64` LEB128, `i32` VarInt, `i64` VarLong).
    #[inline]
    pub fn varint<T: VarIntValue>(&mut self) -> Result<T> {
        T::read_varint(self)
    }

    /// Reads a Teeworlds packed integer (`i32`, or a `u32` that must not be negative).
    #[inline]
    pub fn packed_int<T: PackedIntValue>(&mut self) -> Result<T> {
        T::read_packed(self)
    }

    /// Reads a length prefix of type `P`, then that many bytes.
    #[inline]
    pub fn prefixed_bytes<P: LengthPrefix>(
        &mut self,
        endian: Endian,
        max: Option<usize>,
    ) -> Result<&'a [u8]> {
        let len = self.length::<P>(endian, max)?;
        self.bytes(len)
    }

    /// Reads `n` bytes of strict UTF-8, borrowed.
    #[inline]
    pub fn str_utf8(&mut self, n: usize) -> Result<&'a str> {
        let start = self.offset();
        let bytes = self.bytes(n)?;
        std::str::from_utf8(bytes).map_err(|e| {
            Error::new(
                ErrorKind::InvalidText { encoding: "UTF-8" },
                start + e.valid_up_to(),
            )
        })
    }

    /// Reads a length prefix of type `P`, then that many bytes of strict UTF-8, borrowed.
    #[inline]
    pub fn prefixed_str<P: LengthPrefix>(
        &mut self,
        endian: Endian,
        max: Option<usize>,
    ) -> Result<&'a str> {
        let len = self.length::<P>(endian, max)?;
        self.str_utf8(len)
    }

    /// Reads a length prefix of type `P`, then that many bytes of text in `encoding`.
    ///
    /// Borrows when the bytes are already the UTF-8 of the text (always for valid UTF-8, and
    /// for ASCII in the single-byte encodings).
    #[inline]
    pub fn prefixed_text<P: LengthPrefix>(
        &mut self,
        endian: Endian,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        let len = self.length::<P>(endian, max)?;
        self.text(len, encoding)
    }

    /// Reads `n` bytes of text in `encoding`; an error points at the first byte that is not
    /// valid in it.
    #[inline]
    pub fn text(&mut self, n: usize, encoding: TextEncoding) -> Result<Cow<'a, str>> {
        let start = self.offset();
        let bytes = self.bytes(n)?;
        encoding.decode_at(bytes, start)
    }

    /// Takes every byte that is left, failing with [`ErrorKind::TooLong`] when there are more
    /// than `max`.
    #[inline]
    pub fn rest_bytes(&mut self, max: Option<usize>) -> Result<&'a [u8]> {
        self.check_rest(max)?;
        Ok(self.rest())
    }

    /// Takes every byte that is left as strict UTF-8, at most `max` bytes of it.
    #[inline]
    pub fn rest_str(&mut self, max: Option<usize>) -> Result<&'a str> {
        self.check_rest(max)?;
        self.str_utf8(self.remaining())
    }

    /// Takes every byte that is left as text in `encoding`, at most `max` bytes of it.
    #[inline]
    pub fn rest_text(
        &mut self,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        self.check_rest(max)?;
        self.text(self.remaining(), encoding)
    }

    /// Takes the bytes before the next NUL and the NUL itself, returning the bytes. Without a
    /// NUL the input ends too soon ([`ErrorKind::UnexpectedEnd`] at its end, as for any cut
    /// datagram); more than `max` bytes before it is [`ErrorKind::TooLong`].
    #[inline]
    pub fn nul_bytes(&mut self, max: Option<usize>) -> Result<&'a [u8]> {
        let len = self.nul_position(max)?;
        let bytes = self.bytes(len)?;
        self.skip(1)?;
        Ok(bytes)
    }

    /// [`nul_bytes`](Reader::nul_bytes) as strict UTF-8.
    #[inline]
    pub fn nul_str(&mut self, max: Option<usize>) -> Result<&'a str> {
        let len = self.nul_position(max)?;
        let text = self.str_utf8(len)?;
        self.skip(1)?;
        Ok(text)
    }

    /// [`nul_bytes`](Reader::nul_bytes) as text in `encoding`.
    #[inline]
    pub fn nul_text(&mut self, max: Option<usize>, encoding: TextEncoding) -> Result<Cow<'a, str>> {
        let len = self.nul_position(max)?;
        let text = self.text(len, encoding)?;
        self.skip(1)?;
        Ok(text)
    }

    /// Takes the bytes before the next `end` (a byte, or a byte string: a
    /// [`Terminator`]) and the terminator itself, returning the bytes:
    /// [`nul_bytes`](Reader::nul_bytes) for another terminator (a space, a newline, a quote,
    /// `\r\n`).
    #[inline]
    pub fn until_bytes<E: Terminator>(&mut self, end: E, max: Option<usize>) -> Result<&'a [u8]> {
        let (len, skip) = self.until_position(end, max)?;
        let bytes = self.bytes(len)?;
        self.skip(skip)?;
        Ok(bytes)
    }

    /// [`until_bytes`](Reader::until_bytes) as strict UTF-8.
    #[inline]
    pub fn until_str<E: Terminator>(&mut self, end: E, max: Option<usize>) -> Result<&'a str> {
        let (len, skip) = self.until_position(end, max)?;
        let text = self.str_utf8(len)?;
        self.skip(skip)?;
        Ok(text)
    }

    /// [`until_bytes`](Reader::until_bytes) as text in `encoding`.
    #[inline]
    pub fn until_text<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        let (len, skip) = self.until_position(end, max)?;
        let text = self.text(len, encoding)?;
        self.skip(skip)?;
        Ok(text)
    }

    /// [`until_bytes`](Reader::until_bytes), except that the end of the input ends the
    /// bytes too: the last line of a reply that a server sends without its newline.
    #[inline]
    pub fn until_or_end_bytes<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
    ) -> Result<&'a [u8]> {
        let (len, skip) = self.until_or_end_position(end, max)?;
        let bytes = self.bytes(len)?;
        self.skip(skip)?;
        Ok(bytes)
    }

    /// [`until_or_end_bytes`](Reader::until_or_end_bytes) as strict UTF-8.
    #[inline]
    pub fn until_or_end_str<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
    ) -> Result<&'a str> {
        let (len, skip) = self.until_or_end_position(end, max)?;
        let text = self.str_utf8(len)?;
        self.skip(skip)?;
        Ok(text)
    }

    /// [`until_or_end_bytes`](Reader::until_or_end_bytes) as text in `encoding`.
    #[inline]
    pub fn until_or_end_text<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        let (len, skip) = self.until_or_end_position(end, max)?;
        let text = self.text(len, encoding)?;
        self.skip(skip)?;
        Ok(text)
    }

    /// Takes the bytes before the next `end` and leaves `end` for what follows: the run of
    /// `\key\value` pairs before a `\queryid\` marker. A missing terminator is
    /// [`ErrorKind::UnexpectedEnd`] at the end of the input.
    #[inline]
    pub fn before_bytes<E: Terminator>(&mut self, end: E, max: Option<usize>) -> Result<&'a [u8]> {
        let (len, _) = self.until_position(end, max)?;
        self.bytes(len)
    }

    /// [`before_bytes`](Reader::before_bytes) as strict UTF-8.
    #[inline]
    pub fn before_str<E: Terminator>(&mut self, end: E, max: Option<usize>) -> Result<&'a str> {
        let (len, _) = self.until_position(end, max)?;
        self.str_utf8(len)
    }

    /// [`before_bytes`](Reader::before_bytes) as text in `encoding`.
    #[inline]
    pub fn before_text<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        let (len, _) = self.until_position(end, max)?;
        self.text(len, encoding)
    }

    /// [`before_bytes`](Reader::before_bytes), except that the end of the input ends the
    /// bytes too.
    #[inline]
    pub fn before_or_end_bytes<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
    ) -> Result<&'a [u8]> {
        let (len, _) = self.until_or_end_position(end, max)?;
        self.bytes(len)
    }

    /// [`before_or_end_bytes`](Reader::before_or_end_bytes) as strict UTF-8.
    #[inline]
    pub fn before_or_end_str<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
    ) -> Result<&'a str> {
        let (len, _) = self.until_or_end_position(end, max)?;
        self.str_utf8(len)
    }

    /// [`before_or_end_bytes`](Reader::before_or_end_bytes) as text in `encoding`.
    #[inline]
    pub fn before_or_end_text<E: Terminator>(
        &mut self,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        let (len, _) = self.until_or_end_position(end, max)?;
        self.text(len, encoding)
    }

    /// Takes a `"`, the bytes up to the next `"`, and that `"`, returning the bytes between.
    /// A missing opening quote is [`ErrorKind::BadMagic`] at its offset; a missing closing
    /// one is [`ErrorKind::UnexpectedEnd`] at the end of the input.
    #[inline]
    pub fn quoted_bytes(&mut self, max: Option<usize>) -> Result<&'a [u8]> {
        self.open_quote()?;
        self.until_bytes(b'"', max)
    }

    /// [`quoted_bytes`](Reader::quoted_bytes) as strict UTF-8.
    #[inline]
    pub fn quoted_str(&mut self, max: Option<usize>) -> Result<&'a str> {
        self.open_quote()?;
        self.until_str(b'"', max)
    }

    /// [`quoted_bytes`](Reader::quoted_bytes) as text in `encoding`.
    #[inline]
    pub fn quoted_text(
        &mut self,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<Cow<'a, str>> {
        self.open_quote()?;
        self.until_text(b'"', max, encoding)
    }

    fn open_quote(&mut self) -> Result<()> {
        match self.rest.first() {
            Some(b'"') => self.skip(1),
            Some(&found) => Err(self.error(ErrorKind::BadMagic {
                expected: b"\"",
                found: vec![found],
            })),
            None => Err(self.unexpected_end(1)),
        }
    }

    /// How many bytes come before the next `end`, at most `max`, and how many bytes of
    /// terminator follow them.
    #[inline]
    fn until_position<E: Terminator>(&self, end: E, max: Option<usize>) -> Result<(usize, usize)> {
        let Some((len, skip)) = end.find_end(self.rest) else {
            let kind = ErrorKind::UnexpectedEnd {
                need: end.end_len(),
                have: 0,
            };
            return Err(Error::new(kind, self.end));
        };
        match max {
            Some(max) if len > max => Err(self.error(ErrorKind::TooLong { len, max })),
            _ => Ok((len, skip)),
        }
    }

    /// How many bytes come before the next `end` or the end of the input, at most `max`, and
    /// how many bytes of terminator follow them.
    #[inline]
    fn until_or_end_position<E: Terminator>(
        &self,
        end: E,
        max: Option<usize>,
    ) -> Result<(usize, usize)> {
        let (len, skip) = end.find_end(self.rest).unwrap_or((self.rest.len(), 0));
        match max {
            Some(max) if len > max => Err(self.error(ErrorKind::TooLong { len, max })),
            _ => Ok((len, skip)),
        }
    }

    /// How many bytes come before the next NUL, at most `max`. The NUL is found with `memchr`,
    /// many bytes at a time: names, keywords and rule values run to dozens of bytes.
    #[inline]
    fn nul_position(&self, max: Option<usize>) -> Result<usize> {
        let Some(len) = memchr::memchr(0, self.rest) else {
            let kind = ErrorKind::UnexpectedEnd { need: 1, have: 0 };
            return Err(Error::new(kind, self.end));
        };
        match max {
            Some(max) if len > max => Err(self.error(ErrorKind::TooLong { len, max })),
            _ => Ok(len),
        }
    }

    #[inline]
    fn check_rest(&self, max: Option<usize>) -> Result<()> {
        match max {
            Some(max) if self.remaining() > max => Err(self.error(ErrorKind::TooLong {
                len: self.remaining(),
                max,
            })),
            _ => Ok(()),
        }
    }

    /// Reads a UUID as two `u64` halves in `endian` order: big-endian gives the RFC 4122 byte
    /// order, little-endian byte-swaps each half (not the whole 16 bytes).
    #[inline]
    pub fn uuid(&mut self, endian: Endian) -> Result<uuid::Uuid> {
        let high = self.number::<u64>(endian)?;
        let low = self.number::<u64>(endian)?;
        Ok(uuid::Uuid::from_u64_pair(high, low))
    }

    /// Checks a repeat count that an expression computed (not read from a prefix) against the
    /// declared `max`, failing with [`ErrorKind::TooLong`] at the current offset.
    #[inline]
    pub fn check_count(&self, count: usize, max: Option<usize>) -> Result<usize> {
        match max {
            Some(max) if count > max => Err(self.error(ErrorKind::TooLong { len: count, max })),
            _ => Ok(count),
        }
    }

    /// Takes the next `n` bytes as a reader of their own, so a nested value cannot read past
    /// its declared length. Offsets stay absolute.
    #[inline]
    pub fn sub(&mut self, n: usize) -> Result<Reader<'a>> {
        let rest = self.bytes(n)?;
        Ok(Reader {
            rest,
            end: self.offset(),
        })
    }

    /// Fails with [`ErrorKind::TrailingBytes`] unless every byte has been read.
    #[inline]
    pub fn expect_end(&self) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.error(ErrorKind::TrailingBytes {
                count: self.remaining(),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_takes_all_or_nothing() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.fixed::<2>(), Some([1, 2]));
        assert_eq!(r.fixed::<2>(), None);
        assert_eq!((r.offset(), r.remaining()), (2, 1));
        assert_eq!(r.fixed::<1>(), Some([3]));
        assert!(r.is_empty());
        assert_eq!(r.offset(), 3);
    }

    #[test]
    fn fixed_ref_takes_all_or_nothing_and_borrows_the_input() {
        let data = [1, 2, 3];
        let mut r = Reader::new(&data);
        let head = r.fixed_ref::<2>().unwrap();
        assert!(std::ptr::eq(head.as_ptr(), data.as_ptr()));
        assert_eq!(r.fixed_ref::<2>(), None);
        assert_eq!(r.offset(), 2);
        assert_eq!(r.fixed_ref::<1>(), Some(&[3]));
        assert!(r.is_empty());
    }

    #[test]
    fn sub_reader_reports_absolute_offsets() {
        let data = [1, 2, 3, 4, 5, 6];
        let mut r = Reader::new(&data);
        r.skip(2).unwrap();
        let mut inner = r.sub(3).unwrap();
        assert_eq!(inner.offset(), 2);
        inner.skip(3).unwrap();
        let err = inner.u8().unwrap_err();
        assert_eq!(err.offset(), 5);
        assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 1, have: 0 });
        assert_eq!(r.u8().unwrap(), 6);
    }

    #[test]
    fn numbers_in_both_orders() {
        let data = [0x12, 0x34, 0x12, 0x34];
        let mut r = Reader::new(&data);
        assert_eq!(r.number::<u16>(Endian::Big).unwrap(), 0x1234);
        assert_eq!(r.number::<u16>(Endian::Little).unwrap(), 0x3412);
    }

    #[test]
    fn short_input_names_need_and_have() {
        let mut r = Reader::new(&[9, b'a', b'b']);
        let err = r.prefixed_str::<u8>(Endian::Big, None).unwrap_err();
        assert_eq!(err.offset(), 1);
        assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 9, have: 2 });
    }

    #[test]
    fn invalid_utf8_points_at_the_bad_byte() {
        let mut r = Reader::new(&[3, b'a', 0xff, b'b']);
        let err = r.prefixed_str::<u8>(Endian::Big, None).unwrap_err();
        assert_eq!(err.offset(), 2);
    }

    #[test]
    fn bad_magic_points_at_its_start() {
        let mut r = Reader::new(b"xxSAMQ");
        r.skip(2).unwrap();
        let err = r.magic(b"SAMP").unwrap_err();
        assert_eq!(err.offset(), 2);
        assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }));
    }

    #[test]
    fn text_in_a_code_page_borrows_ascii_and_converts_the_rest() {
        let mut r = Reader::new(&[2, b'o', b'k', 2, 0xc0, b'!']);
        let ascii = r
            .prefixed_text::<u8>(Endian::Big, None, TextEncoding::Windows1251)
            .unwrap();
        assert!(matches!(ascii, Cow::Borrowed("ok")));
        let cyrillic = r
            .prefixed_text::<u8>(Endian::Big, None, TextEncoding::Windows1251)
            .unwrap();
        assert_eq!(cyrillic, "А!");
    }

    #[test]
    fn rest_respects_its_maximum() {
        let mut r = Reader::new(b"abcd");
        r.skip(1).unwrap();
        let err = r.rest_bytes(Some(2)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 3, max: 2 });
        assert_eq!(err.offset(), 1);
        assert_eq!(r.rest_str(Some(3)).unwrap(), "bcd");
        assert!(r.is_empty());
        assert_eq!(r.rest_text(None, TextEncoding::Latin1).unwrap(), "");
    }

    #[test]
    fn uuid_halves_follow_the_byte_order() {
        let bytes: Vec<u8> = (0u8..16).collect();
        let big = Reader::new(&bytes).uuid(Endian::Big).unwrap();
        assert_eq!(big.as_bytes(), &bytes[..]);
        let little = Reader::new(&bytes).uuid(Endian::Little).unwrap();
        assert_eq!(
            little.as_bytes(),
            &[7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8]
        );
    }

    #[test]
    fn computed_count_is_checked_against_its_maximum() {
        let mut r = Reader::new(&[1, 2, 3]);
        r.skip(1).unwrap();
        assert_eq!(r.check_count(4, Some(4)).unwrap(), 4);
        let err = r.check_count(5, Some(4)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
        assert_eq!(err.offset(), 1);
    }

    #[test]
    fn declared_maximum_is_enforced_at_the_prefix() {
        let mut r = Reader::new(&[0, 5, 1, 2, 3, 4, 5]);
        let err = r.prefixed_bytes::<u16>(Endian::Big, Some(4)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
        assert_eq!(err.offset(), 0);
    }
}
