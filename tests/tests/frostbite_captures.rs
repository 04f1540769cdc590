//! Frostbite RCON: the streams of real Battlefield 3, 4 and Bad Company 2 servers decode packet
//! by packet (the size counting the 12-byte header) and re-encode to the same bytes; a size
//! below the header is an error, not an underflow.

use query_specs::frostbite::{Packet, Word, FROM_SERVER, HEADER_LEN, IS_RESPONSE};
use query_tests::read_capture;
use query_wire::{Decode, Encode, ErrorKind, Reader};

/// The capture's TCP reads joined back into the stream.
fn stream(name: &str) -> Option<Vec<u8>> {
    Some(read_capture(&format!("gameq/frostbite/{name}_response.txt"))?.concat())
}

#[test]
fn real_streams_decode_packet_by_packet() {
    let names = [
        "bf3_1", "bf3_2", "bf3_3", "bf4_1", "bfbc2_1", "bfbc2_2", "bfbc2_3",
    ];
    for name in names {
        let Some(stream) = stream(name) else {
            return;
        };
        let mut r = Reader::new(&stream);
        let mut packets = 0;
        while !r.is_empty() {
            let start = r.offset();
            let packet =
                Packet::decode(&mut r, ()).unwrap_or_else(|e| panic!("{name} at {start}: {e}"));
            let bytes = &stream[start..r.offset()];
            let size = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
            assert_eq!(
                size as usize,
                bytes.len(),
                "{name}: the size counts the header"
            );
            assert_eq!(packet.to_vec().unwrap(), bytes, "{name}: re-encodes");
            assert_eq!(packet.encoded_len(()), bytes.len());
            assert_eq!(
                packet.words[0].text.as_bytes(),
                b"OK",
                "{name}: answered OK"
            );
            packets += 1;
        }
        assert_eq!(
            packets, 3,
            "{name}: serverInfo, version and the player list"
        );
    }
}

#[test]
fn a_request_as_a_client_sends_it() {
    let request = Packet {
        sequence: 7,
        words: vec![Word::new(b"listPlayers"), Word::new(b"all")],
    };
    let bytes = request.to_vec().unwrap();
    let mut expected = vec![7, 0, 0, 0];
    expected.extend_from_slice(&(HEADER_LEN as u32 + 16 + 8).to_le_bytes());
    expected.extend_from_slice(&2u32.to_le_bytes());
    expected.extend_from_slice(b"\x0b\0\0\0listPlayers\0\x03\0\0\0all\0");
    assert_eq!(bytes, expected);
    assert_eq!(Packet::from_bytes(&bytes).unwrap(), request);
    let answer = Packet {
        sequence: FROM_SERVER | IS_RESPONSE | 7,
        words: vec![Word::new(b"OK")],
    };
    assert_eq!(
        Packet::from_bytes(&answer.to_vec().unwrap()).unwrap(),
        answer
    );
}

#[test]
fn broken_framing_is_refused() {
    let bytes = Packet {
        sequence: 1,
        words: vec![Word::new(b"version")],
    }
    .to_vec()
    .unwrap();
    // A size smaller than the header it counts.
    let mut small = bytes.clone();
    small[4..8].copy_from_slice(&4u32.to_le_bytes());
    let err = Packet::from_bytes(&small).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthBelowIncluded {
            len: 4,
            includes: 8
        }
    );
    assert_eq!(err.offset(), 4);
    assert_eq!(err.path_string(), "Packet.words");
    // A word length that disagrees with its text.
    let mut word = bytes.clone();
    word[12] = 6;
    let err = Packet::from_bytes(&word).unwrap_err();
    assert_eq!(err.path_string(), "Packet.words[0].size");
    // A size one byte too long leaves a byte of the packet unread by the words.
    let mut long = bytes.clone();
    long.push(0);
    long[4] += 1;
    let err = Packet::from_bytes(&long).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TrailingBytes { count: 1 });
}
