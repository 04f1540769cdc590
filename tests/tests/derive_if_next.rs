//! `if_next`: an `Option` that is there when the input's next bytes are a marker, as some
//! Unreal 2 servers put a stray `01` after a UTF-16 string's length byte and others do not.

use query_wire::{Decode, Encode, ErrorKind, Wire};

/// The marker itself, read and written as the value's magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire)]
#[wire(magic = b"\x01")]
struct Stray;

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Wide {
    units: u8,
    #[wire(if_next = b"\x01")]
    stray: Option<Stray>,
    #[wire(count = *units)]
    text: Vec<u16>,
}

/// A two-byte marker that the value reads as its own first bytes.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", magic = b"\xfe\xff")]
struct Block {
    value: u16,
}

const MARKER: &[u8; 2] = b"\xfe\xff";

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
struct Packet {
    #[wire(if_next = MARKER)]
    block: Option<Block>,
    tail: u8,
}

#[test]
fn present_when_the_marker_comes_next_both_ways() {
    let plain = Wide {
        units: 2,
        stray: None,
        text: vec![0x48, 0],
    };
    let bytes = plain.to_vec().unwrap();
    assert_eq!(bytes, b"\x02H\x00\x00\x00");
    assert_eq!(Wide::from_bytes(&bytes).unwrap(), plain);

    let marked = Wide {
        stray: Some(Stray),
        ..plain
    };
    let bytes = marked.to_vec().unwrap();
    assert_eq!(bytes, b"\x02\x01H\x00\x00\x00");
    assert_eq!(marked.encoded_len(()), bytes.len());
    assert_eq!(Wide::from_bytes(&bytes).unwrap(), marked);
}

#[test]
fn a_constant_byte_string_marker_read_by_the_value() {
    let with = Packet {
        block: Some(Block { value: 7 }),
        tail: 9,
    };
    let bytes = with.to_vec().unwrap();
    assert_eq!(bytes, b"\xfe\xff\x00\x07\x09");
    assert_eq!(Packet::from_bytes(&bytes).unwrap(), with);
    // Only a start of the marker: the field is absent and the bytes are left for the next.
    let error = Packet::from_bytes(b"\xfe\x09").unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::TrailingBytes { .. }),
        "{error}"
    );
    assert_eq!(
        Packet::from_bytes(b"\x09").unwrap(),
        Packet {
            block: None,
            tail: 9
        }
    );
}

#[test]
fn a_marker_at_the_end_of_the_input_still_reads_its_value() {
    // The marker is there, the value it starts is cut: an error, not an absent field.
    let error = Packet::from_bytes(b"\xfe\xff\x00").unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{error}"
    );
    assert_eq!(error.path_string(), "Packet.block.value");
}
