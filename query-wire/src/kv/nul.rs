//! NUL-separated pairs, `key\0value\0...\0`, ended by an empty key: the key/values of GameSpy 2
//! and GameSpy 3/4. The same derive reads them; the container says which format with
//! `#[kv(format = "nul")]`.

use crate::codec::{Decode, Encode};
use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;
use crate::writer::Writer;

use super::pairs::Pair;
use super::sink::{KvSink, LenCounter};
use super::{FromKeyValues, ToKeyValues};

/// How a container's pairs are framed when decoded from and encoded to whole bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KvFormat {
    /// `\key\value\key\value` (GameSpy 1), the default.
    Backslash,
    /// `key\0value\0...\0`, ended by an empty key (GameSpy 2, 3 and 4).
    Nul,
    /// `key=value key=value`, one row of TeamSpeak 3's ServerQuery (see
    /// [`QueryText`](super::QueryText) for its escapes).
    ServerQuery,
}

/// Reads NUL-separated pairs from `r` up to and including the empty key that ends them.
///
/// Offsets are absolute (the reader's). Values may be empty; a key without its value, or a
/// list without its empty key, is [`ErrorKind::UnexpectedEnd`] at the end of the input.
pub fn read_nul_pairs<'a>(r: &mut Reader<'a>) -> Result<Vec<Pair<'a>>> {
    let mut out = Vec::new();
    loop {
        let key_offset = r.offset();
        let key = r.nul_bytes(None)?;
        if key.is_empty() {
            return Ok(out);
        }
        let value_offset = r.offset();
        let value = r.nul_bytes(None)?;
        out.push(Pair {
            key,
            value,
            key_offset,
            value_offset,
        });
    }
}

/// A [`KvSink`] adapter that writes `key\0value\0` (or `key_N\0value\0`) to the sink it wraps.
///
/// A key or value holding a NUL, or an empty key (it would end the list), is refused with an
/// error at the offending byte and nothing is written.
#[derive(Debug)]
pub struct Nul<S>(pub S);

/// The encoded size of one NUL pair.
pub fn nul_pair_len(key: &[u8], index: Option<usize>, value: &[u8]) -> usize {
    // `\key\value` and `key\0value\0` have the same size.
    super::sink::pair_len(key, index, value)
}

fn check_nul_pair(key: &[u8], index: Option<usize>, value: &[u8], at: usize) -> Result<()> {
    if key.is_empty() && index.is_none() {
        return Err(Error::new(
            ErrorKind::Invalid("an empty key would end the key/value list"),
            at,
        ));
    }
    if let Some(i) = key.iter().position(|&b| b == 0) {
        return Err(Error::new(
            ErrorKind::Invalid("a key cannot contain a NUL"),
            at + i,
        ));
    }
    if let Some(i) = value.iter().position(|&b| b == 0) {
        let value_at = nul_pair_len(key, index, b"") - 1;
        return Err(Error::new(
            ErrorKind::Invalid("a value cannot contain a NUL"),
            at + value_at + i,
        ));
    }
    Ok(())
}

impl<S: KvSink> KvSink for Nul<S> {
    fn position(&self) -> usize {
        self.0.position()
    }

    fn put_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.0.put_raw(bytes)
    }

    fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
        check_nul_pair(key, index, value, self.0.position())?;
        self.0.put_raw(key)?;
        if let Some(n) = index {
            self.0.put_raw(b"_")?;
            self.0
                .put_raw(super::sink::IndexDigits::new(n).as_bytes())?;
        }
        self.0.put_raw(&[0])?;
        self.0.put_raw(value)?;
        self.0.put_raw(&[0])
    }
}

/// Writes `value`'s pairs NUL-separated and the empty key that ends them.
pub fn write_nul_document<T: ToKeyValues + ?Sized, S: KvSink>(
    value: &T,
    sink: &mut S,
    encoding: crate::TextEncoding,
) -> Result<()> {
    let mut nul = Nul(&mut *sink);
    value.write_pairs(&mut nul, None, encoding)?;
    sink.put_raw(&[0])
}

/// A `#[derive(KeyValues)]` value as a field of a `#[derive(Wire)]` packet: its pairs
/// NUL-separated and ended by an empty key, in the value's default encoding.
///
/// ```
/// use std::borrow::Cow;
/// use query_wire::kv::KvBlock;
/// use query_wire::{Decode, Encode, KeyValues, Wire};
///
/// #[derive(Debug, PartialEq, KeyValues)]
/// #[kv(format = "nul")]
/// struct Info<'a> {
///     hostname: Option<Cow<'a, str>>,
///     #[kv(rest)]
///     rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
/// }
///
/// #[derive(Debug, PartialEq, Wire)]
/// #[wire(magic = b"\x00")]
/// struct Reply<'a> {
///     id: u32,
///     info: KvBlock<Info<'a>>,
/// }
///
/// let bytes = b"\x00\x00\x00\x00\x07hostname\x00Box\x00map\x00x\x00\x00";
/// let reply = Reply::from_bytes(bytes)?;
/// assert_eq!(reply.info.0.hostname.as_deref(), Some("Box"));
/// assert_eq!(reply.to_vec()?, bytes);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KvBlock<T>(pub T);

#[cfg(feature = "serde")]
impl<T: serde::Serialize> serde::Serialize for KvBlock<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'a, T: FromKeyValues<'a>> Decode<'a> for KvBlock<T> {
    type Ctx = ();
    const NAME: &'static str = T::NAME;

    fn decode(r: &mut Reader<'a>, _: ()) -> Result<Self> {
        let pairs = read_nul_pairs(r)?;
        T::from_pairs(&pairs, None, T::DEFAULT_ENCODING).map(KvBlock)
    }
}

impl<T: ToKeyValues> Encode for KvBlock<T> {
    type Ctx = ();

    /// The exact size; a value that cannot be written counts up to where it fails (encoding
    /// then reports the error).
    fn encoded_len(&self, _: ()) -> usize {
        let mut counter = LenCounter::default();
        let _ = write_nul_document(&self.0, &mut counter, T::DEFAULT_ENCODING);
        counter.0
    }

    fn encode(&self, w: &mut Writer<'_>, _: ()) -> Result<()> {
        write_nul_document(&self.0, w, T::DEFAULT_ENCODING)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_empty_key_with_absolute_offsets() {
        let mut r = Reader::new(b"a\x001\x00b\x00\x00\x00rest");
        let pairs = read_nul_pairs(&mut r).unwrap();
        assert_eq!(pairs.len(), 2);
        assert_eq!((pairs[1].key, pairs[1].value), (&b"b"[..], &b""[..]));
        assert_eq!((pairs[1].key_offset, pairs[1].value_offset), (4, 6));
        assert_eq!(r.peek_rest(), b"rest");
    }

    #[test]
    fn a_cut_list_is_an_error_at_its_end() {
        for cut in [&b"a\x001"[..], b"a\x001\x00", b"a\x00"] {
            let err = read_nul_pairs(&mut Reader::new(cut)).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
                "{err}"
            );
        }
    }

    #[test]
    fn nul_sink_refuses_nul_and_empty_keys() {
        let mut out = Vec::new();
        Nul(&mut out).put_pair(b"player", Some(3), b"x").unwrap();
        assert_eq!(out, b"player_3\x00x\x00");
        let err = Nul(&mut out).put_pair(b"k", None, b"a\x00b").unwrap_err();
        assert_eq!(err.offset(), 11 + 2 + 1);
        assert!(Nul(&mut out).put_pair(b"", None, b"v").is_err());
        assert!(Nul(&mut out).put_pair(b"k\x00", None, b"v").is_err());
        assert_eq!(out, b"player_3\x00x\x00", "nothing written on error");
        let mut n = Nul(LenCounter::default());
        n.put_pair(b"player", Some(3), b"x").unwrap();
        assert_eq!(n.0 .0, 11);
    }
}
