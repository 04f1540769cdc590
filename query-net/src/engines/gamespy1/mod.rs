//! GameSpy v1: the status client and the responder.
//!
//! # Client ([`client`], [`GameSpy1Session`])
//!
//! Sends [`Options::gamespy_request`] (`\status\` by default) and feeds every datagram from the
//! server to the specs' [`Reassembly`]: parts in any order, duplicates, `\final\` before or
//! after `\queryid\`, all work. The query finishes as soon as every part up to the one with
//! `\final\` is in. The request decides what comes back: [`Options::players`] and
//! [`Options::rules`] do not apply here (ask `\info\` for the server fields alone).
//!
//! - Not a reply: a datagram with no key/value pair other than `\queryid\` and `\final\`
//!   that claims to be the first part (an empty datagram, a lone `\`) is counted as
//!   malformed, never as an answer.
//! - Several query ids: a stray or forged datagram with a `\queryid\` of its own does not
//!   capture the session. Up to [`MAX_QUERY_IDS`] query ids are reassembled side by side; the
//!   first whose parts complete is the reply, and if none does, the one with the most parts
//!   (the first seen among equals).
//! - Nothing at all arrived: the request is sent again after each timeout, and when the
//!   attempts run out the query fails with a timeout (or with the decode error of the last
//!   datagram that came but made no sense).
//! - Some parts arrived: the request is not sent again (a new request gets a new query id, whose
//!   parts cannot complete the first). The rest is waited for a short gap after the latest
//!   part ([`PartWait`]); then the status is returned with what
//!   arrived, `complete: false`, and the missing part numbers in `raw.missing_parts`.
//! - Mapping: `hostname` → name, `mapname` → map, `gametype` → game type, `gamever` → version,
//!   `numplayers` / `maxplayers`, `password`; every other server key is a rule (`gamename`,
//!   `hostport` and `gamemode` first, then the rest in arrival order). Players are the first
//!   `numplayers` entries (BF1942 keeps stale ones after them; `raw.stale_players` counts
//!   them), with `frags` or `score`, `ping`, and the team's name when the game lists teams
//!   (numbered from 1 on BF1942; without the team names, the number as sent). A player's keys
//!   may straddle two parts: in an incomplete reply a player may lack some of them, and an
//!   entry whose name was in a lost part is left out (`raw.player_fragments` counts them). Text is decoded with [`Options::encoding`], Windows-1252 by
//!   default (identical to Latin-1 for the bytes real servers send, such as `a0` and `b1`).
//!
//! # Responder ([`GameSpy1Responder`])
//!
//! Answers `\status\` (= basic, info, rules, players), `\basic\`, `\info\`, `\rules\`,
//! `\players\`, `\teams\` and `\echo\<text>`, alone or combined (`\info\\rules\`), always in the
//! order basic, info, rules, players, teams, echo. The reply is split by the specs'
//! [`ReplyDatagrams`](query_specs::gamespy1::ReplyDatagrams) into datagrams of at most 1400 bytes, each with `\queryid\X.Y`, the last
//! with `\final\`; `X` counts up per request. Sections are encoded once per state snapshot and
//! copied into each reply.

mod responder;
mod status;

pub use responder::{GameSpy1Config, GameSpy1Responder, MAX_REQUEST};

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::gamespy1::{Pushed, Reassembly};
use query_wire::TextEncoding;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::part_wait::PartWait;
use crate::status::ServerStatus;

/// The encoding GameSpy v1 text is read and written in unless another is chosen. Declared with
/// the packets, as [`query_specs::gamespy1::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::gamespy1::ENCODING;

/// The request sent when [`Options::gamespy_request`] is empty.
pub const DEFAULT_REQUEST: &str = "\\status\\";

/// How many query ids one session reassembles side by side; datagrams of further ids are
/// dropped. Each holds at most [`MAX_PARTS`](query_specs::gamespy1::MAX_PARTS) parts, and
/// [`Options::max_reply_bytes`] caps the bytes of all of them.
pub const MAX_QUERY_IDS: usize = 4;

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy1Session::new(target, options)))
}

/// A GameSpy v1 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct GameSpy1Session {
    target: SocketAddr,
    encoding: TextEncoding,
    retry: Retry,
    /// One reassembly per query id seen, in the order first seen.
    candidates: Vec<Reassembly>,
    /// The round trip to the first part; `Some` once anything arrived.
    first_rtt: Option<Duration>,
    /// Once a part arrived: the wait for the rest.
    rest: PartWait,
    outcome: Outcome<ServerStatus>,
}

impl GameSpy1Session {
    /// A query of `target` with `options` (request, timeout, retries, encoding).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let encoding = options.encoding_or(DEFAULT_ENCODING);
        let request = match options.gamespy_request.as_str() {
            "" => DEFAULT_REQUEST,
            request => request,
        };
        let mut retry = Retry::from_options(options);
        retry.start("status request", &encoding.encode_lossy(request));
        GameSpy1Session {
            target,
            encoding,
            retry,
            candidates: Vec::new(),
            first_rtt: None,
            rest: PartWait::new(options.timeout),
            outcome: Outcome::new(),
        }
    }

    /// The reassembly to report: a complete one, else the one with the most parts (the first
    /// seen among equals).
    fn best(&self) -> Option<&Reassembly> {
        self.candidates
            .iter()
            .find(|parts| parts.is_complete())
            .or_else(|| {
                self.candidates
                    .iter()
                    .rev()
                    .max_by_key(|parts| parts.parts_received())
            })
    }

    /// The status from the parts that arrived.
    fn status(&self) -> Result<ServerStatus, QueryError> {
        let Some(parts) = self.best() else {
            return Err(QueryError::protocol("no part of the reply arrived"));
        };
        let assembled = parts.reply_with(self.encoding)?;
        let mut status = status::from_assembled(
            self.target,
            &assembled,
            parts,
            self.encoding,
            self.first_rtt.unwrap_or_default(),
        );
        status.note_refused_part(self.outcome.malformed());
        Ok(status)
    }

    /// Files one datagram with the reassembly of its query id, starting one for a new id while
    /// fewer than [`MAX_QUERY_IDS`] are held.
    fn push(&mut self, datagram: &[u8]) -> Result<Option<usize>, query_wire::Error> {
        for (index, parts) in self.candidates.iter_mut().enumerate() {
            match parts.push(datagram)? {
                Pushed::New => return Ok(Some(index)),
                Pushed::Duplicate => return Ok(None),
                Pushed::OtherQuery => {}
            }
        }
        if self.candidates.len() >= MAX_QUERY_IDS {
            return Ok(None);
        }
        let mut parts = Reassembly::new();
        match parts.push(datagram)? {
            Pushed::New => {
                self.candidates.push(parts);
                Ok(Some(self.candidates.len() - 1))
            }
            Pushed::Duplicate | Pushed::OtherQuery => Ok(None),
        }
    }
}

impl ClientSession for GameSpy1Session {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_transmit, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let index = match self.push(datagram) {
            Ok(Some(index)) => index,
            Ok(None) => return,
            Err(error) => {
                self.outcome.note_malformed(error);
                return;
            }
        };
        if self.first_rtt.is_none() {
            // The first part: stop resending, a new request would get a new query id.
            self.first_rtt = Some(self.retry.finish(now).unwrap_or_default());
        }
        if self.candidates[index].is_complete() {
            self.outcome.finish(self.status());
            return;
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
            self.outcome.finish(self.status());
        }
    }

    /// What arrived, `complete: false`; without any part, `why` (or the last malformed
    /// datagram's error).
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        if self.candidates.is_empty() {
            return self.outcome.give_up(why);
        }
        self.outcome.end().unwrap_or_else(|| self.status())
    }
}
