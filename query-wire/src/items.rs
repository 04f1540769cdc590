//! What a repeated field is encoded from: a `Vec`, a slice, an array, or elements made on the
//! fly from whatever a responder holds, without collecting them first.
//!
//! A derived type decodes a repeat into a `Vec<T>`; its view (`#[wire(view = ...)]`) encodes
//! the same field from any [`Items`]. [`map`] makes each element from an item of a borrowed
//! slice, [`from_fn`] from an index: both make the element when the encoder asks for it, so a
//! reply built from a server's state allocates nothing.
//!
//! ```
//! use query_wire::items::{self, Items};
//!
//! struct PlayerState { name: String, score: i64 }
//! let state = [
//!     PlayerState { name: "Ana".into(), score: 7 },
//!     PlayerState { name: "Bo".into(), score: -2 },
//! ];
//! // What the wire carries: the name and a saturated score, borrowed from the state.
//! let wire = items::map(&state, |p| (p.name.as_str(), i32::try_from(p.score).unwrap_or(i32::MIN)));
//! assert_eq!(wire.count(), 2);
//! assert_eq!(wire.with_item(1, |&(name, score)| format!("{name} {score}")), Some("Bo -2".into()));
//! ```

use std::convert::Infallible;
use std::fmt;

/// A sequence of elements a repeated field can be encoded from: its count up front, then each
/// element in order, as often as the encoder asks (once to size the packet, once to write it).
///
/// Implemented for `Vec<T>`, `[T]`, `[T; N]` and references to them, and by the adaptors of
/// this module. Elements are handed out by reference, so an implementation may build each one
/// on its own stack (a wire struct borrowing from the state) instead of storing it.
pub trait Items {
    /// The element type.
    type Item;

    /// How many elements there are.
    fn count(&self) -> usize;

    /// Calls `f` with element `index` (from 0), or returns `None` when there is no such element.
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&Self::Item) -> R) -> Option<R>;

    /// Calls `f` with each element and its index, in order, stopping at the first error.
    fn try_for_each<E>(
        &self,
        mut f: impl FnMut(usize, &Self::Item) -> Result<(), E>,
    ) -> Result<(), E> {
        for index in 0..self.count() {
            if let Some(result) = self.with_item(index, |item| f(index, item)) {
                result?;
            }
        }
        Ok(())
    }

    /// Calls `f` with each element and its index, in order.
    fn for_each(&self, mut f: impl FnMut(usize, &Self::Item)) {
        let done: Result<(), Infallible> = self.try_for_each(|index, item| {
            f(index, item);
            Ok(())
        });
        match done {
            Ok(()) => {}
            Err(never) => match never {},
        }
    }
}

impl<T> Items for [T] {
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.get(index).map(f)
    }

    #[inline]
    fn try_for_each<E>(&self, mut f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        for (index, item) in self.iter().enumerate() {
            f(index, item)?;
        }
        Ok(())
    }
}

impl<T> Items for Vec<T> {
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.as_slice().with_item(index, f)
    }

    #[inline]
    fn try_for_each<E>(&self, f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        self.as_slice().try_for_each(f)
    }
}

impl<T, const N: usize> Items for [T; N] {
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        N
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.as_slice().with_item(index, f)
    }

    #[inline]
    fn try_for_each<E>(&self, f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        self.as_slice().try_for_each(f)
    }
}

impl<I: Items + ?Sized> Items for &I {
    type Item = I::Item;

    #[inline]
    fn count(&self) -> usize {
        (**self).count()
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&I::Item) -> R) -> Option<R> {
        (**self).with_item(index, f)
    }

    #[inline]
    fn try_for_each<E>(&self, f: impl FnMut(usize, &I::Item) -> Result<(), E>) -> Result<(), E> {
        (**self).try_for_each(f)
    }
}

/// The elements `f(&source[i])`, made when asked for; see [`map`].
#[derive(Clone, Copy)]
pub struct Mapped<'s, S, F> {
    source: &'s [S],
    f: F,
}

/// Elements made by `f` from each item of `source`, in order, when the encoder asks for them.
///
/// ```
/// use query_wire::items::{self, Items};
///
/// let scores = [3i64, -1, 70_000];
/// let wire = items::map(&scores, |&s| u16::try_from(s).unwrap_or(0));
/// let mut seen = Vec::new();
/// wire.for_each(|_, &s| seen.push(s));
/// assert_eq!(seen, [3, 0, 0]);
/// ```
pub fn map<'s, S, T, F>(source: &'s [S], f: F) -> Mapped<'s, S, F>
where
    F: Fn(&'s S) -> T,
{
    Mapped { source, f }
}

impl<'s, S, T, F> Items for Mapped<'s, S, F>
where
    F: Fn(&'s S) -> T,
{
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        self.source.len()
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        let item = (self.f)(self.source.get(index)?);
        Some(f(&item))
    }

    #[inline]
    fn try_for_each<E>(&self, mut f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        for (index, source) in self.source.iter().enumerate() {
            f(index, &(self.f)(source))?;
        }
        Ok(())
    }
}

impl<S, F> fmt::Debug for Mapped<'_, S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mapped")
            .field("count", &self.source.len())
            .finish_non_exhaustive()
    }
}

/// The elements `f(0)`, `f(1)`, ... `f(count - 1)`, made when asked for; see [`from_fn`].
#[derive(Clone, Copy)]
pub struct FromFn<F> {
    count: usize,
    f: F,
}

/// `count` elements made by `f` from their index, when the encoder asks for them: for sources
/// that are not one slice (an ordered map, the cells of a table, the first rows that fit).
///
/// ```
/// use query_wire::items::{self, Items};
///
/// let names = ["a", "b", "c"];
/// let columns = 2;
/// // Row-major cells of a 3 × 2 table.
/// let cells = items::from_fn(names.len() * columns, |i| (names[i / columns], i % columns));
/// assert_eq!(cells.count(), 6);
/// assert_eq!(cells.with_item(5, |&cell| cell), Some(("c", 1)));
/// assert_eq!(cells.with_item(6, |&cell| cell), None);
/// ```
pub fn from_fn<T, F>(count: usize, f: F) -> FromFn<F>
where
    F: Fn(usize) -> T,
{
    FromFn { count, f }
}

impl<T, F> Items for FromFn<F>
where
    F: Fn(usize) -> T,
{
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        self.count
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        (index < self.count).then(|| f(&(self.f)(index)))
    }

    #[inline]
    fn try_for_each<E>(&self, mut f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        for index in 0..self.count {
            f(index, &(self.f)(index))?;
        }
        Ok(())
    }
}

impl<F> fmt::Debug for FromFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FromFn")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

/// The cells of a table, row by row; see [`cells`].
#[derive(Clone, Copy)]
pub struct Cells<F> {
    rows: usize,
    columns: usize,
    f: F,
}

/// The `rows × columns` cells of a table in row-major order, cell `(row, column)` made by
/// `f(row, column)` when the encoder asks for it: for a table that is sent as one flat list
/// of values, as SQP's player table is. Walking the cells in order costs no division.
///
/// ```
/// use query_wire::items::{self, Items};
///
/// let names = ["a", "b", "c"];
/// let cells = items::cells(names.len(), 2, |row, column| (names[row], column));
/// assert_eq!(cells.count(), 6);
/// assert_eq!(cells.with_item(5, |&cell| cell), Some(("c", 1)));
/// let mut seen = Vec::new();
/// cells.for_each(|i, &cell| seen.push((i, cell)));
/// assert_eq!(seen[3], (3, ("b", 1)));
/// ```
pub fn cells<T, F>(rows: usize, columns: usize, f: F) -> Cells<F>
where
    F: Fn(usize, usize) -> T,
{
    Cells { rows, columns, f }
}

impl<T, F> Items for Cells<F>
where
    F: Fn(usize, usize) -> T,
{
    type Item = T;

    #[inline]
    fn count(&self) -> usize {
        self.rows.saturating_mul(self.columns)
    }

    #[inline]
    fn with_item<R>(&self, index: usize, f: impl FnOnce(&T) -> R) -> Option<R> {
        if index >= self.count() {
            return None;
        }
        Some(f(&(self.f)(index / self.columns, index % self.columns)))
    }

    #[inline]
    fn try_for_each<E>(&self, mut f: impl FnMut(usize, &T) -> Result<(), E>) -> Result<(), E> {
        let mut index = 0;
        for row in 0..self.rows {
            for column in 0..self.columns {
                f(index, &(self.f)(row, column))?;
                index += 1;
            }
        }
        Ok(())
    }
}

impl<F> fmt::Debug for Cells<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cells")
            .field("rows", &self.rows)
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected<I: Items>(items: &I) -> Vec<I::Item>
    where
        I::Item: Clone,
    {
        let mut out = Vec::new();
        items.for_each(|index, item| {
            assert_eq!(index, out.len());
            out.push(item.clone());
        });
        out
    }

    #[test]
    fn every_source_counts_and_visits_in_order() {
        let vec = vec![1u8, 2, 3];
        assert_eq!(collected(&vec), [1, 2, 3]);
        assert_eq!(collected(&vec.as_slice()), [1, 2, 3]);
        assert_eq!(collected(&[4u8, 5]), [4, 5]);
        assert_eq!(collected(&map(&vec, |&x| x * 10)), [10, 20, 30]);
        assert_eq!(collected(&from_fn(3, |i| i * i)), [0, 1, 4]);
        assert_eq!(collected(&cells(2, 2, |r, c| r * 10 + c)), [0, 1, 10, 11]);
        assert_eq!(cells(3, 0, |r, c| r + c).count(), 0);
        assert_eq!(map(&vec, |&x| x).count(), 3);
        assert_eq!(Items::count(&[0u8; 0]), 0);
    }

    #[test]
    fn items_are_found_by_index_and_absent_past_the_end() {
        let vec = vec!["a", "b"];
        assert_eq!(vec.with_item(1, |s| s.len()), Some(1));
        assert_eq!(vec.with_item(2, |s| s.len()), None);
        assert_eq!(map(&vec, |s| s.len()).with_item(0, |&n| n), Some(1));
        assert_eq!(map(&vec, |s| s.len()).with_item(9, |&n| n), None);
        assert_eq!(from_fn(2, |i| i).with_item(2, |&i| i), None);
    }

    #[test]
    fn the_first_error_stops_the_walk() {
        let mut seen = 0;
        let result = from_fn(10, |i| i).try_for_each(|index, &item| {
            seen += 1;
            if item == 3 {
                Err(index)
            } else {
                Ok(())
            }
        });
        assert_eq!(result, Err(3));
        assert_eq!(seen, 4);
    }

    #[test]
    fn adaptors_show_their_count() {
        assert_eq!(
            format!("{:?}", map(&[1, 2], |&x: &i32| x)),
            "Mapped { count: 2, .. }"
        );
        assert_eq!(
            format!("{:?}", from_fn(5, |i| i)),
            "FromFn { count: 5, .. }"
        );
    }
}
