//! Column tables whose rows are `#[derive(KeyValues)]` types, keyed by column name
//! (`player_`, `score_`, `team_t`): the player and team tables of GameSpy 2 ([`RowTable`]) and
//! GameSpy 3/4 ([`ColumnSections`], joined into rows by [`ColumnTable`]).
//!
//! A row is decoded from one pair per column (key = the column's name, value = the row's
//! cell), so a row type declares the columns it knows as keys and keeps the others in its
//! `rest` field. Column names are kept as Latin-1 text, which holds any byte.

use std::borrow::Cow;
use std::marker::PhantomData;

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

/// One column of a GameSpy 3 section as one part carries it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Column<'a> {
    /// The column's name (`player_`, `score_t`).
    pub name: Cow<'a, str>,
    /// How many of this column's values earlier parts carried (0 in the part that opens it).
    pub offset: u8,
    /// The values in this part, raw, each written NUL-terminated.
    pub values: Vec<Cow<'a, [u8]>>,
    /// Whether the empty value that ends the column came in this part; `false` when the part
    /// ends inside the column (it goes on in the next part, and its last value may be cut).
    pub closed: bool,
}

/// One section (1 players, 2 teams) of a GameSpy 3 part.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Section<'a> {
    /// The section number.
    pub id: u8,
    /// Its columns in this part.
    pub columns: Vec<Column<'a>>,
    /// Whether the empty name that ends the section came in this part.
    pub closed: bool,
}

/// The sections of one GameSpy 3 part after its key/values: a section byte, then per column a
/// name, a count byte (values earlier parts carried), values ended by an empty one; an empty
/// name ends the section.
///
/// The context is the id of a section the part's header already opened (the part then starts
/// with a column name, no section byte), or `None` when a section byte comes first.
///
/// Lenient where real servers differ harmlessly: the part may end anywhere inside a column or
/// between values (the part size is the server's, not the format's); extra NULs after a
/// column's end are skipped (Unreal Tournament 3 writes three), so a byte below `0x20` after
/// them starts the next section. Such padding is not kept, so those parts do not re-encode to
/// the same bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColumnSections<'a> {
    /// The sections in this part, in order.
    pub sections: Vec<Section<'a>>,
}

fn is_section_byte(b: u8) -> bool {
    b < 0x20
}

impl<'a> ColumnSections<'a> {
    fn read(r: &mut Reader<'a>, open: Option<u8>) -> Result<Self> {
        let mut sections = Vec::new();
        let mut next = open;
        loop {
            let id = match next.take() {
                Some(id) => id,
                None => {
                    if r.is_empty() {
                        break;
                    }
                    r.u8()?
                }
            };
            let at = sections.len();
            let section = Self::read_section(r, id).map_err(|e| e.at_index(at))?;
            sections.push(section);
        }
        Ok(ColumnSections { sections })
    }

    fn read_section(r: &mut Reader<'a>, id: u8) -> Result<Section<'a>> {
        let mut section = Section {
            id,
            columns: Vec::new(),
            closed: false,
        };
        loop {
            if r.is_empty() {
                return Ok(section);
            }
            let rest = r.peek_rest();
            if rest[0] == 0 {
                // The empty name; lenient: padding NULs after a column look the same.
                let nuls = rest.iter().take_while(|&&b| b == 0).count();
                r.skip(nuls)?;
                section.closed = true;
                if r.is_empty() || is_section_byte(r.peek_rest()[0]) {
                    return Ok(section);
                }
                section.closed = false;
                continue;
            }
            if section
                .columns
                .last()
                .is_some_and(|c: &Column<'_>| !c.closed)
            {
                return Err(r.error(ErrorKind::Invalid("a column follows one that never ended")));
            }
            let name = match Self::read_name(r) {
                Some(name) => name?,
                None => return Ok(section),
            };
            let mut column = Column {
                name: NAMES.decode_lossy(name),
                offset: 0,
                values: Vec::new(),
                closed: false,
            };
            if r.is_empty() {
                // Cut before its count byte: the column carries nothing yet.
                return Ok(section);
            }
            column.offset = r.u8()?;
            loop {
                if r.is_empty() {
                    break;
                }
                let rest = r.peek_rest();
                match rest.iter().position(|&b| b == 0) {
                    Some(0) => {
                        r.skip(1)?;
                        column.closed = true;
                        break;
                    }
                    Some(n) => {
                        column.values.push(Cow::Borrowed(r.bytes(n)?));
                        r.skip(1)?;
                    }
                    None => {
                        // A value cut by the end of the part.
                        column.values.push(Cow::Borrowed(r.rest()));
                    }
                }
            }
            section.columns.push(column);
        }
    }

    /// A column name, or `None` when the part ends inside it (a cut name carries nothing).
    fn read_name(r: &mut Reader<'a>) -> Option<Result<&'a [u8]>> {
        if r.peek_rest().contains(&0) {
            Some(r.nul_bytes(None))
        } else {
            r.rest();
            None
        }
    }

    fn write<S: KvSink + ?Sized>(&self, out: &mut S, open: Option<u8>) -> Result<()> {
        for (i, section) in self.sections.iter().enumerate() {
            let in_section = |e: Error| e.at_index(i).in_field("sections");
            if i == 0 && open.is_some() {
                if open != Some(section.id) {
                    return Err(in_section(Error::new(
                        ErrorKind::Invalid("the first section is not the one the header opened"),
                        out.position(),
                    )));
                }
            } else {
                out.put_raw(&[section.id])?;
            }
            let last = section.columns.len().saturating_sub(1);
            for (j, column) in section.columns.iter().enumerate() {
                let in_column = |e: Error| in_section(e.at_index(j).in_field("columns"));
                if !column.closed && (j != last || section.closed) {
                    return Err(in_column(Error::new(
                        ErrorKind::Invalid("only the last column of a part can be left open"),
                        out.position(),
                    )));
                }
                put_name(&column.name, out).map_err(in_column)?;
                out.put_raw(&[column.offset])?;
                for value in &column.values {
                    if let Some(k) = value.iter().position(|&b| b == 0) {
                        return Err(in_column(Error::new(
                            ErrorKind::Invalid("a value cannot contain a NUL"),
                            out.position() + k,
                        )));
                    }
                    if value.is_empty() {
                        return Err(in_column(Error::new(
                            ErrorKind::Invalid("an empty value would end the column"),
                            out.position(),
                        )));
                    }
                    out.put_raw(value)?;
                    out.put_raw(&[0])?;
                }
                if column.closed {
                    out.put_raw(&[0])?;
                }
            }
            if section.closed {
                out.put_raw(&[0])?;
            }
        }
        Ok(())
    }
}

impl<'a> Decode<'a> for ColumnSections<'a> {
    type Ctx = Option<u8>;
    const NAME: &'static str = "ColumnSections";

    fn decode(r: &mut Reader<'a>, open: Option<u8>) -> Result<Self> {
        Self::read(r, open).map_err(|e| e.in_field("sections"))
    }
}

impl Encode for ColumnSections<'_> {
    type Ctx = Option<u8>;

    fn encoded_len(&self, open: Option<u8>) -> usize {
        let mut counter = LenCounter::default();
        let _ = self.write(&mut counter, open);
        counter.0
    }

    fn encode(&self, w: &mut Writer<'_>, open: Option<u8>) -> Result<()> {
        self.write(w, open)
    }
}

/// Rows of type `R` from whole columns (after joining a reply's parts): row `i` holds value
/// `i` of every column that has one. A GameSpy 3 empty cell cannot be written (an empty value
/// ends the column), so a column may be shorter than the others; its missing cells are absent
/// keys in the rows.
#[derive(Debug)]
pub struct ColumnTable<R>(PhantomData<R>);

impl<R> ColumnTable<R> {
    /// The rows of `columns`; errors name the row.
    pub fn rows<'a>(columns: &'a [Column<'a>]) -> Result<Vec<R>>
    where
        R: FromKeyValues<'a>,
    {
        let count = columns.iter().map(|c| c.values.len()).max().unwrap_or(0);
        let mut rows = Vec::with_capacity(count);
        let mut cells = Vec::with_capacity(columns.len());
        for i in 0..count {
            cells.clear();
            for column in columns {
                if let Some(value) = column.values.get(i) {
                    let key: &'a [u8] = column.name.as_bytes();
                    cells.push(Pair {
                        key,
                        value,
                        key_offset: 0,
                        value_offset: 0,
                    });
                }
            }
            rows.push(R::from_pairs(&cells, None, R::DEFAULT_ENCODING).map_err(|e| e.at_index(i))?);
        }
        Ok(rows)
    }

    /// Whole, closed columns holding `rows`, for a responder to split into parts: the columns
    /// are the keys the first row writes; an absent or empty cell ends its column early, so
    /// rows after it lose that key.
    pub fn columns(rows: &[R]) -> Result<Vec<Column<'static>>>
    where
        R: ToKeyValues,
    {
        let Some(first) = rows.first() else {
            return Ok(Vec::new());
        };
        let names = row_columns(first)?;
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let raw = NAMES.encode_lossy(&name).into_owned();
            let mut values = Vec::with_capacity(rows.len());
            for (i, row) in rows.iter().enumerate() {
                let mut cell = Vec::new();
                put_cell(row, &raw, 0, R::DEFAULT_ENCODING, &mut cell)
                    .map_err(|e| e.at_index(i))?;
                cell.pop();
                if cell.is_empty() {
                    break;
                }
                values.push(Cow::Owned(cell));
            }
            columns.push(Column {
                name,
                offset: 0,
                values,
                closed: true,
            });
        }
        Ok(columns)
    }
}
