//! `str(nul)` and `bytes(nul)`: values ended by a NUL byte, as A2S, GameSpy 2 and 3 send them.

use std::borrow::Cow;

use query_wire::{Decode, Encode, ErrorKind, Text, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Info<'a> {
    kind: u8,
    #[wire(str(nul))]
    name: &'a str,
    #[wire(str(nul, encoding = "latin1"))]
    map: String,
    #[wire(str(nul))]
    folder: Text<'a>,
    #[wire(bytes(nul, max = 4))]
    tag: &'a [u8],
    #[wire(str(nul, encoding = "windows1252"))]
    game: Cow<'a, str>,
    players: u8,
}

fn info() -> Info<'static> {
    Info {
        kind: 0x49,
        name: "Dust",
        map: "dé".to_owned(),
        folder: Text::from_bytes(b"cs\xff"),
        tag: b"ab",
        game: Cow::Borrowed("Counter-Strike"),
        players: 7,
    }
}

const WIRE: &[u8] = b"\x49Dust\0d\xe9\0cs\xff\0ab\0Counter-Strike\0\x07";

#[test]
fn values_end_at_their_nul_both_ways() {
    let info = info();
    assert_eq!(info.to_vec().unwrap(), WIRE);
    assert_eq!(info.encoded_len(()), WIRE.len());
    let decoded = Info::from_bytes(WIRE).unwrap();
    assert_eq!(decoded, info);
    // Invalid UTF-8 is kept as bytes in `Text`, not refused.
    assert_eq!(decoded.folder.0.as_ref(), b"cs\xff");
}

#[test]
fn a_missing_nul_is_a_cut_input_at_its_end() {
    // Every strict prefix fails where the input ends, like any cut datagram.
    for cut in 1..WIRE.len() {
        let err = Info::from_bytes(&WIRE[..cut]).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
            "cut at {cut}: {err}"
        );
        assert_eq!(err.offset(), cut, "{err}");
    }
    let err = Info::from_bytes(b"\x49Dust").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 1, have: 0 });
    assert_eq!(err.path_string(), "Info.name");
}

#[test]
fn max_bounds_the_bytes_before_the_nul() {
    let long = b"\x49Dust\0d\xe9\0cs\0abcde\0g\0\x07";
    let err = Info::from_bytes(long).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
    assert_eq!((err.offset(), err.path_string().as_str()), (12, "Info.tag"));
    let too_long = Info {
        tag: b"abcde",
        ..info()
    };
    let err = too_long.to_vec().unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
}

#[test]
fn a_nul_inside_a_value_cannot_be_written() {
    let err = Info {
        name: "Du\0st",
        ..info()
    }
    .to_vec()
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)), "{err}");
    assert_eq!((err.offset(), err.path_string().as_str()), (3, "name"));
    let err = Info {
        map: "a\0".to_owned(),
        ..info()
    }
    .to_vec()
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)), "{err}");
    assert_eq!((err.offset(), err.path_string().as_str()), (7, "map"));
    let err = Info {
        tag: b"\0",
        ..info()
    }
    .to_vec()
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Invalid(_)), "{err}");
}
