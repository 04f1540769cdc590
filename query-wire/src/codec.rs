//! The `Decode` / `Encode` traits that `#[derive(Wire)]` implements.

use crate::error::{ErrorKind, Result};
use crate::reader::Reader;
use crate::writer::Writer;

/// A value read from the wire, borrowing from the input where it can.
///
/// `Ctx` is what an outer packet passes in (SQP's requested chunks, OneQuery's header flags);
/// it is `()` for self-contained packets.
pub trait Decode<'a>: Sized {
    /// Context the decoder needs from the enclosing packet.
    type Ctx: Copy;

    /// The type's name as it starts an error's field path.
    const NAME: &'static str;

    /// Reads one value from `r`, leaving it after the value's last byte.
    fn decode(r: &mut Reader<'a>, ctx: Self::Ctx) -> Result<Self>;

    /// Reads one value that must end where `r` ends (a whole datagram, a value framed by a
    /// length prefix), failing with [`ErrorKind::TrailingBytes`] at the first byte left over.
    ///
    /// The derive makes it a call of [`decode_whole`](Decode::decode_whole) on a copy of `r`,
    /// which it then leaves empty; when it fails, `r` stays where it was.
    fn decode_exact(r: &mut Reader<'a>, ctx: Self::Ctx) -> Result<Self> {
        let value = Self::decode(r, ctx)?;
        r.expect_end()?;
        Ok(value)
    }

    /// [`decode_exact`](Decode::decode_exact) over a reader the decoder owns: the value must
    /// use every byte `r` holds.
    ///
    /// The derive writes its fields' decoding here, making the check before it assembles the
    /// value, so that no finished value has to be dropped when the check fails and the
    /// compiler can build a large value where the caller keeps it. Owning the reader, the
    /// decoder keeps its position in registers; through a `&mut Reader` it would store the
    /// position after every field that a call could unwind from (a list's `push`), for the
    /// caller to see: the SA:MP reply's 34 player rows took 1.27 times the instructions.
    #[inline]
    fn decode_whole(mut r: Reader<'a>, ctx: Self::Ctx) -> Result<Self> {
        Self::decode_exact(&mut r, ctx)
    }

    /// Decodes a whole datagram: the value must use every byte.
    ///
    /// Errors carry the type name as the first segment of their path.
    #[inline]
    fn from_bytes(bytes: &'a [u8]) -> Result<Self>
    where
        Self: Decode<'a, Ctx = ()>,
    {
        Self::from_bytes_with(bytes, ())
    }

    /// [`from_bytes`](Decode::from_bytes) with a context.
    ///
    /// Inlined into the caller, so that the decoded value is built in the caller's own
    /// `Result` (through its `?` and `unwrap`) rather than returned into a temporary and copied:
    /// from another crate without LTO, the copy of a 248-byte SQP `Result` and the call cost
    /// as much as a sixth of the decode.
    #[inline]
    fn from_bytes_with(bytes: &'a [u8], ctx: Self::Ctx) -> Result<Self> {
        // A `match`, not `map_err`: the value goes from the `Result` to the caller in place.
        match Self::decode_whole(Reader::new(bytes), ctx) {
            Ok(value) => Ok(value),
            Err(e) => Err(e.in_field(Self::NAME)),
        }
    }

    /// Decodes a value from the start of `bytes` and returns it with the bytes after it.
    fn from_prefix(bytes: &'a [u8], ctx: Self::Ctx) -> Result<(Self, &'a [u8])> {
        let mut r = Reader::new(bytes);
        let value = Self::decode(&mut r, ctx).map_err(|e| e.in_field(Self::NAME))?;
        Ok((value, r.rest()))
    }
}

/// A value written to the wire. `encoded_len` is exact, so callers can size buffers up front.
pub trait Encode {
    /// Context the encoder needs from the enclosing packet.
    type Ctx: Copy;

    /// `Some(n)` when every value encodes to exactly `n` bytes, whatever it holds: derived
    /// for a struct whose magic and fields all have fixed widths (numbers, bit fields, arrays,
    /// nested types that have one), `None` otherwise. `#[wire(range)]` counts with it.
    const FIXED_LEN: Option<usize> = None;

    /// The exact number of bytes [`encode`](Encode::encode) writes.
    fn encoded_len(&self, ctx: Self::Ctx) -> usize;

    /// Writes the value; length prefixes declared on the type are computed here.
    fn encode(&self, w: &mut Writer<'_>, ctx: Self::Ctx) -> Result<()>;

    /// Encodes into the start of `buf` and returns how many bytes were written.
    fn encode_into(&self, buf: &mut [u8]) -> Result<usize>
    where
        Self: Encode<Ctx = ()>,
    {
        self.encode_into_with(buf, ())
    }

    /// [`encode_into`](Encode::encode_into) with a context.
    fn encode_into_with(&self, buf: &mut [u8], ctx: Self::Ctx) -> Result<usize> {
        let mut w = Writer::new(buf);
        self.encode(&mut w, ctx)?;
        Ok(w.position())
    }

    /// Encodes into a new, exactly sized `Vec`.
    fn to_vec(&self) -> Result<Vec<u8>>
    where
        Self: Encode<Ctx = ()>,
    {
        self.to_vec_with(())
    }

    /// [`to_vec`](Encode::to_vec) with a context.
    fn to_vec_with(&self, ctx: Self::Ctx) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; self.encoded_len(ctx)];
        let mut w = Writer::new(&mut buf);
        self.encode(&mut w, ctx)?;
        let written = w.position();
        if written != buf.len() {
            // encoded_len is generated to be exact; a difference is a bug in a hand-written impl.
            return Err(crate::Error::new(
                ErrorKind::LengthMismatch {
                    declared: buf.len(),
                    actual: written,
                },
                written,
            ));
        }
        Ok(buf)
    }
}
