//! SQP golden tests: the Unity document's hex dumps and the reference client's fixtures decode to
//! reviewed snapshots, and canonical packets re-encode to the same bytes.

use query_specs::sqp::{ChunkSet, Chunks, QueryResponseFragment, Request, Response, Value};
use query_tests::{fixture_hex, vectors_dir};
use query_wire::{Decode, Encode, ErrorKind};

fn roundtrip_request(name: &str) -> Request {
    let bytes = fixture_hex(&format!("sqp/{name}.hex"));
    let packet = Request::from_bytes(&bytes).unwrap();
    assert_eq!(packet.to_vec().unwrap(), bytes, "{name} re-encodes");
    assert_eq!(packet.encoded_len(()), bytes.len());
    packet
}

#[test]
fn document_challenge_request() {
    let packet = roundtrip_request("sqp_challenge_request");
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn document_query_request() {
    let packet = roundtrip_request("sqp_query_request");
    let Request::Query(query) = &packet else {
        panic!("expected a query request, got {packet:?}")
    };
    assert_eq!(query.challenge, 0x8031_be18);
    assert_eq!(query.requested, ChunkSet::SERVER_INFO);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn document_challenge_response() {
    let bytes = fixture_hex("sqp/sqp_challenge_response.hex");
    let packet = Response::from_bytes_with(&bytes, ChunkSet::empty()).unwrap();
    assert_eq!(packet.to_vec_with(ChunkSet::empty()).unwrap(), bytes);
    let Response::Challenge(challenge) = &packet else {
        panic!("expected a challenge, got {packet:?}")
    };
    assert_eq!(challenge.challenge, 0x8090_2348);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn document_query_response() {
    let bytes = fixture_hex("sqp/sqp_query_response.hex");
    assert_eq!(bytes.len(), 102);
    let packet = Response::from_bytes_with(&bytes, ChunkSet::SERVER_INFO).unwrap();
    assert_eq!(packet.to_vec_with(ChunkSet::SERVER_INFO).unwrap(), bytes);
    let Response::Query(query) = &packet else {
        panic!("expected a query response, got {packet:?}")
    };
    let info = query.chunks.server_info.as_ref().unwrap();
    assert_eq!(
        (info.current_players, info.max_players, info.port),
        (0, 16, 7777)
    );
    assert_eq!(info.server_name, "UE4 Dedicated Server");
    assert_eq!(
        info.game_type,
        "/Script/ShooterGame.ShooterGame_TeamDeathMatch"
    );
    assert_eq!((info.build_id, info.map), ("001", "Highrise"));
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn document_query_response_truncated_names_offset_and_field() {
    let bytes = fixture_hex("sqp/sqp_query_response.hex");
    // The packet length (91, at bytes 9..11) promises more than the 84 bytes left after a cut.
    let err = Response::from_bytes_with(&bytes[..95], ChunkSet::SERVER_INFO).unwrap_err();
    assert_eq!(err.path_string(), "Response.chunks");
    assert_eq!(err.offset(), 11);
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 91, have: 84 });
}

/// Reads one reference-client fixture, or `None` when the vectors folder is absent.
fn reference(name: &str) -> Option<Vec<u8>> {
    let dir = vectors_dir()?;
    Some(std::fs::read(dir.join("sqp-reference").join(name)).unwrap())
}

fn requested_by(request: &[u8]) -> ChunkSet {
    match Request::from_bytes(request).unwrap() {
        Request::Query(query) => query.requested,
        other => panic!("expected a query request, got {other:?}"),
    }
}

/// A reference response with the chunks its request asked for, checked to re-encode.
fn reference_response(name: &str) -> Option<(ChunkSet, Vec<u8>)> {
    let request = reference(&format!("{name}_request"))?;
    let response = reference(&format!("{name}_response"))?;
    let requested = requested_by(&request);
    let packet = Response::from_bytes_with(&response, requested).unwrap();
    assert_eq!(
        packet.to_vec_with(requested).unwrap(),
        response,
        "{name} re-encodes"
    );
    Some((requested, response))
}

#[test]
fn reference_requests_roundtrip() {
    let names = [
        "challenge_success_request",
        "challenge_invalid_request",
        "info_single_request",
        "info_single_malformed_request",
        "rules_request",
        "player_request",
        "team_request",
        "metrics_request",
        "OLD_info_multi_request",
    ];
    let mut decoded = std::collections::BTreeMap::new();
    for name in names {
        let Some(bytes) = reference(name) else {
            return;
        };
        let packet = Request::from_bytes(&bytes).unwrap();
        assert_eq!(packet.to_vec().unwrap(), bytes, "{name} re-encodes");
        assert_eq!(packet.encoded_len(()), bytes.len());
        decoded.insert(name, packet);
    }
    insta::assert_yaml_snapshot!(decoded);
}

#[test]
fn reference_challenge_success() {
    let Some(good) = reference("challenge_success_response") else {
        return;
    };
    let packet = Response::from_bytes_with(&good, ChunkSet::empty()).unwrap();
    assert!(matches!(packet, Response::Challenge(c) if c.challenge == 0x100));
    assert_eq!(packet.to_vec_with(ChunkSet::empty()).unwrap(), good);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn reference_challenge_invalid_is_rejected_with_offset_and_path() {
    let Some(bad) = reference("challenge_invalid_response") else {
        return;
    };
    // First byte 01 instead of 00: not a challenge; read as a query response, the 4 bytes
    // after the type are its challenge and the version is missing.
    let err = Response::from_bytes_with(&bad, ChunkSet::empty()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 2, have: 0 });
    assert_eq!(err.offset(), 5);
    assert_eq!(err.path_string(), "Response.version");
}

#[test]
fn reference_info_single() {
    let Some((requested, bytes)) = reference_response("info_single") else {
        return;
    };
    let packet = Response::from_bytes_with(&bytes, requested).unwrap();
    let Response::Query(query) = &packet else {
        panic!("expected a query response")
    };
    let info = query.chunks.server_info.as_ref().unwrap();
    assert_eq!((info.current_players, info.max_players), (5, 10));
    assert_eq!(
        (info.server_name, info.game_type, info.build_id, info.map),
        ("my server", "ctf", "1", "map")
    );
    assert_eq!(info.port, 1025);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn reference_info_single_malformed_is_rejected_with_offset_and_path() {
    let Some(bytes) = reference("info_single_malformed_response") else {
        return;
    };
    // The name's length byte says 7 instead of 9, so "er" is read as the next length (0x65).
    let err = Response::from_bytes_with(&bytes, ChunkSet::SERVER_INFO).unwrap_err();
    assert_eq!(err.path_string(), "Response.chunks.server_info.game_type");
    assert_eq!(err.offset(), 28);
    assert_eq!(
        err.kind(),
        &ErrorKind::UnexpectedEnd {
            need: 101,
            have: 13
        }
    );
    assert_eq!(
        err.to_string(),
        "Response.chunks.server_info.game_type at byte 28: need 101 bytes, have 13"
    );
}

#[test]
fn reference_rules_one_of_each_type() {
    let Some((requested, bytes)) = reference_response("rules") else {
        return;
    };
    let packet = Response::from_bytes_with(&bytes, requested).unwrap();
    let Response::Query(query) = &packet else {
        panic!("expected a query response")
    };
    let rules = query.chunks.server_rules.as_ref().unwrap();
    let kinds: Vec<u8> = rules.iter().map(|r| r.value.tag()).collect();
    assert_eq!(kinds, [0, 1, 2, 3, 4]);
    assert_eq!(rules[4].value, Value::Str("string"));
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn reference_player_and_team_tables() {
    for name in ["player", "team"] {
        let Some((requested, bytes)) = reference_response(name) else {
            return;
        };
        let packet = Response::from_bytes_with(&bytes, requested).unwrap();
        let Response::Query(query) = &packet else {
            panic!("expected a query response")
        };
        let table = query
            .chunks
            .player_info
            .as_ref()
            .or(query.chunks.team_info.as_ref())
            .unwrap();
        assert_eq!(table.count, 2);
        let rows: Vec<_> = table.rows().collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].len(), 5);
        assert_eq!(rows[1][4], ("field5", &Value::Str("STRING")));
        insta::assert_yaml_snapshot!(name, packet);
    }
}

#[test]
// 3.14159 is the fixture's value, not an approximation of π.
#[allow(clippy::approx_constant)]
fn reference_metrics() {
    let Some((requested, bytes)) = reference_response("metrics") else {
        return;
    };
    let packet = Response::from_bytes_with(&bytes, requested).unwrap();
    let Response::Query(query) = &packet else {
        panic!("expected a query response")
    };
    let metrics = &query.chunks.metrics.as_ref().unwrap().values;
    assert_eq!(metrics, &[1.0, 0.0, 3.14159, 55.57, 438.2522, -123.456]);
    insta::assert_yaml_snapshot!(packet);
}

#[test]
fn reference_split_reply_reassembles_out_of_order() {
    let (Some(first), Some(second)) = (
        reference("OLD_info_multi_response_000"),
        reference("OLD_info_multi_response_001"),
    ) else {
        return;
    };
    let mut parts = [
        QueryResponseFragment::from_bytes(&first).unwrap(),
        QueryResponseFragment::from_bytes(&second).unwrap(),
    ];
    // The files come in the wrong order: 000 carries packet 1.
    assert_eq!(parts[0].current_packet, 1);
    parts.sort_by_key(|p| p.current_packet);
    assert!(parts.iter().all(|p| p.last_packet == 1));
    let payload: Vec<u8> = parts
        .iter()
        .flat_map(|p| p.payload.iter().copied())
        .collect();
    for part in &parts {
        let raw = if part.current_packet == 0 {
            &second
        } else {
            &first
        };
        assert_eq!(&part.to_vec().unwrap(), raw, "each fragment re-encodes");
    }
    let chunks = Chunks::from_bytes_with(&payload, ChunkSet::SERVER_INFO).unwrap();
    assert_eq!(
        chunks.to_vec_with(ChunkSet::SERVER_INFO).unwrap(),
        payload,
        "the joined payload re-encodes"
    );
    insta::assert_yaml_snapshot!((&parts, &chunks));
    let info = chunks.server_info.unwrap();
    assert_eq!(
        (
            info.server_name,
            info.game_type,
            info.build_id,
            info.map,
            info.port
        ),
        ("my server", "ctf", "1", "map", 1025)
    );
}
