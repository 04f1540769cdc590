//! Teeworlds 0.6 and DDNet: the server info client and the responder.
//!
//! # Client ([`client`], [`TeeworldsSession`])
//!
//! Sends DDNet's form of `gie3` (`xe`, a random 24-bit token) and reads the reply with the
//! specs' [`Reply`]: DDNet servers answer with the extended info (`iext`, then `iex+`
//! datagrams while clients remain), 0.6 servers with `inf3`, echoing only the token's low
//! byte.
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
//! - Mapping: name, map, game type and version as sent; players → players (clients in the
//!   game), player slots → max players, flag 1 → password; every client (spectators too) →
//!   players, each with score, and clan, country and `is_player` in `extra`; clients, client
//!   slots, flags and (DDNet) the map's CRC and size → rules. Text is decoded with
//!   [`Options::encoding`], UTF-8 by default.
//!
//! # Responder ([`TeeworldsResponder`])
//!
//! Answers both forms of `gie3` from the server state; see [`responder`].

pub mod responder;
mod status;

pub use responder::{TeeworldsConfig, TeeworldsResponder};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::teeworlds::{Reply, Request};
use query_wire::parts::{Filed, NumberedParts};
use query_wire::{Decode, TextEncoding};

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
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
    retry: Retry,
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
        let reply = match Reply::from_bytes(datagram) {
            Ok(reply) => reply,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        match &reply {
            // A 0.6 server read only the token's low byte.
            Reply::Info(info) if info.token == self.token & 0xff => {
                let rtt = self
                    .outcome
                    .answered(&mut self.retry, now)
                    .unwrap_or_default();
                let status = status::from_info(self.target, info, self.encoding, rtt);
                self.outcome.finish(Ok(status));
            }
            Reply::Extended(info) if info.token == self.token => {
                self.expected = Some(info.num_clients as usize);
                self.file(0, datagram, info.clients.len(), now);
            }
            Reply::More(more) if more.token == self.token => {
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
            // Another query's token: a stray or forged reply.
            _ => {}
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() || self.first_rtt.is_none() {
            self.outcome.poll_timeout(&self.retry)
        } else {
            self.rest.until()
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.first_rtt.is_none() {
            self.outcome.handle_timeout(&mut self.retry, now);
        } else if self.rest.is_over(now) {
            self.outcome.finish(self.status(false));
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }

    /// What arrived, `complete: false`; without the `iext` datagram, `why` (or the last
    /// malformed datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        if self.first_rtt.is_none() {
            Err(self.outcome.unanswered(why))
        } else {
            self.status(true)
        }
    }
}
