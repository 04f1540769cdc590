//! GameSpy v1 requests: the document's dumps decode and re-encode to the same bytes, and the
//! requests real clients send (`\status\xserverquery`, combined queries, `\echo\`) are understood.

use query_specs::gamespy1::Request;
use query_tests::fixture_hex;
use query_wire::kv::{FromKeyValues, ToKeyValues};

#[test]
fn document_dumps_round_trip() {
    for (file, expected) in [
        ("gamespy1_info_request", Request::Info),
        ("gamespy1_rules_request", Request::Rules),
        ("gamespy1_players_request", Request::Players),
    ] {
        let bytes = fixture_hex(&format!("gamespy1/{file}.hex"));
        let request = Request::from_bytes(&bytes).unwrap();
        assert_eq!(request, expected, "{file}");
        assert_eq!(request.to_vec().unwrap(), bytes, "{file}");
        assert_eq!(request.encoded_len().unwrap(), bytes.len());
    }
}

#[test]
fn what_clients_send() {
    // gamedig and opengsq ask for the extended status.
    assert_eq!(
        Request::from_bytes(b"\\status\\xserverquery").unwrap(),
        Request::StatusXServerQuery
    );
    // `\status\` is shorthand for these four; a server may receive them combined.
    let combined = b"\\basic\\\\info\\\\rules\\\\players\\";
    let all = Request::decode_all(combined).unwrap();
    assert_eq!(
        all,
        [
            Request::Basic,
            Request::Info,
            Request::Rules,
            Request::Players
        ]
    );
    assert_eq!(Request::encode_all(&all).unwrap(), combined);
    // opengsq appends `xserverquery` to each part; the part is still recognised.
    let parts = Request::decode_all(b"\\info\\xserverquery\\rules\\xserverquery").unwrap();
    assert_eq!(parts, [Request::Info, Request::Rules]);
    // Echo is best sent last; its text comes back under `echo`.
    let echo = Request::decode_all(b"\\info\\\\echo\\ping 42").unwrap();
    assert_eq!(echo[1], Request::Echo("ping 42".into()));
    // Hidden queries are kept, not refused.
    assert_eq!(
        Request::from_bytes(b"\\ucount\\").unwrap(),
        Request::Other("ucount".into(), "".into())
    );
}

#[test]
fn malformed_requests_are_errors() {
    // `rules` at byte 7 has no value.
    let err = Request::decode_all(b"\\info\\\\rules").unwrap_err();
    assert_eq!(err.offset(), 7);
    assert_eq!(err.path_string(), "Request");
    let err = Request::from_bytes(b"info").unwrap_err();
    assert_eq!(err.offset(), 0);
}
