//! Frostbite statuses from the streams of real Battlefield 3, 4 and Bad Company 2 servers,
//! compared field by field with the other library's decode beside each capture; and the
//! same stream split at every byte reads the same.
//!
//! Where the other library disagrees with the bytes, the bytes win: it reads Battlefield 3's
//! and 4's `ranked`, `punkBuster` and `joinQueueEnabled` words (`true`) and BF4's
//! `blazeGameState` (`IN_GAME`) as integers, which turns them into 0.

use std::net::SocketAddr;

use query_net::engines::frostbite::status_from_stream;
use query_net::{Protocol, ServerStatus};
use query_tests::read_capture;
use serde_json::Value;

const CAPTURES: [&str; 7] = [
    "bf3_1", "bf3_2", "bf3_3", "bf4_1", "bfbc2_1", "bfbc2_2", "bfbc2_3",
];

fn target() -> SocketAddr {
    "127.0.0.1:47200".parse().unwrap()
}

/// The capture's reads and the other library's decode.
fn capture(name: &str) -> Option<(Vec<Vec<u8>>, Value)> {
    let pieces = read_capture(&format!("gameq/frostbite/{name}_response.txt"))?;
    let path = query_tests::vectors_dir()?
        .join("captures/gameq/frostbite")
        .join(format!("{name}_result.json"));
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (_, decoded) = json.as_object().unwrap().iter().next().unwrap();
    Some((pieces, decoded.clone()))
}

fn status(pieces: &[Vec<u8>]) -> ServerStatus {
    let pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    status_from_stream(target(), &pieces).unwrap()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn real_streams_match_the_other_decode_field_by_field() {
    for name in CAPTURES {
        let Some((pieces, theirs)) = capture(name) else {
            eprintln!("vectors absent: skipped");
            return;
        };
        let ours = status(&pieces);
        assert_eq!(ours.protocol, Protocol::Frostbite);
        assert_eq!(ours.name, theirs["hostname"].as_str().unwrap(), "{name}");
        assert_eq!(ours.map.as_deref(), theirs["map"].as_str(), "{name}");
        assert_eq!(
            ours.game_type.as_deref(),
            theirs["gametype"].as_str(),
            "{name}"
        );
        assert_eq!(
            Some(u64::from(ours.num_players)),
            theirs["num_players"].as_u64()
        );
        assert_eq!(
            Some(u64::from(ours.max_players)),
            theirs["max_players"].as_u64()
        );
        assert_eq!(ours.password, Some(theirs["password"] == 1), "{name}");
        assert_eq!(
            ours.raw["build"].as_str(),
            theirs["version"].as_str(),
            "{name}"
        );
        for (rule, key) in [
            ("roundsPlayed", "roundsplayed"),
            ("roundsTotal", "roundstotal"),
            ("roundTime", "roundtime"),
            ("serverUpTime", "uptime"),
            ("targetScore", "targetscore"),
            ("punkBusterVersion", "punkbuster_version"),
            ("gameIpAndPort", "ip_port"),
            ("region", "region"),
        ] {
            assert_eq!(ours.rules[rule], text(&theirs[key]), "{name}: {rule}");
        }
        if name.starts_with("bfbc2") {
            // Bad Company 2's own words after the round time.
            assert_eq!(ours.rules["gameMod"], text(&theirs["mod"]), "{name}");
            assert_eq!(
                ours.rules["ranked"] == "true",
                theirs["ranked"] == 1,
                "{name}"
            );
            assert_eq!(
                ours.rules["punkBuster"] == "true",
                theirs["punkbuster"] == 1
            );
        } else {
            assert_eq!(ours.rules["closestPingSite"], text(&theirs["pingsite"]));
            assert_eq!(ours.rules["country"], text(&theirs["country"]));
            // The words are `true`; the other library's integer reading makes them 0.
            assert_eq!(ours.rules["ranked"], "true", "{name}");
            assert_eq!(theirs["ranked"], 0, "{name}");
        }
        if name.starts_with("bf4") {
            assert_eq!(
                ours.rules["blazePlayerCount"],
                text(&theirs["blaze_player_count"])
            );
            assert_eq!(ours.rules["blazeGameState"], "IN_GAME");
        }

        let teams = theirs["teams"].as_array().unwrap();
        assert_eq!(ours.teams.len(), teams.len(), "{name}");
        for (team, their) in ours.teams.iter().zip(teams) {
            let tickets = their["tickets"].as_str().unwrap();
            let ours_text = team
                .extra
                .get("score")
                .cloned()
                .or_else(|| team.score.map(|s| s.to_string()))
                .unwrap();
            assert_eq!(ours_text, tickets, "{name}");
            assert_eq!(team.name, their["id"].to_string());
        }

        // An empty server has no player list in the other decode.
        let players = theirs["players"].as_array().map_or(&[][..], Vec::as_slice);
        assert_eq!(ours.players.len(), players.len(), "{name}");
        for (player, their) in ours.players.iter().zip(players) {
            let their = their.as_object().unwrap();
            assert_eq!(player.name, their["name"].as_str().unwrap(), "{name}");
            assert_eq!(player.team.as_deref(), their["teamId"].as_str());
            assert_eq!(
                player.score.map(|s| s.to_string()).as_deref(),
                their["score"].as_str()
            );
            if let Some(ping) = their.get("ping") {
                assert_eq!(player.ping.map(|p| p.to_string()).as_deref(), ping.as_str());
            }
            for column in [
                "guid", "squadId", "kills", "deaths", "rank", "type", "clanTag",
            ] {
                if let Some(value) = their.get(column) {
                    assert_eq!(
                        player.extra.get(column).map(String::as_str),
                        value.as_str(),
                        "{name}: {column}"
                    );
                }
            }
        }
        assert!(ours.complete, "{name}");
    }
}

#[test]
fn columns_are_read_by_name_whatever_the_game() {
    let Some((bc2, _)) = capture("bfbc2_1") else {
        return;
    };
    let Some((bf4, _)) = capture("bf4_1") else {
        return;
    };
    // Bad Company 2 puts `clanTag` first and has no `rank`; BF4 adds `ping` and `type`.
    let bc2 = status(&bc2);
    assert_eq!(bc2.raw["columns"][0], "clanTag");
    assert_eq!(bc2.players[0].name, "cos156");
    assert_eq!(bc2.players[0].ping, Some(130));
    let bf4 = status(&bf4);
    assert_eq!(bf4.raw["columns"][8], "ping");
    assert_eq!(bf4.players[0].ping, Some(59));
    assert_eq!(bf4.players[0].extra["type"], "0");
    assert_eq!(bf4.raw["game"], "BF4");
}

#[test]
fn a_real_stream_split_anywhere_reads_the_same() {
    let Some((pieces, _)) = capture("bfbc2_3") else {
        return;
    };
    let whole = pieces.concat();
    let expected = status(&pieces);
    for split in query_net::stream::splits(&whole, 0) {
        let split: Vec<Vec<u8>> = split.iter().map(|p| p.to_vec()).collect();
        let got = status(&split);
        assert_eq!(got.players, expected.players);
        assert_eq!(got.rules, expected.rules);
    }
}

#[test]
fn a_stream_cut_short_is_an_error_not_a_partial_status() {
    let Some((pieces, _)) = capture("bf3_1") else {
        return;
    };
    let whole = pieces.concat();
    for cut in [0, 12, 100, whole.len() - 1] {
        let piece = [&whole[..cut]];
        let error = status_from_stream(target(), &piece)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("short of a whole frame") || error.contains("without answering"),
            "{cut}: {error}"
        );
    }
}
