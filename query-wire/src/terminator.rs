//! What ends a value or a list on the wire: one byte (`b'\n'`, `b' '`), a byte string
//! (`b"\r\n"`, `b"\\final\\"`), or any of several ([`AnyOf`]: a line ended by `\n`, `\0` or
//! `\n\0`). The derive's `until = ..` takes any of them.

/// A byte, a byte string or a choice of byte strings that ends a value or a list; see
/// [`Reader::until_bytes`] and [`Writer::put_until_bytes`].
///
/// [`Reader::until_bytes`]: crate::Reader::until_bytes
/// [`Writer::put_until_bytes`]: crate::Writer::put_until_bytes
///
/// ```
/// use query_wire::{AnyOf, Terminator};
///
/// assert_eq!(b'\n'.end_bytes(), b"\n");
/// assert_eq!(b"\r\n".find_in(b"a\r\nb"), Some(1));
/// // Of several, the first place where one starts, and there the longest.
/// assert_eq!(AnyOf([b"\n", b"\n\0", b"\0"]).find_end(b"ab\n\0"), Some((2, 2)));
/// ```
pub trait Terminator: Copy {
    /// The bytes written after a value; never empty for a usable terminator. For a choice,
    /// the first alternative.
    fn end_bytes(&self) -> &[u8];

    /// Where the terminator first starts in `haystack`.
    #[inline]
    fn find_in(&self, haystack: &[u8]) -> Option<usize> {
        match self.end_bytes() {
            [byte] => memchr::memchr(*byte, haystack),
            end => memchr::memmem::find(haystack, end),
        }
    }

    /// How many bytes it takes on the wire when written.
    #[inline]
    fn end_len(&self) -> usize {
        self.end_bytes().len()
    }

    /// Where the terminator first starts in `haystack`, and how many bytes it takes there
    /// (which, for a choice, depends on the alternative found).
    #[inline]
    fn find_end(&self, haystack: &[u8]) -> Option<(usize, usize)> {
        self.find_in(haystack).map(|at| (at, self.end_len()))
    }

    /// How many bytes of terminator `bytes` starts with, if it starts with one.
    #[inline]
    fn starts(&self, bytes: &[u8]) -> Option<usize> {
        bytes.starts_with(self.end_bytes()).then(|| self.end_len())
    }

    /// Alternative `i` of the terminator: the bytes of each byte string that ends a value,
    /// `None` past the last. One alternative, [`end_bytes`](Terminator::end_bytes), unless
    /// the terminator is a choice.
    #[inline]
    fn alternative(&self, i: usize) -> Option<&[u8]> {
        (i == 0).then(|| self.end_bytes())
    }
}

/// Any of several byte strings ends the value or the list: decoding stops at the first place
/// where one of them starts, taking there the longest that matches (`\n\0` rather than `\n`
/// when both are listed); encoding writes the first. The derive builds one from a list of
/// byte strings: `until = [b"\n", b"\n\0", b"\0"]`.
///
/// ```
/// use query_wire::{AnyOf, Reader};
///
/// const LINE_END: AnyOf<'static, 3> = AnyOf([b"\n", b"\n\0", b"\0"]);
/// let mut r = Reader::new(b"a\0b\n\0c");
/// assert_eq!(r.until_bytes(LINE_END, None)?, b"a");
/// assert_eq!(r.until_bytes(LINE_END, None)?, b"b");
/// assert_eq!(r.peek_rest(), b"c");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AnyOf<'t, const N: usize>(pub [&'t [u8]; N]);

impl<const N: usize> Terminator for AnyOf<'_, N> {
    #[inline]
    fn end_bytes(&self) -> &[u8] {
        self.0.first().copied().unwrap_or_default()
    }

    #[inline]
    fn find_in(&self, haystack: &[u8]) -> Option<usize> {
        self.find_end(haystack).map(|(at, _)| at)
    }

    #[inline]
    fn find_end(&self, haystack: &[u8]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for end in self.0.iter().filter(|end| !end.is_empty()) {
            // Only as far as an earlier find reaches: a later start cannot win.
            let reach = best.map_or(haystack.len(), |(at, _)| {
                (at + end.len()).min(haystack.len())
            });
            let found = match end {
                [byte] => memchr::memchr(*byte, &haystack[..reach]),
                end => memchr::memmem::find(&haystack[..reach], end),
            };
            if let Some(at) = found {
                if best
                    .is_none_or(|(best_at, len)| at < best_at || (at == best_at && end.len() > len))
                {
                    best = Some((at, end.len()));
                }
            }
        }
        best
    }

    #[inline]
    fn starts(&self, bytes: &[u8]) -> Option<usize> {
        self.0
            .iter()
            .filter(|end| !end.is_empty() && bytes.starts_with(end))
            .map(|end| end.len())
            .max()
    }

    #[inline]
    fn alternative(&self, i: usize) -> Option<&[u8]> {
        self.0.get(i).copied()
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

/// Where `bytes` followed by `end` would be cut on decode if not at `bytes.len()`: a
/// terminator inside the value, or one that starts in the value's last bytes and ends in
/// the terminator written after it (`a\r` before `\r\n`... cannot, but `xa` before `aa` can).
/// For a choice, the earliest of any alternative's.
#[inline]
pub(crate) fn early_end<E: Terminator>(bytes: &[u8], end: E) -> Option<usize> {
    let written = end.end_bytes();
    (0..)
        .map_while(|i| end.alternative(i))
        .filter(|alternative| !alternative.is_empty())
        .filter_map(|alternative| early_end_of(bytes, alternative, written))
        .min()
}

/// [`early_end`] for one alternative, `written` being what follows the value.
fn early_end_of(bytes: &[u8], alternative: &[u8], written: &[u8]) -> Option<usize> {
    let inside = match alternative {
        [byte] => memchr::memchr(*byte, bytes),
        _ => memchr::memmem::find(bytes, alternative),
    };
    if inside.is_some() {
        return inside;
    }
    (1..alternative.len().min(bytes.len() + 1))
        .map(|k| bytes.len() - k)
        .rev()
        .find(|&at| {
            let k = bytes.len() - at;
            let rest = &alternative[k..];
            bytes[at..] == alternative[..k] && written.starts_with(rest)
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

    const LINE_END: AnyOf<'static, 3> = AnyOf([b"\n", b"\n\0", b"\0"]);

    #[test]
    fn a_choice_ends_at_the_first_start_and_there_at_the_longest() {
        assert_eq!(LINE_END.find_end(b"ab\n\0"), Some((2, 2)));
        assert_eq!(LINE_END.find_end(b"ab\n"), Some((2, 1)));
        assert_eq!(LINE_END.find_end(b"a\0\n\0"), Some((1, 1)));
        assert_eq!(LINE_END.find_end(b"abc"), None);
        // The longer listed first changes nothing.
        assert_eq!(AnyOf([b"\n\0", b"\n"]).find_end(b"x\n\0"), Some((1, 2)));
        assert_eq!(AnyOf([b"\n\0", b"\n"]).find_end(b"x\n"), Some((1, 1)));
        assert_eq!(LINE_END.starts(b"\n\0x"), Some(2));
        assert_eq!(LINE_END.starts(b"\0\n"), Some(1));
        assert_eq!(LINE_END.starts(b"x\n"), None);
        assert_eq!(LINE_END.end_bytes(), b"\n");
        assert_eq!(LINE_END.end_len(), 1);
    }

    #[test]
    fn a_value_holding_any_alternative_would_be_cut() {
        assert_eq!(early_end(b"ab\0", LINE_END), Some(2));
        assert_eq!(early_end(b"a\nb", LINE_END), Some(1));
        assert_eq!(early_end(b"abc", LINE_END), None);
        // `\r` then the written `\n` reads back as `\r\n`.
        assert_eq!(early_end(b"a\r", AnyOf([b"\n", b"\r\n"])), Some(1));
        assert_eq!(early_end(b"a\r", AnyOf([b"\n", b"\rx"])), None);
    }
}
