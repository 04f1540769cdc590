//! A GameSpy v1 reply as a [`ServerStatus`]; the mapping is described in the
//! [parent module](super)'s docs.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::gamespy1::{Assembled, Player as WirePlayer, Reassembly};
use query_wire::TextEncoding;
use serde_json::{json, Value};

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus, Team};

/// The status of `target` from the reply `assembled` out of `parts`, decoded in `encoding`,
/// whose first part came back after `rtt`.
pub(super) fn from_assembled(
    target: SocketAddr,
    assembled: &Assembled<'_>,
    parts: &Reassembly,
    encoding: TextEncoding,
    rtt: Duration,
) -> ServerStatus {
    let reply = &assembled.reply;
    let current = reply.current_players();

    // A player's keys may straddle two parts: in an incomplete reply, an entry without
    // its name is the tail of a player whose head was lost, not a player.
    let is_fragment = |p: &&WirePlayer<'_>| !assembled.complete && p.name.is_none();
    let fragments = current.iter().filter(is_fragment).count();
    let players = current
        .iter()
        .filter(|p| !is_fragment(p))
        .map(|p| {
            let team = reply
                .team_of(p)
                .and_then(|t| t.name.as_deref())
                .map(str::to_owned)
                .or_else(|| p.team.as_deref().map(|t| t.trim().to_owned()));
            let mut extra = IndexMap::new();
            if let Some(kills) = p.kills {
                extra.insert("kills".to_owned(), kills.to_string());
            }
            if let Some(deaths) = p.deaths {
                extra.insert("deaths".to_owned(), deaths.to_string());
            }
            for (key, value) in &p.extra {
                extra.insert(key.to_string(), value.to_string());
            }
            Player {
                name: p.name.as_deref().unwrap_or_default().to_owned(),
                score: p.score.map(i64::from),
                ping: p.ping,
                team,
                extra,
                ..Player::default()
            }
        })
        .collect();

    let teams = reply
        .teams
        .iter()
        .map(|t| {
            let mut score = None;
            let mut extra = IndexMap::new();
            for (key, value) in &t.extra {
                let parsed = value.trim().parse::<i64>().ok();
                if score.is_none() && matches!(&**key, "teamscore" | "score") && parsed.is_some() {
                    score = parsed;
                } else {
                    extra.insert(key.to_string(), value.to_string());
                }
            }
            Team {
                name: t.name.as_deref().unwrap_or_default().to_owned(),
                score,
                extra,
            }
        })
        .collect();

    let mut rules = IndexMap::new();
    let fields = [
        ("gamename", reply.game_name.as_deref().map(Cow::Borrowed)),
        (
            "hostport",
            reply.host_port.map(|p| Cow::Owned(p.to_string())),
        ),
        ("gamemode", reply.game_mode.as_deref().map(Cow::Borrowed)),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            rules.insert(key.to_owned(), value.into_owned());
        }
    }
    // A key sent twice keeps its first position and takes its last value, as other
    // clients report it (BF1942 repeats `active_mods`).
    for (key, value) in &reply.rules {
        rules.insert(key.to_string(), value.to_string());
    }

    let mut raw = json!({
        "query_id": assembled.query_id,
        "parts_received": parts.parts_received(),
        "total_parts": parts.total_parts(),
        "missing_parts": assembled.missing_parts,
        "stale_players": reply.stale_players().len(),
        "player_fragments": fragments,
        "encoding": encoding.name(),
    });
    if let Some(echo) = &reply.echo {
        raw["echo"] = Value::from(echo.as_ref());
    }

    let owned = |s: &Option<Cow<'_, str>>| s.as_deref().map(str::to_owned);
    let mut status = ServerStatus {
        protocol: Protocol::GameSpy1,
        address: target,
        name: owned(&reply.hostname).unwrap_or_default(),
        map: owned(&reply.map_name),
        game_type: owned(&reply.game_type),
        version: owned(&reply.game_version),
        num_players: reply
            .num_players
            .unwrap_or_else(|| u32::try_from(current.len()).unwrap_or(u32::MAX)),
        max_players: reply.max_players.unwrap_or(0),
        password: reply.password,
        players,
        teams,
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: assembled.complete,
        raw,
    };
    // A reply without player keys answered a request that did not ask for them.
    if !status.players.is_empty() {
        status.note_cut_player_list();
    }
    status
}
