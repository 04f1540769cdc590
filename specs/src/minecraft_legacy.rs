//! Minecraft Java Edition's legacy server list ping, for servers older than 1.7 (and answered
//! by modern vanilla servers too), over TCP.
//!
//! - Requests: Beta 1.8 sends `FE` alone; 1.4-1.5 `FE 01`; 1.6 `FE 01 FA` and a plugin
//!   message on channel `MC|PingHost` ([`PingHost`]) with its protocol version, the host name
//!   it connected to and the port.
//! - Reply ([`Kick`]): `FF`, a u16 big-endian count of UTF-16 code units, then the UTF-16BE
//!   text, which [`LegacyStatus::parse`] reads: `§1\0protocol\0version\0motd\0online\0max`
//!   from 1.4 on, `motd§online§max` before.
//!
//! Text is UTF-16 on the wire: the units are declared as a counted list of big-endian `u16`
//! and turned into a string (lone surrogates become U+FFFD) by [`Kick::text`].

use query_wire::Wire;
use serde::Serialize;

/// Beta 1.8's request: the one byte.
pub const PING_BETA: &[u8] = b"\xfe";
/// The 1.4-1.5 request.
pub const PING_1_4: &[u8] = b"\xfe\x01";
/// The first bytes of the 1.6 request, before its plugin message.
pub const PING_1_6_PREFIX: &[u8] = b"\xfe\x01\xfa";
/// The plugin channel of the 1.6 request.
pub const PING_HOST_CHANNEL: &str = "MC|PingHost";
/// The protocol version a 1.6.4 client sends in its request.
pub const PROTOCOL_1_6_4: u8 = 78;

/// The most UTF-16 units a reply may hold: a u16 count could say 65,535 (128 KiB); real
/// replies are a few hundred units, and a status line over 16 Ki units is no status.
pub const MAX_REPLY_UNITS: usize = 16 * 1024;

/// The 1.6 request: `FE 01 FA`, then a plugin message naming [`PING_HOST_CHANNEL`] whose
/// data says where the client connected.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = PING_1_6_PREFIX)]
pub struct PingHost {
    /// [`PING_HOST_CHANNEL`] as UTF-16 units.
    #[wire(count(prefix = u16), max_count = 64)]
    pub channel: Vec<u16>,
    /// The plugin message's data, after its u16 byte length.
    #[wire(len = u16)]
    pub data: PingHostData,
}

/// What a 1.6 client tells the server in [`PingHost`].
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big")]
pub struct PingHostData {
    /// The client's protocol version ([`PROTOCOL_1_6_4`] for 1.6.4).
    pub protocol: u8,
    /// The host name the client connected to, as UTF-16 units.
    #[wire(count(prefix = u16), max_count = 255)]
    pub host: Vec<u16>,
    /// The port it connected to (an `i32` on the wire).
    pub port: i32,
}

impl PingHost {
    /// The request a 1.6.4 client sends to `host:port`.
    pub fn new(host: &str, port: u16) -> Self {
        PingHost {
            channel: PING_HOST_CHANNEL.encode_utf16().collect(),
            data: PingHostData {
                protocol: PROTOCOL_1_6_4,
                host: host.encode_utf16().take(255).collect(),
                port: i32::from(port),
            },
        }
    }
}

/// The reply: a "kick" packet (`FF`) whose text is the status.
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\xff")]
pub struct Kick {
    /// The text as UTF-16 units; [`Kick::text`] decodes it.
    #[wire(count(prefix = u16), max_count = MAX_REPLY_UNITS)]
    pub units: Vec<u16>,
}

impl Kick {
    /// A reply holding `text`.
    pub fn new(text: &str) -> Self {
        Kick {
            units: text.encode_utf16().collect(),
        }
    }

    /// The text, with lone surrogates replaced by U+FFFD.
    pub fn text(&self) -> String {
        String::from_utf16_lossy(&self.units)
    }
}

/// The first three bytes of a [`Kick`]: what a stream reader needs to know the reply's size
/// before its text arrives ([`KickHeader::frame_len`]), and to refuse an oversized one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(endian = "big", magic = b"\xff")]
pub struct KickHeader {
    /// How many UTF-16 units follow.
    pub units: u16,
}

impl KickHeader {
    /// The bytes of the whole reply: this header and two per unit.
    pub fn frame_len(&self) -> usize {
        3 + 2 * usize::from(self.units)
    }
}

/// What a legacy reply says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LegacyStatus {
    /// The server's protocol version (1.4 and later; `None` before).
    pub protocol: Option<i32>,
    /// The version name (1.4 and later).
    pub version: Option<String>,
    /// The message of the day, with its `§` formatting codes.
    pub motd: String,
    /// Players online.
    pub online: u32,
    /// Player slots.
    pub max: u32,
}

/// Why a legacy reply's text is no status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLegacyStatus(pub &'static str);

impl std::fmt::Display for BadLegacyStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "legacy status text: {}", self.0)
    }
}

impl std::error::Error for BadLegacyStatus {}

impl LegacyStatus {
    /// Reads the text of a [`Kick`]: the 1.4 form when it starts with `§1\0`, else the Beta
    /// 1.8 form, whose MOTD is what precedes the last two `§`.
    ///
    /// Strict about the counts (they must be numbers: a kick for another reason, such as
    /// "Outdated server!", is no status); lenient about fields after the sixth, which later
    /// servers may add.
    pub fn parse(text: &str) -> Result<LegacyStatus, BadLegacyStatus> {
        let count = |field: &str| {
            field
                .trim()
                .parse::<u32>()
                .map_err(|_| BadLegacyStatus("a player count that is not a number"))
        };
        if let Some(rest) = text.strip_prefix("\u{a7}1\0") {
            let mut fields = rest.split('\0');
            let mut next = || fields.next().ok_or(BadLegacyStatus("fewer than 6 fields"));
            let protocol = next()?
                .trim()
                .parse::<i32>()
                .map_err(|_| BadLegacyStatus("a protocol version that is not a number"))?;
            let version = next()?.to_owned();
            let motd = next()?.to_owned();
            let online = count(next()?)?;
            let max = count(next()?)?;
            return Ok(LegacyStatus {
                protocol: Some(protocol),
                version: Some(version),
                motd,
                online,
                max,
            });
        }
        let mut fields = text.rsplitn(3, '\u{a7}');
        let (Some(max), Some(online), Some(motd)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(BadLegacyStatus("neither `§1` nor `motd§online§max`"));
        };
        Ok(LegacyStatus {
            protocol: None,
            version: None,
            motd: motd.to_owned(),
            online: count(online)?,
            max: count(max)?,
        })
    }

    /// The text a server of the request's era answers with: the 1.4 form when `modern`,
    /// else the Beta 1.8 form (whose MOTD cannot hold `§`: it is left out there).
    pub fn to_text(&self, modern: bool) -> String {
        if modern {
            format!(
                "\u{a7}1\0{}\0{}\0{}\0{}\0{}",
                self.protocol.unwrap_or(127),
                self.version.as_deref().unwrap_or(""),
                self.motd,
                self.online,
                self.max
            )
        } else {
            format!(
                "{}\u{a7}{}\u{a7}{}",
                self.motd.replace('\u{a7}', ""),
                self.online,
                self.max
            )
        }
    }
}
