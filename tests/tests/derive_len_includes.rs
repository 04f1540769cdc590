//! `len(prefix = .., includes = N)`: a length that counts `N` bytes besides the value, as
//! ASE's length byte counts itself and Frostbite's packet size counts its 12-byte header.

use query_wire::{Decode, Encode, ErrorKind, Wire};

/// ASE-style: one length byte that counts itself, then the text.
#[derive(Debug, Clone, PartialEq, Wire)]
struct AseField<'a> {
    #[wire(len(prefix = u8, includes = 1), str(rest))]
    value: &'a str,
}

/// Frostbite-style: sequence, then the total size (header of 12 included), then the words.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Packet<'a> {
    sequence: u32,
    #[wire(len(prefix = u32, includes = HEADER_BEFORE_WORDS))]
    words: Words<'a>,
}

/// The sequence and the size itself: the bytes of the 12-byte header before the word count.
const HEADER_BEFORE_WORDS: usize = 8;

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Words<'a> {
    #[wire(count(prefix = u32))]
    words: Vec<Word<'a>>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Word<'a> {
    #[wire(str(prefix = u32))]
    text: &'a str,
    zero: u8,
}

/// A VarInt length that counts one byte besides the body: `includes` is a constant, whatever
/// width the prefix takes.
#[derive(Debug, Clone, PartialEq, Wire)]
struct SelfCountingVarint<'a> {
    #[wire(len(prefix = varint, includes = 1), bytes(rest))]
    body: &'a [u8],
}

#[test]
fn a_length_that_counts_itself() {
    let field = AseField { value: "ab" };
    let bytes = field.to_vec().unwrap();
    assert_eq!(bytes, [3, b'a', b'b']);
    assert_eq!(field.encoded_len(()), 3);
    assert_eq!(AseField::from_bytes(&bytes).unwrap(), field);
    assert_eq!(AseField::from_bytes(&[1]).unwrap(), AseField { value: "" });

    // Smaller than itself: an error at the length, not an underflow.
    let err = AseField::from_bytes(&[0]).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthBelowIncluded {
            len: 0,
            includes: 1
        }
    );
    assert_eq!(err.offset(), 0);
    assert_eq!(err.path_string(), "AseField.value");

    // 255 counts itself, so 254 bytes of text fit and 255 do not.
    let most = "x".repeat(254);
    assert_eq!(AseField { value: &most }.to_vec().unwrap()[0], 255);
    let err = AseField {
        value: &"x".repeat(255),
    }
    .to_vec()
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::TooLong { .. }), "{err}");
}

#[test]
fn a_size_that_counts_its_header() {
    let packet = Packet {
        sequence: 0x4000_0001,
        words: Words {
            words: vec![Word {
                text: "OK",
                zero: 0,
            }],
        },
    };
    let bytes = packet.to_vec().unwrap();
    // sequence, size 19 = 12 header + 7 of word, count 1, word "OK\0".
    assert_eq!(
        bytes,
        [0x01, 0x00, 0x00, 0x40, 19, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, b'O', b'K', 0]
    );
    assert_eq!(packet.encoded_len(()), bytes.len());
    assert_eq!(Packet::from_bytes(&bytes).unwrap(), packet);

    let mut short = bytes.clone();
    short[4] = 7;
    let err = Packet::from_bytes(&short).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthBelowIncluded {
            len: 7,
            includes: 8
        }
    );
    assert_eq!(err.offset(), 4);
    assert_eq!(err.path_string(), "Packet.words");

    // A size one too large claims a byte that is not there.
    let mut long = bytes.clone();
    long[4] = 20;
    let err = Packet::from_bytes(&long).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{err}"
    );
}

#[test]
fn a_variable_width_length_that_counts_a_constant() {
    // 127 bytes of body and 1 make 128, which takes two bytes.
    let body = vec![7u8; 127];
    let value = SelfCountingVarint { body: &body };
    let bytes = value.to_vec().unwrap();
    assert_eq!(&bytes[..2], [0x80, 0x01]);
    assert_eq!(value.encoded_len(()), bytes.len());
    assert_eq!(bytes.len(), 129);
    assert_eq!(
        SelfCountingVarint::from_bytes(&[0x81, 0x01, 7])
            .unwrap_err()
            .kind(),
        &ErrorKind::UnexpectedEnd { need: 128, have: 1 }
    );
}
