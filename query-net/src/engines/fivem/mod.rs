//! FiveM and RedM (CitizenFX): `getinfo` over UDP, the player list over HTTP.
//!
//! # Client ([`client`], [`FivemReader`], [`with_players`])
//!
//! Sends `FF FF FF FF getinfo <challenge>` with a fresh random challenge and reads the one
//! `infoResponse` datagram that answers it ([`SingleReplySession`]).
//!
//! - Strict: a reply that does not echo this query's challenge (a forged or stale one) is
//!   ignored; one whose header or pairs do not decode is malformed and never an answer.
//! - The datagram carries the counts, not the players: they are in the server's HTTP
//!   `/players.json` on the same port. The datagram session alone (what `gsq bulk` runs)
//!   gives a status with no players, `complete: false` when the server counts some
//!   (`raw.players_missing`, `raw.players_error`); [`driver::query`](crate::driver::query)
//!   and `gsq query` then fetch the list ([`with_players`]), at most [`MAX_PLAYERS_JSON`]
//!   bytes within the query's deadline, and the status is complete once it arrived.
//! - Mapping: `hostname` → name (colour codes removed; the raw text in `raw.hostname`),
//!   `mapname` → map, `gametype` → game type, `sv_maxclients` → max players, `clients` →
//!   players online (once the list arrived, its length, the count kept in
//!   `raw.getinfo_clients`); every pair is a rule, in order, as sent. Players: name, ping, the
//!   server's id; their identifiers and address in `extra`.
//!
//! # Responders ([`FivemResponder`], [`FivemHttpResponder`])
//!
//! Answer `getinfo` over UDP from the server state (see [`responder`]), and `/players.json`,
//! `/dynamic.json` and `/info.json` over TCP on the same port (see [`http`]).

pub mod http;
pub mod responder;

pub use http::FivemHttpResponder;

pub use responder::{FivemConfig, FivemResponder};

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::fivem::{InfoResponse, PlayerList, ENCODING};
use query_specs::quake3::strip_colours;
use query_wire::kv::Pairs;
use serde_json::json;

use super::single::{ReadReply, Reply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The most bytes of `/players.json` a query reads (about 2,000 players with their
/// identifiers); a longer list is an error, not a cut one.
pub const MAX_PLAYERS_JSON: usize = 1024 * 1024;

/// A `getinfo` query of `target` with a fresh challenge.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    let challenge = format!("{:016x}", rand::random::<u64>());
    let request = [&b"\xff\xff\xff\xffgetinfo "[..], challenge.as_bytes()].concat();
    let reader = FivemReader { challenge };
    Ok(Box::new(SingleReplySession::new(
        target,
        options,
        "getinfo request",
        &request,
        reader,
    )))
}

/// Reads the `infoResponse` that echoes its challenge; see the [module](self) docs.
#[derive(Debug, Clone)]
pub struct FivemReader {
    /// The challenge sent, which the answer must echo.
    pub challenge: String,
}

impl ReadReply for FivemReader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> Reply {
        Reply::from_decoded(InfoResponse::decode(datagram, ENCODING), |reply| {
            (reply.info.0.challenge.as_deref() == Some(self.challenge.as_str()))
                .then(|| status(target, datagram, &reply).map_err(QueryError::from))
        })
    }
}

/// The status `getinfo` gives, before the player list (ping 0: the session sets it).
fn status(
    target: SocketAddr,
    datagram: &[u8],
    reply: &InfoResponse<'_>,
) -> Result<ServerStatus, query_wire::Error> {
    let info = &reply.info.0;
    let header = query_specs::fivem::INFO_HEADER.len();
    let line = &datagram[header..];
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let mut rules = IndexMap::new();
    for pair in Pairs::with_origin(line, header) {
        let pair = pair?;
        rules.insert(
            ENCODING.decode_lossy(pair.key).into_owned(),
            ENCODING.decode_lossy(pair.value).into_owned(),
        );
    }
    let raw_hostname = info.hostname.as_deref().unwrap_or_default();
    let owned = |s: Option<&str>| s.map(str::to_owned);
    let mut status = ServerStatus {
        protocol: Protocol::Fivem,
        address: target,
        name: strip_colours(raw_hostname).into_owned(),
        map: owned(info.map.as_deref()),
        game_type: owned(info.game_type.as_deref()),
        version: None,
        num_players: info.clients.unwrap_or(0),
        max_players: info.max_clients.unwrap_or(0),
        password: None,
        players: Vec::new(),
        teams: Vec::new(),
        rules,
        ping_ms: 0.0,
        complete: true,
        raw: json!({ "hostname": raw_hostname, "players_source": "getinfo" }),
    };
    status.note_cut_player_list();
    if !status.complete {
        status.raw["players_error"] =
            json!("the player list is served over HTTP (/players.json), not in getinfo");
    }
    Ok(status)
}

/// `status` with the players of the server's `/players.json` body, or, when it could not
/// be read (`body` is the error), `status` left as it was with the reason in
/// `raw.players_error` (and `complete: false` when the server counts players).
pub fn with_players(mut status: ServerStatus, body: Result<Vec<u8>, QueryError>) -> ServerStatus {
    let list = body.and_then(|body| {
        serde_json::from_slice::<PlayerList>(&body)
            .map_err(|e| QueryError::protocol(format!("/players.json is not a player list: {e}")))
    });
    let list = match list {
        Ok(list) => list,
        Err(error) => {
            status.raw["players_error"] = json!(format!("/players.json: {error}"));
            return status;
        }
    };
    status.players = list
        .into_iter()
        .map(|p| {
            let mut player = Player {
                name: p.name,
                ping: Some(p.ping),
                id: Some(p.id),
                ..Player::default()
            };
            if !p.identifiers.is_empty() {
                player
                    .extra
                    .insert("identifiers".to_owned(), p.identifiers.join(" "));
            }
            if !p.endpoint.is_empty() {
                player.extra.insert("endpoint".to_owned(), p.endpoint);
            }
            player
        })
        .collect();
    status.complete = true;
    if let Some(raw) = status.raw.as_object_mut() {
        raw.remove("players_missing");
        raw.remove("players_error");
        raw.insert("players_source".to_owned(), json!("/players.json"));
    }
    // The list was asked for after the count: it is the newer of the two (a player may have
    // come or gone in between); the count stays in `raw.getinfo_clients`.
    status.raw["getinfo_clients"] = json!(status.num_players);
    status.num_players = u32::try_from(status.players.len()).unwrap_or(u32::MAX);
    status
}
