//! `str(before = ..)`, `bytes(before = ..)`, `dec(before = ..)`: a value that ends where the
//! next field's bytes start, which are left for that field, as a GameSpy 1 part number ends
//! before `\final\` or at the datagram's end.

use query_wire::{Decode, Encode, ErrorKind, Text, Wire};

#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(magic = b"\\final\\")]
struct Final;

#[derive(Debug, Clone, PartialEq, Wire)]
struct Part<'a> {
    #[wire(bytes(until = b"\\queryid\\"))]
    pairs: &'a [u8],
    #[wire(dec(until = b'.', max = 10))]
    query_id: u32,
    #[wire(dec(before = b'\\', or_end, max = 10))]
    part: u32,
    #[wire(trailing)]
    last: Option<Final>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
struct Quoted<'a> {
    /// Text up to a quote or a hash, without `or_end`: one of them must come.
    #[wire(str(before = [b'"', b'#'], encoding = "latin1"))]
    head: std::borrow::Cow<'a, str>,
    #[wire(str(rest))]
    tail: Text<'a>,
}

#[test]
fn the_terminator_is_left_for_the_next_field_and_not_written_twice() {
    let last = Part {
        pairs: b"\\a\\b",
        query_id: 7,
        part: 2,
        last: Some(Final),
    };
    let bytes = last.to_vec().unwrap();
    assert_eq!(bytes, b"\\a\\b\\queryid\\7.2\\final\\");
    assert_eq!(last.encoded_len(()), bytes.len());
    assert_eq!(Part::from_bytes(&bytes).unwrap(), last);
    // With `or_end`, the end of the input ends the number; nothing is written after it.
    let first = Part {
        part: 1,
        last: None,
        ..last
    };
    assert_eq!(first.to_vec().unwrap(), b"\\a\\b\\queryid\\7.1");
    assert_eq!(Part::from_bytes(b"\\a\\b\\queryid\\7.1").unwrap(), first);
}

#[test]
fn what_follows_must_read_the_terminator() {
    // The `\` left by the part number must start `\final\`.
    let err = Part::from_bytes(b"\\queryid\\7.1\\finale").unwrap_err();
    assert_eq!(err.offset(), 12);
    assert_eq!(err.path_string(), "Part.last");
    assert!(
        matches!(err.kind(), ErrorKind::BadMagic { .. }),
        "{:?}",
        err.kind()
    );
    // `max` counts the bytes before the terminator.
    let err = Part::from_bytes(b"\\queryid\\7.12345678901").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 11, max: 10 });
}

#[test]
fn text_ends_before_any_of_its_terminators() {
    let quoted = Quoted::from_bytes(b"caf\xe9#\"x\"").unwrap();
    assert_eq!(quoted.head, "café");
    assert_eq!(quoted.tail.as_bytes(), b"#\"x\"");
    let bytes = quoted.to_vec().unwrap();
    assert_eq!(bytes, b"caf\xe9#\"x\"");
    assert_eq!(quoted.encoded_len(()), bytes.len());
    // Without `or_end` a missing terminator is a cut input.
    let err = Quoted::from_bytes(b"abc").unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }));
    // A value holding a terminator would read back shorter.
    let err = Quoted {
        head: "a\"b".into(),
        tail: Text::from_bytes(b"#"),
    }
    .to_vec()
    .unwrap_err();
    assert_eq!((err.offset(), err.path_string()), (1, "head".to_owned()));
}
