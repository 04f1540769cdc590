//! Minecraft Bedrock Edition (and Geyser, Nukkit, PocketMine): RakNet's unconnected ping.
//!
//! # Client ([`client`], [`BedrockSession`])
//!
//! Sends an [`UnconnectedPing`] whose time field is a random number and reads the
//! [`UnconnectedPong`] that echoes it, resending on timeouts as every datagram query does.
//!
//! - Strict: a pong that does not echo this query's time (a stray or forged one), or without
//!   the RakNet magic, is ignored; if nothing else comes the query fails with the last such
//!   datagram's decode error. A pong that echoes the time but whose server string lacks its
//!   first six fields fails the query at once: the server speaks RakNet but is no status.
//! - Lenient: fields after the sixth may be missing or not numbers (`-1` for an absent IPv6
//!   port), as real servers send them.
//! - Mapping: the first MOTD line without `§` codes → name, the second → map (vanilla servers
//!   put the world name there), game mode → game type, version name → version, online/max →
//!   players; the edition, protocol, server id, game mode number and ports → rules; the MOTD
//!   lines as sent, the server GUID and the whole server string → `raw`.
//!
//! # Responder ([`BedrockResponder`])
//!
//! Answers pings from the server state; see [`responder`].

pub mod responder;

pub use responder::{BedrockConfig, BedrockResponder};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::bedrock::{OfflineMagic, ServerId, UnconnectedPing, UnconnectedPong};
use query_wire::Decode;
use serde_json::json;

use super::minecraft::text::strip_codes;
use super::StatusSession;
use crate::engine::{ClientSession, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(BedrockSession::new(target, options)?))
}

/// A Bedrock ping as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct BedrockSession {
    target: SocketAddr,
    time: u64,
    retry: Retry,
    malformed: Option<query_wire::Error>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
}

impl BedrockSession {
    /// A query of `target` with the timeout and retries of `options`.
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let time = rand::random::<u64>();
        let ping = UnconnectedPing {
            time,
            magic: OfflineMagic {},
            client_guid: rand::random(),
        };
        let mut retry = Retry::from_options(options);
        retry.start_encoded("ping request", &ping, ())?;
        Ok(BedrockSession {
            target,
            time,
            retry,
            malformed: None,
            result: None,
            finished: false,
        })
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>, now: Instant) {
        self.retry.finish(now);
        self.result = Some(result);
        self.finished = true;
    }
}

impl ClientSession for BedrockSession {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.finished {
            return None;
        }
        self.retry.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.finished {
            return;
        }
        let pong = match UnconnectedPong::from_bytes(datagram) {
            Ok(pong) => pong,
            Err(error) => {
                self.malformed = Some(error);
                return;
            }
        };
        if pong.time != self.time {
            return;
        }
        let rtt = self.retry.finish(now).unwrap_or_default();
        let status = from_pong(self.target, &pong, rtt);
        self.finish(status, now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            None
        } else {
            self.retry.poll_timeout()
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            let error = self.malformed.take().map_or(timeout, QueryError::Malformed);
            self.finish(Err(error), now);
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }

    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<ServerStatus, QueryError> {
        self.retry.finish(now);
        self.finished = true;
        Err(self.malformed.take().map_or(why, QueryError::Malformed))
    }
}

/// The status a pong gives, its round trip `rtt`.
pub(crate) fn from_pong(
    target: SocketAddr,
    pong: &UnconnectedPong<'_>,
    rtt: Duration,
) -> Result<ServerStatus, QueryError> {
    let text = pong.server_text();
    let id = ServerId::parse(&text)
        .map_err(|e| QueryError::server_reply(QueryError::protocol(e.to_string())))?;
    let mut rules = IndexMap::new();
    let mut rule = |key: &str, value: Option<String>| {
        if let Some(value) = value {
            rules.insert(key.to_owned(), value);
        }
    };
    rule("edition", Some(id.edition.to_string()));
    rule("protocol", Some(id.protocol.to_string()));
    rule(
        "server_id",
        id.server_unique_id.as_deref().map(str::to_owned),
    );
    rule(
        "game_mode_number",
        id.game_mode_number.map(|n| n.to_string()),
    );
    rule("port_v4", id.port_v4.map(|p| p.to_string()));
    rule("port_v6", id.port_v6.map(|p| p.to_string()));
    Ok(ServerStatus {
        protocol: Protocol::Bedrock,
        address: target,
        name: strip_codes(&id.motd).trim().to_owned(),
        map: id
            .motd2
            .as_deref()
            .map(|m| strip_codes(m).trim().to_owned()),
        game_type: id.game_mode.as_deref().map(str::to_owned),
        version: Some(id.version.to_string()),
        num_players: id.online,
        max_players: id.max,
        password: None,
        players: Vec::new(),
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: json!({
            "motd": id.motd,
            "motd2": id.motd2,
            "server_guid": pong.server_guid,
            "server_string": text,
        }),
    })
}
