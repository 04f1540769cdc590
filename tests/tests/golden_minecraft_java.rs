//! Minecraft Java Edition server list ping: packets from the protocol's public description,
//! written byte by byte, and round trips of any packet.

use proptest::prelude::*;
use query_specs::minecraft_java::{
    Handshake, HandshakeFrame, Handshaking, StatusClientbound, StatusRequestFrame,
    StatusResponseFrame, StatusServerbound, NEXT_STATE_STATUS,
};
use query_wire::{Decode, Encode, ErrorKind};

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap())
        .collect()
}

/// Protocol 47 (1.8), `localhost`, 25565, next state status: length 15, id 0, version 47,
/// the address behind its length 9, the port big-endian, state 1.
const HANDSHAKE: &str = "0f 00 2f 09 6c 6f 63 61 6c 68 6f 73 74 63 dd 01";

#[test]
fn handshake() {
    let bytes = hex(HANDSHAKE);
    let frame = HandshakeFrame::from_bytes(&bytes).unwrap();
    let Handshaking::Handshake(handshake) = &frame.packet;
    assert_eq!(
        handshake,
        &Handshake {
            protocol_version: 47,
            server_address: "localhost",
            server_port: 25565,
            next_state: NEXT_STATE_STATUS,
        }
    );
    assert_eq!(frame.to_vec().unwrap(), bytes);
    assert_eq!(frame.encoded_len(()), bytes.len());
}

#[test]
fn handshake_of_a_client_that_does_not_know_the_version() {
    // -1 takes five bytes: the frame is 19 bytes long.
    let frame = HandshakeFrame {
        packet: Handshaking::Handshake(Handshake {
            protocol_version: -1,
            server_address: "localhost",
            server_port: 25565,
            next_state: NEXT_STATE_STATUS,
        }),
    };
    let bytes = frame.to_vec().unwrap();
    assert_eq!(
        bytes,
        hex("13 00 ff ff ff ff 0f 09 6c 6f 63 61 6c 68 6f 73 74 63 dd 01")
    );
    assert_eq!(HandshakeFrame::from_bytes(&bytes).unwrap(), frame);
}

#[test]
fn status_request_and_ping() {
    assert_eq!(
        StatusRequestFrame::from_bytes(&hex("01 00"))
            .unwrap()
            .packet,
        StatusServerbound::Request
    );
    let ping = hex("09 01 00 00 01 8b 2f 6a 9c 40");
    let frame = StatusRequestFrame::from_bytes(&ping).unwrap();
    assert_eq!(
        frame.packet,
        StatusServerbound::Ping {
            payload: 0x0000_018b_2f6a_9c40
        }
    );
    assert_eq!(frame.to_vec().unwrap(), ping);
}

#[test]
fn status_response_and_pong() {
    let json = r#"{"version":{"name":"1.21.4","protocol":769},"players":{"max":20,"online":0},"description":{"text":"A Minecraft Server"}}"#;
    assert_eq!(json.len(), 120);
    // Length 122 = id + the string's one-byte length + 120; the string's length 120 = 0x78.
    let mut bytes = hex("7a 00 78");
    bytes.extend_from_slice(json.as_bytes());
    let frame = StatusResponseFrame::from_bytes(&bytes).unwrap();
    assert_eq!(frame.packet, StatusClientbound::Response { json });
    assert_eq!(frame.to_vec().unwrap(), bytes);
    // The JSON is borrowed from the reply.
    let StatusClientbound::Response { json: kept } = frame.packet else {
        unreachable!()
    };
    assert!(bytes.as_ptr_range().contains(&kept.as_ptr()));

    let pong = hex("09 01 00 00 01 8b 2f 6a 9c 40");
    assert_eq!(
        StatusResponseFrame::from_bytes(&pong).unwrap().packet,
        StatusClientbound::Pong {
            payload: 0x0000_018b_2f6a_9c40
        }
    );
}

#[test]
fn a_long_status_takes_a_two_byte_length() {
    let json = format!(r#"{{"description":"{}"}}"#, "x".repeat(300));
    let frame = StatusResponseFrame {
        packet: StatusClientbound::Response { json: &json },
    };
    let bytes = frame.to_vec().unwrap();
    // 1 + 2 + len: the frame's length and the string's take two bytes each.
    let body = 1 + 2 + json.len();
    assert_eq!(bytes.len(), 2 + body);
    assert_eq!(bytes[0], (body & 0x7f) as u8 | 0x80);
    assert_eq!(bytes[1], (body >> 7) as u8);
    assert_eq!(frame.encoded_len(()), bytes.len());
    assert_eq!(StatusResponseFrame::from_bytes(&bytes).unwrap(), frame);
}

#[test]
fn broken_frames_are_errors_with_offsets() {
    // An unknown packet id.
    let err = StatusResponseFrame::from_bytes(&hex("01 05")).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnknownTag { tag: 5 });
    assert_eq!(err.offset(), 1);
    // A frame length longer than the bytes.
    let err = StatusResponseFrame::from_bytes(&hex("05 01 00")).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 5, have: 2 });
    // A frame length in more bytes than it needs.
    let err = StatusRequestFrame::from_bytes(&hex("81 00 00")).unwrap_err();
    assert_eq!(err.offset(), 0);
    assert!(
        err.to_string().contains("more bytes than it needs"),
        "{err}"
    );
    // The frame holds more than its packet.
    let err = StatusRequestFrame::from_bytes(&hex("02 00 00")).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TrailingBytes { count: 1 });
    // A server address above the server's limit.
    let address = "a".repeat(766);
    let frame = HandshakeFrame {
        packet: Handshaking::Handshake(Handshake {
            protocol_version: 47,
            server_address: &address,
            server_port: 1,
            next_state: 1,
        }),
    };
    assert!(frame.to_vec().is_err());
}

proptest! {
    #[test]
    fn handshakes_round_trip(
        protocol_version in any::<i32>(),
        server_address in "[a-z0-9.-]{0,300}",
        server_port in any::<u16>(),
        next_state in any::<i32>(),
    ) {
        let frame = HandshakeFrame {
            packet: Handshaking::Handshake(Handshake {
                protocol_version,
                server_address: &server_address,
                server_port,
                next_state,
            }),
        };
        let bytes = frame.to_vec().unwrap();
        prop_assert_eq!(frame.encoded_len(()), bytes.len());
        prop_assert_eq!(HandshakeFrame::from_bytes(&bytes).unwrap(), frame);
    }

    #[test]
    fn status_packets_round_trip(payload in any::<i64>(), json in "\\PC{0,400}", pong in any::<bool>()) {
        let packet = if pong {
            StatusClientbound::Pong { payload }
        } else {
            StatusClientbound::Response { json: &json }
        };
        let frame = StatusResponseFrame { packet };
        let bytes = frame.to_vec().unwrap();
        prop_assert_eq!(frame.encoded_len(()), bytes.len());
        prop_assert_eq!(StatusResponseFrame::from_bytes(&bytes).unwrap(), frame);

        let request = StatusRequestFrame { packet: StatusServerbound::Ping { payload } };
        let bytes = request.to_vec().unwrap();
        prop_assert_eq!(StatusRequestFrame::from_bytes(&bytes).unwrap(), request);
    }

    #[test]
    fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(frame) = StatusResponseFrame::from_bytes(&bytes) {
            prop_assert_eq!(frame.to_vec().unwrap(), bytes.clone());
        }
        if let Ok(frame) = HandshakeFrame::from_bytes(&bytes) {
            prop_assert_eq!(frame.to_vec().unwrap(), bytes);
        }
    }
}
