//! GameSpy 2 against real replies captured from Halo, Hidden & Dangerous 2 and ArmA servers:
//! each capture is a details reply (`FF 00 00`) and a tables reply (`00 FF FF`); both decode
//! to a reviewed snapshot, re-encode byte for byte, and agree with another client library's
//! decode of the same bytes.

use query_net::{replay, Options, Protocol};
use query_specs::gamespy2::{Reply, Requested};
use query_tests::{read_capture, vectors_dir};
use query_wire::kv;
use query_wire::{Decode, Encode, Reader, TextEncoding};

const CAPTURES: [&str; 6] = ["arma_1", "arma_2", "had2_1", "had2_2", "halo_1", "halo_2"];

fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/gamespy2/{name}_response.txt"))
}

/// GameQ's decode of the same capture: the one server object in the file.
fn other_client(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/gamespy2")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let servers = json.as_object().unwrap();
    assert_eq!(servers.len(), 1);
    servers.values().next().unwrap().clone()
}

/// The two replies of a capture: details, then tables.
fn decode(datagrams: &[Vec<u8>]) -> (Reply<'_>, Reply<'_>) {
    assert_eq!(datagrams.len(), 2);
    let details = Reply::from_bytes_with(&datagrams[0], Requested::DETAILS).unwrap();
    let tables = Reply::from_bytes_with(&datagrams[1], Requested::TABLES).unwrap();
    (details, tables)
}

/// The key/value pairs of a details reply, sorted.
fn sorted_pairs(reply: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut r = Reader::new(&reply[5..]);
    let mut pairs: Vec<_> = kv::read_nul_pairs(&mut r)
        .unwrap()
        .iter()
        .map(|p| (p.key.to_vec(), p.value.to_vec()))
        .collect();
    assert!(r.is_empty());
    pairs.sort();
    pairs
}

#[test]
fn every_capture_decodes_re_encodes_and_matches_its_snapshot() {
    let mut decoded = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let (details, tables) = decode(&datagrams);
        for (reply, bytes, requested) in [
            (&details, &datagrams[0], Requested::DETAILS),
            (&tables, &datagrams[1], Requested::TABLES),
        ] {
            assert_eq!(reply.requested(), requested);
            let again = reply.to_vec_with(requested).unwrap();
            assert_eq!(reply.encoded_len(requested), again.len(), "{name}");
            assert_eq!(again.len(), bytes.len(), "{name}");
            assert_eq!(
                &Reply::from_bytes_with(&again, requested).unwrap(),
                reply,
                "{name}"
            );
            if requested.details {
                // The typed details write their declared keys first, then the others in
                // arrival order: the same pairs, not always in the server's order.
                assert_eq!(sorted_pairs(&again), sorted_pairs(bytes), "{name}");
            } else {
                assert_eq!(&again, bytes, "{name}");
            }
        }
        insta::assert_yaml_snapshot!(format!("gamespy2_{name}"), (details, tables));
        decoded += 1;
    }
    println!(
        "gamespy2: {decoded} of {} captures decode and re-encode",
        CAPTURES.len()
    );
    assert_eq!(decoded, CAPTURES.len());
}

/// Control bytes removed: GameQ drops them from Halo's host name (`\x01` × 60 then `!`).
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// GameQ reads the bytes as Latin-1, so Hidden & Dangerous 2's `WinteR5\x99` comes out with
/// the C1 control U+0099; the servers write Windows-1252, where `\x99` is `™`. The comparison
/// maps GameQ's text back to its bytes and reads them as Windows-1252, so the test asserts the
/// right name.
fn windows_1252(gameq: &str) -> String {
    let bytes: Option<Vec<u8>> = gameq
        .chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect();
    match bytes {
        Some(bytes) => TextEncoding::Windows1252.decode_lossy(&bytes).into_owned(),
        None => gameq.to_owned(),
    }
}

#[test]
fn names_map_and_players_agree_with_gameq() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let (details, tables) = decode(&datagrams);
        let gameq = other_client(name);
        let info = &details.details.as_ref().unwrap().0;
        let text = |key: &str| gameq[key].as_str().map(str::to_owned);
        assert_eq!(
            info.hostname.as_deref().map(printable),
            text("hostname").map(|t| printable(&t)),
            "{name}"
        );
        assert_eq!(
            info.map_name.as_deref().map(str::to_owned),
            text("mapname"),
            "{name}"
        );
        assert_eq!(
            info.max_players.map(|n| n.to_string()),
            gameq["maxplayers"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| gameq["maxplayers"].as_u64().map(|n| n.to_string())),
            "{name}"
        );
        let ours: Vec<String> = tables
            .players
            .as_ref()
            .unwrap()
            .table
            .rows
            .iter()
            .map(|p| p.name.as_deref().unwrap_or_default().to_owned())
            .collect();
        let theirs: Vec<String> = gameq["players"]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| windows_1252(p["player"].as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(ours, theirs, "{name}");
    }
}

/// The client's status, replayed from the two captured replies (its combined request gets
/// the details alone, as these servers answer it, and its tables request the tables), agrees
/// with GameQ on name, map, max players, player names and teams, with the same two GameQ faults
/// set aside as above (control bytes dropped, Latin-1 instead of Windows-1252).
#[test]
fn the_client_status_agrees_with_gameq() {
    let target: std::net::SocketAddr = "127.0.0.1:2302".parse().unwrap();
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let status = replay::status_from_replies(
            Protocol::GameSpy2,
            target,
            &datagrams,
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let gameq = other_client(name);
        let text = |key: &str| gameq[key].as_str().map(str::to_owned);
        assert_eq!(
            Some(printable(&status.name)),
            text("hostname").map(|t| printable(&t)),
            "{name}"
        );
        assert_eq!(status.map, text("mapname"), "{name}");
        let max = gameq["maxplayers"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| gameq["maxplayers"].as_u64().map(|n| n.to_string()));
        assert_eq!(Some(status.max_players.to_string()), max, "{name}");
        let ours: Vec<&str> = status.players.iter().map(|p| p.name.as_str()).collect();
        let theirs: Vec<String> = gameq["players"]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| windows_1252(p["player"].as_str().unwrap_or_default()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(ours, theirs, "{name}");
        // GameQ keeps `team_` as sent: Halo and Hidden & Dangerous 2 send the row of the team
        // in the teams table, which the client gives as that team's name; ArmA sends empty
        // cells, no team.
        let gameq_teams: Vec<&str> = gameq["teams"]
            .as_array()
            .map(|teams| teams.iter().filter_map(|t| t["teamt"].as_str()).collect())
            .unwrap_or_default();
        let ours: Vec<Option<&str>> = status.players.iter().map(|p| p.team.as_deref()).collect();
        let theirs: Vec<Option<String>> = gameq["players"]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| {
                        let cell = p["team"].as_str().unwrap_or_default().trim();
                        let row = cell.parse::<usize>().ok().and_then(|n| gameq_teams.get(n));
                        match row {
                            Some(team) => Some(windows_1252(team)),
                            None => (!cell.is_empty()).then(|| cell.to_owned()),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(
            ours,
            theirs.iter().map(Option::as_deref).collect::<Vec<_>>(),
            "{name}"
        );
        assert!(status.complete, "{name}: {:?}", status.raw);
        assert_eq!(status.raw["requests"], 2, "{name}");
        agreed += 1;
    }
    assert_eq!(agreed, CAPTURES.len());
    eprintln!("{agreed} of {} captures agree with GameQ", CAPTURES.len());
}
