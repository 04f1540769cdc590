//! GameSpy 2 (Halo, SWAT 4, Hidden & Dangerous 2, ArmA, Battlefield Vietnam): the status
//! client and the responder.
//!
//! # Client ([`client`], [`GameSpy2Session`])
//!
//! - Requests: first one request for everything (`FF FF FF`). Real servers often answer it
//!   with the details alone (the Halo, Hidden & Dangerous 2 and ArmA captures were taken with
//!   two requests for that reason) or not at all, so a details-only answer, or no answer to
//!   the first attempt, falls back to two requests: details (`FF 00 00`), then the tables
//!   (`00 FF FF`), each with its own request id and the usual resends. Without
//!   [`Options::players`] only the details are asked for.
//! - Not a reply: a datagram whose request id is not the current request's (a forged or late
//!   reply), or that does not decode as the sections asked for, is never taken as an answer;
//!   if nothing else comes, the query fails with the last decode error.
//! - A table reply that never comes: the status holds the details with `complete: false`.
//! - Mapping: `hostname` → name, `mapname` → map, `gametype` → game type, `gamever` →
//!   version, `numplayers` (else the rows) → player count, `maxplayers`, `password`; every
//!   other pair is a rule, in order (`gamename`, `hostport`, `gamemode` first). Player rows give
//!   name, score, ping and team: `team_` is the number of a row of the teams table (Halo,
//!   Hidden & Dangerous 2), given as that team's name; a cell that names no row (a name, a
//!   number past the table, no table) is kept as sent, trimmed, and an empty one (ArmA) is no
//!   team. Other columns go to the player's `extra` under their
//!   [`field_name`](query_specs::gamespy2::field_name). Team rows give name and score. Text is
//!   read in [`Options::encoding`], Windows-1252 by default.
//!
//! # Responder ([`GameSpy2Responder`])
//!
//! Answers each request with exactly the sections its flags ask for; see [`responder`].

pub mod responder;
mod status;

pub use responder::{GameSpy2Config, GameSpy2Responder};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::gamespy2::{Reply, Request, Requested};
use query_wire::{Decode, TextEncoding};

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::status::ServerStatus;

/// The encoding text is read in unless another is chosen: [`query_specs::gamespy2::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::gamespy2::ENCODING;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy2Session::new(target, options)))
}

/// Which request is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `FF FF FF`, sent once.
    Combined,
    /// `FF 00 00`.
    Details,
    /// `00 FF FF`, after the details arrived.
    Tables,
}

/// A GameSpy 2 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct GameSpy2Session {
    target: SocketAddr,
    encoding: TextEncoding,
    want_tables: bool,
    timeout: Duration,
    attempts: u32,
    retry: Retry,
    step: Step,
    request: Request,
    /// Accepted reply datagrams with the sections each holds.
    replies: Vec<(Vec<u8>, Requested)>,
    rtt: Option<Duration>,
    requests_sent: u32,
    outcome: Outcome<ServerStatus>,
}

impl GameSpy2Session {
    /// A query of `target` with `options` (timeout, retries, encoding, players).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let want_tables = options.players;
        let (step, requested) = if want_tables {
            (Step::Combined, Requested::ALL)
        } else {
            (Step::Details, Requested::DETAILS)
        };
        let mut session = GameSpy2Session {
            target,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            want_tables,
            timeout: options.timeout,
            attempts: options.attempts(),
            retry: Retry::from_options(options),
            step,
            request: Request::new(rand::random(), requested),
            replies: Vec::new(),
            rtt: None,
            requests_sent: 0,
            outcome: Outcome::new(),
        };
        session.start(step, requested);
        session
    }

    fn start(&mut self, step: Step, requested: Requested) {
        // A new id per request, so that a late answer to the previous one is not taken.
        let id = self
            .request
            .request_id
            .wrapping_add(1 + rand::random::<u16>() as u32);
        self.request = Request::new(id, requested);
        self.step = step;
        let waiting_for = match step {
            Step::Combined => "status request",
            Step::Details => "details request",
            Step::Tables => "player and team tables request",
        };
        // One attempt for everything at once: its silence is a reason to fall back, not to
        // resend.
        let attempts = if step == Step::Combined {
            1
        } else {
            self.attempts
        };
        self.retry = Retry::new(self.timeout, attempts);
        // A 10-byte declared packet always encodes.
        let _ = self.retry.start_encoded(waiting_for, &self.request, ());
    }

    fn finish(&mut self, why: Option<QueryError>) {
        self.outcome.finish(self.status_because(why));
    }

    /// The status; `why` says what ended the wait for the tables, should they be missing.
    fn status_because(&self, why: Option<QueryError>) -> Result<ServerStatus, QueryError> {
        let mut status = self.status()?;
        if let (Some(why), false) = (why, status.complete) {
            if let serde_json::Value::Object(raw) = &mut status.raw {
                raw.entry("players_error")
                    .or_insert_with(|| format!("no player table: {why}").into());
            }
        }
        Ok(status)
    }

    fn status(&self) -> Result<ServerStatus, QueryError> {
        let mut decoded = Vec::with_capacity(self.replies.len());
        for (bytes, requested) in &self.replies {
            decoded.push(Reply::from_bytes_with(bytes, *requested)?);
        }
        if decoded.iter().all(|r| r.details.is_none()) {
            return Err(QueryError::protocol(
                "no reply with the server details arrived",
            ));
        }
        let complete = !self.want_tables || decoded.iter().any(|r| r.players.is_some());
        Ok(status::from_replies(
            self.target,
            &decoded,
            self.encoding,
            self.rtt.unwrap_or_default(),
            complete,
            self.requests_sent,
        ))
    }
}

impl ClientSession for GameSpy2Session {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_timeout, poll_result);

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        let sent = self.outcome.poll_transmit(&mut self.retry, now);
        if sent.is_some() {
            self.requests_sent += 1;
        }
        sent
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let requested = self.request.requested();
        let decoded = match Reply::from_bytes_with(datagram, requested) {
            Ok(reply) => Ok(requested).map(|r| (reply.request_id, r)),
            // A server that answers only the first section of a combined request.
            Err(error) if self.step == Step::Combined => {
                match Reply::from_bytes_with(datagram, Requested::DETAILS) {
                    Ok(reply) => Ok((reply.request_id, Requested::DETAILS)),
                    Err(_) => Err(error),
                }
            }
            Err(error) => Err(error),
        };
        let (id, holds) = match decoded {
            Ok(found) => found,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if id != self.request.request_id {
            return;
        }
        let rtt = self.retry.finish(now);
        if self.rtt.is_none() {
            self.rtt = rtt;
        }
        self.replies.push((datagram.to_vec(), holds));
        if holds.details && self.want_tables && !holds.players {
            self.start(Step::Tables, Requested::TABLES);
        } else {
            self.finish(None);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.step == Step::Details {
            // Without the details there is nothing to show: the query fails.
            self.outcome.handle_timeout(&mut self.retry, now);
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            match self.step {
                Step::Combined => self.start(Step::Details, Requested::DETAILS),
                // The details are in: what arrived, incomplete, and why.
                _ => self.finish(Some(timeout)),
            }
        }
    }

    /// The details with whatever tables arrived; without them, `why` (or the last malformed
    /// datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        if self.replies.is_empty() {
            return Err(self.outcome.unanswered(why));
        }
        self.status_because(Some(why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Encode;

    fn target() -> SocketAddr {
        "192.0.2.7:2302".parse().unwrap()
    }

    fn options() -> Options {
        Options {
            timeout: Duration::from_millis(100),
            retries: 1,
            ..Options::default()
        }
    }

    /// The request the session sends now, decoded.
    fn sent(session: &mut GameSpy2Session, now: Instant) -> Request {
        let bytes = session
            .poll_transmit(now)
            .expect("a request is due")
            .to_vec();
        Request::from_bytes(&bytes).unwrap()
    }

    const DETAILS: &[u8] =
        b"hostname\0Fort\0mapname\0dm1\0numplayers\x002\0maxplayers\x008\0password\x001\0\0";
    const TABLES: &[u8] =
        b"\x00\x02player_\0score_\0ping_\0team_\0\0Ann\x003\x0050\x001\0Bo\x00 1\x0070\x00\0\x00\x01team_t\0score_t\0\0Red\x004\0";

    fn reply(id: u32, sections: &[&[u8]]) -> Vec<u8> {
        let mut bytes = vec![0];
        bytes.extend_from_slice(&id.to_be_bytes());
        for s in sections {
            bytes.extend_from_slice(s);
        }
        bytes
    }

    #[test]
    fn a_combined_answer_finishes_at_once() {
        let t0 = Instant::now();
        let mut session = GameSpy2Session::new(target(), &options());
        let request = sent(&mut session, t0);
        assert_eq!(request.requested(), Requested::ALL);
        session.on_reply(&reply(request.request_id, &[DETAILS, TABLES]), t0);
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.name, "Fort");
        assert_eq!(status.password, Some(true));
        let names: Vec<_> = status.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Ann", "Bo"]);
        assert_eq!(status.players[1].score, Some(1));
        // Team 1 is past the one-row table: kept as sent.
        assert_eq!(status.players[0].team.as_deref(), Some("1"));
        assert_eq!(status.players[1].team, None);
        assert_eq!(status.teams[0].name, "Red");
        assert_eq!(status.teams[0].score, Some(4));
        assert!(status.complete);
    }

    #[test]
    fn team_numbers_resolve_to_the_teams_table_and_names_are_kept() {
        let t0 = Instant::now();
        let options = Options {
            encoding: Some(TextEncoding::Windows1251),
            ..options()
        };
        let mut session = GameSpy2Session::new(target(), &options);
        let request = sent(&mut session, t0);
        let tables: &[u8] = b"\x00\x04player_\0team_\0\0A\x00 1 \0B\x000\0C\x00\xc0\xe4\0D\x007\0\
            \x00\x02team_t\0score_t\0\0\xd1\x002\0\xc1\x003\0";
        session.on_reply(&reply(request.request_id, &[DETAILS, tables]), t0);
        let status = session.poll_result().unwrap().unwrap();
        let teams: Vec<_> = status.players.iter().map(|p| p.team.as_deref()).collect();
        // Row 1, row 0, a name (in the chosen encoding), a number no row has.
        assert_eq!(teams, [Some("Б"), Some("С"), Some("Ад"), Some("7")]);
        assert_eq!(status.teams[0].name, "С");
    }

    #[test]
    fn details_only_falls_back_to_a_tables_request_with_a_new_id() {
        let t0 = Instant::now();
        let mut session = GameSpy2Session::new(target(), &options());
        let first = sent(&mut session, t0);
        session.on_reply(&reply(first.request_id, &[DETAILS]), t0);
        let tables = sent(&mut session, t0);
        assert_eq!(tables.requested(), Requested::TABLES);
        assert_ne!(tables.request_id, first.request_id);
        // A duplicate of the details answer, and a forged tables reply with the old id.
        session.on_reply(&reply(first.request_id, &[DETAILS]), t0);
        session.on_reply(&reply(first.request_id, &[TABLES]), t0);
        session.on_reply(b"garbage", t0);
        assert!(session.poll_result().is_none());
        session.on_reply(&reply(tables.request_id, &[TABLES]), t0);
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.players.len(), 2);
        assert!(status.complete);
        assert_eq!(status.raw["requests"], 2);
    }

    #[test]
    fn silence_falls_back_to_two_requests_which_are_resent_when_lost() {
        let t0 = Instant::now();
        let mut session = GameSpy2Session::new(target(), &options());
        sent(&mut session, t0);
        let t1 = session.poll_timeout().unwrap();
        session.handle_timeout(t1);
        let details = sent(&mut session, t1);
        assert_eq!(details.requested(), Requested::DETAILS);
        // Lost: resent with the same id.
        let t2 = session.poll_timeout().unwrap();
        session.handle_timeout(t2);
        assert_eq!(sent(&mut session, t2), details);
        // The tables answer arrives first (reordered): not an answer to this request.
        session.on_reply(&reply(details.request_id.wrapping_add(1), &[TABLES]), t2);
        session.on_reply(&reply(details.request_id, &[DETAILS]), t2);
        let tables = sent(&mut session, t2);
        session.on_reply(&reply(tables.request_id, &[TABLES]), t2);
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.players.len(), 2);
        assert!(status.complete);
    }

    #[test]
    fn tables_that_never_come_leave_the_details_incomplete() {
        let t0 = Instant::now();
        let mut session = GameSpy2Session::new(target(), &options());
        let first = sent(&mut session, t0);
        session.on_reply(&reply(first.request_id, &[DETAILS]), t0);
        let mut now = t0;
        while session.poll_result().is_none() {
            assert!(session.poll_transmit(now).is_some() || session.poll_timeout().is_some());
            now = session.poll_timeout().unwrap();
            session.handle_timeout(now);
            if let Some(result) = session.poll_result() {
                let status = result.unwrap();
                assert_eq!(status.name, "Fort");
                assert!(status.players.is_empty());
                assert!(!status.complete);
                let why = status.raw["players_error"].as_str().unwrap();
                assert!(why.starts_with("no player table: no reply"), "{why}");
                return;
            }
        }
        panic!("the session finished without its result");
    }

    #[test]
    fn only_garbage_fails_with_its_decode_error() {
        let t0 = Instant::now();
        let mut session = GameSpy2Session::new(target(), &options());
        let mut now = t0;
        loop {
            if session.poll_transmit(now).is_some() {
                session.on_reply(b"\x00\x01", now);
            }
            let Some(next) = session.poll_timeout() else {
                break;
            };
            now = next;
            session.handle_timeout(now);
        }
        let error = session.poll_result().unwrap().unwrap_err();
        assert!(matches!(error, QueryError::Malformed(_)), "{error}");
        // A request is a declared packet: 10 bytes.
        assert_eq!(Request::new(1, Requested::ALL).encoded_len(()), 10);
    }
}
