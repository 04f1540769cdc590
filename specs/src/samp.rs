//! SA:MP and open.mp query, little-endian.
//!
//! Every packet starts with an 11-byte [`Header`]: `SAMP`, the server's IPv4 address and port
//! as the client addressed it, and an opcode. The server copies the header into its reply and
//! the body follows: `i` info, `r` rules, `c` client list, `d` detailed players, `p` ping echo,
//! `o` open.mp extra info, `x` RCON.
//!
//! Text has no declared charset: servers send the bytes of their locale. String fields are
//! [`Text`], the raw bytes, which the caller decodes with the encoding it chooses
//! (Windows-1252 in the West, Windows-1251 on Russian servers, UTF-8 on some open.mp servers).
//! The default is Windows-1252, [`ENCODING`].
//!
//! Where this follows the notes rather than the document:
//! - The server copies bytes 0..9 of the request into its reply and writes the opcode at byte
//!   10, so a reply's 11-byte [`Header`] echoes the request's; careful clients compare all 11
//!   bytes and ignore a reply that differs.
//! - open.mp answers only requests of the exact size: `i`, `r`, `c` and `o` must be the 11
//!   header bytes alone, `p` must be 15 bytes. [`Request`] encodes exactly these sizes.
//! - `p` carries 4 payload bytes in the request (15 bytes in all) and is echoed whole.
//! - `o` exists only on open.mp: four u32-length strings (Discord link, light and dark banner
//!   URLs, logo URL). Answering it is how a client detects open.mp.
//! - `x` (RCON) requests carry `password (u16 len) | command (u16 len)`; the server answers with
//!   one datagram per console line, each `header | u16 len | text`.
//! - The info reply's third string is the language (it was the map before 0.3.7).
//! - `c` and `d` are not answered above 100 players, and open.mp has no `d`.

use query_wire::{Text, TextEncoding, Wire};
use serde::Serialize;

/// The text encoding to decode [`Text`] with when the caller chose none: the code page of
/// most servers.
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;

/// The four bytes every packet starts with.
pub const MAGIC: &[u8; 4] = b"SAMP";
/// `i`: server information.
pub const OP_INFO: u8 = b'i';
/// `r`: rules.
pub const OP_RULES: u8 = b'r';
/// `c`: client list, names and scores.
pub const OP_CLIENTS: u8 = b'c';
/// `d`: detailed player list, with ids and pings.
pub const OP_PLAYERS: u8 = b'd';
/// `p`: ping, echoed.
pub const OP_PING: u8 = b'p';
/// `o`: open.mp extra information.
pub const OP_EXTRA: u8 = b'o';
/// `x`: RCON command.
pub const OP_RCON: u8 = b'x';

/// Size of the header, and of every request but `p` and `x`: 11 bytes.
pub const HEADER_LEN: usize = Header::OPCODE_RANGE.end;

/// The 11 bytes a reply copies from its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "little", magic = b"SAMP")]
pub struct Header {
    /// The server's IPv4 address as the client addressed it.
    pub address: [u8; 4],
    /// The server's port as the client addressed it.
    pub port: u16,
    /// Which request this is, see the `OP_*` constants.
    #[wire(range)]
    pub opcode: u8,
}

/// A request: the header, then the opcode's body.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Request<'a> {
    /// Magic, address, port, opcode.
    pub header: Header,
    /// What follows the header for `p` and `x`; nothing for the others.
    #[wire(ctx = header.opcode)]
    pub body: RequestBody<'a>,
}

/// The part of a request after the header, chosen by the opcode.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", tag = u8, external)]
pub enum RequestBody<'a> {
    /// `i`.
    #[wire(tag = OP_INFO)]
    Info,
    /// `r`.
    #[wire(tag = OP_RULES)]
    Rules,
    /// `c`.
    #[wire(tag = OP_CLIENTS)]
    Clients,
    /// `d`.
    #[wire(tag = OP_PLAYERS)]
    Players,
    /// `p`: four bytes the server echoes.
    #[wire(tag = OP_PING)]
    Ping([u8; 4]),
    /// `o`.
    #[wire(tag = OP_EXTRA)]
    Extra,
    /// `x`: an RCON command and the password that allows it.
    #[wire(tag = OP_RCON)]
    Rcon {
        /// The server's RCON password.
        #[wire(str(prefix = u16))]
        password: Text<'a>,
        /// The console command.
        #[wire(str(prefix = u16))]
        command: Text<'a>,
    },
}

/// A reply: the request's header, then the opcode's body.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Reply<'a> {
    /// Copied from the request.
    pub header: Header,
    /// The answer, chosen by the opcode.
    #[wire(ctx = header.opcode)]
    pub body: ReplyBody<'a>,
}

/// The part of a reply after the header, chosen by the opcode.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", tag = u8, external)]
pub enum ReplyBody<'a> {
    /// `i`.
    #[wire(tag = OP_INFO)]
    Info(Info<'a>),
    /// `r`.
    #[wire(tag = OP_RULES)]
    Rules(#[wire(count(prefix = u16))] Vec<Rule<'a>>),
    /// `c`.
    #[wire(tag = OP_CLIENTS)]
    Clients(#[wire(count(prefix = u16))] Vec<Client<'a>>),
    /// `d`.
    #[wire(tag = OP_PLAYERS)]
    Players(#[wire(count(prefix = u16))] Vec<Player<'a>>),
    /// `p`: the request's four bytes.
    #[wire(tag = OP_PING)]
    Ping([u8; 4]),
    /// `o`.
    #[wire(tag = OP_EXTRA)]
    Extra(Extra<'a>),
    /// `x`: one console line.
    #[wire(tag = OP_RCON)]
    Rcon(#[wire(str(prefix = u16))] Text<'a>),
}

/// The `i` reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Info<'a> {
    /// Whether joining needs a password.
    pub password: bool,
    /// Players online.
    pub players: u16,
    /// Player slots (open.mp subtracts bots).
    pub max_players: u16,
    /// The server's name (open.mp cuts it to 63 bytes).
    #[wire(str(prefix = u32))]
    pub hostname: Text<'a>,
    /// The game mode (open.mp cuts it to 39 bytes).
    #[wire(str(prefix = u32))]
    pub gamemode: Text<'a>,
    /// The language; the map name before SA:MP 0.3.7.
    #[wire(str(prefix = u32))]
    pub language: Text<'a>,
}

/// A rule of the `r` reply; `version` holds the server version.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Rule<'a> {
    /// The rule's name.
    #[wire(str(prefix = u8))]
    pub name: Text<'a>,
    /// The rule's value.
    #[wire(str(prefix = u8))]
    pub value: Text<'a>,
}

/// A player of the `c` reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Client<'a> {
    /// The player's nickname.
    #[wire(str(prefix = u8))]
    pub name: Text<'a>,
    /// The player's score.
    pub score: i32,
}

/// A player of the `d` reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Player<'a> {
    /// The player's id, 0-255 (ids are sparse).
    pub id: u8,
    /// The player's nickname.
    #[wire(str(prefix = u8))]
    pub name: Text<'a>,
    /// The player's score.
    pub score: i32,
    /// The player's ping in milliseconds.
    pub ping: u32,
}

/// The open.mp `o` reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Extra<'a> {
    /// Discord invite link.
    #[wire(str(prefix = u32))]
    pub discord: Text<'a>,
    /// Banner image URL for light themes.
    #[wire(str(prefix = u32))]
    pub light_banner: Text<'a>,
    /// Banner image URL for dark themes.
    #[wire(str(prefix = u32))]
    pub dark_banner: Text<'a>,
    /// Logo image URL.
    #[wire(str(prefix = u32))]
    pub logo: Text<'a>,
}
