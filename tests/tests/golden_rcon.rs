//! Source RCON packets built from the protocol's public description (the Valve Developer
//! Community's "Source RCON Protocol": a little-endian size that counts what follows it, id,
//! type 3 auth / 2 auth response and exec command / 0 response value, a NUL-terminated body,
//! an empty string), Minecraft's "Unknown request" answer, and round trips of any packet.

use proptest::prelude::*;
use query_specs::rcon::{
    Envelope, Frame, Packet, AUTH_REFUSED_ID, SERVERDATA_AUTH, SERVERDATA_AUTH_RESPONSE,
    SERVERDATA_EXECCOMMAND, SERVERDATA_RESPONSE_VALUE, TRAILER,
};
use query_wire::{Decode, Encode, ErrorKind};

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap())
        .collect()
}

/// Decodes `text`, checks that it encodes back to the same bytes, and returns the packet's
/// id, type, body and trailer.
fn golden(text: &str) -> (i32, i32, Vec<u8>, Vec<u8>) {
    let bytes = hex(text);
    let frame = Frame::from_bytes(&bytes).unwrap();
    assert_eq!(frame.to_vec().unwrap(), bytes);
    assert_eq!(frame.encoded_len(()), bytes.len());
    let size = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(size, bytes.len() - 4, "the size counts what follows it");
    let Packet {
        id,
        kind,
        body,
        trailer,
    } = frame.packet;
    (id, kind, body.to_vec(), trailer.to_vec())
}

#[test]
fn auth_and_its_answers() {
    // SERVERDATA_AUTH (3), id 0x1234, password "passwrd".
    let auth = golden("11 00 00 00 34 12 00 00 03 00 00 00 70 61 73 73 77 72 64 00 00");
    assert_eq!(
        auth,
        (
            0x1234,
            SERVERDATA_AUTH,
            b"passwrd".to_vec(),
            TRAILER.to_vec()
        )
    );
    // srcds: an empty SERVERDATA_RESPONSE_VALUE (0) with the request's id first...
    let empty = golden("0a 00 00 00 34 12 00 00 00 00 00 00 00 00");
    assert_eq!(
        empty,
        (0x1234, SERVERDATA_RESPONSE_VALUE, vec![], TRAILER.to_vec())
    );
    // ...then SERVERDATA_AUTH_RESPONSE (2) with the same id: accepted.
    let accepted = golden("0a 00 00 00 34 12 00 00 02 00 00 00 00 00");
    assert_eq!(accepted.0, 0x1234);
    assert_eq!(accepted.1, SERVERDATA_AUTH_RESPONSE);
    // Refused: id -1.
    let refused = golden("0a 00 00 00 ff ff ff ff 02 00 00 00 00 00");
    assert_eq!(refused.0, AUTH_REFUSED_ID);
}

#[test]
fn commands_and_the_end_marker() {
    // SERVERDATA_EXECCOMMAND (2), id 2, "status".
    let command = golden("10 00 00 00 02 00 00 00 02 00 00 00 73 74 61 74 75 73 00 00");
    assert_eq!(
        command,
        (
            2,
            SERVERDATA_EXECCOMMAND,
            b"status".to_vec(),
            TRAILER.to_vec()
        )
    );
    // The end marker: an empty SERVERDATA_RESPONSE_VALUE from the client, mirrored by srcds,
    // which then adds a packet whose body reads 00 01 00 00.
    let marker = golden("0a 00 00 00 03 00 00 00 00 00 00 00 00 00");
    assert_eq!(
        marker,
        (3, SERVERDATA_RESPONSE_VALUE, vec![], TRAILER.to_vec())
    );
    let extra = golden("0e 00 00 00 03 00 00 00 00 00 00 00 00 01 00 00 00 00");
    assert_eq!(extra.2, b"");
    assert_eq!(extra.3, b"\x01\x00\x00\x00\x00");
}

#[test]
fn minecraft_answers_an_unknown_type_with_unknown_request() {
    // The marker sent with type 0, which vanilla does not handle: "Unknown request 0".
    let unknown = golden(
        "1b 00 00 00 03 00 00 00 00 00 00 00 55 6e 6b 6e 6f 77 6e 20 72 65 71 75 65 73 74 20 30 \
         00 00",
    );
    assert_eq!(unknown.2, b"Unknown request 0");
}

#[test]
fn a_packet_too_short_for_its_header_or_without_its_nul_is_refused() {
    // A size of 8: no room for the body's NUL.
    let short = hex("08 00 00 00 01 00 00 00 02 00 00 00");
    let err = Frame::from_bytes(&short).unwrap_err();
    assert_eq!(err.path_string(), "Frame.packet.body");
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{err}"
    );
    assert_eq!(err.offset(), 12);
    // The envelope alone still finds where the frame ends, so a stream can skip or refuse it.
    let envelope = Envelope::from_bytes(&short).unwrap();
    assert_eq!(envelope.payload.len(), 8);
    // A size larger than the bytes: cut short.
    let err = Frame::from_bytes(&hex("20 00 00 00 01 00 00 00")).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{err}"
    );
}

#[test]
fn every_truncation_is_an_error_naming_where_it_stopped() {
    let bytes = hex("10 00 00 00 02 00 00 00 02 00 00 00 73 74 61 74 75 73 00 00");
    for cut in 0..bytes.len() {
        let err = Frame::from_bytes(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
            "cut at {cut}: {err}"
        );
    }
}

proptest! {
    #[test]
    fn packets_round_trip_with_a_computed_size(
        id in any::<i32>(),
        kind in prop_oneof![Just(0), Just(2), Just(3), any::<i32>()],
        body in proptest::collection::vec(1u8..=255, 0..600),
    ) {
        let frame = Packet::new(id, kind, &body).framed();
        let bytes = frame.to_vec().unwrap();
        prop_assert_eq!(bytes.len(), 4 + 10 + body.len());
        prop_assert_eq!(u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize, 10 + body.len());
        let decoded = Frame::from_bytes(&bytes).unwrap();
        prop_assert_eq!(decoded, frame);
    }

    #[test]
    fn a_body_holding_a_nul_cannot_be_written(
        before in proptest::collection::vec(1u8..=255, 0..20),
        after in proptest::collection::vec(any::<u8>(), 0..20),
    ) {
        let body = [before, vec![0], after].concat();
        prop_assert!(Packet::new(1, 2, &body).framed().to_vec().is_err());
    }
}
