//! Fixed-width numbers in either byte order.

/// Byte order of a multi-byte value on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Most significant byte first (network order).
    Big,
    /// Least significant byte first.
    Little,
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A fixed-width number the [`Reader`](crate::Reader) and [`Writer`](crate::Writer) know how to
/// move in either byte order. Implemented for `u8..u64`, `i8..i64`, `f32` and `f64`.
pub trait Number: Copy + sealed::Sealed {
    /// Width on the wire in bytes.
    const SIZE: usize;
    /// The bytes as an array, for `from_*_bytes` / `to_*_bytes`.
    type Bytes: AsRef<[u8]> + for<'a> TryFrom<&'a [u8]>;
    /// Reads the value from exactly `SIZE` bytes.
    fn from_bytes(bytes: Self::Bytes, endian: Endian) -> Self;
    /// The value's bytes in `endian` order.
    fn to_bytes(self, endian: Endian) -> Self::Bytes;
    /// The value at the start of `bytes` and the bytes after it, or `None` when there are
    /// fewer than `SIZE`. One bounds check, which is what the [`Reader`](crate::Reader)'s hot
    /// path needs.
    #[doc(hidden)]
    fn split_from(bytes: &[u8], endian: Endian) -> Option<(Self, &[u8])>;
}

/// An integer that can also be a length prefix, a count or an enum tag.
pub trait Integer: Number + crate::varint::LengthPrefix {
    /// The value widened to `u64` (sign-extended integers reinterpret their bits).
    fn to_u64(self) -> u64;
    /// The value narrowed from `u64`, or `None` when it does not fit.
    fn from_u64(value: u64) -> Option<Self>;
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Number for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            type Bytes = [u8; std::mem::size_of::<$t>()];
            #[inline(always)]
            fn from_bytes(bytes: Self::Bytes, endian: Endian) -> Self {
                match endian {
                    Endian::Big => <$t>::from_be_bytes(bytes),
                    Endian::Little => <$t>::from_le_bytes(bytes),
                }
            }
            #[inline(always)]
            fn to_bytes(self, endian: Endian) -> Self::Bytes {
                match endian {
                    Endian::Big => self.to_be_bytes(),
                    Endian::Little => self.to_le_bytes(),
                }
            }
            #[inline(always)]
            fn split_from(bytes: &[u8], endian: Endian) -> Option<(Self, &[u8])> {
                let (head, tail) = bytes.split_first_chunk::<{ std::mem::size_of::<$t>() }>()?;
                Some((Self::from_bytes(*head, endian), tail))
            }
        }
    )*};
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            #[inline(always)]
            #[allow(clippy::cast_sign_loss, clippy::cast_lossless)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(value: u64) -> Option<Self> {
                <$t>::try_from(value).ok()
            }
        }
    )*};
}

number!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
integer!(u8, u16, u32, u64, i8, i16, i32, i64);
