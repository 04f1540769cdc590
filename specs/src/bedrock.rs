//! Minecraft Bedrock Edition (and Geyser, Nukkit, PocketMine, Education Edition): RakNet's
//! unconnected ping and pong over UDP, port 19132 by default. Big endian.
//!
//! - [`UnconnectedPing`]: `01`, the client's time (u64), the RakNet offline magic
//!   ([`OfflineMagic`]), the client's GUID (u64).
//! - [`UnconnectedPong`]: `1C`, the time echoed, the server's GUID, the magic, then a u16
//!   length and the server string ([`ServerId`]):
//!   `edition;motd line 1;protocol;version;online;max;server id;motd line 2;game mode;game mode
//!   number;port v4;port v6;`.
//!
//! The server string is kept as the bytes sent ([`Text`]) and read by [`ServerId::parse`]:
//! strict about the first six fields (a reply without edition, MOTD, protocol, version and
//! player counts is no status), lenient about the rest, which older servers leave out and
//! some send as `-1`. Text is UTF-8; invalid bytes become U+FFFD.

use std::borrow::Cow;

use query_wire::{Text, TextEncoding, Wire};
use serde::Serialize;

/// The port Bedrock servers answer on unless configured otherwise.
pub const DEFAULT_PORT: u16 = 19132;

/// RakNet's "offline message" magic, in every unconnected packet.
pub const MAGIC: &[u8; 16] = b"\x00\xff\xff\x00\xfe\xfe\xfe\xfe\xfd\xfd\xfd\xfd\x12\x34\x56\x78";

/// The longest server string read or written. Real ones are 100 to 300 bytes; a pong must
/// stay one unfragmented datagram.
pub const MAX_SERVER_ID: usize = 1200;

/// The magic, as a field of the packets that carry it (checked on decode, written on encode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Wire, Serialize)]
#[wire(magic = MAGIC)]
pub struct OfflineMagic {}

/// The client's ping.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x01")]
pub struct UnconnectedPing {
    /// The client's clock, echoed in the pong (milliseconds, by convention).
    pub time: u64,
    /// [`MAGIC`].
    pub magic: OfflineMagic,
    /// The client's GUID.
    pub client_guid: u64,
}

/// The server's pong.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\x1c")]
pub struct UnconnectedPong<'a> {
    /// The ping's `time`, echoed.
    pub time: u64,
    /// The server's GUID.
    pub server_guid: u64,
    /// [`MAGIC`].
    pub magic: OfflineMagic,
    /// The server string; [`ServerId::parse`] reads it.
    #[wire(str(prefix = u16, max = MAX_SERVER_ID))]
    pub server_id: Text<'a>,
}

/// The fields of the server string, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ServerId<'a> {
    /// `MCPE` (Bedrock) or `MCEE` (Education Edition).
    pub edition: Cow<'a, str>,
    /// The first MOTD line, with `§` codes.
    pub motd: Cow<'a, str>,
    /// The network protocol version.
    pub protocol: i64,
    /// The version name, e.g. `1.19.21`.
    pub version: Cow<'a, str>,
    /// Players online.
    pub online: u32,
    /// Player slots.
    pub max: u32,
    /// The server's unique id (may be negative; kept as sent).
    pub server_unique_id: Option<Cow<'a, str>>,
    /// The second MOTD line (the world or level name on vanilla servers).
    pub motd2: Option<Cow<'a, str>>,
    /// `Survival`, `Creative`, `Adventure`...
    pub game_mode: Option<Cow<'a, str>>,
    /// The game mode as a number.
    pub game_mode_number: Option<i64>,
    /// The IPv4 port (`None` when absent or not a port).
    pub port_v4: Option<u16>,
    /// The IPv6 port (`None` when absent or not a port, as the `-1` some servers send).
    pub port_v6: Option<u16>,
}

/// Why a server string is no status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadServerId(pub &'static str);

impl std::fmt::Display for BadServerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bedrock server string: {}", self.0)
    }
}

impl std::error::Error for BadServerId {}

fn number<N: std::str::FromStr>(field: &str, what: &'static str) -> Result<N, BadServerId> {
    field.trim().parse().map_err(|_| BadServerId(what))
}

impl<'a> ServerId<'a> {
    /// Reads a server string (the text of [`UnconnectedPong::server_id`], decoded).
    pub fn parse(text: &'a str) -> Result<ServerId<'a>, BadServerId> {
        let mut fields = text.split(';');
        let mut required = |what| fields.next().ok_or(BadServerId(what));
        let edition = required("no edition")?;
        let motd = required("no MOTD")?;
        let protocol = required("no protocol version")?;
        let version = required("no version name")?;
        let online = required("no player count")?;
        let max = required("no player slots")?;
        let id = ServerId {
            edition: edition.into(),
            motd: motd.into(),
            protocol: number(protocol, "a protocol version that is not a number")?,
            version: version.into(),
            online: number(online, "a player count that is not a number")?,
            max: number(max, "player slots that are not a number")?,
            ..ServerId::default()
        };
        let mut optional = || fields.next().filter(|f| !f.is_empty()).map(Cow::Borrowed);
        let server_unique_id = optional();
        let motd2 = optional();
        let game_mode = optional();
        let game_mode_number = optional().and_then(|n| n.trim().parse().ok());
        let port_v4 = optional().and_then(|n| n.trim().parse().ok());
        let port_v6 = optional().and_then(|n| n.trim().parse().ok());
        Ok(ServerId {
            server_unique_id,
            motd2,
            game_mode,
            game_mode_number,
            port_v4,
            port_v6,
            ..id
        })
    }

    /// The server string, as a server sends it (every field, each followed by `;`).
    /// A `;` inside a text field would split it: it is replaced by `:`.
    pub fn to_text(&self) -> String {
        let clean = |s: &str| s.replace(';', ":");
        let text = |s: &Option<Cow<'_, str>>| s.as_deref().map(clean).unwrap_or_default();
        let num = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
        let port = |p: Option<u16>| p.map(|p| p.to_string()).unwrap_or_default();
        format!(
            "{};{};{};{};{};{};{};{};{};{};{};{};",
            clean(&self.edition),
            clean(&self.motd),
            self.protocol,
            clean(&self.version),
            self.online,
            self.max,
            text(&self.server_unique_id),
            text(&self.motd2),
            text(&self.game_mode),
            num(self.game_mode_number),
            port(self.port_v4),
            port(self.port_v6),
        )
    }
}

impl UnconnectedPong<'_> {
    /// The server string as text (UTF-8, invalid bytes as U+FFFD).
    pub fn server_text(&self) -> Cow<'_, str> {
        self.server_id.decode(TextEncoding::Utf8)
    }
}
