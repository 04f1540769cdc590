//! `gsq decode --status`: reply datagrams in files, in any order, make the status `gsq query`
//! prints; missing ones make what the client makes of a lossy network. And `gsq decode` of a
//! capture that tcpdump writes of a loopback query, or of a broken capture file.

mod cli_support;

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use cli_support::{run, Server, StateDir, Tcpdump, SAMPLE_STATE};

/// Exit code of bytes that do not decode.
const MALFORMED: i32 = 9;
/// Exit code of no reply.
const TIMEOUT: i32 = 8;

/// The sample state with 60 more players, so a GameSpy v1 reply spans several datagrams.
fn state() -> String {
    let mut state = SAMPLE_STATE.to_owned();
    for i in 0..60 {
        state.push_str(&format!(
            "\n[[players]]\nname = \"player {i:02} of a crowded server\"\nscore = {i}\n"
        ));
    }
    state
}

fn serve() -> Server {
    Server::start(
        StateDir::new("toml", &state()),
        &["--all", "127.0.0.1:0"],
        &["sqp", "samp", "gamespy1"],
    )
}

/// Sends `request` to `server` and collects the datagrams that come back within 300 ms.
fn exchange(socket: &UdpSocket, server: &str, request: &[u8]) -> Vec<Vec<u8>> {
    socket.send_to(request, server).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut replies = Vec::new();
    let mut buf = [0u8; 65536];
    while let Ok((n, _)) = socket.recv_from(&mut buf) {
        replies.push(buf[..n].to_vec());
    }
    replies
}

fn write_all(dir: &Path, datagrams: &[Vec<u8>]) -> Vec<PathBuf> {
    datagrams
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let path = dir.join(format!("reply{i}.bin"));
            std::fs::write(&path, d).unwrap();
            path
        })
        .collect()
}

fn decode_status(protocol: &str, files: &[PathBuf]) -> cli_support::Ran {
    let mut args = vec!["decode", protocol, "--status"];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    run(&args)
}

/// A status without the values that differ between a live query and a replay.
fn comparable(mut status: Value) -> Value {
    status["ping_ms"] = Value::Null;
    status["address"] = Value::Null;
    // The port that answered: a file's replies come from no port.
    status["query_port"] = Value::Null;
    // GameSpy v1's query id counts the server's replies.
    if status["raw"].get("query_id").is_some() {
        status["raw"]["query_id"] = Value::Null;
    }
    status
}

#[test]
fn gamespy_parts_in_any_order_make_the_live_status_and_a_lost_part_an_incomplete_one() {
    let server = serve();
    let address = server.addr("gamespy1");
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut parts = exchange(&socket, &address, b"\\status\\");
    assert!(
        parts.len() >= 2,
        "the sample state spans {} parts",
        parts.len()
    );
    parts.reverse();
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &parts);

    let live = run(&["query", "gamespy1", &address, "--json"]).json();
    let replayed = decode_status("gamespy1", &files);
    assert_eq!(replayed.code, Some(0), "{}", replayed.stderr);
    let replayed = replayed.json();
    assert_eq!(replayed["address"], "0.0.0.0:23000");
    assert_eq!(comparable(replayed), comparable(live));

    let lost = decode_status("gamespy1", &files[1..]);
    assert_eq!(lost.code, Some(0), "{}", lost.stderr);
    assert_eq!(lost.json()["complete"], false);
}

#[test]
fn sqp_challenge_and_reply_make_the_status_whatever_their_order() {
    let server = serve();
    let address = server.addr("sqp");
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let challenge = exchange(&socket, &address, &[0; 5]).remove(0);
    let mut query = vec![1];
    query.extend_from_slice(&challenge[1..5]);
    query.extend_from_slice(&[0, 1, 0x1f]);
    let reply = exchange(&socket, &address, &query).remove(0);
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &[reply, challenge]);

    let status = decode_status("sqp", &files);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let status = status.json();
    assert_eq!(status["protocol"], "sqp");
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["raw"]["missing_chunks"], serde_json::json!([]));
    // Every chunk came, but the 60 extra players do not fit one 1,400-byte datagram: the
    // responder cut the list, and the status says so.
    assert_eq!(status["complete"], false);
    let listed = status["players"].as_array().unwrap().len() as u64;
    let missing = status["raw"]["players_missing"].as_u64().unwrap();
    assert!(listed > 0 && missing > 0, "{status}");
    assert_eq!(listed + missing, status["num_players"].as_u64().unwrap());

    // Without the challenge reply the client never gets to ask: the query's timeout.
    let ran = decode_status("sqp", &files[..1]);
    ran.assert_error(TIMEOUT, &["challenge request"]);
}

#[test]
fn replies_of_another_protocol_are_the_clients_error() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &[b"\\hostname\\x\\final\\".to_vec()]);
    let ran = decode_status("samp", &files);
    ran.assert_error(TIMEOUT, &["samp replies"]);
}

#[test]
fn a_teeworlds_07_token_exchange_makes_the_status_and_decodes_packet_by_packet() {
    use query_specs::teeworlds::seven;
    use query_wire::{Decode, Encode};

    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--teeworlds", "127.0.0.1:0"],
        &["teeworlds"],
    );
    let address = server.addr("teeworlds");
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let token_request = seven::Request::token(0x0102_0304).to_vec().unwrap();
    let token_reply = exchange(&socket, &address, &token_request).remove(0);
    let Ok(seven::Reply::Token(token)) = seven::Reply::from_bytes(&token_reply) else {
        panic!("not a token reply: {token_reply:02x?}");
    };
    let info_request = seven::Request::info(token.server_token, 0x0102_0304, 9)
        .to_vec()
        .unwrap();
    let info_reply = exchange(&socket, &address, &info_request).remove(0);
    // A made-up token gets nothing.
    let guessed = seven::Request::info(token.server_token ^ 1, 0x0102_0304, 9)
        .to_vec()
        .unwrap();
    assert!(exchange(&socket, &address, &guessed).is_empty());
    let dir = tempfile::tempdir().unwrap();
    let files = write_all(dir.path(), &[info_reply, token_reply]);

    let status = decode_status("teeworlds", &files);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    let status = status.json();
    assert_eq!(status["protocol"], "teeworlds");
    assert_eq!(status["raw"]["reply"], "inf3 0.7");
    assert_eq!(status["name"], "Café Zoë");
    assert_eq!(status["complete"], true, "{status}");

    // Each packet on its own: the header's tokens and the packed numbers, named.
    let ran = run(&["decode", "teeworlds", files[1].to_str().unwrap()]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stdout.contains("server_token"), "{}", ran.stdout);
    let ran = run(&["decode", "teeworlds", files[0].to_str().unwrap()]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stdout.contains("skill_level"), "{}", ran.stdout);
}

// --- Captures ---

#[test]
fn a_tcpdump_capture_of_loopback_queries_decodes_and_makes_statuses() {
    let server = serve();
    let address = server.addr("samp");
    let port: u16 = address.rsplit(':').next().unwrap().parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("queries.pcap");
    let Some((samp, gamespy)) = Tcpdump::capture(&file, "lo", &[], port, || {
        (
            run(&["query", "samp", &address, "--json"]).json(),
            run(&["query", "gamespy1", &address, "--json"]).json(),
        )
    }) else {
        return;
    };
    let file = file.to_str().unwrap();
    let port = port.to_string();

    // Every datagram, its direction telling request from reply.
    let ran = run(&["decode", "samp", file, "--port", &port]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let decoded = ran.json();
    let datagrams = decoded["datagrams"].as_array().unwrap();
    let kinds = |kind: &str| datagrams.iter().filter(|d| d["type"] == kind).count();
    // `i`, `r` and `d` each way.
    assert!(kinds("request") >= 3 && kinds("reply") >= 3, "{decoded:#}");
    assert!(
        datagrams[0]["file"]
            .as_str()
            .unwrap()
            .contains("#1 127.0.0.1:"),
        "{decoded:#}"
    );

    // Per client, the replies make the status the query printed.
    for (protocol, live) in [("samp", samp), ("gamespy1", gamespy)] {
        let ran = run(&["decode", protocol, file, "--port", &port, "--status"]);
        assert_eq!(ran.code, Some(0), "{protocol}: {}", ran.stderr);
        let lines = ran.json_lines();
        assert_eq!(lines.len(), 1, "{protocol}: one client");
        assert_eq!(lines[0]["address"], address.as_str());
        assert_eq!(comparable(lines[0].clone()), comparable(live), "{protocol}");
    }

    // Cut inside the last packet (a tcpdump killed while writing): the packets before it,
    // and a note of where the file ends.
    let bytes = std::fs::read(file).unwrap();
    let path = dir.path().join("cut.pcap");
    std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
    let ran = run(&["decode", "samp", path.to_str().unwrap(), "--port", &port]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let cut = ran.json()["datagrams"].as_array().unwrap().clone();
    // The last packet, a GameSpy v1 reply, is not a SA:MP datagram: the same ones are read.
    assert_eq!(cut.len(), datagrams.len(), "{cut:#?}\n{datagrams:#?}");
    assert!(
        ran.stderr.contains("cut.pcap: the file ends inside packet")
            && ran.stderr.contains("the packets before it are read"),
        "{}",
        ran.stderr
    );
    // A packet length past any sense is a broken file: one error line.
    let path = dir.path().join("broken.pcap");
    std::fs::write(&path, corrupt(&bytes)).unwrap();
    let ran = run(&["decode", "samp", path.to_str().unwrap(), "--port", &port]);
    ran.assert_error(MALFORMED, &["broken.pcap", "packet 1", "snapshot length"]);
    // No datagram of that port.
    let ran = run(&["decode", "sqp", file]);
    ran.assert_error(MALFORMED, &["no UDP datagram to or from port 7779"]);
}

/// `capture` with its first packet's captured length made enormous.
fn corrupt(capture: &[u8]) -> Vec<u8> {
    let mut bytes = capture.to_vec();
    bytes[24 + 8..24 + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    bytes
}

#[test]
fn files_that_are_not_captures_are_read_as_datagrams() {
    let dir = tempfile::tempdir().unwrap();
    // Starts like a pcap file but is cut inside its header.
    let path = dir.path().join("short.pcap");
    std::fs::write(&path, [0xd4, 0xc3, 0xb2, 0xa1, 2, 0]).unwrap();
    let ran = run(&["decode", "samp", path.to_str().unwrap()]);
    ran.assert_error(MALFORMED, &["short.pcap", "pcap"]);
}
