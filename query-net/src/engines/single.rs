//! One request, one datagram back: the client session of the protocols whose whole answer is
//! a single datagram (Quake 2 and QuakeWorld, the Doom 3 engine, FiveM's `getinfo`). Each of
//! them says how to read a datagram ([`ReadReply`]); sending, resending, the round trip and
//! how the query ends are the same for all and live here.

use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::status::ServerStatus;

/// What one datagram from the target is to a single-reply query.
#[derive(Debug)]
pub enum Reply {
    /// The answer: the query ends with it (its `ping_ms` is set by the session). Boxed: a
    /// status is large, and the other variants are read far more often under a flood.
    Answer(Box<Result<ServerStatus, QueryError>>),
    /// Not an answer to this query (a stray datagram, a reply to another query, a challenge
    /// that is not ours): ignored, since anyone can forge one.
    Ignored,
    /// A datagram that makes no sense: ignored too, but it names the failure if no answer
    /// comes.
    Malformed(QueryError),
}

/// How a protocol reads the one datagram that answers its request.
pub trait ReadReply: fmt::Debug {
    /// What `datagram` from `target` is to this query.
    fn read(&self, target: SocketAddr, datagram: &[u8]) -> Reply;
}

/// A query whose answer is one datagram, as a sans-I/O state machine: the request is sent
/// and resent as [`Options`] say, every datagram from the target goes to `R`, and the first
/// answer ends the query with its round trip as the ping.
#[derive(Debug)]
pub struct SingleReplySession<R> {
    target: SocketAddr,
    retry: Retry,
    outcome: Outcome<ServerStatus>,
    reader: R,
}

impl<R: ReadReply> SingleReplySession<R> {
    /// A query of `target` sending `request` (named `waiting_for` in a timeout message),
    /// whose answer `reader` reads.
    pub fn new(
        target: SocketAddr,
        options: &Options,
        waiting_for: &'static str,
        request: &[u8],
        reader: R,
    ) -> Self {
        let mut retry = Retry::from_options(options);
        retry.start(waiting_for, request);
        SingleReplySession {
            target,
            retry,
            outcome: Outcome::new(),
            reader,
        }
    }

    /// The reader, for what it learnt.
    pub fn reader(&self) -> &R {
        &self.reader
    }
}

impl<R: ReadReply> ClientSession for SingleReplySession<R> {
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
        match self.reader.read(self.target, datagram) {
            Reply::Answer(status) => {
                let rtt = self
                    .outcome
                    .answered(&mut self.retry, now)
                    .unwrap_or_default();
                self.outcome.finish((*status).map(|mut status| {
                    status.ping_ms = rtt.as_secs_f64() * 1000.0;
                    status
                }));
            }
            Reply::Ignored => {}
            Reply::Malformed(error) => self.outcome.note_malformed(error),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.outcome.poll_timeout(&self.retry)
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.outcome.handle_timeout(&mut self.retry, now);
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }

    /// Nothing but the one datagram is an answer: `why`, or the last malformed datagram.
    fn give_up(&mut self, why: QueryError, _now: Instant) -> Result<ServerStatus, QueryError> {
        match self.outcome.end() {
            Some(ended) => ended,
            None => Err(self.outcome.unanswered(why)),
        }
    }
}
