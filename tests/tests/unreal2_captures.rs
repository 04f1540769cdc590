//! Unreal 2 against real replies captured from two UT2004 servers (details, rules over two or
//! three datagrams, players): every datagram decodes, re-encodes to the same bytes and fails at
//! every truncation; the values agree field by field with another client library's decode of
//! the same bytes (GameQ), through the specs and through the client's status.

use std::collections::HashMap;
use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::unreal2::{strip_colours, Kind, Layout, Reply, UText};
use query_tests::{read_capture, vectors_dir};
use query_wire::{Encode, TextEncoding};

const NAMES: [&str; 2] = ["ut2004_1", "ut2004_2"];

fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/unreal2/{name}_response.txt"))
}

fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join(format!("captures/gameq/unreal2/{name}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value.as_object().unwrap().values().next().unwrap().clone()
}

fn latin1(text: &UText) -> String {
    text.decode(TextEncoding::Latin1).into_owned()
}

/// Every datagram decoded, in capture order.
fn replies(datagrams: &[Vec<u8>]) -> Vec<Reply> {
    datagrams
        .iter()
        .map(|d| Reply::decode(d).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The bytes a decoded datagram encodes back to.
fn encode(reply: &Reply) -> Vec<u8> {
    match reply {
        Reply::Info(info) => {
            let mut bytes = info.header.to_vec().unwrap();
            bytes.extend(info.info.to_vec_with(info.layout).unwrap());
            bytes
        }
        Reply::Rules(part) => part.to_vec().unwrap(),
        Reply::Players(part) => part.to_vec().unwrap(),
    }
}

#[test]
fn every_datagram_decodes_and_re_encodes_to_its_bytes() {
    for name in NAMES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        // The details, the rules in two or three datagrams, the players.
        let kinds: Vec<Kind> = replies(&datagrams).iter().map(Reply::kind).collect();
        let rules = kinds.len() - 2;
        assert!(rules >= 2, "{name}: {kinds:?}");
        assert_eq!(kinds[0], Kind::Info, "{name}");
        assert_eq!(kinds[1..=rules], vec![Kind::Rules; rules], "{name}");
        assert_eq!(kinds[rules + 1], Kind::Players, "{name}");
        for (datagram, reply) in datagrams.iter().zip(replies(&datagrams)) {
            assert_eq!(&encode(&reply), datagram, "{name}");
        }
    }
}

#[test]
fn every_cut_is_an_error_at_or_before_the_cut() {
    for name in NAMES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        for datagram in &datagrams {
            let reply = Reply::decode(datagram).unwrap();
            // The details may end after the ping, or before their two closing zero bytes:
            // those cuts are older servers' replies. Lists hold whole entries, so a cut
            // inside one is refused, while a cut between two is a shorter part.
            for end in 0..datagram.len() {
                match Reply::decode(&datagram[..end]) {
                    Err(error) => assert!(error.offset() <= end, "{name}: cut at {end}: {error}"),
                    Ok(shorter) => assert!(
                        shorter.kind() == reply.kind() && end >= 5,
                        "{name}: cut at {end} decodes"
                    ),
                }
            }
        }
    }
}

#[test]
fn the_details_rules_and_players_agree_with_gameq() {
    for name in NAMES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let expected = gameq(name);
        let text = |key: &str| expected[key].as_str().unwrap().to_owned();
        let number = |key: &str| expected[key].as_u64().unwrap();
        let replies = replies(&datagrams);

        let Reply::Info(info) = &replies[0] else {
            panic!("{name}: details first");
        };
        assert_eq!(info.layout, Layout::Standard);
        let details = &info.info;
        assert_eq!(details.name_text(TextEncoding::Latin1), text("servername"));
        assert_eq!(latin1(&details.map), text("mapname"));
        assert_eq!(latin1(&details.game_type), text("gametype"));
        assert_eq!(u64::from(details.num_players), number("numplayers"));
        assert_eq!(u64::from(details.max_players), number("maxplayers"));
        assert_eq!(u64::from(details.ping), number("ping"));
        assert_eq!(u64::from(details.game_port), number("gameport"));
        assert_eq!(u64::from(details.query_port), number("queryport"));
        assert_eq!(u64::from(details.server_id), number("serverid"));
        // GameQ gives the empty address as `false`.
        assert!(details.ip.is_empty() && expected["serverip"] == false);
        assert_eq!(details.more.as_ref().unwrap().padding, Some([0, 0]));

        // GameQ numbers the `Mutator` pairs (mutator0, mutator1...) and keys every other
        // pair by its lower-cased name, a later pair replacing an earlier one.
        let mut mutators = Vec::new();
        let mut rules = HashMap::new();
        for reply in &replies {
            let Reply::Rules(part) = reply else { continue };
            for rule in &part.rules {
                let (key, value) = (latin1(&rule.key), latin1(&rule.value));
                if key == "Mutator" {
                    mutators.push(value);
                } else {
                    rules.insert(key.to_lowercase(), value);
                }
            }
        }
        for (i, mutator) in mutators.iter().enumerate() {
            assert_eq!(
                *mutator,
                text(&format!("mutator{i}")),
                "{name}: mutator {i}"
            );
        }
        assert_eq!(expected.get(format!("mutator{}", mutators.len())), None);
        for (key, value) in &rules {
            assert_eq!(*value, text(key), "{name}: rule {key}");
        }
        let info_keys = [
            "gameport",
            "gametype",
            "mapname",
            "maxplayers",
            "numplayers",
            "ping",
            "players",
            "queryport",
            "serverid",
            "serverip",
            "servername",
        ];
        let theirs = expected
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !k.starts_with("gq_") && !info_keys.contains(&k.as_str()))
            .filter(|k| !(k.starts_with("mutator") && k.len() > "mutator".len()))
            .count();
        assert_eq!(rules.len(), theirs, "{name}: as many rules");

        let Some(Reply::Players(part)) = replies.last() else {
            panic!("{name}: players last");
        };
        let players = expected["players"].as_array().unwrap();
        assert_eq!(part.players.len(), players.len(), "{name}");
        for (ours, theirs) in part.players.iter().zip(players) {
            assert_eq!(u64::from(ours.id), theirs["id"].as_u64().unwrap());
            assert_eq!(latin1(&ours.name), theirs["name"].as_str().unwrap());
            assert_eq!(u64::from(ours.ping), theirs["ping"].as_u64().unwrap());
            assert_eq!(i64::from(ours.score), theirs["score"].as_i64().unwrap());
        }
    }
}

#[test]
fn the_client_maps_the_replayed_replies() {
    let Some(datagrams) = capture("ut2004_1") else {
        return;
    };
    let target: SocketAddr = "127.0.0.1:7778".parse().unwrap();
    let status =
        replay::status_from_replies(Protocol::Unreal2, target, &datagrams, &Options::default())
            .unwrap();
    let expected = gameq("ut2004_1");
    let servername = expected["servername"].as_str().unwrap();
    assert_eq!(status.raw["name"], servername);
    assert_eq!(status.name, strip_colours(servername));
    assert_eq!(status.name, "Old Dudes/Dames Sniper - Campers Only");
    assert_eq!(
        status.map.as_deref(),
        Some("DM-Bathroom-SniperHeaven-2K9[Digital_Demonz_Edit]")
    );
    assert_eq!(status.game_type.as_deref(), Some("xDeathMatch"));
    assert_eq!((status.num_players, status.max_players), (7, 30));
    assert_eq!(status.version.as_deref(), Some("3369"));
    assert_eq!(status.password, Some(false), "from `Game Password`");
    assert_eq!(status.players.len(), 7);
    assert_eq!(status.players[0].name, "Math-Teacher");
    assert_eq!(status.players[0].ping, Some(152));
    assert_eq!(status.players[0].score, Some(1));
    assert_eq!(status.players[0].id, Some(20));
    assert_eq!(status.raw["skill"], "2");
    let mutators: Vec<&str> = status.rules["Mutator"].split(", ").collect();
    assert_eq!(mutators.len(), 17);
    assert_eq!(mutators[0], "MutAntiTCCFinal");
    assert_eq!(
        status.rules["mutator"].rsplit(", ").next(),
        Some("ServerBots")
    );
    assert!(status.complete, "{}", status.raw);
}
