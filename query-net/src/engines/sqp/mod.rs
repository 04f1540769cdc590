//! Unity / Multiplay SQP: the client session ([`SqpClient`]) and the responder
//! ([`SqpResponder`]).
//!
//! A query is two exchanges: a 5-byte challenge request answered by a 5-byte challenge, then a
//! query request proving the challenge and naming the chunks wanted. Challenges are single use
//! on the server side, so a lost query request cannot simply be resent: the client starts a
//! new *round* (a fresh challenge, then the query) after each timeout. `Options::attempts()`
//! counts rounds.

use std::net::SocketAddr;
use std::time::Instant;

pub use query_specs::sqp::ChunkSet;
use query_specs::sqp::{
    ChallengeRequest, ChallengeResponse, QueryRequest, QueryResponseFragment, QueryResponseHead,
    Request, Response, VERSION, VERSION_UNSET,
};
use query_wire::parts::NumberedParts;
use query_wire::Decode;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::status::ServerStatus;

mod chunks;
mod responder;
mod status;
pub use chunks::{chunk_names, find_chunks, ChunkSearchError, FoundChunks, CHUNK_NAMES};
pub use responder::{SqpResponder, SqpResponderConfig};
pub use status::{status_from_chunks, status_from_reply};

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(SqpClient::new(target, options)))
}

/// The chunks a query with `options` asks for: [`Options::sqp_chunks`], ServerInfo alone by
/// default. `Options::players` and `Options::rules` do not add chunks: a server that lacks a
/// chunk asked for cannot answer at all, so SQP asks for more only when told exactly what.
pub fn requested_chunks(options: &Options) -> ChunkSet {
    options.sqp_chunks & ChunkSet::all()
}

/// The most bytes a split reply may add up to. No known server splits at all; the cap keeps a
/// hostile one from making the client hold 256 parts of 64 KiB.
const MAX_SPLIT_REPLY: usize = 1 << 20;

/// Which exchange of the current round is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Challenge,
    Query { challenge: u32 },
}

impl Step {
    fn waiting_for(self) -> &'static str {
        match self {
            Step::Challenge => "challenge request",
            Step::Query { .. } => "query request",
        }
    }
}

/// One SQP status query, as a sans-I/O state machine.
///
/// Replies that do not fit the current step (a late challenge, a query response echoing another
/// challenge, a duplicate part) are ignored. A datagram too short to show whose reply it is is
/// ignored too, since anyone can forge one from the target's address: the genuine reply may
/// still come. If the attempts then run out and such a datagram was seen, the error is
/// [`QueryError::Malformed`] rather than a timeout, because a server that answers garbage is
/// worth reporting as such.
///
/// A query response that echoes this round's challenge is the server's own: a spoofer off the
/// path cannot know the challenge. When it cannot be decoded, the query ends at once with
/// [`QueryError::ServerReply`]: no better reply is coming.
///
/// Lenient where real servers differ harmlessly: a reply with fewer chunks than asked decodes
/// as the chunks it holds ([`find_chunks`]), and `raw.missing_chunks` names the others; version
/// 0 (Unity's FPSSample) is read as version 1 and shown as `raw.version`. Any other version is
/// an error.
///
/// ```
/// use std::time::Instant;
/// use query_net::engine::ClientSession;
/// use query_net::engines::sqp::SqpClient;
/// use query_net::Options;
///
/// let mut session = SqpClient::new("127.0.0.1:7779".parse().unwrap(), &Options::default());
/// // The first datagram is the 5-byte challenge request.
/// assert_eq!(session.poll_transmit(Instant::now()), Some(&[0u8, 0, 0, 0, 0][..]));
/// ```
#[derive(Debug)]
pub struct SqpClient {
    target: SocketAddr,
    requested: ChunkSet,
    max_rounds: u32,
    rounds: u32,
    retry: Retry,
    step: Step,
    parts: Parts,
    first_sent: Option<Instant>,
    outcome: Outcome<ServerStatus>,
}

impl SqpClient {
    /// A query of `target` for the chunks `options` asks for ([`requested_chunks`]: ServerInfo
    /// alone unless [`Options::sqp_chunks`] says more).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        Self::with_chunks(target, options, requested_chunks(options))
    }

    /// A query of `target` for exactly `chunks` (unknown bits are not asked for: the reply
    /// carries chunks without tags, so a client must know every chunk it asks for).
    pub fn with_chunks(target: SocketAddr, options: &Options, chunks: ChunkSet) -> Self {
        let mut session = SqpClient {
            target,
            requested: chunks & ChunkSet::all(),
            max_rounds: options.attempts(),
            rounds: 0,
            retry: Retry::new(options.timeout, 1),
            step: Step::Challenge,
            parts: Parts::default(),
            first_sent: None,
            outcome: Outcome::new(),
        };
        session.start_round();
        session
    }

    /// The chunks this session asks for.
    pub fn requested(&self) -> ChunkSet {
        self.requested
    }

    fn start_round(&mut self) {
        self.rounds += 1;
        self.step = Step::Challenge;
        self.parts.clear();
        let request = Request::Challenge(ChallengeRequest::default());
        if let Err(e) = self
            .retry
            .start_encoded(Step::Challenge.waiting_for(), &request, ())
        {
            self.outcome.finish(Err(QueryError::protocol(format!(
                "cannot encode the challenge request: {e}"
            ))));
        }
    }

    fn note_rtt(&mut self, now: Instant) {
        self.outcome.answered(&mut self.retry, now);
    }

    fn on_challenge_step(&mut self, datagram: &[u8], now: Instant) {
        if datagram.first() == Some(&1) {
            // A late reply to an earlier round's query: nothing to judge it against any more.
            return;
        }
        match Response::from_bytes_with(datagram, ChunkSet::empty()) {
            Ok(Response::Challenge(ChallengeResponse { challenge })) => {
                self.note_rtt(now);
                self.step = Step::Query { challenge };
                let request = Request::Query(QueryRequest {
                    challenge,
                    version: VERSION,
                    requested: self.requested,
                });
                if let Err(e) = self
                    .retry
                    .start_encoded(self.step.waiting_for(), &request, ())
                {
                    self.outcome.finish(Err(QueryError::protocol(format!(
                        "cannot encode the query request: {e}"
                    ))));
                }
            }
            Ok(Response::Query(_)) => {}
            Err(e) => self.outcome.note_malformed(e),
        }
    }

    fn on_query_step(&mut self, challenge: u32, datagram: &[u8], now: Instant) {
        if datagram.first() == Some(&0) {
            // A duplicate or late challenge response: this round already has its challenge.
            if let Err(e) = Response::from_bytes_with(datagram, ChunkSet::empty()) {
                self.outcome.note_malformed(e);
            }
            return;
        }
        let head = match QueryResponseHead::from_prefix(datagram, ()) {
            Ok((head, _)) => head,
            Err(e) => {
                self.outcome.note_malformed(e);
                return;
            }
        };
        if head.challenge != challenge {
            // Meant for another round, or forged by someone who does not know the challenge.
            return;
        }
        // From here on the reply is the server's own.
        if head.version != VERSION && head.version != VERSION_UNSET {
            self.outcome
                .finish(Err(QueryError::server_reply(QueryError::protocol(
                    format!(
                        "query response has version {}; this client reads versions {VERSION} and \
                 {VERSION_UNSET}",
                        head.version
                    ),
                ))));
            return;
        }
        let fragment = match QueryResponseFragment::from_bytes(datagram) {
            Ok(fragment) => fragment,
            Err(e) => {
                self.outcome.finish(Err(QueryError::server_reply(e)));
                return;
            }
        };
        if fragment.last_packet == 0 && fragment.current_packet == 0 {
            self.accept_payload(fragment.payload, head.version, now);
            return;
        }
        match self.parts.insert(&fragment) {
            Ok(Some(joined)) => self.accept_payload(&joined, head.version, now),
            Ok(None) => {}
            Err(error) => {
                let error = error.in_field("QueryResponseFragment");
                self.outcome.finish(Err(QueryError::server_reply(error)));
            }
        }
    }

    fn accept_payload(&mut self, payload: &[u8], version: u16, now: Instant) {
        match find_chunks(payload, self.requested) {
            Ok(found) => {
                self.note_rtt(now);
                let mut status = status_from_reply(self.target, &found, self.requested, version);
                status.ping_ms = self.outcome.best_rtt().as_secs_f64() * 1000.0;
                self.outcome.finish(Ok(status));
            }
            Err(ChunkSearchError::NoFit { error, .. }) => {
                self.outcome.finish(Err(QueryError::server_reply(error)));
            }
            Err(ambiguous) => {
                self.outcome
                    .finish(Err(QueryError::server_reply(QueryError::protocol(
                        ambiguous.to_string(),
                    ))))
            }
        }
    }
}

impl ClientSession for SqpClient {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, poll_timeout, poll_result);

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        let sent = self.outcome.poll_transmit(&mut self.retry, now);
        if sent.is_some() {
            self.first_sent.get_or_insert(now);
        }
        sent
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        match self.step {
            Step::Challenge => self.on_challenge_step(datagram, now),
            Step::Query { challenge } => self.on_query_step(challenge, datagram, now),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() || self.retry.handle_timeout(now).is_ok() {
            return;
        }
        if self.rounds < self.max_rounds {
            self.start_round();
            return;
        }
        // Every round counts as an attempt, from the first send.
        let error = self.outcome.unanswered(QueryError::Timeout {
            waiting_for: self.step.waiting_for(),
            attempts: self.rounds,
            after: now.saturating_duration_since(self.first_sent.unwrap_or(now)),
        });
        self.outcome.finish(Err(error));
    }
}

/// The parts of a split reply, kept until all have arrived.
#[derive(Debug)]
struct Parts(NumberedParts<Vec<u8>>);

impl Default for Parts {
    fn default() -> Self {
        Parts(NumberedParts::new(256, MAX_SPLIT_REPLY))
    }
}

impl Parts {
    fn clear(&mut self) {
        *self = Parts::default();
    }

    /// Keeps one part; returns the joined payload once every part from 0 to `last` is in.
    /// Duplicates are ignored.
    fn insert(
        &mut self,
        fragment: &QueryResponseFragment<'_>,
    ) -> Result<Option<Vec<u8>>, query_wire::Error> {
        let total = u32::from(fragment.last_packet) + 1;
        let payload = fragment.payload;
        self.0.file(
            u32::from(fragment.current_packet),
            Some(total),
            payload.len(),
            || payload.to_vec(),
        )?;
        if !self.0.is_complete() {
            return Ok(None);
        }
        let joined = self.0.in_order().flatten().copied().collect();
        self.clear();
        Ok(Some(joined))
    }
}
