//! `crc32(after)` / `crc32(before)`: a declared CRC32 (IEEE), verified on decode and computed
//! on encode, as BattlEye's RCon packets carry one over the bytes after it.

use query_wire::{Decode, Encode, ErrorKind, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(magic = b"BE")]
struct Signed<'a> {
    /// Of every byte after it.
    #[wire(crc32(after), endian = "little")]
    checksum: u32,
    kind: u8,
    #[wire(bytes(rest))]
    payload: &'a [u8],
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", magic = b"\x01")]
struct Trailer<'a> {
    #[wire(str(prefix = u8))]
    name: &'a str,
    /// Of the packet's bytes before it, magic included.
    #[wire(crc32(before))]
    checksum: u32,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(view = InEnumView, tag = u8)]
enum InEnum {
    #[wire(tag = 1)]
    Checked {
        #[wire(crc32(after))]
        checksum: u32,
        value: u16,
    },
}

#[test]
fn computed_on_encode_whatever_the_field_holds() {
    let packet = Signed {
        checksum: 0,
        kind: 0xff,
        payload: b"\x01\x00status",
    };
    let bytes = packet.to_vec().unwrap();
    let crc = u32::from_le_bytes(bytes[2..6].try_into().unwrap());
    assert_eq!(crc, crc32_of(&bytes[6..]));
    assert_eq!(packet.encoded_len(()), bytes.len());
    let decoded = Signed::from_bytes(&bytes).unwrap();
    assert_eq!(decoded.checksum, crc);
    assert_eq!(decoded.payload, packet.payload);

    let trailer = Trailer {
        name: "ok",
        checksum: 12345,
    };
    let bytes = trailer.to_vec().unwrap();
    assert_eq!(&bytes[..4], b"\x01\x02ok");
    assert_eq!(bytes[4..], crc32_of(&bytes[..4]).to_be_bytes());
    assert_eq!(Trailer::from_bytes(&bytes).unwrap().name, "ok");
}

#[test]
fn a_mismatch_names_the_field_and_its_offset() {
    let packet = Signed {
        checksum: 0,
        kind: 0xff,
        payload: b"say hi",
    };
    let mut bytes = packet.to_vec().unwrap();
    let good = crc32_of(&bytes[6..]);
    *bytes.last_mut().unwrap() ^= 0x20;
    let err = Signed::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Signed.checksum");
    assert_eq!(err.offset(), 2);
    assert_eq!(
        err.kind(),
        &ErrorKind::ChecksumMismatch {
            declared: good,
            computed: crc32_of(&bytes[6..]),
        }
    );

    let mut bytes = Trailer {
        name: "ok",
        checksum: 0,
    }
    .to_vec()
    .unwrap();
    bytes[2] = b'O';
    let err = Trailer::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Trailer.checksum");
    assert_eq!(err.offset(), 4);
    assert!(
        matches!(err.kind(), ErrorKind::ChecksumMismatch { .. }),
        "{err}"
    );

    // A cut checksum is an ordinary cut field.
    let err = Signed::from_bytes(b"BE\x01\x02").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 4, have: 2 });
}

#[test]
fn in_a_variant_and_left_out_of_the_view() {
    let view = InEnumView::Checked { value: 0x0102 };
    let bytes = view.to_vec().unwrap();
    assert_eq!(bytes[0], 1);
    assert_eq!(bytes[1..5], crc32_of(&[1, 2]).to_be_bytes());
    assert_eq!(view.encoded_len(()), bytes.len());
    assert_eq!(
        InEnum::from_bytes(&bytes).unwrap(),
        InEnum::Checked {
            checksum: crc32_of(&[1, 2]),
            value: 0x0102
        }
    );
}

/// CRC-32/ISO-HDLC, bit by bit, independent of the runtime's table-driven one.
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

#[test]
fn the_reference_check_value() {
    // The CRC-32 catalogue's check value for "123456789".
    assert_eq!(crc32_of(b"123456789"), 0xcbf4_3926);
}
