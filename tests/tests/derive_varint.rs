//! `varint`: integers as 7-bit groups, low first (LEB128 for `u32`/`u64`, Minecraft's VarInt
//! and VarLong for `i32`/`i64`), as values, enum tags, and length and count prefixes.

use query_wire::{Decode, Encode, ErrorKind, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
struct Numbers {
    #[wire(varint)]
    small: u32,
    #[wire(varint)]
    signed: i32,
    #[wire(varint)]
    wide: u64,
    #[wire(varint)]
    long: i64,
    tail: u8,
}

#[derive(Debug, Clone, PartialEq, Wire)]
struct Prefixed<'a> {
    #[wire(str(prefix = varint, max = 300))]
    name: &'a str,
    #[wire(bytes(prefix = leb128))]
    blob: &'a [u8],
    #[wire(count(prefix = varint), varint)]
    ids: Vec<i32>,
    #[wire(count(prefix = leb128), min_count = 1)]
    flags: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big")]
struct Framed<'a> {
    #[wire(len(prefix = varint))]
    packet: Packet<'a>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", tag = varint)]
enum Packet<'a> {
    #[wire(tag = 0)]
    Hello {
        #[wire(str(prefix = varint))]
        text: &'a str,
    },
    #[wire(tag = 1)]
    Ping(i64),
    #[wire(tag = 300)]
    Far,
    #[wire(other)]
    Unknown(i32, &'a [u8]),
}

#[test]
fn values_take_as_few_groups_as_they_need() {
    let numbers = Numbers {
        small: 300,
        signed: -1,
        wide: u64::MAX,
        long: 25565,
        tail: 7,
    };
    let bytes = numbers.to_vec().unwrap();
    assert_eq!(
        bytes,
        [
            0xac, 0x02, // 300
            0xff, 0xff, 0xff, 0xff, 0x0f, // -1 as a VarInt
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, // u64::MAX
            0xdd, 0xc7, 0x01, // 25565
            7,
        ]
    );
    assert_eq!(numbers.encoded_len(()), bytes.len());
    assert_eq!(Numbers::from_bytes(&bytes).unwrap(), numbers);
}

#[test]
fn overlong_and_over_wide_values_are_refused_with_offset_and_path() {
    // `signed` written in six bytes.
    let bytes = [0x01, 0xff, 0xff, 0xff, 0xff, 0x8f, 0x00, 0x00, 0x00, 0x00];
    let err = Numbers::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.offset(), 1);
    assert_eq!(err.path_string(), "Numbers.signed");
    assert!(err.to_string().contains("longer than 5 bytes"), "{err}");

    // `small` as 0x80 0x00: zero in two bytes.
    let err = Numbers::from_bytes(&[0x80, 0x00, 0x00, 0x00, 0x00, 0x00]).unwrap_err();
    assert_eq!(err.offset(), 0);
    assert_eq!(err.path_string(), "Numbers.small");
    assert!(
        err.to_string().contains("more bytes than it needs"),
        "{err}"
    );

    // `small` with bits above 2^32.
    let err = Numbers::from_bytes(&[0xff, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0]).unwrap_err();
    assert!(err.to_string().contains("wider than its type"), "{err}");

    // Cut inside `wide`.
    let err = Numbers::from_bytes(&[0x00, 0x00, 0x80]).unwrap_err();
    assert_eq!(err.offset(), 2);
    assert_eq!(err.path_string(), "Numbers.wide");
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 2, have: 1 });
}

#[test]
fn variable_length_prefixes_count_bytes_and_elements() {
    let long_name = "n".repeat(200);
    let value = Prefixed {
        name: &long_name,
        blob: b"\x01\x02",
        ids: vec![0, -1, 128],
        flags: vec![9],
    };
    let bytes = value.to_vec().unwrap();
    assert_eq!(&bytes[..2], [0xc8, 0x01], "200 as a VarInt");
    let after_name = 2 + 200;
    assert_eq!(&bytes[after_name..after_name + 3], [0x02, 0x01, 0x02]);
    assert_eq!(
        &bytes[after_name + 3..],
        [0x03, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x80, 0x01, 0x01, 0x09]
    );
    assert_eq!(value.encoded_len(()), bytes.len());
    assert_eq!(Prefixed::from_bytes(&bytes).unwrap(), value);

    // `max` is checked both ways.
    let too_long = "n".repeat(301);
    let err = Prefixed {
        name: &too_long,
        ..value.clone()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 301, max: 300 });

    // A negative VarInt length is refused where it starts.
    let mut negative = vec![0xff, 0xff, 0xff, 0xff, 0x0f];
    negative.extend_from_slice(&bytes[after_name..]);
    let err = Prefixed::from_bytes(&negative).unwrap_err();
    assert_eq!(err.offset(), 0);
    assert_eq!(err.path_string(), "Prefixed.name");
    assert!(err.to_string().contains("negative"), "{err}");

    // `min_count` behind a variable-width count is reported at the count.
    let mut empty = bytes.clone();
    let flags_at = empty.len() - 2;
    empty.truncate(flags_at);
    empty.push(0x00);
    let err = Prefixed::from_bytes(&empty).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooFew { len: 0, min: 1 });
    assert_eq!(err.offset(), flags_at);
}

#[test]
fn a_varint_length_frames_a_varint_tagged_enum() {
    let hello = Framed {
        packet: Packet::Hello { text: "hi" },
    };
    let bytes = hello.to_vec().unwrap();
    assert_eq!(bytes, [0x04, 0x00, 0x02, b'h', b'i']);
    assert_eq!(hello.encoded_len(()), bytes.len());
    assert_eq!(Framed::from_bytes(&bytes).unwrap(), hello);

    let far = Framed {
        packet: Packet::Far,
    };
    let bytes = far.to_vec().unwrap();
    assert_eq!(bytes, [0x02, 0xac, 0x02]);
    assert_eq!(far.packet.tag(), 300);
    assert_eq!(Framed::from_bytes(&bytes).unwrap(), far);

    // A body of 200 bytes needs a two-byte length.
    let body = vec![0xaa; 199];
    let unknown = Framed {
        packet: Packet::Unknown(5, &body),
    };
    let bytes = unknown.to_vec().unwrap();
    assert_eq!(&bytes[..3], [0xc8, 0x01, 0x05]);
    assert_eq!(unknown.encoded_len(()), bytes.len());
    assert_eq!(Framed::from_bytes(&bytes).unwrap(), unknown);

    // The frame bounds the packet: a length one short cuts the ping's number.
    let ping = Framed {
        packet: Packet::Ping(-2),
    };
    let mut bytes = ping.to_vec().unwrap();
    assert_eq!(bytes[0], 9);
    bytes[0] = 8;
    let err = Framed::from_bytes(&bytes).unwrap_err();
    assert_eq!(err.path_string(), "Framed.packet");
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 8, have: 7 });
}
