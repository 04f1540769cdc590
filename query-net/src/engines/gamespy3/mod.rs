//! The GameSpy 3 family (Battlefield 2 and 2142, Crysis, Unreal Tournament 3) and GameSpy 4
//! (Minecraft's "Query"): the status client and the responder.
//!
//! # Client ([`client`], [`minecraft_client`], [`GameSpy3Session`])
//!
//! - Challenge: GameSpy 3 servers answer the query alone, GameSpy 4 servers want a challenge
//!   first. The session sends the query without one; a server that answers it with a
//!   [`ChallengeReply`], or does not answer its first attempt at all, is asked for a challenge
//!   (`FE FD 09`) and queried again with it. Which targets needed one is remembered
//!   ([`CHALLENGE_MEMORY`] targets at most), so querying the same target again (`gsq bulk`,
//!   `gsq watch`) asks for the challenge straight away. Minecraft is always asked for it, with
//!   a session id masked with [`MINECRAFT_SESSION_MASK`], the bits Minecraft echoes.
//! - Parts: the reply's parts are joined by the specs' [`Reassembly`], in any order, duplicates
//!   dropped, tables continued across parts. Once the first part arrived the session waits for
//!   the rest until that attempt's timeout (at least a little while after the latest part);
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

pub use responder::{GameSpy3Config, GameSpy3Responder};

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use query_specs::gamespy3::{
    session_matches, ChallengeReply, ChallengeRequest, Pushed, QueryRequest, Reassembly, Request,
    FLAGS_SPLIT, MINECRAFT_SESSION_MASK,
};
use query_wire::{Decode, TextEncoding};

use super::StatusSession;
use crate::engine::{ClientSession, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// The encoding text is read in unless another is chosen: [`query_specs::gamespy3::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::gamespy3::ENCODING;

/// Minecraft's default: the captured servers write `§` as the one byte A7 (Latin-1), so its
/// text is read as Windows-1252 too unless [`Options::encoding`] says otherwise.
pub const MINECRAFT_ENCODING: TextEncoding = TextEncoding::Windows1252;

/// How many targets that needed a challenge are remembered; past it the memory starts over.
pub const CHALLENGE_MEMORY: usize = 4096;

/// The least time waited for a missing part after the latest part.
const MIN_PART_GAP: Duration = Duration::from_millis(50);

/// A GameSpy 3 status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy3Session::new(target, options)))
}

/// A Minecraft ("GameSpy 4") status query of `target`.
pub fn minecraft_client(
    target: SocketAddr,
    options: &Options,
) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy3Session::minecraft(target, options)))
}

/// Targets that answered a query without a challenge with a challenge reply, or not at all.
fn challenge_memory() -> &'static Mutex<HashSet<SocketAddr>> {
    static MEMORY: OnceLock<Mutex<HashSet<SocketAddr>>> = OnceLock::new();
    MEMORY.get_or_init(|| Mutex::new(HashSet::new()))
}

fn needs_challenge(target: SocketAddr) -> bool {
    challenge_memory()
        .lock()
        .map(|held| held.contains(&target))
        .unwrap_or(false)
}

fn remember_challenge(target: SocketAddr) {
    if let Ok(mut held) = challenge_memory().lock() {
        if held.len() >= CHALLENGE_MEMORY {
            held.clear();
        }
        held.insert(target);
    }
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
    Done,
}

/// A GameSpy 3/4 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct GameSpy3Session {
    target: SocketAddr,
    protocol: Protocol,
    encoding: TextEncoding,
    timeout: Duration,
    session_id: u32,
    retry: Retry,
    step: Step,
    /// The challenge was asked for first only because this target needed one before.
    remembered: bool,
    parts: Reassembly,
    first_rtt: Option<Duration>,
    attempt_end: Option<Instant>,
    rest_until: Option<Instant>,
    malformed: Option<query_wire::Error>,
    result: Option<Result<ServerStatus, QueryError>>,
}

impl GameSpy3Session {
    /// A GameSpy 3 query of `target`: without a challenge unless the target needed one before.
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let id = rand::random::<u32>() & MINECRAFT_SESSION_MASK;
        let challenge = needs_challenge(target);
        Self::build(target, options, Protocol::GameSpy3, id, challenge)
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
            timeout: options.timeout,
            session_id,
            retry: Retry::from_options(options),
            step: Step::Plain,
            remembered: challenge_first && protocol == Protocol::GameSpy3,
            parts: Reassembly::for_session(session_id),
            first_rtt: None,
            attempt_end: None,
            rest_until: None,
            malformed: None,
            result: None,
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
        self.start("challenge reply", &request);
    }

    fn query(&mut self, challenge: Option<i32>, step: Step) {
        let request = Request::Query(QueryRequest::new(self.session_id, challenge, FLAGS_SPLIT));
        self.step = step;
        self.start("query reply", &request);
    }

    fn start(&mut self, waiting_for: &'static str, request: &Request) {
        if let Err(error) = self.retry.start_encoded(waiting_for, request, ()) {
            // A fixed-size request always encodes; should it not, the query ends with why.
            self.step = Step::Done;
            self.result = Some(Err(QueryError::Malformed(error)));
        }
    }

    fn finish(&mut self, now: Instant) {
        self.retry.finish(now);
        self.step = Step::Done;
        self.result = Some(self.status());
    }

    fn status(&self) -> Result<ServerStatus, QueryError> {
        let reply = self.parts.reply()?;
        Ok(status::from_reply(
            self.protocol,
            self.target,
            &reply,
            self.encoding,
            self.first_rtt.unwrap_or_default(),
        ))
    }

    fn on_challenge(&mut self, reply: &ChallengeReply<'_>) {
        let challenge = match reply.challenge() {
            Ok(challenge) => challenge,
            Err(error) => {
                self.malformed = Some(error);
                return;
            }
        };
        if self.step == Step::Plain && self.protocol == Protocol::GameSpy3 {
            remember_challenge(self.target);
        }
        self.query(challenge, Step::Query(challenge));
    }

    fn on_part(&mut self, datagram: &[u8], now: Instant) {
        match self.parts.push(datagram) {
            Ok(Pushed::New) => {}
            Ok(Pushed::Duplicate | Pushed::OtherSession) => return,
            Err(error) => {
                self.malformed = Some(error);
                return;
            }
        }
        if self.first_rtt.is_none() {
            self.attempt_end = self.retry.poll_timeout();
            self.first_rtt = Some(self.retry.finish(now).unwrap_or_default());
        }
        if self.parts.is_complete() {
            self.finish(now);
            return;
        }
        let gap = self
            .first_rtt
            .unwrap_or_default()
            .saturating_mul(4)
            .max(MIN_PART_GAP)
            .min(self.timeout.max(MIN_PART_GAP));
        let attempt_end = self.attempt_end.unwrap_or(now);
        self.rest_until = Some(attempt_end.max(now + gap));
    }

    fn has_parts(&self) -> bool {
        self.parts.parts_received() > 0
    }
}

impl ClientSession for GameSpy3Session {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.step == Step::Done || self.has_parts() {
            return None;
        }
        self.retry.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.step == Step::Done {
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
                Err(error) => self.malformed = Some(error),
            },
            Some(0x00) => self.on_part(datagram, now),
            _ => {
                self.malformed = Some(query_wire::Error::new(
                    query_wire::ErrorKind::Invalid("not a GameSpy 3 reply"),
                    0,
                ));
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self.step {
            Step::Done => None,
            _ if self.has_parts() => self.rest_until,
            _ => self.retry.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.step == Step::Done {
            return;
        }
        if self.has_parts() {
            if self.rest_until.is_some_and(|until| now >= until) {
                self.finish(now);
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
                let error = self.malformed.take().map_or(timeout, QueryError::Malformed);
                self.step = Step::Done;
                self.result = Some(Err(error));
            }
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }

    /// What arrived (`complete: false`); without any part, `why` (or the last malformed
    /// datagram's error).
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<ServerStatus, QueryError> {
        let result = if self.has_parts() {
            self.status()
        } else {
            Err(self.malformed.take().map_or(why, QueryError::Malformed))
        };
        self.retry.finish(now);
        self.step = Step::Done;
        result
    }
}
