//! Unreal 2 replies as a [`ServerStatus`].
//!
//! - Details: name and map with colour codes removed (as sent in `raw.name` and `raw.map`),
//!   game type, player count and slots; the server id, address, ports, ping, flags, skill and
//!   layout (and Killing Floor's waves and name length byte) in `raw`.
//! - Players: name without colour codes (as sent in `raw.players`), score and ping; the id and
//!   the stats id in `extra`.
//! - Rules: every pair in order; a key sent again (`Mutator`, once per mutator) keeps its first
//!   place and gets the values joined by `, `. `ServerVersion` is the version, and
//!   `GamePassword` (or `Game Password`) `true`/`false` the password.
//!
//! Latin-1 strings are read in the session's encoding, UTF-16 ones as such.

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::unreal2::{strip_colours, InfoReply, Layout, Reply, UText};
use query_wire::TextEncoding;
use serde_json::{json, Value};

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The status the details give, before players and rules.
pub fn from_info(target: SocketAddr, reply: &InfoReply, encoding: TextEncoding) -> ServerStatus {
    let info = &reply.info;
    let text = |t: &UText| t.decode(encoding).into_owned();
    let name = info.name_text(encoding).into_owned();
    let map = text(&info.map);
    let game_type = text(&info.game_type);
    let mut raw = json!({
        "layout": match reply.layout {
            Layout::Standard => "standard",
            Layout::KillingFloor => "killing_floor",
        },
        "name": name,
        "map": map,
        "server_id": info.server_id,
        "ip": text(&info.ip),
        "game_port": info.game_port,
        "query_port": info.query_port,
        "ping": info.ping,
    });
    if let Some(more) = &info.more {
        raw["flags"] = more.flags.into();
        raw["skill"] = text(&more.skill).into();
    }
    if let Some(waves) = &info.waves {
        raw["wave"] = waves.current.into();
        raw["waves"] = waves.total.into();
    }
    if let Some(nul_name) = &info.nul_name {
        raw["name_length_byte"] = nul_name.len.into();
    }
    ServerStatus {
        protocol: Protocol::Unreal2,
        address: target,
        name: strip_colours(&name).into_owned(),
        map: Some(strip_colours(&map).into_owned()).filter(|m| !m.is_empty()),
        game_type: Some(game_type).filter(|g| !g.is_empty()),
        version: None,
        num_players: info.num_players,
        max_players: info.max_players,
        password: None,
        players: Vec::new(),
        teams: Vec::new(),
        rules: IndexMap::new(),
        ping_ms: 0.0,
        complete: true,
        raw,
    }
}

/// Adds the players of every part (in arrival order); `why` is what cut the list short.
pub fn add_players(
    status: &mut ServerStatus,
    parts: &[Reply],
    encoding: TextEncoding,
    why: Option<String>,
) {
    let mut raw_names = Vec::new();
    for part in parts {
        let Reply::Players(part) = part else {
            continue;
        };
        for p in &part.players {
            let raw_name = p.name.decode(encoding).into_owned();
            let mut extra = IndexMap::new();
            extra.insert("stats_id".to_owned(), p.stats_id.to_string());
            status.players.push(Player {
                name: strip_colours(&raw_name).into_owned(),
                score: Some(i64::from(p.score)),
                ping: Some(p.ping),
                id: Some(p.id),
                extra,
                ..Player::default()
            });
            raw_names.push(Value::from(raw_name));
        }
    }
    set_raw(status, "players", Value::from(raw_names));
    if let Some(why) = why {
        status.complete = false;
        set_raw(status, "players_error", why.into());
    }
}

/// Adds the rules of every part (in arrival order); `why` is what cut the list short.
pub fn add_rules(
    status: &mut ServerStatus,
    parts: &[Reply],
    encoding: TextEncoding,
    why: Option<String>,
) {
    for part in parts {
        let Reply::Rules(part) = part else {
            continue;
        };
        for rule in &part.rules {
            let key = rule.key.decode(encoding).into_owned();
            let value = rule.value.decode(encoding).into_owned();
            match status.rules.get_mut(&key) {
                Some(held) => {
                    held.push_str(", ");
                    held.push_str(&value);
                }
                None => {
                    status.rules.insert(key, value);
                }
            }
        }
    }
    if let Some(version) = status.rules.get("ServerVersion") {
        status.version = Some(version.clone()).filter(|v| !v.is_empty());
    }
    let password = status
        .rules
        .iter()
        .find(|(key, _)| {
            key.eq_ignore_ascii_case("GamePassword") || key.eq_ignore_ascii_case("Game Password")
        })
        .map(|(_, value)| value.trim().to_ascii_lowercase());
    status.password = match password.as_deref() {
        Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        _ => status.password,
    };
    if let Some(why) = why {
        status.complete = false;
        set_raw(status, "rules_error", why.into());
    }
}

fn set_raw(status: &mut ServerStatus, key: &str, value: Value) {
    if let Value::Object(raw) = &mut status.raw {
        raw.insert(key.to_owned(), value);
    }
}
