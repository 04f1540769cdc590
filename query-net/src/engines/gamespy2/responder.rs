//! The GameSpy 2 responder: each request answered with exactly the sections its flags ask
//! for, from the server state.
//!
//! - Details: `hostname`, `gamever`, `hostport` (when the state has a port), `mapname`,
//!   `gametype`, `numplayers`, `maxplayers`, `password`, `gamename` when configured, then the
//!   state's rules. Players: `player_`, `score_`, `ping_`, `team_` (the team's name as the
//!   state holds it, empty without one). Teams: `team_t`, `score_t`.
//! - One datagram, as real servers send: the protocol has no splitting. The sections are cut
//!   so that a reply holding all three fits [`GameSpy2Config::max_datagram`]: team rows first,
//!   then player rows, then rules, each dropped from the end until it fits (and at most 255
//!   rows, the count being one byte). `numplayers` keeps the true count, so a client sees that
//!   the list was cut, as with the SA:MP responder's cut lists.
//! - Text goes out in Windows-1252, the specs' encoding; NUL (which would end a cell) and
//!   characters the encoding lacks become `?`, and every text is cut to 255 bytes.
//!
//! The sections are encoded through the specs' types once per state snapshot; a reply writes
//! its header through [`Reply`] and copies the cached sections after it, allocating nothing.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;

use query_specs::gamespy2::{
    Details, PlayerRow, PlayerTable, Reply, Request, Requested, TeamRow, TeamTable, ENCODING,
    MAX_DATAGRAM,
};
use query_wire::kv::{FromKeyValues, KvBlock, RowTable};
use query_wire::{Decode, Encode, Writer};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::state::{RuleValue, ServerState, SharedState};

/// Texts are cut to this many bytes.
const MAX_TEXT: usize = 255;
/// The most rows a table can announce: the count is one byte.
const MAX_ROWS: usize = 255;
/// `00` and the request id.
const HEADER_LEN: usize = 5;

/// How a [`GameSpy2Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSpy2Config {
    /// `gamename` (`halor`, `swat4`...); not sent when empty.
    pub game_name: String,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for GameSpy2Config {
    /// No game name, 1400-byte datagrams.
    fn default() -> Self {
        GameSpy2Config {
            game_name: String::new(),
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
    sections: Option<Sections>,
}

impl GameSpy2Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: GameSpy2Config) -> Self {
        GameSpy2Responder {
            state,
            config,
            sections: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GameSpy2Config {
        &self.config
    }

    fn refresh(&mut self, max: usize) -> Result<(), query_wire::Error> {
        let current = self.state.load();
        if matches!(&self.sections, Some(s) if Arc::ptr_eq(&s.snapshot, &current) && s.max == max) {
            return Ok(());
        }
        let reuse = self.sections.take().map(|s| s.bytes);
        self.sections = Some(Sections::build(
            Arc::clone(&current),
            &self.config,
            max,
            reuse,
        )?);
        Ok(())
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
        if self.refresh(max).is_err() {
            return Verdict::Dropped(DropReason::Unsupported);
        }
        let Some(sections) = &self.sections else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let asked = request.requested();
        let sent = replies.push_with(|buf| {
            let cap = max.min(buf.len());
            let header = Reply {
                request_id: request.request_id,
                details: None,
                players: None,
                teams: None,
            };
            let mut at = header.encode_into_with(&mut buf[..cap], Requested::default())?;
            let mut w = Writer::new(&mut buf[at..cap]);
            for (on, range) in [
                (asked.details, &sections.details),
                (asked.players, &sections.players),
                (asked.teams, &sections.teams),
            ] {
                if on {
                    w.put_bytes(&sections.bytes[range.clone()])?;
                }
            }
            at += w.position();
            Ok::<usize, query_wire::Error>(at)
        });
        match sent {
            Ok(()) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

/// The encoded sections of one state snapshot.
#[derive(Debug)]
struct Sections {
    /// Held so that the pointer compared against stays this snapshot's.
    snapshot: Arc<ServerState>,
    /// The datagram cap the sections were cut for.
    max: usize,
    bytes: Vec<u8>,
    details: Range<usize>,
    players: Range<usize>,
    teams: Range<usize>,
}

impl Sections {
    fn build(
        snapshot: Arc<ServerState>,
        config: &GameSpy2Config,
        max: usize,
        reuse: Option<Vec<u8>>,
    ) -> Result<Self, query_wire::Error> {
        let state = &*snapshot;
        let mut details = Details {
            hostname: Some(text(&state.name)),
            game_name: non_empty(&config.game_name),
            game_version: non_empty(&state.version),
            host_port: (state.port != 0).then_some(state.port),
            map_name: non_empty(&state.map),
            game_type: non_empty(&state.game_type),
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
                name: Some(text(&t.name)),
                score: Some(Cow::Owned(t.score.to_string())),
                extra: Vec::new(),
            })
            .collect();
        let mut players: Vec<PlayerRow<'_>> = state
            .players
            .iter()
            .take(MAX_ROWS)
            .map(|p| PlayerRow {
                name: Some(text(&p.name)),
                score: Some(Cow::Owned(p.score.to_string())),
                ping: Some(Cow::Owned(p.ping.to_string())),
                team: Some(p.team.as_deref().map_or(Cow::Borrowed(""), text)),
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
        let fixed = core + teams_len(&teams);
        while !players.is_empty() && fixed.saturating_add(table_len(&players)) > budget {
            players.pop();
        }
        let mut room = budget.saturating_sub(fixed.saturating_add(table_len(&players)));
        for (key, value) in &state.rules {
            let key = text(key);
            if key.is_empty() || <Details<'_> as FromKeyValues<'_>>::declares_key(key.as_bytes()) {
                continue;
            }
            let value = match value {
                RuleValue::Text(t) => text(t),
                other => Cow::Owned(text(&other.to_string()).into_owned()),
            };
            let len = key.len() + value.len() + 2;
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
            snapshot,
            max,
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
fn non_empty(s: &str) -> Option<Cow<'_, str>> {
    (!s.is_empty()).then(|| text(s))
}

/// `text` as it can go into a cell: NUL and characters Windows-1252 lacks become `?`; cut to
/// 255 bytes.
fn text(text: &str) -> Cow<'_, str> {
    fit::replace_unsendable(fit::cut(text, ENCODING, MAX_TEXT), ENCODING, &['\0'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PlayerState, TeamState};

    #[test]
    fn text_loses_what_a_cell_cannot_carry() {
        assert_eq!(text("a\0b Ж é"), "a?b ? é");
        assert_eq!(text(&"x".repeat(300)).len(), MAX_TEXT);
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
        let sections = Sections::build(
            Arc::new(state),
            &GameSpy2Config::default(),
            MAX_DATAGRAM,
            None,
        )
        .unwrap();
        assert!(sections.bytes.len() + HEADER_LEN <= MAX_DATAGRAM);
        let mut reply = vec![0, 0, 0, 0, 1];
        reply.extend_from_slice(&sections.bytes);
        let decoded = Reply::from_bytes_with(&reply, Requested::ALL).unwrap();
        let details = decoded.details.unwrap().0;
        assert_eq!(details.num_players, Some(400));
        let rows = decoded.players.unwrap().table.rows.len();
        assert!(rows > 10 && rows < 400, "{rows}");
        assert_eq!(decoded.teams.unwrap().table.rows.len(), 1);
    }
}
