//! Unity / Multiplay Server Query Protocol (SQP), big-endian.
//!
//! A client asks for a challenge (`00` + 4 zero bytes), the server answers `00` + a random u32;
//! the client then sends `01 | challenge | version u16 (=1) | requested chunks u8` and the server
//! answers `01 | challenge | version | current packet | last packet | packet length u16` followed
//! by the requested chunks. Strings are a u8 length and UTF-8.
//!
//! Where this follows the notes rather than the Unity page:
//! - The page documents only ServerInfo. ServerRules (`0x02`), PlayerInfo (`0x04`), TeamInfo
//!   (`0x08`) and Metrics (`0x10`) are declared as the reference client decodes them.
//! - Chunks carry no type tag: they come in ascending bit order, so [`Chunks`] needs the
//!   request's [`ChunkSet`] as context. Each chunk has a u32 length; bytes left inside a chunk
//!   are skipped as future fields, and reading past it is an error.
//! - ServerRules values are typed `0` byte, `1` u16, `2` u32, `3` u64, `4` string, `5` f32.
//! - A reply may be split over several datagrams (current / last packet). No known server does
//!   it, but the reference client's fixtures do: [`QueryResponseFragment`] keeps one
//!   datagram's payload, and the payloads joined in packet order decode as [`Chunks`].
//! - PlayerInfo and TeamInfo: when the row count is 0 the rest of the chunk may be absent;
//!   otherwise a field count of 0 is an error.
//!
//! The notes say the challenge request's 4 bytes are zeros, and they are written as zeros. On
//! read they are not checked: this is our choice, to stay lenient to clients that put garbage
//! there, since the bytes carry nothing.

use query_wire::{bitflags, Padding, Wire};
use serde::Serialize;

/// Version 1 is the only one clients send and servers accept.
pub const VERSION: u16 = 1;

/// Some servers (Unity's FPSSample) answer with version 0 and the version 1 layout.
pub const VERSION_UNSET: u16 = 0;

/// The longest string a u8 length can describe.
pub const MAX_STRING: usize = 255;

/// The most metrics a Metrics chunk may carry.
pub const MAX_METRICS: usize = 25;

bitflags! {
    /// The chunks a query asks for; the response carries them in this bit order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    #[serde(transparent)]
    pub struct ChunkSet: u8 {
        /// Server name, game type, build, map, players, port.
        const SERVER_INFO = 0x01;
        /// Typed key/value rules.
        const SERVER_RULES = 0x02;
        /// The player table.
        const PLAYER_INFO = 0x04;
        /// The team table.
        const TEAM_INFO = 0x08;
        /// Up to 25 f32 metrics.
        const METRICS = 0x10;
    }
}

/// Every packet a client sends, told apart by its first byte.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "big", tag = u8)]
pub enum Request {
    /// `00`: asks for a challenge.
    #[wire(tag = 0)]
    Challenge(ChallengeRequest),
    /// `01`: asks for chunks, proving the challenge.
    #[wire(tag = 1)]
    Query(QueryRequest),
}

/// The body of a challenge request: four bytes that pad it to the size of the reply, so it
/// cannot be used for amplification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(endian = "big")]
pub struct ChallengeRequest {
    /// Written as zeros, ignored on read.
    pub padding: Padding<4>,
}

/// The body of a query request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct QueryRequest {
    /// The challenge the server issued.
    pub challenge: u32,
    /// [`VERSION`].
    pub version: u16,
    /// Which chunks to answer with.
    #[wire(bits)]
    pub requested: ChunkSet,
}

/// Every packet a server sends, told apart by its first byte. Decoding a query response needs
/// the chunks that were asked for.
// The query variant is large, but boxing it would allocate on every decode.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "big", tag = u8, ctx(requested: ChunkSet), view = ResponseView)]
pub enum Response<'a> {
    /// `00`: the challenge to prove in the query.
    #[wire(tag = 0)]
    Challenge(ChallengeResponse),
    /// `01`: the requested chunks in one datagram.
    #[wire(tag = 1)]
    Query(#[wire(ctx = requested, view)] QueryResponse<'a>),
}

/// The body of a challenge response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct ChallengeResponse {
    /// A random number the client must send back.
    pub challenge: u32,
}

/// The body of a query response that fits one datagram (all known servers).
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "big", ctx(requested: ChunkSet), view = QueryResponseView)]
pub struct QueryResponse<'a> {
    /// Echo of the request's challenge.
    pub challenge: u32,
    /// [`VERSION`].
    pub version: u16,
    /// This datagram's index, 0 when unsplit.
    pub current_packet: u8,
    /// The last datagram's index, 0 when unsplit.
    pub last_packet: u8,
    /// The chunks, behind a u16 packet length.
    #[wire(len(prefix = u16), ctx = requested, view)]
    pub chunks: Chunks<'a>,
}

/// The first bytes of every query response datagram: enough to tell whose reply it is (the
/// challenge echo) and which version it speaks before the rest is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x01")]
pub struct QueryResponseHead {
    /// Echo of the request's challenge.
    #[wire(range)]
    pub challenge: u32,
    /// [`VERSION`], or 0 from servers that never set it.
    pub version: u16,
}

/// One datagram of a query response, whatever its place in a split reply: the payload is kept
/// raw, to be joined with the other parts' payloads in `current_packet` order.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x01")]
pub struct QueryResponseFragment<'a> {
    /// Echo of the request's challenge.
    pub challenge: u32,
    /// [`VERSION`].
    pub version: u16,
    /// This datagram's index.
    pub current_packet: u8,
    /// The last datagram's index.
    pub last_packet: u8,
    /// This datagram's share of the chunk bytes.
    #[wire(bytes(prefix = u16))]
    pub payload: &'a [u8],
}

/// The requested chunks, in ascending bit order, each behind a u32 length.
#[derive(Debug, Clone, PartialEq, Default, Wire, Serialize)]
#[wire(endian = "big", ctx(requested: ChunkSet), view = ChunksView)]
pub struct Chunks<'a> {
    /// Present when [`ChunkSet::SERVER_INFO`] was requested.
    #[wire(
        when = requested.contains(ChunkSet::SERVER_INFO),
        len(prefix = u32, surplus = "skip")
    )]
    pub server_info: Option<ServerInfo<'a>>,
    /// Present when [`ChunkSet::SERVER_RULES`] was requested; rules fill the chunk, uncounted.
    #[wire(
        when = requested.contains(ChunkSet::SERVER_RULES),
        len(prefix = u32),
        until_end,
        view
    )]
    pub server_rules: Option<Vec<Rule<'a>>>,
    /// Present when [`ChunkSet::PLAYER_INFO`] was requested.
    #[wire(
        when = requested.contains(ChunkSet::PLAYER_INFO),
        len(prefix = u32, surplus = "skip"),
        view
    )]
    pub player_info: Option<Table<'a>>,
    /// Present when [`ChunkSet::TEAM_INFO`] was requested.
    #[wire(
        when = requested.contains(ChunkSet::TEAM_INFO),
        len(prefix = u32, surplus = "skip"),
        view
    )]
    pub team_info: Option<Table<'a>>,
    /// Present when [`ChunkSet::METRICS`] was requested.
    #[wire(
        when = requested.contains(ChunkSet::METRICS),
        len(prefix = u32, surplus = "skip")
    )]
    pub metrics: Option<Metrics>,
}

/// What Multiplay Hosting checks a server against.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct ServerInfo<'a> {
    /// Players connected now.
    pub current_players: u16,
    /// Player slots.
    pub max_players: u16,
    /// The server's name.
    #[wire(str(prefix = u8))]
    pub server_name: &'a str,
    /// The game or mode.
    #[wire(str(prefix = u8))]
    pub game_type: &'a str,
    /// The build or version of the server image.
    #[wire(str(prefix = u8))]
    pub build_id: &'a str,
    /// The loaded map.
    #[wire(str(prefix = u8))]
    pub map: &'a str,
    /// The game port.
    pub port: u16,
}

/// One server rule: a key, the value's type and the value.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "big", view = RuleView)]
pub struct Rule<'a> {
    /// The rule's name.
    #[wire(str(prefix = u8))]
    pub key: &'a str,
    /// The value's type code, see [`Value`]: written from the value and checked against it.
    #[wire(computed = value.tag())]
    pub kind: u8,
    /// The value, typed by `kind`.
    #[wire(ctx = *kind)]
    pub value: Value<'a>,
}

/// A typed value; the type code comes from the rule or the table's field header, not from the
/// value itself.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "big", tag = u8, external)]
pub enum Value<'a> {
    /// Type `0`.
    #[wire(tag = 0)]
    Byte(u8),
    /// Type `1`.
    #[wire(tag = 1)]
    U16(u16),
    /// Type `2`.
    #[wire(tag = 2)]
    U32(u32),
    /// Type `3`.
    #[wire(tag = 3)]
    U64(u64),
    /// Type `4`: a u8-length UTF-8 string.
    #[wire(tag = 4)]
    Str(#[wire(str(prefix = u8))] &'a str),
    /// Type `5`: came with Metrics.
    #[wire(tag = 5)]
    F32(f32),
}

/// PlayerInfo and TeamInfo: `count` rows of values typed by the field headers.
///
/// The rows are kept flat, in the wire's order: row `r`, field `f` is
/// `values[r * fields.len() + f]` (see [`Table::rows`]).
#[derive(Debug, Clone, PartialEq, Default, Wire, Serialize)]
#[wire(endian = "big", view = TableView)]
pub struct Table<'a> {
    /// Number of rows: written from the values and the fields, and checked against them.
    #[wire(computed = fields.as_ref().map_or(0, |f| values.count().checked_div(f.count()).unwrap_or(0)))]
    pub count: u16,
    /// Column names and types; absent when `count` is 0. A table with rows has at least one
    /// column: a field count of 0 is an error both ways ([`ErrorKind::TooFew`]).
    ///
    /// [`ErrorKind::TooFew`]: query_wire::ErrorKind::TooFew
    #[wire(when = *count > 0, count(prefix = u8), min_count = 1)]
    pub fields: Option<Vec<FieldHeader<'a>>>,
    /// `count × fields` values, typed by their column's header.
    #[wire(
        count = fields.as_ref().map_or(0, |f| f.count()) * usize::from(*count),
        each_ctx = |column| fields
            .as_ref()
            .and_then(|f| f.with_item(column, |h| h.kind))
            .unwrap_or(0),
        cycle = fields.as_ref().map_or(0, |f| f.count())
    )]
    pub values: Vec<Value<'a>>,
}

impl<'a> Table<'a> {
    /// The rows, each as `(field name, value)` pairs in header order.
    pub fn rows(&self) -> impl Iterator<Item = Vec<(&'a str, &Value<'a>)>> + '_ {
        let fields = self.fields.as_deref().unwrap_or(&[]);
        self.values
            .chunks(fields.len().max(1))
            .filter(move |_| !fields.is_empty())
            .map(move |row| fields.iter().map(|f| f.name).zip(row).collect())
    }
}

/// A column of a player or team table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct FieldHeader<'a> {
    /// The column's name, e.g. `name`, `score`.
    #[wire(str(prefix = u8))]
    pub name: &'a str,
    /// The type code of every value in the column.
    pub kind: u8,
}

/// Up to [`MAX_METRICS`] numbers whose meaning the game defines.
#[derive(Debug, Clone, PartialEq, Default, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Metrics {
    /// The values, in the game's order.
    #[wire(count(prefix = u8), max_count = MAX_METRICS)]
    pub values: Vec<f32>,
}
