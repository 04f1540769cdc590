//! The Quake 3 family against real `statusResponse` replies captured from Quake 3, Call of
//! Duty 2, 4, United Offensive and MW2 (IW4x), Jedi Outcast, Jedi Academy and Urban Terror
//! servers: each decodes to a reviewed snapshot, its status agrees with another client
//! library's decode (GameQ), and it survives re-encoding and every truncation.

use std::net::SocketAddr;

use query_net::replay;
use query_net::{Options, Protocol};
use query_specs::quake3::Info;
use query_specs::quake3::{strip_colours, StatusResponse, ENCODING, STATUS_HEADER};
use query_tests::{read_capture, vectors_dir};
use query_wire::kv::{self, FromKeyValues, ToKeyValues};
use query_wire::Encode;

const CAPTURES: [&str; 21] = [
    "cod2_1",
    "cod2_2",
    "cod4_1",
    "cod4_2",
    "codmw2_1",
    "codmw2_2",
    "codmw2_3",
    "coduo_1",
    "coduo_2",
    "coduo_3",
    "coduo_4",
    "jediacademy_1",
    "jediacademy_2",
    "jediacademy_3",
    "jedioutcast_1",
    "jedioutcast_2",
    "jedioutcast_3",
    "quake3_1",
    "quake3_2",
    "urbanterror_1",
    "urbanterror_2",
];

/// The datagrams of a capture, or `None` (after the skip message) without the vectors.
fn capture(name: &str) -> Option<Vec<Vec<u8>>> {
    read_capture(&format!("gameq/quake3/{name}_response.txt"))
}

/// GameQ's decode of the same capture: the one server object in the file.
fn gameq(name: &str) -> serde_json::Value {
    let path = vectors_dir()
        .expect("checked by capture()")
        .join("captures/gameq/quake3")
        .join(format!("{name}_result.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let servers = json.as_object().unwrap();
    assert_eq!(servers.len(), 1);
    servers.values().next().unwrap().clone()
}

fn target() -> SocketAddr {
    "192.0.2.7:27960".parse().unwrap()
}

#[test]
fn every_capture_decodes_to_its_snapshot() {
    let mut decoded = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        assert_eq!(datagrams.len(), 1, "{name}: one datagram each");
        let reply = StatusResponse::decode(&datagrams[0], ENCODING)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(reply.info.is_some(), "{name}");
        insta::assert_yaml_snapshot!(format!("quake3_{name}"), reply);
        decoded += 1;
    }
    assert_eq!(decoded, CAPTURES.len());
    eprintln!("{decoded} of {} captures decoded", CAPTURES.len());
}

/// GameQ keeps colour codes; both sides lose them before comparing.
#[test]
fn status_agrees_with_gameq_on_name_map_slots_and_players() {
    let mut agreed = 0;
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let status = replay::status_from_replies(
            Protocol::Quake3,
            target(),
            &datagrams,
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let other = gameq(name);
        let text = |key: &str| {
            other[key]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: {key}"))
        };
        assert_eq!(status.name, strip_colours(text("sv_hostname")), "{name}");
        assert_eq!(status.map.as_deref(), Some(text("mapname")), "{name}");
        assert_eq!(
            status.max_players.to_string(),
            text("sv_maxclients"),
            "{name}"
        );
        let theirs: Vec<String> = other["players"]
            .as_array()
            .map(|players| {
                players
                    .iter()
                    .map(|p| strip_colours(p["name"].as_str().unwrap()).trim().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        // GameQ trims names before their colour codes go (`  ^1^^11  sTraTos  ^8` stays padded),
        // the names here keep the spaces they were sent with (`"BETEPAH                        "`
        // on cod2_1): both agree once trimmed after the codes go.
        let ours: Vec<&str> = status.players.iter().map(|p| p.name.trim()).collect();
        assert_eq!(ours, theirs, "{name}");
        assert_eq!(status.num_players as usize, theirs.len(), "{name}");
        assert_eq!(
            other["clients"].as_u64(),
            Some(theirs.len() as u64),
            "{name}"
        );
        // Scores and pings, which GameQ keeps as text.
        if let Some(players) = other["players"].as_array() {
            for (p, q) in status.players.iter().zip(players) {
                assert_eq!(p.score.unwrap().to_string(), q["frags"].as_str().unwrap());
                assert_eq!(p.ping.unwrap().to_string(), q["ping"].as_str().unwrap());
            }
        }
        // Raw text keeps the codes.
        assert_eq!(status.raw["hostname"], text("sv_hostname"), "{name}");
        assert_eq!(status.rules["mapname"], text("mapname"), "{name}");
        agreed += 1;
    }
    assert_eq!(agreed, CAPTURES.len());
    eprintln!("{agreed} of {} captures agree with GameQ", CAPTURES.len());
}

#[test]
fn call_of_duty_colour_codes_and_passwords() {
    let Some(datagrams) = capture("coduo_3") else {
        return;
    };
    let status =
        replay::status_from_replies(Protocol::Quake3, target(), &datagrams, &Options::default())
            .unwrap();
    // `^^77KeX^^55*^^33Pa^^11w3^^44eL`: CoD's two-digit codes.
    assert!(status.players.iter().any(|p| p.name == "KeX*Paw3eL"));
    assert_eq!(status.password, Some(false), "pswrd 0");
    assert_eq!(status.version.as_deref(), Some("1.41"), "shortversion");
    assert_eq!(status.game_type.as_deref(), Some("bas"));
}

/// Re-encoding gives the captured bytes back: the pairs in their order, each player line and
/// its newline through the declared [`Player`](query_specs::quake3::Player); blank lines at the end (MW2
/// ends with `\n\n`) are not kept. The declared [`Info`](query_specs::quake3::Info) writes its
/// fields first, so it is checked to decode to itself instead.
#[test]
fn replies_re_encode_byte_for_byte() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        let reply = StatusResponse::decode(bytes, ENCODING).unwrap();
        let body = &bytes[STATUS_HEADER.len()..];
        let line_end = body.iter().position(|&b| b == b'\n').unwrap();
        let mut out = Vec::from(STATUS_HEADER);
        for pair in kv::pairs(&body[..line_end]) {
            let pair = pair.unwrap();
            kv::KvSink::put_pair(&mut out, pair.key, None, pair.value).unwrap();
        }
        out.push(b'\n');
        // Each line writes its own newline.
        for p in &reply.players {
            out.extend(p.to_vec().unwrap());
        }
        let mut expected = bytes.as_slice();
        while expected.ends_with(b"\n\n") {
            expected = &expected[..expected.len() - 1];
        }
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(expected),
            "{name}"
        );

        let info = reply.info.unwrap();
        let encoded = info.to_vec_with(ENCODING).unwrap();
        assert_eq!(
            Info::from_bytes_with(&encoded, ENCODING).unwrap(),
            info,
            "{name}"
        );
    }
}

/// Every prefix of every capture either decodes (a cut at a line end is a shorter reply) or
/// fails with an error inside the input, never a panic.
#[test]
fn every_truncation_is_an_error_or_a_shorter_reply() {
    for name in CAPTURES {
        let Some(datagrams) = capture(name) else {
            return;
        };
        let bytes = &datagrams[0];
        for cut in 0..bytes.len() {
            match StatusResponse::decode(&bytes[..cut], ENCODING) {
                Ok(reply) => {
                    let full = StatusResponse::decode(bytes, ENCODING).unwrap();
                    assert!(reply.players.len() <= full.players.len(), "{name} at {cut}");
                }
                Err(e) => assert!(e.offset() <= cut, "{name} at {cut}: {e}"),
            }
        }
    }
}
