//! A line of `\key\value` pairs inside a binary or line-oriented packet: the settings line of
//! a Quake 3 `statusResponse`.

use super::{FromKeyValues, LenCounter, Pair, Pairs, ToKeyValues};
use crate::codec::{Decode, Encode};
use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;
use crate::text::TextEncoding;
use crate::writer::Writer;

/// A `#[derive(KeyValues)]` value as one line of `\key\value` pairs ended by a newline, as
/// a field of a `#[derive(Wire)]` packet. Its context is the text encoding. Decoding reads up
/// to the newline or, leniently, the end of the input (a server's last line may lack it), and
/// errors keep their absolute offsets; encoding writes the pairs and the newline, and a value
/// holding a newline cannot be written.
///
/// ```
/// use std::borrow::Cow;
/// use query_wire::kv::KvLine;
/// use query_wire::{Decode, Encode, KeyValues, TextEncoding, Wire};
///
/// #[derive(Debug, PartialEq, Default, KeyValues)]
/// struct Info<'a> {
///     hostname: Option<Cow<'a, str>>,
/// }
///
/// #[derive(Debug, PartialEq, Wire)]
/// #[wire(magic = b"info\n", ctx(encoding: TextEncoding))]
/// struct Reply<'a> {
///     #[wire(ctx = encoding)]
///     info: KvLine<Info<'a>>,
/// }
///
/// let bytes = b"info\n\\hostname\\Box\n";
/// let reply = Reply::from_bytes_with(bytes, TextEncoding::Windows1252)?;
/// assert_eq!(reply.info.0.hostname.as_deref(), Some("Box"));
/// assert_eq!(reply.to_vec_with(TextEncoding::Windows1252)?, bytes);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KvLine<T>(pub T);

#[cfg(feature = "serde")]
impl<T: serde::Serialize> serde::Serialize for KvLine<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'a, T: FromKeyValues<'a>> Decode<'a> for KvLine<T> {
    type Ctx = TextEncoding;
    const NAME: &'static str = T::NAME;

    fn decode(r: &mut Reader<'a>, encoding: TextEncoding) -> Result<Self> {
        let at = r.offset();
        let line = r.until_or_end_bytes(b'\n', None)?;
        let pairs: Vec<Pair<'a>> = Pairs::with_origin(line, at).collect::<Result<_>>()?;
        T::from_pairs(&pairs, None, encoding).map(KvLine)
    }
}

impl<T: ToKeyValues> Encode for KvLine<T> {
    type Ctx = TextEncoding;

    /// The exact size; a value that cannot be written counts up to where it fails.
    fn encoded_len(&self, encoding: TextEncoding) -> usize {
        let mut counter = LenCounter::default();
        let _ = self.0.write_pairs(&mut counter, None, encoding);
        counter.0 + 1
    }

    fn encode(&self, w: &mut Writer<'_>, encoding: TextEncoding) -> Result<()> {
        let start = w.position();
        self.0.write_pairs(w, None, encoding)?;
        if let Some(at) = memchr::memchr(b'\n', &w.written()[start..]) {
            return Err(Error::new(
                ErrorKind::Invalid("a pair of a line cannot hold a newline"),
                start + at,
            ));
        }
        w.put_u8(b'\n')
    }
}

/// Two values written as one run of pairs, the first's before the second's: a pair a reply
/// adds to what a responder caches (Quake 3's echoed `challenge` before the settings).
impl<A: ToKeyValues, B: ToKeyValues> ToKeyValues for (A, B) {
    const NAME: &'static str = B::NAME;
    const DEFAULT_ENCODING: TextEncoding = B::DEFAULT_ENCODING;

    fn index(&self) -> Option<usize> {
        None
    }

    fn write_pairs<S: super::KvSink + ?Sized>(
        &self,
        sink: &mut S,
        index: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        self.0.write_pairs(sink, index, encoding)?;
        self.1.write_pairs(sink, index, encoding)
    }
}

/// A borrowed value writes as the value.
impl<T: ToKeyValues + ?Sized> ToKeyValues for &T {
    const NAME: &'static str = T::NAME;
    const DEFAULT_ENCODING: TextEncoding = T::DEFAULT_ENCODING;
    const FORMAT: super::KvFormat = T::FORMAT;

    fn index(&self) -> Option<usize> {
        (**self).index()
    }

    fn write_pairs<S: super::KvSink + ?Sized>(
        &self,
        sink: &mut S,
        index: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        (**self).write_pairs(sink, index, encoding)
    }
}
