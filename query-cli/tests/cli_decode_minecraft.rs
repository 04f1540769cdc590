//! `gsq decode minecraft --status`: a Java server's bytes in read order, split across files
//! anywhere (as a capture of the TCP stream holds them), make the status `gsq query` prints;
//! a legacy (pre-1.7) reply too; bytes that stop short say so.

mod cli_support;

use std::path::PathBuf;

use serde_json::Value;

use cli_support::run;

/// Exit code of bytes that do not decode.
const MALFORMED: i32 = 9;

fn varint(mut value: u32, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A frame: its length, then `id` and `payload`.
fn frame(id: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(u32::try_from(payload.len() + 1).unwrap(), &mut out);
    out.push(id);
    out.extend_from_slice(payload);
    out
}

/// The status response and the pong a server sends, back to back.
fn server_bytes() -> Vec<u8> {
    let json = r#"{"version":{"name":"1.21.4","protocol":769},"players":{"max":20,"online":3,"sample":[{"name":"Alex","id":"069a79f4-44e9-4726-a5be-fca90e38aaf5"}]},"description":{"text":"Hello ","extra":[{"text":"§aworld"}]}}"#;
    let mut payload = Vec::new();
    varint(u32::try_from(json.len()).unwrap(), &mut payload);
    payload.extend_from_slice(json.as_bytes());
    let mut bytes = frame(0x00, &payload);
    bytes.extend(frame(0x01, &0x0102_0304_0506_0708_i64.to_be_bytes()));
    bytes
}

fn write_pieces(dir: &tempfile::TempDir, bytes: &[u8], cuts: &[usize]) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut start = 0;
    for (i, &end) in cuts.iter().chain(std::iter::once(&bytes.len())).enumerate() {
        let path = dir.path().join(format!("read{i}.bin"));
        std::fs::write(&path, &bytes[start..end]).unwrap();
        paths.push(path);
        start = end;
    }
    paths
}

fn decode_status(paths: &[PathBuf]) -> cli_support::Ran {
    let mut args = vec!["decode", "minecraft", "--status"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    run(&args)
}

#[test]
fn the_servers_bytes_split_anywhere_make_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = server_bytes();
    // Inside the length, inside the JSON, between the frames' bytes of the pong.
    let paths = write_pieces(&dir, &bytes, &[1, 40, bytes.len() - 4]);
    let ran = decode_status(&paths);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let status: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(status["protocol"], "minecraft", "{status:#}");
    assert_eq!(status["name"], "Hello world", "{status:#}");
    assert_eq!(status["version"], "1.21.4");
    assert_eq!(status["num_players"], 3);
    assert_eq!(status["max_players"], 20);
    assert_eq!(status["players"][0]["name"], "Alex", "{status:#}");
}

#[test]
fn a_legacy_reply_makes_the_status_too() {
    let dir = tempfile::tempdir().unwrap();
    let text = "§1\u{0}47\u{0}1.4.7\u{0}An old server\u{0}5\u{0}20";
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut bytes = vec![0xff];
    bytes.extend(u16::try_from(units.len()).unwrap().to_be_bytes());
    for unit in units {
        bytes.extend(unit.to_be_bytes());
    }
    let paths = write_pieces(&dir, &bytes, &[2, 7]);
    let ran = decode_status(&paths);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let status: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(status["name"], "An old server", "{status:#}");
    assert_eq!(status["version"], "1.4.7");
    assert_eq!(status["num_players"], 5);
    assert_eq!(status["max_players"], 20);
}

#[test]
fn bytes_that_stop_short_are_an_error_not_a_status() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = server_bytes();
    let paths = write_pieces(&dir, &bytes[..60], &[20]);
    let ran = decode_status(&paths);
    assert_eq!(ran.code, Some(MALFORMED), "{ran:#?}");
    assert!(ran.stdout.is_empty(), "{ran:#?}");
    assert!(ran.stderr.starts_with("gsq: error: "), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("short of a whole frame"),
        "{}",
        ran.stderr
    );
}

/// A pcap file (Ethernet) of `frames`.
fn pcap(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut file = Vec::new();
    file.extend_from_slice(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]);
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&65535u32.to_le_bytes());
    file.extend_from_slice(&1u32.to_le_bytes());
    for (i, frame) in frames.iter().enumerate() {
        let len = u32::try_from(frame.len()).unwrap();
        file.extend_from_slice(&u32::try_from(i).unwrap().to_le_bytes());
        file.extend_from_slice(&0u32.to_le_bytes());
        file.extend_from_slice(&len.to_le_bytes());
        file.extend_from_slice(&len.to_le_bytes());
        file.extend_from_slice(frame);
    }
    file
}

/// A TCP segment between 127.0.0.1:`from` and 127.0.0.1:`to`.
fn segment(from: u16, to: u16, sequence: u32, syn: bool, payload: &[u8]) -> Vec<u8> {
    let builder = etherparse::PacketBuilder::ethernet2([0; 6], [0; 6])
        .ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
        .tcp(from, to, sequence, 65535);
    let builder = if syn { builder.syn() } else { builder };
    let mut frame = Vec::new();
    builder.write(&mut frame, payload).unwrap();
    frame
}

#[test]
fn a_captures_tcp_streams_are_put_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = server_bytes();
    let (a, rest) = bytes.split_at(30);
    let (b, c) = rest.split_at(rest.len() - 10);
    // The server's sequence numbers wrap inside the reply; its segments come out of order,
    // one twice, and the client's bytes and a UDP datagram sit between them.
    let server_isn = u32::MAX - 40;
    let at = |offset: usize| server_isn.wrapping_add(1 + u32::try_from(offset).unwrap());
    let mut udp = Vec::new();
    etherparse::PacketBuilder::ethernet2([0; 6], [0; 6])
        .ipv4([127, 0, 0, 1], [127, 0, 0, 1], 64)
        .udp(25565, 40000)
        .write(&mut udp, b"not this")
        .unwrap();
    let frames = vec![
        segment(40000, 25565, 7, true, &[]),
        segment(25565, 40000, server_isn, true, &[]),
        segment(40000, 25565, 8, false, b"\x10\x00handshake bytes"),
        segment(25565, 40000, at(a.len()), false, b),
        udp,
        segment(25565, 40000, at(0), false, a),
        segment(25565, 40000, at(0), false, a),
        segment(25565, 40000, at(a.len() + b.len()), false, c),
    ];
    let path = dir.path().join("ping.pcap");
    std::fs::write(&path, pcap(&frames)).unwrap();
    let ran = run(&["decode", "minecraft", path.to_str().unwrap(), "--status"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    let status: Value = serde_json::from_str(ran.stdout.trim()).unwrap();
    assert_eq!(status["name"], "Hello world", "{status:#}");
    assert_eq!(status["address"], "127.0.0.1:25565", "{status:#}");
    assert_eq!(status["num_players"], 3);

    // A segment the capture missed: no status, and the error says which bytes are missing.
    let missing = vec![
        segment(25565, 40001, 100, true, &[]),
        segment(25565, 40001, 101, false, a),
        segment(
            25565,
            40001,
            101 + u32::try_from(a.len() + b.len()).unwrap(),
            false,
            c,
        ),
    ];
    std::fs::write(&path, pcap(&missing)).unwrap();
    let ran = run(&["decode", "minecraft", path.to_str().unwrap(), "--status"]);
    assert_eq!(ran.code, Some(MALFORMED), "{ran:#?}");
    assert!(
        ran.stderr.contains(&format!(
            "bytes 30..{} of the stream are not in the capture",
            a.len() + b.len()
        )),
        "{}",
        ran.stderr
    );

    // Without --status, a TCP protocol's capture says how to read it.
    let ran = run(&["decode", "minecraft", path.to_str().unwrap()]);
    assert_eq!(ran.code, Some(2), "{ran:#?}");
    assert!(ran.stderr.contains("--status"), "{}", ran.stderr);
}
