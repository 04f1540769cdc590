//! Bytes an earlier encode produced, put back in their place in a packet's view.

use std::marker::PhantomData;

use crate::codec::Encode;
use crate::error::Result;
use crate::writer::Writer;

/// The encoding of a value, made earlier and kept: it writes itself as those bytes. In a view
/// (`#[wire(view = ..)]`), a field marked `view` takes it in place of the value, so that a
/// responder encodes a section of a reply once per state and each reply through the packet's
/// declaration: the header, the conditions on which sections are present, and the cached
/// sections in their places, with nothing copied by hand and nothing allocated.
///
/// `C` is the context of the value it stands for; it is not used, as the bytes are final.
///
/// ```
/// use query_wire::{Encode, Encoded, Wire};
///
/// #[derive(Debug, PartialEq, Wire)]
/// #[wire(magic = b"\x00", ctx(with_rules: bool), view = ReplyView)]
/// pub struct Reply<'a> {
///     pub id: u32,
///     #[wire(when = with_rules, view)]
///     pub rules: Option<Rules<'a>>,
/// }
///
/// #[derive(Debug, PartialEq, Wire)]
/// pub struct Rules<'a> {
///     #[wire(until_nul, str(nul))]
///     pub names: Vec<&'a str>,
/// }
///
/// // Encoded once...
/// let rules = Rules { names: vec!["ff", "hc"] }.to_vec()?;
/// // ...and put in place in every reply.
/// let reply = ReplyView { id: 7, rules: Some(Encoded::new(&rules)) };
/// let bytes = reply.to_vec_with(true)?;
/// assert_eq!(bytes, b"\x00\x00\x00\x00\x07ff\0hc\0\0");
/// assert_eq!(reply.encoded_len(true), bytes.len());
/// // The conditions still hold: rules are not sent where the context says none.
/// assert!(reply.to_vec_with(false).is_err());
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Encoded<'a, C = ()> {
    bytes: &'a [u8],
    ctx: PhantomData<fn(C)>,
}

impl<C> Clone for Encoded<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C> Copy for Encoded<'_, C> {}

impl<'a, C> Encoded<'a, C> {
    /// The bytes an encode of the value wrote.
    pub const fn new(bytes: &'a [u8]) -> Self {
        Encoded {
            bytes,
            ctx: PhantomData,
        }
    }

    /// The bytes.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<C: Copy> Encode for Encoded<'_, C> {
    type Ctx = C;

    fn encoded_len(&self, _: C) -> usize {
        self.bytes.len()
    }

    fn encode(&self, w: &mut Writer<'_>, _: C) -> Result<()> {
        w.put_bytes(self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn writes_its_bytes_whatever_the_context() {
        let encoded: Encoded<'_, (u8, bool)> = Encoded::new(b"abc");
        let mut buf = [0u8; 4];
        assert_eq!(encoded.encode_into_with(&mut buf, (1, true)).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
        assert_eq!(encoded.encoded_len((0, false)), 3);
        // A buffer too small is an error, not a cut.
        let err = Encoded::<()>::new(b"abcde")
            .encode_into(&mut buf)
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::BufferTooSmall { .. }),
            "{err}"
        );
    }
}
