//! The numbered parts of one reply, as every protocol that splits replies numbers them.
//!
//! A2S, GameSpy v1 and 3 and SQP cut a long reply into datagrams carrying a part number and,
//! on every part or only on the last, the number of parts. [`NumberedParts`] keeps them until
//! the reply is whole: in any order, each number once, within a cap on numbers and bytes. What
//! a protocol does before (which datagrams belong to which reply) and after (joining,
//! decompressing, decoding) stays with the protocol.

use std::collections::BTreeMap;

use crate::{Error, ErrorKind, Result};

/// What [`NumberedParts::file`] did with a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filed {
    /// A new part, kept.
    New,
    /// A number already held: the copy was dropped and counts toward no cap.
    Duplicate,
}

/// The parts of one reply, numbered from 0, held until all have arrived.
///
/// Strict where a mistake would mislead: a part numbered at or past the cap or past the reply's
/// known last part, or whose count of parts contradicts an earlier one, is refused and changes
/// nothing. Duplicates are dropped before any cap is checked, so copies of a part (a server
/// that resends, or anyone forging the server's address) cannot fill the reply's room.
///
/// ```
/// use query_wire::parts::{Filed, NumberedParts};
///
/// let mut parts = NumberedParts::new(8, 1 << 16);
/// // Part 2 of 3 first, then a copy of it, then the others.
/// assert_eq!(parts.file(2, Some(3), 3, || "rld")?, Filed::New);
/// assert_eq!(parts.file(2, Some(3), 3, || "rld")?, Filed::Duplicate);
/// assert_eq!(parts.missing(), [0, 1]);
/// parts.file(0, Some(3), 3, || "hel")?;
/// assert!(parts.file(3, Some(3), 1, || "!").is_err()); // past the last part
/// parts.file(1, Some(3), 3, || "lowo")?;
/// assert!(parts.is_complete());
/// assert_eq!(parts.in_order().copied().collect::<String>(), "helloworld");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct NumberedParts<T> {
    parts: BTreeMap<u32, T>,
    /// How many parts the reply has, once a part said so.
    total: Option<u32>,
    max_parts: u32,
    max_bytes: usize,
    bytes: usize,
}

impl<T> NumberedParts<T> {
    /// No part yet; part numbers run below `max_parts`, and the parts kept add up to at most
    /// `max_bytes` (as the caller counts them in [`file`](Self::file)).
    pub const fn new(max_parts: u32, max_bytes: usize) -> Self {
        NumberedParts {
            parts: BTreeMap::new(),
            total: None,
            max_parts,
            max_bytes,
            bytes: 0,
        }
    }

    /// Keeps part `number`, built by `part` only when it is kept; `total` is how many parts
    /// the reply has when this part says so (every A2S and SQP part, GameSpy's last part), and
    /// `len` the bytes it counts toward the cap. Errors (in field `parts`, offset 0) change
    /// nothing.
    pub fn file(
        &mut self,
        number: u32,
        total: Option<u32>,
        len: usize,
        part: impl FnOnce() -> T,
    ) -> Result<Filed> {
        let refuse = |kind| Err(Error::new(kind, 0).in_field("parts"));
        if number >= self.max_parts {
            let reason = "part numbers run below the cap on parts";
            return refuse(ErrorKind::OutOfRange {
                value: u64::from(number),
                reason,
            });
        }
        if self.parts.contains_key(&number) {
            return Ok(Filed::Duplicate);
        }
        if let Some(total) = total {
            if total == 0 || total > self.max_parts {
                let reason = "a reply has from one part to the cap on parts";
                return refuse(ErrorKind::OutOfRange {
                    value: u64::from(total),
                    reason,
                });
            }
            if self.total.is_some_and(|held| held != total) {
                let reason = "the parts disagree on how many parts the reply has";
                return refuse(ErrorKind::Invalid(reason));
            }
            if let Some((&highest, _)) = self.parts.last_key_value() {
                if highest >= total {
                    let reason = "a part held is numbered past the last part";
                    return refuse(ErrorKind::Invalid(reason));
                }
            }
        }
        if total.or(self.total).is_some_and(|total| number >= total) {
            let reason = "a part is numbered past the last part";
            return refuse(ErrorKind::OutOfRange {
                value: u64::from(number),
                reason,
            });
        }
        let bytes = self.bytes.saturating_add(len);
        if bytes > self.max_bytes {
            return refuse(ErrorKind::TooLong {
                len: bytes,
                max: self.max_bytes,
            });
        }
        self.parts.insert(number, part());
        self.bytes = bytes;
        if total.is_some() {
            self.total = total;
        }
        Ok(Filed::New)
    }

    /// How many parts the reply has, once a part said so.
    pub fn total(&self) -> Option<u32> {
        self.total
    }

    /// How many distinct parts are held.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether no part is held.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The bytes the parts held count toward the cap.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Part `number`, if held.
    pub fn get(&self, number: u32) -> Option<&T> {
        self.parts.get(&number)
    }

    /// Whether every part up to the last is held.
    pub fn is_complete(&self) -> bool {
        self.total
            .is_some_and(|total| self.parts.len() == total as usize)
    }

    /// Part numbers known to be missing: before the last part when its number is known,
    /// otherwise before the highest held (more may follow it).
    pub fn missing(&self) -> Vec<u32> {
        let end = self
            .total
            .or_else(|| self.parts.keys().next_back().map(|n| n + 1))
            .unwrap_or(0);
        (0..end).filter(|n| !self.parts.contains_key(n)).collect()
    }

    /// The parts held, in number order.
    pub fn in_order(&self) -> impl Iterator<Item = &T> {
        self.parts.values()
    }

    /// The parts held with their numbers, in number order.
    pub fn numbered(&self) -> impl Iterator<Item = (u32, &T)> {
        self.parts.iter().map(|(&number, part)| (number, part))
    }

    /// The parts from 0 up to the first missing one: the start of the reply.
    pub fn prefix(&self) -> impl Iterator<Item = &T> {
        self.parts
            .iter()
            .enumerate()
            .take_while(|(index, (&number, _))| *index as u32 == number)
            .map(|(_, (_, part))| part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_never_fill_the_room_of_a_reply() {
        let mut parts = NumberedParts::new(4, 10);
        parts.file(0, None, 4, || 0).unwrap();
        for _ in 0..100 {
            assert_eq!(parts.file(0, None, 4, || 1).unwrap(), Filed::Duplicate);
        }
        assert_eq!((parts.len(), parts.bytes()), (1, 4));
        assert_eq!(parts.get(0), Some(&0));
        parts.file(1, Some(2), 4, || 2).unwrap();
        assert!(parts.is_complete());
    }

    #[test]
    fn refusals_change_nothing() {
        let mut parts = NumberedParts::new(4, 10);
        parts.file(2, None, 4, || ()).unwrap();
        // Number past the cap, a total of 0 or past the cap, a total below a part held,
        // bytes past the cap.
        assert!(parts.file(4, None, 1, || ()).is_err());
        assert!(parts.file(0, Some(0), 1, || ()).is_err());
        assert!(parts.file(0, Some(5), 1, || ()).is_err());
        assert!(parts.file(0, Some(2), 1, || ()).is_err());
        assert!(parts.file(0, None, 7, || ()).is_err());
        assert_eq!((parts.len(), parts.bytes(), parts.total()), (1, 4, None));
        parts.file(1, Some(3), 1, || ()).unwrap();
        assert!(parts.file(0, Some(4), 1, || ()).is_err());
        assert_eq!(parts.missing(), [0]);
        assert_eq!(parts.prefix().count(), 0);
        parts.file(0, None, 1, || ()).unwrap();
        assert_eq!(parts.prefix().count(), 3);
    }
}
