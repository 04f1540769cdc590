//! Encoding into a caller's buffer, without allocating.

use std::marker::PhantomData;

use crate::error::{Error, ErrorKind, Result};
use crate::int::{Endian, Integer, Number};
use crate::packed_int::PackedIntValue;
use crate::terminator::{early_end, Terminator};
use crate::text::TextEncoding;
use crate::varint::{LengthPrefix, VarIntValue};

/// Writes fields into a caller-provided `&mut [u8]`.
///
/// Length prefixes whose value is only known after the body is written are reserved with
/// [`begin_length`](Writer::begin_length) and filled in by [`end_length`](Writer::end_length),
/// so a body is encoded in one pass.
///
/// ```
/// use query_wire::{Endian, Writer};
///
/// let mut buf = [0u8; 8];
/// let mut w = Writer::new(&mut buf);
/// let slot = w.begin_length::<u16>(Endian::Big)?;
/// w.put_bytes(b"abc")?;
/// w.end_length(slot)?;
/// assert_eq!(w.written(), &[0, 3, b'a', b'b', b'c']);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

/// A reserved length prefix, returned by [`Writer::begin_length`].
#[derive(Debug)]
#[must_use = "a reserved length must be filled in with Writer::end_length"]
pub struct LengthSlot<P> {
    at: usize,
    endian: Endian,
    _prefix: PhantomData<P>,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    #[inline]
    pub fn new(buf: &'b mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// How many bytes have been written.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes written so far.
    #[inline]
    pub fn written(&self) -> &[u8] {
        &self.buf[..self.pos]
    }

    /// An error of `kind` at the current position.
    #[cold]
    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.pos)
    }

    #[inline(always)]
    fn claim(&mut self, n: usize) -> Result<&mut [u8]> {
        let start = self.pos;
        // Written so that the slicing below is provably in bounds and needs no second check.
        let end = match start.checked_add(n) {
            Some(end) if end <= self.buf.len() => end,
            _ => {
                return Err(Error::new(
                    ErrorKind::BufferTooSmall {
                        need: n,
                        have: self.buf.len().saturating_sub(start),
                    },
                    start,
                ))
            }
        };
        self.pos = end;
        Ok(&mut self.buf[start..end])
    }

    /// Claims the next `N` bytes at once, when they fit, for fields of a known total width
    /// written one after the other: one bounds check instead of one per field. `None` claims
    /// nothing, so the caller can fall back to writing field by field (and report which one
    /// did not fit).
    #[inline(always)]
    pub fn fixed<const N: usize>(&mut self) -> Option<&mut [u8; N]> {
        let start = self.pos;
        let (head, _) = self.buf.get_mut(start..)?.split_first_chunk_mut::<N>()?;
        self.pos = start + N;
        Some(head)
    }

    /// Writes raw bytes.
    #[inline]
    pub fn put_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.claim(bytes.len())?.copy_from_slice(bytes);
        Ok(())
    }

    /// Writes `n` zero bytes.
    #[inline]
    pub fn put_zeros(&mut self, n: usize) -> Result<()> {
        self.claim(n)?.fill(0);
        Ok(())
    }

    /// Writes one byte.
    #[inline(always)]
    pub fn put_u8(&mut self, value: u8) -> Result<()> {
        self.claim(1)?[0] = value;
        Ok(())
    }

    /// Writes a fixed-width number in the given byte order.
    #[inline(always)]
    pub fn put_number<T: Number>(&mut self, value: T, endian: Endian) -> Result<()> {
        self.put_bytes(value.to_bytes(endian).as_ref())
    }

    /// Writes a length or count as a prefix of type `P` (an integer, [`VarInt`] or
    /// [`Leb128`]), failing if `P` cannot hold it or it exceeds the declared `max`.
    ///
    /// [`VarInt`]: crate::varint::VarInt
    /// [`Leb128`]: crate::varint::Leb128
    #[inline]
    pub fn put_length<P: LengthPrefix>(
        &mut self,
        len: usize,
        endian: Endian,
        max: Option<usize>,
    ) -> Result<()> {
        let value = check_prefix::<P>(len, max).map_err(|kind| self.error(kind))?;
        self.put_bytes(P::length_bytes(value, endian).as_ref())
    }

    /// Writes a variable-length integer (`u32`/`u64` LEB128, `i32` VarInt, `i64` VarLong).
    #[inline]
    pub fn put_varint<T: VarIntValue>(&mut self, value: T) -> Result<()> {
        self.put_bytes(value.varint_bytes().as_ref())
    }

    /// Writes a Teeworlds packed integer; a `u32` above `i32::MAX` is
    /// [`ErrorKind::OutOfRange`], since Teeworlds carries signed 32-bit numbers.
    #[inline]
    pub fn put_packed_int<T: PackedIntValue>(&mut self, value: T) -> Result<()> {
        match value.to_packed() {
            Ok(number) => self.put_bytes(crate::packed_int::encode(number).as_ref()),
            Err(value) => Err(self.error(ErrorKind::OutOfRange {
                value,
                reason: "a packed integer carries at most 2147483647",
            })),
        }
    }

    /// Overwrites the number at `at`, which was written before (a checksum reserved as zeros
    /// and computed once the bytes it covers are written).
    #[inline]
    pub fn put_number_at<T: Number>(&mut self, at: usize, value: T, endian: Endian) -> Result<()> {
        let bytes = value.to_bytes(endian);
        let bytes = bytes.as_ref();
        match at.checked_add(bytes.len()) {
            Some(end) if end <= self.pos => {
                self.buf[at..end].copy_from_slice(bytes);
                Ok(())
            }
            _ => Err(Error::new(
                ErrorKind::Invalid("overwrites bytes that were not written"),
                at,
            )),
        }
    }

    /// Writes `bytes` behind a length prefix of type `P`.
    #[inline]
    pub fn put_prefixed_bytes<P: LengthPrefix>(
        &mut self,
        bytes: &[u8],
        endian: Endian,
        max: Option<usize>,
    ) -> Result<()> {
        let value = check_prefix::<P>(bytes.len(), max).map_err(|kind| self.error(kind))?;
        let prefix = P::length_bytes(value, endian);
        let prefix = prefix.as_ref();
        // Prefix and bytes claimed together: one bounds check for both.
        let out = self.claim(prefix.len() + bytes.len())?;
        let (head, body) = out.split_at_mut(prefix.len());
        head.copy_from_slice(prefix);
        body.copy_from_slice(bytes);
        Ok(())
    }

    /// Writes `text` in `encoding` behind a length prefix of type `P` that counts the encoded
    /// bytes. Encodes straight into the buffer, without allocating; a character the encoding
    /// cannot represent is an [`ErrorKind::InvalidText`] at the byte it would have taken.
    #[inline]
    pub fn put_prefixed_text<P: LengthPrefix>(
        &mut self,
        text: &str,
        endian: Endian,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        if encoding == TextEncoding::Utf8 {
            return self.put_prefixed_bytes::<P>(text.as_bytes(), endian, max);
        }
        let len = encoding.encoded_len(text);
        self.put_length::<P>(len, endian, max)?;
        self.put_encoded(text, len, encoding)
    }

    /// Writes `text` in `encoding` with no prefix (it runs to the end of its body), failing with
    /// [`ErrorKind::TooLong`] when it takes more than `max` bytes.
    #[inline]
    pub fn put_rest_text(
        &mut self,
        text: &str,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        let len = encoding.encoded_len(text);
        check_max(len, max).map_err(|kind| self.error(kind))?;
        if encoding == TextEncoding::Utf8 {
            return self.put_bytes(text.as_bytes());
        }
        self.put_encoded(text, len, encoding)
    }

    /// Writes `bytes` with no prefix, failing with [`ErrorKind::TooLong`] when there are more
    /// than `max`.
    #[inline]
    pub fn put_rest_bytes(&mut self, bytes: &[u8], max: Option<usize>) -> Result<()> {
        check_max(bytes.len(), max).map_err(|kind| self.error(kind))?;
        self.put_bytes(bytes)
    }

    /// Writes `bytes` and a NUL after them, failing with [`ErrorKind::TooLong`] when there are
    /// more than `max`, and with [`ErrorKind::Invalid`] at the byte when they hold a NUL,
    /// which would end them early on the wire.
    #[inline]
    pub fn put_nul_bytes(&mut self, bytes: &[u8], max: Option<usize>) -> Result<()> {
        check_max(bytes.len(), max).map_err(|kind| self.error(kind))?;
        if let Some(at) = bytes.iter().position(|&b| b == 0) {
            return Err(Error::new(ErrorKind::Invalid(NUL_INSIDE), self.pos + at));
        }
        self.put_bytes(bytes)?;
        self.put_u8(0)
    }

    /// Writes `text` in `encoding` and a NUL after it; see
    /// [`put_nul_bytes`](Writer::put_nul_bytes).
    #[inline]
    pub fn put_nul_text(
        &mut self,
        text: &str,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        if encoding == TextEncoding::Utf8 {
            return self.put_nul_bytes(text.as_bytes(), max);
        }
        if let Some(at) = text.find('\0') {
            let at = self.pos + encoding.encoded_len(&text[..at]);
            return Err(Error::new(ErrorKind::Invalid(NUL_INSIDE), at));
        }
        let len = encoding.encoded_len(text);
        check_max(len, max).map_err(|kind| self.error(kind))?;
        self.put_encoded(text, len, encoding)?;
        self.put_u8(0)
    }

    /// Writes `bytes` and `end` after them (a byte or a byte string, a [`Terminator`]):
    /// [`put_nul_bytes`](Writer::put_nul_bytes) for another terminator. Bytes that would
    /// read back shorter, because they hold `end` or end with the start of a terminator that
    /// overlaps itself, are [`ErrorKind::Invalid`] at that byte.
    #[inline]
    pub fn put_until_bytes<E: Terminator>(
        &mut self,
        bytes: &[u8],
        end: E,
        max: Option<usize>,
    ) -> Result<()> {
        self.put_before_bytes(bytes, end, max)?;
        self.put_bytes(end.end_bytes())
    }

    /// Writes `text` in `encoding` and `end` after it; see
    /// [`put_until_bytes`](Writer::put_until_bytes). `end` must be ASCII.
    #[inline]
    pub fn put_until_text<E: Terminator>(
        &mut self,
        text: &str,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        self.put_before_text(text, end, max, encoding)?;
        self.put_bytes(end.end_bytes())
    }

    /// Writes `bytes`, which the next field must end by starting with `end`: the value of a
    /// `before = ..` framing. Bytes that would read back shorter, because they hold `end` or
    /// end with the start of a terminator that overlaps itself, are [`ErrorKind::Invalid`] at
    /// that byte.
    #[inline]
    pub fn put_before_bytes<E: Terminator>(
        &mut self,
        bytes: &[u8],
        end: E,
        max: Option<usize>,
    ) -> Result<()> {
        check_max(bytes.len(), max).map_err(|kind| self.error(kind))?;
        if let Some(at) = early_end(bytes, end) {
            return Err(Error::new(ErrorKind::Invalid(END_INSIDE), self.pos + at));
        }
        self.put_bytes(bytes)
    }

    /// Writes `text` in `encoding`, leaving `end` to the next field; see
    /// [`put_before_bytes`](Writer::put_before_bytes). `end` must be ASCII.
    #[inline]
    pub fn put_before_text<E: Terminator>(
        &mut self,
        text: &str,
        end: E,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        if encoding == TextEncoding::Utf8 {
            return self.put_before_bytes(text.as_bytes(), end, max);
        }
        // An ASCII terminator is the same bytes in the text and in its encoding.
        if let Some(at) = early_end(text.as_bytes(), end) {
            let at = self.pos + encoding.encoded_len(&text[..floor_char(text, at)]);
            return Err(Error::new(ErrorKind::Invalid(END_INSIDE), at));
        }
        let len = encoding.encoded_len(text);
        check_max(len, max).map_err(|kind| self.error(kind))?;
        self.put_encoded(text, len, encoding)
    }

    /// Writes `"`, `bytes` and `"`; bytes holding a `"` are [`ErrorKind::Invalid`].
    #[inline]
    pub fn put_quoted_bytes(&mut self, bytes: &[u8], max: Option<usize>) -> Result<()> {
        check_max(bytes.len(), max).map_err(|kind| self.error(kind))?;
        self.put_u8(b'"')?;
        self.put_until_bytes(bytes, b'"', None)
    }

    /// Writes `"`, `text` in `encoding` and `"`; see
    /// [`put_quoted_bytes`](Writer::put_quoted_bytes).
    #[inline]
    pub fn put_quoted_text(
        &mut self,
        text: &str,
        max: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        check_max(encoding.encoded_len(text), max).map_err(|kind| self.error(kind))?;
        self.put_u8(b'"')?;
        self.put_until_text(text, b'"', None, encoding)
    }

    /// Writes a UUID as two `u64` halves in `endian` order, the inverse of
    /// [`Reader::uuid`](crate::Reader::uuid).
    #[inline]
    pub fn put_uuid(&mut self, uuid: &uuid::Uuid, endian: Endian) -> Result<()> {
        let (high, low) = uuid.as_u64_pair();
        self.put_number(high, endian)?;
        self.put_number(low, endian)
    }

    #[inline]
    fn put_encoded(&mut self, text: &str, len: usize, encoding: TextEncoding) -> Result<()> {
        let start = self.pos;
        let out = self.claim(len)?;
        encoding.encode_into(text, out).map_err(|at| {
            Error::new(
                ErrorKind::InvalidText {
                    encoding: encoding.name(),
                },
                start + at,
            )
        })
    }

    /// Reserves a length prefix of type `P`; the length of everything written until
    /// [`end_length`](Writer::end_length) goes there.
    #[inline]
    pub fn begin_length<P: Integer>(&mut self, endian: Endian) -> Result<LengthSlot<P>> {
        let at = self.pos;
        self.claim(P::SIZE)?;
        Ok(LengthSlot {
            at,
            endian,
            _prefix: PhantomData,
        })
    }

    /// Fills in a reserved length prefix with the number of bytes written since.
    #[inline]
    pub fn end_length<P: Integer>(&mut self, slot: LengthSlot<P>) -> Result<()> {
        self.end_length_including(slot, 0)
    }

    /// Fills in a reserved length prefix with the number of bytes written since plus
    /// `includes`: a length that counts itself or a header besides the body.
    #[inline]
    pub fn end_length_including<P: Integer>(
        &mut self,
        slot: LengthSlot<P>,
        includes: usize,
    ) -> Result<()> {
        let body = (self.pos - slot.at - P::SIZE).saturating_add(includes);
        let value = check_length::<P>(body, None).map_err(|kind| Error::new(kind, slot.at))?;
        self.buf[slot.at..slot.at + P::SIZE].copy_from_slice(value.to_bytes(slot.endian).as_ref());
        Ok(())
    }
}

/// Why a NUL-terminated text or byte string cannot be written.
/// The start of the character holding byte `at` of `text`.
fn floor_char(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

const END_INSIDE: &str = "the value holds the byte that ends it";
const NUL_INSIDE: &str = "holds a NUL byte, which would end it early on the wire";

#[inline]
fn check_max(len: usize, max: Option<usize>) -> std::result::Result<(), ErrorKind> {
    match max {
        Some(max) if len > max => Err(ErrorKind::TooLong { len, max }),
        _ => Ok(()),
    }
}

#[inline]
fn check_prefix<P: LengthPrefix>(
    len: usize,
    max: Option<usize>,
) -> std::result::Result<u64, ErrorKind> {
    check_max(len, max)?;
    let value = len as u64;
    if value > P::LARGEST {
        return Err(ErrorKind::TooLong {
            len,
            max: usize::try_from(P::LARGEST).unwrap_or(usize::MAX),
        });
    }
    Ok(value)
}

#[inline]
fn check_length<P: Integer>(len: usize, max: Option<usize>) -> std::result::Result<P, ErrorKind> {
    check_max(len, max)?;
    P::from_u64(len as u64).ok_or_else(|| ErrorKind::TooLong {
        len,
        max: usize::try_from(max_of::<P>()).unwrap_or(usize::MAX),
    })
}

/// The largest value of an unsigned-or-signed prefix type, found without a trait constant.
#[cold]
fn max_of<P: Integer>() -> u64 {
    let bits = (P::SIZE * 8) as u32;
    // Signed prefixes cannot carry negative lengths, so both kinds top out below 2^bits.
    let max = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    if P::from_u64(max).is_some() {
        max
    } else {
        max >> 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_buffer_is_an_error_not_a_panic() {
        let mut buf = [0u8; 3];
        let mut w = Writer::new(&mut buf);
        w.put_bytes(b"ab").unwrap();
        let err = w.put_number(7u16, Endian::Big).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::BufferTooSmall { need: 2, have: 1 });
        assert_eq!(err.offset(), 2);
    }

    #[test]
    fn fixed_claims_all_or_nothing() {
        let mut buf = [0u8; 5];
        let mut w = Writer::new(&mut buf);
        w.fixed::<3>().unwrap().copy_from_slice(b"abc");
        assert!(w.fixed::<3>().is_none());
        assert_eq!(w.position(), 3);
        w.fixed::<2>().unwrap().copy_from_slice(b"de");
        assert_eq!(w.written(), b"abcde");
    }

    #[test]
    fn prefixed_bytes_that_do_not_fit_write_nothing() {
        let mut buf = [0u8; 3];
        let mut w = Writer::new(&mut buf);
        let err = w
            .put_prefixed_bytes::<u8>(b"abc", Endian::Big, None)
            .unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::BufferTooSmall { need: 4, have: 3 });
        assert_eq!((err.offset(), w.position()), (0, 0));
    }

    #[test]
    fn length_that_overflows_its_prefix_is_too_long() {
        let long = vec![b'x'; 300];
        let mut buf = vec![0u8; 400];
        let mut w = Writer::new(&mut buf);
        let err = w
            .put_prefixed_bytes::<u8>(&long, Endian::Big, None)
            .unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 300, max: 255 });
    }

    #[test]
    fn code_page_text_is_encoded_in_place_and_counted_in_bytes() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        w.put_prefixed_text::<u16>("Жa", Endian::Little, None, TextEncoding::Windows1251)
            .unwrap();
        assert_eq!(w.written(), &[2, 0, 0xc6, b'a']);
        w.put_rest_text("é", Some(1), TextEncoding::Latin1).unwrap();
        assert_eq!(w.written(), &[2, 0, 0xc6, b'a', 0xe9]);
    }

    #[test]
    fn unmappable_character_points_at_its_byte() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        let err = w
            .put_prefixed_text::<u8>("abЖ", Endian::Big, None, TextEncoding::Windows1252)
            .unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::InvalidText {
                encoding: "Windows-1252"
            }
        );
        assert_eq!(err.offset(), 3);
        let mut w = Writer::new(&mut buf);
        let err = w
            .put_rest_text("aĀ", None, TextEncoding::Latin1)
            .unwrap_err();
        assert_eq!(err.offset(), 1);
    }

    #[test]
    fn rest_maximum_is_checked_on_encode() {
        let mut buf = [0u8; 8];
        let mut w = Writer::new(&mut buf);
        let err = w.put_rest_bytes(b"abc", Some(2)).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 3, max: 2 });
        let err = w
            .put_rest_text("abc", Some(2), TextEncoding::Utf8)
            .unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::TooLong { len: 3, max: 2 });
        assert_eq!(w.position(), 0);
    }

    #[test]
    fn uuid_round_trips_in_both_orders() {
        let id = uuid::Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff);
        for endian in [Endian::Big, Endian::Little] {
            let mut buf = [0u8; 16];
            let mut w = Writer::new(&mut buf);
            w.put_uuid(&id, endian).unwrap();
            assert_eq!(crate::Reader::new(&buf).uuid(endian).unwrap(), id);
        }
        let mut buf = [0u8; 16];
        Writer::new(&mut buf).put_uuid(&id, Endian::Big).unwrap();
        assert_eq!(&buf, id.as_bytes());
    }

    #[test]
    fn reserved_length_is_filled_in() {
        let mut buf = [0u8; 16];
        let mut w = Writer::new(&mut buf);
        let outer = w.begin_length::<u32>(Endian::Little).unwrap();
        let inner = w.begin_length::<u8>(Endian::Little).unwrap();
        w.put_bytes(b"hi").unwrap();
        w.end_length(inner).unwrap();
        w.end_length(outer).unwrap();
        assert_eq!(w.written(), &[3, 0, 0, 0, 2, b'h', b'i']);
    }
}
