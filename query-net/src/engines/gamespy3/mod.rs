//! The GameSpy 3 family (Battlefield 2 and 2142, Crysis, Unreal Tournament 3) and GameSpy 4
//! (Minecraft's "Query"): the status client and the responder.
//!
//! # Client ([`client`], [`client_learning`], [`minecraft_client`], [`GameSpy3Session`])
//!
//! - Challenge: GameSpy 3 servers answer the query alone, GameSpy 4 servers want a challenge
//!   first. The session sends the query without one; a server that answers it with a
//!   [`ChallengeReply`], or does not answer its first attempt at all, is asked for a challenge
//!   (`FE FD 09`) and queried again with it. That the server wanted one is written to the
//!   session's [`Learned`], which the caller owns: a caller that queries the same target again
//!   with the same `Learned` (`gsq bulk`, the exporter, through a
//!   [`ServerMemory`](crate::learned::ServerMemory)) asks for the challenge straight away; a
//!   session with a fresh one (a one-off query, `gsq decode --status`) does not, whatever ran
//!   before in the process. Minecraft is always asked for it, with a session id masked with
//!   [`MINECRAFT_SESSION_MASK`], the bits Minecraft echoes.
//! - Parts: the reply's parts are joined by the specs' [`Reassembly`], in any order, duplicates
//!   dropped, tables continued across parts. Once a part arrived the session waits for the
//!   rest a short gap after the latest part ([`PartWait`]);
//!   a part that never comes ends the query with what arrived and `complete: false`.
//! - Not a reply: datagrams that do not decode, or carry another session id (a forged reply),
//!   are ignored; if nothing else comes the query fails with the last decode error.
//! - Mapping (in `status.rs`): `hostname` → name, `mapname` (else `map`) → map, `gametype` → game
//!   type, `gamever` (else `version`) → version, `numplayers`/`maxplayers`, `password`; the
//!   player table (`player_`, `score_`, `ping_`, `team_`; other columns in the player's
//!   `extra`), the team table (`team_t`, `score_t`), every key/value a rule. Text is decoded
//!   with [`Options::encoding`], Windows-1252 by default (Minecraft too: its captured
//!   servers write Latin-1).
//!
//! # Responder ([`GameSpy3Responder`])
//!
//! Issues and checks challenges and answers the full query from the server state; see
//! [`responder`].

pub mod responder;
mod status;

pub use responder::{GameSpy3Config, GameSpy3Responder, MAX_CHALLENGE_REPLY};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::gamespy3::{
    session_matches, ChallengeReply, ChallengeRequest, Pushed, QueryRequest, Reassembly, Request,
    FLAGS_SPLIT, MINECRAFT_SESSION_MASK,
};
use query_wire::{Decode, TextEncoding};

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::learned::Learned;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// The encoding text is read in unless another is chosen: [`query_specs::gamespy3::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::gamespy3::ENCODING;

/// Minecraft's default: the captured servers write `§` as the one byte A7 (Latin-1), so its
/// text is read as Windows-1252 too unless [`Options::encoding`] says otherwise.
pub const MINECRAFT_ENCODING: TextEncoding = TextEncoding::Windows1252;

/// A GameSpy 3 status query of `target` that knows nothing of it.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    client_learning(target, options, &Learned::new())
}

/// A GameSpy 3 status query of `target`, asking for the challenge first if `learned` says the
/// target wants one, and noting it there if it turns out to.
pub fn client_learning(
    target: SocketAddr,
    options: &Options,
    learned: &Learned,
) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy3Session::learning(
        target,
        options,
        learned.clone(),
    )))
}

/// A Minecraft ("GameSpy 4") status query of `target`.
pub fn minecraft_client(
    target: SocketAddr,
    options: &Options,
) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy3Session::minecraft(target, options)))
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The query went out without a challenge.
    Plain,
    /// Waiting for the challenge.
    Challenge,
    /// The query went out with this challenge (`None`: the server said none is needed).
    Query(Option<i32>),
}

/// A GameSpy 3/4 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct GameSpy3Session {
    target: SocketAddr,
    protocol: Protocol,
    encoding: TextEncoding,
    session_id: u32,
    retry: Retry,
    step: Step,
    /// What is known of the target; a challenge it wants is noted here.
    learned: Learned,
    /// The challenge was asked for first only because `learned` said the target wants one.
    remembered: bool,
    parts: Reassembly,
    first_rtt: Option<Duration>,
    /// Once a part arrived: the wait for the rest.
    rest: PartWait,
    outcome: Outcome<ServerStatus>,
}

impl GameSpy3Session {
    /// A GameSpy 3 query of `target` that knows nothing of it: the query goes out without a
    /// challenge.
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        Self::learning(target, options, Learned::new())
    }

    /// A GameSpy 3 query of `target`: without a challenge unless `learned` says the target
    /// wants one; a challenge it turns out to want is noted in `learned`.
    pub fn learning(target: SocketAddr, options: &Options, learned: Learned) -> Self {
        let id = rand::random::<u32>() & MINECRAFT_SESSION_MASK;
        let challenge = learned.wants_challenge();
        let mut session = Self::build(target, options, Protocol::GameSpy3, id, challenge);
        session.learned = learned;
        session
    }

    /// A Minecraft query of `target`: always with the challenge.
    pub fn minecraft(target: SocketAddr, options: &Options) -> Self {
        let id = rand::random::<u32>() & MINECRAFT_SESSION_MASK;
        Self::build(target, options, Protocol::MinecraftQuery, id, true)
    }

    /// A query with a chosen session id (tests and replays); `challenge_first` asks for the
    /// challenge before the query.
    pub fn with_session_id(
        target: SocketAddr,
        options: &Options,
        protocol: Protocol,
        session_id: u32,
        challenge_first: bool,
    ) -> Self {
        Self::build(target, options, protocol, session_id, challenge_first)
    }

    fn build(
        target: SocketAddr,
        options: &Options,
        protocol: Protocol,
        session_id: u32,
        challenge_first: bool,
    ) -> Self {
        let default = match protocol {
            Protocol::MinecraftQuery => MINECRAFT_ENCODING,
            _ => DEFAULT_ENCODING,
        };
        let mut session = GameSpy3Session {
            target,
            protocol,
            encoding: options.encoding_or(default),
            session_id,
            retry: Retry::from_options(options),
            step: Step::Plain,
            learned: Learned::new(),
            remembered: challenge_first && protocol == Protocol::GameSpy3,
            parts: Reassembly::for_session(session_id),
            first_rtt: None,
            rest: PartWait::new(options.timeout),
            outcome: Outcome::new(),
        };
        if challenge_first {
            session.ask_challenge();
        } else {
            session.query(None, Step::Plain);
        }
        session
    }

    /// The session id the requests carry.
    pub fn session_id(&self) -> u32 {
        self.session_id
    }

    fn ask_challenge(&mut self) {
        let request = Request::Challenge(ChallengeRequest {
            session_id: self.session_id,
            padding: None,
        });
        self.step = Step::Challenge;
        self.start("challenge request", &request);
    }

    fn query(&mut self, challenge: Option<i32>, step: Step) {
        let request = Request::Query(QueryRequest::new(self.session_id, challenge, FLAGS_SPLIT));
        self.step = step;
        self.start("query request", &request);
    }

    fn start(&mut self, waiting_for: &'static str, request: &Request) {
        if let Err(error) = self.retry.start_encoded(waiting_for, request, ()) {
            // A fixed-size request always encodes; should it not, the query ends with why.
            self.outcome.finish(Err(QueryError::Malformed(error)));
        }
    }

    fn status(&self) -> Result<ServerStatus, QueryError> {
        let reply = self.parts.reply()?;
        let mut status = status::from_reply(
            self.protocol,
            self.target,
            &reply,
            self.encoding,
            self.first_rtt.unwrap_or_default(),
        );
        status.note_refused_part(self.outcome.malformed());
        Ok(status)
    }

    fn on_challenge(&mut self, reply: &ChallengeReply<'_>) {
        let challenge = match reply.challenge() {
            Ok(challenge) => challenge,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if self.step == Step::Plain && self.protocol == Protocol::GameSpy3 {
            self.learned.note_wants_challenge();
        }
        self.query(challenge, Step::Query(challenge));
    }

    fn on_part(&mut self, datagram: &[u8], now: Instant) {
        match self.parts.push(datagram) {
            Ok(Pushed::New) => {}
            Ok(Pushed::Duplicate | Pushed::OtherSession) => return,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        }
        if self.first_rtt.is_none() {
            self.first_rtt = Some(self.retry.finish(now).unwrap_or_default());
        }
        if self.parts.is_complete() {
            self.outcome.finish(self.status());
            return;
        }
        self.rest
            .part_arrived(self.first_rtt.unwrap_or_default(), now);
    }

    fn has_parts(&self) -> bool {
        self.parts.parts_received() > 0
    }
}

impl ClientSession for GameSpy3Session {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_result);

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.has_parts() {
            return None;
        }
        self.outcome.poll_transmit(&mut self.retry, now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        match datagram.first() {
            Some(0x09) => match ChallengeReply::from_bytes(datagram) {
                Ok(reply) if !session_matches(self.session_id, reply.session_id) => {}
                // A challenge after parts arrived, or a second one, changes nothing.
                Ok(reply) if matches!(self.step, Step::Plain | Step::Challenge) => {
                    if !self.has_parts() {
                        self.on_challenge(&reply);
                    }
                }
                Ok(_) => {}
                Err(error) => self.outcome.note_malformed(error),
            },
            Some(0x00) => self.on_part(datagram, now),
            _ => {
                self.outcome.note_malformed(query_wire::Error::new(
                    query_wire::ErrorKind::Invalid("not a GameSpy 3 reply"),
                    0,
                ));
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.rest.poll_timeout(&self.outcome, &self.retry)
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.has_parts() {
            if self.rest.is_over(now) {
                self.outcome.finish(self.status());
            }
            return;
        }
        match self.retry.handle_timeout(now) {
            // The query alone went unanswered: the server may want a challenge first.
            Ok(()) if self.step == Step::Plain && self.retry.poll_timeout().is_none() => {
                self.ask_challenge();
            }
            // Asked for a challenge from memory and got none: the server may have changed.
            Ok(())
                if self.remembered
                    && self.step == Step::Challenge
                    && self.retry.poll_timeout().is_none() =>
            {
                self.remembered = false;
                self.query(None, Step::Query(None));
            }
            Ok(()) => {}
            Err(timeout) => {
                let error = self.outcome.unanswered(timeout);
                self.outcome.finish(Err(error));
            }
        }
    }

    /// What arrived (`complete: false`); without any part, `why` (or the last malformed
    /// datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if !self.has_parts() {
            return self.outcome.give_up(why);
        }
        self.outcome.end().unwrap_or_else(|| self.status())
    }
}
