//! An SQP reply's chunks as a [`ServerStatus`].

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::sqp::{Chunks, FieldHeader, Table, Value};

use super::{chunk_names, ChunkSet, FoundChunks};
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus, Team};

/// Maps a reply's chunks into a [`ServerStatus`] as [`status_from_chunks`] does, and notes in
/// `raw` the reply's `version` and, as `missing_chunks`, the names of the chunks asked for
/// that the server left out (`[]` when it sent them all).
pub fn status_from_reply(
    address: SocketAddr,
    found: &FoundChunks<'_>,
    requested: ChunkSet,
    version: u16,
) -> ServerStatus {
    let mut status = status_from_chunks(address, &found.chunks);
    if let serde_json::Value::Object(raw) = &mut status.raw {
        raw.insert("version".to_owned(), version.into());
        raw.insert(
            "missing_chunks".to_owned(),
            chunk_names(requested - found.present).into(),
        );
    }
    status
}

/// Maps decoded chunks into a [`ServerStatus`] (with `ping_ms` 0: the session fills it in).
///
/// - ServerInfo gives name, game type, version (the build id), map and the counts.
/// - PlayerInfo columns are found by name, ignoring case: `name` / `player` / `playername` /
///   `username`, `score`, `ping`, `team`; the other columns go to [`Player::extra`] as text.
///   A `score` sent as text (as [`SqpResponder`](super::SqpResponder) does for negative scores) is parsed.
/// - TeamInfo likewise (`name` / `team` / `teamname`, `score`); rules become text.
/// - `raw` holds every decoded chunk, metrics and the game port included.
pub fn status_from_chunks(address: SocketAddr, chunks: &Chunks<'_>) -> ServerStatus {
    let info = chunks.server_info.as_ref();
    let rules = chunks
        .server_rules
        .iter()
        .flatten()
        .map(|rule| (rule.key.to_owned(), value_text(&rule.value)))
        .collect::<IndexMap<_, _>>();
    let mut status = ServerStatus {
        protocol: Protocol::Sqp,
        address,
        name: info.map(|i| i.server_name.to_owned()).unwrap_or_default(),
        map: info.map(|i| i.map.to_owned()),
        game_type: info.map(|i| i.game_type.to_owned()),
        version: info.map(|i| i.build_id.to_owned()),
        num_players: info.map_or(0, |i| u32::from(i.current_players)),
        max_players: info.map_or(0, |i| u32::from(i.max_players)),
        password: None,
        players: chunks.player_info.as_ref().map(players).unwrap_or_default(),
        teams: chunks.team_info.as_ref().map(teams).unwrap_or_default(),
        rules,
        ping_ms: 0.0,
        complete: true,
        raw: serde_json::to_value(chunks).unwrap_or(serde_json::Value::Null),
    };
    if chunks.player_info.is_some() {
        status.note_cut_player_list();
    }
    status
}

/// A value as text: numbers in decimal, strings as they are.
fn value_text(value: &Value<'_>) -> String {
    match value {
        Value::Byte(v) => v.to_string(),
        Value::U16(v) => v.to_string(),
        Value::U32(v) => v.to_string(),
        Value::U64(v) => v.to_string(),
        Value::F32(v) => v.to_string(),
        Value::Str(s) => (*s).to_owned(),
    }
}

/// A value as a whole number, if it is one (text included, for negative scores sent as text).
fn value_integer(value: &Value<'_>) -> Option<i64> {
    match value {
        Value::Byte(v) => Some(i64::from(*v)),
        Value::U16(v) => Some(i64::from(*v)),
        Value::U32(v) => Some(i64::from(*v)),
        Value::U64(v) => i64::try_from(*v).ok(),
        Value::Str(s) => s.trim().parse().ok(),
        Value::F32(_) => None,
    }
}

/// Which table column holds which common field.
#[derive(Debug, Default)]
struct Columns {
    name: Option<usize>,
    score: Option<usize>,
    ping: Option<usize>,
    team: Option<usize>,
}

impl Columns {
    fn find(fields: &[FieldHeader<'_>], names: &[&str]) -> Self {
        let position = |wanted: &[&str]| {
            fields
                .iter()
                .position(|f| wanted.iter().any(|w| f.name.eq_ignore_ascii_case(w)))
        };
        Columns {
            name: position(names),
            score: position(&["score"]),
            ping: position(&["ping"]),
            team: position(&["team"]),
        }
    }
}

/// The rows of a table, each with its column headers; nothing when it has no columns, which
/// decoding allows only for a table of 0 rows (it refuses rows with a field count of 0).
fn rows<'t, 'a>(
    table: &'t Table<'a>,
) -> impl Iterator<Item = (&'t [FieldHeader<'a>], &'t [Value<'a>])> + 't {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let width = fields.len().max(1);
    table
        .values
        .chunks(width)
        .filter(move |_| !fields.is_empty())
        .map(move |row| (fields, row))
}

fn players(table: &Table<'_>) -> Vec<Player> {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let columns = Columns::find(fields, &["name", "player", "playername", "username"]);
    rows(table)
        .map(|(fields, row)| {
            let mut player = Player::default();
            for (i, (field, value)) in fields.iter().zip(row).enumerate() {
                let mapped = if Some(i) == columns.name {
                    player.name = value_text(value);
                    true
                } else if Some(i) == columns.score {
                    player.score = value_integer(value);
                    player.score.is_some()
                } else if Some(i) == columns.ping {
                    player.ping = value_integer(value).and_then(|p| u32::try_from(p).ok());
                    player.ping.is_some()
                } else if Some(i) == columns.team {
                    let team = value_text(value);
                    player.team = (!team.is_empty()).then_some(team);
                    true
                } else {
                    false
                };
                if !mapped {
                    player
                        .extra
                        .insert(field.name.to_owned(), value_text(value));
                }
            }
            player
        })
        .collect()
}

fn teams(table: &Table<'_>) -> Vec<Team> {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let columns = Columns::find(fields, &["name", "team", "teamname"]);
    rows(table)
        .map(|(fields, row)| {
            let mut team = Team::default();
            for (i, (field, value)) in fields.iter().zip(row).enumerate() {
                if Some(i) == columns.name {
                    team.name = value_text(value);
                } else if Some(i) == columns.score && value_integer(value).is_some() {
                    team.score = value_integer(value);
                } else {
                    team.extra.insert(field.name.to_owned(), value_text(value));
                }
            }
            team
        })
        .collect()
}
