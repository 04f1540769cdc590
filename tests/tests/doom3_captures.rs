//! The Doom 3 engine's declarations against real replies captured from Doom 3, Quake 4 and
//! ETQW servers: each decodes whole to a reviewed snapshot and agrees field by field with
//! another client library's decode (GameQ), through the declarations and through the client
//! session, re-encodes byte for byte, and every truncation is an error inside the input. ETQW's
//! `infoResponse`, which no capture holds, is checked on a fixture built from its description.

use std::net::SocketAddr;

use query_net::{replay, Options, Protocol};
use query_specs::doom3::{Layout, Reply};
use query_specs::quake3::strip_colours;
use query_tests::{fixture_hex, read_capture, vectors_dir};
use query_wire::Encode;

const CAPTURES: [&str; 5] = ["doom3_1", "doom3_2", "quake4_1", "etqw_1", "etqw_2"];

fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/doom3/{name}_response.txt"))
}

fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/doom3")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json.as_object().unwrap().values().next().unwrap().clone()
}

/// ETQW's `infoResponse` has no capture: the fixture built from the layout qstat, gamedig and
/// opengsq read decodes in that form to its reviewed snapshot.
#[test]
fn etqw_info_response_fixture_decodes_to_its_snapshot() {
    let bytes = fixture_hex("doom3/etqw_info_response.hex");
    let reply = Reply::decode(&bytes).unwrap();
    assert!(matches!(reply, Reply::EtqwInfo(_)));
    insta::assert_yaml_snapshot!("doom3_etqw_info_response_fixture", reply);
}

#[test]
fn every_capture_decodes_whole_to_its_snapshot() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1, "{name}");
        let reply = Reply::decode(&datagrams[0]).unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::assert_yaml_snapshot!(format!("doom3_{name}"), reply);
    }
}

/// GameQ's names for the keys it renames (ETQW's `si_` keys lose their prefix there).
fn gameq_key<'a>(name: &str, key: &'a str) -> std::borrow::Cow<'a, str> {
    if name.starts_with("etqw") {
        match key {
            "si_map" => "map".into(),
            "si_name" => "name".into(),
            "si_version" => "version".into(),
            "si_maxPlayers" => "maxPlayers".into(),
            other => other.strip_prefix("si_").unwrap_or(other).into(),
        }
    } else {
        key.into()
    }
}

#[test]
fn players_and_settings_agree_with_gameq() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let reply = Reply::decode(&datagrams[0]).unwrap();
        let other = gameq(name);
        let info = reply.info();
        let text = |key: &str| {
            other[gameq_key(name, key).as_ref()]
                .as_str()
                .map(str::to_owned)
        };
        assert_eq!(
            info.name.as_deref().map(str::to_owned),
            text("si_name"),
            "{name}"
        );
        assert_eq!(
            info.max_players.map(|n| n.to_string()),
            text("si_maxPlayers"),
            "{name}"
        );
        assert_eq!(
            info.game_name.as_deref().map(str::to_owned),
            text("gamename"),
            "{name}"
        );
        let theirs = other["players"].as_array().cloned().unwrap_or_default();
        assert_eq!(reply.players().len(), theirs.len(), "{name}");
        for (p, q) in reply.players().iter().zip(&theirs) {
            assert_eq!(u64::from(p.id), q["id"].as_u64().unwrap(), "{name}");
            assert_eq!(u64::from(p.ping), q["ping"].as_u64().unwrap(), "{name}");
            assert_eq!(
                p.name.decode(query_specs::doom3::ENCODING),
                q["name"].as_str().unwrap(),
                "{name}"
            );
        }
        if let Reply::InfoEx(ex) = &reply {
            assert_eq!(
                u64::from(ex.body.time_left),
                other["timeleft"].as_u64().unwrap()
            );
            assert_eq!(
                u64::from(ex.body.os_mask),
                other["osmask"].as_u64().unwrap()
            );
            let stats = ex.body.stats.as_deref().expect("captured with statistics");
            assert_eq!(stats.len(), theirs.len(), "{name}");
            for (s, q) in stats.iter().zip(&theirs) {
                assert_eq!(
                    u64::from(s.kills),
                    q["total_kills"].as_u64().unwrap(),
                    "{name}"
                );
                assert_eq!(
                    s.team.decode(query_specs::doom3::ENCODING),
                    q["teamname"].as_str().unwrap()
                );
            }
        } else {
            let layout = Layout::of_version(reply.version());
            assert_eq!(
                layout == Layout::Quake4,
                name.starts_with("quake4"),
                "{name}"
            );
        }
    }
}

#[test]
fn every_truncation_is_an_error_inside_the_input() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        for cut in 0..bytes.len() {
            if let Err(e) = Reply::decode(&bytes[..cut]) {
                assert!(e.offset() <= cut, "{name} at {cut}: {e}");
            }
        }
    }
}

/// The client's status of each capture (the challenge written in as the server echoes it)
/// agrees with GameQ's decode: name and every setting as a rule, the counts, and every player
/// (name without colour codes, ping, ETQW's team, kills and deaths).
#[test]
fn the_client_status_agrees_with_gameq() {
    let target: SocketAddr = "192.0.2.7:27666".parse().unwrap();
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let status =
            replay::status_from_replies(Protocol::Doom3, target, &datagrams, &Options::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(status.complete, "{name}");
        let other = gameq(name);
        let text = |key: &str| {
            other[gameq_key(name, key).as_ref()]
                .as_str()
                .map(str::to_owned)
        };
        let raw_name = text("si_name").unwrap();
        assert_eq!(status.name, strip_colours(&raw_name), "{name}");
        assert_eq!(status.raw["hostname"], raw_name.as_str(), "{name}");
        assert_eq!(status.map, text("si_map"), "{name}");
        assert_eq!(status.version, text("si_version"), "{name}");
        assert_eq!(
            Some(status.max_players.to_string()),
            text("si_maxPlayers"),
            "{name}"
        );
        for (key, value) in &status.rules {
            if let Some(theirs) = other[gameq_key(name, key).as_ref()].as_str() {
                assert_eq!(value, theirs, "{name}: {key}");
            }
        }
        let theirs = other["players"].as_array().cloned().unwrap_or_default();
        assert_eq!(status.num_players as usize, theirs.len(), "{name}");
        for (p, q) in status.players.iter().zip(&theirs) {
            assert_eq!(p.name, strip_colours(q["name"].as_str().unwrap()), "{name}");
            assert_eq!(p.ping.map(u64::from), q["ping"].as_u64(), "{name}");
            assert_eq!(p.id.map(u64::from), q["id"].as_u64(), "{name}");
            if name.starts_with("etqw") {
                assert_eq!(p.team.as_deref(), q["teamname"].as_str(), "{name}");
                assert_eq!(
                    p.extra["kills"],
                    q["total_kills"].as_u64().unwrap().to_string(),
                    "{name}"
                );
                assert_eq!(
                    p.extra["deaths"],
                    q["total_deaths"].as_u64().unwrap().to_string(),
                    "{name}"
                );
            }
        }
    }
}

/// Each capture re-encodes through the declarations to bytes that decode to the same reply
/// (the declared settings write their fields first, and ETQW's `si_needPass` under its
/// declared name `si_usepass`, so the bytes may differ from the server's).
#[test]
fn replies_re_encode_to_themselves() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        let reply = Reply::decode(bytes).unwrap();
        let encoded = match &reply {
            Reply::Info(r) => r.to_vec(),
            Reply::EtqwInfo(r) => r.to_vec(),
            Reply::InfoEx(r) => r.to_vec(),
        }
        .unwrap();
        assert_eq!(Reply::decode(&encoded).unwrap(), reply, "{name}");
    }
}
