//! Quake 2 against real `status` replies captured from two R1Q2 servers: each decodes to a
//! reviewed snapshot, its status agrees field by field with another client library's decode
//! (GameQ), and it survives re-encoding and every truncation.

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::quake2::{AnyPlayer, Dialect, Info, StatusResponse, ENCODING, PRINT_HEADER};
use query_tests::{read_capture, vectors_dir};
use query_wire::kv::{self, FromKeyValues, ToKeyValues};
use query_wire::Encode;

const CAPTURES: [&str; 2] = ["quake2_1", "quake2_2"];

/// The keys GameQ adds of its own (`gq_*`, and what it derives from the reply).
const GAMEQ_OWN: [&str; 5] = ["clients", "mod", "password", "players", "address"];

/// The datagrams of a capture, or `None` (after the skip message) without the vectors.
fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/quake2/{name}_response.txt"))
}

/// GameQ's decode of the same capture: the one server object in the file.
fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/quake2")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let servers = json.as_object().unwrap();
    assert_eq!(servers.len(), 1);
    servers.values().next().unwrap().clone()
}

fn target() -> SocketAddr {
    "192.0.2.7:27910".parse().unwrap()
}

#[test]
fn every_capture_decodes_to_its_snapshot() {
    let mut decoded = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1, "{name}: one datagram each");
        let reply = StatusResponse::decode(&datagrams[0], ENCODING)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(reply.dialect, Dialect::Quake2, "{name}");
        insta::assert_yaml_snapshot!(format!("quake2_{name}"), reply);
        decoded += 1;
    }
    assert_eq!(decoded, CAPTURES.len());
}

/// Every key GameQ read is a rule with the same value, every player the same name, frags and
/// ping in the same order, and the counts agree.
#[test]
fn status_agrees_with_gameq_field_by_field() {
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let status = replay::status_from_replies(
            Protocol::Quake2,
            target(),
            &datagrams,
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(status.complete, "{name}: {}", status.raw);
        let other = gameq(name);
        let text = |key: &str| {
            other[key]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: {key}"))
        };
        assert_eq!(status.name, text("hostname"), "{name}");
        assert_eq!(status.map.as_deref(), Some(text("mapname")), "{name}");
        assert_eq!(status.version.as_deref(), Some(text("version")), "{name}");
        assert_eq!(status.max_players.to_string(), text("maxclients"), "{name}");
        assert_eq!(status.password, None, "{name}: no needpass key");
        assert_eq!(other["password"], 0, "{name}");
        let mut compared = 0;
        for (key, value) in other.as_object().unwrap() {
            if key.starts_with("gq_") || GAMEQ_OWN.contains(&key.as_str()) {
                continue;
            }
            // GameQ trims values (`baseq2               `); the rules keep them as sent.
            assert_eq!(
                status.rules.get(key).map(|v| v.trim()),
                value.as_str(),
                "{name}: rule {key}"
            );
            compared += 1;
        }
        assert_eq!(compared, status.rules.len(), "{name}: every rule GameQ has");

        let theirs = other["players"].as_array().unwrap();
        assert_eq!(
            other["clients"].as_u64(),
            Some(theirs.len() as u64),
            "{name}"
        );
        assert_eq!(status.num_players as usize, theirs.len(), "{name}");
        assert_eq!(status.players.len(), theirs.len(), "{name}");
        for (p, q) in status.players.iter().zip(theirs) {
            assert_eq!(p.name, q["name"].as_str().unwrap(), "{name}");
            assert_eq!(p.score.unwrap().to_string(), q["frags"].as_str().unwrap());
            assert_eq!(p.ping.unwrap().to_string(), q["ping"].as_str().unwrap());
        }
        agreed += 1;
    }
    assert_eq!(agreed, CAPTURES.len());
}

/// `gamedir` is the game type; a padded `gamename` is kept as sent.
#[test]
fn mods_and_padded_values() {
    let Some(datagrams) = capture("quake2_2") else {
        return;
    };
    let status =
        replay::status_from_replies(Protocol::Quake2, target(), &datagrams, &Options::default())
            .unwrap();
    assert_eq!(status.game_type.as_deref(), Some("ospl2"));
    assert_eq!(status.rules["gamename"], "baseq2               ");
    assert_eq!(status.name, "Clanworld's Lithium-DM #1");
}

/// Re-encoding gives the captured bytes back: the pairs in their order, then each player line
/// through the declared player. The declared [`Info`] writes its fields first, so it is
/// checked to decode to itself instead.
#[test]
fn replies_re_encode_byte_for_byte() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        let reply = StatusResponse::decode(bytes, ENCODING).unwrap();
        let body = &bytes[PRINT_HEADER.len()..];
        let line_end = body.iter().position(|&b| b == b'\n').unwrap();
        let mut out = Vec::from(PRINT_HEADER);
        for pair in kv::pairs(&body[..line_end]) {
            let pair = pair.unwrap();
            kv::KvSink::put_pair(&mut out, pair.key, None, pair.value).unwrap();
        }
        out.push(b'\n');
        for p in &reply.players {
            let AnyPlayer::Quake2(p) = p else {
                panic!("{name}: a QuakeWorld line in a Quake 2 reply");
            };
            out.extend(p.to_vec().unwrap());
        }
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(bytes),
            "{name}"
        );
        let encoded = reply.info.to_vec_with(ENCODING).unwrap();
        assert_eq!(
            Info::from_bytes_with(&encoded, ENCODING).unwrap(),
            reply.info,
            "{name}"
        );
    }
}

/// Every prefix of every capture either decodes (a cut at a line end is a shorter reply) or
/// fails with an error inside the input, never a panic.
#[test]
fn every_truncation_is_an_error_or_a_shorter_reply() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        let full = StatusResponse::decode(bytes, ENCODING).unwrap();
        for cut in 0..bytes.len() {
            match StatusResponse::decode(&bytes[..cut], ENCODING) {
                Ok(reply) => assert!(reply.players.len() <= full.players.len(), "{name} at {cut}"),
                Err(e) => assert!(e.offset() <= cut, "{name} at {cut}: {e}"),
            }
        }
    }
}
