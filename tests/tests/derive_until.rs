//! `str(until = ..)`, `str(quoted)`, `bytes(until = ..)` and `dec(until = ..)`: the space-,
//! quote- and newline-ended text of the Quake 3 family's player lines.

use std::borrow::Cow;

use query_wire::{Decode, Encode, ErrorKind, Reader, Text, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
struct Line<'a> {
    #[wire(dec(until = b' '))]
    score: i32,
    #[wire(dec(until = b' ', max = 5))]
    ping: u16,
    #[wire(str(quoted, encoding = "windows1252"))]
    name: Cow<'a, str>,
    #[wire(str(quoted))]
    raw: Text<'a>,
    #[wire(bytes(until = b'\n'))]
    extra: &'a [u8],
}

const WIRE: &[u8] = b"-7 48 \"Jos\xe9\"\"\xff\" red\n";

fn line() -> Line<'static> {
    Line {
        score: -7,
        ping: 48,
        name: Cow::Owned("José".to_owned()),
        raw: Text::from_bytes(b"\xff"),
        extra: b" red",
    }
}

fn decode(bytes: &[u8]) -> query_wire::Result<Line<'_>> {
    let mut r = Reader::new(bytes);
    let line = Line::decode(&mut r, ())?;
    assert!(r.is_empty());
    Ok(line)
}

#[test]
fn fields_end_at_their_byte_both_ways() {
    assert_eq!(decode(WIRE).unwrap(), line());
    assert_eq!(line().to_vec().unwrap(), WIRE);
    assert_eq!(line().encoded_len(()), WIRE.len());
}

#[test]
fn a_missing_terminator_is_an_unexpected_end_at_the_end() {
    for cut in 0..WIRE.len() {
        let err = decode(&WIRE[..cut]).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
            "cut at {cut}: {err}"
        );
    }
}

#[test]
fn numbers_that_are_not_decimal_are_errors_at_their_first_byte() {
    let err = decode(b"-7 x8 \"a\"\"b\"\n").unwrap_err();
    assert_eq!(err.offset(), 3);
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)));
    assert_eq!(err.path_string(), "ping");
    // Out of the field's range.
    assert!(decode(b"1 70000 \"a\"\"b\"\n").is_err());
    // Empty.
    assert_eq!(decode(b" 1 \"a\"\"b\"\n").unwrap_err().offset(), 0);
    // Longer than `max`.
    assert!(matches!(
        decode(b"1 000001 \"a\"\"b\"\n").unwrap_err().kind(),
        ErrorKind::TooLong { .. }
    ));
}

#[test]
fn a_missing_opening_quote_is_bad_magic_at_its_offset() {
    let err = decode(b"1 2 a\"\"b\"\n").unwrap_err();
    assert_eq!(err.offset(), 4);
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }));
}

#[test]
fn values_holding_their_terminator_cannot_be_written() {
    let mut bad = line();
    bad.name = Cow::Borrowed("a\"b");
    assert!(matches!(
        bad.to_vec().unwrap_err().kind(),
        ErrorKind::Invalid(_)
    ));
    let mut bad = line();
    bad.extra = b"a\nb";
    let err = bad.to_vec().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)));
    assert_eq!(err.offset(), WIRE.len() - 5 + 1);
}

#[test]
fn numbers_round_trip_at_their_extremes() {
    for score in [i32::MIN, -1, 0, i32::MAX] {
        let mut l = line();
        l.score = score;
        l.ping = u16::MAX;
        let bytes = l.to_vec().unwrap();
        assert_eq!(bytes.len(), l.encoded_len(()));
        assert_eq!(decode(&bytes).unwrap(), l);
    }
}

#[test]
fn a_cut_number_names_its_field_once() {
    let err = decode(b"12").unwrap_err();
    assert_eq!(err.path_string(), "score");
}
