//! The Quake 2 family (Quake 2 and its mods, Kingpin, Alien Arena, Daikatana) and QuakeWorld:
//! text behind four `FF` bytes over UDP, the sibling of [Quake 3](crate::quake3).
//!
//! - Request ([`Request`]): `FF FF FF FF status\n`, which both engines answer. QuakeWorld
//!   servers (mvdsv) read a number after it as options (`status 23`); it is accepted and
//!   ignored.
//! - [`StatusResponse`]: a header, one line of `\key\value` pairs ([`Info`]) and one line per
//!   player. Quake 2 sends `FF FF FF FF print\n` and `frags ping "name"` lines, the layout of
//!   a Quake 3 player line ([`quake3::Player`](crate::quake3::Player), shared);
//!   QuakeWorld sends `FF FF FF FF n` (no newline before the pairs) and
//!   `id frags time ping "name" "skin" top bottom` lines ([`QwPlayer`]). The header decides
//!   which layout is read ([`Dialect`]).
//!
//! Where this follows real servers:
//! - One datagram: servers of both engines stop adding player lines when the datagram is
//!   full, they never split a reply.
//! - Lenient: empty lines are skipped and the last line may lack its newline; Quake 2 lines
//!   may carry more numbers before the name (kept in `more`, as in Quake 3); a QuakeWorld line
//!   may end with a quoted team (mvdsv's `status 23`).
//! - Strict or lenient by the caller's choice, as in Quake 3: a player line that does not
//!   decode is an error at its offset in [`StatusResponse::decode`]; in
//!   [`StatusResponse::decode_lenient`] it is left out and its error returned beside the
//!   lines that did.
//! - Text has no declared charset: Western servers send Latin-1 / Windows-1252 ([`ENCODING`]),
//!   and names are kept as the raw bytes ([`Text`]). The original engines draw the high half
//!   of the byte as coloured ("gold") letters; [`plain_name`] folds them back to ASCII for a
//!   caller that knows its server does that.

use std::borrow::Cow;

use query_wire::kv::KvLine;
use query_wire::{Decode, Error, ErrorKind, KeyValues, Reader, Result, Text, TextEncoding, Wire};
use serde::Serialize;

use crate::quake3::{lenient, player_lines, Player};

/// The text encoding of most servers.
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;

/// `status` as sent.
pub const STATUS: &[u8] = b"\xff\xff\xff\xffstatus\n";
/// What every request starts with: [`Request`]'s magic.
pub const STATUS_MAGIC: &[u8] = b"\xff\xff\xff\xffstatus";
/// The header of a Quake 2 reply.
pub const PRINT_HEADER: &[u8] = b"\xff\xff\xff\xffprint\n";
/// The header of a QuakeWorld reply (the pairs follow at once).
pub const QW_HEADER: &[u8] = b"\xff\xff\xff\xffn";

/// The largest datagram a responder writes: Quake 2's `MAX_MSGLEN` less its packet header.
pub const MAX_DATAGRAM: usize = 1390;

/// The longest option text a request may carry after `status`.
pub const MAX_OPTIONS: usize = 16;

/// `status [options]`.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = STATUS_MAGIC)]
pub struct Request<'a> {
    /// The rest of the datagram: a newline (or a NUL, or nothing), after a space and the
    /// options of a QuakeWorld client.
    #[wire(str(rest, max = MAX_OPTIONS + 2))]
    pub tail: Text<'a>,
}

impl<'a> Request<'a> {
    /// The request in `datagram`. Lenient about the line's end (a newline, a NUL, both, or
    /// nothing); strict about the rest: `statusX` or a second line is no request of this
    /// protocol ([`ErrorKind::Invalid`] after the command), and the options are a number.
    pub fn decode(datagram: &'a [u8]) -> Result<Request<'a>> {
        let request = Request::decode_exact(&mut Reader::new(datagram), ())?;
        let tail = request.tail.as_bytes();
        let body = tail.strip_suffix(b"\0").unwrap_or(tail);
        let body = body.strip_suffix(b"\n").unwrap_or(body);
        let well_formed = match body.split_first() {
            None => true,
            Some((b' ', options)) => !options.is_empty() && options.iter().all(u8::is_ascii_digit),
            Some(_) => false,
        };
        if !well_formed {
            let at = datagram.len() - tail.len();
            return Err(Error::new(ErrorKind::Invalid(NOT_A_STATUS), at).in_field("tail"));
        }
        Ok(request)
    }
}

const NOT_A_STATUS: &str = "status ends with a newline or a NUL, or a space and a number before it";

/// The server's settings: the `\key\value` line. The fields are the keys clients read (by
/// their Quake 2 names, with QuakeWorld's as aliases); every other key is a rule, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Info<'a> {
    /// `hostname`.
    pub hostname: Option<Cow<'a, str>>,
    /// `mapname` (QuakeWorld: `map`).
    #[kv(key = "mapname", alias = "map")]
    pub map: Option<Cow<'a, str>>,
    /// `maxclients`, the slots.
    #[kv(key = "maxclients")]
    pub max_clients: Option<u32>,
    /// `maxspectators`, the spectator slots.
    #[kv(key = "maxspectators")]
    pub max_spectators: Option<u32>,
    /// `version` (QuakeWorld: `*version`).
    #[kv(alias = "*version")]
    pub version: Option<Cow<'a, str>>,
    /// `gamename` (`baseq2`, padded with spaces on some servers).
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// `gamedir` (QuakeWorld: `*gamedir`), the mod.
    #[kv(key = "gamedir", alias = "*gamedir")]
    pub game_dir: Option<Cow<'a, str>>,
    /// `needpass`: bit 1 a player password, bit 2 a spectator password.
    #[kv(key = "needpass")]
    pub need_pass: Option<u32>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

impl Info<'_> {
    /// Whether players need a password (`needpass` bit 1).
    pub fn password(&self) -> Option<bool> {
        self.need_pass.map(|n| n & 1 != 0)
    }

    /// The first value of a rule.
    pub fn rule(&self, key: &str) -> Option<&str> {
        self.rules
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// The settings line: `\key\value` pairs and a newline, in the encoding given as context.
pub type InfoLine<'a> = KvLine<Info<'a>>;

/// The one space between two quoted strings of a QuakeWorld player line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b" ")]
pub struct Space {}

/// A QuakeWorld player line: `id frags time ping "name" "skin" top bottom`, and on mvdsv
/// asked for teams ` "team"`. Spectators have frags `-9999` and a name starting `\s\`.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct QwPlayer<'a> {
    /// The user id.
    #[wire(dec(until = b' ', max = 20))]
    pub id: i64,
    /// The frags; `-9999` for a spectator.
    #[wire(dec(until = b' ', max = 20))]
    pub frags: i64,
    /// Minutes since the player connected.
    #[wire(dec(until = b' ', max = 20))]
    pub time: i64,
    /// The ping in milliseconds.
    #[wire(dec(until = b' ', max = 20))]
    pub ping: i64,
    /// The name as sent, in the server's encoding.
    #[wire(str(quoted))]
    pub name: Text<'a>,
    /// The space between name and skin.
    #[serde(skip)]
    pub space: Space,
    /// The skin.
    #[wire(str(quoted))]
    pub skin: Text<'a>,
    /// The space between skin and colours.
    #[serde(skip)]
    pub space2: Space,
    /// The shirt colour (0-13).
    #[wire(dec(until = b' ', max = 20))]
    pub top: i64,
    /// The pants colour (0-13); the line may end after it.
    #[wire(dec(until = b' ', or_end, max = 20))]
    pub bottom: i64,
    /// The team, when the server sends one.
    #[wire(trailing, str(quoted))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<Text<'a>>,
}

/// Which engine a reply came from, told by its header: decoding reads the header and
/// encoding writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `print\n`: Quake 2 and its mods.
    #[wire(magic = PRINT_HEADER)]
    Quake2,
    /// `n`: QuakeWorld.
    #[wire(magic = QW_HEADER)]
    QuakeWorld,
}

/// A player of either layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum AnyPlayer<'a> {
    /// `frags ping "name"`.
    Quake2(Player<'a>),
    /// `id frags time ping "name" "skin" top bottom`.
    QuakeWorld(QwPlayer<'a>),
}

impl<'a> AnyPlayer<'a> {
    /// The name as sent.
    pub fn name(&self) -> &Text<'a> {
        match self {
            AnyPlayer::Quake2(p) => &p.name,
            AnyPlayer::QuakeWorld(p) => &p.name,
        }
    }

    /// The frags.
    pub fn frags(&self) -> i64 {
        match self {
            AnyPlayer::Quake2(p) => p.score,
            AnyPlayer::QuakeWorld(p) => p.frags,
        }
    }

    /// The ping in milliseconds.
    pub fn ping(&self) -> i64 {
        match self {
            AnyPlayer::Quake2(p) => p.ping,
            AnyPlayer::QuakeWorld(p) => p.ping,
        }
    }
}

/// One status reply decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusResponse<'a> {
    /// The engine, from the header.
    pub dialect: Dialect,
    /// The pair line.
    pub info: Info<'a>,
    /// The player lines, in order.
    pub players: Vec<AnyPlayer<'a>>,
}

impl<'a> StatusResponse<'a> {
    /// Decodes one datagram strictly: a line that is not a player of the header's layout is
    /// an error. Offsets count from the datagram's first byte.
    pub fn decode(datagram: &'a [u8], encoding: TextEncoding) -> Result<Self> {
        Self::decode_with(datagram, encoding, Err)
    }

    /// Decodes one datagram leniently: a player line that does not decode is left out and
    /// its error returned beside the lines that did. The header and the pair line stay
    /// strict.
    pub fn decode_lenient(
        datagram: &'a [u8],
        encoding: TextEncoding,
    ) -> Result<(Self, Vec<Error>)> {
        lenient(|bad_line| Self::decode_with(datagram, encoding, bad_line))
    }

    /// The header (`print\n` or `n`), the pair line, then each line framed by
    /// [`Line`](crate::quake3::Line) and decoded from exactly its bytes in the header's layout.
    fn decode_with(
        datagram: &'a [u8],
        encoding: TextEncoding,
        bad_line: impl FnMut(Error) -> Result<()>,
    ) -> Result<Self> {
        let mut r = Reader::new(datagram);
        let dialect = Dialect::decode(&mut r, ())?;
        let info = InfoLine::decode(&mut r, encoding)?.0;
        let players = player_lines(
            &mut r,
            |fields| match dialect {
                Dialect::Quake2 => Player::decode_exact(fields, ()).map(AnyPlayer::Quake2),
                Dialect::QuakeWorld => {
                    QwPlayer::decode_exact(fields, ()).map(AnyPlayer::QuakeWorld)
                }
            },
            bad_line,
        )?;
        Ok(StatusResponse {
            dialect,
            info,
            players,
        })
    }
}

/// `name` with Quake's coloured letters folded to plain ones, from the raw bytes: the high
/// bit cleared (`0xC1` is a gold `A`), the glyphs `0x10`-`0x11` read as `[` `]` and
/// `0x12`-`0x1B` as the digits, the other glyphs below 32 left out.
///
/// ```
/// use query_specs::quake2::plain_name;
///
/// assert_eq!(plain_name(b"\xd0\xec\xe1\xf9\xe5\xf2 1"), "Player 1");
/// assert_eq!(plain_name(b"ninja"), "ninja");
/// ```
pub fn plain_name(name: &[u8]) -> String {
    name.iter()
        .filter_map(|&b| match b & 0x7f {
            0x10 => Some('['),
            0x11 => Some(']'),
            b @ 0x12..=0x1b => Some(char::from(b'0' + (b - 0x12))),
            b @ 0x20..=0x7e => Some(char::from(b)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quake2_reply_reads_its_players_in_the_quake3_layout() {
        let bytes = b"\xff\xff\xff\xffprint\n\\hostname\\Box\\mapname\\q2dm1\\maxclients\\8\\needpass\\2\n3 50 \"Ann\"\n\n-1 999 \"B b\"\n";
        let reply = StatusResponse::decode(bytes, ENCODING).unwrap();
        assert_eq!(reply.dialect, Dialect::Quake2);
        assert_eq!(reply.info.map.as_deref(), Some("q2dm1"));
        assert_eq!(reply.info.max_clients, Some(8));
        assert_eq!(
            reply.info.password(),
            Some(false),
            "needpass 2: spectators only"
        );
        assert_eq!(reply.players.len(), 2);
        assert_eq!(reply.players[1].frags(), -1);
        assert_eq!(reply.players[1].ping(), 999);
    }

    #[test]
    fn a_quakeworld_reply_reads_its_own_layout_and_aliases() {
        let bytes = b"\xff\xff\xff\xffn\\hostname\\QW\\map\\dm4\\*version\\MVDSV 0.36\\*gamedir\\qw\\maxclients\\16\n12 5 3 40 \"Ann\" \"base\" 4 13\n13 -9999 1 0 \"\\s\\Spec\" \"\" 0 0 \"red\"\n";
        let reply = StatusResponse::decode(bytes, ENCODING).unwrap();
        assert_eq!(reply.dialect, Dialect::QuakeWorld);
        assert_eq!(reply.info.map.as_deref(), Some("dm4"));
        assert_eq!(reply.info.version.as_deref(), Some("MVDSV 0.36"));
        assert_eq!(reply.info.game_dir.as_deref(), Some("qw"));
        let AnyPlayer::QuakeWorld(ann) = &reply.players[0] else {
            panic!("{:?}", reply.players[0]);
        };
        assert_eq!((ann.id, ann.frags, ann.time, ann.ping), (12, 5, 3, 40));
        assert_eq!(
            (ann.skin.as_bytes(), ann.top, ann.bottom),
            (&b"base"[..], 4, 13)
        );
        assert_eq!(ann.team, None);
        let AnyPlayer::QuakeWorld(spec) = &reply.players[1] else {
            panic!();
        };
        assert_eq!(spec.team.as_ref().map(Text::as_bytes), Some(&b"red"[..]));
    }

    #[test]
    fn bad_lines_are_errors_at_their_offset_or_left_out() {
        let bytes = b"\xff\xff\xff\xffprint\n\\a\\b\n1 2 \"x\"\n9 y \"bad\"\n4 5 \"z\"";
        let err = StatusResponse::decode(bytes, ENCODING).unwrap_err();
        assert_eq!(err.path_string(), "players[1].ping");
        assert_eq!(err.offset(), bytes.len() - 15, "at the `y`");
        let (reply, unreadable) = StatusResponse::decode_lenient(bytes, ENCODING).unwrap();
        assert_eq!(reply.players.len(), 2);
        assert_eq!(unreadable.len(), 1);
        // A QuakeWorld line in a Quake 2 reply is no Quake 2 line, and the reverse.
        let qw_line = b"\xff\xff\xff\xffn\\a\\b\n1 2 \"x\"\n";
        assert!(StatusResponse::decode(qw_line, ENCODING).is_err());
        // The header and the pair line are strict.
        assert!(StatusResponse::decode_lenient(b"\xff\xff\xff\xffprin", ENCODING).is_err());
        assert!(
            StatusResponse::decode_lenient(b"\xff\xff\xff\xffstatusResponse\n", ENCODING).is_err()
        );
    }

    #[test]
    fn requests() {
        assert!(Request::decode(STATUS).is_ok());
        assert!(Request::decode(b"\xff\xff\xff\xffstatus").is_ok());
        assert!(Request::decode(b"\xff\xff\xff\xffstatus\0").is_ok());
        assert!(Request::decode(b"\xff\xff\xff\xffstatus 23\n").is_ok());
        assert!(Request::decode(b"\xff\xff\xff\xffstatus x\n").is_err());
        assert!(Request::decode(b"\xff\xff\xff\xffstatus \n").is_err());
        assert!(Request::decode(b"\xff\xff\xff\xffstatusResponse\n").is_err());
        assert!(Request::decode(b"\xff\xff\xff\xffgetstatus\n").is_err());
    }

    #[test]
    fn gold_letters_fold_to_plain_ones() {
        assert_eq!(plain_name(b"\x90hi\x91\x12\x9b\x01"), "[hi]09");
        assert_eq!(plain_name(b"\xe1\xe2"), "ab");
    }
}
