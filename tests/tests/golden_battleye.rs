//! BattlEye RCon packets from the protocol's public description, with their CRC32 checksums
//! written out, and round trips of any packet.

use proptest::prelude::*;
use query_specs::battleye::{Packet, PacketView, Payload};
use query_wire::{Decode, Encode, ErrorKind, Text};

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap())
        .collect()
}

/// Decodes `text` and checks that encoding the payload again gives the same bytes.
fn golden(text: &str) -> Packet<'static> {
    let bytes: &'static [u8] = Box::leak(hex(text).into_boxed_slice());
    let packet = Packet::from_bytes(bytes).unwrap();
    assert_eq!(packet.to_vec().unwrap(), bytes);
    assert_eq!(packet.encoded_len(()), bytes.len());
    let view = PacketView {
        payload: packet.payload.clone(),
    };
    assert_eq!(view.to_vec().unwrap(), bytes);
    packet
}

#[test]
fn login_and_its_answer() {
    let login = golden("42 45 de 26 2d 52 ff 00 70 61 73 73 77 6f 72 64");
    assert_eq!(login.checksum, 0x522d_26de);
    assert_eq!(
        login.payload,
        Payload::Login {
            password: Text::from_bytes(b"password")
        }
    );
    let accepted = golden("42 45 69 dd de 36 ff 00 01");
    assert_eq!(
        accepted.payload,
        Payload::Login {
            password: Text::from_bytes(b"\x01")
        }
    );
}

#[test]
fn commands_keepalive_and_server_messages() {
    let command = golden("42 45 f9 37 94 ae ff 01 00 70 6c 61 79 65 72 73");
    assert_eq!(
        command.payload,
        Payload::Command {
            sequence: 0,
            command: Text::from_bytes(b"players")
        }
    );
    // The empty command clients send to keep the session: the description's own example.
    let keepalive = golden("42 45 be dc c2 58 ff 01 00");
    assert_eq!(
        keepalive.payload,
        Payload::Command {
            sequence: 0,
            command: Text::from_bytes(b"")
        }
    );
    let message = golden(
        "42 45 b7 15 86 17 ff 02 05 52 43 6f 6e 20 61 64 6d 69 6e 20 23 30 20 6c 6f 67 67 65 64 \
         20 69 6e",
    );
    assert_eq!(
        message.payload,
        Payload::ServerMessage {
            sequence: 5,
            message: Text::from_bytes(b"RCon admin #0 logged in")
        }
    );
    let ack = golden("42 45 f2 7b 85 03 ff 02 05");
    assert_eq!(
        ack.payload,
        Payload::ServerMessage {
            sequence: 5,
            message: Text::from_bytes(b"")
        }
    );
}

#[test]
fn a_damaged_or_forged_packet_is_refused() {
    // One bit of the command flipped: the checksum no longer matches.
    let mut bytes = hex("42 45 f9 37 94 ae ff 01 00 70 6c 61 79 65 72 73");
    bytes[10] ^= 0x01;
    let err = Packet::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Packet.checksum");
    assert_eq!(err.offset(), 2);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::ChecksumMismatch {
                declared: 0xae94_37f9,
                ..
            }
        ),
        "{err}"
    );
    // Not BattlEye at all.
    let err = Packet::from_bytes(b"XX\0\0\0\0\xff\x01\x00").unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }), "{err}");
    // The marker is checked after the checksum: a packet without it is refused even with a
    // matching checksum.
    let view_bytes = {
        let crc = crc32_of(b"\xfe\x01\x00");
        let mut bytes = b"BE".to_vec();
        bytes.extend_from_slice(&crc.to_le_bytes());
        bytes.extend_from_slice(b"\xfe\x01\x00");
        bytes
    };
    let err = Packet::from_bytes(&view_bytes).unwrap_err();
    assert_eq!(err.path_string(), "Packet.payload");
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }), "{err}");
    // An unknown type.
    let crc = crc32_of(b"\xff\x07");
    let mut bytes = b"BE".to_vec();
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes.extend_from_slice(b"\xff\x07");
    let err = Packet::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnknownTag { tag: 7 });
    assert_eq!(err.offset(), 7);
}

/// CRC-32 (IEEE), bit by bit.
fn crc32_of(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

proptest! {
    #[test]
    fn packets_round_trip_with_a_computed_checksum(
        kind in 0u8..3,
        sequence in any::<u8>(),
        text in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let text = Text::from_bytes(&text);
        let payload = match kind {
            0 => Payload::Login { password: text },
            1 => Payload::Command { sequence, command: text },
            _ => Payload::ServerMessage { sequence, message: text },
        };
        let view = PacketView { payload: payload.clone() };
        let bytes = view.to_vec().unwrap();
        prop_assert_eq!(view.encoded_len(()), bytes.len());
        prop_assert_eq!(u32::from_le_bytes(bytes[2..6].try_into().unwrap()), crc32_of(&bytes[6..]));
        let decoded = Packet::from_bytes(&bytes).unwrap();
        prop_assert_eq!(&decoded.payload, &payload);
        prop_assert_eq!(decoded.to_vec().unwrap(), bytes);
    }

    #[test]
    fn any_changed_byte_after_the_checksum_is_caught(
        text in proptest::collection::vec(any::<u8>(), 1..100),
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let view = PacketView { payload: Payload::Command { sequence: 1, command: Text::from_bytes(&text) } };
        let mut bytes = view.to_vec().unwrap();
        let at = 6 + at.index(bytes.len() - 6);
        bytes[at] ^= flip;
        let err = Packet::from_bytes(&bytes).unwrap_err();
        prop_assert!(matches!(err.kind(), ErrorKind::ChecksumMismatch { .. }), "{}", err);
    }
}
