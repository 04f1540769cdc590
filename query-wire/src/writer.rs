//! Encoding into a caller's buffer, without allocating.

use std::marker::PhantomData;

use crate::error::{Error, ErrorKind, Result};
use crate::int::{Endian, Integer, Number};

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
        let have = self.buf.len() - start;
        if n > have {
            return Err(Error::new(
                ErrorKind::BufferTooSmall { need: n, have },
                start,
            ));
        }
        self.pos += n;
        Ok(&mut self.buf[start..start + n])
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

    /// Writes a length or count as a prefix of type `P`, failing if `P` cannot hold it or it
    /// exceeds the declared `max`.
    #[inline]
    pub fn put_length<P: Integer>(
        &mut self,
        len: usize,
        endian: Endian,
        max: Option<usize>,
    ) -> Result<()> {
        let value = check_length::<P>(len, max).map_err(|kind| self.error(kind))?;
        self.put_number(value, endian)
    }

    /// Writes `bytes` behind a length prefix of type `P`.
    #[inline]
    pub fn put_prefixed_bytes<P: Integer>(
        &mut self,
        bytes: &[u8],
        endian: Endian,
        max: Option<usize>,
    ) -> Result<()> {
        self.put_length::<P>(bytes.len(), endian, max)?;
        self.put_bytes(bytes)
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
        let body = self.pos - slot.at - P::SIZE;
        let value = check_length::<P>(body, None).map_err(|kind| Error::new(kind, slot.at))?;
        self.buf[slot.at..slot.at + P::SIZE].copy_from_slice(value.to_bytes(slot.endian).as_ref());
        Ok(())
    }
}

#[inline]
fn check_length<P: Integer>(len: usize, max: Option<usize>) -> std::result::Result<P, ErrorKind> {
    if let Some(max) = max {
        if len > max {
            return Err(ErrorKind::TooLong { len, max });
        }
    }
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
