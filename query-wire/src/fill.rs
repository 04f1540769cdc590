//! Reserved and padding bytes: fields that carry no value but take up room.

use crate::codec::{Decode, Encode};
use crate::error::{ErrorKind, Result};
use crate::reader::Reader;
use crate::writer::Writer;

/// `N` bytes that must be zero: written as zeros, and a non-zero byte is an error on decode.
///
/// Use it where a document says "reserved (zeros)" and a non-zero value means the packet is not
/// what it claims to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Reserved<const N: usize>;

/// `N` bytes of padding: written as zeros, ignored on decode whatever they hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Padding<const N: usize>;

#[cfg(feature = "serde")]
impl<const N: usize> serde::Serialize for Reserved<N> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

#[cfg(feature = "serde")]
impl<const N: usize> serde::Serialize for Padding<N> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl<'a, const N: usize> Decode<'a> for Reserved<N> {
    type Ctx = ();
    const NAME: &'static str = "Reserved";

    #[inline]
    fn decode(r: &mut Reader<'a>, (): ()) -> Result<Self> {
        let start = r.offset();
        let bytes = r.bytes(N)?;
        match bytes.iter().position(|&b| b != 0) {
            None => Ok(Reserved),
            Some(i) => Err(crate::Error::new(
                ErrorKind::Invalid("reserved byte is not zero"),
                start + i,
            )),
        }
    }
}

impl<const N: usize> Encode for Reserved<N> {
    type Ctx = ();
    const FIXED_LEN: Option<usize> = Some(N);

    #[inline]
    fn encoded_len(&self, (): ()) -> usize {
        N
    }

    #[inline]
    fn encode(&self, w: &mut Writer<'_>, (): ()) -> Result<()> {
        w.put_zeros(N)
    }
}

impl<'a, const N: usize> Decode<'a> for Padding<N> {
    type Ctx = ();
    const NAME: &'static str = "Padding";

    #[inline]
    fn decode(r: &mut Reader<'a>, (): ()) -> Result<Self> {
        r.skip(N).map(|()| Padding)
    }
}

impl<const N: usize> Encode for Padding<N> {
    type Ctx = ();
    const FIXED_LEN: Option<usize> = Some(N);

    #[inline]
    fn encoded_len(&self, (): ()) -> usize {
        N
    }

    #[inline]
    fn encode(&self, w: &mut Writer<'_>, (): ()) -> Result<()> {
        w.put_zeros(N)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_rejects_non_zero_at_its_offset() {
        let err = Reserved::<3>::from_bytes(&[0, 0, 7]).unwrap_err();
        assert_eq!(err.offset(), 2);
        assert_eq!(Reserved::<3>.to_vec().unwrap(), vec![0, 0, 0]);
    }

    #[test]
    fn padding_ignores_content() {
        assert_eq!(Padding::<2>::from_bytes(&[9, 9]).unwrap(), Padding);
        assert!(Padding::<2>::from_bytes(&[9]).is_err());
    }
}
