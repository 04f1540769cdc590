//! FiveM and RedM (CitizenFX servers, port 30120): `getinfo` over UDP in the layout of
//! [Quake 3](crate::quake3)'s, and the player list over HTTP on the same port.
//!
//! - Request: `FF FF FF FF getinfo <challenge>` (the Quake 3 [`Request`], shared); the
//!   server echoes the challenge as `\challenge\`.
//! - [`InfoResponse`]: `FF FF FF FF infoResponse\n` and one line of pairs ([`Info`]):
//!   `sv_maxclients`, `clients`, `challenge`, `gamename` (`CitizenFX`), `protocol`,
//!   `hostname`, `gametype`, `mapname`, `iv` (the server's build seed). Real servers leave
//!   out the newline after the pairs; the line is read to its newline or the end.
//! - Players: `GET /players.json` on the server's port answers a JSON array of
//!   [`PlayerEntry`] (`/info.json` and `/dynamic.json` beside it carry the settings).
//!
//! Text is UTF-8 ([`ENCODING`]): host names carry emoji and Quake-style colour codes (`^1`),
//! which [`strip_colours`](crate::quake3::strip_colours) removes.

use std::borrow::Cow;

use query_wire::kv::KvLine;
use query_wire::{Decode, KeyValues, Reader, Result, TextEncoding, Wire};
use serde::{Deserialize, Serialize};

pub use crate::quake3::{InfoHeader, Request, INFO_HEADER};

/// The text encoding of the servers.
pub const ENCODING: TextEncoding = TextEncoding::Utf8;

/// The `gamename` every CitizenFX server reports.
pub const GAME_NAME: &str = "CitizenFX";

/// The path of the player list.
pub const PLAYERS_PATH: &str = "/players.json";

/// The pairs of a FiveM `infoResponse`; keys not declared here are kept in
/// [`rules`](Info::rules), in order.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "utf8")]
pub struct Info<'a> {
    /// `challenge`, the request's challenge echoed.
    pub challenge: Option<Cow<'a, str>>,
    /// `hostname`, with colour codes.
    pub hostname: Option<Cow<'a, str>>,
    /// `mapname`.
    #[kv(key = "mapname")]
    pub map: Option<Cow<'a, str>>,
    /// `gametype`.
    #[kv(key = "gametype")]
    pub game_type: Option<Cow<'a, str>>,
    /// `gamename`: `CitizenFX`.
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// `clients`, the players connected.
    pub clients: Option<u32>,
    /// `sv_maxclients`, the slots.
    #[kv(key = "sv_maxclients")]
    pub max_clients: Option<u32>,
    /// `protocol`, the server's network protocol (4).
    pub protocol: Option<u32>,
    /// `iv`, a number the server derives its build from.
    pub iv: Option<Cow<'a, str>>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// The settings line, in the encoding given as context.
pub type InfoLine<'a> = KvLine<Info<'a>>;

/// A whole `infoResponse` datagram: the header and the pair line (whose newline real servers
/// leave out).
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
#[wire(ctx(encoding: TextEncoding))]
pub struct InfoResponse<'a> {
    /// `FF FF FF FF infoResponse\n`.
    #[serde(skip)]
    pub header: InfoHeader,
    /// The pair line.
    #[wire(ctx = encoding)]
    pub info: InfoLine<'a>,
}

impl<'a> InfoResponse<'a> {
    /// Decodes one datagram; nothing may follow the pair line.
    pub fn decode(datagram: &'a [u8], encoding: TextEncoding) -> Result<Self> {
        Self::decode_exact(&mut Reader::new(datagram), encoding)
    }
}

/// One player of `/players.json`. Lenient: fields a server leaves out are defaults, fields
/// it adds are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct PlayerEntry {
    /// The server's id for the player (its net id).
    pub id: u32,
    /// The player's name.
    pub name: String,
    /// The ping in milliseconds.
    pub ping: u32,
    /// The player's address as the server sees it (`127.0.0.1:…`, or `127.0.0.1` for
    /// servers that hide them).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// Account identifiers (`steam:…`, `license:…`, `discord:…`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<String>,
}

/// `/players.json`: the players, as the server lists them.
pub type PlayerList = Vec<PlayerEntry>;

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Encode;

    #[test]
    fn a_real_layout_reads_its_keys_and_re_encodes() {
        let bytes = b"\xff\xff\xff\xffinfoResponse\n\\sv_maxclients\\32\\clients\\4\\challenge\\xyz\\gamename\\CitizenFX\\protocol\\4\\hostname\\^1Ro\xc3\xa9 RP \xf0\x9f\x9a\x93\\gametype\\Freeroam\\mapname\\fivem-map-skater\\iv\\-1533219218";
        let reply = InfoResponse::decode(bytes, ENCODING).unwrap();
        let info = &reply.info.0;
        assert_eq!(info.max_clients, Some(32));
        assert_eq!(info.clients, Some(4));
        assert_eq!(info.challenge.as_deref(), Some("xyz"));
        assert_eq!(info.hostname.as_deref(), Some("^1Roé RP 🚓"));
        assert_eq!(info.iv.as_deref(), Some("-1533219218"));
        assert!(info.rules.is_empty());
        // Written back (with the newline a real server leaves out), it reads the same.
        let again = reply.to_vec_with(ENCODING).unwrap();
        assert_eq!(InfoResponse::decode(&again, ENCODING).unwrap(), reply);
    }
}
