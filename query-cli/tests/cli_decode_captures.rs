//! `gsq decode` of captures that tcpdump writes on loopback: A2S split replies joined without
//! `--status`, Linux cooked frames (`tcpdump -i any`, v2 and v1), and `--status` naming the
//! datagram a capture lacks. Each test skips (fails under CI=true) without tcpdump.

mod cli_support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use cli_support::{run, Server, StateDir, Tcpdump, SAMPLE_STATE};

/// Exit code of no reply.
const TIMEOUT: i32 = 8;

/// The sample state with 60 more players, so an A2S PLAYER reply is split.
fn crowded_server() -> Server {
    let mut state = SAMPLE_STATE.to_owned();
    for i in 0..60 {
        state.push_str(&format!(
            "\n[[players]]\nname = \"player {i:02} of a crowded server\"\nscore = {i}\n"
        ));
    }
    Server::start(
        StateDir::new("toml", &state),
        &["--all", "127.0.0.1:0"],
        &["sqp", "samp", "a2s"],
    )
}

fn port_of(address: &str) -> u16 {
    address.rsplit(':').next().unwrap().parse().unwrap()
}

/// Fields that differ between a live query and a replay of its capture.
fn comparable(mut status: Value) -> Value {
    status["ping_ms"] = Value::Null;
    status
}

/// The link type in a pcap file's header (little-endian, as tcpdump writes on x86).
fn link_type(file: &Path) -> u32 {
    let bytes = std::fs::read(file).unwrap();
    u32::from_le_bytes(bytes[20..24].try_into().unwrap())
}

#[test]
fn a2s_split_replies_in_a_capture_are_joined_and_shown() {
    let server = crowded_server();
    let address = server.addr("a2s");
    let port = port_of(&address);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a2s.pcap");
    let Some(live) = Tcpdump::capture(&file, "lo", &[], port, || {
        run(&["query", "a2s", &address, "--json"]).json()
    }) else {
        return;
    };
    assert_eq!(live["players"].as_array().unwrap().len(), 62);

    let ran = run(&[
        "decode",
        "a2s",
        file.to_str().unwrap(),
        "--port",
        &port.to_string(),
    ]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(!ran.stderr.contains("missing"), "{}", ran.stderr);
    let decoded = ran.json();
    let readings = decoded["datagrams"].as_array().unwrap();
    // The PLAYER reply, from its parts (packet numbers joined by '+'), with every player.
    let players: Vec<&Value> = readings
        .iter()
        .filter(|r| {
            r["packet"]
                .to_string()
                .contains("player 59 of a crowded server")
        })
        .collect();
    assert_eq!(players.len(), 1, "{decoded:#}");
    let file_name = players[0]["file"].as_str().unwrap();
    assert!(file_name.contains('+'), "joined from parts: {file_name}");
    assert_eq!(players[0]["type"], "reply");
    assert!(ran.stderr.contains("split parts joined"), "{}", ran.stderr);
}

#[test]
fn captures_of_any_interface_in_linux_cooked_v2_and_v1_are_read() {
    let server = crowded_server();
    let address = server.addr("samp");
    let port = port_of(&address);
    let dir = tempfile::tempdir().unwrap();
    // tcpdump's default on `any` (v2 since libpcap 1.10), then v1 asked for.
    for (name, extra) in [
        ("any.pcap", &[][..]),
        ("any-v1.pcap", &["-y", "LINUX_SLL"][..]),
    ] {
        let file = dir.path().join(name);
        let Some(live) = Tcpdump::capture(&file, "any", extra, port, || {
            run(&["query", "samp", &address, "--json"]).json()
        }) else {
            return;
        };
        let link = link_type(&file);
        if extra.is_empty() {
            assert!(link == 276 || link == 113, "{name}: link type {link}");
        } else {
            assert_eq!(link, 113, "{name}");
        }
        let ran = run(&[
            "decode",
            "samp",
            file.to_str().unwrap(),
            "--port",
            &port.to_string(),
            "--status",
        ]);
        assert_eq!(ran.code, Some(0), "{name}: {}", ran.stderr);
        let lines = ran.json_lines();
        assert_eq!(lines.len(), 1, "{name}: one client");
        assert_eq!(comparable(lines[0].clone()), comparable(live), "{name}");
    }
}

#[test]
fn a_capture_without_the_challenge_reply_says_which_datagram_is_missing() {
    let server = crowded_server();
    let address = server.addr("sqp");
    let port = port_of(&address);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sqp.pcap");
    if Tcpdump::capture(&file, "lo", &[], port, || {
        run(&["query", "sqp", &address, "--json"]).json()
    })
    .is_none()
    {
        return;
    }
    // tcpdump itself leaves out the server's challenge response (SQP type byte 0).
    let without = dir.path().join("no-challenge.pcap");
    let status = Command::new("tcpdump")
        .arg("-r")
        .arg(&file)
        .arg("-w")
        .arg(&without)
        .arg(format!("not (udp src port {port} and udp[8] = 0)"))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let ran = run(&[
        "decode",
        "sqp",
        without.to_str().unwrap(),
        "--port",
        &port.to_string(),
        "--status",
    ]);
    // One line for the client whose exchange lacks it, one for the whole capture.
    assert_eq!(ran.code, Some(TIMEOUT), "{ran:#?}");
    assert!(
        ran.stderr
            .contains("no datagram answers the challenge request: the reply to it is missing"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("--timeout"), "{}", ran.stderr);
}
