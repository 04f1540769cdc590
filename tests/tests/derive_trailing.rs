//! `trailing`: an `Option` that is there when input is left, as A2S appends a challenge to an
//! INFO request and the Extra Data Flag to an INFO reply.

use query_wire::{Decode, Encode, ErrorKind, Wire};

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", magic = b"\xff\xff\xff\xffT")]
struct InfoRequest<'a> {
    #[wire(str(nul))]
    payload: &'a str,
    #[wire(trailing)]
    challenge: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Extra<'a> {
    flags: u8,
    #[wire(when = *flags & 0x80 != 0)]
    port: Option<u16>,
    #[wire(when = *flags & 0x20 != 0, str(nul))]
    keywords: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little")]
struct Reply<'a> {
    players: u8,
    #[wire(trailing)]
    extra: Option<Extra<'a>>,
}

#[test]
fn present_when_input_is_left_both_ways() {
    let plain = InfoRequest {
        payload: "Source Engine Query",
        challenge: None,
    };
    let bytes = plain.to_vec().unwrap();
    assert_eq!(bytes, b"\xff\xff\xff\xffTSource Engine Query\0");
    assert_eq!(InfoRequest::from_bytes(&bytes).unwrap(), plain);

    let proved = InfoRequest {
        challenge: Some(-1),
        ..plain
    };
    let bytes = proved.to_vec().unwrap();
    assert_eq!(&bytes[bytes.len() - 5..], b"\0\xff\xff\xff\xff");
    assert_eq!(proved.encoded_len(()), bytes.len());
    assert_eq!(InfoRequest::from_bytes(&bytes).unwrap(), proved);
}

#[test]
fn a_trailing_block_with_flagged_fields() {
    let reply = Reply {
        players: 3,
        extra: Some(Extra {
            flags: 0xa0,
            port: Some(27015),
            keywords: Some("pvp"),
        }),
    };
    let bytes = reply.to_vec().unwrap();
    assert_eq!(bytes, b"\x03\xa0\x87\x69pvp\0");
    assert_eq!(Reply::from_bytes(&bytes).unwrap(), reply);
    let old = Reply::from_bytes(b"\x03").unwrap();
    assert_eq!(old.extra, None);
    // Started but cut: an error, not a silently missing block.
    let err = Reply::from_bytes(b"\x03\xa0\x87").unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::UnexpectedEnd { .. }),
        "{err}"
    );
    assert_eq!(
        (err.offset(), err.path_string().as_str()),
        (2, "Reply.extra.port")
    );
}
