//! Bad input never shows a panic: each gives one `gsq: error:` line saying what went wrong
//! and what to do, and its documented exit code.

mod cli_support;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cli_support::{fixture, run, silent_socket, Server, StateDir, SAMPLE_STATE};
use predicates::prelude::*;

// The exit codes of `gsq --help`.
const USAGE: i32 = 2;
const UNKNOWN_PROTOCOL: i32 = 3;
const BAD_ADDRESS: i32 = 4;
const PORT_OUT_OF_RANGE: i32 = 5;
const RESOLVE: i32 = 6;
const NETWORK: i32 = 7;
const TIMEOUT: i32 = 8;
const MALFORMED: i32 = 9;
const STATE_FILE: i32 = 10;
const AUTH: i32 = 11;

#[test]
fn unknown_protocols_are_exit_code_3() {
    run(&["query", "quake9", "127.0.0.1"]).assert_error(
        UNKNOWN_PROTOCOL,
        &[
            "unknown protocol \"quake9\"",
            "sqp, onequery, samp, gamespy1, a2s, quake3, quake2, fivem, doom3, gamespy2, gamespy3, minecraft, minecraft-query, bedrock, teeworlds, mumble, eye, unreal2, frostbite, teamspeak3, auto",
            "gsq query --help",
        ],
    );
    run(&["decode", "doom", "x.bin"])
        .assert_error(UNKNOWN_PROTOCOL, &["unknown protocol \"doom\""]);
    run(&["bulk", "--protocol", "tribes"])
        .assert_error(UNKNOWN_PROTOCOL, &["unknown protocol \"tribes\""]);
    // Case and surrounding spaces do not make a protocol unknown.
    run(&["query", "SAMP", "127.0.0.1:99999"]).assert_error(PORT_OUT_OF_RANGE, &["out of range"]);
}

#[test]
fn malformed_addresses_are_exit_code_4_and_say_what_is_wrong() {
    for (address, reason) in [
        ("host:abc", "port \"abc\" is not a number"),
        ("host:", "port after ':' is missing"),
        (":7777", "host before ':' is missing"),
        ("[::1", "missing ']'"),
        ("[nope]:1", "not an IPv6 address"),
        ("bad host", "not a host name"),
        ("1:2:3", "IPv6"),
    ] {
        run(&["query", "sqp", address]).assert_error(BAD_ADDRESS, &[reason, "gsq query --help"]);
    }
    run(&["query", "auto", "bad host"]).assert_error(BAD_ADDRESS, &["not a host name"]);
}

#[test]
fn ports_out_of_range_are_exit_code_5() {
    for address in [
        "127.0.0.1:65536",
        "127.0.0.1:0",
        "[::1]:99999",
        "localhost:123456789012",
    ] {
        run(&["query", "samp", address])
            .assert_error(PORT_OUT_OF_RANGE, &["out of range (1-65535)"]);
    }
}

#[test]
fn an_unresolvable_host_is_exit_code_6() {
    run(&["query", "sqp", "no-such-host.invalid:7779"]).assert_error(
        RESOLVE,
        &[
            "cannot resolve no-such-host.invalid:7779",
            "check the host name",
        ],
    );
}

#[test]
fn silence_is_a_timeout_with_the_attempts_and_advice() {
    let silent = silent_socket();
    let address = silent.local_addr().unwrap().to_string();
    for protocol in ["sqp", "onequery", "samp", "gamespy1"] {
        let started = Instant::now();
        let ran = run(&[
            "query",
            protocol,
            &address,
            "--timeout",
            "150ms",
            "--retries",
            "1",
        ]);
        ran.assert_error(
            TIMEOUT,
            &[&address, "no reply", "2 attempt(s)", "--timeout"],
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{protocol} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn auto_reports_every_protocol_when_none_answers() {
    let silent = silent_socket();
    let address = silent.local_addr().unwrap().to_string();
    run(&["query", "auto", &address, "-t", "150ms", "-r", "0"]).assert_error(
        TIMEOUT,
        &[
            "no protocol answered",
            "sqp ",
            "onequery ",
            "samp ",
            "gamespy1 ",
        ],
    );
}

/// A fake SA:MP server that echoes each request's header followed by a body too short to
/// decode.
struct BrokenSampServer {
    address: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl BrokenSampServer {
    fn start() -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let address = socket.local_addr().unwrap().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut buf = [0u8; 2048];
            while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
                if let Ok((len, from)) = socket.recv_from(&mut buf) {
                    if len >= 11 {
                        let mut reply = buf[..11].to_vec();
                        reply.push(0x01);
                        let _ = socket.send_to(&reply, from);
                    }
                }
            }
        });
        BrokenSampServer {
            address,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BrokenSampServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_reply_that_does_not_decode_is_a_malformed_error_with_offset_and_path() {
    let server = BrokenSampServer::start();
    run(&["query", "samp", &server.address, "-t", "200ms", "-r", "0"])
        .assert_error(MALFORMED, &[&server.address, "malformed reply", "at byte"]);
}

#[test]
fn state_file_problems_are_exit_code_10() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    run(&["serve", missing.to_str().unwrap(), "--sqp", "127.0.0.1:0"]).assert_error(
        STATE_FILE,
        &["cannot read", "missing.toml", "check the path"],
    );

    let bad_toml = StateDir::new("toml", "name = \"x\"\nmax_players = \"lots\"\n");
    run(&["serve", bad_toml.path_str(), "--sqp", "127.0.0.1:0"])
        .assert_error(STATE_FILE, &["state.toml", "line 2", "fix the file"]);

    let unknown_key = StateDir::new("json", r#"{"nmae": "typo"}"#);
    run(&["serve", unknown_key.path_str(), "--samp", "127.0.0.1:0"])
        .assert_error(STATE_FILE, &["state.json", "nmae"]);

    let yaml = StateDir::new("yaml", "name: x");
    run(&["serve", yaml.path_str(), "--samp", "127.0.0.1:0"]).assert_error(
        STATE_FILE,
        &["unknown state file format", "*.toml or *.json"],
    );

    let empty = StateDir::new("toml", "");
    run(&["serve", empty.path_str(), "--samp", "127.0.0.1:0"])
        .assert_error(STATE_FILE, &["the file is empty"]);
}

#[test]
fn serve_usage_errors() {
    let state = StateDir::new("toml", SAMPLE_STATE);
    run(&["serve", state.path_str()]).assert_error(USAGE, &["nothing to serve", "--all"]);
    run(&[
        "serve",
        state.path_str(),
        "--sqp",
        "127.0.0.1:7000",
        "--samp",
        "127.0.0.1:7000",
    ])
    .assert_error(USAGE, &["--sqp and --samp both ask for 127.0.0.1:7000"]);
    run(&["serve", state.path_str(), "--sqp", "localhost:1"])
        .assert_error(BAD_ADDRESS, &["not a listen address"]);
    run(&["serve", state.path_str(), "--sqp", "70000"])
        .assert_error(PORT_OUT_OF_RANGE, &["out of range"]);
    run(&["serve", state.path_str(), "--all", "127.0.0.1:70000"])
        .assert_error(PORT_OUT_OF_RANGE, &["port 70000 is out of range"]);
}

#[test]
fn an_address_in_use_is_a_network_error() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let state = StateDir::new("toml", SAMPLE_STATE);
    run(&["serve", state.path_str(), "--samp", &address]).assert_error(
        NETWORK,
        &["cannot listen on", &address, "port 0 picks a free one"],
    );
}

#[test]
fn bad_options_are_usage_errors() {
    run(&["query", "sqp", "127.0.0.1", "--timeout", "soon"])
        .assert_error(USAGE, &["not a duration"]);
    run(&["query", "sqp", "127.0.0.1", "--timeout", "0"]).assert_error(USAGE, &["more than zero"]);
    run(&["query", "sqp", "127.0.0.1", "--fetch", "gossip"])
        .assert_error(USAGE, &["possible values"]);
    run(&["query", "samp", "127.0.0.1", "--encoding", "ebcdic"])
        .assert_error(USAGE, &["unknown text encoding"]);
    run(&[
        "query",
        "sqp",
        "127.0.0.1",
        "--rcon",
        "x",
        "--rcon-password",
        "y",
    ])
    .assert_error(USAGE, &["--rcon is a SA:MP feature"]);
    run(&["query", "samp", "127.0.0.1", "--rcon", "players"])
        .assert_error(USAGE, &["--rcon-password"]);
    run(&[
        "query",
        "auto",
        "127.0.0.1",
        "--rcon",
        "x",
        "--rcon-password",
        "y",
    ])
    .assert_error(USAGE, &["--rcon needs a protocol"]);
    run(&["bulk", "--concurrency", "0"]).assert_error(USAGE, &["--concurrency"]);
    run(&["decode", "sqp", "x", "--chunks", "bogus"])
        .assert_error(USAGE, &["unknown chunk \"bogus\""]);
    run(&["frobnicate"]).assert_error(USAGE, &["unrecognized subcommand"]);
    run(&[
        "query",
        "gamespy1",
        "127.0.0.1",
        "--gamespy-request",
        "status",
    ])
    .assert_error(USAGE, &["not a GameSpy v1 request"]);
}

#[test]
fn missing_input_files_are_usage_errors() {
    run(&["decode", "sqp", "/nonexistent/reply.bin"]).assert_error(
        USAGE,
        &["cannot read /nonexistent/reply.bin", "check the file name"],
    );
    run(&["bulk", "/nonexistent/list.txt"])
        .assert_error(USAGE, &["cannot read /nonexistent/list.txt"]);
}

#[test]
fn malformed_packets_in_decode_give_offset_and_field_path() {
    let dir = tempfile::tempdir().unwrap();
    let truncated = dir.path().join("truncated.hex");
    let full = std::fs::read_to_string(fixture("sqp/sqp_query_response.hex")).unwrap();
    let digits: String = full
        .split_whitespace()
        .take(40)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::write(&truncated, digits).unwrap();
    run(&["decode", "sqp", "--hex", truncated.to_str().unwrap()]).assert_error(
        MALFORMED,
        &["malformed sqp reply", "Response.", "at byte", "need"],
    );

    let not_hex = dir.path().join("not.hex");
    std::fs::write(&not_hex, "00 zz").unwrap();
    run(&["decode", "samp", "--hex", not_hex.to_str().unwrap()])
        .assert_error(MALFORMED, &["not hex text", "'z'"]);
}

#[test]
fn auth_failures_are_exit_code_11() {
    let state = StateDir::new("toml", SAMPLE_STATE);
    let server = Server::start(
        state,
        &[
            "--onequery",
            "127.0.0.1:0",
            "--onequery-public",
            "none",
            "--onequery-secret",
            "s3cret",
            "--samp",
            "127.0.0.1:0",
            "--samp-rcon-password",
            "right",
        ],
        &["onequery", "samp"],
    );
    run(&["query", "onequery", &server.addr("onequery"), "-t", "500ms"])
        .assert_error(AUTH, &["authentication", "--token"]);
    run(&[
        "query",
        "onequery",
        &server.addr("onequery"),
        "--token",
        "wrong",
        "-t",
        "500ms",
    ])
    .assert_error(AUTH, &["authentication"]);
    run(&[
        "query",
        "samp",
        &server.addr("samp"),
        "--rcon-password",
        "wrong",
        "--rcon",
        "players",
        "-t",
        "500ms",
    ])
    .assert_error(AUTH, &["Invalid RCON password", "--rcon-password"]);
}

#[test]
fn errors_stay_one_line_under_assert_cmd_predicates() {
    cli_support::gsq(&["query", "sqp", "127.0.0.1:99999"])
        .assert()
        .code(PORT_OUT_OF_RANGE)
        .stdout(predicate::str::is_empty())
        .stderr(
            predicate::str::starts_with("gsq: error: ")
                .and(predicate::str::contains("out of range"))
                .and(predicate::str::contains("panicked").not())
                .and(predicate::function(|s: &str| s.lines().count() == 1)),
        );
}

#[test]
fn each_bad_input_has_an_exit_code_of_its_own() {
    let silent = silent_socket();
    let silent_address = silent.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.toml");
    let cases = [
        ("unknown protocol", run(&["query", "quake9", "127.0.0.1"])),
        ("malformed address", run(&["query", "sqp", "host:abc"])),
        (
            "port out of range",
            run(&["query", "sqp", "127.0.0.1:65536"]),
        ),
        (
            "unresolvable host",
            run(&["query", "sqp", "no-such-host.invalid"]),
        ),
        (
            "missing state file",
            run(&["serve", missing.to_str().unwrap(), "--sqp", "127.0.0.1:0"]),
        ),
        (
            "timeout",
            run(&["query", "sqp", &silent_address, "-t", "100ms", "-r", "0"]),
        ),
    ];
    let mut codes: Vec<i32> = Vec::new();
    for (what, ran) in &cases {
        let code = ran
            .code
            .unwrap_or_else(|| panic!("{what}: killed: {ran:#?}"));
        assert_ne!(code, 0, "{what}: {ran:#?}");
        assert_ne!(code, USAGE, "{what} is more than a usage error: {ran:#?}");
        assert!(
            !codes.contains(&code),
            "{what} shares exit code {code} with another bad input"
        );
        codes.push(code);
    }
    assert_eq!(
        codes,
        [
            UNKNOWN_PROTOCOL,
            BAD_ADDRESS,
            PORT_OUT_OF_RANGE,
            RESOLVE,
            STATE_FILE,
            TIMEOUT
        ]
    );
}
