//! The OneQuery server state the tests serve, and what a client must make of it.

#![allow(dead_code)]

use std::net::SocketAddr;

use query_net::state::{PlayerState, ServerState};
use query_net::{Player, Protocol, ServerStatus};
use query_wire::Uuid;

pub fn players(n: usize) -> Vec<PlayerState> {
    (0..n)
        .map(|i| PlayerState {
            name: format!("Spieler Ü{i}"),
            uuid: Some(Uuid::from_u128(
                0x0123_4567_89ab_cdef_0000_0000_0000_0000 + i as u128,
            )),
            ..PlayerState::default()
        })
        .collect()
}

pub fn sample_state() -> ServerState {
    ServerState {
        name: "Hytale 服务器 ✨".to_owned(),
        motd: "Willkommen, Wanderer!".to_owned(),
        version: "2026.1-β".to_owned(),
        max_players: 100,
        protocol_version: 7,
        protocol_hash: "c0ffee".to_owned(),
        host: Some("play.example.com".to_owned()),
        port: 5520,
        players: vec![
            PlayerState {
                name: "Zoë".to_owned(),
                uuid: Some(Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff)),
                ..PlayerState::default()
            },
            PlayerState {
                name: "名無し".to_owned(),
                uuid: None,
                ..PlayerState::default()
            },
        ],
        ..ServerState::default()
    }
}

/// What a client must see for `state`, from the documented mapping.
pub fn expected(state: &ServerState, address: SocketAddr) -> ServerStatus {
    ServerStatus {
        protocol: Protocol::OneQuery,
        address,
        name: state.name.clone(),
        map: None,
        game_type: None,
        version: Some(state.version.clone()),
        num_players: state.num_players(),
        max_players: state.max_players,
        password: None,
        players: state
            .players
            .iter()
            .map(|p| Player {
                name: p.name.clone(),
                uuid: Some(p.uuid.unwrap_or(Uuid::nil())),
                ..Player::default()
            })
            .collect(),
        teams: Vec::new(),
        rules: Default::default(),
        ping_ms: 0.0,
        complete: true,
        raw: serde_json::Value::Null,
    }
}

pub fn comparable(mut status: ServerStatus) -> ServerStatus {
    status.ping_ms = 0.0;
    status.raw = serde_json::Value::Null;
    status
}
