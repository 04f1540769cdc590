//! What a query returns, the same shape for every protocol.
//!
//! Each protocol maps its packets into [`ServerStatus`]; what has no common field stays available
//! in [`ServerStatus::raw`], so nothing a server sent is lost.

use std::net::SocketAddr;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::protocol::Protocol;

/// A server's answer to a query, in a protocol-independent shape.
///
/// `rules` is an [`IndexMap`]: it keeps the order the server sent (GameSpy and SA:MP servers list
/// rules in a meaningful order, and JSON output stays stable run to run), where a `BTreeMap` would
/// sort the keys and a `HashMap` would shuffle them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    /// The protocol that produced this answer.
    pub protocol: Protocol,
    /// The address that was queried (and that answered).
    pub address: SocketAddr,
    /// Server name (host name).
    pub name: String,
    /// Current map, when the protocol reports one.
    pub map: Option<String>,
    /// Game type or game mode.
    pub game_type: Option<String>,
    /// Server version or build id.
    pub version: Option<String>,
    /// Players online as the server counts them (may exceed `players.len()` when the list is
    /// cut or not sent).
    pub num_players: u32,
    /// Player slots.
    pub max_players: u32,
    /// Whether joining needs a password; `None` when the protocol does not say.
    pub password: Option<bool>,
    /// The player list, possibly empty or partial (see `complete`).
    pub players: Vec<Player>,
    /// Teams, for protocols that report them (SQP TeamInfo, GameSpy `teamname_N`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<Team>,
    /// Server rules (settings), in the order the server sent them.
    pub rules: IndexMap<String, String>,
    /// Round-trip time of the fastest request/reply exchange, in milliseconds. A float, because
    /// on a LAN or loopback the round trip is well under a millisecond.
    pub ping_ms: f64,
    /// `false` when part of the answer never arrived (a GameSpy part, an SA:MP player list that
    /// the server does not send above 100 players): what is here is still correct.
    pub complete: bool,
    /// The protocol's own decoded packets, for fields the common shape has no place for.
    pub raw: serde_json::Value,
}

impl ServerStatus {
    /// For an incomplete multi-part reply: names, in `raw.parts_error`, the latest datagram that
    /// was refused as a part (over a cap, contradicting the others, not decoding), since it may
    /// be why parts are missing.
    pub(crate) fn note_refused_part(&mut self, refused: Option<&crate::QueryError>) {
        let (Some(refused), false) = (refused, self.complete) else {
            return;
        };
        if let serde_json::Value::Object(raw) = &mut self.raw {
            let why = format!("the latest datagram refused as a part: {refused}");
            raw.entry("parts_error").or_insert(why.into());
        }
    }

    /// For a status whose player list was received: when it lists fewer players than
    /// `num_players` counts (a server that cut its list to fit one datagram, as SA:MP and SQP
    /// responders must), marks it incomplete and says how many are missing in
    /// `raw.players_missing`, and why in `raw.players_error` (unless a reason is there). Lenient the other way: a list longer than the count is kept.
    pub fn note_cut_player_list(&mut self) {
        let listed = u32::try_from(self.players.len()).unwrap_or(u32::MAX);
        if listed < self.num_players {
            self.complete = false;
            if let serde_json::Value::Object(raw) = &mut self.raw {
                raw.insert(
                    "players_missing".to_owned(),
                    (self.num_players - listed).into(),
                );
                raw.entry("players_error").or_insert_with(|| {
                    format!(
                        "the player list holds {listed} of the {} players the server counts",
                        self.num_players
                    )
                    .into()
                });
            }
        }
    }
}

/// One player as a server reports them. Fields the protocol does not carry are `None` and are
/// left out of JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Player {
    /// Player name.
    pub name: String,
    /// Score or frags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// Ping in milliseconds as the server measures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<u32>,
    /// The server's id for the player (SA:MP `d` list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// Team name or number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// Account id (OneQuery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<Uuid>,
    /// Seconds since the player joined, as the server counts them (A2S).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Further per-player fields (SQP's declared fields, GameSpy's `skin_N`, `mesh_N`, ...).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub extra: IndexMap<String, String>,
}

/// One team as a server reports it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Team {
    /// Team name.
    pub name: String,
    /// Team score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// Further per-team fields.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub extra: IndexMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> ServerStatus {
        let mut rules = IndexMap::new();
        rules.insert("weather".to_owned(), "10".to_owned());
        rules.insert("anticheat".to_owned(), "on".to_owned());
        ServerStatus {
            protocol: Protocol::Samp,
            address: "127.0.0.1:7777".parse().unwrap(),
            name: "My Server".to_owned(),
            map: None,
            game_type: Some("Freeroam".to_owned()),
            version: Some("0.3.7-R2".to_owned()),
            num_players: 1,
            max_players: 50,
            password: Some(false),
            players: vec![Player {
                name: "John".to_owned(),
                score: Some(5),
                ..Player::default()
            }],
            teams: Vec::new(),
            rules,
            ping_ms: 0.25,
            complete: true,
            raw: json!({"info": {"language": "English"}}),
        }
    }

    #[test]
    fn json_uses_snake_case_names_and_omits_absent_player_fields() {
        let value = serde_json::to_value(sample()).unwrap();
        assert_eq!(
            value,
            json!({
                "protocol": "samp",
                "address": "127.0.0.1:7777",
                "name": "My Server",
                "map": null,
                "game_type": "Freeroam",
                "version": "0.3.7-R2",
                "num_players": 1,
                "max_players": 50,
                "password": false,
                "players": [{"name": "John", "score": 5}],
                "rules": {"weather": "10", "anticheat": "on"},
                "ping_ms": 0.25,
                "complete": true,
                "raw": {"info": {"language": "English"}}
            })
        );
    }

    #[test]
    fn rules_keep_the_servers_order_through_json() {
        let text = serde_json::to_string(&sample()).unwrap();
        assert!(text.find("weather").unwrap() < text.find("anticheat").unwrap());
        let back: ServerStatus = serde_json::from_str(&text).unwrap();
        assert_eq!(back, sample());
        assert_eq!(
            back.rules.keys().collect::<Vec<_>>(),
            ["weather", "anticheat"]
        );
    }

    #[test]
    fn player_uuid_serializes_as_hyphenated_text() {
        let player = Player {
            name: "Alice".to_owned(),
            uuid: Some(Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff)),
            ..Player::default()
        };
        assert_eq!(
            serde_json::to_value(&player).unwrap(),
            json!({"name": "Alice", "uuid": "00112233-4455-6677-8899-aabbccddeeff"})
        );
    }

    #[test]
    fn a_player_list_shorter_than_the_count_makes_the_status_incomplete() {
        let mut status = sample();
        status.num_players = 3;
        status.players = vec![Player::default(); 3];
        status.note_cut_player_list();
        assert!(status.complete);
        status.players.truncate(1);
        status.note_cut_player_list();
        assert!(!status.complete);
        assert_eq!(status.raw["players_missing"], 2);
        // A list longer than the count is kept as it is.
        let mut longer = sample();
        longer.num_players = 0;
        longer.players = vec![Player::default(); 2];
        longer.note_cut_player_list();
        assert!(longer.complete);
    }
}
