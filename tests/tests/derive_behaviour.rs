//! `#[derive(Wire)]` on types that use every part of the vocabulary: exact bytes on the wire,
//! exact `encoded_len`, and errors that name the byte offset and the field path.

mod derive_types;

use std::borrow::Cow;

use derive_types::*;
use query_wire::{Decode, Encode, Error, ErrorKind, Padding, Reader, Reserved, Text, Uuid};

/// Encodes to exactly `expected`, with an exact `encoded_len`, and decodes back.
fn roundtrip<'a, T>(value: &T, ctx: <T as Encode>::Ctx, expected: &'a [u8])
where
    T: Encode + Decode<'a, Ctx = <T as Encode>::Ctx> + PartialEq + std::fmt::Debug,
{
    let bytes = value.to_vec_with(ctx).unwrap();
    assert_eq!(bytes, expected, "encoding of {value:?}");
    assert_eq!(value.encoded_len(ctx), expected.len());
    assert_eq!(&T::from_bytes_with(expected, ctx).unwrap(), value);
}

fn check_error(err: &Error, kind: ErrorKind, offset: usize, path: &str) {
    assert_eq!(err.kind(), &kind, "{err}");
    assert_eq!(err.offset(), offset, "{err}");
    assert_eq!(err.path_string(), path, "{err}");
}

const ID: u128 = 0x0011_2233_4455_6677_8899_aabb_ccdd_eeff;

fn scalars() -> Scalars {
    Scalars {
        a: 1,
        b: 0x0203,
        c: 0x0405_0607,
        d: 0x0809_0a0b_0c0d_0e0f,
        e: -1,
        f: -2,
        g: -3,
        h: -4,
        x: 1.5,
        y: -2.25,
        on: true,
        little: 0x1122_3344,
        raw: [9, 8, 7],
        id: Uuid::from_u128(ID),
        id_little: Uuid::from_u128(ID),
        flags: Flags::NAME | Flags::EXTRA,
        flags_little: Flags::SCORES,
        reserved: Reserved,
        padding: Padding,
    }
}

fn scalars_bytes() -> Vec<u8> {
    let mut b = b"FIX".to_vec();
    b.extend([1, 2, 3, 4, 5, 6, 7]);
    b.extend(0x0809_0a0b_0c0d_0e0fu64.to_be_bytes());
    b.extend([0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xfd]);
    b.extend((-4i64).to_be_bytes());
    b.extend([0x3f, 0xc0, 0, 0]);
    b.extend([0xc0, 0x02, 0, 0, 0, 0, 0, 0]);
    b.push(1);
    b.extend([0x44, 0x33, 0x22, 0x11]);
    b.extend([9, 8, 7]);
    b.extend(ID.to_be_bytes());
    b.extend([0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00]);
    b.extend([0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88]);
    b.extend([0x01, 0x01, 0x02, 0x00]);
    b.extend([0, 0, 0]);
    b
}

#[test]
fn numbers_uuids_and_flags_in_both_byte_orders() {
    let bytes = scalars_bytes();
    roundtrip(&scalars(), (), &bytes);
    assert_eq!(
        scalars().encoded_len(()),
        3 + 30 + 12 + 1 + 4 + 3 + 32 + 4 + 3
    );
}

/// `a` to `y` are one run of fixed-width numbers, read with one bounds check; cut anywhere in
/// it, the error still names the field the bytes ran out in, at that field's offset.
#[test]
fn a_run_of_numbers_cut_short_names_the_field_it_ends_in() {
    let bytes = scalars_bytes();
    let fields = [
        ("a", 1),
        ("b", 2),
        ("c", 4),
        ("d", 8),
        ("e", 1),
        ("f", 2),
        ("g", 4),
        ("h", 8),
        ("x", 4),
        ("y", 8),
    ];
    let mut start = 3;
    for (name, width) in fields {
        for cut in start..start + width {
            let err = Scalars::from_bytes(&bytes[..cut]).unwrap_err();
            let have = cut - start;
            check_error(
                &err,
                ErrorKind::UnexpectedEnd { need: width, have },
                start,
                &format!("Scalars.{name}"),
            );
        }
        start += width;
    }
}

#[test]
fn unknown_flag_bits_are_kept() {
    let mut bytes = scalars_bytes();
    let at = bytes.len() - 7;
    bytes[at] = 0x80;
    let decoded = Scalars::from_bytes(&bytes).unwrap();
    assert_eq!(decoded.flags.bits(), 0x8001);
    assert_eq!(decoded.to_vec().unwrap(), bytes);
}

#[test]
fn bool_reads_any_non_zero_byte_as_true_and_padding_is_ignored() {
    let mut bytes = scalars_bytes();
    let on = 3 + 30 + 12;
    bytes[on] = 7;
    let last = bytes.len() - 1;
    bytes[last] = 0x55;
    let decoded = Scalars::from_bytes(&bytes).unwrap();
    assert!(decoded.on);
    assert_eq!(decoded, scalars());
}

#[test]
fn magic_and_reserved_bytes_are_checked_where_they_are() {
    let mut bytes = scalars_bytes();
    bytes[1] = b'Y';
    let err = Scalars::from_bytes(&bytes).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::BadMagic {
            expected: b"FIX",
            ..
        }
    ));
    assert_eq!(err.offset(), 0);
    assert_eq!(err.path_string(), "Scalars");

    let mut bytes = scalars_bytes();
    let reserved = bytes.len() - 2;
    bytes[reserved] = 1;
    let err = Scalars::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::Invalid("reserved byte is not zero"),
        reserved,
        "Scalars.reserved",
    );
}

fn strings() -> Strings<'static> {
    Strings {
        borrowed: "hé",
        bounded: "abc",
        latin1: "ñ".into(),
        cyrillic: Cow::Borrowed("Жa"),
        western: "€".into(),
        owned: "x".into(),
        raw: Text::from_bytes(&[0xff, 0x00]),
        big_prefix: Cow::Borrowed("ok"),
        bytes: &[1, 2],
        owned_bytes: vec![3],
        cow_bytes: Cow::Borrowed(&[]),
    }
}

const STRINGS: &[u8] = &[
    3, b'h', 0xc3, 0xa9, // borrowed
    3, 0, b'a', b'b', b'c', // bounded
    1, 0, 0, 0, 0xf1, // latin1
    2, 0xc6, b'a', // cyrillic
    1, 0, 0x80, // western
    1, 0, 0, 0, 0, 0, 0, 0, b'x', // owned
    2, 0xff, 0x00, // raw
    0, 2, b'o', b'k', // big_prefix
    2, 1, 2, // bytes
    1, 0, 3, // owned_bytes
    0, 0, 0, 0, // cow_bytes
];

#[test]
fn strings_in_every_type_encoding_and_prefix_width() {
    roundtrip(&strings(), (), STRINGS);
}

#[test]
fn borrowed_fields_point_into_the_input() {
    let decoded = Strings::from_bytes(STRINGS).unwrap();
    let input = STRINGS.as_ptr_range();
    assert!(input.contains(&decoded.borrowed.as_ptr()));
    assert!(input.contains(&decoded.bytes.as_ptr()));
    assert!(matches!(decoded.big_prefix, Cow::Borrowed(_)));
    // Cyrillic text is converted from Windows-1251, so it cannot borrow.
    assert!(matches!(decoded.cyrillic, Cow::Owned(_)));
}

#[test]
fn string_maximums_are_checked_both_ways() {
    let long = Strings {
        bounded: "0123456789abc",
        ..strings()
    };
    let err = long.to_vec().unwrap_err();
    check_error(&err, ErrorKind::TooLong { len: 13, max: 12 }, 4, "bounded");

    let mut bytes = STRINGS.to_vec();
    bytes.splice(4..9, [13, 0].into_iter().chain(*b"0123456789abc"));
    let err = Strings::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 13, max: 12 },
        4,
        "Strings.bounded",
    );

    let err = Strings {
        owned_bytes: vec![0; 7],
        ..strings()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 7, max: 6 });
    assert_eq!(err.path_string(), "owned_bytes");
}

#[test]
fn text_errors_point_at_the_offending_byte() {
    let mut bytes = STRINGS.to_vec();
    bytes[3] = 0xff;
    let err = Strings::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::InvalidText { encoding: "UTF-8" },
        2,
        "Strings.borrowed",
    );

    let err = Strings {
        latin1: "aЖ".into(),
        ..strings()
    }
    .to_vec()
    .unwrap_err();
    check_error(
        &err,
        ErrorKind::InvalidText {
            encoding: "Latin-1",
        },
        14,
        "latin1",
    );
}

#[test]
fn a_prefix_too_narrow_for_the_value_is_an_error() {
    let err = Strings {
        borrowed: &"x".repeat(256),
        ..strings()
    }
    .to_vec()
    .unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 256, max: 255 },
        0,
        "borrowed",
    );
}

#[test]
fn decode_exact_and_decode_whole_read_the_same_and_leave_the_reader_as_documented() {
    let bytes = scalars_bytes();
    let whole = Scalars::from_bytes(&bytes).unwrap();
    assert_eq!(whole, scalars());

    // Inside a longer input: offsets stay absolute, the borrowed reader ends up empty.
    let mut framed = vec![0xaa, 0xbb];
    framed.extend(&bytes);
    let mut r = Reader::new(&framed);
    r.skip(2).unwrap();
    assert_eq!(Scalars::decode_whole(r.clone(), ()).unwrap(), whole);
    assert_eq!(Scalars::decode_exact(&mut r, ()).unwrap(), whole);
    assert!(r.is_empty());
    assert_eq!(r.offset(), framed.len());

    // A byte too many: the error is at that byte, and the reader stays where it was.
    framed.push(0);
    let mut r = Reader::new(&framed);
    r.skip(2).unwrap();
    let err = Scalars::decode_exact(&mut r, ()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TrailingBytes { count: 1 }, "{err}");
    assert_eq!(err.offset(), framed.len() - 1);
    assert_eq!(r.offset(), 2);
    let err = Scalars::decode_whole(r.clone(), ()).unwrap_err();
    assert_eq!(err.offset(), framed.len() - 1);
}

#[test]
fn rest_fields_run_to_the_end_of_their_frame() {
    let tails = Tails {
        text: RestText {
            head: "a",
            tail: "é".into(),
        },
        bytes: RestBytes {
            kind: 7,
            tail: &[1, 2],
        },
    };
    roundtrip(&tails, (), &[3, 1, b'a', 0xe9, 0, 3, 7, 1, 2]);

    let mut long = vec![22, 0];
    long.extend([b'z'; 21]);
    long.extend([0, 1, 7]);
    let err = Tails::from_bytes(&long).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 21, max: 20 },
        2,
        "Tails.text.tail",
    );
}

#[test]
fn tuple_fields_are_numbered_in_paths_and_named_in_expressions() {
    roundtrip(&Pair(2, vec![5, 6]), (), &[2, 0, 5, 6]);
    let err = Pair::from_bytes(&[2, 0, 5]).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 1, have: 0 },
        3,
        "Pair.1[1]",
    );
    let err = Pair(3, vec![1]).to_vec().unwrap_err();
    check_error(
        &err,
        ErrorKind::LengthMismatch {
            declared: 3,
            actual: 1,
        },
        2,
        "1",
    );
}

fn chunks() -> Chunks<'static> {
    Chunks {
        name: Some(Named {
            map: "de",
            port: 7777,
        }),
        scores: Some(vec![Score {
            points: Scaled {
                raw: 1,
                checks: vec![Check { byte: Some(9) }, Check { byte: Some(8) }],
            },
        }]),
        extra: Some(5),
    }
}

const CHUNKS: &[u8] = &[
    0, 0, 0, 5, 2, b'd', b'e', 0x1e, 0x61, // name
    0, 4, 1, 0, 9, 8, // scores
    5, // extra
];

const ALL: Flags = Flags::all();

#[test]
fn context_selects_optional_fields_and_reaches_nested_types() {
    roundtrip(&chunks(), (ALL, 2), CHUNKS);

    let none = Chunks {
        name: None,
        scores: None,
        extra: None,
    };
    roundtrip(&none, (Flags::empty(), 2), &[]);

    // `extra` also depends on an earlier field: without scores it is absent.
    let no_scores = Chunks {
        scores: None,
        extra: None,
        ..chunks()
    };
    roundtrip(&no_scores, (ALL - Flags::SCORES, 2), &CHUNKS[..9]);

    // A zero value makes the nested context switch the check bytes off.
    let zero = Chunks {
        scores: Some(vec![Score {
            points: Scaled {
                raw: 0,
                checks: vec![Check { byte: None }; 3],
            },
        }]),
        ..chunks()
    };
    let mut expected = CHUNKS[..9].to_vec();
    expected.extend([0, 2, 0, 0, 5]);
    roundtrip(&zero, (ALL, 3), &expected);
}

#[test]
fn presence_must_match_the_condition_on_encode() {
    let err = chunks().to_vec_with((Flags::SCORES, 2)).unwrap_err();
    check_error(
        &err,
        ErrorKind::Invalid("field presence does not match its condition"),
        0,
        "name",
    );
    let missing = Chunks {
        extra: None,
        ..chunks()
    };
    let err = missing.to_vec_with((ALL, 2)).unwrap_err();
    check_error(
        &err,
        ErrorKind::Invalid("field presence does not match its condition"),
        15,
        "extra",
    );
}

#[test]
fn a_length_frame_bounds_the_body_and_may_skip_its_surplus() {
    let mut bytes = vec![0, 0, 0, 7, 2, b'd', b'e', 0x1e, 0x61, 0xaa, 0xbb];
    bytes.extend(&CHUNKS[9..]);
    let decoded = Chunks::from_bytes_with(&bytes, (ALL, 2)).unwrap();
    assert_eq!(decoded, chunks());

    let short = [0, 0, 0, 5, 2, b'd'];
    let err = Chunks::from_bytes_with(&short, (ALL, 2)).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 5, have: 2 },
        4,
        "Chunks.name",
    );

    // Reading past the frame fails at the absolute offset where the frame ends.
    let mut overrun = vec![0, 0, 0, 5, 4, b'd', b'e', 0x1e, 0x61];
    overrun.extend(&CHUNKS[9..]);
    let err = Chunks::from_bytes_with(&overrun, (ALL, 2)).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 2, have: 0 },
        9,
        "Chunks.name.port",
    );
    assert_eq!(
        err.to_string(),
        "Chunks.name.port at byte 9: need 2 bytes, have 0"
    );

    // Without `surplus = "skip"`, bytes left in a frame are an error.
    let framed = Framed {
        named: Named { map: "a", port: 80 },
    };
    roundtrip(&framed, (), &[4, 1, b'a', 0, 80]);
    let err = Framed::from_bytes(&[5, 1, b'a', 0, 80, 0xaa]).unwrap_err();
    check_error(
        &err,
        ErrorKind::TrailingBytes { count: 1 },
        5,
        "Framed.named",
    );
}

#[test]
fn until_end_elements_report_their_index() {
    let mut bytes = CHUNKS[..9].to_vec();
    bytes.extend([0, 6, 1, 0, 9, 8, 2, 0]);
    let err = Chunks::from_bytes_with(&bytes, (Flags::NAME | Flags::SCORES, 2)).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 1, have: 0 },
        17,
        "Chunks.scores[1].points.checks[0].byte",
    );
}

fn repeats() -> Repeats<'static> {
    Repeats {
        numbers: vec![1, 2],
        names: vec!["a", "bc"],
        n: 2,
        indexed: vec![Indexed { values: vec![] }, Indexed { values: vec![7] }],
        pairs: vec![Pair(1, vec![9])],
        flag_sets: vec![Flags::NAME],
        ids: vec![],
    }
}

const REPEATS: &[u8] = &[
    2, 0, 1, 0, 2, // numbers
    2, 0, 1, b'a', 2, b'b', b'c', // names
    2,    // n
    7,    // indexed: element 0 holds 0 bytes, element 1 holds 1
    0, 3, 1, 0, 9, // pairs
    1, 0, 1, // flag_sets
    0, // ids
];

#[test]
fn repeats_in_every_form() {
    roundtrip(&repeats(), (), REPEATS);
    let with_ids = Repeats {
        ids: vec![Uuid::from_u128(ID), Uuid::nil()],
        ..repeats()
    };
    let mut expected = REPEATS[..REPEATS.len() - 1].to_vec();
    expected.push(2);
    expected.extend(ID.to_be_bytes());
    expected.extend([0; 16]);
    roundtrip(&with_ids, (), &expected);
}

#[test]
fn max_count_is_enforced_both_ways() {
    let mut bytes = REPEATS.to_vec();
    bytes[5] = 4;
    let err = Repeats::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 4, max: 3 },
        5,
        "Repeats.names",
    );
    let err = Repeats {
        names: vec!["a"; 4],
        ..repeats()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 4, max: 3 });
    assert_eq!(err.path_string(), "names");

    let err = Repeats {
        pairs: vec![Pair(0, vec![]); 5],
        ..repeats()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
    let mut bytes = REPEATS[..14].to_vec();
    bytes.extend([0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend(&REPEATS[19..]);
    let err = Repeats::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooLong { len: 5, max: 4 },
        24,
        "Repeats.pairs",
    );
}

fn at_least() -> AtLeast {
    AtLeast {
        rows: 1,
        columns: Some(vec![7]),
        n: 2,
        pair: vec![1, 2],
        tail: vec![0x0304],
    }
}

const AT_LEAST: &[u8] = &[1, 0, 1, 7, 2, 1, 2, 2, 3, 4];

#[test]
fn min_count_is_enforced_both_ways() {
    roundtrip(&at_least(), (), AT_LEAST);
    // Absent when its condition is false: no minimum to meet.
    let no_rows = AtLeast {
        rows: 0,
        columns: None,
        ..at_least()
    };
    roundtrip(&no_rows, (), &[0, 2, 1, 2, 2, 3, 4]);

    // A count prefix of 0: refused at the prefix's first byte.
    let err = AtLeast::from_bytes(&[1, 0, 0, 2, 1, 2, 2, 3, 4]).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooFew { len: 0, min: 1 },
        1,
        "AtLeast.columns",
    );
    assert_eq!(
        err.to_string(),
        "AtLeast.columns at byte 1: 0 elements are fewer than the minimum of 1"
    );
    // A computed count of 1: refused where the elements would start.
    let err = AtLeast::from_bytes(&[1, 0, 1, 7, 1, 9, 2, 3, 4]).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooFew { len: 1, min: 2 },
        5,
        "AtLeast.pair",
    );
    // An `until_end` repeat that found nothing in its frame: refused where it stopped.
    let err = AtLeast::from_bytes(&[1, 0, 1, 7, 2, 1, 2, 0]).unwrap_err();
    check_error(
        &err,
        ErrorKind::TooFew { len: 0, min: 1 },
        8,
        "AtLeast.tail",
    );

    // Encoding refuses the same values, at the position the count would take.
    let err = AtLeast {
        columns: Some(Vec::new()),
        ..at_least()
    }
    .to_vec()
    .unwrap_err();
    check_error(&err, ErrorKind::TooFew { len: 0, min: 1 }, 1, "columns");
    let err = AtLeast {
        n: 1,
        pair: vec![1],
        ..at_least()
    }
    .to_vec()
    .unwrap_err();
    check_error(&err, ErrorKind::TooFew { len: 1, min: 2 }, 5, "pair");
    let err = AtLeast {
        tail: Vec::new(),
        ..at_least()
    }
    .to_vec()
    .unwrap_err();
    check_error(&err, ErrorKind::TooFew { len: 0, min: 1 }, 8, "tail");
    // The maximum still holds beside the minimum.
    let err = AtLeast {
        tail: vec![1, 2, 3],
        ..at_least()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 3, max: 2 });
}

#[test]
fn element_errors_carry_their_index() {
    let mut bytes = REPEATS.to_vec();
    bytes[10] = 0xff;
    let err = Repeats::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::InvalidText { encoding: "UTF-8" },
        10,
        "Repeats.names[1]",
    );
}

#[test]
fn a_huge_count_fails_on_the_missing_bytes_without_allocating_for_it() {
    let bytes = [0xff, 0, 1];
    let err = Repeats::from_bytes(&bytes).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 2, have: 0 },
        3,
        "Repeats.numbers[1]",
    );
}

#[test]
fn an_element_that_reads_nothing_cannot_repeat_until_the_end() {
    roundtrip(&Spinner { items: vec![] }, (), &[]);
    let err = Spinner::from_bytes(&[1]).unwrap_err();
    check_error(
        &err,
        ErrorKind::Invalid("repeated element takes no bytes"),
        0,
        "Spinner.items[0]",
    );
}

#[test]
fn default_fields_are_not_on_the_wire() {
    let value = WithDefault {
        kept: 4,
        local: vec!["x".into()],
    };
    assert_eq!(value.to_vec().unwrap(), [4]);
    assert_eq!(value.encoded_len(()), 1);
    let decoded = WithDefault::from_bytes(&[4]).unwrap();
    assert_eq!(decoded.local, Vec::<String>::new());
}

#[test]
fn tagged_enum_variants_of_every_shape() {
    roundtrip(&Message::Ping, (), &[0xfe, 0]);
    roundtrip(&Message::Number(5), (), &[0xfe, 1, 0, 0, 0, 5]);
    roundtrip(&Message::Pair(3, "x"), (), &[0xfe, 2, 3, 1, b'x']);
    roundtrip(
        &Message::Named {
            name: "n",
            values: vec![-1],
        },
        (),
        &[0xfe, 0x10, 0, 1, b'n', 1, 0xff, 0xff],
    );
    assert_eq!(Message::Ping.tag(), 0);
    assert_eq!(Message::Pair(0, "").tag(), 2);
    assert_eq!(
        Message::Named {
            name: "",
            values: vec![]
        }
        .tag(),
        MESSAGE_NAMED
    );
}

#[test]
fn enum_errors() {
    let err = Message::from_bytes(&[0xfe, 7]).unwrap_err();
    check_error(&err, ErrorKind::UnknownTag { tag: 7 }, 1, "Message");
    // Several tuple fields are numbered; a single one adds nothing to the path.
    let err = Message::from_bytes(&[0xfe, 2, 3, 2, b'x']).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 2, have: 1 },
        4,
        "Message.1",
    );
    let err = Message::from_bytes(&[0xfe, 1, 0]).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 4, have: 1 },
        2,
        "Message",
    );
}

#[test]
fn tlv_enum_keeps_unknown_entries_and_skips_surplus() {
    roundtrip(
        &Entry::Name("ab"),
        Flags::empty(),
        &[1, 0, 3, 0, 2, b'a', b'b'],
    );
    roundtrip(
        &Entry::Sizes { sizes: vec![1, 2] },
        Flags::empty(),
        &[2, 0, 8, 0, 1, 0, 0, 0, 2, 0, 0, 0],
    );
    roundtrip(&Entry::Flagged(Some(4)), Flags::EXTRA, &[3, 0, 1, 0, 4]);
    roundtrip(&Entry::Flagged(None), Flags::empty(), &[3, 0, 0, 0]);
    roundtrip(
        &Entry::Unknown(9, &[1, 2, 3]),
        Flags::empty(),
        &[9, 0, 3, 0, 1, 2, 3],
    );
    assert_eq!(Entry::Unknown(9, &[]).tag(), 9);
    assert_eq!(Entry::Name("").tag(), 1);

    let longer = [1, 0, 5, 0, 2, b'a', b'b', 0xaa, 0xbb];
    assert_eq!(
        Entry::from_bytes_with(&longer, Flags::empty()).unwrap(),
        Entry::Name("ab")
    );
    let err = Entry::from_bytes_with(&[1, 0, 5, 0, 2, b'a'], Flags::empty()).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 5, have: 2 },
        4,
        "Entry",
    );
    let err = Entry::from_bytes_with(&[1, 0, 2, 0, 3, b'a'], Flags::empty()).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnexpectedEnd { need: 3, have: 1 },
        5,
        "Entry",
    );
}

#[test]
fn strict_tlv_enum_rejects_surplus_and_unknown_tags() {
    roundtrip(&Strict::Minus(258), (), &[0xff, 2, 1, 2]);
    roundtrip(&Strict::Plus { value: 1 }, (), &[1, 4, 0, 0, 0, 1]);
    assert_eq!(Strict::Minus(0).tag(), -1);
    let err = Strict::from_bytes(&[1, 5, 0, 0, 0, 1, 0xaa]).unwrap_err();
    check_error(&err, ErrorKind::TrailingBytes { count: 1 }, 6, "Strict");
    let err = Strict::from_bytes(&[0xfe, 0]).unwrap_err();
    check_error(
        &err,
        ErrorKind::UnknownTag {
            tag: (-2i64) as u64,
        },
        0,
        "Strict",
    );
}

#[test]
fn external_tag_comes_from_an_earlier_field() {
    roundtrip(
        &Typed {
            kind: 1,
            value: Value::Text("hi"),
        },
        (),
        &[1, 2, b'h', b'i'],
    );
    roundtrip(
        &Typed {
            kind: 0,
            value: Value::Byte(7),
        },
        (),
        &[0, 7],
    );
    roundtrip(
        &Typed {
            kind: 2,
            value: Value::Empty,
        },
        (),
        &[2],
    );
    roundtrip(
        &Typed {
            kind: 9,
            value: Value::Other {
                kind: 9,
                raw: vec![1, 2],
            },
        },
        (),
        &[9, 1, 2],
    );
    assert_eq!(Value::Text("").tag(), 1);
    assert_eq!(
        Value::Other {
            kind: 42,
            raw: vec![]
        }
        .tag(),
        42
    );
    let err = Typed {
        kind: 0,
        value: Value::Text("x"),
    }
    .to_vec()
    .unwrap_err();
    check_error(
        &err,
        ErrorKind::Invalid("variant does not match its tag"),
        1,
        "value",
    );
    let err = Value::Other {
        kind: 3,
        raw: vec![],
    }
    .to_vec_with(4)
    .unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("variant does not match its tag")
    );
}

#[test]
fn discriminants_are_tags() {
    roundtrip(&Kind::Alpha, (), &[1, 0]);
    roundtrip(&Kind::Beta, (), &[0, 2]);
    assert_eq!(Kind::Beta.tag(), 0x200);
    let err = Kind::from_bytes(&[2, 0]).unwrap_err();
    check_error(&err, ErrorKind::UnknownTag { tag: 2 }, 0, "Kind");
}

#[test]
fn a_unit_struct_is_its_magic() {
    roundtrip(&Ping, (), b"\xff\xff\xff\xffping");
    let err = Ping::from_bytes(b"\xff\xff\xff\xffpong").unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }));
    let err = Ping::from_bytes(b"\xff\xff\xff\xffping!").unwrap_err();
    check_error(&err, ErrorKind::TrailingBytes { count: 1 }, 8, "Ping");
}

#[test]
fn encoding_into_a_short_buffer_fails_cleanly() {
    let value = repeats();
    let mut buf = vec![0u8; value.encoded_len(()) - 1];
    let err = value.encode_into(&mut buf).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::BufferTooSmall { .. }),
        "{err}"
    );
    let mut exact = vec![0u8; value.encoded_len(())];
    assert_eq!(value.encode_into(&mut exact).unwrap(), REPEATS.len());
}

#[test]
fn a_short_buffer_inside_a_run_of_numbers_names_the_field_that_does_not_fit() {
    // `a` to `little` are written as one run with one bounds check; when the run does not fit,
    // the error is the one writing field by field gives.
    let value = scalars();
    let mut buf = [0u8; 3 + 1 + 2 + 4 + 3];
    let err = value.encode_into(&mut buf).unwrap_err();
    check_error(
        &err,
        ErrorKind::BufferTooSmall { need: 8, have: 3 },
        10,
        "d",
    );
    let mut exact = vec![0u8; value.encoded_len(())];
    assert_eq!(value.encode_into(&mut exact).unwrap(), exact.len());
    assert_eq!(exact, value.to_vec().unwrap());
}

#[test]
fn generic_packets_pass_their_parameters_through() {
    let envelope = Envelope {
        stamp: [7, 7],
        body: Kind::Beta,
    };
    roundtrip(&envelope, (), &[7, 7, 0, 2, 0, 2]);
}
