//! One behaviour per input: an option that does not apply to the protocol is refused, a port
//! out of range is exit code 5 wherever it is given, an IPv6 address that could end in a port
//! is refused with the bracketed spelling, an RCON command nobody answers is an error, and a
//! closed port is its own error at once.

mod cli_support;

use cli_support::{run, Server, StateDir, SAMPLE_STATE};

const USAGE: i32 = 2;
const BAD_ADDRESS: i32 = 4;
const PORT_OUT_OF_RANGE: i32 = 5;
const TIMEOUT: i32 = 8;

#[test]
fn options_of_other_protocols_are_refused() {
    run(&["query", "a2s", "127.0.0.1:1", "--token", "t"])
        .assert_error(USAGE, &["--token is a onequery option", "a2s"]);
    run(&[
        "query",
        "sqp",
        "127.0.0.1:1",
        "--gamespy-request",
        "\\info\\",
    ])
    .assert_error(USAGE, &["--gamespy-request is a gamespy1 option", "sqp"]);
    run(&["query", "sqp", "127.0.0.1:1", "--fetch", "none,players"])
        .assert_error(USAGE, &["--fetch none", "cannot be combined"]);
    run(&["bulk", "--fetch", "players,none"]).assert_error(USAGE, &["--fetch none"]);
}

#[test]
fn the_token_variable_is_not_refused_for_other_protocols() {
    // From the environment the token is a setting for OneQuery servers, not a mistake.
    let output = cli_support::gsq(&["query", "a2s", "127.0.0.1:9", "-t", "100ms", "-r", "0"])
        .env("GSQ_ONEQUERY_TOKEN", "t")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(USAGE), "{stderr}");
    assert!(!stderr.contains("--token"), "{stderr}");
}

#[test]
fn a_port_out_of_range_is_exit_code_5_everywhere() {
    run(&["decode", "a2s", "capture.pcap", "--port", "99999"])
        .assert_error(PORT_OUT_OF_RANGE, &["port 99999 is out of range"]);
    run(&["decode", "a2s", "capture.pcap", "--port", "0"]).assert_error(PORT_OUT_OF_RANGE, &[]);
    run(&["query", "sqp", "127.0.0.1:99999"]).assert_error(PORT_OUT_OF_RANGE, &[]);
}

#[test]
fn ipv6_without_brackets_before_a_port_is_refused_with_a_hint() {
    run(&["query", "sqp", "::1:7779"]).assert_error(BAD_ADDRESS, &["[::1]:7779"]);
    let ran = cli_support::run_with_stdin(&["bulk"], "sqp ::1:7779\n");
    let line = &ran.json_lines()[0];
    assert_eq!(line["error_kind"], "bad_address", "{line}");
    assert!(
        line["error"].as_str().unwrap().contains("[::1]:7779"),
        "{line}"
    );
}

#[test]
fn rcon_against_a_server_without_rcon_says_so() {
    // SA:MP answers queries but ignores RCON when it has no RCON password.
    let state = StateDir::new("toml", SAMPLE_STATE);
    let server = Server::start(state, &["--samp", "127.0.0.1:0"], &["samp"]);
    run(&[
        "query",
        "samp",
        &server.addr("samp"),
        "--rcon-password",
        "any",
        "--rcon",
        "players",
        "-t",
        "300ms",
    ])
    .assert_error(TIMEOUT, &["no RCON output for \"players\"", "RCON is off"]);
}

#[test]
fn a_closed_port_is_exit_code_12_at_once() {
    let closed = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let started = std::time::Instant::now();
    run(&["query", "sqp", &closed, "--timeout", "3s"])
        .assert_error(12, &["nothing listens at", "refused", "port is closed"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

/// A state file with teams written as numbers and names, and metrics.
const STATE_WITH_METRICS: &str = r#"
name = "Metered"
max_players = 8
metrics = [1.5, 42.0, -3.25]
[[teams]]
name = "red"
score = 5
[[players]]
name = "Ann"
team = "red"
[[players]]
name = "Bob"
team = 2
"#;

#[test]
fn the_state_file_takes_teams_by_number_or_name_and_metrics_for_sqp() {
    let server = Server::start(
        StateDir::new("toml", STATE_WITH_METRICS),
        &["--sqp", "127.0.0.1:0"],
        &["sqp"],
    );
    let status = run(&[
        "query",
        "sqp",
        &server.addr("sqp"),
        "--chunks",
        "info,players,metrics",
        "--json",
    ])
    .json();
    let metrics = status["raw"].to_string();
    for value in ["1.5", "42", "-3.25"] {
        assert!(metrics.contains(value), "{value} not in {status:#}");
    }
    let players = status["players"].as_array().unwrap();
    let teams: Vec<String> = players.iter().map(|p| p["team"].to_string()).collect();
    assert!(teams[0].contains("red"), "{status:#}");
    assert!(teams[1].contains('2'), "{status:#}");

    // The help says which keys there are and their types.
    let help = run(&["serve", "--help"]).stdout;
    for key in ["metrics", "team", "players", "rules", "player_count"] {
        assert!(help.contains(key), "{key} missing from serve --help");
    }
    assert!(help.contains("number or a name"), "{help}");
}
