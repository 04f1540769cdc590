//! SA:MP / open.mp golden tests: the synthetic vectors and a real capture decode to reviewed
//! snapshots; canonical packets re-encode to the same bytes.

use query_specs::samp::{Header, Reply, ReplyBody, Request, RequestBody, OP_PING};
use query_tests::{fixture_hex, read_capture};
use query_wire::{Decode, Encode, TextEncoding};

fn vector(name: &str) -> Vec<u8> {
    fixture_hex(&format!("samp/{name}.hex"))
}

/// Decodes a reply and checks that it re-encodes to the same bytes.
fn reply(bytes: &[u8]) -> Reply<'_> {
    let packet = Reply::from_bytes(bytes).unwrap();
    assert_eq!(packet.to_vec().unwrap(), bytes, "reply re-encodes");
    assert_eq!(packet.encoded_len(()), bytes.len());
    packet
}

#[test]
fn client_list_request_and_reply() {
    let request_bytes = vector("samp_c_request");
    let request = Request::from_bytes(&request_bytes).unwrap();
    assert_eq!(request.to_vec().unwrap(), request_bytes);
    assert_eq!(
        request.header,
        Header {
            address: [127, 0, 0, 1],
            port: 7777,
            opcode: b'c'
        }
    );
    assert_eq!(request.body, RequestBody::Clients);
    insta::assert_yaml_snapshot!("client_list_request", request);

    let bytes = vector("samp_c_response");
    let packet = reply(&bytes);
    assert_eq!(packet.header, request.header);
    let ReplyBody::Clients(clients) = &packet.body else {
        panic!("expected a client list, got {packet:?}")
    };
    let summary: Vec<_> = clients
        .iter()
        .map(|c| (c.name.decode(TextEncoding::Windows1252), c.score))
        .collect();
    assert_eq!(summary, [("John".into(), 5), ("Bob".into(), -7)]);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn ping_is_echoed_whole() {
    let request_bytes = vector("samp_p_request");
    assert_eq!(request_bytes.len(), 15);
    let request = Request::from_bytes(&request_bytes).unwrap();
    assert_eq!(request.body, RequestBody::Ping([0x12, 0x34, 0x56, 0x78]));
    assert_eq!(request.to_vec().unwrap(), request_bytes);

    let bytes = vector("samp_p_response");
    let packet = reply(&bytes);
    assert_eq!(packet.header.opcode, OP_PING);
    assert_eq!(packet.body, ReplyBody::Ping([0x12, 0x34, 0x56, 0x78]));
    // The reply is the request, byte for byte.
    assert_eq!(bytes, request_bytes);
    insta::assert_yaml_snapshot!((request, packet));
}

#[test]
fn open_mp_extra_info() {
    let bytes = vector("samp_o_response");
    let packet = reply(&bytes);
    let ReplyBody::Extra(extra) = &packet.body else {
        panic!("expected extra info, got {packet:?}")
    };
    assert_eq!(extra.discord.as_bytes(), b"discord.gg/x");
    assert!(extra.light_banner.as_bytes().is_empty());
    assert!(extra.dark_banner.as_bytes().is_empty());
    assert!(extra.logo.as_bytes().is_empty());
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn rcon_refusal_line() {
    let bytes = vector("samp_x_response_bad_password");
    let packet = reply(&bytes);
    let ReplyBody::Rcon(line) = &packet.body else {
        panic!("expected an RCON line, got {packet:?}")
    };
    assert_eq!(line.as_bytes(), b"Invalid RCON password.");
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn header_mismatch_is_a_different_packet() {
    let mut bytes = vector("samp_c_response");
    bytes[0] = b'X';
    let err = Reply::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Reply.header");
    assert_eq!(err.offset(), 0);
}

#[test]
fn captured_server_info_players_and_rules() {
    let Some(datagrams) = read_capture("samp_1_response.txt") else {
        return;
    };
    assert_eq!(datagrams.len(), 3);
    let expected_header = [0x53, 0x41, 0x4d, 0x50, 0x5d, 0x77, 0x1a, 0xc9, 0x61, 0x1e];
    let replies: Vec<Reply<'_>> = datagrams
        .iter()
        .map(|d| {
            assert_eq!(&d[..10], &expected_header);
            reply(d)
        })
        .collect();

    let ReplyBody::Info(info) = &replies[0].body else {
        panic!("expected info first")
    };
    assert!(!info.password);
    assert_eq!((info.players, info.max_players), (34, 350));
    assert_eq!(
        info.hostname.decode(TextEncoding::Windows1252),
        "GFZONE: RPG Server [0.3.7]"
    );
    assert_eq!(
        info.language.decode(TextEncoding::Windows1252),
        "Romanian/English"
    );

    let ReplyBody::Players(players) = &replies[1].body else {
        panic!("expected detailed players second")
    };
    assert_eq!(players.len(), 34);
    let first = &players[0];
    assert_eq!(first.name.decode(TextEncoding::Windows1252), "Unchiu");
    assert_eq!((first.id, first.score, first.ping), (0, 33, 21));
    // Ids are sparse: 5 is missing between 4 and 6.
    assert_eq!(players[5].id, 6);

    let ReplyBody::Rules(rules) = &replies[2].body else {
        panic!("expected rules third")
    };
    assert_eq!(rules.len(), 6);
    let version = rules
        .iter()
        .find(|r| r.name.as_bytes() == b"version")
        .unwrap();
    assert_eq!(version.value.decode(TextEncoding::Windows1252), "0.3.7-R2");

    insta::assert_yaml_snapshot!(replies);
}
