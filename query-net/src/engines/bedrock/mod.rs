//! Minecraft Bedrock Edition (and Geyser, Nukkit, PocketMine): RakNet's unconnected ping.
//!
//! # Client ([`client`], [`BedrockSession`])
//!
//! Sends an [`UnconnectedPing`] whose time field is a random number and reads the
//! [`UnconnectedPong`] that echoes it, resending on timeouts as every datagram query does: a
//! [`SingleReplySession`] with a [`BedrockReader`].
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

use indexmap::IndexMap;
use query_specs::bedrock::{OfflineMagic, ServerId, UnconnectedPing, UnconnectedPong};
use query_wire::Decode;
use serde_json::json;

use super::minecraft::text::strip_codes;
use super::single::{ReadReply, Reply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(session(target, options)?))
}

/// A Bedrock ping as a sans-I/O state machine; see the [module](self) docs.
pub type BedrockSession = SingleReplySession<BedrockReader>;

/// A ping of `target` with the timeout and retries of `options`, with a random time field.
pub fn session(target: SocketAddr, options: &Options) -> Result<BedrockSession, QueryError> {
    let time = rand::random::<u64>();
    let ping = UnconnectedPing {
        time,
        magic: OfflineMagic {},
        client_guid: rand::random(),
    };
    SingleReplySession::new_encoded(
        target,
        options,
        "ping request",
        &ping,
        BedrockReader { time },
    )
}

/// Reads the pong that echoes the ping's time field; see the [module](self) docs.
#[derive(Debug, Clone, Copy)]
pub struct BedrockReader {
    /// The time field sent, which the answer must echo.
    pub time: u64,
}

impl ReadReply for BedrockReader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> Reply {
        Reply::from_decoded(UnconnectedPong::from_bytes(datagram), |pong| {
            (pong.time == self.time).then(|| from_pong(target, &pong))
        })
    }
}

/// The status a pong gives (ping 0: the session sets it); an error when its server string
/// lacks the fields every status has.
fn from_pong(target: SocketAddr, pong: &UnconnectedPong<'_>) -> Result<ServerStatus, QueryError> {
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
        ping_ms: 0.0,
        complete: true,
        raw: json!({
            "motd": id.motd,
            "motd2": id.motd2,
            "server_guid": pong.server_guid,
            "server_string": text,
        }),
    })
}
