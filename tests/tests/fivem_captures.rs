//! FiveM against real `infoResponse` replies captured from two servers: each decodes to a
//! reviewed snapshot, its status agrees field by field with another client library's decode
//! (GameQ), and it survives re-encoding and every truncation.

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::fivem::{InfoResponse, ENCODING};
use query_specs::quake3::strip_colours;
use query_tests::{read_capture, vectors_dir};
use query_wire::Encode;

const CAPTURES: [&str; 2] = ["gta5m_1", "gta5m_2"];

/// The keys GameQ adds of its own.
fn gameq_own(key: &str) -> bool {
    key.starts_with("gq_")
}

fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/fivem/{name}_response.txt"))
}

fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/fivem")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let servers = json.as_object().unwrap();
    assert_eq!(servers.len(), 1);
    servers.values().next().unwrap().clone()
}

fn target() -> SocketAddr {
    "192.0.2.7:30120".parse().unwrap()
}

#[test]
fn every_capture_decodes_to_its_snapshot() {
    let mut decoded = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1, "{name}");
        let reply =
            InfoResponse::decode(&datagrams[0], ENCODING).unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::assert_yaml_snapshot!(format!("fivem_{name}"), reply);
        decoded += 1;
    }
    assert_eq!(decoded, CAPTURES.len());
}

/// Every pair GameQ read is a rule with the same value (the challenge is the replaying
/// client's own), and the status's fields agree.
#[test]
fn status_agrees_with_gameq_field_by_field() {
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let status =
            replay::status_from_replies(Protocol::Fivem, target(), &datagrams, &Options::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let other = gameq(name);
        let text = |key: &str| {
            other[key]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: {key}"))
        };
        assert_eq!(status.name, strip_colours(text("hostname")), "{name}");
        assert_eq!(status.raw["hostname"], text("hostname"), "{name}");
        assert_eq!(status.map.as_deref(), Some(text("mapname")), "{name}");
        assert_eq!(
            status.game_type.as_deref(),
            Some(text("gametype")),
            "{name}"
        );
        assert_eq!(
            status.max_players.to_string(),
            text("sv_maxclients"),
            "{name}"
        );
        assert_eq!(status.num_players.to_string(), text("clients"), "{name}");
        // No players in getinfo: a server that counts some gives an incomplete status.
        assert!(status.players.is_empty());
        assert_eq!(status.complete, text("clients") == "0", "{name}");
        let mut compared = 0;
        for (key, value) in other.as_object().unwrap() {
            if gameq_own(key) || key == "challenge" {
                continue;
            }
            assert_eq!(
                status.rules.get(key).map(String::as_str),
                value.as_str(),
                "{name}: rule {key}"
            );
            compared += 1;
        }
        assert_eq!(
            compared + 1,
            status.rules.len(),
            "{name}: every pair but the challenge"
        );
        agreed += 1;
    }
    assert_eq!(agreed, CAPTURES.len());
}

/// Written back through the declaration, a reply decodes to itself; the capture's bytes are
/// that encoding without the newline real servers leave out.
#[test]
fn replies_re_encode() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let reply = InfoResponse::decode(&datagrams[0], ENCODING).unwrap();
        let again = reply.to_vec_with(ENCODING).unwrap();
        assert_eq!(
            InfoResponse::decode(&again, ENCODING).unwrap(),
            reply,
            "{name}"
        );
        assert_eq!(again.len(), datagrams[0].len() + 1, "{name}");
    }
}

#[test]
fn every_truncation_is_an_error_or_a_shorter_reply() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        for cut in 0..bytes.len() {
            if let Err(e) = InfoResponse::decode(&bytes[..cut], ENCODING) {
                assert!(e.offset() <= cut, "{name} at {cut}: {e}");
            }
        }
    }
}
