//! Mumble (Murmur): the binary ping.
//!
//! # Client ([`client`], [`MumbleSession`])
//!
//! Sends a [`Ping`] with a random ident and reads the [`Pong`] that echoes it, resending on
//! timeouts as every datagram query does.
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
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::mumble::{Ping, Pong};
use query_wire::Decode;
use serde_json::json;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// A ping of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(MumbleSession::new(target, options)?))
}

/// A Mumble ping as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct MumbleSession {
    target: SocketAddr,
    ident: u64,
    retry: Retry,
    outcome: Outcome<ServerStatus>,
}

impl MumbleSession {
    /// A ping of `target` with the timeout and retries of `options`.
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let ident = rand::random::<u64>();
        let mut retry = Retry::from_options(options);
        retry.start_encoded("ping request", &Ping { ident }, ())?;
        Ok(MumbleSession {
            target,
            ident,
            retry,
            outcome: Outcome::new(),
        })
    }
}

impl ClientSession for MumbleSession {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn waiting_for(&self) -> Option<&'static str> {
        self.retry.waiting_for()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        self.outcome.poll_transmit(&mut self.retry, now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let pong = match Pong::from_bytes(datagram) {
            Ok(pong) => pong,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if pong.ident != self.ident {
            return;
        }
        let rtt = self
            .outcome
            .answered(&mut self.retry, now)
            .unwrap_or_default();
        self.outcome.finish(Ok(from_pong(self.target, &pong, rtt)));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.outcome.poll_timeout(&self.retry)
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.outcome.handle_timeout(&mut self.retry, now);
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }

    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        Err(self.outcome.unanswered(why))
    }
}

/// The status a pong gives, its round trip `rtt`.
pub(crate) fn from_pong(target: SocketAddr, pong: &Pong, rtt: Duration) -> ServerStatus {
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
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: json!({
            "version": pong.version,
            "bandwidth": pong.bandwidth,
        }),
    }
}
