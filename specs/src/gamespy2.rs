//! GameSpy 2 (Halo, SWAT 4, Hidden & Dangerous 2, ArmA, Battlefield Vietnam...): NUL-separated
//! text in binary frames over UDP.
//!
//! A client sends a [`Request`]: `FE FD 00`, a 4-byte request id the server echoes, and three
//! flag bytes asking for the server details, the players and the teams (`FF` asks, `00` does
//! not). The [`Reply`] holds exactly what was asked for, in that order, so it is decoded with
//! the request's [`Requested`] as context:
//!
//! - the details: `key\0value\0` pairs ended by an empty key ([`Details`]);
//! - each table ([`PlayerTable`], [`TeamTable`]): a `00` byte, the row count, the column names
//!   (`player_`, `score_`, `team_t`...) ended by an empty name, then the values row by row,
//!   each row decoded by name into a [`PlayerRow`] or [`TeamRow`].
//!
//! # Using the types
//!
//! - A client encodes `Request::new(id, Requested::DETAILS).encode_into(&mut buf)`, and decodes
//!   each datagram with `Reply::from_bytes_with(datagram, request.requested())` after checking
//!   `reply.request_id == request.request_id` (a foreign reply is refused by the id, not by
//!   the format). Most clients send `DETAILS` and then `TABLES` as two requests; see below.
//! - A responder decodes `Request::from_bytes(datagram)`, builds a [`Reply`] holding the
//!   sections of `request.requested()` (`None` for the others; [`RowTable::from_rows`] builds a
//!   table with the columns its first row writes) and writes it with
//!   `reply.encode_into_with(&mut buf, request.requested())`; `encoded_len_with` is exact.
//!   The protocol has no splitting: keep the reply under [`MAX_DATAGRAM`] (drop rows).
//!
//! # Where real servers differ
//!
//! - Most clients send one request per section (`FF 00 00`, then `00 FF FF`) because some
//!   servers answer only the first section of `FF FF FF`; the captures of Halo, Hidden &
//!   Dangerous 2 and ArmA are of that kind. Any combination decodes.
//! - Every table starts with a `00` byte that the notes do not mention (all captures have it).
//! - Text is Windows-1252 ([`ENCODING`]): Halo names hold bytes `\xab`, `\xb7`, and control
//!   bytes (`\x01` in a host name), all kept as sent, so a decoded reply re-encodes to the
//!   same bytes.
//! - Cells may be empty (ArmA sends an empty `team_` for every player) or padded (Halo sends
//!   scores as ` :00`), so cells are text with number helpers, never refused.
//! - ArmA answers an empty team table with count 0 and no columns; rows with no columns are
//!   refused, as their values could not be told apart.
//! - The row count is one byte: a table of more than 255 rows cannot be sent.

use std::borrow::Cow;

use query_wire::kv::{KvBlock, RowTable};
use query_wire::{KeyValues, Text, TextEncoding, Wire};
use serde::Serialize;

/// The bytes every request starts with.
pub const REQUEST_MAGIC: &[u8; 3] = b"\xfe\xfd\x00";
/// A flag byte that asks for its section.
pub const ASK: u8 = 0xff;
/// A flag byte that does not.
pub const SKIP: u8 = 0x00;
/// The encoding GameSpy 2 servers write their text in.
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;
/// The largest reply datagram a responder should send.
pub const MAX_DATAGRAM: usize = 1400;

/// A query: `FE FD 00`, the request id, and one flag byte per section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "big", magic = b"\xfe\xfd\x00")]
pub struct Request {
    /// Echoed by the server; clients pick it (ASCII such as `CORY` is common).
    pub request_id: u32,
    /// [`ASK`] for the server details.
    pub details: u8,
    /// [`ASK`] for the player table.
    pub players: u8,
    /// [`ASK`] for the team table.
    pub teams: u8,
}

impl Request {
    /// A request for the sections in `requested`.
    pub fn new(request_id: u32, requested: Requested) -> Self {
        let flag = |on: bool| if on { ASK } else { SKIP };
        Request {
            request_id,
            details: flag(requested.details),
            players: flag(requested.players),
            teams: flag(requested.teams),
        }
    }

    /// The sections the reply holds: a flag byte other than 0 asks (servers test for
    /// nonzero; clients send `FF`).
    pub fn requested(&self) -> Requested {
        Requested {
            details: self.details != 0,
            players: self.players != 0,
            teams: self.teams != 0,
        }
    }
}

/// Which sections a request asked for, and so which a reply holds: the reply's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Requested {
    /// The server's key/value pairs.
    pub details: bool,
    /// The player table.
    pub players: bool,
    /// The team table.
    pub teams: bool,
}

impl Requested {
    /// Everything, in one request (`FF FF FF`).
    pub const ALL: Requested = Requested {
        details: true,
        players: true,
        teams: true,
    };
    /// The details alone (`FF 00 00`).
    pub const DETAILS: Requested = Requested {
        details: true,
        players: false,
        teams: false,
    };
    /// Players and teams (`00 FF FF`).
    pub const TABLES: Requested = Requested {
        details: false,
        players: true,
        teams: true,
    };
}

/// A reply: `00`, the request id, then the sections the request asked for.
///
/// A responder encodes it through [`ReplyView`], whose sections may be any values that encode
/// like them: the sections of a state encoded once ([`Encoded`](query_wire::Encoded)).
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x00", ctx(requested: Requested), view = ReplyView)]
pub struct Reply<'a> {
    /// The request's id, echoed.
    #[wire(range)]
    pub request_id: u32,
    /// The server details, ended on the wire by an empty key.
    #[wire(when = requested.details, view)]
    pub details: Option<KvBlock<Details<'a>>>,
    /// The player table.
    #[wire(when = requested.players, view)]
    pub players: Option<PlayerTable<'a>>,
    /// The team table.
    #[wire(when = requested.teams, view)]
    pub teams: Option<TeamTable<'a>>,
}

impl Reply<'_> {
    /// The sections this reply holds, the context to encode it with.
    pub fn requested(&self) -> Requested {
        Requested {
            details: self.details.is_some(),
            players: self.players.is_some(),
            teams: self.teams.is_some(),
        }
    }
}

/// The server details. Keys that are not fields land in [`rules`](Details::rules), in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "nul", encoding = "windows-1252")]
pub struct Details<'a> {
    /// `hostname`, the server's name, control bytes included.
    pub hostname: Option<Cow<'a, str>>,
    /// `gamename`.
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// `gamever`.
    #[kv(key = "gamever")]
    pub game_version: Option<Cow<'a, str>>,
    /// `hostport`, the game port.
    #[kv(key = "hostport")]
    pub host_port: Option<u16>,
    /// `mapname`.
    #[kv(key = "mapname")]
    pub map_name: Option<Cow<'a, str>>,
    /// `gametype`.
    #[kv(key = "gametype")]
    pub game_type: Option<Cow<'a, str>>,
    /// `gamemode`, e.g. `openplaying`.
    #[kv(key = "gamemode")]
    pub game_mode: Option<Cow<'a, str>>,
    /// `numplayers`.
    #[kv(key = "numplayers")]
    pub num_players: Option<u32>,
    /// `maxplayers`.
    #[kv(key = "maxplayers")]
    pub max_players: Option<u32>,
    /// `password`: `0`/`1`.
    pub password: Option<bool>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// The player table: a `00` byte, then the table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\x00")]
pub struct PlayerTable<'a> {
    /// The columns and the rows.
    pub table: RowTable<'a, PlayerRow<'a>>,
}

/// The team table: a `00` byte, then the table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\x00")]
pub struct TeamTable<'a> {
    /// The columns and the rows.
    pub table: RowTable<'a, TeamRow<'a>>,
}

/// One player, by column name. Cells are text as sent (see the module notes); an absent
/// field encodes as an empty cell when the table has its column.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct PlayerRow<'a> {
    /// `player_`.
    #[kv(key = "player_")]
    pub name: Option<Cow<'a, str>>,
    /// `score_` (Halo pads it: ` :00`); see [`PlayerRow::score_number`].
    #[kv(key = "score_")]
    pub score: Option<Cow<'a, str>>,
    /// `ping_`, milliseconds.
    #[kv(key = "ping_")]
    pub ping: Option<Cow<'a, str>>,
    /// `team_`: a team number on most games, empty on ArmA.
    #[kv(key = "team_")]
    pub team: Option<Cow<'a, str>>,
    /// Every other column (`deaths_`, `kills_`...), name as sent.
    #[kv(rest)]
    pub extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// One team, by column name.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct TeamRow<'a> {
    /// `team_t`, the team's name.
    #[kv(key = "team_t")]
    pub name: Option<Cow<'a, str>>,
    /// `score_t`.
    #[kv(key = "score_t")]
    pub score: Option<Cow<'a, str>>,
    /// Every other column, name as sent.
    #[kv(rest)]
    pub extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// One raw `key\0value\0` pair, the bytes as sent, for code that reads pairs one by one
/// (GameSpy 3 parts); [`Details`] is the typed view of a whole list. The key is never empty:
/// an empty key ends a list.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Wire, Serialize)]
pub struct KeyValue<'a> {
    /// The key, e.g. `hostname`.
    #[wire(str(nul))]
    pub key: Text<'a>,
    /// The value, possibly empty.
    #[wire(str(nul))]
    pub value: Text<'a>,
}

impl<'a> KeyValue<'a> {
    /// A pair of UTF-8 strings, written as their bytes.
    pub fn new(key: &'a str, value: &'a str) -> Self {
        KeyValue {
            key: Text::from(key),
            value: Text::from(value),
        }
    }
}

/// The first value of `key` in `pairs`.
pub fn lookup<'p, 'a>(pairs: &'p [KeyValue<'a>], key: &str) -> Option<&'p Text<'a>> {
    pairs
        .iter()
        .find(|p| p.key.as_bytes() == key.as_bytes())
        .map(|p| &p.value)
}

/// A column name without its table suffix: `player_` → `player`, `score_t` → `score`.
pub fn field_name(column: &[u8]) -> &[u8] {
    column
        .strip_suffix(b"_t")
        .or_else(|| column.strip_suffix(b"_"))
        .unwrap_or(column)
}

/// A cell read as a number, surrounding spaces ignored; `None` when it is not one.
pub fn cell_number(cell: Option<&str>) -> Option<i64> {
    cell?.trim().parse().ok()
}

impl PlayerRow<'_> {
    /// The score as a number, when it is one.
    pub fn score_number(&self) -> Option<i64> {
        cell_number(self.score.as_deref())
    }

    /// The ping as a number, when it is one.
    pub fn ping_number(&self) -> Option<i64> {
        cell_number(self.ping.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Decode, Encode, ErrorKind};

    #[test]
    fn request_bytes() {
        let request = Request::new(0x434f_5259, Requested::DETAILS);
        assert_eq!(request.to_vec().unwrap(), b"\xfe\xfd\x00CORY\xff\x00\x00");
        let decoded = Request::from_bytes(b"\xfe\xfd\x00CORX\x00\xff\xff").unwrap();
        assert_eq!(decoded.requested(), Requested::TABLES);
        assert!(Request::from_bytes(b"\xfe\xfd\x09CORX\x00\xff\xff").is_err());
    }

    #[test]
    fn a_reply_with_everything_round_trips() {
        let players = RowTable::from_rows(vec![
            PlayerRow {
                name: Some("Ann".into()),
                team: Some("".into()),
                ..PlayerRow::default()
            },
            PlayerRow {
                name: Some("Bo".into()),
                team: Some("1".into()),
                ..PlayerRow::default()
            },
        ])
        .unwrap();
        let reply = Reply {
            request_id: 7,
            details: Some(KvBlock(Details {
                hostname: Some("Fort".into()),
                map_name: Some("".into()),
                ..Details::default()
            })),
            players: Some(PlayerTable { table: players }),
            teams: Some(TeamTable::default()),
        };
        let bytes = reply.to_vec_with(Requested::ALL).unwrap();
        assert_eq!(
            bytes,
            b"\x00\x00\x00\x00\x07hostname\0Fort\0mapname\0\0\0\
              \x00\x02player_\0team_\0\0Ann\0\0Bo\x001\0\
              \x00\x00\0"
        );
        assert_eq!(reply.encoded_len(Requested::ALL), bytes.len());
        let decoded = Reply::from_bytes_with(&bytes, Requested::ALL).unwrap();
        assert_eq!(decoded, reply);
    }

    #[test]
    fn a_table_short_of_values_is_an_error() {
        let err = Reply::from_bytes_with(
            b"\x00\x00\x00\x00\x07\x00\x02player_\0\0Ann\0",
            Requested {
                players: true,
                ..Requested::default()
            },
        )
        .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
            "{err}"
        );
    }

    #[test]
    fn a_row_key_that_is_not_a_column_is_refused() {
        let table = PlayerTable {
            table: RowTable {
                columns: vec!["player_".into()],
                rows: vec![PlayerRow {
                    name: Some("Ann".into()),
                    ping: Some("5".into()),
                    ..PlayerRow::default()
                }],
            },
        };
        assert!(table.to_vec().is_err());
    }
}
