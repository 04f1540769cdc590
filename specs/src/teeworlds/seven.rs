//! Teeworlds 0.7: the server info query behind a token exchange, on the game port (8303).
//!
//! Every 0.7 packet starts with a header whose first byte holds the packet's flags (shifted
//! left by two) and the protocol version (1), and which carries 32-bit tokens, big-endian:
//!
//! 1. [`Request::Token`] (520 bytes): a control packet `04 00 00` (flags, acknowledgement,
//!    chunk count), the token `FF FF FF FF` ([`TOKEN_NONE`]: the client has none of the
//!    server's yet), the control message `05` (`NET_CTRLMSG_TOKEN`), the client's token, then
//!    508 bytes of zeros. The server answers only a request of 512 bytes or more after the
//!    header, so that its reply is smaller than what asked for it.
//! 2. [`Reply::Token`] (12 bytes): `04 00 00`, the client's token, `05`, and the server's
//!    token for the client's address; the server drops a packet that carries another.
//! 3. [`Request::Info`]: a connectionless packet `21` (flag 8, version 1), the server's
//!    token, the client's token, `FF FF FF FF gie3` and the browser's token as a packed
//!    integer (`#[wire(packed_int)]`).
//! 4. [`Reply::Info`] ([`InfoReply`]): `21`, the client's token, the server's token,
//!    `FF FF FF FF inf3`, the browser's token, then NUL-terminated version, name, host name,
//!    map and game type, and packed integers: flags, skill level, players, player slots,
//!    clients, client slots; then per client its name, clan, country, score and flags
//!    ([`CLIENT_SPECTATOR`], [`CLIENT_BOT`]).
//!
//! Checked against Debian's `teeworlds-server` 0.7.5 (the tests below hold its bytes). Where
//! it differs from what one might read in the source: the skill level is `1` unless
//! configured, and a client still connecting is listed as `(connecting)`, a spectator
//! (flags `1`) with country `-1`. Strict where a mistake would mislead: the header bytes are
//! exact, the tokens are compared by the caller, counts are never negative, and packed
//! integers have one encoding each. Lenient where servers differ harmlessly: the token
//! request's padding is not read (the server only counts it), and unknown client flags are
//! kept. DDNet answers the token exchange too, but with a 0.6 `inf3` reply
//! ([`super::Reply`]).

use query_wire::{Padding, Text, Wire};
use serde::Serialize;

use super::GetInfo;

/// The token of a packet whose sender has none of the receiver's (`NET_TOKEN_NONE`).
pub const TOKEN_NONE: u32 = u32::MAX;

/// The first byte of a control packet without acknowledgement bits (flag 1 shifted by two).
pub const CONTROL: u8 = 0x04;

/// The first byte of a connectionless packet (flag 8 shifted by two, version 1).
pub const CONNLESS: u8 = 0x21;

/// The size of a token request: the server answers none shorter.
pub const TOKEN_REQUEST_LEN: usize = 520;

/// The most clients a 0.7 server has (`MAX_CLIENTS`).
pub const MAX_CLIENTS: usize = 64;

/// The rest of a token request's header and its control message: no acknowledgement, no
/// chunks, [`TOKEN_NONE`], `NET_CTRLMSG_TOKEN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\x00\x00\xff\xff\xff\xff\x05")]
pub struct TokenRequestHead {}

/// The rest of a token reply's header: no acknowledgement, no chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\x00\x00")]
pub struct ControlHead {}

/// `NET_CTRLMSG_TOKEN`, the control message of a token exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\x05")]
pub struct TokenMessage {}

/// `FF FF FF FF inf3`: the info reply's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\xff\xff\xff\xffinf3")]
pub struct InfoTag {}

/// A packet a client sends, told by its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = u8)]
pub enum Request {
    /// `04`: the token request.
    #[wire(tag = CONTROL)]
    Token(TokenRequest),
    /// `21`: the info request, with the server's token.
    #[wire(tag = CONNLESS)]
    Info(InfoRequest),
}

/// The token request, after its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(endian = "big")]
pub struct TokenRequest {
    /// No acknowledgement, no chunks, no token yet, `NET_CTRLMSG_TOKEN`.
    pub head: TokenRequestHead,
    /// The client's token: the server's reply carries it.
    pub client_token: u32,
    /// Zeros, so that the request is larger than the reply.
    pub padding: Padding<508>,
}

/// The info request, after its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct InfoRequest {
    /// The server's token, from its [`TokenReply`].
    pub server_token: u32,
    /// The client's token: the reply's header carries it.
    pub client_token: u32,
    /// `FF FF FF FF gie3`.
    pub get_info: GetInfo,
    /// The browser's token, echoed in the reply's body.
    #[wire(packed_int)]
    pub token: i32,
}

impl Request {
    /// The token request of a client whose token is `client_token`.
    pub fn token(client_token: u32) -> Request {
        Request::Token(TokenRequest {
            head: TokenRequestHead {},
            client_token,
            padding: Padding,
        })
    }

    /// The info request carrying `server_token`, `client_token` and the browser's `token`.
    pub fn info(server_token: u32, client_token: u32, token: i32) -> Request {
        Request::Info(InfoRequest {
            server_token,
            client_token,
            get_info: GetInfo {},
            token,
        })
    }
}

/// A packet a server sends, told by its first byte.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", tag = u8, view = ReplyView)]
pub enum Reply<'a> {
    /// `04`: the token reply.
    #[wire(tag = CONTROL)]
    Token(TokenReply),
    /// `21`: the info reply.
    #[wire(tag = CONNLESS)]
    Info(#[wire(view)] InfoReply<'a>),
}

/// The token reply, after its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(endian = "big")]
pub struct TokenReply {
    /// No acknowledgement, no chunks.
    pub head: ControlHead,
    /// The client's token, from its request.
    pub client_token: u32,
    /// `NET_CTRLMSG_TOKEN`.
    pub message: TokenMessage,
    /// The server's token for the client's address.
    pub server_token: u32,
}

/// The info reply, after its first byte.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", view = InfoReplyView)]
pub struct InfoReply<'a> {
    /// The client's token, from the request's header.
    pub client_token: u32,
    /// The server's token.
    pub server_token: u32,
    /// `FF FF FF FF inf3`.
    pub tag: InfoTag,
    /// The browser's token, from the request's body.
    #[wire(packed_int)]
    pub token: i32,
    /// The game's version (`0.7.5`).
    #[wire(str(nul))]
    pub version: Text<'a>,
    /// The server name.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The host name the server advertises (`sv_hostname`, empty unless set).
    #[wire(str(nul))]
    pub hostname: Text<'a>,
    /// The map.
    #[wire(str(nul))]
    pub map: Text<'a>,
    /// The game type (`DM`, `CTF`, `LMS`...).
    #[wire(str(nul))]
    pub game_type: Text<'a>,
    /// [`FLAG_PASSWORD`], [`FLAG_TIMESCORE`].
    #[wire(packed_int)]
    pub flags: u32,
    /// The skill level the server asks for: 0 casual, 1 normal, 2 competitive.
    #[wire(packed_int)]
    pub skill_level: u32,
    /// Players in the game (clients that are not spectators).
    #[wire(packed_int)]
    pub num_players: u32,
    /// Player slots.
    #[wire(packed_int)]
    pub max_players: u32,
    /// Clients connected, spectators included.
    #[wire(packed_int)]
    pub num_clients: u32,
    /// Client slots (never fewer than the clients connected).
    #[wire(packed_int)]
    pub max_clients: u32,
    /// The clients, connecting ones included.
    #[wire(until_end)]
    pub clients: Vec<Client<'a>>,
}

/// `flags`: joining needs a password.
pub const FLAG_PASSWORD: u32 = 1;
/// `flags`: scores are times (race modes).
pub const FLAG_TIMESCORE: u32 = 2;

/// A client's `flags`: a spectator (or not in the game yet).
pub const CLIENT_SPECTATOR: u32 = 1;
/// A client's `flags`: a bot.
pub const CLIENT_BOT: u32 = 2;

/// One client of an [`InfoReply`].
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct Client<'a> {
    /// The name (at most 15 bytes on real servers).
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The clan (at most 11 bytes).
    #[wire(str(nul))]
    pub clan: Text<'a>,
    /// ISO 3166-1 numeric country code, `-1` when none.
    #[wire(packed_int)]
    pub country: i32,
    /// The score (a time in race modes, see [`FLAG_TIMESCORE`]).
    #[wire(packed_int)]
    pub score: i32,
    /// [`CLIENT_SPECTATOR`], [`CLIENT_BOT`]; unknown bits are kept.
    #[wire(packed_int)]
    pub flags: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::{Decode, Encode};

    /// Debian's teeworlds-server 0.7.5, `sv_name "gsq test seven"`, map ctf2, 10 player slots,
    /// 12 client slots, one client connecting; token request `0x11223344`, browser token 7.
    const REAL_INFO: &[u8] = b"\x21\x11\x22\x33\x44\x5c\xc5\x8b\x9d\xff\xff\xff\xffinf3\x070.7.5\x00\
        gsq test seven\x00\x00ctf2\x00DM\x00\x00\x01\x00\x0a\x01\x0c(connecting)\x00\x00\x40\x00\x01";

    #[test]
    fn the_token_exchange_reads_as_the_real_server_sends_it() {
        let request = Request::token(0x1234_5678).to_vec().unwrap();
        assert_eq!(request.len(), TOKEN_REQUEST_LEN);
        assert_eq!(
            request[..12],
            *b"\x04\x00\x00\xff\xff\xff\xff\x05\x12\x34\x56\x78"
        );
        assert!(request[12..].iter().all(|&b| b == 0));
        assert_eq!(
            Request::from_bytes(&request).unwrap(),
            Request::token(0x1234_5678)
        );
        // The real server's answer to that request.
        let reply = Reply::from_bytes(b"\x04\x00\x00\x12\x34\x56\x78\x05\x04\x1a\xc6\xc6").unwrap();
        let Reply::Token(token) = reply else {
            panic!("not a token reply");
        };
        assert_eq!(
            (token.client_token, token.server_token),
            (0x1234_5678, 0x041a_c6c6)
        );
        // A request cut short (the server ignores it) or a control message of another kind.
        assert!(Request::from_bytes(&request[..12]).is_err());
        assert!(Reply::from_bytes(b"\x04\x00\x00\x12\x34\x56\x78\x04\x04\x1a\xc6\xc6").is_err());
    }

    #[test]
    fn the_info_request_packs_the_browser_token() {
        let bytes = Request::info(0x041a_c6c6, 0x1234_5678, 8191)
            .to_vec()
            .unwrap();
        assert_eq!(
            bytes,
            b"\x21\x04\x1a\xc6\xc6\x12\x34\x56\x78\xff\xff\xff\xffgie3\xbf\x7f"
        );
        let Request::Info(info) = Request::from_bytes(&bytes).unwrap() else {
            panic!("not an info request");
        };
        assert_eq!(info.token, 8191);
    }

    #[test]
    fn a_real_info_reply_reads_field_by_field_and_round_trips() {
        let Reply::Info(info) = Reply::from_bytes(REAL_INFO).unwrap() else {
            panic!("not an info reply");
        };
        assert_eq!(
            (info.client_token, info.server_token),
            (0x1122_3344, 0x5cc5_8b9d)
        );
        assert_eq!(info.token, 7);
        assert_eq!(info.version.as_bytes(), b"0.7.5");
        assert_eq!(info.name.as_bytes(), b"gsq test seven");
        assert_eq!(info.hostname.as_bytes(), b"");
        assert_eq!(
            (info.map.as_bytes(), info.game_type.as_bytes()),
            (&b"ctf2"[..], &b"DM"[..])
        );
        assert_eq!((info.flags, info.skill_level), (0, 1));
        assert_eq!((info.num_players, info.max_players), (0, 10));
        assert_eq!((info.num_clients, info.max_clients), (1, 12));
        let client = &info.clients[..];
        assert_eq!(client.len(), 1);
        assert_eq!(client[0].name.as_bytes(), b"(connecting)");
        assert_eq!((client[0].country, client[0].score), (-1, 0));
        assert_eq!(client[0].flags, CLIENT_SPECTATOR);
        assert_eq!(Reply::Info(info).to_vec().unwrap(), REAL_INFO);
    }

    #[test]
    fn a_cut_or_negative_count_is_an_error_at_its_offset() {
        let cut = &REAL_INFO[..REAL_INFO.len() - 1];
        let error = Reply::from_bytes(cut).unwrap_err();
        assert_eq!(error.offset(), cut.len());
        // Players -1 (`40`) where a count belongs.
        let mut negative = REAL_INFO.to_vec();
        let at = 50;
        assert_eq!(negative[at - 2..=at], [0x00, 0x01, 0x00]);
        negative[at] = 0x40;
        let error = Reply::from_bytes(&negative).unwrap_err();
        assert_eq!(error.offset(), at);
        assert!(error.path_string().ends_with("num_players"), "{error}");
        // A 0.6 reply is not a 0.7 packet.
        let error =
            Reply::from_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffinf35\x00").unwrap_err();
        assert_eq!(error.offset(), 0);
    }
}
