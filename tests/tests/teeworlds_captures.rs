//! Teeworlds 0.6 against real `inf3` replies captured from two servers (a DDNet server with
//! 16 slots and a vanilla 0.6.2 DM server): each decodes, re-encodes to the same bytes,
//! fails at every truncation, and its status agrees field by field with another client
//! library's decode (GameQ).

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::teeworlds::{Reply, ENCODING};
use query_tests::{read_capture, vectors_dir};
use query_wire::{Decode, Encode};

const CAPTURES: [&str; 2] = ["teeworlds_1", "teeworlds_2"];

fn capture(name: &str) -> Option<Vec<u8>> {
    let mut datagrams = read_capture(&format!("gameq/teeworlds/{name}_response.txt"))?;
    assert_eq!(datagrams.len(), 1, "{name}: one datagram");
    datagrams.pop()
}

fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join(format!("captures/gameq/teeworlds/{name}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value.as_object().unwrap().values().next().unwrap().clone()
}

/// GameQ writes every number as a string.
fn number(value: &serde_json::Value, key: &str) -> u32 {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key}"))
        .parse()
        .unwrap()
}

#[test]
fn replies_decode_and_agree_with_gameq() {
    for name in CAPTURES {
        let Some(bytes) = capture(name) else { return };
        let reply = Reply::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(reply.to_vec().unwrap(), bytes, "{name} re-encodes");
        let Reply::Info(info) = reply else {
            panic!("{name}: not inf3");
        };
        let expected = gameq(name);
        let text = |t: &query_wire::Text<'_>| t.decode(ENCODING).into_owned();
        assert_eq!(text(&info.name), expected["hostname"].as_str().unwrap());
        assert_eq!(text(&info.map), expected["map"].as_str().unwrap());
        assert_eq!(
            text(&info.game_type),
            expected["game_descr"].as_str().unwrap()
        );
        assert_eq!(text(&info.version), expected["version"].as_str().unwrap());
        assert_eq!(info.flags, number(&expected, "flags"), "{name}");
        assert_eq!(info.num_players, number(&expected, "num_players"));
        assert_eq!(info.max_players, number(&expected, "maxplayers"));
        assert_eq!(info.num_clients, number(&expected, "num_players_total"));
        assert_eq!(info.max_clients, number(&expected, "maxplayers_total"));
        // GameQ reports no players for these empty servers; neither do the bytes.
        assert!(info.clients.is_empty(), "{name}");
        // GameQ asked with token 5 and got it back as the text `5`.
        assert_eq!(info.token, 5, "{name}");
    }
}

#[test]
fn every_truncation_is_an_error_and_a_foreign_type_is_refused() {
    for name in CAPTURES {
        let Some(bytes) = capture(name) else { return };
        for end in 0..bytes.len() {
            let error = Reply::from_bytes(&bytes[..end]).unwrap_err();
            assert!(error.offset() <= end, "{name} cut at {end}: {error}");
        }
        let mut foreign = bytes.clone();
        foreign[10..14].copy_from_slice(b"lis2");
        let error = Reply::from_bytes(&foreign).unwrap_err();
        assert_eq!(error.offset(), 10, "{error}");
    }
}

#[test]
fn the_client_maps_a_replayed_reply() {
    let Some(bytes) = capture("teeworlds_2") else {
        return;
    };
    let target: SocketAddr = "127.0.0.1:8303".parse().unwrap();
    let status =
        replay::status_from_replies(Protocol::Teeworlds, target, &[bytes], &Options::default())
            .unwrap();
    assert_eq!(status.name, "!    *** DNW Despe.de *** Teeworlds DM!");
    assert_eq!(status.map.as_deref(), Some("dm7"));
    assert_eq!(status.game_type.as_deref(), Some("DM"));
    assert_eq!(status.version.as_deref(), Some("0.6.2"));
    assert_eq!((status.num_players, status.max_players), (0, 10));
    assert_eq!(status.rules["max_clients"], "12");
    assert_eq!(status.password, Some(false));
    assert_eq!(status.raw["reply"], "inf3");
    assert!(status.complete);
}
