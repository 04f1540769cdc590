//! OneQuery V2 golden tests: the synthetic vectors decode to reviewed snapshots and re-encode to
//! the same bytes.

use query_specs::onequery::{
    Family, Payload, QueryReply, Reply, ReplyBody, ReplyFamily, ReplyFlags, Request, RequestFlags,
    KIND_BASIC, KIND_CHALLENGE, KIND_PLAYERS,
};
use query_tests::fixture_hex;
use query_wire::{Decode, Encode, ErrorKind, Uuid};

fn vector(name: &str) -> Vec<u8> {
    fixture_hex(&format!("onequery/{name}.hex"))
}

/// Decodes a request and checks that it re-encodes to the same bytes.
fn request(bytes: &[u8]) -> Request<'_> {
    let packet = Request::from_bytes(bytes).unwrap();
    assert_eq!(packet.to_vec().unwrap(), bytes, "request re-encodes");
    packet
}

/// Decodes a reply and checks that it re-encodes to the same bytes.
fn reply(bytes: &[u8]) -> Reply<'_> {
    let packet = Reply::from_bytes(bytes).unwrap();
    assert_eq!(packet.to_vec().unwrap(), bytes, "reply re-encodes");
    assert_eq!(packet.encoded_len(()), bytes.len());
    packet
}

fn query_reply<'a, 'b>(packet: &'a Reply<'b>) -> &'a QueryReply<'b> {
    match &packet.body {
        ReplyBody::Query(query) => query,
        other => panic!("expected a query reply, got {other:?}"),
    }
}

#[test]
fn challenge_request_is_nine_bytes() {
    let bytes = vector("onequery_challenge_request");
    let packet = request(&bytes);
    assert_eq!(bytes.len(), 9);
    assert_eq!(packet.family, Family::OneQuery);
    assert_eq!(packet.kind, KIND_CHALLENGE);
    assert!(packet.query.is_none());
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn challenge_reply_carries_the_token() {
    let bytes = vector("onequery_challenge_response");
    let packet = reply(&bytes);
    let token = vector("onequery_token_example");
    match &packet.body {
        ReplyBody::Challenge(challenge) => assert_eq!(challenge.token.as_slice(), token),
        other => panic!("expected a challenge, got {other:?}"),
    }
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn basic_request_is_the_full_51_byte_layout() {
    let bytes = vector("onequery_basic_request");
    let packet = request(&bytes);
    assert_eq!(bytes.len(), 51);
    assert_eq!(packet.kind, KIND_BASIC);
    let query = packet.query.as_ref().unwrap();
    assert_eq!(query.request_id, 0x0102_0304);
    assert_eq!(query.flags, RequestFlags::empty());
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn players_request_with_auth_token() {
    let bytes = vector("onequery_players_request_with_auth");
    let packet = request(&bytes);
    assert_eq!(packet.kind, KIND_PLAYERS);
    let query = packet.query.as_ref().unwrap();
    assert!(query.flags.contains(RequestFlags::HAS_AUTH_TOKEN));
    assert_eq!(query.auth_token, Some("my-secret-token"));
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn basic_reply() {
    let bytes = vector("onequery_basic_response");
    let packet = reply(&bytes);
    assert_eq!(packet.family, ReplyFamily::OneReply);
    let query = query_reply(&packet);
    assert_eq!(query.request_id, 0x0102_0304);
    let [Payload::ServerInfo(info)] = query.payload.as_slice() else {
        panic!("expected one SERVER_INFO, got {:?}", query.payload)
    };
    assert_eq!((info.server_name, info.motd), ("Hytale Server", "Welcome!"));
    assert_eq!((info.player_count, info.max_players), (1, 100));
    assert_eq!(info.version, "2026.01.13-dcad8778f");
    assert_eq!((info.protocol_version, info.protocol_hash), (2, "1A2B3C4D"));
    assert_eq!((info.host, info.port), (None, None));
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn basic_reply_with_address() {
    let bytes = vector("onequery_basic_response_with_address");
    let packet = reply(&bytes);
    let query = query_reply(&packet);
    assert!(query.flags.contains(ReplyFlags::HAS_ADDRESS));
    let [Payload::ServerInfo(info)] = query.payload.as_slice() else {
        panic!("expected one SERVER_INFO")
    };
    assert_eq!(
        (info.host, info.port),
        (Some("play.example.com"), Some(5520))
    );
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn auth_required_reply_still_carries_basic() {
    let bytes = vector("onequery_auth_required_response");
    let packet = reply(&bytes);
    let query = query_reply(&packet);
    assert_eq!(query.flags, ReplyFlags::AUTH_REQUIRED);
    assert!(matches!(
        query.payload.as_slice(),
        [Payload::ServerInfo(info)] if info.server_name == "Hytale Server"
    ));
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn players_reply_uuid_halves_are_big_endian() {
    let bytes = vector("onequery_players_response");
    let packet = reply(&bytes);
    let query = query_reply(&packet);
    let [Payload::PlayerList(list)] = query.payload.as_slice() else {
        panic!("expected one PLAYER_LIST")
    };
    assert_eq!((list.total, list.count, list.offset), (2, 2, 0));
    let names: Vec<_> = list.players.iter().map(|p| p.username).collect();
    assert_eq!(names, ["Alice", "Bob"]);
    assert_eq!(
        list.players[0].uuid,
        Uuid::parse_str("00112233-4455-6677-8899-aabbccddeeff").unwrap()
    );
    assert_eq!(
        list.players[1].uuid,
        Uuid::parse_str("123e4567-e89b-12d3-a456-426614174000").unwrap()
    );
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn address_fields_follow_the_flag_on_encode() {
    let bytes = vector("onequery_basic_response_with_address");
    let mut packet = Reply::from_bytes(&bytes).unwrap();
    let ReplyBody::Query(query) = &mut packet.body else {
        panic!("expected a query reply")
    };
    // Claim an address without carrying one: the encoder refuses instead of writing garbage.
    query.flags.remove(ReplyFlags::HAS_ADDRESS);
    assert!(matches!(
        packet.to_vec().unwrap_err().kind(),
        ErrorKind::Invalid(_)
    ));
}

#[test]
fn unknown_tlv_type_is_kept() {
    let mut bytes = vector("onequery_basic_response");
    // TLV type lives at bytes 17..19; make it 0x0099.
    bytes[17] = 0x99;
    let packet = Reply::from_bytes(&bytes).unwrap();
    let query = query_reply(&packet);
    assert!(matches!(
        query.payload.as_slice(),
        [Payload::Unknown(0x0099, body)] if body.len() == 0x45
    ));
    assert_eq!(packet.to_vec().unwrap(), bytes);
}

#[test]
fn hyquery2_family_has_the_same_layout() {
    let mut bytes = vector("onequery_basic_request");
    bytes[..8].copy_from_slice(b"HYQUERY2");
    let packet = Request::from_bytes(&bytes).unwrap();
    assert_eq!(packet.family, Family::HyQuery2);
    assert_eq!(packet.family.reply(), ReplyFamily::HyReply2);
    assert_eq!(packet.to_vec().unwrap(), bytes);
}

#[test]
fn truncated_datagram_fails_at_the_payload_length() {
    let bytes = vector("onequery_basic_response");
    // Keep the header's payload length but cut the datagram inside the motd string: the
    // payload's frame (73 bytes from byte 17) is what is found missing first.
    let err = Reply::from_bytes(&bytes[..40]).unwrap_err();
    assert_eq!(err.path_string(), "Reply.body.payload");
    assert_eq!(err.offset(), 17);
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 73, have: 23 });
}

#[test]
fn string_longer_than_its_entry_names_the_field() {
    let mut bytes = vector("onequery_basic_response");
    // The motd's u16 length (bytes 36..38) says 64; the SERVER_INFO entry ends 52 bytes later.
    assert_eq!(&bytes[36..38], &[8, 0]);
    bytes[36] = 64;
    let err = Reply::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Reply.body.payload[0].motd");
    assert_eq!(err.offset(), 38);
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 64, have: 52 });
}
