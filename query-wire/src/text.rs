//! Text encodings: strict UTF-8, Latin-1, Windows-1252 and Windows-1251.
//!
//! Game servers send whatever their locale uses; the SA:MP and GameSpy protocols declare no
//! charset at all. [`Text`] keeps the raw bytes and decodes them on demand in the encoding the
//! caller chooses.

use std::borrow::Cow;
use std::fmt;

use crate::error::{Error, ErrorKind, Result};

/// A text encoding a string field can be declared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TextEncoding {
    /// Strict UTF-8: invalid bytes are an error.
    #[default]
    Utf8,
    /// ISO-8859-1: every byte is the code point of the same number.
    Latin1,
    /// Windows-1252, the Western European code page most old game servers use.
    Windows1252,
    /// Windows-1251, the Cyrillic code page of Russian servers.
    Windows1251,
}

impl TextEncoding {
    /// The encoding's usual name, as error messages and the CLI print it.
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "UTF-8",
            TextEncoding::Latin1 => "Latin-1",
            TextEncoding::Windows1252 => "Windows-1252",
            TextEncoding::Windows1251 => "Windows-1251",
        }
    }

    /// Decodes `bytes`, borrowing when they are already valid UTF-8 of the same characters.
    /// `None` when a byte has no mapping (only strict UTF-8 and unassigned code page slots).
    pub fn decode(self, bytes: &[u8]) -> Option<Cow<'_, str>> {
        match self {
            TextEncoding::Utf8 => std::str::from_utf8(bytes).ok().map(Cow::Borrowed),
            TextEncoding::Latin1 => Some(encoding_rs::mem::decode_latin1(bytes)),
            TextEncoding::Windows1252 => {
                encoding_rs::WINDOWS_1252.decode_without_bom_handling_and_without_replacement(bytes)
            }
            TextEncoding::Windows1251 => {
                encoding_rs::WINDOWS_1251.decode_without_bom_handling_and_without_replacement(bytes)
            }
        }
    }

    /// Decodes `bytes`, replacing what has no mapping with U+FFFD.
    pub fn decode_lossy(self, bytes: &[u8]) -> Cow<'_, str> {
        match self {
            TextEncoding::Utf8 => String::from_utf8_lossy(bytes),
            TextEncoding::Latin1 => encoding_rs::mem::decode_latin1(bytes),
            TextEncoding::Windows1252 => {
                encoding_rs::WINDOWS_1252
                    .decode_without_bom_handling(bytes)
                    .0
            }
            TextEncoding::Windows1251 => {
                encoding_rs::WINDOWS_1251
                    .decode_without_bom_handling(bytes)
                    .0
            }
        }
    }

    /// Encodes `text`, borrowing when the bytes are the same as its UTF-8.
    /// `None` when a character cannot be represented.
    pub fn encode(self, text: &str) -> Option<Cow<'_, [u8]>> {
        match self {
            TextEncoding::Utf8 => Some(Cow::Borrowed(text.as_bytes())),
            TextEncoding::Latin1 => {
                if encoding_rs::mem::is_str_latin1(text) {
                    Some(encoding_rs::mem::encode_latin1_lossy(text))
                } else {
                    None
                }
            }
            TextEncoding::Windows1252 => encode_with(encoding_rs::WINDOWS_1252, text),
            TextEncoding::Windows1251 => encode_with(encoding_rs::WINDOWS_1251, text),
        }
    }

    /// Encodes `text`, replacing what cannot be represented with `?`.
    pub fn encode_lossy(self, text: &str) -> Cow<'_, [u8]> {
        if let Some(bytes) = self.encode(text) {
            return bytes;
        }
        let mut out = Vec::with_capacity(text.len());
        let mut buf = [0u8; 4];
        for ch in text.chars() {
            match self.encode(ch.encode_utf8(&mut buf)) {
                Some(bytes) => out.extend_from_slice(&bytes),
                None => out.push(b'?'),
            }
        }
        Cow::Owned(out)
    }

    /// The number of bytes `text` takes in this encoding (when every character is
    /// representable; otherwise encoding fails anyway). The code pages are single-byte, so it is
    /// the character count there, and the UTF-8 length for UTF-8.
    #[inline]
    pub fn encoded_len(self, text: &str) -> usize {
        match self {
            TextEncoding::Utf8 => text.len(),
            TextEncoding::Latin1 | TextEncoding::Windows1252 | TextEncoding::Windows1251 => {
                text.chars().count()
            }
        }
    }

    /// Encodes `text` into `out`, which must be exactly [`encoded_len`](Self::encoded_len)
    /// bytes, without allocating. On a character the encoding cannot represent, returns the
    /// index in `out` where it would have gone.
    pub(crate) fn encode_into(self, text: &str, out: &mut [u8]) -> std::result::Result<(), usize> {
        match self {
            TextEncoding::Utf8 => {
                out.copy_from_slice(text.as_bytes());
                Ok(())
            }
            TextEncoding::Latin1 => {
                for (i, (slot, ch)) in out.iter_mut().zip(text.chars()).enumerate() {
                    *slot = u8::try_from(u32::from(ch)).map_err(|_| i)?;
                }
                Ok(())
            }
            TextEncoding::Windows1252 => encode_single_byte(encoding_rs::WINDOWS_1252, text, out),
            TextEncoding::Windows1251 => encode_single_byte(encoding_rs::WINDOWS_1251, text, out),
        }
    }

    /// Decodes for a field read at `offset`: an error names the encoding and the offset.
    pub fn decode_at<'a>(self, bytes: &'a [u8], offset: usize) -> Result<Cow<'a, str>> {
        self.decode(bytes).ok_or_else(|| {
            let bad = match self {
                TextEncoding::Utf8 => std::str::from_utf8(bytes)
                    .err()
                    .map_or(0, |e| e.valid_up_to()),
                _ => 0,
            };
            Error::new(
                ErrorKind::InvalidText {
                    encoding: self.name(),
                },
                offset + bad,
            )
        })
    }

    /// Encodes for a field written at `offset`: an error names the encoding and the offset.
    pub fn encode_at(self, text: &str, offset: usize) -> Result<Cow<'_, [u8]>> {
        self.encode(text).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidText {
                    encoding: self.name(),
                },
                offset,
            )
        })
    }
}

impl fmt::Display for TextEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for TextEncoding {
    type Err = String;

    /// Accepts the names people type: `utf8`, `utf-8`, `latin1`, `iso-8859-1`, `cp1252`,
    /// `windows-1252`, `cp1251`, `windows-1251`.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let key: String = s
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match key.as_str() {
            "utf8" => Ok(TextEncoding::Utf8),
            "latin1" | "iso88591" => Ok(TextEncoding::Latin1),
            "windows1252" | "cp1252" | "win1252" => Ok(TextEncoding::Windows1252),
            "windows1251" | "cp1251" | "win1251" => Ok(TextEncoding::Windows1251),
            _ => Err(format!(
                "unknown text encoding {s:?}: expected utf8, latin1, windows-1252 or windows-1251"
            )),
        }
    }
}

fn encode_with<'t>(
    encoding: &'static encoding_rs::Encoding,
    text: &'t str,
) -> Option<Cow<'t, [u8]>> {
    let (bytes, _, had_unmappable) = encoding.encode(text);
    (!had_unmappable).then_some(bytes)
}

fn encode_single_byte(
    encoding: &'static encoding_rs::Encoding,
    text: &str,
    out: &mut [u8],
) -> std::result::Result<(), usize> {
    let mut encoder = encoding.new_encoder();
    let (result, _read, written) = encoder.encode_from_utf8_without_replacement(text, out, true);
    match result {
        encoding_rs::EncoderResult::InputEmpty if written == out.len() => Ok(()),
        _ => Err(written),
    }
}

/// Text whose encoding the protocol does not declare: the raw bytes, decoded on demand.
///
/// Decoding borrows the bytes from the datagram; a responder builds one from a `&str` with
/// [`Text::encode`].
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Text<'a>(pub Cow<'a, [u8]>);

impl<'a> Text<'a> {
    /// Text made of these raw bytes.
    pub fn from_bytes(bytes: &'a [u8]) -> Self {
        Text(Cow::Borrowed(bytes))
    }

    /// `text` encoded in `encoding`, replacing characters it cannot represent with `?`.
    pub fn encode(text: &'a str, encoding: TextEncoding) -> Self {
        Text(encoding.encode_lossy(text))
    }

    /// The raw bytes as they are on the wire.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text decoded in `encoding`, with U+FFFD for bytes that have no mapping.
    pub fn decode(&self, encoding: TextEncoding) -> Cow<'_, str> {
        encoding.decode_lossy(&self.0)
    }

    /// A copy that owns its bytes.
    pub fn into_owned(self) -> Text<'static> {
        Text(Cow::Owned(self.0.into_owned()))
    }
}

impl fmt::Debug for Text<'_> {
    /// Shows the bytes as Windows-1252, the most common choice, with escapes for the rest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.decode(TextEncoding::Windows1252))
    }
}

/// Serializes as the text decoded in Windows-1252, the encoding most servers that send
/// undeclared text use; the raw bytes stay available through [`Text::as_bytes`].
#[cfg(feature = "serde")]
impl serde::Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.decode(TextEncoding::Windows1252))
    }
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(s: &'a str) -> Self {
        Text(Cow::Borrowed(s.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_bytes_a0_b1_decode_to_their_code_points() {
        let decoded = TextEncoding::Latin1.decode(&[b'x', 0xa0, 0xb1]).unwrap();
        assert_eq!(decoded, "x\u{a0}\u{b1}");
    }

    #[test]
    fn windows_1252_and_1251_differ_on_high_bytes() {
        assert_eq!(TextEncoding::Windows1252.decode(&[0xc0]).unwrap(), "À");
        assert_eq!(TextEncoding::Windows1251.decode(&[0xc0]).unwrap(), "А");
        assert_eq!(TextEncoding::Windows1252.decode(&[0x80]).unwrap(), "€");
    }

    #[test]
    fn strict_utf8_rejects_and_reports_offset() {
        let err = TextEncoding::Utf8.decode_at(b"ab\xff", 10).unwrap_err();
        assert_eq!(err.offset(), 12);
    }

    #[test]
    fn unmappable_character_is_refused_or_replaced() {
        assert!(TextEncoding::Windows1252.encode("Ж").is_none());
        assert_eq!(&*TextEncoding::Windows1252.encode_lossy("aЖb"), b"a?b");
        assert_eq!(&*TextEncoding::Windows1251.encode("Ж").unwrap(), &[0xc6]);
    }

    #[test]
    fn encoded_len_counts_bytes_on_the_wire() {
        assert_eq!(TextEncoding::Utf8.encoded_len("Жé"), 4);
        assert_eq!(TextEncoding::Windows1251.encoded_len("Жé"), 2);
        let mut out = [0u8; 3];
        TextEncoding::Windows1252
            .encode_into("€ab", &mut out)
            .unwrap();
        assert_eq!(out, [0x80, b'a', b'b']);
        assert_eq!(
            TextEncoding::Windows1252.encode_into("aЖb", &mut out),
            Err(1)
        );
    }

    #[test]
    fn ascii_is_borrowed() {
        assert!(matches!(
            TextEncoding::Windows1252.decode(b"plain"),
            Some(Cow::Borrowed(_))
        ));
    }

    #[test]
    fn names_parse() {
        assert_eq!("CP1251".parse(), Ok(TextEncoding::Windows1251));
        assert_eq!("iso-8859-1".parse(), Ok(TextEncoding::Latin1));
        assert!("ebcdic".parse::<TextEncoding>().is_err());
    }
}
