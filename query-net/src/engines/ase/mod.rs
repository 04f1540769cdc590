//! The All-Seeing Eye (Multi Theft Auto: San Andreas, Far Cry, Chaser): the status client and
//! the responder. Servers answer on their game port + 123
//! ([`QUERY_PORT_OFFSET`](query_specs::ase::QUERY_PORT_OFFSET)): MTA's 22003 → 22126.
//!
//! # Client ([`client`], [`AseSession`])
//!
//! Sends `s` and reads one [`Reply`] datagram, resending on timeouts: a
//! [`SingleReplySession`] with an [`AseReader`].
//!
//! - Strict: a datagram that is not an `EYE1` reply with its nine fields (garbage, a reply cut
//!   inside them) is noted and never taken as the answer; if nothing else comes, the query
//!   fails with its decode error. The protocol carries no id to match, so the driver's check
//!   of the source address is what keeps others' datagrams out.
//! - Lenient: counts and ping are decimal text read with surrounding spaces trimmed; text that
//!   is no number leaves the field unset (players, max: 0) and is kept in `raw`. A reply that
//!   ends after its fields or its rules has no players; a player list shorter than the count
//!   makes the status `complete: false` (`raw.players_missing`).
//! - Mapping: name, map, game type, version as sent; password `1` → true; the rules in order
//!   (a key sent twice keeps its last value); players' name, team, score and ping, and skin
//!   and time in `extra`. The game's short name and port go to `raw`. Text is decoded with
//!   [`Options::encoding`], UTF-8 by default (MTA; Far Cry servers send Latin-1).
//!
//! # Responder ([`AseResponder`])
//!
//! Answers `s` from the server state; see [`responder`].

pub mod responder;

pub use responder::{AseConfig, AseResponder};

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::ase::{Reply, Request};
use query_wire::{Decode, Text, TextEncoding};
use serde_json::json;

use super::single::{ReadReply, Reply as SingleReply, SingleReplySession};
use super::StatusSession;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The encoding text is read in unless another is chosen: UTF-8, as MTA writes it.
pub const DEFAULT_ENCODING: TextEncoding = TextEncoding::Utf8;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(session(target, options)?))
}

/// An ASE status query as a sans-I/O state machine; see the [module](self) docs.
pub type AseSession = SingleReplySession<AseReader>;

/// A query of `target` with `options` (timeout, retries, encoding).
pub fn session(target: SocketAddr, options: &Options) -> Result<AseSession, QueryError> {
    let reader = AseReader {
        encoding: options.encoding_or(DEFAULT_ENCODING),
    };
    SingleReplySession::new_encoded(target, options, "status request", &Request, reader)
}

/// Reads the reply to `s`; see the [module](self) docs.
#[derive(Debug, Clone, Copy)]
pub struct AseReader {
    /// The encoding of the server's text.
    pub encoding: TextEncoding,
}

impl ReadReply for AseReader {
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> SingleReply {
        SingleReply::from_decoded(Reply::from_bytes(datagram), |reply| {
            Some(Ok(from_reply(
                target,
                &reply,
                self.encoding,
                Duration::ZERO,
            )))
        })
    }
}

/// A decimal number sent as text, spaces around it allowed.
fn number<T: std::str::FromStr>(text: &str) -> Option<T> {
    text.trim().parse().ok()
}

/// The status a reply gives, decoded with `encoding`, its round trip `rtt`.
pub fn from_reply(
    target: SocketAddr,
    reply: &Reply<'_>,
    encoding: TextEncoding,
    rtt: Duration,
) -> ServerStatus {
    let text = |t: &Text<'_>| t.decode(encoding).into_owned();
    let optional = |t: &Option<Text<'_>>| t.as_ref().map(text);
    let mut rules = IndexMap::new();
    for rule in &reply.rules {
        rules.insert(text(&rule.key), text(&rule.value));
    }
    let players: Vec<Player> = reply
        .players
        .iter()
        .map(|p| {
            let mut extra = IndexMap::new();
            for (key, value) in [("skin", &p.skin), ("time", &p.time)] {
                if let Some(value) = optional(value).filter(|v| !v.is_empty()) {
                    extra.insert(key.to_owned(), value);
                }
            }
            Player {
                name: optional(&p.name).unwrap_or_default(),
                score: optional(&p.score).as_deref().and_then(number),
                ping: optional(&p.ping).as_deref().and_then(number),
                team: optional(&p.team).filter(|t| !t.is_empty()),
                extra,
                ..Player::default()
            }
        })
        .collect();
    let num_players_text = text(&reply.num_players);
    let max_players_text = text(&reply.max_players);
    let password_text = text(&reply.password);
    let mut status = ServerStatus {
        protocol: Protocol::Ase,
        address: target,
        name: text(&reply.name),
        map: Some(text(&reply.map)).filter(|m| !m.is_empty()),
        game_type: Some(text(&reply.game_type)).filter(|g| !g.is_empty()),
        version: Some(text(&reply.version)).filter(|v| !v.is_empty()),
        num_players: number(&num_players_text).unwrap_or_default(),
        max_players: number(&max_players_text).unwrap_or_default(),
        password: match password_text.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        },
        players,
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: json!({
            "game": text(&reply.game),
            "port": text(&reply.port),
            "num_players": num_players_text,
            "max_players": max_players_text,
            "password": password_text,
        }),
    };
    status.note_cut_player_list();
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    use crate::engine::ClientSession;

    fn target() -> SocketAddr {
        "192.0.2.1:22126".parse().unwrap()
    }

    #[test]
    fn a_reply_ends_the_query_and_garbage_names_the_failure() {
        let options = Options::default();
        let mut session = session(target(), &options).unwrap();
        let t0 = Instant::now();
        assert_eq!(session.poll_transmit(t0).unwrap(), b"s");
        session.on_reply(b"EYE1\x04mt", t0);
        assert!(session.poll_result().is_none());
        session.on_reply(
            b"EYE1\x04mta\x0622003\x05Fort\x01\x03SX\x041.4\x021\x03 2\x0332\x01\x03\x05Zo\xc3\xab\x01",
            t0 + Duration::from_millis(20),
        );
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.name, "Fort");
        assert_eq!(status.map.as_deref(), Some("SX"));
        assert_eq!(status.game_type, None);
        assert_eq!((status.num_players, status.max_players), (2, 32));
        assert_eq!(status.password, Some(true));
        assert_eq!(status.players.len(), 1);
        assert_eq!(status.players[0].name, "Zoë");
        assert_eq!(status.players[0].score, None);
        assert_eq!(status.players[0].ping, None);
        // One player listed of the two counted.
        assert!(!status.complete);
        assert_eq!(status.raw["players_missing"], 1);
        assert_eq!(status.raw["game"], "mta");
    }

    #[test]
    fn silence_after_garbage_fails_with_the_garbage() {
        let options = Options {
            retries: 0,
            ..Options::default()
        };
        let mut session = session(target(), &options).unwrap();
        let t0 = Instant::now();
        session.poll_transmit(t0).unwrap();
        session.on_reply(b"EYE1\x00", t0);
        let wake = session.poll_timeout().unwrap();
        session.handle_timeout(wake);
        let error = session.poll_result().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::Malformed(_)), "{error}");
    }
}
