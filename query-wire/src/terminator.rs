//! What ends a value or a list on the wire: one byte (`b'\n'`, `b' '`) or a byte string
//! (`b"\r\n"`, `b"\\final\\"`). The derive's `until = ..` takes either.

/// A byte or a byte string that ends a value or a list; see [`Reader::until_bytes`] and
/// [`Writer::put_until_bytes`].
///
/// [`Reader::until_bytes`]: crate::Reader::until_bytes
/// [`Writer::put_until_bytes`]: crate::Writer::put_until_bytes
///
/// ```
/// use query_wire::Terminator;
///
/// assert_eq!(b'\n'.end_bytes(), b"\n");
/// assert_eq!(b"\r\n".find_in(b"a\r\nb"), Some(1));
/// ```
pub trait Terminator: Copy {
    /// The bytes of the terminator; never empty for a usable one.
    fn end_bytes(&self) -> &[u8];

    /// Where the terminator first starts in `haystack`.
    #[inline]
    fn find_in(&self, haystack: &[u8]) -> Option<usize> {
        match self.end_bytes() {
            [byte] => memchr::memchr(*byte, haystack),
            end => memchr::memmem::find(haystack, end),
        }
    }

    /// How many bytes it takes on the wire.
    #[inline]
    fn end_len(&self) -> usize {
        self.end_bytes().len()
    }
}

impl Terminator for u8 {
    #[inline]
    fn end_bytes(&self) -> &[u8] {
        std::slice::from_ref(self)
    }
}

impl<const N: usize> Terminator for &[u8; N] {
    #[inline]
    fn end_bytes(&self) -> &[u8] {
        &self[..]
    }
}

impl Terminator for &[u8] {
    #[inline]
    fn end_bytes(&self) -> &[u8] {
        self
    }
}

/// Where `bytes` followed by `end` would be cut on decode if not at `bytes.len()`: the
/// terminator inside the value, or one that starts in the value's last bytes and ends in
/// the terminator written after it (`a\r` before `\r\n`... cannot, but `xa` before `aa` can).
#[inline]
pub(crate) fn early_end<E: Terminator>(bytes: &[u8], end: E) -> Option<usize> {
    if let Some(at) = end.find_in(bytes) {
        return Some(at);
    }
    let end = end.end_bytes();
    (1..end.len().min(bytes.len() + 1))
        .map(|k| bytes.len() - k)
        .rev()
        .find(|&at| {
            let k = bytes.len() - at;
            bytes[at..] == end[..k] && end[..end.len() - k] == end[k..]
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_single_bytes_and_strings() {
        assert_eq!(b' '.find_in(b"12 3"), Some(2));
        assert_eq!(b"\\final\\".find_in(b"\\a\\b\\final\\"), Some(4));
        assert_eq!((&b"ab"[..]).find_in(b"xxa"), None);
        assert_eq!(b"ab".end_len(), 2);
    }

    #[test]
    fn an_end_straddling_the_value_and_its_terminator_is_found() {
        assert_eq!(early_end(b"xa", b"aa"), Some(1));
        assert_eq!(early_end(b"x\r", b"\r\n"), None);
        assert_eq!(early_end(b"x\r\n", b"\r\n"), Some(1));
        assert_eq!(early_end(b"", b"aa"), None);
        assert_eq!(early_end(b"a", b"aaa"), Some(0));
        assert_eq!(early_end(b"abc", b'\n'), None);
    }
}
