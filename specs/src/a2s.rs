//! Valve A2S (Source and GoldSrc engines, and most games listed on Steam), little-endian.
//!
//! A datagram starts with an i32: `-1` ([`SINGLE`]) for a whole packet, `-2` ([`SPLIT`]) for one
//! part of a split reply, which [`Reassembly`] joins. Strings end with a NUL. They are
//! [`Text`], the raw bytes: servers mostly send UTF-8, but not always, and a name is kept as
//! sent rather than refused.
//!
//! - Requests ([`Request`]): INFO carries the payload `Source Engine Query` and, once the server
//!   asked for one, the challenge after it; PLAYER and RULES carry a challenge, `-1` at first.
//! - A server that wants a challenge answers [`Reply::Challenge`]; the client sends the same
//!   request again with it.
//! - [`Info`] is `S2A_INFO`: The Ship's block is present only for app id [`THE_SHIP`], and the
//!   Extra Data Flag block only when bytes are left after the version (older servers stop
//!   there). Unknown flag bits are ignored: their data, if any, would follow the known fields.
//! - [`InfoDetailed`] is GoldSrc's obsolete `S2A_INFO_DETAILED`, with its mod block.
//! - [`PlayerList`] is `S2A_PLAYER`. Its count is kept as sent and not checked against the
//!   rows: it is a u8 that wraps above 255 players, and some games (Rust, ARK) send more or
//!   fewer rows than it says, so every row sent is read. The Ship appends deaths and money per
//!   player after the list, which is read with the count ([`ShipPlayers`]).
//! - [`Rules`] is `S2A_RULES`: the count as sent, then every pair sent.
//!
//! Split replies come in three header forms, told apart by the bytes (see [`Reassembly`]):
//! Source ([`SourcePart`], with the maximum packet size), early Source ([`EarlySourcePart`],
//! without it; its compressed replies carry a [`Compression`] header in the first part) and
//! GoldSrc ([`GoldSrcPart`], part number and total packed in one byte).

use query_wire::{Padding, Text, Wire};
use serde::Serialize;

mod reassembly;

pub use reassembly::{
    Reassembly, SplitForm, MAX_DECOMPRESSED, MAX_DECOMPRESSIONS, MAX_PARTS, MAX_REPLY_IDS,
};

/// The i32 a whole packet starts with.
pub const SINGLE: i32 = -1;
/// The i32 each part of a split reply starts with.
pub const SPLIT: i32 = -2;
/// [`SINGLE`] as the bytes on the wire.
pub const SINGLE_BYTES: &[u8; 4] = b"\xff\xff\xff\xff";
/// [`SPLIT`] as the bytes on the wire.
pub const SPLIT_BYTES: &[u8; 4] = b"\xfe\xff\xff\xff";

/// The INFO request's payload.
pub const INFO_PAYLOAD: &str = "Source Engine Query";
/// The challenge a PLAYER or RULES request carries before the server issued one.
pub const NO_CHALLENGE: i32 = -1;

/// `T`: INFO request.
pub const KIND_INFO_REQUEST: u8 = 0x54;
/// `U`: PLAYER request.
pub const KIND_PLAYER_REQUEST: u8 = 0x55;
/// `V`: RULES request.
pub const KIND_RULES_REQUEST: u8 = 0x56;
/// `A`: the server's challenge.
pub const KIND_CHALLENGE: u8 = 0x41;
/// `I`: INFO reply.
pub const KIND_INFO: u8 = 0x49;
/// `m`: GoldSrc's detailed INFO reply.
pub const KIND_INFO_DETAILED: u8 = 0x6d;
/// `D`: PLAYER reply.
pub const KIND_PLAYERS: u8 = 0x44;
/// `E`: RULES reply.
pub const KIND_RULES: u8 = 0x45;

/// The Ship's app id, whose INFO and PLAYER replies carry extra fields.
pub const THE_SHIP: u16 = 2400;

/// Extra Data Flag bit: the game port follows.
pub const EDF_PORT: u8 = 0x80;
/// Extra Data Flag bit: the server's SteamID follows.
pub const EDF_STEAM_ID: u8 = 0x10;
/// Extra Data Flag bit: the SourceTV port and name follow.
pub const EDF_SPECTATOR: u8 = 0x40;
/// Extra Data Flag bit: the keywords follow.
pub const EDF_KEYWORDS: u8 = 0x20;
/// Extra Data Flag bit: the 64-bit game id follows.
pub const EDF_GAME_ID: u8 = 0x01;

/// The top bit of a split reply's id: its payload was bzip2-compressed before it was cut.
pub const COMPRESSED_ID: u32 = 0x8000_0000;

/// Every request a client sends.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xff\xff\xff\xff", tag = u8)]
pub enum Request<'a> {
    /// `T`: server information.
    #[wire(tag = 0x54)]
    Info(InfoRequest<'a>),
    /// `U`: the players.
    #[wire(tag = 0x55)]
    Players(Challenge),
    /// `V`: the rules.
    #[wire(tag = 0x56)]
    Rules(Challenge),
}

/// The body of an INFO request.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct InfoRequest<'a> {
    /// [`INFO_PAYLOAD`].
    #[wire(str(nul))]
    pub payload: &'a str,
    /// The challenge, once the server asked for one (servers since December 2020 may).
    #[wire(trailing)]
    pub challenge: Option<i32>,
}

/// A challenge: the server's in [`Reply::Challenge`], the client's proof in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Challenge {
    /// [`NO_CHALLENGE`] in a first PLAYER or RULES request.
    pub challenge: i32,
}

/// A whole reply: one datagram, or the joined payload of a split one. Decoding a PLAYER reply
/// needs the server's app id (from its INFO reply; 0 when unknown), since The Ship's differs.
// Decoded once per reply; boxing the large variant would allocate on every decode.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xff\xff\xff\xff", tag = u8, ctx(app_id: u16))]
pub enum Reply<'a> {
    /// `A`: send the request again with this challenge.
    #[wire(tag = 0x41)]
    Challenge(Challenge),
    /// `I`: `S2A_INFO`.
    #[wire(tag = 0x49)]
    Info(Info<'a>),
    /// `m`: GoldSrc's `S2A_INFO_DETAILED`.
    #[wire(tag = 0x6d)]
    InfoDetailed(InfoDetailed<'a>),
    /// `D`: `S2A_PLAYER`.
    #[wire(tag = 0x44)]
    Players(#[wire(ctx = u8::from(app_id == THE_SHIP))] PlayerList<'a>),
    /// `E`: `S2A_RULES`.
    #[wire(tag = 0x45)]
    Rules(Rules<'a>),
}

/// `S2A_INFO`.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Info<'a> {
    /// The network protocol version.
    pub protocol: u8,
    /// The server's name.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The current map.
    #[wire(str(nul))]
    pub map: Text<'a>,
    /// The game's folder (`cstrike`, `tf`).
    #[wire(str(nul))]
    pub folder: Text<'a>,
    /// The game's name.
    #[wire(str(nul))]
    pub game: Text<'a>,
    /// The Steam app id (0 on many games; [`ExtraData::game_id`] is then the full id).
    pub app_id: u16,
    /// Players on the server, bots included.
    pub players: u8,
    /// Player slots.
    pub max_players: u8,
    /// Bots among the players.
    pub bots: u8,
    /// `d` dedicated, `l` listen (non-dedicated), `p` SourceTV proxy.
    pub server_type: u8,
    /// `l` Linux, `w` Windows, `m` or `o` macOS.
    pub environment: u8,
    /// 1 when a password is needed to join.
    pub visibility: u8,
    /// 1 when the server is VAC-secured.
    pub vac: u8,
    /// Only for app id [`THE_SHIP`].
    #[wire(when = *app_id == THE_SHIP)]
    pub the_ship: Option<TheShip>,
    /// The game's version.
    #[wire(str(nul))]
    pub version: Text<'a>,
    /// The Extra Data Flag and its fields, when the server sends them.
    #[wire(trailing)]
    pub extra: Option<ExtraData<'a>>,
}

impl Info<'_> {
    /// Player slots: [`Info::max_players`], unless the keywords carry `mp<N>`, as Rust servers
    /// write it because their slots go past the u8's 255.
    pub fn slots(&self) -> u32 {
        self.keyword_number("mp")
            .unwrap_or(u32::from(self.max_players))
    }

    /// Players on the server: [`Info::players`], unless the keywords carry `cp<N>` (Rust).
    pub fn player_count(&self) -> u32 {
        self.keyword_number("cp").unwrap_or(u32::from(self.players))
    }

    /// The number after `prefix` in the comma-separated keywords, as in `mp575`.
    fn keyword_number(&self, prefix: &str) -> Option<u32> {
        let keywords = self.extra.as_ref()?.keywords.as_ref()?;
        keywords
            .0
            .split(|&b| b == b',')
            .filter_map(|word| word.strip_prefix(prefix.as_bytes()))
            .find_map(|digits| std::str::from_utf8(digits).ok()?.parse().ok())
    }
}

/// The Ship's INFO fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct TheShip {
    /// The game mode.
    pub mode: u8,
    /// Witnesses needed to arrest a player.
    pub witnesses: u8,
    /// Seconds before a player is arrested while witnessed.
    pub duration: u8,
}

/// The Extra Data Flag and the fields its bits announce, in wire order.
///
/// The flag byte is written from the fields present, so a reply cannot announce a field it
/// does not carry. Bits no field is known for (`0x02`, `0x04`, `0x08`) are lenient: kept in
/// [`flags`](Self::flags) as the server sent them and otherwise ignored, since no server is
/// known to send data for them; any bytes one did add would be left after the block, where
/// the INFO reply's decode refuses them. They are not written back.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct ExtraData<'a> {
    /// The `EDF_*` bits as received; on encode, computed from the fields below.
    #[wire(flags)]
    pub flags: u8,
    /// [`EDF_PORT`]: the game port.
    #[wire(flag(flags, EDF_PORT))]
    pub port: Option<u16>,
    /// [`EDF_STEAM_ID`]: the server's SteamID.
    #[wire(flag(flags, EDF_STEAM_ID))]
    pub steam_id: Option<u64>,
    /// [`EDF_SPECTATOR`]: the SourceTV port and name.
    #[wire(flag(flags, EDF_SPECTATOR))]
    pub spectator: Option<Spectator<'a>>,
    /// [`EDF_KEYWORDS`]: tags describing the server.
    #[wire(flag(flags, EDF_KEYWORDS), str(nul))]
    pub keywords: Option<Text<'a>>,
    /// [`EDF_GAME_ID`]: the 64-bit game id, whose low 24 bits are the app id.
    #[wire(flag(flags, EDF_GAME_ID))]
    pub game_id: Option<u64>,
}

/// The SourceTV relay of a server.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Spectator<'a> {
    /// Its port.
    pub port: u16,
    /// Its name.
    #[wire(str(nul))]
    pub name: Text<'a>,
}

/// GoldSrc's `S2A_INFO_DETAILED`.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct InfoDetailed<'a> {
    /// The server's address and port, as it sees them.
    #[wire(str(nul))]
    pub address: Text<'a>,
    /// The server's name.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// The current map.
    #[wire(str(nul))]
    pub map: Text<'a>,
    /// The game's folder.
    #[wire(str(nul))]
    pub folder: Text<'a>,
    /// The game's name.
    #[wire(str(nul))]
    pub game: Text<'a>,
    /// Players on the server.
    pub players: u8,
    /// Player slots.
    pub max_players: u8,
    /// The network protocol version.
    pub protocol: u8,
    /// `D` dedicated, `L` listen, `P` HLTV proxy.
    pub server_type: u8,
    /// `L` Linux, `W` Windows.
    pub environment: u8,
    /// 1 when a password is needed to join.
    pub visibility: u8,
    /// 1 when the game is a mod.
    pub is_mod: u8,
    /// Only for a mod.
    #[wire(when = *is_mod == 1)]
    pub mod_info: Option<ModInfo<'a>>,
    /// 1 when the server is VAC-secured.
    pub vac: u8,
    /// Bots among the players.
    pub bots: u8,
}

/// The mod block of [`InfoDetailed`].
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct ModInfo<'a> {
    /// The mod's web site.
    #[wire(str(nul))]
    pub link: Text<'a>,
    /// Where to download it.
    #[wire(str(nul))]
    pub download_link: Text<'a>,
    /// A NUL byte.
    pub reserved: Padding<1>,
    /// The mod's version.
    pub version: i32,
    /// Its size in bytes.
    pub size: i32,
    /// 0 single and multiplayer, 1 multiplayer only.
    pub kind: u8,
    /// 0 with the Half-Life DLL, 1 with its own.
    pub dll: u8,
}

/// `S2A_PLAYER`, chosen by whether the server is The Ship (`1`) or not (`0`).
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little", tag = u8, external)]
pub enum PlayerList<'a> {
    /// Every other game.
    #[wire(tag = 0)]
    Standard(Players<'a>),
    /// The Ship.
    #[wire(tag = 1)]
    TheShip(ShipPlayers<'a>),
}

/// The players of any game but The Ship.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Players<'a> {
    /// The count as sent, which may disagree with the rows (see the module docs).
    pub count: u8,
    /// Every row sent.
    #[wire(until_end)]
    pub players: Vec<Player<'a>>,
}

/// One row of a player list.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Player<'a> {
    /// A slot index; most servers send 0 for everyone.
    pub index: u8,
    /// The name; empty for players still connecting.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// Score or kills.
    pub score: i32,
    /// Seconds connected.
    pub duration: f32,
}

/// The Ship's players: `count` rows, then `count` rows of deaths and money.
#[derive(Debug, Clone, PartialEq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct ShipPlayers<'a> {
    /// The number of rows.
    pub count: u8,
    /// The rows.
    #[wire(count = *count)]
    pub players: Vec<Player<'a>>,
    /// The same players' deaths and money, in the same order.
    #[wire(count = *count)]
    pub stats: Vec<ShipStats>,
}

/// The Ship's trailer for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct ShipStats {
    /// Deaths.
    pub deaths: i32,
    /// Money.
    pub money: i32,
}

/// `S2A_RULES`.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Rules<'a> {
    /// The count as sent.
    pub count: u16,
    /// Every pair sent.
    #[wire(until_end)]
    pub rules: Vec<Rule<'a>>,
}

/// The start of a whole `S2A_PLAYER` packet: `FF FF FF FF`, [`KIND_PLAYERS`], the count.
/// What a client salvages rows after when the reply was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xff\xff\xff\xff\x44")]
pub struct PlayersHead {
    /// The count as sent.
    pub count: u8,
}

/// The start of a whole `S2A_RULES` packet: `FF FF FF FF`, [`KIND_RULES`], the count. What a
/// client salvages pairs after when the reply was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xff\xff\xff\xff\x45")]
pub struct RulesHead {
    /// The count as sent.
    pub count: u16,
}

/// One server variable.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Rule<'a> {
    /// The variable's name.
    #[wire(str(nul))]
    pub name: Text<'a>,
    /// Its value.
    #[wire(str(nul))]
    pub value: Text<'a>,
}

/// One part of a split reply, Source form.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xfe\xff\xff\xff")]
pub struct SourcePart<'a> {
    /// The reply's id, the same in every part; [`COMPRESSED_ID`] set when compressed. Every
    /// split form keeps it in these bytes.
    #[wire(range)]
    pub id: u32,
    /// How many parts the reply has.
    pub total: u8,
    /// This part's number, from 0.
    pub number: u8,
    /// The largest part the server sends (1248 or 1400 in practice).
    pub max_size: u16,
    /// The part's share of the payload.
    #[wire(bytes(rest))]
    pub payload: &'a [u8],
}

/// One part of a split reply, early Source form (no maximum size); the first part of a
/// compressed reply starts its payload with a [`Compression`] header.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xfe\xff\xff\xff")]
pub struct EarlySourcePart<'a> {
    /// The reply's id; [`COMPRESSED_ID`] set when compressed.
    pub id: u32,
    /// How many parts the reply has.
    pub total: u8,
    /// This part's number, from 0.
    pub number: u8,
    /// The part's share of the payload.
    #[wire(bytes(rest))]
    pub payload: &'a [u8],
}

/// What the first part of a compressed reply says about the joined payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little")]
pub struct Compression {
    /// The payload's size once decompressed.
    pub size: u32,
    /// The CRC32 of the decompressed payload.
    pub crc32: u32,
}

/// One part of a split reply, GoldSrc form.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "little", magic = b"\xfe\xff\xff\xff")]
pub struct GoldSrcPart<'a> {
    /// The reply's id.
    pub id: u32,
    /// This part's number, from 0: the upper 4 bits of the part byte.
    #[wire(bit_width = 4)]
    pub number: u8,
    /// How many parts the reply has: the lower 4 bits.
    #[wire(bit_width = 4)]
    pub total: u8,
    /// The part's share of the payload.
    #[wire(bytes(rest))]
    pub payload: &'a [u8],
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Encode;

    #[test]
    fn reply_heads_start_like_whole_packets_of_their_kind() {
        let players = PlayersHead { count: 3 }.to_vec().unwrap();
        assert_eq!(players[..4], SINGLE_BYTES[..]);
        assert_eq!(players[4..], [KIND_PLAYERS, 3]);
        let rules = RulesHead { count: 0x0102 }.to_vec().unwrap();
        assert_eq!(rules[..4], SINGLE_BYTES[..]);
        assert_eq!(rules[4..], [KIND_RULES, 2, 1]);
    }

    #[test]
    fn split_parts_keep_the_reply_id_in_the_same_bytes() {
        assert_eq!(SourcePart::ID_RANGE, 4..8);
        let part = GoldSrcPart {
            id: 9,
            number: 2,
            total: 5,
            payload: b"",
        };
        assert_eq!(
            part.to_vec().unwrap()[SourcePart::ID_RANGE],
            9u32.to_le_bytes()
        );
        assert_eq!(part.to_vec().unwrap()[8], 0x25);
    }
}
