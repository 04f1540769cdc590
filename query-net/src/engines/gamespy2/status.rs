//! GameSpy 2 replies as a [`ServerStatus`]; the mapping is described in the
//! [parent module](super)'s docs.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::gamespy2::{field_name, Reply, ENCODING};
use query_wire::TextEncoding;
use serde_json::json;

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus, Team};

/// `text` as decoded by the specs (Windows-1252) read again in `encoding`: the specs'
/// Windows-1252 maps every byte, so its bytes come back as sent.
fn recode(text: &str, encoding: TextEncoding) -> String {
    if encoding == ENCODING {
        text.to_owned()
    } else {
        encoding
            .decode_lossy(&ENCODING.encode_lossy(text))
            .into_owned()
    }
}

/// A column name as `extra` keys it: without its `_` / `_t`.
fn column_key(column: &str) -> String {
    String::from_utf8_lossy(field_name(column.as_bytes())).into_owned()
}

/// The status from the replies of one query (details first or in one reply with the tables),
/// decoded in `encoding`; the first came back after `rtt`.
pub(super) fn from_replies(
    target: SocketAddr,
    replies: &[Reply<'_>],
    encoding: TextEncoding,
    rtt: Duration,
    complete: bool,
    requests: u32,
) -> ServerStatus {
    let text = |s: &Option<Cow<'_, str>>| s.as_deref().map(|s| recode(s, encoding));
    let details = replies
        .iter()
        .find_map(|r| r.details.as_ref())
        .map(|d| &d.0);
    let players_table = replies.iter().find_map(|r| r.players.as_ref());
    let teams_table = replies.iter().find_map(|r| r.teams.as_ref());
    let team_rows = teams_table
        .map(|t| t.table.rows.as_slice())
        .unwrap_or_default();
    // `team_` is the number of a row of the teams table on most games; a server that sends a
    // name (or a number no row has) is read as it sent it, and ArmA's empty cell as no team.
    let team_of = |cell: &str| -> String {
        let row = cell
            .parse::<usize>()
            .ok()
            .and_then(|n| team_rows.get(n))
            .and_then(|row| row.name.as_deref())
            .filter(|name| !name.trim().is_empty());
        recode(row.unwrap_or(cell), encoding)
    };

    let players: Vec<Player> = players_table
        .map(|t| t.table.rows.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|row| {
            let extra = row
                .extra
                .iter()
                .map(|(k, v)| (column_key(k), recode(v, encoding)))
                .collect();
            Player {
                name: text(&row.name).unwrap_or_default(),
                score: row.score_number(),
                ping: row.ping_number().and_then(|p| u32::try_from(p).ok()),
                team: row
                    .team
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(team_of),
                extra,
                ..Player::default()
            }
        })
        .collect();

    let teams = team_rows
        .iter()
        .map(|row| Team {
            name: text(&row.name).unwrap_or_default(),
            score: query_specs::gamespy2::cell_number(row.score.as_deref()),
            extra: row
                .extra
                .iter()
                .map(|(k, v)| (column_key(k), recode(v, encoding)))
                .collect(),
        })
        .collect();

    let mut rules = IndexMap::new();
    if let Some(d) = details {
        let fields = [
            ("gamename", text(&d.game_name)),
            ("hostport", d.host_port.map(|p| p.to_string())),
            ("gamemode", text(&d.game_mode)),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                rules.insert(key.to_owned(), value);
            }
        }
        // A key sent twice keeps its first place and its last value.
        for (key, value) in &d.rules {
            rules.insert(recode(key, encoding), recode(value, encoding));
        }
    }

    let listed = u32::try_from(players.len()).unwrap_or(u32::MAX);
    let mut status = ServerStatus {
        protocol: Protocol::GameSpy2,
        address: target,
        name: details.and_then(|d| text(&d.hostname)).unwrap_or_default(),
        map: details.and_then(|d| text(&d.map_name)),
        game_type: details.and_then(|d| text(&d.game_type)),
        version: details.and_then(|d| text(&d.game_version)),
        num_players: details.and_then(|d| d.num_players).unwrap_or(listed),
        max_players: details.and_then(|d| d.max_players).unwrap_or(0),
        password: details.and_then(|d| d.password),
        players,
        teams,
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete,
        raw: json!({
            "requests": requests,
            "replies": replies.len(),
            "tables": players_table.is_some(),
            "encoding": encoding.name(),
        }),
    };
    if players_table.is_some() {
        status.note_cut_player_list();
    }
    status
}
