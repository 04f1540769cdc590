//! Unreal Engine 2 (UT2003, UT2004, Killing Floor, Red Orchestra, Darkest Hour): the status
//! client and the responder. Servers answer on their game port + 1
//! ([`QUERY_PORT_OFFSET`](query_specs::unreal2::QUERY_PORT_OFFSET)): UT2004's 7777 → 7778.
//!
//! # Client ([`client`], [`Unreal2Session`])
//!
//! Asks for the details, then the players (unless [`Options::players`] is off, or the details
//! count none), then the rules (unless [`Options::rules`] is off), one after the other.
//!
//! - The details are one datagram, decoded in UT2004's layout or else Killing Floor's
//!   ([`Info::decode_any`](query_specs::unreal2::Info::decode_any)). They must arrive, or the
//!   query fails (with the last undecodable datagram's error, else the timeout).
//! - Players and rules come in as many datagrams as they fill, and nothing says how many or
//!   which is last: once one arrived, the step ends a short gap after the latest
//!   ([`PartWait`]: four round trips, 50 ms at the least, at most the attempt's timeout).
//!   Parts arrive in any order and are kept in arrival order; a datagram identical to one
//!   held (duplicated on the way, or answering a resent request) is dropped.
//! - Strict: only a datagram whose header names the step's kind and that decodes whole counts;
//!   anything else (garbage, a late answer to an earlier step, a part cut inside an entry) is
//!   noted and never taken as an answer. Anyone can forge a datagram from the server's address.
//! - Lenient: a step that gets no answer, or whose parts are refused, leaves its list out or
//!   partial: the status is `complete: false` with the reason in `raw.players_error` /
//!   `raw.rules_error`. A player list shorter than the count says so too
//!   (`raw.players_missing`).
//! - Mapping: see [`status`]: colour codes are removed from names and kept in `raw`.
//!
//! # Responder ([`Unreal2Responder`])
//!
//! Answers the three requests from the server state; see [`responder`].

pub mod responder;
pub mod status;

pub use responder::{Unreal2Config, Unreal2Responder};

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::unreal2::{Kind, Reply, Request};
use query_wire::TextEncoding;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;
use crate::status::ServerStatus;

/// The encoding Latin-1 strings are read in unless another is chosen: Latin-1, as the engine
/// writes them (UTF-16 strings carry their own).
pub const DEFAULT_ENCODING: TextEncoding = TextEncoding::Latin1;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(Unreal2Session::new(target, options)?))
}

/// An Unreal 2 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct Unreal2Session {
    target: SocketAddr,
    encoding: TextEncoding,
    players: bool,
    rules: bool,
    timeout: Duration,
    retry: Retry,
    step: Kind,
    /// The datagrams of the current list step, in arrival order.
    parts: Vec<Reply>,
    /// Fingerprints of the parts held, keyed per session so no sender can make two differing
    /// datagrams collide on purpose.
    seen: HashSet<u64>,
    fingerprints: RandomState,
    /// Once a part of the current list step arrived: the wait for the rest.
    rest: PartWait,
    status: Option<ServerStatus>,
    outcome: Outcome<ServerStatus>,
}

impl Unreal2Session {
    /// A query of `target` with `options` (timeout, retries, encoding, players, rules).
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let mut session = Unreal2Session {
            target,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            players: options.players,
            rules: options.rules,
            timeout: options.timeout,
            retry: Retry::from_options(options),
            step: Kind::Info,
            parts: Vec::new(),
            seen: HashSet::new(),
            fingerprints: RandomState::new(),
            rest: PartWait::new(options.timeout),
            status: None,
            outcome: Outcome::new(),
        };
        session.start(Kind::Info)?;
        Ok(session)
    }

    fn start(&mut self, step: Kind) -> Result<(), QueryError> {
        self.step = step;
        self.parts.clear();
        self.seen.clear();
        self.rest = PartWait::new(self.timeout);
        self.outcome.forget_malformed();
        let label = match step {
            Kind::Info => "info request",
            Kind::Players => "player request",
            Kind::Rules => "rules request",
        };
        self.retry
            .start_encoded(label, &Request::ut2004(step), ())
            .map_err(|e| QueryError::protocol(format!("cannot encode the {label}: {e}")))
    }

    /// Ends the current list step with what arrived (`why` when something is missing) and
    /// starts the next, or ends the query.
    fn end_list_step(&mut self, why: Option<String>) {
        let encoding = self.encoding;
        if let Some(status) = &mut self.status {
            match self.step {
                Kind::Players => status::add_players(status, &self.parts, encoding, why),
                Kind::Rules => status::add_rules(status, &self.parts, encoding, why),
                Kind::Info => {}
            }
        }
        self.next_step();
    }

    fn next_step(&mut self) {
        let counted = self.status.as_ref().map_or(0, |s| s.num_players);
        let next = match self.step {
            Kind::Info if self.players && counted > 0 => Some(Kind::Players),
            Kind::Info | Kind::Players if self.rules => Some(Kind::Rules),
            _ => None,
        };
        let started = match next {
            Some(step) => self.start(step),
            None => {
                let mut status = self
                    .status
                    .take()
                    .ok_or_else(|| QueryError::protocol("the details never arrived"));
                if let Ok(status) = &mut status {
                    status.ping_ms = self.outcome.best_rtt().as_secs_f64() * 1000.0;
                    if self.players {
                        status.note_cut_player_list();
                    }
                }
                self.outcome.finish(status);
                Ok(())
            }
        };
        if let Err(error) = started {
            self.outcome.finish(Err(error));
        }
    }

    fn on_info(&mut self, reply: Reply, now: Instant) {
        let Reply::Info(info) = reply else {
            return;
        };
        self.outcome.answered(&mut self.retry, now);
        self.status = Some(status::from_info(self.target, &info, self.encoding));
        self.next_step();
    }

    fn on_part(&mut self, datagram: &[u8], reply: Reply, now: Instant) {
        if !self.seen.insert(self.fingerprints.hash_one(datagram)) {
            return;
        }
        let rtt = if self.parts.is_empty() {
            self.outcome.answered(&mut self.retry, now)
        } else {
            None
        };
        self.parts.push(reply);
        self.rest
            .part_arrived(rtt.unwrap_or(self.outcome.best_rtt()), now);
    }
}

impl ClientSession for Unreal2Session {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_transmit, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let reply = match Reply::decode(datagram) {
            Ok(reply) => reply,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if reply.kind() != self.step {
            // A late answer to an earlier step, or one to no request of ours.
            return;
        }
        match self.step {
            Kind::Info => self.on_info(reply, now),
            Kind::Players | Kind::Rules => self.on_part(datagram, reply, now),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.rest.poll_timeout(&self.outcome, &self.retry)
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if !self.parts.is_empty() {
            if self.rest.is_over(now) {
                self.end_list_step(None);
            }
            return;
        }
        if self.step == Kind::Info {
            self.outcome.handle_timeout(&mut self.retry, now);
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            let why = self.outcome.unanswered(timeout).to_string();
            self.end_list_step(Some(why));
        }
    }

    /// What arrived, `complete: false` when a step was under way; without the details, `why`
    /// (or the last undecodable datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        let Some(mut status) = self.status.take() else {
            return Err(self.outcome.unanswered(why));
        };
        let cut = format!(
            "the query ended before the {} were all in: {why}",
            self.step_name()
        );
        match self.step {
            Kind::Players => {
                status::add_players(&mut status, &self.parts, self.encoding, Some(cut))
            }
            Kind::Rules => status::add_rules(&mut status, &self.parts, self.encoding, Some(cut)),
            Kind::Info => {}
        }
        status.ping_ms = self.outcome.best_rtt().as_secs_f64() * 1000.0;
        Ok(status)
    }
}

impl Unreal2Session {
    fn step_name(&self) -> &'static str {
        match self.step {
            Kind::Info => "details",
            Kind::Players => "players",
            Kind::Rules => "rules",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_specs::unreal2::{
        Header, Player, PlayersPart, Rule, RulesPart, UText, REPLY_VERSION,
    };
    use query_wire::Encode;

    fn target() -> SocketAddr {
        "192.0.2.1:7778".parse().unwrap()
    }

    fn info(players: u8) -> Vec<u8> {
        let mut bytes =
            b"\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x61\x1e\x00\x00\x00\x00\x00\x00".to_vec();
        bytes.extend_from_slice(b"\x0a\x1b\xff\x01\x01Arena\x00\x06DM-X1\x00\x03DM\x00");
        bytes.extend_from_slice(&[players, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0]);
        bytes
    }

    fn header(kind: Kind) -> Header {
        Header {
            version: REPLY_VERSION,
            kind,
        }
    }

    fn players_part(names: &[&str]) -> Vec<u8> {
        PlayersPart {
            header: header(Kind::Players),
            players: names
                .iter()
                .enumerate()
                .map(|(i, name)| Player {
                    id: i as u32,
                    name: UText::new(name),
                    ping: 50,
                    score: 3,
                    stats_id: 0,
                })
                .collect(),
        }
        .to_vec()
        .unwrap()
    }

    fn rules_part(pairs: &[(&str, &str)]) -> Vec<u8> {
        RulesPart {
            header: header(Kind::Rules),
            rules: pairs
                .iter()
                .map(|(k, v)| Rule {
                    key: UText::new(k),
                    value: UText::new(v),
                })
                .collect(),
        }
        .to_vec()
        .unwrap()
    }

    #[test]
    fn details_then_players_then_rules_over_several_datagrams() {
        let options = Options::default();
        let mut session = Unreal2Session::new(target(), &options).unwrap();
        let t0 = Instant::now();
        assert_eq!(session.poll_transmit(t0).unwrap(), b"\x79\x00\x00\x00\x00");
        // Garbage and an early list part change nothing.
        session.on_reply(b"\x80\x00\x00\x00\x00\x00", t0);
        session.on_reply(&players_part(&["early"]), t0);
        session.on_reply(&info(3), t0 + Duration::from_millis(10));
        assert_eq!(session.poll_transmit(t0).unwrap(), b"\x79\x00\x00\x00\x02");
        let t1 = t0 + Duration::from_millis(20);
        session.on_reply(&players_part(&["Zoë", "Bob"]), t1);
        session.on_reply(&players_part(&["Zoë", "Bob"]), t1);
        session.on_reply(&players_part(&["Жук"]), t1);
        // The gap after the latest part ends the step.
        let wake = session.poll_timeout().unwrap();
        assert!(wake <= t1 + Duration::from_millis(60));
        session.handle_timeout(wake);
        assert_eq!(
            session.poll_transmit(wake).unwrap(),
            b"\x79\x00\x00\x00\x01"
        );
        session.on_reply(&rules_part(&[("Mutator", "A"), ("Mutator", "B")]), wake);
        session.on_reply(&rules_part(&[("ServerVersion", "3369")]), wake);
        let end = session.poll_timeout().unwrap();
        session.handle_timeout(end);
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.name, "Arena");
        assert_eq!(status.raw["name"], "\u{1b}\u{ff}\u{1}\u{1}Arena");
        assert_eq!(status.map.as_deref(), Some("DM-X1"));
        assert_eq!((status.num_players, status.max_players), (3, 16));
        let names: Vec<&str> = status.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Zoë", "Bob", "Жук"]);
        assert_eq!(status.rules["Mutator"], "A, B");
        assert_eq!(status.version.as_deref(), Some("3369"));
        assert!(status.complete, "{}", status.raw);
    }

    #[test]
    fn unanswered_lists_leave_the_status_incomplete() {
        let options = Options {
            retries: 0,
            ..Options::default()
        };
        let mut session = Unreal2Session::new(target(), &options).unwrap();
        let t0 = Instant::now();
        session.poll_transmit(t0).unwrap();
        session.on_reply(&info(2), t0);
        session.poll_transmit(t0).unwrap();
        let wake = session.poll_timeout().unwrap();
        session.handle_timeout(wake);
        // Rules asked next; a part cut inside a pair is noted, not taken.
        session.poll_transmit(wake).unwrap();
        let cut = rules_part(&[("k", "v")]);
        session.on_reply(&cut[..cut.len() - 1], wake);
        let wake = session.poll_timeout().unwrap();
        session.handle_timeout(wake);
        let status = session.poll_result().unwrap().unwrap();
        assert!(!status.complete);
        assert!(status.raw["players_error"].is_string(), "{}", status.raw);
        assert!(
            status.raw["rules_error"]
                .as_str()
                .unwrap()
                .contains("malformed reply: rules[0].value"),
            "{}",
            status.raw
        );
        assert_eq!(status.raw["players_missing"], 2);
    }

    #[test]
    fn no_details_fails_the_query() {
        let options = Options {
            retries: 0,
            ..Options::default()
        };
        let mut session = Unreal2Session::new(target(), &options).unwrap();
        let t0 = Instant::now();
        session.poll_transmit(t0).unwrap();
        session.on_reply(b"\x80\x00\x00\x00\x00\x01", t0);
        let wake = session.poll_timeout().unwrap();
        session.handle_timeout(wake);
        let error = session.poll_result().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::Malformed(_)), "{error}");
    }
}
