//! `gsq decode`: fixtures and hand-built datagrams in, the declared packets out as JSON.

mod cli_support;

use std::path::PathBuf;

use serde_json::{json, Value};

use cli_support::{fixture, run, run_with_stdin};

/// Exit code of a bad argument or an unreadable file.
const USAGE: i32 = 2;
/// Exit code of bytes that do not decode.
const MALFORMED: i32 = 9;

fn hex_bytes(relative: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(relative)).unwrap();
    let digits: String = text.split_whitespace().collect();
    hex::decode(digits).unwrap()
}

/// Writes raw datagrams into a temporary directory.
struct Files {
    dir: tempfile::TempDir,
    paths: Vec<PathBuf>,
}

impl Files {
    fn new(datagrams: &[&[u8]]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let paths = datagrams
            .iter()
            .enumerate()
            .map(|(i, bytes)| {
                let path = dir.path().join(format!("part{i}.bin"));
                std::fs::write(&path, bytes).unwrap();
                path
            })
            .collect();
        Files { dir, paths }
    }

    fn arg(&self, i: usize) -> &str {
        self.paths[i].to_str().unwrap()
    }
}

#[test]
fn sqp_document_reply_decodes_with_its_chunk_set_found() {
    let ran = run(&[
        "decode",
        "sqp",
        "--hex",
        &fixture("sqp/sqp_query_response.hex"),
    ]);
    let out = ran.json();
    assert_eq!(out["protocol"], "sqp");
    assert_eq!(out["type"], "reply");
    assert_eq!(out["chunks"], json!(["info"]));
    let query = &out["packet"]["Query"];
    assert_eq!(query["version"], 1);
    let info = &query["chunks"]["server_info"];
    assert_eq!(info["server_name"], "UE4 Dedicated Server");
    assert_eq!(info["map"], "Highrise");
    assert_eq!(info["max_players"], 16);
    assert_eq!(info["port"], 7777);
    assert!(
        ran.stderr
            .contains("the reply holds chunks info (not rules,players,teams,metrics)"),
        "{}",
        ran.stderr
    );
    // Fields come in declaration order, as on the wire.
    let text = ran.stdout;
    assert!(text.find("current_players").unwrap() < text.find("server_name").unwrap());
    assert!(text.find("\"protocol\"").unwrap() < text.find("\"packet\"").unwrap());
}

#[test]
fn sqp_with_the_wrong_chunk_set_names_the_offset_and_field() {
    let ran = run(&[
        "decode",
        "sqp",
        "--hex",
        "--chunks",
        "info,rules",
        &fixture("sqp/sqp_query_response.hex"),
    ]);
    ran.assert_error(
        MALFORMED,
        &[
            "malformed sqp reply",
            "Response.",
            "server_rules",
            "at byte",
        ],
    );
    let ran = run(&[
        "decode",
        "sqp",
        "--hex",
        "--chunks",
        "0x01",
        &fixture("sqp/sqp_query_response.hex"),
    ]);
    assert_eq!(ran.json()["chunks"], json!(["info"]));
    assert_eq!(ran.stderr, "", "no note when the chunks are given");
}

#[test]
fn sqp_requests_and_challenges() {
    let out = run(&[
        "decode",
        "sqp",
        "--hex",
        &fixture("sqp/sqp_query_request.hex"),
    ])
    .json();
    assert_eq!(out["type"], "request");
    assert_eq!(out["packet"]["Query"]["version"], 1);
    assert_eq!(out["packet"]["Query"]["requested"], "SERVER_INFO");

    // Five bytes `00 ...` read both ways: zero padding means a request, anything else a reply.
    let ran = run(&[
        "decode",
        "sqp",
        "--hex",
        &fixture("sqp/sqp_challenge_request.hex"),
    ]);
    assert_eq!(ran.json()["type"], "request");
    assert!(ran.stderr.contains("--as reply"), "{}", ran.stderr);
    let ran = run(&[
        "decode",
        "sqp",
        "--hex",
        &fixture("sqp/sqp_challenge_response.hex"),
    ]);
    let out = ran.json();
    assert_eq!(out["type"], "reply");
    assert_eq!(out["packet"]["Challenge"]["challenge"], 0x8090_2348_u32);
    let forced = run(&[
        "decode",
        "sqp",
        "--hex",
        "--as",
        "request",
        &fixture("sqp/sqp_challenge_response.hex"),
    ])
    .json();
    assert_eq!(forced["type"], "request");
}

#[test]
fn sqp_split_reply_is_put_together_in_packet_order() {
    let whole = hex_bytes("sqp/sqp_query_response.hex");
    // 01 | challenge (4) | version (2) | current | last | length (2) | payload
    let (header, payload) = whole.split_at(11);
    let (first, second) = payload.split_at(40);
    let fragment = |current: u8, part: &[u8]| {
        let mut bytes = header[..7].to_vec();
        bytes.extend_from_slice(&[current, 1]);
        bytes.extend_from_slice(&u16::try_from(part.len()).unwrap().to_be_bytes());
        bytes.extend_from_slice(part);
        bytes
    };
    let files = Files::new(&[&fragment(1, second), &fragment(0, first)]);
    let out = run(&["decode", "sqp", files.arg(0), files.arg(1)]).json();
    assert_eq!(out["type"], "reply");
    assert_eq!(out["chunks"], json!(["info"]));
    assert_eq!(out["packet"]["packets"], 2);
    assert_eq!(
        out["packet"]["chunks"]["server_info"]["server_name"],
        "UE4 Dedicated Server"
    );

    // A missing part is named.
    let ran = run(&["decode", "sqp", files.arg(0)]);
    assert_eq!(ran.code, Some(MALFORMED), "{ran:#?}");
    let files_one = Files::new(&[&fragment(1, second), &fragment(1, second)]);
    run(&["decode", "sqp", files_one.arg(0), files_one.arg(1)])
        .assert_error(MALFORMED, &["not packets 0 to 1 once each"]);
    drop(files.dir);
}

#[test]
fn onequery_request_and_replies() {
    let out = run(&[
        "decode",
        "onequery",
        "--hex",
        &fixture("onequery/onequery_challenge_request.hex"),
    ])
    .json();
    assert_eq!(
        out,
        json!({"protocol": "onequery", "type": "request", "packet": {"family": "OneQuery", "kind": 0, "query": null}})
    );

    let out = run(&[
        "decode",
        "onequery",
        "--hex",
        &fixture("onequery/onequery_players_response.hex"),
    ])
    .json();
    assert_eq!(out["type"], "reply");
    let list = &out["packet"]["body"]["Query"]["payload"][0]["PlayerList"];
    assert_eq!(list["total"], 2);
    assert_eq!(list["players"][0]["username"], "Alice");
    assert_eq!(
        list["players"][0]["uuid"],
        "00112233-4455-6677-8899-aabbccddeeff"
    );

    let out = run(&[
        "decode",
        "onequery",
        "--hex",
        &fixture("onequery/onequery_basic_response_with_address.hex"),
    ])
    .json();
    let info = &out["packet"]["body"]["Query"]["payload"][0]["ServerInfo"];
    assert_eq!(info["server_name"], "Hytale Server");
    assert_eq!(info["host"], "play.example.com");
    assert_eq!(info["port"], 5520);
}

#[test]
fn samp_datagrams_and_text_encodings() {
    let out = run(&[
        "decode",
        "samp",
        "--hex",
        &fixture("samp/samp_c_response.hex"),
        &fixture("samp/samp_x_response_bad_password.hex"),
    ])
    .json();
    let datagrams = out["datagrams"].as_array().unwrap();
    assert_eq!(datagrams.len(), 2);
    assert!(datagrams[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("samp_c_response.hex"));
    assert_eq!(
        datagrams[0]["packet"]["body"]["Clients"],
        json!([{"name": "John", "score": 5}, {"name": "Bob", "score": -7}])
    );
    assert_eq!(
        datagrams[1]["packet"]["body"]["Rcon"],
        "Invalid RCON password."
    );

    // An `i` reply whose host name is Windows-1251 text.
    let mut info = b"SAMP\x7f\x00\x00\x01\x61\x1ei".to_vec();
    info.push(0); // no password
    info.extend_from_slice(&1u16.to_le_bytes());
    info.extend_from_slice(&50u16.to_le_bytes());
    let hostname = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]; // "Привет"
    info.extend_from_slice(&6u32.to_le_bytes());
    info.extend_from_slice(&hostname);
    info.extend_from_slice(&0u32.to_le_bytes());
    info.extend_from_slice(&0u32.to_le_bytes());
    let files = Files::new(&[&info]);
    let cyrillic = run(&["decode", "samp", "--encoding", "cp1251", files.arg(0)]).json();
    assert_eq!(cyrillic["packet"]["body"]["Info"]["hostname"], "Привет");
    assert_eq!(cyrillic["packet"]["header"]["port"], 7777);
    let western = run(&["decode", "samp", files.arg(0)]).json();
    assert_eq!(western["packet"]["body"]["Info"]["hostname"], "Ïðèâåò");

    // A ping reads both ways; the note says so.
    let ran = run(&[
        "decode",
        "samp",
        "--hex",
        &fixture("samp/samp_p_request.hex"),
    ]);
    assert_eq!(
        ran.json()["packet"]["body"]["Ping"],
        json!([0x12, 0x34, 0x56, 0x78])
    );
    assert!(
        ran.stderr.contains("also decode as a samp reply"),
        "{}",
        ran.stderr
    );
}

#[test]
fn gamespy1_parts_out_of_order_make_one_reply() {
    let first: &[u8] = b"\\hostname\\Fort\\mapname\\Face\\numplayers\\2\\queryid\\7.1";
    let second: &[u8] =
        b"\\player_0\\Ann\\frags_0\\3\\player_1\\Bj\xf6rn\\frags_1\\ 5\\final\\\\queryid\\7.2";
    let files = Files::new(&[second, first]);
    let out = run(&["decode", "gamespy1", files.arg(0), files.arg(1)]).json();
    assert_eq!(out["type"], "reply");
    let packet = &out["packet"];
    assert_eq!(packet["complete"], true);
    assert_eq!(packet["query_id"], 7);
    assert_eq!(packet["reply"]["hostname"], "Fort");
    assert_eq!(packet["reply"]["map_name"], "Face");
    assert_eq!(packet["reply"]["num_players"], 2);
    assert_eq!(packet["reply"]["players"][1]["name"], "Björn");
    assert_eq!(packet["reply"]["players"][1]["score"], 5);

    // Without the first part: what arrived, marked incomplete.
    let out = run(&["decode", "gamespy1", files.arg(0)]).json();
    assert_eq!(out["packet"]["complete"], false);
    assert_eq!(out["packet"]["missing_parts"], json!([1]));

    // A request is a datagram of query keywords.
    let ran = run(&[
        "decode",
        "gamespy1",
        "--hex",
        &fixture("gamespy1/gamespy1_info_request.hex"),
    ]);
    assert_eq!(
        ran.json(),
        json!({"protocol": "gamespy1", "type": "request", "packet": ["Info"]})
    );
    let reply = run(&[
        "decode",
        "gamespy1",
        "--as",
        "reply",
        "--hex",
        &fixture("gamespy1/gamespy1_info_request.hex"),
    ])
    .json();
    assert_eq!(reply["type"], "reply");
}

#[test]
fn stdin_and_pretty_output() {
    let text = std::fs::read_to_string(fixture("samp/samp_c_request.hex")).unwrap();
    let ran = run_with_stdin(&["decode", "samp", "--hex", "--pretty", "-"], &text);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(
        ran.stdout
            .starts_with("{\n  \"protocol\": \"samp\",\n  \"type\": \"request\""),
        "{}",
        ran.stdout
    );
    let out: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(out["packet"]["header"]["opcode"], u32::from(b'c'));
}

#[test]
fn bytes_that_are_no_packet_report_the_reading_that_got_furthest() {
    let files = Files::new(&[b"ONEREPLY\x01\x00\x00"]);
    run(&["decode", "onequery", files.arg(0)]).assert_error(
        MALFORMED,
        &["malformed onequery reply", "at byte", "as a request"],
    );
    let files = Files::new(&[b""]);
    run(&["decode", "samp", files.arg(0)])
        .assert_error(MALFORMED, &["malformed samp", "at byte 0"]);
    // Empty input is no GameSpy v1 packet either, nor is a lone backslash.
    for protocol in ["sqp", "onequery", "samp", "gamespy1", "a2s"] {
        run(&["decode", protocol, files.arg(0)])
            .assert_error(MALFORMED, &[&format!("malformed {protocol}"), "at byte 0"]);
    }
    let files = Files::new(&[b"\\"]);
    run(&["decode", "gamespy1", files.arg(0)])
        .assert_error(MALFORMED, &["malformed gamespy1 reply", "no reply"]);
}

#[test]
fn an_input_larger_than_a_datagram_is_refused() {
    let big = vec![0u8; 70_000];
    let files = Files::new(&[&big]);
    run(&["decode", "samp", files.arg(0)])
        .assert_error(USAGE, &["more than 65535 bytes", "one datagram per file"]);
}

#[test]
fn gamespy3_parts_out_of_order_make_one_reply() {
    // The second part starts inside the player section, in column `player_`, one value of
    // which the first part carried whole (`B`, cut at the first part's end, is replaced).
    let first: &[u8] = b"\x00\x10\x20\x30\x40splitnum\x00\x00\x00hostname\x00Fort \xc4\x00\x00\x01player_\x00\x00Ann\x00B\x00";
    let second: &[u8] =
        b"\x00\x10\x20\x30\x40splitnum\x00\x81\x01player_\x00\x01Bo\xeb\x00\x00\x00";
    let challenge: &[u8] = b"\x09\x10\x20\x30\x40123\x00";
    let files = Files::new(&[second, first, challenge, second]);
    let ran = run(&["decode", "gamespy3", files.arg(0), files.arg(1)]);
    let out = ran.json();
    assert_eq!(out["type"], "reply");
    let packet = &out["packet"];
    assert_eq!(packet["complete"], true);
    assert_eq!(packet["missing_parts"], json!([]));
    assert_eq!(
        packet["details"],
        json!([{"key": "hostname", "value": "Fort Ä"}])
    );
    assert_eq!(
        packet["tables"][0]["columns"][0],
        json!({"name": "player_", "values": ["Ann", "Boë"]})
    );

    // With --encoding, the joined text is read again in it; the challenge reply beside the
    // parts is decoded on its own, and a part given twice is noted and left out.
    let ran = run(&[
        "decode",
        "gamespy3",
        "--encoding",
        "cp1251",
        files.arg(0),
        files.arg(1),
        files.arg(2),
        files.arg(3),
    ]);
    let out = ran.json();
    let datagrams = out["datagrams"].as_array().unwrap();
    assert_eq!(datagrams.len(), 2);
    assert_eq!(datagrams[0]["file"], files.arg(2));
    assert_eq!(datagrams[0]["type"], "reply");
    assert_eq!(datagrams[1]["file"], "the joined reply");
    assert_eq!(datagrams[1]["packet"]["details"][0]["value"], "Fort Д");
    assert_eq!(
        datagrams[1]["packet"]["tables"][0]["columns"][0]["values"][1],
        "Boл"
    );

    // Without the first part: what arrived, marked incomplete.
    let out = run(&["decode", "gamespy3", files.arg(0), files.arg(3)]).json();
    assert_eq!(out["packet"]["complete"], false);
    assert_eq!(out["packet"]["missing_parts"], json!([0]));

    // Parts are no requests; a part that does not decode is named.
    run(&[
        "decode",
        "gamespy3",
        "--as",
        "request",
        files.arg(0),
        files.arg(1),
    ])
    .assert_error(USAGE, &["parts of a reply"]);
    let broken = Files::new(&[first, b"\x00\x10\x20\x30\x40splitnux\x00\x80\x00"]);
    run(&["decode", "gamespy3", broken.arg(0), broken.arg(1)])
        .assert_error(MALFORMED, &["malformed gamespy3 reply part", broken.arg(1)]);
}
