//! Variable-length integers: little-endian groups of 7 bits, the high bit of each byte set
//! while more follow (unsigned LEB128).
//!
//! - As values (`#[wire(varint)]`): `u32` and `u64` are unsigned LEB128; `i32` and `i64` are
//!   Minecraft's VarInt and VarLong, the two's complement bits in the same groups, so a
//!   negative number always takes 5 or 10 bytes. At most 5 bytes for 32-bit types and 10 for
//!   64-bit ones.
//! - As length and count prefixes ([`VarInt`], [`Leb128`]): `prefix = varint`,
//!   `prefix = leb128`.
//!
//! Decoding is strict, because two encodings of one number let a forged packet pass a
//! byte-wise comparison (a cached reply, an echoed token): an encoding longer than needed
//! (a last byte of `0x00` after another) and one with bits the type cannot hold are refused
//! with [`ErrorKind::Invalid`] at the integer's first byte; one cut short is
//! [`ErrorKind::UnexpectedEnd`].

use crate::error::{Error, ErrorKind, Result};
use crate::int::{sealed, Endian, Integer, Number};
use crate::reader::Reader;

/// The encoded bytes of one variable-length integer: at most 10.
#[derive(Debug, Clone, Copy)]
pub struct VarIntBytes {
    bytes: [u8; 10],
    len: u8,
}

impl AsRef<[u8]> for VarIntBytes {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The unsigned LEB128 bytes of `value`.
#[inline]
pub fn encode(mut value: u64) -> VarIntBytes {
    let mut bytes = [0u8; 10];
    let mut len = 0;
    loop {
        // Truncation keeps the low 7 bits, which is the group.
        #[allow(clippy::cast_possible_truncation)]
        let group = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            bytes[len] = group;
            len += 1;
            break;
        }
        bytes[len] = group | 0x80;
        len += 1;
    }
    VarIntBytes {
        bytes,
        #[allow(clippy::cast_possible_truncation)]
        len: len as u8,
    }
}

/// How many bytes the unsigned LEB128 encoding of `value` takes: 1 to 10.
#[inline]
pub fn encoded_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Reads an unsigned LEB128 integer of at most `max_bytes` bytes whose value fits in `bits`
/// bits.
#[inline]
pub(crate) fn read(r: &mut Reader<'_>, max_bytes: usize, bits: u32) -> Result<u64> {
    // One byte is the common case (small lengths, ids, counts).
    if let Some(&first) = r.peek_rest().first() {
        if first < 0x80 {
            r.skip(1)?;
            return Ok(u64::from(first));
        }
    }
    read_groups(r, max_bytes, bits)
}

#[inline(never)]
fn read_groups(r: &mut Reader<'_>, max_bytes: usize, bits: u32) -> Result<u64> {
    let start = r.offset();
    let rest = r.peek_rest();
    let mut value = 0u64;
    for (i, &byte) in rest.iter().enumerate().take(max_bytes) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 != 0 {
            continue;
        }
        if i > 0 && byte == 0 {
            return Err(Error::new(
                ErrorKind::Invalid("variable-length integer encoded in more bytes than it needs"),
                start,
            ));
        }
        // The last group of a full-length encoding holds only the type's top bits.
        let top_bits = bits - 7 * (u32::try_from(i).unwrap_or(0));
        if top_bits < 7 && u32::from(byte) >> top_bits != 0 {
            return Err(Error::new(
                ErrorKind::Invalid("variable-length integer wider than its type"),
                start,
            ));
        }
        r.skip(i + 1)?;
        return Ok(value);
    }
    if rest.len() < max_bytes {
        // Every byte there said more follow.
        return Err(Error::new(
            ErrorKind::UnexpectedEnd {
                need: rest.len() + 1,
                have: rest.len(),
            },
            start,
        ));
    }
    Err(Error::new(
        ErrorKind::Invalid(if max_bytes == 5 {
            "variable-length integer longer than 5 bytes"
        } else {
            "variable-length integer longer than 10 bytes"
        }),
        start,
    ))
}

/// A number `#[wire(varint)]` reads and writes: `u32`, `u64` (unsigned LEB128), `i32`
/// (VarInt) and `i64` (VarLong).
pub trait VarIntValue: Copy + sealed::Sealed {
    /// Reads the value, strictly (see the [module](self)).
    fn read_varint(r: &mut Reader<'_>) -> Result<Self>;
    /// The value's bytes.
    fn varint_bytes(self) -> VarIntBytes;
    /// How many bytes it takes.
    fn varint_len(self) -> usize;
}

macro_rules! varint_value {
    ($($t:ty => $bits:ty, $max_bytes:literal);* $(;)?) => {$(
        impl VarIntValue for $t {
            #[inline]
            fn read_varint(r: &mut Reader<'_>) -> Result<Self> {
                let bits = read(r, $max_bytes, <$bits>::BITS)?;
                // `read` checked the width; the cast reinterprets a VarInt's sign bit.
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                Ok(bits as $bits as $t)
            }
            #[inline]
            fn varint_bytes(self) -> VarIntBytes {
                #[allow(clippy::cast_sign_loss)]
                encode(u64::from(self as $bits))
            }
            #[inline]
            fn varint_len(self) -> usize {
                #[allow(clippy::cast_sign_loss)]
                encoded_len(u64::from(self as $bits))
            }
        }
    )*};
}

varint_value! {
    u32 => u32, 5;
    i32 => u32, 5;
    u64 => u64, 10;
    i64 => u64, 10;
}

/// A length or count prefix: a fixed-width integer (`u8`..`u64`, in the field's byte order),
/// [`VarInt`] or [`Leb128`].
pub trait LengthPrefix: sealed::Sealed {
    /// The prefix's bytes for one length.
    type Encoded: AsRef<[u8]>;
    /// The largest length the prefix can carry.
    const LARGEST: u64;
    /// Reads the prefix.
    fn read_length(r: &mut Reader<'_>, endian: Endian) -> Result<u64>;
    /// The bytes of `len`, which is at most [`LARGEST`](LengthPrefix::LARGEST).
    fn length_bytes(len: u64, endian: Endian) -> Self::Encoded;
    /// How many bytes the prefix of `len` takes.
    fn length_width(len: u64) -> usize;
}

macro_rules! fixed_prefix {
    ($($t:ty),*) => {$(
        impl LengthPrefix for $t {
            type Encoded = <$t as Number>::Bytes;
            // Signed prefixes cannot carry negative lengths.
            #[allow(clippy::cast_sign_loss)]
            const LARGEST: u64 = <$t>::MAX as u64;
            #[inline(always)]
            fn read_length(r: &mut Reader<'_>, endian: Endian) -> Result<u64> {
                Ok(r.number::<$t>(endian)?.to_u64())
            }
            #[inline(always)]
            fn length_bytes(len: u64, endian: Endian) -> Self::Encoded {
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                (len as $t).to_bytes(endian)
            }
            #[inline(always)]
            fn length_width(_: u64) -> usize {
                <$t as Number>::SIZE
            }
        }
    )*};
}

fixed_prefix!(u8, u16, u32, u64, i8, i16, i32, i64);

/// Minecraft's VarInt as a length or count prefix (`prefix = varint`): at most 5 bytes, and a
/// negative value is refused.
#[derive(Debug, Clone, Copy)]
pub struct VarInt;

/// Unsigned LEB128 as a length or count prefix (`prefix = leb128`): at most 10 bytes.
#[derive(Debug, Clone, Copy)]
pub struct Leb128;

impl sealed::Sealed for VarInt {}
impl sealed::Sealed for Leb128 {}

impl LengthPrefix for VarInt {
    type Encoded = VarIntBytes;
    #[allow(clippy::cast_sign_loss)]
    const LARGEST: u64 = i32::MAX as u64;
    #[inline]
    fn read_length(r: &mut Reader<'_>, _: Endian) -> Result<u64> {
        let start = r.offset();
        let value = read(r, 5, 32)?;
        if value > Self::LARGEST {
            return Err(Error::new(
                ErrorKind::OutOfRange {
                    value,
                    reason: "a VarInt length is negative",
                },
                start,
            ));
        }
        Ok(value)
    }
    #[inline]
    fn length_bytes(len: u64, _: Endian) -> VarIntBytes {
        encode(len)
    }
    #[inline]
    fn length_width(len: u64) -> usize {
        encoded_len(len)
    }
}

impl LengthPrefix for Leb128 {
    type Encoded = VarIntBytes;
    const LARGEST: u64 = u64::MAX;
    #[inline]
    fn read_length(r: &mut Reader<'_>, _: Endian) -> Result<u64> {
        read(r, 10, 64)
    }
    #[inline]
    fn length_bytes(len: u64, _: Endian) -> VarIntBytes {
        encode(len)
    }
    #[inline]
    fn length_width(len: u64) -> usize {
        encoded_len(len)
    }
}

/// The width of the prefix of `len`, for `encoded_len`: a length too large for the prefix
/// counts as its widest, and `encode` reports it.
#[inline(always)]
pub fn prefix_width<P: LengthPrefix>(len: usize) -> usize {
    P::length_width((len as u64).min(P::LARGEST))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode<T: VarIntValue>(bytes: &[u8]) -> Result<T> {
        let mut r = Reader::new(bytes);
        let value = T::read_varint(&mut r)?;
        r.expect_end()?;
        Ok(value)
    }

    fn bytes<T: VarIntValue>(value: T) -> Vec<u8> {
        value.varint_bytes().as_ref().to_vec()
    }

    /// The examples of the Minecraft protocol's documentation of VarInt and VarLong.
    #[test]
    fn minecraft_examples() {
        let varints: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (2, &[0x02]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (255, &[0xff, 0x01]),
            (25565, &[0xdd, 0xc7, 0x01]),
            (2_097_151, &[0xff, 0xff, 0x7f]),
            (2_147_483_647, &[0xff, 0xff, 0xff, 0xff, 0x07]),
            (-1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            (-2_147_483_648, &[0x80, 0x80, 0x80, 0x80, 0x08]),
        ];
        for &(value, encoded) in varints {
            assert_eq!(bytes(value), encoded, "{value}");
            assert_eq!(value.varint_len(), encoded.len());
            assert_eq!(decode::<i32>(encoded).unwrap(), value);
        }
        let varlongs: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (2_147_483_647, &[0xff, 0xff, 0xff, 0xff, 0x07]),
            (
                9_223_372_036_854_775_807,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            ),
            (
                -1,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
            (
                -2_147_483_648,
                &[0x80, 0x80, 0x80, 0x80, 0xf8, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
            (
                i64::MIN,
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            ),
        ];
        for &(value, encoded) in varlongs {
            assert_eq!(bytes(value), encoded, "{value}");
            assert_eq!(value.varint_len(), encoded.len());
            assert_eq!(decode::<i64>(encoded).unwrap(), value);
        }
    }

    #[test]
    fn overlong_wide_and_cut_encodings_are_refused_at_the_first_byte() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x80, 0x00], "more bytes than it needs"),
            (&[0xff, 0x80, 0x00], "more bytes than it needs"),
            (&[0xff, 0xff, 0xff, 0xff, 0x1f], "wider than its type"),
            (&[0xff, 0xff, 0xff, 0xff, 0x8f, 0x01], "longer than 5 bytes"),
        ];
        for (encoded, why) in cases {
            let mut input = vec![0xaa];
            input.extend_from_slice(encoded);
            let mut r = Reader::new(&input);
            r.skip(1).unwrap();
            let err = u32::read_varint(&mut r).unwrap_err();
            assert_eq!(err.offset(), 1, "{encoded:02x?}");
            assert!(err.to_string().contains(why), "{err} for {encoded:02x?}");
            assert_eq!(r.offset(), 1, "nothing is consumed");
        }
        let err = decode::<u64>(&[0xff; 9]).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 10, have: 9 });
        let err = decode::<u64>(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02])
            .unwrap_err();
        assert!(err.to_string().contains("wider than its type"), "{err}");
        assert!(decode::<u32>(&[]).is_err());
    }

    #[test]
    fn varint_lengths_refuse_negatives() {
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        let err = VarInt::read_length(&mut r, Endian::Big).unwrap_err();
        assert_eq!(err.offset(), 0);
        assert!(err.to_string().contains("negative"), "{err}");
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(
            Leb128::read_length(&mut r, Endian::Big).unwrap(),
            u64::from(u32::MAX)
        );
    }

    #[test]
    fn encoded_len_matches_encode() {
        for shift in 0..64 {
            for value in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1] {
                assert_eq!(encode(value).as_ref().len(), encoded_len(value), "{value}");
                let encoded = encode(value);
                let mut r = Reader::new(encoded.as_ref());
                assert_eq!(read(&mut r, 10, 64).unwrap(), value);
            }
        }
    }
}
