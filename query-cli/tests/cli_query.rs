//! `gsq query` against a `gsq serve` started by the test on 127.0.0.1, port 0.
//!
//! The JSON is checked field by field against the state the server was given, for every
//! protocol, with what each protocol can carry (SQP has no password flag, OneQuery no map...).

mod cli_support;

use serde_json::{json, Value};

use cli_support::{run, Server, StateDir, SAMPLE_STATE};

/// Every field of the ServerStatus JSON, in order; `teams` only when there are any.
const STATUS_FIELDS: [&str; 17] = [
    "protocol",
    "address",
    "name",
    "map",
    "game_type",
    "version",
    "num_players",
    "max_players",
    "password",
    "players",
    "rules",
    "ping_ms",
    "complete",
    "raw",
    "game",
    "game_name",
    "query_port",
];

fn serve_all_single() -> Server {
    Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--sqp",
            "127.0.0.1:0",
            "--onequery",
            "127.0.0.1:0",
            "--samp",
            "127.0.0.1:0",
            "--gamespy1",
            "127.0.0.1:0",
        ],
        &["sqp", "onequery", "samp", "gamespy1"],
    )
}

fn query_json(protocol: &str, address: &str, extra: &[&str]) -> Value {
    let mut args = vec!["query", protocol, address, "--json", "-t", "500ms"];
    args.extend_from_slice(extra);
    run(&args).json()
}

/// The shape every protocol shares: all fields present, in order, with the right types,
/// and the values the state says.
fn check_common(status: &Value, protocol: &str, address: &str) {
    let object = status.as_object().expect("an object");
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let expected: Vec<&str> = STATUS_FIELDS
        .iter()
        .copied()
        .filter(|f| *f != "teams")
        .collect();
    let without_teams: Vec<&str> = keys.iter().copied().filter(|k| *k != "teams").collect();
    // serde_json sorts keys unless asked not to; compare as sets, then check types.
    let mut sorted_keys = without_teams.clone();
    sorted_keys.sort_unstable();
    let mut sorted_expected = expected.clone();
    sorted_expected.sort_unstable();
    assert_eq!(sorted_keys, sorted_expected, "{status:#}");

    assert_eq!(status["protocol"], protocol);
    assert_eq!(status["address"], address);
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["num_players"], 2);
    assert_eq!(status["max_players"], 16);
    assert!(status["map"].is_string() || status["map"].is_null());
    assert!(status["game_type"].is_string() || status["game_type"].is_null());
    assert!(status["version"].is_string() || status["version"].is_null());
    assert!(status["password"].is_boolean() || status["password"].is_null());
    let ping = status["ping_ms"].as_f64().expect("ping_ms is a number");
    assert!((0.0..1000.0).contains(&ping), "{ping}");
    assert_eq!(status["complete"], true);
    assert!(status["raw"].is_object(), "{status:#}");
    assert!(status["rules"].is_object(), "{status:#}");
}

fn player_names(status: &Value) -> Vec<&str> {
    status["players"]
        .as_array()
        .expect("players is an array")
        .iter()
        .map(|p| p["name"].as_str().expect("a player name"))
        .collect()
}

#[test]
fn sqp_json_field_by_field() {
    let server = serve_all_single();
    let address = server.addr("sqp");
    let status = query_json("sqp", &address, &[]);
    check_common(&status, "sqp", &address);
    assert_eq!(status["map"], "Highrise");
    assert_eq!(status["game_type"], "Team Deathmatch");
    assert_eq!(status["version"], "1.0.3");
    assert_eq!(status["password"], Value::Null, "SQP has no password flag");
    assert_eq!(player_names(&status), ["Zoë", "Jürgen"]);
    assert_eq!(status["players"][0]["score"], 42);
    assert_eq!(status["players"][0]["ping"], 31);
    assert_eq!(status["players"][1]["score"], 17);
    assert_eq!(
        status["rules"],
        json!({"round_time": "300", "difficulty": "hard"})
    );
}

#[test]
fn onequery_json_field_by_field() {
    let server = serve_all_single();
    let address = server.addr("onequery");
    let status = query_json("onequery", &address, &[]);
    check_common(&status, "onequery", &address);
    assert_eq!(status["version"], "1.0.3");
    // OneQuery's BASIC reply has no map, game type or password flag, and no rules.
    assert_eq!(status["map"], Value::Null, "{status:#}");
    assert_eq!(status["game_type"], Value::Null, "{status:#}");
    assert_eq!(status["password"], Value::Null, "{status:#}");
    assert_eq!(status["rules"], json!({}), "{status:#}");
    assert!(status.get("teams").is_none(), "{status:#}");
    assert_eq!(status["num_players"], 2);
    assert_eq!(status["max_players"], 16);
    // A OneQuery player is a name and an account id; the state gives no id, so the nil UUID
    // is sent.
    let nil = "00000000-0000-0000-0000-000000000000";
    assert_eq!(
        status["players"],
        json!([{"name": "Zoë", "uuid": nil}, {"name": "Jürgen", "uuid": nil}]),
        "{status:#}"
    );
}

#[test]
fn samp_json_field_by_field() {
    let server = serve_all_single();
    let address = server.addr("samp");
    let status = query_json("samp", &address, &[]);
    check_common(&status, "samp", &address);
    assert_eq!(status["map"], "Highrise");
    assert_eq!(status["game_type"], "Team Deathmatch");
    assert_eq!(status["version"], "1.0.3");
    assert_eq!(status["password"], false);
    assert_eq!(player_names(&status), ["Zoë", "Jürgen"]);
    assert_eq!(status["players"][1]["score"], 17);
    assert_eq!(status["players"][1]["ping"], 54);
    assert_eq!(status["rules"]["round_time"], "300");
    assert_eq!(status["rules"]["difficulty"], "hard");
}

#[test]
fn gamespy1_json_field_by_field() {
    let server = serve_all_single();
    let address = server.addr("gamespy1");
    let status = query_json("gamespy1", &address, &[]);
    check_common(&status, "gamespy1", &address);
    assert_eq!(status["map"], "Highrise");
    assert_eq!(player_names(&status), ["Zoë", "Jürgen"]);
    assert_eq!(status["players"][0]["score"], 42);
    assert_eq!(status["rules"]["round_time"], "300");
}

#[test]
fn gamespy2_query_against_gamespy2_serve_field_by_field() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--gamespy2", "127.0.0.1:0"],
        &["gamespy2"],
    );
    let address = server.addr("gamespy2");
    let status = query_json("gamespy2", &address, &[]);
    check_common(&status, "gamespy2", &address);
    assert_eq!(status["map"], "Highrise");
    assert_eq!(status["game_type"], "Team Deathmatch");
    assert_eq!(status["version"], "1.0.3");
    assert_eq!(status["password"], false);
    assert_eq!(player_names(&status), ["Zoë", "Jürgen"]);
    assert_eq!(status["players"][0]["score"], 42);
    assert_eq!(status["players"][1]["ping"], 54);
    assert_eq!(status["rules"]["round_time"], "300");
    assert_eq!(status["rules"]["hostport"], "7777");
}

#[test]
fn pretty_json_is_the_same_object_indented() {
    let server = serve_all_single();
    let address = server.addr("sqp");
    let ran = run(&["query", "sqp", &address, "--pretty"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(
        ran.stdout.starts_with("{\n  \"protocol\": \"sqp\",\n"),
        "{}",
        ran.stdout
    );
    let status: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(status["name"], "Café Zoë");
}

#[test]
fn json_is_the_default_when_stdout_is_not_a_terminal_and_table_can_be_forced() {
    let server = serve_all_single();
    let address = server.addr("samp");
    let ran = run(&["query", "samp", &address]);
    let status: Value = ran.json();
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(ran.stdout.lines().count(), 1, "one JSON line");

    let ran = run(&["query", "samp", &address, "--table"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let table = &ran.stdout;
    assert!(
        table.starts_with(&format!("samp {address}, answered in ")),
        "{table}"
    );
    for text in [
        "Café Zoë",
        "Highrise",
        "2 / 16",
        "Players (2)",
        "Zoë",
        "Jürgen",
        "Rules",
        "round_time",
        "hard",
    ] {
        assert!(table.contains(text), "{text} missing:\n{table}");
    }
}

#[test]
fn gamespy3_and_minecraft_query_are_queried_through_the_challenge() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--gamespy3",
            "127.0.0.1:0",
            "--minecraft-query",
            "127.0.0.1:0",
        ],
        &["gamespy3", "minecraft-query"],
    );
    for protocol in ["gamespy3", "minecraft-query"] {
        let address = server.addr(protocol);
        let status = query_json(protocol, &address, &[]);
        assert_eq!(status["protocol"], protocol);
        assert_eq!(status["name"], "Café Zoë");
        assert_eq!(status["map"], "Highrise");
        assert_eq!(status["max_players"], 16);
        assert_eq!(status["complete"], true);
        let names: Vec<&str> = status["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Zoë", "Jürgen"]);
        assert_eq!(status["rules"]["difficulty"], "hard");
    }
}

#[test]
fn fetch_none_asks_only_for_the_server_info() {
    let server = serve_all_single();
    let status = query_json("sqp", &server.addr("sqp"), &["--fetch", "none"]);
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["num_players"], 2);
    assert_eq!(status["players"], json!([]));
    assert_eq!(status["rules"], json!({}));

    let status = query_json("sqp", &server.addr("sqp"), &["--fetch", "rules"]);
    assert_eq!(status["players"], json!([]));
    assert_eq!(status["rules"]["difficulty"], "hard");
}

#[test]
fn auto_finds_the_protocol_on_a_port() {
    let server = serve_all_single();
    for protocol in ["sqp", "onequery", "samp", "gamespy1"] {
        let address = server.addr(protocol);
        let status = query_json("auto", &address, &[]);
        assert_eq!(status["protocol"], protocol, "{status:#}");
        assert_eq!(status["address"], address);
        assert_eq!(status["name"], "Café Zoë");
    }
}

#[test]
fn auto_against_one_port_serving_all_protocols_reports_one_answer() {
    // Every protocol `--all` routes; the server announces each on the one port.
    let every: Vec<String> = query_net::engines::all::ROUTED
        .iter()
        .map(|protocol| protocol.to_string())
        .collect();
    let expect: Vec<&str> = every.iter().map(String::as_str).collect();
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--all", "127.0.0.1:0"],
        &expect,
    );
    let address = server.addr("sqp");
    let mut direct = std::collections::HashMap::new();
    for protocol in &expect {
        assert_eq!(server.addr(protocol), address, "{protocol} shares the port");
        let status = query_json(protocol, &address, &[]);
        assert_eq!(status["protocol"], *protocol);
        assert_eq!(status["name"], "Café Zoë");
        direct.insert(*protocol, status);
    }
    // All of them answer on that port; which one is first is a race, so the test checks that
    // the answer names one of them and is exactly what that protocol says when asked alone.
    let status = query_json("auto", &address, &[]);
    let protocol = status["protocol"]
        .as_str()
        .expect("the protocol that answered");
    let alone = direct
        .get(protocol)
        .unwrap_or_else(|| panic!("auto answered with {protocol:?}, not one of {every:?}"));
    assert_eq!(status["address"], address);
    assert_eq!(
        without_per_query_values(&status),
        without_per_query_values(alone),
        "{protocol}"
    );
}

/// A status without what differs from query to query: the measured round trip, and the
/// GameSpy v1 query id the server counts up.
fn without_per_query_values(status: &Value) -> Value {
    let mut status = status.clone();
    let object = status.as_object_mut().expect("an object");
    object.remove("ping_ms").expect("ping_ms");
    if let Some(raw) = object.get_mut("raw").and_then(Value::as_object_mut) {
        raw.remove("query_id");
    }
    status
}

#[test]
fn text_encoding_is_chosen_for_samp() {
    let state = StateDir::new("toml", "name = \"Привет\"\nmax_players = 4\n");
    let server = Server::start(
        state,
        &["--samp", "127.0.0.1:0", "--encoding", "windows-1251"],
        &["samp"],
    );
    let address = server.addr("samp");
    let right = query_json("samp", &address, &["--encoding", "windows-1251"]);
    assert_eq!(right["name"], "Привет");
    let default = query_json("samp", &address, &[]);
    assert_ne!(default["name"], "Привет", "read as Windows-1252 by default");
    assert_eq!(
        default["name"].as_str().unwrap().chars().count(),
        6,
        "one character per byte"
    );
}

#[test]
fn samp_rcon_runs_a_command_and_prints_its_lines() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--samp", "127.0.0.1:0", "--samp-rcon-password", "changeme"],
        &["samp"],
    );
    let address = server.addr("samp");
    let out = run(&[
        "query",
        "samp",
        &address,
        "--rcon-password",
        "changeme",
        "--rcon",
        "players",
        "--json",
    ])
    .json();
    assert_eq!(out["protocol"], "samp");
    assert_eq!(out["command"], "players");
    let lines: Vec<&str> = out["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[1].contains("Zoë") && lines[2].contains("Jürgen"),
        "{lines:?}"
    );

    // The password may come from the environment instead of the command line.
    let ran = cli_support::gsq(&[
        "query",
        "samp",
        &address,
        "--rcon",
        "echo hello there",
        "--table",
    ])
    .env("GSQ_RCON_PASSWORD", "changeme")
    .output()
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "hello there\n");
}

#[test]
fn onequery_token_opens_a_private_server() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--onequery",
            "127.0.0.1:0",
            "--onequery-public",
            "none",
            "--onequery-secret",
            "s3cret",
        ],
        &["onequery"],
    );
    let status = query_json("onequery", &server.addr("onequery"), &["--token", "s3cret"]);
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(player_names(&status), ["Zoë", "Jürgen"]);
}

/// Under `CI=true` a test that cannot run here fails instead of skipping, so CI never passes by
/// skipping.
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

#[test]
fn ipv6_loopback_works_when_available() {
    if let Err(e) = std::net::UdpSocket::bind("[::1]:0") {
        // CI must prove IPv6 works: there a missing `::1` fails rather than skips.
        assert!(!in_ci(), "CI=true but [::1] is not available: {e}");
        eprintln!("skipping: no IPv6 loopback here ({e})");
        return;
    }
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--sqp", "[::1]:0"],
        &["sqp"],
    );
    let address = server.addr("sqp");
    assert!(address.starts_with("[::1]:"), "{address}");
    let status = query_json("sqp", &address, &[]);
    assert_eq!(status["address"], address);
    assert_eq!(status["name"], "Café Zoë");
}

#[test]
fn host_names_resolve() {
    use std::net::ToSocketAddrs;
    let server = serve_all_single();
    let port = server.addresses["samp"].port();
    let first = ("localhost", port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next());
    if first.map(|a| a.ip()) != Some(std::net::Ipv4Addr::LOCALHOST.into()) {
        assert!(
            !in_ci(),
            "CI=true but localhost does not resolve to 127.0.0.1 first ({first:?})"
        );
        eprintln!("skipping: localhost does not resolve to 127.0.0.1 first here ({first:?})");
        return;
    }
    let status = query_json("samp", &format!("localhost:{port}"), &[]);
    assert_eq!(status["name"], "Café Zoë");
}

#[test]
fn gamespy1_request_can_be_chosen() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--gamespy1", "127.0.0.1:0"],
        &["gamespy1"],
    );
    let status = query_json(
        "gamespy1",
        &server.addr("gamespy1"),
        &["--gamespy-request", "\\info\\"],
    );
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["num_players"], 2);
    assert_eq!(status["players"], json!([]), "\\info\\ lists no players");
}

/// A state with teams, for the SQP TeamInfo chunk.
const TEAM_STATE: &str = r#"
name = "Team Arena"
map = "Docks"
max_players = 8

[[teams]]
name = "Rød"
score = 12

[[teams]]
name = "Blue"
score = -3

[[players]]
name = "Zoë"
score = 5
team = "Rød"

[[players]]
name = "Ann"
score = 2
team = "Blue"
"#;

#[test]
fn sqp_teams_are_fetched_when_asked_for() {
    let server = Server::start(
        StateDir::new("toml", TEAM_STATE),
        &["--sqp", "127.0.0.1:0"],
        &["sqp"],
    );
    let address = server.addr("sqp");
    let teams = json!([{"name": "Rød", "score": 12}, {"name": "Blue", "score": -3}]);

    for ask in [&["--fetch", "teams"][..], &["--fetch", "all"][..]] {
        let status = query_json("sqp", &address, ask);
        assert_eq!(status["teams"], teams, "{ask:?}: {status:#}");
        assert_eq!(status["name"], "Team Arena", "{ask:?}");
    }
    let status = query_json("sqp", &address, &["--fetch", "teams"]);
    assert_eq!(status["players"], json!([]), "players not asked for");

    // --chunks asks for exactly the chunks named: teams alone leaves the info out.
    let status = query_json("sqp", &address, &["--chunks", "teams"]);
    assert_eq!(status["teams"], teams, "{status:#}");
    assert_eq!(status["name"], "", "no ServerInfo asked for: {status:#}");
    assert_eq!(status["num_players"], 0, "{status:#}");
    assert_eq!(status["players"], json!([]));

    let status = query_json("sqp", &address, &["--chunks", "info,teams,players"]);
    assert_eq!(status["teams"], teams, "{status:#}");
    assert_eq!(status["name"], "Team Arena");
    assert_eq!(status["map"], "Docks");
    assert_eq!(player_names(&status), ["Zoë", "Ann"]);
    assert_eq!(status["players"][0]["team"], "Rød", "{status:#}");
    assert_eq!(status["rules"], json!({}), "rules not asked for");

    // Metrics: the SQP responder reports its own numbers; they are in `raw`.
    let status = query_json("sqp", &address, &["--chunks", "metrics"]);
    assert!(status["raw"]["metrics"].is_object(), "{status:#}");
    assert!(status.get("teams").is_none(), "{status:#}");

    // Without teams asked for, there is no `teams` field.
    let status = query_json("sqp", &address, &["--fetch", "players"]);
    assert!(status.get("teams").is_none(), "{status:#}");
}

#[test]
fn chunks_is_an_sqp_option_with_at_least_one_chunk() {
    let ran = run(&["query", "samp", "127.0.0.1:1", "--chunks", "info"]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    assert!(ran.stderr.contains("--chunks is an SQP option"), "{ran:#?}");
    let ran = run(&["query", "auto", "127.0.0.1:1", "--chunks", "info"]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    let ran = run(&["query", "sqp", "127.0.0.1:1", "--chunks", "none"]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    assert!(ran.stderr.contains("at least one"), "{ran:#?}");
    let ran = run(&[
        "query",
        "sqp",
        "127.0.0.1:1",
        "--chunks",
        "info",
        "--fetch",
        "all",
    ]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    assert!(ran.stderr.contains("cannot be used with"), "{ran:#?}");
}

#[test]
fn minecraft_java_and_bedrock_are_served_and_queried() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &[
            "--minecraft-java",
            "127.0.0.1:0",
            "--bedrock",
            "127.0.0.1:0",
        ],
        &["minecraft", "bedrock"],
    );
    let status = query_json("minecraft", &server.addr("minecraft"), &[]);
    assert_eq!(status["protocol"], "minecraft");
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["max_players"], 16);
    assert_eq!(status["raw"]["pong"], true);
    let names: Vec<&str> = status["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Zoë", "Jürgen"]);
    // The status alone, without the ping after it.
    let status = query_json("minecraft", &server.addr("minecraft"), &["--no-ping"]);
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["raw"]["pong"], false);

    let status = query_json("bedrock", &server.addr("bedrock"), &[]);
    assert_eq!(status["protocol"], "bedrock");
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["map"], "Highrise");
    assert_eq!(status["num_players"], 2);
    assert_eq!(status["max_players"], 16);
}
