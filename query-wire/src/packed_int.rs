//! Teeworlds' packed integers (`#[wire(packed_int)]`): a signed 32-bit number in 1 to 5 bytes.
//!
//! The first byte holds an extension bit (`0x80`: more bytes follow), a sign bit (`0x40`) and
//! the low 6 bits of the magnitude; each further byte an extension bit and the next 7 bits,
//! low first. A negative number `n` is sent as its sign and `!n` (`-1` is `40`, `-64` is
//! `7F`), so the magnitude always fits in 31 bits: 6 + 4 × 7 leaves room for it in five
//! bytes. Teeworlds 0.7 packs every number of its network messages this way (`CVariableInt`).
//!
//! Decoding is stricter than Teeworlds' own unpacker, which reads a fifth byte whatever it
//! holds and accepts padded encodings: an encoding longer than needed (a last byte of `0x00`
//! after another), one whose fifth byte says more follow, and one whose bits do not fit in
//! 31 are refused with [`ErrorKind::Invalid`] at the integer's first byte, because two
//! encodings of one number let a forged packet pass a byte-wise comparison (an echoed token).
//! No real server sends them. An encoding cut short is [`ErrorKind::UnexpectedEnd`].

use crate::error::{Error, ErrorKind, Result};
use crate::int::sealed;
use crate::reader::Reader;

/// The most bytes one packed integer takes.
pub const MAX_LEN: usize = 5;

/// The encoded bytes of one packed integer: 1 to [`MAX_LEN`].
#[derive(Debug, Clone, Copy)]
pub struct PackedBytes {
    bytes: [u8; MAX_LEN],
    len: u8,
}

impl AsRef<[u8]> for PackedBytes {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The bytes of `value`.
#[inline]
pub fn encode(value: i32) -> PackedBytes {
    let sign = if value < 0 { 0x40 } else { 0 };
    // `!value` of a negative number is its magnitude minus one: at most 31 bits.
    #[allow(clippy::cast_sign_loss)]
    let mut magnitude = (value ^ (value >> 31)) as u32;
    let mut bytes = [0u8; MAX_LEN];
    // Truncations keep the low 6 or 7 bits, which is the group.
    #[allow(clippy::cast_possible_truncation)]
    let low = (magnitude & 0x3f) as u8;
    bytes[0] = sign | low;
    magnitude >>= 6;
    let mut len = 1;
    while magnitude != 0 {
        bytes[len - 1] |= 0x80;
        #[allow(clippy::cast_possible_truncation)]
        let group = (magnitude & 0x7f) as u8;
        bytes[len] = group;
        magnitude >>= 7;
        len += 1;
    }
    PackedBytes {
        bytes,
        #[allow(clippy::cast_possible_truncation)]
        len: len as u8,
    }
}

/// How many bytes `value` takes: 1 to [`MAX_LEN`].
#[inline]
pub fn encoded_len(value: i32) -> usize {
    #[allow(clippy::cast_sign_loss)]
    let magnitude = (value ^ (value >> 31)) as u32;
    let bits = 32 - magnitude.leading_zeros() as usize;
    1 + bits.saturating_sub(6).div_ceil(7)
}

/// Reads one packed integer, strictly (see the [module](self)).
#[inline]
pub fn read(r: &mut Reader<'_>) -> Result<i32> {
    let start = r.offset();
    let rest = r.peek_rest();
    let Some(&first) = rest.first() else {
        return Err(Error::new(
            ErrorKind::UnexpectedEnd { need: 1, have: 0 },
            start,
        ));
    };
    let negative = first & 0x40 != 0;
    let mut magnitude = u32::from(first & 0x3f);
    let mut len = 1;
    let mut more = first & 0x80 != 0;
    while more {
        let Some(&byte) = rest.get(len) else {
            return Err(Error::new(
                ErrorKind::UnexpectedEnd {
                    need: len + 1,
                    have: len,
                },
                start,
            ));
        };
        more = byte & 0x80 != 0;
        let group = byte & 0x7f;
        if len == MAX_LEN - 1 {
            if more {
                return Err(Error::new(
                    ErrorKind::Invalid("packed integer longer than 5 bytes"),
                    start,
                ));
            }
            // The fifth byte holds bits 27 to 30 of the magnitude.
            if group > 0x0f {
                return Err(Error::new(
                    ErrorKind::Invalid("packed integer wider than 32 bits"),
                    start,
                ));
            }
        }
        if !more && group == 0 {
            return Err(Error::new(
                ErrorKind::Invalid("packed integer encoded in more bytes than it needs"),
                start,
            ));
        }
        magnitude |= u32::from(group) << (6 + 7 * (len - 1));
        len += 1;
    }
    r.skip(len)?;
    // At most 31 bits (checked above), so the cast keeps the value.
    #[allow(clippy::cast_possible_wrap)]
    let magnitude = magnitude as i32;
    Ok(if negative { !magnitude } else { magnitude })
}

/// A number `#[wire(packed_int)]` reads and writes: `i32`, or `u32` for numbers that are
/// never negative (a negative one is refused on decode, one above `i32::MAX` on encode).
pub trait PackedIntValue: Copy + sealed::Sealed {
    /// Reads the value, strictly (see the [module](self)).
    fn read_packed(r: &mut Reader<'_>) -> Result<Self>;
    /// The number as Teeworlds carries it, or the value (widened) when it cannot be carried.
    fn to_packed(self) -> core::result::Result<i32, u64>;
    /// How many bytes it takes (5 for a value that cannot be carried, which encoding refuses).
    #[inline]
    fn packed_len(self) -> usize {
        self.to_packed().map_or(MAX_LEN, encoded_len)
    }
}

impl PackedIntValue for i32 {
    #[inline]
    fn read_packed(r: &mut Reader<'_>) -> Result<Self> {
        read(r)
    }
    #[inline]
    fn to_packed(self) -> core::result::Result<i32, u64> {
        Ok(self)
    }
}

impl PackedIntValue for u32 {
    #[inline]
    fn read_packed(r: &mut Reader<'_>) -> Result<Self> {
        let start = r.offset();
        let value = read(r)?;
        u32::try_from(value).map_err(|_| {
            Error::new(
                ErrorKind::Invalid("negative packed integer in an unsigned field"),
                start,
            )
        })
    }
    #[inline]
    fn to_packed(self) -> core::result::Result<i32, u64> {
        i32::try_from(self).map_err(|_| u64::from(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode<T: PackedIntValue>(bytes: &[u8]) -> Result<T> {
        let mut r = Reader::new(bytes);
        let value = T::read_packed(&mut r)?;
        r.expect_end()?;
        Ok(value)
    }

    /// Values and bytes as Teeworlds' `CVariableInt::Pack` writes them.
    #[test]
    fn teeworlds_encodings() {
        let cases: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (63, &[0x3f]),
            (64, &[0x80, 0x01]),
            (12, &[0x0c]),
            (-1, &[0x40]),
            (-64, &[0x7f]),
            (-65, &[0xc0, 0x01]),
            (8191, &[0xbf, 0x7f]),
            (8192, &[0x80, 0x80, 0x01]),
            (i32::MAX, &[0xbf, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for &(value, encoded) in cases {
            assert_eq!(encode(value).as_ref(), encoded, "{value}");
            assert_eq!(encoded_len(value), encoded.len(), "{value}");
            assert_eq!(decode::<i32>(encoded).unwrap(), value, "{encoded:02x?}");
        }
    }

    #[test]
    fn every_length_round_trips() {
        for shift in 0..31 {
            for base in [1i32 << shift, (1i32 << shift) - 1] {
                for value in [base, -base, !base] {
                    let bytes = encode(value);
                    assert_eq!(bytes.as_ref().len(), encoded_len(value), "{value}");
                    assert_eq!(decode::<i32>(bytes.as_ref()).unwrap(), value);
                }
            }
        }
    }

    #[test]
    fn overlong_wide_long_and_cut_encodings_are_refused_at_the_first_byte() {
        let cases: &[(&[u8], &str)] = &[
            (&[0x80, 0x00], "more bytes than it needs"),
            (&[0xc1, 0x80, 0x00], "more bytes than it needs"),
            (&[0xbf, 0xff, 0xff, 0xff, 0x1f], "wider than 32 bits"),
            (&[0xbf, 0xff, 0xff, 0xff, 0x8f, 0x01], "longer than 5 bytes"),
            (&[0x40], "negative packed integer"),
        ];
        for (encoded, why) in cases {
            let mut input = vec![0xaa];
            input.extend_from_slice(encoded);
            let mut r = Reader::new(&input);
            r.skip(1).unwrap();
            let err = u32::read_packed(&mut r).unwrap_err();
            assert_eq!(err.offset(), 1, "{encoded:02x?}");
            assert!(err.to_string().contains(why), "{err} for {encoded:02x?}");
        }
        let err = decode::<i32>(&[0x80, 0x80]).unwrap_err();
        assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 3, have: 2 });
        assert!(decode::<i32>(&[]).is_err());
    }

    #[test]
    fn unsigned_values_above_i32_are_not_carried() {
        assert_eq!(u32::MAX.to_packed(), Err(u64::from(u32::MAX)));
        assert_eq!(u32::MAX.packed_len(), MAX_LEN);
        assert_eq!(0x7fff_ffffu32.to_packed(), Ok(i32::MAX));
    }
}
