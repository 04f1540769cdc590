//! The Quake 3 family (Quake 3, Call of Duty 1-4, Enemy Territory, Jedi Knight, Urban Terror):
//! the status client and the responder.
//!
//! # Client ([`client`], [`Quake3Session`])
//!
//! Sends `FF FF FF FF getstatus\n` and reads `statusResponse` datagrams with the specs'
//! [`StatusResponse`]: the `\key\value` line, then a `score ping "name"` line per player.
//!
//! - Joining datagrams: a reply carries no part count. The first datagram holds the pair line;
//!   a big server may send more datagrams holding player lines only (the same header, no pair
//!   line), which are appended in arrival order. A first datagram shorter than
//!   [`SPLIT_HINT`] bytes is a whole reply (a server splits only when a datagram is full) and
//!   ends the query at once. A longer one waits for continuations a short gap after the
//!   latest datagram ([`PartWait`]: four round trips, 50 ms at the least, at most the
//!   attempt's timeout). [`Options::max_reply_bytes`] caps the bytes held (back to back in
//!   one buffer, so memory follows the bytes accepted whatever their count); a datagram over
//!   it is dropped and the status says so (`complete: false`, the reason in `raw.incomplete`).
//!   Continuations that arrive before the first are kept. A second datagram with a pair line
//!   is the answer to a resent request, and is dropped; so is a continuation identical to one
//!   held (duplicated on the way, or sent again).
//! - Cut short: a deadline (or a caller giving up) that ends the wait for continuations
//!   returns what arrived with `complete: false` and the reason in `raw.incomplete`.
//! - Lenient about player lines: a line that does not decode (cut at a datagram's end, a
//!   number out of range, no quoted name) is left out, the lines around it kept, and the
//!   status is `complete: false` with each unreadable line's error in `raw.incomplete`.
//! - Not a reply: datagrams that are not `statusResponse` (garbage, an A2S reply, a cut line)
//!   are counted as malformed and never taken as an answer; if nothing else comes, the query
//!   fails with the last one's decode error. Datagrams from other addresses never reach the
//!   session.
//! - Mapping: `sv_hostname` → name (colour codes removed; the raw text is in `raw.hostname`),
//!   `mapname` → map, `g_gametype` → game type, `version` (else `shortversion`) → version,
//!   `sv_maxclients` → max players, `g_needpass` (else `pswrd`) → password, the player lines →
//!   players (name without colour codes, score, ping; the raw name in `raw.players`, and what
//!   follows the name in the player's `extra.fields`). Every pair is a rule, in order, as sent.
//!   Text is decoded with [`Options::encoding`], Windows-1252 by default.
//!
//! # Remote console ([`RconSession`])
//!
//! `rcon PASSWORD COMMAND` and the `print` datagrams it is answered with; see [`rcon`].
//!
//! # Responder ([`Quake3Responder`])
//!
//! Answers `getstatus` and `getinfo` (with or without a challenge, which it echoes) from the
//! server state; see [`responder`].

pub mod rcon;
pub mod responder;
mod status;

pub use rcon::RconSession;
pub use responder::{Quake3Config, Quake3Responder};

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, Instant};

use query_specs::quake3::{StatusResponse, GETSTATUS};
use query_wire::TextEncoding;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;
use crate::status::ServerStatus;

/// The encoding text is read in unless another is chosen: [`query_specs::quake3::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::quake3::ENCODING;

/// A first datagram shorter than this is a whole reply; see the [module](self) docs.
pub const SPLIT_HINT: usize = 1024;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(Quake3Session::new(target, options)))
}

/// A Quake 3 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct Quake3Session {
    target: SocketAddr,
    encoding: TextEncoding,
    max_bytes: usize,
    retry: Retry,
    /// Every datagram held, back to back: memory is the bytes accepted, whatever their count.
    held: Vec<u8>,
    /// Where in `held` the datagram with the pair line is.
    first: Option<Range<usize>>,
    /// Where the datagrams with player lines only are, in arrival order.
    continuations: Vec<Range<usize>>,
    /// Fingerprints of the continuations held, to drop one that arrives twice; keyed per
    /// session, so that no sender can make two datagrams collide on purpose.
    seen: HashSet<u64>,
    fingerprints: RandomState,
    /// Datagrams of this reply that [`Options::max_reply_bytes`] left out.
    over_cap: usize,
    first_rtt: Option<Duration>,
    /// Once a part arrived: the wait for the rest.
    rest: PartWait,
    outcome: Outcome<ServerStatus>,
}

impl Quake3Session {
    /// A query of `target` with `options` (timeout, retries, encoding, byte cap).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let mut retry = Retry::from_options(options);
        retry.start("status request", GETSTATUS);
        Quake3Session {
            target,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            max_bytes: options.max_reply_bytes,
            retry,
            held: Vec::new(),
            first: None,
            continuations: Vec::new(),
            seen: HashSet::new(),
            fingerprints: RandomState::new(),
            over_cap: 0,
            first_rtt: None,
            rest: PartWait::new(options.timeout),
            outcome: Outcome::new(),
        }
    }

    /// The status from the datagrams held; `cut` when the wait for continuations ended before
    /// its gap (the deadline, or the caller giving up).
    fn status(&self, cut: bool) -> Result<ServerStatus, QueryError> {
        let Some(first) = &self.first else {
            return Err(QueryError::protocol(
                "no datagram with the server's settings arrived",
            ));
        };
        let parts: Vec<&[u8]> = std::iter::once(first)
            .chain(&self.continuations)
            .map(|range| &self.held[range.clone()])
            .collect();
        let mut dropped = Vec::new();
        if self.over_cap > 0 {
            dropped.push(format!(
                "{} datagram(s) dropped: over the {} bytes a reply may take (--max-reply-bytes)",
                self.over_cap, self.max_bytes
            ));
        }
        if cut {
            dropped
                .push("the query ended while waiting for more datagrams of the reply".to_owned());
        }
        Ok(status::from_datagrams(
            self.target,
            &parts,
            self.encoding,
            self.first_rtt.unwrap_or_default(),
            dropped,
        )?)
    }

    fn fingerprint(&self, datagram: &[u8]) -> u64 {
        self.fingerprints.hash_one(datagram)
    }
}

impl ClientSession for Quake3Session {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_transmit, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        // Lenient about player lines (the status notes those it could not read), strict
        // about the header and the pair line: anything else is not an answer.
        let has_info = match StatusResponse::decode_lenient(datagram, self.encoding) {
            Ok((reply, _)) => reply.info.is_some(),
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        // A datagram seen before (duplicated on the way, or sent again for a resent request)
        // would list its players twice.
        let seen = if has_info {
            self.first.is_some()
        } else {
            !self.seen.insert(self.fingerprint(datagram))
        };
        if seen {
            return;
        }
        if self.held.len().saturating_add(datagram.len()) > self.max_bytes {
            self.over_cap += 1;
            return;
        }
        let range = self.held.len()..self.held.len() + datagram.len();
        self.held.extend_from_slice(datagram);
        if !has_info {
            self.continuations.push(range);
            if self.first.is_none() {
                return;
            }
        } else {
            self.first = Some(range);
            self.first_rtt = Some(self.retry.finish(now).unwrap_or_default());
            if datagram.len() < SPLIT_HINT && self.continuations.is_empty() {
                self.outcome.finish(self.status(false));
                return;
            }
        }
        self.rest
            .part_arrived(self.first_rtt.unwrap_or_default(), now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.rest.poll_timeout(&self.outcome, &self.retry)
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self
            .rest
            .handle_timeout(&mut self.outcome, &mut self.retry, now)
        {
            self.outcome.finish(self.status(false));
        }
    }

    /// What arrived, `complete: false` (the wait for continuations was cut short); without
    /// the datagram holding the settings, `why` (or the last malformed datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if self.first.is_none() {
            return self.outcome.give_up(why);
        }
        self.outcome.end().unwrap_or_else(|| self.status(true))
    }
}
