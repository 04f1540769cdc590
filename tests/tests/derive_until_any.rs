//! `until = [..]`: text, bytes and lists ended by any of several byte strings, as a Quake 3
//! request's challenge ends with a newline, a NUL, both, or the datagram's end.

use query_wire::{Decode, Encode, ErrorKind, Reader, Text, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
struct Challenge<'a> {
    #[wire(str(until = [b"\n", b"\n\0", b"\0"], or_end, max = 8))]
    text: Text<'a>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
struct Strict<'a> {
    /// Without `or_end`: a terminator must come.
    #[wire(bytes(until = [b'\n', b"\r\n"]))]
    line: &'a [u8],
    #[wire(bytes(rest))]
    rest: &'a [u8],
}

const SEMICOLON: &[u8] = b";";

#[derive(Debug, Clone, PartialEq, Wire)]
struct Words<'a> {
    /// Words ended by a space or a comma, the list by a newline or a `;` constant.
    #[wire(until([b'\n', SEMICOLON], or_end), bytes(until = [b' ', b',']))]
    words: Vec<&'a [u8]>,
    #[wire(bytes(rest))]
    rest: &'a [u8],
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(magic = b"#")]
struct Comment;

#[derive(Debug, Clone, PartialEq, Wire)]
struct Marked {
    /// Numbers up to a quote, a hash or a slash, which are left for the next field.
    #[wire(before = [b'"', b'#', b'/'], dec(until = b' '))]
    numbers: Vec<u32>,
    #[wire(if_next = [b"#", b"//"])]
    comment: Option<Comment>,
}

fn challenge(bytes: &[u8]) -> query_wire::Result<(Challenge<'_>, usize)> {
    let mut r = Reader::new(bytes);
    let value = Challenge::decode(&mut r, ())?;
    Ok((value, r.offset()))
}

#[test]
fn text_ends_at_the_first_terminator_of_the_list_and_there_at_the_longest() {
    for (bytes, text, read) in [
        (&b"abc\n"[..], &b"abc"[..], 4),
        (b"abc\0", b"abc", 4),
        (b"abc\n\0", b"abc", 5),
        (b"abc", b"abc", 3),
        (b"a\0b\n", b"a", 2),
        (b"\n\0\n", b"", 2),
    ] {
        let (value, offset) = challenge(bytes).unwrap();
        assert_eq!(value.text.as_bytes(), text, "{bytes:?}");
        assert_eq!(offset, read, "{bytes:?}");
    }
}

#[test]
fn encoding_writes_the_first_terminator_and_counts_it() {
    let value = Challenge {
        text: Text::from_bytes(b"12"),
    };
    assert_eq!(value.to_vec().unwrap(), b"12\n");
    assert_eq!(value.encoded_len(()), 3);
    // A value holding any of the terminators would read back shorter.
    for bad in [&b"1\x002"[..], b"1\n2", b"12\0"] {
        let err = Challenge {
            text: Text::from_bytes(bad),
        }
        .to_vec()
        .unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Invalid(_)), "{err}");
        assert_eq!(err.path_string(), "text");
    }
    // `max` counts the bytes before the terminator, both ways.
    let err = Challenge::from_bytes(b"123456789\n").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 9, max: 8 });
}

#[test]
fn without_or_end_a_missing_terminator_is_a_cut_input() {
    let strict = Strict::from_bytes(b"ab\r\ncd").unwrap();
    assert_eq!((strict.line, strict.rest), (&b"ab"[..], &b"cd"[..]));
    // `\r\n` and `\n` start at different places: the first place wins.
    let strict = Strict::from_bytes(b"a\r\n").unwrap();
    assert_eq!(strict.line, b"a");
    let err = Strict::from_bytes(b"abc").unwrap_err();
    assert_eq!(err.offset(), 3);
    assert!(matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }));
    // A value ending in `\r` would read back as ended by `\r\n`.
    let err = Strict {
        line: b"a\r",
        rest: b"",
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.offset(), 1);
}

#[test]
fn lists_end_at_any_of_their_terminators() {
    let words = Words::from_bytes(b"a b,c,;x").unwrap();
    assert_eq!(words.words, [&b"a"[..], b"b", b"c"]);
    assert_eq!(words.rest, b"x");
    let words = Words::from_bytes(b"a \nx").unwrap();
    assert_eq!(words.words, [&b"a"[..]]);
    assert_eq!(words.rest, b"x");
    // The end of the input ends the list too.
    assert_eq!(Words::from_bytes(b"a ").unwrap().words.len(), 1);
    // Encoding writes each word's first terminator, then the list's.
    let words = Words {
        words: vec![b"a", b"b"],
        rest: b"",
    };
    let bytes = words.to_vec().unwrap();
    assert_eq!(bytes, b"a b \n");
    assert_eq!(words.encoded_len(()), bytes.len());
    // A word that starts with one of the list's terminators would end the list.
    let err = Words {
        words: vec![b"a", b";b"],
        rest: b"",
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.path_string(), "words[1]");
}

#[test]
fn before_and_if_next_look_for_any_of_their_bytes() {
    let marked = Marked::from_bytes(b"1 2 #").unwrap();
    assert_eq!(marked.numbers, [1, 2]);
    assert_eq!(marked.comment, Some(Comment));
    assert_eq!(marked.to_vec().unwrap(), b"1 2 #");
    // `//` announces the comment too, which then must start with its magic.
    let err = Marked::from_bytes(b"1 //").unwrap_err();
    assert_eq!(err.offset(), 2);
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }));
    let err = Marked::from_bytes(b"1 \"").unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::TrailingBytes { .. }),
        "{err}"
    );
}
