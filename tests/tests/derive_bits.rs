//! `bit_width`, `flags` / `flag(..)` and `range`: fields narrower than a byte, a flag byte
//! written from the optional fields it announces, and where a field sits in a packet.

use query_wire::{Decode, Encode, ErrorKind, Wire};

/// GoldSrc's split-part byte: the part's number in the upper four bits, the total below.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(endian = "little", magic = b"\xfe\xff\xff\xff")]
struct Nibbles {
    #[wire(range)]
    id: u32,
    #[wire(bit_width = 4, range)]
    number: u8,
    #[wire(bit_width = 4, range)]
    total: u8,
    tail: u16,
}

#[test]
fn nibbles_are_read_high_first_and_written_back() {
    let bytes = [0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0x23, 0x34, 0x12];
    let part = Nibbles::from_bytes(&bytes).unwrap();
    assert_eq!(
        part,
        Nibbles {
            id: 1,
            number: 2,
            total: 3,
            tail: 0x1234
        }
    );
    assert_eq!(part.to_vec().unwrap(), bytes);
    assert_eq!(part.encoded_len(()), bytes.len());
    // Every value of each nibble round-trips.
    for number in 0..16 {
        for total in 0..16 {
            let part = Nibbles {
                number,
                total,
                ..part
            };
            assert_eq!(Nibbles::from_bytes(&part.to_vec().unwrap()).unwrap(), part);
        }
    }
}

#[test]
fn a_value_wider_than_its_bits_cannot_be_written() {
    let part = Nibbles {
        id: 1,
        number: 16,
        total: 1,
        tail: 0,
    };
    let err = part.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::OutOfRange {
            value: 16,
            reason: "the value does not fit the field's bits"
        }
    );
    assert_eq!(err.to_string().split(" at ").next(), Some("number"));
    let err = Nibbles {
        number: 1,
        total: 0x80,
        ..part
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.to_string().split(" at ").next(), Some("total"));
}

#[test]
fn a_cut_bit_field_names_the_first_field_of_its_integer() {
    let err = Nibbles::from_bytes(&[0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0]).unwrap_err();
    assert_eq!(err.offset(), 8);
    assert_eq!(
        err.to_string(),
        "Nibbles.number at byte 8: need 1 bytes, have 0"
    );
}

/// GameSpy 3's part byte: the last-part flag in the top bit, the number below; and a 16-bit
/// group in little-endian order to show the integer's byte order.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(endian = "big")]
struct Mixed {
    #[wire(bit_width = 1)]
    last: bool,
    #[wire(bit_width = 7)]
    number: u8,
    #[wire(bit_width = 3, endian = "little", range)]
    kind: u8,
    #[wire(bit_width = 13)]
    length: u16,
}

#[test]
fn a_bool_bit_and_a_multi_byte_group_in_its_byte_order() {
    let value = Mixed {
        last: true,
        number: 5,
        kind: 0b101,
        length: 0x1abc,
    };
    let bytes = value.to_vec().unwrap();
    let group = (0b101u16 << 13) | 0x1abc;
    assert_eq!(
        bytes,
        [0x85, group.to_le_bytes()[0], group.to_le_bytes()[1]]
    );
    assert_eq!(Mixed::from_bytes(&bytes).unwrap(), value);
    assert!(!Mixed::from_bytes(&[0x05, 0, 0]).unwrap().last);
    assert_eq!(Mixed::KIND_RANGE, 1..3);
    assert_eq!(<Mixed as Encode>::FIXED_LEN, Some(3));
}

#[test]
fn ranges_count_the_magic_and_the_fields_before() {
    assert_eq!(Nibbles::ID_RANGE, 4..8);
    // Both nibbles sit in byte 8.
    assert_eq!(Nibbles::NUMBER_RANGE, 8..9);
    assert_eq!(Nibbles::TOTAL_RANGE, 8..9);
    assert_eq!(<Nibbles as Encode>::FIXED_LEN, Some(11));
    let bytes = Nibbles {
        id: 0xdead_beef,
        number: 1,
        total: 2,
        tail: 0,
    }
    .to_vec()
    .unwrap();
    assert_eq!(bytes[Nibbles::ID_RANGE], 0xdead_beef_u32.to_le_bytes());
}

/// A nested type of fixed width counts; one of variable width ends `FIXED_LEN`.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", magic = b"\x00")]
struct Reply<'a> {
    #[wire(range)]
    session: u32,
    marker: Marker,
    #[wire(range)]
    part: u8,
    #[wire(bytes(rest))]
    rest: &'a [u8],
}

#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(magic = b"splitnum\x00")]
struct Marker;

#[test]
fn nested_fixed_widths_are_counted() {
    assert_eq!(<Marker as Encode>::FIXED_LEN, Some(9));
    assert_eq!(Reply::SESSION_RANGE, 1..5);
    assert_eq!(Reply::PART_RANGE, 14..15);
    assert_eq!(<Reply<'_> as Encode>::FIXED_LEN, None);
    let reply = Reply {
        session: 7,
        marker: Marker,
        part: 0x81,
        rest: b"x",
    };
    let bytes = reply.to_vec().unwrap();
    assert_eq!(bytes[Reply::SESSION_RANGE], 7u32.to_be_bytes());
    assert_eq!(bytes[Reply::PART_RANGE], [0x81]);
}

const PORT: u8 = 0x80;
const NAME: u8 = 0x20;
const ID: u8 = 0x01;

/// A2S's Extra Data Flag: each bit says whether a trailing field follows.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", view = ExtraView)]
struct Extra<'a> {
    #[wire(flags)]
    flags: u8,
    #[wire(flag(flags, PORT))]
    port: Option<u16>,
    #[wire(flag(flags, NAME), str(nul))]
    name: Option<&'a str>,
    #[wire(flag(flags, ID))]
    id: Option<u64>,
}

#[test]
fn the_flag_byte_is_written_from_the_fields_present() {
    let extra = Extra {
        // Whatever the field holds, the byte written says which fields follow.
        flags: 0,
        port: Some(27015),
        name: None,
        id: Some(730),
    };
    let bytes = extra.to_vec().unwrap();
    let mut expected = vec![PORT | ID, 0x87, 0x69];
    expected.extend_from_slice(&730u64.to_le_bytes());
    assert_eq!(bytes, expected);
    assert_eq!(extra.encoded_len(()), bytes.len());
    let decoded = Extra::from_bytes(&bytes).unwrap();
    assert_eq!(decoded.flags, PORT | ID);
    assert_eq!(decoded.port, Some(27015));
    assert_eq!(decoded.name, None);
    assert_eq!(decoded.id, Some(730));
    // The view has no flag field to get wrong.
    let view = ExtraView {
        port: None,
        name: Some("tv"),
        id: None,
    };
    assert_eq!(view.to_vec().unwrap(), b"\x20tv\x00");
}

#[test]
fn each_bit_decides_its_field_and_unknown_bits_are_kept_but_never_written() {
    // 0x02 is no field's bit: kept in the decoded byte, announcing nothing.
    let decoded = Extra::from_bytes(b"\x22tv\x00").unwrap();
    assert_eq!(decoded.flags, 0x22);
    assert_eq!(decoded.name, Some("tv"));
    assert_eq!(decoded.port, None);
    // Re-encoded, the byte says only what follows.
    assert_eq!(decoded.to_vec().unwrap(), b"\x20tv\x00");
    // A bit set for a field that is cut short is an error at that field.
    let err = Extra::from_bytes(b"\x80\x01").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Extra.port at byte 1: need 2 bytes, have 1"
    );
    assert!(matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }));
    assert_eq!(Extra::from_bytes(b"\x00").unwrap().flags, 0);
}

#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(endian = "big", tag = u64)]
enum Family {
    #[wire(tag = 0x4f4e_4552_4550_4c59)]
    One,
    #[wire(tag = 2)]
    Two,
}

#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(magic = b"\xff", tag = u16)]
enum Body {
    #[wire(tag = 1)]
    Short(u8),
    #[wire(tag = 2)]
    Long(u32),
}

#[test]
fn enums_have_a_fixed_length_when_all_variants_agree_and_name_their_tag() {
    assert_eq!(<Family as Encode>::FIXED_LEN, Some(8));
    assert_eq!(Family::TAG_RANGE, 0..8);
    assert_eq!(<Body as Encode>::FIXED_LEN, None);
    assert_eq!(Body::TAG_RANGE, 1..3);
    assert_eq!(Body::Long(7).to_vec().unwrap()[Body::TAG_RANGE], [0, 2]);
}
