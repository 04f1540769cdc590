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
        Reply::from_decoded(Pong::from_bytes(datagram), |pong| {
            (pong.ident == self.ident).then(|| Ok(from_pong(target, &pong)))
        })
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use query_wire::Encode;

    use super::*;
    use crate::engine::ClientSession;

    fn target() -> SocketAddr {
        "192.0.2.1:64738".parse().unwrap()
    }

    /// Murmur 1.3.4's pong with 3 of 42 users, echoing `ident`.
    fn pong(ident: u64) -> Vec<u8> {
        let bytes = b"\x00\x01\x03\x04\x00\x00\x00\x00\x00\x00\x00\x00\
                      \x00\x00\x00\x03\x00\x00\x00\x2a\x00\x01\x19\x40";
        let pong = Pong {
            ident,
            ..Pong::from_bytes(bytes).unwrap()
        };
        pong.to_vec().unwrap()
    }

    #[test]
    fn only_the_pong_echoing_the_ident_answers_and_garbage_names_a_silent_end() {
        let options = Options {
            retries: 0,
            ..Options::default()
        };
        let mut session = session(target(), &options).unwrap();
        let ident = session.reader().ident;
        let t0 = Instant::now();
        let ping = session.poll_transmit(t0).unwrap().to_vec();
        assert_eq!(Ping::from_bytes(&ping).unwrap().ident, ident);
        session.on_reply(&pong(ident.wrapping_add(1)), t0);
        session.on_reply(b"\x00\x01", t0);
        assert!(session.poll_result().is_none(), "neither answers");
        session.on_reply(&pong(ident), t0 + Duration::from_millis(15));
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!((status.num_players, status.max_players), (3, 42));
        assert_eq!(status.version.as_deref(), Some("1.3.4"));
        assert_eq!(status.ping_ms, 15.0);

        let mut session = super::session(target(), &options).unwrap();
        session.poll_transmit(t0).unwrap();
        session.on_reply(b"\x00\x01", t0);
        let wake = session.poll_timeout().unwrap();
        session.handle_timeout(wake);
        let error = session.poll_result().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::Malformed(_)), "{error}");
    }
}
