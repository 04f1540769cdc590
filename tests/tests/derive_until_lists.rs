//! Lists and text ended by any byte or byte string: `until = ..` and `before = ..` on a
//! `Vec`, `until = b"\r\n"` and `or_end` in `str`/`bytes`/`dec` framing.

use query_wire::{Decode, Encode, ErrorKind, Reader, Text, Wire};

/// A line of numbers before a quoted name (Quake 3's player line with extra numbers), then
/// `; `-separated fields up to a CRLF, then the rest of the input up to another CRLF or the end.
#[derive(Debug, Clone, PartialEq, Wire)]
struct Line<'a> {
    #[wire(before = b'"', max_count = 4, dec(until = b' '))]
    numbers: Vec<i64>,
    #[wire(str(quoted))]
    name: Text<'a>,
    #[wire(until(b"\r\n", or_end), bytes(until = b"; "))]
    fields: Vec<&'a [u8]>,
    #[wire(str(until = b"\r\n", or_end))]
    rest: Text<'a>,
}

const WIRE: &[u8] = b"12 -3 7 \"ann\"a; bb; \r\ntail\r\n";

fn line() -> Line<'static> {
    Line {
        numbers: vec![12, -3, 7],
        name: Text::from_bytes(b"ann"),
        fields: vec![b"a", b"bb"],
        rest: Text::from_bytes(b"tail"),
    }
}

fn decode(bytes: &[u8]) -> query_wire::Result<Line<'_>> {
    Line::decode_exact(&mut Reader::new(bytes), ())
}

#[test]
fn lists_end_at_their_terminator_both_ways() {
    assert_eq!(decode(WIRE).unwrap(), line());
    assert_eq!(line().to_vec().unwrap(), WIRE);
    assert_eq!(line().encoded_len(()), WIRE.len());
}

#[test]
fn before_leaves_its_bytes_for_the_next_field_and_may_be_empty() {
    let bytes = b"\"x\"\r\n";
    let decoded = decode(bytes).unwrap();
    assert!(decoded.numbers.is_empty());
    assert!(decoded.fields.is_empty());
    assert_eq!(decoded.rest.as_bytes(), b"");
    assert_eq!(decoded.to_vec().unwrap(), b"\"x\"\r\n\r\n");
}

#[test]
fn or_end_lets_the_end_of_the_input_end_a_list_or_a_text() {
    // The field list and the rest both cut by the end of the input: as if each ended there.
    let decoded = decode(b"1 \"n\"a; ").unwrap();
    assert_eq!(decoded.fields, [&b"a"[..]]);
    assert_eq!(decoded.rest.as_bytes(), b"");
    let decoded = decode(b"1 \"n\"\r\nlast line").unwrap();
    assert_eq!(decoded.rest.as_bytes(), b"last line");
    // Without `or_end`, a list ended `before` a byte that never comes is cut.
    let err = decode(b"1 2 ").unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{err}"
    );
    assert_eq!(err.path_string(), "numbers");
}

#[test]
fn a_multi_byte_terminator_is_found_whole() {
    // A lone `\r` or `;` is part of the value; only the whole terminator ends it.
    let decoded = decode(b"\"n\"a;b\rc; \r\nx\ry\r\n").unwrap();
    assert_eq!(decoded.fields, [&b"a;b\rc"[..]]);
    assert_eq!(decoded.rest.as_bytes(), b"x\ry");
}

#[test]
fn errors_name_the_element_and_its_offset() {
    let err = decode(b"1 x2 \"n\"\r\n").unwrap_err();
    assert_eq!(err.path_string(), "numbers[1]");
    assert_eq!(err.offset(), 2);
    let err = decode(b"1 2 3 4 5 \"n\"\r\n").unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::TooLong { .. }), "{err}");
}

#[test]
fn elements_that_would_read_back_as_the_end_cannot_be_written() {
    // An empty field still writes its own terminator, so it reads back.
    let mut empty = line();
    empty.fields = vec![b"a", b""];
    assert_eq!(decode(&empty.to_vec().unwrap()).unwrap(), empty);
    // A field starting with the list's terminator would end the list early.
    let mut bad = line();
    bad.fields = vec![b"a", b"\r\nx"];
    let err = bad.to_vec().unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)), "{err}");
    assert_eq!(err.path_string(), "fields[1]");
    // A value holding its own terminator would read back shorter.
    let mut bad = line();
    bad.rest = Text::from_bytes(b"a\r\nb");
    assert!(matches!(
        bad.to_vec().unwrap_err().kind(),
        ErrorKind::Invalid(_)
    ));
    // A start of the terminator at a value's end is harmless when the terminator does not
    // overlap itself: `a;` then `; ` reads back as `a;`.
    let mut fine = line();
    fine.fields = vec![b"a;"];
    assert_eq!(decode(&fine.to_vec().unwrap()).unwrap(), fine);
}

#[test]
fn every_cut_is_an_error_or_a_shorter_value_never_a_panic() {
    for cut in 0..WIRE.len() {
        if let Err(err) = decode(&WIRE[..cut]) {
            assert!(err.offset() <= cut, "cut at {cut}: {err}");
        }
    }
}
