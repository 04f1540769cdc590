//! Minecraft Bedrock against real unconnected pongs captured from two servers (a vanilla-like
//! SMP and PikaNetwork): each decodes, re-encodes to the same bytes, fails at every
//! truncation, and its status agrees with another client library's decode (GameQ).

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::bedrock::{ServerId, UnconnectedPong, MAGIC};
use query_tests::{read_capture, vectors_dir};
use query_wire::{Decode, Encode};

const CAPTURES: [&str; 2] = ["minecraftbe_1", "minecraftbe_2"];

fn capture(name: &str) -> Option<Vec<u8>> {
    let mut datagrams = read_capture(&format!("gameq/raknet/{name}_response.txt"))?;
    assert_eq!(datagrams.len(), 1, "{name}: one pong");
    datagrams.pop()
}

fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join(format!("captures/gameq/raknet/{name}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value.as_object().unwrap().values().next().unwrap().clone()
}

#[test]
fn pongs_decode_and_agree_with_gameq() {
    for name in CAPTURES {
        let Some(bytes) = capture(name) else { return };
        let pong = UnconnectedPong::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(pong.to_vec().unwrap(), bytes, "{name} re-encodes");
        let text = pong.server_text();
        let id = ServerId::parse(&text).unwrap();
        let expected = gameq(name);
        assert_eq!(id.edition, expected["edition"].as_str().unwrap(), "{name}");
        assert_eq!(id.motd, expected["motd_line_1"].as_str().unwrap(), "{name}");
        assert_eq!(
            id.motd2.as_deref(),
            expected["motd_line_2"].as_str(),
            "{name}"
        );
        assert_eq!(id.protocol, expected["protocol_version"].as_i64().unwrap());
        assert_eq!(id.version, expected["version"].as_str().unwrap());
        assert_eq!(
            id.online.to_string(),
            expected["num_players"].as_str().unwrap()
        );
        assert_eq!(
            id.max.to_string(),
            expected["max_players"].as_str().unwrap()
        );
        assert_eq!(
            id.server_unique_id.as_deref(),
            expected["server_uid"].as_str(),
            "{name}: a negative id is kept as sent"
        );
        assert_eq!(id.game_mode.as_deref(), expected["gamemode"].as_str());
        assert_eq!(id.game_mode_number, expected["gamemode_numeric"].as_i64());
        assert_eq!(
            id.port_v4.map(i64::from),
            expected["port_ipv4"].as_i64(),
            "{name}"
        );
        // GameQ reports the `-1` some servers send for an absent IPv6 port; here it is None.
        let v6 = expected["port_ipv6"].as_i64().unwrap();
        assert_eq!(id.port_v6.map(i64::from), (v6 >= 0).then_some(v6));
    }
}

#[test]
fn every_truncation_is_an_error_and_a_wrong_magic_is_refused() {
    for name in CAPTURES {
        let Some(bytes) = capture(name) else { return };
        for end in 0..bytes.len() {
            let error = UnconnectedPong::from_bytes(&bytes[..end]).unwrap_err();
            assert!(error.offset() <= end, "{name} cut at {end}: {error}");
        }
        let mut forged = bytes.clone();
        forged[17 + MAGIC.len() - 1] ^= 1;
        let error = UnconnectedPong::from_bytes(&forged).unwrap_err();
        assert_eq!(error.offset(), 17, "{error}");
    }
}

#[test]
fn the_client_maps_a_replayed_pong() {
    let Some(bytes) = capture("minecraftbe_1") else {
        return;
    };
    let target: SocketAddr = "127.0.0.1:19132".parse().unwrap();
    let status =
        replay::status_from_replies(Protocol::Bedrock, target, &[bytes], &Options::default())
            .unwrap();
    assert_eq!(status.name, "WILDWOOD SMP [1.19]");
    assert_eq!(
        status.map.as_deref(),
        Some("ᴛʜᴇ ʙᴇsᴛ ᴏɴᴇ-sᴛᴏᴘ sᴍᴘ ɴᴇᴛᴡᴏʀᴋ!")
    );
    assert_eq!(status.version.as_deref(), Some("1.19.21"));
    assert_eq!((status.num_players, status.max_players), (111, 300));
    assert_eq!(status.game_type.as_deref(), Some("Survival"));
    assert_eq!(status.rules["protocol"], "545");
    assert_eq!(status.rules["server_id"], "-305653527360353208");
    assert!(status.complete);
}
