//! Decode and encode errors that say where they happened: a byte offset and a field path.

use std::fmt;

/// One step of a field path: a named field or an index into a repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment {
    /// A struct field, enum variant or the outermost type's name.
    Field(&'static str),
    /// The position of an element in a repeated field.
    Index(usize),
}

/// What went wrong, independent of where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a field was complete.
    #[error("need {need} bytes, have {have}")]
    UnexpectedEnd { need: usize, have: usize },
    /// Fixed magic bytes did not match.
    #[error("bad magic: expected {expected:02x?}, found {found:02x?}")]
    BadMagic {
        expected: &'static [u8],
        found: Vec<u8>,
    },
    /// A length or count disagreed with the data it describes.
    #[error("length mismatch: declared {declared}, actual {actual}")]
    LengthMismatch { declared: usize, actual: usize },
    /// Bytes that are not valid in the declared text encoding.
    #[error("invalid {encoding} text")]
    InvalidText { encoding: &'static str },
    /// A string or byte field longer than its declared maximum or its prefix can express.
    #[error("{len} bytes exceed the maximum of {max}")]
    TooLong { len: usize, max: usize },
    /// A length prefix smaller than the bytes it must count besides the body (itself, a
    /// header).
    #[error("length {len} is less than the {includes} bytes it includes")]
    LengthBelowIncluded { len: usize, includes: usize },
    /// A declared checksum that disagrees with the bytes it covers.
    #[error("checksum mismatch: declared {declared:#010x}, computed {computed:#010x}")]
    ChecksumMismatch { declared: u32, computed: u32 },
    /// A repeat with fewer elements than its declared minimum.
    #[error("{len} elements are fewer than the minimum of {min}")]
    TooFew { len: usize, min: usize },
    /// An enum tag that no variant declares.
    #[error("unknown tag {tag:#x}")]
    UnknownTag { tag: u64 },
    /// Input that starts with the magic of none of an enum's variants. `found` runs from
    /// where the variant's magic would start to the first byte no variant's magic accepts,
    /// which is where the error is.
    #[error("no variant's magic starts with {found:02x?}")]
    UnknownMagic { found: Vec<u8> },
    /// Bytes left over where the declaration says the input must end.
    #[error("{count} trailing bytes")]
    TrailingBytes { count: usize },
    /// A value outside the range its field allows.
    #[error("value {value} out of range: {reason}")]
    OutOfRange { value: u64, reason: &'static str },
    /// A value the declaration forbids, with the reason.
    #[error("invalid value: {0}")]
    Invalid(&'static str),
    /// The caller's output buffer is too small for the encoding.
    #[error("output buffer too small: need {need} bytes, have {have}")]
    BufferTooSmall { need: usize, have: usize },
}

/// A decode or encode error: the kind, the byte offset where it happened and the path of fields
/// that led there, e.g. `QueryResponse.chunks.server_info.map at byte 91: need 9 bytes, have 3`.
///
/// Boxed, so that `Result<T, Error>` stays one pointer wide on the happy path.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    offset: usize,
    /// Innermost segment first: segments are pushed while the error travels outwards.
    path_rev: Vec<PathSegment>,
}

impl Error {
    /// An error of `kind` at absolute byte `offset`, with an empty path.
    #[cold]
    pub fn new(kind: ErrorKind, offset: usize) -> Self {
        Error(Box::new(Inner {
            kind,
            offset,
            path_rev: Vec::new(),
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The absolute byte offset in the decoded input (or the encoded output) where it went wrong.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// The field path, outermost first.
    pub fn path(&self) -> impl Iterator<Item = PathSegment> + '_ {
        self.0.path_rev.iter().rev().copied()
    }

    /// The field path as text: `QueryResponse.chunks.server_info.map`, `players[3].name`.
    pub fn path_string(&self) -> String {
        let mut out = String::new();
        for segment in self.path() {
            match segment {
                PathSegment::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// Prefixes the path with a field name; generated code calls this as the error leaves a field.
    #[cold]
    #[must_use]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.0.path_rev.push(PathSegment::Field(name));
        self
    }

    /// Prefixes the path with an element index of a repeat.
    #[cold]
    #[must_use]
    pub fn at_index(mut self, index: usize) -> Self {
        self.0.path_rev.push(PathSegment::Index(index));
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path_string();
        if path.is_empty() {
            write!(f, "at byte {}: {}", self.0.offset, self.0.kind)
        } else {
            write!(f, "{path} at byte {}: {}", self.0.offset, self.0.kind)
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("offset", &self.0.offset)
            .field("path", &self.path_string())
            .finish()
    }
}

impl std::error::Error for Error {}

/// The result type of every codec function.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_reads_like_a_sentence() {
        let err = Error::new(ErrorKind::UnexpectedEnd { need: 9, have: 3 }, 91)
            .in_field("map")
            .in_field("server_info")
            .in_field("chunks")
            .in_field("QueryResponse");
        assert_eq!(
            err.to_string(),
            "QueryResponse.chunks.server_info.map at byte 91: need 9 bytes, have 3"
        );
    }

    #[test]
    fn indices_render_in_brackets() {
        let err = Error::new(ErrorKind::Invalid("x"), 4)
            .in_field("name")
            .at_index(3)
            .in_field("players");
        assert_eq!(err.path_string(), "players[3].name");
        assert_eq!(err.offset(), 4);
    }

    #[test]
    fn result_of_small_value_is_two_words_at_most() {
        assert!(std::mem::size_of::<Result<u32>>() <= 2 * std::mem::size_of::<usize>());
    }
}
