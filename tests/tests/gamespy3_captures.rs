//! GameSpy 3 and 4 against real replies (Crysis, Crysis Wars, Just Cause 2, Minecraft, Project
//! Reality BF2, Unreal Tournament 3): every part decodes and re-encodes byte for byte, the
//! parts join into a reviewed snapshot that agrees with another client library's decode, in any
//! order, duplicated or with a part lost.

use query_specs::gamespy3::{
    split_reply, Assembled, Jc2mpReply, Part, Pushed, Reassembly, ENCODING, MAX_DATAGRAM,
    SECTION_PLAYERS,
};
use query_tests::{read_capture, vectors_dir};
use query_wire::{Decode, Encode};

/// Every GameSpy 3 capture with its datagrams, Just Cause 2's (its own format) apart.
const CAPTURES: [&str; 11] = [
    "crysis2_1",
    "crysis2_2",
    "crysiswars_1",
    "minecraft_1",
    "minecraft_2",
    "minecraft_3",
    "minecraft_4",
    "projectrealitybf2_1",
    "projectrealitybf2_2",
    "projectrealitybf2_3",
    "ut3_1",
];
const JC2MP: [&str; 3] = ["justcause2_1", "justcause2_2", "justcause2_3"];

fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/gamespy3/{name}_response.txt"))
}

fn other_client(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/gamespy3")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json.as_object().unwrap().values().next().unwrap().clone()
}

fn join<'d>(datagrams: impl IntoIterator<Item = &'d Vec<u8>>) -> Reassembly {
    let mut parts = Reassembly::new();
    for d in datagrams {
        parts.push(d).unwrap();
    }
    parts
}

fn text(t: &query_wire::Text<'_>) -> String {
    t.decode(ENCODING).into_owned()
}

#[test]
fn every_part_decodes_and_re_encodes_byte_for_byte() {
    let mut decoded = 0;
    let mut total = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        for (i, d) in datagrams.iter().enumerate() {
            total += 1;
            let part = Part::from_bytes(d).unwrap_or_else(|e| panic!("{name} part {i}: {e}"));
            decoded += 1;
            // A part cut inside a list (no closing NULs) re-encodes with them: the only
            // difference allowed is NULs appended at the end.
            let again = part.to_vec().unwrap();
            assert_eq!(&again[..d.len()], &d[..], "{name} part {i}");
            assert!(again[d.len()..].iter().all(|&b| b == 0), "{name} part {i}");
            // Only Minecraft leaves a last part's section open.
            if part.last && !name.starts_with("minecraft") {
                assert_eq!(again.len(), d.len(), "{name}: a last part closes its lists");
            }
        }
    }
    for name in JC2MP {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1);
        total += 1;
        let reply = Jc2mpReply::from_bytes(&datagrams[0]).unwrap();
        decoded += 1;
        assert_eq!(reply.to_vec().unwrap(), datagrams[0], "{name}");
    }
    eprintln!("GameSpy 3: {decoded} of {total} datagrams decode");
    assert_eq!(decoded, 18);
}

#[test]
fn captures_join_to_snapshots_and_agree_with_the_other_client() {
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let parts = join(&datagrams);
        let reply = parts.reply().unwrap();
        assert!(reply.complete, "{name}");
        insta::assert_yaml_snapshot!(format!("gamespy3_{name}"), reply);

        let other = other_client(name);
        assert_eq!(
            reply.hostname().map(text).as_deref(),
            other["hostname"].as_str(),
            "{name}"
        );
        assert_eq!(
            reply.max_players().map(u64::from),
            other["maxplayers"].as_str().and_then(|m| m.parse().ok()),
            "{name}"
        );
        let map = reply.map().map(text);
        match name {
            // GameQ fills in the map from a key of its own choosing: UT3's `p1073741825`,
            // and Minecraft's `map`; the `mapname` UT3 sends is its settings string.
            "ut3_1" => assert_eq!(
                reply.value("p1073741825").map(text).as_deref(),
                other["mapname"].as_str()
            ),
            _ => assert_eq!(
                map.as_deref(),
                other["mapname"].as_str().or(other["map"].as_str()),
                "{name}"
            ),
        }
        let ours: Vec<String> = reply.player_names().iter().map(text).collect();
        let theirs: Vec<String> = other["players"]
            .as_array()
            .map(|p| {
                p.iter()
                    .map(|p| {
                        p.get("name")
                            .or_else(|| p.get("player"))
                            .and_then(|n| n.as_str())
                            .unwrap_or_default()
                            .to_owned()
                    })
                    .collect()
            })
            .unwrap_or_default();
        // GameQ trims the spaces some names start with; the bytes keep them.
        let trimmed: Vec<&str> = ours.iter().map(|n| n.trim()).collect();
        assert_eq!(trimmed, theirs, "{name}");
        agreed += 1;
    }
    eprintln!(
        "GameSpy 3: {agreed} of {} joined replies agree",
        CAPTURES.len()
    );
}

#[test]
fn project_reality_keeps_the_whole_value_a_part_cut() {
    let Some(datagrams) = capture("projectrealitybf2_1") else {
        return;
    };
    let parts = join(&datagrams);
    let reply = parts.reply().unwrap();
    let players = reply.players().unwrap();
    // Part 0 ends with `" "`, the start of `" Rifleman1"`, which part 1 sends whole with a
    // count byte of 22: the 23rd name is the whole one.
    let names = &players.column("player").unwrap().values;
    assert_eq!(names[22].as_bytes(), b" Rifleman1");
    // The server counts 100 players but lists 64 (the BF2 engine's query lists at most
    // 64). Every column has a value for each, including `pid_`, cut in part 1 and continued
    // in part 2.
    assert_eq!(reply.num_players(), Some(100));
    for column in &players.columns {
        assert_eq!(column.values.len(), 64, "{:?}", column.name);
    }
    assert_eq!(
        players.column("pid").unwrap().values[1].as_bytes(),
        b"100362089"
    );
    let teams = reply.teams().unwrap();
    assert_eq!(teams.column("team_t").unwrap().values.len(), 2);
}

/// UT3 follows each column with two extra NULs, read as an empty section of kind 0 that
/// continues the table. Its `team_` column holds an empty value, which the family's grammar
/// cannot carry (an empty value ends a column): from there the bytes read as a section of
/// kind `d` (the first byte of `deaths_`). The columns before it are right; the rest is kept
/// in that table, not dropped.
#[test]
fn ut3_padding_continues_its_table() {
    let Some(datagrams) = capture("ut3_1") else {
        return;
    };
    let parts = join(&datagrams);
    let reply = parts.reply().unwrap();
    let players = reply.players().unwrap();
    let names: Vec<&[u8]> = players.columns.iter().map(|c| c.name.as_bytes()).collect();
    assert_eq!(names, [&b"player_"[..], b"score_", b"ping_", b"team_"]);
    let rows = players.rows();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][&b"player"[..]].as_bytes(), b"Sierra Vasquez");
    assert_eq!(rows[0][&b"ping"[..]].as_bytes(), b"96");
    let misread = reply.table(b'd').unwrap();
    assert_eq!(misread.columns[0].name.as_bytes(), b"eaths_");
    assert!(reply.teams().is_some());
}

#[test]
fn just_cause_2_players_are_records() {
    for name in JC2MP {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let reply = Jc2mpReply::from_bytes(&datagrams[0]).unwrap();
        let other = other_client(name);
        let theirs = other["players"].as_array().unwrap();
        assert_eq!(reply.players.len(), theirs.len(), "{name}");
        let numplayers = query_specs::gamespy3::lookup(&reply.details, "numplayers")
            .map(|v| v.as_bytes().to_vec());
        assert_eq!(
            numplayers.as_deref(),
            other["numplayers"].as_str().map(str::as_bytes)
        );
        for (ours, theirs) in reply.players.iter().zip(theirs) {
            // GameQ reads the player count's low byte into the first name (`\u0007That1...`,
            // `+Moonman` for 43 players): the count is a big-endian u16 before the records.
            let their_name = theirs["name"].as_str().unwrap();
            let count_byte = char::from(reply.players.len() as u8);
            let their_name = if std::ptr::eq(ours, &reply.players[0]) {
                their_name.strip_prefix(count_byte).unwrap()
            } else {
                their_name
            };
            assert_eq!(
                ours.name.decode(query_wire::TextEncoding::Utf8),
                their_name,
                "{name}"
            );
            assert_eq!(
                ours.steam_id.as_bytes(),
                theirs["steamid"].as_str().unwrap().as_bytes()
            );
            assert_eq!(u64::from(ours.ping), theirs["ping"].as_u64().unwrap());
        }
    }
}

#[test]
fn parts_join_in_any_order_with_duplicates_and_report_losses() {
    for name in ["projectrealitybf2_1", "projectrealitybf2_3", "ut3_1"] {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let joined = join(&datagrams);
        let in_order = joined.reply().unwrap();
        let mut reversed = Reassembly::new();
        for d in datagrams.iter().rev() {
            assert_eq!(reversed.push(d).unwrap(), Pushed::New);
            assert_eq!(reversed.push(d).unwrap(), Pushed::Duplicate);
        }
        assert_eq!(reversed.reply().unwrap(), in_order, "{name}");

        // Without the first part: the rest still joins, marked incomplete.
        let rest = join(&datagrams[1..]);
        let partial = rest.reply().unwrap();
        assert!(!partial.complete);
        assert_eq!(partial.missing_parts, [0]);
        assert!(partial.details.is_empty());
    }
}

#[test]
fn a_split_of_a_joined_reply_joins_back_to_it() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let parts = join(&datagrams);
        let reply: Assembled<'_> = parts.reply().unwrap();
        {
            // Drop values the protocol cannot carry in a column (UT3's empty team), which
            // the splitter refuses.
            let mut content = reply.content();
            for table in &mut content.tables {
                for column in &mut table.columns {
                    column.values.retain(|v| !v.as_bytes().is_empty());
                }
                table.columns.retain(|c| !c.values.is_empty());
            }
            let parts = split_reply(&content, 0x1020_3040, MAX_DATAGRAM).unwrap();
            let mut again = Reassembly::for_session(0x1020_3040);
            for p in &parts {
                let bytes = p.to_vec().unwrap();
                assert!(bytes.len() <= MAX_DATAGRAM, "{name}");
                again.push(&bytes).unwrap();
            }
            let joined = again.reply().unwrap();
            assert!(joined.complete);
            assert_eq!(joined.details, content.details, "{name}");
            for table in &content.tables {
                let ours = joined.table(table.kind).unwrap();
                assert_eq!(ours.columns, table.columns, "{name}");
            }
        }
        assert!(reply.table(SECTION_PLAYERS).is_some() || name.starts_with("crysis"));
    }
}

/// The client session, replayed on every capture's datagrams, agrees with GameQ on name, map,
/// max players and player names (where GameQ differs, as in the test above: UT3's map is a
/// key of GameQ's choosing, and GameQ trims leading spaces off names). Text is read as
/// Windows-1252, the default: the Minecraft captures too send `§` as the one byte A7. The
/// captures hold reply parts only, so the
/// session's first query (without a challenge) is the one they answer.
#[test]
fn the_client_agrees_with_gameq_on_every_capture() {
    use query_net::{replay, Options, Protocol};
    let target = "127.0.0.1:29900".parse().unwrap();
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let options = Options::default();
        let status = replay::status_from_replies(Protocol::GameSpy3, target, &datagrams, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every part arrived; a server listing fewer players than its `numplayers` (Project
        // Reality counts players its table leaves out) is reported incomplete, as for SQP.
        assert_eq!(
            status.complete,
            status.players.len() >= status.num_players as usize,
            "{name}"
        );
        if !status.complete {
            eprintln!(
                "{name}: {} of {} players listed",
                status.players.len(),
                status.num_players
            );
        }
        let other = other_client(name);
        assert_eq!(
            Some(status.name.as_str()),
            other["hostname"].as_str(),
            "{name}"
        );
        assert_eq!(
            Some(u64::from(status.max_players)),
            other["maxplayers"].as_str().and_then(|m| m.parse().ok()),
            "{name}"
        );
        if name != "ut3_1" {
            assert_eq!(
                status.map.as_deref(),
                other["mapname"].as_str().or(other["map"].as_str()),
                "{name}"
            );
        }
        let ours: Vec<&str> = status.players.iter().map(|p| p.name.trim()).collect();
        let theirs: Vec<&str> = other["players"]
            .as_array()
            .map(|p| {
                p.iter()
                    .map(|p| {
                        p.get("name")
                            .or_else(|| p.get("player"))
                            .and_then(|n| n.as_str())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(ours, theirs, "{name}");
        agreed += 1;
    }
    assert_eq!(agreed, CAPTURES.len());
    eprintln!(
        "GameSpy 3 client: {agreed} of {} captures agree with GameQ",
        CAPTURES.len()
    );
}
