//! A joined GameSpy 3 reply as a [`ServerStatus`]; the mapping is described in the
//! [parent module](super)'s docs.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::gamespy3::{Assembled, Table};
use query_wire::TextEncoding;
use serde_json::json;

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus, Team};

/// The status from a reply joined from its parts, decoded in `encoding`; the first part came
/// back after `rtt`.
pub(crate) fn from_reply(
    protocol: Protocol,
    target: SocketAddr,
    reply: &Assembled<'_>,
    encoding: TextEncoding,
    rtt: Duration,
) -> ServerStatus {
    let text = |key: &str| reply.text(key, encoding).map(|t| t.into_owned());
    let mut rules = IndexMap::new();
    for pair in &reply.details {
        rules
            .entry(pair.key.decode(encoding).into_owned())
            .or_insert_with(|| pair.value.decode(encoding).into_owned());
    }
    let players = reply
        .players()
        .map_or_else(Vec::new, |t| players(t, encoding));
    let teams = reply.teams().map_or_else(Vec::new, |t| teams(t, encoding));
    let num_players = reply
        .num_players()
        .unwrap_or_else(|| u32::try_from(players.len()).unwrap_or(u32::MAX));
    let password = reply
        .number("password")
        .map(|p| p != 0)
        .or_else(|| text("password").map(|p| p.eq_ignore_ascii_case("true")));
    let other_tables: Vec<_> = reply
        .tables
        .iter()
        .filter(|t| t.kind != query_specs::gamespy3::SECTION_PLAYERS)
        .filter(|t| t.kind != query_specs::gamespy3::SECTION_TEAMS)
        .map(|t| json!({ "kind": t.kind, "columns": t.columns.iter().map(|c| c.name.decode(encoding).into_owned()).collect::<Vec<_>>() }))
        .collect();
    // A list shorter than the count the server gave was cut (a responder stops at its
    // buffer's end, as ours does past MAX_ROWS).
    let complete = reply.complete && players.len() >= num_players as usize;
    ServerStatus {
        protocol,
        address: target,
        name: text("hostname").unwrap_or_default(),
        map: reply.map().map(|m| m.decode(encoding).into_owned()),
        game_type: text("gametype"),
        version: text("gamever").or_else(|| text("version")),
        num_players,
        max_players: reply.max_players().unwrap_or(0),
        password,
        players,
        teams,
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete,
        raw: json!({
            "missing_parts": reply.missing_parts,
            "column_gaps": reply.gaps.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "other_tables": other_tables,
            "encoding": encoding.name(),
        }),
    }
}

fn number(value: &str) -> Option<i64> {
    value.trim().parse().ok()
}

fn players(table: &Table<'_>, encoding: TextEncoding) -> Vec<Player> {
    (0..table.row_count())
        .map(|i| {
            let mut player = Player::default();
            for (column, value) in table.row(i) {
                let value = value.decode(encoding).into_owned();
                match column {
                    b"player" => player.name = value,
                    b"score" if number(&value).is_some() => player.score = number(&value),
                    b"ping" if number(&value).is_some() => {
                        player.ping = number(&value).and_then(|p| u32::try_from(p).ok());
                    }
                    b"team" => player.team = Some(value),
                    _ => {
                        player
                            .extra
                            .insert(String::from_utf8_lossy(column).into_owned(), value);
                    }
                }
            }
            player
        })
        .collect()
}

fn teams(table: &Table<'_>, encoding: TextEncoding) -> Vec<Team> {
    (0..table.row_count())
        .map(|i| {
            let mut team = Team::default();
            for (column, value) in table.row(i) {
                let value = value.decode(encoding).into_owned();
                match column {
                    b"team" => team.name = value,
                    b"score" if number(&value).is_some() => team.score = number(&value),
                    _ => {
                        team.extra
                            .insert(String::from_utf8_lossy(column).into_owned(), value);
                    }
                }
            }
            team
        })
        .collect()
}
