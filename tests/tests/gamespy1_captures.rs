//! GameSpy v1 against real replies captured from UT99 and BF1942 servers: each reassembles,
//! decodes to a reviewed snapshot, agrees with another client library's decode, and survives
//! re-encoding, reordering, duplication and loss of parts.

use std::borrow::Cow;

use query_specs::gamespy1::{
    reply_datagrams, Assembled, Pushed, Reassembly, Reply, ENCODING, MAX_DATAGRAM,
};
use query_tests::{read_capture, vectors_dir};
use query_wire::kv::{self, FromKeyValues, ToKeyValues};
use query_wire::TextEncoding;

const CAPTURES: [&str; 6] = ["ut_1", "ut_2", "ut_3", "bf1942_1", "bf1942_2", "bf1942_3"];

/// The datagrams of a capture, or `None` (after the skip message) without the vectors.
fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("{name}_response.txt"))
}

/// The other library's decode of the same capture: the one server object in the file.
fn other_client(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let servers = json.as_object().unwrap();
    assert_eq!(servers.len(), 1);
    servers.values().next().unwrap().clone()
}

fn assemble<'d>(datagrams: impl IntoIterator<Item = &'d Vec<u8>>) -> Reassembly {
    let mut parts = Reassembly::new();
    for d in datagrams {
        parts.push(d).unwrap();
    }
    parts
}

#[test]
fn captures_reassemble_and_decode_to_snapshots() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let parts = assemble(&datagrams);
        assert!(parts.is_complete(), "{name}");
        assert_eq!(parts.total_parts(), Some(datagrams.len() as u32), "{name}");
        let assembled = parts.reply().unwrap();
        assert!(assembled.complete && assembled.missing_parts.is_empty());
        insta::assert_yaml_snapshot!(format!("gamespy1_{name}"), assembled);
    }
}

#[test]
fn datagrams_tokenize_and_re_encode_byte_for_byte() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        for (i, d) in datagrams.iter().enumerate() {
            let pairs = kv::split_pairs(d).unwrap();
            let mut out = Vec::new();
            for p in &pairs {
                kv::KvSink::put_pair(&mut out, p.key, None, p.value).unwrap();
            }
            assert_eq!(&out, d, "{name} datagram {i}");
        }
    }
}

#[test]
fn ut99_keeps_latin1_bytes_and_padded_pings() {
    let Some(datagrams) = capture("ut_1") else {
        return;
    };
    // Windows-1252 and Latin-1 agree on a0..=ff, so the choice of default changes nothing here.
    let high: Vec<u8> = (0xa0..=0xff).collect();
    assert_eq!(
        TextEncoding::Windows1252.decode(&high),
        TextEncoding::Latin1.decode(&high)
    );
    assert!(datagrams[1].windows(2).any(|w| w == [0xa0, b'E']));

    let parts = assemble(&datagrams);
    let reply = parts.reply().unwrap().reply;
    let resident = &reply.players[2];
    assert_eq!(resident.name.as_deref(), Some("Resident\u{a0}Evil\u{b1}"));
    assert_eq!(resident.team.as_deref(), Some("255"));
    // Raw bytes in the datagram: ` 152`, with the space.
    assert!(datagrams[0].windows(12).any(|w| w == b"\\ping_0\\ 152"));
    assert_eq!(reply.players[0].ping, Some(152));
    assert_eq!(reply.players[10].ping, Some(39));
    assert_eq!(reply.num_players, Some(11));
    assert_eq!(reply.current_players().len(), 11);
    assert_eq!(reply.password, Some(false));
    assert_eq!(reply.host_port, Some(7777));
    // UT99 sends gamever twice: the first fills the field, the repeat stays in the rules.
    assert_eq!(reply.game_version.as_deref(), Some("451"));
    assert_eq!(reply.rule("gamever"), Some("451"));
    // Unknown per-player keys are kept, without their `_N`.
    let face: Vec<_> = resident.extra.iter().map(|(k, v)| (&**k, &**v)).collect();
    assert_eq!(
        face,
        [
            ("mesh", "Spectator"),
            ("skin", "None"),
            ("face", ""),
            ("ngsecret", "true")
        ]
    );
    // Encoding the name again gives back the captured bytes.
    let bytes = reply.to_vec().unwrap();
    assert!(bytes.windows(18).any(|w| w == b"\\player_2\\Resident"));
    assert!(bytes.windows(6).any(|w| w == b"\xa0Evil\xb1"));
}

#[test]
fn bf1942_final_before_queryid_and_a_1361_byte_part() {
    let Some(datagrams) = capture("bf1942_1") else {
        return;
    };
    assert_eq!(datagrams[1].len(), 1361);
    assert!(datagrams[2].ends_with(b"\\final\\\\queryid\\1142.3"));

    // The 1361-byte part decodes on its own: players 0..=15 and the start of player 16.
    let alone = Reply::from_bytes(&datagrams[1]).unwrap();
    assert_eq!(alone.players.len(), 17);
    assert_eq!(alone.players[16].name.as_deref(), Some("zDiogozCraftz"));
    assert_eq!(alone.players[16].team, None);
    assert_eq!(alone.rule("queryid"), Some("1142.2"));

    let parts = assemble(&datagrams);
    assert!(parts.is_complete());
    assert_eq!(parts.query_id(), Some(1142));
    let reply = parts.reply().unwrap().reply;
    // Player 16's keys straddle parts 2 and 3 and come together again.
    assert_eq!(reply.players[16].score, Some(0));
    assert_eq!(reply.players[16].team.as_deref(), Some("1"));
    // 18 entries, 17 players: the stale entry is kept apart, not dropped.
    assert_eq!(reply.num_players, Some(17));
    assert_eq!(reply.players.len(), 18);
    assert_eq!(reply.current_players().len(), 17);
    assert_eq!(reply.stale_players()[0].name.as_deref(), Some("Taxman"));
    // `playername_N` and `score_N` fill the same fields as UT99's `player_N` and `frags_N`.
    let second = &reply.players[1];
    assert_eq!(second.name.as_deref(), Some("[OYZ]Fake_Katczinsky"));
    assert_eq!(
        (second.score, second.kills, second.deaths),
        (Some(87), Some(87), Some(23))
    );
    // Windows-1252 names: c5 69 f4 f1.
    assert_eq!(reply.players[2].name.as_deref(), Some("Åiôñ"));
    // Teams count from 0 in `teamname_N` and from 1 in `team_N`.
    let names: Vec<_> = reply.teams.iter().map(|t| t.name.as_deref()).collect();
    assert_eq!(names, [Some("axis"), Some("allied")]);
    assert!(reply.numbers_teams_from_one());
    let team_of = |i: usize| {
        reply
            .team_of(&reply.players[i])
            .and_then(|t| t.name.as_deref())
    };
    assert_eq!(reply.players[0].team_number(), Some(2));
    assert_eq!(team_of(0), Some("allied"));
    assert_eq!(team_of(1), Some("axis"));
    assert_eq!(reply.password, Some(false));
}

#[test]
fn single_datagram_replies() {
    for (name, id) in [("ut_3", 57), ("bf1942_2", 542)] {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1);
        let parts = assemble(&datagrams);
        assert!(parts.is_complete(), "{name}");
        assert_eq!(parts.query_id(), Some(id));
        let reply = parts.reply().unwrap().reply;
        assert_eq!(reply.num_players, Some(0), "{name}");
        assert!(reply.players.is_empty(), "{name}");
    }
}

/// A decoded value as the other library prints it: text as is, numbers and bools as
/// they appeared (it keeps values raw).
fn field_text(reply: &Reply<'_>, key: &str) -> Option<String> {
    match key {
        "gamename" => reply.game_name.as_deref().map(str::to_owned),
        "gamever" => reply.game_version.as_deref().map(str::to_owned),
        "hostname" => reply.hostname.as_deref().map(str::to_owned),
        "hostport" => reply.host_port.map(|v| v.to_string()),
        "mapname" => reply.map_name.as_deref().map(str::to_owned),
        "gametype" => reply.game_type.as_deref().map(str::to_owned),
        "gamemode" => reply.game_mode.as_deref().map(str::to_owned),
        "numplayers" => reply.num_players.map(|v| v.to_string()),
        "maxplayers" => reply.max_players.map(|v| v.to_string()),
        _ => None,
    }
}

#[test]
fn agrees_with_another_client_library() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let parts = assemble(&datagrams);
        let reply = parts.reply().unwrap().reply;
        let theirs = other_client(name);
        let theirs = theirs.as_object().unwrap();

        // Every server-level key they report, we hold: as a field or a rule, same text.
        for (key, value) in theirs {
            let skip = key.starts_with("gq_")
                || ["players", "teams", "num_players", "num_teams", "final"]
                    .contains(&key.as_str());
            let Some(value) = value.as_str() else {
                continue;
            };
            if skip {
                continue;
            }
            if key == "password" {
                let theirs = matches!(value, "1" | "True" | "true");
                assert_eq!(reply.password, Some(theirs), "{name} password");
                continue;
            }
            // The field holds the first occurrence, the rules the repeats: they keep the last.
            let ours: Vec<String> = field_text(&reply, key)
                .into_iter()
                .chain(
                    reply
                        .rules
                        .iter()
                        .filter(|(k, _)| k == key)
                        .map(|(_, v)| v.to_string()),
                )
                .collect();
            assert_eq!(
                ours.last().map(String::as_str),
                Some(value),
                "{name} key {key}"
            );
        }

        // Players: same count (they keep stale entries too), names, pings, scores, teams.
        // They leave the list out when it is empty.
        let their_players = theirs
            .get("players")
            .map_or(&[][..], |p| p.as_array().unwrap().as_slice());
        assert_eq!(reply.players.len(), their_players.len(), "{name}");
        for (ours, theirs) in reply.players.iter().zip(their_players) {
            let text = |key: &str| theirs.get(key).and_then(|v| v.as_str());
            let name_key = if text("playername").is_some() {
                "playername"
            } else {
                "player"
            };
            assert_eq!(ours.name.as_deref(), text(name_key), "{name}");
            let number = |key: &str| text(key).map(|v| v.trim().parse::<i64>().unwrap());
            assert_eq!(ours.ping.map(i64::from), number("ping"), "{name}");
            let score_key = if text("frags").is_some() {
                "frags"
            } else {
                "score"
            };
            assert_eq!(ours.score.map(i64::from), number(score_key), "{name}");
            assert_eq!(ours.team.as_deref(), text("team"), "{name}");
            for (key, value) in &ours.extra {
                assert_eq!(Some(&**value), text(key), "{name} player key {key}");
            }
        }

        // Teams, where they report them.
        if let Some(their_teams) = theirs.get("teams").and_then(|t| t.as_array()) {
            let ours: Vec<_> = reply.teams.iter().map(|t| t.name.as_deref()).collect();
            let theirs: Vec<_> = their_teams.iter().map(|t| t["teamname"].as_str()).collect();
            assert_eq!(ours, theirs, "{name}");
        }
    }
}

#[test]
fn decode_encode_decode_is_the_identity() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let parts = assemble(&datagrams);
        let reply = parts.reply().unwrap().reply;

        let bytes = reply.to_vec().unwrap();
        assert_eq!(bytes.len(), reply.encoded_len().unwrap());
        let again = Reply::from_bytes(&bytes).unwrap();
        assert_eq!(again, reply, "{name}");
        // Nothing was dropped: as many pairs go out as came in (markers aside).
        let original = parts.pairs();
        let written = kv::split_pairs(&bytes).unwrap();
        assert_eq!(written.len(), original.len(), "{name}");

        // And through the responder's datagrams, at the real size limit and at a small one.
        for max in [MAX_DATAGRAM, 300] {
            let out = reply_datagrams(&reply, 77, max).unwrap();
            assert!(out.iter().all(|d| d.len() <= max), "{name}");
            let mut parts = Reassembly::new();
            for d in out.iter().rev() {
                assert_eq!(parts.push(d).unwrap(), Pushed::New);
            }
            assert!(parts.is_complete(), "{name}");
            assert_eq!(parts.reply().unwrap().reply, reply, "{name} split at {max}");
        }
    }
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            out.push(p);
        }
    }
    out
}

#[test]
fn every_order_with_duplicates_gives_the_same_reply() {
    for name in ["ut_1", "ut_2", "bf1942_1", "bf1942_3"] {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let in_order = assemble(&datagrams);
        let expected = in_order.reply().unwrap().reply;
        for order in permutations(datagrams.len()) {
            let mut parts = Reassembly::new();
            for &i in &order {
                assert_eq!(parts.push(&datagrams[i]).unwrap(), Pushed::New);
                // A proxy's duplicate of every datagram changes nothing.
                assert_eq!(parts.push(&datagrams[i]).unwrap(), Pushed::Duplicate);
            }
            assert!(parts.is_complete(), "{name} {order:?}");
            let reply = parts.reply().unwrap().reply;
            assert_eq!(reply, expected, "{name} {order:?}");
        }
    }
}

#[test]
fn missing_parts_give_what_arrived_marked_incomplete() {
    let Some(datagrams) = capture("ut_1") else {
        return;
    };
    // Part 2 lost: parts 1 and 3 (with `\final\`) decode, players 2..=8 are absent.
    let parts = assemble([&datagrams[0], &datagrams[2]]);
    assert!(!parts.is_complete());
    assert_eq!(parts.missing_parts(), [2]);
    let Assembled {
        reply,
        complete,
        missing_parts,
        query_id,
    } = parts.reply().unwrap();
    assert!(!complete);
    assert_eq!(missing_parts, [2]);
    assert_eq!(query_id, Some(20));
    let indices: Vec<_> = reply.players.iter().map(|p| p.index).collect();
    assert_eq!(indices, [0, 1, 9, 10]);
    assert_eq!(
        reply.hostname.as_deref().map(|h| h.starts_with("zp|")),
        Some(true)
    );

    // The final part lost: the count is unknown, so nothing is known to be missing yet.
    let parts = assemble(&datagrams[..2]);
    assert!(!parts.is_complete());
    assert_eq!(parts.total_parts(), None);
    assert!(parts.missing_parts().is_empty());
    assert_eq!(parts.reply().unwrap().reply.players.len(), 9);

    // Only the final part: parts 1 and 2 are known missing.
    let parts = assemble([&datagrams[2]]);
    assert_eq!(parts.missing_parts(), [1, 2]);
    let reply = parts.reply().unwrap().reply;
    assert_eq!(reply.hostname, None);
    assert_eq!(reply.players.len(), 2);
}

#[test]
fn bf1942_loss_splits_a_player_without_failing() {
    let Some(datagrams) = capture("bf1942_1") else {
        return;
    };
    // Without the last part, player 16 has a name but no score or team, and there are no teams.
    let parts = assemble(&datagrams[..2]);
    let reply = parts.reply().unwrap().reply;
    assert_eq!(reply.players.len(), 17);
    let last = &reply.players[16];
    assert_eq!(last.name.as_deref(), Some("zDiogozCraftz"));
    assert_eq!((last.score, last.team.as_deref()), (None, None));
    assert!(reply.teams.is_empty());

    // Without the middle part, player 16 has a score and team but no name.
    let parts = assemble([&datagrams[0], &datagrams[2]]);
    assert_eq!(parts.missing_parts(), [2]);
    let reply = parts.reply().unwrap().reply;
    let names: Vec<_> = reply
        .players
        .iter()
        .map(|p| (p.index, p.name.clone()))
        .collect();
    assert_eq!(names, [(16, None), (17, Some(Cow::Borrowed("Taxman")))]);
}

#[test]
fn offsets_count_through_the_joined_parts() {
    let Some(datagrams) = capture("ut_1") else {
        return;
    };
    // Corrupt player 9's ping (in part 3) and decode: the error names the field and the byte.
    let mut third = datagrams[2].clone();
    let at = third.windows(9).position(|w| w == b"\\ping_9\\ ").unwrap() + 9;
    third[at] = b'x';
    let parts = assemble([&datagrams[0], &datagrams[1], &third]);
    let err = parts.reply().unwrap_err();
    assert_eq!(err.path_string(), "Reply.players[9].ping");
    assert_eq!(err.offset(), datagrams[0].len() + datagrams[1].len() + at);
    // The same bytes alone report the offset inside the datagram.
    let err = Reply::from_bytes(&third).unwrap_err();
    assert_eq!(err.offset(), at);
    assert_eq!(
        err.to_string(),
        format!("Reply.players[9].ping at byte {at}: invalid value: expected an integer")
    );
}

#[test]
fn other_encodings_are_a_choice() {
    let Some(datagrams) = capture("ut_1") else {
        return;
    };
    let parts = assemble(&datagrams);
    // Strict UTF-8 fails on the real bytes, at the a0 byte.
    let err = parts.reply_with(TextEncoding::Utf8).unwrap_err();
    assert_eq!(err.path_string(), "Reply.players[2].name");
    let joined: Vec<u8> = datagrams.concat();
    assert_eq!(joined[err.offset()], 0xa0);
    // Latin-1 reads them as Windows-1252 does.
    let latin1 = parts.reply_with(TextEncoding::Latin1).unwrap().reply;
    assert_eq!(latin1, parts.reply_with(ENCODING).unwrap().reply);
    // `Reply` knows its default.
    assert_eq!(<Reply<'_> as FromKeyValues<'_>>::DEFAULT_ENCODING, ENCODING);
}
