//! Teeworlds 0.6 and 0.7, and DDNet: the server info client and the responder.
//!
//! # Client ([`client`], [`TeeworldsSession`])
//!
//! Tries both generations at once, since nothing in an address says which one listens:
//!
//! - 0.6 and DDNet: DDNet's form of `gie3` (`xe`, a random 24-bit token), read with the
//!   specs' [`Reply`]: DDNet servers answer with the extended info (`iext`, then `iex+`
//!   datagrams while clients remain), 0.6 servers with `inf3`, echoing only the token's low
//!   byte.
//! - 0.7 ([`query_specs::teeworlds::seven`]): the token request, then, once the server's
//!   token came, the info request carrying it. A 0.7 server drops the 0.6 request, and a
//!   0.6 server the 0.7 ones; DDNet answers both, its extended reply first (one round trip
//!   against two), and the first reply of either kind decides: once a 0.6 / DDNet datagram
//!   came, the 0.7 exchange stops and its packets are ignored. Each request is resent on its
//!   own timeout; the query fails when both have run out of attempts, naming the 0.7 info
//!   request when the server answered the 0.7 token request (a 0.7 server that stopped
//!   there), else the 0.6 request.
//!
//! - Strict: a reply that does not echo this query's token (the whole token for `iext` and
//!   `iex+`, its low byte for `inf3`) is ignored, as is anything that does not decode; if
//!   nothing else comes the query fails with the last such datagram's decode error.
//! - Joining datagrams: no datagram says how many follow. The reply is whole when its
//!   datagrams list as many clients as `iext` counts; until then the session waits a short gap
//!   after the latest datagram ([`PartWait`]). Datagrams are kept by their number
//!   ([`NumberedParts`]: each once, at most [`MAX_PARTS`], within
//!   [`Options::max_reply_bytes`]); `iex+` datagrams that come before `iext` are kept.
//! - Cut short: a wait that ends (or a deadline) before every client arrived returns what
//!   came with `complete: false`, the clients missing in `raw.players_missing`, and the reason
//!   in `raw.incomplete`.
//! - 0.7, strict: the token reply and the info reply must carry the exchange's random 32-bit
//!   token, and the info reply the browser's token too (see [`query_specs::teeworlds::seven`]).
//! - Mapping: name, map, game type and version as sent; players → players (clients in the
//!   game), player slots → max players, flag 1 → password; every client (spectators too) →
//!   players, each with score, and clan, country and `is_player` in `extra` (0.7 adds `bot`
//!   for a bot); clients, client slots, flags, (DDNet) the map's CRC and size and (0.7) the
//!   skill level and host name → rules; `raw.reply` says which reply came (`inf3`, `iext`,
//!   `inf3 0.7`). Text is decoded with [`Options::encoding`], UTF-8 by default.
//!
//! # Responder ([`TeeworldsResponder`])
//!
//! Answers both forms of 0.6's `gie3` and 0.7's token exchange from the server state; see
//! [`responder`].

pub mod responder;
mod seven;
mod status;

pub use responder::{TeeworldsConfig, TeeworldsResponder};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::teeworlds::{seven as spec7, Reply, Request};
use query_wire::parts::{Filed, NumberedParts};
use query_wire::{Decode, ErrorKind, TextEncoding};

use self::seven::{SevenExchange, Step};

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;
use crate::status::ServerStatus;

/// The encoding text is read in unless another is chosen: [`query_specs::teeworlds::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::teeworlds::ENCODING;

/// The most datagrams one reply may take: DDNet's 128 clients fit in five.
pub const MAX_PARTS: u32 = 32;

/// A server info query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(TeeworldsSession::new(target, options)?))
}

/// A Teeworlds / DDNet server info query as a sans-I/O state machine; see the
/// [module](self) docs.
#[derive(Debug)]
pub struct TeeworldsSession {
    target: SocketAddr,
    token: u32,
    encoding: TextEncoding,
    /// The 0.6 / DDNet request.
    retry: Retry,
    /// Its attempts ran out.
    vanilla_timeout: Option<QueryError>,
    /// The 0.7 token exchange, run beside it.
    seven: SevenExchange,
    /// The datagrams of an extended reply, by number (`iext` is 0).
    parts: NumberedParts<Vec<u8>>,
    /// Clients the datagrams held list, and how many `iext` counts.
    listed: usize,
    expected: Option<usize>,
    /// The latest datagram refused as a part (over a cap, a number seen with other bytes).
    refused: Option<QueryError>,
    first_rtt: Option<Duration>,
    rest: PartWait,
    outcome: Outcome<ServerStatus>,
}

impl TeeworldsSession {
    /// A query of `target` with `options` (timeout, retries, encoding, byte cap).
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let token = rand::random::<u32>() & 0x00ff_ffff;
        let mut retry = Retry::from_options(options);
        retry.start_encoded("server info request", &Request::extended(token), ())?;
        Ok(TeeworldsSession {
            target,
            token,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            retry,
            vanilla_timeout: None,
            seven: SevenExchange::new(options)?,
            parts: NumberedParts::new(MAX_PARTS, options.max_reply_bytes),
            listed: 0,
            expected: None,
            refused: None,
            first_rtt: None,
            rest: PartWait::new(options.timeout),
            outcome: Outcome::new(),
        })
    }

    /// The status from the datagrams held; `cut` when the wait ended early (a deadline).
    fn status(&self, cut: bool) -> Result<ServerStatus, QueryError> {
        let datagrams: Vec<&[u8]> = self.parts.in_order().map(Vec::as_slice).collect();
        let mut dropped = Vec::new();
        let missing = self.parts.missing();
        if !missing.is_empty() {
            dropped.push(format!(
                "datagram(s) {missing:?} of the reply never arrived"
            ));
        }
        if cut {
            dropped
                .push("the query ended while waiting for more datagrams of the reply".to_owned());
        }
        let mut status = status::from_extended(
            self.target,
            &datagrams,
            self.encoding,
            self.first_rtt.unwrap_or_default(),
            dropped,
        )?;
        status.note_refused_part(self.refused.as_ref());
        Ok(status)
    }

    /// A 0.7 packet: the token reply moves the exchange on, the info reply ends the query.
    fn on_seven(&mut self, reply: &spec7::Reply<'_>, now: Instant) {
        if self.first_rtt.is_some() {
            // A DDNet server answered the 0.6 request too: its extended reply is the answer.
            return;
        }
        if let Step::Answered(info, rtt) = self.seven.on_reply(reply, now) {
            self.retry.finish(now);
            let status = status::from_seven(self.target, info, self.encoding, rtt);
            self.outcome.finish(Ok(status));
        }
    }

    /// Keeps datagram `number` of an extended reply listing `clients` clients.
    fn file(&mut self, number: u32, datagram: &[u8], clients: usize, now: Instant) {
        match self
            .parts
            .file(number, None, datagram.len(), || datagram.to_vec())
        {
            Ok(Filed::New) => self.listed += clients,
            Ok(Filed::Duplicate) => return,
            Err(error) => {
                self.refused = Some(QueryError::Malformed(error));
                return;
            }
        }
        if number == 0 {
            self.first_rtt = Some(
                self.outcome
                    .answered(&mut self.retry, now)
                    .unwrap_or_default(),
            );
        }
        let Some(first_rtt) = self.first_rtt else {
            return;
        };
        if self
            .expected
            .is_some_and(|expected| self.listed >= expected)
        {
            self.outcome.finish(self.status(false));
        } else {
            self.rest.part_arrived(first_rtt, now);
        }
    }
}

impl ClientSession for TeeworldsSession {
    type Output = ServerStatus;

    bookkeeping!(target, poll_result);

    fn waiting_for(&self) -> Option<&'static str> {
        if self.seven.has_token() && self.first_rtt.is_none() {
            return self.seven.waiting_for();
        }
        self.retry.waiting_for()
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.outcome.is_finished() {
            return None;
        }
        if self.retry.is_send_due() {
            return self.retry.poll_transmit(now);
        }
        self.seven.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        match spec7::Reply::from_bytes(datagram) {
            Ok(reply) => return self.on_seven(&reply, now),
            // Not a 0.7 packet: a 0.6 / DDNet one, or garbage.
            Err(error)
                if error.offset() == 0 && matches!(error.kind(), ErrorKind::UnknownTag { .. }) => {}
            Err(error) => {
                if self.seven.is_waiting() {
                    self.outcome.note_malformed(error);
                }
                return;
            }
        }
        let reply = match Reply::from_bytes(datagram) {
            Ok(reply) => reply,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        let ours = match &reply {
            Reply::Info(info) => info.token == self.token & 0xff,
            Reply::Extended(info) => info.token == self.token,
            Reply::More(more) => more.token == self.token,
        };
        if !ours {
            // Another query's token: a stray or forged reply.
            return;
        }
        self.seven.stop(now);
        match &reply {
            // A 0.6 server read only the token's low byte; once an extended reply began,
            // its datagrams are the answer.
            Reply::Info(info) if self.first_rtt.is_none() => {
                let rtt = self
                    .outcome
                    .answered(&mut self.retry, now)
                    .unwrap_or_default();
                let status = status::from_info(self.target, info, self.encoding, rtt);
                self.outcome.finish(Ok(status));
            }
            Reply::Info(_) => {}
            Reply::Extended(info) => {
                self.expected = Some(info.num_clients as usize);
                self.file(0, datagram, info.clients.len(), now);
            }
            Reply::More(more) => {
                if more.number == 0 {
                    let error = query_wire::Error::new(
                        query_wire::ErrorKind::Invalid("iex+ datagrams are numbered from 1"),
                        0,
                    );
                    self.refused = Some(QueryError::Malformed(error));
                    return;
                }
                self.file(more.number, datagram, more.clients.len(), now);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() {
            return None;
        }
        if self.first_rtt.is_some() {
            return self.rest.until();
        }
        let vanilla = self.outcome.poll_timeout(&self.retry);
        match (vanilla, self.seven.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.first_rtt.is_some() {
            if self.rest.is_over(now) {
                self.outcome.finish(self.status(false));
            }
            return;
        }
        if self.retry.is_active() {
            if let Err(timeout) = self.retry.handle_timeout(now) {
                self.vanilla_timeout = Some(timeout);
            }
        }
        self.seven.handle_timeout(now);
        if self.retry.is_active() || self.seven.is_waiting() {
            return;
        }
        // Both ran out: name the step a 0.7 server stopped at, else the 0.6 request.
        let seven = self.seven.take_timeout();
        let vanilla = self.vanilla_timeout.take();
        let timeout = if self.seven.has_token() {
            seven.or(vanilla)
        } else {
            vanilla.or(seven)
        };
        let timeout = timeout.unwrap_or_else(|| QueryError::protocol("no reply"));
        let error = self.outcome.unanswered(timeout);
        self.outcome.finish(Err(error));
    }

    /// What arrived, `complete: false`; without the `iext` datagram, `why` (or the last
    /// malformed datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if self.first_rtt.is_none() {
            return self.outcome.give_up(why);
        }
        self.outcome.end().unwrap_or_else(|| self.status(true))
    }
}
