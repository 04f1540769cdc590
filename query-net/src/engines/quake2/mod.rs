//! Quake 2 and QuakeWorld: the status client and the responder.
//!
//! # Client ([`client`], [`Quake2Reader`])
//!
//! Sends `FF FF FF FF status\n` and reads the one datagram that answers it with the specs'
//! [`StatusResponse`]: Quake 2's `print` reply or QuakeWorld's `n` reply, each with its own
//! player line layout. A [`SingleReplySession`]: servers of both engines never split a
//! reply (they stop adding player lines when the datagram is full).
//!
//! - Lenient about player lines: a line that does not decode is left out, the lines around
//!   it kept, and the status is `complete: false` with each unreadable line's error in
//!   `raw.incomplete`.
//! - Strict about the rest: a datagram whose header or pair line does not decode (garbage, a
//!   Quake 3 reply, an A2S reply) is malformed and never taken for an answer; if nothing else
//!   comes, the query fails with its decode error.
//! - Mapping: `hostname` → name, `mapname` (QuakeWorld `map`) → map, `gamedir` (else
//!   `game`) → game type, `version` (QuakeWorld `*version`) → version, `maxclients` → max
//!   players, `needpass` bit 1 → password; each player line → a player (frags as score,
//!   ping; QuakeWorld adds the user id, the team, and the skin, colours and minutes played in
//!   `extra`). Text is decoded in [`Options::encoding`], Windows-1252 by default (the
//!   original engines' coloured letters, bytes with the high bit set, read as accented ones;
//!   [`plain_name`](query_specs::quake2::plain_name) folds them for a caller that wants).
//!   QuakeWorld spectators (frags `-9999`, a name starting `\s\`) are listed with team
//!   `spectator` and no score. Every pair is a rule, in order, as sent.
//!
//! # Responder ([`Quake2Responder`])
//!
//! Answers `status` in Quake 2's layout from the server state; see [`responder`].

pub mod responder;

pub use responder::{Quake2Config, Quake2Responder};

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::quake2::{AnyPlayer, StatusResponse, STATUS};
use query_wire::kv::Pairs;
use query_wire::{Decode, Reader, TextEncoding};
use serde_json::{json, Value};

use super::single::{ReadReply, Reply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The encoding text is read in unless another is chosen: [`query_specs::quake2::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::quake2::ENCODING;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    let reader = Quake2Reader {
        encoding: options.encoding_or(DEFAULT_ENCODING),
    };
    Ok(Box::new(SingleReplySession::new(
        target,
        options,
        "status request",
        STATUS,
        reader,
    )))
}

/// Reads a Quake 2 or QuakeWorld status reply; see the [module](self) docs.
#[derive(Debug, Clone, Copy)]
pub struct Quake2Reader {
    /// The encoding of the server's text.
    pub encoding: TextEncoding,
}

impl ReadReply for Quake2Reader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> Reply {
        match status(target, datagram, self.encoding) {
            Ok(status) => Reply::Answer(Box::new(Ok(status))),
            Err(error) => Reply::Malformed(error.into()),
        }
    }
}

/// Text as sent, decoded in `encoding`.
fn display(bytes: &[u8], encoding: TextEncoding) -> String {
    encoding.decode_lossy(bytes).into_owned()
}

/// The minutes a QuakeWorld server counts for a player, as seconds.
fn minutes_to_seconds(minutes: i64) -> Option<f64> {
    (minutes >= 0).then_some(minutes as f64 * 60.0)
}

/// The status one reply gives (ping 0: the session sets it), its text decoded in `encoding`.
pub(crate) fn status(
    target: SocketAddr,
    datagram: &[u8],
    encoding: TextEncoding,
) -> Result<ServerStatus, query_wire::Error> {
    let (reply, unreadable) = StatusResponse::decode_lenient(datagram, encoding)?;
    let info = &reply.info;

    // Every pair is a rule, in order and as sent; a key sent twice keeps its first place and
    // its last value.
    let mut rules = IndexMap::new();
    let header_len = reply.dialect.magic().len();
    let mut r = Reader::new(datagram);
    r.skip(header_len)?;
    let line = query_specs::quake3::Line::decode(&mut r, ())?;
    for pair in Pairs::with_origin(line.text, header_len) {
        let pair = pair?;
        rules.insert(
            encoding.decode_lossy(pair.key).into_owned(),
            encoding.decode_lossy(pair.value).into_owned(),
        );
    }

    let mut players = Vec::with_capacity(reply.players.len());
    let mut raw_players = Vec::with_capacity(reply.players.len());
    for p in &reply.players {
        let raw_name = p.name().decode(encoding);
        let mut player = Player {
            name: display(p.name().as_bytes(), encoding),
            score: Some(p.frags()),
            ping: u32::try_from(p.ping()).ok(),
            ..Player::default()
        };
        match p {
            AnyPlayer::Quake2(q2) => {
                let mut raw = json!({ "name": raw_name, "frags": q2.score, "ping": q2.ping });
                if !q2.more.is_empty() {
                    raw["more"] = json!(q2.more);
                }
                let extra = q2.extra.decode(encoding);
                if !extra.trim().is_empty() {
                    player
                        .extra
                        .insert("fields".to_owned(), extra.trim().to_owned());
                    raw["extra"] = json!(extra);
                }
                raw_players.push(raw);
            }
            AnyPlayer::QuakeWorld(qw) => {
                let skin = qw.skin.decode(encoding).into_owned();
                let team = qw.team.as_ref().map(|t| t.decode(encoding).into_owned());
                let spectator = qw.frags == -9999 || qw.name.as_bytes().starts_with(b"\\s\\");
                if spectator {
                    let name = qw.name.as_bytes();
                    player.name = display(name.strip_prefix(b"\\s\\").unwrap_or(name), encoding);
                    player.score = None;
                    player.team = Some("spectator".to_owned());
                } else {
                    player.team = team.clone().filter(|t| !t.is_empty());
                }
                player.id = u32::try_from(qw.id).ok();
                player.duration = minutes_to_seconds(qw.time);
                player.extra.insert("skin".to_owned(), skin.clone());
                player
                    .extra
                    .insert("colors".to_owned(), format!("{} {}", qw.top, qw.bottom));
                raw_players.push(json!({
                    "id": qw.id, "frags": qw.frags, "time": qw.time, "ping": qw.ping,
                    "name": raw_name, "skin": skin, "top": qw.top, "bottom": qw.bottom,
                    "team": team,
                }));
            }
        }
        players.push(player);
    }

    let raw_hostname = info.hostname.as_deref().unwrap_or_default();
    let name = display(&encoding.encode_lossy(raw_hostname), encoding);
    let game_type = info
        .game_dir
        .as_deref()
        .or_else(|| info.rule("game"))
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_owned);
    let mut raw = json!({
        "dialect": reply.dialect,
        "hostname": raw_hostname,
        "players": Value::Array(raw_players),
        "encoding": encoding.name(),
    });
    let complete = unreadable.is_empty();
    if !complete {
        let why: Vec<String> = unreadable
            .iter()
            .map(|error| format!("a player line left out: {error}"))
            .collect();
        raw["incomplete"] = json!(why);
    }
    Ok(ServerStatus {
        protocol: Protocol::Quake2,
        address: target,
        name,
        map: info.map.as_deref().map(str::to_owned),
        game_type,
        version: info.version.as_deref().map(str::to_owned),
        num_players: u32::try_from(players.len()).unwrap_or(u32::MAX),
        max_players: info.max_clients.unwrap_or(0),
        password: info.password(),
        players,
        teams: Vec::new(),
        rules,
        ping_ms: 0.0,
        complete,
        raw,
    })
}
