//! Splitting `\key\value\key\value` text into pairs that borrow from the input.

use crate::error::{Error, ErrorKind, Result};

/// The byte that separates keys and values.
pub const DELIMITER: u8 = b'\\';

/// One `\key\value` pair, borrowed from the input, with the absolute offsets of both halves.
///
/// Keys and values are the raw bytes between delimiters: nothing is trimmed or decoded here
/// (GameSpy values keep their leading spaces, `\ping_2\ 152`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pair<'a> {
    /// The key's bytes.
    pub key: &'a [u8],
    /// The value's bytes, possibly empty.
    pub value: &'a [u8],
    /// Absolute offset of the key's first byte.
    pub key_offset: usize,
    /// Absolute offset of the value's first byte.
    pub value_offset: usize,
}

impl<'a> Pair<'a> {
    /// The same pair under a shorter key (the `player` of `player_3`), offsets unchanged, so
    /// errors inside an indexed group still point at the original bytes.
    #[inline]
    pub fn with_key(self, key: &'a [u8]) -> Self {
        Pair { key, ..self }
    }

    /// Absolute offset just past the value.
    #[inline]
    pub fn end_offset(&self) -> usize {
        self.value_offset + self.value.len()
    }

    /// The pair's encoded size, `\key\value`.
    #[inline]
    pub fn encoded_len(&self) -> usize {
        2 + self.key.len() + self.value.len()
    }
}

/// Where a [`Pair`] lies in its text, as offsets from the text's first byte: what to keep of
/// text split once and held (a datagram waiting for the other parts of its reply), so that its
/// pairs can be had again with [`pair`](PairSpan::pair) instead of splitting it a second time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PairSpan {
    key_start: usize,
    key_end: usize,
    value_end: usize,
}

impl PairSpan {
    /// The span of `pair`, which was split from text whose first byte is at absolute offset
    /// `origin`.
    #[inline]
    pub fn of(pair: &Pair<'_>, origin: usize) -> Self {
        let key_start = pair.key_offset - origin;
        PairSpan {
            key_start,
            key_end: key_start + pair.key.len(),
            value_end: pair.end_offset() - origin,
        }
    }

    /// The pair again, borrowed from `text` (the text it was split from, its first byte now at
    /// absolute offset `origin`).
    ///
    /// # Panics
    ///
    /// When `text` is shorter than the text the span came from.
    #[inline]
    pub fn pair<'a>(&self, text: &'a [u8], origin: usize) -> Pair<'a> {
        let value_start = self.key_end + 1;
        Pair {
            key: &text[self.key_start..self.key_end],
            value: &text[value_start..self.value_end],
            key_offset: origin + self.key_start,
            value_offset: origin + value_start,
        }
    }
}

/// An iterator over the pairs of `\key\value` text; see [`pairs`].
///
/// After the first error it yields nothing more.
#[derive(Debug, Clone)]
pub struct Pairs<'a> {
    input: &'a [u8],
    /// Index of the delimiter in front of the next key, or `input.len()` when done.
    pos: usize,
    /// Absolute offset of `input[0]`.
    origin: usize,
    failed: bool,
}

/// Splits `\key\value\key\value` text into borrowed [`Pair`]s.
///
/// - Values may be empty (`\face_2\\ngsecret_2\true`) and keep every byte, spaces included.
/// - The trailing delimiter is optional: `\a\1` and `\a\1\` hold the same pair.
/// - A key with no delimiter after it (`\a\1\b`) is an error at the key's offset, and so is
///   text that does not start with the delimiter.
///
/// Empty input holds no pairs.
///
/// ```
/// use query_wire::kv::pairs;
///
/// let all: Vec<_> = pairs(b"\\hostname\\My Server\\ping_0\\ 52\\final\\")
///     .map(|p| p.map(|p| (p.key, p.value)))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(all, [
///     (&b"hostname"[..], &b"My Server"[..]),
///     (b"ping_0", b" 52"),
///     (b"final", b""),
/// ]);
///
/// let err = pairs(b"\\a\\1\\b").last().unwrap().unwrap_err();
/// assert_eq!(err.offset(), 5);
/// # Ok::<(), query_wire::Error>(())
/// ```
pub fn pairs(input: &[u8]) -> Pairs<'_> {
    Pairs::with_origin(input, 0)
}

/// Collects [`pairs`] into a `Vec`, stopping at the first error.
///
/// The `Vec` is allocated once: every pair takes two delimiters (the last value's closing one
/// may be missing), so half the delimiters, rounded up, is room for all of them. Counting them
/// first is a vectorised pass; collecting without it grew the `Vec` five times on a 1 KB
/// GameSpy datagram.
pub fn split_pairs(input: &[u8]) -> Result<Vec<Pair<'_>>> {
    let mut out = Vec::with_capacity(pair_capacity(input));
    for pair in pairs(input) {
        out.push(pair?);
    }
    Ok(out)
}

/// Room for every pair of `input`: half its delimiters, rounded up (every pair takes two, the
/// last value's closing one may be missing). A vectorised count, for sizing a list once.
pub fn pair_capacity(input: &[u8]) -> usize {
    memchr::memchr_iter(DELIMITER, input).count().div_ceil(2)
}

impl<'a> Pairs<'a> {
    /// Pairs of `input`, whose first byte is at absolute offset `origin` (for text that is one
    /// part of a larger reply).
    pub fn with_origin(input: &'a [u8], origin: usize) -> Self {
        Pairs {
            input,
            pos: 0,
            origin,
            failed: false,
        }
    }

    #[cold]
    fn fail(&mut self, kind: ErrorKind, at: usize) -> Option<Result<Pair<'a>>> {
        self.failed = true;
        self.pos = self.input.len();
        Some(Err(Error::new(kind, self.origin + at)))
    }
}

fn find_delimiter(bytes: &[u8], from: usize) -> Option<usize> {
    bytes[from..]
        .iter()
        .position(|&b| b == DELIMITER)
        .map(|i| from + i)
}

impl<'a> Iterator for Pairs<'a> {
    type Item = Result<Pair<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let input = self.input;
        if self.failed || self.pos >= input.len() {
            return None;
        }
        if input[self.pos] != DELIMITER {
            // Only possible at the very start: every later position is a delimiter by construction.
            return self.fail(
                ErrorKind::Invalid("key/value text must start with a backslash"),
                self.pos,
            );
        }
        let key_start = self.pos + 1;
        if key_start == input.len() {
            // A trailing delimiter after the last value.
            self.pos = input.len();
            return None;
        }
        let Some(key_end) = find_delimiter(input, key_start) else {
            return self.fail(ErrorKind::Invalid("key without a value"), key_start);
        };
        let value_start = key_end + 1;
        let value_end = find_delimiter(input, value_start).unwrap_or(input.len());
        self.pos = value_end;
        Some(Ok(Pair {
            key: &input[key_start..key_end],
            value: &input[value_start..value_end],
            key_offset: self.origin + key_start,
            value_offset: self.origin + value_start,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_values(input: &[u8]) -> Result<Vec<(&[u8], &[u8])>> {
        pairs(input).map(|p| p.map(|p| (p.key, p.value))).collect()
    }

    #[test]
    fn empty_values_and_missing_trailing_delimiter() {
        assert_eq!(
            keys_values(b"\\face_2\\\\ngsecret_2\\true").unwrap(),
            [(&b"face_2"[..], &b""[..]), (b"ngsecret_2", b"true")]
        );
        assert_eq!(
            keys_values(b"\\a\\1\\").unwrap(),
            keys_values(b"\\a\\1").unwrap()
        );
    }

    #[test]
    fn leading_spaces_are_kept_raw() {
        let all = split_pairs(b"\\ping_2\\ 152").unwrap();
        assert_eq!(all[0].value, b" 152");
        assert_eq!(all[0].key_offset, 1);
        assert_eq!(all[0].value_offset, 8);
        assert_eq!(all[0].end_offset(), 12);
    }

    #[test]
    fn final_marker_before_queryid() {
        assert_eq!(
            keys_values(b"\\final\\\\queryid\\1142.3").unwrap(),
            [(&b"final"[..], &b""[..]), (b"queryid", b"1142.3")]
        );
    }

    #[test]
    fn empty_input_and_lone_delimiter_hold_nothing() {
        assert!(keys_values(b"").unwrap().is_empty());
        assert!(keys_values(b"\\").unwrap().is_empty());
    }

    #[test]
    fn odd_trailing_key_is_an_error_at_its_offset() {
        let err = split_pairs(b"\\a\\1\\bcd").unwrap_err();
        assert_eq!(err.offset(), 5);
        assert_eq!(err.kind(), &ErrorKind::Invalid("key without a value"));
    }

    #[test]
    fn text_must_start_with_the_delimiter() {
        let err = split_pairs(b"a\\1").unwrap_err();
        assert_eq!(err.offset(), 0);
        let err = Pairs::with_origin(b"x", 40).next().unwrap().unwrap_err();
        assert_eq!(err.offset(), 40);
    }

    #[test]
    fn nothing_after_an_error() {
        let mut it = pairs(b"\\a");
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
    }

    #[test]
    fn spans_give_the_same_pairs_back() {
        let text = b"\\hostname\\Fort\\face_2\\\\ping_0\\ 52";
        for pair in Pairs::with_origin(text, 30) {
            let pair = pair.unwrap();
            let span = PairSpan::of(&pair, 30);
            assert_eq!(span.pair(text, 30), pair);
            let moved = span.pair(text, 7);
            assert_eq!((moved.key, moved.value), (pair.key, pair.value));
            assert_eq!(moved.value_offset, pair.value_offset - 23);
        }
    }

    #[test]
    fn offsets_are_absolute_with_an_origin() {
        let p = Pairs::with_origin(b"\\k\\v", 100).next().unwrap().unwrap();
        assert_eq!((p.key_offset, p.value_offset), (101, 103));
        assert_eq!(p.encoded_len(), 4);
    }
}
