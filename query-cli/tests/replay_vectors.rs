//! `gsq query` against the bytes of real servers.
//!
//! A replay responder answers the real `gsq` binary with datagrams captured from live servers
//! (`captures/` in the external test vectors) and with the reference SQP client's fixtures
//! (`sqp-reference/`). It patches only what has to match the request: the SA:MP header the
//! server echoes, and the SQP challenge. The GameSpy v1 replies are also delivered out of
//! order, duplicated, and without the part that carries `\final\`. The A2S replay asks for a
//! challenge before answering anything, and sends split parts last first.
//!
//! The vectors are read from `$QUERY_VECTORS` (see `query_tests::vectors_dir`); without them
//! these tests skip, except under `CI=true`, where they fail.

mod replay_support;

use std::time::Duration;

use query_net::ServerStatus;
use query_specs::sqp::ChunkSet;
use serde_json::{Map, Value};

use replay_support::{Differences, GameSpyDelivery, Outcome, ReplayServer, Script, SqpExchange};

/// `gsq`'s exit code for a query that got no reply.
const TIMEOUT: i32 = 8;
/// `gsq`'s exit code for a reply that does not decode.
const MALFORMED: i32 = 9;

/// Runs `gsq query <protocol> <addr> --json` with extra arguments and returns how it ended.
fn gsq_query(protocol: &str, server: &ReplayServer, extra: &[&str]) -> Outcome {
    let addr = server.addr().to_string();
    let mut args = vec!["query", protocol, addr.as_str(), "--json"];
    args.extend_from_slice(extra);
    replay_support::run_gsq(&args, Duration::from_secs(30))
}

/// A status that `gsq query` must have printed and exited 0 for.
fn expect_status(outcome: &Outcome) -> ServerStatus {
    assert_eq!(
        outcome.code,
        Some(0),
        "gsq failed\nstdout: {}\nstderr: {}",
        outcome.stdout,
        outcome.stderr
    );
    serde_json::from_str(outcome.stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "gsq printed no status JSON ({e})\nstdout: {}\nstderr: {}",
            outcome.stdout, outcome.stderr
        )
    })
}

/// The `*_result.json` of a capture: another library's decode of the same bytes, keyed by the
/// server address it was captured from.
fn capture_result(name: &str) -> Option<Map<String, Value>> {
    let path = query_tests::vectors_dir()?.join("captures").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let by_address: Map<String, Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (_, result) = by_address
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{} holds no result", path.display()));
    match result {
        Value::Object(fields) => Some(fields),
        other => panic!("{}: expected an object, got {other}", path.display()),
    }
}

fn text<'a>(result: &'a Map<String, Value>, key: &str) -> &'a str {
    result
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("result has no text field {key:?}"))
}

fn number<T: std::str::FromStr>(value: &Value) -> T
where
    T::Err: std::fmt::Debug,
{
    match value {
        Value::String(s) => s.trim().parse().unwrap_or_else(|e| panic!("{s:?}: {e:?}")),
        Value::Number(n) => n
            .to_string()
            .parse()
            .unwrap_or_else(|e| panic!("{n}: {e:?}")),
        other => panic!("not a number: {other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// SA:MP

#[test]
fn samp_capture_decodes_to_the_servers_values() {
    let Some(datagrams) = query_tests::read_capture("samp_1_response.txt") else {
        return;
    };
    let Some(result) = capture_result("samp_1_result.json") else {
        return;
    };
    let server = ReplayServer::start(Script::Samp { datagrams });
    let status = expect_status(&gsq_query("samp", &server, &[]));

    // The values the vectors' README and the protocol notes give for this capture.
    assert_eq!(status.num_players, 34);
    assert_eq!(status.players.len(), 34);
    let first = &status.players[0];
    assert_eq!(first.name, "Unchiu");
    assert_eq!(first.score, Some(33));
    assert_eq!(first.ping, Some(21));
    assert_eq!(status.rules.len(), 6, "{:?}", status.rules);
    assert_eq!(status.rules["version"], "0.3.7-R2");
    assert_eq!(status.version.as_deref(), Some("0.3.7-R2"));
    assert!(status.complete);

    // Every field against the other library's decode of the same bytes.
    assert_eq!(status.name, text(&result, "servername"));
    assert_eq!(status.game_type.as_deref(), Some(text(&result, "gametype")));
    assert_eq!(
        status.raw["info"]["language"].as_str(),
        Some(text(&result, "language")),
        "the third string of `i` is the language since 0.3.7: {}",
        status.raw
    );
    assert_eq!(status.max_players, number::<u32>(&result["max_players"]));
    assert_eq!(status.num_players, number::<u32>(&result["num_players"]));
    assert_eq!(status.password, result["password"].as_bool());
    let expected_rules = [
        "lagcomp",
        "mapname",
        "version",
        "weather",
        "weburl",
        "worldtime",
    ];
    assert_eq!(
        status.rules.keys().collect::<Vec<_>>(),
        expected_rules,
        "rules in the server's order"
    );
    for key in expected_rules {
        assert_eq!(status.rules[key], text(&result, key), "rule {key}");
    }
    assert_eq!(status.map.as_deref(), Some(text(&result, "mapname")));
    let expected_players = result["players"].as_array().expect("players");
    assert_eq!(status.players.len(), expected_players.len());
    for (ours, theirs) in status.players.iter().zip(expected_players) {
        assert_eq!(ours.name, theirs["name"].as_str().unwrap(), "{theirs}");
        assert_eq!(ours.id, Some(number::<u32>(&theirs["id"])), "{theirs}");
        assert_eq!(
            ours.score,
            Some(number::<i64>(&theirs["score"])),
            "{theirs}"
        );
        assert_eq!(ours.ping, Some(number::<u32>(&theirs["ping"])), "{theirs}");
    }

    // The client sent what the replay answered: `i`, `r` and the detailed list `d`.
    let opcodes: Vec<u8> = server.requests().iter().map(|r| r[10]).collect();
    for opcode in [b'i', b'r', b'd'] {
        assert!(
            opcodes.contains(&opcode),
            "no `{}` request among {opcodes:?}",
            opcode as char
        );
    }
}

#[test]
fn samp_offline_server_times_out_with_exit_code_8() {
    let Some(datagrams) = query_tests::read_capture("samp_2_response.txt") else {
        return;
    };
    assert!(datagrams.is_empty(), "samp_2 is the offline server");
    let server = ReplayServer::start(Script::Samp { datagrams });
    let outcome = gsq_query("samp", &server, &["--timeout", "200ms", "--retries", "1"]);
    assert_eq!(
        outcome.code,
        Some(TIMEOUT),
        "stdout: {}\nstderr: {}",
        outcome.stdout,
        outcome.stderr
    );
    // The required requests, `i` and `r`, went out twice each: once, then once more.
    let requests = server.requests();
    for opcode in [b'i', b'r'] {
        let sent = requests
            .iter()
            .filter(|r| r.get(10) == Some(&opcode))
            .count();
        assert_eq!(sent, 2, "`{}` requests among {requests:?}", opcode as char);
    }
}

// ---------------------------------------------------------------------------------------------
// GameSpy v1

/// Keys of a GameSpy `*_result.json` that the other library added or restructured, rather
/// than copied from the wire: `gq_*` and its counters, the player and team lists (compared
/// one by one), and `final`, which it kept as a key on BF1942 (where `\final\` comes before
/// `\queryid\`) although it is the part marker.
fn is_result_bookkeeping(key: &str) -> bool {
    key.starts_with("gq_")
        || matches!(
            key,
            "players" | "teams" | "num_players" | "num_teams" | "final"
        )
}

/// Checks a GameSpy v1 status against the capture's `*_result.json`, following the notes where
/// the two disagree: only the first `numplayers` players count (BF1942 keeps stale entries),
/// numbers lose the leading spaces some servers send, and BF1942 numbers teams from 1.
fn compare_gamespy(d: &mut Differences, status: &ServerStatus, result: &Map<String, Value>) {
    d.check("name", text(result, "hostname"), &status.name);
    d.check("map", Some(text(result, "mapname")), status.map.as_deref());
    d.check(
        "game_type",
        Some(text(result, "gametype")),
        status.game_type.as_deref(),
    );
    d.check(
        "version",
        Some(text(result, "gamever")),
        status.version.as_deref(),
    );
    let num_players: u32 = number(&result["numplayers"]);
    d.check("num_players", num_players, status.num_players);
    d.check(
        "max_players",
        number::<u32>(&result["maxplayers"]),
        status.max_players,
    );
    let password = match text(result, "password") {
        "0" | "False" | "false" => false,
        "1" | "True" | "true" => true,
        other => panic!("password {other:?}"),
    };
    d.check("password", Some(password), status.password);

    // Every other key the server sent is a rule, with the server's text.
    let named = [
        "hostname",
        "mapname",
        "gametype",
        "gamever",
        "numplayers",
        "maxplayers",
        "password",
    ];
    for (key, value) in result {
        if is_result_bookkeeping(key) || named.contains(&key.as_str()) {
            continue;
        }
        // `dedicated` is a bool the other library computes for UT99; BF1942 sends it as text.
        let Some(value) = value.as_str() else {
            assert_eq!(key, "dedicated", "unexpected non-text value for {key}");
            continue;
        };
        d.check(
            &format!("rule {key}"),
            Some(value),
            status.rules.get(key).map(String::as_str),
        );
    }

    let teams: Vec<&str> = result
        .get("teams")
        .and_then(Value::as_array)
        .map(|teams| {
            teams
                .iter()
                .map(|t| t["teamname"].as_str().unwrap())
                .collect()
        })
        .unwrap_or_default();
    d.check(
        "teams",
        teams.clone(),
        status.teams.iter().map(|t| t.name.as_str()).collect(),
    );

    let from_one = text(result, "gamename") == "bfield1942";
    let expected_players: Vec<&Value> = result
        .get("players")
        .and_then(Value::as_array)
        .map(|players| players.iter().take(num_players as usize).collect())
        .unwrap_or_default();
    d.check("player count", expected_players.len(), status.players.len());
    for (ours, theirs) in status.players.iter().zip(&expected_players) {
        compare_player(d, ours, theirs, &teams, from_one);
    }
}

/// The name of a player entry in a `*_result.json`: UT99's `player` or BF1942's `playername`.
fn player_name(theirs: &Value) -> &str {
    theirs
        .get("player")
        .or_else(|| theirs.get("playername"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no name in {theirs}"))
}

/// One player against the other library's entry: UT99 keys (`player`, `frags`) or BF1942's
/// (`playername`, `score`, `kills`, `deaths`). The team is the listed team's name when the
/// server lists teams (BF1942 numbers them from 1), else the number as sent.
fn compare_player(
    d: &mut Differences,
    ours: &query_net::Player,
    theirs: &Value,
    teams: &[&str],
    teams_from_one: bool,
) {
    let name = player_name(theirs);
    d.check("player name", name, &ours.name);
    let score = theirs.get("frags").or_else(|| theirs.get("score"));
    d.check(
        &format!("score of {name}"),
        score.map(number::<i64>),
        ours.score,
    );
    d.check(
        &format!("ping of {name}"),
        theirs.get("ping").map(number::<u32>),
        ours.ping,
    );
    let team = theirs.get("team").map(|team| {
        let number: usize = number(team);
        let index = if teams_from_one {
            number.checked_sub(1)
        } else {
            Some(number)
        };
        match index.and_then(|i| teams.get(i)) {
            Some(name) => (*name).to_owned(),
            None => team.as_str().unwrap().trim().to_owned(),
        }
    });
    d.check(&format!("team of {name}"), team, ours.team.clone());
    for (key, value) in theirs.as_object().expect("player object") {
        if matches!(
            key.as_str(),
            "player" | "playername" | "frags" | "score" | "ping" | "team"
        ) {
            continue;
        }
        d.check(
            &format!("{key} of {name}"),
            value.as_str(),
            ours.extra.get(key).map(String::as_str),
        );
    }
}

/// The GameSpy v1 captures: name, and the part count the vectors' README gives.
const GAMESPY_CAPTURES: [(&str, usize); 6] = [
    ("ut_1", 3),
    ("ut_2", 3),
    ("ut_3", 1),
    ("bf1942_1", 3),
    ("bf1942_2", 1),
    ("bf1942_3", 2),
];

fn gamespy_replay(
    capture: &str,
    parts: usize,
    delivery: GameSpyDelivery,
    extra_args: &[&str],
) -> Option<ServerStatus> {
    let datagrams = query_tests::read_capture(&format!("{capture}_response.txt"))?;
    assert_eq!(datagrams.len(), parts, "{capture}: datagram count");
    let server = ReplayServer::start(Script::GameSpy {
        datagrams,
        delivery,
    });
    let status = expect_status(&gsq_query("gamespy1", &server, extra_args));
    let requests = server.requests();
    assert_eq!(
        requests,
        [b"\\status\\".to_vec()],
        "{capture}: one `\\status\\` request, never resent once parts arrive"
    );
    Some(status)
}

fn gamespy_captures_decode(delivery: GameSpyDelivery) {
    let mut d = Differences::default();
    for (capture, parts) in GAMESPY_CAPTURES {
        let Some(status) = gamespy_replay(capture, parts, delivery, &[]) else {
            return;
        };
        let Some(result) = capture_result(&format!("{capture}_result.json")) else {
            return;
        };
        let mut one = Differences::default();
        compare_gamespy(&mut one, &status, &result);
        d.check(&format!("{capture} complete"), true, status.complete);
        d.absorb(capture, one);
    }
    d.finish(&format!("GameSpy v1 captures delivered {delivery:?}"));
}

#[test]
fn gamespy_captures_in_order_decode_to_the_servers_values() {
    gamespy_captures_decode(GameSpyDelivery::InOrder);
}

#[test]
fn gamespy_captures_out_of_order_decode_to_the_servers_values() {
    gamespy_captures_decode(GameSpyDelivery::Reversed);
}

#[test]
fn gamespy_captures_duplicated_decode_to_the_servers_values() {
    gamespy_captures_decode(GameSpyDelivery::Duplicated);
}

#[test]
fn gamespy_ut99_latin1_names_and_spaced_pings() {
    let Some(status) = gamespy_replay("ut_1", 3, GameSpyDelivery::InOrder, &[]) else {
        return;
    };
    // Bytes a0 (no-break space) and b1 (plus-minus) in Latin-1 / Windows-1252.
    let resident = status
        .players
        .iter()
        .find(|p| p.name.starts_with("Resident"))
        .expect("the player with bytes a0 and b1");
    assert_eq!(resident.name, "Resident\u{a0}Evil\u{b1}");
    // `\ping_2\ 86` on the wire.
    assert_eq!(resident.ping, Some(86));
    assert_eq!(resident.score, Some(719));
    assert_eq!(status.players.len(), 11);
    assert!(status.players.iter().all(|p| p.ping.is_some()));
}

#[test]
fn gamespy_bf1942_final_before_queryid_and_stale_players() {
    let Some(status) = gamespy_replay("bf1942_1", 3, GameSpyDelivery::Reversed, &[]) else {
        return;
    };
    assert!(status.complete);
    assert_eq!(status.name, "SiMPLE | BF1942 [USA]");
    // numplayers is 17; the server also lists a stale 18th entry.
    assert_eq!(status.num_players, 17);
    assert_eq!(status.players.len(), 17);
    // Teams are numbered from 1: team 1 is the first listed, axis.
    assert_eq!(status.players[1].team.as_deref(), Some("axis"));
}

#[test]
fn gamespy_reply_without_its_final_part_is_reported_incomplete() {
    let mut d = Differences::default();
    for (capture, parts) in GAMESPY_CAPTURES {
        if parts < 2 {
            continue;
        }
        let Some(result) = capture_result(&format!("{capture}_result.json")) else {
            return;
        };
        let Some(status) = gamespy_replay(
            capture,
            parts,
            GameSpyDelivery::WithoutFinal,
            &["--timeout", "300ms", "--retries", "0"],
        ) else {
            return;
        };
        d.check(&format!("{capture} complete"), false, status.complete);
        // Without `\final\` the part count is unknown: parts 1..n-1 arrived, with no gap.
        d.check(
            &format!("{capture} parts received"),
            Some(parts as u64 - 1),
            status.raw["parts_received"].as_u64(),
        );
        d.check(
            &format!("{capture} total parts"),
            &Value::Null,
            &status.raw["total_parts"],
        );
        // What arrived is still right: the server info, and the players of the parts that came,
        // in the server's order. The last of them may have had keys in the missing part, so a
        // field is compared when it is there.
        d.check(
            &format!("{capture} name"),
            text(&result, "hostname"),
            &status.name,
        );
        let expected: Vec<&Value> = result["players"].as_array().unwrap().iter().collect();
        d.check(
            &format!("{capture}: fewer players than sent"),
            true,
            status.players.len() < expected.len(),
        );
        for (ours, theirs) in status.players.iter().zip(&expected) {
            let name = player_name(theirs);
            d.check(&format!("{capture} player"), name, &ours.name);
            if ours.score.is_some() {
                let score = theirs.get("frags").or_else(|| theirs.get("score"));
                d.check(
                    &format!("{capture} score of {name}"),
                    score.map(number::<i64>),
                    ours.score,
                );
            }
            if ours.ping.is_some() {
                d.check(
                    &format!("{capture} ping of {name}"),
                    theirs.get("ping").map(number::<u32>),
                    ours.ping,
                );
            }
        }
    }
    d.finish("GameSpy v1 replies without their final part");
}

// ---------------------------------------------------------------------------------------------
// SQP: the reference client's fixtures

/// Reads a file of `sqp-reference/`; `None` when the vectors are absent.
fn sqp_fixture(name: &str) -> Option<Vec<u8>> {
    let path = query_tests::vectors_dir()?.join("sqp-reference").join(name);
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display())))
}

/// A replay of the successful challenge exchange followed by the query fixtures `exchanges`
/// (`(request file, [response files])`).
fn sqp_replay(exchanges: &[(&str, &[&str])]) -> Option<ReplayServer> {
    let challenge_response = sqp_fixture("challenge_success_response")?;
    let exchanges = exchanges
        .iter()
        .map(|(request, responses)| {
            Some(SqpExchange {
                request: sqp_fixture(request)?,
                responses: responses
                    .iter()
                    .map(|r| sqp_fixture(r))
                    .collect::<Option<_>>()?,
            })
        })
        .collect::<Option<_>>()?;
    Some(ReplayServer::start(Script::Sqp {
        challenge_response,
        exchanges,
    }))
}

/// Our client's requests were the reference client's: its challenge request, then its query
/// request with the challenge it was given.
fn assert_sqp_requests_match_the_reference(server: &ReplayServer, query_request: &str) {
    let challenge_request = sqp_fixture("challenge_success_request").unwrap();
    let challenge = &sqp_fixture("challenge_success_response").unwrap()[1..5];
    let mut query = sqp_fixture(query_request).unwrap();
    query[1..5].copy_from_slice(challenge);
    assert_eq!(server.requests(), [challenge_request, query]);
}

/// The ServerInfo of `info_single` (and of the split `OLD_info_multi`).
fn assert_reference_server_info(status: &ServerStatus) {
    assert_eq!(status.num_players, 5);
    assert_eq!(status.max_players, 10);
    assert_eq!(status.name, "my server");
    assert_eq!(status.game_type.as_deref(), Some("ctf"));
    assert_eq!(status.version.as_deref(), Some("1"));
    assert_eq!(status.map.as_deref(), Some("map"));
    assert_eq!(status.raw["server_info"]["port"], 1025, "{}", status.raw);
    assert!(status.players.is_empty() && status.rules.is_empty());
    assert!(status.complete);
}

/// The ServerInfo of `info_single` in `gsq`'s JSON, field by field.
fn assert_reference_server_info_json(json: &Value) {
    assert_eq!(json["name"], "my server", "{json:#}");
    assert_eq!(json["map"], "map", "{json:#}");
    assert_eq!(json["game_type"], "ctf", "{json:#}");
    assert_eq!(json["version"], "1", "{json:#}");
    assert_eq!(json["num_players"], 5, "{json:#}");
    assert_eq!(json["max_players"], 10, "{json:#}");
    assert_eq!(
        json["password"],
        Value::Null,
        "SQP has no password flag: {json:#}"
    );
    assert_eq!(json["players"], Value::Array(Vec::new()), "{json:#}");
    assert_eq!(json["rules"], Value::Object(Map::new()), "{json:#}");
    assert!(json.get("teams").is_none(), "{json:#}");
    assert_eq!(json["raw"]["server_info"]["port"], 1025, "{json:#}");
}

#[test]
fn sqp_info_single_decodes_through_gsq() {
    let Some((status, json)) =
        sqp_fixture_through_gsq("info_single_request", &["info_single_response"], "info")
    else {
        return;
    };
    assert_reference_server_info(&status);
    assert_reference_server_info_json(&json);
}

#[test]
fn sqp_info_single_through_fetch_none() {
    // `--fetch none` asks for ServerInfo alone too: the same request as `--chunks info`.
    let Some(server) = sqp_replay(&[("info_single_request", &["info_single_response"])]) else {
        return;
    };
    let status = expect_status(&gsq_query("sqp", &server, &["--fetch", "none"]));
    assert_reference_server_info(&status);
    assert_sqp_requests_match_the_reference(&server, "info_single_request");
}

#[test]
fn sqp_split_info_reply_out_of_order_is_reassembled() {
    // 000 carries packet 1 of 0..=1 and is sent first; "ctf" is cut across the two.
    let Some((status, json)) = sqp_fixture_through_gsq(
        "OLD_info_multi_request",
        &["OLD_info_multi_response_000", "OLD_info_multi_response_001"],
        "info",
    ) else {
        return;
    };
    assert_reference_server_info(&status);
    assert_reference_server_info_json(&json);
}

#[test]
fn sqp_malformed_info_is_rejected_as_malformed() {
    let Some(server) = sqp_replay(&[(
        "info_single_malformed_request",
        &["info_single_malformed_response"],
    )]) else {
        return;
    };
    let outcome = gsq_query(
        "sqp",
        &server,
        &["--chunks", "info", "--timeout", "300ms", "--retries", "0"],
    );
    assert_eq!(
        outcome.code,
        Some(MALFORMED),
        "name length 07 instead of 09 must be reported as malformed\nstdout: {}\nstderr: {}",
        outcome.stdout,
        outcome.stderr
    );
    assert!(
        outcome.stdout.trim().is_empty(),
        "no status: {}",
        outcome.stdout
    );
}

#[test]
fn sqp_server_without_the_other_chunks_is_read_with_the_chunks_it_sent() {
    // A server that implements ServerInfo alone answers gsq's default request for every chunk
    // with ServerInfo only; gsq finds that from the bytes, and names the chunks left out.
    let (Some(challenge_response), Some(mut request), Some(response)) = (
        sqp_fixture("challenge_success_response"),
        sqp_fixture("info_single_request"),
        sqp_fixture("info_single_response"),
    ) else {
        return;
    };
    *request.last_mut().unwrap() = ChunkSet::all().bits();
    let server = ReplayServer::start(Script::Sqp {
        challenge_response,
        exchanges: vec![SqpExchange {
            request,
            responses: vec![response],
        }],
    });
    let outcome = gsq_query("sqp", &server, &["--timeout", "300ms", "--retries", "0"]);
    assert_eq!(outcome.code, Some(0), "stderr: {}", outcome.stderr);
    assert_eq!(outcome.stderr, "", "no hint");
    let json: Value = serde_json::from_str(outcome.stdout.trim()).expect("status JSON");
    assert_eq!(json["name"], "my server", "{json:#}");
    assert_eq!(
        json["raw"]["missing_chunks"],
        serde_json::json!(["rules", "players", "teams", "metrics"]),
        "{json:#}"
    );
}

#[test]
fn sqp_invalid_challenge_response_is_rejected() {
    let (Some(challenge_response), Some(challenge_request)) = (
        sqp_fixture("challenge_invalid_response"),
        sqp_fixture("challenge_invalid_request"),
    ) else {
        return;
    };
    let server = ReplayServer::start(Script::Sqp {
        challenge_response,
        exchanges: Vec::new(),
    });
    let outcome = gsq_query(
        "sqp",
        &server,
        &["--chunks", "info", "--timeout", "300ms", "--retries", "1"],
    );
    // A datagram starting 01 while a challenge is awaited is taken for a late reply to an
    // earlier query and ignored, so the query times out.
    assert_eq!(
        outcome.code,
        Some(TIMEOUT),
        "a challenge reply starting 01 must not be accepted\nstdout: {}\nstderr: {}",
        outcome.stdout,
        outcome.stderr
    );
    // Only challenge requests went out: the bad challenge was never used in a query.
    let requests = server.requests();
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|r| *r == challenge_request),
        "{requests:?}"
    );
}

/// Replays the reference fixture exchange `request` → `responses` to `gsq query sqp --json
/// --chunks <chunks>`, the chunks that fixture's request asks for, and checks that `gsq` sent
/// exactly the reference client's requests. Returns the printed status, typed and as JSON.
fn sqp_fixture_through_gsq(
    request: &str,
    responses: &[&str],
    chunks: &str,
) -> Option<(ServerStatus, Value)> {
    let server = sqp_replay(&[(request, responses)])?;
    let outcome = gsq_query("sqp", &server, &["--chunks", chunks]);
    let status = expect_status(&outcome);
    let json: Value = serde_json::from_str(outcome.stdout.trim()).expect("status JSON");
    assert_sqp_requests_match_the_reference(&server, request);
    assert_eq!(json["protocol"], "sqp", "{json:#}");
    assert_eq!(json["address"], server.addr().to_string(), "{json:#}");
    assert_eq!(json["complete"], true, "{json:#}");
    Some((status, json))
}

/// A reply without ServerInfo leaves the info fields empty: nothing is made up.
fn assert_no_server_info(json: &Value) {
    assert_eq!(json["name"], "", "{json:#}");
    for field in ["map", "game_type", "version"] {
        assert_eq!(json[field], Value::Null, "{field}: {json:#}");
    }
    assert_eq!(json["num_players"], 0, "{json:#}");
    assert_eq!(json["max_players"], 0, "{json:#}");
    assert_eq!(json["raw"]["server_info"], Value::Null, "{json:#}");
}

/// The rules of `rules_response`: one of each value type 0..4, as text.
fn assert_reference_rules(status: &ServerStatus) {
    let rules: Vec<(&str, &str)> = status
        .rules
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        rules,
        [
            ("rule 1", "128"),
            ("rule 2", "257"),
            ("rule 3", "16777217"),
            ("rule 4", "72057594037927937"),
            ("rule 5", "string"),
        ]
    );
    let kinds: Vec<u64> = status.raw["server_rules"]
        .as_array()
        .unwrap_or_else(|| panic!("rules in raw: {}", status.raw))
        .iter()
        .map(|r| r["kind"].as_u64().unwrap())
        .collect();
    assert_eq!(kinds, [0, 1, 2, 3, 4]);
}

/// The rows of the player and team fixtures: five columns of types 0..4.
fn assert_reference_table_rows(rows: &[&indexmap::IndexMap<String, String>]) {
    let expected = [
        ["128", "257", "16777217", "72057594037927937", "string"],
        ["129", "258", "16777218", "72057594037927938", "STRING"],
    ];
    assert_eq!(rows.len(), expected.len());
    for (row, values) in rows.iter().zip(expected) {
        let pairs: Vec<(&str, &str)> = row.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let wanted: Vec<(&str, &str)> = ["field1", "field2", "field3", "field4", "field5"]
            .into_iter()
            .zip(values)
            .collect();
        assert_eq!(pairs, wanted);
    }
}

/// The players of `player_response`. No column is called name, score, ping or team, so every
/// value is an extra field.
fn assert_reference_players(status: &ServerStatus) {
    for player in &status.players {
        assert_eq!(player.name, "");
        assert_eq!(
            (player.score, player.ping, &player.team),
            (None, None, &None)
        );
    }
    let rows: Vec<_> = status.players.iter().map(|p| &p.extra).collect();
    assert_reference_table_rows(&rows);
}

/// The teams of `team_response`, laid out like the players.
fn assert_reference_teams(status: &ServerStatus) {
    for team in &status.teams {
        assert_eq!((team.name.as_str(), team.score), ("", None));
    }
    let rows: Vec<_> = status.teams.iter().map(|t| &t.extra).collect();
    assert_reference_table_rows(&rows);
}

/// The six f32 values of `metrics_response`.
#[allow(clippy::approx_constant, reason = "the fixture holds 3.14159, not π")]
fn assert_reference_metrics(status: &ServerStatus) {
    let values: Vec<f32> = status.raw["metrics"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("metrics in raw: {}", status.raw))
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(values, [1.0, 0.0, 3.14159, 55.57, 438.2522, -123.456]);
}

/// The rows of a player or team table in `gsq`'s JSON: every column of the fixture as text in
/// `extra`, in the fixture's order.
fn assert_reference_rows_json(rows: &Value) {
    let rows = rows
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {rows}"));
    let expected = [
        ["128", "257", "16777217", "72057594037927937", "string"],
        ["129", "258", "16777218", "72057594037927938", "STRING"],
    ];
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for (row, values) in rows.iter().zip(expected) {
        let extra = row["extra"]
            .as_object()
            .unwrap_or_else(|| panic!("no extra fields: {row}"));
        let pairs: Vec<(&str, &str)> = extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str().expect("text")))
            .collect();
        let wanted: Vec<(&str, &str)> = ["field1", "field2", "field3", "field4", "field5"]
            .into_iter()
            .zip(values)
            .collect();
        assert_eq!(pairs, wanted, "{row}");
    }
}

#[test]
fn sqp_rules_fixture_decodes_every_value_type() {
    let Some((status, json)) =
        sqp_fixture_through_gsq("rules_request", &["rules_response"], "rules")
    else {
        return;
    };
    assert_reference_rules(&status);
    assert_eq!(
        json["rules"],
        serde_json::json!({
            "rule 1": "128",
            "rule 2": "257",
            "rule 3": "16777217",
            "rule 4": "72057594037927937",
            "rule 5": "string",
        })
    );
    assert_eq!(json["players"], Value::Array(Vec::new()), "{json:#}");
    assert!(json.get("teams").is_none(), "{json:#}");
    assert_no_server_info(&json);
}

#[test]
fn sqp_player_fixture_decodes_every_column() {
    let Some((status, json)) =
        sqp_fixture_through_gsq("player_request", &["player_response"], "players")
    else {
        return;
    };
    assert_reference_players(&status);
    assert_reference_rows_json(&json["players"]);
    for player in json["players"].as_array().unwrap() {
        // No column is called name, score, ping or team.
        assert_eq!(player["name"], "", "{player}");
        for absent in ["score", "ping", "team", "id", "uuid"] {
            assert!(player.get(absent).is_none(), "{absent}: {player}");
        }
    }
    assert_eq!(json["rules"], Value::Object(Map::new()), "{json:#}");
    assert!(json.get("teams").is_none(), "{json:#}");
    assert_no_server_info(&json);
}

#[test]
fn sqp_team_fixture_decodes_every_column() {
    let Some((status, json)) = sqp_fixture_through_gsq("team_request", &["team_response"], "teams")
    else {
        return;
    };
    assert_reference_teams(&status);
    assert_reference_rows_json(&json["teams"]);
    for team in json["teams"].as_array().unwrap() {
        assert_eq!(team["name"], "", "{team}");
        assert!(team.get("score").is_none(), "{team}");
    }
    assert_eq!(json["players"], Value::Array(Vec::new()), "{json:#}");
    assert_eq!(json["rules"], Value::Object(Map::new()), "{json:#}");
    assert_no_server_info(&json);
}

#[test]
#[allow(clippy::approx_constant, reason = "the fixture holds 3.14159, not π")]
fn sqp_metrics_fixture_decodes_six_floats() {
    let Some((status, json)) =
        sqp_fixture_through_gsq("metrics_request", &["metrics_response"], "metrics")
    else {
        return;
    };
    assert_reference_metrics(&status);
    // The wire's f32 values, printed widened to f64: narrowed back, they are the fixture's.
    let values: Vec<f32> = json["raw"]["metrics"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("metrics in raw: {json:#}"))
        .iter()
        .map(|v| v.as_f64().expect("a number") as f32)
        .collect();
    assert_eq!(values, [1.0, 0.0, 3.14159, 55.57, 438.2522, -123.456]);
    assert_eq!(json["players"], Value::Array(Vec::new()), "{json:#}");
    assert_eq!(json["rules"], Value::Object(Map::new()), "{json:#}");
    assert!(json.get("teams").is_none(), "{json:#}");
    assert_no_server_info(&json);
}

/// Bytes of an SQP query response before its chunks: type, challenge, version, packet
/// numbers, packet length.
const SQP_RESPONSE_HEADER: usize = 11;

#[test]
fn sqp_every_fixture_chunk_in_one_reply_decodes_through_gsq() {
    // `gsq query sqp --fetch all` asks for every chunk at once (0x1f), as does `--chunks` naming
    // all five. No fixture answers that, so the reply is put together from them: the header of
    // `info_single_response` and, in bit order, the chunks (length and body, unchanged) of the
    // five single-chunk fixtures; only the packet length is recomputed. The request is the
    // reference client's with all five chunk bits.
    let files = [
        "info_single_response",
        "rules_response",
        "player_response",
        "team_response",
        "metrics_response",
    ];
    let Some(fixtures) = files
        .iter()
        .map(|f| sqp_fixture(f))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let mut reply = fixtures[0][..SQP_RESPONSE_HEADER].to_vec();
    for fixture in &fixtures {
        reply.extend_from_slice(&fixture[SQP_RESPONSE_HEADER..]);
    }
    let packet_length = u16::try_from(reply.len() - SQP_RESPONSE_HEADER).unwrap();
    reply[SQP_RESPONSE_HEADER - 2..SQP_RESPONSE_HEADER]
        .copy_from_slice(&packet_length.to_be_bytes());
    let mut request = sqp_fixture("info_single_request").unwrap();
    *request.last_mut().unwrap() = ChunkSet::all().bits();
    let server = ReplayServer::start(Script::Sqp {
        challenge_response: sqp_fixture("challenge_success_response").unwrap(),
        exchanges: vec![SqpExchange {
            request,
            responses: vec![reply],
        }],
    });

    for how in [
        &["--fetch", "all"][..],
        &["--chunks", "info,rules,players,teams,metrics"][..],
    ] {
        let status = expect_status(&gsq_query("sqp", &server, how));
        assert_every_fixture_chunk(&status);
    }
}

/// The values of all five fixtures' chunks in one status.
fn assert_every_fixture_chunk(status: &ServerStatus) {
    assert_eq!(status.num_players, 5);
    assert_eq!(status.max_players, 10);
    assert_eq!(status.name, "my server");
    assert_eq!(status.game_type.as_deref(), Some("ctf"));
    assert_eq!(status.version.as_deref(), Some("1"));
    assert_eq!(status.map.as_deref(), Some("map"));
    assert_eq!(status.raw["server_info"]["port"], 1025, "{}", status.raw);
    assert_reference_rules(status);
    assert_reference_players(status);
    assert_reference_teams(status);
    assert_reference_metrics(status);
    // The fixtures come from different replies: ServerInfo counts 5 players, the player
    // table lists fewer, and a status whose list is shorter than the count is incomplete.
    let listed = status.players.len();
    assert!(listed < 5, "{listed} players listed");
    assert!(!status.complete);
    assert_eq!(status.raw["players_missing"], 5 - listed, "{}", status.raw);
}

// ---------------------------------------------------------------------------------------------
// A2S

/// Every A2S capture's name (`tf2_1`), offline servers' empty files left out.
fn a2s_captures() -> Option<Vec<String>> {
    let folder = query_tests::vectors_dir()?.join("captures/gameq/a2s");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix("_response.txt")?.to_owned())
        })
        .filter(|name| {
            query_tests::read_capture(&format!("gameq/a2s/{name}_response.txt"))
                .is_some_and(|datagrams| !datagrams.is_empty())
        })
        .collect();
    names.sort();
    Some(names)
}

fn multiset<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut names: Vec<&str> = names.collect();
    names.sort_unstable();
    names
}

#[test]
fn a2s_captures_through_gsq_with_challenges_decode_to_the_servers_values() {
    let Some(captures) = a2s_captures() else {
        return;
    };
    assert!(captures.len() >= 80, "{} captures", captures.len());
    let mut d = Differences::default();
    for capture in &captures {
        let file = format!("gameq/a2s/{capture}_response.txt");
        let datagrams = query_tests::read_capture(&file).unwrap();
        let server = ReplayServer::start(Script::A2s { datagrams });
        // Captures without a RULES reply leave the client waiting once, briefly.
        let status = expect_status(&gsq_query(
            "a2s",
            &server,
            &["--timeout", "300ms", "--retries", "0"],
        ));
        let Some(theirs) = capture_result(&format!("gameq/a2s/{capture}_result.json")) else {
            return;
        };
        let mut one = Differences::default();
        one.check("name", text(&theirs, "hostname"), status.name.as_str());
        one.check(
            "map",
            theirs.get("map").and_then(Value::as_str),
            status.map.as_deref(),
        );
        one.check(
            "max players",
            number::<u32>(&theirs["max_players"]),
            status.max_players,
        );
        let their_players = theirs
            .get("players")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        one.check(
            "player names",
            multiset(
                their_players
                    .iter()
                    .map(|p| p["name"].as_str().unwrap_or_default()),
            ),
            multiset(status.players.iter().map(|p| p.name.as_str())),
        );
        // INFO is asked without a challenge, then with the one given; PLAYER and RULES carry
        // it from the start.
        let requests = server.requests();
        one.check(
            "first request",
            b"\xff\xff\xff\xffT".as_slice(),
            &requests[0][..5],
        );
        one.check("requests", 4, requests.len());
        d.absorb(capture, one);
    }
    d.finish(&format!("{} A2S captures through gsq", captures.len()));
}

#[test]
fn a2s_decode_of_capture_files_joins_split_parts_and_gives_the_status() {
    let Some(datagrams) = query_tests::read_capture("gameq/a2s/tf2_1_response.txt") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = datagrams
        .iter()
        .enumerate()
        .rev()
        .map(|(i, datagram)| {
            let path = dir.path().join(format!("datagram{i}.bin"));
            std::fs::write(&path, datagram).unwrap();
            path.display().to_string()
        })
        .collect();
    let mut args = vec!["decode", "a2s", "--status"];
    args.extend(files.iter().map(String::as_str));
    let outcome = replay_support::run_gsq(&args, Duration::from_secs(30));
    let status = expect_status(&outcome);
    let theirs = capture_result("gameq/a2s/tf2_1_result.json").unwrap();
    assert_eq!(status.name, text(&theirs, "hostname"));
    assert_eq!(
        status.players.len(),
        theirs["players"].as_array().unwrap().len()
    );
    assert_eq!(status.rules.len(), number::<usize>(&theirs["num_rules"]));
    assert!(status.complete);

    // Without --status: the split RULES parts come out as one joined reply.
    let split: Vec<&str> = files
        .iter()
        .zip(datagrams.iter().rev())
        .filter(|(_, d)| d.starts_with(b"\xfe\xff\xff\xff"))
        .map(|(f, _)| f.as_str())
        .collect();
    assert!(split.len() >= 2, "tf2_1 has a split reply");
    let mut args = vec!["decode", "a2s"];
    args.extend(&split);
    let outcome = replay_support::run_gsq(&args, Duration::from_secs(30));
    assert_eq!(outcome.code, Some(0), "{}", outcome.stderr);
    let json: Value = serde_json::from_str(outcome.stdout.trim()).unwrap();
    assert_eq!(json["type"], "reply");
    assert!(
        json["packet"]["Rules"]["rules"].as_array().unwrap().len() > 10,
        "{json}"
    );
    assert!(
        outcome.stderr.contains("split parts joined"),
        "{}",
        outcome.stderr
    );
}

/// `gsq decode gamespy3` of the parts of a captured reply, given as files in reverse order,
/// prints the reply they make joined in part order: what the library's reassembly makes of
/// the capture in arrival order, complete; its host name agrees with another library's
/// decode. Without a middle part, the join is printed as far as it goes, marked incomplete.
#[test]
fn gamespy3_decode_of_capture_files_joins_the_parts() {
    let mut joined = 0;
    for name in ["projectrealitybf2_1", "projectrealitybf2_3", "ut3_1"] {
        let capture = format!("gameq/gamespy3/{name}_response.txt");
        let Some(datagrams) = query_tests::read_capture(&capture) else {
            return;
        };
        assert!(datagrams.len() >= 2, "{name} is a reply of several parts");
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<String> = datagrams
            .iter()
            .enumerate()
            .rev()
            .map(|(i, datagram)| {
                let path = dir.path().join(format!("part{i}.bin"));
                std::fs::write(&path, datagram).unwrap();
                path.display().to_string()
            })
            .collect();
        let mut args = vec!["decode", "gamespy3"];
        args.extend(files.iter().map(String::as_str));
        let outcome = replay_support::run_gsq(&args, Duration::from_secs(30));
        assert_eq!(outcome.code, Some(0), "{name}: {}", outcome.stderr);
        let json: Value = serde_json::from_str(outcome.stdout.trim()).unwrap();
        assert_eq!(json["type"], "reply", "{name}");
        let mut reassembly = query_specs::gamespy3::Reassembly::new();
        for datagram in &datagrams {
            reassembly.push(datagram).unwrap();
        }
        let expected = serde_json::to_value(reassembly.reply().unwrap()).unwrap();
        assert_eq!(json["packet"], expected, "{name}");
        assert_eq!(json["packet"]["complete"], true, "{name}");
        let hostname = json["packet"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == "hostname")
            .map(|kv| kv["value"].clone());
        let theirs = capture_result(&format!("gameq/gamespy3/{name}_result.json")).unwrap();
        assert_eq!(
            hostname.as_ref().and_then(Value::as_str),
            Some(text(&theirs, "hostname")),
            "{name}"
        );
        assert!(
            outcome
                .stderr
                .contains(&format!("{} parts joined", datagrams.len())),
            "{name}: {}",
            outcome.stderr
        );

        if datagrams.len() >= 3 {
            let outcome = replay_support::run_gsq(
                &["decode", "gamespy3", &files[0], &files[2]],
                Duration::from_secs(30),
            );
            assert_eq!(outcome.code, Some(0), "{name}: {}", outcome.stderr);
            let json: Value = serde_json::from_str(outcome.stdout.trim()).unwrap();
            assert_eq!(json["packet"]["complete"], false, "{name}");
            assert_eq!(json["packet"]["missing_parts"], serde_json::json!([1]));
            assert!(outcome.stderr.contains("parts [1] are missing"), "{name}");
        }
        joined += 1;
    }
    assert_eq!(joined, 3);
}
