//! Unreal Engine 2's server query (Unreal Tournament 2003 and 2004, Killing Floor, Red
//! Orchestra, Darkest Hour, Unreal II XMP), over UDP on the game port + 1
//! ([`QUERY_PORT_OFFSET`]: UT2004's 7777 → 7778, Killing Floor's 7707 → 7708).
//!
//! Little endian. A [`Request`] is a version number (`0x78` from UT2003 and qstat, `0x79`
//! from UT2004 and most libraries), three zero bytes padding it to a `u32`, and the query
//! [`Query`]: 0 the server's details ([`Info`]), 1 its rules ([`Rule`]), 2 its players
//! ([`Player`]), 3 all three (qstat asks for rules and players so, after the details). Every reply datagram starts with a version `u32` (`0x80` on every server
//! seen) and the kind it answers ([`Header`]). Rules and players come in as many datagrams as
//! they fill, each holding whole entries after its header, and no datagram says how many
//! there are or which is last.
//!
//! Strings ([`UText`]) are a length byte, then the text: below `0x80`, that many Latin-1 bytes
//! counting a closing NUL (`0` is the empty string with no NUL); from `0x80`, `len & 0x7F`
//! UTF-16LE units, counting a closing NUL unit. Names and map names carry colour codes,
//! `1B` and three bytes (red, green, blue), which the client removes from what it shows.
//!
//! # Where real servers differ
//!
//! - UT2004 ends its details with the server's flags (`u32`), its skill (a string) and two
//!   zero bytes; older servers stop after the ping, and the two bytes may be missing
//!   ([`InfoMore`]). Bytes past them are refused: this layout is not the reply.
//! - Killing Floor puts the current and the last wave ([`Waves`]) between the player counts
//!   and the ping, and sends a name length byte that does not match its name, which it ends
//!   with a NUL as usual ([`NulName`]): its name is read as Latin-1 up to the NUL and the
//!   length kept as sent. [`Info`] takes the [`Layout`] as context, and
//!   [`Info::decode_any`] tries UT2004's layout first, strictly (a name whose length does not
//!   land on its NUL is refused), then Killing Floor's.
//! - Some servers put a stray `01` byte after a UTF-16 string's length byte, outside the
//!   count ([`Wide::stray`]); it is read and kept, and written back only when it was there.
//! - Strict: a string that runs past its datagram, a Latin-1 string whose counted bytes do not
//!   end in a NUL, and a reply whose kind is none of the three are refused.

use std::borrow::Cow;

use query_wire::{Decode, Error, Reader, Result, TextEncoding, Wire};
use serde::{Serialize, Serializer};

/// What a game's query port adds to its game port.
pub const QUERY_PORT_OFFSET: u16 = 1;
/// The version number UT2003 and qstat send.
pub const REQUEST_UT2003: u32 = 0x78;
/// The version number UT2004 (and gamedig, GameQ, opengsq) send.
pub const REQUEST_UT2004: u32 = 0x79;
/// The version number replies carry.
pub const REPLY_VERSION: u32 = 0x80;
/// The largest reply datagram a responder should send.
pub const MAX_DATAGRAM: usize = 1400;
/// The most Latin-1 bytes a string holds: 127 counted, one of them the NUL.
pub const MAX_LATIN1: usize = 126;
/// The most UTF-16 units a string holds: 127 counted, one of them the NUL.
pub const MAX_UNITS: usize = 126;
/// The byte that starts a colour code, followed by three colour bytes.
pub const COLOUR_CODE: u8 = 0x1b;

/// What a request asks for and a reply answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(tag = u8)]
pub enum Kind {
    /// The server's details.
    Info = 0,
    /// The rules (settings and mutators).
    Rules = 1,
    /// The players.
    Players = 2,
}

/// What a request asks for: one kind, or all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(tag = u8)]
pub enum Query {
    /// The server's details.
    Info = 0,
    /// The rules.
    Rules = 1,
    /// The players.
    Players = 2,
    /// The details, the rules and the players, each in its own datagrams.
    Everything = 3,
}

impl Query {
    /// Whether a reply of `kind` answers this query.
    pub fn answered_by(self, kind: Kind) -> bool {
        matches!(
            (self, kind),
            (Query::Everything, _)
                | (Query::Info, Kind::Info)
                | (Query::Rules, Kind::Rules)
                | (Query::Players, Kind::Players)
        )
    }
}

impl From<Kind> for Query {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Info => Query::Info,
            Kind::Rules => Query::Rules,
            Kind::Players => Query::Players,
        }
    }
}

/// A request: the version number and what is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Request {
    /// [`REQUEST_UT2004`] or [`REQUEST_UT2003`].
    pub version: u32,
    /// What is asked for.
    pub query: Query,
}

impl Request {
    /// A request for `kind` as UT2004 sends it.
    pub fn ut2004(kind: Kind) -> Self {
        Request {
            version: REQUEST_UT2004,
            query: kind.into(),
        }
    }

    /// Whether the version number is one a client sends ([`REQUEST_UT2004`] or
    /// [`REQUEST_UT2003`]): what a responder answers, and what tells the request apart from
    /// other protocols' 5-byte datagrams.
    pub fn is_known_version(&self) -> bool {
        self.version == REQUEST_UT2004 || self.version == REQUEST_UT2003
    }
}

/// The start of every reply datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Header {
    /// [`REPLY_VERSION`] on every server seen; kept as sent.
    pub version: u32,
    /// The kind of request this datagram answers.
    pub kind: Kind,
}

/// The marker some servers put after a UTF-16 string's length byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire)]
#[wire(magic = b"\x01")]
pub struct Stray;

/// The UTF-16 body of a string: `len` little-endian units, the NUL included.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little", ctx(len: u8))]
pub struct Wide {
    /// The stray `01` some servers send before the text, outside the count.
    #[wire(if_next = b"\x01")]
    pub stray: Option<Stray>,
    /// The text's UTF-16 units, as counted.
    #[wire(count = len)]
    pub units: Vec<u16>,
}

/// A string: a length byte whose top bit says UTF-16, then the text (see the [module](self)
/// docs). Serialized as its text, colour codes included.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
#[wire(endian = "little")]
pub struct UText {
    /// Set: the text is UTF-16LE units; clear: Latin-1 bytes.
    #[wire(bit_width = 1)]
    pub utf16: bool,
    /// How many bytes (Latin-1) or units (UTF-16) follow, the closing NUL included.
    #[wire(bit_width = 7)]
    pub len: u8,
    /// The Latin-1 bytes as counted, the NUL included.
    #[wire(when = !*utf16, count = *len)]
    pub latin1: Option<Vec<u8>>,
    /// The UTF-16 units.
    #[wire(when = *utf16, ctx = *len)]
    pub wide: Option<Wide>,
}

impl UText {
    /// `text` as a server writes it: Latin-1 when every character has a Latin-1 byte, else
    /// UTF-16; cut to [`MAX_LATIN1`] bytes or [`MAX_UNITS`] units (never inside a pair of
    /// surrogates), a NUL added.
    pub fn new(text: &str) -> Self {
        if let Some(bytes) = TextEncoding::Latin1.encode(text) {
            let mut bytes = bytes.into_owned();
            bytes.truncate(MAX_LATIN1);
            Self::latin1_bytes(&bytes)
        } else {
            let mut units = Vec::with_capacity(text.len() + 1);
            for c in text.chars() {
                if units.len() + c.len_utf16() > MAX_UNITS {
                    break;
                }
                let mut pair = [0u16; 2];
                units.extend_from_slice(c.encode_utf16(&mut pair));
            }
            units.push(0);
            UText {
                utf16: true,
                len: units.len() as u8,
                latin1: None,
                wide: Some(Wide { stray: None, units }),
            }
        }
    }

    /// Latin-1 `bytes` (at most [`MAX_LATIN1`]; longer ones are cut), a NUL added; an empty
    /// string is written as the length `0` alone, as servers do.
    pub fn latin1_bytes(bytes: &[u8]) -> Self {
        let bytes = &bytes[..bytes.len().min(MAX_LATIN1)];
        let mut counted = Vec::with_capacity(bytes.len() + 1);
        if !bytes.is_empty() {
            counted.extend_from_slice(bytes);
            counted.push(0);
        }
        UText {
            utf16: false,
            len: counted.len() as u8,
            latin1: Some(counted),
            wide: None,
        }
    }

    /// Whether the string is empty (the NUL aside).
    pub fn is_empty(&self) -> bool {
        match (&self.latin1, &self.wide) {
            (Some(bytes), _) => bytes.iter().all(|&b| b == 0),
            (None, Some(wide)) => wide.units.iter().all(|&u| u == 0),
            (None, None) => true,
        }
    }

    /// The text up to its closing NUL, colour codes included: Latin-1 bytes read in
    /// `encoding` (Latin-1 is what the engine writes), UTF-16 units with unpaired surrogates
    /// replaced.
    pub fn decode(&self, encoding: TextEncoding) -> Cow<'_, str> {
        match (&self.latin1, &self.wide) {
            (Some(bytes), _) => {
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                encoding.decode_lossy(&bytes[..end])
            }
            (None, Some(wide)) => {
                let end = wide
                    .units
                    .iter()
                    .position(|&u| u == 0)
                    .unwrap_or(wide.units.len());
                Cow::Owned(String::from_utf16_lossy(&wide.units[..end]))
            }
            (None, None) => Cow::Borrowed(""),
        }
    }

    /// Whether the Latin-1 bytes counted end with the NUL they must end with (a UTF-16 or
    /// an empty string: true).
    pub fn ends_with_nul(&self) -> bool {
        match &self.latin1 {
            Some(bytes) => bytes.is_empty() || bytes.last() == Some(&0),
            None => true,
        }
    }
}

impl Serialize for UText {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.decode(TextEncoding::Latin1))
    }
}

/// `text` without colour codes: each `U+001B` and the three characters after it go.
///
/// ```
/// use query_specs::unreal2::strip_colours;
///
/// assert_eq!(strip_colours("\u{1b}\u{ff}\u{ff}\u{1}Red Arena"), "Red Arena");
/// assert_eq!(strip_colours("plain"), "plain");
/// ```
pub fn strip_colours(text: &str) -> Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.nth(2);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The details' layout, which nothing in the reply names: the client tries them in turn
/// ([`Info::decode_any`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub enum Layout {
    /// UT2003, UT2004, Red Orchestra, Darkest Hour.
    #[default]
    Standard,
    /// Killing Floor: waves before the ping, a name read to its NUL.
    KillingFloor,
}

/// Killing Floor's server name: a length byte that does not match, then Latin-1 to a NUL.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct NulName {
    /// The length byte as sent (not the name's length).
    pub len: u8,
    /// The name's bytes before the NUL.
    #[wire(bytes(nul))]
    pub bytes: Vec<u8>,
}

/// Killing Floor's waves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Waves {
    /// The wave being played.
    pub current: u32,
    /// How many waves the game has.
    pub total: u32,
}

/// What UT2004 and later send after the ping.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct InfoMore {
    /// The server's flags (password, stats, anti-cheat..., a bit each; kept as sent).
    pub flags: u32,
    /// The bots' skill, as text.
    pub skill: UText,
    /// Two bytes after the skill (zeros), when sent.
    #[wire(trailing)]
    pub padding: Option<[u8; 2]>,
}

/// The server's details, after the [`Header`]; `layout` says where the fields are.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", ctx(layout: Layout))]
pub struct Info {
    /// The server's id (0 on most servers).
    pub server_id: u32,
    /// The server's address as text (empty on most servers).
    pub ip: UText,
    /// The game port.
    pub game_port: u32,
    /// The query port (0 on most servers).
    pub query_port: u32,
    /// The server's name, colour codes included (every layout but Killing Floor's).
    #[wire(when = layout == Layout::Standard)]
    pub name: Option<UText>,
    /// Killing Floor's server name.
    #[wire(when = layout == Layout::KillingFloor)]
    pub nul_name: Option<NulName>,
    /// The map.
    pub map: UText,
    /// The game type (`xDeathMatch`, `ONSOnslaughtGame`, `KFGameType`...).
    pub game_type: UText,
    /// Players online.
    pub num_players: u32,
    /// Player slots.
    pub max_players: u32,
    /// Killing Floor's waves.
    #[wire(when = layout == Layout::KillingFloor)]
    pub waves: Option<Waves>,
    /// The server's ping to the master server (0 on most).
    pub ping: u32,
    /// Flags and skill, when sent.
    #[wire(trailing)]
    pub more: Option<InfoMore>,
}

impl Info {
    /// The details in the rest of `r` (after the header), in the first layout that reads
    /// them whole: the standard one, whose every Latin-1 string must end with its NUL,
    /// then Killing Floor's. Fails with the standard layout's error when neither fits.
    pub fn decode_any(r: &mut Reader<'_>) -> Result<(Self, Layout)> {
        let start = r.clone();
        let standard = Info::decode_exact(r, Layout::Standard).and_then(|info| {
            let unended = [info.name.as_ref(), Some(&info.map), Some(&info.game_type)]
                .into_iter()
                .flatten()
                .any(|t| !t.ends_with_nul());
            if unended {
                Err(Error::new(
                    query_wire::ErrorKind::Invalid(
                        "a Latin-1 string's counted bytes do not end with its NUL",
                    ),
                    start.offset(),
                ))
            } else {
                Ok(info)
            }
        });
        match standard {
            Ok(info) => Ok((info, Layout::Standard)),
            Err(error) => {
                *r = start.clone();
                match Info::decode_exact(r, Layout::KillingFloor) {
                    Ok(info) => Ok((info, Layout::KillingFloor)),
                    Err(_) => Err(error),
                }
            }
        }
    }

    /// The server's name, colour codes included, in either layout.
    pub fn name_text(&self, encoding: TextEncoding) -> Cow<'_, str> {
        match (&self.name, &self.nul_name) {
            (Some(name), _) => name.decode(encoding),
            (None, Some(nul)) => encoding.decode_lossy(&nul.bytes),
            (None, None) => Cow::Borrowed(""),
        }
    }
}

/// One rule: a key and a value (a key may come more than once: `Mutator`).
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Rule {
    /// The rule's name.
    pub key: UText,
    /// Its value.
    pub value: UText,
}

/// One player.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Player {
    /// The player's id on the server.
    pub id: u32,
    /// The name, colour codes included.
    pub name: UText,
    /// Ping in milliseconds.
    pub ping: u32,
    /// Score (kills, or frags).
    pub score: i32,
    /// The stats id; UT2004 keeps the team in its top bits (`0x20000000` red, `0x40000000`
    /// blue).
    pub stats_id: u32,
}

/// A datagram of rules: the header, then whole pairs to its end.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct RulesPart {
    /// Version and kind ([`Kind::Rules`]).
    pub header: Header,
    /// The pairs in this datagram.
    #[wire(until_end)]
    pub rules: Vec<Rule>,
}

/// A datagram of players: the header, then whole players to its end.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct PlayersPart {
    /// Version and kind ([`Kind::Players`]).
    pub header: Header,
    /// The players in this datagram.
    #[wire(until_end)]
    pub players: Vec<Player>,
}

/// The details datagram: the header, then the details in a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InfoReply {
    /// Version and kind ([`Kind::Info`]).
    pub header: Header,
    /// The layout the details decoded in.
    pub layout: Layout,
    /// The details.
    pub info: Info,
}

/// Any reply datagram, told by its header's kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Reply {
    /// The details (boxed: they are far larger than a part's lists).
    Info(Box<InfoReply>),
    /// Some rules.
    Rules(RulesPart),
    /// Some players.
    Players(PlayersPart),
}

impl Reply {
    /// Decodes one whole datagram by its header's kind.
    pub fn decode(datagram: &[u8]) -> Result<Self> {
        let mut r = Reader::new(datagram);
        let header = Header::decode(&mut r, ())?;
        let mut whole = Reader::new(datagram);
        match header.kind {
            Kind::Info => {
                let (info, layout) = Info::decode_any(&mut r)?;
                Ok(Reply::Info(Box::new(InfoReply {
                    header,
                    layout,
                    info,
                })))
            }
            Kind::Rules => RulesPart::decode_exact(&mut whole, ()).map(Reply::Rules),
            Kind::Players => PlayersPart::decode_exact(&mut whole, ()).map(Reply::Players),
        }
    }

    /// The kind the datagram answers.
    pub fn kind(&self) -> Kind {
        match self {
            Reply::Info(_) => Kind::Info,
            Reply::Rules(_) => Kind::Rules,
            Reply::Players(_) => Kind::Players,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Encode, ErrorKind};

    #[test]
    fn requests_are_five_bytes() {
        assert_eq!(
            Request::ut2004(Kind::Players).to_vec().unwrap(),
            b"\x79\x00\x00\x00\x02"
        );
        let qstat = Request::from_bytes(b"\x78\x00\x00\x00\x00").unwrap();
        assert_eq!((qstat.version, qstat.query), (REQUEST_UT2003, Query::Info));
        let all = Request::from_bytes(b"\x78\x00\x00\x00\x03").unwrap();
        assert!(all.query.answered_by(Kind::Players) && all.query.answered_by(Kind::Info));
        assert!(!Query::Rules.answered_by(Kind::Players));
        let error = Request::from_bytes(b"\x79\x00\x00\x00\x04").unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::UnknownTag { .. }),
            "{error}"
        );
        assert!(Request::from_bytes(b"\x79\x00\x00\x00\x00\x00").is_err());
    }

    #[test]
    fn strings_latin1_utf16_empty_and_the_stray_byte() {
        let latin1 = UText::new("Café");
        assert_eq!(latin1.to_vec().unwrap(), b"\x05Caf\xe9\x00");
        assert_eq!(UText::from_bytes(b"\x05Caf\xe9\x00").unwrap(), latin1);
        assert_eq!(latin1.decode(TextEncoding::Latin1), "Café");

        let wide = UText::new("Жук");
        assert_eq!(
            wide.to_vec().unwrap(),
            b"\x84\x16\x04\x43\x04\x3a\x04\x00\x00"
        );
        assert_eq!(
            UText::from_bytes(b"\x84\x16\x04\x43\x04\x3a\x04\x00\x00")
                .unwrap()
                .decode(TextEncoding::Latin1),
            "Жук"
        );
        // The stray byte: read, kept and written back.
        let stray = UText::from_bytes(b"\x84\x01\x16\x04\x43\x04\x3a\x04\x00\x00").unwrap();
        assert_eq!(stray.decode(TextEncoding::Latin1), "Жук");
        assert_eq!(stray.wide.as_ref().unwrap().stray, Some(Stray));
        assert_eq!(
            stray.to_vec().unwrap(),
            b"\x84\x01\x16\x04\x43\x04\x3a\x04\x00\x00"
        );

        let empty = UText::new("");
        assert_eq!(empty.to_vec().unwrap(), b"\x00");
        assert!(UText::from_bytes(b"\x00").unwrap().is_empty());
        assert!(UText::from_bytes(b"\x01\x00").unwrap().is_empty());

        let error = UText::from_bytes(b"\x05Caf").unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::UnexpectedEnd { .. }),
            "{error}"
        );
    }

    #[test]
    fn long_text_is_cut_to_what_a_length_byte_counts() {
        let long = UText::new(&"x".repeat(300));
        assert_eq!(long.len, 127);
        assert_eq!(long.to_vec().unwrap().len(), 128);
        let wide = UText::new(&"Ж".repeat(300));
        assert_eq!(wide.len, 127);
        assert_eq!(wide.to_vec().unwrap().len(), 1 + 127 * 2);
        // Never half a surrogate pair.
        let emoji = UText::new(&"😀".repeat(100));
        assert_eq!(emoji.len, 127);
        assert_eq!(emoji.decode(TextEncoding::Latin1), "😀".repeat(63));
    }

    #[test]
    fn colour_codes_go_with_their_three_bytes() {
        assert_eq!(
            strip_colours("\u{1b}\u{f8}@@Old Dudes \u{1b}@@\u{f8}Sniper"),
            "Old Dudes Sniper"
        );
        assert_eq!(strip_colours("cut\u{1b}\u{1}"), "cut");
    }

    fn info_bytes(name: &[u8], waves: bool, tail: &[u8]) -> Vec<u8> {
        let mut bytes =
            b"\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x61\x1e\x00\x00\x00\x00\x00\x00".to_vec();
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(b"\x06DM-X1\x00\x03DM\x00\x02\x00\x00\x00\x10\x00\x00\x00");
        if waves {
            bytes.extend_from_slice(b"\x03\x00\x00\x00\x0a\x00\x00\x00");
        }
        bytes.extend_from_slice(b"\x00\x00\x00\x00");
        bytes.extend_from_slice(tail);
        bytes
    }

    #[test]
    fn details_in_either_layout() {
        let ut2004 = info_bytes(
            b"\x06Arena\x00",
            false,
            b"\x20\x00\x00\x00\x02\x33\x00\x00\x00",
        );
        let Reply::Info(reply) = Reply::decode(&ut2004).unwrap() else {
            panic!("details expected");
        };
        assert_eq!(reply.layout, Layout::Standard);
        assert_eq!(reply.info.name_text(TextEncoding::Latin1), "Arena");
        assert_eq!(reply.info.game_port, 7777);
        assert_eq!((reply.info.num_players, reply.info.max_players), (2, 16));
        let more = reply.info.more.as_ref().unwrap();
        assert_eq!(more.flags, 0x20);
        assert_eq!(more.skill.decode(TextEncoding::Latin1), "3");
        assert_eq!(more.padding, Some([0, 0]));

        // UT2003: nothing after the ping.
        let old = info_bytes(b"\x06Arena\x00", false, b"");
        let Reply::Info(reply) = Reply::decode(&old).unwrap() else {
            panic!("details expected");
        };
        assert_eq!(reply.info.more, None);

        // Killing Floor: a name length that does not match, waves before the ping.
        let kf = info_bytes(
            b"\x03Zed \x1b\x01\xff\x01Time\x00",
            true,
            b"\x20\x00\x00\x00\x02\x30\x00\x00\x00",
        );
        let Reply::Info(reply) = Reply::decode(&kf).unwrap() else {
            panic!("details expected");
        };
        assert_eq!(reply.layout, Layout::KillingFloor);
        assert_eq!(
            strip_colours(&reply.info.name_text(TextEncoding::Latin1)),
            "Zed Time"
        );
        assert_eq!(reply.info.nul_name.as_ref().unwrap().len, 3);
        assert_eq!(
            reply.info.waves,
            Some(Waves {
                current: 3,
                total: 10
            })
        );

        // Bytes past the padding fit neither layout.
        let mut long = ut2004.clone();
        long.push(0);
        assert!(Reply::decode(&long).is_err());
    }

    #[test]
    fn a_killing_floor_server_whose_name_length_matches_is_still_read_in_its_layout() {
        // A Killing Floor server's details: five colour codes in the name (whose length byte,
        // 0x36, is right this time), waves 1 of 10, then ping, flags, skill and padding.
        let mut bytes =
            b"\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\x1e\x00\x00\x00\x00\x00\x00\x36"
                .to_vec();
        bytes.extend_from_slice(b"\x1b\xfe@@WWW.CUZUS.ORG \x1booo- \x1b@\xfe\xfeBOSS RAGE ");
        bytes.extend_from_slice(b"\x1booo- \x1b\x88\x88\x88V1065\x00\x0fKF-No-Mercy_TA\x00");
        bytes.extend_from_slice(b"\x0bSRGameType\x00\x02\x00\x00\x00\x18\x00\x00\x00");
        bytes.extend_from_slice(b"\x01\x00\x00\x00\x0a\x00\x00\x00\x00\x00\x00\x00");
        bytes.extend_from_slice(b"\x20\x00\x00\x00\x020\x00\x00\x00");
        let Reply::Info(reply) = Reply::decode(&bytes).unwrap() else {
            panic!("details expected");
        };
        assert_eq!(reply.layout, Layout::KillingFloor);
        let name = reply.info.name_text(TextEncoding::Latin1);
        assert_eq!(strip_colours(&name), "WWW.CUZUS.ORG - BOSS RAGE - V1065");
        assert_eq!(reply.info.game_port, 7807);
        assert_eq!((reply.info.num_players, reply.info.max_players), (2, 24));
        assert_eq!(reply.info.waves.unwrap().total, 10);
        assert_eq!(reply.info.more.as_ref().unwrap().flags, 0x20);
    }

    #[test]
    fn rules_and_players_parts_hold_whole_entries() {
        let part = RulesPart {
            header: Header {
                version: REPLY_VERSION,
                kind: Kind::Rules,
            },
            rules: vec![Rule {
                key: UText::new("AdminEmail"),
                value: UText::new(""),
            }],
        };
        let bytes = part.to_vec().unwrap();
        assert_eq!(bytes, b"\x80\x00\x00\x00\x01\x0bAdminEmail\x00\x00");
        assert_eq!(Reply::decode(&bytes).unwrap(), Reply::Rules(part));

        let players = b"\x80\x00\x00\x00\x02\x14\x00\x00\x00\x05Math\x00\x98\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x20";
        let Reply::Players(part) = Reply::decode(players).unwrap() else {
            panic!("players expected");
        };
        assert_eq!(part.players[0].id, 20);
        assert_eq!(part.players[0].score, -1);
        assert_eq!(part.players[0].stats_id, 0x2000_0000);
        // A player cut at the datagram's end is refused.
        assert!(Reply::decode(&players[..players.len() - 1]).is_err());
        assert!(Reply::decode(b"\x80\x00\x00\x00\x07").is_err());
    }
}
