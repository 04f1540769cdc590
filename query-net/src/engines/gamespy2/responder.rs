//! The GameSpy 2 responder: each request answered with exactly the sections its flags ask
//! for, from the server state.
//!
//! - Details: `hostname`, `gamever`, `hostport` (when the state has a port), `mapname`,
//!   `gametype`, `numplayers`, `maxplayers`, `password`, `gamename` when configured, then the
//!   state's rules. Players: `player_`, `score_`, `ping_`, `team_`. Teams: `team_t`, `score_t`.
//! - `team_` holds what real servers send (Halo, Hidden & Dangerous 2): the number of the
//!   player's team, its row in the teams table of the same reply (`0`, `1`), which clients
//!   resolve to `team_t`; empty for a player without a team. A team the reply's table does not
//!   hold (not in the state's list, or cut) goes by its name, which lenient clients read.
//! - One datagram, as real servers send: the protocol has no splitting. The sections are cut
//!   so that a reply holding all three fits [`GameSpy2Config::max_datagram`]: team rows first,
//!   then player rows, then rules, each dropped from the end until it fits (and at most 255
//!   rows, the count being one byte). `numplayers` keeps the true count, so a client sees that
//!   the list was cut, as with the SA:MP responder's cut lists.
//! - Text goes out in [`GameSpy2Config::encoding`] (Windows-1252 by default, as the games
//!   send it); NUL (which would end a cell) and characters the encoding lacks become `?`, and
//!   every text is cut to 255 bytes. The specs write cells in Windows-1252, which maps every
//!   byte, so text in another encoding is handed to them as the Windows-1252 reading of its
//!   bytes, and goes out as those bytes.
//!
//! The sections are encoded through the specs' types once per state snapshot; a reply is
//! encoded through [`ReplyView`], the cached sections in their places, allocating nothing.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;

use query_specs::gamespy2::{
    Details, PlayerRow, PlayerTable, Reply, ReplyView, Request, TeamRow, TeamTable, ENCODING,
    MAX_DATAGRAM,
};
use query_wire::kv::{FromKeyValues, KvBlock, RowTable};
use query_wire::{Decode, Encode, Encoded, TextEncoding};

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{RuleValue, ServerState, SharedState};

/// Texts are cut to this many bytes.
const MAX_TEXT: usize = 255;
/// The most rows a table can announce: the count is one byte.
const MAX_ROWS: usize = 255;
/// `00` and the request id, which come before the sections.
const HEADER_LEN: usize = Reply::REQUEST_ID_RANGE.end;

/// How a [`GameSpy2Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSpy2Config {
    /// `gamename` (`halor`, `swat4`...); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire; characters it cannot represent, and the NUL
    /// that would end a cell, are sent as `?`.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for GameSpy2Config {
    /// No game name, Windows-1252, 1400-byte datagrams.
    fn default() -> Self {
        GameSpy2Config {
            game_name: String::new(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Answers GameSpy 2 queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Fort".into(), max_players: 8, ..ServerState::default() });
/// let mut service = Service::new(GameSpy2Responder::new(state, GameSpy2Config::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\xfe\xfd\x00CORY\xff\x00\x00").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\x00CORYhostname\0Fort\0numplayers\x000\0maxplayers\x008\0password\x000\0\0".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct GameSpy2Responder {
    state: SharedState,
    config: GameSpy2Config,
    /// Keyed by the datagram cap the sections were cut for.
    sections: SnapshotCache<Sections, usize>,
}

impl GameSpy2Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: GameSpy2Config) -> Self {
        GameSpy2Responder {
            state,
            config,
            sections: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GameSpy2Config {
        &self.config
    }
}

impl Responder for GameSpy2Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let max = self.config.max_datagram.min(replies.max_datagram());
        let config = &self.config;
        let built = self.sections.get(&self.state, max, |state, stale| {
            Sections::build(state, config, max, stale.map(|s| s.bytes))
        });
        let Ok((_, sections)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let asked = request.requested();
        let section = |on: bool, range: &Range<usize>| {
            on.then(|| Encoded::new(&sections.bytes[range.clone()]))
        };
        let reply = ReplyView {
            request_id: request.request_id,
            details: section(asked.details, &sections.details),
            players: section(asked.players, &sections.players),
            teams: section(asked.teams, &sections.teams),
        };
        let sent = replies.push_with(|buf| {
            let cap = max.min(buf.len());
            reply.encode_into_with(&mut buf[..cap], asked)
        });
        Verdict::pushed(sent)
    }
}

/// The encoded sections of one state snapshot.
#[derive(Debug)]
struct Sections {
    bytes: Vec<u8>,
    details: Range<usize>,
    players: Range<usize>,
    teams: Range<usize>,
}

impl Sections {
    fn build(
        state: &ServerState,
        config: &GameSpy2Config,
        max: usize,
        reuse: Option<Vec<u8>>,
    ) -> Result<Self, query_wire::Error> {
        let encoding = config.encoding;
        let mut details = Details {
            hostname: Some(text(&state.name, encoding)),
            game_name: non_empty(&config.game_name, encoding),
            game_version: non_empty(&state.version, encoding),
            host_port: (state.port != 0).then_some(state.port),
            map_name: non_empty(&state.map, encoding),
            game_type: non_empty(&state.game_type, encoding),
            game_mode: None,
            num_players: Some(state.num_players()),
            max_players: Some(state.max_players),
            password: Some(state.password),
            rules: Vec::new(),
        };
        let mut teams: Vec<TeamRow<'_>> = state
            .teams
            .iter()
            .take(MAX_ROWS)
            .map(|t| TeamRow {
                name: Some(text(&t.name, encoding)),
                score: Some(Cow::Owned(t.score.to_string())),
                extra: Vec::new(),
            })
            .collect();
        let budget = max.saturating_sub(HEADER_LEN);
        let details_len = |d: &Details<'_>| KvBlock(d.clone()).encoded_len(());
        let table_len =
            |rows: &[PlayerRow<'_>]| players_table(rows).map_or(usize::MAX, |t| t.encoded_len(()));
        let teams_len =
            |rows: &[TeamRow<'_>]| teams_table(rows).map_or(usize::MAX, |t| t.encoded_len(()));
        let core = details_len(&details);
        while !teams.is_empty() && core + teams_len(&teams) + table_len(&[]) > budget {
            teams.pop();
        }
        // The teams the reply carries, by the state's name: a player's `team_` is the row.
        let sent_teams = &state.teams[..teams.len()];
        let mut players: Vec<PlayerRow<'_>> = state
            .players
            .iter()
            .take(MAX_ROWS)
            .map(|p| PlayerRow {
                name: Some(text(&p.name, encoding)),
                score: Some(Cow::Owned(p.score.to_string())),
                ping: Some(Cow::Owned(p.ping.to_string())),
                team: Some(match p.team.as_deref() {
                    None => Cow::Borrowed(""),
                    Some(name) => match sent_teams.iter().position(|t| t.name == name) {
                        Some(row) => Cow::Owned(row.to_string()),
                        None => text(name, encoding),
                    },
                }),
                extra: Vec::new(),
            })
            .collect();
        let fixed = core + teams_len(&teams);
        while !players.is_empty() && fixed.saturating_add(table_len(&players)) > budget {
            players.pop();
        }
        let mut room = budget.saturating_sub(fixed.saturating_add(table_len(&players)));
        for (key, value) in &state.rules {
            let key = text(key, encoding);
            if key.is_empty() || <Details<'_> as FromKeyValues<'_>>::declares_key(key.as_bytes()) {
                continue;
            }
            let value = match value {
                RuleValue::Text(t) => text(t, encoding),
                other => Cow::Owned(text(&other.to_string(), encoding).into_owned()),
            };
            // One byte a character: the specs' cells are Windows-1252.
            let len = ENCODING.encoded_len(&key) + ENCODING.encoded_len(&value) + 2;
            if len > room {
                break;
            }
            room -= len;
            details.rules.push((key, value));
        }

        let mut bytes = reuse.unwrap_or_default();
        bytes.clear();
        let details = append(&mut bytes, &KvBlock(details))?;
        let players = append(&mut bytes, &players_table(&players)?)?;
        let teams = append(&mut bytes, &teams_table(&teams)?)?;
        Ok(Sections {
            bytes,
            details,
            players,
            teams,
        })
    }
}

fn players_table<'a>(rows: &[PlayerRow<'a>]) -> Result<PlayerTable<'a>, query_wire::Error> {
    let table = RowTable::from_rows(rows.to_vec())?;
    Ok(PlayerTable {
        table: RowTable {
            columns: table.columns,
            rows: table.rows,
        },
    })
}

fn teams_table<'a>(rows: &[TeamRow<'a>]) -> Result<TeamTable<'a>, query_wire::Error> {
    let table = RowTable::from_rows(rows.to_vec())?;
    Ok(TeamTable {
        table: RowTable {
            columns: table.columns,
            rows: table.rows,
        },
    })
}

/// Encodes `packet` at the end of `bytes`; where it landed.
fn append<P: Encode<Ctx = ()>>(
    bytes: &mut Vec<u8>,
    packet: &P,
) -> Result<Range<usize>, query_wire::Error> {
    let start = bytes.len();
    bytes.resize(start + packet.encoded_len(()), 0);
    let written = packet.encode_into_with(&mut bytes[start..], ())?;
    bytes.truncate(start + written);
    Ok(start..bytes.len())
}

/// [`text`] of a non-empty string.
fn non_empty(s: &str, encoding: TextEncoding) -> Option<Cow<'_, str>> {
    (!s.is_empty()).then(|| text(s, encoding))
}

/// `text` as it can go into a cell in `encoding`: NUL and characters `encoding` lacks become
/// `?`; cut to 255 bytes. In another encoding than the specs' Windows-1252, the result is the
/// Windows-1252 reading of the bytes to send, which the specs write back as those bytes.
fn text(text: &str, encoding: TextEncoding) -> Cow<'_, str> {
    let sendable = fit::replace_unsendable(fit::cut(text, encoding, MAX_TEXT), encoding, &['\0']);
    if encoding == ENCODING {
        return sendable;
    }
    let bytes = encoding.encode_lossy(&sendable);
    Cow::Owned(ENCODING.decode_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PlayerState, TeamState};
    use query_specs::gamespy2::Requested;

    /// A reply holding every section of `sections`, to request 1.
    fn whole_reply(sections: &Sections) -> Vec<u8> {
        let section = |range: &Range<usize>| Some(Encoded::new(&sections.bytes[range.clone()]));
        ReplyView {
            request_id: 1,
            details: section(&sections.details),
            players: section(&sections.players),
            teams: section(&sections.teams),
        }
        .to_vec_with(Requested::ALL)
        .unwrap()
    }

    #[test]
    fn text_loses_what_a_cell_cannot_carry() {
        assert_eq!(text("a\0b Ж é", ENCODING), "a?b ? é");
        assert_eq!(text(&"x".repeat(300), ENCODING).len(), MAX_TEXT);
        // In UTF-8 the cut is at 255 bytes between characters, and every character fits.
        let long = "é".repeat(200);
        assert_eq!(
            ENCODING
                .encode_lossy(&text(&long, TextEncoding::Utf8))
                .len(),
            254
        );
        assert_eq!(text("a\0Ж", TextEncoding::Utf8), "a?Ð–");
    }

    /// The reply `config` gives for `state`, every section asked for.
    fn reply_bytes(state: ServerState, config: GameSpy2Config) -> Vec<u8> {
        let mut service =
            crate::service::Service::new(GameSpy2Responder::new(SharedState::new(state), config))
                .rate_limit(None);
        let from = "192.0.2.1:5000".parse().unwrap();
        let replies: Vec<Vec<u8>> = service
            .handle(from, b"\xfe\xfd\x00\x00\x00\x00\x01\xff\xff\xff")
            .map(<[u8]>::to_vec)
            .collect();
        assert_eq!(replies.len(), 1);
        replies.into_iter().next().unwrap()
    }

    fn teamed_state() -> ServerState {
        let player = |name: &str, team: Option<&str>| PlayerState {
            name: name.into(),
            team: team.map(Into::into),
            ..PlayerState::default()
        };
        ServerState {
            name: "Zoë's Сервер".into(),
            players: vec![
                player("Ann", Some("Blue")),
                player("Bo", Some("Red")),
                player("Cy", None),
                player("Di", Some("Green")),
            ],
            teams: ["Red", "Blue"]
                .map(|name| TeamState {
                    name: name.into(),
                    score: 1,
                })
                .to_vec(),
            ..ServerState::default()
        }
    }

    #[test]
    fn a_players_team_is_its_row_in_the_teams_table() {
        let bytes = reply_bytes(teamed_state(), GameSpy2Config::default());
        let reply = Reply::from_bytes_with(&bytes, Requested::ALL).unwrap();
        let teams: Vec<_> = reply.teams.unwrap().table.rows;
        assert_eq!(teams[0].name.as_deref(), Some("Red"));
        assert_eq!(teams[1].name.as_deref(), Some("Blue"));
        let cells: Vec<_> = reply
            .players
            .unwrap()
            .table
            .rows
            .into_iter()
            .map(|p| p.team.unwrap_or_default())
            .collect();
        // Blue is row 1, Red row 0; no team is an empty cell; a team the table does not
        // hold goes by its name.
        assert_eq!(cells, ["1", "0", "", "Green"]);
    }

    #[test]
    fn a_team_cut_from_the_table_goes_by_its_name() {
        let mut state = teamed_state();
        // More teams than a table can count: the table holds the first 255.
        state.teams = (0..300)
            .map(|i| TeamState {
                name: format!("t{i}"),
                score: 1,
            })
            .collect();
        state.players[0].team = Some("t5".into());
        state.players[1].team = Some("t299".into());
        let sections = Sections::build(&state, &GameSpy2Config::default(), 4000, None).unwrap();
        let reply = whole_reply(&sections);
        let decoded = Reply::from_bytes_with(&reply, Requested::ALL).unwrap();
        assert_eq!(decoded.teams.unwrap().table.rows.len(), MAX_ROWS);
        let rows = decoded.players.unwrap().table.rows;
        assert_eq!(rows[0].team.as_deref(), Some("5"));
        assert_eq!(rows[1].team.as_deref(), Some("t299"));
    }

    #[test]
    fn text_goes_out_in_the_configured_encoding() {
        for (encoding, name) in [
            (TextEncoding::Windows1252, &b"Zo\xeb's ??????"[..]),
            (TextEncoding::Utf8, "Zoë's Сервер".as_bytes()),
            (TextEncoding::Windows1251, b"Zo?'s \xd1\xe5\xf0\xe2\xe5\xf0"),
        ] {
            let config = GameSpy2Config {
                encoding,
                ..GameSpy2Config::default()
            };
            let bytes = reply_bytes(teamed_state(), config);
            let mut expected = b"\x00\x00\x00\x00\x01hostname\0".to_vec();
            expected.extend_from_slice(name);
            expected.push(0);
            assert!(bytes.starts_with(&expected), "{encoding}: {bytes:?}");
        }
    }

    #[test]
    fn a_big_state_is_cut_to_one_datagram_holding_every_section() {
        let state = ServerState {
            name: "Big".into(),
            max_players: 500,
            players: (0..400)
                .map(|i| PlayerState {
                    name: format!("player number {i}"),
                    team: Some("Red".into()),
                    ..PlayerState::default()
                })
                .collect(),
            teams: vec![TeamState {
                name: "Red".into(),
                score: 3,
            }],
            rules: (0..50)
                .map(|i| (format!("rule{i}"), RuleValue::Integer(i)))
                .collect(),
            ..ServerState::default()
        };
        let sections =
            Sections::build(&state, &GameSpy2Config::default(), MAX_DATAGRAM, None).unwrap();
        assert!(sections.bytes.len() + HEADER_LEN <= MAX_DATAGRAM);
        let reply = whole_reply(&sections);
        let decoded = Reply::from_bytes_with(&reply, Requested::ALL).unwrap();
        let details = decoded.details.unwrap().0;
        assert_eq!(details.num_players, Some(400));
        let rows = decoded.players.unwrap().table.rows.len();
        assert!(rows > 10 && rows < 400, "{rows}");
        assert_eq!(decoded.teams.unwrap().table.rows.len(), 1);
    }
}
