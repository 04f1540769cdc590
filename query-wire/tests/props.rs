//! Properties of the runtime on its own: numbers and prefixed strings round-trip through the
//! `Writer` and the `Reader` in both byte orders and every encoding, truncations fail with the
//! bytes needed and had, and no input or buffer size makes a `Reader` or `Writer` panic.

use proptest::prelude::*;
use query_wire::{Endian, ErrorKind, Reader, TextEncoding, Uuid, Writer};

const ENCODINGS: [TextEncoding; 4] = [
    TextEncoding::Utf8,
    TextEncoding::Latin1,
    TextEncoding::Windows1252,
    TextEncoding::Windows1251,
];

fn endian() -> impl Strategy<Value = Endian> {
    prop_oneof![Just(Endian::Big), Just(Endian::Little)]
}

fn encoding() -> impl Strategy<Value = TextEncoding> {
    proptest::sample::select(ENCODINGS.to_vec())
}

/// Text of at most `max` characters that `encoding` can represent: any character for UTF-8,
/// and for the single-byte encodings the characters their bytes decode to.
fn representable(encoding: TextEncoding, max: usize) -> BoxedStrategy<String> {
    match encoding {
        TextEncoding::Utf8 => proptest::collection::vec(any::<char>(), 0..=max)
            .prop_map(|chars| chars.into_iter().collect())
            .boxed(),
        single_byte => proptest::collection::vec(any::<u8>(), 0..=max)
            .prop_map(move |bytes| {
                bytes
                    .iter()
                    .filter_map(|b| single_byte.decode(std::slice::from_ref(b)))
                    .collect()
            })
            .boxed(),
    }
}

fn encoded_text(max: usize) -> impl Strategy<Value = (TextEncoding, String)> {
    encoding().prop_flat_map(move |e| representable(e, max).prop_map(move |text| (e, text)))
}

macro_rules! number_roundtrip {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        proptest! {
            #[test]
            fn $name(value: $t, endian in endian()) {
                let mut buf = [0u8; 8];
                let mut w = Writer::new(&mut buf);
                w.put_number(value, endian).unwrap();
                let size = std::mem::size_of::<$t>();
                prop_assert_eq!(w.position(), size);
                let expected = match endian {
                    Endian::Big => value.to_be_bytes(),
                    Endian::Little => value.to_le_bytes(),
                };
                prop_assert_eq!(&buf[..size], &expected[..]);
                let mut r = Reader::new(&buf[..size]);
                let back: $t = r.number(endian).unwrap();
                // Compared by bits, so that NaNs of floats compare equal to themselves.
                prop_assert_eq!(back.to_ne_bytes(), value.to_ne_bytes());
                prop_assert!(r.is_empty());
                // One byte short: the need and have of the whole number.
                let err = Reader::new(&buf[..size - 1]).number::<$t>(endian).unwrap_err();
                prop_assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: size, have: size - 1 });
                prop_assert_eq!(err.offset(), 0);
            }
        }
    )*};
}

number_roundtrip!(
    u8_roundtrips: u8,
    u16_roundtrips: u16,
    u32_roundtrips: u32,
    u64_roundtrips: u64,
    i8_roundtrips: i8,
    i16_roundtrips: i16,
    i32_roundtrips: i32,
    i64_roundtrips: i64,
    f32_roundtrips: f32,
    f64_roundtrips: f64,
);

/// Writes `text` behind a `P` prefix, returning the bytes.
fn write_prefixed<P: query_wire::Integer>(
    text: &str,
    endian: Endian,
    encoding: TextEncoding,
) -> Vec<u8> {
    let len = std::mem::size_of::<P>() + encoding.encoded_len(text);
    let mut buf = vec![0u8; len];
    let mut w = Writer::new(&mut buf);
    w.put_prefixed_text::<P>(text, endian, None, encoding)
        .unwrap();
    assert_eq!(w.position(), len);
    buf
}

/// Every cut of a prefixed string fails with the bytes it needs and has, where they start.
fn check_truncations<P: query_wire::Integer>(
    bytes: &[u8],
    endian: Endian,
    encoding: TextEncoding,
) -> Result<(), TestCaseError> {
    let width = std::mem::size_of::<P>();
    let body = bytes.len() - width;
    for cut in 0..bytes.len() {
        let err = Reader::new(&bytes[..cut])
            .prefixed_text::<P>(endian, None, encoding)
            .unwrap_err();
        let (need, have, offset) = if cut < width {
            (width, cut, 0)
        } else {
            (body, cut - width, width)
        };
        prop_assert_eq!(
            err.kind(),
            &ErrorKind::UnexpectedEnd { need, have },
            "cut at {}",
            cut
        );
        prop_assert_eq!(err.offset(), offset, "cut at {}", cut);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn prefixed_strings_roundtrip_in_every_encoding(
        (encoding, text) in encoded_text(60),
        endian in endian(),
    ) {
        for (prefix, bytes) in [
            (1, write_prefixed::<u8>(&text, endian, encoding)),
            (2, write_prefixed::<u16>(&text, endian, encoding)),
            (4, write_prefixed::<u32>(&text, endian, encoding)),
        ] {
            let mut r = Reader::new(&bytes);
            let back = match prefix {
                1 => r.prefixed_text::<u8>(endian, None, encoding),
                2 => r.prefixed_text::<u16>(endian, None, encoding),
                _ => r.prefixed_text::<u32>(endian, None, encoding),
            }
            .unwrap();
            prop_assert_eq!(&back, &text);
            prop_assert!(r.is_empty());
            let encoded = encoding.encode(&text).unwrap();
            prop_assert_eq!(encoded.as_ref(), &bytes[prefix..]);
        }
        if encoding == TextEncoding::Utf8 {
            let bytes = write_prefixed::<u16>(&text, endian, encoding);
            prop_assert_eq!(Reader::new(&bytes).prefixed_str::<u16>(endian, None).unwrap(), text.as_str());
        }
    }

    #[test]
    fn every_truncation_of_a_prefixed_string_names_need_and_have(
        (encoding, text) in encoded_text(40),
        endian in endian(),
    ) {
        check_truncations::<u8>(&write_prefixed::<u8>(&text, endian, encoding), endian, encoding)?;
        check_truncations::<u16>(&write_prefixed::<u16>(&text, endian, encoding), endian, encoding)?;
        check_truncations::<u32>(&write_prefixed::<u32>(&text, endian, encoding), endian, encoding)?;
    }

    #[test]
    fn a_string_longer_than_its_maximum_is_refused_both_ways(
        (encoding, text) in encoded_text(40),
        endian in endian(),
    ) {
        let len = encoding.encoded_len(&text);
        prop_assume!(len > 0);
        let max = len - 1;
        let mut buf = vec![0u8; len + 2];
        let err = Writer::new(&mut buf)
            .put_prefixed_text::<u16>(&text, endian, Some(max), encoding)
            .unwrap_err();
        prop_assert_eq!(err.kind(), &ErrorKind::TooLong { len, max });
        let bytes = write_prefixed::<u16>(&text, endian, encoding);
        let err = Reader::new(&bytes)
            .prefixed_text::<u16>(endian, Some(max), encoding)
            .unwrap_err();
        prop_assert_eq!(err.kind(), &ErrorKind::TooLong { len, max });
        prop_assert_eq!(err.offset(), 0);
    }
}

/// One write into a `Writer`, to try against buffers of every size.
type Write<'t> = dyn Fn(&mut Writer<'_>) -> query_wire::Result<()> + 't;

/// One call of a `Reader` method, picked by the random input.
#[derive(Debug, Clone)]
enum ReadOp {
    Bytes(usize),
    Rest,
    Array,
    Skip(usize),
    U8,
    Bool,
    U16(Endian),
    I32(Endian),
    U64(Endian),
    F32(Endian),
    F64(Endian),
    Magic,
    Length(Endian, Option<usize>),
    PrefixedBytes(Endian, Option<usize>),
    StrUtf8(usize),
    PrefixedStr(Endian, Option<usize>),
    PrefixedText(Endian, Option<usize>, TextEncoding),
    Text(usize, TextEncoding),
    RestBytes(Option<usize>),
    RestStr(Option<usize>),
    RestText(Option<usize>, TextEncoding),
    Uuid(Endian),
    CheckCount(usize, Option<usize>),
    Sub(usize),
    ExpectEnd,
}

fn read_op() -> impl Strategy<Value = ReadOp> {
    let n = 0usize..40;
    let max = proptest::option::of(0usize..40);
    prop_oneof![
        n.clone().prop_map(ReadOp::Bytes),
        Just(ReadOp::Rest),
        Just(ReadOp::Array),
        n.clone().prop_map(ReadOp::Skip),
        Just(ReadOp::U8),
        Just(ReadOp::Bool),
        endian().prop_map(ReadOp::U16),
        endian().prop_map(ReadOp::I32),
        endian().prop_map(ReadOp::U64),
        endian().prop_map(ReadOp::F32),
        endian().prop_map(ReadOp::F64),
        Just(ReadOp::Magic),
        (endian(), max.clone()).prop_map(|(e, m)| ReadOp::Length(e, m)),
        (endian(), max.clone()).prop_map(|(e, m)| ReadOp::PrefixedBytes(e, m)),
        n.clone().prop_map(ReadOp::StrUtf8),
        (endian(), max.clone()).prop_map(|(e, m)| ReadOp::PrefixedStr(e, m)),
        (endian(), max.clone(), encoding()).prop_map(|(e, m, c)| ReadOp::PrefixedText(e, m, c)),
        (n.clone(), encoding()).prop_map(|(n, c)| ReadOp::Text(n, c)),
        max.clone().prop_map(ReadOp::RestBytes),
        max.clone().prop_map(ReadOp::RestStr),
        (max.clone(), encoding()).prop_map(|(m, c)| ReadOp::RestText(m, c)),
        endian().prop_map(ReadOp::Uuid),
        (n.clone(), max).prop_map(|(n, m)| ReadOp::CheckCount(n, m)),
        n.prop_map(ReadOp::Sub),
        Just(ReadOp::ExpectEnd),
    ]
}

/// Runs `op`; `Err` carries the error's offset.
fn run(r: &mut Reader<'_>, op: &ReadOp) -> Result<(), usize> {
    let e = |e: query_wire::Error| e.offset();
    match *op {
        ReadOp::Bytes(n) => r.bytes(n).map(drop).map_err(e),
        ReadOp::Rest => {
            r.rest();
            Ok(())
        }
        ReadOp::Array => r.array::<3>().map(drop).map_err(e),
        ReadOp::Skip(n) => r.skip(n).map_err(e),
        ReadOp::U8 => r.u8().map(drop).map_err(e),
        ReadOp::Bool => r.bool().map(drop).map_err(e),
        ReadOp::U16(en) => r.number::<u16>(en).map(drop).map_err(e),
        ReadOp::I32(en) => r.number::<i32>(en).map(drop).map_err(e),
        ReadOp::U64(en) => r.number::<u64>(en).map(drop).map_err(e),
        ReadOp::F32(en) => r.number::<f32>(en).map(drop).map_err(e),
        ReadOp::F64(en) => r.number::<f64>(en).map(drop).map_err(e),
        ReadOp::Magic => r.magic(b"\x00\x01").map_err(e),
        ReadOp::Length(en, max) => r.length::<u16>(en, max).map(drop).map_err(e),
        ReadOp::PrefixedBytes(en, max) => r.prefixed_bytes::<u8>(en, max).map(drop).map_err(e),
        ReadOp::StrUtf8(n) => r.str_utf8(n).map(drop).map_err(e),
        ReadOp::PrefixedStr(en, max) => r.prefixed_str::<u8>(en, max).map(drop).map_err(e),
        ReadOp::PrefixedText(en, max, c) => r.prefixed_text::<u16>(en, max, c).map(drop).map_err(e),
        ReadOp::Text(n, c) => r.text(n, c).map(drop).map_err(e),
        ReadOp::RestBytes(max) => r.rest_bytes(max).map(drop).map_err(e),
        ReadOp::RestStr(max) => r.rest_str(max).map(drop).map_err(e),
        ReadOp::RestText(max, c) => r.rest_text(max, c).map(drop).map_err(e),
        ReadOp::Uuid(en) => r.uuid(en).map(drop).map_err(e),
        ReadOp::CheckCount(n, max) => r.check_count(n, max).map(drop).map_err(e),
        ReadOp::Sub(n) => {
            let mut sub = r.sub(n).map_err(e)?;
            let start = sub.offset();
            let _ = sub.number::<u32>(Endian::Big);
            let _ = sub.prefixed_str::<u8>(Endian::Big, None);
            assert!(sub.offset() <= start + n);
            Ok(())
        }
        ReadOp::ExpectEnd => r.expect_end().map_err(e),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any bytes through any sequence of `Reader` calls: no panic, the offset and what is left
    /// always add up to the input, and every error points inside the input.
    #[test]
    fn random_bytes_into_every_reader_method_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        ops in proptest::collection::vec(read_op(), 1..12),
    ) {
        let mut r = Reader::new(&bytes);
        for op in &ops {
            if let Err(offset) = run(&mut r, op) {
                prop_assert!(offset <= bytes.len(), "{:?} failed at {} of {}", op, offset, bytes.len());
            }
            prop_assert_eq!(r.offset() + r.remaining(), bytes.len(), "after {:?}", op);
        }
    }

    /// Writing into a buffer too small for it: an error that says how many bytes were needed
    /// and how many were left, at the position of the write, and never a panic.
    #[test]
    fn writer_into_a_too_small_buffer_errors(
        payload in proptest::collection::vec(any::<u8>(), 0..40),
        (encoding, text) in encoded_text(20),
        uuid: u128,
        number: u64,
        endian in endian(),
        size in 0usize..48,
    ) {
        let mut buf = vec![0u8; size];
        let writes: [(&str, &Write<'_>); 7] = [
            ("bytes", &|w: &mut Writer<'_>| w.put_bytes(&payload)),
            ("zeros", &|w: &mut Writer<'_>| w.put_zeros(payload.len())),
            ("number", &|w: &mut Writer<'_>| w.put_number(number, endian)),
            ("prefixed bytes", &|w: &mut Writer<'_>| w.put_prefixed_bytes::<u16>(&payload, endian, None)),
            ("prefixed text", &|w: &mut Writer<'_>| w.put_prefixed_text::<u32>(&text, endian, None, encoding)),
            ("rest text", &|w: &mut Writer<'_>| w.put_rest_text(&text, None, encoding)),
            ("uuid", &|w: &mut Writer<'_>| w.put_uuid(&Uuid::from_u128(uuid), endian)),
        ];
        let needed = [
            payload.len(),
            payload.len(),
            8,
            2 + payload.len(),
            4 + encoding.encoded_len(&text),
            encoding.encoded_len(&text),
            16,
        ];
        for ((what, write), need) in writes.iter().zip(needed) {
            let mut w = Writer::new(&mut buf);
            let result = write(&mut w);
            if need <= size {
                prop_assert!(result.is_ok(), "{} of {} bytes into {}", what, need, size);
                prop_assert_eq!(w.position(), need);
            } else {
                let err = result.unwrap_err();
                let ErrorKind::BufferTooSmall { need: short, have } = *err.kind() else {
                    panic!("{what}: {err}");
                };
                prop_assert!(short > have, "{}: {}", what, err);
                prop_assert_eq!(err.offset() + have, size, "{}: {}", what, err);
                prop_assert!(w.position() <= size);
            }
        }

        // A length slot whose body does not fit, and one that does.
        let mut w = Writer::new(&mut buf);
        let framed = w
            .begin_length::<u16>(endian)
            .and_then(|slot| {
                w.put_bytes(&payload)?;
                w.end_length(slot)
            });
        prop_assert_eq!(framed.is_ok(), 2 + payload.len() <= size);
        if framed.is_ok() {
            let mut r = Reader::new(&buf[..2 + payload.len()]);
            prop_assert_eq!(r.prefixed_bytes::<u16>(endian, None).unwrap(), payload.as_slice());
        }
    }
}

#[test]
fn every_encoding_is_listed() {
    // The strategies above cover these four; a new encoding must be added to them.
    for encoding in ENCODINGS {
        assert!(!encoding.name().is_empty());
    }
}
