//! `packed_int`: Teeworlds' packed integers (a sign bit and 6 bits, then 7-bit groups) as
//! values, computed counts and list elements, with exact lengths, strict decoding and errors
//! at the integer's first byte under the field's path.

use query_wire::{items, Decode, Encode, ErrorKind, Text, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "big", magic = b"\x21", view = InfoView)]
struct Info<'a> {
    client_token: u32,
    #[wire(packed_int)]
    token: i32,
    #[wire(str(nul))]
    name: Text<'a>,
    #[wire(packed_int, computed = scores.count())]
    count: u32,
    #[wire(count = *count, packed_int)]
    scores: Vec<i32>,
    #[wire(packed_int)]
    tail: u32,
}

fn info(token: i32, scores: Vec<i32>, tail: u32) -> Info<'static> {
    Info {
        client_token: 0x0102_0304,
        token,
        name: Text::from("tee"),
        count: u32::try_from(scores.len()).unwrap(),
        scores,
        tail,
    }
}

#[test]
fn values_are_written_as_teeworlds_packs_them() {
    let value = info(-1, vec![0, 64, -65, i32::MAX, i32::MIN], 12);
    let bytes = value.to_vec().unwrap();
    let mut expected = b"\x21\x01\x02\x03\x04\x40tee\x00\x05".to_vec();
    expected.extend_from_slice(&[0x00, 0x80, 0x01, 0xc0, 0x01]);
    expected.extend_from_slice(&[0xbf, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    expected.push(0x0c);
    assert_eq!(bytes, expected);
    assert_eq!(value.encoded_len(()), bytes.len());
    assert_eq!(Info::from_bytes(&bytes).unwrap(), value);
}

#[test]
fn a_view_encodes_the_same_bytes() {
    let value = info(8191, vec![3, -3], 0);
    let view = InfoView {
        client_token: value.client_token,
        token: value.token,
        name: Text::from("tee"),
        scores: items::map(&[3i64, -3], |s| i32::try_from(*s).unwrap()),
        tail: 0,
    };
    assert_eq!(view.to_vec().unwrap(), value.to_vec().unwrap());
    assert_eq!(view.encoded_len(()), value.encoded_len(()));
}

#[test]
fn strict_decoding_names_the_field_and_its_first_byte() {
    let bytes = info(5, vec![1], 7).to_vec().unwrap();
    let tail_at = bytes.len() - 1;
    let cases: &[(&[u8], &str, &str)] = &[
        (&[0x80, 0x00], "tail", "more bytes than it needs"),
        (
            &[0xbf, 0xff, 0xff, 0xff, 0x1f],
            "tail",
            "wider than 32 bits",
        ),
        (
            &[0xbf, 0xff, 0xff, 0xff, 0x8f, 0x01],
            "tail",
            "longer than 5 bytes",
        ),
        (&[0x40], "tail", "negative packed integer"),
    ];
    for (encoded, field, why) in cases {
        let mut damaged = bytes[..tail_at].to_vec();
        damaged.extend_from_slice(encoded);
        let error = Info::from_bytes(&damaged).unwrap_err();
        assert_eq!(error.offset(), tail_at, "{encoded:02x?}");
        assert_eq!(error.path_string(), format!("Info.{field}"));
        assert!(error.to_string().contains(why), "{error}");
    }
    // Cut inside a packed integer: the end of the input, counted from its first byte.
    let mut cut = bytes[..tail_at].to_vec();
    cut.push(0x80);
    let error = Info::from_bytes(&cut).unwrap_err();
    assert_eq!(error.offset(), tail_at);
    assert_eq!(error.kind(), &ErrorKind::UnexpectedEnd { need: 2, have: 1 });
    // A count that disagrees with the list it is computed from.
    let mut forged = bytes.clone();
    let count_at = 1 + 4 + 1 + 4;
    assert_eq!(forged[count_at], 1);
    forged[count_at] = 2;
    assert!(Info::from_bytes(&forged).is_err());
}

#[test]
fn an_unsigned_value_above_i32_is_not_written() {
    let error = info(0, Vec::new(), u32::MAX).to_vec().unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::OutOfRange { value, .. } if *value == u64::from(u32::MAX)),
        "{error}"
    );
}

#[test]
fn every_value_round_trips_with_its_exact_length() {
    let mut value = 1i64;
    while value <= i64::from(i32::MAX) {
        for candidate in [value - 1, value, -value, -value - 1] {
            let Ok(number) = i32::try_from(candidate) else {
                continue;
            };
            let packet = info(number, vec![number], 0);
            let bytes = packet.to_vec().unwrap();
            assert_eq!(bytes.len(), packet.encoded_len(()), "{number}");
            assert_eq!(Info::from_bytes(&bytes).unwrap(), packet, "{number}");
        }
        value *= 3;
    }
}
