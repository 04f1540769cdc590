//! Valve A2S: the status client ([`A2sClient`]) and the responder ([`A2sResponder`]).
//!
//! # Client
//!
//! Asks INFO, then PLAYER (unless [`Options::players`] is off), then RULES (unless
//! [`Options::rules`] is off), one after the other:
//!
//! - **Challenges.** A server that wants one answers `S2C_CHALLENGE`, and the request is sent
//!   again carrying it. INFO is sent without one first (servers before December 2020 answer it
//!   directly); PLAYER and RULES carry the latest challenge the server gave, or `-1`, so a
//!   server that keeps one challenge per client answers them at once. A server that answers
//!   a request with a new challenge more than [`MAX_CHALLENGES`] times is given up on.
//! - **Split replies** are joined by the specs' [`Reassembly`]: parts in any order, duplicates,
//!   all three header forms, bzip2 with its size capped and CRC32 checked. Parts of another
//!   reply id are left out.
//! - **What counts.** Only a reply of the kind asked for ends a step; a late reply to an earlier
//!   step, GoldSrc's second INFO reply, or a datagram that does not decode is ignored (anyone
//!   can forge a datagram from the server's address), and the step waits on.
//! - **Partial answers.** INFO must arrive whole, or the query fails (with the decode error of
//!   the last bad datagram, if one came, else the timeout). PLAYER and RULES are extras: when
//!   one fails, the status is returned without it with `complete: false` and the reason in
//!   `raw.players_error` / `raw.rules_error`: what the latest datagram that made no reply was
//!   (a split reply with a bad CRC32 or over the decompression cap), or which parts of a split
//!   reply never came, else that nothing came. Where a split reply lost a later part, or a server
//!   cut a reply mid-row, the rows and pairs that arrived whole are kept (`complete: false`).
//! - Text is decoded with [`Options::encoding`], UTF-8 by default (what Source servers send);
//!   invalid bytes become U+FFFD rather than failing the query.
//!
//! The mapping into [`ServerStatus`] is in [`status_from_info`], [`add_players`] and
//! [`add_rules`].
//!
//! # Responder
//!
//! [`A2sResponder`] answers INFO, PLAYER and RULES from a [`SharedState`](crate::state::SharedState):
//!
//! - **Challenges.** PLAYER and RULES are answered only with a valid challenge, INFO too by
//!   default ([`A2sConfig::info_challenge`]); without one the reply is the 9-byte
//!   `S2C_CHALLENGE`, no longer than the request, so the port cannot amplify a forged
//!   request. A challenge is a keyed MAC of the source's IP and port and the time window:
//!   nothing is kept per client, and one challenge serves every request of its window.
//! - **Replies** are encoded once per state snapshot; a reply longer than
//!   [`A2sConfig::split_size`] (1400) goes out in Source-form parts, never compressed, with a
//!   new id per reply. Only requests of the exact size are answered; anything else is dropped
//!   as malformed.
//! - **Mapping.** Name, map, version, slots, password and game port from the state; the game
//!   name is [`A2sConfig::game`] or else the state's game type (what the client reads back as
//!   the game type). Text goes out as UTF-8, cut to 255 bytes and at any NUL. PLAYER has at
//!   most 255 rows, scores saturated to i32 and durations 0 (the state has none); counts past
//!   255 go in the keywords as `cp<N>,mp<N>`, as Rust does. Rules are sent as text, flags as
//!   `1`/`0` like Source cvars. Rows and rules past 32 KiB of reply are left out.

pub(crate) mod responder;
mod status;

pub use responder::{A2sConfig, A2sResponder, SPLIT_SIZE};

pub use status::{
    add_players, add_rules, players_before_cut, rules_before_cut, status_from_info, InfoReply,
};

use std::net::SocketAddr;
use std::time::Instant;

use query_specs::a2s::{
    Challenge, InfoRequest, Reassembly, Reply, Request, INFO_PAYLOAD, KIND_CHALLENGE, KIND_INFO,
    KIND_INFO_DETAILED, KIND_PLAYERS, KIND_RULES, NO_CHALLENGE, SINGLE_BYTES, SPLIT_BYTES,
};
use query_wire::{Decode, TextEncoding};
use serde_json::Value;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::status::ServerStatus;

/// The encoding A2S text is read in unless another is chosen.
pub const DEFAULT_ENCODING: TextEncoding = TextEncoding::Utf8;

/// How many challenges one request may be answered with before the server is given up on: a
/// server may renew a challenge once or twice, one that never stops is misbehaving (or a
/// forger is answering for it).
pub const MAX_CHALLENGES: u32 = 4;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(A2sClient::new(target, options)))
}

/// The request of each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Info,
    Players,
    Rules,
}

impl Step {
    fn waiting_for(self) -> &'static str {
        match self {
            Step::Info => "info request",
            Step::Players => "player request",
            Step::Rules => "rules request",
        }
    }

    /// The reply kinds that answer the step.
    fn answered_by(self, kind: u8) -> bool {
        match self {
            Step::Info => kind == KIND_INFO || kind == KIND_INFO_DETAILED,
            Step::Players => kind == KIND_PLAYERS,
            Step::Rules => kind == KIND_RULES,
        }
    }

    /// The name of the `raw` key that says why the step's answer is missing or partial.
    fn error_key(self) -> &'static str {
        match self {
            Step::Info => "info_error",
            Step::Players => "players_error",
            Step::Rules => "rules_error",
        }
    }
}

/// One A2S status query as a sans-I/O state machine; see the [module](self) docs.
///
/// ```
/// use std::time::Instant;
/// use query_net::engine::ClientSession;
/// use query_net::engines::a2s::A2sClient;
/// use query_net::Options;
///
/// let mut session = A2sClient::new("127.0.0.1:27015".parse().unwrap(), &Options::default());
/// let request = session.poll_transmit(Instant::now()).unwrap();
/// assert_eq!(request, b"\xff\xff\xff\xffTSource Engine Query\0");
/// ```
#[derive(Debug)]
pub struct A2sClient {
    target: SocketAddr,
    encoding: TextEncoding,
    players: bool,
    rules: bool,
    retry: Retry,
    step: Step,
    /// The latest challenge the server gave, sent with every later request.
    challenge: Option<i32>,
    /// Challenges received for the current step.
    challenges: u32,
    parts: Reassembly,
    /// `--max-reply-bytes`: also the most a compressed reply may decompress to.
    max_reply_bytes: usize,
    /// The app id INFO gave (0 before, and for GoldSrc's detailed reply): PLAYER decodes by it.
    app_id: u16,
    /// The status being built, once INFO is in.
    status: Option<ServerStatus>,
    outcome: Outcome<ServerStatus>,
}

impl A2sClient {
    /// A query of `target` with `options` (timeout, retries, players, rules, encoding).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let mut session = A2sClient {
            target,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            players: options.players,
            rules: options.rules,
            retry: Retry::from_options(options),
            step: Step::Info,
            challenge: None,
            challenges: 0,
            parts: Reassembly::with_max_decompressed(options.max_reply_bytes),
            max_reply_bytes: options.max_reply_bytes,
            app_id: 0,
            status: None,
            outcome: Outcome::new(),
        };
        session.start(Step::Info);
        session
    }

    fn start(&mut self, step: Step) {
        self.step = step;
        self.challenges = 0;
        self.parts = Reassembly::with_max_decompressed(self.max_reply_bytes);
        self.outcome.forget_malformed();
        self.send_request();
    }

    /// (Re)starts the current step's request with the challenge known now.
    fn send_request(&mut self) {
        let challenge = Challenge {
            challenge: self.challenge.unwrap_or(NO_CHALLENGE),
        };
        let request = match self.step {
            Step::Info => Request::Info(InfoRequest {
                payload: INFO_PAYLOAD,
                challenge: self.challenge,
            }),
            Step::Players => Request::Players(challenge),
            Step::Rules => Request::Rules(challenge),
        };
        if let Err(e) = self
            .retry
            .start_encoded(self.step.waiting_for(), &request, ())
        {
            self.outcome.finish(Err(QueryError::protocol(format!(
                "cannot encode the {}: {e}",
                self.step.waiting_for()
            ))));
        }
    }

    /// A whole reply: a datagram, or a split reply joined.
    fn on_whole(&mut self, reply: &[u8], now: Instant) {
        let Some(&kind) = reply.get(SINGLE_BYTES.len()) else {
            return;
        };
        if kind == KIND_CHALLENGE {
            self.on_challenge(reply, now);
        } else if self.step.answered_by(kind) {
            self.on_answer(reply, now);
        }
        // Anything else answers an earlier step or nothing asked.
    }

    fn on_challenge(&mut self, reply: &[u8], now: Instant) {
        let challenge = match Reply::from_bytes_with(reply, 0) {
            Ok(Reply::Challenge(Challenge { challenge })) => challenge,
            Ok(_) => return,
            Err(e) => {
                self.outcome.note_malformed(e);
                return;
            }
        };
        self.challenges += 1;
        if self.challenges > MAX_CHALLENGES {
            let message = format!(
                "the server answered the {} with a new challenge {} times",
                self.step.waiting_for(),
                self.challenges
            );
            let error = QueryError::server_reply(QueryError::protocol(message));
            self.give_up_step(error, now);
            return;
        }
        self.challenge = Some(challenge);
        self.send_request();
    }

    fn on_answer(&mut self, reply: &[u8], now: Instant) {
        let decoded = Reply::from_bytes_with(reply, self.app_id);
        if let (Step::Info, Err(e)) = (self.step, &decoded) {
            // Anyone can forge a datagram from the server's address: wait for the real one.
            self.outcome.note_malformed(e.clone());
            return;
        }
        self.outcome.answered(&mut self.retry, now);
        match decoded {
            Ok(Reply::Info(info)) => {
                self.app_id = info.app_id;
                let info = InfoReply::Info(&info);
                self.status = Some(status_from_info(self.target, info, self.encoding));
            }
            Ok(Reply::InfoDetailed(info)) => {
                let info = InfoReply::Detailed(&info);
                self.status = Some(status_from_info(self.target, info, self.encoding));
            }
            Ok(Reply::Players(list)) => {
                if let Some(status) = &mut self.status {
                    add_players(status, &list, self.encoding);
                }
            }
            Ok(Reply::Rules(rules)) => {
                if let Some(status) = &mut self.status {
                    add_rules(status, rules.count, &rules.rules, self.encoding);
                }
            }
            // Only a challenge, which `on_whole` took; the step's kinds were checked there.
            Ok(Reply::Challenge(_)) => return,
            // A server that cuts its list mid-row does so every time: keep what is whole.
            Err(e) => self.keep_before_cut(reply, &e.to_string()),
        }
        self.next_step();
    }

    /// Keeps the rows or pairs of the current step's reply that arrived whole, and says why the
    /// rest is missing.
    fn keep_before_cut(&mut self, reply: &[u8], why: &str) {
        let encoding = self.encoding;
        let step = self.step;
        let Some(status) = &mut self.status else {
            return;
        };
        match step {
            Step::Players => {
                if let Some((count, rows)) = players_before_cut(reply) {
                    status::add_rows(status, count, &rows, encoding);
                }
            }
            Step::Rules => {
                if let Some((count, rules)) = rules_before_cut(reply) {
                    add_rules(status, count, &rules, encoding);
                }
            }
            Step::Info => {}
        }
        status.complete = false;
        status::set_raw(status, step.error_key(), Value::from(why));
    }

    /// The current step failed for good: INFO ends the query, the others leave their part out
    /// (keeping the whole rows of a split reply's first parts).
    fn give_up_step(&mut self, error: QueryError, now: Instant) {
        if self.step == Step::Info {
            self.outcome.finish(Err(error));
            return;
        }
        self.retry.finish(now);
        self.leave_out_step(&error);
        self.next_step();
    }

    /// Keeps the whole rows of the current step's parts, if any came, and says why the rest
    /// is missing.
    fn leave_out_step(&mut self, why: &QueryError) {
        let prefix = self.parts.received_prefix();
        match prefix {
            Some(prefix) => self.keep_before_cut(&prefix, &why.to_string()),
            None => {
                if let Some(status) = &mut self.status {
                    status.complete = false;
                    status::set_raw(status, self.step.error_key(), why.to_string().into());
                }
            }
        }
    }

    fn next_step(&mut self) {
        let next = match self.step {
            Step::Info if self.players => Some(Step::Players),
            Step::Info | Step::Players if self.rules => Some(Step::Rules),
            _ => None,
        };
        match next {
            Some(step) => self.start(step),
            None => {
                let status = self.final_status();
                self.outcome.finish(status);
            }
        }
    }

    /// Why the current step got no answer: the last datagram that did not make one (a split
    /// reply with a bad CRC32 or over the decompression cap, a reply that does not decode), or
    /// the parts of a split reply that never came, or else `unanswered` as it is.
    fn why_unanswered(&mut self, unanswered: QueryError) -> QueryError {
        if self.outcome.malformed().is_some() {
            return self.outcome.unanswered(unanswered);
        }
        let missing = self.parts.missing_parts();
        if missing.is_empty() {
            return unanswered;
        }
        QueryError::protocol(format!(
            "{unanswered}: parts {missing:?} of its split reply never arrived"
        ))
    }

    /// The status built so far, with the best round trip.
    fn final_status(&mut self) -> Result<ServerStatus, QueryError> {
        let mut status = self.status.take().ok_or_else(|| {
            QueryError::protocol("the query ended before the server's INFO reply")
        })?;
        status.ping_ms = self.outcome.best_rtt().as_secs_f64() * 1000.0;
        Ok(status)
    }
}

impl ClientSession for A2sClient {
    type Output = ServerStatus;

    bookkeeping!(
        target,
        waiting_for,
        poll_transmit,
        poll_timeout,
        poll_result
    );

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if datagram.starts_with(SINGLE_BYTES) {
            self.on_whole(datagram, now);
        } else if datagram.starts_with(SPLIT_BYTES) {
            match self.parts.push(datagram) {
                Ok(Some(whole)) => self.on_whole(&whole, now),
                Ok(None) => {}
                Err(e) => self.outcome.note_malformed(e),
            }
        }
        // Anything else is no A2S reply at all.
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        match self.retry.handle_timeout(now) {
            // A resend's reply carries a new id; the parts of both are kept apart by id, and
            // whichever completes first answers.
            Ok(()) => {}
            Err(timeout) => {
                let error = self.why_unanswered(timeout);
                self.give_up_step(error, now);
            }
        }
    }

    /// With the INFO reply in: the status with what the current step got (the whole rows of
    /// its split parts), `complete: false`, `why` under the step's error key; the steps not
    /// begun are left out. Before it: `why`.
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<ServerStatus, QueryError> {
        self.retry.finish(now);
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        if self.step == Step::Info {
            return Err(why);
        }
        let why = match self.outcome.malformed() {
            Some(bad) => QueryError::protocol(format!(
                "{why}; the latest datagram that made no reply: {bad}"
            )),
            None => self.why_unanswered(why),
        };
        self.leave_out_step(&why);
        self.final_status()
    }
}
