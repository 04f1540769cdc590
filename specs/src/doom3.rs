//! The Doom 3 engine (Doom 3, Quake 4, Prey, Enemy Territory: Quake Wars): a binary reply
//! behind two `FF` bytes over UDP, little-endian.
//!
//! - Request ([`GetInfo`]): `FF FF getInfo\0` and a challenge (4 bytes; clients send more,
//!   gamedig `PiNGPoNg\0`), which the server echoes (its first 4 bytes).
//! - [`InfoResponse`] (Doom 3, Quake 4, Prey): `FF FF infoResponse\0`, the challenge, the
//!   protocol version (`major << 16 | minor`: Doom 3 1.41, Quake 4 2.85), NUL-separated
//!   `key\0value\0` pairs ended by an empty pair ([`Info`]), then players until the id 32, then
//!   the OS mask and, on Quake 4, bytes it adds ([`InfoResponse::tail`]).
//! - [`EtqwInfoResponse`] (ETQW's answer to `getInfo`): `FF FF infoResponse\0`, the
//!   challenge, `FF FF FF FF` ([`ETQW_MARKER`]), the version, the size of the rest, then
//!   [`EtqwBody`]: the same pairs, players in ETQW's layout, the OS mask, ranked, time left,
//!   game state, server type and what that type adds, and per-player statistics
//!   ([`EtqwStats`]) until the id 32 when the server sends them. The form qstat (`-etqws`),
//!   gamedig and opengsq read; told from Doom 3's by the marker, where Doom 3's version goes.
//! - [`InfoExResponse`] (ETQW's answer to `getInfoEx`, as captured): `FF FF infoExResponse\0`,
//!   a task id, the challenge, the version, the size of the rest, then the same [`EtqwBody`].
//!
//! The player layout is chosen by the game ([`Layout`]): Doom 3 and Prey `id ping rate name`,
//! Quake 4 adds a clan tag, ETQW `id ping name clan-position clan bot`. Real servers say which
//! only through the protocol version's major number (1 Doom 3 and Prey, 2 Quake 4) and ETQW
//! through its own forms, so [`Layout::of_version`] decides from the version. ETQW's layout is
//! that of protocol 10.20 and later (1.5); older ETQW servers (10.15 to 10.19 with a rate,
//! before 10.17 without a clan tag, the 13.x betas with a one-bit bot flag) are not read.
//!
//! Text is Latin-1 ([`ENCODING`]) with Quake 3 style colour codes (`^1`), which
//! [`strip_colours`](crate::quake3::strip_colours) removes.

use std::borrow::Cow;

use query_wire::kv::KvBlock;
use query_wire::{Decode, KeyValues, Reader, Result, Text, TextEncoding, Wire};
use serde::Serialize;

/// The text encoding of the servers.
pub const ENCODING: TextEncoding = TextEncoding::Latin1;

/// The bytes a request starts with.
pub const GETINFO_MAGIC: &[u8] = b"\xff\xffgetInfo\0";
/// The header of a Doom 3, Quake 4 or Prey reply.
pub const INFO_HEADER: &[u8] = b"\xff\xffinfoResponse\0";
/// The header of an ETQW reply.
pub const INFO_EX_HEADER: &[u8] = b"\xff\xffinfoExResponse\0";

/// What follows the challenge in ETQW's `infoResponse`, where Doom 3's and Quake 4's replies
/// carry their version (which is never `0xFFFFFFFF`).
pub const ETQW_MARKER: &[u8; 4] = b"\xff\xff\xff\xff";

/// The id that ends a player list: no player has it (32 slots, 0 to 31).
pub const END_OF_PLAYERS: u8 = 32;

/// `FF FF getInfo\0` and the challenge bytes.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = GETINFO_MAGIC)]
pub struct GetInfo<'a> {
    /// What the client sent after the command; its first 4 bytes are the challenge echoed.
    #[wire(bytes(rest, max = 64))]
    pub challenge: &'a [u8],
}

/// The server's settings, NUL-separated pairs ended by an empty pair. The fields are the keys
/// clients read; every other key is a rule, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "nul", encoding = "latin1")]
pub struct Info<'a> {
    /// `si_name`, with colour codes.
    #[kv(key = "si_name")]
    pub name: Option<Cow<'a, str>>,
    /// `si_map` (`game/mp/d3dm1`, `maps/ark`).
    #[kv(key = "si_map")]
    pub map: Option<Cow<'a, str>>,
    /// `si_gameType` (`Tourney`, `DM`); ETQW has `si_rules` instead, kept as a rule.
    #[kv(key = "si_gameType")]
    pub game_type: Option<Cow<'a, str>>,
    /// `si_version`.
    #[kv(key = "si_version")]
    pub version: Option<Cow<'a, str>>,
    /// `si_maxPlayers`, the slots.
    #[kv(key = "si_maxPlayers")]
    pub max_players: Option<u32>,
    /// `si_usepass` (Doom 3, Quake 4) or `si_needPass` (ETQW): `1` when a password is needed.
    #[kv(key = "si_usepass", alias = "si_needPass")]
    pub password: Option<bool>,
    /// `gamename` (`baseDOOM-1`, `q4mp`, `baseETQW-1`).
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// The empty value of the empty pair that ends the settings (the empty key is read by the
/// pairs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = b"\0")]
pub struct EmptyValue {}

/// Which player layout a reply carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Doom 3 and Prey: `id ping rate name`.
    Doom3,
    /// Quake 4: `id ping rate name clan`.
    Quake4,
    /// ETQW: `id ping name clan-position clan bot`.
    Etqw,
}

impl Layout {
    /// The layout of an `infoResponse` of protocol `version`: Quake 4's major number is 2,
    /// Doom 3's and Prey's 1 (and any other is read as Doom 3's).
    pub fn of_version(version: u32) -> Layout {
        match version >> 16 {
            2 => Layout::Quake4,
            _ => Layout::Doom3,
        }
    }
}

/// One player, in the layout given as context.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", ctx(layout: Layout))]
pub struct Player<'a> {
    /// The slot, 0 to 31.
    pub id: u8,
    /// The ping in milliseconds.
    pub ping: u16,
    /// The rate (Doom 3, Quake 4, Prey).
    #[wire(when = layout != Layout::Etqw)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<u32>,
    /// The name, with colour codes.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// Where the clan tag goes, before or after the name (ETQW).
    #[wire(when = layout == Layout::Etqw)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clan_position: Option<u8>,
    /// The clan tag (Quake 4, ETQW).
    #[wire(when = layout != Layout::Doom3, str(nul))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clan: Option<Text<'a>>,
    /// Whether the player is a bot (ETQW).
    #[wire(when = layout == Layout::Etqw)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<bool>,
}

/// A whole Doom 3, Quake 4 or Prey reply.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = INFO_HEADER)]
pub struct InfoResponse<'a> {
    /// The request's challenge echoed.
    pub challenge: [u8; 4],
    /// The protocol version, `major << 16 | minor`.
    pub version: u32,
    /// The settings.
    pub info: KvBlock<Info<'a>>,
    /// The empty value after the empty key.
    #[serde(skip)]
    pub end_of_info: EmptyValue,
    /// The players, until the id 32.
    #[wire(until = END_OF_PLAYERS, ctx = Layout::of_version(*version), max_count = 32)]
    pub players: Vec<Player<'a>>,
    /// The operating systems the server runs on, a bit each.
    pub os_mask: u32,
    /// What a game adds after the mask (Quake 4: 5 bytes), as sent.
    #[wire(bytes(rest))]
    pub tail: &'a [u8],
}

/// [`ETQW_MARKER`], the 4 bytes between the challenge and the version of ETQW's
/// `infoResponse`. Strict: a reply without them is not in this form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = ETQW_MARKER)]
pub struct EtqwMarker {}

/// ETQW's answer to `getInfo`: Doom 3's header and challenge, then [`ETQW_MARKER`], the
/// version and the size of the rest, then ETQW's [`EtqwBody`].
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", magic = INFO_HEADER)]
pub struct EtqwInfoResponse<'a> {
    /// The request's challenge echoed.
    pub challenge: [u8; 4],
    /// `FF FF FF FF`.
    #[wire(range)]
    #[serde(skip)]
    pub marker: EtqwMarker,
    /// The protocol version, `major << 16 | minor` (10.21).
    pub version: u32,
    /// The size of everything after this field.
    #[wire(len(prefix = u32))]
    pub body: EtqwBody<'a>,
}

/// An ETQW player's statistics, after the server block.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct EtqwStats<'a> {
    /// The player's slot.
    pub id: u8,
    /// The experience points.
    pub xp: f32,
    /// The team (`gdf`, `strogg`).
    #[wire(str(nul))]
    pub team: Text<'a>,
    /// Kills.
    pub kills: u32,
    /// Deaths.
    pub deaths: u32,
}

/// What an ETQW server of each type adds to the server block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", tag = u8)]
pub enum ServerType {
    /// A game server, and how many clients are interested in joining.
    #[wire(tag = 0)]
    Regular {
        /// Clients waiting to join.
        interested_clients: u8,
    },
    /// An ETQW TV relay, its viewers and slots.
    #[wire(tag = 1)]
    Tv {
        /// Viewers connected.
        connected_clients: u32,
        /// Viewer slots.
        max_clients: u32,
    },
}

/// A whole ETQW reply.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", magic = INFO_EX_HEADER)]
pub struct InfoExResponse<'a> {
    /// The task id of the request.
    pub task_id: u32,
    /// The request's challenge echoed.
    pub challenge: [u8; 4],
    /// The protocol version, `major << 16 | minor` (10.21).
    pub version: u32,
    /// The size of everything after this field.
    #[wire(len(prefix = u32))]
    pub body: EtqwBody<'a>,
}

/// What an ETQW reply's size counts (both forms).
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct EtqwBody<'a> {
    /// The settings.
    pub info: KvBlock<Info<'a>>,
    /// The empty value after the empty key.
    #[serde(skip)]
    pub end_of_info: EmptyValue,
    /// The players, until the id 32.
    #[wire(until = END_OF_PLAYERS, ctx = Layout::Etqw, max_count = 32)]
    pub players: Vec<Player<'a>>,
    /// The operating systems the server runs on.
    pub os_mask: u32,
    /// Whether the server is ranked.
    pub ranked: bool,
    /// Milliseconds left in the map.
    pub time_left: u32,
    /// The game state (2: playing).
    pub game_state: u8,
    /// The server type and its fields.
    pub server_type: ServerType,
    /// Each player's statistics, until the id 32: every captured `infoExResponse` has them;
    /// an `infoResponse` may end before them (lenient: the clients that read that form stop
    /// at the server type).
    #[wire(trailing, until = END_OF_PLAYERS, max_count = 32)]
    pub stats: Option<Vec<EtqwStats<'a>>>,
}

/// A reply in any of the three forms, told by its header and what follows the challenge.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Reply<'a> {
    /// Doom 3, Quake 4, Prey.
    Info(InfoResponse<'a>),
    /// ETQW's `infoResponse`.
    EtqwInfo(EtqwInfoResponse<'a>),
    /// ETQW's `infoExResponse`.
    InfoEx(InfoExResponse<'a>),
}

impl<'a> Reply<'a> {
    /// Decodes one datagram: `infoExResponse` as ETQW's, an `infoResponse` with
    /// [`ETQW_MARKER`] where the others' version goes as ETQW's, anything else as Doom 3's
    /// `infoResponse`.
    pub fn decode(datagram: &'a [u8]) -> Result<Self> {
        let mut r = Reader::new(datagram);
        if datagram.starts_with(INFO_EX_HEADER) {
            InfoExResponse::decode_exact(&mut r, ()).map(Reply::InfoEx)
        } else if datagram.starts_with(INFO_HEADER)
            && datagram.get(EtqwInfoResponse::MARKER_RANGE) == Some(&ETQW_MARKER[..])
        {
            EtqwInfoResponse::decode_exact(&mut r, ()).map(Reply::EtqwInfo)
        } else {
            InfoResponse::decode_exact(&mut r, ()).map(Reply::Info)
        }
    }

    /// ETQW's part after the size, in either ETQW form.
    pub fn etqw(&self) -> Option<&EtqwBody<'a>> {
        match self {
            Reply::Info(_) => None,
            Reply::EtqwInfo(r) => Some(&r.body),
            Reply::InfoEx(r) => Some(&r.body),
        }
    }

    /// The settings.
    pub fn info(&self) -> &Info<'a> {
        match self {
            Reply::Info(r) => &r.info.0,
            Reply::EtqwInfo(r) => &r.body.info.0,
            Reply::InfoEx(r) => &r.body.info.0,
        }
    }

    /// The players.
    pub fn players(&self) -> &[Player<'a>] {
        match self {
            Reply::Info(r) => &r.players,
            Reply::EtqwInfo(r) => &r.body.players,
            Reply::InfoEx(r) => &r.body.players,
        }
    }

    /// The challenge echoed.
    pub fn challenge(&self) -> [u8; 4] {
        match self {
            Reply::Info(r) => r.challenge,
            Reply::EtqwInfo(r) => r.challenge,
            Reply::InfoEx(r) => r.challenge,
        }
    }

    /// The protocol version.
    pub fn version(&self) -> u32 {
        match self {
            Reply::Info(r) => r.version,
            Reply::EtqwInfo(r) => r.version,
            Reply::InfoEx(r) => r.version,
        }
    }
}
