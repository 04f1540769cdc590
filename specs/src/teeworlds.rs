//! Teeworlds 0.6 and 0.7, and DDNet (DDraceNetwork): the server info query over UDP, port 8303 by
//! default, on the game port. Text in NUL-terminated strings, numbers in decimal.
//!
//! - Requests ([`Request`]): a connectionless packet, `FF FF FF FF FF FF` (0.6), then
//!   `FF FF FF FF gie3` and a token byte. DDNet's form starts `xe` and two more token bytes
//!   instead ([`Request::Extended`]); a DDNet server answers it with the extended info,
//!   a 0.6 server with the plain one, both echoing the token.
//! - Replies ([`Reply`]): ten `FF` bytes, a four-letter type and decimal token, then:
//!   - `inf3` ([`Info`]): version, name, map, game type, flags, players, player slots,
//!     clients, client slots, then per client name, clan, country, score and whether it plays
//!     (not a spectator). At most 16 clients: a DDNet server with more lists the first 16
//!     and counts no more than 16.
//!   - `iext` ([`ExtendedInfo`]): the same with the map's CRC and size after the map and a
//!     reserved string after the counts and after every client; every client is listed, over
//!     several datagrams when they do not fit one.
//!   - `iex+` ([`ExtendedMore`]): the next datagram of an extended reply: its number (1, 2...)
//!     and a reserved string, then more clients. No datagram says how many follow; the
//!     reply is whole when it lists as many clients as the first datagram counts.
//!
//! Where this follows real servers rather than the notes: the token comes back as decimal
//! text, not as the byte sent (`inf3` `5\0` for token 5); DDNet's extended token is the byte
//! plus the two bytes after `xe` shifted left by 8 (`0x1234`, byte 7 → `1192967`). Strict
//! where a mistake would mislead: counts and the token are unsigned decimal numbers, and a
//! reply of another type is an [`ErrorKind::UnknownTag`](query_wire::ErrorKind). Lenient
//! where servers differ harmlessly: the map CRC is read signed or unsigned (DDNet prints it
//! signed), and scores and countries may be negative (DDNet sends times as negative scores,
//! `-1` for no country). Text is UTF-8 on every known server; it is kept as the raw bytes
//! ([`Text`]) and decoded by the caller.
//!
//! Teeworlds 0.7, whose packets carry tokens exchanged first and whose info packs its numbers
//! in Teeworlds' own variable-length integers, is declared in [`seven`].

pub mod seven;

use query_wire::{Text, TextEncoding, Wire};
use serde::Serialize;

/// The port Teeworlds and DDNet servers answer on unless configured otherwise.
pub const DEFAULT_PORT: u16 = 8303;

/// The text encoding of every known server.
pub const ENCODING: TextEncoding = TextEncoding::Utf8;

/// The most clients a `inf3` reply lists (Teeworlds 0.6's `MAX_CLIENTS`).
pub const VANILLA_MAX_CLIENTS: usize = 16;

/// A request's length, in either form.
pub const REQUEST_LEN: usize = 15;

/// The largest datagram a server sends (Teeworlds' `NET_MAX_PACKETSIZE`).
pub const MAX_DATAGRAM: usize = 1400;

/// `inf3`, the 0.6 reply's type, as the tag [`Reply`] reads.
pub const INF3: u32 = u32::from_be_bytes(*b"inf3");
/// `iext`, the first datagram of DDNet's extended reply.
pub const IEXT: u32 = u32::from_be_bytes(*b"iext");
/// `iex+`, a further datagram of DDNet's extended reply.
pub const IEX_MORE: u32 = u32::from_be_bytes(*b"iex+");

/// The four bytes after a 0.6 request's first two `FF` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\xff\xff\xff\xff")]
pub struct PlainHeaderRest {}

/// `FF FF FF FF gie3`: the request for the server info.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\xff\xff\xff\xffgie3")]
pub struct GetInfo {}

/// A server info request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = u16)]
pub enum Request {
    /// 0.6: `FF FF FF FF FF FF FF FF FF FF gie3` and the token byte; answered with `inf3`.
    #[wire(tag = 0xffff)]
    Vanilla {
        /// The rest of the six-byte header.
        header: PlainHeaderRest,
        /// `FF FF FF FF gie3`.
        get_info: GetInfo,
        /// Echoed as decimal text.
        token: u8,
    },
    /// DDNet: `xe`, two more token bytes, two reserved bytes, `FF FF FF FF gie3` and the
    /// token byte; answered with `iext` (and `iex+`) by DDNet, with `inf3` by 0.6 servers.
    #[wire(tag = 0x7865)]
    Extended {
        /// The token's bits 8 to 23.
        extra_token: u16,
        /// Zero.
        reserved: u16,
        /// `FF FF FF FF gie3`.
        get_info: GetInfo,
        /// The token's low byte.
        token: u8,
    },
}

impl Request {
    /// A DDNet request for `token` (its low 24 bits).
    pub fn extended(token: u32) -> Request {
        Request::Extended {
            extra_token: ((token >> 8) & 0xffff) as u16,
            reserved: 0,
            get_info: GetInfo {},
            token: (token & 0xff) as u8,
        }
    }

    /// A 0.6 request for `token`.
    pub fn vanilla(token: u8) -> Request {
        Request::Vanilla {
            header: PlainHeaderRest {},
            get_info: GetInfo {},
            token,
        }
    }

    /// The token the reply echoes: the byte, and for [`Request::Extended`] the extra bits
    /// above it.
    pub fn token(&self) -> u32 {
        match *self {
            Request::Vanilla { token, .. } => u32::from(token),
            Request::Extended {
                extra_token, token, ..
            } => (u32::from(extra_token) << 8) | u32::from(token),
        }
    }
}

/// A server info reply, one datagram of it.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(
    endian = "big",
    magic = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    tag = u32,
    view = ReplyView
)]
pub enum Reply<'a> {
    /// `inf3`: the whole 0.6 reply.
    #[wire(tag = INF3)]
    Info(#[wire(view)] Info<'a>),
    /// `iext`: the first datagram of DDNet's extended reply.
    #[wire(tag = IEXT)]
    Extended(#[wire(view)] ExtendedInfo<'a>),
    /// `iex+`: a further datagram of DDNet's extended reply.
    #[wire(tag = IEX_MORE)]
    More(#[wire(view)] ExtendedMore<'a>),
}

impl Reply<'_> {
    /// The token echoed.
    pub fn token(&self) -> u32 {
        match self {
            Reply::Info(info) => info.token,
            Reply::Extended(info) => info.token,
            Reply::More(more) => more.token,
        }
    }

    /// The token echoed, to write another (a replay answering a new request).
    pub fn token_mut(&mut self) -> &mut u32 {
        match self {
            Reply::Info(info) => &mut info.token,
            Reply::Extended(info) => &mut info.token,
            Reply::More(more) => &mut more.token,
        }
    }

    /// The clients this datagram lists.
    pub fn clients(&self) -> &[Client<'_>] {
        match self {
            Reply::Info(info) => &info.clients,
            Reply::Extended(info) => &info.clients,
            Reply::More(more) => &more.clients,
        }
    }
}

/// `inf3`: the 0.6 reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(view = InfoView)]
pub struct Info<'a> {
    /// The request's token, echoed.
    #[wire(dec(nul))]
    pub token: u32,
    /// The game's version (`0.6.4`, DDNet `0.6.4, 16.4`).
    #[wire(str(nul))]
    pub version: Text<'a>,
    /// The server name (DDNet adds ` [clients/slots]` when it has more than 16 slots).
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The map.
    #[wire(str(nul))]
    pub map: Text<'a>,
    /// The game type (`DM`, `CTF`, `DDraceNetwork`...).
    #[wire(str(nul))]
    pub game_type: Text<'a>,
    /// [`FLAG_PASSWORD`] when joining needs a password.
    #[wire(dec(nul))]
    pub flags: u32,
    /// Players in the game (clients that are not spectators).
    #[wire(dec(nul))]
    pub num_players: u32,
    /// Player slots.
    #[wire(dec(nul))]
    pub max_players: u32,
    /// Clients connected, spectators included.
    #[wire(dec(nul))]
    pub num_clients: u32,
    /// Client slots.
    #[wire(dec(nul))]
    pub max_clients: u32,
    /// The clients, at most [`VANILLA_MAX_CLIENTS`] on real servers.
    #[wire(until_end, ctx = false)]
    pub clients: Vec<Client<'a>>,
}

/// `iext`: the first datagram of DDNet's extended reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(view = ExtendedInfoView)]
pub struct ExtendedInfo<'a> {
    /// The request's token, echoed (the extra bits included).
    #[wire(dec(nul))]
    pub token: u32,
    /// As [`Info::version`].
    #[wire(str(nul))]
    pub version: Text<'a>,
    /// The server name, never with the count DDNet adds in `inf3`.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The map.
    #[wire(str(nul))]
    pub map: Text<'a>,
    /// The map file's CRC32 (DDNet prints it signed).
    #[wire(dec(nul))]
    pub map_crc: i64,
    /// The map file's size in bytes.
    #[wire(dec(nul))]
    pub map_size: u32,
    /// The game type.
    #[wire(str(nul))]
    pub game_type: Text<'a>,
    /// As [`Info::flags`].
    #[wire(dec(nul))]
    pub flags: u32,
    /// Players in the game.
    #[wire(dec(nul))]
    pub num_players: u32,
    /// Player slots.
    #[wire(dec(nul))]
    pub max_players: u32,
    /// Clients connected, spectators included; the reply lists as many.
    #[wire(dec(nul))]
    pub num_clients: u32,
    /// Client slots.
    #[wire(dec(nul))]
    pub max_clients: u32,
    /// Reserved (empty on DDNet 16 to 19).
    #[wire(str(nul))]
    pub reserved: Text<'a>,
    /// The clients this datagram lists.
    #[wire(until_end, ctx = true)]
    pub clients: Vec<Client<'a>>,
}

/// `iex+`: a further datagram of DDNet's extended reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(view = ExtendedMoreView)]
pub struct ExtendedMore<'a> {
    /// The request's token, echoed.
    #[wire(dec(nul))]
    pub token: u32,
    /// This datagram's number: 1 for the one after `iext`, then 2...
    #[wire(dec(nul))]
    pub number: u32,
    /// Reserved (empty).
    #[wire(str(nul))]
    pub reserved: Text<'a>,
    /// The clients this datagram lists.
    #[wire(until_end, ctx = true)]
    pub clients: Vec<Client<'a>>,
}

/// `flags`: joining needs a password.
pub const FLAG_PASSWORD: u32 = 1;

/// One client: a player or a spectator. In the extended reply (context `true`) each ends
/// with a reserved string.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(ctx(extended: bool))]
pub struct Client<'a> {
    /// The name (at most 15 bytes on real servers).
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The clan (at most 11 bytes).
    #[wire(str(nul))]
    pub clan: Text<'a>,
    /// ISO 3166-1 numeric country code, `-1` when none.
    #[wire(dec(nul))]
    pub country: i32,
    /// The score; DDNet sends a finish time as a negative number of seconds, `-9999` for
    /// none.
    #[wire(dec(nul))]
    pub score: i32,
    /// `1` for a player, `0` for a spectator.
    #[wire(dec(nul))]
    pub is_player: u8,
    /// Reserved, in the extended reply only (empty).
    #[wire(when = extended, str(nul))]
    pub reserved: Option<Text<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Decode, Encode};

    #[test]
    fn requests_carry_the_token_as_real_servers_read_it() {
        let vanilla = Request::vanilla(5).to_vec().unwrap();
        assert_eq!(vanilla, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x05");
        let extended = Request::extended(0x12_3407);
        let bytes = extended.to_vec().unwrap();
        assert_eq!(bytes, b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x07");
        assert_eq!((vanilla.len(), bytes.len()), (REQUEST_LEN, REQUEST_LEN));
        let decoded = Request::from_bytes(&bytes).unwrap();
        assert_eq!(decoded.token(), 1_192_967);
        assert!(Request::from_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3").is_err());
    }

    #[test]
    fn a_ddnet_extended_reply_reads_field_by_field() {
        // DDNet 16.4 (Debian's ddnet-server), sv_name "Test Tee", map ctf1, 20 slots.
        let bytes = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffiext1192967\x000.6.4, 16.4\x00\
                      Test Tee\x00ctf1\x00112587031\x004664\x00TestDDraceNetwor\x000\x000\x00\
                      20\x000\x0020\x00\x00";
        let Reply::Extended(info) = Reply::from_bytes(bytes).unwrap() else {
            panic!("not iext");
        };
        assert_eq!(info.token, 1_192_967);
        assert_eq!(info.name.as_bytes(), b"Test Tee");
        assert_eq!((info.map_crc, info.map_size), (112_587_031, 4664));
        assert_eq!((info.max_players, info.max_clients), (20, 20));
        assert!(info.clients.is_empty());
        assert_eq!(Reply::Extended(info).to_vec().unwrap(), bytes);
    }

    #[test]
    fn clients_round_trip_with_and_without_the_reserved_string() {
        let client = |reserved| Client {
            name: Text::from("nameless tee"),
            clan: Text::from(""),
            country: -1,
            score: -9999,
            is_player: 1,
            reserved,
        };
        let more = Reply::More(ExtendedMore {
            token: 9,
            number: 1,
            reserved: Text::from(""),
            clients: vec![client(Some(Text::from(""))), client(Some(Text::from("")))],
        });
        let bytes = more.to_vec().unwrap();
        assert!(bytes.starts_with(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffiex+9\x001\x00\x00"));
        assert_eq!(Reply::from_bytes(&bytes).unwrap(), more);
        // A vanilla client has no reserved string: one left in the list is an error.
        let vanilla = client(None).to_vec_with(false).unwrap();
        assert_eq!(vanilla, b"nameless tee\x00\x00-1\x00-9999\x001\x00");
        assert!(Client::from_bytes_with(&vanilla, true).is_err());
    }

    #[test]
    fn a_cut_or_foreign_reply_is_an_error_at_its_offset() {
        let bytes = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffinf35\x000.6.2\x00x\x00dm7\x00DM\x000\x000\x00";
        let error = Reply::from_bytes(bytes).unwrap_err();
        assert_eq!(error.offset(), bytes.len());
        let error =
            Reply::from_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfflis2\x00").unwrap_err();
        assert_eq!(error.offset(), 10);
        let negative = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffinf3-5\x00";
        assert!(Reply::from_bytes(negative).is_err());
    }
}
