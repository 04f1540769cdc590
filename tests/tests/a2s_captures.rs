//! A2S against real replies of 46 games (`captures/gameq/a2s/` in the vectors): every reply
//! reassembles and decodes, re-encodes byte for byte, and agrees with another client
//! library's decode on name, map, max players, the players' names (every row, unnamed ones
//! too) and the number of rules. Replayed through the real client session, each gives the
//! `ServerStatus` that agrees with the other library on the same fields.

use std::collections::BTreeMap;
use std::path::PathBuf;

use query_net::Protocol;
use query_specs::a2s::{
    InfoDetailed, PlayerList, Reassembly, Reply, Rule, SINGLE_BYTES, SPLIT_BYTES,
};
use query_tests::{split_datagrams, vectors_dir};
use query_wire::{Decode, Encode};

/// The capture folder, or `None` (after the skip message) without the vectors.
fn folder() -> Option<PathBuf> {
    Some(vectors_dir()?.join("captures/gameq/a2s"))
}

/// Every capture's name (`tf2_1`) with its datagrams, offline servers' empty files left out.
fn captures() -> Option<Vec<(String, Vec<Vec<u8>>)>> {
    let folder = folder()?;
    let mut captures: Vec<(String, Vec<Vec<u8>>)> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.strip_suffix("_response.txt")?;
            Some((
                name.to_owned(),
                split_datagrams(&std::fs::read(&path).unwrap()),
            ))
        })
        .filter(|(_, datagrams)| !datagrams.is_empty())
        .collect();
    captures.sort();
    Some(captures)
}

/// The other library's decode: the one server object of `<name>_result.json`.
fn other_client(name: &str) -> serde_json::Value {
    let path = folder().unwrap().join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json.as_object().unwrap().values().next().unwrap().clone()
}

/// The whole replies of a capture, split ones joined, in arrival order.
fn replies(name: &str, datagrams: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut whole = Vec::new();
    let mut parts = Reassembly::new();
    for (i, datagram) in datagrams.iter().enumerate() {
        if datagram.starts_with(SINGLE_BYTES) {
            whole.push(datagram.clone());
        } else {
            assert!(datagram.starts_with(SPLIT_BYTES), "{name} datagram {i}");
            let joined = parts
                .push(datagram)
                .unwrap_or_else(|e| panic!("{name} datagram {i}: {e}"));
            if let Some(joined) = joined {
                whole.push(joined);
                parts = Reassembly::new();
            }
        }
    }
    assert_eq!(
        parts.parts_received(),
        0,
        "{name}: a split reply was left incomplete"
    );
    whole
}

/// What a capture's replies say, as the comparison needs it.
#[derive(Debug, Default)]
struct Decoded {
    name: Option<String>,
    map: Option<String>,
    max_players: Option<u64>,
    players: Option<Vec<String>>,
    rules: Option<usize>,
}

fn text(text: &query_wire::Text<'_>) -> String {
    String::from_utf8_lossy(&text.0).into_owned()
}

fn decode_all(name: &str, datagrams: &[Vec<u8>]) -> Decoded {
    let mut decoded = Decoded::default();
    let mut app_id = 0;
    for reply in replies(name, datagrams) {
        let decoded_reply =
            Reply::from_bytes_with(&reply, app_id).unwrap_or_else(|e| panic!("{name}: {e}"));
        match decoded_reply {
            Reply::Info(info) => {
                app_id = info.app_id;
                decoded.name = Some(text(&info.name));
                decoded.map = Some(text(&info.map));
                // Rust's slots go past 255: it writes them in the keywords (`mp575`).
                decoded.max_players = Some(u64::from(info.slots()));
            }
            Reply::InfoDetailed(InfoDetailed {
                name: server,
                map,
                max_players,
                ..
            }) => {
                decoded.name.get_or_insert(text(&server));
                decoded.map.get_or_insert(text(&map));
                decoded.max_players.get_or_insert(u64::from(max_players));
            }
            Reply::Players(PlayerList::Standard(list)) => {
                decoded.players = Some(list.players.iter().map(|p| text(&p.name)).collect());
            }
            Reply::Players(PlayerList::TheShip(list)) => {
                decoded.players = Some(list.players.iter().map(|p| text(&p.name)).collect());
            }
            Reply::Rules(rules) => decoded.rules = Some(rules.rules.len()),
            Reply::Challenge(_) => panic!("{name}: the captures leave challenges out"),
        }
        // Every whole reply survives re-encoding byte for byte.
        let again = Reply::from_bytes_with(&reply, app_id).unwrap();
        assert_eq!(again.to_vec_with(app_id).unwrap(), reply, "{name}");
    }
    decoded
}

fn multiset(names: &[String]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for name in names {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    counts
}

#[test]
fn every_capture_decodes_and_agrees_with_the_other_library() {
    let Some(captures) = captures() else {
        return;
    };
    assert!(captures.len() >= 80, "{} captures", captures.len());
    let mut disagreements = Vec::new();
    for (name, datagrams) in &captures {
        let ours = decode_all(name, datagrams);
        let theirs = other_client(name);
        let field = |key: &str| theirs.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        let mut differs = |what: &str, ours: String, theirs: String| {
            if ours != theirs {
                disagreements.push(format!("{name} {what}: ours {ours}, theirs {theirs}"));
            }
        };
        differs(
            "name",
            format!("{:?}", ours.name),
            format!("{:?}", field("hostname")),
        );
        differs(
            "map",
            format!("{:?}", ours.map),
            format!("{:?}", field("map")),
        );
        differs(
            "max players",
            format!("{:?}", ours.max_players),
            format!("{:?}", theirs.get("max_players").and_then(|v| v.as_u64())),
        );
        if let Some(players) = &ours.players {
            let their_names: Vec<String> = theirs
                .get("players")
                .and_then(|p| p.as_array())
                .map(|rows| {
                    rows.iter()
                        .map(|row| row["name"].as_str().unwrap_or_default().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            differs(
                "players",
                format!("{:?}", multiset(players)),
                format!("{:?}", multiset(&their_names)),
            );
        }
        if let (Some(rules), Some(count)) = (ours.rules, theirs.get("num_rules")) {
            differs("rules", format!("{rules}"), format!("{count}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    println!("{} A2S captures decoded", captures.len());
}

#[test]
fn every_capture_replays_into_the_status_the_other_library_reports() {
    let Some(captures) = captures() else {
        return;
    };
    let target = "192.0.2.1:27015".parse().unwrap();
    let options = query_net::Options::default();
    let mut disagreements = Vec::new();
    for (name, datagrams) in &captures {
        let status =
            query_net::replay::status_from_replies(Protocol::A2s, target, datagrams, &options)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = decode_all(name, datagrams);
        let theirs = other_client(name);
        let mut differs = |what: &str, ours: String, theirs: String| {
            if ours != theirs {
                disagreements.push(format!("{name} {what}: status {ours}, theirs {theirs}"));
            }
        };
        differs(
            "name",
            status.name.clone(),
            theirs["hostname"].as_str().unwrap_or_default().to_owned(),
        );
        differs(
            "map",
            format!("{:?}", status.map),
            format!("{:?}", theirs["map"].as_str()),
        );
        differs(
            "max players",
            status.max_players.to_string(),
            theirs["max_players"].to_string(),
        );
        let names: Vec<String> = status.players.iter().map(|p| p.name.clone()).collect();
        let their_names: Vec<String> = theirs["players"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|row| row["name"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        differs(
            "players",
            format!("{:?}", multiset(&names)),
            format!("{:?}", multiset(&their_names)),
        );
        if let Some(count) = theirs.get("num_rules") {
            differs("rules", status.rules.len().to_string(), count.to_string());
        }
        // A capture holds every reply its server sent; whatever the capture lacks (a server
        // that does not answer RULES) is what the status says is missing.
        let lacks_players = ours.players.is_none();
        let lacks_rules = ours.rules.is_none();
        differs(
            "complete",
            status.complete.to_string(),
            (!lacks_players && !lacks_rules).to_string(),
        );
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    println!("{} A2S captures replayed into a status", captures.len());
}

#[test]
fn reviewed_snapshots_of_each_kind_of_reply() {
    let Some(captures) = captures() else {
        return;
    };
    // Source with the Extra Data Flag and a split RULES reply; a compressed split reply;
    // GoldSrc split parts and the detailed INFO.
    for wanted in ["tf2_1", "ffe_1", "cs15_1"] {
        let (name, datagrams) = captures.iter().find(|(n, _)| n == wanted).unwrap();
        let mut app_id = 0;
        let decoded: Vec<String> = replies(name, datagrams)
            .iter()
            .map(|reply| {
                let reply = Reply::from_bytes_with(reply, app_id).unwrap();
                if let Reply::Info(info) = &reply {
                    app_id = info.app_id;
                }
                format!("{reply:#?}")
            })
            .collect();
        insta::assert_snapshot!(format!("a2s_{name}"), decoded.join("\n"));
    }
}

#[test]
fn a_rule_pair_is_two_nul_terminated_texts() {
    let rule = Rule::from_bytes(b"mp_timelimit\x0030\x00").unwrap();
    assert_eq!(
        (text(&rule.name), text(&rule.value)),
        ("mp_timelimit".into(), "30".into())
    );
}
