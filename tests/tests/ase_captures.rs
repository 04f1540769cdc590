//! The All-Seeing Eye against a real reply captured from a Multi Theft Auto server (203 players
//! in one 4,684-byte datagram): it decodes, re-encodes to the same bytes, fails at every
//! truncation inside its fields, and agrees field by field with another client library's
//! decode of the same bytes (GameQ), through the specs and through the client's status.

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::ase::Reply;
use query_tests::{read_capture, vectors_dir};
use query_wire::{Decode, Encode, TextEncoding};

const NAME: &str = "mta_1";

fn capture() -> Option<Vec<u8>> {
    let mut datagrams = read_capture(&format!("gameq/ase/{NAME}_response.txt"))?;
    assert_eq!(datagrams.len(), 1, "one reply datagram");
    datagrams.pop()
}

fn gameq() -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join(format!("captures/gameq/ase/{NAME}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value.as_object().unwrap().values().next().unwrap().clone()
}

fn utf8(text: &query_wire::Text<'_>) -> String {
    text.decode(TextEncoding::Utf8).into_owned()
}

#[test]
fn the_reply_decodes_re_encodes_and_agrees_with_gameq() {
    let Some(bytes) = capture() else { return };
    let reply = Reply::from_bytes(&bytes).unwrap();
    assert_eq!(
        reply.to_vec().unwrap(),
        bytes,
        "re-encodes to the same bytes"
    );
    let expected = gameq();
    let field = |key: &str| expected[key].as_str().unwrap().to_owned();
    assert_eq!(utf8(&reply.game), field("gamename"));
    assert_eq!(utf8(&reply.port), field("port"));
    assert_eq!(utf8(&reply.name), field("servername"));
    assert_eq!(utf8(&reply.game_type), field("gametype"));
    assert_eq!(utf8(&reply.map), field("map"));
    assert_eq!(utf8(&reply.version), field("version"));
    assert_eq!(utf8(&reply.password), field("password"));
    assert_eq!(utf8(&reply.num_players), field("num_players"));
    assert_eq!(utf8(&reply.max_players), field("max_players"));
    // GameQ keeps no rules for this server: it sent none (the empty key right away).
    assert!(reply.rules.is_empty());
    let players = expected["players"].as_array().unwrap();
    assert_eq!(reply.players.len(), players.len());
    let last = players.len() - 1;
    for (i, (ours, theirs)) in reply.players.iter().zip(players).enumerate() {
        for (key, value) in [
            ("name", &ours.name),
            ("team", &ours.team),
            ("skin", &ours.skin),
            ("score", &ours.score),
            ("ping", &ours.ping),
            ("time", &ours.time),
        ] {
            let value = value.as_ref().map(utf8);
            if i == last && key == "time" && theirs[key] == false {
                // GameQ reads the datagram's very last string, `01` (empty), as `false`: its
                // buffer has no bytes left to take. The bytes say empty.
                assert_eq!(value.as_deref(), Some(""));
                assert_eq!(bytes.last(), Some(&1));
                continue;
            }
            assert_eq!(value.as_deref(), theirs[key].as_str(), "{key} of {theirs}");
        }
    }
}

#[test]
fn every_cut_inside_the_fields_is_an_error_at_or_before_the_cut() {
    let Some(bytes) = capture() else { return };
    let reply = Reply::from_bytes(&bytes).unwrap();
    // The nine fields and the rules' end: a cut before them all is no status.
    let fields_end = 4 + [
        &reply.game,
        &reply.port,
        &reply.name,
        &reply.game_type,
        &reply.map,
        &reply.version,
        &reply.password,
        &reply.num_players,
        &reply.max_players,
    ]
    .iter()
    .map(|t| 1 + t.as_bytes().len())
    .sum::<usize>();
    for end in 0..fields_end {
        let error = Reply::from_bytes(&bytes[..end]).unwrap_err();
        assert!(error.offset() <= end, "cut at {end}: {error}");
    }
    // A cut inside a player's string is refused too (never a shorter name).
    let error = Reply::from_bytes(&bytes[..bytes.len() - 2]).unwrap_err();
    assert!(error.offset() <= bytes.len() - 2, "{error}");
}

#[test]
fn the_client_maps_the_replayed_reply() {
    let Some(bytes) = capture() else { return };
    let target: SocketAddr = "127.0.0.1:22126".parse().unwrap();
    let status =
        replay::status_from_replies(Protocol::Ase, target, &[bytes], &Options::default()).unwrap();
    let expected = gameq();
    assert_eq!(status.name, expected["servername"].as_str().unwrap());
    assert!(status.name.contains("[Español]"), "UTF-8 by default");
    assert_eq!(status.map.as_deref(), Some("SX"));
    assert_eq!(status.game_type.as_deref(), Some("SX CnR/DM/RP"));
    assert_eq!(status.version.as_deref(), Some("1.4"));
    assert_eq!((status.num_players, status.max_players), (203, 512));
    assert_eq!(status.password, Some(false));
    assert_eq!(status.players.len(), 203);
    assert_eq!(status.players[0].name, "Laucha");
    assert_eq!(status.players[0].ping, Some(154));
    assert_eq!(status.players[0].score, None, "an empty score is no score");
    assert_eq!(status.players[0].team, None);
    assert_eq!(status.raw["game"], "mta");
    assert_eq!(status.raw["port"], "22003");
    assert!(status.complete);
}
