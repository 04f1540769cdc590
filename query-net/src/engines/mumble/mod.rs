//! Mumble (Murmur): the binary ping.
//!
//! # Client ([`client`], [`MumbleSession`])
//!
//! Sends a [`Ping`] with a random ident and reads the [`Pong`] that echoes it, resending on
//! timeouts as every datagram query does: a [`SingleReplySession`] with a [`MumbleReader`].
//!
//! - Strict: a pong that does not echo this query's ident (a stray or forged one), or that is
//!   not 24 bytes, is ignored; if nothing else comes the query fails with the last such
//!   datagram's decode error.
//! - Mapping: the ping carries no name or map: name is empty, map and game type `None`;
//!   version → version (`1.3.4`), users → players, user slots → max players; the bandwidth
//!   (bits per second) → rule `bandwidth` and `raw.bandwidth`.
//!
//! # Responder ([`MumbleResponder`])
//!
//! Answers pings from the server state; see [`responder`].

pub mod responder;

pub use responder::{MumbleConfig, MumbleResponder};

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::mumble::{Ping, Pong};
use query_wire::Decode;
use serde_json::json;

use super::single::{ReadReply, Reply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// A ping of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(session(target, options)?))
}

/// A Mumble ping as a sans-I/O state machine; see the [module](self) docs.
pub type MumbleSession = SingleReplySession<MumbleReader>;

/// A ping of `target` with the timeout and retries of `options`, with a random ident.
pub fn session(target: SocketAddr, options: &Options) -> Result<MumbleSession, QueryError> {
    let ident = rand::random::<u64>();
    let reader = MumbleReader { ident };
    SingleReplySession::new_encoded(target, options, "ping request", &Ping { ident }, reader)
}

/// Reads the pong that echoes the ping's ident; see the [module](self) docs.
#[derive(Debug, Clone, Copy)]
pub struct MumbleReader {
    /// The ident sent, which the answer must echo.
    pub ident: u64,
}

impl ReadReply for MumbleReader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> Reply {
        match Pong::from_bytes(datagram) {
            Ok(pong) if pong.ident == self.ident => {
                Reply::Answer(Box::new(Ok(from_pong(target, &pong))))
            }
            Ok(_) => Reply::Ignored,
            Err(error) => Reply::Malformed(error.into()),
        }
    }
}

/// The status a pong gives (ping 0: the session sets it).
fn from_pong(target: SocketAddr, pong: &Pong) -> ServerStatus {
    let mut rules = IndexMap::new();
    rules.insert("bandwidth".to_owned(), pong.bandwidth.to_string());
    ServerStatus {
        protocol: Protocol::Mumble,
        address: target,
        name: String::new(),
        map: None,
        game_type: None,
        version: Some(pong.version.to_string()),
        num_players: pong.users,
        max_players: pong.max_users,
        password: None,
        players: Vec::new(),
        teams: Vec::new(),
        rules,
        ping_ms: 0.0,
        complete: true,
        raw: json!({
            "version": pong.version,
            "bandwidth": pong.bandwidth,
        }),
    }
}
