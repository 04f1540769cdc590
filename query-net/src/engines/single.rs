//! One request, one datagram back: the client session of the protocols whose whole answer is
//! a single datagram (Quake 2 and QuakeWorld, the Doom 3 engine, FiveM's `getinfo`, the
//! All-Seeing Eye, Mumble's ping, Bedrock's unconnected ping). Each of
//! them says how to read a datagram ([`ReadReply`]); sending, resending, the round trip and
//! how the query ends are the same for all and live here.

use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

use query_wire::Encode;

use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
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

impl Reply {
    /// What a datagram that decoded as `decoded` is: malformed if it did not decode, else
    /// what `answer` makes of the packet: the status (or the error that ends the query) when
    /// it answers this query, `None` when it answers another (a stray or forged one).
    pub fn from_decoded<T>(
        decoded: Result<T, query_wire::Error>,
        answer: impl FnOnce(T) -> Option<Result<ServerStatus, QueryError>>,
    ) -> Reply {
        match decoded.map(answer) {
            Ok(Some(answer)) => Reply::Answer(Box::new(answer)),
            Ok(None) => Reply::Ignored,
            Err(error) => Reply::Malformed(error.into()),
        }
    }
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
        Self::started(target, retry, reader)
    }

    /// [`new`](Self::new) with a declared request packet.
    pub fn new_encoded<P>(
        target: SocketAddr,
        options: &Options,
        waiting_for: &'static str,
        request: &P,
        reader: R,
    ) -> Result<Self, QueryError>
    where
        P: Encode<Ctx = ()> + ?Sized,
    {
        let mut retry = Retry::from_options(options);
        retry.start_encoded(waiting_for, request, ())?;
        Ok(Self::started(target, retry, reader))
    }

    fn started(target: SocketAddr, retry: Retry, reader: R) -> Self {
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

    bookkeeping!(target, waiting_for, sending, poll_result);

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

    // Nothing but the one datagram is an answer: `why`, or the last malformed datagram.
    bookkeeping!(give_up);
}
