//! The Doom 3 engine (Doom 3, Quake 4, Prey, Enemy Territory: Quake Wars, Wolfenstein
//! 2009): the `getInfo` client and the responder.
//!
//! # Client ([`client`], [`Doom3Reader`])
//!
//! Sends `FF FF getInfo\0` and a fresh random 4-byte challenge, and reads the one datagram
//! that answers it with the specs' [`Reply`]: `infoResponse` (Doom 3, Quake 4, Prey; the
//! player layout chosen by the protocol version), ETQW's `infoResponse` (`FF FF FF FF`, the
//! version and a size after the challenge), or ETQW's `infoExResponse`. A
//! [`SingleReplySession`]: the engine never splits a reply.
//!
//! - Strict: a reply that does not echo this query's challenge (a forged or stale one) is
//!   ignored; one that does not decode whole (garbage, a Quake 3 reply, a cut datagram) is
//!   malformed and never an answer; if nothing else comes, the query fails with its decode
//!   error.
//! - Mapping: `si_name` → name (colour codes removed; the raw text in `raw.hostname`),
//!   `si_map` → map, `si_gameType` (ETQW: `si_rules`) → game type, `si_version` → version,
//!   `si_maxPlayers` → max players, `si_usepass` / `si_needPass` → password; every pair is a
//!   rule, in order, as sent. Players: the slot as id, ping, name (colour codes removed, the
//!   raw one in `raw.players`); the rate, Quake 4's and ETQW's clan tag and ETQW's bot flag in
//!   `extra`; ETQW's statistics joined by slot: the team, the experience points as the score
//!   (ETQW's scoreboard ranks by them), kills and deaths in `extra`. The protocol version
//!   (`1.41`), the layout, the form (`infoResponse` or `infoExResponse`), the OS mask and
//!   ETQW's server fields are in `raw`.
//! - Text is decoded in [`Options::encoding`], Latin-1 by default.
//!
//! # Responder ([`Doom3Responder`])
//!
//! Answers `getInfo` from the server state in one game's layout; see [`responder`].

pub mod responder;

pub use query_specs::doom3::Layout;
pub use responder::{Doom3Config, Doom3Responder};

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::doom3::{
    EtqwBody, EtqwStats, Player as WirePlayer, Reply, ServerType, ENCODING, GETINFO_MAGIC,
    INFO_EX_HEADER, INFO_HEADER,
};
use query_specs::quake3::strip_colours;
use query_wire::kv::read_nul_pairs;
use query_wire::{Reader, TextEncoding};
use serde_json::{json, Value};

use super::single::{ReadReply, Reply as SingleReply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The encoding text is read in unless another is chosen: [`query_specs::doom3::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = ENCODING;

/// A `getInfo` query of `target` with a fresh random challenge.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    let challenge: [u8; 4] = rand::random();
    let request = request(challenge);
    let reader = Doom3Reader {
        challenge,
        encoding: options.encoding_or(DEFAULT_ENCODING),
    };
    Ok(Box::new(SingleReplySession::new(
        target,
        options,
        "getInfo request",
        &request,
        reader,
    )))
}

/// The `getInfo` request carrying `challenge`.
pub fn request(challenge: [u8; 4]) -> Vec<u8> {
    [GETINFO_MAGIC, &challenge[..]].concat()
}

/// Reads the reply that echoes its challenge; see the [module](self) docs.
#[derive(Debug, Clone, Copy)]
pub struct Doom3Reader {
    /// The challenge sent, which the answer must echo.
    pub challenge: [u8; 4],
    /// The encoding of the server's text.
    pub encoding: TextEncoding,
}

impl ReadReply for Doom3Reader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> SingleReply {
        SingleReply::from_decoded(Reply::decode(datagram), |reply| {
            (reply.challenge() == self.challenge)
                .then(|| status(target, datagram, &reply, self.encoding).map_err(QueryError::from))
        })
    }
}

/// Where a reply's pairs start: after the header, (ETQW's task id,) the challenge, the
/// version (and ETQW's size).
fn pairs_offset(reply: &Reply<'_>) -> usize {
    match reply {
        Reply::Info(_) => INFO_HEADER.len() + 8,
        Reply::EtqwInfo(_) => INFO_HEADER.len() + 16,
        Reply::InfoEx(_) => INFO_EX_HEADER.len() + 16,
    }
}

/// The layout of a decoded reply.
fn layout(reply: &Reply<'_>) -> Layout {
    match reply {
        Reply::Info(r) => Layout::of_version(r.version),
        Reply::EtqwInfo(_) | Reply::InfoEx(_) => Layout::Etqw,
    }
}

/// The status one decoded reply gives (ping 0: the session sets it), its text decoded in
/// `encoding`.
pub fn status(
    target: SocketAddr,
    datagram: &[u8],
    reply: &Reply<'_>,
    encoding: TextEncoding,
) -> Result<ServerStatus, query_wire::Error> {
    // Every pair is a rule, in order and as sent; a key sent twice keeps its first place and
    // its last value.
    let mut r = Reader::new(datagram);
    r.skip(pairs_offset(reply))?;
    let mut rules = IndexMap::new();
    for pair in read_nul_pairs(&mut r)? {
        rules.insert(
            encoding.decode_lossy(pair.key).into_owned(),
            encoding.decode_lossy(pair.value).into_owned(),
        );
    }
    let text = |key: &str| {
        rules
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let info = reply.info();
    let raw_hostname = text("si_name").unwrap_or_default();
    let layout = layout(reply);
    let stats: &[EtqwStats<'_>] = reply
        .etqw()
        .and_then(|body| body.stats.as_deref())
        .unwrap_or_default();

    let mut players = Vec::with_capacity(reply.players().len());
    let mut raw_players = Vec::with_capacity(reply.players().len());
    for p in reply.players() {
        let (player, raw) = player(p, stats, encoding);
        players.push(player);
        raw_players.push(raw);
    }

    let version = reply.version();
    let mut raw = json!({
        "hostname": raw_hostname,
        "version": format!("{}.{}", version >> 16, version & 0xffff),
        "layout": layout,
        "form": if matches!(reply, Reply::InfoEx(_)) { "infoExResponse" } else { "infoResponse" },
        "players": Value::Array(raw_players),
        "encoding": encoding.name(),
    });
    match reply {
        Reply::Info(r) => {
            raw["os_mask"] = json!(r.os_mask);
            if !r.tail.is_empty() {
                raw["tail"] = json!(hex(r.tail));
            }
        }
        Reply::EtqwInfo(r) => etqw_raw(&mut raw, &r.body),
        Reply::InfoEx(r) => {
            raw["task_id"] = json!(r.task_id);
            etqw_raw(&mut raw, &r.body);
        }
    }

    Ok(ServerStatus {
        protocol: Protocol::Doom3,
        address: target,
        name: strip_colours(&raw_hostname).into_owned(),
        map: text("si_map"),
        game_type: text("si_gameType").or_else(|| text("si_rules")),
        version: text("si_version"),
        num_players: u32::try_from(players.len()).unwrap_or(u32::MAX),
        max_players: info.max_players.unwrap_or(0),
        password: info.password,
        players,
        teams: Vec::new(),
        rules,
        ping_ms: 0.0,
        complete: true,
        raw,
    })
}

/// ETQW's server fields, into `raw`.
fn etqw_raw(raw: &mut Value, body: &EtqwBody<'_>) {
    raw["os_mask"] = json!(body.os_mask);
    raw["ranked"] = json!(body.ranked);
    raw["time_left_ms"] = json!(body.time_left);
    raw["game_state"] = json!(body.game_state);
    raw["server_type"] = match body.server_type {
        ServerType::Regular { interested_clients } => {
            json!({ "type": "regular", "interested_clients": interested_clients })
        }
        ServerType::Tv {
            connected_clients,
            max_clients,
        } => json!({
            "type": "tv",
            "connected_clients": connected_clients,
            "max_clients": max_clients,
        }),
    };
}

/// One player as the status lists it, and as sent (for `raw`), with ETQW's statistics of its
/// slot when there are some.
fn player(p: &WirePlayer<'_>, stats: &[EtqwStats<'_>], encoding: TextEncoding) -> (Player, Value) {
    let raw_name = p.name.decode(encoding).into_owned();
    let mut player = Player {
        name: strip_colours(&raw_name).into_owned(),
        ping: Some(u32::from(p.ping)),
        id: Some(u32::from(p.id)),
        ..Player::default()
    };
    let mut raw = json!({ "id": p.id, "ping": p.ping, "name": raw_name });
    if let Some(rate) = p.rate {
        player.extra.insert("rate".to_owned(), rate.to_string());
        raw["rate"] = json!(rate);
    }
    if let Some(clan) = &p.clan {
        let clan = clan.decode(encoding).into_owned();
        if !clan.is_empty() {
            player
                .extra
                .insert("clan".to_owned(), strip_colours(&clan).into_owned());
        }
        raw["clan"] = json!(clan);
    }
    if let Some(position) = p.clan_position {
        raw["clan_position"] = json!(position);
    }
    if let Some(bot) = p.bot {
        if bot {
            player.extra.insert("bot".to_owned(), "1".to_owned());
        }
        raw["bot"] = json!(bot);
    }
    if let Some(s) = stats.iter().find(|s| s.id == p.id) {
        let team = s.team.decode(encoding).into_owned();
        player.team = (!team.is_empty()).then(|| team.clone());
        player.score = s.xp.is_finite().then_some(s.xp as i64);
        player.extra.insert("xp".to_owned(), s.xp.to_string());
        player.extra.insert("kills".to_owned(), s.kills.to_string());
        player
            .extra
            .insert("deaths".to_owned(), s.deaths.to_string());
        raw["xp"] = json!(s.xp);
        raw["team"] = json!(team);
        raw["kills"] = json!(s.kills);
        raw["deaths"] = json!(s.deaths);
    }
    (player, raw)
}

/// `bytes` as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
