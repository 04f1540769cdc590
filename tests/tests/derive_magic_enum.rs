//! Enums whose variant is chosen by the bytes it starts with: each variant declares a
//! `magic`, decoding takes the first variant whose magic starts the input, encoding writes
//! the variant's magic before its fields.

use query_wire::{Decode, Encode, ErrorKind, Text, Wire};

const PREFIX: &[u8] = b"\xff\xff\xff\xff";
const GETINFO: &[u8; 7] = b"getinfo";

/// A Quake 3-style request: a common prefix, then the command that selects the variant.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(magic = PREFIX, view = CommandView)]
enum Command<'a> {
    #[wire(magic = b"getstatus")]
    Status(#[wire(str(rest))] Text<'a>),
    /// A constant of `&[u8; N]`.
    #[wire(magic = GETINFO)]
    Info {
        #[wire(str(until = b'\n', or_end))]
        challenge: Text<'a>,
    },
    #[wire(magic = b"ping")]
    Ping,
}

/// Overlapping magics: the longer one is declared first, so it can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(endian = "little")]
enum LineEnd {
    #[wire(magic = b"\n\0")]
    NewlineNul,
    #[wire(magic = b"\n")]
    Newline(u16),
    #[wire(magic = b"\0")]
    Nul,
}

/// A magic enum nested in a struct, and a fixed width when every variant has one.
#[derive(Debug, Clone, Copy, PartialEq, Wire)]
#[wire(endian = "big")]
struct Framed {
    kind: Kind,
    value: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Wire)]
enum Kind {
    #[wire(magic = b"AB")]
    Ab,
    #[wire(magic = b"CD")]
    Cd,
}

#[test]
fn the_variant_whose_magic_starts_the_input_is_decoded() {
    let status = Command::from_bytes(b"\xff\xff\xff\xffgetstatus xyz\n").unwrap();
    assert_eq!(status, Command::Status(Text::from_bytes(b" xyz\n")));
    assert_eq!(status.magic(), b"getstatus");

    let info = Command::from_bytes(b"\xff\xff\xff\xffgetinfo 12\n").unwrap();
    assert_eq!(
        info,
        Command::Info {
            challenge: Text::from_bytes(b" 12")
        }
    );
    assert_eq!(info.magic(), GETINFO);
    assert_eq!(
        Command::from_bytes(b"\xff\xff\xff\xffping").unwrap(),
        Command::Ping
    );
}

#[test]
fn encoding_writes_the_magics_and_round_trips() {
    for command in [
        Command::Status(Text::from_bytes(b"\n")),
        Command::Info {
            challenge: Text::from_bytes(b"7"),
        },
        Command::Ping,
    ] {
        let bytes = command.to_vec().unwrap();
        assert!(bytes.starts_with(PREFIX));
        assert!(bytes[PREFIX.len()..].starts_with(command.magic()));
        assert_eq!(command.encoded_len(()), bytes.len());
        assert_eq!(Command::from_bytes(&bytes).unwrap(), command);
    }
    assert_eq!(
        Command::Info {
            challenge: Text::from_bytes(b"7")
        }
        .to_vec()
        .unwrap(),
        b"\xff\xff\xff\xffgetinfo7\n"
    );
    // The view writes the same bytes.
    let view = CommandView::Status(Text::from_bytes(b"\n"));
    assert_eq!(view.to_vec().unwrap(), b"\xff\xff\xff\xffgetstatus\n");
}

#[test]
fn the_first_declared_match_wins_and_overlaps_are_resolved_in_order() {
    assert_eq!(LineEnd::from_bytes(b"\n\0").unwrap(), LineEnd::NewlineNul);
    assert_eq!(
        LineEnd::from_bytes(b"\n\x02\x01").unwrap(),
        LineEnd::Newline(0x0102)
    );
    assert_eq!(LineEnd::from_bytes(b"\0").unwrap(), LineEnd::Nul);
    assert_eq!(LineEnd::Newline(1).to_vec().unwrap(), b"\n\x01\x00");
    // `decode_exact` still wants the input to end after the variant.
    let err = LineEnd::from_bytes(b"\0x").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TrailingBytes { count: 1 });
    assert_eq!(err.offset(), 1);
}

#[test]
fn input_that_starts_no_variant_is_an_error_at_the_first_byte_none_accepts() {
    let err = Command::from_bytes(b"\xff\xff\xff\xffgetchallenge\n").unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::UnknownMagic {
            found: b"getc".to_vec()
        }
    );
    assert_eq!(err.offset(), 7);
    assert_eq!(err.path_string(), "Command");
    assert_eq!(
        err.to_string(),
        "Command at byte 7: no variant's magic starts with [67, 65, 74, 63]"
    );

    // Nothing in common with any magic: the error is at the magic's first byte.
    let err = Command::from_bytes(b"\xff\xff\xff\xffstatus").unwrap_err();
    assert_eq!(err.offset(), 4);
    assert_eq!(err.kind(), &ErrorKind::UnknownMagic { found: vec![b's'] });

    // The enum's own magic is checked first, as for a struct.
    let err = Command::from_bytes(b"\xfe\xff\xff\xffping").unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BadMagic { .. }));
    assert_eq!(err.offset(), 0);

    // Empty input, or input cut inside the magics it agrees with, is a cut datagram.
    let err = Kind::from_bytes(b"").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 2, have: 0 });
    let err = Command::from_bytes(b"\xff\xff\xff\xffget").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 7, have: 3 });
    assert_eq!(err.offset(), 4);
}

#[test]
fn nested_in_a_struct_with_error_paths_and_a_fixed_width() {
    let framed = Framed::from_bytes(b"CD\x00\x05").unwrap();
    assert_eq!(
        framed,
        Framed {
            kind: Kind::Cd,
            value: 5
        }
    );
    assert_eq!(framed.to_vec().unwrap(), b"CD\x00\x05");
    let err = Framed::from_bytes(b"AX\x00\x05").unwrap_err();
    assert_eq!(err.path_string(), "Framed.kind");
    assert_eq!(err.offset(), 1);
    assert_eq!(<Framed as Encode>::FIXED_LEN, Some(4));
    assert_eq!(<Kind as Encode>::FIXED_LEN, Some(2));
    // Magics of different lengths: no fixed width.
    assert_eq!(<LineEnd as Encode>::FIXED_LEN, None);
}

#[test]
fn matches_magic_tells_a_packet_of_this_type_without_decoding_it() {
    assert!(Command::matches_magic(b"\xff\xff\xff\xffgetinfo"));
    assert!(Command::matches_magic(b"\xff\xff\xff\xffgetstatus\n"));
    assert!(!Command::matches_magic(b"\xff\xff\xff\xffget"));
    assert!(!Command::matches_magic(b"getinfo"));
    assert!(Kind::matches_magic(b"ABC"));
    assert!(!Kind::matches_magic(b"A"));
}
