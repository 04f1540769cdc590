//! Column tables whose rows are `#[derive(KeyValues)]` types, keyed by column name
//! (`player_`, `score_`, `team_t`): the player and team tables of GameSpy 2 ([`RowTable`]).
//! GameSpy 3/4's columns, continued across parts, are declared in its spec.
//!
//! A row is decoded from one pair per column (key = the column's name, value = the row's
//! cell), so a row type declares the columns it knows as keys and keeps the others in its
//! `rest` field. Column names are kept as Latin-1 text, which holds any byte.

use std::borrow::Cow;

use crate::codec::{Decode, Encode};
use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;
use crate::text::TextEncoding;
use crate::writer::Writer;

use super::pairs::Pair;
use super::sink::{KvSink, LenCounter};
use super::{FromKeyValues, ToKeyValues};

/// Column names are bytes; Latin-1 maps each byte to one char and back.
const NAMES: TextEncoding = TextEncoding::Latin1;

/// The most rows a count byte can announce.
const MAX_ROWS: usize = u8::MAX as usize;

/// Writes row `row`'s cell for `column` and its NUL: the value of the `nth` pair under that
/// key (a table may repeat a column name; the repeats decode into the row's `rest`), or an
/// empty cell when the row has none.
fn put_cell<R: ToKeyValues, S: KvSink + ?Sized>(
    row: &R,
    column: &[u8],
    nth: usize,
    encoding: TextEncoding,
    out: &mut S,
) -> Result<()> {
    struct Pick<'c, 'o, S: ?Sized> {
        column: &'c [u8],
        skip: usize,
        found: bool,
        out: &'o mut S,
    }
    impl<S: KvSink + ?Sized> KvSink for Pick<'_, '_, S> {
        fn position(&self) -> usize {
            self.out.position()
        }
        fn put_raw(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn put_pair(&mut self, key: &[u8], index: Option<usize>, value: &[u8]) -> Result<()> {
            if self.found || index.is_some() || key != self.column {
                return Ok(());
            }
            if self.skip > 0 {
                self.skip -= 1;
                return Ok(());
            }
            self.found = true;
            if let Some(i) = value.iter().position(|&b| b == 0) {
                return Err(Error::new(
                    ErrorKind::Invalid("a value cannot contain a NUL"),
                    self.out.position() + i,
                ));
            }
            self.out.put_raw(value)?;
            self.out.put_raw(&[0])
        }
    }
    let mut pick = Pick {
        column,
        skip: nth,
        found: false,
        out,
    };
    row.write_pairs(&mut pick, None, encoding)?;
    if !pick.found {
        pick.out.put_raw(&[0])?;
    }
    Ok(())
}

/// Checks that every key `row` writes is one of `columns` (else its value would be lost).
fn check_row_keys<R: ToKeyValues>(
    row: &R,
    columns: &[Cow<'_, str>],
    encoding: TextEncoding,
    at: usize,
) -> Result<()> {
    struct Keys<'c, 'n> {
        columns: &'c [Cow<'n, str>],
        at: usize,
    }
    impl KvSink for Keys<'_, '_> {
        fn position(&self) -> usize {
            self.at
        }
        fn put_raw(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn put_pair(&mut self, key: &[u8], index: Option<usize>, _: &[u8]) -> Result<()> {
            let known = index.is_none()
                && self.columns.iter().any(|c| {
                    c.chars()
                        .map(|ch| ch as u32)
                        .eq(key.iter().map(|&b| b as u32))
                });
            if known {
                Ok(())
            } else {
                Err(Error::new(
                    ErrorKind::Invalid("a row has a key that is not one of the table's columns"),
                    self.at,
                ))
            }
        }
    }
    row.write_pairs(&mut Keys { columns, at }, None, encoding)
}

/// The column names a row writes, in order: the columns of a table built from rows.
pub fn row_columns<R: ToKeyValues>(row: &R) -> Result<Vec<Cow<'static, str>>> {
    struct Names(Vec<Cow<'static, str>>);
    impl KvSink for Names {
        fn position(&self) -> usize {
            0
        }
        fn put_raw(&mut self, _: &[u8]) -> Result<()> {
            Ok(())
        }
        fn put_pair(&mut self, key: &[u8], index: Option<usize>, _: &[u8]) -> Result<()> {
            if index.is_some() {
                return Err(Error::new(
                    ErrorKind::Invalid("a table row cannot hold indexed keys"),
                    0,
                ));
            }
            let name: String = key.iter().map(|&b| b as char).collect();
            if !self.0.iter().any(|c| *c == name) {
                self.0.push(Cow::Owned(name));
            }
            Ok(())
        }
    }
    let mut names = Names(Vec::new());
    row.write_pairs(&mut names, None, R::DEFAULT_ENCODING)?;
    Ok(names.0)
}

/// Writes one column name and its NUL; a name holding a NUL, or an empty one (it would close
/// the names), cannot be written.
fn put_name<S: KvSink + ?Sized>(name: &str, out: &mut S) -> Result<()> {
    let at = out.position();
    let bytes = NAMES.encode_at(name, at)?;
    if bytes.is_empty() {
        return Err(Error::new(
            ErrorKind::Invalid("an empty column name would end the columns"),
            at,
        ));
    }
    if let Some(i) = bytes.iter().position(|&b| b == 0) {
        return Err(Error::new(
            ErrorKind::Invalid("a column name cannot contain a NUL"),
            at + i,
        ));
    }
    out.put_raw(&bytes)?;
    out.put_raw(&[0])
}

/// A GameSpy 2 table: a count byte, the column names NUL-separated and closed by an empty
/// name, then the cells row by row, each NUL-terminated.
///
/// The names are kept so that a table with no rows (an empty server still names its columns)
/// encodes back to the same bytes. Encoding writes `rows.len()` as the count (more than 255
/// rows is [`ErrorKind::TooLong`]) and, for each row, the value of each column in the order of
/// [`columns`](RowTable::columns) (an empty cell where the row has no such key); a row key
/// that is not a column is an error rather than a silent loss.
///
/// ```
/// use std::borrow::Cow;
/// use query_wire::kv::RowTable;
/// use query_wire::{Decode, Encode, KeyValues};
///
/// #[derive(Debug, PartialEq, KeyValues)]
/// struct Player<'a> {
///     #[kv(key = "player_")]
///     name: Option<Cow<'a, str>>,
///     #[kv(key = "score_")]
///     score: Option<i32>,
///     #[kv(rest)]
///     extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
/// }
///
/// let bytes = b"\x02player_\x00score_\x00ping_\x00\x00Ann\x003\x0052\x00Bo\x00-1\x0080\x00";
/// let table = RowTable::<Player>::from_bytes(bytes)?;
/// assert_eq!(table.rows[1].score, Some(-1));
/// assert_eq!(table.rows[0].extra, [("ping_".into(), "52".into())]);
/// assert_eq!(table.to_vec()?, bytes);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RowTable<'a, R> {
    /// The column names, in wire order.
    pub columns: Vec<Cow<'a, str>>,
    /// The rows.
    pub rows: Vec<R>,
}

impl<R: ToKeyValues> RowTable<'static, R> {
    /// A table whose columns are the keys the first row writes (none without rows).
    pub fn from_rows(rows: Vec<R>) -> Result<Self> {
        let columns = match rows.first() {
            Some(first) => row_columns(first)?,
            None => Vec::new(),
        };
        Ok(RowTable { columns, rows })
    }
}

impl<'a, R: FromKeyValues<'a>> Decode<'a> for RowTable<'a, R> {
    type Ctx = ();
    const NAME: &'static str = "RowTable";

    fn decode(r: &mut Reader<'a>, _: ()) -> Result<Self> {
        let count = usize::from(r.u8()?);
        let mut raw_names = Vec::new();
        let mut columns = Vec::new();
        loop {
            let name = r.nul_bytes(None).map_err(|e| e.in_field("columns"))?;
            if name.is_empty() {
                break;
            }
            raw_names.push(name);
            columns.push(NAMES.decode_lossy(name));
        }
        if count > 0 && raw_names.is_empty() {
            return Err(r
                .error(ErrorKind::Invalid("rows announced without columns"))
                .in_field("columns"));
        }
        // Every cell takes at least its NUL: a count the bytes cannot hold fails here.
        r.check_count(count.saturating_mul(raw_names.len()), None)?;
        let mut rows = Vec::with_capacity(count);
        let mut cells = Vec::with_capacity(raw_names.len());
        for i in 0..count {
            cells.clear();
            for name in &raw_names {
                let value_offset = r.offset();
                let value = r
                    .nul_bytes(None)
                    .map_err(|e| e.at_index(i).in_field("rows"))?;
                cells.push(Pair {
                    key: name,
                    value,
                    key_offset: value_offset,
                    value_offset,
                });
            }
            let row = R::from_pairs(&cells, None, R::DEFAULT_ENCODING)
                .map_err(|e| e.at_index(i).in_field("rows"))?;
            rows.push(row);
        }
        Ok(RowTable { columns, rows })
    }
}

impl<R: ToKeyValues> RowTable<'_, R> {
    fn write<S: KvSink + ?Sized>(&self, out: &mut S) -> Result<()> {
        let count = u8::try_from(self.rows.len()).map_err(|_| {
            Error::new(
                ErrorKind::TooLong {
                    len: self.rows.len(),
                    max: MAX_ROWS,
                },
                out.position(),
            )
            .in_field("rows")
        })?;
        out.put_raw(&[count])?;
        for name in &self.columns {
            put_name(name, out).map_err(|e| e.in_field("columns"))?;
        }
        out.put_raw(&[0])?;
        for (i, row) in self.rows.iter().enumerate() {
            let at = out.position();
            let in_row = |e: Error| e.at_index(i).in_field("rows");
            check_row_keys(row, &self.columns, R::DEFAULT_ENCODING, at).map_err(in_row)?;
            for (j, name) in self.columns.iter().enumerate() {
                // Borrowed for the ASCII names servers use: no allocation per cell.
                let raw = NAMES.encode_lossy(name);
                let nth = self.columns[..j]
                    .iter()
                    .filter(|earlier| *earlier == name)
                    .count();
                put_cell(row, &raw, nth, R::DEFAULT_ENCODING, out).map_err(in_row)?;
            }
        }
        Ok(())
    }
}

impl<R: ToKeyValues> Encode for RowTable<'_, R> {
    type Ctx = ();

    fn encoded_len(&self, _: ()) -> usize {
        let mut counter = LenCounter::default();
        let _ = self.write(&mut counter);
        counter.0
    }

    fn encode(&self, w: &mut Writer<'_>, _: ()) -> Result<()> {
        self.write(w)
    }
}
