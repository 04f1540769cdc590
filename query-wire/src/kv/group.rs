//! What `#[kv(indexed)]` and `#[kv(rest)]` fields are made of: indexed keys (`player_3`) grouped
//! by their number, and unknown pairs kept in order.

use crate::error::Result;
use crate::text::TextEncoding;

use super::pairs::Pair;
use super::sink::KvSink;
use super::value::{FromValue, ToValue};
use super::{FromKeyValues, ToKeyValues};

/// Splits an indexed key into its base and number: `player_10` → (`player`, 10).
///
/// The number is decimal without leading zeros (`player_01` is not indexed, so it survives a
/// re-encode unchanged) and at most nine digits; the base is not empty.
///
/// ```
/// use query_wire::kv::split_index;
///
/// assert_eq!(split_index(b"frags_10"), Some((&b"frags"[..], 10)));
/// assert_eq!(split_index(b"sv_punkbuster"), None);
/// assert_eq!(split_index(b"tickets1"), None);
/// ```
pub fn split_index(key: &[u8]) -> Option<(&[u8], usize)> {
    let at = key.iter().rposition(|&b| b == b'_')?;
    let (base, digits) = (&key[..at], &key[at + 1..]);
    let well_formed = !base.is_empty()
        && (1..=9).contains(&digits.len())
        && digits.iter().all(u8::is_ascii_digit)
        && (digits.len() == 1 || digits[0] != b'0');
    if !well_formed {
        return None;
    }
    let n = digits
        .iter()
        .fold(0usize, |n, d| n * 10 + usize::from(d - b'0'));
    Some((base, n))
}

/// The pairs of one `#[kv(indexed)]` field while a container decodes, each with its element's
/// number and already under its base key.
///
/// Flat lists rather than a map of lists: servers number their players 0, 1, 2… and send
/// each player's keys together, so the numbers arrive in order and the pairs are grouped with
/// one sort of an almost sorted list, in three allocations whatever the player count.
#[derive(Debug, Default, Clone)]
pub struct IndexedGroup<'a> {
    /// The numbers of the elements that exist, ascending, each once.
    numbers: Vec<usize>,
    /// Every pair kept, with its element's number, in arrival order.
    pairs: Vec<(usize, Pair<'a>)>,
}

impl<'a> IndexedGroup<'a> {
    /// An empty group.
    pub fn new() -> Self {
        IndexedGroup::default()
    }

    /// Notes that element `n` exists (it has a key its type declares).
    #[inline]
    pub fn mark(&mut self, n: usize) {
        match self.numbers.last() {
            Some(&last) if last == n => {}
            None => self.numbers.push(n),
            Some(&last) if last < n => self.numbers.push(n),
            Some(_) => {
                if let Err(at) = self.numbers.binary_search(&n) {
                    self.numbers.insert(at, n);
                }
            }
        }
    }

    /// Whether element `n` exists.
    #[inline]
    pub fn contains(&self, n: usize) -> bool {
        self.numbers.last() == Some(&n) || self.numbers.binary_search(&n).is_ok()
    }

    /// Adds a pair, already under its base key, to element `n`.
    #[inline]
    pub fn push(&mut self, n: usize, pair: Pair<'a>) {
        self.mark(n);
        self.pairs.push((n, pair));
    }

    /// Decodes every element in number order; an error's path names the element's number.
    pub fn decode<F: IndexedField<'a>>(self, encoding: TextEncoding) -> Result<F> {
        let IndexedGroup { numbers, mut pairs } = self;
        // Stable: an element's pairs keep their order.
        pairs.sort_by_key(|&(n, _)| n);
        let sorted: Vec<Pair<'a>> = pairs.iter().map(|&(_, pair)| pair).collect();
        let mut elements = Vec::with_capacity(numbers.len());
        let mut at = 0;
        for n in numbers {
            let start = at;
            while pairs.get(at).is_some_and(|&(m, _)| m == n) {
                at += 1;
            }
            let element = F::Element::from_pairs(&sorted[start..at], Some(n), encoding)
                .map_err(|e| e.at_index(n))?;
            elements.push(element);
        }
        Ok(F::from_elements(elements))
    }
}

/// A field that holds an indexed group: `Vec<T>` where `T` derives `KeyValues`.
pub trait IndexedField<'a> {
    /// One element: a player, a team.
    type Element: FromKeyValues<'a>;
    /// The field from its elements, in number order.
    fn from_elements(elements: Vec<Self::Element>) -> Self;
}

/// Writing an indexed group: each element under its number.
pub trait ToIndexedField {
    /// Writes every element's pairs as `key_N`, where `N` is the element's `#[kv(index)]`
    /// field or else its position.
    fn write_elements<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        encoding: TextEncoding,
    ) -> Result<()>;
}

impl<'a, T: FromKeyValues<'a>> IndexedField<'a> for Vec<T> {
    type Element = T;

    fn from_elements(elements: Vec<T>) -> Self {
        elements
    }
}

impl<T: ToKeyValues> ToIndexedField for Vec<T> {
    fn write_elements<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        encoding: TextEncoding,
    ) -> Result<()> {
        for (position, element) in self.iter().enumerate() {
            let n = element.index().unwrap_or(position);
            element
                .write_pairs(sink, Some(n), encoding)
                .map_err(|e| e.at_index(n))?;
        }
        Ok(())
    }
}

/// A `#[kv(rest)]` field: keeps the pairs its container does not declare, in arrival order.
pub trait FromRest<'a>: Default {
    /// Keeps one more pair.
    fn push_pair(&mut self, pair: Pair<'a>, encoding: TextEncoding) -> Result<()>;
}

/// Writing a `#[kv(rest)]` field.
pub trait ToRest {
    /// Writes the kept pairs in order, suffixed with `_N` when `index` is `Some(N)`.
    fn write_rest<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        index: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()>;
}

/// Pairs as decoded keys and values, e.g. `Vec<(Cow<'a, str>, Cow<'a, str>)>`.
impl<'a, K: FromValue<'a>, V: FromValue<'a>> FromRest<'a> for Vec<(K, V)> {
    fn push_pair(&mut self, pair: Pair<'a>, encoding: TextEncoding) -> Result<()> {
        let at = self.len();
        let key = K::from_value(pair.key, pair.key_offset, encoding).map_err(|e| e.at_index(at))?;
        let value =
            V::from_value(pair.value, pair.value_offset, encoding).map_err(|e| e.at_index(at))?;
        self.push((key, value));
        Ok(())
    }
}

impl<K: ToValue, V: ToValue> ToRest for Vec<(K, V)> {
    fn write_rest<S: KvSink + ?Sized>(
        &self,
        sink: &mut S,
        index: Option<usize>,
        encoding: TextEncoding,
    ) -> Result<()> {
        for (i, (key, value)) in self.iter().enumerate() {
            let at = sink.position();
            key.to_value(encoding, at, |key| {
                value.to_value(encoding, at, |value| sink.put_pair(key, index, value))
            })
            .map_err(|e| e.at_index(i))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_keys() {
        assert_eq!(split_index(b"player_0"), Some((&b"player"[..], 0)));
        assert_eq!(split_index(b"team_t_12"), Some((&b"team_t"[..], 12)));
        assert_eq!(split_index(b"player_01"), None);
        assert_eq!(split_index(b"player_"), None);
        assert_eq!(split_index(b"_3"), None);
        assert_eq!(split_index(b"x_1234567890"), None);
        assert_eq!(split_index(b"x_123456789"), Some((&b"x"[..], 123_456_789)));
        assert_eq!(split_index(b"x_+1"), None);
    }

    #[test]
    fn rest_keeps_order_and_duplicates() {
        use std::borrow::Cow;
        let pairs = super::super::split_pairs(b"\\b\\2\\a\\1\\b\\3").unwrap();
        let mut rest: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
        for pair in &pairs {
            rest.push_pair(*pair, TextEncoding::Windows1252).unwrap();
        }
        assert_eq!(
            rest,
            [
                ("b".into(), "2".into()),
                ("a".into(), "1".into()),
                ("b".into(), "3".into())
            ]
        );
        let mut out = Vec::new();
        rest.write_rest(&mut out, Some(4), TextEncoding::Windows1252)
            .unwrap();
        assert_eq!(out, b"\\b_4\\2\\a_4\\1\\b_4\\3");
    }

    #[test]
    fn rest_errors_name_the_position() {
        let pairs = super::super::split_pairs(b"\\a\\1\\b\\\xff").unwrap();
        let mut rest: Vec<(String, String)> = Vec::new();
        rest.push_pair(pairs[0], TextEncoding::Utf8).unwrap();
        let err = rest.push_pair(pairs[1], TextEncoding::Utf8).unwrap_err();
        assert_eq!(err.path_string(), "[1]");
        assert_eq!(err.offset(), 7);
    }
}
