//! GameSpy 3 and 4 (Battlefield 2 and 2142, Crysis, Unreal Tournament 3, Just Cause 2 and
//! Minecraft's "Query"): one family. GameSpy 4 is GameSpy 3 with a challenge.
//!
//! - [`Request::Challenge`] (`FE FD 09` + session id) is answered by a [`ChallengeReply`]: `09`,
//!   the session id, the challenge as ASCII digits ended by a NUL. The query then carries it
//!   big-endian after the session id ([`QueryRequest`]). Minecraft requires it; BF2 answers
//!   `0`, meaning none is needed ([`ChallengeReply::challenge`] gives `None`).
//! - [`Request::Query`]: `FE FD 00` + session id (+ challenge) + `FF FF FF 01` ([`FLAGS_SPLIT`]).
//! - The reply comes in [`Part`]s: `00`, the session id, `splitnum\0`, the part byte (number in
//!   the low 7 bits, [`LAST_PART`] on the last) and the section the part starts in. Section 0
//!   holds the server's key/values ([`KeyValue`], ended by an empty key); sections 1 (players)
//!   and 2 (teams) hold [`Column`]s: a name (`player_`, `score_`, `team_t`...), a byte counting
//!   the values of that column earlier parts carried, then values ended by an empty one. A part
//!   that starts inside a section begins with a column ([`Part::continued`]).
//! - [`Reassembly`] joins parts arriving in any order, [`split_reply`] cuts a reply into parts
//!   for a responder.
//!
//! Where real servers differ (all decoded here):
//! - A non-last part may end anywhere inside a column, without its closing NULs, and its
//!   last value may be cut short (Project Reality sends `" "` for `" Rifleman1"`): lists end
//!   at the end of the part too (`until_nul(or_end)`), and joining keeps only as many values
//!   of a column as the next part's count byte says were whole.
//! - Minecraft ends its player list without closing the section and sends no team section;
//!   it may echo the session id masked with [`MINECRAFT_SESSION_MASK`] (the captured servers
//!   echo it whole; [`session_matches`] accepts both). Its text is UTF-8 with `§` colour codes; others send Latin-1:
//!   values are [`Text`], the bytes as sent.
//! - Unreal Tournament 3 follows each column with two extra NULs. They decode as an empty
//!   section of kind 0 after the table, whose columns continue the table ([`Section::kind`]
//!   0 after the first section); joining puts them back in the table they follow. A UT3
//!   column holding an empty value (`team_` of a player without a team) cannot be read: the
//!   empty value ends the column, and the bytes after it read as a section of another kind
//!   (the first letter of the next column's name), which [`Reassembly::reply`] keeps as a
//!   table of that kind rather than drop; the columns before it are right. UT3 also sends
//!   some values that look like keys (`p1073741829`): they are kept as sent.
//! - Crysis sends empty player and team sections (`01 00 02 00`).
//! - Just Cause 2 Multiplayer answers `FF FF FF 02` ([`FLAGS_JC2MP`]) with a format of its
//!   own: one part, not marked last, the key/values, then a big-endian u16 player count and
//!   `name\0 steamid\0 ping(u16)` records ([`Jc2mpReply`]).
//! - Empty values cannot be carried in a column (an empty value ends it): [`split_reply`]
//!   refuses them rather than send a reply that reads back differently.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use query_wire::parts::{Filed, NumberedParts};
use query_wire::{Decode, Encode, Error, ErrorKind, Result, Text, TextEncoding, Wire};
use serde::Serialize;

// GameSpy 3 keeps GameSpy 2's NUL-separated pairs and `_`/`_t` column names.
pub use crate::gamespy2::{field_name, lookup, KeyValue};

/// The bytes every request starts with.
pub const REQUEST_MAGIC: &[u8; 2] = b"\xfe\xfd";
/// The request type of a challenge request and reply.
pub const KIND_CHALLENGE: u8 = 0x09;
/// The request type of a query and its reply.
pub const KIND_QUERY: u8 = 0x00;
/// The payload that asks for everything, split into parts where needed.
pub const FLAGS_SPLIT: [u8; 4] = [0xff, 0xff, 0xff, 0x01];
/// Just Cause 2 Multiplayer's payload, answered with [`Jc2mpReply`].
pub const FLAGS_JC2MP: [u8; 4] = [0xff, 0xff, 0xff, 0x02];
/// Minecraft echoes the session id ANDed with this.
pub const MINECRAFT_SESSION_MASK: u32 = 0x0f0f_0f0f;
/// The top bit of the part byte: this is the last part.
pub const LAST_PART: u8 = 0x80;
/// Section 0: the server's key/values.
pub const SECTION_DETAILS: u8 = 0;
/// Section 1: the player table.
pub const SECTION_PLAYERS: u8 = 1;
/// Section 2: the team table.
pub const SECTION_TEAMS: u8 = 2;
/// The most parts [`Reassembly`] holds (the part number has 7 bits; real replies use a few).
pub const MAX_PARTS: u8 = 32;
/// The most bytes [`Reassembly`] holds in all.
pub const MAX_BYTES: usize = 64 * 1024;
/// The largest part [`split_reply`] writes by default.
pub const MAX_DATAGRAM: usize = 1400;
/// The encoding most servers write their text in (Minecraft writes UTF-8).
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;

/// What a client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big", magic = b"\xfe\xfd", tag = u8)]
pub enum Request {
    /// `09`: asks for a challenge.
    #[wire(tag = 0x09)]
    Challenge(ChallengeRequest),
    /// `00`: the query.
    #[wire(tag = 0x00)]
    Query(QueryRequest),
}

/// The body of a challenge request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big")]
pub struct ChallengeRequest {
    /// Echoed in the reply.
    pub session_id: u32,
    /// Four bytes some clients add (gamedig sends its empty challenge, `00 00 00 00`); real
    /// servers ignore them, and so does a responder: lenient, since the challenge reply is
    /// no larger than such a request.
    #[wire(trailing)]
    pub padding: Option<[u8; 4]>,
}

/// The body of a query: the session id, the challenge when the server gave one, and four
/// payload bytes ([`FLAGS_SPLIT`]).
///
/// On the wire the challenge is told apart only by the length: the 4 bytes after the session
/// id are the challenge when 4 more follow ([`flags`](Self::flags) then), and the payload
/// otherwise. Minecraft's "basic stat" query (session id + challenge, no payload) has the same
/// length as a query without challenge: a Minecraft responder reads [`word`](Self::word) as the
/// challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big")]
pub struct QueryRequest {
    /// Echoed in every part of the reply.
    pub session_id: u32,
    /// The challenge (big-endian i32) when [`flags`](Self::flags) follow, else the payload.
    pub word: [u8; 4],
    /// The payload, when a challenge came first.
    #[wire(trailing)]
    pub flags: Option<[u8; 4]>,
}

impl QueryRequest {
    /// A query, with the challenge when the server gave one.
    pub fn new(session_id: u32, challenge: Option<i32>, payload: [u8; 4]) -> Self {
        match challenge {
            Some(c) => QueryRequest {
                session_id,
                word: c.to_be_bytes(),
                flags: Some(payload),
            },
            None => QueryRequest {
                session_id,
                word: payload,
                flags: None,
            },
        }
    }

    /// The challenge the query carries.
    pub fn challenge(&self) -> Option<i32> {
        // Big-endian like every number of the request.
        self.flags
            .map(|_| <i32 as query_wire::Number>::from_bytes(self.word, query_wire::Endian::Big))
    }

    /// The payload bytes ([`FLAGS_SPLIT`], [`FLAGS_JC2MP`]).
    pub fn payload(&self) -> [u8; 4] {
        self.flags.unwrap_or(self.word)
    }
}

/// The answer to a challenge request: `09`, the session id, the challenge in ASCII digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x09")]
pub struct ChallengeReply<'a> {
    /// The request's session id (masked on Minecraft).
    #[wire(range)]
    pub session_id: u32,
    /// The digits, e.g. `9513307` or `-4026`.
    #[wire(str(nul, max = 16))]
    pub digits: &'a str,
}

impl<'a> ChallengeReply<'a> {
    /// The challenge the query must carry: `None` for `0` (BF2: no challenge needed). Digits
    /// above `i32::MAX` that fit 32 bits are taken as their bits, as servers write them
    /// unsigned; anything else is [`ErrorKind::Invalid`] at the digits.
    pub fn challenge(&self) -> Result<Option<i32>> {
        let digits_at = ChallengeReply::SESSION_ID_RANGE.end;
        let invalid = || {
            Error::new(
                ErrorKind::Invalid("challenge is not a 32-bit number"),
                digits_at,
            )
        };
        let value: i64 = self.digits.trim().parse().map_err(|_| invalid())?;
        let value = match i32::try_from(value) {
            Ok(v) => v,
            // The same 32 bits, read as signed.
            Err(_) => u32::try_from(value).map_err(|_| invalid())? as i32,
        };
        Ok((value != 0).then_some(value))
    }
}

/// `splitnum\0`, the marker every part of a query reply carries after the session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Wire, Serialize)]
#[wire(magic = b"splitnum\x00")]
pub struct SplitNum;

/// One datagram of a query reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x00")]
pub struct Part<'a> {
    /// The query's session id (masked on Minecraft).
    #[wire(range)]
    pub session_id: u32,
    /// `splitnum\0`.
    pub splitnum: SplitNum,
    /// Whether this is the last part: the top bit of the part byte ([`LAST_PART`]).
    #[wire(bit_width = 1)]
    pub last: bool,
    /// The part number, from 0: the low 7 bits of the part byte.
    #[wire(bit_width = 7, range)]
    pub number: u8,
    /// The section the part starts in.
    pub section: u8,
    /// The key/values, when the part starts in section 0.
    #[wire(when = *section == SECTION_DETAILS, until_nul(or_end))]
    pub details: Option<Vec<KeyValue<'a>>>,
    /// The columns of the section the part starts inside, when it is a table.
    #[wire(when = *section != SECTION_DETAILS, until_nul(or_end))]
    pub continued: Option<Vec<Column<'a>>>,
    /// The sections that start in this part.
    #[wire(until_end)]
    pub sections: Vec<Section<'a>>,
}

/// A section that starts inside a part: its kind, then its columns, ended by an empty name.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct Section<'a> {
    /// [`SECTION_PLAYERS`], [`SECTION_TEAMS`]; 0 after a table is UT3's padding, whose
    /// columns continue that table.
    pub kind: u8,
    /// The columns.
    #[wire(until_nul(or_end))]
    pub columns: Vec<Column<'a>>,
}

/// One column of a table, or the part of it this datagram carries.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct Column<'a> {
    /// `player_`, `score_`, `team_t`...
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// How many values of this column earlier parts carried whole.
    pub offset: u8,
    /// The values, row by row; never empty (an empty value ends the list).
    #[wire(until_nul(or_end), str(nul))]
    pub values: Vec<Text<'a>>,
}

/// Just Cause 2 Multiplayer's reply to [`FLAGS_JC2MP`].
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x00")]
pub struct Jc2mpReply<'a> {
    /// The query's session id.
    pub session_id: u32,
    /// `splitnum\0`.
    pub splitnum: SplitNum,
    /// `0`: one part, not marked last.
    pub part: u8,
    /// `0`.
    pub section: u8,
    /// The key/values, ended by an empty key.
    #[wire(until_nul)]
    pub details: Vec<KeyValue<'a>>,
    /// How many players follow.
    #[wire(computed = players.count())]
    pub count: u16,
    /// The players.
    #[wire(count = *count)]
    pub players: Vec<Jc2mpPlayer<'a>>,
}

/// One player of a [`Jc2mpReply`].
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Jc2mpPlayer<'a> {
    /// The name.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// `STEAM_0:1:80615257`.
    #[wire(str(nul))]
    pub steam_id: Text<'a>,
    /// Milliseconds.
    pub ping: u16,
}

/// Whether a reply's session id answers a request's: equal, or Minecraft's masked echo.
pub fn session_matches(sent: u32, echoed: u32) -> bool {
    echoed == sent || echoed == sent & MINECRAFT_SESSION_MASK
}

/// A table joined from its parts: its kind and its columns, values row by row.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Table<'a> {
    /// [`SECTION_PLAYERS`], [`SECTION_TEAMS`] or another kind the server sent.
    pub kind: u8,
    /// The columns in the order they first arrived.
    pub columns: Vec<JoinedColumn<'a>>,
}

/// A column joined from its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JoinedColumn<'a> {
    /// `player_`, `score_`...
    pub name: Text<'a>,
    /// Every value, row by row, from the first; values that would follow a gap (a missing part)
    /// are left out, see [`Assembled::gaps`].
    pub values: Vec<Text<'a>>,
}

impl<'a> Table<'a> {
    /// How many rows: the longest column.
    pub fn row_count(&self) -> usize {
        self.columns
            .iter()
            .map(|c| c.values.len())
            .max()
            .unwrap_or(0)
    }

    /// A column, by its name with or without the `_` / `_t` suffix.
    pub fn column(&self, name: &str) -> Option<&JoinedColumn<'a>> {
        self.columns
            .iter()
            .find(|c| c.name.as_bytes() == name.as_bytes())
            .or_else(|| {
                self.columns
                    .iter()
                    .find(|c| field_name(c.name.as_bytes()) == name.as_bytes())
            })
    }

    /// Row `i` as `(column name without its suffix, value)`; a column shorter than the table
    /// has no value in the row.
    pub fn row(&self, i: usize) -> Vec<(&[u8], &Text<'a>)> {
        self.columns
            .iter()
            .filter_map(|c| Some((field_name(c.name.as_bytes()), c.values.get(i)?)))
            .collect()
    }

    /// Every row as a map from column name (without its suffix) to value.
    pub fn rows(&self) -> Vec<BTreeMap<&[u8], &Text<'a>>> {
        (0..self.row_count())
            .map(|i| self.row(i).into_iter().collect())
            .collect()
    }
}

/// A reply joined from the parts that arrived.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Assembled<'a> {
    /// The session id the parts carry.
    pub session_id: Option<u32>,
    /// The server's key/values, in order.
    pub details: Vec<KeyValue<'a>>,
    /// The tables in the order they started.
    pub tables: Vec<Table<'a>>,
    /// Whether every part up to the last arrived.
    pub complete: bool,
    /// Part numbers known to be missing.
    pub missing_parts: Vec<u8>,
    /// Columns whose count byte did not follow the values before it: the values after a gap
    /// are left out (never padded), and the reply is not complete.
    pub gaps: Vec<ColumnGap>,
}

/// A column part whose count byte ([`Column::offset`]) disagrees with the values that arrived
/// before it in the parts held: it says earlier parts carried more values than arrived (a part
/// is missing, or a server counts values it never sent), or fewer than arrived whole. Its values
/// are left out rather than padded or shifted, so that no row is invented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnGap {
    /// The table's kind ([`SECTION_PLAYERS`]...).
    pub table: u8,
    /// The column's name as sent, decoded lossily.
    pub column: String,
    /// The part it came in.
    pub part: u8,
    /// How many values earlier parts carried, by its count byte.
    pub offset: u8,
    /// How many values of the column the parts held before it carried.
    pub held: usize,
    /// How many of its values were left out.
    pub dropped: usize,
}

impl std::fmt::Display for ColumnGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "column {:?} of table {} in part {} continues at value {} after {} values arrived; its {} values were left out",
            self.column, self.table, self.part, self.offset, self.held, self.dropped
        )
    }
}

impl<'a> Assembled<'a> {
    /// The first value of a key.
    pub fn value(&self, key: &str) -> Option<&Text<'a>> {
        lookup(&self.details, key)
    }

    /// A key's value decoded in `encoding`.
    pub fn text(&self, key: &str, encoding: TextEncoding) -> Option<Cow<'_, str>> {
        self.value(key).map(|v| v.decode(encoding))
    }

    /// A key's value as a number (surrounding spaces ignored).
    pub fn number(&self, key: &str) -> Option<u32> {
        std::str::from_utf8(self.value(key)?.as_bytes())
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// `hostname`.
    pub fn hostname(&self) -> Option<&Text<'a>> {
        self.value("hostname")
    }

    /// `mapname`, or `map` (Minecraft).
    pub fn map(&self) -> Option<&Text<'a>> {
        self.value("mapname").or_else(|| self.value("map"))
    }

    /// `maxplayers`.
    pub fn max_players(&self) -> Option<u32> {
        self.number("maxplayers")
    }

    /// `numplayers`.
    pub fn num_players(&self) -> Option<u32> {
        self.number("numplayers")
    }

    /// The table of a kind.
    pub fn table(&self, kind: u8) -> Option<&Table<'a>> {
        self.tables.iter().find(|t| t.kind == kind)
    }

    /// The player table.
    pub fn players(&self) -> Option<&Table<'a>> {
        self.table(SECTION_PLAYERS)
    }

    /// The team table.
    pub fn teams(&self) -> Option<&Table<'a>> {
        self.table(SECTION_TEAMS)
    }

    /// The `player_` column's values.
    pub fn player_names(&self) -> &[Text<'a>] {
        self.players()
            .and_then(|t| t.column("player"))
            .map_or(&[], |c| c.values.as_slice())
    }
}

/// What [`Reassembly::push`] did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// A new part, kept.
    New,
    /// A part already held; the copy was dropped.
    Duplicate,
    /// A part of another session; dropped.
    OtherSession,
}

/// A reply being put back together from its parts: no I/O, no clock.
///
/// Parts come in any order, duplicates included. The reply is complete when parts `0..=N`
/// are held, `N` the part marked last. [`reply`](Self::reply) joins what arrived at any time.
/// Memory is bounded: part numbers from [`MAX_PARTS`] up and parts past [`MAX_BYTES`] in all
/// are refused.
///
/// ```
/// use query_specs::gamespy3::{Pushed, Reassembly};
///
/// let mut parts = Reassembly::for_session(0x10203040);
/// // The second part first: it starts inside the player section, in column `player_`,
/// // one value of which the first part carried.
/// let second = b"\x00\x10\x20\x30\x40splitnum\x00\x81\x01player_\x00\x01Bo\x00\x00\x00";
/// let first = b"\x00\x10\x20\x30\x40splitnum\x00\x00\x00hostname\x00Fort\x00\x00\x01player_\x00\x00Ann\x00B\x00";
/// assert_eq!(parts.push(second)?, Pushed::New);
/// assert_eq!(parts.missing_parts(), [0]);
/// parts.push(first)?;
/// let reply = parts.reply()?;
/// assert!(reply.complete);
/// assert_eq!(reply.hostname().unwrap().as_bytes(), b"Fort");
/// // `B`, cut short at the end of the first part (NUL-terminated, as servers write it), was
/// // replaced by the whole value: the second part counts one value as whole.
/// let names: Vec<_> = reply.player_names().iter().map(|n| n.as_bytes()).collect();
/// assert_eq!(names, [b"Ann".as_slice(), b"Bo"]);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Reassembly {
    session_id: Option<u32>,
    parts: NumberedParts<Vec<u8>>,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly {
            session_id: None,
            parts: NumberedParts::new(MAX_PARTS as u32, MAX_BYTES),
        }
    }
}

impl Reassembly {
    /// Nothing received yet; the first part's session id is the one kept.
    pub fn new() -> Self {
        Reassembly::default()
    }

    /// Nothing received yet; only parts echoing `session_id` (or Minecraft's masked echo of
    /// it) are kept.
    pub fn for_session(session_id: u32) -> Self {
        Reassembly {
            session_id: Some(session_id),
            ..Reassembly::default()
        }
    }

    /// Adds one received datagram. A datagram that is not a reply part, or whose part number
    /// is [`MAX_PARTS`] or more, or past the part marked last, or that would take the held
    /// bytes past [`MAX_BYTES`], is an error and changes nothing. A copy of a part held is
    /// dropped before any cap counts it.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Pushed> {
        let part = Part::from_bytes(datagram)?;
        if let Some(held) = self.session_id {
            if !session_matches(held, part.session_id) {
                return Ok(Pushed::OtherSession);
            }
        }
        let number = part.number;
        let total = part.last.then_some(u32::from(number) + 1);
        let filed = self
            .parts
            .file(u32::from(number), total, datagram.len(), || {
                datagram.to_vec()
            })
            .map_err(|e| e.in_field("Reassembly"))?;
        if filed == Filed::Duplicate {
            return Ok(Pushed::Duplicate);
        }
        if self.session_id.is_none() {
            self.session_id = Some(part.session_id);
        }
        Ok(Pushed::New)
    }

    /// How many parts the reply has, once the last arrived.
    pub fn total_parts(&self) -> Option<u8> {
        self.parts.total().and_then(|n| u8::try_from(n).ok())
    }

    /// How many distinct parts are held.
    pub fn parts_received(&self) -> usize {
        self.parts.len()
    }

    /// Whether every part up to the last is held.
    pub fn is_complete(&self) -> bool {
        self.parts.is_complete()
    }

    /// Part numbers known to be missing: before the last part when it arrived, otherwise
    /// before the highest held (more may follow it).
    pub fn missing_parts(&self) -> Vec<u8> {
        let missing = self.parts.missing().into_iter();
        missing.filter_map(|n| u8::try_from(n).ok()).collect()
    }

    /// Joins the parts held, in order. A column's values continue only where its count byte
    /// says the values before them end: past a gap they are left out and named in
    /// [`Assembled::gaps`], and the reply is not complete.
    pub fn reply(&self) -> Result<Assembled<'_>> {
        let mut joined = Joiner::default();
        for (number, datagram) in self.parts.numbered() {
            joined.number = u8::try_from(number).unwrap_or(u8::MAX);
            joined.part(Part::from_bytes(datagram)?);
        }
        Ok(Assembled {
            session_id: self.session_id,
            details: joined.details,
            tables: joined.tables,
            complete: self.is_complete() && joined.gaps.is_empty(),
            missing_parts: self.missing_parts(),
            gaps: joined.gaps,
        })
    }
}

/// Joins decoded parts, in part order, into key/values and tables.
#[derive(Debug, Default)]
struct Joiner<'a> {
    details: Vec<KeyValue<'a>>,
    tables: Vec<Table<'a>>,
    gaps: Vec<ColumnGap>,
    /// The number of the part being joined.
    number: u8,
    /// Where each column is, by table kind and name: a part may hold thousands of columns,
    /// and finding each by a scan would cost their square.
    positions: HashMap<(u8, Text<'a>), usize>,
}

impl<'a> Joiner<'a> {
    fn part(&mut self, part: Part<'a>) {
        if let Some(details) = part.details {
            self.details.extend(details);
        }
        let mut kind = part.section;
        if let Some(columns) = part.continued {
            self.columns(kind, columns);
        }
        for section in part.sections {
            // UT3's padding: a section of kind 0 after a table continues it.
            if section.kind != SECTION_DETAILS {
                kind = section.kind;
            }
            self.columns(kind, section.columns);
        }
    }

    fn columns(&mut self, kind: u8, columns: Vec<Column<'a>>) {
        if columns.is_empty() && self.tables.iter().any(|t| t.kind == kind) {
            return;
        }
        let number = self.number;
        let table = match self.tables.iter().position(|t| t.kind == kind) {
            Some(i) => &mut self.tables[i],
            None => {
                self.tables.push(Table {
                    kind,
                    columns: Vec::new(),
                });
                self.tables.last_mut().expect("just pushed")
            }
        };
        for column in columns {
            let at = *self
                .positions
                .entry((kind, column.name.clone()))
                .or_insert(table.columns.len());
            if at == table.columns.len() {
                table.columns.push(JoinedColumn {
                    name: column.name,
                    values: Vec::new(),
                });
            }
            let joined = &mut table.columns[at];
            // The count says how many values earlier parts carried whole: a value cut at the
            // end of the previous part (one more than the count) is replaced. A count past the
            // values held (a part missing, or values never sent) or more than one short of
            // them is a gap: the values are left out, never padded or shifted.
            let (offset, held) = (usize::from(column.offset), joined.values.len());
            if offset == held || offset + 1 == held {
                joined.values.truncate(offset);
                joined.values.extend(column.values);
            } else {
                self.gaps.push(ColumnGap {
                    table: kind,
                    column: String::from_utf8_lossy(joined.name.as_bytes()).into_owned(),
                    part: number,
                    offset: column.offset,
                    held,
                    dropped: column.values.len(),
                });
            }
        }
    }
}

/// The content of a reply, to be cut into parts: what a responder holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplyContent<'a> {
    /// The server's key/values.
    pub details: Vec<KeyValue<'a>>,
    /// The tables, players ([`SECTION_PLAYERS`]) first.
    pub tables: Vec<Table<'a>>,
}

/// Cuts a reply into parts of at most `max_datagram` bytes each, in order, the last marked:
/// key/values are never cut, a column is continued in the next part with its name and the
/// count of values already sent. Fails when one pair or value cannot fit a part, a value is
/// empty, a continued column has sent more than 255 values, or more than [`MAX_PARTS`] parts
/// would be needed.
///
/// ```
/// use query_specs::gamespy3::{split_reply, KeyValue, Reassembly, ReplyContent};
/// use query_wire::Encode;
///
/// let content = ReplyContent { details: vec![KeyValue::new("hostname", "Fort")], tables: vec![] };
/// let parts = split_reply(&content, 7, 1400)?;
/// assert_eq!(parts.len(), 1);
/// let mut reassembly = Reassembly::new();
/// reassembly.push(&parts[0].to_vec()?)?;
/// assert_eq!(reassembly.reply()?.details, content.details);
/// # Ok::<(), query_wire::Error>(())
/// ```
pub fn split_reply<'c, 'a>(
    content: &'c ReplyContent<'a>,
    session_id: u32,
    max_datagram: usize,
) -> Result<Vec<Part<'c>>> {
    let mut splitter = Splitter {
        session_id,
        max: max_datagram,
        parts: Vec::new(),
    };
    splitter.start(SECTION_DETAILS)?;
    for pair in &content.details {
        let pair = KeyValue {
            key: borrow(&pair.key),
            value: borrow(&pair.value),
        };
        let fits = {
            let part = splitter.current();
            part.details.get_or_insert_with(Vec::new).push(pair.clone());
            part.encoded_len(()) <= splitter.max
        };
        if !fits {
            splitter.undo_detail();
            splitter.start(SECTION_DETAILS)?;
            let part = splitter.current();
            part.details.get_or_insert_with(Vec::new).push(pair);
            splitter.check_fits(0)?;
        }
    }
    for table in &content.tables {
        splitter.open_section(table.kind)?;
        for column in &table.columns {
            splitter.open_column(table.kind, borrow(&column.name), 0)?;
            for (i, value) in column.values.iter().enumerate() {
                if matches!(value.as_bytes().first(), None | Some(0)) {
                    return Err(Error::new(
                        ErrorKind::Invalid("a column value is empty or starts with a NUL byte"),
                        0,
                    )
                    .at_index(i)
                    .in_field("values"));
                }
                splitter.last_column().values.push(borrow(value));
                if splitter.current().encoded_len(()) > splitter.max {
                    splitter.last_column().values.pop();
                    let offset = u8::try_from(i).map_err(|_| {
                        Error::new(
                            ErrorKind::OutOfRange {
                                value: i as u64,
                                reason: "a continued column can count at most 255 values",
                            },
                            0,
                        )
                    })?;
                    splitter.start(table.kind)?;
                    splitter.open_column(table.kind, borrow(&column.name), offset)?;
                    splitter.last_column().values.push(borrow(value));
                    splitter.check_fits(i)?;
                }
            }
        }
    }
    if let Some(last) = splitter.parts.last_mut() {
        last.last = true;
    }
    Ok(splitter.parts)
}

fn borrow<'c>(text: &'c Text<'_>) -> Text<'c> {
    Text::from_bytes(text.as_bytes())
}

struct Splitter<'c> {
    session_id: u32,
    max: usize,
    parts: Vec<Part<'c>>,
}

impl<'c> Splitter<'c> {
    fn start(&mut self, section: u8) -> Result<()> {
        let number = u8::try_from(self.parts.len())
            .ok()
            .filter(|n| *n < MAX_PARTS)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::TooLong {
                        len: self.parts.len() + 1,
                        max: usize::from(MAX_PARTS),
                    },
                    0,
                )
            })?;
        self.parts.push(Part {
            session_id: self.session_id,
            splitnum: SplitNum,
            last: false,
            number,
            section,
            details: (section == SECTION_DETAILS).then(Vec::new),
            continued: (section != SECTION_DETAILS).then(Vec::new),
            sections: Vec::new(),
        });
        Ok(())
    }

    fn current(&mut self) -> &mut Part<'c> {
        self.parts.last_mut().expect("a part is always open")
    }

    fn undo_detail(&mut self) {
        if let Some(details) = &mut self.current().details {
            details.pop();
        }
    }

    /// The columns new columns go to: the last section's, or the continued ones.
    fn columns(&mut self) -> &mut Vec<Column<'c>> {
        let part = self.current();
        match part.sections.last_mut() {
            Some(section) => &mut section.columns,
            None => part.continued.get_or_insert_with(Vec::new),
        }
    }

    fn last_column(&mut self) -> &mut Column<'c> {
        self.columns().last_mut().expect("a column is open")
    }

    fn open_section(&mut self, kind: u8) -> Result<()> {
        self.current().sections.push(Section {
            kind,
            columns: Vec::new(),
        });
        if self.current().encoded_len(()) > self.max {
            self.current().sections.pop();
            self.start(kind)?;
        }
        Ok(())
    }

    fn open_column(&mut self, kind: u8, name: Text<'c>, offset: u8) -> Result<()> {
        let column = Column {
            name,
            offset,
            values: Vec::new(),
        };
        self.columns().push(column.clone());
        if self.current().encoded_len(()) > self.max {
            self.columns().pop();
            self.start(kind)?;
            self.columns().push(column);
            self.check_fits(usize::from(offset))?;
        }
        Ok(())
    }

    fn check_fits(&mut self, index: usize) -> Result<()> {
        let len = self.current().encoded_len(());
        if len > self.max {
            return Err(Error::new(ErrorKind::TooLong { len, max: self.max }, 0).at_index(index));
        }
        Ok(())
    }
}

impl<'a> Assembled<'a> {
    /// The content, to serve again or compare.
    pub fn content(&self) -> ReplyContent<'a> {
        ReplyContent {
            details: self.details.clone(),
            tables: self.tables.clone(),
        }
    }
}

/// Decodes a whole single-part reply, for tests and tools: the same as pushing it into a
/// fresh [`Reassembly`].
pub fn decode_single(datagram: &[u8]) -> Result<Assembled<'static>> {
    let mut reassembly = Reassembly::new();
    reassembly.push(datagram)?;
    let reply = reassembly.reply()?;
    Ok(into_owned(reply))
}

fn into_owned(reply: Assembled<'_>) -> Assembled<'static> {
    let text = |t: Text<'_>| t.into_owned();
    Assembled {
        session_id: reply.session_id,
        details: reply
            .details
            .into_iter()
            .map(|p| KeyValue {
                key: text(p.key),
                value: text(p.value),
            })
            .collect(),
        tables: reply
            .tables
            .into_iter()
            .map(|t| Table {
                kind: t.kind,
                columns: t
                    .columns
                    .into_iter()
                    .map(|c| JoinedColumn {
                        name: text(c.name),
                        values: c.values.into_iter().map(text).collect(),
                    })
                    .collect(),
            })
            .collect(),
        complete: reply.complete,
        gaps: reply.gaps,
        missing_parts: reply.missing_parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_byte_past_the_values_held_pads_nothing() {
        // One complete part: `player_` says 255 values came before its one value.
        let part = b"\x00\x00\x00\x00\x05splitnum\x00\x80\x00hostname\x00Fort\x00\x00\x01player_\x00\xffAnn\x00\x00score_\x00\x00\x37\x00\x00\x00";
        let mut reassembly = Reassembly::for_session(5);
        reassembly.push(part).unwrap();
        let reply = reassembly.reply().unwrap();
        assert!(!reply.complete);
        assert!(reply.missing_parts.is_empty());
        assert_eq!(reply.players().unwrap().row_count(), 1);
        assert!(reply.player_names().is_empty());
        assert_eq!(reply.gaps.len(), 1);
        let gap = reply.gaps[0].to_string();
        assert!(
            gap.contains("\"player_\"") && gap.contains("value 255"),
            "{gap}"
        );
    }

    #[test]
    fn a_missing_middle_part_leaves_later_values_out() {
        let part = |number: u8, body: &[u8]| {
            let mut d = b"\x00\x00\x00\x00\x05splitnum\x00".to_vec();
            d.push(number);
            d.extend_from_slice(body);
            d
        };
        let mut reassembly = Reassembly::for_session(5);
        reassembly
            .push(&part(
                0,
                b"\x00hostname\x00Fort\x00\x00\x01player_\x00\x00Ann\x00",
            ))
            .unwrap();
        reassembly
            .push(&part(0x82, b"\x01player_\x00\x02Cy\x00\x00\x00"))
            .unwrap();
        let reply = reassembly.reply().unwrap();
        assert!(!reply.complete);
        assert_eq!(reply.missing_parts, [1]);
        let names: Vec<_> = reply.player_names().iter().map(|n| n.as_bytes()).collect();
        assert_eq!(names, [b"Ann".as_slice()]);
        assert_eq!(reply.gaps[0].dropped, 1);
    }

    #[test]
    fn requests() {
        let challenge = Request::Challenge(ChallengeRequest {
            session_id: 1,
            padding: None,
        });
        assert_eq!(challenge.to_vec().unwrap(), b"\xfe\xfd\x09\0\0\0\x01");
        let query = Request::Query(QueryRequest::new(1, Some(9_513_307), FLAGS_SPLIT));
        let bytes = query.to_vec().unwrap();
        assert_eq!(
            bytes,
            b"\xfe\xfd\x00\0\0\0\x01\x00\x91\x29\x5b\xff\xff\xff\x01"
        );
        let Request::Query(decoded) = Request::from_bytes(&bytes).unwrap() else {
            panic!("a query");
        };
        assert_eq!(decoded.challenge(), Some(9_513_307));
        assert_eq!(decoded.payload(), FLAGS_SPLIT);
        let plain = QueryRequest::new(1, None, FLAGS_SPLIT);
        assert_eq!(plain.challenge(), None);
        assert_eq!(plain.payload(), FLAGS_SPLIT);
    }

    #[test]
    fn challenge_digits() {
        let reply = ChallengeReply::from_bytes(b"\x09\0\0\0\x01-4026\0").unwrap();
        assert_eq!(reply.challenge().unwrap(), Some(-4026));
        let reply = ChallengeReply::from_bytes(b"\x09\0\0\0\x010\0").unwrap();
        assert_eq!(reply.challenge().unwrap(), None);
        let reply = ChallengeReply::from_bytes(b"\x09\0\0\0\x014294967295\0").unwrap();
        assert_eq!(reply.challenge().unwrap(), Some(-1));
        let reply = ChallengeReply::from_bytes(b"\x09\0\0\0\x01x\0").unwrap();
        assert!(reply.challenge().is_err());
        assert!(ChallengeReply::from_bytes(b"\x09\0\0\0\x011234").is_err());
    }

    #[test]
    fn minecraft_masks_the_session() {
        assert!(session_matches(0x1234_5678, 0x0204_0608));
        assert!(session_matches(0x1020_3040, 0x1020_3040));
        assert!(!session_matches(0x1020_3040, 0x1020_3041));
    }

    #[test]
    fn split_and_join_a_large_reply() {
        let names: Vec<String> = (0..120).map(|i| format!("player number {i}")).collect();
        let scores: Vec<String> = (0..120).map(|i| format!("{}", i * 7)).collect();
        let content = ReplyContent {
            details: vec![
                KeyValue::new("hostname", "Fort"),
                KeyValue::new("numplayers", "120"),
            ],
            tables: vec![
                Table {
                    kind: SECTION_PLAYERS,
                    columns: vec![
                        JoinedColumn {
                            name: "player_".into(),
                            values: names.iter().map(|n| Text::from(n.as_str())).collect(),
                        },
                        JoinedColumn {
                            name: "score_".into(),
                            values: scores.iter().map(|n| Text::from(n.as_str())).collect(),
                        },
                    ],
                },
                Table {
                    kind: SECTION_TEAMS,
                    columns: vec![JoinedColumn {
                        name: "team_t".into(),
                        values: vec!["Red".into(), "Blue".into()],
                    }],
                },
            ],
        };
        let parts = split_reply(&content, 5, 300).unwrap();
        assert!(parts.len() > 5);
        let mut reassembly = Reassembly::for_session(5);
        for part in parts.iter().rev() {
            let bytes = part.to_vec().unwrap();
            assert!(bytes.len() <= 300);
            assert_eq!(reassembly.push(&bytes).unwrap(), Pushed::New);
            assert_eq!(reassembly.push(&bytes).unwrap(), Pushed::Duplicate);
        }
        let reply = reassembly.reply().unwrap();
        assert!(reply.complete);
        assert_eq!(reply.content(), content);
    }

    #[test]
    fn split_refuses_empty_values_and_oversized_pairs() {
        let content = ReplyContent {
            details: vec![],
            tables: vec![Table {
                kind: 1,
                columns: vec![JoinedColumn {
                    name: "player_".into(),
                    values: vec!["".into()],
                }],
            }],
        };
        assert!(split_reply(&content, 1, 1400).is_err());
        let long = "x".repeat(2000);
        let content = ReplyContent {
            details: vec![KeyValue::new("hostname", &long)],
            tables: vec![],
        };
        assert!(split_reply(&content, 1, 1400).is_err());
    }

    #[test]
    fn reassembly_bounds() {
        let mut reassembly = Reassembly::for_session(1);
        let part = |n: u8| {
            let mut d = b"\x00\0\0\0\x01splitnum\x00".to_vec();
            d.extend([n, 0, b'k', 0, b'v', 0, 0]);
            d
        };
        assert!(reassembly.push(&part(MAX_PARTS)).is_err());
        assert_eq!(reassembly.push(&part(3)).unwrap(), Pushed::New);
        assert_eq!(reassembly.missing_parts(), [0, 1, 2]);
        let mut other = part(1);
        other[4] = 2;
        assert_eq!(reassembly.push(&other).unwrap(), Pushed::OtherSession);
        assert!(reassembly.push(b"\x00\0\0\0\x01notsplit\x00").is_err());
        assert_eq!(reassembly.parts_received(), 1);
        let reply = reassembly.reply().unwrap();
        assert!(!reply.complete);
    }
}
