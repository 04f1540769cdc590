//! The SQP server state the tests serve, and what a client must make of it.

#![allow(dead_code)]

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_net::state::{PlayerState, RuleValue, ServerState, TeamState};
use query_net::{Player, Protocol, ServerStatus, Team};

pub fn player(name: &str, score: i64, ping: u32, team: Option<&str>) -> PlayerState {
    PlayerState {
        name: name.to_owned(),
        score,
        ping,
        team: team.map(str::to_owned),
        ..PlayerState::default()
    }
}

/// A state with non-ASCII text, a negative score, a ping over u16 and every kind of rule.
pub fn sample_state() -> ServerState {
    let mut rules = IndexMap::new();
    rules.insert("friendly_fire".to_owned(), RuleValue::Bool(false));
    rules.insert("round_time".to_owned(), RuleValue::Integer(300));
    rules.insert("big".to_owned(), RuleValue::Integer(1 << 40));
    rules.insert("debt".to_owned(), RuleValue::Integer(-12));
    rules.insert("gravity".to_owned(), RuleValue::Float(9.81));
    rules.insert(
        "greeting".to_owned(),
        RuleValue::Text("grüß dich".to_owned()),
    );
    ServerState {
        name: "Ünïcödé 服务器 🚀".to_owned(),
        map: "Höhle".to_owned(),
        game_type: "Team Deathmatch".to_owned(),
        version: "1.2.3-β".to_owned(),
        max_players: 32,
        port: 7777,
        players: vec![
            player("Zoë", 12, 35, Some("红")),
            player("Bob", -7, 70_000, None),
            player("Ålice", 0, 0, Some("Blue")),
        ],
        teams: vec![
            TeamState {
                name: "红".to_owned(),
                score: 3,
            },
            TeamState {
                name: "Blue".to_owned(),
                score: -1,
            },
        ],
        rules,
        ..ServerState::default()
    }
}

/// What a client must see for `state`, written out from the documented mapping rather than
/// computed by the code under test.
pub fn expected(state: &ServerState, address: SocketAddr) -> ServerStatus {
    let players = state
        .players
        .iter()
        .map(|p| Player {
            name: p.name.clone(),
            score: Some(p.score),
            ping: Some(p.ping.min(65_535)),
            team: p.team.clone(),
            ..Player::default()
        })
        .collect();
    let teams = state
        .teams
        .iter()
        .map(|t| Team {
            name: t.name.clone(),
            score: Some(t.score),
            ..Team::default()
        })
        .collect();
    let rules = state
        .rules
        .iter()
        .map(|(k, v)| {
            let text = match v {
                RuleValue::Bool(b) => u8::from(*b).to_string(),
                RuleValue::Float(x) => (*x as f32).to_string(),
                other => other.to_string(),
            };
            (k.clone(), text)
        })
        .collect();
    ServerStatus {
        protocol: Protocol::Sqp,
        address,
        name: state.name.clone(),
        map: Some(state.map.clone()),
        game_type: Some(state.game_type.clone()),
        version: Some(state.version.clone()),
        num_players: state.num_players(),
        max_players: state.max_players,
        password: None,
        players,
        teams,
        rules,
        ping_ms: 0.0,
        complete: true,
        raw: serde_json::Value::Null,
    }
}

/// The status without the fields that depend on timing or restate the packets.
pub fn comparable(mut status: ServerStatus) -> ServerStatus {
    status.ping_ms = 0.0;
    status.raw = serde_json::Value::Null;
    status
}
